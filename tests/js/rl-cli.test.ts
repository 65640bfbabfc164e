// The CLI on RL post-training configs (core/rl.c): a line per phase, the overall peak and its phase, --json.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';

const root = repoRoot();
const cli = (args: string[], input?: string) =>
  spawnSync('node', [join(root, 'bin/llmem.mjs'), ...args], { cwd: root, input, encoding: 'utf8' });
const GRPO = 'tests/configs/rl-grpo-qwen2.5-0.5b-1xh100.json';
const PPO = 'tests/configs/rl-ppo-qwen2.5-0.5b-2xh100.json';

describe('llmem estimate, RL', () => {
  it('prints each phase of a GRPO step with what dominates it, and the peak phase', () => {
    const r = cli(['estimate', GRPO]);
    expect(r.status).toBe(0);
    for (const phase of [
      'weight sync',
      'rollout',
      'engine sleep',
      'old log-probs',
      'reference log-probs',
      'actor update',
    ])
      expect(r.stdout).toMatch(new RegExp(`\\n  ${phase} +\\d+\\.\\d\\d GiB +\\d+\\.\\d\\d GiB  \\w`));
    expect(r.stdout).toContain('peak at      rollout');
    expect(r.stdout).toMatch(/rollout +\d+\.\d\d GiB +\d+\.\d\d GiB {2}rollout engine .*kv_cache/);
    expect(r.stdout).toMatch(/KV cache \d+\.\d\d GiB \([\d,]+ tokens\)/);
  });
  it('--json carries the phases, by category and by model; the peak is the highest phase', () => {
    const r = cli(['estimate', PPO, '--json']);
    expect(r.status).toBe(0);
    const res = JSON.parse(r.stdout);
    const phases = res.rl.phases.map((p: { phase: string }) => p.phase);
    expect(phases).toEqual([
      'weight sync',
      'rollout',
      'engine sleep',
      'reward scoring',
      'old log-probs',
      'reference log-probs',
      'critic values',
      'critic update',
      'actor update',
    ]);
    const top = Math.max(...res.rl.phases.map((p: { peak_allocated_bytes: number }) => p.peak_allocated_bytes));
    expect(res.per_gpu.peak_allocated_bytes).toBe(top);
    const rollout = res.rl.phases[1];
    const byModel = Object.values(rollout.model_bytes as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(byModel).toBeCloseTo(rollout.peak_allocated_bytes, -3);
    expect(rollout.breakdown_bytes.kv_cache).toBe(res.rl.kv_cache_bytes);
    expect(res.rl.kv_cache_tokens).toBeGreaterThan(0);
  });
  it('names the key of an invalid RL combination, exit 1', () => {
    const r = cli(['estimate', GRPO, '--set', 'rl.mini_batch=3']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('rl.mini_batch');
    const s = cli(['estimate', GRPO, '--set', 'rl.rollout.sleep=level3']);
    expect(s.status).toBe(1);
    expect(s.stderr).toContain('level1 | level2');
  });
  it('leaves a plain training config without RL output', () => {
    const r = cli(['estimate', 'tests/configs/llama-3.1-8b-fsdp-8xh100.json']);
    expect(r.stdout).not.toContain('RL phases');
    expect(r.stdout).not.toContain('kv_cache');
  });
});

describe('llmem fit and search, RL', () => {
  it('fit bisects the response length (training.seq_len does not apply to an RL step), and it fits at its answer', () => {
    const r = cli(['fit', GRPO, '--json']);
    expect(r.status).toBe(0);
    const largest = JSON.parse(r.stdout).largest as Record<string, number>;
    expect(Object.keys(largest)).toEqual(['training.micro_batch', 'rl.response_len']);
    const best = largest['rl.response_len'];
    expect(best % 128).toBe(0);
    const at = (len: number) =>
      JSON.parse(cli(['estimate', GRPO, '--json', '--set', `rl.response_len=${len}`]).stdout).per_gpu;
    const keep = (p: { device_used_bytes: number }, cap: number) => p.device_used_bytes <= 0.9 * cap;
    const cap = JSON.parse(cli(['estimate', GRPO, '--json']).stdout).capacity_bytes as number;
    expect(keep(at(best), cap)).toBe(true);
    expect(keep(at(best + 128), cap)).toBe(false);
  });
  it("the layout search places the rollout engine's TP; each layout is its own estimate", () => {
    const r = cli(['search', GRPO, '--gpus', '8', '--json']);
    expect(r.status).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res.layouts.length).toBeGreaterThan(0);
    for (const l of res.layouts) {
      expect(l.rollout_tp).toBeGreaterThanOrEqual(1);
      expect(l.patch.rl).toEqual({ rollout: { tp: l.rollout_tp } });
    }
    const text = cli(['search', GRPO, '--gpus', '8']);
    expect(text.stdout).toMatch(/rollout tp/);
    expect(text.stdout).toMatch(/RL run: the rollout engine's TP varies/);
  });
});
