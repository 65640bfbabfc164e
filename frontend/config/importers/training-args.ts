// Hugging Face TrainingArguments JSON or YAML (trainer.args.to_json_string(), the
// `training_args.json` of a run, or a YAML file HfArgumentParser reads) -> config v1. Keys and values:
// https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
// (optim: transformers.training_args.OptimizerNames; fsdp: FSDPOption). Also the
// helpers LLaMA-Factory and axolotl share with it (they pass these keys to the Trainer).
import type { Json } from '../../../wasm/llmem.js';
import { applyFsdpConfig } from './accelerate.js';
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
import {
  bool,
  Draft,
  guard,
  int,
  isObject,
  num,
  obj,
  parseJsonText,
  parseYamlText,
  str,
  type ImportResult,
  type Obj,
  refuseIfNoKeyKnown,
} from './common.js';

/** transformers OptimizerNames -> config v1 optimizer keys (PyTorch / bitsandbytes / torchao implementations). */
const OPTIM: Record<string, Obj> = {
  adamw_torch: { optimizer: 'adamw', optimizer_impl: 'foreach' },
  adamw_torch_fused: { optimizer: 'adamw', optimizer_impl: 'fused' },
  adamw_apex_fused: { optimizer: 'adamw', optimizer_impl: 'fused' },
  adamw_hf: { optimizer: 'adamw', optimizer_impl: 'for_loop' },
  adamw_torch_npu_fused: { optimizer: 'adamw', optimizer_impl: 'fused' },
  adamw_bnb_8bit: { optimizer: 'adamw_8bit' },
  adamw_8bit: { optimizer: 'adamw_8bit' },
  adamw_torch_8bit: { optimizer: 'adamw_8bit' },
  paged_adamw_8bit: { optimizer: 'adamw_8bit', paged_optimizer: true },
  paged_adamw_32bit: { optimizer: 'adamw', paged_optimizer: true },
  paged_adamw: { optimizer: 'adamw', paged_optimizer: true },
  lion_32bit: { optimizer: 'lion' },
  paged_lion_32bit: { optimizer: 'lion', paged_optimizer: true },
  adafactor: { optimizer: 'adafactor' },
  sgd: { optimizer: 'sgd' },
  adagrad: { optimizer: 'sgd_momentum' },
  rmsprop: { optimizer: 'sgd_momentum' },
  rmsprop_bnb_32bit: { optimizer: 'sgd_momentum' },
};
const OPTIM_APPROX: Record<string, string> = {
  adagrad: 'one fp32 state per parameter, counted as sgd_momentum',
  rmsprop: 'one fp32 state per parameter, counted as sgd_momentum',
  rmsprop_bnb_32bit: 'one fp32 state per parameter, counted as sgd_momentum',
  adamw_torch_8bit: 'torchao 8-bit AdamW counted as bitsandbytes adamw_8bit',
};
// Known optimizers whose states config v1 cannot express: counted as the nearest value, reported as not applied.
const OPTIM_UNMODELLED: Record<string, [Obj, string]> = {
  // huggingface/transformers@fe2596e9 src/transformers/trainer_optimizer.py _get_torchao_optimizer: torchao AdamW4bit
  adamw_torch_4bit: [
    { optimizer: 'adamw_8bit' },
    'torchao 4-bit AdamW keeps two 4-bit states per parameter; config v1 has no 4-bit optimizer state (optimizer_dtype: fp32 | fp16 | bf16 | fp8), so it is counted as adamw_8bit (8-bit states, an over-estimate)',
  ],
};

/** Apply an HF `optim` name (also axolotl `optimizer`). */
export function applyOptim(d: Draft, key: string, v: Json): void {
  const name = str(v, key).toLowerCase();
  const hit = OPTIM[name];
  if (OPTIM_UNMODELLED[name]) {
    const [set, why] = OPTIM_UNMODELLED[name];
    for (const [k, val] of Object.entries(set)) d.set(`training.${k}`, val);
    d.skip(`${key} ${name}`, why);
    return;
  }
  if (!hit) {
    d.skip(
      key,
      `optimizer "${name}" has no config v1 equivalent (adamw, adam, sgd, adafactor, lion, adamw_8bit, paged variants); training.optimizer left at llmem default`,
    );
    return;
  }
  for (const [k, val] of Object.entries(hit)) d.set(`training.${k}`, val);
  if (OPTIM_APPROX[name]) d.note(`${key} ${name}: ${OPTIM_APPROX[name]}`);
}

const BNB_32BIT = /^(paged_adamw_32bit|paged_adamw|lion_32bit|paged_lion_32bit|rmsprop_bnb_32bit|adamw_bnb_32bit)$/;
const TORCH_OPTIM = /^(adamw_torch|adamw_torch_fused|adamw_hf|adafactor|sgd|adagrad|rmsprop)$/;

/**
 * The optimizer states' dtype when the trained weights are loaded in `dtype` with no fp32 copy: torch.optim
 * (adam.py _init_group: zeros_like(p)) and transformers' Adafactor (.to(grad)) keep them in the parameter's dtype,
 * bitsandbytes' 32-bit optimizers (optim/optimizer.py Optimizer2State.init_state) in fp32; undefined: the optimizer
 * decides (8-bit and others). `optim`: the HF optim name (TrainingArguments' default adamw_torch_fused when absent).
 */
export function loadedDtypeStates(optim: Json | undefined, dtype: string): string | undefined {
  const name = (typeof optim === 'string' ? optim : 'adamw_torch_fused').toLowerCase();
  return TORCH_OPTIM.test(name) ? dtype : BNB_32BIT.test(name) ? 'fp32' : undefined;
}

/**
 * A full fine-tune of weights loaded in 16 bits (no master copy set) through the Trainer / accelerate. One GPU and DDP
 * cast nothing: param.grad takes the parameter's dtype, and so do torch optimizer states (loadedDtypeStates). FSDP2
 * under mixed precision (`amp`: the Trainer's bf16 / fp16) goes through accelerate's fsdp2_prepare_model
 * (src/accelerate/utils/fsdp_utils.py, v1.13.0; the whole model up to 1.12), which casts every trainable parameter not
 * in fp32 to fp32 before fully_shard: fp32 sharded master weights, gradients and states. DeepSpeed's 16-bit optimizers
 * keep an fp32 master partition and states, and FSDP1 under mixed precision upcasts its flat parameters (accelerate
 * prepare_model): both set master weights, which the file's 16-bit load would otherwise leave off.
 */
export function trainLoadedWeights(d: Draft, load: 'bf16' | 'fp16', optim: Json | undefined, amp: boolean): void {
  const engine = d.get('parallel.engine');
  if (engine === 'deepspeed') {
    // DeepSpeed's bf16 / fp16 optimizers (ZeRO's single_partition_of_fp32_groups, BF16_Optimizer) keep an fp32 master
    // partition and fp32 states whatever dtype the model was loaded in
    d.set('training.master_weights', true);
    d.note(
      `${load} weights under DeepSpeed: its optimizer keeps fp32 master weights and states (the ${load} weights compute)`,
    );
    return;
  }
  if (engine === 'fsdp1' && amp) {
    // accelerate@v1.13.0 (3a2230ac) accelerator.py prepare_model L1980-2019: mixed precision on, FSDP1 upcasts each
    // trainable flat parameter to fp32 ("we follow DeepSpeed's strategy to hold the parameters in full precision")
    d.set('training.master_weights', true);
    d.note(
      `${load} weights under FSDP1 with ${String(d.get('training.dtype'))} mixed precision: accelerate's prepare_model upcasts the trained flat parameters to fp32 (fp32 master weights, gradients and optimizer states)`,
    );
    return;
  }
  if (engine === 'fsdp2' && amp) {
    d.set('training.master_weights', true);
    d.note(
      `${load} weights under FSDP2 with ${String(d.get('training.dtype'))} mixed precision: accelerate's fsdp2_prepare_model upcasts the trained parameters to fp32 (fp32 sharded master weights, gradients and optimizer states; ${load} only for compute)`,
    );
    return;
  }
  if (engine !== 'single' && engine !== 'ddp' && engine !== 'fsdp2') return;
  d.set('training.master_weights', false);
  d.set('training.grad_dtype', load);
  const states = loadedDtypeStates(optim, load);
  if (states !== undefined) d.set('training.optimizer_dtype', states);
  d.note(
    `${load} weights and gradients${states === load ? ' and optimizer states' : ''}: the full fine-tune trains the ${load}-loaded weights, no fp32 copy`,
  );
}

/** bf16 / fp16 flags of the Trainer: torch.autocast over the loaded parameters. */
export function applyPrecisionFlags(d: Draft, bf16: Json | undefined, fp16: Json | undefined, prefix = ''): void {
  const on = (v: Json | undefined, k: string) => v !== undefined && v !== null && v !== 'auto' && bool(v, prefix + k);
  if (on(bf16, 'bf16')) d.set('training.dtype', 'bf16');
  else if (on(fp16, 'fp16')) d.set('training.dtype', 'fp16');
  else if (bf16 === 'auto' || fp16 === 'auto') {
    d.set('training.dtype', 'bf16');
    d.note(`${prefix}bf16 "auto": bf16 assumed (the GPU supports it)`);
  } else d.set('training.dtype', 'fp32');
}

/** No DeepSpeed or FSDP in the file: the trainer runs DistributedDataParallel. */
export function defaultToDdp(d: Draft, what: string): void {
  if (d.get('parallel.engine') !== undefined) return;
  // one process: the Trainer wraps nothing (transformers trainer.py _wrap_model: DDP only when world size > 1)
  if (d.get('parallel.gpus') === 1) {
    d.set('parallel.engine', 'single');
    d.note(`no ${what} and a world size of 1: one GPU, no DistributedDataParallel`);
    return;
  }
  d.set('parallel.engine', 'ddp');
  d.note(`no ${what}: DistributedDataParallel (set parallel.gpus 1 and engine single for one GPU)`);
}

/** TrainingArguments.fsdp ("full_shard auto_wrap offload" or a list) with fsdp_config. */
export function applyFsdpOption(d: Draft, key: string, v: Json, fsdpConfig: Json | undefined, configKey: string): void {
  // TrainingArguments.fsdp is a string of options, their list, or a bool; anything else is not a value it takes
  if (v !== null && typeof v !== 'string' && typeof v !== 'boolean' && !Array.isArray(v)) {
    d.skip(
      key,
      `${JSON.stringify(v).slice(0, 60)}: not an FSDP option string or list (TrainingArguments.fsdp); not applied`,
    );
    return;
  }
  const opts = (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(/[\s,]+/) : [])
    .map((s) => s.toLowerCase())
    .filter(Boolean);
  if (!opts.length && v !== true) return;
  const strategy =
    opts.find((o) => ['full_shard', 'shard_grad_op', 'no_shard', 'hybrid_shard', 'hybrid_shard_zero2'].includes(o)) ??
    'full_shard';
  applyFsdpConfig(
    d,
    fsdpConfig === undefined || fsdpConfig === null ? {} : obj(fsdpConfig, configKey),
    `${configKey}.`,
    strategy,
  );
  if (opts.includes('offload')) {
    d.set('parallel.offload_params', 'cpu');
    d.set('parallel.offload_optimizer', 'cpu');
    d.note(`${key} offload: parameters, gradients and the optimizer step on the host`);
  }
}

// Keys of a TrainingArguments dump with no effect on per-GPU memory.
const IGNORED =
  /^(_n_gpu|output_dir|overwrite_output_dir|do_train|do_eval|do_predict|eval_.*|evaluation_strategy|prediction_loss_only|per_device_eval_batch_size|per_gpu_.*|eval_accumulation_steps|eval_delay|torch_empty_cache_steps|learning_rate|weight_decay|adam_.*|max_grad_norm|num_train_epochs|max_steps|lr_scheduler_.*|warmup_.*|log_.*|logging_.*|save_.*|seed|data_seed|jit_mode_eval|use_ipex|use_mps_device|no_cuda|tf32|local_rank|ddp_.*|tpu_.*|debug|dataloader_.*|past_index|run_name|disable_tqdm|remove_unused_columns|label_names|load_best_model_at_end|metric_for_best_model|greater_is_better|ignore_data_skip|label_smoothing_factor|group_by_length|length_column_name|report_to|skip_memory_metrics|use_legacy_prediction_loop|push_to_hub|resume_from_checkpoint|hub_.*|gradient_checkpointing_kwargs|include_.*|fp16_opt_level|half_precision_backend|bf16_full_eval|fp16_full_eval|fp16_backend|push_to_hub_.*|mp_parameters|full_determinism|torchdynamo|ray_scope|ddp_timeout|torch_compile_backend|torch_compile_mode|dispatch_batches|split_batches|optim_args|neftune_noise_alpha|batch_eval_metrics|eval_on_start|use_liger_kernel_config|average_tokens_across_devices|restore_callback_states_from_checkpoint|xpu_backend|sharded_ddp|fsdp_min_num_params|fsdp_transformer_layer_cls_to_wrap|parallelism_config|project|trackio_space_id|hub_revision|use_cache|dataset_.*|model_init_kwargs|chat_template_path|completion_only_loss|assistant_only_loss|eos_token|pad_token|padding_free|pad_to_multiple_of)$/;

/** Apply one TrainingArguments key (also read by the TRL importer, whose configs extend
 * TrainingArguments); false when the key is not one of those handled here. */
/** TrainingArguments ddp_find_unused_parameters and ddp_bucket_cap_mb, which the Trainer hands to
 * DistributedDataParallel (transformers trainer.py _wrap_model): whether DDP rebuilds its gradient buckets after the
 * first step, and their size (core/ddp.c). Null leaves the training stack's choice. `name` is how the file spells the
 * key (a command-line flag's dashes). Also axolotl's, LLaMA-Factory's and ms-swift's keys of the same names. */
export function applyDdpArgument(d: Draft, key: string, v: Json, name = key): boolean {
  if (key !== 'ddp_find_unused_parameters' && key !== 'ddp_bucket_cap_mb') return false;
  if (v === null) d.ignore(name);
  else if (key === 'ddp_find_unused_parameters') d.set('parallel.ddp_find_unused_parameters', bool(v, name));
  else d.set('parallel.ddp_bucket_cap_mib', num(v, name, 0.001));
  return true;
}

export function applyTrainingArgument(d: Draft, key: string, v: Json, a: Obj, file: DeepSpeedFile): boolean {
  if (applyDdpArgument(d, key, v)) return true;
  switch (key) {
    case 'per_device_train_batch_size':
      d.set('training.micro_batch', int(v, key));
      return true;
    case 'gradient_accumulation_steps':
      d.set('training.grad_accum', int(v, key));
      return true;
    case 'gradient_checkpointing':
      if (bool(v, key)) d.set('training.recompute', 'full');
      return true;
    case 'optim':
      applyOptim(d, key, v);
      return true;
    case 'deepspeed':
      applyDeepSpeedRef(d, key, v, file);
      return true;
    case 'fsdp':
      applyFsdpOption(d, key, v, a.fsdp_config, 'fsdp_config');
      return true;
    case 'fsdp_config':
      if (!a.fsdp || (Array.isArray(a.fsdp) && !a.fsdp.length)) d.ignore(key);
      return true;
    case 'torch_compile':
      d.set('runtime.torch_compile', bool(v, key));
      return true;
    case 'use_liger_kernel':
      if (bool(v, key)) liger(d, key, a.liger_kernel_config);
      return true;
    case 'max_seq_length': // TRL SFTConfig
    case 'max_length':
      if (v !== null) d.set('training.seq_len', int(v, key));
      return true;
    case 'packing':
      if (v === true) d.note('packing: every sequence is filled to training.seq_len');
      return true;
    case 'auto_find_batch_size':
      if (v === true) d.skip(key, 'the batch size is searched at run time; training.micro_batch is the starting value');
      return true;
    case 'adafactor': // deprecated spelling of optim="adafactor"
      if (bool(v, key)) d.set('training.optimizer', 'adafactor');
      else d.ignore(key);
      return true;
    case 'activation_offloading': // TRL SFTConfig
      if (bool(v, key)) d.set('training.activation_offload', true);
      return true;
    case 'use_cpu':
      if (bool(v, key)) d.skip(key, 'CPU training is not modelled');
      return true;
    case 'liger_kernel_config':
      if (!a.use_liger_kernel) d.ignore(key);
      return true;
    case 'optim_target_modules':
      if (v !== null) d.skip(key, 'GaLore-style projected optimizers are not modelled');
      return true;
    case 'accelerator_config':
      applyAcceleratorConfig(d, key, v);
      return true;
    default:
      return false;
  }
}

/** TrainingArguments accelerator_config (transformers trainer_pt_utils.py AcceleratorConfig): only
 * gradient_accumulation_kwargs.sync_each_batch changes per-GPU memory — a reduction every micro-batch instead of
 * accelerate's no_sync, which under FSDP1 keeps every unit's unsharded gradient (parallel.accumulate_no_sync). The
 * rest (split_batches, dispatch_batches, even_batches, use_seedable_sampler, non_blocking, ...) shapes the data
 * loading. A string is a JSON object (parsed as TrainingArguments parses it) or a path to a JSON file of the same keys
 * (not read). */
export function applyAcceleratorConfig(d: Draft, key: string, v: Json): void {
  if (typeof v === 'string' && v.trim().startsWith('{')) {
    // a JSON object in a string: TrainingArguments' _VALID_DICT_FIELDS parse it (training_args.py __post_init__)
    let parsed: Json;
    try {
      parsed = JSON.parse(v) as Json;
    } catch {
      d.skip(key, 'a JSON object that does not parse; not applied');
      return;
    }
    applyAcceleratorConfig(d, key, parsed);
    return;
  }
  if (typeof v === 'string') {
    d.skip(key, `${v}: a file llmem cannot read; its gradient_accumulation_kwargs.sync_each_batch is not applied`);
    return;
  }
  if (!isObject(v)) {
    d.ignore(key);
    return;
  }
  const accumulation = v.gradient_accumulation_kwargs;
  const sync = isObject(accumulation) ? accumulation.sync_each_batch : undefined;
  if (sync === true || sync === false) {
    d.set('parallel.accumulate_no_sync', !sync);
    d.note(
      sync
        ? `${key}.gradient_accumulation_kwargs.sync_each_batch true: gradients reduced every micro-batch (no no_sync)`
        : `${key}.gradient_accumulation_kwargs.sync_each_batch false: accelerate's no_sync over the accumulation`,
    );
  } else d.ignore(key);
}

/** Keys of a TrainingArguments dump with no effect on per-GPU memory. */
export const TRAINING_ARGS_IGNORED = IGNORED;

/** Import a TrainingArguments JSON or YAML; `worldSize` is the number of training processes. */
export function importTrainingArgs(
  text: string,
  also?: string,
  worldSize?: number,
  launch?: Record<string, Json>,
): ImportResult {
  return guard(() => {
    const file: DeepSpeedFile = { text: also, read: false };
    const d = new Draft();
    d.stack('hf_trainer');
    for (const [k, v] of Object.entries(launch ?? {})) d.set(`parallel.${k}`, v);
    const a = /^\s*\{/.test(text)
      ? parseJsonText(text, 'TrainingArguments JSON')
      : parseYamlText(text, 'TrainingArguments YAML');
    applyPrecisionFlags(d, a.bf16, a.fp16);
    if (a.bf16 === true || a.fp16 === true)
      d.note(
        'mixed precision: torch.autocast over fp32-loaded weights (the fp32 weights are the master copy); if the model is loaded in bf16/fp16 set training.master_weights false',
      );
    for (const [key, v] of Object.entries(a)) {
      if (key === 'bf16' || key === 'fp16' || applyTrainingArgument(d, key, v, a, file)) continue;
      if (IGNORED.test(key)) d.ignore(key);
      else d.skip(key, 'not a known TrainingArguments key; not applied');
    }
    reportUnreadFile(d, file);
    if (worldSize !== undefined) d.set('parallel.gpus', worldSize);
    else
      d.note('the world size is not in TrainingArguments: parallel.gpus left at llmem default (give the world size)');
    refuseIfNoKeyKnown(
      d,
      Object.keys(a).filter((k) => a[k] !== null),
      'not a known TrainingArguments key; not applied',
      'TrainingArguments',
    );
    defaultToDdp(d, 'deepspeed or fsdp');
    return d.result();
  });
}

/**
 * use_liger_kernel: transformers applies Liger's kernels for the model with liger_kernel_config as
 * keyword arguments (transformers/trainer.py; Liger's apply_liger_kernel_to_* default to fused linear
 * cross-entropy, RMSNorm, RoPE and SwiGLU on).
 */
function liger(d: Draft, key: string, config: Json | undefined): void {
  const c = config === undefined || config === null ? {} : obj(config, 'liger_kernel_config');
  const on = (name: string, dflt: boolean) =>
    c[name] === undefined ? dflt : bool(c[name], `liger_kernel_config.${name}`);
  if (on('fused_linear_cross_entropy', true)) d.set('training.loss', 'fused');
  else if (on('cross_entropy', false))
    d.skip(`${key} cross_entropy`, "Liger's cross-entropy kernel (logits kept) has no config v1 loss; not applied");
  const kernels = ['rms_norm', 'rope', 'swiglu', 'geglu', 'layer_norm'].filter((k) =>
    on(k, ['rms_norm', 'rope', 'swiglu'].includes(k)),
  );
  if (kernels.length)
    d.skip(key, `Liger's ${kernels.join(', ')} kernels (fewer saved activations) are not modelled; not applied`);
}
