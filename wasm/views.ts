// Reads the core's result structs out of wasm memory, at the offsets the core reports (m.layout).
import { CATEGORIES, type Category, PHASES, RL_MODELS, type RlModel, type StructLayout } from './generated.js';
import type { Breakdown, EstimateResult, RankResult, Readings, RlResult, Term, Timeline } from './types.js';

/** The core's heaps (the module: looked up on each read, as growing memory replaces them) and texts. */
export interface Memory {
  layout: StructLayout;
  heap: { HEAPU8: Uint8Array; HEAPF64: Float64Array; HEAP32: Int32Array };
  /** a NUL-terminated string at ptr */
  text(ptr: number): string;
  /** warning, term label and term formula texts by id (cached) */
  warning(id: number): string;
  termLabel(id: number): string;
  termFormula(id: number): string;
  statusText(status: number): string;
}

export const f64 = (m: Memory, a: number) => m.heap.HEAPF64[a / 8];
export const i32 = (m: Memory, a: number) => m.heap.HEAP32[a / 4];

const GIB = 2 ** 30;
/** 1234567 -> "1,234,567" (toLocaleString is slow in hot paths). */
export function groupDigits(n: number): string {
  const s = String(Math.abs(n));
  let out = '';
  for (let i = 0; i < s.length; i++) out += (i > 0 && (s.length - i) % 3 === 0 ? ',' : '') + s[i];
  return n < 0 ? `-${out}` : out;
}

/** Fill a core formula: {cN} a count, {bN} bytes, {xN} a plain number. */
export function fillFormula(template: string, inputs: number[]): string {
  return template.replace(/\{([cbx])(\d)\}/g, (_, kind: string, i: string) => {
    const v = inputs[Number(i)] ?? 0;
    if (kind === 'b') return `${(v / GIB).toFixed(2)} GiB`;
    if (kind === 'c') return groupDigits(Math.round(v));
    return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, '');
  });
}

/** JSON.stringify's replacer that writes typed arrays (the timeline's columns) as lists. */
export const plainArrays = (_key: string, v: unknown): unknown =>
  ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v;

function readRank(m: Memory, a: number): RankResult {
  const K = m.layout.rank;
  const breakdown = {} as Breakdown;
  for (const [i, c] of CATEGORIES.entries()) breakdown[c] = f64(m, a + K.breakdown_bytes + 8 * i);
  const mb = i32(m, a + K.peak_micro_batch),
    layer = i32(m, a + K.peak_layer);
  return {
    stage: i32(m, a + K.stage),
    peak_allocated_bytes: f64(m, a + K.peak_allocated_bytes),
    peak_reserved_bytes: f64(m, a + K.peak_reserved_bytes),
    device_used_bytes: f64(m, a + K.device_used_bytes),
    breakdown_bytes: breakdown,
    persistent_bytes: f64(m, a + K.persistent_bytes),
    fragmentation_bytes: f64(m, a + K.fragmentation_bytes),
    largest_free_block_bytes: f64(m, a + K.largest_free_block_bytes),
    reserved_simulated: i32(m, a + K.reserved_simulated) !== 0,
    params: f64(m, a + K.params_count),
    layers: f64(m, a + K.layers_count),
    peak_phase: PHASES[i32(m, a + K.peak_phase)] ?? '',
    peak_micro_batch: mb < 0 ? null : mb,
    peak_layer: layer < 0 ? null : layer,
  };
}

function readTerms(m: Memory, base: number): Term[] {
  const R = m.layout.result,
    T = m.layout.term;
  return Array.from({ length: i32(m, base + R.term_count) }, (_, i) => {
    const a = base + R.terms + i * T.size;
    const id = i32(m, a + T.id),
      cat = i32(m, a + T.category);
    const inputs = [0, 1, 2, 3].map((k) => f64(m, a + T.inputs + 8 * k));
    return {
      category: cat < 0 ? 'runtime' : CATEGORIES[cat],
      label: m.termLabel(id),
      formula: fillFormula(m.termFormula(id), inputs),
      value_bytes: f64(m, a + T.value_bytes),
    };
  });
}

/** The RL phases (rl.algorithm not "none"); undefined for a plain training step. */
function readRl(m: Memory, base: number): RlResult | undefined {
  const R = m.layout.result,
    P = m.layout.rl_phase;
  const n = i32(m, base + R.rl_phase_count);
  if (n === 0) return undefined;
  const phases = Array.from({ length: n }, (_, i) => {
    const a = base + R.rl_phases + i * P.size;
    const breakdown = {} as Breakdown;
    for (const [j, c] of CATEGORIES.entries()) breakdown[c] = f64(m, a + P.breakdown_bytes + 8 * j);
    const models = {} as Record<RlModel, number>;
    for (const [j, k] of RL_MODELS.entries()) models[k] = f64(m, a + P.model_bytes + 8 * j);
    return {
      phase: PHASES[i32(m, a + P.phase)] ?? '',
      peak_allocated_bytes: f64(m, a + P.peak_allocated_bytes),
      device_used_bytes: f64(m, a + P.device_used_bytes),
      breakdown_bytes: breakdown,
      model_bytes: models,
    };
  });
  return {
    phases,
    kv_cache_bytes: f64(m, base + R.rl_kv_cache_bytes),
    kv_cache_tokens: f64(m, base + R.rl_kv_cache_tokens),
    engine_bytes: f64(m, base + R.rl_engine_bytes),
  };
}

/** The timeline as columns, filled in one pass over the event structs. */
function readTimeline(m: Memory, base: number, simulated: boolean): Timeline {
  const R = m.layout.result,
    E = m.layout.event;
  const n = i32(m, base + R.event_count);
  const t: Timeline = {
    stride: i32(m, base + R.event_stride),
    total_bytes: new Float64Array(n),
    reserved_bytes: new Float64Array(simulated ? n : 0),
    category_bytes: Object.fromEntries(CATEGORIES.map((c) => [c, new Float64Array(n)])) as Record<
      Category,
      Float64Array
    >,
    phase: [],
    micro_batch: new Int32Array(n),
    layer: new Int32Array(n),
  };
  const cats = CATEGORIES.map((c) => t.category_bytes[c]);
  for (let i = 0, a = base + R.events; i < n; i++, a += E.size) {
    t.total_bytes[i] = f64(m, a + E.total_bytes);
    if (simulated) t.reserved_bytes[i] = f64(m, a + E.reserved_bytes);
    for (let j = 0; j < cats.length; j++) cats[j][i] = f64(m, a + E.category_bytes + 8 * j);
    t.phase.push(PHASES[i32(m, a + E.phase)] ?? '');
    t.micro_batch[i] = i32(m, a + E.micro_batch);
    t.layer[i] = i32(m, a + E.layer);
  }
  return t;
}

/** The result block after a successful llmem_run. */
export function readResult(m: Memory, base: number, timeline: boolean): EstimateResult {
  const R = m.layout.result;
  const per = readRank(m, base + R.per_gpu);
  const result: EstimateResult = {
    ok: true,
    per_gpu: { ...per, peak_at: m.text(base + R.peak_at) },
    peak_allocated: { bytes: f64(m, base + R.peak_allocated_bytes), stage: i32(m, base + R.peak_allocated_stage) },
    ranks: Array.from({ length: i32(m, base + R.rank_count) }, (_, i) =>
      readRank(m, base + R.ranks + i * m.layout.rank.size),
    ),
    params: {
      total: f64(m, base + R.params_total),
      active: f64(m, base + R.params_active),
      trainable: f64(m, base + R.params_trainable),
      per_gpu: f64(m, base + R.params_per_gpu),
    },
    host: { cpu_bytes: f64(m, base + R.host_cpu_bytes), nvme_bytes: f64(m, base + R.host_nvme_bytes) },
    fits: i32(m, base + R.fits) !== 0,
    utilization: f64(m, base + R.utilization),
    capacity_bytes: f64(m, base + R.capacity_bytes),
    warnings: Array.from({ length: i32(m, base + R.warning_count) }, (_, i) =>
      m.warning(i32(m, base + R.warnings + 4 * i)),
    ),
    terms: readTerms(m, base),
  };
  const rl = readRl(m, base);
  if (rl) result.rl = rl;
  if (timeline) result.timeline = readTimeline(m, base, per.reserved_simulated);
  return result;
}

/** One llmem_readings struct (a sweep point's). */
export function readReadings(m: Memory, a: number): Readings {
  const D = m.layout.readings;
  const status = i32(m, a + D.status);
  return {
    ok: status === 0,
    ...(status !== 0 ? { error: m.statusText(status) } : {}),
    peak_allocated_bytes: f64(m, a + D.peak_allocated_bytes),
    peak_reserved_bytes: f64(m, a + D.peak_reserved_bytes),
    device_used_bytes: f64(m, a + D.device_used_bytes),
    capacity_bytes: f64(m, a + D.capacity_bytes),
    fits: i32(m, a + D.fits) !== 0,
  };
}

/** A struct's members as numbers: doubles by name, the rest (ints) by name. */
export function readStruct<K extends string, I extends string>(
  m: Memory,
  a: number,
  offsets: Readonly<Record<K | I, number>>,
  doubles: readonly K[],
  ints: readonly I[],
): Record<K | I, number> {
  const out = {} as Record<K | I, number>;
  for (const k of doubles) out[k] = f64(m, a + offsets[k]);
  for (const k of ints) out[k] = i32(m, a + offsets[k]);
  return out;
}
