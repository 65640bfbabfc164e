// torchtune's RL recipes (DPO, GRPO, PPO) into config v1's rl section, and the model from --hf for the
// torchtune, torchtitan and LitGPT importers. The YAML / TOML below are shaped like the official files (each
// test names its repository, path and commit); the verbatim files are in tests/fixtures/real/torchtune.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Config, Core, Json } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { detectKind, type ImportKind, type ImportOptions } from '../../frontend/config/importers/index.js';
import { hfOption, importCommand, mergeHfConfig } from '../../bin/import-commands.js';
import { importError, imported } from './import-helpers.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
afterEach(() => vi.restoreAllMocks());

/** The import, which must succeed and be estimated by the core. */
function ok(kind: ImportKind, text: string, options: ImportOptions = {}) {
  const r = imported(kind, text, options);
  estimates(r.config as Config);
  return r;
}
function estimates(config: Config): void {
  const resolved = resolveConfig(config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
}
const TT = '(pytorch/torchtune @ bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1)';

// pytorch/torchtune recipes/configs/llama3_1/8B_full_dpo.yaml @bd2a0fc7 (paths, logging trimmed)
const FULL_DPO = `output_dir: /tmp/torchtune/llama3_1_8B/full_dpo
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: 1024 # higher increases memory
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Meta-Llama-3.1-8B-Instruct/
  checkpoint_files: [model-00001-of-00004.safetensors]
  model_type: LLAMA3
resume_from_checkpoint: False
ref_checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Meta-Llama-3.1-8B-Instruct/
  checkpoint_files: [model-00001-of-00004.safetensors]
  model_type: LLAMA3
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
seed: null
shuffle: True
batch_size: 4
optimizer:
  _component_: torch.optim.AdamW
  fused: True
  weight_decay: 0.05
  lr: 2e-5
loss:
  _component_: torchtune.rlhf.loss.DPOLoss
  beta: 0.05
  label_smoothing: 0
epochs: 1
max_steps_per_epoch: 1000
gradient_accumulation_steps: 8  # Use to increase effective batch size
compile: False
device: cuda
dtype: bf16
enable_activation_checkpointing: True  # True reduces memory
enable_activation_offloading: False  # True reduces memory
`;

// pytorch/torchtune recipes/configs/llama2/7B_lora_dpo.yaml @bd2a0fc7 (trimmed)
const LORA_DPO = `model:
  _component_: torchtune.models.llama2.lora_llama2_7b
  lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']
  apply_lora_to_mlp: True
  apply_lora_to_output: False
  lora_rank: 8  # higher increases accuracy and memory
  lora_alpha: 16  # usually alpha=2*rank
  lora_dropout: 0.0
tokenizer:
  _component_: torchtune.models.llama2.llama2_tokenizer
  path: /tmp/Llama-2-7b-hf/tokenizer.model
  max_seq_len: 1024 # higher increases memory
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
batch_size: 4
optimizer:
  _component_: torch.optim.AdamW
  fused: True
  weight_decay: 0.05
  lr: 5e-4
loss:
  _component_: torchtune.rlhf.loss.DPOLoss
  beta: 0.1
  label_smoothing: 0
gradient_accumulation_steps: 8  # Use to increase effective batch size
compile: False
dtype: bf16
enable_activation_checkpointing: True  # True reduces memory
enable_activation_offloading: False  # True reduces memory
`;

// pytorch/torchtune recipes/configs/dev/qwen3B_sync_grpo.yaml @bd2a0fc7 (profiler, logging trimmed)
const GRPO = `name: grpo_sync_qwen3b
output_dir: /tmp/checkpoints/\${name}
base_model_path: /tmp/Qwen2.5-3B
tokenizer:
  _component_: torchtune.models.qwen2_5.qwen2_5_tokenizer
  path: /tmp/Qwen2.5-3B/vocab.json
  merges_file: /tmp/Qwen2.5-3B/merges.txt
  max_seq_len: 1024
dataset:
  _component_: torchtune.dev.grpo.gsm8k.gsm8k_dataset
  partition: 1-9/10
seed: null
shuffle: False
model:
  _component_: torchtune.models.qwen2_5.qwen2_5_3b
ref_checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: \${base_model_path}
  checkpoint_files: [model-00001-of-00002.safetensors, model-00002-of-00002.safetensors]
  model_type: QWEN2
resume_from_checkpoint: False
save_every_n_epochs: 1
batch_size: 1
grpo_samples: 16
forward_batch_size: 1
max_generated_tokens: 512
top_k: null
temperature: 1.0
ppo_epochs: 1
num_steps: 200
clip_grad_norm: 1.0
epochs: 10
optimizer:
  _component_: torch.optim.AdamW
  lr: 1e-5
  fused: True
loss:
  _component_: torchtune.dev.grpo.loss.GRPOSimpleLoss
  kl_coeff: 0.01
  epsilon: 0.2
device: cuda
enable_activation_checkpointing: True  # True reduces memory
compile: False  # pytorch compile, set to true for better perf/memory
dtype: bf16
reward_functions:
    - _component_: torchtune.dev.rl.rewards.FormattedMathCorrectnessReward
      answer_tag: answer
`;

// pytorch/torchtune recipes/configs/mistral/7B_full_ppo_low_memory.yaml @bd2a0fc7 (checkpointers, logging trimmed)
const PPO = `output_dir: /tmp/torchtune/mistral_7B/full_ppo_low_memory
tokenizer:
  _component_: torchtune.models.mistral.mistral_tokenizer
  path: /tmp/Mistral-7B-Instruct-v0.2/tokenizer.model
  max_seq_len: 512
dataset:
  _component_: torchtune.datasets.text_completion_dataset
  source: trl-internal-testing/sentiment-trl-style
  split: train
  column: prompt
  add_eos: False
policy_model:
  _component_: torchtune.models.mistral.mistral_7b
reward_and_value_model:
  _component_: torchtune.modules.classifier_model
  base_model_path: torchtune.models.mistral.mistral_7b
  num_classes: 1
  vocab_size: 32001
  num_layers: 32
  num_heads: 32
  num_kv_heads: 8
  attn_dropout: 0.0
  embed_dim: 4096
  intermediate_dim: 14336
  max_seq_len: 32768
  norm_eps: 1.0e-05
ref_policy_checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Mistral-7B-Instruct-v0.2/
  model_type: MISTRAL
seed: null
shuffle: True
device: cuda
batch_size: 128
num_steps: 10000
ppo_epochs: 1
ppo_batch_size: 128
gradient_accumulation_steps: 1  # Use to increase effective batch size
compile: True  # torch.compile the model + loss, True increases speed + decreases memory
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW
  lr: 3e-6
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
enable_activation_checkpointing: True # True reduces memory
enable_kv_cache: True
dtype: bf16
forward_batch_size: 128
max_generated_tokens: 58
temperature: 0.7
top_k: null
min_response_length: 18
penalise_no_eos: True
reward_penalty: -3
stop_token_ids: [
    2, # eos_id
    28723, # mistral "." token
  ]
whiten_rewards: False
gamma: 1
lmbda: 0.95
loss:
  _component_: torchtune.rlhf.loss.PPOLoss
  epsilon: 0.2
  value_coeff: 0.1
  value_clip_range: 0.2
kl_coeff: 0.01
`;

describe(`torchtune DPO ${TT}`, () => {
  it('llama3_1/8B_full_dpo.yaml on 4 GPUs: rl.algorithm dpo, pairs per forward, a second frozen reference', () => {
    const r = ok('torchtune', FULL_DPO, { worldSize: 4 });
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'dpo',
      'model.preset': 'llama-3.1-8b',
      'training.finetune.method': 'full',
      'parallel.engine': 'fsdp2',
      'training.micro_batch': 4, // pairs: padded_collate_dpo makes 8 rows
      'rl.rollout_batch': 128, // 4 x 8 x 4
      'rl.mini_batch': 128,
      'rl.prompt_len': 512,
      'rl.response_len': 512,
      'training.seq_len': 1024,
      'rl.reference.enabled': true,
      'rl.logits_response_only': false,
    });
    expect(r.flat['training.grad_accum']).toBeUndefined(); // the rl keys give the accumulation
    expect(r.notes.join('\n')).toContain('full_dpo_distributed');
    expect(r.notes.join('\n')).toContain('second, frozen copy');
    expect(r.notes.join('\n')).not.toContain('preference');
    expect(r.unsupported).toHaveLength(1);
    expect(r.unsupported[0]).toMatch(/^loss\._component_: DPOLoss: the reference's no-grad forward/);
  });

  it('llama2/7B_lora_dpo.yaml: LoRA, the reference is the policy with adapters off; one GPU without a world size', () => {
    const two = ok('torchtune', LORA_DPO, { worldSize: 2 });
    expect(two.flat).toMatchObject({
      'rl.algorithm': 'dpo',
      'training.finetune.method': 'lora',
      'training.finetune.lora_targets': ['q', 'v', 'o', 'gate', 'up', 'down'],
      'training.micro_batch': 4,
      'rl.mini_batch': 64, // 4 x 8 x 2
      'rl.reference.enabled': true,
    });
    expect(two.notes.join('\n')).toContain('lora_dpo_distributed');
    expect(two.notes.join('\n')).toContain('adapters disabled');
    const one = ok('torchtune', LORA_DPO);
    expect(one.flat).toMatchObject({ 'parallel.gpus': 1, 'parallel.engine': 'single', 'rl.mini_batch': 32 });
    expect(one.notes.join('\n')).toContain('lora_dpo_single_device');
  });

  it('RSOLoss is DPO too; max_seq_len null leaves the lengths and says so', () => {
    const rso = FULL_DPO.replace('torchtune.rlhf.loss.DPOLoss', 'torchtune.rlhf.loss.RSOLoss').replace(
      '  beta: 0.05\n  label_smoothing: 0\n',
      '  gamma: 0.1\n',
    );
    expect(ok('torchtune', rso, { worldSize: 4 }).flat['rl.algorithm']).toBe('dpo');
    const open = ok('torchtune', FULL_DPO.replace('max_seq_len: 1024', 'max_seq_len: null'), { worldSize: 4 });
    expect(open.flat['rl.prompt_len']).toBeUndefined();
    expect(open.unsupported.join('\n')).toContain('tokenizer.max_seq_len: null: chosen and rejected are not truncated');
  });

  it('keys the DPO recipes do not read are reported (tensor_parallel_dim, ac_mode; compile for lora_dpo_distributed)', () => {
    const r = ok('torchtune', `${FULL_DPO}tensor_parallel_dim: 2\nac_mode: selective\n`, { worldSize: 4 });
    expect(r.flat['parallel.tp']).toBeUndefined();
    const u = r.unsupported.join('\n');
    expect(u).toContain('tensor_parallel_dim: 2: full_dpo_distributed does not read it');
    expect(u).toContain('ac_mode: selective: full_dpo_distributed does not read it');
    const lora = ok('torchtune', LORA_DPO.replace('compile: False', 'compile: True'), { worldSize: 2 });
    expect(lora.flat['runtime.torch_compile']).toBeUndefined();
    expect(lora.unsupported.join('\n')).toContain('compile: true: lora_dpo_distributed does not read it');
  });
});

describe(`torchtune GRPO ${TT}`, () => {
  it('dev/qwen3B_sync_grpo.yaml on 4 GPUs: group, one backward over the trajectory, generation by the policy', () => {
    const r = ok('torchtune', GRPO, { worldSize: 4 });
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'grpo',
      'model.preset': 'qwen2.5-3b',
      'rl.group_size': 16,
      'rl.response_len': 512, // max_generated_tokens
      'training.micro_batch': 16, // batch_size 1 x grpo_samples 16 in grpo_step
      'rl.rollout_batch': 4, // batch_size x 4 GPUs
      'rl.mini_batch': 4,
      'rl.logprob_micro_batch': 16, // forward_batch_size 1 x 16
      'rl.reference.enabled': true,
      'rl.rollout.placement': 'separate',
      'rl.weight_sync': 'full',
      'parallel.reshard_after_forward': false,
      'training.seq_len': 1024, // the default prompt 512 + 512
    });
    expect(r.flat['rl.prompt_len']).toBeUndefined();
    const u = r.unsupported.join('\n');
    // the old import reported max_generated_tokens and grpo_samples as not applied
    expect(u).not.toMatch(/^(max_generated_tokens|grpo_samples|forward_batch_size)/m);
    expect(u).toContain('tokenizer.max_seq_len: 1024: the GRPO data encodes prompts with tokenizer.encode');
    // Qwen2.5-3B: 36 layers x 2 KV heads x 128 x 2 bytes x 2 (k, v) x 16 sequences x 1024 tokens
    expect(u).toContain('its KV cache, 16 sequences x 1024 tokens in bf16 = 0.56 GiB');
  });

  it('dev/3B_full_grpo.yaml on one GPU: FSDP2 over one process, no weight sync; keys the recipe does not read', () => {
    const text = GRPO.replace('torchtune.models.qwen2_5.qwen2_5_3b', 'torchtune.models.llama3_2.llama3_2_3b')
      .replace('max_seq_len: 1024', 'max_seq_len: null')
      .replace('batch_size: 1\n', 'batch_size: 2\ngradient_accumulation_steps: 4\noptimizer_in_bwd: True\n');
    const r = ok('torchtune', text);
    expect(r.flat).toMatchObject({
      'model.preset': 'llama-3.2-3b',
      'parallel.engine': 'single',
      'training.micro_batch': 32,
      'rl.rollout_batch': 2,
      'rl.logprob_micro_batch': 16,
      'rl.weight_sync_bucket_mib': 1,
    });
    expect(r.flat['training.optimizer_in_backward']).toBeUndefined();
    expect(r.flat['training.grad_accum']).toBeUndefined();
    const u = r.unsupported.join('\n');
    expect(u).toContain('gradient_accumulation_steps: 4: dev/grpo_full_finetune_distributed does not read it');
    expect(u).toContain('optimizer_in_bwd: true: dev/grpo_full_finetune_distributed does not read it');
    expect(r.notes.join('\n')).toContain('dev/grpo_full_finetune_distributed on one process');
  });

  it('a LoRA builder, a missing grpo_samples and the async recipe are refused with the reason', () => {
    const lora = importError(
      'torchtune',
      GRPO.replace(
        '_component_: torchtune.models.qwen2_5.qwen2_5_3b',
        "_component_: torchtune.models.qwen2_5.lora_qwen2_5_3b\n  lora_attn_modules: ['q_proj']",
      ),
      { worldSize: 4 },
    );
    expect(lora.path).toBe('model._component_');
    expect(lora.message).toContain('full fine-tuning recipe');
    const g = importError('torchtune', GRPO.replace('grpo_samples: 16\n', ''), { worldSize: 4 });
    expect(g.path).toBe('grpo_samples');
    // recipes/configs/dev/qwen3B_async_grpo.yaml @bd2a0fc7: orchestration / inference / training sections
    const asyncGrpo = importError(
      'torchtune',
      'model:\n  _component_: torchtune.models.qwen2_5.qwen2_5_3b\norchestration:\n  num_inference_workers: 4\ninference:\n  engine: vllm\n',
    );
    expect(asyncGrpo.message).toContain('async GRPO');
  });
});

describe(`torchtune PPO ${TT}`, () => {
  it('mistral/7B_full_ppo_low_memory.yaml: detected as torchtune, rl.algorithm ppo with the reward and value models', () => {
    expect(detectKind('7B_full_ppo_low_memory.yaml', PPO)).toBe('torchtune');
    const r = ok('torchtune', PPO);
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'ppo',
      'model.preset': expect.stringMatching(/^mistral-7b-v0\.1/),
      'parallel.engine': 'single',
      'rl.group_size': 1,
      'training.micro_batch': 128, // ppo_batch_size / gradient_accumulation_steps
      'rl.rollout_batch': 128,
      'rl.mini_batch': 128,
      'rl.logprob_micro_batch': 128,
      'rl.prompt_len': 512,
      'rl.response_len': 58,
      'rl.reference.enabled': true,
      'rl.reward.enabled': true,
      'rl.critic.layers': 32,
      'rl.critic.kv_heads': 8,
      'rl.critic.ffn_hidden': 14336,
      'rl.reward.hidden': 4096,
      'training.optimizer_in_backward': true,
      'training.paged_optimizer': true,
      'rl.rollout.placement': 'separate',
    });
    const u = r.unsupported.join('\n');
    expect(u).toContain('PPOLoss: the policy and the value model run forward together');
    expect(u).toContain('its KV cache, 128 sequences x 570 tokens in bf16 = 8.91 GiB');
  });

  it('PPO with a world size > 1 names PPO; the generic llama2 builder asks for --hf and imports with it', () => {
    const e = importError('torchtune', PPO, { worldSize: 4 });
    expect(e.message).toMatch(/PPO.*ppo_full_finetune_single_device/);
    // recipes/configs/llama2/1B_full_ppo_low_memory_single_device.yaml @bd2a0fc7: torchtune.models.llama2.llama2(...)
    const generic = PPO.replace(
      '_component_: torchtune.models.mistral.mistral_7b\nreward',
      '_component_: torchtune.models.llama2.llama2\n  num_layers: 22\n  embed_dim: 2048\nreward',
    );
    const refused = importError('torchtune', generic);
    expect(refused.path).toBe('policy_model._component_');
    expect(refused.message).toContain('--hf config.json');
    const r = imported('torchtune', generic, { modelFromHf: true });
    expect(r.flat['rl.algorithm']).toBe('ppo');
    expect(r.flat['model.preset']).toBeUndefined();
    expect(r.unsupported.join('\n')).toContain('(2 x layers x kv heads x head_dim bytes per token)');
  });
});

describe('the model from --hf (llmem import ... --hf config.json)', () => {
  // google/gemma-2b config.json (Gemma 1 2B), as the Hub serves it
  const gemma2b = {
    architectures: ['GemmaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    head_dim: 256,
    hidden_act: 'gelu',
    hidden_size: 2048,
    intermediate_size: 16384,
    max_position_embeddings: 8192,
    model_type: 'gemma',
    num_attention_heads: 8,
    num_hidden_layers: 18,
    num_key_value_heads: 1,
    rms_norm_eps: 1e-6,
    rope_scaling: null,
    rope_theta: 10000.0,
    torch_dtype: 'bfloat16',
    vocab_size: 256000,
  };
  // microsoft/phi-2 config.json: resid_pdrop 0.1
  const phi2 = {
    architectures: ['PhiForCausalLM'],
    attention_dropout: 0.0,
    embd_pdrop: 0.0,
    hidden_act: 'gelu_new',
    hidden_size: 2560,
    intermediate_size: 10240,
    layer_norm_eps: 1e-5,
    max_position_embeddings: 2048,
    model_type: 'phi',
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 32,
    partial_rotary_factor: 0.4,
    qk_layernorm: false,
    resid_pdrop: 0.1,
    rope_theta: 10000.0,
    tie_word_embeddings: false,
    torch_dtype: 'float16',
    vocab_size: 51200,
  };
  const quiet = () => vi.spyOn(console, 'error').mockImplementation(() => undefined);
  /** import with modelFromHf, then the config.json laid over it as the CLI does (bin/import-commands.ts). */
  function withHf(kind: ImportKind, text: string, json: Json, worldSize?: number) {
    const r = imported(kind, text, { worldSize, modelFromHf: true });
    quiet();
    const config = mergeHfConfig(json, 'config.json', r.config as Config);
    estimates(config);
    return { ...r, config };
  }

  // pytorch/torchtune recipes/configs/gemma/2B_full.yaml @bd2a0fc7 (trimmed)
  const GEMMA = `model:
  _component_: torchtune.models.gemma.gemma_2b
tokenizer:
  _component_: torchtune.models.gemma.gemma_tokenizer
  path: /tmp/gemma-2b/tokenizer.model
  max_seq_len: null
batch_size: 2
optimizer:
  _component_: torch.optim.AdamW
  fused: True
  lr: 2e-5
loss:
  _component_: torchtune.modules.loss.LinearCrossEntropyLoss
gradient_accumulation_steps: 1
enable_activation_checkpointing: True
dtype: bf16
`;

  it('torchtune gemma/2B_full.yaml: Gemma 1 builders are presets (models/gemma/_model_builders.py)', () => {
    expect(imported('torchtune', GEMMA).flat['model.preset']).toMatch(/^gemma-2b/);
  });

  // the same file over a builder llmem lacks (smol's): the model comes from the config.json given apart
  const UNKNOWN = GEMMA.replace('torchtune.models.gemma.gemma_2b', 'torchtune.models.smol.smollm2_135m');
  it('a builder llmem lacks takes the config.json (refused without it)', async () => {
    const alone = importError('torchtune', UNKNOWN);
    expect(alone.path).toBe('model._component_');
    expect(alone.message).toContain('--hf config.json');
    const r = withHf('torchtune', UNKNOWN, gemma2b);
    expect(r.notes.join('\n')).toContain('not a builder llmem knows; the model is the config.json given apart');
    expect(r.config.model).toMatchObject({ layers: 18, hidden: 2048, kv_heads: 1, vocab: 256000 });
    expect(r.config.training).toMatchObject({ micro_batch: 2, dtype: 'bf16', recompute: 'full', loss: 'chunked' });
    // the CLI end to end: exit 0 (it was 1 before)
    const dir = mkdtempSync(join(tmpdir(), 'llmem-tt-hf-'));
    writeFileSync(join(dir, '2B_full.yaml'), UNKNOWN);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(gemma2b));
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const status = await importCommand(
      ['torchtune', join(dir, '2B_full.yaml'), '--hf', join(dir, 'config.json')],
      (p, b) => Promise.resolve(hfOption(p, b)),
    );
    expect(status).toBe(0);
  });

  it('a LoRA builder llmem lacks keeps its adapters under --hf', () => {
    const lora = GEMMA.replace(
      'torchtune.models.gemma.gemma_2b',
      "torchtune.models.smol.lora_smollm2_135m\n  lora_attn_modules: ['q_proj', 'v_proj']\n  lora_rank: 64",
    );
    const r = withHf('torchtune', lora, gemma2b);
    expect(r.config.training).toMatchObject({ finetune: { method: 'lora', lora_rank: 64, lora_targets: ['q', 'v'] } });
  });

  // pytorch/torchtitan torchtitan/models/llama4/train_configs/llama4_17bx128e.toml @238fa9953e4aec2a62582121564273d7cbb1e9f1
  const MAVERICK = `[model]
name = "llama4"
flavor = "17bx128e"
hf_assets_path = "./assets/hf/Llama-4-Maverick-17B-128E"
[training]
local_batch_size = 1
seq_len = 8192
[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
expert_parallel_degree = 1
[activation_checkpoint]
mode = "full"
`;

  it('torchtitan llama4 17bx128e: refused alone, the config.json model with --hf (a note on the text decoder)', () => {
    const alone = importError('torchtitan', MAVERICK, { worldSize: 64 });
    expect(alone.path).toBe('[model] flavor');
    expect(alone.message).toContain('--hf config.json');
    const r = imported('torchtitan', MAVERICK, { worldSize: 64, modelFromHf: true });
    expect(r.flat['model.preset']).toBeUndefined();
    expect(r.flat).toMatchObject({ 'parallel.tp': 8, 'parallel.pp': 4, 'training.seq_len': 8192 });
    expect(r.notes.join('\n')).toContain("torchtitan's Llama 4 is the text decoder alone");
    const flux = imported('torchtitan', MAVERICK.replace('"llama4"', '"flux"'), { worldSize: 64, modelFromHf: true });
    expect(flux.notes.join('\n')).toContain('not a model llmem knows');
  });

  // Lightning-AI/litgpt config_hub/finetune/phi-2/lora.yaml @26857050fe3ff627cd714fe92f5838f51a3d5efa (trimmed)
  const PHI2 = `checkpoint_dir: checkpoints/microsoft/phi-2
out_dir: out/finetune/lora-phi-2
precision: bf16-true
quantize:
devices: 1
num_nodes: 1
lora_r: 8
lora_alpha: 16
lora_dropout: 0.05
lora_query: true
lora_key: true
lora_value: true
lora_projection: true
lora_mlp: true
lora_head: true
train:
  save_interval: 800
  log_interval: 1
  global_batch_size: 8
  micro_batch_size: 4
  lr_warmup_steps: 10
  epochs: 1
  max_seq_length: 512
`;

  it("litgpt phi-2 with --hf: training.dropout 0, not the config.json's resid_pdrop 0.1 (LitGPT has no dropout)", () => {
    quiet();
    const r = withHf('litgpt', PHI2, phi2);
    expect((r.config.training as Config).dropout).toBe(0);
    expect(r.notes.join('\n')).toContain("LitGPT's model has no dropout");
    // without --hf nothing sets it (the catalog model's shape)
    const plain = imported('litgpt', PHI2.replace('microsoft/phi-2', 'microsoft/phi-4'));
    expect(plain.flat['training.dropout']).toBeUndefined();
  });
});
