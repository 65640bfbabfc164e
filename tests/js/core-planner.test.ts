// The planner through the wasm: sweeps, largest fit, layout search; the CLI gives the same ranking.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core, Config } from '../../wasm/llmem.js';
import { STEP_PARTS } from '../../wasm/llmem.js';
import { stepBreakdown } from '../../frontend/config/labels.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig, merge } from '../../frontend/config/resolve.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const l70 = (): Config => {
  const r = resolveConfig({
    model: { preset: 'llama-3.1-70b' },
    training: { seq_len: 8192 },
    parallel: { engine: 'fsdp2' },
    hardware: { gpu: 'h100-sxm-80gb' },
  });
  if (!r.ok) throw new Error(r.error.message);
  return r.config;
};

describe('planner', () => {
  it('sweeps agree with single estimates and never go down along the sequence', () => {
    const values = [1024, 2048, 4096, 8192, 16384];
    const points = core.sweep({}, 'training.seq_len', values);
    if (!Array.isArray(points)) throw new Error(points.message);
    for (let i = 1; i < points.length; i++)
      expect(points[i].device_used_bytes).toBeGreaterThanOrEqual(points[i - 1].device_used_bytes);
    const direct = core.estimate({ training: { seq_len: 4096 } });
    expect(direct.ok && points[2].device_used_bytes).toBe(direct.ok ? direct.per_gpu.device_used_bytes : -1);
  });
  it('every call words a refused config as the estimate does, naming the key at fault', () => {
    const bad = { parallel: { engine: 'megatron', tp: 3, gpus: 8 } };
    const est = core.estimate(bad);
    if (est.ok) throw new Error('tp 3 of 64 heads must be refused');
    expect(est.error).toEqual({
      path: 'parallel.tp',
      message: 'parallel.tp: model.heads must be divisible by parallel.tp',
    });
    // the swept key is not the one at fault
    expect(core.largestFit(bad, 'training.micro_batch', { lo: 1, hi: 64, step: 1 })).toEqual(est.error);
    expect(core.stepTime(bad)).toEqual(est.error);
    expect(core.search(bad, { gpus: 8 })).toEqual(est.error);
    expect(core.suggest(bad)).toEqual(est.error);
    // an option's problem names the option, and no key
    expect(core.largestFit({}, 'training.micro_batch', { lo: 8, hi: 4, step: 1 })).toEqual({
      path: '',
      message: 'options lo, hi and step must satisfy 1 <= step <= lo <= hi',
    });
    expect(core.search({}, { gpus: 0 })).toEqual({ path: '', message: expect.stringMatching(/^option gpus /) });
  });
  it('step time: its parts add up to the step, named by the core', () => {
    const st = core.stepTime({ model: { preset: 'llama-3.1-8b' }, parallel: { gpus: 16, tp: 2, pp: 2 } });
    if (!('parts' in st)) throw new Error(st.message);
    expect(Object.keys(st.parts)).toEqual([...STEP_PARTS]);
    expect(Object.values(st.parts).reduce((a, b) => a + b, 0)).toBeCloseTo(st.step_seconds, 12);
    expect(st.parts.tp_comm).toBeGreaterThan(0);
    expect(st.parts.pipeline_bubble).toBeGreaterThan(0);
    expect(stepBreakdown(st.parts)[0].seconds).toBe(Math.max(...Object.values(st.parts)));
  });
  it('marks invalid sweep points with their reason', () => {
    const points = core.sweep({ parallel: { engine: 'megatron', tp: 2, gpus: 8 } }, 'training.seq_len', [4096, 4097]);
    if (!Array.isArray(points)) throw new Error(points.message);
    expect(points[0].ok).toBe(true);
    expect(points[1].ok).toBe(false);
    expect(points[1].error).toContain('divisible');
  });
  it('finds the largest micro-batch at the boundary', () => {
    const best = core.largestFit({ training: { recompute: 'full' } }, 'training.micro_batch', {
      lo: 1,
      hi: 512,
      step: 1,
      free_fraction: 0.1,
    });
    if (typeof best !== 'number') throw new Error(best.message);
    const at = (mb: number) => {
      const r = core.estimate({ training: { recompute: 'full', micro_batch: mb } });
      if (!r.ok) throw new Error(r.error.message);
      return r.per_gpu.device_used_bytes / r.capacity_bytes;
    };
    expect(at(best)).toBeLessThanOrEqual(0.9);
    expect(at(best + 1)).toBeGreaterThan(0.9);
  });
  it('searches layouts that are all valid and all fit, TP within a node for Llama-3.1-70B on 64 H100s', () => {
    const res = core.search(l70(), { gpus: 64, global_batch: 64 });
    if (!('layouts' in res)) throw new Error(res.message);
    expect(res.layouts.length).toBeGreaterThan(10);
    for (const l of res.layouts.slice(0, 40)) {
      const r = core.estimate(merge(l70(), l.patch));
      if (!r.ok) throw new Error(r.error.message);
      expect(r.per_gpu.device_used_bytes).toBeLessThanOrEqual(0.9 * r.capacity_bytes);
      expect(r.per_gpu.device_used_bytes).toBe(l.device_used_bytes);
    }
    expect(res.layouts[0].tp).toBeLessThanOrEqual(8);
    expect(res.layouts[0].pareto).toBe(true);
  }, 60_000);
  it("keeps a config's training.global_batch, and its patches keep stating it", () => {
    const config = merge(l70(), { training: { global_batch: 128 } });
    const res = core.search(config, { gpus: 64, vary_offload: true, vary_engine: true });
    if (!('layouts' in res)) throw new Error(res.message);
    expect(res.global_batch).toBe(128);
    const counted = res.fitting + res.rejected.reduce((s, r) => s + r.count, 0);
    expect(counted).toBe(res.candidates);
    expect(res.rejected.map((r) => r.reason).join('\n')).toContain('within a node');
    for (const l of res.layouts.slice(0, 20)) {
      const t = l.patch.training as Config;
      expect([t.global_batch, t.grad_accum]).toEqual([128, null]);
      const r = core.estimate(merge(config, l.patch));
      if (!r.ok) throw new Error(r.error.message);
      expect(r.per_gpu.device_used_bytes).toBe(l.device_used_bytes);
    }
  }, 60_000);
  it('an empty search lists why each candidate was left out', () => {
    const res = core.search(l70(), { gpus: 1_000_000 });
    if (!('layouts' in res)) throw new Error(res.message);
    expect(res.layouts).toEqual([]);
    expect(res.rejected[0].reason).toMatch(/global batch/);
    expect(res.rejected.reduce((s, r) => s + r.count, 0)).toBe(res.candidates);
  });
  it('derives the accumulation from training.global_batch, or names the key', () => {
    const a = core.estimate({ training: { micro_batch: 2, global_batch: 64 } });
    const b = core.estimate({ training: { micro_batch: 2, grad_accum: 4 } });
    expect(a.ok && b.ok && a.per_gpu.device_used_bytes === b.per_gpu.device_used_bytes).toBe(true);
    const bad = core.estimate({ training: { micro_batch: 2, global_batch: 64, grad_accum: 2 } });
    expect(bad.ok ? '' : bad.error.path).toBe('training.global_batch');
  });
  it('gives the CLI the same ranking', () => {
    const root = repoRoot();
    const r = spawnSync(
      'node',
      [join(root, 'bin/llmem.mjs'), 'search', '-', '--gpus', '64', '--global-batch', '64', '--top', '10', '--json'],
      {
        cwd: root,
        input: JSON.stringify({
          model: { preset: 'llama-3.1-70b' },
          training: { seq_len: 8192 },
          parallel: { engine: 'fsdp2' },
          hardware: { gpu: 'h100-sxm-80gb' },
        }),
        encoding: 'utf8',
      },
    );
    expect(r.status).toBe(0);
    const cli = JSON.parse(r.stdout).layouts as { step_seconds: number; tp: number; dp: number }[];
    const res = core.search(l70(), { gpus: 64, global_batch: 64 });
    if (!('layouts' in res)) throw new Error(res.message);
    expect(cli.map((l) => [l.dp, l.tp, l.step_seconds])).toEqual(
      res.layouts.slice(0, 10).map((l) => [l.dp, l.tp, l.step_seconds]),
    );
  }, 60_000); // a CLI process and a 64-GPU search: seconds on a loaded machine
});
