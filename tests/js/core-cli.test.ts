// The CLI: exit codes, messages that name the key, --json in the result format, stdin.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';

const root = repoRoot();
const cli = (args: string[], input?: string) =>
  spawnSync('node', [join(root, 'bin/llmem.mjs'), ...args], { cwd: root, input, encoding: 'utf8' });

describe('llmem CLI', () => {
  it('estimates a config file as text', () => {
    const r = cli(['estimate', 'tests/configs/llama-3.1-8b-fsdp-8xh100.json']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Llama 3.1 8B');
    expect(r.stdout).toMatch(/peak allocated \d+\.\d\d GiB/);
    // the step time, and where it goes (the step-time model's parts, largest first)
    expect(r.stdout).toMatch(/step time {4}\d[\d.]* s, [\d,]+ tokens\/s per GPU/);
    expect(r.stdout).toMatch(/^ {13}matmuls \d+ % · /m);
  });
  it('prints the result format with --json, reading stdin', () => {
    const r = cli(
      ['estimate', '-', '--json'],
      JSON.stringify({ model: { preset: 'llama-3.1-8b' }, parallel: { gpus: 8 } }),
    );
    expect(r.status).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res.ok).toBe(true);
    expect(res.per_gpu.breakdown_bytes.weights).toBeGreaterThanOrEqual(0);
    expect(res.params.total).toBe(8030261248);
    const parts = Object.values(res.step_time.parts) as number[];
    expect(parts.reduce((a, b) => a + b, 0)).toBeCloseTo(res.step_time.step_seconds, 12);
    expect(res.step_time.parts.dp_comm).toBeGreaterThan(0); // FSDP over 8 GPUs
  });
  it('marks the middle stages of a very deep pipeline that it bounds instead of walking', () => {
    const config = {
      model: { layers: 2304, hidden: 1024, heads: 8, ffn_hidden: 2048, vocab: 32000 },
      training: { grad_accum: 256 },
      parallel: { engine: 'megatron', pp: 256, vpp: 9, pp_schedule: 'interleaved', gpus: 256 },
    };
    const r = cli(['estimate', '-'], JSON.stringify(config));
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/stage {3}5 +≤\d+\.\d\d GiB/);
    expect(r.stdout).toContain('≤ not walked (a pipeline this deep): the same layers as stage');
    const res = JSON.parse(cli(['estimate', '-', '--json'], JSON.stringify(config)).stdout);
    const bounded = res.ranks.filter((x: { peak_bound: boolean }) => x.peak_bound);
    expect(bounded.length).toBeGreaterThan(200);
    expect(res.ranks[res.per_gpu.stage].peak_bound).toBe(false);
    for (const x of bounded) expect(res.ranks[x.bound_stage].peak_bound).toBe(false);
  });
  it('applies --set overrides', () => {
    const a = JSON.parse(cli(['estimate', '-', '--json'], '{}').stdout);
    const b = JSON.parse(cli(['estimate', '-', '--json', '--set', 'training.seq_len=8192'], '{}').stdout);
    expect(b.per_gpu.peak_allocated_bytes).toBeGreaterThan(a.per_gpu.peak_allocated_bytes);
  });
  it('fails with a message naming the key and exit 1 on bad input', () => {
    const r = cli(['estimate', '-'], JSON.stringify({ parallel: { engine: 'megatron', tp: 3, gpus: 3 } }));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('parallel.tp');
    const j = cli(['estimate', '-'], '{ not json');
    expect(j.status).toBe(1);
    expect(j.stderr).toContain('not valid JSON');
    const k = cli(['estimate', '-', '--set', 'parallel.engine=fsdp9'], '{}');
    expect(k.status).toBe(1);
    expect(k.stderr).toContain('allowed: single | ddp');
  });
  it('exits 2 on usage errors', () => {
    expect(cli(['estimate']).status).toBe(2);
    expect(cli(['frobnicate']).status).toBe(2);
  });
  it('compares an estimate with a probe measurement', () => {
    const r = cli(['compare', 'tests/fixtures/probe-output.json', '--json']);
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout).rows as { name: string; measured: number | null; error: number | null }[];
    expect(rows.map((x) => x.name)).toContain('backward peak_allocated_bytes');
    expect(rows.find((x) => x.name === 'peak_allocated_bytes')!.measured).toBe(21474836480);
    expect(rows.every((x) => x.measured === null || Number.isFinite(x.error))).toBe(true);
    const bad = cli(['compare', '-'], '{"measured": {"peak_allocated_bytes": 1}}');
    expect(bad.status).toBe(2); // no config to estimate
    const refused = cli(
      ['compare', 'tests/configs/llama-3.1-8b-fsdp-8xh100.json', '-'],
      '{"ok": false, "error": "needs 8 GPUs"}',
    );
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('refused');
  });
  it('sweeps, fits and searches', () => {
    const sweep = cli([
      'sweep',
      'tests/configs/llama-3.1-8b-fsdp-8xh100.json',
      '--axis',
      'training.seq_len',
      '--from',
      '1024',
      '--to',
      '65536',
      '--points',
      '7',
      '--json',
    ]);
    expect(sweep.status).toBe(0);
    const points = JSON.parse(sweep.stdout).points as { value: number; fits: boolean; verdict: string }[];
    expect(points.map((p) => p.value)).toEqual([1024, 2048, 4096, 8192, 16384, 32768, 65536]);
    expect(points[0].fits).toBe(true);
    expect(points[6].fits).toBe(false);
    // 8,192 tokens fit the card but not with 10 % kept free: the page's "tight"
    expect(points.map((p) => p.verdict)).toEqual(['fits', 'fits', 'fits', 'tight', 'no', 'no', 'no']);
    const all = cli([
      'sweep',
      'tests/configs/llama-3.1-8b-fsdp-8xh100.json',
      '--axis',
      'training.seq_len',
      '--from',
      '8192',
      '--to',
      '8192',
      '--step',
      '1',
      '--free',
      '0',
    ]);
    expect(all.stdout).toMatch(/8192 .* yes$/m);
    const fit = cli(
      ['fit', '-', '--json'],
      JSON.stringify({
        model: { preset: 'llama-3.1-8b' },
        training: { recompute: 'full' },
        hardware: { gpu: 'h100-sxm-80gb' },
      }),
    );
    expect(fit.status).toBe(0);
    const largest = JSON.parse(fit.stdout).largest;
    expect(largest['training.micro_batch']).toBeGreaterThanOrEqual(1);
    expect(largest['training.seq_len']).toBeGreaterThanOrEqual(4096);
    const search = cli(['search', 'tests/configs/llama-3.1-8b-fsdp-8xh100.json', '--gpus', '16', '--top', '5']);
    expect(search.status).toBe(0);
    expect(search.stdout).toContain('Pareto');
    expect(cli(['search', 'tests/configs/llama-3.1-8b-fsdp-8xh100.json']).status).toBe(2); // --gpus required
    expect(
      cli(['sweep', 'tests/configs/llama-3.1-8b-fsdp-8xh100.json', '--axis', 'model.mlp', '--from', '1', '--to', '2'])
        .status,
    ).toBe(1);
  });
  it('lists presets and GPUs', () => {
    expect(cli(['models']).stdout).toContain('llama-3.1-70b');
    expect(cli(['models']).stdout).toMatch(/^llama-3\.1-70b .*\n\s+also meta-llama\/Meta-Llama-3-70B$/m); // same tensors
    expect(cli(['gpus']).stdout).toContain('h100-sxm-80gb');
  });
});

describe('the host line names what is on the host', () => {
  const host = (config: object) => {
    const r = cli(['estimate', '-'], JSON.stringify(config));
    expect(r.status).toBe(0);
    return r.stdout.split('\n').find((l) => l.startsWith('host memory')) ?? '';
  };
  it('offloaded activations alone', () => {
    const line = host({ model: { preset: 'llama-3.1-8b' }, training: { activation_offload: true } });
    expect(line).toMatch(/per GPU process \(offloaded activations\)$/);
  });
  it("an RL run's sleeping rollout engine (level 1), not activation offload, which its phases do not do", () => {
    const line = host({
      model: { preset: 'qwen2.5-1.5b' },
      training: { activation_offload: true },
      rl: { algorithm: 'grpo', rollout: { sleep: 'level1' } },
    });
    expect(line).toMatch(/\(the sleeping rollout engine's weights\)$/);
  });
  it('ZeRO optimizer offload', () => {
    const line = host({
      model: { preset: 'llama-3.1-8b' },
      parallel: { engine: 'deepspeed', zero_stage: 2, gpus: 8, offload_optimizer: 'cpu' },
    });
    expect(line).toMatch(/\(offloaded optimizer states\)$/);
  });
});

describe('the stack lines name only what matters', () => {
  it("a classification head has no vocabulary loss: the profile's loss is not listed", () => {
    const run = (head: string) =>
      cli(
        ['estimate', '-'],
        JSON.stringify({ model: { preset: 'qwen2.5-7b', head }, runtime: { framework: 'hf_trainer' } }),
      ).stdout;
    expect(run('lm')).toMatch(/hf_trainer: training\.loss = /);
    const classification = run('classification');
    expect(classification).toMatch(/^per GPU {6}peak allocated/m); // the estimate ran
    expect(classification).not.toMatch(/training\.loss = /);
  });
});
