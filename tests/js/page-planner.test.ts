// The page's planner logic: sweep values and sweeps (numeric and categorical),
// where a sweep stops fitting, the headline's largest fit, layout rows (sort,
// Pareto front, the patch that loads one, the search key), the worker's
// request handler, and the planner state run in-thread. The numbers must be
// the CLI's.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core, SearchResult } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { merge, resolveConfig } from '../../frontend/config/resolve.js';
import {
  currentLayout,
  fitBoundary,
  handleRequest,
  invalidReasons,
  largestFits,
  layoutRows,
  paretoFront,
  runSweep,
  searchKey,
  globalBatchOf,
  shardingOf,
  sortLayouts,
  sweepValues,
  verdictOf,
  type PlanPoint,
} from '../../frontend/planner.js';
import { createAppState } from '../../frontend/state.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const root = repoRoot();
const cli = (args: string[], config: object) => {
  const r = spawnSync('node', [join(root, 'bin/llmem.mjs'), ...args, '--json'], {
    cwd: root,
    input: JSON.stringify(config),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
};
const PAGE = { version: 1, model: { preset: 'llama-3.1-8b' }, hardware: { gpu: 'h100-sxm-80gb' } };
const resolved = (c: object): Config => {
  const r = resolveConfig(c);
  if (!r.ok) throw new Error(r.error.message);
  return r.config;
};
const settle = (ms = 80) => new Promise((r) => setTimeout(r, ms));

describe('sweep values', () => {
  it("linear and geometric spacing are the CLI's (rounded, no duplicates)", () => {
    expect(sweepValues(1, 8, 8, 'linear')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(sweepValues(1, 4, 7, 'linear')).toEqual([1, 2, 3, 4]);
    expect(sweepValues(0, 1, 5, 'linear', false)).toEqual([0, 0.25, 0.5, 0.75, 1]);
    const out = cli(
      ['sweep', '-', '--axis', 'training.seq_len', '--from', '1024', '--to', '131072', '--points', '16'],
      PAGE,
    );
    expect(sweepValues(1024, 131072, 16, 'log')).toEqual(out.points.map((p: { value: number }) => p.value));
  });
  it('powers of two in the range', () => {
    expect(sweepValues(1, 64, 0, 'pow2')).toEqual([1, 2, 4, 8, 16, 32, 64]);
    expect(sweepValues(3, 100, 0, 'pow2')).toEqual([4, 8, 16, 32, 64]);
    expect(sweepValues(5, 7, 0, 'pow2')).toBe('no power of two in the range');
  });
  it('says what is wrong with a range', () => {
    expect(sweepValues(10, 1, 5, 'linear')).toMatch(/at least/);
    expect(sweepValues(1, 10, 1, 'linear')).toMatch(/points/);
    expect(sweepValues(1, 10, 5000, 'linear')).toMatch(/4096/);
    expect(sweepValues(0, 10, 5, 'log')).toMatch(/> 0/);
    expect(sweepValues(NaN, 10, 5, 'linear')).toMatch(/two numbers/);
  });
  it("1,000 points stay within the core's limit and are distinct", () => {
    const v = sweepValues(1024, 1024 + 999 * 128, 1000, 'linear') as number[];
    expect(v.length).toBe(1000);
    expect(new Set(v).size).toBe(1000);
  });
});

describe('sweeps', () => {
  it("a numeric sweep gives the CLI's readings", () => {
    const values = sweepValues(1024, 65536, 12, 'log') as number[];
    const pts = runSweep(core, resolved(PAGE), 'training.seq_len', values) as PlanPoint[];
    const out = cli(
      ['sweep', '-', '--axis', 'training.seq_len', '--from', '1024', '--to', '65536', '--points', '12'],
      PAGE,
    );
    expect(
      pts.map((p) => [p.value, p.peak_allocated_bytes, p.peak_reserved_bytes, p.device_used_bytes, p.fits]),
    ).toEqual(
      out.points.map((p: PlanPoint) => [
        p.value,
        p.peak_allocated_bytes,
        p.peak_reserved_bytes,
        p.device_used_bytes,
        p.fits,
      ]),
    );
  });
  it('recompute is swept by building one config per policy', () => {
    const c = resolved(PAGE);
    const f = core.field('training.recompute')!;
    const pts = runSweep(core, c, 'training.recompute', f.values) as PlanPoint[];
    expect(pts.map((p) => p.label)).toEqual(f.values);
    expect(pts.map((p) => p.value)).toEqual(f.values.map((_, i) => i));
    for (const p of pts) {
      const r = core.estimate(merge(c, { training: { recompute: p.label } }));
      expect(r.ok).toBe(true);
      if (r.ok) expect(p.device_used_bytes).toBe(r.per_gpu.device_used_bytes);
    }
    const none = pts.find((p) => p.label === 'none')!,
      full = pts.find((p) => p.label === 'full')!;
    expect(full.peak_allocated_bytes).toBeLessThan(none.peak_allocated_bytes);
  });
  it('invalid points carry their reason; grouped for the list', () => {
    const pts = runSweep(
      core,
      resolved({ ...PAGE, parallel: { engine: 'megatron', gpus: 8 } }),
      'parallel.tp',
      [1, 2, 3, 4, 5, 8],
    ) as PlanPoint[];
    expect(pts.filter((p) => !p.ok).map((p) => p.value)).toEqual([3, 5]);
    const reasons = invalidReasons(pts);
    expect(reasons.flatMap((r) => r.labels).sort()).toEqual(['3', '5']);
    expect(reasons[0].reason).toMatch(/divisible|divide/);
  });
  it('an unknown key is an error naming it', () => {
    const r = runSweep(core, resolved(PAGE), 'training.banana', [1]);
    expect(Array.isArray(r)).toBe(false);
    if (!Array.isArray(r)) expect(r.path).toBe('training.banana');
  });
  it('finds where a sweep stops fitting', () => {
    const pt = (value: number, ok: boolean, fits: boolean) => ({ value, label: String(value), ok, fits }) as PlanPoint;
    expect(
      fitBoundary([pt(1, true, true), pt(2, false, false), pt(3, true, true), pt(4, true, false), pt(5, true, false)]),
    ).toEqual({ index: 3, lastFit: 2 });
    expect(fitBoundary([pt(1, true, false)])).toEqual({ index: 0, lastFit: null });
    expect(fitBoundary([pt(1, true, true), pt(2, false, false)])).toBeNull();
  });
});

describe('headline', () => {
  it("largest micro-batch and sequence are `llmem fit`'s", () => {
    for (const cfg of [
      PAGE,
      { ...PAGE, parallel: { engine: 'megatron', tp: 2, cp: 2 }, training: { recompute: 'full' } },
    ]) {
      for (const free of [0.1, 0.25]) {
        const f = largestFits(core, resolved(cfg), free);
        const out = cli(['fit', '-', '--free', String(free)], cfg);
        expect(f).toEqual({
          micro_batch: out.largest['training.micro_batch'],
          seq_len: out.largest['training.seq_len'],
          seq_step:
            128 *
            ((cfg as { parallel?: { tp?: number; cp?: number } }).parallel?.tp ?? 1) *
            ((cfg as { parallel?: { cp?: number } }).parallel?.cp ?? 1),
          seq_path: 'training.seq_len',
        });
      }
    }
  });
  it('a larger margin never allows more', () => {
    const a = largestFits(core, resolved(PAGE), 0.05),
      b = largestFits(core, resolved(PAGE), 0.3);
    if (!('seq_len' in a) || !('seq_len' in b)) throw new Error('fit failed');
    expect(b.seq_len).toBeLessThanOrEqual(a.seq_len);
    expect(b.micro_batch).toBeLessThanOrEqual(a.micro_batch);
  });
});

describe('layouts', () => {
  const cfg70 = {
    version: 1,
    model: { preset: 'llama-3.1-70b' },
    training: { seq_len: 8192 },
    hardware: { gpu: 'h100-sxm-80gb' },
  };
  let res: SearchResult;
  beforeAll(() => {
    const r = core.search(resolved(cfg70), { gpus: 64, global_batch: 64 });
    if (!('layouts' in r)) throw new Error(r.message);
    res = r;
  });

  it("sorts by any column, ties in the core's order", () => {
    const rows = layoutRows(res, 'fsdp2');
    const byMem = sortLayouts(rows, 'device_used_bytes', 'asc');
    for (let i = 1; i < byMem.length; i++) {
      expect(byMem[i].device_used_bytes).toBeGreaterThanOrEqual(byMem[i - 1].device_used_bytes);
      if (byMem[i].device_used_bytes === byMem[i - 1].device_used_bytes)
        expect(byMem[i].rank).toBeGreaterThan(byMem[i - 1].rank);
    }
    const byTok = sortLayouts(rows, 'tokens_per_second_per_gpu', 'desc');
    expect(byTok[0].tokens_per_second_per_gpu).toBe(Math.max(...rows.map((r) => r.tokens_per_second_per_gpu)));
    const byRec = sortLayouts(rows, 'recompute', 'asc').map((r) => r.recompute);
    expect(byRec).toEqual([...byRec].sort((a, b) => a.localeCompare(b)));
    expect(sortLayouts(rows, 'step_seconds', 'asc').map((r) => r.rank)).toEqual(rows.map((r) => r.rank));
    expect(rows).not.toBe(sortLayouts(rows, 'tp', 'asc'));
  });

  it("the Pareto front is the core's", () => {
    const front = paretoFront(res.layouts);
    expect(front.length).toBeGreaterThan(0);
    expect(res.layouts.map((l, i) => l.pareto === front.includes(i)).every(Boolean)).toBe(true);
    expect(
      paretoFront([
        { device_used_bytes: 1, step_seconds: 2 },
        { device_used_bytes: 2, step_seconds: 1 },
        { device_used_bytes: 2, step_seconds: 2 },
      ]),
    ).toEqual([0, 1]);
  });

  it("reads a config's global batch as the core does", () => {
    expect(globalBatchOf({ training: { global_batch: 64, micro_batch: 2 } })).toBe(64);
    expect(globalBatchOf({ training: { micro_batch: 2 }, parallel: { gpus: 8 } })).toBe(16); // accumulation null: 1
    expect(globalBatchOf({ training: { micro_batch: 1, grad_accum: 4 }, parallel: { gpus: 16, tp: 2 } })).toBe(32);
  });

  it('names the sharding per engine', () => {
    const l = res.layouts[0];
    expect(shardingOf(l, 'fsdp2')).toMatch(/shard/);
    expect(
      shardingOf(
        { ...l, patch: { ...l.patch, parallel: { ...(l.patch.parallel as Config), zero_stage: 3 } } },
        'deepspeed',
      ),
    ).toBe('ZeRO-3');
    expect(
      shardingOf(
        { ...l, patch: { ...l.patch, parallel: { ...(l.patch.parallel as Config), distributed_optimizer: true } } },
        'megatron',
      ),
    ).toBe('distributed optimizer');
    // a varied engine and offload are named
    const p = { ...(l.patch.parallel as Config), engine: 'deepspeed', zero_stage: 2, offload_optimizer: 'cpu' };
    expect(shardingOf({ ...l, patch: { ...l.patch, parallel: p } }, 'fsdp2')).toBe('deepspeed ZeRO-2 + cpu offload');
  });

  it('loading a layout gives the memory the search reported, and leaves the search key alone', () => {
    const base = resolved({
      ...cfg70,
      parallel: { pp: 2, pp_first_stage_layers: 38 },
      training: { seq_len: 8192, recompute: 'full', recompute_layers: 10 },
    });
    const r = core.search(base, { gpus: 64, global_batch: 64 });
    if (!('layouts' in r)) throw new Error(r.message);
    const rows = layoutRows(r, 'fsdp2');
    for (const l of rows.slice(0, 30)) {
      const loaded = merge(base, l.patch);
      const e = core.estimate(loaded);
      if (!e.ok) throw new Error(e.error.message);
      expect(e.per_gpu.device_used_bytes).toBe(l.device_used_bytes);
      expect(searchKey(loaded, { gpus: 64, global_batch: 64 })).toBe(searchKey(base, { gpus: 64, global_batch: 64 }));
      expect(currentLayout(rows, loaded)).toBe(l);
    }
    expect(searchKey(merge(base, { training: { seq_len: 4096 } }), { gpus: 64 })).not.toBe(
      searchKey(base, { gpus: 64 }),
    );
  });

  it('a single-GPU config searched over many GPUs loads as FSDP2', () => {
    const single = resolved({ ...PAGE, parallel: { engine: 'single', gpus: 1 } });
    const r = core.search(single, { gpus: 8, global_batch: 8 });
    if (!('layouts' in r) || !r.layouts.length) throw new Error('no layouts');
    const loaded = merge(single, r.layouts[0].patch);
    expect((loaded.parallel as Config).engine).toBe('fsdp2');
    const e = core.estimate(loaded);
    expect(e.ok && e.per_gpu.device_used_bytes).toBe(r.layouts[0].device_used_bytes);
  });

  it("the worker's handler answers sweeps and searches, errors named", () => {
    const s = handleRequest(core, {
      id: 7,
      kind: 'sweep',
      config: resolved(PAGE),
      path: 'training.micro_batch',
      values: [1, 2],
    });
    expect(s.id).toBe(7);
    expect(s.ok && s.kind === 'sweep' && s.points.length).toBe(2);
    const q = handleRequest(core, { id: 8, kind: 'search', config: resolved(PAGE), options: { gpus: 16 } });
    expect(q.ok && q.kind === 'search' && q.result.layouts.length).toBeGreaterThan(0);
    const bad = handleRequest(core, { id: 9, kind: 'search', config: resolved(PAGE), options: { gpus: 0 } });
    expect(bad.ok).toBe(false);
    const badSweep = handleRequest(core, {
      id: 10,
      kind: 'sweep',
      config: { training: { seq_len: 'x' } } as unknown as Config,
      path: 'training.seq_len',
      values: [1],
    });
    expect(!badSweep.ok && badSweep.error.path).toBe('training.seq_len');
  });
});

describe('planner state (in-thread backend)', () => {
  it('headline numbers follow the config and the margin', async () => {
    const s = createAppState(core, '');
    await settle();
    const f = s.planner.fits.value;
    expect(f && 'seq_len' in f && f.seq_len).toBeGreaterThan(0);
    const before = f && 'seq_len' in f ? f.seq_len : 0;
    s.planner.freeFraction.value = 0.3;
    await settle();
    const g = s.planner.fits.value;
    expect(g && 'seq_len' in g && g.seq_len).toBeLessThan(before);
    expect(s.planner.step.value!.step_seconds).toBeGreaterThan(0);
    s.setField('parallel.tp', 3);
    expect(s.planner.fits.value).toBeNull();
    s.planner.dispose();
  });

  it('a sweep runs when its tab opens and again when the config changes', async () => {
    const s = createAppState(core, '');
    s.planner.tab.value = 'sweep';
    await settle();
    const first = s.planner.sweep.value;
    expect(first.status).toBe('done');
    expect(first.data!.points.length).toBeGreaterThan(10);
    expect(first.key).toBe(s.planner.sweepKey.value);
    s.setField('training.micro_batch', 2);
    expect(s.planner.sweep.value.key).not.toBe(s.planner.sweepKey.value);
    await settle();
    expect(s.planner.sweep.value.key).toBe(s.planner.sweepKey.value);
    expect(s.planner.sweep.value.data!.points[0].device_used_bytes).toBeGreaterThan(
      first.data!.points[0].device_used_bytes,
    );
    s.planner.sweepAxis.value = 'training.recompute';
    await settle();
    expect(s.planner.sweep.value.data!.points.map((p) => p.label)).toEqual(core.field('training.recompute')!.values);
    s.planner.dispose();
  });

  it('a search lists layouts; loading one changes the config but not the list', async () => {
    const s = createAppState(core, '');
    s.planner.searchGpus.value = 64;
    s.planner.tab.value = 'search';
    await settle(150);
    const job = s.planner.search.value;
    expect(job.status).toBe('done');
    const rows = s.planner.rows.value;
    expect(rows.length).toBeGreaterThan(10);
    const pick = rows[3];
    s.planner.loadLayout(pick);
    expect(s.get('parallel.gpus')).toBe(64);
    expect(s.get('parallel.tp')).toBe(pick.tp);
    expect(s.get('training.micro_batch')).toBe(pick.micro_batch);
    expect(s.result.value!.per_gpu.device_used_bytes).toBe(pick.device_used_bytes);
    expect(s.planner.currentSearchKey.value).toBe(job.key);
    await settle(150);
    expect(s.planner.search.value).toBe(job);
    s.setField('training.seq_len', 2048);
    expect(s.planner.search.value.status).toBe('running');
    await settle(250);
    expect(s.planner.search.value.status).toBe('done');
    expect(s.planner.search.value.key).toBe(s.planner.currentSearchKey.value);
    s.planner.dispose();
  });
});

describe('deep models: the largest fit leaves the main thread (issue 12)', () => {
  it('a 99,840-layer pipeline sends the bisection to the backend; the answer is the in-thread one', async () => {
    const jobs: string[] = [];
    const local = (await import('../../frontend/worker-client.js')).localBackend(core);
    const backend = {
      run: (job: Parameters<typeof local.run>[0]) => {
        jobs.push(job.kind);
        return local.run(job);
      },
      cancel: () => {},
      offThread: false,
    };
    const hash =
      '#v1/model.preset=null&model.layers=99840&model.hidden=1024&model.heads=8&model.ffn_hidden=4096&model.vocab=32000&training.grad_accum=1024&parallel.gpus=512&parallel.pp=512&parallel.engine=megatron';
    const s = createAppState(core, hash, backend);
    expect(s.outcome.value.ok).toBe(true);
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    expect(jobs).toContain('fit');
    const f = s.planner.fits.value;
    expect(f && 'micro_batch' in f).toBe(true);
    expect(f).toEqual(largestFits(core, s.resolved.value, 0.1));
    s.planner.dispose();
  });
  it('an ordinary model gets its largest fits from the Worker too (each estimate simulates the allocator)', async () => {
    const jobs: string[] = [];
    const local = (await import('../../frontend/worker-client.js')).localBackend(core);
    const backend = {
      run: (job: Parameters<typeof local.run>[0]) => {
        jobs.push(job.kind);
        return local.run(job);
      },
      cancel: () => {},
      offThread: false,
    };
    const s = createAppState(core, '', backend);
    expect(jobs).toEqual(['fit']);
    await settle();
    expect(s.planner.fits.value && 'seq_len' in s.planner.fits.value!).toBe(true);
    expect(s.planner.fits.value).toEqual(largestFits(core, s.resolved.value, 0.1));
    s.planner.dispose();
  });
});

describe('slow estimates leave the main thread (issue 12)', () => {
  // a Worker stand-in: the same jobs, answered asynchronously, reporting the estimate's time as `ms`
  const workerLike = async (msOf: (kind: string) => number) => {
    const local = (await import('../../frontend/worker-client.js')).localBackend(core);
    const jobs: string[] = [];
    return {
      jobs,
      backend: {
        offThread: true,
        run: async (job: Parameters<typeof local.run>[0]) => {
          jobs.push(job.kind);
          await new Promise((r) => setTimeout(r, 5));
          const d = await local.run(job);
          return { ...d, ms: msOf(job.kind) };
        },
        cancel: () => {},
      },
    };
  };
  /** Wait for a condition (the fake Worker's jobs take longer on a loaded machine), at most 30 s. */
  const until = async (cond: () => boolean) => {
    for (let t = 0; t < 30000 && !cond(); t += 20) await settle(20);
  };
  const DEEP =
    '#v1/model.preset=llama-3.1-70b&parallel.gpus=64&parallel.pp=8&parallel.engine=megatron&training.grad_accum=16';
  it('a deep-pipeline link is estimated in the Worker: nothing blocks, then the same numbers as the core', async () => {
    const w = await workerLike(() => 50);
    const s = createAppState(core, DEEP, w.backend);
    expect(s.computing.value, 'computing in the background').toBe(true);
    expect(s.result.value, 'no result before the Worker answers').toBeNull();
    expect(s.error.value, 'no error meanwhile').toBeNull();
    await until(() => !s.computing.value);
    expect(w.jobs).toContain('estimate');
    expect(s.computing.value).toBe(false);
    const direct = core.estimate(s.resolved.value, { timeline: true });
    expect(direct.ok && s.result.value?.per_gpu.device_used_bytes).toBe(direct.ok && direct.per_gpu.device_used_bytes);
    // an edit: the last result stays on screen while the Worker computes the new one
    const before = s.result.value;
    s.setField('training.grad_accum', 32);
    expect(s.computing.value).toBe(true);
    expect(s.result.value).toBe(before);
    await until(() => !s.computing.value);
    expect(s.result.value).not.toBe(before);
    expect(s.result.value?.per_gpu.device_used_bytes).toBe(
      (core.estimate(s.resolved.value) as { per_gpu: { device_used_bytes: number } }).per_gpu.device_used_bytes,
    );
    s.planner.dispose();
  });
  it('a fast answer from the Worker brings the estimates back to the main thread', async () => {
    const w = await workerLike(() => 0.5);
    const s = createAppState(core, DEEP, w.backend);
    await until(() => s.result.value !== null && !s.computing.value);
    s.setField('parallel.pp', 1);
    expect(s.computing.value, 'light again: estimated at once, here').toBe(false);
    expect(s.result.value?.per_gpu.stage).toBe(0);
    s.planner.dispose();
  });
  it('a config predicted heavy stays in the Worker after a fast answer (no alternating with the main thread)', async () => {
    const w = await workerLike(() => 0.5);
    const s = createAppState(core, DEEP, w.backend);
    await until(() => s.result.value !== null && !s.computing.value);
    s.setField('training.grad_accum', 32);
    expect(s.computing.value, 'still in the Worker').toBe(true);
    await until(() => !s.computing.value);
    s.planner.dispose();
  });
  it('while estimates run in the Worker, the largest fit waits for a pause in the edits', async () => {
    const w = await workerLike(() => 50);
    const s = createAppState(core, DEEP, w.backend);
    await until(() => s.result.value !== null && !s.computing.value);
    expect(w.jobs, 'not at once').not.toContain('fit');
    await until(() => w.jobs.includes('fit'));
    await until(() => s.planner.fits.value !== null);
    expect(s.planner.fits.value).toEqual(largestFits(core, s.resolved.value, 0.1));
    s.planner.dispose();
  });
  it('an ordinary link never uses the Worker for its estimate', async () => {
    const w = await workerLike(() => 0.5);
    const s = createAppState(core, '', w.backend);
    expect(s.result.value, 'estimated at once').not.toBeNull();
    await settle(100);
    expect(w.jobs).not.toContain('estimate');
    s.planner.dispose();
  });
});

describe('one notion of fitting', () => {
  it('fits with the headroom, fits the card only (tight), or does not fit', () => {
    expect(verdictOf(true, 70, 80, 0.1)).toBe('fits'); // 70 <= 72
    expect(verdictOf(true, 75, 80, 0.1)).toBe('tight');
    expect(verdictOf(false, 85, 80, 0.1)).toBe('no');
    expect(verdictOf(true, 80, 80, 0)).toBe('fits');
  });
});

describe('sweep boundary with a headroom', () => {
  const pt = (value: number, used: number, fits: boolean): PlanPoint =>
    ({ value, label: String(value), ok: true, fits, device_used_bytes: used, capacity_bytes: 100 }) as PlanPoint;
  it('stops leaving the headroom before it stops fitting the card', () => {
    const pts = [pt(1, 50, true), pt(2, 85, true), pt(3, 95, true), pt(4, 120, false)];
    expect(fitBoundary(pts)).toEqual({ index: 3, lastFit: 2 });
    expect(fitBoundary(pts, 0.1)).toEqual({ index: 2, lastFit: 1 });
  });
});
