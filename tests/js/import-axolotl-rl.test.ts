// axolotl's rl: (dpo, ipo, orpo, simpo, grpo, gdpo; kto and ebft reported) with its trl: / vllm: blocks and the
// rl_* / dpo_* / orpo_* / kto_* keys -> config v1's rl section, with the TRL importer's semantics (axolotl builds
// TRL's trainers). Small inputs shaped like the official examples of axolotl-ai-cloud/axolotl at
// 067b021c8b87a9e5e380b9173c704cf7340e30f5: examples/mistral/dpo/mistral-dpo-qlora.yml, examples/qwen2/dpo.yaml,
// examples/mistral/orpo/mistral-qlora-orpo.yml, examples/llama-3/qlora-1b-kto.yaml,
// examples/llama-3/qlora-1b-gdpo.yaml, docs/grpo.qmd ("2. Write the config"), docs/vllm_serving.qmd (colocate),
// examples/ebft/llama-1b-ebft-strided.yaml.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core, EstimateResult, Json } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { importError, imported } from './import-helpers.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const ok = (text: string, worldSize = 8) => imported('axolotl', text, { worldSize });
const error = (text: string, worldSize = 8) => importError('axolotl', text, { worldSize });

/** The imported config runs through the core; its RL phases, if any. */
function estimate(config: Config): EstimateResult {
  const resolved = resolveConfig(config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
  return res;
}
const phases = (config: Config) => (estimate(config).rl?.phases ?? []).map((p) => p.phase);
const rlKeys = (flat: Record<string, Json>) =>
  Object.fromEntries(Object.entries(flat).filter(([k]) => k.startsWith('rl.')));

// examples/mistral/dpo/mistral-dpo-qlora.yml (its base model, Mistral-7B-Instruct-v0.2, is not in the catalog:
// Mistral-7B-v0.1 here, the same shape)
const DPO_QLORA = `base_model: mistralai/Mistral-7B-v0.1
model_type: MistralForCausalLM
tokenizer_type: LlamaTokenizer
load_in_8bit: false
load_in_4bit: true
chat_template: chatml
rl: dpo
datasets:
  - path: olivermolenschot/alpaca_messages_dpo_test
    type: chat_template.default
    field_messages: conversation
    field_chosen: chosen
    field_rejected: rejected
val_set_size: 0.05
output_dir: ./outputs/dpo-qlora
sequence_len: 2048
sample_packing: false
adapter: qlora
lora_model_dir:
lora_r: 8
lora_alpha: 16
lora_dropout: 0.2
lora_target_linear: true
gradient_accumulation_steps: 4
micro_batch_size: 16
num_epochs: 6
optimizer: adamw_bnb_8bit
lr_scheduler: cosine
learning_rate: 0.0001
bf16: auto
tf32: false
gradient_checkpointing: true
`;

// examples/qwen2/dpo.yaml
const DPO_FULL = `base_model: Qwen/Qwen2.5-0.5B
chat_template: qwen_25
rl: dpo
datasets:
  - path: fozziethebeat/alpaca_messages_2k_dpo_test
    type: chat_template.default
val_set_size: 0.0
output_dir: ./outputs/dpo-out
sequence_len: 2048
sample_packing: false
gradient_accumulation_steps: 4
micro_batch_size: 2
num_epochs: 4
optimizer: adamw_bnb_8bit
lr_scheduler: cosine
learning_rate: 0.0002
bf16: auto
tf32: false
gradient_checkpointing: true
attn_implementation: flash_attention_2
`;

describe('axolotl rl: dpo / ipo', () => {
  it('mistral-dpo-qlora: pairs, the reference (the base, adapters off), no plain SFT', () => {
    const r = ok(DPO_QLORA);
    expect(r.flat).toMatchObject({
      'runtime.framework': 'axolotl',
      'model.preset': expect.stringMatching(/^mistral-7b-v0\.1/),
      'training.finetune.method': 'qlora',
      'training.micro_batch': 16, // pairs: the core counts 32 sequences (chosen + rejected)
      'rl.algorithm': 'dpo',
      'rl.rollout_batch': 512, // 16 x 4 x 8
      'rl.mini_batch': 512,
      'rl.prompt_len': 1024,
      'rl.response_len': 1024,
      'training.seq_len': 2048,
      'rl.reference.enabled': true,
      'rl.logits_response_only': false,
      'rl.remove_padding': false,
    });
    expect(r.flat['training.grad_accum']).toBeUndefined(); // RL: rl.mini_batch sets the accumulation
    expect(r.flat['rl.reference.precomputed']).toBeUndefined();
    // the old import: rl reported as not modelled, plain SFT of 16 sequences with accumulation 4
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('training.micro_batch 16 pairs = 32 sequences');
    expect(r.notes.join('\n')).toContain('DPOTrainer disables the adapters');
    expect(phases(r.config)).toEqual(['reference log-probs', 'actor update']);
  });

  it('chosen + rejected: the DPO import needs more than the same file without rl', () => {
    const dpo = estimate(ok(DPO_QLORA).config).per_gpu.peak_allocated_bytes;
    const sft = estimate(ok(DPO_QLORA.replace('rl: dpo\n', '')).config).per_gpu.peak_allocated_bytes;
    expect(dpo).toBeGreaterThan(sft * 1.3);
  });

  it('same rl.* keys as the TRL importer for the same DPOConfig', () => {
    const axolotl = ok(DPO_QLORA).flat;
    const trl = imported(
      'trl',
      'model_name_or_path: mistralai/Mistral-7B-v0.1\nmax_length: 2048\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\nuse_peft: true\nload_in_4bit: true\n',
      { worldSize: 8, trainer: 'dpo' },
    ).flat;
    expect(rlKeys(axolotl)).toEqual(rlKeys(trl));
  });

  it('qwen2 dpo (full): a frozen copy as the reference; DPO keys read, not unknown', () => {
    const r = ok(
      `${DPO_FULL}rl_beta: 0.1\ndpo_loss_type: [sigmoid]\ndpo_label_smoothing: 0.1\ndpo_use_weighting: false\ndpo_padding_free: true\ntrl:\n  beta: 0.1\n`,
    );
    expect(r.flat).toMatchObject({
      'training.finetune.method': 'full',
      'training.micro_batch': 2,
      'rl.algorithm': 'dpo',
      'rl.rollout_batch': 64,
      'rl.reference.enabled': true,
      'rl.remove_padding': true, // dpo_padding_free -> DPOConfig padding_free
    });
    expect(r.unsupported).toEqual([]);
    const read = r.notes.find((n) => n.startsWith('read, no effect'));
    for (const k of ['rl_beta', 'dpo_loss_type', 'dpo_label_smoothing', 'dpo_use_weighting', 'trl.beta'])
      expect(read).toContain(k);
    expect(phases(r.config)).toEqual(['reference log-probs', 'actor update']);
  });

  it("precompute_ref_log_probs: precomputed with an adapter; a full fine-tune keeps axolotl's copy on the GPU", () => {
    const lora = ok(`${DPO_QLORA}precompute_ref_log_probs: true\n`);
    expect(lora.flat['rl.reference.precomputed']).toBe(true);
    expect(phases(lora.config)).toEqual(['actor update']);
    const full = ok(`${DPO_FULL}precompute_ref_log_probs: true\n`);
    expect(full.flat['rl.reference.enabled']).toBe(true);
    expect(full.flat['rl.reference.precomputed']).toBe(false);
    expect(full.notes.join('\n')).toContain('stays on the GPU');
    estimate(full.config);
  });

  it('rl_adapter_ref_model, ipo, dpo_use_liger_kernel, sequence_len absent', () => {
    const copy = ok(`${DPO_QLORA}rl_adapter_ref_model: true\n`);
    expect(copy.unsupported).toEqual([expect.stringMatching(/^rl_adapter_ref_model: a second copy of the base model/)]);
    const ipo = ok(DPO_FULL.replace('rl: dpo', 'rl: ipo'));
    expect(ipo.flat['rl.algorithm']).toBe('dpo');
    expect(ipo.notes.join('\n')).toContain('loss_type ipo');
    const liger = ok(`${DPO_FULL}dpo_use_liger_kernel: true\n`);
    expect(liger.flat['training.loss']).toBe('fused');
    estimate(liger.config);
    const noLen = ok(DPO_FULL.replace('sequence_len: 2048\n', ''));
    expect(noLen.flat).toMatchObject({ 'rl.prompt_len': 256, 'rl.response_len': 256, 'training.seq_len': 512 });
  });
});

describe('axolotl rl: orpo / simpo', () => {
  // examples/mistral/orpo/mistral-qlora-orpo.yml
  const ORPO = `base_model: mistralai/Mistral-7B-v0.1
model_type: MistralForCausalLM
load_in_8bit: false
load_in_4bit: true
rl: orpo
orpo_alpha: 0.1
remove_unused_columns: false
chat_template: chatml
datasets:
  - path: argilla/ultrafeedback-binarized-preferences-cleaned
    type: chat_template.argilla
adapter: qlora
sequence_len: 4096
sample_packing: false
lora_r: 32
lora_alpha: 16
lora_dropout: 0.05
lora_target_linear: true
gradient_accumulation_steps: 4
micro_batch_size: 2
optimizer: adamw_bnb_8bit
bf16: auto
gradient_checkpointing: true
attn_implementation: flash_attention_2
`;

  it('mistral-qlora-orpo: pairs, no reference; orpo_alpha read', () => {
    const r = ok(ORPO);
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'dpo',
      'training.micro_batch': 2,
      'rl.rollout_batch': 64,
      'rl.prompt_len': 2048,
      'rl.response_len': 2048,
      'rl.reference.enabled': false,
    });
    expect(r.unsupported).toEqual([]);
    expect(r.notes.find((n) => n.startsWith('read, no effect'))).toContain('orpo_alpha');
    const trl = imported('trl', 'max_length: 4096\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 4\n', {
      worldSize: 8,
      trainer: 'orpo',
    }).flat;
    expect(rlKeys(r.flat)).toEqual(rlKeys(trl));
    expect(phases(r.config)).toEqual(['actor update']);
  });

  it('simpo: CPOTrainer, no reference', () => {
    const r = ok(`${ORPO.replace('rl: orpo', 'rl: simpo')}simpo_gamma: 0.5\ncpo_alpha: 0\n`);
    expect(r.flat).toMatchObject({ 'rl.algorithm': 'dpo', 'rl.reference.enabled': false });
    expect(r.notes.join('\n')).toContain('CPO / SimPO: no reference model');
    expect(r.unsupported).toEqual([]);
    estimate(r.config);
  });
});

describe('axolotl rl: kto and ebft (no config v1 equivalent)', () => {
  // examples/llama-3/qlora-1b-kto.yaml
  const KTO = `base_model: meta-llama/Llama-3.2-1B
load_in_8bit: false
load_in_4bit: true
rl: kto
rl_beta: 0.5
kto_desirable_weight: 0.2
remove_unused_columns: false
adapter: qlora
sequence_len: 2048
sample_packing: false
eval_sample_packing: false
lora_r: 32
lora_alpha: 64
lora_dropout: 0.05
lora_target_linear: true
gradient_accumulation_steps: 1
micro_batch_size: 2
optimizer: adamw_8bit
bf16: auto
gradient_checkpointing: true
attn_implementation: flash_attention_2
`;

  it('qlora-1b-kto: supervised fine-tuning, the KL batch and the reference reported', () => {
    const r = ok(KTO);
    expect(r.flat['rl.algorithm']).toBeUndefined();
    expect(r.flat).toMatchObject({ 'training.micro_batch': 2, 'training.grad_accum': 1, 'training.seq_len': 2048 });
    expect(r.unsupported).toHaveLength(1);
    expect(r.unsupported[0]).toMatch(/^rl: kto: .*KL batch's no-grad forward.*reference model.*not applied$/);
    const read = r.notes.find((n) => n.startsWith('read, no effect'));
    expect(read).toContain('rl_beta');
    expect(read).toContain('kto_desirable_weight');
    expect(r.unsupported.join('\n')).not.toContain('not a known axolotl key');
    estimate(r.config);
    expect(error(KTO.replace('micro_batch_size: 2', 'micro_batch_size: 1')).path).toBe('micro_batch_size');
  });

  it('ebft: reported with its blocks', () => {
    // examples/ebft/llama-1b-ebft-strided.yaml
    const r = ok(`base_model: meta-llama/Llama-3.2-1B
rl: ebft
ebft:
  mode: strided
  stride: 8
adapter: lora
lora_r: 16
lora_target_linear: true
sequence_len: 256
micro_batch_size: 1
gradient_accumulation_steps: 2
bf16: auto
`);
    expect(r.flat['rl.algorithm']).toBeUndefined();
    expect(r.unsupported.map((u) => u.split(':')[0])).toEqual(['rl', 'ebft']);
    expect(r.unsupported[0]).toContain('no config v1 equivalent');
    estimate(r.config);
  });
});

describe('axolotl rl: grpo / gdpo with trl: and vllm:', () => {
  // docs/grpo.qmd, "2. Write the config"
  const GRPO_SERVER = `base_model: Qwen/Qwen2.5-1.5B-Instruct
rl: grpo
chat_template: tokenizer_default
vllm:
  host: 0.0.0.0
  port: 8000
  gpu_memory_utilization: 0.85
  dtype: auto
  max_model_len: 2048
adapter: lora
lora_r: 32
lora_alpha: 64
lora_target_linear: true
trl:
  use_vllm: true
  use_data_producer: true
  vllm_server_host: 0.0.0.0
  vllm_server_port: 8000
  vllm_server_timeout: 300
  vllm_lora_sync: true
  num_generations: 8
  max_completion_length: 512
  temperature: 0.7
  reward_funcs:
    - rewards.accuracy_reward
    - rewards.format_reward
  reward_weights:
    - 1.0
    - 0.5
datasets:
  - path: openai/gsm8k
    name: main
    type: rewards.prompt_transform
    split: train
skip_prepare_dataset: true
val_set_size: 0.0
sequence_len: 512
micro_batch_size: 2
gradient_accumulation_steps: 4
max_steps: 200
learning_rate: 5.0e-6
optimizer: adamw_torch_fused
lr_scheduler: cosine
warmup_steps: 10
bf16: true
attn_implementation: flash_attention_2
gradient_checkpointing: true
`;

  it('docs/grpo.qmd: vLLM server (vllm_mode defaults to server), group, batches; async reported', () => {
    const r = ok(GRPO_SERVER);
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'grpo',
      'training.micro_batch': 2,
      'training.finetune.method': 'lora',
      'rl.group_size': 8,
      'rl.response_len': 512,
      'rl.rollout_batch': 8, // 2 x 8 x 4 / 8
      'rl.mini_batch': 8,
      'rl.logits_response_only': true,
      'rl.reference.enabled': false, // beta absent: 0.0
      'rl.rollout.engine': 'vllm',
      'rl.rollout.placement': 'separate',
    });
    expect(r.flat['training.grad_accum']).toBeUndefined();
    expect(r.flat['rl.rollout.gpu_memory_utilization']).toBeUndefined(); // the server's, on GPUs of its own
    expect(r.unsupported).toEqual([expect.stringMatching(/^trl\.use_data_producer: axolotl's async GRPO trainer/)]);
    expect(r.notes.join('\n')).toContain('trl.vllm_mode absent: server');
    const read = r.notes.find((n) => n.startsWith('read, no effect'));
    for (const k of ['vllm.gpu_memory_utilization', 'trl.vllm_server_port', 'trl.temperature', 'trl.reward_funcs'])
      expect(read).toContain(k);
    expect(phases(r.config)).toContain('actor update');
  });

  // docs/vllm_serving.qmd, colocate mode, with the vllm: block's share and TP
  const GRPO_COLOCATE = `base_model: Qwen/Qwen2.5-1.5B-Instruct
rl: grpo
vllm:
  gpu_memory_utilization: 0.4
  tensor_parallel_size: 1
  max_model_len: 2048
trl:
  beta: 0.04
  use_vllm: true
  vllm_mode: colocate
  vllm_enable_sleep_mode: true
  num_generations: 8
  max_completion_length: 768
micro_batch_size: 4
gradient_accumulation_steps: 4
bf16: true
gradient_checkpointing: true
attn_implementation: flash_attention_2
`;

  it("colocate: the vllm: block's share and TP, sleep, the reference; same rl.* keys as the TRL importer", () => {
    const r = ok(GRPO_COLOCATE, 4);
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'grpo',
      'parallel.gpus': 4,
      'rl.group_size': 8,
      'rl.response_len': 768,
      'rl.rollout_batch': 8, // 4 x 4 x 4 / 8
      'rl.mini_batch': 8,
      'rl.reference.enabled': true,
      'rl.rollout.placement': 'colocated',
      'rl.rollout.gpu_memory_utilization': 0.4,
      'rl.rollout.tp': 1,
      'rl.rollout.max_num_seqs': 16, // 4 x 1 x steps_per_generation 4
      'rl.rollout.sleep': 'level2',
      'training.master_weights': false,
    });
    expect(r.unsupported).toEqual([]);
    expect(r.notes.find((n) => n.startsWith('read, no effect'))).toContain('vllm.max_model_len'); // not passed
    const trl = imported(
      'trl',
      'model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nbeta: 0.04\nuse_vllm: true\nvllm_mode: colocate\nvllm_enable_sleep_mode: true\nvllm_gpu_memory_utilization: 0.4\nvllm_tensor_parallel_size: 1\nnum_generations: 8\nmax_completion_length: 768\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 4\n',
      { worldSize: 4 },
    ).flat;
    expect(rlKeys(r.flat)).toEqual(rlKeys(trl));
    const p = phases(r.config);
    expect(p).toEqual(expect.arrayContaining(['rollout', 'reference log-probs', 'actor update']));
  });

  it('colocate defaults: vllm.gpu_memory_utilization 0.9 (VllmConfig), tensor_parallel_size None reported', () => {
    const r = ok(
      GRPO_COLOCATE.replace(
        /vllm:\n {2}gpu_memory_utilization: 0\.4\n {2}tensor_parallel_size: 1\n {2}max_model_len: 2048\n/,
        '',
      ),
      4,
    );
    expect(r.flat['rl.rollout.gpu_memory_utilization']).toBe(0.9);
    expect(r.flat['rl.rollout.tp']).toBe(1);
    expect(r.unsupported).toEqual([expect.stringMatching(/^vllm\.tensor_parallel_size: absent: axolotl passes None/)]);
  });

  it('qlora-1b-gdpo: no vLLM (generate() reported), beta 0.001: a reference', () => {
    // examples/llama-3/qlora-1b-gdpo.yaml (no adapter key: a full fine-tune)
    const r = ok(`base_model: meta-llama/Llama-3.2-1B-Instruct
chat_template: llama3
rl: gdpo
trl:
  beta: 0.001
  max_completion_length: 128
  num_generations: 2
  temperature: 0.7
  top_p: 0.95
  use_vllm: false
  multi_objective_aggregation: normalize_then_sum
  reward_funcs:
    - rwd.format_reward
    - rwd.correctness_reward
  reward_weights: [1.0, 2.0]
  log_completions: true
  num_completions_to_print: 3
  scale_rewards: true
sequence_len: 512
sample_packing: false
pad_to_sequence_len: false
gradient_accumulation_steps: 8
micro_batch_size: 1
optimizer: adamw_torch_fused
bf16: auto
gradient_checkpointing: true
gradient_checkpointing_kwargs:
  use_reentrant: false
attn_implementation: flash_attention_2
`);
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'grpo',
      'training.finetune.method': 'full',
      'rl.group_size': 2,
      'rl.response_len': 128,
      'rl.rollout_batch': 32, // 1 x 8 x 8 / 2
      'rl.mini_batch': 32,
      'rl.reference.enabled': true,
      'rl.rollout.placement': 'separate',
    });
    expect(r.unsupported).toEqual([
      expect.stringMatching(/^trl\.use_vllm: false: completions come from transformers generate\(\)/),
    ]);
    expect(r.notes.join('\n')).toContain('counted as GRPO');
    expect(phases(r.config)).toContain('reference log-probs');
  });

  it('rl_beta as GRPO beta; max_completion_length absent; a Hub reward model and an unknown trl key reported', () => {
    const r = ok(
      'base_model: Qwen/Qwen2.5-0.5B\nrl: grpo\nrl_beta: 0.02\nmicro_batch_size: 4\ngradient_accumulation_steps: 2\ntrl:\n  num_generations: 4\n  reward_funcs: [rewards.acc, Skywork/Skywork-Reward-V2-Qwen3-0.6B]\n  no_such_field: 1\n',
      2,
    );
    expect(r.flat).toMatchObject({ 'rl.reference.enabled': true, 'rl.response_len': 512, 'rl.group_size': 4 });
    expect(r.unsupported.map((u) => u.split(':')[0])).toEqual([
      'trl.max_completion_length',
      'trl.use_vllm',
      'trl.reward_funcs',
      'trl.no_such_field',
    ]);
    expect(r.unsupported[0]).toContain('axolotl passes None');
    estimate(r.config);
  });

  it('trl.use_liger_loss: GRPOConfig use_liger_kernel, read as the TRL importer reads it', () => {
    const r = ok(GRPO_COLOCATE.replace('trl:\n', 'trl:\n  use_liger_loss: true\n'), 4);
    expect(r.flat['training.loss']).toBe('fused');
    expect(r.notes.join('\n')).toContain('trl.use_liger_loss: GRPOConfig use_liger_kernel');
    estimate(r.config);
  });

  it('ZeRO-3: the whole model gathered for the sync (ds3_gather_for_generation)', () => {
    const r = imported('axolotl', `${GRPO_COLOCATE}deepspeed: deepspeed_configs/zero3_bf16.json\n`, {
      worldSize: 4,
      also: JSON.stringify({ zero_optimization: { stage: 3 }, bf16: { enabled: 'auto' } }),
    });
    expect(r.flat['rl.weight_sync']).toBe('full');
    estimate(r.config);
  });

  it('errors name the axolotl key', () => {
    // validation.py check_grpo_batch_size_divisibility: micro_batch_size x gradient_accumulation_steps per group
    expect(
      error(
        'base_model: Qwen/Qwen2.5-0.5B\nrl: grpo\nmicro_batch_size: 1\ngradient_accumulation_steps: 3\ntrl:\n  num_generations: 2\n',
      ).path,
    ).toBe('trl.num_generations');
    expect(error(GRPO_COLOCATE.replace('gpu_memory_utilization: 0.4', 'gpu_memory_utilization: 1.5')).path).toBe(
      'vllm.gpu_memory_utilization',
    );
    expect(error(GRPO_COLOCATE.replace('vllm_mode: colocate', 'vllm_mode: remote')).path).toBe('trl.vllm_mode');
    expect(error(DPO_FULL.replace('rl: dpo', 'rl: ppo')).path).toBe('rl');
    expect(error(DPO_FULL.replace('sample_packing: false', 'sample_packing: true')).path).toBe('sample_packing');
  });
});
