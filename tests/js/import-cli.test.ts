// bin/import-commands.ts: `llmem import`, `llmem export` and `--hf`, called directly
// (exit status, stdout, stderr), before they are wired into bin/cli.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { repoRoot } from '../../wasm/node.js';
import { exportCommand, hfOption, importCommand, ImportInputError } from '../../bin/import-commands.js';

const fx = (p: string) => join(repoRoot(), 'tests/fixtures/import', p);

async function capture(run: () => Promise<number>) {
  const out: string[] = [],
    err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
    out.push(String(s));
    return true;
  });
  try {
    const status = await run();
    return { status, stdout: out.join('\n'), stderr: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    write.mockRestore();
  }
}
afterEach(() => vi.restoreAllMocks());

describe('llmem import, the model from --hf', () => {
  // a file naming a model the catalog does not hold: refused alone (exit 1), imported with --hf config.json
  const dir = mkdtempSync(join(tmpdir(), 'llmem-import-hf-'));
  const file = join(dir, 'run.yaml');
  writeFileSync(file, 'base_model: org/Foo-7B\nadapter: lora\nlora_r: 16\nmicro_batch_size: 2\nsequence_len: 4096\n');
  it('an unknown model id is an error naming the key, and says --hf', async () => {
    const r = await capture(() => importCommand(['axolotl', file], (id, base) => Promise.resolve(hfOption(id, base))));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/base_model: "org\/Foo-7B" is not in the model catalog; .*--hf/);
  });
  it('with --hf the model comes from the config.json and the rest from the file', async () => {
    const hf = fx('hf/qwen2.5-7b.json');
    const r = await capture(() =>
      importCommand(['axolotl', file, '--hf', hf], (id, base) => Promise.resolve(hfOption(id, base))),
    );
    expect(r.status).toBe(0);
    const c = JSON.parse(r.stdout);
    expect(c.model).toMatchObject({ layers: 28, hidden: 3584 });
    expect(c.training).toMatchObject({ micro_batch: 2, seq_len: 4096, finetune: { method: 'lora', lora_rank: 16 } });
    expect(r.stderr).toContain('note: model: from --hf');
  });
  it('--hf on a config.json itself is a usage error', async () => {
    const r = await capture(() =>
      importCommand(['hf', fx('hf/qwen2.5-7b.json'), '--hf', 'x.json'], (id, base) =>
        Promise.resolve(hfOption(id, base)),
      ),
    );
    expect(r.status).toBe(2);
  });
});

describe('llmem import', () => {
  it('prints config v1 on stdout and the notes and keys not applied on stderr', async () => {
    const r = await capture(() => importCommand(['deepspeed', fx('deepspeed/hf-zero3-offload.json')]));
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ parallel: { engine: 'deepspeed', zero_stage: 3 } });
    expect(r.stderr).toContain('note: fp16.enabled is "auto"');
    expect(r.stderr).toContain('not applied: zero_optimization.sub_group_size');
  });
  it('auto-detects the kind; --json gives one object; --world-size feeds Megatron', async () => {
    const r = await capture(() =>
      importCommand(['auto', fx('torchtitan/llama3_8b.toml'), '--json', '--world-size', '16']),
    );
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.kind).toBe('torchtitan');
    expect(j.config.parallel.gpus).toBe(16);
    expect(Array.isArray(j.notes) && Array.isArray(j.unsupported)).toBe(true);
  });
  it('exit 1 with the message on malformed input, 2 on usage errors and unreadable input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmem-import-'));
    const bad = join(dir, 'ds.json');
    writeFileSync(bad, '{"zero_optimization": {"stage": 7}}');
    const r = await capture(() => importCommand(['deepspeed', bad]));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('zero_optimization.stage: must be 0, 1, 2 or 3');
    expect(r.stdout).toBe('');
    // with --json the refusal is an object on standard output as well (exit 1 still)
    const j = await capture(() => importCommand(['deepspeed', bad, '--json']));
    expect(j.status).toBe(1);
    expect(JSON.parse(j.stdout)).toEqual({
      ok: false,
      kind: 'deepspeed',
      error: { path: 'zero_optimization.stage', message: expect.stringContaining('must be 0, 1, 2 or 3') },
    });
    expect((await capture(() => importCommand(['auto', join(dir, 'missing.json')]))).status).toBe(2); // unreadable input
    expect((await capture(() => importCommand(['yaml', bad]))).status).toBe(2);
    expect((await capture(() => importCommand(['deepspeed']))).status).toBe(2);
    expect((await capture(() => importCommand(['megatron', bad, '--world-size', 'x']))).status).toBe(2);
  });
});

describe('llmem import with the DeepSpeed JSON a config names', () => {
  const real = (p: string) => join(repoRoot(), 'tests/fixtures/real', p);
  it('reads the second file; without it the path is reported as not read', async () => {
    const both = await capture(() =>
      importCommand(['accelerate', real('accelerate/deepspeed.yaml'), real('accelerate/zero_stage1_config.json')]),
    );
    expect(both.status).toBe(0);
    expect(JSON.parse(both.stdout)).toMatchObject({
      parallel: { engine: 'deepspeed', zero_stage: 1, gpus: 2 },
      training: { dtype: 'fp16' },
    });
    expect(both.stderr).toContain('with ');
    expect(both.stderr).not.toContain('not applied');
    const alone = await capture(() => importCommand(['auto', real('accelerate/deepspeed.yaml'), '--json']));
    expect(alone.status).toBe(0);
    expect(JSON.parse(alone.stdout).unsupported.join('\n')).toMatch(
      /zero_stage1_config\.json" was not read \(give it too/,
    );
  });
  it('a second file for a format that names none is reported, not read', async () => {
    const r = await capture(() =>
      importCommand(['deepspeed', fx('deepspeed/zero2-bf16.json'), fx('deepspeed/hf-zero3-offload.json'), '--json']),
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).unsupported.join('\n')).toMatch(/second file: .* was not read/);
  });
  it('exit 2 for an unreadable second file or a third one; exit 1 naming the key for a malformed one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmem-import-also-'));
    const yaml = real('accelerate/deepspeed.yaml');
    expect((await capture(() => importCommand(['accelerate', yaml, join(dir, 'missing.json')]))).status).toBe(2);
    expect((await capture(() => importCommand(['accelerate', yaml, yaml, yaml]))).status).toBe(2);
    expect((await capture(() => importCommand(['accelerate', yaml, '-']))).status).toBe(2);
    const bad = join(dir, 'ds.json');
    writeFileSync(bad, '{"zero_optimization": {"stage": 9}}');
    const r = await capture(() => importCommand(['accelerate', yaml, bad]));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('zero_optimization.stage: must be 0, 1, 2 or 3');
  });
  it('a NeMo-RL recipe takes its defaults: chain as further files, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmem-import-chain-'));
    const mid = join(dir, 'mid.yaml');
    const top = join(dir, 'top.yaml');
    writeFileSync(mid, 'defaults: grpo_math_1B.yaml\ngrpo:\n  num_prompts_per_step: 64\n');
    writeFileSync(top, 'defaults: mid.yaml\ngrpo:\n  num_prompts_per_step: 128\n');
    const r = await capture(() => importCommand(['nemo_rl', top, mid, real('nemo_rl/grpo_math_1B.yaml'), '--json']));
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).config.rl.rollout_batch).toBe(128);
    expect((await capture(() => importCommand(['nemo_rl', top, mid, '-']))).status).toBe(2);
  });
});

describe('llmem export', () => {
  it('writes the format on stdout and what it cannot express on stderr', async () => {
    const r = await capture(() =>
      exportCommand(['deepspeed', join(repoRoot(), 'tests/configs/llama-3.1-8b-fsdp-8xh100.json')]),
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ train_micro_batch_size_per_gpu: 1, zero_optimization: { stage: 3 } });
    expect(r.stderr).toContain('cannot express: model*');
    expect(r.stderr).toContain('cannot express: parallel.engine = "fsdp2"');
    const t = await capture(() =>
      exportCommand(['torchtitan', join(repoRoot(), 'tests/configs/llama-3.1-8b-fsdp-8xh100.json'), '--json']),
    );
    expect(JSON.parse(t.stdout).text).toContain('flavor = "8B"');
  });
  it('rejects an invalid config (exit 1, naming the key) and unknown formats (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmem-export-'));
    const bad = join(dir, 'c.json');
    writeFileSync(bad, JSON.stringify({ parallel: { tp: 3 } }));
    const r = await capture(() => exportCommand(['megatron', bad]));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('parallel.tp');
    expect((await capture(() => exportCommand(['nemo', bad]))).status).toBe(2);
  });
});

describe('llmem estimate --hf', () => {
  it('replaces the model of the config, keeps the rest, and reads its sliding window', async () => {
    const base = { model: { preset: 'qwen3-8b' }, training: { seq_len: 2048 } };
    let merged: Record<string, unknown> = {};
    const r = await capture(async () => {
      merged = hfOption(fx('hf/mistral-7b-v0.1.json'), base);
      return 0;
    });
    expect(merged.training).toEqual({ seq_len: 2048 });
    expect(merged.model).toMatchObject({ layers: 32, kv_heads: 8, vocab: 32000 });
    expect(merged.model).not.toHaveProperty('preset');
    expect(merged.model).toMatchObject({ layer_types: ['sliding'], sliding_window: 4096 });
    expect(r.stderr).not.toContain('sliding_window'); // read, so no longer a warning
    expect(hfOption(fx('hf/gpt2.json')).training).toEqual({ dropout: 0.1 });
    expect(() => hfOption(fx('deepspeed/zero2-bf16.json'))).toThrow(ImportInputError);
  });
});
