// Reads the core's result structs out of wasm memory into the public shapes. The readers of each struct (READ),
// and the members a shape takes from its struct as they are (VIEWS), are generated (scripts/gen-boundary.mjs);
// what is written here is the rest: the grouped members of the result, the texts, the timeline's columns.
import { fillFormula } from '../frontend/config/numbers.js';
import type { EstimateResult, Readings, RlResult, Term, Timeline } from '../frontend/config/results.js';
import { CATEGORIES, READ, type StructNumbers, VIEWS, type View } from './generated.js';

/** count structs of size bytes from a, each read by read. */
export const each = <T>(a: number, count: number, size: number, read: (a: number) => T): T[] =>
  Array.from({ length: count }, (_, i) => read(a + i * size));

function readTerm(v: View, a: number): Term {
  const { id, category, value_bytes, inputs } = READ.term(v, a);
  return {
    category: CATEGORIES[category] ?? 'runtime',
    label: v.texts.term_label(id),
    formula: fillFormula(v.texts.term_formula(id), inputs),
    value_bytes,
  };
}

/** The RL phases (rl.algorithm not "none"); undefined for a plain training step. */
function readRl(v: View, base: number, r: StructNumbers['result']): RlResult | undefined {
  if (r.rl_phase_count === 0) return undefined;
  return {
    phases: each(base + v.layout.result.rl_phases, r.rl_phase_count, v.layout.rl_phase.size, (a) =>
      VIEWS.rl_phase(v, a),
    ),
    kv_cache_bytes: r.rl_kv_cache_bytes,
    kv_cache_tokens: r.rl_kv_cache_tokens,
    engine_bytes: r.rl_engine_bytes,
  };
}

/** The timeline as columns, each read in one pass over the event structs. */
function readTimeline(v: View, base: number, r: StructNumbers['result'], simulated: boolean): Timeline {
  const E = v.layout.event,
    n = r.event_count,
    events = base + v.layout.result.events;
  const column = <T extends Float64Array | Int32Array>(col: T, offset: number, heap: T) => {
    for (let i = 0; i < col.length; i++) col[i] = heap[(events + i * E.size + offset) / col.BYTES_PER_ELEMENT];
    return col;
  };
  const doubles = (offset: number) => column(new Float64Array(n), offset, v.heap.HEAPF64);
  const ints = (offset: number) => column(new Int32Array(n), offset, v.heap.HEAP32);
  return {
    stride: r.event_stride,
    total_bytes: doubles(E.total_bytes),
    reserved_bytes: simulated ? doubles(E.reserved_bytes) : new Float64Array(0),
    category_bytes: Object.fromEntries(
      CATEGORIES.map((c, j) => [c, doubles(E.category_bytes + 8 * j)]),
    ) as Timeline['category_bytes'],
    phase: Array.from(ints(E.phase), (id) => v.texts.phase(id)),
    micro_batch: ints(E.micro_batch),
    layer: ints(E.layer),
  };
}

/** The result block after a successful llmem_run. */
export function readResult(v: View, base: number, timeline: boolean): EstimateResult {
  const R = v.layout.result,
    r = READ.result(v, base);
  const per = VIEWS.rank(v, base + R.per_gpu);
  const result: EstimateResult = {
    ok: true,
    per_gpu: { ...per, peak_at: v.text(base + R.peak_at) },
    peak_allocated: { bytes: r.peak_allocated_bytes, stage: r.peak_allocated_stage },
    ranks: each(base + R.ranks, r.rank_count, v.layout.rank.size, (a) => VIEWS.rank(v, a)),
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
    warnings: r.warnings.slice(0, r.warning_count).map((id) => v.texts.warning(id)),
    terms: each(base + R.terms, r.term_count, v.layout.term.size, (a) => readTerm(v, a)),
  };
  const rl = readRl(v, base, r);
  if (rl) result.rl = rl;
  if (timeline) result.timeline = readTimeline(v, base, r, per.reserved_simulated);
  return result;
}

/** One llmem_readings struct (a sweep point's). */
export function readReadings(v: View, a: number): Readings {
  const { status } = READ.readings(v, a);
  return { ok: status === 0, ...(status !== 0 ? { error: v.texts.status(status) } : {}), ...VIEWS.readings(v, a) };
}
