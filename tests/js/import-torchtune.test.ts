// torchtune recipe configs (recipes/configs/**/*.yaml) into config v1: the model builder, LoRA / QLoRA,
// precision, optimizers, optimizer in backward, activation checkpointing and offloading, the losses,
// the FSDP2 options of the distributed recipes, detection, and the errors.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { detectKind, importConfig, type Imported } from '../../frontend/config/importers/index.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
/** The value at a dotted path of an imported config. */
const at = (c: Config, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>((n, k) => (n && typeof n === 'object' ? (n as Record<string, unknown>)[k] : undefined), c);
const ok = (text: string, worldSize?: number): Imported => {
  const r = importConfig('torchtune', text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  const resolved = resolveConfig(r.config as Config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
  return r;
};

const LORA = `
output_dir: /tmp/out
model:
  _component_: torchtune.models.llama3_1.lora_llama3_1_8b
  lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']
  apply_lora_to_mlp: True
  apply_lora_to_output: False
  lora_rank: 16
  lora_alpha: 32
  lora_dropout: 0.05
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/tokenizer.model
  max_seq_len: 2048
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True
seed: null
shuffle: True
batch_size: 2
optimizer:
  _component_: torch.optim.AdamW
  fused: True
  lr: 3e-4
lr_scheduler:
  _component_: torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup
  num_warmup_steps: 100
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
epochs: 1
max_steps_per_epoch: null
gradient_accumulation_steps: 8
clip_grad_norm: null
compile: True
device: cuda
dtype: bf16
enable_activation_checkpointing: True
enable_activation_offloading: False
log_every_n_steps: 1
`;

describe('torchtune recipe config', () => {
  it('LoRA, single device: builder -> preset, targets, rank, dropout, packed length, pure bf16, fused AdamW, chunked loss', () => {
    const r = ok(LORA);
    expect(r.config).toEqual({
      runtime: { framework: 'torchtune', torch_compile: true },
      parallel: { gpus: 1, engine: 'single' },
      model: { preset: 'llama-3.1-8b' },
      training: {
        dtype: 'bf16',
        master_weights: false,
        grad_dtype: 'bf16',
        seq_len: 2048,
        micro_batch: 2,
        grad_accum: 8,
        optimizer: 'adamw',
        optimizer_dtype: 'bf16',
        optimizer_impl: 'fused',
        loss: 'chunked',
        recompute: 'full',
        finetune: {
          method: 'lora',
          lora_rank: 16,
          lora_dropout: 0.05,
          lora_targets: ['q', 'v', 'o', 'gate', 'up', 'down'],
          adapter_dtype: 'bf16',
        },
      },
    });
    expect(r.unsupported).toEqual([]);
    const notes = r.notes.join('\n');
    expect(notes).toContain('dataset.packed: every sample is tokenizer.max_seq_len 2048 tokens');
    expect(notes).toContain('no world size given');
    expect(notes).toMatch(/read, no effect on per-GPU memory: .*output_dir.*lr_scheduler/);
  });

  it('QLoRA: qlora_ builder -> NF4 base with quantized scalers; rank default 8; output adapter and DoRA listed', () => {
    const text = LORA.replace('lora_llama3_1_8b', 'qlora_llama3_1_8b')
      .replace('  lora_rank: 16\n', '')
      .replace('apply_lora_to_output: False', 'apply_lora_to_output: True\n  use_dora: True');
    const r = ok(text);
    expect(at(r.config, 'training.finetune')).toEqual({
      method: 'qlora',
      lora_rank: 8,
      lora_dropout: 0.05,
      lora_targets: ['q', 'v', 'o', 'gate', 'up', 'down'],
      adapter_dtype: 'bf16',
      quant: 'nf4',
      double_quant: true,
    });
    expect(r.unsupported.join('\n')).toContain('model.apply_lora_to_output');
    expect(r.unsupported.join('\n')).toContain('model.use_dora');
    // quantize_base on a lora_ builder is the same
    const q = ok(LORA.replace('lora_dropout: 0.05', 'lora_dropout: 0.0\n  quantize_base: True'));
    expect(at(q.config, 'training.finetune.method')).toBe('qlora');
  });

  it('full fine-tuning, distributed: world size > 1 -> FSDP2; CPU offload, reshard, custom_sharded_layers, TP and replicate dims', () => {
    const full = `
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  max_seq_len: 4096
dataset:
  _component_: torchtune.datasets.alpaca_dataset
batch_size: 1
optimizer:
  _component_: torch.optim.AdamW
  fused: False
  foreach: False
loss:
  _component_: torchtune.modules.loss.LinearCrossEntropyLoss
  num_output_chunks: 16
gradient_accumulation_steps: 1
enable_activation_checkpointing: True
custom_sharded_layers: ['tok_embeddings', 'output']
fsdp_cpu_offload: True
fsdp_reshard_after_forward: False
tensor_parallel_dim: 2
data_parallel_replicate_dim: 2
data_parallel_shard_dim: -1
dtype: bf16
`;
    const r = ok(full, 16);
    expect(r.config.parallel).toEqual({
      gpus: 16,
      engine: 'fsdp2',
      offload_params: 'cpu',
      offload_optimizer: 'cpu',
      reshard_after_forward: false,
      shard_root_modules: true,
      tp: 2,
      fsdp_strategy: 'hybrid_shard',
      fsdp_shard_size: 4,
    });
    expect(r.config.training).toMatchObject({
      seq_len: 4096,
      optimizer_impl: 'for_loop',
      loss: 'chunked',
      loss_chunks: 16,
      finetune: { method: 'full' },
    });
    expect(r.notes.join('\n')).toContain('an upper bound');
    expect(r.notes.join('\n')).toContain('LinearCrossEntropyLoss');
    // without custom_sharded_layers the embedding and output go with the root module
    const root = ok(full.replace("custom_sharded_layers: ['tok_embeddings', 'output']\n", ''), 16);
    expect(at(root.config, 'parallel.shard_root_modules')).toBe(false);
    // the same file on one GPU: the single-device recipe, the distributed keys not applied
    const one = ok(full, 1);
    expect(one.config.parallel).toEqual({ gpus: 1, engine: 'single' });
    expect(one.unsupported.join('\n')).toContain('fsdp_cpu_offload');
    expect(one.unsupported.join('\n')).toContain('tensor_parallel_dim');
    // dims that do not make the world size are an error
    const bad = importConfig('torchtune', full.replace('data_parallel_shard_dim: -1', 'data_parallel_shard_dim: 3'), {
      worldSize: 16,
    });
    expect('error' in bad && bad.error.path).toBe('data_parallel_shard_dim');
  });

  it('optimizer in backward: full recipes apply it (with bitsandbytes PagedAdamW8bit); LoRA recipes do not read it', () => {
    const full = `
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
tokenizer:
  max_seq_len: 2048
batch_size: 2
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
optimizer_in_bwd: True
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
gradient_accumulation_steps: 1
dtype: bf16
`;
    const r = ok(full);
    expect(r.config.training).toMatchObject({
      optimizer: 'adamw_8bit',
      paged_optimizer: true,
      optimizer_in_backward: true,
    });
    const paged32 = ok(full.replace('PagedAdamW8bit', 'PagedAdamW'));
    expect(paged32.config.training).toMatchObject({
      optimizer: 'adamw',
      optimizer_dtype: 'fp32',
      paged_optimizer: true,
    });
    const lora = ok(
      full.replace('llama3_1_8b', "lora_llama3_1_8b\n  lora_attn_modules: ['q_proj', 'k_proj', 'v_proj']"),
    );
    expect(at(lora.config, 'training.optimizer_in_backward')).toBeUndefined();
    expect(at(lora.config, 'training.finetune.lora_targets')).toEqual(['q', 'k', 'v']);
    expect(lora.notes.join('\n')).toContain('optimizer_in_bwd: the LoRA recipes do not read it');
  });

  it('activation offloading: applied with checkpointing, reported without it', () => {
    const base = `
model:
  _component_: torchtune.models.qwen2_5.qwen2_5_3b
tokenizer:
  max_seq_len: 1024
batch_size: 4
enable_activation_offloading: True
dtype: fp32
`;
    const on = ok(`${base}enable_activation_checkpointing: True\n`);
    expect(on.config.training).toMatchObject({
      dtype: 'fp32',
      master_weights: false,
      grad_dtype: 'fp32',
      recompute: 'full',
      activation_offload: true,
    });
    const off = ok(`${base}enable_activation_checkpointing: False\n`);
    expect(at(off.config, 'training.activation_offload')).toBeUndefined();
    expect(off.unsupported.join('\n')).toContain('enable_activation_offloading: needs enable_activation_checkpointing');
  });

  it('losses: CEWithChunkedOutputLoss -> chunked, torch CrossEntropyLoss -> standard, preference losses listed', () => {
    const text = (loss: string) => `
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
tokenizer:
  max_seq_len: 512
loss:
  _component_: ${loss}
  num_output_chunks: 4
dtype: bf16
`;
    expect(ok(text('torchtune.modules.loss.CEWithChunkedOutputLoss')).config.training).toMatchObject({
      loss: 'chunked',
      loss_chunks: 4,
    });
    expect(at(ok(text('torch.nn.CrossEntropyLoss')).config, 'training.loss')).toBe('standard');
    expect(ok(text('torchtune.rlhf.loss.DPOLoss')).unsupported.join('\n')).toContain('loss._component_');
  });

  it('tokenizer.max_seq_len null: the length is reported as not given', () => {
    const r = ok(
      'model:\n  _component_: torchtune.models.qwen3.qwen3_8b_instruct\ntokenizer:\n  max_seq_len: null\ndtype: bf16\n',
    );
    expect(r.config.model).toEqual({ preset: 'qwen3-8b' });
    expect(at(r.config, 'training.seq_len')).toBeUndefined();
    expect(r.unsupported.join('\n')).toContain('tokenizer.max_seq_len');
  });

  it('auto detection: a YAML whose model _component_ is torchtune.*', () => {
    expect(detectKind('8B_lora_single_device.yaml', LORA)).toBe('torchtune');
    expect(detectKind('config.yaml', "model:\n  _component_: 'torchtune.models.llama2.llama2_7b'\n")).toBe('torchtune');
    expect(detectKind('other.yaml', 'model:\n  _component_: mylib.models.x\nbatch_size: 2\n')).not.toBe('torchtune');
  });

  it('errors: an unknown model builder names model._component_ and lists the known ones; fp16 is refused', () => {
    const r = importConfig('torchtune', LORA.replace('lora_llama3_1_8b', 'lora_llama3_2_vision_11b'));
    if (!('error' in r)) throw new Error('expected an error');
    expect(r.error.path).toBe('model._component_');
    expect(r.error.message).toContain('llama3_2_vision_11b');
    expect(r.error.message).toContain('llama3_1_8b');
    const fp16 = importConfig('torchtune', LORA.replace('dtype: bf16', 'dtype: fp16'));
    expect('error' in fp16 && fp16.error.path).toBe('dtype');
    const noModel = importConfig('torchtune', 'batch_size: 2\n');
    expect('error' in noModel && noModel.error.path).toBe('model');
  });
});
