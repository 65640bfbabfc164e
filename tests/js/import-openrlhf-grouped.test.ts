// OpenRLHF's grouped flags (--actor.num_gpus_per_node, --vllm.num_engines, --train.batch_size, ...: OpenRLHF
// ed62d0e20dea08397251eba5e010ee9dabc4d048, April 2026) read as the flat flags they replace, and a trainer
// run inside `bash -c "..."` (examples/scripts/train_ppo_ray_slurm.sh). The verbatim scripts are in
// tests/fixtures/real/openrlhf/ (manifest.json); the configs go through the core.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core, Json } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { importConfig } from '../../frontend/config/importers/index.js';
import { flatten, importError, imported } from './import-helpers.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const fixture = (file: string) => readFileSync(join(repoRoot(), 'tests/fixtures/real/openrlhf', file), 'utf8');
const ok = (text: string, options: { worldSize?: number; modelFromHf?: boolean } = {}) =>
  imported('openrlhf', text, options);

/** The config through the core (model.preset given where the script's model is not in the catalog). */
function estimates(config: Config, preset?: string): void {
  const c = preset ? { ...config, model: { ...((config.model as object) ?? {}), preset } } : config;
  const resolved = resolveConfig(c as Config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
}

/** Grouped spellings -> flat, for comparing reports: the same line but for the flag's name. */
const unspell = (lines: string[], names: Record<string, string>) =>
  lines.map((l) => Object.entries(names).reduce((s, [g, f]) => s.split(`--${g}`).join(`--${f}`), l));

// the same run in both spellings (train_ppo_ray.py before and after ed62d0e2)
const FLAT = `ray job submit --address="http://127.0.0.1:8265" \\
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
   --max_len 2048 --max_new_tokens 1536 \\
   --zero_stage 3 --param_dtype bf16 --attn_implementation flash_attention_2 --gradient_checkpointing \\
   --adam_offload --packing_samples --init_kl_coef 0.01 --use_kl_loss --enforce_eager \\
   --use_dynamic_batch --train_max_tokens_per_gpu 8192 --rollout_max_tokens_per_gpu 16384 \\
   --lora_rank 16 --target_modules q_proj v_proj --entropy_loss_coef 0 \\
   --actor_learning_rate 5e-7 --colocate_actor_ref
`;
const NAMES: Record<string, string> = {
  'ref.num_nodes': 'ref_num_nodes',
  'ref.num_gpus_per_node': 'ref_num_gpus_per_node',
  'actor.num_nodes': 'actor_num_nodes',
  'actor.num_gpus_per_node': 'actor_num_gpus_per_node',
  'vllm.num_engines': 'vllm_num_engines',
  'vllm.tensor_parallel_size': 'vllm_tensor_parallel_size',
  'train.colocate_all': 'colocate_all_models',
  'vllm.enable_sleep': 'vllm_enable_sleep',
  'ds.enable_sleep': 'deepspeed_enable_sleep',
  'vllm.gpu_memory_utilization': 'vllm_gpu_memory_utilization',
  'actor.model_name_or_path': 'pretrain',
  'reward.model_name_or_path': 'reward_pretrain',
  'train.micro_batch_size': 'micro_train_batch_size',
  'train.batch_size': 'train_batch_size',
  'rollout.micro_batch_size': 'micro_rollout_batch_size',
  'rollout.batch_size': 'rollout_batch_size',
  'rollout.n_samples_per_prompt': 'n_samples_per_prompt',
  'algo.advantage.estimator': 'advantage_estimator',
  'data.max_len': 'max_len',
  'rollout.max_new_tokens': 'max_new_tokens',
  'ds.zero_stage': 'zero_stage',
  'ds.param_dtype': 'param_dtype',
  'ds.attn_implementation': 'attn_implementation',
  'actor.gradient_checkpointing_enable': 'gradient_checkpointing',
  'ds.adam_offload': 'adam_offload',
  'ds.packing_samples': 'packing_samples',
  'algo.kl.init_coef': 'init_kl_coef',
  'algo.kl.use_loss': 'use_kl_loss',
  'vllm.enforce_eager': 'enforce_eager',
  'train.dynamic_batch_enable': 'use_dynamic_batch',
  'train.max_tokens_per_gpu': 'train_max_tokens_per_gpu',
  'rollout.max_tokens_per_gpu': 'rollout_max_tokens_per_gpu',
  'ds.lora.rank': 'lora_rank',
  'ds.lora.target_modules': 'target_modules',
  'actor.entropy_coef': 'entropy_loss_coef',
  'actor.adam.lr': 'actor_learning_rate',
  'train.colocate_actor_ref': 'colocate_actor_ref',
};
const GROUPED = Object.entries(NAMES).reduce(
  (s, [g, f]) => s.replace(new RegExp(`--${f}(?=[ \\n=])`, 'g'), `--${g}`),
  FLAT,
);

describe('OpenRLHF grouped flags', () => {
  it('a grouped script imports as its flat spelling does (refused before: "grouped flags ... are not read yet")', () => {
    expect(GROUPED).toContain('--actor.num_gpus_per_node 8');
    expect(GROUPED).not.toMatch(/--(pretrain|colocate_all_models|zero_stage) /);
    const flat = ok(FLAT);
    const grouped = ok(GROUPED);
    expect(grouped.config).toEqual(flat.config);
    expect(unspell(grouped.unsupported, NAMES)).toEqual(flat.unsupported);
    expect(grouped.flat).toMatchObject({
      'model.preset': expect.stringMatching(/^llama-3\.1-8b/),
      'rl.algorithm': 'grpo',
      'parallel.gpus': 8,
      'parallel.gpus_per_node': 8,
      'parallel.zero_stage': 3,
      'parallel.offload_optimizer': 'cpu',
      'training.micro_batch': 4,
      'training.dtype': 'bf16',
      'training.attention': 'flash',
      'training.recompute': 'full',
      'training.finetune.method': 'lora',
      'training.finetune.lora_rank': 16,
      'training.finetune.lora_targets': ['q', 'v'],
      'rl.group_size': 4,
      'rl.rollout_batch': 256,
      'rl.mini_batch': 32,
      'rl.logprob_micro_batch': 8,
      'rl.prompt_len': 512,
      'rl.response_len': 1536,
      'rl.max_tokens_per_gpu': 8192,
      'rl.logprob_max_tokens_per_gpu': 16384,
      'rl.remove_padding': true,
      'rl.entropy': true,
      'rl.rollout.engine': 'vllm',
      'rl.rollout.placement': 'colocated',
      'rl.rollout.tp': 2,
      'rl.rollout.gpu_memory_utilization': 0.6,
      'rl.rollout.sleep': 'level1',
      'rl.rollout.cuda_graphs': false,
      'rl.actor.param_offload': true,
      'rl.actor.optimizer_offload': true,
      'rl.reference.enabled': true,
      'rl.reward.enabled': true,
      'rl.reward.layers': 16,
    });
    // messages name the flag as the script spells it
    expect(grouped.unsupported.join('\n')).toContain('--train.colocate_actor_ref: placement of the reference');
    expect(grouped.notes.join('\n')).toContain('--actor.model_name_or_path "meta-llama/Llama-3.1-8B-Instruct"');
    estimates(grouped.config);
  });

  it('the current official REINFORCE++-baseline script imports as its flat predecessor (d0e088b6) did', () => {
    const now = ok(fixture('train_reinforce_baseline_hybrid_engine-2026-04.sh'));
    const before = ok(fixture('train_reinforce_baseline_hybrid_engine.sh'));
    expect(now.config).toEqual(before.config);
    // ring attention over 2 ranks beside DeepSpeed (ring-flash-attn): parallel.cp 2, a K/V ring
    expect(before.unsupported).toEqual([]);
    expect(now.unsupported).toEqual([]);
    expect((now.config.parallel as Config).cp).toBe(2);
    estimates(now.config);
  });

  it('train_ppo_ray defaults of the grouped parser: micro-batches of 1 (4 and 8 at d0e088b6)', () => {
    const base = 'python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 8 --actor.model_name_or_path Qwen/Qwen3-4B';
    const r = ok(base);
    expect(r.flat).toMatchObject({
      'training.micro_batch': 1,
      'rl.logprob_micro_batch': 1,
      'rl.rollout_batch': 1024,
      'rl.mini_batch': 128,
      'rl.group_size': 1,
      'rl.prompt_len': 512,
      'rl.response_len': 1536,
      'rl.rollout.gpu_memory_utilization': 0.95,
      'rl.rollout.placement': 'separate',
      'parallel.gpus': 8,
      'parallel.zero_stage': 2,
      'training.dtype': 'bf16',
      'training.recompute': 'none',
      'rl.algorithm': 'ppo',
    });
    expect(r.unsupported.join('\n')).toContain('--train.colocate_all: absent');
    const flat = ok('python3 -m openrlhf.cli.train_ppo_ray --vllm_num_engines 8 --pretrain Qwen/Qwen3-4B');
    expect(flat.flat).toMatchObject({ 'training.micro_batch': 4, 'rl.logprob_micro_batch': 8 });
    expect(flat.unsupported.join('\n')).toContain('--colocate_all_models: absent');
  });

  it('train_dpo: the current official script (modelFromHf: its model is not in the catalog)', () => {
    const text = fixture('train_dpo_llama-2026-04.sh');
    expect(importError('openrlhf', text).path).toBe('--model.model_name_or_path');
    const r = ok(text, { modelFromHf: true });
    expect(r.flat).toEqual({
      'runtime.framework': 'deepspeed',
      'rl.algorithm': 'dpo',
      'rl.rollout_batch': 256,
      'rl.mini_batch': 256,
      'rl.prompt_len': 4096,
      'rl.response_len': 4096,
      'rl.remove_padding': true,
      'rl.logits_response_only': false,
      'parallel.gpus': 8,
      'parallel.engine': 'deepspeed',
      'parallel.zero_stage': 3,
      'training.micro_batch': 1,
      'training.recompute': 'full',
      'training.dtype': 'bf16',
      'training.attention': 'flash',
      'training.finetune.method': 'full',
      'training.seq_len': 8192,
    });
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('--data.max_len 8192: each chosen and rejected sequence');
    estimates(r.config, 'llama-3-8b');
  });

  it('train_dpo grouped flags: the reference offloaded, LoRA, Muon (--optim)', () => {
    const r = ok(
      `read -r -d '' cmd <<EOF
openrlhf.cli.train_dpo \\
   --model.model_name_or_path meta-llama/Llama-3.1-8B \\
   --train.batch_size 64 --train.micro_batch_size 2 --data.max_len 4096 \\
   --ds.zero_stage 2 --ds.param_dtype bf16 --ref.offload --model.beta 0.1 \\
   --ds.lora.rank 16 --ds.lora.target_modules q_proj k_proj v_proj --ds.lora.dropout 0.05 \\
   --optim muon --muon.lr 0.02 --max_norm 0 --adam.lr 5e-7 --model.gradient_checkpointing_enable
EOF
deepspeed --module $cmd`,
      { worldSize: 4 },
    );
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'dpo',
      'parallel.gpus': 4,
      'rl.rollout_batch': 64,
      'training.micro_batch': 2,
      'training.seq_len': 4096,
      'training.optimizer': 'muon',
      'training.recompute': 'full',
      'rl.reference.param_offload': true,
      'training.finetune.method': 'lora',
      'training.finetune.lora_rank': 16,
      'training.finetune.lora_dropout': 0.05,
      'training.finetune.lora_targets': ['q', 'k', 'v'],
    });
    expect(r.unsupported).toEqual([]);
    estimates(r.config);
  });

  it('--actor.optim muon sets training.optimizer; a critic on another optimizer is reported', () => {
    const base =
      'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 8 --train.colocate_all';
    const r = ok(`${base} --actor.optim muon --actor.muon.lr 0.02 --actor.max_norm 0 --critic.optim adam`);
    expect(r.flat['training.optimizer']).toBe('muon');
    expect(r.unsupported).toEqual([
      "--critic.optim: adam: the critic's optimizer differs from the actor's; llmem counts training.optimizer for both; not applied",
    ]);
    estimates(r.config);
    expect(ok(`${base} --actor.optim adam`).flat['training.optimizer']).toBe('adamw');
    expect(ok(base).flat['training.optimizer']).toBeUndefined();
    // no critic without gae: its optimizer does not matter
    expect(
      ok(`${base} --algo.advantage.estimator group_norm --rollout.n_samples_per_prompt 8 --critic.optim muon`)
        .unsupported,
    ).toEqual([]);
  });

  it('--ref.offload and --reward.offload (once --ref_reward_offload)', () => {
    const base =
      'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --reward.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 8 --train.colocate_all';
    expect(ok(`${base} --ref.offload`).flat).toMatchObject({ 'rl.reference.param_offload': true });
    expect(ok(`${base} --ref.offload`).flat['rl.reward.param_offload']).toBeUndefined();
    expect(ok(`${base} --reward.offload`).flat).toMatchObject({ 'rl.reward.param_offload': true });
    expect(ok(`${base} --reward.offload`).flat['rl.reference.param_offload']).toBeUndefined();
  });

  it('asynchronous training: vLLM off the shared GPUs; its sleep refused as train_ppo_ray.py refuses it', () => {
    const base =
      'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --actor.num_gpus_per_node 4 --vllm.num_engines 2 --vllm.tensor_parallel_size 2 --train.colocate_all';
    const r = ok(`${base} --train.async_enable --ds.enable_sleep`);
    expect(r.flat).toMatchObject({
      'rl.rollout.placement': 'separate',
      'rl.rollout.sleep': 'none',
      'rl.actor.param_offload': true,
    });
    expect(r.notes.join('\n')).toContain('--train.colocate_all with --train.async_enable: only the DeepSpeed models');
    expect(r.unsupported.join('\n')).toContain('--train.async_enable: asynchronous training');
    estimates(r.config);
    expect(ok(base).flat['rl.rollout.placement']).toBe('colocated');
    // the flat spelling too
    expect(
      ok(
        'python3 -m openrlhf.cli.train_ppo_ray --pretrain Qwen/Qwen3-4B --vllm_num_engines 8 --colocate_all_models --async_train',
      ).flat['rl.rollout.placement'],
    ).toBe('separate');
    expect(importError('openrlhf', `${base} --train.async_enable --vllm.enable_sleep`).path).toBe(
      '--vllm.enable_sleep',
    );
    // without colocation vLLM sleep is turned off, not refused
    expect(
      ok(
        'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 2 --train.async_enable --vllm.enable_sleep',
      ).flat['rl.rollout.sleep'],
    ).toBe('none');
  });

  it('dynamic filtering is noted: the batch trained on is unchanged', () => {
    const r = ok(
      'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 8 --train.colocate_all --rollout.n_samples_per_prompt 8 --algo.advantage.estimator group_norm --algo.dynamic_filtering_enable --algo.dynamic_filtering_range 0 1 --reward.remote_url http://rm',
    );
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('--algo.dynamic_filtering_enable: a prompt group whose mean reward');
    expect(r.flat).toMatchObject({ 'rl.rollout_batch': 1024, 'rl.mini_batch': 16, 'rl.reward.enabled': false });
  });

  it('errors name the grouped flag', () => {
    const base = 'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 1';
    expect(importError('openrlhf', `${base} --algo.advantage.estimator ppo`).path).toBe('--algo.advantage.estimator');
    expect(importError('openrlhf', `${base} --rollout.n_samples_per_prompt 3 --train.batch_size 128`).path).toBe(
      '--train.batch_size',
    );
    expect(importError('openrlhf', `${base} --ds.zero_stage x`).path).toBe('--ds.zero_stage');
    const e = importError('openrlhf', `${base} --data.max_len 1024 --rollout.max_new_tokens 2048`);
    expect(e.path).toBe('--rollout.max_new_tokens');
    expect(e.message).toContain('within --data.max_len 1024');
    expect(importError('openrlhf', `${base} --vllm.gpu_memory_utilization 2`).path).toBe(
      '--vllm.gpu_memory_utilization',
    );
    expect(importError('openrlhf', `${base} --ds.param_dtype fp8`).path).toBe('--ds.param_dtype');
    expect(importError('openrlhf', `${base} --actor.optim sgd`).path).toBe('--actor.optim');
    expect(
      importError('openrlhf', 'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path org/unknown-7b').path,
    ).toBe('--actor.model_name_or_path');
  });

  it('a flat flag beside grouped ones is reported, not applied (argparse refuses it); unknown grouped flags are reported', () => {
    const r = ok(
      'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 8 --train.colocate_all --zero_stage 3 --ref_reward_offload --local_rank 0 --actor.foo 1',
    );
    expect(r.flat['parallel.zero_stage']).toBe(2);
    expect(r.flat['rl.reference.param_offload']).toBeUndefined();
    expect(r.unsupported).toEqual([
      '--zero_stage: a flat flag beside grouped ones: since ed62d0e2 train_ppo_ray takes --ds.zero_stage and refuses --zero_stage (unrecognized arguments); not applied',
      '--ref_reward_offload: a flat flag beside grouped ones: since ed62d0e2 train_ppo_ray refuses --ref_reward_offload (unrecognized arguments); not applied',
      '--actor.foo: not an OpenRLHF train_ppo_ray flag llmem maps; not applied',
    ]);
    // train_dpo keeps its one optimizer's flags flat
    const dpo = ok(
      'deepspeed --module openrlhf.cli.train_dpo --model.model_name_or_path Qwen/Qwen3-4B --optim adam --max_norm 1.0 --lr_scheduler cosine --learning_rate 1e-6',
    );
    expect(dpo.unsupported).toEqual([
      '--learning_rate: a flat flag beside grouped ones: since ed62d0e2 train_dpo takes --adam.lr and refuses --learning_rate (unrecognized arguments); not applied',
    ]);
  });

  // every flag of the grouped parsers (openrlhf/cli/train_ppo_ray.py, train_dpo.py at
  // 3c3be6234e0cb353e76bb8019947db9dfe99fca7, the per-entity optimizer loop expanded), at its default
  // or a sample value: each is read (mapped, not modelled or without effect), none unknown
  const PPO_FLAGS = `ref.num_nodes=1 ref.num_gpus_per_node=8 reward.num_nodes=1 reward.num_gpus_per_node=8 train.colocate_actor_ref
actor.num_nodes=1 actor.num_gpus_per_node=8 critic.num_nodes=1 critic.num_gpus_per_node=8
train.colocate_critic_reward train.colocate_all vllm.num_engines=2 vllm.tensor_parallel_size=1
vllm.sync_backend=nccl vllm.sync_with_ray vllm.enable_prefix_caching vllm.enforce_eager vllm.enable_sleep
vllm.gpu_memory_utilization=0.95 algo.advantage.is_correction_enable
algo.advantage.is_correction_threshold=0.5 algo.advantage.is_correction_type=tis train.async_enable
train.async_queue_size=1 train.partial_rollout_enable eval.steps=-1 ckpt.save_steps=-1 logger.logging_steps=1
ckpt.path=./ckpt/checkpoints_ppo_ray ckpt.save_hf ckpt.disable_ds ckpt.max_num=3 ckpt.max_mem=1000
ckpt.load_enable ckpt.best_metric_key=k ds.use_universal_ckpt local_rank=-1 ds.zero_stage=2
actor.gradient_checkpointing_enable ds.deepcompile ds.param_dtype=bf16 train.enable_ema train.ema_beta=0.992
ds.zpg=1 ds.adam_offload ds.attn_implementation=flash_attention_2 ds.experts_implementation=grouped_mm
ds.use_liger_kernel ds.grad_accum_dtype=fp32 ds.overlap_comm actor.gradient_checkpointing_reentrant
data.disable_fast_tokenizer data.dataloader_num_workers=0 ds.enable_sleep ds.tensor_parallel_size=1
ds.packing_samples train.dynamic_batch_enable rollout.max_tokens_per_gpu=16384 train.max_tokens_per_gpu=16192
ds.load_in_4bit ds.lora.rank=0 ds.lora.alpha=16 ds.lora.target_modules=all-linear ds.lora.dropout=0
ckpt.output_dir=./ckpt train.num_episodes=1 rollout.batch_size=1024 rollout.vllm_generate_batch_size=1024
rollout.micro_batch_size=1 train.max_epochs=1 data.max_len=2048 rollout.max_new_tokens=1024
data.max_samples=1000 actor.eps_clip=0.2 actor.eps_clip_low_high=0.2 actor.dual_clip=3 critic.value_clip=0.5
algo.advantage.lambd=1 algo.advantage.gamma=1 train.micro_batch_size=1 train.batch_size=128
reward.normalize_enable rollout.top_p=1.0 rollout.temperature=1.0 train.seed=42 train.full_determinism_enable
critic.freezing_steps=-1 rollout.n_samples_per_prompt=1 critic.save_value_network algo.kl.target=0.1
algo.kl.horizon=10000 algo.kl.init_coef=0.01 actor.policy_loss_type=ppo algo.kl.estimator=k1
actor.aux_loss_coef=0 actor.entropy_coef=0 reward.clip_range=-10 algo.advantage.estimator=gae algo.kl.use_loss
algo.advantage.no_std_norm reward.overlong_buffer_len=1024 reward.overlong_penalty_factor=1
reward.stop_properly_penalty_coef=0 ds.ring_attn_size=1 ds.ring_attn_head_stride=1
actor.model_name_or_path=Qwen/Qwen3-4B reward.model_name_or_path=Qwen/Qwen3-4B reward.remote_url=http://rm
critic.model_name_or_path=Qwen/Qwen3-4B ds.value_head_prefix=score ref.offload reward.offload
train.agent_func_path=agent.py data.prompt_dataset=d data.prompt_probs=1.0 data.prompt_split=train
eval.dataset=e eval.split=train eval.temperature=0.6 eval.n_samples_per_prompt=4 data.input_key=input
data.label_key=label data.input_template=x data.apply_chat_template logger.wandb.key=k logger.wandb.org=o
logger.wandb.group=g logger.wandb.project=openrlhf_train_ppo logger.wandb.run_name=r
algo.dynamic_filtering_enable algo.dynamic_filtering_range=0 data.image_key=images
data.max_images_per_prompt=0 actor.freeze_visual_encoder logger.tensorboard_dir=runs use_ms actor.optim=adam
critic.optim=adam actor.muon.lr=0.02 critic.muon.lr=0.02 actor.muon.momentum=0.95 critic.muon.momentum=0.95
actor.muon.ns_steps=5 critic.muon.ns_steps=5 actor.muon.nesterov critic.muon.nesterov actor.muon.no_nesterov
critic.muon.no_nesterov actor.adam.lr=1e-06 critic.adam.lr=1e-06 actor.adam.betas=0.9 critic.adam.betas=0.9
actor.adam.eps=1e-08 critic.adam.eps=1e-08 actor.adam.weight_decay=0.0 critic.adam.weight_decay=0.0
actor.lr_scheduler=cosine_with_min_lr critic.lr_scheduler=cosine_with_min_lr actor.lr_warmup_ratio=0.03
critic.lr_warmup_ratio=0.03 actor.min_lr_ratio=0.1 critic.min_lr_ratio=0.1 actor.max_norm=1.0
critic.max_norm=1.0`;
  const DPO_FLAGS = `ckpt.output_dir=./ckpt ckpt.save_steps=-1 ckpt.save_hf ckpt.disable_ds logger.logging_steps=1 eval.steps=-1
ckpt.path=./ckpt/checkpoints_dpo ckpt.max_num=3 ckpt.max_mem=1000 ds.use_universal_ckpt
train.micro_batch_size=8 train.batch_size=128 ckpt.load_enable model.gradient_checkpointing_enable
ds.deepcompile train.seed=42 train.full_determinism_enable data.disable_fast_tokenizer
data.dataloader_num_workers=0 local_rank=-1 ds.zero_stage=2 ds.param_dtype=bf16 ref.offload ds.zpg=1
ds.adam_offload ds.attn_implementation=flash_attention_2 ds.experts_implementation=grouped_mm
ds.use_liger_kernel ds.grad_accum_dtype=fp32 ds.overlap_comm model.gradient_checkpointing_reentrant
ds.tensor_parallel_size=1 train.max_epochs=1 model.beta=0.1 model.ipo_enable model.label_smoothing=0.0
model.aux_loss_coef=0 model.nll_loss_coef=0 optim=adam muon.lr=0.02 muon.momentum=0.95 muon.ns_steps=5
muon.nesterov muon.no_nesterov adam.lr=1e-05 adam.betas=0.9 adam.eps=1e-08 adam.weight_decay=0.0
lr_scheduler=cosine_with_min_lr lr_warmup_ratio=0.03 min_lr_ratio=0.1 max_norm=1.0 ds.ring_attn_size=1
ds.ring_attn_head_stride=1 ds.load_in_4bit ds.lora.rank=0 ds.lora.alpha=16 ds.lora.target_modules=all-linear
ds.lora.dropout=0 ds.packing_samples model.model_name_or_path=Qwen/Qwen3-4B
ref.model_name_or_path=Qwen/Qwen3-4B data.dataset=d data.dataset_probs=1.0 eval.dataset=e
data.dataset_split=train eval.split=test data.max_samples=1000 data.prompt_key=prompt data.chosen_key=chosen
data.rejected_key=rejected data.input_template=x data.apply_chat_template data.tokenizer_chat_template=t
data.max_len=512 logger.wandb.key=k logger.wandb.org=o logger.wandb.group=g
logger.wandb.project=openrlhf_train_dpo logger.wandb.run_name=r logger.tensorboard_dir=runs use_ms`;

  for (const [prog, flags, base] of [
    [
      'train_ppo_ray',
      PPO_FLAGS,
      'python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 8',
    ],
    ['train_dpo', DPO_FLAGS, 'deepspeed --module openrlhf.cli.train_dpo --model.model_name_or_path Qwen/Qwen3-4B'],
  ] as const)
    it(`every flag of the grouped ${prog} parser is read`, () => {
      const words = flags.split(/\s+/);
      expect(words.length).toBe(prog === 'train_dpo' ? 82 : 164);
      for (const w of words) {
        const r = importConfig('openrlhf', `${base} --${w}`, {});
        if ('error' in r) throw new Error(`--${w}: ${r.error.message}`);
        const unknown = r.unsupported.filter((l) => /flag llmem maps|a flat flag beside/.test(l));
        expect(unknown, `--${w}`).toEqual([]);
      }
      // all at once, the async ones and vLLM sleep apart (train_ppo_ray.py refuses them together)
      const all = words.filter((w) => !/^(train\.async_enable|train\.partial_rollout_enable)$/.test(w));
      const r = ok(`${base} ${all.map((w) => `--${w}`).join(' ')}`);
      expect(r.unsupported.filter((l) => /flag llmem maps|a flat flag beside/.test(l))).toEqual([]);
      estimates(r.config);
    });
});

describe('OpenRLHF bash -c', () => {
  it('the current slurm script: the trainer inside srun ... bash -c "pip install ... && ray job submit ..."', () => {
    const text = fixture('train_ppo_ray_slurm-2026-06.sh');
    expect(importError('openrlhf', text).path).toBe('--actor.model_name_or_path');
    const r = ok(text, { modelFromHf: true });
    expect(r.flat).toEqual({
      'runtime.framework': 'deepspeed',
      'rl.algorithm': 'ppo',
      'rl.group_size': 1,
      'rl.rollout_batch': 1024,
      'rl.mini_batch': 128,
      'rl.logprob_micro_batch': 16,
      'rl.prompt_len': 512,
      'rl.response_len': 1536,
      'rl.remove_padding': true,
      'rl.rollout.engine': 'vllm',
      'rl.rollout.placement': 'separate',
      'rl.rollout.tp': 2,
      'rl.rollout.gpu_memory_utilization': 0.95,
      'rl.rollout.sleep': 'none',
      'rl.rollout.cuda_graphs': true,
      'rl.reference.enabled': true,
      'rl.reward.enabled': true,
      'rl.entropy': false,
      'rl.logits_response_only': false,
      'parallel.gpus': 4,
      'parallel.gpus_per_node': 4,
      'parallel.engine': 'deepspeed',
      'parallel.zero_stage': 3,
      'parallel.offload_optimizer': 'cpu',
      'training.micro_batch': 8,
      'training.recompute': 'full',
      'training.dtype': 'bf16',
      'training.attention': 'flash',
      'training.finetune.method': 'full',
      'training.seq_len': 2048,
    });
    expect(r.notes.join('\n')).toContain('srun ... bash -c "...": the trainer command is read from the string');
    expect(r.unsupported.map((l) => l.split(':')[0])).toEqual([
      '--reward.model_name_or_path',
      '--reward.model_name_or_path',
      '--train.colocate_all',
      '--train.colocate_critic_reward',
      '--train.colocate_actor_ref',
    ]);
    estimates(r.config, 'llama-3-8b');
  });

  // OpenRLHF/OpenRLHF examples/scripts/train_ppo_ray_slurm.sh at d0e088b68ed19e796f429114ea7f4366de204ade
  // (flat flags): its job submission and the variables it reads, verbatim; refused before as
  // "OpenRLHF script: pip install ray[default]==2.12.0 && ... is not an RL or DPO trainer"
  const SLURM_D0E088B6 = `OPENRLHF_PATH=<OPENRLHF_ROOT_PATH>
MOUNT="$OPENRLHF_PATH:/openrlhf,$HOME/.cache:/root/.cache"
IMAGE_NAME="nvcr.io/nvidia/pytorch:25.11-py3"
RAY_VERSION=2.12.0
JOBLOG="$(realpath .)/train_ppo_llama_ray-$SLURM_JOB_ID.log"
nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST") # Getting the node names
nodes_array=( $nodes )
node_1=\${nodes_array[0]}

# ===== submit ray job =====
# Job start
srun --overlap --nodes=1 --ntasks=1 -w "$node_1" --container-image="$IMAGE_NAME" --container-mounts="$MOUNT" bash -c \\
"pip install ray[default]==$RAY_VERSION \\
&& /root/.local/bin/ray job submit --address=http://localhost:8265 \\
    --runtime-env-json='{\\"working_dir\\": \\"/openrlhf\\", \\"pip\\": \\"/openrlhf/requirements.txt\\"}' \\
    -- python3 -m openrlhf.cli.train_ppo_ray \\
    --ref_num_nodes 1 \\
    --ref_num_gpus_per_node 4 \\
    --reward_num_nodes 1 \\
    --reward_num_gpus_per_node 4 \\
    --critic_num_nodes 1 \\
    --critic_num_gpus_per_node 4 \\
    --actor_num_nodes 1 \\
    --actor_num_gpus_per_node 4 \\
    --vllm_num_engines 4 \\
    --vllm_tensor_parallel_size 2 \\
    --colocate_critic_reward \\
    --colocate_actor_ref \\
    --pretrain OpenRLHF/Llama-3-8b-sft-mixture \\
    --reward_pretrain OpenRLHF/Llama-3-8b-rm-mixture \\
    --save_path /openrlhf/examples/checkpoint/llama3-8b-rlhf \\
    --micro_train_batch_size 8 \\
    --train_batch_size 128 \\
    --micro_rollout_batch_size 16 \\
    --rollout_batch_size 1024 \\
    --max_samples 100000 \\
    --max_epochs 1 \\
    --max_len 2048 \\
    --zero_stage 3 \\
    --param_dtype bf16 \\
    --actor_learning_rate 5e-7 \\
    --critic_learning_rate 9e-6 \\
    --init_kl_coef 0.01 \\
    --prompt_data OpenRLHF/prompt-collection-v0.1 \\
    --input_key context_messages \\
    --apply_chat_template \\
    --normalize_reward \\
    --adam_offload \\
    --packing_samples \\
    --vllm_sync_backend nccl \\
    --gradient_checkpointing \\
    --use_wandb {wandb_token}" &>> \${JOBLOG}
`;

  it('the older slurm script (flat flags, d0e088b6) imports as the current one does', () => {
    expect(importError('openrlhf', SLURM_D0E088B6).path).toBe('--pretrain');
    const old = ok(SLURM_D0E088B6, { modelFromHf: true });
    const now = ok(fixture('train_ppo_ray_slurm-2026-06.sh'), { modelFromHf: true });
    expect(old.config).toEqual(now.config);
    expect(old.notes.join('\n')).toContain('bash -c "...": the trainer command is read from the string');
    estimates(old.config, 'llama-3-8b');
  });

  it('-c strings: ; and && and nested shells; the launcher words before the trainer are not its flags', () => {
    const r = ok(
      `sh -c 'cd /w; pip install -e . && bash -lc "ray job submit --address=x -- python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen3-4B --vllm.num_engines 4 --actor.num_gpus_per_node 4 --train.colocate_all"'`,
    );
    expect(r.flat).toMatchObject({
      'model.preset': expect.stringMatching(/^qwen3-4b/),
      'parallel.gpus': 4,
      'rl.rollout.placement': 'colocated',
    });
    expect(r.unsupported).toEqual([]);
    // bounded: nesting, and -c strings in all
    const nest = (t: string, n: number): string => (n === 0 ? t : `bash -c ${JSON.stringify(nest(t, n - 1))}`);
    expect(importError('openrlhf', nest('python3 -m openrlhf.cli.train_ppo_ray', 6)).message).toContain('nested');
    expect(
      importError(
        'openrlhf',
        `for i in ${Array.from({ length: 70 }, (_, k) => k).join(' ')}; do bash -c "echo openrlhf $i"; done\npython3 -m openrlhf.cli.train_ppo_ray`,
      ).message,
    ).toContain('-c strings');
    // strings that name no trainer are not re-read: a node loop of ray start stays cheap
    expect(
      ok(
        `for n in ${Array.from({ length: 70 }, (_, k) => k).join(' ')}; do srun -w n$n bash -c "pip install ray && ray start --block" & done\npython3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 8`,
      ).flat['rl.rollout.engine'],
    ).toBe('vllm');
    expect(importError('openrlhf', `bash -c "pip install x && ray start --head"`).message).toContain(
      'no command runs openrlhf',
    );
    expect(
      importError('openrlhf', `bash -c "python3 -m openrlhf.cli.train_sft --model.model_name_or_path x"`).message,
    ).toBe(
      'OpenRLHF script: openrlhf.cli.train_sft is not an RL or DPO trainer (train_ppo_ray, train_ppo, train_dpo are read)',
    );
  });
});

// the flat-flag fixtures keep importing as before (import-real.test.ts checks every key)
it('flat fixtures unchanged: d0e088b6 REINFORCE++-baseline', () => {
  const r = ok(fixture('train_reinforce_baseline_hybrid_engine.sh'));
  expect(flatten(r.config as Json)['rl.rollout.placement']).toBe('colocated');
});
