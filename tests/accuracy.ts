// npm run accuracy: every case of tests/accuracy/measurements.json (and
// tests/measured/*.json where present), the estimate next to the measurement
// in the measurement's own metric, the signed error, and the median / p90
// absolute error per category and confidence.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EstimateResult } from '../wasm/llmem.js';
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
}

export interface Row {
  id: string;
  category: string;
  confidence: string;
  /** runtime.framework of the case's config (its training stack) */
  framework: string;
  metric: string;
  relation: string;
  expected: number;
  estimate: number | null;
  error: number | null; // signed, (estimate - expected) / expected
  note: string;
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

function frameworkOf(config: unknown): string {
  const rt = (config as { runtime?: { framework?: string } }).runtime;
  return rt?.framework ?? 'generic';
}

export async function runAccuracy(): Promise<Row[]> {
  const core = await loadCore();
  const rows: Row[] = [];
  for (const c of loadCases()) {
    const row: Row = {
      id: c.id,
      category: c.category,
      confidence: c.confidence,
      framework: frameworkOf(c.config),
      metric: c.expect.metric,
      relation: c.expect.relation,
      expected: c.expect.bytes,
      estimate: null,
      error: null,
      note: '',
    };
    const resolved = resolveConfig(c.config);
    const res = resolved.ok ? core.estimate(resolved.config) : resolved;
    if (!res.ok) row.note = `error: ${res.error.message}`;
    else {
      row.estimate = metricValue(res, c.expect.metric);
      row.error = (row.estimate - row.expected) / row.expected;
      if (c.expect.relation === 'le') row.note = row.estimate <= row.expected ? 'bound holds' : 'bound violated';
      if (c.expect.relation === 'ge') row.note = row.estimate >= row.expected ? 'bound holds' : 'bound violated';
    }
    rows.push(row);
  }
  return rows;
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

/** The step-time model next to published throughput (tests/vectors/throughput.txt). */
export async function runThroughput(): Promise<
  { id: string; published: number; estimate: number | null; error: number | null }[]
> {
  const core = await loadCore();
  const cases = new Map(loadCases().map((c) => [c.id, c]));
  const lines = readFileSync(join(repoRoot(), 'tests/vectors/throughput.txt'), 'utf8').split('\n');
  const rows = [];
  for (const line of lines.map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const [id, tps] = line.split(' | ');
    const c = cases.get(id);
    const published = Number(tps);
    const resolved = c ? resolveConfig(c.config) : null;
    const t = resolved?.ok ? core.stepTime(resolved.config) : null;
    const estimate = t && 'tokens_per_second_per_gpu' in t ? t.tokens_per_second_per_gpu : null;
    rows.push({ id, published, estimate, error: estimate === null ? null : (estimate - published) / published });
  }
  return rows;
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
  const tp = await runThroughput();
  console.log('\nstep-time model (a ranking aid) vs published throughput, tokens/s per GPU:');
  for (const r of tp)
    console.log(
      `  ${r.id.padEnd(40)} ${String(r.published).padStart(7)} ${r.estimate === null ? '    n/a' : Math.round(r.estimate).toString().padStart(7)} ${pct(r.error)}`,
    );
  const errs = tp.filter((r) => r.error !== null).map((r) => Math.abs(r.error!));
  console.log(
    `  step time: n=${errs.length}  median ${(quantile(errs, 0.5) * 100).toFixed(1)}%  p90 ${(quantile(errs, 0.9) * 100).toFixed(1)}%`,
  );
  const failed = rows.filter((r) => r.note.startsWith('error'));
  if (failed.length) console.log(`  ${failed.length} cases rejected by the core (see "error:" rows)`);
}

if (process.argv[1]?.endsWith('accuracy.js')) await main();
