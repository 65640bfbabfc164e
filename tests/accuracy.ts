// npm run accuracy: every case of tests/accuracy/measurements.json (and
// tests/measured/*.json where present), the estimate next to the measurement
// in the measurement's own metric, the signed error, and the median / p90
// absolute error per category and confidence.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EstimateResult, StepPart } from '../wasm/llmem.js';
import { loadCore, repoRoot } from '../wasm/node.js';
import { resolveConfig } from '../frontend/config/resolve.js';

interface Expect {
  metric: string;
  bytes: number;
  relation: 'eq' | 'le' | 'ge';
}
interface Case {
  id: string;
  category: string;
  confidence: string;
  source: string;
  config: unknown;
  expect: Expect;
  /** more readings of the same run (the probe: reserved, device used) */
  expect_alt?: Expect[];
  /** the probe ran rank 0 of a multi-rank layout through PyTorch's fake process group */
  fake_process_group?: boolean;
}

/** The probe's readings (probe/run_matrix.py make_case): allocated, reserved, device used. */
export const PROBE_READINGS = ['peak_allocated_bytes', 'peak_reserved_bytes', 'device_used_bytes'] as const;
const isProbeCase = (c: Case) => c.source.startsWith('llmem probe');

export interface Row {
  id: string;
  category: string;
  confidence: string;
  /** runtime.framework of the case's config (its training stack) */
  framework: string;
  metric: string;
  /** an RL post-training case (rl.algorithm other than "none") */
  rl: boolean;
  relation: string;
  expected: number;
  estimate: number | null;
  error: number | null; // signed, (estimate - expected) / expected
  note: string;
  /** a reading of llmem's own probe (tests/measured): which kind of run; published cases: absent */
  probe?: 'single GPU' | 'fake process group';
}

/** The value of a metric: a result field, a breakdown part, or a sum "a+b+c" of breakdown parts. */
export function metricValue(res: EstimateResult, metric: string): number {
  const per = res.per_gpu as unknown as Record<string, number>;
  if (metric.startsWith('per_gpu.breakdown_bytes.'))
    return res.per_gpu.breakdown_bytes[metric.split('.')[2] as 'weights'];
  if (metric.includes('+'))
    return metric.split('+').reduce((s, k) => s + res.per_gpu.breakdown_bytes[k as 'weights'], 0);
  if (metric in per) return per[metric];
  throw new Error(`unknown metric ${metric}`);
}

export function loadCases(): Case[] {
  const root = repoRoot();
  const cases: Case[] = [];
  cases.push(...(JSON.parse(readFileSync(join(root, 'tests', 'accuracy', 'measurements.json'), 'utf8')) as Case[]));
  const local = join(root, 'tests', 'measured');
  if (existsSync(local))
    for (const f of readdirSync(local)
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      const c = JSON.parse(readFileSync(join(local, f), 'utf8')) as Case | Case[];
      cases.push(...(Array.isArray(c) ? c : [c]));
    }
  return cases;
}

const quantile = (xs: number[], q: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  const lo = Math.floor(i),
    hi = Math.ceil(i);
  return s[lo] + (s[hi] - s[lo]) * (i - lo);
};

/** rl.algorithm of a case's config ("none" when absent). */
function rlAlgorithm(config: unknown): string {
  const rl = (config as { rl?: { algorithm?: unknown } } | null)?.rl;
  return typeof rl?.algorithm === 'string' ? rl.algorithm : 'none';
}

function frameworkOf(config: unknown): string {
  const rt = (config as { runtime?: { framework?: string } }).runtime;
  return rt?.framework ?? 'generic';
}

export async function runAccuracy(): Promise<Row[]> {
  const core = await loadCore();
  const rows: Row[] = [];
  for (const c of loadCases()) {
    const probe = isProbeCase(c) ? (c.fake_process_group ? 'fake process group' : 'single GPU') : undefined;
    // the probe's rows count every reading it took; a published case its one figure
    const expects = probe
      ? [c.expect, ...(c.expect_alt ?? [])].filter((e) => (PROBE_READINGS as readonly string[]).includes(e.metric))
      : [c.expect];
    const resolved = resolveConfig(c.config);
    const res = resolved.ok ? core.estimate(resolved.config) : resolved; // once per case, every reading from it
    for (const expect of expects) rows.push(caseRow(c, expect, probe, res));
  }
  return rows;
}

type Estimate = EstimateResult | { ok: false; error: { message: string } };
function caseRow(c: Case, expect: Expect, probe: Row['probe'], res: Estimate): Row {
  const row: Row = {
    id: c.id,
    category: c.category,
    confidence: c.confidence,
    framework: frameworkOf(c.config),
    metric: expect.metric,
    relation: expect.relation,
    rl: rlAlgorithm(c.config) !== 'none',
    expected: expect.bytes,
    estimate: null,
    error: null,
    note: '',
    probe,
  };
  if (!res.ok) row.note = `error: ${res.error.message}`;
  else {
    row.estimate = metricValue(res, expect.metric);
    row.error = (row.estimate - row.expected) / row.expected;
    if (expect.relation === 'le') row.note = row.estimate <= row.expected ? 'bound holds' : 'bound violated';
    if (expect.relation === 'ge') row.note = row.estimate >= row.expected ? 'bound holds' : 'bound violated';
  }
  return row;
}

export interface Summary {
  group: string;
  count: number;
  median: number;
  p90: number;
  /** median of the signed errors: below zero, llmem under-estimates (the user runs out of memory) */
  signed_median: number;
  under: number;
  over: number;
  /** the most negative signed error (the worst under-estimate), or 0 */
  worst_under: number;
}

export function summarize(rows: Row[]): Summary[] {
  const groups = new Map<string, number[]>();
  const add = (g: string, e: number) => groups.set(g, [...(groups.get(g) ?? []), e]);
  for (const r of rows) {
    if (r.error === null || r.relation !== 'eq') continue;
    if (r.probe) {
      // llmem's own measurements: their own group per reading, apart from the published ones
      add(`probe, ${r.probe}: ${r.metric.replace(/^(peak_)?(.*)_bytes$/, '$2').replace('_', ' ')}`, r.error);
      continue;
    }
    add(`${r.category} / ${r.confidence}`, r.error);
    if (r.category === 'measured' && (r.confidence === 'high' || r.confidence === 'medium')) {
      add('measured high+medium', r.error);
      // reserved apart: the simulated caching allocator decides it (core/allocator.c)
      if (r.metric === 'peak_reserved_bytes') add('measured h+m, reserved only', r.error);
      add(`measured h+m, ${r.framework}`, r.error);
    }
    add('all point cases', r.error);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, xs]) => {
      const abs = xs.map(Math.abs);
      return {
        group,
        count: xs.length,
        median: quantile(abs, 0.5),
        p90: quantile(abs, 0.9),
        signed_median: quantile(xs, 0.5),
        under: xs.filter((e) => e < 0).length,
        over: xs.filter((e) => e > 0).length,
        worst_under: Math.min(0, ...xs),
      };
    });
}

interface StepRow {
  id: string;
  label: string;
  published: number;
  case?: string;
  patch?: unknown;
  config?: unknown;
}
interface StepTable {
  id: string;
  title: string;
  source: string;
  metric: 'tokens_per_second_per_gpu' | 'tflops_per_gpu' | 'iteration_seconds';
  flops?: { factor: number };
  rows: StepRow[];
}
export interface StepResult {
  table: string;
  id: string;
  published: number;
  estimate: number | null;
  error: number | null; // signed: (estimate - published) / published on throughput (1/time for seconds)
}

const isPlain = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
function merge(base: unknown, patch: unknown): unknown {
  if (!isPlain(base) || !isPlain(patch)) return patch === undefined ? base : patch;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = merge(base[k], v);
  return out;
}

/** FLOPs of one iteration by a table's own formula: factor B s l h^2 (1 + s/6h) + 6 B s h V. */
function tableFlops(config: unknown, factor: number): number {
  const c = config as {
    model: { layers: number; hidden: number; vocab: number };
    training: { micro_batch: number; seq_len: number; grad_accum: number };
    parallel: { gpus: number; tp: number; pp: number; cp?: number };
  };
  const { layers: l, hidden: h, vocab: v } = c.model;
  const { seq_len: s } = c.training;
  const dp = c.parallel.gpus / (c.parallel.tp * c.parallel.pp * (c.parallel.cp ?? 1));
  const b = c.training.micro_batch * c.training.grad_accum * dp;
  return factor * b * s * l * h * h * (1 + s / (6 * h)) + 6 * b * s * h * v;
}

/** The step-time model next to published throughput tables (tests/accuracy/steptime.json). */
export async function runStepTime(): Promise<{ tables: StepTable[]; rows: StepResult[] }> {
  const core = await loadCore();
  const cases = new Map(loadCases().map((c) => [c.id, c]));
  const doc = JSON.parse(readFileSync(join(repoRoot(), 'tests', 'accuracy', 'steptime.json'), 'utf8')) as {
    tables: StepTable[];
  };
  const rows: StepResult[] = [];
  for (const t of doc.tables)
    for (const r of t.rows) {
      const base = r.case ? cases.get(r.case)?.config : r.config;
      const config = merge(base, r.patch);
      const resolved = base ? resolveConfig(config) : null;
      const st = resolved?.ok ? core.stepTime(resolved.config) : null;
      let estimate: number | null = null;
      if (st && 'step_seconds' in st) {
        if (t.metric === 'tokens_per_second_per_gpu') estimate = st.tokens_per_second_per_gpu;
        else if (t.metric === 'iteration_seconds') estimate = st.step_seconds;
        else {
          const gpus = (config as { parallel: { gpus: number } }).parallel.gpus;
          estimate = tableFlops(config, t.flops?.factor ?? 72) / st.step_seconds / gpus / 1e12;
        }
      }
      let error: number | null = null;
      if (estimate !== null)
        error = t.metric === 'iteration_seconds' ? r.published / estimate - 1 : estimate / r.published - 1;
      rows.push({ table: t.id, id: r.id, published: r.published, estimate, error });
    }
  return { tables: doc.tables, rows };
}

/** Spearman rank correlation (average ranks for ties). */
export function spearman(xs: number[], ys: number[]): number {
  const rank = (v: number[]) => {
    const order = v.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
    const r = new Array<number>(v.length);
    for (let i = 0; i < order.length; ) {
      let j = i;
      while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
      for (let k = i; k <= j; k++) r[order[k][1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const rx = rank(xs),
    ry = rank(ys);
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(rx),
    my = mean(ry);
  let num = 0,
    dx = 0,
    dy = 0;
  for (let i = 0; i < rx.length; i++) {
    num += (rx[i] - mx) * (ry[i] - my);
    dx += (rx[i] - mx) ** 2;
    dy += (ry[i] - my) ** 2;
  }
  return dx && dy ? num / Math.sqrt(dx * dy) : NaN;
}

export interface StepSummary {
  group: string;
  count: number;
  median: number;
  signed_median: number;
  max: number;
  spearman: number;
}

/** Per table and in total: median |error|, signed median, max |error|, Spearman of throughput. */
export function summarizeStepTime(rows: StepResult[], tables: StepTable[]): StepSummary[] {
  const groups: [string, StepResult[]][] = tables.map((t) => [t.id, rows.filter((r) => r.table === t.id)]);
  groups.push(['all tables', rows]);
  return groups.map(([group, rs]) => {
    const ok = rs.filter((r) => r.error !== null && r.estimate !== null);
    const errs = ok.map((r) => r.error as number);
    const seconds = (r: StepResult) => tables.find((t) => t.id === r.table)?.metric === 'iteration_seconds';
    // throughput both ways: seconds turn into 1/seconds so a higher value is faster
    const pub = ok.map((r) => (seconds(r) ? 1 / r.published : r.published));
    const est = ok.map((r) => (seconds(r) ? 1 / (r.estimate as number) : (r.estimate as number)));
    return {
      group,
      count: ok.length,
      median: quantile(errs.map(Math.abs), 0.5),
      signed_median: quantile(errs, 0.5),
      max: Math.max(...errs.map(Math.abs)),
      spearman: group === 'all tables' ? NaN : spearman(pub, est),
    };
  });
}

const INSTANT_LINK_GB_PER_S = 1e6; // the links' largest allowed value

function withInstantLinks(config: unknown): unknown {
  const c = structuredClone(config) as { hardware?: Record<string, unknown> };
  c.hardware = {
    ...c.hardware,
    intra_node_gb_per_s: INSTANT_LINK_GB_PER_S,
    inter_node_gb_per_s: INSTANT_LINK_GB_PER_S,
  };
  return c;
}

/** The probe's step times next to the step-time model: rows that ran alone on the GPU only. */
type KernelClasses = Record<'matmuls' | 'attention' | 'memory_bound' | 'communication' | 'copies', number>;
export type ProbeStep = StepResult & { fake: boolean; parts?: Record<StepPart, number>; kernels?: KernelClasses };

export async function runProbeStepTime(): Promise<ProbeStep[]> {
  const core = await loadCore();
  const out: ProbeStep[] = [];
  for (const c of loadCases()) {
    const m = (
      c as {
        measured?: {
          step_seconds?: number;
          concurrent_processes?: number;
          kernel_time?: { seconds?: KernelClasses };
          allocator_trace?: unknown;
        };
      }
    ).measured;
    // a step timed beside other runs, or while the allocator's every event was recorded, is not the step's time
    if (!isProbeCase(c) || !m?.step_seconds || m.concurrent_processes !== 0 || m.allocator_trace) continue;
    // a fake process group's collectives return at once: the model's links at their largest
    // (docs/config.md) leave its compute, the FSDP copies included, as the probe timed
    const config = c.fake_process_group ? withInstantLinks(c.config) : c.config;
    const resolved = resolveConfig(config);
    const st = resolved.ok ? core.stepTime(resolved.config) : null;
    const estimate = st && 'step_seconds' in st ? st.step_seconds : null;
    out.push({
      table: 'probe',
      id: c.id,
      published: m.step_seconds,
      estimate,
      error: estimate === null ? null : m.step_seconds / estimate - 1, // on throughput, as the tables
      fake: c.fake_process_group === true,
      parts: st && 'parts' in st ? st.parts : undefined,
      kernels: m.kernel_time?.seconds,
    });
  }
  return out;
}

const GB = 2 ** 30;
const pct = (x: number | null) => (x === null ? '   n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`.padStart(7));

async function main() {
  const rows = await runAccuracy();
  console.log(
    `${'case'.padEnd(44)} ${'metric'.padEnd(22)} ${'measured'.padStart(10)} ${'estimate'.padStart(10)}  error`,
  );
  for (const r of rows) {
    const metric = r.metric
      .replace('per_gpu.breakdown_bytes.', '')
      .replace('weights+gradients+master_weights+optimizer_states', 'model states')
      .slice(0, 22);
    const est = r.estimate === null ? 'n/a' : `${(r.estimate / GB).toFixed(2)}`;
    console.log(
      `${r.id.slice(0, 44).padEnd(44)} ${metric.padEnd(22)} ${(r.expected / GB).toFixed(2).padStart(10)} ${est.padStart(10)} ${pct(r.error)} ${r.relation !== 'eq' ? `(${r.relation}) ` : ''}${r.note}`,
    );
  }
  console.log('\nerror of point cases (GiB columns above; signed: estimate below the measurement is under):');
  for (const s of summarize(rows))
    console.log(
      `  ${s.group.padEnd(32)} n=${String(s.count).padStart(3)}  median ${(s.median * 100).toFixed(1).padStart(5)}%  p90 ${(s.p90 * 100).toFixed(1).padStart(5)}%  signed median ${pct(s.signed_median)}  under ${s.under} / over ${s.over}  worst ${pct(s.worst_under)}`,
    );
  const bounds = rows.filter((r) => r.relation !== 'eq');
  console.log(`  bounds: ${bounds.filter((r) => r.note === 'bound holds').length} of ${bounds.length} hold`);
  const rl = rows.filter((r) => r.rl);
  console.log('\nRL post-training cases (rl.algorithm; core/rl.c):');
  if (rl.length === 0)
    console.log(
      '  none yet: no published RL memory figure found with its config in enough detail (docs/memory-model.md §16.6)',
    );
  for (const r of rl)
    console.log(
      `  ${r.id.slice(0, 44).padEnd(44)} ${r.metric.slice(0, 22).padEnd(22)} ${pct(r.error)} ${r.relation !== 'eq' ? `(${r.relation}) ` : ''}${r.note}`,
    );
  const st = await runStepTime();
  console.log('\nstep-time model (a ranking aid) vs published throughput (tests/accuracy/steptime.json);');
  console.log('error on throughput: estimate / published - 1 (iteration seconds: published / estimate - 1)');
  for (const t of st.tables) {
    console.log(`  ${t.title} [${t.metric}]`);
    for (const r of st.rows.filter((x) => x.table === t.id)) {
      const est = r.estimate === null ? 'n/a' : r.estimate.toPrecision(4);
      console.log(`    ${r.id.padEnd(42)} ${String(r.published).padStart(8)} ${est.padStart(8)} ${pct(r.error)}`);
    }
  }
  console.log('\nstep-time error per table (Spearman: rank correlation of estimated and published throughput):');
  for (const s of summarizeStepTime(st.rows, st.tables))
    console.log(
      `  ${s.group.padEnd(28)} n=${String(s.count).padStart(3)}  median ${(s.median * 100).toFixed(1).padStart(5)}%  signed median ${pct(s.signed_median)}  max ${(s.max * 100).toFixed(1).padStart(5)}%  Spearman ${Number.isNaN(s.spearman) ? '  n/a' : s.spearman.toFixed(2)}`,
    );
  const probe = await runProbeStepTime();
  console.log('\nstep-time model vs the probe (rows that ran alone on the GPU; error on throughput):');
  for (const [label, fake] of [
    ['single GPU', false],
    ['fake process group (the collectives return at once: the model with instant links)', true],
  ] as const) {
    const rs = probe.filter((r) => r.fake === fake && r.error !== null);
    const errs = rs.map((r) => r.error as number);
    const sp = spearman(
      rs.map((r) => 1 / r.published),
      rs.map((r) => 1 / (r.estimate as number)),
    );
    console.log(
      `  ${label}: n=${rs.length}  median ${(quantile(errs.map(Math.abs), 0.5) * 100).toFixed(1)}%  signed median ${pct(quantile(errs, 0.5))}  Spearman ${rs.length > 2 ? sp.toFixed(2) : 'n/a'}`,
    );
  }
  // the model's parts against the probe's GPU time by kernel class (probe --profile-kernels); recompute
  // repeats forward work of every class, so it is its own column
  const profiled = probe.filter((r) => r.kernels && r.parts);
  console.log("\nstep-time parts vs the probe's kernel time (seconds, measured / model; probe --profile-kernels):");
  if (profiled.length === 0)
    console.log(
      '  no probe row carries kernel_time yet (python3 probe/run_matrix.py --profile-kernels, alone on the GPU)',
    );
  for (const r of profiled) {
    const k = r.kernels as KernelClasses,
      p = r.parts as Record<StepPart, number>;
    const comm = p.tp_comm + p.cp_comm + p.ep_comm + p.dp_comm + p.pipeline_sends;
    const pair = (a: number, b: number) => `${a.toFixed(3)}/${b.toFixed(3)}`;
    console.log(
      `  ${r.id.slice(0, 56).padEnd(56)} matmuls ${pair(k.matmuls, p.matmuls)}  attention ${pair(k.attention, p.attention)}  memory-bound ${pair(k.memory_bound, p.memory_bound + p.optimizer + p.fsdp_copies)}  comm ${pair(k.communication, comm)}  recompute -/${p.recompute.toFixed(3)}`,
    );
  }
  const failed = rows.filter((r) => r.note.startsWith('error'));
  if (failed.length) console.log(`  ${failed.length} cases rejected by the core (see "error:" rows)`);
}

if (process.argv[1]?.endsWith('accuracy.js')) await main();
