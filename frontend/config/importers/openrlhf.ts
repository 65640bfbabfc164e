// OpenRLHF launch scripts (examples/scripts/train_*_ray*.sh, train_dpo_*.sh: `python3 -m
// openrlhf.cli.train_ppo_ray --flag value ...`, `deepspeed --module openrlhf.cli.train_dpo ...`)
// -> config v1 with the rl section. Flags and defaults: openrlhf/cli/train_ppo_ray.py and
// openrlhf/cli/train_dpo.py (OpenRLHF/OpenRLHF at d0e088b68ed19e796f429114ea7f4366de204ade);
// the older --prompt_max_len / --generate_max_len / --bf16 / --flash_attn spellings too; and the
// grouped flags of ed62d0e20dea08397251eba5e010ee9dabc4d048 (April 2026: --actor.num_gpus_per_node,
// --vllm.num_engines, --train.batch_size, ...), renamed to the flat flags they replace (GROUPED below).
// The training side is DeepSpeed (runtime.framework deepspeed: OpenRLHF's actor, critic,
// reference and reward models are DeepSpeed engines, openrlhf/utils/deepspeed/deepspeed.py).
import {
  applyLoraTargets,
  applyModelId,
  Draft,
  guard,
  ImportError,
  int,
  num,
  oneOf,
  type ImportResult,
} from './common.js';
import { applyDegree } from './parallel-degrees.js';
import {
  applySecondModel,
  divide,
  type Flags,
  generateWithoutEngine,
  parseFlags,
  seqLenFromRl,
  worldSize,
} from './rl-common.js';
import { runShell } from './shell.js';

type Program = 'ppo' | 'dpo';

/** The flags under their flat names (the parsers before ed62d0e2); `name` spells a flag as the script does. */
class Args extends Map<string, string[]> {
  constructor(
    entries: Iterable<[string, string[]]>,
    private readonly spell: (flag: string) => string,
  ) {
    super(entries);
  }
  /** `--flag` as the script writes it (grouped or flat), for messages. */
  name(flag: string): string {
    return `--${this.spell(flag)}`;
  }
}

interface Ctx {
  d: Draft;
  f: Args;
  program: Program;
  /** the script uses the grouped flags (OpenRLHF since ed62d0e2) */
  grouped: boolean;
  options: { worldSize?: number };
}

/** The flag's value ("" for a store_true flag given alone), or undefined when absent. */
function value(f: Flags, flag: string): string | undefined {
  const v = f.get(flag);
  if (!v) return undefined;
  return v.join(' ');
}
const on = (f: Flags, flag: string) => f.has(flag) && !['false', 'False', '0'].includes(value(f, flag) ?? '');
const intFlag = (f: Args, flag: string, dflt: number, min = 1) => {
  const v = value(f, flag);
  return v === undefined || v === '' ? dflt : int(v, f.name(flag), min);
};

// The grouped flags -> the flat flags they replace: the add_argument calls of openrlhf/cli/train_ppo_ray.py
// and train_dpo.py at ed62d0e2 against ed62d0e2^ (unchanged to 3c3be6234e0cb353e76bb8019947db9dfe99fca7).
// A grouped flag without a flat one is named here by its new leaf (reward_offload: --ref_reward_offload
// became --ref.offload and --reward.offload; optim, critic_optim, experts_implementation are new).
const SHARED: Record<string, string> = {
  'ckpt.output_dir': 'save_path',
  'ckpt.save_steps': 'save_steps',
  'ckpt.save_hf': 'save_hf_ckpt',
  'ckpt.disable_ds': 'disable_ds_ckpt',
  'ckpt.path': 'ckpt_path',
  'ckpt.max_num': 'max_ckpt_num',
  'ckpt.max_mem': 'max_ckpt_mem',
  'ckpt.load_enable': 'load_checkpoint',
  'logger.logging_steps': 'logging_steps',
  'logger.tensorboard_dir': 'use_tensorboard',
  'logger.wandb.key': 'use_wandb',
  'logger.wandb.org': 'wandb_org',
  'logger.wandb.group': 'wandb_group',
  'logger.wandb.project': 'wandb_project',
  'logger.wandb.run_name': 'wandb_run_name',
  'eval.steps': 'eval_steps',
  'eval.dataset': 'eval_dataset',
  'eval.split': 'eval_split',
  'train.seed': 'seed',
  'train.full_determinism_enable': 'full_determinism',
  'train.micro_batch_size': 'micro_train_batch_size',
  'train.batch_size': 'train_batch_size',
  'train.max_epochs': 'max_epochs',
  'data.disable_fast_tokenizer': 'disable_fast_tokenizer',
  'data.dataloader_num_workers': 'dataloader_num_workers',
  'data.max_len': 'max_len',
  'data.max_samples': 'max_samples',
  'data.input_template': 'input_template',
  'data.apply_chat_template': 'apply_chat_template',
  'ds.use_universal_ckpt': 'use_ds_universal_ckpt',
  'ds.zero_stage': 'zero_stage',
  'ds.deepcompile': 'deepcompile',
  'ds.param_dtype': 'param_dtype',
  'ds.zpg': 'zpg',
  'ds.adam_offload': 'adam_offload',
  'ds.attn_implementation': 'attn_implementation',
  'ds.experts_implementation': 'experts_implementation',
  'ds.use_liger_kernel': 'use_liger_kernel',
  'ds.grad_accum_dtype': 'grad_accum_dtype',
  'ds.overlap_comm': 'overlap_comm',
  'ds.tensor_parallel_size': 'ds_tensor_parallel_size',
  'ds.packing_samples': 'packing_samples',
  'ds.ring_attn_size': 'ring_attn_size',
  'ds.ring_attn_head_stride': 'ring_head_stride',
  'ds.load_in_4bit': 'load_in_4bit',
  'ds.lora.rank': 'lora_rank',
  'ds.lora.alpha': 'lora_alpha',
  'ds.lora.target_modules': 'target_modules',
  'ds.lora.dropout': 'lora_dropout',
  'ref.offload': 'ref_offload',
};
const GROUPED: Record<Program, Record<string, string>> = {
  ppo: {
    ...SHARED,
    'ref.num_nodes': 'ref_num_nodes',
    'ref.num_gpus_per_node': 'ref_num_gpus_per_node',
    'reward.num_nodes': 'reward_num_nodes',
    'reward.num_gpus_per_node': 'reward_num_gpus_per_node',
    'actor.num_nodes': 'actor_num_nodes',
    'actor.num_gpus_per_node': 'actor_num_gpus_per_node',
    'critic.num_nodes': 'critic_num_nodes',
    'critic.num_gpus_per_node': 'critic_num_gpus_per_node',
    'train.colocate_actor_ref': 'colocate_actor_ref',
    'train.colocate_critic_reward': 'colocate_critic_reward',
    'train.colocate_all': 'colocate_all_models',
    'vllm.num_engines': 'vllm_num_engines',
    'vllm.tensor_parallel_size': 'vllm_tensor_parallel_size',
    'vllm.sync_backend': 'vllm_sync_backend',
    'vllm.sync_with_ray': 'vllm_sync_with_ray',
    'vllm.enable_prefix_caching': 'enable_prefix_caching',
    'vllm.enforce_eager': 'enforce_eager',
    'vllm.enable_sleep': 'vllm_enable_sleep',
    'vllm.gpu_memory_utilization': 'vllm_gpu_memory_utilization',
    'algo.advantage.is_correction_enable': 'enable_vllm_is_correction',
    'algo.advantage.is_correction_threshold': 'vllm_is_truncated_threshold',
    'algo.advantage.is_correction_type': 'vllm_is_correction_type',
    'algo.advantage.estimator': 'advantage_estimator',
    'algo.advantage.no_std_norm': 'no_advantage_std_norm',
    'algo.advantage.lambd': 'lambd',
    'algo.advantage.gamma': 'gamma',
    'algo.kl.target': 'kl_target',
    'algo.kl.horizon': 'kl_horizon',
    'algo.kl.init_coef': 'init_kl_coef',
    'algo.kl.estimator': 'kl_estimator',
    'algo.kl.use_loss': 'use_kl_loss',
    'algo.dynamic_filtering_enable': 'dynamic_filtering',
    'algo.dynamic_filtering_range': 'dynamic_filtering_reward_range',
    'train.async_enable': 'async_train',
    'train.async_queue_size': 'async_queue_size',
    'train.partial_rollout_enable': 'partial_rollout',
    'train.enable_ema': 'enable_ema',
    'train.ema_beta': 'ema_beta',
    'train.dynamic_batch_enable': 'use_dynamic_batch',
    'train.max_tokens_per_gpu': 'train_max_tokens_per_gpu',
    'train.num_episodes': 'num_episodes',
    'train.agent_func_path': 'agent_func_path',
    'ckpt.best_metric_key': 'best_metric_key',
    'ds.enable_sleep': 'deepspeed_enable_sleep',
    'ds.value_head_prefix': 'value_head_prefix',
    'rollout.max_tokens_per_gpu': 'rollout_max_tokens_per_gpu',
    'rollout.batch_size': 'rollout_batch_size',
    'rollout.vllm_generate_batch_size': 'vllm_generate_batch_size',
    'rollout.micro_batch_size': 'micro_rollout_batch_size',
    'rollout.max_new_tokens': 'max_new_tokens',
    'rollout.top_p': 'top_p',
    'rollout.temperature': 'temperature',
    'rollout.n_samples_per_prompt': 'n_samples_per_prompt',
    'actor.model_name_or_path': 'pretrain',
    'actor.gradient_checkpointing_enable': 'gradient_checkpointing',
    'actor.gradient_checkpointing_reentrant': 'gradient_checkpointing_use_reentrant',
    'actor.eps_clip': 'eps_clip',
    'actor.eps_clip_low_high': 'eps_clip_low_high',
    'actor.dual_clip': 'dual_clip',
    'actor.policy_loss_type': 'policy_loss_type',
    'actor.aux_loss_coef': 'aux_loss_coef',
    'actor.entropy_coef': 'entropy_loss_coef',
    'actor.freeze_visual_encoder': 'freeze_visual_encoder',
    'actor.optim': 'optim',
    'actor.adam.lr': 'actor_learning_rate',
    'actor.adam.betas': 'adam_betas',
    'actor.lr_scheduler': 'lr_scheduler',
    'actor.lr_warmup_ratio': 'lr_warmup_ratio',
    'actor.max_norm': 'max_norm',
    'critic.optim': 'critic_optim',
    'critic.adam.lr': 'critic_learning_rate',
    'critic.model_name_or_path': 'critic_pretrain',
    'critic.value_clip': 'value_clip',
    'critic.freezing_steps': 'freezing_actor_steps',
    'critic.save_value_network': 'save_value_network',
    'reward.model_name_or_path': 'reward_pretrain',
    'reward.remote_url': 'remote_rm_url',
    'reward.offload': 'reward_offload',
    'reward.normalize_enable': 'normalize_reward',
    'reward.clip_range': 'reward_clip_range',
    'reward.overlong_buffer_len': 'overlong_buffer_len',
    'reward.overlong_penalty_factor': 'overlong_penalty_factor',
    'reward.stop_properly_penalty_coef': 'stop_properly_penalty_coef',
    'data.prompt_dataset': 'prompt_data',
    'data.prompt_probs': 'prompt_data_probs',
    'data.prompt_split': 'prompt_split',
    'data.input_key': 'input_key',
    'data.label_key': 'label_key',
    'data.image_key': 'image_key',
    'data.max_images_per_prompt': 'max_images_per_prompt',
    'eval.temperature': 'eval_temperature',
    'eval.n_samples_per_prompt': 'eval_n_samples_per_prompt',
  },
  dpo: {
    ...SHARED,
    'model.model_name_or_path': 'pretrain',
    'ref.model_name_or_path': 'ref_pretrain',
    'model.gradient_checkpointing_enable': 'gradient_checkpointing',
    'model.gradient_checkpointing_reentrant': 'gradient_checkpointing_use_reentrant',
    'model.beta': 'beta',
    'model.ipo_enable': 'ipo',
    'model.label_smoothing': 'label_smoothing',
    'model.aux_loss_coef': 'aux_loss_coef',
    'model.nll_loss_coef': 'nll_loss_coef',
    'adam.lr': 'learning_rate',
    'adam.betas': 'adam_betas',
    'adam.weight_decay': 'l2',
    'data.dataset': 'dataset',
    'data.dataset_probs': 'dataset_probs',
    'data.dataset_split': 'dataset_split',
    'data.prompt_key': 'prompt_key',
    'data.chosen_key': 'chosen_key',
    'data.rejected_key': 'rejected_key',
    'data.tokenizer_chat_template': 'tokenizer_chat_template',
  },
};
// Flat flags the grouped parsers still take (train_dpo.py keeps one optimizer: --optim, --lr_scheduler, ...);
// any other flat flag beside grouped ones is refused by argparse (unrecognized arguments).
const FLAT_IN_GROUPED: Record<Program, readonly string[]> = {
  ppo: ['local_rank', 'use_ms'],
  dpo: ['local_rank', 'use_ms', 'optim', 'lr_scheduler', 'lr_warmup_ratio', 'min_lr_ratio', 'max_norm'],
};
// Grouped flags with no flat one and no effect on per-GPU memory: optimizer hyperparameters and schedules.
const GROUPED_IGNORED = /^((actor|critic)\.)?(adam\.\w+|muon\.\w+|lr_scheduler|lr_warmup_ratio|min_lr_ratio|max_norm)$/;

/**
 * The flags of `argv` (after the trainer module) under their flat names. A script with a grouped flag
 * is read as one of the grouped parser: a flat flag it no longer takes is reported and dropped.
 */
function readFlags(words: string[], program: Program, d: Draft): { f: Args; grouped: boolean } {
  const raw = parseFlags(words);
  const grouped = [...raw.keys()].some((k) => k.includes('.'));
  if (!grouped) return { f: new Args(raw, (flag) => flag), grouped };
  const table = GROUPED[program];
  const back = new Map(Object.entries(table).map(([g, flat]) => [flat, g]));
  const out: [string, string[]][] = [];
  for (const [k, v] of raw) {
    const flat = table[k];
    if (flat !== undefined) out.push([flat, v]);
    else if (k.includes('.') || FLAT_IN_GROUPED[program].includes(k)) out.push([k, v]);
    else
      d.skip(
        `--${k}`,
        `a flat flag beside grouped ones: since ed62d0e2 ${program === 'dpo' ? 'train_dpo' : 'train_ppo_ray'} ${back.has(k) ? `takes --${back.get(k)} and ` : ''}refuses --${k} (unrecognized arguments); not applied`,
      );
  }
  return { f: new Args(out, (flag) => back.get(flag) ?? flag), grouped };
}

// advantage_estimator (train_ppo_ray.py choices) -> rl.algorithm. OpenRLHF's "reinforce" is REINFORCE++;
// group_norm is GRPO's advantage, dr_grpo its Dr. GRPO variant: no critic in any but gae.
const ESTIMATORS = {
  gae: 'ppo',
  reinforce: 'reinforce_pp',
  reinforce_baseline: 'reinforce_pp',
  rloo: 'rloo',
  group_norm: 'grpo',
  dr_grpo: 'grpo',
} as const;

/**
 * The mapping: each OpenRLHF flag read, and what it sets. Flags read together (the batch
 * sizes, the lengths) are listed under each; `apply` runs in table order.
 */
const MAPPING: { flags: string[]; to: string; program?: Program; apply: (c: Ctx) => void }[] = [
  {
    flags: ['pretrain'],
    to: 'model.preset',
    apply: ({ d, f }) => applyModelId(d, f.name('pretrain'), value(f, 'pretrain') ?? null),
  },
  {
    flags: ['advantage_estimator'],
    to: 'rl.algorithm (gae ppo; reinforce, reinforce_baseline reinforce_pp; rloo; group_norm, dr_grpo grpo; train_dpo dpo)',
    apply: ({ d, f, program }) => {
      if (program === 'dpo') d.set('rl.algorithm', 'dpo');
      else {
        const est = oneOf(
          value(f, 'advantage_estimator') ?? 'gae',
          f.name('advantage_estimator'),
          Object.keys(ESTIMATORS),
        );
        d.set('rl.algorithm', ESTIMATORS[est as keyof typeof ESTIMATORS]);
      }
    },
  },
  {
    flags: ['actor_num_nodes', 'actor_num_gpus_per_node'],
    to: 'parallel.gpus (nodes x GPUs per node), parallel.gpus_per_node',
    program: 'ppo',
    apply: ({ d, f, options }) => {
      const perNode = intFlag(f, 'actor_num_gpus_per_node', 8);
      worldSize(d, intFlag(f, 'actor_num_nodes', 1) * perNode, options.worldSize, 'OpenRLHF');
      d.set('parallel.gpus_per_node', perNode);
    },
  },
  {
    flags: ['n_samples_per_prompt'],
    to: 'rl.group_size',
    program: 'ppo',
    apply: ({ d, f }) => d.set('rl.group_size', intFlag(f, 'n_samples_per_prompt', 1)),
  },
  {
    flags: ['rollout_batch_size', 'train_batch_size'],
    to: 'rl.rollout_batch (prompts); rl.mini_batch = train_batch_size / n_samples_per_prompt (prompts per optimizer step)',
    program: 'ppo',
    apply: ({ d, f }) => {
      d.set('rl.rollout_batch', intFlag(f, 'rollout_batch_size', 1024));
      const n = intFlag(f, 'n_samples_per_prompt', 1);
      const train = intFlag(f, 'train_batch_size', 128);
      d.set(
        'rl.mini_batch',
        divide(
          train,
          n,
          f.name('train_batch_size'),
          'samples per optimizer step must be whole prompts of n_samples_per_prompt',
        ),
      );
    },
  },
  {
    flags: ['train_batch_size'],
    to: 'rl.rollout_batch, rl.mini_batch (preference pairs per optimizer step)',
    program: 'dpo',
    apply: ({ d, f, options }) => {
      worldSize(d, undefined, options.worldSize, 'A DeepSpeed launch (deepspeed --module)');
      const train = intFlag(f, 'train_batch_size', 128);
      d.set('rl.rollout_batch', train);
      d.set('rl.mini_batch', train);
    },
  },
  {
    flags: ['micro_train_batch_size'],
    to: 'training.micro_batch (sequences per GPU; pairs for DPO)',
    // train_ppo_ray.py's default: 4 at d0e088b6, 1 in the grouped parser (train_dpo.py: 8 in both)
    apply: ({ d, f, program, grouped }) =>
      d.set('training.micro_batch', intFlag(f, 'micro_train_batch_size', program === 'dpo' ? 8 : grouped ? 1 : 4)),
  },
  {
    flags: ['micro_rollout_batch_size'],
    to: 'rl.logprob_micro_batch (the experience maker: reference, reward, critic and old log-probs)',
    program: 'ppo',
    // train_ppo_ray.py's default: 8 at d0e088b6, 1 in the grouped parser
    apply: ({ d, f, grouped }) =>
      d.set('rl.logprob_micro_batch', intFlag(f, 'micro_rollout_batch_size', grouped ? 1 : 8)),
  },
  {
    flags: ['prompt_max_len', 'generate_max_len', 'max_len', 'max_new_tokens'],
    to: 'rl.prompt_len, rl.response_len',
    apply: lengths,
  },
  {
    flags: ['zero_stage'],
    to: 'parallel.engine deepspeed, parallel.zero_stage',
    apply: ({ d, f }) => {
      d.set('parallel.engine', 'deepspeed');
      d.set('parallel.zero_stage', intFlag(f, 'zero_stage', 2, 0));
    },
  },
  {
    flags: ['adam_offload'],
    to: 'parallel.offload_optimizer cpu',
    apply: ({ d, f }) => {
      if (on(f, 'adam_offload')) d.set('parallel.offload_optimizer', 'cpu');
    },
  },
  {
    flags: ['gradient_checkpointing'],
    to: 'training.recompute full',
    apply: ({ d, f }) => d.set('training.recompute', on(f, 'gradient_checkpointing') ? 'full' : 'none'),
  },
  {
    flags: ['param_dtype', 'bf16'],
    to: 'training.dtype (bf16 | fp16; ZeRO keeps the fp32 master copy)',
    apply: ({ d, f }) => {
      const v = value(f, 'param_dtype');
      if (v !== undefined) d.set('training.dtype', oneOf(v, f.name('param_dtype'), ['bf16', 'fp16'] as const));
      else if (f.has('bf16')) d.set('training.dtype', 'bf16');
      else if (f.has('prompt_max_len') || f.has('generate_max_len'))
        d.set('training.dtype', 'fp16'); // older releases: fp16 unless --bf16
      else d.set('training.dtype', 'bf16'); // --param_dtype's default
    },
  },
  {
    flags: ['attn_implementation', 'flash_attn'],
    to: 'training.attention (flash unless eager)',
    apply: ({ d, f }) => {
      const v = value(f, 'attn_implementation');
      if (v !== undefined) d.set('training.attention', v === 'eager' ? 'eager' : 'flash');
      else if (f.has('flash_attn') || !f.has('prompt_max_len')) d.set('training.attention', 'flash');
      else d.set('training.attention', 'eager');
    },
  },
  {
    flags: ['packing_samples'],
    to: 'rl.remove_padding',
    apply: ({ d, f }) =>
      d.set(
        'rl.remove_padding',
        on(f, 'packing_samples') || on(f, 'use_dynamic_batch') || intFlag(f, 'ring_attn_size', 1) > 1,
      ),
  },
  {
    flags: ['use_dynamic_batch', 'train_max_tokens_per_gpu', 'rollout_max_tokens_per_gpu'],
    to: 'rl.max_tokens_per_gpu, rl.logprob_max_tokens_per_gpu (with use_dynamic_batch)',
    program: 'ppo',
    apply: ({ d, f }) => {
      if (!on(f, 'use_dynamic_batch')) return;
      // a sample longer than the budget gets a micro-batch of its own (openrlhf/utils/seqlen_balancing.py
      // get_minimum_num_micro_batch_size: first fit
      // up to the budget, a sample never split): the worst micro-batch is the larger of the two
      const longest = (d.get('rl.prompt_len') as number) + (d.get('rl.response_len') as number);
      for (const [flag, path, dflt] of [
        ['train_max_tokens_per_gpu', 'rl.max_tokens_per_gpu', 16192],
        ['rollout_max_tokens_per_gpu', 'rl.logprob_max_tokens_per_gpu', intFlag(f, 'train_max_tokens_per_gpu', 16192)],
      ] as const) {
        const budget = intFlag(f, flag, dflt);
        d.set(path, Math.max(budget, longest));
        if (budget < longest)
          d.note(
            `${f.name(flag)} ${budget} is below one whole sequence (${longest}): such a sample is a micro-batch of its own; ${path} ${longest}`,
          );
      }
    },
  },
  {
    flags: ['colocate_all_models', 'vllm_num_engines'],
    to: 'rl.rollout.placement (colocated with colocate_all_models and without async_train, else separate)',
    program: 'ppo',
    apply: ({ d, f }) => {
      const engines = value(f, 'vllm_num_engines');
      if (engines === undefined || int(engines, f.name('vllm_num_engines'), 0) === 0) {
        generateWithoutEngine(d, f.name('vllm_num_engines'), 'no vLLM engines');
        return;
      }
      d.set('rl.rollout.engine', 'vllm');
      // train_ppo_ray.py hands the placement group to create_vllm_engines only `if colocate_all and not async`
      const asyncColocated = on(f, 'colocate_all_models') && on(f, 'async_train');
      d.set('rl.rollout.placement', on(f, 'colocate_all_models') && !asyncColocated ? 'colocated' : 'separate');
      if (asyncColocated)
        d.note(
          `${f.name('colocate_all_models')} with ${f.name('async_train')}: only the DeepSpeed models share the GPUs; the vLLM engines run on GPUs of their own (train_ppo_ray.py): rl.rollout.placement separate`,
        );
    },
  },
  {
    flags: ['vllm_tensor_parallel_size'],
    to: 'rl.rollout.tp',
    program: 'ppo',
    apply: ({ d, f }) => d.set('rl.rollout.tp', intFlag(f, 'vllm_tensor_parallel_size', 1)),
  },
  {
    flags: ['vllm_gpu_memory_utilization'],
    to: 'rl.rollout.gpu_memory_utilization',
    program: 'ppo',
    apply: ({ d, f }) => {
      const v = value(f, 'vllm_gpu_memory_utilization');
      d.set(
        'rl.rollout.gpu_memory_utilization',
        v === undefined ? 0.95 : num(v, f.name('vllm_gpu_memory_utilization'), 0.01),
      );
      if (v !== undefined && Number(v) > 1)
        throw new ImportError(
          f.name('vllm_gpu_memory_utilization'),
          `${f.name('vllm_gpu_memory_utilization')}: must be at most 1`,
        );
    },
  },
  {
    flags: ['vllm_enable_sleep'],
    to: 'rl.rollout.sleep level1 (vllm_engine.py sleep(level=1); only with colocate_all_models)',
    program: 'ppo',
    apply: ({ d, f }) => {
      const sleep = on(f, 'vllm_enable_sleep') && on(f, 'colocate_all_models'); // else train_ppo_ray.py turns it off
      if (sleep && on(f, 'async_train'))
        throw new ImportError(
          f.name('vllm_enable_sleep'),
          `${f.name('vllm_enable_sleep')}: train_ppo_ray.py refuses it with ${f.name('async_train')} ("Async RLHF is not supported")`,
        );
      d.set('rl.rollout.sleep', sleep ? 'level1' : 'none');
    },
  },
  {
    flags: ['enforce_eager'],
    to: 'rl.rollout.cuda_graphs false',
    program: 'ppo',
    apply: ({ d, f }) => d.set('rl.rollout.cuda_graphs', !on(f, 'enforce_eager')),
  },
  {
    flags: ['deepspeed_enable_sleep'],
    to: 'rl.actor.param_offload, rl.actor.optimizer_offload (+ rl.critic.*): DeepSpeed states on the host between phases',
    program: 'ppo',
    apply: ({ d, f }) => {
      if (!on(f, 'deepspeed_enable_sleep')) return;
      d.set('rl.actor.param_offload', true);
      d.set('rl.actor.optimizer_offload', true);
      if (d.get('rl.algorithm') === 'ppo') {
        d.set('rl.critic.param_offload', true);
        d.set('rl.critic.optimizer_offload', true);
      }
    },
  },
  {
    flags: ['init_kl_coef', 'use_kl_loss'],
    to: 'rl.reference.enabled (a reference model exists when init_kl_coef > 0: train_ppo_ray.py)',
    program: 'ppo',
    apply: ({ d, f }) => {
      const v = value(f, 'init_kl_coef');
      d.set('rl.reference.enabled', (v === undefined ? 0.01 : num(v, f.name('init_kl_coef'), -Infinity)) > 0);
    },
  },
  {
    flags: ['ref_reward_offload', 'ref_offload', 'reward_offload'],
    to: 'rl.reference.param_offload, rl.reward.param_offload',
    apply: ({ d, f }) => {
      if (on(f, 'ref_reward_offload') || on(f, 'ref_offload')) d.set('rl.reference.param_offload', true);
      if (on(f, 'ref_reward_offload') || on(f, 'reward_offload')) d.set('rl.reward.param_offload', true);
    },
  },
  {
    flags: ['reward_pretrain', 'remote_rm_url', 'agent_func_path'],
    to: 'rl.reward.enabled, rl.reward.{layers,hidden,heads,kv_heads,ffn_hidden}',
    program: 'ppo',
    apply: ({ d, f }) => {
      const remote = f.has('remote_rm_url') || f.has('agent_func_path');
      const rm = value(f, 'reward_pretrain');
      d.set('rl.reward.enabled', !remote && rm !== undefined);
      if (!remote && rm !== undefined) {
        if (rm.includes(',')) d.skip(f.name('reward_pretrain'), 'several reward models: the first is counted');
        applySecondModel(d, 'reward', f.name('reward_pretrain'), rm.split(',')[0]);
      }
    },
  },
  {
    flags: ['critic_pretrain'],
    to: 'rl.critic.{layers,hidden,heads,kv_heads,ffn_hidden} (gae: critic_pretrain, else the reward model, else the actor)',
    program: 'ppo',
    apply: ({ d, f }) => {
      if (d.get('rl.algorithm') !== 'ppo') return;
      const remote = f.has('remote_rm_url') || f.has('agent_func_path');
      const critic = value(f, 'critic_pretrain') ?? (remote ? undefined : value(f, 'reward_pretrain')?.split(',')[0]);
      applySecondModel(
        d,
        'critic',
        f.name(f.has('critic_pretrain') ? 'critic_pretrain' : 'reward_pretrain'),
        critic ?? null,
      );
    },
  },
  {
    flags: ['lora_rank', 'target_modules', 'lora_dropout', 'load_in_4bit'],
    to: 'training.finetune.{method,lora_rank,lora_targets,lora_dropout,quant}',
    apply: ({ d, f }) => {
      const rank = intFlag(f, 'lora_rank', 0, 0);
      if (rank === 0) {
        d.set('training.finetune.method', 'full');
        return;
      }
      const four = on(f, 'load_in_4bit');
      d.set('training.finetune.method', four ? 'qlora' : 'lora');
      if (four) d.set('training.finetune.quant', 'nf4');
      d.set('training.finetune.lora_rank', rank);
      applyLoraTargets(d, f.name('target_modules'), f.get('target_modules') ?? 'all-linear');
      const dropout = value(f, 'lora_dropout');
      if (dropout !== undefined) d.set('training.finetune.lora_dropout', num(dropout, f.name('lora_dropout')));
    },
  },
  {
    flags: ['optim', 'critic_optim'],
    to: 'training.optimizer (adam adamw, muon muon; where given: --actor.optim, train_dpo --optim)',
    apply: ({ d, f }) => {
      const opt = value(f, 'optim');
      if (opt !== undefined) {
        const o = oneOf(opt, f.name('optim'), ['adam', 'muon'] as const);
        // DeepSpeed's Muon: a momentum buffer for the 2-D weights, AdamW for embeddings, head and 1-D ones
        // (OpenRLHF README.md; openrlhf/utils/deepspeed/deepspeed.py)
        d.set('training.optimizer', o === 'muon' ? 'muon' : 'adamw');
      }
      const critic = value(f, 'critic_optim');
      if (critic !== undefined && critic !== (opt ?? 'adam') && d.get('rl.algorithm') === 'ppo')
        d.skip(
          f.name('critic_optim'),
          `${critic}: the critic's optimizer differs from the actor's; llmem counts training.optimizer for both; not applied`,
        );
    },
  },
  {
    flags: ['dynamic_filtering', 'dynamic_filtering_reward_range'],
    to: '(nothing: each step still trains rollout_batch_size x n_samples_per_prompt samples; noted)',
    program: 'ppo',
    apply: ({ d, f }) => {
      if (on(f, 'dynamic_filtering'))
        d.note(
          `${f.name('dynamic_filtering')}: a prompt group whose mean reward falls outside the range is dropped and a new prompt generated in its place (openrlhf/trainer/ppo_utils/samples_generator.py), so each step still trains rollout_batch_size x n_samples_per_prompt samples: per-GPU memory unchanged`,
        );
    },
  },
  {
    flags: ['entropy_loss_coef'],
    to: 'rl.entropy (computed whenever the coefficient is given, 0 included)',
    program: 'ppo',
    apply: ({ d, f }) => d.set('rl.entropy', f.has('entropy_loss_coef')),
  },
  {
    flags: ['ds_tensor_parallel_size'],
    to: 'parallel.tp (DeepSpeed AutoTP)',
    apply: ({ d, f }) => {
      const tp = intFlag(f, 'ds_tensor_parallel_size', 1);
      if (tp > 1) applyDegree(d, f.name('ds_tensor_parallel_size'), 'parallel.tp', tp);
    },
  },
  {
    flags: ['ring_attn_size'],
    to: 'parallel.cp (ring attention)',
    apply: ({ d, f }) => {
      const cp = intFlag(f, 'ring_attn_size', 1);
      if (cp > 1) applyDegree(d, f.name('ring_attn_size'), 'parallel.cp', cp);
    },
  },
  {
    flags: ['overlap_comm'],
    to: 'parallel.overlap_comm',
    apply: ({ d, f }) => {
      if (on(f, 'overlap_comm')) d.set('parallel.overlap_comm', true);
    },
  },
];

/** Lengths: --prompt_max_len / --generate_max_len (until 2025), --max_len / --max_new_tokens (after). */
function lengths({ d, f, program }: Ctx): void {
  if (program === 'dpo') {
    // train_dpo.py: chosen and rejected are each prompt + response, cut to max_len (default 512)
    const total = intFlag(f, 'max_len', 512, 2);
    const prompt = value(f, 'prompt_max_len') !== undefined ? intFlag(f, 'prompt_max_len', 0) : Math.floor(total / 2);
    d.set('rl.prompt_len', Math.min(prompt, total - 1));
    d.set('rl.response_len', total - Math.min(prompt, total - 1));
    d.note(
      `${f.name('max_len')} ${total}: each chosen and rejected sequence is prompt + response up to ${total} tokens (rl.prompt_len + rl.response_len; DPO's logits cover both, so only the sum matters)`,
    );
    return;
  }
  if (f.has('prompt_max_len') || f.has('generate_max_len')) {
    d.set('rl.prompt_len', intFlag(f, 'prompt_max_len', 1024));
    d.set('rl.response_len', intFlag(f, 'generate_max_len', 1024));
    return;
  }
  const total = intFlag(f, 'max_len', 2048, 2);
  const response = value(f, 'max_new_tokens');
  if (response === undefined) {
    // max_new_tokens None: each prompt generates up to max_len minus its own length
    d.set('rl.prompt_len', Math.min(512, total - 1));
    d.set('rl.response_len', total - Math.min(512, total - 1));
    d.note(
      `${f.name('max_len')} ${total} without ${f.name('max_new_tokens')}: a response fills what its prompt leaves of ${total} tokens; rl.prompt_len ${Math.min(512, total - 1)} assumed (set it to the prompts' length)`,
    );
    return;
  }
  const resp = int(response, f.name('max_new_tokens'));
  if (resp >= total)
    throw new ImportError(
      f.name('max_new_tokens'),
      `${f.name('max_new_tokens')}: ${resp} leaves no prompt within ${f.name('max_len')} ${total}`,
    );
  d.set('rl.response_len', resp);
  d.set('rl.prompt_len', total - resp);
}

// Flags with no effect on per-GPU memory: data, logging, checkpoints, schedules, loss weights, sampling.
const IGNORED =
  /^(save_path|save_steps|save_hf_ckpt|disable_ds_ckpt|logging_steps|eval_steps|ckpt_path|max_ckpt_num|max_ckpt_mem|load_checkpoint|use_ds_universal_ckpt|local_rank|seed|full_determinism|disable_fast_tokenizer|max_epochs|num_episodes|max_samples|max_norm|l2|ptx_coef|eps_clip|eps_clip_low_high|dual_clip|value_clip|lambd|gamma|normalize_reward|top_p|temperature|freezing_actor_steps|save_value_network|actor_learning_rate|critic_learning_rate|learning_rate|lr_warmup_ratio|lr_scheduler|min_lr_ratio|kl_target|kl_horizon|policy_loss_type|kl_estimator|aux_loss_coef|adam_betas|reward_clip_range|no_advantage_std_norm|overlong_buffer_len|overlong_penalty_factor|stop_properly_penalty_coef|ring_head_stride|value_head_prefix|prompt_data|prompt_data_probs|prompt_split|eval_dataset|eval_split|eval_temperature|eval_n_samples_per_prompt|input_key|label_key|output_key|input_template|apply_chat_template|tokenizer_chat_template|use_wandb|wandb_.*|use_tensorboard|perf|use_ms|dynamic_filtering|dynamic_filtering_reward_range|enable_vllm_is_correction|vllm_is_truncated_threshold|vllm_is_correction_type|vllm_sync_backend|vllm_sync_with_ray|enable_prefix_caching|vllm_generate_batch_size|lora_alpha|gradient_checkpointing_use_reentrant|actor_init_on_gpu|ref_num_nodes|ref_num_gpus_per_node|reward_num_nodes|reward_num_gpus_per_node|critic_num_nodes|critic_num_gpus_per_node|dataset|dataset_probs|dataset_split|prompt_key|chosen_key|rejected_key|beta|ipo|label_smoothing|nll_loss_coef|enable_ema|ema_beta|n_samples_per_prompt_eval|max_new_tokens_eval|use_kl_loss|deepcompile|ref_pretrain|best_metric_key|dataloader_num_workers|image_key)$/;

// Flags read and reported with a reason of their own.
const NOT_MODELLED: Record<string, string> = {
  colocate_actor_ref: 'placement of the reference beside the actor only',
  colocate_critic_reward: 'placement of the critic beside the reward model only',
  async_train: 'asynchronous training keeps a rollout queue beside the training step; not modelled',
  partial_rollout: 'partial rollouts (vLLM paused mid-generation) are not modelled',
  use_liger_kernel: "Liger's kernels (fewer saved activations) are not modelled",
  grad_accum_dtype: "the optimizer's gradient-accumulation dtype is not mapped",
  zpg: 'ZeRO++ hierarchical partitioning (hpZ) is not modelled',
  async_queue_size: 'asynchronous training is not modelled',
  experts_implementation: "the MoE experts' kernel (grouped_mm, batched_mm, deepgemm) is not modelled",
  max_images_per_prompt: "image inputs (the vision encoder's activations, the image tokens) are not modelled",
  freeze_visual_encoder: 'a frozen vision encoder (no gradients or optimizer states for it) is not modelled',
};

// The trainer module as one word: python3 -m openrlhf.cli.train_ppo_ray, deepspeed --module openrlhf.cli.train_dpo,
// openrlhf/cli/train_dpo.py; the 2023 layout ran examples/train_*.py
const MODULE = /^(?:\S*\/)?openrlhf[./]cli[./]train_\w+(?:\.py)?$|(?:^|\/)train_\w+\.py$/;

/** The program a command runs: train_ppo_ray (and the deepspeed train_ppo), or train_dpo. */
function program(argv: string[]): Program | 'other' | undefined {
  const mod = argv.find((w) => MODULE.test(w));
  if (!mod) return undefined;
  const name = /train_(\w+?)(\.py)?$/.exec(mod)?.[1];
  if (name === 'ppo_ray' || name === 'ppo') return 'ppo';
  if (name === 'dpo') return 'dpo';
  return 'other';
}

const MAX_NESTED_SHELLS = 4;
const MAX_SHELL_STRINGS = 64; // -c strings read, all levels together: each is a script run of its own

/**
 * The commands a script runs, a `bash -c "..."` (or sh -c) string re-read as a script of its own: the
 * slurm launcher runs the trainer as `srun ... bash -c "pip install ... && ray job submit ... -- python3 -m
 * openrlhf.cli.train_ppo_ray ..."` (examples/scripts/train_ppo_ray_slurm.sh).
 */
function commands(text: string, notes: string[], depth = 0, read = { strings: 0 }): string[][] {
  const run = runShell(text);
  notes.push(...run.notes);
  const out: string[][] = [];
  for (const cmd of run.commands) {
    const words = cmd.filter(Boolean);
    const sh = words.findIndex((w) => /^(?:\S*\/)?(?:ba|da|z)?sh$/.test(w));
    const c = sh < 0 ? -1 : words.findIndex((w, i) => i > sh && /^-[a-z]*c[a-z]*$/.test(w));
    // a string that names no trainer is left as it is (srun ... bash -c "ray start ..." on each node)
    if (
      c < 0 ||
      c + 1 >= words.length ||
      !words.slice(sh + 1, c).every((w) => w.startsWith('-')) ||
      !/openrlhf|train_\w+/.test(words[c + 1])
    ) {
      out.push(words);
      continue;
    }
    if (depth >= MAX_NESTED_SHELLS || ++read.strings > MAX_SHELL_STRINGS)
      throw new ImportError(
        '',
        `OpenRLHF script: more than ${MAX_NESTED_SHELLS} nested or ${MAX_SHELL_STRINGS} ${words[sh]} -c strings`,
      );
    const inner = commands(words[c + 1], notes, depth + 1, read);
    if (inner.some((w) => program(w) !== undefined))
      notes.push(
        `${sh > 0 ? `${words[0]} ... ` : ''}${words[sh]} ${words[c]} "...": the trainer command is read from the string`,
      );
    out.push(...inner);
  }
  return out;
}

/** Import an OpenRLHF launch script (or its argument line). */
export function importOpenRlhf(text: string, options: { worldSize?: number } = {}): ImportResult {
  return guard(() => {
    const notes: string[] = [];
    const argv = commands(text, notes)
      .filter((w) => program(w) !== undefined)
      .at(-1);
    if (!argv)
      throw new ImportError(
        '',
        'OpenRLHF script: no command runs openrlhf.cli.train_ppo_ray, train_ppo or train_dpo (python3 -m, deepspeed --module, ray job submit)',
      );
    const prog = program(argv)!;
    if (prog === 'other')
      throw new ImportError(
        '',
        `OpenRLHF script: ${argv.find((w) => MODULE.test(w))} is not an RL or DPO trainer (train_ppo_ray, train_ppo, train_dpo are read)`,
      );
    const mod = argv.findIndex((w) => MODULE.test(w));
    const d = new Draft();
    d.stack('deepspeed');
    d.note('OpenRLHF trains with DeepSpeed engines (openrlhf/utils/deepspeed): the deepspeed profile');
    for (const n of notes) d.note(n);
    // the launcher's own flags (ray job submit --address, ...) come before the module
    const { f, grouped } = readFlags(argv.slice(mod + 1), prog, d);
    const c: Ctx = { d, f, program: prog, grouped, options };
    for (const [flag, v] of f)
      if (v.some((x) => x.includes('$')))
        if (IGNORED.test(flag) || GROUPED_IGNORED.test(flag)) d.ignore(f.name(flag));
        else d.skip(f.name(flag), `its value ${v.join(' ')} is not set in the file; not applied`);
    for (const key of [...f.keys()]) if (f.get(key)!.some((x) => x.includes('$'))) f.delete(key);
    for (const m of MAPPING) if (!m.program || m.program === prog) m.apply(c);
    if (prog === 'ppo' && d.get('rl.algorithm') !== 'ppo' && f.has('critic_pretrain'))
      d.note(
        `${f.name('critic_pretrain')}: no critic without ${f.name('advantage_estimator')} gae (train_ppo_ray.py drops it)`,
      );
    if (prog === 'ppo' && !on(f, 'colocate_all_models'))
      d.skip(
        f.name('colocate_all_models'),
        'absent: the reference, reward and critic models run on GPUs of their own; llmem counts every model on the actor GPUs (an upper bound for them)',
      );
    d.set('rl.logits_response_only', false); // OpenRLHF's actor forward returns the logits of every position
    seqLenFromRl(d);
    const mapped = new Set(MAPPING.filter((m) => !m.program || m.program === prog).flatMap((m) => m.flags));
    for (const flag of f.keys()) {
      if (mapped.has(flag)) continue;
      if (flag in NOT_MODELLED) d.skip(f.name(flag), `${NOT_MODELLED[flag]}; not applied`);
      else if (IGNORED.test(flag) || GROUPED_IGNORED.test(flag)) d.ignore(f.name(flag));
      else
        d.skip(
          f.name(flag),
          `not an OpenRLHF ${prog === 'dpo' ? 'train_dpo' : 'train_ppo_ray'} flag llmem maps; not applied`,
        );
    }
    return d.result();
  });
}

/** The mapping table, for the documentation and the tests: flag -> config v1 keys. */
export const OPENRLHF_MAPPING: readonly { flags: string[]; to: string; program?: Program }[] = MAPPING.map(
  ({ flags, to, program: p }) => ({ flags, to, program: p }),
);
