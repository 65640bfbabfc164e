// The planner's pure logic, shared by the page, its Worker and the tests:
// sweep axes and their values, running a sweep (numeric keys through
// core.sweep, categorical ones by building configs), the largest fit and the
// step time of the headline, layout rows (sort, sharding, the patch that loads
// one), the Pareto front, and the A/B and measured comparisons. No DOM.
import type {
  Config,
  Core,
  ConfigError,
  EstimateOutcome,
  EstimateResult,
  Json,
  Layout,
  Readings,
  SearchOptions,
  SearchResult,
  SearchSwitch,
} from '../wasm/llmem.js';
import { CATEGORIES } from '../wasm/llmem.js';
import { CATEGORY_LABEL, OVERHEAD_LABEL } from './config/labels.js';
import { merge } from './config/resolve.js';
import type { GpuAlternative, SuggestReport } from './config/suggest.js';
import {
  estimatedPhasePeaks,
  PHASES,
  phaseOfEvent,
  type Measurement,
  type MeasuredSeries,
  type Phase,
} from './config/compare.js';

// ---------------------------------------------------------------- sweeps

export type Spacing = 'linear' | 'log' | 'pow2';

export interface SweepAxis {
  path: string;
  label: string;
  unit: string;
  /** categorical axes sweep the key's enum values (one config each) */
  categorical?: boolean;
  from: number;
  to: number;
  points: number;
  spacing: Spacing;
}

export const SWEEP_AXES: SweepAxis[] = [
  {
    path: 'training.seq_len',
    label: 'Sequence length',
    unit: 'tokens',
    from: 1024,
    to: 131072,
    points: 64,
    spacing: 'log',
  },
  {
    path: 'training.micro_batch',
    label: 'Micro-batch',
    unit: 'samples',
    from: 1,
    to: 32,
    points: 32,
    spacing: 'linear',
  },
  { path: 'parallel.gpus', label: 'GPUs', unit: 'GPUs', from: 1, to: 4096, points: 13, spacing: 'pow2' },
  { path: 'parallel.tp', label: 'Tensor parallel', unit: 'TP', from: 1, to: 64, points: 7, spacing: 'pow2' },
  { path: 'parallel.pp', label: 'Pipeline parallel', unit: 'PP', from: 1, to: 64, points: 7, spacing: 'pow2' },
  { path: 'parallel.cp', label: 'Context parallel', unit: 'CP', from: 1, to: 64, points: 7, spacing: 'pow2' },
  { path: 'parallel.ep', label: 'Expert parallel', unit: 'EP', from: 1, to: 64, points: 7, spacing: 'pow2' },
  {
    path: 'training.finetune.lora_rank',
    label: 'LoRA rank',
    unit: 'rank',
    from: 1,
    to: 1024,
    points: 11,
    spacing: 'pow2',
  },
  {
    path: 'training.recompute',
    label: 'Recompute',
    unit: 'policy',
    categorical: true,
    from: 0,
    to: 0,
    points: 0,
    spacing: 'linear',
  },
];

export const MAX_SWEEP_POINTS = 4096;

export const axisOf = (path: string): SweepAxis => SWEEP_AXES.find((a) => a.path === path) ?? SWEEP_AXES[0];

/**
 * The values of a numeric sweep. linear and log (geometric) spacing are the
 * CLI's (`llmem sweep --points N`: same expression, rounded for integer keys,
 * duplicates dropped); pow2 takes the powers of two in [from, to].
 */
export function sweepValues(
  from: number,
  to: number,
  points: number,
  spacing: Spacing,
  integer = true,
): number[] | string {
  if (!Number.isFinite(from) || !Number.isFinite(to)) return 'the range needs two numbers';
  if (!(to >= from)) return '"to" must be at least "from"';
  if (spacing === 'pow2') {
    if (!(to >= 1)) return 'powers of two need "to" ≥ 1';
    const out: number[] = [];
    for (let v = 2 ** Math.ceil(Math.log2(Math.max(from, 1))); v <= to && out.length < MAX_SWEEP_POINTS; v *= 2)
      out.push(v);
    return out.length ? out : 'no power of two in the range';
  }
  if (!(points >= 2 && points <= MAX_SWEEP_POINTS && Number.isInteger(points)))
    return `points must be a whole number from 2 to ${MAX_SWEEP_POINTS}`;
  if (spacing === 'log' && !(from > 0)) return 'geometric spacing needs "from" > 0';
  const ratio = to / from;
  const out: number[] = [];
  for (let i = 0; i < points; i++) {
    const v = spacing === 'log' ? from * ratio ** (i / (points - 1)) : from + ((to - from) * i) / (points - 1);
    out.push(integer ? Math.round(v) : v);
  }
  return [...new Set(out)];
}

/** One point of a sweep as the page draws it (a categorical value is its index, with its name). */
export interface PlanPoint extends Readings {
  value: number;
  label: string;
}

const nested = (path: string, value: Json): Config => {
  let node: Json = value;
  for (const k of path.split('.').reverse()) node = { [k]: node };
  return node as Config;
};

/** A sweep along a key; the config must be resolved (presets and GPU ids filled in). */
export function runSweep(
  core: Core,
  config: Config,
  path: string,
  values: (number | string)[],
): PlanPoint[] | ConfigError {
  const f = core.field(path);
  if (!f) return { path, message: `${path}: unknown key` };
  if (f.kind === 'enum') {
    return values.map((v, i) => {
      const r = core.estimate(merge(config, nested(path, v)));
      if (!r.ok)
        return {
          value: i,
          label: String(v),
          ok: false,
          error: r.error.message,
          peak_allocated_bytes: NaN,
          peak_reserved_bytes: NaN,
          device_used_bytes: NaN,
          capacity_bytes: NaN,
          fits: false,
        };
      const p = r.per_gpu;
      return {
        value: i,
        label: String(v),
        ok: true,
        peak_allocated_bytes: p.peak_allocated_bytes,
        peak_reserved_bytes: p.peak_reserved_bytes,
        device_used_bytes: p.device_used_bytes,
        capacity_bytes: r.capacity_bytes,
        fits: r.fits,
      };
    });
  }
  const pts = core.sweep(config, path, values as number[]);
  if (!Array.isArray(pts)) return pts;
  return pts.map((p) => ({ ...p, label: String(p.value) }));
}

/** Where the sweep stops fitting: the first valid point that does not fit, after the last one that does
 * (null: all fit). With `free`, fitting means leaving that fraction of the GPU's memory free. */
export function fitBoundary(points: PlanPoint[], free = 0): { index: number; lastFit: number | null } | null {
  let lastFit: number | null = null;
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (!p.ok) continue;
    if (p.fits && (free <= 0 || p.device_used_bytes <= (1 - free) * p.capacity_bytes)) lastFit = i;
    else return { index: i, lastFit };
  }
  return null;
}

/** Invalid points grouped by their reason (the list under the sweep chart). */
export function invalidReasons(points: PlanPoint[]): { reason: string; labels: string[] }[] {
  const by = new Map<string, string[]>();
  for (const p of points) if (!p.ok) by.set(p.error ?? 'invalid', [...(by.get(p.error ?? 'invalid') ?? []), p.label]);
  return [...by].map(([reason, labels]) => ({ reason, labels }));
}

// ---------------------------------------------------------------- headline

export interface Fits {
  micro_batch: number;
  seq_len: number;
  /** the sequence lengths tried are multiples of this (2 · cp · tp · 64) */
  seq_step: number;
  /** the key the sequence axis bisects: training.seq_len, or rl.response_len for an RL run */
  seq_path: string;
}

/** Sequence lengths tried by the largest fit: multiples of 2 · cp · tp · 64 (CP splits in 2·cp chunks, SP in tp). */
export function seqStepOf(config: Config): number {
  const p = (config.parallel ?? {}) as Record<string, number>;
  return 2 * (p.cp ?? 1) * (p.tp ?? 1) * 64;
}

/** Whether the config is an RL step (rl.algorithm set and not "none"). */
export function isRl(config: Config): boolean {
  const a = (config.rl as Record<string, unknown> | null | undefined)?.algorithm;
  return typeof a === 'string' && a !== 'none';
}

export interface FitAxis {
  path: string;
  step: number;
  hi: number;
}

/** The axes the largest fit bisects (page headline and `llmem fit`): the micro-batch, and the sequence
 * length; in an RL step the response length, since training.seq_len does not apply there. */
export function fitAxes(config: Config): FitAxis[] {
  const seqStep = seqStepOf(config);
  return [
    { path: 'training.micro_batch', step: 1, hi: 4096 },
    isRl(config)
      ? { path: 'rl.response_len', step: seqStep, hi: 4194304 }
      : { path: 'training.seq_len', step: seqStep, hi: 4194304 },
  ];
}

/** The spacing `llmem sweep` uses: geometric for wide positive ranges (sequence lengths), linear otherwise. */
export const defaultSpacing = (from: number, to: number): Spacing => (from > 0 && to / from >= 8 ? 'log' : 'linear');

/** One notion of fitting (the headroom kept free, as "Keep free" and `--free`):
 * 'fits' leaves the headroom, 'tight' fits the card but not the headroom. */
export type Verdict = 'fits' | 'tight' | 'no';
export function verdictOf(fits: boolean, device_used_bytes: number, capacity_bytes: number, free: number): Verdict {
  if (!fits) return 'no';
  return device_used_bytes <= (1 - free) * capacity_bytes ? 'fits' : 'tight';
}

export function largestFits(core: Core, config: Config, free: number): Fits | ConfigError {
  const [mbAxis, seqAxis] = fitAxes(config);
  const largest = (a: FitAxis) =>
    core.largestFit(config, a.path, { lo: a.step, hi: a.hi, step: a.step, free_fraction: free });
  const mb = largest(mbAxis);
  if (typeof mb !== 'number') return mb;
  const seq = largest(seqAxis);
  if (typeof seq !== 'number') return seq;
  return { micro_batch: mb, seq_len: seq, seq_step: seqAxis.step, seq_path: seqAxis.path };
}

// ---------------------------------------------------------------- layouts

/** The search's switches as the page and the CLI name them (defaults: wasm SEARCH_SWITCHES). */
export const SEARCH_SWITCH_LABELS: Record<SearchSwitch, { label: string; flag: string; hint: string }> = {
  vary_sharding: {
    label: 'Vary sharding',
    flag: 'vary-sharding',
    hint: 'ZeRO stage, FSDP strategy, distributed optimizer',
  },
  vary_recompute: { label: 'Vary recompute', flag: 'vary-recompute', hint: 'none, selective, full' },
  vary_offload: { label: 'Vary offload', flag: 'vary-offload', hint: 'optimizer (FSDP: and parameters) to CPU' },
  vary_optimizer_dtype: { label: 'Vary optimizer dtype', flag: 'vary-optimizer-dtype', hint: 'states in fp32 or bf16' },
  vary_engine: { label: 'Vary engine', flag: 'vary-engine', hint: 'fsdp2, megatron and deepspeed too' },
  tp_across_nodes: { label: 'TP across nodes', flag: 'tp-across-nodes', hint: 'tensor parallel above a node' },
};

export type SortKey =
  | 'dp'
  | 'tp'
  | 'pp'
  | 'vpp'
  | 'cp'
  | 'ep'
  | 'micro_batch'
  | 'grad_accum'
  | 'rollout_tp'
  | 'recompute'
  | 'sharding'
  | 'device_used_bytes'
  | 'step_seconds'
  | 'tokens_per_second_per_gpu';

export interface LayoutRow extends Layout {
  /** position in the core's ranking (fastest first) */
  rank: number;
  recompute: string;
  sharding: string;
}

/** The sharding a layout uses, named for its engine (as `llmem search` prints it). */
export function shardingOf(l: Layout, configEngine: string): string {
  const p = l.patch.parallel as Record<string, Json>;
  // a search that varies the engine names it in the patch when it differs from the config's
  const engine = typeof p.engine === 'string' ? p.engine : configEngine;
  const named = typeof p.engine === 'string' ? `${p.engine} ` : '';
  const offload = p.offload_optimizer && p.offload_optimizer !== 'none' ? ` + ${p.offload_optimizer} offload` : '';
  let sharding = '—';
  if (engine.startsWith('fsdp') || (engine === 'single' && l.dp > 1))
    sharding = String(p.fsdp_strategy).replace(/_/g, ' ');
  else if (engine === 'deepspeed' || engine === 'megatron_deepspeed') sharding = `ZeRO-${p.zero_stage}`;
  else if (engine === 'megatron') sharding = p.distributed_optimizer ? 'distributed optimizer' : 'replicated optimizer';
  return named + sharding + offload;
}

export function layoutRows(res: SearchResult, engine: string): LayoutRow[] {
  return res.layouts.map((l, rank) => ({
    ...l,
    rank,
    recompute: String((l.patch.training as Record<string, Json>).recompute),
    sharding: shardingOf(l, engine),
  }));
}

/** Sorted copy; ties keep the core's ranking (fastest first). */
export function sortLayouts<T extends LayoutRow>(rows: T[], key: SortKey, dir: 'asc' | 'desc'): T[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = a[key],
      y = b[key];
    const c =
      typeof x === 'string' || typeof y === 'string'
        ? String(x).localeCompare(String(y))
        : (x as number) - (y as number);
    return c !== 0 ? sign * c : a.rank - b.rank;
  });
}

/** Indices of the layouts no other is both faster and smaller than (the core's rule). */
export function paretoFront(ls: { device_used_bytes: number; step_seconds: number }[]): number[] {
  const out: number[] = [];
  ls.forEach((a, i) => {
    const dominated = ls.some(
      (b, j) =>
        j !== i &&
        b.step_seconds <= a.step_seconds &&
        b.device_used_bytes <= a.device_used_bytes &&
        (b.step_seconds < a.step_seconds || b.device_used_bytes < a.device_used_bytes),
    );
    if (!dominated) out.push(i);
  });
  return out;
}

const LAYOUT_KEYS = [
  'gpus',
  'tp',
  'pp',
  'vpp',
  'cp',
  'ep',
  'etp',
  'sequence_parallel',
  'pp_schedule',
  'pp_first_stage_layers',
  'pp_last_stage_layers',
  'zero_stage',
  'fsdp_strategy',
  'fsdp_shard_size',
  'distributed_optimizer',
];

/**
 * What a search depends on: the config without the keys a layout sets, the
 * GPU count and the global batch (the config's micro-batch x grad. accum. x
 * dp unless given). Loading a found layout leaves it unchanged.
 */
/** The samples per step of a resolved config, as the core reads it: training.global_batch, else
 * micro-batch x accumulation (null: 1) x data-parallel size. */
export function globalBatchOf(config: Config): number {
  const p = (config.parallel ?? {}) as Config,
    t = (config.training ?? {}) as Config;
  const n = (v: Json | undefined, d: number) => (typeof v === 'number' ? v : d);
  const dp = n(p.gpus, 8) / (n(p.tp, 1) * n(p.pp, 1) * n(p.cp, 1));
  return n(t.global_batch, 0) || n(t.micro_batch, 1) * n(t.grad_accum, 1) * dp;
}

export function searchKey(config: Config, o: SearchOptions): string {
  const p = { ...((config.parallel ?? {}) as Config) };
  const t = { ...((config.training ?? {}) as Config) };
  const batch = o.global_batch || globalBatchOf(config);
  for (const k of LAYOUT_KEYS) delete p[k];
  for (const k of ['micro_batch', 'grad_accum', 'global_batch', 'recompute', 'recompute_layers']) delete t[k];
  // what a varied setting's layout sets is the search's to choose, not an input of it
  if (o.vary_offload) for (const k of ['offload_optimizer', 'offload_params']) delete p[k];
  if (o.vary_optimizer_dtype) delete t.optimizer_dtype;
  if (o.vary_engine) delete p.engine;
  return stableJson([
    { ...config, parallel: p, training: t },
    { ...o, global_batch: batch },
  ]);
}

/** JSON with object keys sorted (the same config reads the same however it was built). */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

/** The layout a config is using, if it is in the list. */
export function currentLayout(rows: LayoutRow[], config: Config): LayoutRow | undefined {
  const p = (config.parallel ?? {}) as Record<string, Json>,
    t = (config.training ?? {}) as Record<string, Json>;
  const v = (x: Json | undefined, d: number) => (typeof x === 'number' ? x : d);
  // the accumulation as the core resolves it: stated, from training.global_batch, or 1
  const accum = (l: LayoutRow) => v(t.grad_accum, v(t.global_batch, l.dp * l.micro_batch) / (l.dp * l.micro_batch));
  return rows.find(
    (l) =>
      l.tp === v(p.tp, 1) &&
      l.pp === v(p.pp, 1) &&
      l.cp === v(p.cp, 1) &&
      l.ep === v(p.ep, 1) &&
      l.vpp === v(p.vpp, 1) &&
      l.micro_batch === v(t.micro_batch, 1) &&
      l.grad_accum === accum(l) &&
      l.recompute === (t.recompute ?? 'none') &&
      (l.rollout_tp === 0 || l.rollout_tp === v(((config.rl as Config)?.rollout as Config)?.tp, 1)) &&
      (l.patch.parallel as Config).gpus === v(p.gpus, 8) &&
      ['zero_stage', 'fsdp_strategy', 'distributed_optimizer'].every(
        (k) => p[k] === undefined || p[k] === (l.patch.parallel as Config)[k],
      ),
  );
}

// ---------------------------------------------------------------- worker protocol

export type PlannerRequest =
  | { id: number; kind: 'sweep'; config: Config; path: string; values: (number | string)[] }
  | { id: number; kind: 'search'; config: Config; options: SearchOptions }
  | { id: number; kind: 'fit'; config: Config; free: number }
  | { id: number; kind: 'suggest'; config: Config; free: number; gpus: GpuAlternative[] }
  | { id: number; kind: 'estimate'; config: Config };

export type PlannerReply =
  | { id: number; kind: 'sweep'; ok: true; points: PlanPoint[]; ms: number }
  | { id: number; kind: 'search'; ok: true; result: SearchResult; ms: number }
  | { id: number; kind: 'fit'; ok: true; fits: Fits; ms: number }
  | { id: number; kind: 'suggest'; ok: true; report: SuggestReport; ms: number }
  | { id: number; kind: 'sweep' | 'search' | 'fit' | 'suggest'; ok: false; error: ConfigError; ms: number }
  | { id: number; kind: 'estimate'; ok: true; outcome: EstimateOutcome; ms: number };

type SuggestHandler = (core: Core, config: Config, free: number, gpus: GpuAlternative[]) => SuggestReport | ConfigError;
let suggestHandler: SuggestHandler | null = null;
/** The Worker (and tests) plug in suggest.ts's suggestFor: the page's own bundle stays without it. */
export function registerSuggest(h: SuggestHandler) {
  suggestHandler = h;
}

/** What the Worker does with one request (also run in-thread where there is no Worker). */
export function handleRequest(
  core: Core,
  req: PlannerRequest,
  now: () => number = () => performance.now(),
): PlannerReply {
  const t0 = now();
  if (req.kind === 'estimate') {
    const outcome = core.estimate(req.config, { timeline: true });
    return { id: req.id, kind: 'estimate', ok: true, outcome, ms: now() - t0 };
  }
  if (req.kind === 'sweep') {
    const r = runSweep(core, req.config, req.path, req.values);
    return Array.isArray(r)
      ? { id: req.id, kind: 'sweep', ok: true, points: r, ms: now() - t0 }
      : { id: req.id, kind: 'sweep', ok: false, error: r, ms: now() - t0 };
  }
  if (req.kind === 'fit') {
    const f = largestFits(core, req.config, req.free);
    return 'micro_batch' in f
      ? { id: req.id, kind: 'fit', ok: true, fits: f, ms: now() - t0 }
      : { id: req.id, kind: 'fit', ok: false, error: f, ms: now() - t0 };
  }
  if (req.kind === 'suggest') {
    const r = suggestHandler
      ? suggestHandler(core, req.config, req.free, req.gpus)
      : { path: '', message: 'the suggestions run in the planner Worker' };
    return 'suggestions' in r
      ? { id: req.id, kind: 'suggest', ok: true, report: r, ms: now() - t0 }
      : { id: req.id, kind: 'suggest', ok: false, error: r, ms: now() - t0 };
  }
  const r = core.search(req.config, req.options);
  return 'layouts' in r
    ? { id: req.id, kind: 'search', ok: true, result: r, ms: now() - t0 }
    : { id: req.id, kind: 'search', ok: false, error: r, ms: now() - t0 };
}

// ---------------------------------------------------------------- A/B and measured

export interface DiffRow {
  key: string;
  label: string;
  a: number;
  b: number;
  /** b - a */
  diff: number;
  kind: 'reading' | 'category';
}

/** A (pinned) against B (current): the three readings, then each category of the peak and the two overheads. */
export function diffResults(a: EstimateResult, b: EstimateResult): DiffRow[] {
  const row = (key: string, label: string, x: number, y: number, kind: DiffRow['kind']): DiffRow => ({
    key,
    label,
    a: x,
    b: y,
    diff: y - x,
    kind,
  });
  const pa = a.per_gpu,
    pb = b.per_gpu;
  const rows = [
    row('peak_allocated_bytes', 'Allocated', pa.peak_allocated_bytes, pb.peak_allocated_bytes, 'reading'),
    row('peak_reserved_bytes', 'Reserved', pa.peak_reserved_bytes, pb.peak_reserved_bytes, 'reading'),
    row('device_used_bytes', 'nvidia-smi', pa.device_used_bytes, pb.device_used_bytes, 'reading'),
  ];
  for (const c of CATEGORIES)
    rows.push(row(c, CATEGORY_LABEL[c], pa.breakdown_bytes[c], pb.breakdown_bytes[c], 'category'));
  const over = (p: typeof pa) => [
    Math.max(0, p.peak_reserved_bytes - p.peak_allocated_bytes),
    Math.max(0, p.device_used_bytes - p.peak_reserved_bytes),
  ];
  const [ra, rta] = over(pa),
    [rb, rtb] = over(pb);
  rows.push(
    row('reserved', OVERHEAD_LABEL.reserved, ra, rb, 'category'),
    row('runtime', OVERHEAD_LABEL.runtime, rta, rtb, 'category'),
  );
  return rows;
}

/** Keys whose value differs between two full value maps (A's and B's), in field order. */
export function changedKeys(a: Record<string, Json>, b: Record<string, Json>): { path: string; a: Json; b: Json }[] {
  const out: { path: string; a: Json; b: Json }[] = [];
  for (const path of new Set([...Object.keys(a), ...Object.keys(b)]))
    if (JSON.stringify(a[path] ?? null) !== JSON.stringify(b[path] ?? null))
      out.push({ path, a: a[path] ?? null, b: b[path] ?? null });
  return out;
}

/**
 * A measured series on the simulated timeline's axis (one value per event: the highest measured sample
 * that falls there, else the last one before it). Aligned by phase when the measurement marks the same
 * sequence of phases as the simulated step (forward of each micro-batch, backward, optimizer): each
 * measured phase is stretched over the events of its simulated twin. Otherwise, or with no time stamps,
 * the whole measured step is stretched over the whole timeline.
 */
export function measuredOnTimeline(
  res: EstimateResult,
  s: MeasuredSeries,
): { allocated: (number | null)[]; reserved: (number | null)[]; aligned: boolean } | null {
  const t = res.timeline;
  if (!t?.total_bytes.length) return null;
  const n = t.total_bytes.length,
    k = s.allocated_bytes.length;
  // simulated segments: runs of one phase class
  const sim: { phase: Phase; from: number; to: number }[] = [];
  t.phase.forEach((p, i) => {
    const c = phaseOfEvent(p);
    if (!c) return;
    const last = sim[sim.length - 1];
    if (last && last.phase === c && last.to === i - 1) last.to = i;
    else sim.push({ phase: c, from: i, to: i });
  });
  const marks = (s.phases ?? [])
    .map((m) => ({ phase: phaseOfEvent(m.phase), t: m.t_us }))
    .filter((m): m is { phase: Phase; t: number } => m.phase !== null);
  const times = s.t_us;
  const aligned = !!times && marks.length === sim.length && marks.every((m, j) => m.phase === sim[j].phase);
  const pos = (i: number): number => {
    if (!times) return (i / Math.max(1, k - 1)) * (n - 1);
    if (aligned) {
      let j = 0;
      while (j + 1 < marks.length && times[i] >= marks[j + 1].t) j++;
      const start = marks[j].t,
        end = j + 1 < marks.length ? marks[j + 1].t : times[k - 1];
      const f = end > start ? Math.min(1, Math.max(0, (times[i] - start) / (end - start))) : 0;
      return sim[j].from + f * (sim[j].to + 1 - sim[j].from);
    }
    const t0 = times[0],
      t1 = times[k - 1];
    return t1 > t0 ? ((times[i] - t0) / (t1 - t0)) * (n - 1) : 0;
  };
  const allocated: (number | null)[] = new Array(n).fill(null),
    reserved: (number | null)[] = new Array(n).fill(null);
  for (let i = 0; i < k; i++) {
    const e = Math.min(n - 1, Math.max(0, Math.floor(pos(i))));
    allocated[e] = Math.max(allocated[e] ?? -Infinity, s.allocated_bytes[i]);
    reserved[e] = Math.max(reserved[e] ?? -Infinity, s.reserved_bytes[i]);
  }
  for (let e = 1; e < n; e++) {
    if (allocated[e] === null) allocated[e] = allocated[e - 1];
    if (reserved[e] === null) reserved[e] = reserved[e - 1];
  }
  return { allocated, reserved, aligned };
}

/** Horizontal lines for the timeline: each measured phase peak over the events of that phase (forward includes the loss). */
export function measuredPhaseLines(
  res: EstimateResult,
  m: Measurement,
): { phase: Phase | 'step'; value: number; from: number; to: number }[] {
  const t = res.timeline;
  if (!t) return [];
  const out: { phase: Phase | 'step'; value: number; from: number; to: number }[] = [];
  for (const phase of PHASES) {
    const v = m.phases?.[phase]?.peak_allocated_bytes;
    if (typeof v !== 'number') continue;
    let from = -1,
      to = -1;
    t.phase.forEach((p, i) => {
      if (phaseOfEvent(p) !== phase) return;
      if (from < 0) from = i;
      to = i;
    });
    if (from >= 0) out.push({ phase, value: v, from, to });
  }
  if (!out.length && typeof m.peak_allocated_bytes === 'number' && t.total_bytes.length)
    out.push({ phase: 'step', value: m.peak_allocated_bytes, from: 0, to: t.total_bytes.length - 1 });
  return out;
}

/** The estimated phase peaks (re-exported for the measured table). */
export { estimatedPhasePeaks };
