// LitGPT finetune / pretrain YAML (config_hub/finetune/<model>/{lora,qlora,full}.yaml, config_hub/pretrain/*.yaml)
// into config v1: the script told from the keys, Fabric's precisions, bitsandbytes quantization, the batch
// arithmetic of TrainArgs.gradient_accumulation_iters, the FSDP strategies, detection, refusals.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { detectKind, importConfig, type Imported } from '../../frontend/config/importers/index.js';

const real = (file: string) => readFileSync(join(repoRoot(), 'tests/fixtures/real/litgpt', file), 'utf8');
const ok = (text: string, worldSize?: number): Imported => {
  const r = importConfig('litgpt', text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return r;
};
const err = (text: string, worldSize?: number) => {
  const r = importConfig('litgpt', text, { worldSize });
  if (!('error' in r)) throw new Error('imported without an error');
  return r.error;
};

const LORA = `checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf
precision: bf16-true
devices: 1
lora_r: 16
lora_alpha: 32
lora_dropout: 0.1
lora_query: true
lora_key: true
lora_value: true
lora_projection: true
lora_mlp: false
train:
  global_batch_size: 64
  micro_batch_size: 4
  max_seq_length: 1024
`;

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const estimates = (r: Imported) => {
  const resolved = resolveConfig(r.config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
};

describe('LitGPT importer', () => {
  it('LoRA: rank, dropout, targets, bf16-true dtypes, one device, chunked loss; the litgpt profile', () => {
    const r = ok(LORA);
    const c = r.config as Record<string, Record<string, unknown>>;
    expect(c.runtime).toEqual({ framework: 'litgpt' });
    expect(c.model).toEqual({ preset: 'llama-2-7b' });
    expect(c.training).toMatchObject({
      dtype: 'bf16',
      master_weights: false,
      grad_dtype: 'bf16',
      optimizer_dtype: 'bf16',
      micro_batch: 4,
      grad_accum: 16,
      seq_len: 1024,
      loss: 'chunked',
      loss_chunks: 8,
      optimizer: 'adamw',
      finetune: {
        method: 'lora',
        lora_rank: 16,
        lora_dropout: 0.1,
        lora_targets: ['q', 'k', 'v', 'o'],
        adapter_dtype: 'bf16',
      },
    });
    expect(c.parallel).toEqual({ gpus: 1, engine: 'single' });
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('lora_alpha');
    estimates(r);
  });

  it('QLoRA bnb.nf4-dq: qlora nf4 with double quantization and PagedAdamW', () => {
    const r = ok(`${LORA}quantize: bnb.nf4-dq\n`);
    const t = (r.config as { training: Record<string, unknown> }).training;
    expect(t.finetune).toMatchObject({ method: 'qlora', quant: 'nf4', double_quant: true });
    expect(t.paged_optimizer).toBe(true);
    expect(r.notes.join('\n')).toContain('quant_from_fp16');
    estimates(r);
  });

  it('quantize modes: nf4 no double quant, fp4-dq, int8-training', () => {
    const q = (m: string) =>
      (ok(`${LORA}quantize: ${m}\n`).config as { training: { finetune: unknown } }).training.finetune;
    expect(q('bnb.nf4')).toMatchObject({ quant: 'nf4', double_quant: false });
    expect(q('bnb.fp4-dq')).toMatchObject({ quant: 'fp4', double_quant: true });
    expect(q('bnb.int8-training')).toMatchObject({ quant: 'int8', double_quant: false });
    expect(err(`${LORA}quantize: bnb.int8\n`).path).toBe('quantize');
  });

  it('quantize with mixed precision or several devices is refused, as LitGPT does', () => {
    expect(err(`${LORA.replace('bf16-true', 'bf16-mixed')}quantize: bnb.nf4\n`).path).toBe('precision');
    expect(err(`${LORA.replace('devices: 1', 'devices: 2')}quantize: bnb.nf4\n`).path).toBe('quantize');
  });

  it('full fine-tuning on several devices: FSDP1 full shard with every Block checkpointed', () => {
    const r = ok(real('llama-2-7b-full.yaml'));
    const c = r.config as Record<string, Record<string, unknown>>;
    expect(c.parallel).toEqual({ gpus: 4, engine: 'fsdp1', fsdp_strategy: 'full_shard' });
    expect(c.training).toMatchObject({
      recompute: 'full',
      micro_batch: 4,
      grad_accum: 4,
      finetune: { method: 'full' },
    });
    expect(r.notes.join('\n')).toContain('full.py');
    estimates(r);
  });

  it('LoRA on several devices: FSDP2 (ModelParallelStrategy) with checkpointing; devices x num_nodes', () => {
    const r = ok(`${LORA.replace('devices: 1', 'devices: 4')}num_nodes: 2\n`);
    const c = r.config as Record<string, Record<string, unknown>>;
    expect(c.parallel).toMatchObject({ gpus: 8, engine: 'fsdp2', fsdp_strategy: 'full_shard' });
    expect(c.training).toMatchObject({ recompute: 'full', grad_accum: 2 }); // 64 // 8 // 4
  });

  it('precision variants as Fabric sets them', () => {
    const t = (p: string) =>
      (ok(LORA.replace('bf16-true', p)).config as { training: Record<string, unknown> }).training;
    expect(t('bf16-mixed')).toMatchObject({
      dtype: 'bf16',
      master_weights: true,
      grad_dtype: 'fp32',
      optimizer_dtype: 'fp32',
      finetune: { adapter_dtype: 'fp32', base_dtype: 'fp32' },
    });
    expect(t('16-true')).toMatchObject({ dtype: 'fp16', master_weights: false, grad_dtype: 'fp16' });
    expect(t('32-true')).toMatchObject({ dtype: 'fp32', master_weights: false, optimizer_dtype: 'fp32' });
    expect(t('transformer-engine')).toMatchObject({ dtype: 'bf16', fp8_linear: true, master_weights: false });
    expect(t('"bf16"')).toMatchObject({ master_weights: true }); // Fabric alias of bf16-mixed
    const none = ok(LORA.replace('precision: bf16-true', 'precision:'));
    expect((none.config as { training: Record<string, unknown> }).training.master_weights).toBe(true);
    expect(none.notes.join('\n')).toContain('bf16-mixed');
    expect(err(LORA.replace('bf16-true', '64-true')).path).toBe('precision');
  });

  it('grad_accum = global_batch_size // (devices x num_nodes) // micro_batch_size, with integer division', () => {
    const accum = (text: string, ws?: number) =>
      (ok(text, ws).config as { training: { grad_accum: number } }).training.grad_accum;
    expect(accum(LORA)).toBe(16);
    expect(accum(LORA.replace('global_batch_size: 64', 'global_batch_size: 70'))).toBe(17);
    expect(accum(LORA.replace('devices: 1', 'devices: 2'))).toBe(8);
    expect(accum(LORA.replace('devices: 1', 'devices: [0, 1, 2, 3]'))).toBe(4);
    expect(accum(LORA.replace('devices: 1', 'devices: auto'), 2)).toBe(8);
    expect(err(LORA.replace('global_batch_size: 64', 'global_batch_size: 2')).path).toBe('train.micro_batch_size');
  });

  it('the world size stands in for devices "auto"; a conflict with the file is an error', () => {
    const auto = ok(LORA.replace('devices: 1', 'devices: auto'));
    expect((auto.config as { parallel?: { gpus?: number } }).parallel?.gpus).toBeUndefined();
    expect(auto.unsupported.join('\n')).toContain('train.global_batch_size');
    expect((ok(LORA, 1).config as { parallel: { gpus: number } }).parallel.gpus).toBe(1);
    expect(err(LORA, 8).path).toBe('devices');
  });

  it('the script from the keys: no lora_* key -> full fine-tuning, stated in a note', () => {
    const r = ok('checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf\nprecision: bf16-true\n');
    expect((r.config as { training: { finetune: unknown } }).training.finetune).toEqual({ method: 'full' });
    expect(r.notes.join('\n')).toMatch(/no lora_\* key: read as litgpt finetune full/);
    // lora.py setup() defaults: r 8, dropout 0.05, query and value
    const q = ok('checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf\nprecision: bf16-true\nquantize: bnb.nf4\n');
    expect((q.config as { training: { finetune: unknown } }).training.finetune).toMatchObject({
      method: 'qlora',
      lora_rank: 8,
      lora_dropout: 0.05,
      lora_targets: ['q', 'v'],
    });
  });

  it('lora_mlp: gate, up, down; lora_head is reported as not applied', () => {
    const r = ok(`${LORA.replace('lora_mlp: false', 'lora_mlp: true')}lora_head: true\n`);
    expect((r.config as { training: { finetune: { lora_targets: string[] } } }).training.finetune.lora_targets).toEqual(
      ['q', 'k', 'v', 'o', 'gate', 'up', 'down'],
    );
    expect(r.unsupported.some((l) => l.startsWith('lora_head:'))).toBe(true);
  });

  it('an unknown checkpoint is an error naming checkpoint_dir', () => {
    const e = err(LORA.replace('meta-llama/Llama-2-7b-hf', 'acme/NoSuchModel-3b'));
    expect(e.path).toBe('checkpoint_dir');
    expect(e.message).toContain('acme/NoSuchModel-3b');
    expect(err('precision: bf16-true\ntrain:\n  micro_batch_size: 1\n').path).toBe('checkpoint_dir');
  });

  it('pretrain: model_name, HYBRID_SHARD within a node, torch.compile, fused AdamW, block-size sequence', () => {
    const r = ok(real('pretrain-tinyllama.yaml'), 16);
    const c = r.config as Record<string, Record<string, unknown>>;
    expect(c.model).toEqual({ preset: 'tinyllama-1.1b', tied_embeddings: false });
    expect(c.parallel).toEqual({ gpus: 16, engine: 'fsdp1', fsdp_strategy: 'hybrid_shard', fsdp_shard_size: 16 });
    expect(c.training).toMatchObject({ grad_accum: 8, seq_len: 2048, optimizer_impl: 'fused', master_weights: true });
    expect(c.runtime).toMatchObject({ torch_compile: true });
    estimates(r);
  });

  it('unknown keys are listed as not applied; no-effect keys are read', () => {
    const r = ok(`${LORA}out_dir: out/x\nseed: 1\nlogger_name: wandb\nfrobnicate: 3\neval:\n  interval: 5\n`);
    expect(r.unsupported).toEqual(['frobnicate: not a LitGPT setup() argument; not applied']);
    expect(r.notes.join('\n')).toMatch(/no effect on per-GPU memory: .*out_dir/);
  });

  it('detection: a LitGPT YAML is litgpt; axolotl, LLaMA-Factory and TRL YAMLs are not', () => {
    expect(detectKind('lora.yaml', real('llama-2-7b-lora.yaml'))).toBe('litgpt');
    expect(detectKind('full.yaml', real('llama-2-7b-full.yaml'))).toBe('litgpt');
    expect(detectKind('tinyllama.yaml', real('pretrain-tinyllama.yaml'))).toBe('litgpt');
    expect(detectKind('x.yaml', 'base_model: meta-llama/Llama-2-7b-hf\nlora_r: 8\nmicro_batch_size: 2\n')).toBe(
      'axolotl',
    );
    expect(detectKind('x.yaml', 'model_name_or_path: a/b\nstage: sft\nfinetuning_type: lora\n')).toBe('llamafactory');
    expect(detectKind('x.yaml', 'model_name_or_path: a/b\nmax_length: 512\npacking: true\n')).toBe('trl');
  });
});
