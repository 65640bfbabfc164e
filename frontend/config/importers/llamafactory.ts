// LLaMA-Factory training YAML (examples/train_lora/*.yaml) -> config v1. Keys and defaults:
// src/llamafactory/hparams/{model_args,finetuning_args,data_args,training_args}.py and
// https://llamafactory.readthedocs.io/en/latest/advanced/arguments.html; the remaining
// keys are Hugging Face TrainingArguments.
import type { Json } from '../../../wasm/llmem.js';
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
import { applyLlamaFactoryV1, isLlamaFactoryV1 } from './llamafactory-v1.js';
import { applyDdpArgument, applyFsdpOption, applyOptim, applyPrecisionFlags, defaultToDdp } from './training-args.js';
import {
  applyFullModules,
  applyLoraTargets,
  applyModelId,
  draftHasVision,
  applyImagePixels,
  BNB_4BIT_SUFFIXES,
  bool,
  Draft,
  guard,
  ImportError,
  int,
  isObject,
  matchModelId,
  num,
  type Obj,
  oneOf,
  parseYamlText,
  type ImportResult,
  refuseIfNoKeyKnown,
} from './common.js';

// No effect on per-GPU memory: data, templates, logging, schedules, evaluation, export.
const IGNORED =
  /^(trust_remote_code|do_train|do_eval|do_predict|dataset|dataset_dir|eval_dataset|template|max_samples|overwrite_cache|preprocessing_num_workers|dataloader_num_workers|output_dir|logging_steps|save_steps|save_strategy|save_total_limit|plot_loss|overwrite_output_dir|save_only_model|report_to|run_name|learning_rate|num_train_epochs|max_steps|lr_scheduler_type|warmup_ratio|warmup_steps|weight_decay|max_grad_norm|ddp_timeout|resume_from_checkpoint|val_size|per_device_eval_batch_size|eval_strategy|eval_steps|lora_alpha|use_rslora|pissa_init|pissa_iter|pissa_convert|create_new_adapter|loraplus_lr_ratio|loraplus_lr_embedding|adapter_name_or_path|cache_dir|seed|tokenized_path|streaming|buffer_size|mix_strategy|interleave_probs|train_on_prompt|mask_history|default_system|enable_thinking|tool_format|image_min_pixels|video_max_pixels|video_fps|video_maxlen|rope_scaling|moe_aux_loss_coef|pref_beta|pref_ftx|pref_loss|simpo_gamma|dpo_label_smoothing|reward_model_type|finetuning_args|print_param_status|include_num_input_tokens_seen|hub_model_id|push_to_hub|export_.*|infer_backend|infer_dtype|tf32|logging_dir|fp8_backend|fsdp_transformer_layer_cls_to_wrap|fsdp_min_num_params|lora_bias|new_special_tokens|resize_vocab|split_special_tokens|model_revision|use_fast_tokenizer|low_cpu_mem_usage|flash_attn_kwargs|val_.*|compute_accuracy|predict_with_generate|neat_packing|packing|data_shared_file_system|gradient_checkpointing_kwargs|use_reentrant_gc|optim_args|adam_.*|tokenized_.*|sft_.*)$/;

// More hparams without effect on per-GPU training memory: tokens, hubs, loggers, profilers, Ray, inference
// engines, loss weights, PPO/KTO knobs (their stages are reported), and fields the parser sets itself
// (src/llamafactory/hparams/{model,data,finetuning,training}_args.py @ff6d4d12).
const NO_EFFECT =
  /^(adapter_folder|add_tokens|add_special_tokens|init_special_tokens|new_special_tokens_config|audio_sampling_rate|use_audio_in_video|crop_to_patches|image_do_pan_and_scan|video_min_pixels|media_dir|disable_shuffling|early_stopping_steps|eval_num_beams|eval_on_each_dataset|ignore_pad_token_for_loss|include_effective_tokens_per_second|preprocessing_batch_size|preserve_thinking|(hf|ms|om)_hub_token|master_addr|master_port|ray_num_workers|ray_init_kwargs|enable_torch_profiler|profiler_.*|profile_modules|use_swanlab|swanlab_.*|vllm_.*|sglang_.*|use_kv_cache|offload_folder|quantization_device_map|train_from_scratch|kto_chosen_weight|kto_rejected_weight|pref_bco_weight|ld_alpha|asft_alpha|eaft_alpha|ppo_.*|compute_dtype|device_map|model_max_length|block_diag_attn|module_dropout)$/;
// Real hparams that change memory through mechanisms llmem does not model (same files @ff6d4d12).
const NOT_MODELLED: Record<string, string> = {
  use_adam_mini:
    'Adam-mini keeps one second moment per block instead of per parameter; not modelled: AdamW states counted',
  use_muon: 'Muon keeps one momentum buffer for 2-D matrices (AdamW for the rest); not modelled: AdamW states counted',
  use_dft_loss: 'the DFT loss (token probabilities weighting the cross-entropy) is not modelled',
  use_asft_loss: 'the ASFT loss (a KL term to a reference model) is not modelled',
  use_eaft_loss: 'the EAFT loss (entropy-weighted cross-entropy) is not modelled',
  use_v1_kernels: "LLaMA-Factory's v1 kernel replacements are not modelled",
  use_kt: 'KTransformers (experts on the CPU) is not modelled',
  use_hyper_parallel: 'HyperParallel training is not modelled',
  hyper_parallel_args: 'HyperParallel training is not modelled',
  hyper_parallel_cp_size: 'HyperParallel context parallelism is not modelled',
  use_mca: 'set from the USE_MCA environment variable, not the file; a Megatron run is recognised by its parallel keys',
  use_megatron_bridge: 'set from USE_MEGATRON_BRIDGE, not the file; a Megatron run is recognised by its parallel keys',
  megatron_bridge_args: 'built by the parser from the Megatron Bridge keys; give those keys',
  ref_model_quantization_bit: "the reference model's weights are not modelled",
  reward_model: 'the PPO reward model is not modelled',
  reward_model_adapters: 'the PPO reward model is not modelled',
  reward_model_quantization_bit: 'the PPO reward model is not modelled',
};

// Optimizers LLaMA-Factory builds itself (finetuning_args.py GaloreArguments, ApolloArguments, BAdamArgument;
// train/trainer_utils.py _create_galore_optimizer, _create_apollo_optimizer, _create_badam_optimizer @ff6d4d12).
const OWN_OPTIMIZERS: Record<string, string> = {
  galore:
    'GaLore keeps the Adam states of the targeted matrices as low-rank projections (galore_rank x the other dimension) and, layer-wise, steps each parameter in its gradient hook (no whole-model gradients); not modelled: full Adam states and gradients counted',
  apollo:
    'APOLLO keeps low-rank (apollo_rank) optimizer states for the targeted matrices and, layer-wise, steps in gradient hooks; not modelled: full Adam states and gradients counted',
  badam:
    'BAdam trains one block of layers at a time (gradients and optimizer states for that block only); not modelled: every layer counted as trainable',
};
const OWN_OPTIMIZER_KEY = /^(?:use_)?(galore|apollo|badam)(?:_|$)/;
// Keys mcore_adapter (USE_MCA=1; examples/megatron/*) or Megatron Bridge (USE_MEGATRON_BRIDGE=1) read
// (alibaba/ROLL mcore_adapter/src/mcore_adapter/training_args.py @1bc12057; src/llamafactory/hparams/
// megatron_bridge_args.py @ff6d4d12): the run is Megatron Core, not the HF Trainer.
const MEGATRON_DEGREES: Record<string, string> = {
  tensor_model_parallel_size: 'parallel.tp',
  pipeline_model_parallel_size: 'parallel.pp',
  virtual_pipeline_model_parallel_size: 'parallel.vpp',
  context_parallel_size: 'parallel.cp',
  expert_model_parallel_size: 'parallel.ep',
  expert_tensor_parallel_size: 'parallel.etp',
};
const MEGATRON_OTHER =
  /^(sequence_parallel|use_distributed_optimizer|recompute_granularity|recompute_method|recompute_num_layers|recompute_modules|overlap_grad_reduce|overlap_param_gather|bias_activation_fusion|apply_rope_fusion|masked_softmax_fusion|cross_entropy_loss_fusion|moe_grouped_gemm|moe_token_dispatcher_type|moe_layer_recompute|accumulate_allreduce_grads_in_fp32|mixed_precision|use_packed_sequences|megatron_pretrained_checkpoint|export_hf_on_finish|extra_config|account_for_embedding_in_pipeline_split|account_for_loss_in_pipeline_split|calculate_per_token_loss|optimizer_cpu_offload|optimizer_offload_fraction|sequence_packing)$/;
const MEGATRON_NO_EFFECT =
  /^(overlap_grad_reduce|overlap_param_gather|bias_activation_fusion|apply_rope_fusion|masked_softmax_fusion|moe_grouped_gemm|export_hf_on_finish|megatron_pretrained_checkpoint|calculate_per_token_loss|account_for_embedding_in_pipeline_split|account_for_loss_in_pipeline_split)$/;
const isMegatronKey = (k: string): boolean => k in MEGATRON_DEGREES || MEGATRON_OTHER.test(k);

/** Import a LLaMA-Factory YAML; `worldSize` is the number of training processes (not in the file). */
export function importLlamaFactory(
  text: string,
  also?: string,
  worldSize?: number,
  launch?: Record<string, Json>,
): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'LLaMA-Factory YAML');
    const d = new Draft();
    d.stack('llamafactory');
    for (const [k, v] of Object.entries(launch ?? {})) d.set(`parallel.${k}`, v); // the accelerate launch's
    const file: DeepSpeedFile = { text: also, read: false };
    if (worldSize !== undefined) d.set('parallel.gpus', worldSize);
    refuseIfNotTraining(y);
    if (isLlamaFactoryV1(y)) {
      applyLlamaFactoryV1(d, y, file);
      reportUnreadFile(d, file);
      return d.result();
    }
    applyPrecisionFlags(d, y.bf16 ?? null, y.fp16 ?? null);
    const megatron = Object.keys(y).some((k) => isMegatronKey(k) && y[k] !== null);
    const type =
      y.finetuning_type === undefined || y.finetuning_type === null
        ? 'lora'
        : oneOf(y.finetuning_type, 'finetuning_type', ['lora', 'full', 'freeze', 'oft'] as const);
    if (y.finetuning_type === undefined) d.note('finetuning_type absent: lora (LLaMA-Factory default)');
    const bits =
      y.quantization_bit === undefined || y.quantization_bit === null
        ? undefined
        : int(y.quantization_bit, 'quantization_bit');
    if (bits !== undefined && bits !== 4 && bits !== 8)
      throw new ImportError('quantization_bit', `quantization_bit: must be 4 or 8, not ${bits}`);
    // A pre-quantized checkpoint (its config's quantization_config; model/model_utils/quantization.py @ff6d4d12)
    const pre = typeof y.model_name_or_path === 'string' ? matchModelId(y.model_name_or_path)?.quantized : undefined;
    if (pre && type !== 'lora' && type !== 'oft')
      throw new ImportError(
        'finetuning_type',
        `finetuning_type: ${type} on the pre-quantized "${pre}" checkpoint; LLaMA-Factory allows lora or oft only (model/adapter.py @ff6d4d12)`,
      );
    const bnb4 = pre !== undefined && BNB_4BIT_SUFFIXES.has(pre);
    if (type === 'lora') {
      d.set('training.finetune.method', bits || bnb4 ? 'qlora' : 'lora');
      d.set('training.finetune.lora_rank', y.lora_rank === undefined ? 8 : int(y.lora_rank, 'lora_rank'));
      if (y.lora_rank === undefined) d.note('lora_rank absent: 8 (LLaMA-Factory default)');
      applyLoraTargets(d, 'lora_target', y.lora_target ?? 'all');
      if (bnb4 && !bits) {
        // bitsandbytes 4-bit checkpoint: loaded with its own quantization_config (quantization.py @ff6d4d12)
        d.set('training.finetune.quant', 'nf4');
        d.set('training.finetune.double_quant', true);
        d.note(
          `model_name_or_path "${pre}": a bitsandbytes 4-bit checkpoint, LoRA on it is QLoRA (nf4 with double quantization assumed: the checkpoint's quantization_config decides)`,
        );
      } else if (bits) {
        d.set(
          'training.finetune.quant',
          bits === 8 ? 'int8' : oneOf(y.quantization_type ?? 'nf4', 'quantization_type', ['nf4', 'fp4'] as const),
        );
        d.set(
          'training.finetune.double_quant',
          y.double_quantization === undefined ? true : bool(y.double_quantization, 'double_quantization'),
        );
      }
    } else if (type === 'full') d.set('training.finetune.method', 'full');
    else
      d.skip(
        'finetuning_type',
        type === 'oft'
          ? 'oft: orthogonal adapters on a frozen base (model/adapter.py @ff6d4d12 _setup_lora_tuning: a PEFT OFTConfig) are not modelled; the estimate counts a full fine-tune, far above the run; set training.finetune yourself'
          : `${type}: partial fine-tuning is not modelled; the estimate counts a full fine-tune, above the run; set training.finetune yourself`,
      );
    if (bits && type !== 'lora') d.skip('quantization_bit', 'quantized bases are modelled with LoRA (qlora) only');
    halfLoadedWithoutAmp(d, y, type);
    // Gradient checkpointing is on unless disable_gradient_checkpointing (model_args.py).
    if (megatron) applyMegatron(d, y);
    else if (
      y.disable_gradient_checkpointing === undefined ||
      !bool(y.disable_gradient_checkpointing, 'disable_gradient_checkpointing')
    ) {
      d.set('training.recompute', 'full');
      if (y.disable_gradient_checkpointing === undefined)
        d.note('gradient checkpointing on (LLaMA-Factory enables it unless disable_gradient_checkpointing)');
    }
    if (y.cutoff_len === undefined) d.note('cutoff_len absent: 2048 (LLaMA-Factory default)');
    d.set('training.seq_len', y.cutoff_len === undefined ? 2048 : int(y.cutoff_len, 'cutoff_len'));
    if (y.packing !== true && y.neat_packing !== true)
      d.note('no packing: batches are padded to their longest sample; training.seq_len (cutoff_len) is the worst case');
    for (const [key, v] of Object.entries(y)) {
      if (v === null) continue;
      switch (key) {
        case 'model_name_or_path':
          applyModelId(d, key, v);
          break;
        case 'freeze_vision_tower':
        case 'freeze_multi_modal_projector':
        case 'freeze_language_model':
        case 'image_max_pixels':
          break; // visionTraining and imagePixels, once the model is known
        case 'bf16':
        case 'fp16':
        case 'finetuning_type':
        case 'quantization_bit':
        case 'quantization_type':
        case 'double_quantization':
        case 'lora_rank':
        case 'lora_target':
        case 'disable_gradient_checkpointing':
        case 'cutoff_len':
          break;
        case 'stage':
          applyStage(d, oneOf(v, key, ['pt', 'sft', 'rm', 'ppo', 'dpo', 'kto'] as const), y, type);
          break;
        case 'per_device_train_batch_size':
          if (y.stage !== 'rm' && y.stage !== 'dpo') d.set('training.micro_batch', int(v, key)); // else applyStage
          break;
        case 'quantization_method':
          if (!['bitsandbytes', 'bnb'].includes(String(v)))
            d.skip(key, `${String(v)} quantization is not modelled (bitsandbytes only)`);
          break;
        case 'lora_dropout':
          d.set('training.finetune.lora_dropout', num(v, key));
          break;
        case 'gradient_accumulation_steps':
          d.set('training.grad_accum', int(v, key));
          break;
        case 'pure_bf16':
          // parser.py @ff6d4d12: compute_dtype bf16 (the model is loaded in bf16) and no AMP; model/adapter.py:
          // trainable parameters are not upcast, so gradients and Adam states (zeros_like) are bf16 too
          if (bool(v, key)) {
            d.set('training.dtype', 'bf16');
            d.set('training.master_weights', false);
            d.set('training.grad_dtype', 'bf16');
            d.set('training.optimizer_dtype', 'bf16');
            if (type === 'lora') d.set('training.finetune.adapter_dtype', 'bf16');
            d.note('pure_bf16: bf16 weights, gradients and optimizer states, no fp32 master copy (no AMP)');
          }
          break;
        case 'optim':
          applyOptim(d, key, v);
          break;
        case 'deepspeed':
          applyDeepSpeedRef(d, key, v, file);
          break;
        case 'fsdp': // TrainingArguments keys, passed to the Trainer
          applyFsdpOption(d, key, v, y.fsdp_config, 'fsdp_config');
          break;
        case 'fsdp_config':
          if (!y.fsdp) d.ignore(key);
          break;
        case 'fp8':
          if (bool(v, key)) {
            // src/llamafactory/train/fp8_utils.py @ff6d4d12: ACCELERATE_MIXED_PRECISION=fp8 (bf16 outside the fp8 linears)
            d.set('training.fp8_linear', true);
            if (d.get('training.dtype') === 'fp32') d.set('training.dtype', 'bf16');
            d.note('fp8: accelerate fp8 mixed precision: fp8 linears, bf16 elsewhere');
          }
          break;
        case 'fp8_enable_fsdp_float8_all_gather':
          if (v === true)
            d.note(
              "fp8_enable_fsdp_float8_all_gather: LLaMA-Factory sets FP8_ENABLE_FSDP_FLOAT8_ALL_GATHER, which accelerate does not read, and passes torchao's rowwise recipe (src/llamafactory/train/fp8_utils.py @ff6d4d12): parameters are all-gathered in bf16 (parallel.fp8_all_gather off)",
            );
          break;
        case 'flash_attn': {
          const a = oneOf(v, key, ['auto', 'disabled', 'sdpa', 'fa2', 'fa3'] as const);
          d.set('training.attention', a === 'disabled' ? 'eager' : 'flash');
          break;
        }
        case 'enable_liger_kernel':
          if (bool(v, key)) liger(d, key, y.stage);
          break;
        case 'torch_compile':
          d.set('runtime.torch_compile', bool(v, key));
          break;
        case 'upcast_lmhead_output':
          if (bool(v, key)) d.set('training.loss', 'hf_upcast');
          break;
        case 'use_unsloth':
          if (bool(v, key))
            d.skip(
              key,
              'the model is loaded and patched by Unsloth (its own kernels and LoRA layers), which is not modelled; not applied',
            );
          break;
        case 'use_unsloth_gc':
          // model_utils/checkpointing.py @ff6d4d12: Unsloth's checkpointing keeps each layer's input on the host
          if (bool(v, key) && d.get('training.recompute') === 'full') {
            d.set('training.activation_offload', true);
            d.note(`${key}: checkpointed layer inputs offloaded to the host`);
          } else if (bool(v, key)) d.note(`${key}: no effect, gradient checkpointing is off`);
          break;
        case 'use_dora':
        case 'use_llama_pro':
        case 'mixture_of_depths':
        case 'shift_attn':
          if (v !== false) d.skip(key, 'not modelled');
          break;
        case 'additional_target':
          applyFullModules(d, key, v); // PEFT modules_to_save (LLaMA-Factory model/adapter.py)
          break;
        case 'upcast_layernorm':
          if (bool(v, key)) d.skip(key, 'fp32 layer norms are not modelled');
          break;
        default: {
          const own = OWN_OPTIMIZER_KEY.exec(key)?.[1];
          if (own && key === `use_${own}`) {
            if (bool(v, key)) d.skip(key, OWN_OPTIMIZERS[own]);
          } else if (own) {
            if (y[`use_${own}`] === true) d.skip(key, `use_${own}'s setting; not modelled`);
            else d.ignore(key); // no effect without use_${own}
          } else if (isMegatronKey(key)) {
            if (!(key in MEGATRON_DEGREES) && MEGATRON_NO_EFFECT.test(key)) d.ignore(key);
          } else if (key in NOT_MODELLED) {
            if (v !== false) d.skip(key, NOT_MODELLED[key]);
          } else if (
            /^kt_/.test(key) ||
            /^(freeze_(trainable_layers|trainable_modules|extra_modules)|oft_(rank|block_size|target))$/.test(key)
          ) {
            const owner = key.startsWith('kt_') ? 'use_kt' : `finetuning_type ${key.split('_')[0]}`;
            if (key.startsWith(type) || (owner === 'use_kt' && y.use_kt === true))
              d.skip(key, `${owner}'s setting; not modelled`);
            else d.ignore(key); // no effect without its owner
          } else if (applyDdpArgument(d, key, v)) {
            // DDP's buckets (core/ddp.c)
          } else if (IGNORED.test(key) || NO_EFFECT.test(key)) d.ignore(key);
          else if (key !== 'ref_model' && key !== 'ref_model_adapters')
            // read with the stage (applyStage)
            d.skip(key, 'not a known LLaMA-Factory key; not applied');
        }
      }
    }
    visionTraining(d, y, type);
    imagePixels(d, y);
    reportUnreadFile(d, file);
    if (!megatron && !y.deepspeed && !y.fsdp && launch === undefined) launcherComment(d, text); // else it was given
    defaultToDdp(d, 'deepspeed or fsdp');
    refuseIfNoKeyKnown(
      d,
      Object.keys(y).filter((k) => y[k] !== null),
      'not a known LLaMA-Factory key; not applied',
      'LLaMA-Factory',
    );
    if (y.flash_attn === undefined) d.set('training.attention', 'flash'); // "auto": SDPA / FlashAttention-2
    return d.result();
  });
}

/**
 * Files under examples/ that are not a training run (hiyouga/LLaMA-Factory@ff6d4d12):
 * - accelerate launcher configs (examples/accelerate/*.yaml, examples/ktransformers/accelerate/*.yaml), given to
 *   `accelerate launch --config_file`, beside the training YAML; their mixed_precision would otherwise read as a
 *   Megatron Bridge key;
 * - chat / export / predict files (examples/inference, examples/merge_lora, extras/nlg_eval): the workflows train only
 *   under do_train (src/llamafactory/train/{sft,pt,rm,dpo,kto,ppo}/workflow.py `if training_args.do_train`), and
 *   load_model(..., is_trainable=do_train) loads the model for inference otherwise (train/sft/workflow.py);
 * - v1 merge files (examples/v1/train_lora/export_lora.yaml: `llamafactory-cli merge`, v1/launcher.py
 *   merge_and_export_model), which have no train_dataset.
 */
function refuseIfNotTraining(y: Obj): void {
  const given = (k: string) => y[k] !== undefined && y[k] !== null;
  if (given('compute_environment') || given('distributed_type'))
    throw new ImportError(
      given('distributed_type') ? 'distributed_type' : 'compute_environment',
      `${given('distributed_type') ? `distributed_type ${String(y.distributed_type)}` : 'compute_environment'}: an accelerate launcher config (accelerate launch --config_file), not a LLaMA-Factory training YAML; import it with llmem import accelerate, and the training YAML it launches with llmem import llamafactory`,
    );
  if (isLlamaFactoryV1(y)) {
    const peft = isObject(y.peft_config) ? y.peft_config : undefined;
    if (!given('train_dataset') && peft && (peft.export_dir !== undefined || peft.adapter_name_or_path !== undefined))
      throw new ImportError(
        'peft_config.export_dir',
        'peft_config.export_dir / adapter_name_or_path and no train_dataset: a v1 merge file (llamafactory-cli merge, v1/launcher.py merge_and_export_model), not a training run; llmem estimates training',
      );
    return;
  }
  if (y.do_train === true) return;
  const sign =
    ['do_predict', 'do_eval'].find((k) => y[k] === true) ??
    ['infer_backend', 'export_dir'].find(given) ??
    (y.do_train === false ? 'do_train' : undefined);
  if (sign)
    throw new ImportError(
      sign,
      `${sign}${sign.startsWith('do_') ? `: ${String(y[sign])}` : ''} and no do_train: true: ${sign === 'export_dir' ? 'an export (llamafactory-cli export) file' : sign === 'infer_backend' ? 'a chat / inference (llamafactory-cli chat, api) file' : 'an evaluation or prediction run'}, not training (LLaMA-Factory trains only under do_train, train/*/workflow.py); llmem estimates training`,
    );
}

/**
 * The file's header launches it with `accelerate launch --config_file <file>` (examples/ascend/*_fsdp*.yaml
 * @ff6d4d12): FSDP comes from that accelerate config, which this file does not
 * carry; DDP is counted, so the run's sharding is missing and reported.
 */
function launcherComment(d: Draft, text: string): void {
  // within the comment lines (a command continued over several "# ... \\" lines)
  const m = /^[ \t]*#[^\n]*accelerate launch(?:[^\n]*\n[ \t]*#)*?[^\n]*?--config_file[ =]+(\S+)/m.exec(text);
  if (!m) return;
  d.skip(
    'accelerate launch',
    `the file's comment launches it with accelerate launch --config_file ${m[1]}: its FSDP / DeepSpeed settings are in that accelerate config, not this file; counted as DistributedDataParallel (import that config with llmem import accelerate, or set parallel.engine)`,
  );
}

/**
 * No bf16 / fp16 / pure_bf16: no autocast, and the model loads in its checkpoint's dtype (model/loader.py @ff6d4d12:
 * torch_dtype "auto"; patcher.py infer_optim_dtype: bf16 where the GPU has it). Adapters and fully trained weights are
 * then upcast to fp32 (adapter.py cast_trainable_params_to_fp32) except under BAdam (and pure_bf16): so a LoRA run keeps
 * its frozen base in 16 bits, and a BAdam run trains 16-bit weights.
 */
function halfLoadedWithoutAmp(d: Draft, y: Obj, type: string): void {
  const set = (k: string) => y[k] !== undefined && y[k] !== null && y[k] !== false;
  if (set('bf16') || set('fp16') || set('pure_bf16')) return;
  const badam = type === 'full' && set('use_badam');
  if (type !== 'lora' && type !== 'oft' && !badam) return; // full: its weights are cast to fp32, as counted
  d.set('training.dtype', 'bf16');
  if (badam) {
    d.set('training.master_weights', false);
    d.set('training.grad_dtype', 'bf16');
    d.set('training.optimizer_dtype', 'bf16');
  }
  d.note(
    `no bf16 / fp16: the model loads in its checkpoint's dtype (bf16 assumed; fp16 for a checkpoint saved in fp16) and trains without autocast; ${badam ? 'BAdam keeps the trained weights, their gradients and states in it' : 'the adapters are upcast to fp32'}`,
  );
}

/**
 * image_max_pixels (hparams/model_args.py ProcessorArguments, default 768 x 768): LLaMA-Factory's mm_plugin resizes
 * each image to at most that many pixels before the Qwen-VL processor. Towers of one fixed size: no effect.
 */
function imagePixels(d: Draft, y: Obj): void {
  const given = y.image_max_pixels !== undefined && y.image_max_pixels !== null;
  const pixels = given ? int(y.image_max_pixels, 'image_max_pixels') : 768 * 768;
  const why = `image_max_pixels ${pixels}${given ? '' : ' (LLaMA-Factory default 768 x 768)'}`;
  if (!applyImagePixels(d, pixels, why) && given) d.ignore('image_max_pixels');
}

/**
 * What of a vision-language model a full fine-tune trains (hparams/finetuning_args.py @ff6d4d12: freeze_vision_tower
 * and freeze_multi_modal_projector default true, freeze_language_model false; model/model_utils/visual.py
 * get_forbidden_modules sets them not trainable). LoRA leaves the tower to the frozen base either way.
 */
function visionTraining(d: Draft, y: Obj, type: string): void {
  const flag = (k: string, dflt: boolean) => (y[k] === undefined || y[k] === null ? dflt : bool(y[k], k));
  const tower = flag('freeze_vision_tower', true),
    projector = flag('freeze_multi_modal_projector', true);
  const keys = ['freeze_vision_tower', 'freeze_multi_modal_projector'].filter(
    (k) => y[k] !== undefined && y[k] !== null,
  );
  if (flag('freeze_language_model', false))
    d.skip('freeze_language_model', 'a frozen language model (only the vision side trains) is not modelled');
  else if (y.freeze_language_model !== undefined && y.freeze_language_model !== null) d.ignore('freeze_language_model');
  if (type !== 'full' || draftHasVision(d) !== true) {
    for (const k of keys) d.ignore(k);
    return;
  }
  const train = tower && projector ? 'none' : tower ? 'projector' : 'full';
  d.set('model.vision.train', train);
  if (!tower && projector)
    d.skip(
      'freeze_multi_modal_projector',
      'a trained tower with a frozen projector is counted with the projector trained',
    );
  const said = (k: string, v: boolean) => `${k} ${v}${y[k] === undefined || y[k] === null ? ' (default)' : ''}`;
  d.note(
    `vision: ${said('freeze_vision_tower', tower)}, ${said('freeze_multi_modal_projector', projector)}: model.vision.train ${train}`,
  );
}

/** The stage's batch and reference model (src/llamafactory/train/{dpo,kto,rm}/ and data/collator.py @ff6d4d12). */
function applyStage(d: Draft, stage: string, y: Obj, type: string): void {
  const micro =
    y.per_device_train_batch_size === undefined ? 1 : int(y.per_device_train_batch_size, 'per_device_train_batch_size');
  if (stage === 'rm' || stage === 'dpo') {
    // data/collator.py PairwiseDataCollatorWithPadding: chosen then rejected, one batch of 2 x n sequences
    d.set('training.micro_batch', 2 * micro);
    d.note(
      `stage ${stage}: chosen and rejected sequences in one batch (PairwiseDataCollatorWithPadding): training.micro_batch ${2 * micro} = 2 x per_device_train_batch_size`,
    );
  }
  if (stage === 'rm')
    // model/loader.py add_valuehead: trl's AutoModelForCausalLMWithValueHead runs the LM head too and casts its logits
    // to fp32; train/rm/trainer.py compute_loss keeps only the values
    d.skip(
      'stage',
      'rm: the value-head model computes the vocabulary logits and casts them to fp32, then the trainer drops them: counted as a language-model loss kept into the backward (an over-estimate of the logits); the value head (hidden x 1) is not counted',
    );
  else if (stage === 'ppo')
    d.skip('stage', 'ppo: the reward and value models and the generation KV cache are not modelled');
  else if (stage === 'kto')
    // train/kto/trainer.py concatenated_forward: the KL batch is forwarded under no_grad beside the target batch
    d.skip('stage', "kto: the KL batch's no-grad forward and the reference model's forward are not counted");
  else if (stage === 'dpo') {
    const loss = y.pref_loss ?? 'sigmoid';
    // finetuning_args.py: use_ref_model = stage dpo and pref_loss not in orpo, simpo
    if (loss === 'orpo' || loss === 'simpo') d.note(`pref_loss ${String(loss)}: no reference model`);
    else if (type === 'lora' && (y.ref_model === undefined || y.ref_model === null))
      // train/trainer_utils.py create_ref_model: LoRA without ref_model uses the base with adapters disabled;
      // train/dpo/trainer.py get_batch_loss_metrics: its no-grad forward follows the policy's
      d.skip(
        'stage',
        "dpo: the reference is the base with adapters disabled (no extra weights), but its no-grad forward, run while the policy's activations are held, is not counted",
      );
    else d.skip('stage', "dpo: the frozen reference model's weights and forward are not modelled");
  }
  // train/trainer_utils.py create_ref_model: ref_model (with its ref_model_adapters) is loaded as a model of its own
  for (const key of ['ref_model', 'ref_model_adapters'])
    if (y[key] !== undefined && y[key] !== null) {
      const used = stage === 'dpo' || stage === 'kto' || stage === 'ppo';
      if (used)
        d.skip(
          key,
          `${String(y[key])}: a second, frozen model for the reference; its weights and forward are not counted`,
        );
      else d.ignore(key); // read by the DPO, KTO and PPO stages only
    }
}

/**
 * A Megatron Core run (USE_MCA=1 with mcore_adapter, or USE_MEGATRON_BRIDGE=1): the parallel degrees,
 * distributed optimizer and recompute its keys set (alibaba/ROLL mcore_adapter/src/mcore_adapter/
 * training_args.py @1bc12057, LLaMA-Factory src/llamafactory/hparams/megatron_bridge_args.py @ff6d4d12).
 * mcore_adapter's trainer (trainer/trainer.py @044104da) runs gradient_accumulation_steps micro-batches of
 * per_device_train_batch_size through Megatron's pipeline schedule.
 */
function applyMegatron(d: Draft, y: Obj): void {
  if (y.deepspeed || y.fsdp)
    throw new ImportError(
      'deepspeed',
      'deepspeed / fsdp: not used by a Megatron run (mcore_adapter sets deepspeed None)',
    );
  d.set('parallel.engine', 'megatron');
  for (const [key, path] of Object.entries(MEGATRON_DEGREES))
    if (y[key] !== undefined && y[key] !== null) d.set(path, int(y[key], key));
  d.note(
    "Megatron keys (tensor_model_parallel_size, ...): a Megatron Core run (LLaMA-Factory USE_MCA=1 or USE_MEGATRON_BRIDGE=1), parallel.engine megatron; the world size is not in the file: parallel.gpus is llmem's default unless set",
  );
  // both default sequence_parallel to false; llmem's default is true
  d.set(
    'parallel.sequence_parallel',
    y.sequence_parallel === undefined ? false : bool(y.sequence_parallel, 'sequence_parallel'),
  );
  // use_distributed_optimizer: false in mcore_adapter, true in megatron_bridge_args.py
  const bridge = [
    'mixed_precision',
    'use_packed_sequences',
    'megatron_pretrained_checkpoint',
    'export_hf_on_finish',
    'extra_config',
  ].some((k) => y[k] !== undefined);
  if (y.use_distributed_optimizer !== undefined)
    d.set('parallel.distributed_optimizer', bool(y.use_distributed_optimizer, 'use_distributed_optimizer'));
  else {
    d.set('parallel.distributed_optimizer', bridge);
    d.note(`use_distributed_optimizer absent: ${bridge} (${bridge ? 'Megatron Bridge' : 'mcore_adapter'} default)`);
  }
  // mcore_adapter: bf16 sets accumulate_allreduce_grads_in_fp32 (fp32 main gradients)
  d.set('training.grad_dtype', 'fp32');
  // recompute: only recompute_granularity (no HF gradient checkpointing); method None with full: every layer
  const gran = y.recompute_granularity;
  if (gran === undefined || gran === null) d.set('training.recompute', 'none');
  else {
    const g = oneOf(gran, 'recompute_granularity', ['full', 'selective'] as const);
    d.set('training.recompute', g);
    if (g === 'full' && y.recompute_method === 'block' && y.recompute_num_layers !== undefined)
      d.set('training.recompute_layers', int(y.recompute_num_layers, 'recompute_num_layers'));
    else if (g === 'full' && y.recompute_num_layers !== undefined)
      d.skip('recompute_num_layers', 'uniform chunks of layers are counted as every layer recomputed');
    if (g === 'selective' && y.recompute_modules !== undefined)
      d.set(
        'training.recompute_modules',
        String(y.recompute_modules)
          .split(',')
          .map((m) =>
            oneOf(m.trim(), 'recompute_modules', [
              'core_attn',
              'mlp',
              'layernorm',
              'moe',
              'moe_act',
              'mla_up_proj',
            ] as const),
          ),
      );
  }
  for (const key of ['disable_gradient_checkpointing', 'use_unsloth_gc'])
    if (y[key] !== undefined) d.note(`${key}: no effect under Megatron (recompute_granularity decides)`);
  const dispatcher = y.moe_token_dispatcher_type;
  if (dispatcher !== undefined && dispatcher !== 'alltoall')
    d.skip(
      'moe_token_dispatcher_type',
      `the ${String(dispatcher)} dispatcher's buffers are not modelled (counted as the all-to-all dispatcher's)`,
    );
  if (y.moe_layer_recompute === true) d.skip('moe_layer_recompute', 'use training.recompute selective with moe');
  if (y.cross_entropy_loss_fusion === true) d.note("cross_entropy_loss_fusion: counted as Megatron's standard loss");
  if (y.optimizer_cpu_offload === true) d.set('parallel.offload_optimizer', 'cpu');
  for (const key of [
    'mixed_precision',
    'use_packed_sequences',
    'extra_config',
    'accumulate_allreduce_grads_in_fp32',
    'optimizer_offload_fraction',
    'sequence_packing',
  ])
    if (y[key] !== undefined && y[key] !== null && !(key === 'mixed_precision' && y[key] === 'bf16_mixed'))
      d.skip(key, `${String(y[key])}: not modelled; not applied`);
}

/**
 * enable_liger_kernel (src/llamafactory/model/model_utils/liger_kernel.py @ff6d4d12): Liger's defaults for the
 * model (fused linear cross-entropy, RMSNorm, RoPE, SwiGLU); stages other than pt and sft keep the
 * logits (cross_entropy instead of the fused loss).
 */
function liger(d: Draft, key: string, stage: unknown): void {
  const keepsLogits = stage !== undefined && stage !== null && stage !== 'pt' && stage !== 'sft';
  if (!keepsLogits) d.set('training.loss', 'fused');
  d.skip(
    key,
    `Liger's RMSNorm, RoPE and SwiGLU kernels (fewer saved activations) are not modelled${keepsLogits ? `; stage ${String(stage)} keeps the logits (Liger cross-entropy, no config v1 loss for it)` : '; its fused linear cross-entropy is applied (training.loss fused)'}`,
  );
}
