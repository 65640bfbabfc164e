// The RL importers (TRL, verl, OpenRLHF) on small hand-written inputs: each mapped key, each
// error; the verl exporter's round trip; the CLI's import giving a config the core estimates.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core, Json } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { detectKind, importConfig, type ImportKind, type Trainer } from '../../frontend/config/importers/index.js';
import { exportConfig } from '../../frontend/config/exporters/index.js';
import { flatten, importError, imported } from './import-helpers.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const ok = (kind: ImportKind, text: string, worldSize?: number, trainer?: Trainer) =>
  imported(kind, text, { worldSize, trainer });
const error = (kind: ImportKind, text: string, worldSize?: number, trainer?: Trainer) =>
  importError(kind, text, { worldSize, trainer });

function estimates(config: Config): void {
  const resolved = resolveConfig(config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
}

const GRPO = `model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
torch_dtype: bfloat16
attn_implementation: flash_attention_2
bf16: true
use_vllm: true
vllm_mode: colocate
vllm_gpu_memory_utilization: 0.4
vllm_tensor_parallel_size: 2
vllm_enable_sleep_mode: true
num_generations: 8
max_prompt_length: 256
max_completion_length: 768
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
gradient_checkpointing: true
beta: 0.04
learning_rate: 1.0e-6
report_to: [wandb]
`;

describe('TRL', () => {
  it('a preference file with padding_free or a DPO-only loss type is DPO (alignment-handbook smollm3/dpo/apo.yaml)', () => {
    const apo =
      'model_name_or_path: HuggingFaceTB/SmolLM3-3B\nbeta: 0.1\nloss_type: apo_zero\npadding_free: true\nmax_length: 2048\n';
    expect(ok('trl', apo, 8).flat['rl.algorithm']).toBe('dpo');
    expect(ok('trl', apo.replace('padding_free: true\n', ''), 8).flat['rl.algorithm']).toBe('dpo');
    // beta and max_prompt_length alone are DPO's, ORPO's, CPO's and KTO's: still asked
    expect(
      error('trl', 'model_name_or_path: HuggingFaceTB/SmolLM3-3B\nbeta: 0.1\nmax_prompt_length: 512\n').message,
    ).toContain('give the trainer');
  });
  it('a batch that does not divide into groups says the arithmetic, world size included', () => {
    // huggingface/open-r1 recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo_code.yaml: 16 x world x 4 / 14
    const code =
      'model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nnum_generations: 14\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\n';
    const e = error('trl', code);
    expect(e.message).toContain('per-device batch 16 x 8 processes (the world size) x 4 steps');
    expect(ok('trl', code, 7).flat['rl.group_size']).toBe(14); // 16 x 7 x 4 = 448 = 32 groups
  });
  it('vllm_max_model_len caps the prompt and the completion each: a batch lines its longest of both up (B, P+C)', () => {
    // grpo_trainer.py @f2cd5771: torch.cat([prompt_ids, completion_ids]) of left-padded prompts and right-padded
    // completions, so a long completion after a short prompt sits beside a long prompt
    const capped = ok('trl', `${GRPO}vllm_max_model_len: 800\n`, 4);
    expect([capped.flat['rl.prompt_len'], capped.flat['rl.response_len']]).toEqual([256, 768]);
    expect(capped.flat['training.seq_len']).toBe(1024);
    expect(capped.notes.join('\n')).toContain('only each part is capped');
    const tight = ok('trl', `${GRPO}vllm_max_model_len: 512\n`, 4);
    expect([tight.flat['rl.prompt_len'], tight.flat['rl.response_len']]).toEqual([256, 512]);
    expect(ok('trl', `${GRPO}vllm_max_model_len: 4096\n`, 4).flat['rl.response_len']).toBe(768);
  });
  it('GRPOConfig: every mapped key', () => {
    const r = ok('trl', GRPO, 4);
    expect(r.flat).toMatchObject({
      'model.preset': expect.stringMatching(/^qwen2\.5-1\.5b/),
      'runtime.framework': 'hf_trainer',
      'rl.algorithm': 'grpo',
      'parallel.gpus': 4,
      'training.micro_batch': 4,
      'training.dtype': 'bf16',
      'training.master_weights': false,
      'training.attention': 'flash',
      'training.recompute': 'full',
      'training.seq_len': 1024,
      'rl.group_size': 8,
      'rl.prompt_len': 256,
      'rl.response_len': 768,
      'rl.mini_batch': 8, // 4 x 4 x 4 / 8
      'rl.rollout_batch': 8,
      'rl.reference.enabled': true,
      'rl.logits_response_only': true,
      'rl.rollout.placement': 'colocated',
      'rl.rollout.gpu_memory_utilization': 0.4,
      'rl.rollout.tp': 2,
      'rl.rollout.max_num_seqs': 32, // 4 x 2 x steps_per_generation 4
      'rl.rollout.sleep': 'level2',
    });
    expect(r.flat['training.grad_accum']).toBeUndefined();
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('read, no effect on per-GPU memory: learning_rate, report_to');
    estimates(r.config);
  });

  it('GRPOConfig: server mode, no vLLM, generation batch, PEFT, entropy, beta default', () => {
    const server = ok(
      'trl',
      'num_generations: 4\nuse_vllm: true\nvllm_mode: server\nper_device_train_batch_size: 2\n',
      2,
    );
    expect(server.flat['rl.rollout.placement']).toBe('separate');
    expect(server.flat['rl.reference.enabled']).toBe(false);
    expect(server.notes.join('\n')).toContain('beta absent: 0.0');
    const local = ok('trl', 'num_generations: 4\nper_device_train_batch_size: 2\n', 2);
    expect(local.unsupported.join('\n')).toContain('use_vllm: false: completions come from transformers generate()');
    const gen = ok('trl', 'num_generations: 4\nper_device_train_batch_size: 2\ngeneration_batch_size: 16\n', 2);
    expect(gen.flat['rl.rollout_batch']).toBe(4);
    expect(gen.flat['rl.mini_batch']).toBe(1);
    const peft = ok(
      'trl',
      'num_generations: 2\nuse_peft: true\nlora_r: 32\nlora_target_modules: [q_proj, v_proj]\nload_in_4bit: true\nentropy_coef: 0.01\n',
      1,
    );
    expect(peft.flat).toMatchObject({
      'training.finetune.method': 'qlora',
      'training.finetune.quant': 'nf4',
      'training.finetune.lora_rank': 32,
      'training.finetune.lora_targets': ['q', 'v'],
      'rl.entropy': true,
    });
  });

  it('GRPOConfig: ZeRO-3 with ds3_gather_for_generation syncs the whole model', () => {
    const ds = JSON.stringify({ zero_optimization: { stage: 3 } });
    const r = importConfig('trl', 'num_generations: 2\ndeepspeed: ds_z3.json\n', { worldSize: 2, also: ds });
    if ('error' in r) throw new Error(r.error.message);
    expect(flatten(r.config as Json)['rl.weight_sync']).toBe('full');
  });

  it('DPOConfig: pairs, lengths, the reference', () => {
    const r = ok(
      'trl',
      'model_name_or_path: meta-llama/Llama-3.1-8B-Instruct\nbeta: 0.1\nmax_length: 2048\nmax_prompt_length: 512\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\nprecompute_ref_log_probs: true\npadding_free: true\n',
      8,
      'dpo', // beta, max_prompt_length and precompute_ref_log_probs are KTOConfig's (and ORPOConfig's) too
    );
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'dpo',
      'rl.rollout_batch': 128,
      'rl.mini_batch': 128,
      'rl.prompt_len': 512,
      'rl.response_len': 1536,
      'rl.reference.enabled': true,
      'rl.reference.precomputed': true,
      'rl.remove_padding': true,
      'rl.logits_response_only': false,
      'training.seq_len': 2048,
    });
    estimates(r.config);
  });

  it('errors name the key', () => {
    expect(error('trl', 'learning_rate: 1.0e-6\n').message).toContain('the trainer cannot be told');
    expect(error('trl', 'num_generations: 3\nper_device_train_batch_size: 2\n', 1).path).toBe('num_generations');
    expect(error('trl', 'num_generations: 1\n').path).toBe('num_generations');
    expect(error('trl', 'num_generations: 2\nuse_vllm: true\nvllm_mode: remote\n').path).toBe('vllm_mode');
    expect(error('trl', 'num_generations: 2\nuse_vllm: true\nvllm_gpu_memory_utilization: 1.5\n').path).toBe(
      'vllm_gpu_memory_utilization',
    );
    expect(error('trl', 'num_generations: 2\nmodel_name_or_path: org/unknown-model-9b\n').message).toContain(
      'not in the model catalog',
    );
    expect(error('trl', 'beta: 0.1\nmax_length: 512\nmax_prompt_length: 512\n', undefined, 'dpo').path).toBe(
      'max_prompt_length',
    );
    expect(error('trl', 'num_generations: 2\ngeneration_batch_size: 8\nsteps_per_generation: 2\n').path).toBe(
      'generation_batch_size',
    );
  });

  it('unknown keys are reported, DPO keys in a GRPO file named', () => {
    const r = ok('trl', 'num_generations: 2\nuse_vllm: true\nfoo_bar: 1\nrpo_alpha: 0.5\n', 2);
    expect(r.unsupported).toEqual([
      'foo_bar: not a TRL key llmem maps; not applied',
      'rpo_alpha: a DPOConfig key in a GRPO file; not applied',
    ]);
  });
});

const VERL = `set -x
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=64 \\
    data.max_prompt_length=512 \\
    data.max_response_length=1024 \\
    actor_rollout_ref.model.path=Qwen/Qwen3-8B \\
    actor_rollout_ref.model.use_remove_padding=True \\
    actor_rollout_ref.actor.strategy=fsdp2 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
    actor_rollout_ref.actor.use_kl_loss=True \\
    actor_rollout_ref.actor.entropy_coeff=0.001 \\
    actor_rollout_ref.actor.fsdp_config.param_offload=True \\
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=True \\
    actor_rollout_ref.actor.fsdp_config.fsdp_size=4 \\
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=2 \\
    actor_rollout_ref.rollout.name=sglang \\
    actor_rollout_ref.rollout.n=8 \\
    actor_rollout_ref.rollout.tensor_model_parallel_size=4 \\
    actor_rollout_ref.rollout.gpu_memory_utilization=0.5 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \\
    actor_rollout_ref.ref.fsdp_config.param_offload=True \\
    trainer.logger='["console","wandb"]' \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1 $@
`;

describe('verl', () => {
  it('main_ppo overrides: every mapped key', () => {
    const r = ok('verl', VERL);
    expect(r.flat).toMatchObject({
      'model.preset': expect.stringMatching(/^qwen3-8b/),
      'runtime.framework': 'verl',
      'rl.algorithm': 'grpo',
      'parallel.gpus': 8,
      'parallel.engine': 'fsdp2',
      'parallel.cp': 2,
      'parallel.fsdp_strategy': 'hybrid_shard',
      'parallel.fsdp_shard_size': 4,
      'rl.rollout_batch': 64,
      'rl.mini_batch': 16,
      'training.micro_batch': 4,
      'rl.logprob_micro_batch': 8,
      'rl.group_size': 8,
      'rl.prompt_len': 512,
      'rl.response_len': 1024,
      'training.seq_len': 1536,
      'rl.remove_padding': true,
      'rl.entropy': true,
      'rl.reference.enabled': true,
      'rl.reference.param_offload': true,
      'rl.actor.param_offload': true,
      'rl.actor.optimizer_offload': true,
      'rl.rollout.engine': 'sglang',
      'rl.rollout.tp': 4,
      'rl.rollout.placement': 'colocated',
      'rl.rollout.sleep': 'level2',
      'training.master_weights': true,
      'training.dtype': 'bf16',
    });
    expect(r.unsupported).toEqual([]);
    expect(detectKind('run.sh', VERL)).toBe('verl');
    estimates(r.config);
  });

  it('a YAML config: interpolations resolved, dynamic batches, the critic', () => {
    const yaml = `data:
  max_prompt_length: 256
  max_response_length: 256
  train_batch_size: 32
actor_rollout_ref:
  model:
    path: Qwen/Qwen2.5-0.5B-Instruct
  actor:
    ppo_mini_batch_size: 16
    use_dynamic_bsz: true
    ppo_max_token_len_per_gpu: 4096
  rollout:
    name: vllm
    tensor_model_parallel_size: 1
    prompt_length: \${data.max_prompt_length}
    log_prob_max_token_len_per_gpu: \${oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384}
critic:
  ppo_max_token_len_per_gpu: 8192
  model:
    path: Qwen/Qwen2.5-0.5B-Instruct
trainer:
  n_gpus_per_node: 2
`;
    const r = ok('verl', yaml);
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'ppo',
      'rl.max_tokens_per_gpu': 4096,
      'rl.logprob_max_tokens_per_gpu': 4096,
      'rl.critic.max_tokens_per_gpu': 8192,
      'parallel.engine': 'fsdp1',
    });
    expect(r.flat['training.micro_batch']).toBeUndefined();
    expect(detectKind('ppo.yaml', yaml)).toBe('verl');
    estimates(r.config);
  });

  it('a reward model and a critic of another catalog shape', () => {
    const r = ok(
      'verl',
      `python3 -m verl.trainer.main_ppo algorithm.adv_estimator=gae actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct actor_rollout_ref.rollout.name=vllm actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 critic.model.path=Qwen/Qwen2.5-0.5B-Instruct reward_model.enable=True reward_model.use_reward_loop=False reward_model.model.path=meta-llama/Llama-3.2-1B`,
    );
    expect(r.flat).toMatchObject({
      'rl.critic.layers': 24,
      'rl.critic.hidden': 896,
      'rl.reward.enabled': true,
      'rl.reward.layers': 16,
    });
  });

  it('errors name the key', () => {
    const base =
      'python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2';
    expect(
      error('verl', 'python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2').path,
    ).toBe('actor_rollout_ref.rollout.name');
    expect(error('verl', 'python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm').path).toBe(
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
    );
    expect(error('verl', `${base} algorithm.adv_estimator=dpo`).path).toBe('algorithm.adv_estimator');
    expect(error('verl', `${base} actor_rollout_ref.actor.strategy=megatron`).path).toBe(
      'actor_rollout_ref.actor.strategy',
    );
    expect(error('verl', `${base} actor_rollout_ref.rollout.gpu_memory_utilization=1.2`).path).toBe(
      'actor_rollout_ref.rollout.gpu_memory_utilization',
    );
    expect(error('verl', `${base} data.train_batch_size=0`).path).toBe('data.train_batch_size');
    expect(error('verl', 'echo hello').message).toContain('no command runs verl.trainer.main_ppo');
  });

  it('unknown keys, unresolved interpolations and approximations are reported', () => {
    const r = ok(
      'verl',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable the script leaves unset
      'python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 algorithm.adv_estimator=remax actor_rollout_ref.actor.foo=1 actor_rollout_ref.rollout.n=${N}',
    );
    expect(r.unsupported.join('\n')).toMatch(/algorithm\.adv_estimator: remax: no critic; counted as grpo/);
    expect(r.unsupported.join('\n')).toContain('actor_rollout_ref.actor.foo: not a verl key llmem maps');
    expect(r.unsupported.join('\n')).toContain('actor_rollout_ref.rollout.n: its value');
  });
});

const OPENRLHF = `ray job submit --address="http://127.0.0.1:8265" \\
   -- python3 -m openrlhf.cli.train_ppo_ray \\
   --ref_num_nodes 1 --ref_num_gpus_per_node 8 \\
   --actor_num_nodes 1 --actor_num_gpus_per_node 8 \\
   --vllm_num_engines 4 --vllm_tensor_parallel_size 2 \\
   --colocate_all_models --vllm_enable_sleep --deepspeed_enable_sleep \\
   --vllm_gpu_memory_utilization 0.6 \\
   --pretrain meta-llama/Llama-3.1-8B-Instruct \\
   --reward_pretrain meta-llama/Llama-3.2-1B \\
   --micro_train_batch_size 4 --train_batch_size 128 \\
   --micro_rollout_batch_size 8 --rollout_batch_size 256 \\
   --n_samples_per_prompt 4 \\
   --advantage_estimator group_norm \\
   --prompt_max_len 1024 --generate_max_len 1024 \\
   --zero_stage 3 --bf16 --flash_attn --gradient_checkpointing \\
   --adam_offload --packing_samples --init_kl_coef 0.01 --ref_reward_offload \\
   --actor_learning_rate 5e-7
`;

describe('OpenRLHF', () => {
  it('train_ppo_ray: every mapped flag', () => {
    const r = ok('openrlhf', OPENRLHF);
    expect(r.flat).toMatchObject({
      'model.preset': expect.stringMatching(/^llama-3\.1-8b/),
      'runtime.framework': 'deepspeed',
      'rl.algorithm': 'grpo',
      'parallel.gpus': 8,
      'parallel.engine': 'deepspeed',
      'parallel.zero_stage': 3,
      'parallel.offload_optimizer': 'cpu',
      'training.micro_batch': 4,
      'training.dtype': 'bf16',
      'training.attention': 'flash',
      'training.recompute': 'full',
      'training.seq_len': 2048,
      'rl.group_size': 4,
      'rl.rollout_batch': 256,
      'rl.mini_batch': 32,
      'rl.logprob_micro_batch': 8,
      'rl.prompt_len': 1024,
      'rl.response_len': 1024,
      'rl.remove_padding': true,
      'rl.rollout.placement': 'colocated',
      'rl.rollout.tp': 2,
      'rl.rollout.gpu_memory_utilization': 0.6,
      'rl.rollout.sleep': 'level1',
      'rl.actor.param_offload': true,
      'rl.actor.optimizer_offload': true,
      'rl.reference.enabled': true,
      'rl.reference.param_offload': true,
      'rl.reward.enabled': true,
      'rl.reward.param_offload': true,
      'rl.reward.layers': 16,
    });
    expect(r.unsupported).toEqual([]);
    expect(detectKind('train.sh', OPENRLHF)).toBe('openrlhf');
    estimates(r.config);
  });

  it('dynamic batches hold one whole sequence; separate models reported', () => {
    const r = ok(
      'openrlhf',
      'python3 -m openrlhf.cli.train_ppo_ray --pretrain Qwen/Qwen3-4B --vllm_num_engines 2 --use_dynamic_batch --train_max_tokens_per_gpu 1024 --max_len 4096 --max_new_tokens 3072 --advantage_estimator rloo --n_samples_per_prompt 4',
    );
    expect(r.flat).toMatchObject({
      'rl.max_tokens_per_gpu': 4096,
      'rl.logprob_max_tokens_per_gpu': 4096,
      'rl.prompt_len': 1024,
      'rl.response_len': 3072,
      'rl.rollout.placement': 'separate',
    });
    expect(r.unsupported.join('\n')).toContain('--colocate_all_models: absent');
  });

  it('train_dpo: pairs, the reference offloaded', () => {
    const r = ok(
      'openrlhf',
      `read -r -d '' cmd <<EOF
openrlhf.cli.train_dpo \\
   --pretrain meta-llama/Llama-3.1-8B \\
   --train_batch_size 64 --micro_train_batch_size 2 --max_len 4096 \\
   --zero_stage 3 --param_dtype bf16 --ref_offload --beta 0.1 \\
   --lora_rank 16 --target_modules q_proj k_proj v_proj
EOF
deepspeed --module $cmd`,
      4,
    );
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'dpo',
      'parallel.gpus': 4,
      'rl.rollout_batch': 64,
      'rl.mini_batch': 64,
      'training.micro_batch': 2,
      'training.seq_len': 4096,
      'rl.reference.param_offload': true,
      'training.finetune.method': 'lora',
      'training.finetune.lora_targets': ['q', 'k', 'v'],
    });
    estimates(r.config);
  });

  it('errors name the flag', () => {
    const base = 'python3 -m openrlhf.cli.train_ppo_ray --pretrain Qwen/Qwen3-4B --vllm_num_engines 1';
    expect(error('openrlhf', `${base} --advantage_estimator ppo`).path).toBe('--advantage_estimator');
    expect(error('openrlhf', `${base} --n_samples_per_prompt 3 --train_batch_size 128`).path).toBe(
      '--train_batch_size',
    );
    expect(error('openrlhf', `${base} --zero_stage x`).path).toBe('--zero_stage');
    expect(error('openrlhf', `${base} --max_len 1024 --max_new_tokens 2048`).path).toBe('--max_new_tokens');
    expect(error('openrlhf', `${base} --vllm_gpu_memory_utilization 2`).path).toBe('--vllm_gpu_memory_utilization');
    expect(error('openrlhf', 'python3 -m openrlhf.cli.train_sft --pretrain x').message).toContain(
      'not an RL or DPO trainer',
    );
    // the grouped flags (OpenRLHF ed62d0e2) are named as the script spells them
    expect(
      error(
        'openrlhf',
        'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --ds.zero_stage x',
      ).path,
    ).toBe('--ds.zero_stage');
    expect(error('openrlhf', 'echo hi').message).toContain('no command runs openrlhf');
  });
});

describe('verl export', () => {
  const RL_KEYS =
    /^(rl\.|training\.(micro_batch|dtype|master_weights|recompute|finetune\.|seq_len)|parallel\.(gpus|engine|cp|fsdp_))/;
  const pick = (c: Config) => Object.fromEntries(Object.entries(flatten(c as Json)).filter(([k]) => RL_KEYS.test(k)));

  it('round trip: verl overrides -> export -> import give the same rl and training keys', () => {
    const first = ok('verl', VERL);
    const resolved = resolveConfig(first.config);
    if (!resolved.ok) throw new Error(resolved.error.message);
    const out = exportConfig('verl', resolved.config, core.defaults(resolved.config));
    expect(out.unexpressed).toEqual([]);
    const back = ok('verl', out.text);
    const a = pick(first.config),
      b = pick(back.config);
    for (const [k, v] of Object.entries(a)) expect(b[k], k).toEqual(v);
  });

  it('the repository example configs export and import back', () => {
    for (const file of [
      'tests/configs/rl-grpo-qwen2.5-0.5b-1xh100.json',
      'tests/configs/rl-ppo-qwen2.5-0.5b-2xh100.json',
    ]) {
      const path = join(repoRoot(), file);
      if (!existsSync(path)) continue;
      const resolved = resolveConfig(JSON.parse(readFileSync(path, 'utf8')));
      if (!resolved.ok) throw new Error(resolved.error.message);
      const out = exportConfig('verl', resolved.config, core.defaults(resolved.config));
      const back = ok('verl', out.text);
      for (const k of [
        'rl.algorithm',
        'rl.group_size',
        'rl.rollout_batch',
        'rl.rollout.gpu_memory_utilization',
        'training.micro_batch',
      ])
        expect(back.flat[k], `${file} ${k}`).toEqual(flatten(resolved.config as Json)[k] ?? back.flat[k]);
      estimates(back.config);
    }
  });

  it('what verl cannot say is listed', () => {
    const r = ok('trl', GRPO.replace('vllm_mode: colocate', 'vllm_mode: server'), 4);
    const resolved = resolveConfig(r.config);
    if (!resolved.ok) throw new Error(resolved.error.message);
    const out = exportConfig('verl', resolved.config, core.defaults(resolved.config));
    expect(out.unexpressed.join('\n')).toContain('rl.rollout.placement');
    expect(out.unexpressed.join('\n')).toContain('rl.logits_response_only');
    expect(out.text).toMatch(/^python3 -m verl\.trainer\.main_ppo \\\n/);
  });
});

describe('CLI', () => {
  const cli = join(repoRoot(), 'build/js/bin/cli.js');
  const run = (args: string[], input?: string) =>
    execFileSync('node', [join(repoRoot(), 'bin/llmem.mjs'), ...args], {
      encoding: 'utf8',
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  it.skipIf(!existsSync(cli))('llmem import trl | verl | openrlhf FILE gives a config the core estimates', () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmem-rl-'));
    for (const [kind, text, extra] of [
      ['trl', GRPO, ['--world-size', '4']],
      ['verl', VERL, []],
      ['openrlhf', OPENRLHF, []],
    ] as const) {
      const file = join(dir, `${kind}.txt`);
      writeFileSync(file, text);
      const config = run(['import', kind, file, ...extra]);
      const est = run(['estimate', '-', '--json'], config);
      expect(JSON.parse(est).ok ?? true, kind).not.toBe(false);
    }
    const exported = run(['export', 'verl', '-'], run(['import', 'verl', join(dir, 'verl.txt')]));
    expect(exported).toContain('actor_rollout_ref.rollout.name=sglang');
  });
});
