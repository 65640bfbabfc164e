// Reads the core's result structs out of wasm memory, at the offsets the core reports (m.layout); which
// members hold numbers, and of what C type, is generated from core/llmem.h (STRUCT_NUMBERS).
import { fillFormula } from '../frontend/config/numbers.js';
import type { EstimateResult, RankResult, Readings, RlResult, Term, Timeline } from '../frontend/config/results.js';
import { CATEGORIES, PHASES, STRUCT_NUMBERS, type StructLayout, type StructNumbers } from './generated.js';

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
const phase = (id: number) => PHASES[id] ?? '';

type Spec = 'f64' | 'i32' | readonly ['f64' | 'i32', number | readonly string[]];

/** The numbers of struct s at a (STRUCT_NUMBERS[s], in struct order); only: just those of one C type. */
export function readStruct<S extends keyof StructNumbers>(m: Memory, a: number, s: S, only?: 'f64'): StructNumbers[S] {
  const out: Record<string, unknown> = {},
    at = m.layout[s] as Record<string, number>;
  for (const [k, spec] of Object.entries(STRUCT_NUMBERS[s]) as [string, Spec][]) {
    const [type, n] = typeof spec === 'string' ? [spec] : spec;
    const item = (i: number) => (type === 'f64' ? f64(m, a + at[k] + 8 * i) : i32(m, a + at[k] + 4 * i));
    if (only && type !== only) continue;
    if (n === undefined) out[k] = item(0);
    else if (typeof n === 'number') out[k] = Array.from({ length: n }, (_, i) => item(i));
    else out[k] = Object.fromEntries(n.map((name, i) => [name, item(i)]));
  }
  return out as StructNumbers[S];
}

/** count structs of size bytes from a, each read by read. */
export const each = <T>(a: number, count: number, size: number, read: (a: number) => T): T[] =>
  Array.from({ length: count }, (_, i) => read(a + i * size));

function readRank(m: Memory, a: number): RankResult {
  const { stage, reserved_simulated, params_count, layers_count, mixer_layers_count, moe_layers_count, ...rest } =
    readStruct(m, a, 'rank');
  const { peak_phase, peak_micro_batch, peak_layer, ...bytes } = rest;
  return {
    stage,
    ...bytes,
    reserved_simulated: reserved_simulated !== 0,
    params: params_count,
    layers: layers_count,
    mixer_layers: mixer_layers_count,
    moe_layers: moe_layers_count,
    peak_phase: phase(peak_phase),
    peak_micro_batch: peak_micro_batch < 0 ? null : peak_micro_batch,
    peak_layer: peak_layer < 0 ? null : peak_layer,
  };
}

function readTerm(m: Memory, a: number): Term {
  const { id, category, value_bytes, inputs } = readStruct(m, a, 'term');
  return {
    category: CATEGORIES[category] ?? 'runtime',
    label: m.termLabel(id),
    formula: fillFormula(m.termFormula(id), inputs),
    value_bytes,
  };
}

/** The RL phases (rl.algorithm not "none"); undefined for a plain training step. */
function readRl(m: Memory, base: number, r: StructNumbers['result']): RlResult | undefined {
  if (r.rl_phase_count === 0) return undefined;
  const phases = each(base + m.layout.result.rl_phases, r.rl_phase_count, m.layout.rl_phase.size, (a) => {
    const { phase: id, ...rest } = readStruct(m, a, 'rl_phase');
    return { phase: phase(id), ...rest };
  });
  return {
    phases,
    kv_cache_bytes: r.rl_kv_cache_bytes,
    kv_cache_tokens: r.rl_kv_cache_tokens,
    engine_bytes: r.rl_engine_bytes,
  };
}

/** The timeline as columns, each read in one pass over the event structs. */
function readTimeline(m: Memory, base: number, r: StructNumbers['result'], simulated: boolean): Timeline {
  const E = m.layout.event,
    n = r.event_count,
    events = base + m.layout.result.events;
  const column = <T extends Float64Array | Int32Array>(col: T, offset: number, read: typeof f64) => {
    for (let i = 0; i < col.length; i++) col[i] = read(m, events + i * E.size + offset);
    return col;
  };
  const doubles = (offset: number) => column(new Float64Array(n), offset, f64);
  return {
    stride: r.event_stride,
    total_bytes: doubles(E.total_bytes),
    reserved_bytes: simulated ? doubles(E.reserved_bytes) : new Float64Array(0),
    category_bytes: Object.fromEntries(
      CATEGORIES.map((c, j) => [c, doubles(E.category_bytes + 8 * j)]),
    ) as Timeline['category_bytes'],
    phase: Array.from(column(new Int32Array(n), E.phase, i32), (id) => phase(id)),
    micro_batch: column(new Int32Array(n), E.micro_batch, i32),
    layer: column(new Int32Array(n), E.layer, i32),
  };
}

/** The result block after a successful llmem_run. */
export function readResult(m: Memory, base: number, timeline: boolean): EstimateResult {
  const R = m.layout.result,
    r = readStruct(m, base, 'result');
  const per = readRank(m, base + R.per_gpu);
  const result: EstimateResult = {
    ok: true,
    per_gpu: { ...per, peak_at: m.text(base + R.peak_at) },
    peak_allocated: { bytes: r.peak_allocated_bytes, stage: r.peak_allocated_stage },
    ranks: each(base + R.ranks, r.rank_count, m.layout.rank.size, (a) => readRank(m, a)),
    params: {
      total: r.params_total,
      active: r.params_active,
      trainable: r.params_trainable,
      per_gpu: r.params_per_gpu,
    },
    host: { cpu_bytes: r.host_cpu_bytes, nvme_bytes: r.host_nvme_bytes },
    fits: r.fits !== 0,
    utilization: r.utilization,
    capacity_bytes: r.capacity_bytes,
    warnings: r.warnings.slice(0, r.warning_count).map((id) => m.warning(id)),
    terms: each(base + R.terms, r.term_count, m.layout.term.size, (a) => readTerm(m, a)),
  };
  const rl = readRl(m, base, r);
  if (rl) result.rl = rl;
  if (timeline) result.timeline = readTimeline(m, base, r, per.reserved_simulated);
  return result;
}

/** One llmem_readings struct (a sweep point's). */
export function readReadings(m: Memory, a: number): Readings {
  const { status, fits, ...bytes } = readStruct(m, a, 'readings');
  return { ok: status === 0, ...(status !== 0 ? { error: m.statusText(status) } : {}), ...bytes, fits: fits !== 0 };
}
