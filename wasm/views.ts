// Reads the core's result structs out of wasm memory into the public shapes. The readers of each struct (READ),
// and the members a shape takes from its struct (VIEWS: numbers, flags, names, groups, arrays of structs), are
// generated (scripts/gen-boundary.mjs), as are the timeline's columns (COLUMNS); what is written here is the rest.
import { fillFormula } from '../frontend/config/numbers.js';
import type { EstimateResult, Readings, Term } from '../frontend/config/results.js';
import { CATEGORIES, COLUMNS, each, READ, VIEWS, type View } from './generated.js';

function readTerm(v: View, a: number): Term {
  const { id, category, value_bytes, inputs } = READ.term(v, a);
  return {
    category: CATEGORIES[category] ?? 'runtime',
    label: v.texts.term_label(id),
    formula: fillFormula(v.texts.term_formula(id), inputs),
    value_bytes,
    id,
    inputs,
  };
}

/** The result block after a successful llmem_run. */
export function readResult(v: View, base: number, timeline: boolean): EstimateResult {
  const R = v.layout.result,
    r = READ.result(v, base);
  const result: EstimateResult = {
    ok: true,
    per_gpu: { ...VIEWS.rank(v, base + R.per_gpu), peak_at: v.text(base + R.peak_at) },
    ...VIEWS.result(v, base, r),
    terms: each(base + R.terms, r.term_count, v.layout.term.size, (a) => readTerm(v, a)),
  };
  if (r.rl_phase_count > 0) result.rl = VIEWS.rl(v, base, r);
  if (!timeline) return result;
  const columns = COLUMNS.event(v, base + R.events, r.event_count);
  // reserved is a column of the simulated allocator only
  const reserved_bytes = result.per_gpu.reserved_simulated ? columns.reserved_bytes : new Float64Array(0);
  result.timeline = { stride: r.event_stride, ...columns, reserved_bytes };
  return result;
}

/** One llmem_readings struct (a sweep point's). */
export function readReadings(v: View, a: number): Readings {
  const { status } = READ.readings(v, a);
  return { ok: status === 0, ...(status !== 0 ? { error: v.texts.status(status) } : {}), ...VIEWS.readings(v, a) };
}
