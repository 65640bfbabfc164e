// axolotl precision per engine (bf16 / fp16 / bfloat16 / float16: the model loads in that dtype, and only
// FSDP1 with mixed precision or DeepSpeed keeps an fp32 copy), and reward models (classification head,
// chosen + rejected in one batch). Sources: axolotl-ai-cloud/axolotl@067b021c, accelerate@v1.13.0, trl@v1.8.0.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { importConfig, type Imported } from '../../frontend/config/importers/index.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const real = (file: string) => readFileSync(join(repoRoot(), 'tests/fixtures/real/axolotl', file), 'utf8');
const ok = (text: string, worldSize?: number): Imported => {
  const r = importConfig('axolotl', text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return r;
};
const training = (r: Imported) => (r.config as { training: Record<string, unknown> }).training;
/** Peak allocated GiB of an imported config with some keys overridden. */
const peak = (config: Config, over: (c: Config) => void = () => {}): number => {
  const c = structuredClone(config);
  over(c);
  const resolved = resolveConfig(c);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
  return res.per_gpu.peak_allocated_bytes / 2 ** 30;
};
const single = (c: Config) => {
  (c as { parallel: Record<string, unknown> }).parallel = { gpus: 1, engine: 'single' };
};
const BASE = 'base_model: NousResearch/Meta-Llama-3.1-8B\nsequence_len: 2048\nmicro_batch_size: 1\n';
const FSDP1 = 'fsdp_config:\n  fsdp_version: 1\n  fsdp_sharding_strategy: FULL_SHARD\n';
const FSDP2 = 'fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n';

describe('axolotl precision: the load dtype, and which engine keeps an fp32 copy', () => {
  it('examples/llama-3/fft-8b.yaml (bf16 auto) on one GPU: bf16 weights and grads, no fp32 master (88.8 -> 43.8 GiB)', () => {
    const r = ok(real('llama-3-fft-8b.yaml'));
    expect(training(r)).toMatchObject({ dtype: 'bf16', master_weights: false, grad_dtype: 'bf16' });
    expect(training(r).optimizer_dtype).toBeUndefined(); // paged_adamw_8bit: 8-bit states
    expect(r.notes.join('\n')).toMatch(/bf16 "auto": bf16 assumed; on a GPU without bf16/);
    const gib = peak(r.config as Config, single);
    expect(gib).toBeGreaterThan(40);
    expect(gib).toBeLessThan(50);
  });
  it('DDP with a torch optimizer: bf16 optimizer states too; bfloat16 is the same', () => {
    for (const flag of ['bf16: true', 'bfloat16: true']) {
      const t = training(ok(`${BASE}${flag}\noptimizer: adamw_torch_fused\n`));
      expect(t).toMatchObject({ dtype: 'bf16', master_weights: false, grad_dtype: 'bf16', optimizer_dtype: 'bf16' });
    }
    // the axolotl default optimizer (adamw_torch_fused) when none is named
    expect(training(ok(`${BASE}bf16: true\n`)).optimizer_dtype).toBe('bf16');
    // bitsandbytes 32-bit optimizers keep fp32 states whatever the parameters' dtype
    const bnb = training(ok(`${BASE}bf16: true\noptimizer: paged_adamw_32bit\n`));
    expect(bnb.master_weights).toBe(false);
    expect(bnb.optimizer_dtype).toBeUndefined();
  });
  it('fp16 and float16 load in fp16; fp16 AMP full fine-tuning is flagged (GradScaler refuses fp16 grads)', () => {
    const fp16 = ok(`${BASE}fp16: true\n`);
    expect(training(fp16)).toMatchObject({ dtype: 'fp16', master_weights: false, grad_dtype: 'fp16' });
    expect(fp16.notes.join('\n')).toContain('Attempting to unscale FP16 gradients');
    const float16 = ok(`${BASE}float16: true\n`);
    expect(training(float16)).toMatchObject({ dtype: 'fp16', master_weights: false, grad_dtype: 'fp16' });
    expect(float16.notes.join('\n')).not.toContain('Attempting to unscale');
    // bf16 auto gives way to fp16 (resolve_dtype)
    expect(training(ok(`${BASE}bf16: auto\nfp16: true\n`)).dtype).toBe('fp16');
    expect(training(ok(BASE)).dtype).toBe('fp32');
  });
  it('FSDP1 with mixed precision upcasts (accelerate): the fp32 master stays; bf16 "full" (no AMP) does not', () => {
    const amp = ok(`${BASE}bf16: true\n${FSDP1}`, 8);
    expect(training(amp).master_weights).toBeUndefined();
    expect(amp.notes.join('\n')).toContain('FSDP1 with mixed precision upcasts');
    expect(training(ok(`${BASE}bf16: full\n${FSDP1}`, 8))).toMatchObject({ master_weights: false, grad_dtype: 'bf16' });
  });
  it("axolotl's FSDP2 does not upcast: bf16 shards, grads and states", () => {
    const r = ok(`${BASE}bf16: true\n${FSDP2}`, 8);
    expect(training(r)).toMatchObject({ master_weights: false, grad_dtype: 'bf16', optimizer_dtype: 'bf16' });
    expect(r.notes.join('\n')).toContain("axolotl's FSDP2 does not upcast");
  });
  it('DeepSpeed keeps its own fp32 master weights and states', () => {
    const t = training(ok(`${BASE}bf16: true\ndeepspeed: deepspeed_configs/zero2.json\n`, 8));
    expect(t.master_weights).toBeUndefined();
    expect(t.grad_dtype).toBeUndefined();
    expect(t.optimizer_dtype).toBeUndefined();
  });
  it('LoRA: PEFT upcasts the adapters to fp32, so nothing changes; peft_autocast_adapter_dtype false keeps them bf16', () => {
    const lora = `${BASE}bf16: true\nadapter: lora\nlora_r: 16\nlora_target_linear: true\n`;
    const t = training(ok(lora));
    expect(t.master_weights).toBeUndefined();
    expect(t.grad_dtype).toBeUndefined();
    expect(t.optimizer_dtype).toBeUndefined();
    expect((t.finetune as Record<string, unknown>).adapter_dtype).toBeUndefined();
    const kept = ok(`${lora}peft_autocast_adapter_dtype: false\n`);
    expect(training(kept)).toMatchObject({ master_weights: false, finetune: { adapter_dtype: 'bf16' } });
    expect(kept.unsupported.join('\n')).not.toContain('peft_autocast_adapter_dtype');
  });
  it('malformed precision values name the key and the allowed values', () => {
    const r = importConfig('axolotl', `${BASE}bf16: maybe\n`);
    if (!('error' in r)) throw new Error('expected an error');
    expect(r.error.path).toBe('bf16');
    expect(r.error.message).toContain('true, false, "auto" or "full"');
    const f = importConfig('axolotl', `${BASE}fp16: sometimes\n`);
    expect('error' in f && f.error.path).toBe('fp16');
  });
});

describe('axolotl reward models', () => {
  it('examples/qwen2/reward-model.yaml: a score head (counted as none), chosen + rejected in one batch', () => {
    const r = ok(real('qwen2-reward-model.yaml'));
    expect(r.config).toMatchObject({ model: { head: 'none' }, training: { micro_batch: 4 } });
    expect(r.notes.join('\n')).toContain('a hidden x num_labels score head (not counted)');
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('2 x micro_batch_size 2');
    const withHead = peak(r.config as Config, single);
    const lmHead = peak(r.config as Config, (c) => {
      single(c);
      const m = (c as { model: Record<string, unknown> }).model;
      delete m.head;
    });
    expect(withHead).toBeLessThan(lmHead);
  });
  it('token classification and process reward models are reported, not applied', () => {
    const prm = ok(`${BASE}model_type: AutoModelForTokenClassification\nprocess_reward_model: true\nnum_labels: 2\n`);
    expect(prm.unsupported.some((l) => l.startsWith('model_type'))).toBe(true);
    expect(prm.unsupported.some((l) => l.startsWith('process_reward_model'))).toBe(true);
    expect((prm.config as { model: Record<string, unknown> }).model.head).toBeUndefined();
    // a causal LM keeps its LM head; num_labels is read by a classification head only
    const causal = ok(`${BASE}model_type: AutoModelForCausalLM\nnum_labels: 3\n`);
    expect((causal.config as { model: Record<string, unknown> }).model).toEqual({ preset: 'llama-3.1-8b' });
    expect(causal.unsupported).toEqual([]);
  });
});
