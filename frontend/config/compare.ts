// Measured next to estimated: the three readings and the per-phase peaks
// (what the GPU probe, probe/llmem_probe.py, writes). Shared by the CLI
// (`llmem compare`) and the page ("load measurement").
import type { EstimateResult } from '../../wasm/llmem.js';

export type Reading = 'peak_allocated_bytes' | 'peak_reserved_bytes' | 'device_used_bytes';
export const READINGS: Reading[] = ['peak_allocated_bytes', 'peak_reserved_bytes', 'device_used_bytes'];
export const PHASES = ['forward', 'backward', 'optimizer'] as const;
export type Phase = (typeof PHASES)[number];

/** Memory over a measured step: probe/snapshot_to_json.py's series (also the probe's measured.timeline). */
export interface MeasuredSeries {
  allocated_bytes: number[];
  reserved_bytes: number[];
  /** microseconds (unix time) of each sample, when the trace carried them */
  t_us?: number[];
  /** where each phase began: forward (per micro-batch), backward, optimizer */
  phases?: { phase: string; t_us: number; micro_batch?: number }[];
}

export interface Measurement {
  peak_allocated_bytes?: number;
  peak_reserved_bytes?: number;
  device_used_bytes?: number;
  phases?: Partial<Record<Phase, { peak_allocated_bytes?: number; peak_reserved_bytes?: number }>>;
  timeline?: MeasuredSeries;
  /** where the reading comes from: the case's source, or the probe and its GPU */
  origin?: string;
  /** rank 0 of a multi-rank layout through PyTorch's fake process group: no NCCL buffers */
  fake_process_group?: boolean;
}

/** "llmem probe (fake process group, rank 0 of 8) on NVIDIA H200 2026-11-26" of a case or a probe result. */
function originOf(doc: Record<string, unknown>): Pick<Measurement, 'origin' | 'fake_process_group'> {
  if (typeof doc.source === 'string')
    return { origin: doc.source, fake_process_group: doc.fake_process_group === true || undefined };
  const probe = isObject(doc.probe) ? doc.probe : null;
  if (!probe) return {};
  const layout = isObject(probe.layout) ? probe.layout : null;
  const gpu = isObject(doc.environment) && typeof doc.environment.gpu === 'string' ? doc.environment.gpu : 'a GPU';
  const world = layout && typeof layout.world === 'number' ? layout.world : null;
  return {
    origin: `llmem probe${world ? ` (fake process group, rank 0 of ${world})` : ''} on ${gpu}`,
    fake_process_group: world ? true : undefined,
  };
}

const numbers = (v: unknown): v is number[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/** A series as the converter writes it, or why not. */
export function readSeries(v: unknown): MeasuredSeries | string {
  if (!isObject(v) || !numbers(v.allocated_bytes) || !numbers(v.reserved_bytes))
    return 'a memory series needs allocated_bytes and reserved_bytes (lists of numbers)';
  if (v.allocated_bytes.length !== v.reserved_bytes.length || v.allocated_bytes.length === 0)
    return 'allocated_bytes and reserved_bytes must have the same, non-zero length';
  if (v.t_us !== undefined && (!numbers(v.t_us) || v.t_us.length !== v.allocated_bytes.length))
    return 't_us must be a list of numbers as long as allocated_bytes';
  const phases = Array.isArray(v.phases)
    ? v.phases.filter(
        (p): p is { phase: string; t_us: number } =>
          isObject(p) && typeof p.phase === 'string' && typeof p.t_us === 'number',
      )
    : [];
  return {
    allocated_bytes: v.allocated_bytes,
    reserved_bytes: v.reserved_bytes,
    t_us: v.t_us as number[] | undefined,
    phases,
  };
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
    const reason =
      isObject(e) && typeof e.message === 'string' ? e.message : typeof e === 'string' ? e : 'no reason given';
    return { error: `the probe refused this config: ${reason}` };
  }
  if (doc.source === 'torch.cuda.memory._snapshot') {
    // probe/snapshot_to_json.py's output for a user's own snapshot: the series and its peaks
    const series = readSeries(doc);
    if (typeof series === 'string') return { error: series };
    return {
      peak_allocated_bytes: Math.max(...series.allocated_bytes),
      peak_reserved_bytes: Math.max(...series.reserved_bytes),
      timeline: series,
    };
  }
  if (isObject(doc.measured)) {
    const m = { ...(doc.measured as Measurement), ...originOf(doc) };
    if (m.timeline !== undefined) {
      const series = readSeries(m.timeline);
      if (typeof series === 'string') return { error: `measured.timeline: ${series}` };
      m.timeline = series;
    }
    return m;
  }
  if (isObject(doc.expect) && typeof doc.expect.metric === 'string' && typeof doc.expect.bytes === 'number')
    return { [doc.expect.metric]: doc.expect.bytes, ...originOf(doc) } as Measurement;
  if (READINGS.some((r) => typeof doc[r] === 'number')) return doc as Measurement;
  return {
    error: 'no measurement found: expected "measured" (probe output), "expect" (accuracy case) or peak_*_bytes keys',
  };
}

/** Peak allocated bytes per phase of the simulated step (forward includes the loss). */
/** The measured phase a timeline event belongs to (the loss counts as forward). */
export function phaseOfEvent(p: string): Phase | null {
  if (p === 'forward' || p === 'loss') return 'forward';
  return p === 'backward' || p === 'optimizer' ? p : null;
}

export function estimatedPhasePeaks(res: EstimateResult): Record<Phase, number> | null {
  const t = res.timeline;
  if (!t) return null;
  const out: Record<Phase, number> = { forward: 0, backward: 0, optimizer: 0 };
  t.phase.forEach((p, i) => {
    const phase = phaseOfEvent(p);
    if (phase && t.total_bytes[i] > out[phase]) out[phase] = t.total_bytes[i];
  });
  return out;
}

/** Per-phase allocated peaks of a measured series with phase marks (forward includes the loss). */
export function seriesPhasePeaks(s: MeasuredSeries): Measurement['phases'] | undefined {
  const marks = (s.phases ?? []).filter((p) => (PHASES as readonly string[]).includes(p.phase));
  if (!s.t_us || !marks.length) return undefined;
  const out: NonNullable<Measurement['phases']> = {};
  s.t_us.forEach((t, i) => {
    let j = -1;
    while (j + 1 < marks.length && t >= marks[j + 1].t_us) j++;
    if (j < 0) return;
    const p = marks[j].phase as Phase;
    const cur = out[p] ?? { peak_allocated_bytes: 0, peak_reserved_bytes: 0 };
    out[p] = {
      peak_allocated_bytes: Math.max(cur.peak_allocated_bytes!, s.allocated_bytes[i]),
      peak_reserved_bytes: Math.max(cur.peak_reserved_bytes!, s.reserved_bytes[i]),
    };
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
  const measured = m.phases ?? (m.timeline ? seriesPhasePeaks(m.timeline) : undefined);
  if (phases)
    for (const p of PHASES) rows.push(row(`${p} peak_allocated_bytes`, phases[p], measured?.[p]?.peak_allocated_bytes));
  return rows;
}
