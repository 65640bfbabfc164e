// ms-swift (ModelScope SWIFT) training command lines: `swift sft|pt|rlhf --flag value ...` in a launch script
// (`NPROC_PER_NODE=8 CUDA_VISIBLE_DEVICES=... swift sft \ --model ... \ --tuner_type lora ...`), or the same
// arguments after `torchrun ... swift/cli/sft.py` -> config v1. Arguments and defaults: ms-swift's dataclasses at
// modelscope/ms-swift@3602360a562313afbf2ef6065fdf61f271a2c5b9 (v4.6.0.dev0): swift/arguments/{sft_args,
// rlhf_args,tuner_args}.py, swift/arguments/base_args/{base_args,model_args,quant_args,template_args}.py,
// swift/trainers/arguments.py (TrainArgumentsMixin over transformers' Seq2SeqTrainingArguments),
// swift/rlhf_trainers/args_mixin.py (GRPO and vLLM), swift/cli/main.py (NPROC_PER_NODE / NNODES -> torchrun) and
// swift/config/*.json (the --deepspeed and --fsdp shorthands). ms-swift 3.x (swift/llm/argument/, v3.12.6 @
// 8773ecd08ef075a3c9b889ca967cd94e9c308fbd) spells --tuner_type --train_type; both are read. ms-swift trains with
// transformers' Trainer (swift/trainers): runtime.framework hf_trainer (config v1 has no ms-swift stack).
import type { Json } from '../../../wasm/llmem.js';
import { applyAllocConf } from './alloc-conf.js';
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
import { applyDeepSpeed } from './deepspeed.js';
import {
  agreeWorldSize,
  applyFullModules,
  applyLoraTargets,
  applyModelId,
  bool,
  Draft,
  applyImagePixels,
  draftHasVision,
  guard,
  ImportError,
  int,
  isObject,
  matchModelId,
  BNB_4BIT_SUFFIXES,
  num,
  oneOf,
  parseJsonText,
  type ImportResult,
  type Obj,
} from './common.js';
import { applyUlysses } from './parallel-degrees.js';
import { applySecondModel, launchCommand, parseFlags, seqLenFromRl } from './rl-common.js';
import {
  applyFsdpOption,
  applyOptim,
  applyDdpArgument,
  applyTrainingArgument,
  defaultToDdp,
  trainLoadedWeights,
} from './training-args.js';
import { applyDpo, applyGrpo, applyWeightSync, type PairTrainer } from './trl.js';

type Program = 'sft' | 'pt' | 'rlhf';
type Flags = Map<string, string[]>;

/**
 * The --deepspeed shorthands (sft_args.py _init_deepspeed: zero0 ... zero3_offload -> swift/config/<name>.json,
 * the same files as swift/llm/ds_config/ in v3.12.6): their zero_optimization sections, as written there. Their
 * other keys are "auto" (fp16, bf16, the batch sizes, gradient_clipping: the Trainer fills them from the command
 * line) or logging (steps_per_print, wall_clock_breakdown).
 */
const ZERO012 = (stage: number, offload: boolean): Obj => ({
  stage,
  ...(stage > 0 ? { offload_optimizer: { device: offload ? 'cpu' : 'none', pin_memory: true } } : {}),
  allgather_partitions: true,
  allgather_bucket_size: 2e8,
  overlap_comm: false,
  reduce_scatter: true,
  reduce_bucket_size: 2e8,
  contiguous_gradients: true,
});
const ZERO3 = (offload: boolean): Obj => ({
  stage: 3,
  offload_optimizer: { device: offload ? 'cpu' : 'none', pin_memory: true },
  offload_param: { device: offload ? 'cpu' : 'none', pin_memory: true },
  overlap_comm: false,
  contiguous_gradients: true,
  sub_group_size: 1e9,
  reduce_bucket_size: 'auto',
  stage3_prefetch_bucket_size: 'auto',
  stage3_param_persistence_threshold: 'auto',
  stage3_max_live_parameters: 1e9,
  stage3_max_reuse_distance: 1e9,
});
const DS_PRESETS: Record<string, Obj> = {
  zero0: { zero_optimization: ZERO012(0, false) },
  zero1: { zero_optimization: ZERO012(1, false) },
  zero2: { zero_optimization: ZERO012(2, false) },
  zero2_offload: { zero_optimization: ZERO012(2, true) },
  zero3: { zero_optimization: ZERO3(false) },
  zero3_offload: { zero_optimization: ZERO3(true) },
};
// --fsdp fsdp2 (swift/config/fsdp2.json): "full_shard auto_wrap" with FSDP2 and activation checkpointing
const FSDP2_PRESET: Obj = {
  fsdp_version: 2,
  reshard_after_forward: true,
  auto_wrap_policy: 'TRANSFORMER_BASED_WRAP',
  cpu_ram_efficient_loading: true,
  state_dict_type: 'SHARDED_STATE_DICT',
  activation_checkpointing: true,
};

// rlhf_type (rlhf_args.py: dpo, orpo, simpo, kto, cpo, rm, ppo, grpo, gkd) -> the TRL mapping it runs as
const PAIR: Record<string, PairTrainer> = { dpo: 'dpo', orpo: 'orpo', cpo: 'cpo', simpo: 'cpo' };
const REFUSED_RLHF: Record<string, string> = {
  kto: "KTO trains on unpaired samples with a KL batch forwarded beside them (trl KTOTrainer); llmem's RL algorithms (dpo, grpo, ppo, rloo, reinforce_pp) do not model it",
  ppo: "ms-swift's PPO (trl PPOTrainer: policy, value, reward and reference models, generation with transformers generate) is not mapped",
  gkd: 'GKD distils from a teacher model (its weights and logits beside the student) and is not modelled',
};
// tuner_type values (base_args.py get_supported_tuners) other than lora and full
const REFUSED_TUNERS: Record<string, string> = {
  longlora: 'LongLoRA (shifted sparse attention, trainable embeddings and norms beside the adapters)',
  adalora: 'AdaLoRA (rank allocation over SVD-shaped adapters)',
  llamapro: 'LLaMA-Pro (new decoder blocks trained in full)',
  adapter: 'bottleneck adapters',
  vera: 'VeRA (shared frozen random matrices, trained scaling vectors)',
  boft: 'BOFT (butterfly orthogonal fine-tuning)',
  fourierft: 'FourierFT (spectral coefficients)',
  reft: 'ReFT (representation interventions)',
  bone: 'Bone (block affine adapters)',
  // swift/tuner_plugin/mapping.py tuners_map: built in (no --external_plugins needed)
  lora_llm:
    'lora_llm (swift/tuner_plugin/lora_llm.py LoRALLMTuner: LoRA on the language model with the vision tower and aligner trained in full, in one run)',
  ia3: 'IA3 (swift/tuner_plugin/ia3.py: learned scaling vectors)',
  dummy: 'the dummy tuner (swift/tuner_plugin/dummy.py: the model returned as is, every parameter frozen)',
};

// Arguments with no effect on per-GPU memory: data, templates, logging, saving, evaluation, schedules, sampling,
// rewards and loss weights.
const IGNORED =
  /^(dataset|val_dataset|cached_dataset|cached_val_dataset|split_dataset_ratio|data_seed|dataset_num_proc|load_from_cache_file|dataset_shuffle|val_dataset_shuffle|streaming|interleave_prob|stopping_strategy|shuffle_buffer_size|download_mode|columns|strict|remove_unused_columns|model_name|model_author|custom_dataset_info|lazy_tokenize|template|system|truncation_strategy|agent_template|norm_bbox|use_chat_template|padding_side|loss_scale|is_binary_loss_scale|template_backend|response_prefix|enable_thinking|preserve_thinking|add_non_thinking_prefix|disable_ignore_empty_think|output_dir|add_version|create_checkpoint_symlink|num_train_epochs|max_steps|max_epochs|learning_rate|lr_scheduler_type|lr_scheduler_kwargs|warmup_ratio|warmup_steps|weight_decay|adam_beta1|adam_beta2|adam_epsilon|max_grad_norm|optim_args|seed|save_.*|eval_.*|per_device_eval_batch_size|logging_.*|log_.*|report_to|run_name|metric_for_best_model|greater_is_better|load_best_model_at_end|label_names|predict_with_generate|max_new_tokens|temperature|top_p|top_k|min_p|repetition_penalty|stop_words|dataloader_.*|ddp_.*|train_dataloader_shuffle|group_by_length|acc_strategy|early_stop_interval|callbacks|resume_from_checkpoint|resume_only_model|ignore_data_skip|load_args|load_data_args|use_hf|hub_.*|push_to_hub|model_revision|model_type|ms_hub_token|check_model|swanlab_.*|wandb_.*|external_plugins|custom_register_path|ignore_args_error|enable_npu_model_patch|safe_serialization|max_shard_size|lorap_lr_ratio|lora_alpha|use_rslora|init_weights|lora_ga_.*|aligner_lr|vit_lr|reward_funcs|reward_weights|reward_model_plugin|beta|label_smoothing|rpo_alpha|ld_alpha|discopop_tau|loss_weights|cpo_alpha|simpo_gamma|epsilon|epsilon_high|delta|num_iterations|importance_sampling_level|scale_rewards|advantage_reweight|kl_in_reward|overlong_filter|soft_max_length|soft_cache_length|cosine_.*|repetition_n_grams|repetition_max_penalty|tau_pos|tau_neg|dynamic_sample|max_resample_times|vllm_server_port|vllm_server_timeout|vllm_server_group_port|vllm_enable_prefix_caching|vllm_disable_custom_all_reduce|vllm_enforce_eager|vllm_limit_mm_per_prompt|vllm_reasoning_parser|vllm_disable_cascade_attn|vllm_mm_processor_cache_gb|vllm_server_pass_dataset|structured_outputs_regex|enable_flattened_weight_sync|num_generations_eval|rollout_importance_sampling_.*|off_policy_sequence_mask_delta|wandb_log_unique_prompts|multi_turn_scheduler|max_turns|completion_length_limit_scope|use_gym_env|gym_env|teacher_tag_key|fipo_.*|real_tau|sapo_.*|sdar_.*|rlsd_.*|router_aux_loss_coef|neftune_noise_alpha|gradient_checkpointing_kwargs|vit_gradient_checkpointing|problem_type|num_labels|new_special_tokens|rope_scaling|max_model_len|local_repo_path|bnb_4bit_compute_dtype|bnb_4bit_quant_storage|hqq_axis|deepspeed_autotp_size|zero_hpz_partition_size|packing_length|packing_num_proc|packing_strategy|use_logits_to_keep|mrl_dims|center_rewards_coefficient|desirable_weight|undesirable_weight|response_length|tuner_backend|adapters|ref_adapters|ref_model_type|ref_model_revision|use_flash_ckpt|vllm_max_lora_rank|vllm_enable_lora|lmbda|sft_alpha|seq_kd|gkd_logits_topk|whiten_rewards|kl_coef|cliprange|vf_coef|cliprange_value|gamma|lam|num_ppo_epochs|num_mini_batches|local_rollout_forward_batch_size|num_sample_generations|missing_eos_penalty|sync_ref_model|ref_model_sync_steps|ref_model_mixup_alpha|advantage_estimator)$/;

// Arguments that change memory through mechanisms llmem does not model: reported by name.
const NOT_MODELLED: Record<string, string> = {
  use_dora: 'DoRA adds a magnitude vector and a column-norm pass per adapted layer; counted as plain LoRA',
  target_regex: 'the adapted modules are chosen by a regular expression; counted with --target_modules',
  target_parameters: 'LoRA on parameters (MoE experts) is not modelled',
  lora_bias: 'trainable biases beside the adapters are not counted',
  freeze_parameters: 'partial freezing of a full fine-tune is not modelled (every parameter counted as trained)',
  freeze_parameters_regex: 'partial freezing of a full fine-tune is not modelled (every parameter counted as trained)',
  freeze_parameters_ratio: 'partial freezing of a full fine-tune is not modelled (every parameter counted as trained)',
  trainable_parameters: 'extra trainable parameters beside the adapters are not counted',
  trainable_parameters_regex: 'extra trainable parameters beside the adapters are not counted',
  use_galore: 'GaLore (low-rank projected optimizer states) is not modelled: full Adam states counted',
  lisa_activated_layers: 'LISA (a few layers trained at a time) is not modelled: every layer counted as trained',
  enable_dft_loss: 'the DFT loss (token probabilities weighting the cross-entropy) is not modelled',
  enable_channel_loss: 'per-channel losses are not modelled',
  experts_impl: "the MoE experts' kernel is not modelled",
  device_map: 'a device_map (the model split over several GPUs of one process) is not modelled',
  max_memory: 'a device_map (the model split over several GPUs of one process) is not modelled',
  offload_model:
    "the training model moved to the host while vLLM generates is not modelled (it is counted on the GPU at the rollout's peak)",
  offload_optimizer:
    "the optimizer states moved to the host while vLLM generates are not modelled (they are counted on the GPU at the rollout's peak)",
  move_model_batches: 'the weights synced to vLLM in batches of layers (not all at once) is not modelled',
  async_generate: 'asynchronous generation (a rollout one step ahead) is not modelled',
  teacher_model: 'an OPD-RL / distillation teacher model (its weights and logits beside the policy) is not modelled',
  teacher_model_server: 'a teacher served elsewhere: its logits beside the policy are not modelled',
  chord_sft_dataset: "CHORD's SFT batches beside the RL ones are not modelled",
  chord_sft_per_device_train_batch_size: "CHORD's SFT batches beside the RL ones are not modelled",
  vllm_pipeline_parallel_size: "the colocated vLLM engine's pipeline parallelism is not modelled",
  vllm_data_parallel_size: "the colocated vLLM engine's data parallelism is not modelled",
  vllm_enable_expert_parallel: "the colocated vLLM engine's expert parallelism is not modelled",
  vllm_quantization: "a quantized vLLM engine's weights are not modelled (counted at the rollout dtype)",
  vllm_speculative_config: 'a speculative-decoding draft model in the vLLM engine is not modelled',
  vllm_engine_kwargs: 'extra vLLM engine settings are not read',
  vllm_use_async_engine: 'the asynchronous vLLM engine is not modelled',
  log_entropy: 'the entropy of every token, computed beside the log-probs, is not modelled',
};

/** The value of a flag ("" for a boolean flag given alone), or undefined when absent. */
const value = (f: Flags, flag: string): string | undefined => f.get(flag)?.join(' ');
const given = (f: Flags, flag: string) => f.has(flag);
/** A boolean argument (HfArgumentParser: `--flag` alone is true; "true"/"false" in any case). */
function flagOn(f: Flags, flag: string, dflt: boolean): boolean {
  const v = value(f, flag);
  if (v === undefined) return dflt;
  if (v === '') return true;
  return bool(v.toLowerCase() === 'true' ? true : v.toLowerCase() === 'false' ? false : v, `--${flag}`);
}
const intFlag = (f: Flags, flag: string, dflt: number, min = 1) => {
  const v = value(f, flag);
  return v === undefined || v === '' ? dflt : int(v, `--${flag}`, min);
};

/** Loss-scale types whose weights are not only 0 and 1 (swift/loss_scale/config/*.json @3602360a: hermes 2.0; react,
 * qwen, alpha_umi 2.0 and 0.0; agentflan up to 3.0, and is_binary False): the rest (ignore_empty_think,
 * ignore_think_prefix: 0.0; the base strategies default, last_round, all) are binary. */
const WEIGHTED_LOSS_SCALES = new Set(['react', 'qwen', 'hermes', 'agentflan', 'alpha_umi']);

/** Why ms-swift's SFT trainer computes the loss itself, handing the model no labels (so Liger's fused
 * cross-entropy never runs): swift/trainers/seq2seq_trainer.py compute_loss @3602360a pops the labels for a
 * label smoother, a weighted loss_scale, the DFT or channel loss, or sequence parallelism; null: it does not. */
function ownLossReason(f: Flags, sp: number): string | null {
  if (sp > 1) return `--sequence_parallel_size ${sp}`;
  for (const flag of ['enable_dft_loss', 'enable_channel_loss']) if (flagOn(f, flag, false)) return `--${flag}`;
  const smoothing = value(f, 'label_smoothing_factor');
  if (smoothing !== undefined && Number(smoothing) !== 0) return `--label_smoothing_factor ${smoothing}`;
  // template/base.py @3602360a: a loss_scale tensor goes to the trainer unless the scale is binary;
  // --is_binary_loss_scale overrides what the types say, either way
  const scale = value(f, 'loss_scale') ?? 'default';
  const binaryFlag = value(f, 'is_binary_loss_scale');
  const weighted =
    binaryFlag !== undefined
      ? !flagOn(f, 'is_binary_loss_scale', true)
      : scale.split('+').some((t) => WEIGHTED_LOSS_SCALES.has(t));
  if (weighted)
    return binaryFlag !== undefined
      ? '--is_binary_loss_scale false'
      : `--loss_scale ${scale} (weights other than 0 and 1)`;
  return null;
}

/** The training command: the program, its arguments, and how it was launched. */
interface Command {
  program: Program;
  args: string[];
  /** the launcher's own words before swift/cli/<program>.py (torchrun, deepspeed, accelerate launch, python) */
  launcher: string[];
}

const CLI_SCRIPT = /(?:^|\/)swift\/cli\/(sft|pt|rlhf)\.py$/;

/** A command that trains: `swift sft|pt|rlhf ...` or `<launcher> swift/cli/{sft,pt,rlhf}.py ...`. */
function trainingCommand(words: string[]): Command | undefined {
  if (/(?:^|\/)swift$/.test(words[0] ?? '') && ['sft', 'pt', 'rlhf'].includes(words[1]))
    return { program: words[1] as Program, args: words.slice(2), launcher: [] };
  const i = words.findIndex((w) => CLI_SCRIPT.test(w));
  if (i < 0) return undefined;
  return { program: CLI_SCRIPT.exec(words[i])![1] as Program, args: words.slice(i + 1), launcher: words.slice(0, i) };
}

/** The number in an environment variable the script sets, or undefined (absent); NaN: set but not to a number. */
function envNumber(vars: Map<string, string>, name: string): number | undefined {
  const v = vars.get(name);
  if (v === undefined) return undefined;
  return /^\d+$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
}

/**
 * The training processes (swift/cli/main.py: NPROC_PER_NODE or NNODES set -> torchrun --nproc_per_node
 * --nnodes, each defaulting to 1; neither -> one python process), a torchrun launcher's own flags, else the
 * world size given. One process that sees several GPUs splits the model over them with a device_map
 * (swift/utils/env.py is_mp), which llmem does not model.
 */
function worldSize(d: Draft, vars: Map<string, string>, cmd: Command, option: number | undefined): number {
  let nproc = envNumber(vars, 'NPROC_PER_NODE');
  let nnodes = envNumber(vars, 'NNODES');
  let source = 'NPROC_PER_NODE x NNODES';
  if (cmd.launcher.length) {
    const lf = parseFlags(cmd.launcher);
    const launcher = cmd.launcher.find((w) => !/=/.test(w)) ?? '';
    if (cmd.launcher.some((w) => /(?:^|\/)torchrun$|^torch\.distributed\.run$/.test(w))) {
      const n = value(lf, 'nproc_per_node') ?? value(lf, 'nproc-per-node');
      const m = value(lf, 'nnodes');
      nproc = n === undefined ? 1 : /^\d+$/.test(n) ? Number(n) : Number.NaN;
      nnodes = m === undefined ? 1 : /^\d+$/.test(m) ? Number(m) : Number.NaN;
      source = 'torchrun --nproc_per_node x --nnodes';
    } else if (/^(deepspeed|accelerate)$/.test(launcher.split('/').pop() ?? '')) {
      d.note(
        `${launcher.split('/').pop()} launches swift/cli/${cmd.program}.py: its processes are set by the launcher's hostfile or config, not here`,
      );
      return fallback(d, vars, option, true);
    }
  }
  if (nproc === undefined && nnodes === undefined) return fallback(d, vars, option, false);
  // torchrun refuses zero processes or nodes: no training runs (a zero world would divide the batches by 0)
  for (const [name, n] of [
    ['NPROC_PER_NODE', nproc],
    ['NNODES', nnodes],
  ] as const)
    if (n === 0)
      throw new ImportError(name, `${name}: 0 ${name === 'NNODES' ? 'nodes' : 'processes'}; it must be at least 1`);
  const perNode = nproc ?? 1;
  const nodes = nnodes ?? 1;
  if (Number.isNaN(perNode)) {
    d.note(`NPROC_PER_NODE is not set to a number in the script: ${option ?? 8} processes assumed`);
    return fallback(d, vars, option ?? 8, true);
  }
  d.set('parallel.gpus_per_node', perNode);
  if (Number.isNaN(nodes)) {
    // NNODES=$WORLD_SIZE (a cluster's environment): the nodes are not in the file
    const world = option ?? perNode;
    d.set('parallel.gpus', world);
    d.note(
      `NNODES is not set to a number in the script: ${option === undefined ? `one node of ${perNode} processes assumed (give the world size for more)` : `the world size given, ${option}`}`,
    );
    return world;
  }
  const world = perNode * nodes;
  agreeWorldSize('NPROC_PER_NODE', world, option, source);
  d.set('parallel.gpus', world);
  d.note(`${source}: ${perNode} x ${nodes} = ${world} training processes (parallel.gpus)`);
  visibleBeyond(d, vars, perNode);
  return world;
}

/** Neither NPROC_PER_NODE nor NNODES: the world size given, else one process. */
function fallback(d: Draft, vars: Map<string, string>, option: number | undefined, launched: boolean): number {
  if (option !== undefined) {
    d.set('parallel.gpus', option);
    if (!launched)
      d.note(
        `no NPROC_PER_NODE / NNODES in the script (swift/cli/main.py then starts one process): the world size given, ${option}, is used`,
      );
    return option;
  }
  if (launched) {
    d.set('parallel.gpus', 8);
    d.note('the launcher sets the number of processes: parallel.gpus 8 assumed (give the world size to change it)');
    return 8;
  }
  d.set('parallel.gpus', 1);
  d.note('no NPROC_PER_NODE / NNODES: one training process (swift/cli/main.py runs python, not torchrun)');
  visibleBeyond(d, vars, 1);
  return 1;
}

/** CUDA_VISIBLE_DEVICES lists more GPUs than processes per node: each process splits its model over the rest. */
function visibleBeyond(d: Draft, vars: Map<string, string>, perNode: number): void {
  const visible = vars.get('CUDA_VISIBLE_DEVICES');
  if (visible === undefined || visible.includes('$')) return;
  const n = visible.split(',').filter((s) => s.trim() !== '').length;
  if (n > perNode && n % perNode === 0)
    d.skip(
      'CUDA_VISIBLE_DEVICES',
      `${visible}: ${n} GPUs for ${perNode} process${perNode > 1 ? 'es' : ''} per node, so ms-swift splits each model over ${n / perNode} GPUs with a device_map (swift/utils/env.py is_mp; naive model parallel, one GPU busy at a time), which llmem does not model: counted as one GPU per process holding the whole model (an upper bound)`,
    );
}

/** The load dtype and mixed precision: model_args.py _init_mixed_precision (torch_dtype -> fp16 / bf16 defaults). */
function precision(d: Draft, f: Flags): { load: 'bf16' | 'fp16' | 'fp32'; amp: boolean } {
  const t = value(f, 'torch_dtype');
  let load: 'bf16' | 'fp16' | 'fp32';
  if (t === undefined || t === '' || t === 'None' || t === 'auto') {
    load = 'bf16';
    d.note(
      "--torch_dtype absent: the checkpoint's dtype (config.json torch_dtype, model_args.py _init_torch_dtype); bf16 assumed",
    );
  } else {
    const v = oneOf(t, '--torch_dtype', ['bfloat16', 'float16', 'float32', 'bf16', 'fp16', 'fp32'] as const);
    load = v === 'bfloat16' || v === 'bf16' ? 'bf16' : v === 'float16' || v === 'fp16' ? 'fp16' : 'fp32';
  }
  // fp16 for a float16 or float32 model, bf16 for a bfloat16 one, unless --fp16 / --bf16 say otherwise
  const bf16 = flagOn(f, 'bf16', load === 'bf16');
  const fp16 = flagOn(f, 'fp16', load !== 'bf16') && !bf16;
  d.set('training.dtype', bf16 ? 'bf16' : fp16 ? 'fp16' : load);
  if (!given(f, 'bf16') && !given(f, 'fp16'))
    d.note(
      `${bf16 ? 'bf16' : 'fp16'} mixed precision: ms-swift's default for a ${load} model (model_args.py _init_mixed_precision)`,
    );
  return { load, amp: bf16 || fp16 };
}

/**
 * A full fine-tune of weights loaded in bf16/fp16 on one GPU or DDP casts nothing (param.grad and torch optimizer
 * states take the parameter's dtype); DeepSpeed's bf16/fp16 optimizer keeps an fp32 master copy and fp32 states.
 * FSDP2 (--fsdp) goes through accelerate's fsdp2_prepare_model, which under mixed precision (ms-swift turns bf16 or
 * fp16 on by default, model_args.py _init_mixed_precision) upcasts the trainable parameters to fp32 before
 * fully_shard: fp32 sharded weights (the master copy), gradients and states, bf16/fp16 compute. LoRA: the frozen
 * base stays 16-bit; PEFT upcasts the adapters to fp32 unless --lora_dtype (swift/tuners/peft.py
 * _cast_adapter_dtype_hook).
 */
function loadedWeights(d: Draft, f: Flags, load: string, amp: boolean): void {
  if (load === 'fp32') return;
  const engine = d.get('parallel.engine');
  const full = d.get('training.finetune.method') === 'full';
  if (engine === 'deepspeed') {
    if (full)
      d.note(
        `${load} weights under DeepSpeed: its mixed-precision optimizer keeps an fp32 master copy and fp32 states`,
      );
    return;
  }
  // accelerate v1.13.0 src/accelerate/utils/fsdp_utils.py fsdp2_prepare_model: `if accelerator.mixed_precision !=
  // "no"` every requires_grad parameter not in fp32 is cast to fp32 (MixedPrecisionPolicy casts to bf16 for compute);
  // accelerate <= 1.12 cast the whole model. ms-swift relies on it: swift/rlhf_trainers/utils.py prepare_fsdp freezes
  // its reference / reward models before wrapping "to avoid float32 upcast". Not for a 4-bit (QLoRA) model.
  const fsdpUpcast = engine === 'fsdp2' && amp && d.get('training.finetune.method') !== 'qlora';
  if (full) {
    trainLoadedWeights(d, load as 'bf16' | 'fp16', value(f, 'optim') ?? null, amp);
    return;
  }
  d.set('training.master_weights', false);
  if (fsdpUpcast && d.get('training.finetune.adapter_dtype') === 'bf16') {
    d.set('training.finetune.adapter_dtype', 'fp32');
    d.note(
      "--lora_dtype bfloat16 under --fsdp with mixed precision: accelerate's fsdp2_prepare_model upcasts the trainable adapters to fp32",
    );
  }
}

/** tuner_type, LoRA and quantization (tuner_args.py, quant_args.py). */
function tuner(d: Draft, f: Flags, key: string): 'lora' | 'full' {
  const t = value(f, key) ?? 'lora';
  if (!given(f, key)) d.note('--tuner_type absent: lora (ms-swift default)');
  if (t in REFUSED_TUNERS)
    throw new ImportError(
      `--${key}`,
      `--${key} ${t}: ${REFUSED_TUNERS[t]} is not a fine-tuning method llmem models (full, lora, qlora)`,
    );
  if (t !== 'lora' && t !== 'full')
    throw new ImportError(
      `--${key}`,
      `--${key} ${t}: not a built-in ms-swift tuner; a tuner plugin (swift/tuner_plugin tuners_map, registered by --external_plugins) decides what trains, which llmem cannot know (it models full, lora, qlora)`,
    );
  const type = t;
  const method = value(f, 'quant_method');
  const bits = value(f, 'quant_bits');
  const modelId = value(f, 'model');
  const pre = modelId ? matchModelId(modelId)?.quantized : undefined;
  let quant: 'nf4' | 'fp4' | 'int8' | undefined;
  if (method !== undefined && method !== 'bnb') {
    d.skip('--quant_method', `${method}: only bitsandbytes quantization is modelled; the base counted unquantized`);
  } else if (method === 'bnb') {
    if (bits === undefined)
      throw new ImportError('--quant_bits', '--quant_bits: required with --quant_method bnb (4 or 8)');
    const b = int(bits, '--quant_bits');
    if (b !== 4 && b !== 8) throw new ImportError('--quant_bits', `--quant_bits: bnb takes 4 or 8, not ${b}`);
    quant =
      b === 8
        ? 'int8'
        : oneOf(value(f, 'bnb_4bit_quant_type') ?? 'nf4', '--bnb_4bit_quant_type', ['nf4', 'fp4'] as const);
  } else if (bits !== undefined)
    d.skip(
      '--quant_bits',
      `${bits} without --quant_method: no quantization config (quant_args.py get_quantization_config), the base loads unquantized`,
    );
  if (type === 'full') {
    d.set('training.finetune.method', 'full');
    if (quant) d.skip('--quant_method', 'a quantized base is trained with adapters only (lora); not applied');
    return type;
  }
  const bnb4 = pre !== undefined && BNB_4BIT_SUFFIXES.has(pre);
  d.set('training.finetune.method', quant || bnb4 ? 'qlora' : 'lora');
  if (quant) {
    d.set('training.finetune.quant', quant);
    if (quant !== 'int8') d.set('training.finetune.double_quant', flagOn(f, 'bnb_4bit_use_double_quant', true));
  } else if (bnb4) {
    d.set('training.finetune.quant', 'nf4');
    d.set('training.finetune.double_quant', true);
    d.note(
      `--model "${pre}": a bitsandbytes 4-bit checkpoint, LoRA on it is QLoRA (nf4 with double quantization assumed)`,
    );
  }
  d.set('training.finetune.lora_rank', intFlag(f, 'lora_rank', 8));
  if (!given(f, 'lora_rank')) d.note('--lora_rank absent: 8 (ms-swift default)');
  // target_modules default ['all-linear'] (tuner_args.py): every linear of the language model
  applyLoraTargets(d, '--target_modules', f.get('target_modules') ?? 'all-linear');
  if (!given(f, 'target_modules')) d.note('--target_modules absent: all-linear (ms-swift default)');
  d.set(
    'training.finetune.lora_dropout',
    given(f, 'lora_dropout') ? num(value(f, 'lora_dropout'), '--lora_dropout') : 0.05,
  );
  if (given(f, 'modules_to_save')) applyFullModules(d, '--modules_to_save', f.get('modules_to_save')!);
  const ld = value(f, 'lora_dtype');
  if (ld !== undefined && ld !== 'None') {
    const t2 = oneOf(ld, '--lora_dtype', ['float16', 'bfloat16', 'float32'] as const);
    // swift/pipelines/train/tuner.py prepare_model: trainable fp16 parameters are converted to fp32 (peft #1249)
    d.set('training.finetune.adapter_dtype', t2 === 'bfloat16' ? 'bf16' : 'fp32');
    if (t2 === 'float16')
      d.note('--lora_dtype float16: ms-swift converts trainable fp16 parameters to fp32 (tuner.py): fp32 adapters');
  }
  return type;
}

/** freeze_vit / freeze_aligner / freeze_llm (tuner_args.py _init_multimodal_full: a full fine-tune only). */
function vision(d: Draft, f: Flags, type: 'lora' | 'full'): void {
  const keys = ['freeze_vit', 'freeze_aligner', 'freeze_llm'].filter((k) => given(f, k));
  const vit = flagOn(f, 'freeze_vit', true);
  const aligner = flagOn(f, 'freeze_aligner', true);
  if (flagOn(f, 'freeze_llm', false))
    d.skip('--freeze_llm', 'a frozen language model (only the vision side trains) is not modelled');
  if (draftHasVision(d) !== true) {
    for (const k of keys) if (k !== 'freeze_llm') d.ignore(`--${k}`);
    return;
  }
  if (type === 'lora') {
    // all-linear with freeze_vit / freeze_aligner false: adapters on the tower's linears too
    if (!vit || !aligner)
      d.skip(
        `--${!vit ? 'freeze_vit' : 'freeze_aligner'}`,
        "false: LoRA on the vision tower's or aligner's linears is not counted (adapters on the language model only)",
      );
    return;
  }
  const train = vit && aligner ? 'none' : vit ? 'projector' : 'full';
  d.set('model.vision.train', train);
  if (!vit && aligner) d.skip('--freeze_aligner', 'true with a trained tower: counted with the aligner trained too');
  d.note(
    `vision: freeze_vit ${vit}${given(f, 'freeze_vit') ? '' : ' (default)'}, freeze_aligner ${aligner}${given(f, 'freeze_aligner') ? '' : ' (default)'}: model.vision.train ${train}`,
  );
}

/**
 * --max_pixels (template arguments: images resized to at most that many pixels) or MAX_PIXELS (qwen_vl_utils, read
 * by ms-swift's Qwen-VL templates): a Qwen-VL tower's input size. Absent, the processor's own cap (16384 merged
 * patches) is far above real images: the preset's size stands. Towers of one fixed size: no effect.
 */
function imagePixels(d: Draft, f: Flags, vars: Map<string, string>): void {
  const flag = value(f, 'max_pixels');
  const raw = flag ?? vars.get('MAX_PIXELS');
  if (raw === undefined || raw === 'None') return;
  const label = flag !== undefined ? '--max_pixels' : 'MAX_PIXELS';
  if (!/^\d+$/.test(raw.trim()))
    throw new ImportError(label, `${label}: must be a whole number of pixels, not ${JSON.stringify(raw)}`);
  if (!applyImagePixels(d, Number(raw.trim()), `${label} ${raw.trim()}`) && flag !== undefined)
    d.ignore('--max_pixels');
}

/** --deepspeed: a shorthand, a JSON string, or a path; --fsdp: fsdp2, or a path. */
function sharding(d: Draft, f: Flags, file: DeepSpeedFile): void {
  const ds = value(f, 'deepspeed');
  if (ds !== undefined && ds !== '' && ds !== 'None') {
    const preset = DS_PRESETS[ds];
    if (preset) {
      applyDeepSpeed(d, preset, `--deepspeed ${ds}#`);
      d.note(
        `--deepspeed ${ds}: swift/config/${ds}.json (sft_args.py _init_deepspeed); its "auto" precision and batch sizes are the command line's`,
      );
    } else if (/^\s*\{/.test(ds)) applyDeepSpeed(d, parseJsonText(ds, '--deepspeed'), '--deepspeed.');
    else applyDeepSpeedRef(d, '--deepspeed', ds, file);
  }
  const fs = value(f, 'fsdp');
  if (fs !== undefined && fs !== '' && fs !== 'None') {
    if (ds !== undefined && ds !== '' && ds !== 'None')
      throw new ImportError('--fsdp', '--fsdp: FSDP2 is not compatible with DeepSpeed (sft_args.py _init_fsdp)');
    if (fs === 'fsdp2') {
      applyFsdpOption(d, '--fsdp', 'full_shard auto_wrap', FSDP2_PRESET, '--fsdp fsdp2#fsdp_config');
      d.note('--fsdp fsdp2: swift/config/fsdp2.json (full_shard auto_wrap, FSDP2, activation checkpointing)');
    } else if (/^\s*\{/.test(fs)) fsdpJson(d, parseJsonText(fs, '--fsdp'), '--fsdp.');
    else if (file.text !== undefined && !file.read) {
      // the JSON file it names, given as the second file
      file.read = true;
      fsdpJson(d, parseJsonText(file.text, `--fsdp ${fs}`), `--fsdp ${fs}#`);
    } else {
      d.set('parallel.engine', 'fsdp2');
      d.skip(
        '--fsdp',
        `"${fs}" was not read (an FSDP JSON file: give it too, \`llmem import swift <script> ${fs.split('/').pop()}\`); counted as FSDP2 full_shard`,
      );
    }
  }
}

/**
 * An FSDP JSON (--fsdp inline or its file): the accelerate-style `fsdp` string and `fsdp_config`, and ms-swift's own
 * `activation_cpu_offload` (swift/trainers/arguments.py _init_callbacks adds ActivationCpuOffloadCallBack:
 * swift/callbacks/activation_cpu_offload.py, verl's asynchronous offload of every layer's saved tensors but the last's
 * @3602360a), counted as training.activation_offload.
 */
function fsdpJson(d: Draft, c: Obj, at: string): void {
  const config = isObject(c.fsdp_config) ? { ...c.fsdp_config } : {};
  const offload = config.activation_cpu_offload ?? config.fsdp_activation_cpu_offload;
  delete config.activation_cpu_offload;
  delete config.fsdp_activation_cpu_offload;
  applyFsdpOption(d, '--fsdp', c.fsdp ?? 'full_shard auto_wrap', config, `${at}fsdp_config`);
  if (offload !== undefined && offload !== null && bool(offload, `${at}fsdp_config.activation_cpu_offload`)) {
    d.set('training.activation_offload', true);
    d.note(
      `${at}fsdp_config.activation_cpu_offload: every layer's saved activations but the last's go to the host (ms-swift's ActivationCpuOffloadCallBack; training.activation_offload)`,
    );
  }
  for (const k of Object.keys(c)) if (k !== 'fsdp' && k !== 'fsdp_config') d.ignore(`${at}${k}`); // _description, _param_docs
}

/** The GRPO arguments under GRPOConfig's names, for trl.ts applyGrpo (ms-swift's own defaults given explicitly). */
function grpoKeys(f: Flags): Obj {
  const y: Obj = {};
  const copy = (from: string, to = from) => {
    const v = value(f, from);
    if (v !== undefined) y[to] = v === '' ? true : v;
  };
  y.num_generations = value(f, 'num_generations') ?? 8; // GRPOArguments default 8
  copy('max_length', 'max_prompt_length'); // GRPO: max_length is the prompt's (Command-line-parameters.md)
  y.max_completion_length =
    value(f, 'max_completion_length') ?? value(f, 'max_new_tokens') ?? value(f, 'response_length') ?? 512;
  copy('generation_batch_size');
  copy('steps_per_generation');
  y.beta = value(f, 'beta') ?? 0.04; // rlhf_args.py _init_grpo: beta None -> 0.04
  y.use_vllm = flagOn(f, 'use_vllm', false);
  copy('vllm_mode');
  // rollout_mixin.py: vllm_server_host / base_url without vllm_mode is a server
  if (y.vllm_mode === undefined && (given(f, 'vllm_server_host') || given(f, 'vllm_server_base_url')))
    y.vllm_mode = 'server';
  y.vllm_gpu_memory_utilization = value(f, 'vllm_gpu_memory_utilization') ?? 0.9; // VllmArguments default 0.9
  copy('vllm_tensor_parallel_size');
  copy('vllm_max_model_len');
  copy('padding_free');
  copy('top_entropy_quantile');
  copy('ds3_gather_for_generation');
  return y;
}

const SLEEP = ['none', 'level1', 'level2'] as const;

/** Import an ms-swift launch script (or its argument line). */
export function importSwift(
  text: string,
  options: { worldSize?: number; also?: string; launch?: Record<string, Json> } = {},
): ImportResult {
  return guard(() => {
    let cmd: Command | undefined;
    let others: string[] = [];
    let trainers = 0;
    const { run } = launchCommand(text, (w) => {
      const c = trainingCommand(w);
      if (c) {
        cmd = c;
        trainers++;
      } else if (/(?:^|\/)(swift|megatron)$/.test(w[0] ?? '') && w[1]) others.push(`${w[0].split('/').pop()} ${w[1]}`);
      return false;
    });
    others = [...new Set(others)];
    if (!cmd) {
      const mega = others.find((o) => /^megatron (sft|pt|rlhf)$/.test(o));
      if (mega)
        throw new ImportError(
          '',
          `${mega}: Megatron-SWIFT (Megatron-Core training with ms-swift's own argument names, swift/megatron/arguments) is not read; write the Megatron-LM arguments it maps to (tensor_model_parallel_size, micro_batch_size, ...) as a Megatron command line and import that (llmem import megatron)`,
        );
      throw new ImportError(
        '',
        `ms-swift script: no command runs swift sft, swift pt or swift rlhf (or swift/cli/{sft,pt,rlhf}.py)${others.length ? `; it runs ${others.join(', ')}, which does not train` : ''}`,
      );
    }
    const c = cmd as Command;
    if (c.args[0] !== undefined && !c.args[0].startsWith('--') && /\.(ya?ml|json)$/.test(c.args[0]))
      throw new ImportError(
        '',
        `swift ${c.program} ${c.args[0]}: the arguments are in that file (swift/cli/main.py parse_yaml_args), which is not given; import a command line with the arguments written out`,
      );
    const d = new Draft();
    // the accelerate config it is launched with (importers/index.ts withAccelerate): its processes and engine
    for (const [k, v] of Object.entries(options.launch ?? {})) d.set(`parallel.${k}`, v);
    d.stack('hf_trainer');
    d.note(
      `ms-swift swift ${c.program} (modelscope/ms-swift@3602360a, v4; v3 spellings read too) trains on transformers' Trainer: the hf_trainer profile (config v1 has no ms-swift stack)`,
    );
    for (const n of run.notes) d.note(n);
    if (trainers > 1) d.note(`${trainers} training commands in the script: the last is read`);
    const f = parseFlags(c.args);
    // values the script does not set ($VAR, $(command))
    for (const [flag, v] of [...f])
      if (v.some((x) => x.includes('$'))) {
        if (IGNORED.test(flag)) d.ignore(`--${flag}`);
        else d.skip(`--${flag}`, `its value ${v.join(' ')} is not set in the file; not applied`);
        f.delete(flag);
      }
    const rlhfType = c.program === 'rlhf' ? (value(f, 'rlhf_type') ?? 'dpo') : undefined;
    if (c.program === 'rlhf' && !given(f, 'rlhf_type')) d.note('--rlhf_type absent: dpo (ms-swift default)');
    if (rlhfType !== undefined && rlhfType in REFUSED_RLHF)
      throw new ImportError('--rlhf_type', `--rlhf_type ${rlhfType}: ${REFUSED_RLHF[rlhfType]}`);
    if (rlhfType !== undefined && !(rlhfType in PAIR) && rlhfType !== 'grpo')
      oneOf(rlhfType, '--rlhf_type', ['dpo', 'orpo', 'simpo', 'kto', 'cpo', 'rm', 'ppo', 'grpo', 'gkd'] as const);
    const taskType = value(f, 'task_type');
    // rlhf_args.py _init_rm: rm trains a sequence-classification model of one label, whatever --task_type says
    if (rlhfType === 'rm' && taskType !== undefined && taskType !== 'seq_cls')
      d.note(`--task_type ${taskType}: --rlhf_type rm sets seq_cls (rlhf_args.py _init_rm)`);
    else if (taskType === 'seq_cls' && rlhfType !== undefined)
      throw new ImportError(
        '--task_type',
        `--task_type seq_cls: --rlhf_type ${rlhfType} trains the language model's log-probabilities; a sequence-classification model trains only under rm or swift sft`,
      );
    else if (taskType !== undefined && taskType !== 'causal_lm' && taskType !== 'seq_cls')
      throw new ImportError(
        '--task_type',
        `--task_type ${taskType}: a ${taskType} model (its own head and loss instead of the language-model head) is not modelled; causal_lm and seq_cls are`,
      );
    const seqCls = rlhfType === 'rm' || taskType === 'seq_cls';
    if (!given(f, 'model') || value(f, 'model') === '')
      throw new ImportError('--model', '--model: absent; ms-swift requires it (model_args.py)');
    const tunerKey = given(f, 'tuner_type') || !given(f, 'train_type') ? 'tuner_type' : 'train_type';
    if (tunerKey === 'train_type') d.note('--train_type: the ms-swift 3.x name of --tuner_type');
    const type = tuner(d, f, tunerKey);
    applyModelId(d, '--model', value(f, 'model'));
    if (seqCls) {
      // AutoModelForSequenceClassification (model/register.py task_type seq_cls): a bias-free score Linear(hidden,
      // num_labels) in place of the LM head (transformers GenericForSequenceClassification); config v1's
      // classification head is BERT's pooler, so none is counted, as for a *ForSequenceClassification config.json
      d.set('model.head', 'none');
      d.note(
        `${rlhfType === 'rm' ? '--rlhf_type rm' : '--task_type seq_cls'}: a sequence-classification model, a hidden x ${rlhfType === 'rm' ? '1' : 'num_labels'} score head (not counted) and no logits over the vocabulary (model.head none)`,
      );
    }
    const { load, amp } = precision(d, f);
    const file: DeepSpeedFile = { text: options.also, read: false };
    sharding(d, f, file);
    const world = worldSize(d, run.vars, c, options.worldSize);
    applyAllocConf(d, run.vars);
    defaultToDdp(d, '--deepspeed or --fsdp');
    loadedWeights(d, f, load, amp);
    vision(d, f, type);
    imagePixels(d, f, run.vars);
    // batches: per_device_train_batch_size 1; gradient_accumulation_steps ceil(16 / (batch x world)), GRPO 1
    // (trainers/arguments.py TrainArgumentsMixin.__post_init__, rlhf_args.py _set_default)
    const micro = intFlag(f, 'per_device_train_batch_size', 1);
    const accumDefault = rlhfType === 'grpo' ? 1 : Math.max(1, Math.ceil(16 / micro / world));
    const accum = intFlag(f, 'gradient_accumulation_steps', accumDefault);
    if (!given(f, 'gradient_accumulation_steps'))
      d.note(
        `--gradient_accumulation_steps absent: ${accum} (${rlhfType === 'grpo' ? 'GRPO default 1' : `ceil(16 / (per-device batch ${micro} x ${world} processes))`})`,
      );
    d.set('training.micro_batch', rlhfType === 'rm' ? 2 * micro : micro);
    // template.py _rlhf_data_collator (the template's rlhf mode, rlhf.py _prepare_template): chosen then rejected
    if (rlhfType === 'rm')
      d.note(
        `--rlhf_type rm: chosen and rejected sequences in one batch (the template's _rlhf_data_collator): training.micro_batch ${2 * micro} = 2 x per_device_train_batch_size ${micro}`,
      );
    // gradient checkpointing: on unless --gradient_checkpointing false (TrainArgumentsMixin default true)
    const gc = flagOn(f, 'gradient_checkpointing', true);
    if (gc) d.set('training.recompute', 'full'); // (fsdp2's activation_checkpointing set it already)
    if (!given(f, 'gradient_checkpointing')) d.note('--gradient_checkpointing absent: true (ms-swift default)');
    // attention: attn_impl None -> sdpa where the model has it (model_args.py); flash kernels either way, eager keeps scores
    const attn = value(f, 'attn_impl');
    d.set('training.attention', attn === 'eager' ? 'eager' : 'flash');
    const padFree = flagOn(f, 'padding_free', false) || flagOn(f, 'packing', false);
    // sft_args.py _check_padding_free: `if self.attn_impl not in supported_impls: raise`, so an absent --attn_impl
    // (None; the model's default, sdpa) raises too
    if (padFree && (attn === undefined || !/^flash_(attn|attention_[234])$/.test(attn)))
      throw new ImportError(
        given(f, 'packing') ? '--packing' : '--padding_free',
        `--${given(f, 'packing') ? 'packing' : 'padding_free'}: requires a flash attention --attn_impl (flash_attn, flash_attention_2/3/4), not ${attn ?? 'absent (None)'} (sft_args.py _check_padding_free)`,
      );
    const mapped = new Set([
      'model',
      'tuner_type',
      'train_type',
      'quant_method',
      'quant_bits',
      'bnb_4bit_quant_type',
      'bnb_4bit_use_double_quant',
      'lora_rank',
      'target_modules',
      'lora_dropout',
      'modules_to_save',
      'lora_dtype',
      'torch_dtype',
      'bf16',
      'fp16',
      'deepspeed',
      'fsdp',
      'per_device_train_batch_size',
      'gradient_accumulation_steps',
      'gradient_checkpointing',
      'attn_impl',
      'freeze_vit',
      'freeze_aligner',
      'freeze_llm',
      'max_pixels',
      'rlhf_type',
      'task_type',
      'padding_free',
      'packing',
    ]);
    if (rlhfType === undefined || rlhfType === 'rm') {
      sftLengths(d, f, accum, padFree);
      mapped.add('max_length');
    } else if (rlhfType === 'grpo') {
      grpo(d, f, micro, accum, world, type);
      for (const k of [
        'num_generations',
        'max_length',
        'max_completion_length',
        'max_new_tokens',
        'response_length',
        'generation_batch_size',
        'steps_per_generation',
        'use_vllm',
        'vllm_mode',
        'vllm_gpu_memory_utilization',
        'vllm_tensor_parallel_size',
        'vllm_max_model_len',
        'top_entropy_quantile',
        'ds3_gather_for_generation',
        'sleep_level',
        'vllm_max_num_seqs',
        'reward_model',
        'vllm_server_host',
        'vllm_server_base_url',
        'ref_model',
      ])
        mapped.add(k);
    } else {
      pairs(d, f, micro, accum, world, PAIR[rlhfType], type);
      for (const k of ['max_length', 'max_prompt_length', 'ref_model', 'max_completion_length']) mapped.add(k);
    }
    // sequence_parallel_size: Ulysses / ring attention over the sequence (swift/sequence_parallel)
    const sp = intFlag(f, 'sequence_parallel_size', 1);
    mapped.add('sequence_parallel_size');
    if (sp > 1) {
      // under sequence parallelism the loss is ms-swift's own (swift/trainers/utils.py per_token_loss_func_sp): the
      // cross-entropy over the 16-bit logits, by chunks of CELOSS_PARALLEL_SIZE tokens when set
      // (swift/sequence_parallel/utils.py ChunkedCrossEntropyLoss: the logits kept, their gradient written in place)
      const chunk = envNumber(run.vars, 'CELOSS_PARALLEL_SIZE');
      if (chunk !== undefined && chunk > 0) {
        const tokens = (Number(d.get('training.micro_batch') ?? 1) * Number(d.get('training.seq_len') ?? 4096)) / sp;
        const chunks = Math.max(1, Math.ceil(tokens / chunk));
        d.set('training.loss', 'chunked_inplace');
        d.set('training.loss_chunks', chunks);
        d.note(
          `CELOSS_PARALLEL_SIZE ${chunk}: ms-swift's chunked cross-entropy under sequence parallelism (ChunkedCrossEntropyLoss: the 16-bit logits kept, ${chunks} chunk${chunks > 1 ? 's' : ''} of a rank's ${tokens} tokens, the gradient written into the logits; training.loss chunked_inplace)`,
        );
      } else {
        if (chunk !== undefined)
          d.skip(
            'CELOSS_PARALLEL_SIZE',
            `${run.vars.get('CELOSS_PARALLEL_SIZE')}: not a number of tokens the script sets; the unchunked loss is counted`,
          );
        d.set('training.loss', 'bf16_ce');
        d.note(
          '--sequence_parallel_size: the cross-entropy over the 16-bit logits, no fp32 copy (per_token_loss_func_sp; training.loss bf16_ce)',
        );
      }
      const a2a = applyUlysses(d, '--sequence_parallel_size', sp, true);
      d.note(
        `--sequence_parallel_size ${sp}: the sequence split over ${sp} ranks (parallel.cp), ${a2a} of them by Ulysses all-to-all (the model's KV heads' common divisor with ${sp}, parallel.cp_all_to_all)${a2a < sp ? `, a K/V ring over the other ${sp / a2a}` : ''}`,
      );
    }
    for (const [flag, v] of f) {
      if (mapped.has(flag)) continue;
      const val = v.join(' ');
      const off = val === 'false' || val === 'False' || val === '0' || val === 'None';
      if (flag === 'optim') applyOptim(d, '--optim', val);
      else if (applyDdpArgument(d, flag, val === 'None' ? null : val === '' ? true : val, `--${flag}`)) {
        // DDP's buckets (core/ddp.c)
      } else if (flag === 'use_liger_kernel') {
        const own = rlhfType === undefined ? ownLossReason(f, sp) : null;
        if (!flagOn(f, flag, false)) d.ignore(`--${flag}`);
        else if (own) {
          d.skip(
            '--use_liger_kernel',
            `${own}: ms-swift computes that loss itself and Liger's fused cross-entropy does not take effect (swift/trainers/seq2seq_trainer.py compute_loss @3602360a); Liger's other kernels are not modelled`,
          );
        } else if (rlhfType === undefined) {
          const before = d.unsupported.length;
          applyTrainingArgument(d, 'use_liger_kernel', true, {}, file);
          for (let i = before; i < d.unsupported.length; i++) d.unsupported[i] = `--${d.unsupported[i]}`;
        } else
          d.skip(
            '--use_liger_kernel',
            `Liger's kernels in ms-swift's ${rlhfType.toUpperCase()} trainer are not modelled; not applied`,
          );
      } else if (flag === 'torch_compile' || flag === 'auto_find_batch_size' || flag === 'activation_offloading')
        applyTrainingArgument(d, flag, val === '' ? true : val, {}, file);
      else if (flag === 'optimizer') {
        if (val === 'multimodal' || val === 'lorap')
          d.ignore(`--${flag}`); // learning-rate groups only
        else
          d.skip(
            '--optimizer',
            `${val}: an ms-swift optimizer plugin (swift/optimizers) is not modelled; AdamW states counted`,
          );
      } else if (flag === 'dynamic_sample' && rlhfType === 'grpo' && !off)
        d.note(
          '--dynamic_sample: groups without reward variance are resampled (max_resample_times), each step still trains the same batch: per-GPU memory unchanged',
        );
      else if (flag in NOT_MODELLED) {
        if (off || (flag === 'lisa_activated_layers' && val === '0')) d.ignore(`--${flag}`);
        else d.skip(`--${flag}`, `${NOT_MODELLED[flag]}; not applied`);
      } else if (IGNORED.test(flag)) d.ignore(`--${flag}`);
      else d.skip(`--${flag}`, `not an ms-swift swift ${c.program} argument llmem maps; not applied`);
    }
    reportUnreadFile(d, file);
    if (rlhfType !== undefined && rlhfType !== 'rm') seqLenFromRl(d);
    return d.result();
  });
}

/** swift sft / pt: the sequence length (max_length; packing fills it), accumulation. */
function sftLengths(d: Draft, f: Flags, accum: number, padFree: boolean): void {
  d.set('training.grad_accum', accum);
  const len = value(f, 'max_length');
  if (len === undefined || len === 'None')
    d.skip(
      '--max_length',
      "absent: ms-swift truncates at the model's max_model_len (base_args.py); training.seq_len left at llmem default (set it to the longest sample)",
    );
  else d.set('training.seq_len', int(len, '--max_length'));
  if (flagOn(f, 'packing', false))
    d.note('--packing: samples packed into blocks of --max_length (packing_length), padding-free (training.seq_len)');
  else if (padFree)
    d.note(
      '--padding_free: a batch is its samples laid end to end; training.seq_len (--max_length) is the longest one',
    );
  else d.note('no packing: each batch padded to its longest sample; training.seq_len (--max_length) is the worst case');
}

/** dpo / orpo / cpo / simpo: TRL's pair trainers (swift/rlhf_trainers), through trl.ts applyDpo. */
function pairs(
  d: Draft,
  f: Flags,
  micro: number,
  accum: number,
  world: number,
  trainer: PairTrainer,
  type: string,
): void {
  d.set('rl.algorithm', 'dpo');
  const y: Obj = {};
  const len = value(f, 'max_length');
  if (len === undefined || len === 'None')
    d.skip(
      '--max_length',
      "absent: ms-swift truncates at the model's max_model_len; 1024 counted for prompt + completion (set rl.prompt_len and rl.response_len)",
    );
  else y.max_length = len;
  if (given(f, 'max_prompt_length')) y.max_prompt_length = value(f, 'max_prompt_length')!;
  if (flagOn(f, 'padding_free', false) || flagOn(f, 'packing', false)) y.padding_free = true;
  applyDpo(d, y, micro, accum, world, trainer, (k) => `--${k}`);
  const ref = value(f, 'ref_model');
  if (ref !== undefined && (trainer !== 'dpo' || type === 'lora'))
    throw new ImportError(
      '--ref_model',
      '--ref_model: CPO/ORPO or LoRA training does not take a ref_model (rlhf_args.py __post_init__ raises)',
    );
  if (trainer === 'dpo' && type === 'lora')
    d.note('LoRA DPO: the reference is the base model with the adapters disabled (no second copy of the weights)');
  else if (trainer === 'dpo') {
    d.note(
      `full DPO: the reference is ${ref === undefined ? 'a frozen copy of --model' : `--ref_model "${ref}"`} (rlhf_args.py: ref_model = ref_model or model)`,
    );
    if (
      ref !== undefined &&
      matchModelId(ref)?.preset?.split('@')[0] !== String(d.get('model.preset') ?? '').split('@')[0]
    )
      d.skip('--ref_model', `"${ref}": a reference of another shape is counted with the policy's shape`);
  }
}

/** GRPO: swift's GRPOTrainer extends TRL's; its defaults differ (beta 0.04, vLLM memory 0.9, sleep_level). */
function grpo(d: Draft, f: Flags, micro: number, accum: number, world: number, type: string): void {
  d.set('rl.algorithm', 'grpo');
  const est = value(f, 'advantage_estimator');
  if (est !== undefined && est !== 'grpo') {
    const a = oneOf(est, '--advantage_estimator', ['grpo', 'rloo', 'reinforce_plus_plus'] as const);
    d.set('rl.algorithm', a === 'rloo' ? 'rloo' : 'reinforce_pp');
  }
  const y = grpoKeys(f);
  if (y.use_vllm === true && y.vllm_mode === undefined)
    throw new ImportError(
      '--vllm_mode',
      '--vllm_mode: required when --use_vllm true (rlhf_args.py _init_rollout): colocate or server',
    );
  const algo = d.get('rl.algorithm');
  // ms-swift encodes each sample whole, prompt and completion, before padding the batch (rlhf_trainers/grpo_trainer.py
  // @3602360a: template.encode, then data_collator): vLLM's cap bounds a row's length
  applyGrpo(d, y, micro, accum, world, (k) => (k === 'max_prompt_length' ? '--max_length' : `--${k}`), true);
  if (algo !== 'grpo') d.set('rl.algorithm', algo as Json);
  if (!given(f, 'beta'))
    d.note('--beta absent: 0.04 (ms-swift GRPO default, rlhf_args.py _init_grpo): a reference model');
  if (d.get('rl.reference.enabled') === true)
    d.note(
      type === 'lora'
        ? 'LoRA: the reference is the base model with the adapters disabled'
        : `full: the reference is ${given(f, 'ref_model') ? `--ref_model "${value(f, 'ref_model')}"` : 'a frozen copy of --model'} (rlhf_args.py)`,
    );
  if (!given(f, 'max_length'))
    d.note("--max_length absent: prompts are cut at the model's max_model_len; rl.prompt_len left at llmem default");
  if (y.use_vllm === true && y.vllm_mode === 'colocate') {
    const sleep = intFlag(f, 'sleep_level', 0, 0);
    if (sleep > 2) throw new ImportError('--sleep_level', '--sleep_level: 0, 1 or 2');
    d.set('rl.rollout.sleep', SLEEP[sleep]);
    if (given(f, 'vllm_max_num_seqs')) d.set('rl.rollout.max_num_seqs', intFlag(f, 'vllm_max_num_seqs', 256));
  } else if (given(f, 'sleep_level')) d.ignore('--sleep_level'); // 0 unless colocated (rlhf_args.py _init_grpo)
  const rm = value(f, 'reward_model');
  d.set('rl.reward.enabled', rm !== undefined);
  if (rm !== undefined) {
    if (f.get('reward_model')!.length > 1) d.skip('--reward_model', 'several reward models: the first is counted');
    applySecondModel(d, 'reward', '--reward_model', f.get('reward_model')![0]);
  }
  // rlhf_args.py __post_init__: `if self.rlhf_type == 'grpo' and self.beta == 0.0: self.ref_model = None` comes
  // before the LoRA check, so --beta 0 drops a --ref_model instead of raising
  if (given(f, 'ref_model') && type === 'lora' && d.get('rl.reference.enabled') === true)
    throw new ImportError(
      '--ref_model',
      '--ref_model: LoRA training does not take a ref_model (rlhf_args.py __post_init__ raises)',
    );
  applyWeightSync(d, y, (k) => `--${k}`);
}
