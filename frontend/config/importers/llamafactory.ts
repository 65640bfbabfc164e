// LLaMA-Factory training YAML (examples/train_lora/*.yaml) -> config v1. Keys and defaults:
// src/llamafactory/hparams/{model_args,finetuning_args,data_args,training_args}.py and
// https://llamafactory.readthedocs.io/en/latest/advanced/arguments.html; the remaining
// keys are Hugging Face TrainingArguments.
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
import { applyLlamaFactoryV1, isLlamaFactoryV1 } from './llamafactory-v1.js';
import { applyFsdpOption, applyOptim, applyPrecisionFlags, defaultToDdp } from './training-args.js';
import {
  applyFullModules,
  applyLoraTargets,
  applyModelId,
  bool,
  Draft,
  guard,
  ImportError,
  int,
  num,
  oneOf,
  parseYamlText,
  type ImportResult,
} from './common.js';

// No effect on per-GPU memory: data, templates, logging, schedules, evaluation, export.
const IGNORED =
  /^(trust_remote_code|do_train|do_eval|do_predict|dataset|dataset_dir|eval_dataset|template|max_samples|overwrite_cache|preprocessing_num_workers|dataloader_num_workers|output_dir|logging_steps|save_steps|save_strategy|save_total_limit|plot_loss|overwrite_output_dir|save_only_model|report_to|run_name|learning_rate|num_train_epochs|max_steps|lr_scheduler_type|warmup_ratio|warmup_steps|weight_decay|max_grad_norm|ddp_timeout|resume_from_checkpoint|val_size|per_device_eval_batch_size|eval_strategy|eval_steps|lora_alpha|use_rslora|pissa_init|pissa_iter|pissa_convert|create_new_adapter|loraplus_lr_ratio|loraplus_lr_embedding|adapter_name_or_path|cache_dir|seed|tokenized_path|streaming|buffer_size|mix_strategy|interleave_probs|train_on_prompt|mask_history|default_system|enable_thinking|tool_format|image_max_pixels|image_min_pixels|video_max_pixels|video_fps|video_maxlen|freeze_vision_tower|freeze_multi_modal_projector|freeze_language_model|rope_scaling|moe_aux_loss_coef|pref_beta|pref_ftx|pref_loss|simpo_gamma|dpo_label_smoothing|ref_model|ref_model_adapters|reward_model_type|finetuning_args|print_param_status|include_num_input_tokens_seen|hub_model_id|push_to_hub|export_.*|infer_backend|infer_dtype|tf32|logging_dir|fp8_backend|fsdp_transformer_layer_cls_to_wrap|fsdp_min_num_params|lora_bias|new_special_tokens|resize_vocab|split_special_tokens|model_revision|use_fast_tokenizer|low_cpu_mem_usage|flash_attn_kwargs|ddp_find_unused_parameters|val_.*|compute_accuracy|predict_with_generate|neat_packing|packing|data_shared_file_system|gradient_checkpointing_kwargs|use_reentrant_gc|optim_args|adam_.*|tokenized_.*|sft_.*)$/;

/** Import a LLaMA-Factory YAML. */
export function importLlamaFactory(text: string, also?: string): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'LLaMA-Factory YAML');
    const d = new Draft();
    d.stack('llamafactory');
    const file: DeepSpeedFile = { text: also, read: false };
    if (isLlamaFactoryV1(y)) {
      applyLlamaFactoryV1(d, y, file);
      reportUnreadFile(d, file);
      return d.result();
    }
    applyPrecisionFlags(d, y.bf16 ?? null, y.fp16 ?? null);
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
    if (type === 'lora') {
      d.set('training.finetune.method', bits ? 'qlora' : 'lora');
      d.set('training.finetune.lora_rank', y.lora_rank === undefined ? 8 : int(y.lora_rank, 'lora_rank'));
      if (y.lora_rank === undefined) d.note('lora_rank absent: 8 (LLaMA-Factory default)');
      applyLoraTargets(d, 'lora_target', y.lora_target ?? 'all');
      if (bits) {
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
    else d.skip('finetuning_type', `${type}: partial fine-tuning is not modelled; set training.finetune yourself`);
    if (bits && type !== 'lora') d.skip('quantization_bit', 'quantized bases are modelled with LoRA (qlora) only');
    // Gradient checkpointing is on unless disable_gradient_checkpointing (model_args.py).
    if (
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
        case 'stage': {
          const stage = oneOf(v, key, ['pt', 'sft', 'rm', 'ppo', 'dpo', 'kto'] as const);
          if (stage === 'rm') d.skip(key, 'rm: the value head (hidden x 1) is not counted');
          else if (stage === 'ppo')
            d.skip(key, 'ppo: the reward and value models and the generation KV cache are not modelled');
          else if ((stage === 'dpo' || stage === 'kto') && type !== 'lora')
            d.skip(key, `${stage}: the frozen reference model's weights and forward are not modelled`);
          else if (stage === 'dpo' || stage === 'kto')
            d.note(
              `${stage} with LoRA: the reference model is the base with adapters disabled (no extra weights); chosen and rejected sequences double the batch (set training.micro_batch accordingly)`,
            );
          break;
        }
        case 'quantization_method':
          if (!['bitsandbytes', 'bnb'].includes(String(v)))
            d.skip(key, `${String(v)} quantization is not modelled (bitsandbytes only)`);
          break;
        case 'lora_dropout':
          d.set('training.finetune.lora_dropout', num(v, key));
          break;
        case 'per_device_train_batch_size':
          d.set('training.micro_batch', int(v, key));
          break;
        case 'gradient_accumulation_steps':
          d.set('training.grad_accum', int(v, key));
          break;
        case 'pure_bf16':
          if (bool(v, key)) {
            d.set('training.master_weights', false);
            d.note('pure_bf16: bf16 weights without an fp32 master copy');
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
        case 'use_galore':
        case 'use_badam':
        case 'use_apollo':
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
        default:
          if (IGNORED.test(key)) d.ignore(key);
          else d.skip(key, 'not a known LLaMA-Factory key; not applied');
      }
    }
    reportUnreadFile(d, file);
    defaultToDdp(d, 'deepspeed or fsdp');
    if (y.flash_attn === undefined) d.set('training.attention', 'flash'); // "auto": SDPA / FlashAttention-2
    return d.result();
  });
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
