// Measured next to estimated: the three readings and the per-phase peaks
// (what the GPU probe, probe/llmem_probe.py, writes). Shared by the CLI
// (`llmem compare`) and the page ("load measurement").
import type { EstimateResult } from '../../wasm/llmem.js';

export type Reading = 'peak_allocated_bytes' | 'peak_reserved_bytes' | 'device_used_bytes';
export const READINGS: Reading[] = ['peak_allocated_bytes', 'peak_reserved_bytes', 'device_used_bytes'];
export const PHASES = ['forward', 'backward', 'optimizer'] as const;
export type Phase = (typeof PHASES)[number];

export interface Measurement {
  peak_allocated_bytes?: number;
  peak_reserved_bytes?: number;
  device_used_bytes?: number;
  phases?: Partial<Record<Phase, { peak_allocated_bytes?: number; peak_reserved_bytes?: number }>>;
}

export interface ComparisonRow {
  name: string;
  estimated: number;
  measured: number | null;
  error: number | null; // (estimated - measured) / measured
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The measurement inside a probe result ({measured: ...}), a measurements.json case ({expect: ...}) or a bare object. */
export function readMeasurement(doc: unknown): Measurement | { error: string } {
  if (!isObject(doc)) return { error: 'the measurement must be a JSON object' };
  if (doc.ok === false) {
    const e = doc.error;
    const reason = isObject(e) && typeof e.message === 'string' ? e.message : typeof e === 'string' ? e : 'no reason given';
    return { error: `the probe refused this config: ${reason}` };
  }
  if (isObject(doc.measured)) return doc.measured as Measurement;
  if (isObject(doc.expect) && typeof doc.expect.metric === 'string' && typeof doc.expect.bytes === 'number')
    return { [doc.expect.metric]: doc.expect.bytes } as Measurement;
  if (READINGS.some((r) => typeof doc[r] === 'number')) return doc as Measurement;
  return { error: 'no measurement found: expected "measured" (probe output), "expect" (accuracy case) or peak_*_bytes keys' };
}

/** Peak allocated bytes per phase of the simulated step (forward includes the loss). */
export function estimatedPhasePeaks(res: EstimateResult): Record<Phase, number> | null {
  const t = res.timeline;
  if (!t) return null;
  const out: Record<Phase, number> = { forward: 0, backward: 0, optimizer: 0 };
  t.phase.forEach((p, i) => {
    const phase: Phase | null = p === 'forward' || p === 'loss' ? 'forward' : p === 'backward' ? 'backward' : p === 'optimizer' ? 'optimizer' : null;
    if (phase && t.total_bytes[i] > out[phase]) out[phase] = t.total_bytes[i];
  });
  return out;
}

export function compare(res: EstimateResult, m: Measurement): ComparisonRow[] {
  const row = (name: string, estimated: number, measured: number | undefined): ComparisonRow => ({
    name,
    estimated,
    measured: measured ?? null,
    error: measured ? (estimated - measured) / measured : null,
  });
  const rows = READINGS.map((r) => row(r, res.per_gpu[r], m[r]));
  const phases = estimatedPhasePeaks(res);
  if (phases)
    for (const p of PHASES) rows.push(row(`${p} peak_allocated_bytes`, phases[p], m.phases?.[p]?.peak_allocated_bytes));
  return rows;
}
