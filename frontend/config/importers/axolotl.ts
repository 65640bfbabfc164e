// axolotl YAML (examples/*/qlora.yml, lora.yml, fft*.yml) -> config v1. Keys:
// https://docs.axolotl.ai/docs/config-reference.html (src/axolotl/utils/schemas/config.py);
// optimizer names are the Trainer's `optim`, fsdp/fsdp_config are accelerate's.
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
import { applyDegree } from './parallel-degrees.js';
import { seqLenFromRl, worldSize } from './rl-common.js';
import {
  applyAcceleratorConfig,
  applyFsdpOption,
  applyOptim,
  applyDdpArgument,
  applyTrainingArgument,
  defaultToDdp,
  loadedDtypeStates,
} from './training-args.js';
import { applyDpo, applyGrpo, applyWeightSync } from './trl.js';
import {
  agreeWorldSize,
  applyFullModules,
  ALL_TARGETS,
  applyLoraTargets,
  applyModelId,
  bool,
  Draft,
  draftModel,
  guard,
  ImportError,
  isObject,
  int,
  num,
  obj,
  oneOf,
  parseYamlText,
  str,
  type ImportResult,
  refuseIfNoKeyKnown,
} from './common.js';
import type { Json } from '../../../wasm/llmem.js';

// No effect on per-GPU memory: data, prompts, logging, evaluation, saving, hub, schedules. Among them (axolotl@067b021c):
// processor_type, tokenizer_use_mistral_common (utils/schemas/model.py), swanlab_* (integrations/swanlab), peft
// (PeftConfig: loftq_config, an initialisation; utils/schemas/peft.py), resize_token_embeddings_to_32x (the vocabulary
// padded to a multiple of 32), relora_* / lisa_* / eaft_* (read with relora, lisa_n_layers, use_eaft, reported below).
const IGNORED =
  /^(base_model_config|tokenizer_type|tokenizer_config|tokenizer_use_fast|tokenizer_legacy|is_llama_derived_model|is_mistral_derived_model|is_qwen_derived_model|trust_remote_code|strict|datasets|test_datasets|dataset_prepared_path|push_dataset_to_hub|dataset_processes|dataset_exact_deduplication|shuffle_merged_datasets|val_set_size|output_dir|lora_model_dir|lora_alpha|lora_fan_in_fan_out|wandb_.*|mlflow_.*|comet_.*|use_wandb|use_mlflow|num_epochs|max_steps|lr_scheduler|lr_scheduler_kwargs|learning_rate|cosine_min_lr_ratio|train_on_inputs|group_by_length|early_stopping_patience|resume_from_checkpoint|auto_resume_from_checkpoints|local_rank|logging_steps|warmup_steps|warmup_ratio|evals_per_epoch|eval_.*|saves_per_epoch|save_.*|debug|weight_decay|max_grad_norm|special_tokens|tokens|chat_template|chat_template_jinja|default_system_message|hub_model_id|hub_strategy|seed|tf32|gpu_memory_limit|low_cpu_mem_usage|sample_packing_eff_est|sample_packing_group_size|sample_packing_bin_size|pretraining_dataset|total_num_tokens|loss_watchdog_.*|adam_.*|ddp|ddp_.*|dataloader_.*|include_tokens_per_second|profiler_steps|shuffle_before_merging_datasets|remove_unused_columns|gradient_checkpointing_kwargs|flash_attn_cross_entropy|flash_attn_rms_norm|flash_attn_fuse_qkv|flash_optimum|bnb_config_kwargs|optim_args|max_packed_sequence_len|sequence_length|skip_prepare_dataset|dataset_keep_in_memory|streaming|llama4_linearized_experts|sdp_attention_kwargs|embeddings_skip_upcast|unfrozen_parameters_regex|neftune_noise_alpha|liger_use_token_scaling|heads_k_stride|ring_attn_func|peft_use_rslora|min_sample_len|flex_attn_compile_kwargs|cosine_constant_lr_ratio|save_only_model|fp8_backend|eot_tokens|experimental_skip_move_to_device|model_quantization_config_kwargs|processor_type|tokenizer_use_mistral_common|revision_of_model|hf_use_auth_token|lr_quadratic_warmup|jagged_restart_.*|use_tensorboard|use_otel_metrics|otel_metrics_.*|evaluation_strategy|do_causal_lm_eval|curriculum_sampling|sample_packing_sequentially|torch_compile_mode|reinit_weights|use_ray|ray_num_workers|center_rewards_coefficient|streaming_multipack_buffer_size|pretrain_multipack_attn|resize_token_embeddings_to_32x|gptq_disable_exllama|use_swanlab|swanlab_.*|peft|relora_prune_ratio|relora_cpu_offload|relora_warmup_steps|relora_anneal_steps|lisa_step_interval|lisa_layers_attribute|eaft_alpha|eaft_k)$/;

/** Import an axolotl YAML; `worldSize` is the number of training processes (not in the file). */
export function importAxolotl(
  text: string,
  also?: string,
  worldSize?: number,
  launch?: Record<string, Json>,
): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'axolotl YAML');
    const d = new Draft();
    d.stack('axolotl');
    for (const [k, v] of Object.entries(launch ?? {})) d.set(`parallel.${k}`, v); // the accelerate launch's
    const file: DeepSpeedFile = { text: also, read: false };
    if (worldSize !== undefined) d.set('parallel.gpus', worldSize); // the launcher's, not the file's
    const set = (k: string) => y[k] !== undefined && y[k] !== null && y[k] !== false;
    const plugins = pluginNames(y.plugins);
    const prec = precision(y);
    d.set('training.dtype', prec.dtype);
    if (prec.auto) d.note(prec.auto);
    // Adapter: lora | qlora (load_in_4bit) | lora + load_in_8bit; none: full fine-tuning.
    const adapter =
      y.adapter === undefined || y.adapter === null || y.adapter === ''
        ? undefined
        : oneOf(y.adapter, 'adapter', ['lora', 'qlora', 'llama-adapter'] as const);
    const four = set('load_in_4bit') && bool(y.load_in_4bit, 'load_in_4bit');
    const eight = set('load_in_8bit') && bool(y.load_in_8bit, 'load_in_8bit');
    if (adapter === 'llama-adapter') d.skip('adapter', 'llama-adapter is not modelled');
    else if (adapter) {
      const quant = adapter === 'qlora' || four || eight;
      d.set('training.finetune.method', quant ? 'qlora' : 'lora');
      if (quant) {
        d.set('training.finetune.quant', eight && !four && adapter !== 'qlora' ? 'int8' : 'nf4');
        d.set('training.finetune.double_quant', true); // axolotl's BitsAndBytesConfig: bnb_4bit_use_double_quant=True
      }
      if (adapter === 'qlora' && !four) d.note('adapter qlora without load_in_4bit: 4-bit NF4 base assumed');
      d.set('training.finetune.lora_rank', set('lora_r') ? int(y.lora_r, 'lora_r') : 8);
      if (!set('lora_r')) d.note('lora_r absent: 8 assumed');
      if (set('lora_target_linear') && bool(y.lora_target_linear, 'lora_target_linear'))
        d.set('training.finetune.lora_targets', ALL_TARGETS);
      else if (set('lora_target_modules'))
        if (typeof y.lora_target_modules === 'string' && REGEX_CHARS.test(y.lora_target_modules))
          loraTargetRegex(d, 'lora_target_modules', y.lora_target_modules);
        else applyLoraTargets(d, 'lora_target_modules', y.lora_target_modules);
      else {
        d.set('training.finetune.lora_targets', ['q', 'v']);
        d.note('no lora_target_modules / lora_target_linear: PEFT default targets (q_proj, v_proj)');
      }
    } else {
      d.set('training.finetune.method', 'full');
      if (four || eight)
        d.skip(four ? 'load_in_4bit' : 'load_in_8bit', 'a quantized base without an adapter is not trainable; ignored');
    }
    // rl: the TRL trainer core/builders/rl.py builds; DPO, ORPO, SimPO and GRPO are config v1's rl section
    const rl = set('rl') ? oneOf(y.rl, 'rl', RL_TYPES) : undefined;
    const rlModelled = rl !== undefined && rl !== 'kto' && rl !== 'ebft';
    if (rl && set('sample_packing') && bool(y.sample_packing, 'sample_packing'))
      // src/axolotl/utils/schemas/validation.py check_sample_packing_w_rl (axolotl@067b021c)
      throw new ImportError(
        'sample_packing',
        'sample_packing: `sample_packing: true` does not work with RLHF training',
      );
    let micro: number | undefined;
    let accum: number | undefined;
    for (const [key, v] of Object.entries(y)) {
      if (v === null) continue;
      switch (key) {
        case 'bf16':
        case 'fp16':
        case 'bfloat16':
        case 'float16':
        case 'adapter':
        case 'load_in_4bit':
        case 'load_in_8bit':
        case 'lora_r':
        case 'lora_target_linear':
        case 'lora_target_modules':
        case 'batch_size':
        case 'peft_autocast_adapter_dtype': // with the precision, below
        case 'quantize_moe_experts':
        case 'lora_target_parameters': // with the model, below (moeExperts)
          break;
        case 'model_type':
          modelType(d, key, v);
          break;
        case 'num_labels':
          // src/axolotl/loaders/utils.py L178-180 (axolotl@067b021c): config_kwargs num_labels, read by a classification head only
          // the score head (hidden x num_labels) is not counted: model.head none
          if (isSequenceClassification(y.model_type)) int(v, key);
          else d.ignore(key);
          break;
        case 'reward_model':
          bool(v, key);
          break; // below, once the micro-batch is read
        case 'process_reward_model':
          if (bool(v, key))
            d.skip(
              key,
              'AxolotlPRMTrainer (trl PRMTrainer): a per-token classification head (AutoModelForTokenClassification) is not modelled; not applied',
            );
          break;
        case 'base_model':
          applyModelId(d, key, v);
          break;
        case 'lora_dropout':
          if (adapter) d.set('training.finetune.lora_dropout', num(v, key));
          break;
        case 'lora_modules_to_save':
          // PEFT modules_to_save (src/axolotl/loaders/adapter.py): a full trainable copy of each module
          if (adapter) applyFullModules(d, key, v);
          else d.ignore(key);
          break;
        case 'lora_mlp_kernel':
        case 'lora_qkv_kernel':
        case 'lora_o_kernel':
        case 'lora_embedding_kernel':
          // src/axolotl/utils/schemas/config.py (axolotl-ai-cloud/axolotl 067b021c): LoRA_MLP / LoRA_QKV / LoRA_O autograd
          // functions (src/axolotl/kernels/lora.py) that save their own tensors for backward, not PEFT's
          if (v === true)
            d.skip(
              key,
              "axolotl's LoRA autograd kernels save other tensors for backward than PEFT's layers; not modelled, counted as PEFT",
            );
          else d.ignore(key);
          break;
        case 'fused_attn_kernel':
          // src/axolotl/loaders/patch_manager.py @067b021c: a fused attention kernel patched into the model's layers
          if (v === true)
            d.skip(key, "axolotl's fused attention kernel is not modelled (counted as the attention set)");
          else d.ignore(key);
          break;
        case 'model_config':
        case 'overrides_of_model_config':
          // RemappedParameters (src/axolotl/utils/schemas/deprecated.py @067b021c): overrides of the base model's config.json
          if (isObject(v) && Object.keys(v).length)
            for (const k of Object.keys(v))
              d.skip(
                `${key}.${k}`,
                "an override of the base model's config.json; the preset's shape is used; not applied",
              );
          else d.ignore(key);
          break;
        case 'gptq':
          // src/axolotl/utils/schemas/peft.py: a GPTQ-quantized checkpoint, loaded through transformers' GPTQ integration
          if (bool(v, key))
            d.skip(key, 'a GPTQ-quantized base (packed 4-bit weights) is not modelled; counted at the compute dtype');
          break;
        case 'qat':
          // QATConfig (src/axolotl/utils/schemas/quantization.py): torchao fake-quantized linears during training
          d.skip(
            key,
            "quantization-aware training (torchao's fake-quantized linears) is not modelled; counted without it",
          );
          break;
        case 'lisa_n_layers':
          // LISAConfig (src/axolotl/utils/schemas/integrations.py): the LISA callback unfreezes lisa_n_layers sampled layers
          d.skip(
            key,
            'LISA trains a few sampled layers at a time, the rest frozen: not modelled; counted as full fine-tuning of every layer (an over-estimate)',
          );
          break;
        case 'use_eaft':
          // core/builders/causal.py: EAFT's loss (monkeypatch/loss/eaft.py) weights each token by the entropy of its logits
          if (bool(v, key)) d.skip(key, "EAFT's entropy-weighted loss over the logits is not modelled; not applied");
          break;
        case 'use_scattermoe':
        case 'use_sonicmoe':
        case 'use_dsv4_kernels':
        case 'nvfp4_merge_aware':
        case 'dsv4_fp4_grouped_mode':
          // KernelsPlugin's settings (src/axolotl/integrations/kernels/args.py): MoE expert kernels
          if (v === true || (typeof v === 'string' && key === 'dsv4_fp4_grouped_mode'))
            d.skip(key, "the KernelsPlugin's MoE expert kernel (its buffers) is not modelled; not applied");
          else d.ignore(key);
          break;
        case 'use_onebitllms':
          // src/axolotl/utils/schemas/model.py: the onebitllms package's 1-bit (BitNet) linears
          if (bool(v, key)) d.skip(key, '1-bit (BitNet) linears from onebitllms are not modelled; not applied');
          break;
        case 'device_map':
          // src/axolotl/loaders/model.py: the model's placement over devices (transformers / accelerate dispatch)
          d.skip(key, `${JSON.stringify(v)}: a placement of the model over devices is not modelled; not applied`);
          break;
        case 'accelerator_config':
          // TrainingArguments accelerator_config (src/axolotl/utils/schemas/config.py), e.g. gradient_accumulation_kwargs
          applyAcceleratorConfig(d, key, v);
          break;
        case 'diffusion':
        case 'llmcompressor':
          // the DiffusionPlugin's and LLMCompressorPlugin's settings (src/axolotl/integrations/diffusion, llm_compressor)
          if (plugins.some((p) => p.toLowerCase().includes(key === 'diffusion' ? 'diffusion' : 'llm_compressor')))
            d.ignore(key); // the plugin's line says what is not modelled
          else d.skip(key, 'read only by its plugin, which plugins does not list; not applied');
          break;
        case 'relora':
          // ReLoRA (src/axolotl/utils/schemas/peft.py, monkeypatch/relora.py): the adapters merged into the base and
          // restarted every relora_steps
          if (v !== false)
            d.skip(key, 'ReLoRA merges and restarts the adapters periodically (merges not modelled); counted as LoRA');
          break;
        case 'peft_use_dora':
        case 'relora_steps':
        case 'unfrozen_parameters':
        case 's2_attention':
          if (v !== false) d.skip(key, 'not modelled');
          break;
        case 'sequence_len':
          d.set('training.seq_len', int(pyInt(v), key));
          break;
        case 'sample_packing':
        case 'pad_to_sequence_len':
          if (v === true) d.note(`${key}: every micro-batch filled to sequence_len`);
          break;
        case 'micro_batch_size':
          d.set('training.micro_batch', (micro = int(pyInt(v), key)));
          break;
        case 'gradient_accumulation_steps':
          accum = int(pyInt(v), key);
          if (!rlModelled) d.set('training.grad_accum', accum); // RL: rl.mini_batch sets the accumulation
          break;
        case 'optimizer':
          applyOptim(d, key, v);
          break;
        case 'gradient_checkpointing':
          gradientCheckpointing(d, key, v);
          break;
        case 'activation_offloading': // true, legacy, disk, hidden_states (src/axolotl/utils/schemas/config.py)
          if (v !== false) {
            d.set('training.activation_offload', true);
            if (v === 'disk')
              d.note('activation_offloading disk: offloaded activations go to disk; counted as offloaded to the host');
          }
          break;
        case 'flash_attention':
        case 'sdp_attention':
        case 'xformers_attention':
        case 'flex_attention':
          if (bool(v, key)) d.set('training.attention', 'flash');
          break;
        case 'eager_attention':
          if (bool(v, key)) d.set('training.attention', 'eager');
          break;
        case 'attn_implementation': // transformers' name: flash_attention_2/3, sdpa, flex_attention, eager, kernels
          d.set('training.attention', str(v, key) === 'eager' ? 'eager' : 'flash');
          break;
        case 'fp8':
          // src/axolotl/utils/trainer.py: ACCELERATE_MIXED_PRECISION=fp8 (torchao fp8 linears, bf16 elsewhere)
          if (bool(v, key)) {
            d.set('training.fp8_linear', true);
            d.set('training.dtype', 'bf16');
            d.note('fp8: accelerate fp8 mixed precision: fp8 linears, bf16 elsewhere');
          }
          break;
        case 'fp8_enable_fsdp_float8_all_gather': // passed to accelerate's torchao recipe (loaders/patch_manager.py)
          if (bool(v, key) && set('fp8')) d.set('parallel.fp8_all_gather', true);
          break;
        case 'use_kernels':
          if (bool(v, key))
            d.skip(key, 'layers replaced by kernels from the Hugging Face kernels hub are not modelled; not applied');
          break;
        case 'experts_implementation':
          d.skip(key, `${String(v)}: the MoE expert kernel's buffers are not modelled; not applied`);
          break;
        case 'model_quantization_config': {
          // transformers quantization configs; Mxfp4Config(dequantize=True) loads gpt-oss in bf16
          const kwargs = y.model_quantization_config_kwargs;
          const dequantize =
            typeof kwargs === 'object' && kwargs !== null && !Array.isArray(kwargs) && kwargs.dequantize === true;
          if (v === 'Mxfp4Config' && dequantize)
            d.note(`${key} Mxfp4Config, dequantize: the weights load dequantized (bf16)`);
          else d.skip(key, `${String(v)}: a quantized base is modelled with LoRA (adapter qlora) only; not applied`);
          break;
        }
        case 'tiled_mlp':
          if (bool(v, key))
            d.skip(
              key,
              'the MLP computed in sequence tiles (its intermediate never whole) is not modelled; not applied',
            );
          break;
        case 'plugins':
          for (const name of plugins) plugin(d, name);
          break;
        case 'cut_cross_entropy':
          if (!plugins.some(isCutCrossEntropy))
            d.skip(key, 'read only by the CutCrossEntropyPlugin, which plugins does not list; not applied');
          break; // with the plugin: below
        case 'liger_fused_linear_cross_entropy':
        case 'liger_cross_entropy':
        case 'liger_rms_norm':
        case 'liger_rms_norm_gated':
        case 'liger_layer_norm':
        case 'liger_rope':
        case 'liger_glu_activation':
        case 'liger_swiglu':
          liger(d, key, v, plugins.some(isLiger));
          break;
        case 'chunked_cross_entropy':
          if (bool(v, key)) d.set('training.loss', 'chunked');
          break;
        case 'flash_attn_fuse_mlp':
          // src/axolotl/loaders/patch_manager.py @067b021c _apply_llama_flash_attn_patches: Llama / Llama 4 / ERNIE
          // 4.5 under flash attention get xformers' fused SwiGLU MLP (replace_llama_mlp_with_swiglu)
          if (bool(v, key))
            d.skip(
              key,
              "xformers' fused SwiGLU replaces the MLP of Llama-family models (axolotl replace_llama_mlp_with_swiglu): what it saves for the backward is not modelled (counted as the eager MLP)",
            );
          break;
        case 'chunked_cross_entropy_num_chunks':
          d.set('training.loss_chunks', int(v, key));
          break;
        case 'deepspeed':
          applyDeepSpeedRef(d, key, v, file);
          break;
        case 'fsdp':
          applyFsdpOption(d, key, v, fsdpConfig(y), 'fsdp_config');
          break;
        case 'fsdp_config':
          // fsdp_config alone turns FSDP on (src/axolotl/core/builders/base.py @067b021c: fsdp = cfg.fsdp or True)
          if (!set('fsdp') && v !== false) applyFsdpOption(d, key, true, fsdpConfig(y), 'fsdp_config');
          break;
        case 'fsdp_version':
          if (!set('fsdp') && !set('fsdp_config'))
            d.note(`fsdp_version ${String(v)} without fsdp_config: FSDP is off (axolotl turns it on with fsdp_config)`);
          break; // otherwise folded into fsdp_config
        case 'tensor_parallel_size':
        case 'context_parallel_size':
        case 'sequence_parallel_degree':
        case 'dp_shard_size':
        case 'dp_replicate_size':
        case 'expert_parallel_size':
          break; // below, together
        case 'torch_compile':
          if (v !== false) d.set('runtime.torch_compile', true);
          break;
        case 'rl':
        case 'trl':
        case 'vllm':
        case 'ebft':
          break; // below, with the batch
        default:
          if (RL_KEYS.test(key)) {
            if (!rl) d.ignore(key); // read by the RL trainers only
          } else if (applyDdpArgument(d, key, v)) continue;
          else if (IGNORED.test(key)) d.ignore(key);
          else d.skip(key, 'not a known axolotl key; not applied');
      }
    }
    parallelSizes(d, y);
    moeExperts(d, y, adapter !== undefined);
    if (set('reward_model')) rewardModel(d, y, micro);
    if (plugins.some(isCutCrossEntropy)) cutCrossEntropy(d, y.cut_cross_entropy);
    reportUnreadFile(d, file);
    if (set('batch_size')) {
      const total = int(y.batch_size, 'batch_size');
      if (micro && !set('gradient_accumulation_steps') && total % micro === 0) {
        accum = total / micro;
        if (!rlModelled) d.set('training.grad_accum', accum);
      } else if (!set('gradient_accumulation_steps'))
        d.skip('batch_size', 'needs micro_batch_size to derive gradient accumulation');
    }
    if (!set('sequence_len') && !rlModelled) {
      // src/axolotl/utils/schemas/config.py @067b021c: sequence_len: int = Field(default=512)
      d.set('training.seq_len', 512);
      d.note('sequence_len absent: 512 (axolotl schema default)');
    }
    if (rl) preference(d, y, rl, micro, accum ?? 1, adapter !== undefined, file);
    // without rl: read by no trainer (vllm: by `axolotl vllm-serve` too, a process of its own)
    else for (const k of ['trl', 'vllm', 'ebft']) if (set(k)) d.ignore(k);
    defaultToDdp(d, 'deepspeed or fsdp');
    masterCopy(d, y, prec);
    refuseIfNoKeyKnown(
      d,
      Object.keys(y).filter((k) => y[k] !== null),
      'not a known axolotl key; not applied',
      'axolotl',
    );
    if (rlModelled) seqLenFromRl(d);
    return d.result();
  });
}

type Dtype = 'fp32' | 'fp16' | 'bf16';
interface Precision {
  /** cfg.torch_dtype: the dtype the model loads in */
  dtype: Dtype;
  /** the Trainer's mixed precision (accelerate autocast), if any */
  amp?: 'bf16' | 'fp16';
  /** why: the keys that decided it */
  why: string;
  /** a note on bf16 "auto", if given */
  auto?: string;
}

/**
 * bf16 / fp16 / bfloat16 / float16 -> the load dtype and the Trainer's mixed precision
 * (axolotl@067b021c): src/axolotl/utils/config/__init__.py resolve_dtype L156-196 sets
 * cfg.torch_dtype (bf16 when bf16 or bfloat16; fp16 when fp16, float16 or load_in_8bit),
 * which the model loads in (src/axolotl/loaders/model.py L611-612); core/builders/base.py
 * _configure_precision_settings L270-278 passes fp16 = fp16 and not bf16, bf16 = bf16 or
 * bfloat16 (none for bf16 "full") to TrainingArguments.
 */
function precision(y: Record<string, Json>): Precision {
  const flag = (k: string) => y[k] !== undefined && y[k] !== null && bool(y[k], k);
  const b = y.bf16 === undefined || y.bf16 === null ? false : y.bf16;
  if (b !== true && b !== false && b !== 'auto' && b !== 'full')
    throw new ImportError('bf16', `bf16: must be true, false, "auto" or "full", not ${JSON.stringify(b)}`);
  const fp16 = flag('fp16');
  const bfloat16 = flag('bfloat16');
  const float16 = flag('float16');
  const eight = flag('load_in_8bit');
  // resolve_dtype L157-170: "auto" is bf16 where is_torch_bf16_gpu_available() (Ampere and newer), else fp16
  const bf = b === true || b === 'full' || (b === 'auto' && !fp16);
  const fp = fp16 && !bf; // L188-189: bf16 turns fp16 off
  const dtype: Dtype = bf || bfloat16 ? 'bf16' : fp || float16 || eight ? 'fp16' : 'fp32';
  const amp = b !== 'full' && (bf || bfloat16) ? 'bf16' : fp ? 'fp16' : undefined;
  const why =
    bf || bfloat16
      ? b === true || b === 'auto' || b === 'full'
        ? `bf16 ${String(b)}`
        : 'bfloat16'
      : fp
        ? 'fp16'
        : float16
          ? 'float16'
          : 'load_in_8bit';
  const auto =
    b === 'auto' && !fp16
      ? 'bf16 "auto": bf16 assumed; on a GPU without bf16 (before Ampere) axolotl loads the model in fp16 with fp16 mixed precision instead (resolve_dtype)'
      : undefined;
  return { dtype, amp, why, auto };
}

/**
 * Whether the 16-bit weights have an fp32 copy, per engine, once it is known. No engine
 * upcasts them under single GPU / DDP (accelerate wraps the forward in torch.autocast only:
 * accelerate@v1.13.0 (3a2230ac) accelerator.py prepare_model L1809), nor under axolotl's FSDP2
 * (its fsdp2_prepare_model, src/axolotl/monkeypatch/accelerate/fsdp2.py L539-803, replaces
 * accelerate's and casts nothing), so weights, gradients and torch optimizer states are 16-bit.
 */
function masterCopy(d: Draft, y: Record<string, Json>, p: Precision): void {
  if (p.dtype === 'fp32') return;
  const engine = d.get('parallel.engine');
  const full = d.get('training.finetune.method') === 'full';
  const lora = !full && d.get('training.finetune.method') !== undefined;
  // peft get_peft_model autocast_adapter_dtype (default true; src/axolotl/loaders/adapter.py L368-369 passes
  // peft_autocast_adapter_dtype): peft 0.19.1 tuners_utils.py _cast_adapter_dtype upcasts bf16/fp16 adapters to fp32
  const keepAdapter = y.peft_autocast_adapter_dtype === false;
  if (y.peft_autocast_adapter_dtype !== undefined && y.peft_autocast_adapter_dtype !== null) {
    bool(y.peft_autocast_adapter_dtype, 'peft_autocast_adapter_dtype');
    if (!lora) d.ignore('peft_autocast_adapter_dtype');
  }
  if (engine === 'deepspeed') {
    // DeepSpeed's bf16/fp16 optimizers keep an fp32 master copy and fp32 states (the DeepSpeed config says which)
    if (lora && keepAdapter) d.set('training.finetune.adapter_dtype', p.dtype);
    return;
  }
  if (engine === 'fsdp1' && p.amp) {
    // accelerate@v1.13.0 (3a2230ac) accelerator.py prepare_model L1980-2019: mixed precision on, FSDP1 upcasts each
    // trainable flat parameter to fp32 (the master copy); the adapters too
    d.note(
      `${p.why}: the model loads in ${p.dtype}; FSDP1 with mixed precision upcasts the trainable parameters to fp32 (accelerate prepare_model): fp32 master weights`,
    );
    return;
  }
  if (lora) {
    if (keepAdapter) {
      d.set('training.finetune.adapter_dtype', p.dtype);
      d.set('training.master_weights', false);
      d.note(`peft_autocast_adapter_dtype false: LoRA adapters kept in ${p.dtype}, no fp32 copy`);
    }
    return;
  }
  if (!full) return;
  d.set('training.master_weights', false);
  d.set('training.grad_dtype', p.dtype); // param.grad takes the parameter's dtype; DDP buckets and FSDP2 shards too
  const optim = (typeof y.optimizer === 'string' ? y.optimizer : 'adamw_torch_fused').toLowerCase();
  const states = loadedDtypeStates(optim, p.dtype);
  if (states === p.dtype) d.set('training.optimizer_dtype', p.dtype);
  const where =
    engine === 'fsdp2'
      ? "axolotl's FSDP2 does not upcast them"
      : engine === 'fsdp1'
        ? 'no mixed precision, so FSDP1 does not upcast them'
        : 'DDP and one GPU never upcast them';
  d.note(
    `${p.why}: the weights load in ${p.dtype} and ${where}: ${p.dtype} weights and gradients${states === p.dtype ? ` and optimizer states (${optim})` : ''}, no fp32 master copy`,
  );
  if (p.amp === 'fp16' && engine !== 'fsdp2')
    d.note(
      'fp16: full fine-tuning of fp16-loaded weights under the fp16 GradScaler is expected to fail ("Attempting to unscale FP16 gradients"; axolotl\'s own warning, utils/schemas/validation.py check_fft_possible_bad_config)',
    );
  // src/axolotl/loaders/model.py _configure_embedding_dtypes L423-476: without FSDP, embed_tokens/lm_head (and norms)
  // are upcast to fp32 and cast back only for an adapter, cut_cross_entropy or an attention other than eager/sdpa
  const attn = attentionImpl(y);
  if (
    engine !== 'fsdp1' &&
    engine !== 'fsdp2' &&
    (attn === undefined || attn === 'eager' || attn === 'sdpa') &&
    !y.cut_cross_entropy
  )
    d.note(
      `attn_implementation ${attn ?? 'unset'}: axolotl keeps embed_tokens and lm_head in fp32 (loaders/model.py _configure_embedding_dtypes); counted in ${p.dtype}, an under-estimate`,
    );
}

/** axolotl's attn_implementation, or the one its legacy flag maps to (utils/schemas/enums.py LEGACY_ATTN_FLAG_TO_IMPL). */
function attentionImpl(y: Record<string, Json>): string | undefined {
  if (typeof y.attn_implementation === 'string') return y.attn_implementation;
  const legacy: [string, string][] = [
    ['xformers_attention', 'xformers'],
    ['sage_attention', 'sage'],
    ['flex_attention', 'flex_attention'],
    ['flash_attention', 'flash_attention_2'],
    ['sdp_attention', 'sdpa'],
    ['eager_attention', 'eager'],
  ];
  return legacy.find(([k]) => y[k] === true)?.[1];
}

const isSequenceClassification = (v: Json | undefined) => typeof v === 'string' && /ForSequenceClassification$/.test(v);

/** model_type: the transformers class the model loads with (src/axolotl/loaders/model.py L929-936, axolotl@067b021c). */
function modelType(d: Draft, key: string, v: Json): void {
  const name = str(v, key);
  if (isSequenceClassification(name)) {
    // AutoModelForSequenceClassification: a bias-free score Linear(hidden, num_labels) in place of the LM head
    // (transformers GenericForSequenceClassification); config v1's classification head is BERT's pooler, so none is
    // counted, as for a *ForSequenceClassification config.json (hf.ts headOf)
    d.set('model.head', 'none');
    d.note(
      `${key} ${name}: a hidden x num_labels score head (not counted), no logits over the vocabulary (model.head none)`,
    );
  } else if (/ForTokenClassification$/.test(name))
    d.skip(key, `${name}: a per-token classification head is not modelled; not applied`);
  else d.ignore(key);
}

/**
 * reward_model: AxolotlRewardTrainer (trl RewardTrainer, core/builders/causal.py L160-161) with trl's
 * DataCollatorForPreference (causal.py L515-519): trl@v1.8.0 (9ee8600b) reward_trainer.py L198-204 stacks
 * chosen then rejected, so each forward runs 2 x micro_batch_size sequences.
 */
function rewardModel(d: Draft, y: Record<string, Json>, micro: number | undefined): void {
  if (!bool(y.reward_model, 'reward_model')) return;
  if (!isSequenceClassification(y.model_type))
    d.note('reward_model without model_type AutoModelForSequenceClassification: the LM head is kept as loaded');
  const m = micro ?? 1;
  d.set('training.micro_batch', 2 * m);
  d.note(
    `reward_model: chosen and rejected sequences in one batch (trl DataCollatorForPreference): training.micro_batch ${2 * m} = 2 x micro_batch_size ${m}`,
  );
}

// rl (src/axolotl/utils/schemas/enums.py RLType, axolotl@067b021c): the TRL trainer core/builders/rl.py builds for it.
const RL_TYPES = ['dpo', 'ipo', 'orpo', 'kto', 'simpo', 'grpo', 'gdpo', 'ebft'] as const;
type RlType = (typeof RL_TYPES)[number];
// Top-level keys read only by the RL trainers (src/axolotl/utils/schemas/config.py @067b021c): mapped below where
// they change memory (dpo_padding_free, precompute_ref_log_probs, rl_adapter_ref_model, dpo_use_liger_kernel, the
// beta GRPO reads), else loss terms and weights.
const RL_KEY_LIST = [
  'rl_beta',
  'orpo_alpha',
  'simpo_gamma',
  'cpo_alpha',
  'kto_desirable_weight',
  'kto_undesirable_weight',
  'dpo_loss_type',
  'dpo_loss_weights',
  'dpo_label_smoothing',
  'dpo_use_weighting',
  'dpo_padding_free',
  'dpo_use_liger_kernel',
  'precompute_ref_log_probs',
  'rl_adapter_ref_model',
];
const RL_KEYS = new RegExp(`^(${RL_KEY_LIST.join('|')})$`);
// TRLConfig fields (src/axolotl/utils/schemas/trl.py @067b021c) that GRPOStrategy.set_training_args_kwargs passes to
// GRPOConfig with no effect on per-GPU memory: sampling, rewards, the loss, logging, the server's address.
const TRL_NO_EFFECT =
  /^(vllm_server_host|vllm_server_port|vllm_server_timeout|vllm_guided_decoding_regex|reward_weights|log_completions|num_completions_to_print|importance_sampling_level|sync_ref_model|ref_model_mixup_alpha|ref_model_sync_steps|scale_rewards|temperature|top_p|top_k|min_p|repetition_penalty|generation_kwargs|chat_template_kwargs|num_iterations|epsilon|epsilon_high|loss_type|mask_truncated_completions|rollout_func|multi_objective_aggregation|vllm_importance_sampling_correction|vllm_importance_sampling_mode|vllm_importance_sampling_cap|off_policy_mask_threshold|use_bias_correction_kl|vllm_lora_sync)$/;
// TRLConfig fields only axolotl's async GRPO trainer reads (core/trainers/grpo/fast_async_trainer.py FastAsyncGRPOConfig).
const TRL_ASYNC =
  /^(use_data_producer|async_prefetch|prefetch_depth|vllm_sync_interval|streaming_partial_batch|streaming_min_groups|reward_num_workers|replay_buffer_size|replay_recompute_logps|reroll_start_fraction|reroll_max_groups|skip_zero_advantage_batches)$/;
// The GRPOConfig keys GRPOStrategy.set_training_args_kwargs fills from trl: under their own names (core/trainers/grpo/__init__.py).
const GRPO_FROM_TRL = ['num_generations', 'max_completion_length', 'generation_batch_size', 'use_vllm', 'vllm_mode'];

type Yaml = Record<string, Json>;
const given = (v: Json | undefined): v is Json => v !== undefined && v !== null;
const on = (y: Yaml, k: string) => given(y[k]) && y[k] !== false;
const section = (y: Yaml, key: string): Yaml => (given(y[key]) ? (obj(y[key], key) as Yaml) : {});

/** The RL-only keys a trainer does not map: read, loss terms and weights. */
function ignoreRlKeys(d: Draft, y: Yaml, handled: readonly string[] = []): void {
  for (const k of RL_KEY_LIST) if (given(y[k]) && !handled.includes(k)) d.ignore(k);
}

/**
 * rl -> config v1's rl section with trl.ts's TRL semantics: axolotl builds TRL's trainers (core/builders/rl.py
 * @067b021c; trl==1.8.0, pyproject.toml). dpo / ipo: DPOTrainer with axolotl's own reference (train.py
 * setup_reference_model: a second copy for a full fine-tune; none with an adapter, so TRL disables the adapters);
 * orpo: ORPOTrainer and simpo: CPOTrainer, with no reference; grpo / gdpo: GRPOTrainer from the trl: and vllm: blocks;
 * kto and ebft have no config v1 equivalent and are reported.
 */
function preference(
  d: Draft,
  y: Yaml,
  rl: RlType,
  microKey: number | undefined,
  accum: number,
  adapter: boolean,
  file: DeepSpeedFile,
): void {
  const trl = section(y, 'trl');
  const vllm = section(y, 'vllm');
  if (rl === 'kto' || rl === 'ebft') {
    notModelled(d, y, rl, trl, microKey);
    return;
  }
  const micro = microKey ?? 1;
  if (microKey === undefined) {
    d.set('training.micro_batch', 1);
    d.note('micro_batch_size absent: 1 (axolotl default)');
  }
  const gpus = d.get('parallel.gpus');
  const world = typeof gpus === 'number' ? gpus : worldSize(d, undefined, undefined, 'An axolotl config');
  // the data-parallel ranks: TP and CP ranks share their batch (parallelSizes, axolotl's ParallelismConfig)
  const tpcp =
    ((d.get('parallel.tp') as number | undefined) ?? 1) * ((d.get('parallel.cp') as number | undefined) ?? 1);
  const dp = world % tpcp === 0 ? world / tpcp : world;
  d.set('rl.algorithm', rl === 'grpo' || rl === 'gdpo' ? 'grpo' : 'dpo');
  if (rl === 'grpo' || rl === 'gdpo') {
    grpo(d, y, rl, trl, vllm, micro, accum, dp, adapter, file);
    return;
  }
  for (const k of Object.keys(trl)) if (given(trl[k])) d.ignore(`trl.${k}`); // beta: a loss weight; the rest GRPO's
  for (const k of Object.keys(vllm)) if (given(vllm[k])) d.ignore(`vllm.${k}`); // `axolotl vllm-serve`'s
  // core/builders/base.py L681-682: max_length = sequence_len (default 512, src/axolotl/utils/schemas/config.py L665)
  const seq = on(y, 'sequence_len') ? int(pyInt(y.sequence_len), 'sequence_len') : 512;
  if (!on(y, 'sequence_len')) d.note('sequence_len absent: 512 (axolotl schema default), passed as max_length');
  const names: Record<string, string> = { max_length: 'sequence_len', padding_free: 'dpo_padding_free' };
  const n = (k: string) => names[k] ?? k;
  if (rl === 'orpo' || rl === 'simpo') {
    // rl.py: AxolotlORPOTrainer (trl.experimental.orpo ORPOTrainer; setup_reference_model skips orpo) and
    // AxolotlCPOTrainer (trl.experimental.cpo CPOTrainer, loss_type simpo): no ref_model
    d.note(
      `rl ${rl}: TRL's ${rl === 'orpo' ? 'ORPOTrainer' : 'CPOTrainer with loss_type simpo'} (core/builders/rl.py)`,
    );
    applyDpo(d, { max_length: seq }, micro, accum, dp, rl === 'orpo' ? 'orpo' : 'cpo', n);
    if (rl === 'simpo' && !adapter) loadedUnused(d, 'CPOTrainer');
    ignoreRlKeys(d, y);
    return;
  }
  // dpo / ipo: AxolotlDPOTrainer(model, model_ref), DPOStrategy.set_training_args_kwargs (core/trainers/dpo/__init__.py)
  d.note(
    `rl ${rl}: TRL's DPOTrainer${rl === 'ipo' ? ' with loss_type ipo' : ''} (core/builders/rl.py): chosen and rejected in one forward (concatenated_forward), training.micro_batch ${micro} pairs = ${2 * micro} sequences`,
  );
  const precompute = on(y, 'precompute_ref_log_probs') && bool(y.precompute_ref_log_probs, 'precompute_ref_log_probs');
  const dpoKeys: Yaml = { max_length: seq, precompute_ref_log_probs: precompute };
  if (given(y.dpo_padding_free)) dpoKeys.padding_free = y.dpo_padding_free;
  applyDpo(d, dpoKeys, micro, accum, dp, 'dpo', n);
  if (adapter)
    d.note(
      'adapter: no reference copy (train.py setup_reference_model passes None): DPOTrainer disables the adapters for the reference log-probs (the base, no extra weights)',
    );
  else if (precompute) {
    // trl v1.8.0 dpo_trainer.py keeps the ref_model it is given: axolotl's copy stays on the GPU after the precomputation
    d.set('rl.reference.precomputed', false);
    d.note(
      'precompute_ref_log_probs: axolotl hands DPOTrainer its own reference copy (train.py setup_reference_model), which stays on the GPU: counted with its weights, as a reference evaluated every step (its no-grad forward an over-estimate)',
    );
  }
  const refCopy = on(y, 'rl_adapter_ref_model') && bool(y.rl_adapter_ref_model, 'rl_adapter_ref_model');
  if (adapter && refCopy)
    d.skip(
      'rl_adapter_ref_model',
      'a second copy of the base model as the reference (train.py setup_reference_model) is not modelled; counted as the base with adapters off (no extra weights); not applied',
    );
  if (on(y, 'dpo_use_liger_kernel') && bool(y.dpo_use_liger_kernel, 'dpo_use_liger_kernel')) {
    d.note(
      'dpo_use_liger_kernel: DPOConfig use_liger_kernel (the fused Liger DPO loss; the Trainer applies Liger kernels)',
    );
    applyTrainingArgument(d, 'use_liger_kernel', true, { use_liger_kernel: true }, file);
  }
  ignoreRlKeys(d, y, [
    'precompute_ref_log_probs',
    'dpo_padding_free',
    'dpo_use_liger_kernel',
    adapter && refCopy ? 'rl_adapter_ref_model' : '',
  ]);
}

/** rl grpo / gdpo: GRPOStrategy.set_training_args_kwargs (core/trainers/grpo/__init__.py @067b021c) -> trl.ts applyGrpo. */
function grpo(
  d: Draft,
  y: Yaml,
  rl: 'grpo' | 'gdpo',
  trl: Yaml,
  vllm: Yaml,
  micro: number,
  accum: number,
  dp: number,
  adapter: boolean,
  file: DeepSpeedFile,
): void {
  d.note(
    `rl ${rl}: TRL's GRPOTrainer (core/builders/rl.py)${rl === 'gdpo' ? ' with multi_objective_aggregation normalize_then_sum: counted as GRPO' : ''}`,
  );
  const g: Yaml = {};
  for (const k of GRPO_FROM_TRL) if (given(trl[k])) g[k] = trl[k];
  // core/builders/rl.py _build_training_arguments: beta = trl.beta, else rl_beta, else orpo_alpha
  const betaKey = given(trl.beta)
    ? 'trl.beta'
    : given(y.rl_beta)
      ? 'rl_beta'
      : given(y.orpo_alpha)
        ? 'orpo_alpha'
        : undefined;
  if (betaKey) g.beta = betaKey === 'trl.beta' ? trl.beta : y[betaKey];
  if (!given(trl.max_completion_length)) {
    // __init__.py passes max_completion_length = trl.max_completion_length: None when unset, no limit
    g.max_completion_length = 512;
    d.skip(
      'trl.max_completion_length',
      'absent: axolotl passes None to GRPOConfig, so completions run until EOS or the model length; rl.response_len 512 (llmem default) assumed: set it to the longest completion',
    );
  }
  const useVllm = given(trl.use_vllm) && bool(trl.use_vllm, 'trl.use_vllm');
  if (useVllm && !given(trl.vllm_mode)) {
    g.vllm_mode = 'server'; // src/axolotl/utils/schemas/validation.py check_vllm_mode_set
    d.note('trl.vllm_mode absent: server (axolotl validation check_vllm_mode_set): vLLM on GPUs of its own');
  }
  const colocate = useVllm && trl.vllm_mode === 'colocate';
  if (colocate) {
    // colocate only: vllm_enable_sleep_mode from trl:, vllm_gpu_memory_utilization / vllm_tensor_parallel_size from vllm:
    if (given(trl.vllm_enable_sleep_mode)) g.vllm_enable_sleep_mode = trl.vllm_enable_sleep_mode;
    g.vllm_gpu_memory_utilization = vllm.gpu_memory_utilization ?? 0.9;
    if (!given(vllm.gpu_memory_utilization))
      d.note('vllm.gpu_memory_utilization absent: 0.9 (axolotl VllmConfig default), passed to the colocated engine');
    if (given(vllm.tensor_parallel_size)) g.vllm_tensor_parallel_size = vllm.tensor_parallel_size;
    else
      d.skip(
        'vllm.tensor_parallel_size',
        "absent: axolotl passes None as GRPOConfig vllm_tensor_parallel_size, which TRL 1.8.0's colocated engine multiplies into max_num_seqs; 1 assumed",
      );
  } else if (useVllm && Object.keys(vllm).length)
    d.note('vllm: the settings of `axolotl vllm-serve`, a server on GPUs of its own (rl.rollout.placement separate)');
  for (const k of Object.keys(vllm))
    if (given(vllm[k]) && !(colocate && (k === 'gpu_memory_utilization' || k === 'tensor_parallel_size')))
      d.ignore(`vllm.${k}`); // read by `axolotl vllm-serve` only
  // axolotl's own check, before TRL's (validation.py check_grpo_batch_size_divisibility): per-rank batches
  if (given(trl.num_generations) && !given(trl.generation_batch_size)) {
    const G = int(trl.num_generations, 'trl.num_generations', 2);
    if ((micro * accum) % G !== 0)
      throw new ImportError(
        'trl.num_generations',
        `trl.num_generations: GRPO: generation batch size must be divisible by trl.num_generations (micro_batch_size ${micro} x gradient_accumulation_steps ${accum} = ${micro * accum}, num_generations ${G})`,
      );
  }
  const names: Record<string, string> = {
    vllm_gpu_memory_utilization: 'vllm.gpu_memory_utilization',
    vllm_tensor_parallel_size: 'vllm.tensor_parallel_size',
    beta: betaKey ?? 'trl.beta',
  };
  const n = (k: string) => names[k] ?? `trl.${k}`;
  applyGrpo(d, g, micro, accum, dp, n);
  applyWeightSync(d, {}, n);
  if (!adapter) loadedUnused(d, 'GRPOTrainer');
  if (on(y, 'sequence_len'))
    d.note(
      'sequence_len: not passed to GRPOConfig (max_length blocklisted, GRPOStrategy.get_blocklist_args_kwargs): training.seq_len = rl.prompt_len + rl.response_len',
    );
  // the trl: block's other fields
  const asyncOn = ['use_data_producer', 'async_prefetch'].filter((k) => given(trl[k]) && bool(trl[k], `trl.${k}`));
  for (const [k, v] of Object.entries(trl)) {
    if (!given(v) || GRPO_FROM_TRL.includes(k) || k === 'beta') continue;
    if (k === 'vllm_enable_sleep_mode') {
      if (!colocate) d.ignore(`trl.${k}`); // passed in colocate mode only
    } else if (k === 'use_liger_loss') {
      if (bool(v, 'trl.use_liger_loss')) {
        d.note(
          'trl.use_liger_loss: GRPOConfig use_liger_kernel (the fused Liger GRPO loss; the Trainer applies Liger kernels)',
        );
        applyTrainingArgument(d, 'use_liger_kernel', true, { use_liger_kernel: true }, file);
      }
    } else if (k === 'reward_funcs') {
      // GRPOStrategy.get_reward_func: a name that does not import is a Hub model, which GRPOTrainer loads as a reward model
      const models = (Array.isArray(v) ? v : [v]).filter((f) => typeof f === 'string' && f.includes('/'));
      if (models.length)
        d.skip(
          'trl.reward_funcs',
          `${models.map((f) => `"${String(f)}"`).join(', ')}: reward models (AutoModelForSequenceClassification, loaded on every training GPU by GRPOTrainer) are not modelled; not applied`,
        );
      else d.ignore('trl.reward_funcs');
    } else if (TRL_ASYNC.test(k)) {
      if (k === asyncOn[0])
        d.skip(
          `trl.${k}`,
          "axolotl's async GRPO trainer (core/trainers/grpo/async_trainer.py: generation in a background thread, rollouts prefetched while the update runs) is not modelled; counted as the synchronous GRPOTrainer; not applied",
        );
      else d.ignore(`trl.${k}`);
    } else if (TRL_NO_EFFECT.test(k)) d.ignore(`trl.${k}`);
    else d.skip(`trl.${k}`, "not a field of axolotl's TRLConfig (utils/schemas/trl.py): dropped; not applied");
  }
  ignoreRlKeys(d, y, betaKey ? [betaKey] : []);
}

/** A full fine-tune: setup_reference_model (train.py) loads a second copy that this trainer does not take. */
function loadedUnused(d: Draft, trainer: string): void {
  d.note(
    `axolotl's setup_reference_model (train.py) also loads a second copy of the model, which ${trainer} does not take (core/builders/rl.py passes model_ref to DPOTrainer only): not counted`,
  );
}

/** kto and ebft: no config v1 equivalent; the file counts as supervised fine-tuning, with what is left out named. */
function notModelled(d: Draft, y: Yaml, rl: 'kto' | 'ebft', trl: Yaml, micro: number | undefined): void {
  if (rl === 'ebft') {
    d.skip(
      'rl',
      'ebft: energy-based fine-tuning (core/trainers/ebft: generated completions scored by the features of a frozen copy of the model) has no config v1 equivalent; counted as supervised fine-tuning of micro_batch_size sequences; not applied',
    );
    for (const k of ['trl', 'vllm', 'ebft'])
      if (given(y[k])) d.skip(k, 'read by the EBFT trainer (rl: ebft), which is not modelled; not applied');
    ignoreRlKeys(d, y);
    return;
  }
  // trl v1.8.0 trainer/kto_trainer.py (AxolotlKTOTrainer, core/trainers/trl.py): loss_type kto forwards a KL batch
  // (the completions shifted within the batch) under no_grad beside the target batch, and refuses a per-device batch of 1
  if ((micro ?? 1) <= 1)
    throw new ImportError(
      'micro_batch_size',
      'micro_batch_size: KTO needs more than 1 (TRL KTOTrainer: "Actual (not effective) batch size must be > 1")',
    );
  d.skip(
    'rl',
    "kto: TRL's KTOTrainer (unpaired examples) has no config v1 equivalent: the KL batch's no-grad forward (micro_batch_size shifted completions) and the reference model (a frozen copy for a full fine-tune, the base with adapters off for LoRA) are not modelled; counted as supervised fine-tuning of micro_batch_size sequences; not applied",
  );
  ignoreRlKeys(d, y); // beta, desirable / undesirable weights: loss weights
  for (const k of Object.keys(trl)) if (given(trl[k])) d.ignore(`trl.${k}`);
  if (given(y.vllm)) d.ignore('vllm');
}

/** fsdp_config with a top-level fsdp_version folded in (newer axolotl configs). */
function fsdpConfig(y: Record<string, Json>): Json | undefined {
  const c = y.fsdp_config;
  if (y.fsdp_version === undefined || y.fsdp_version === null) return c;
  if (c !== undefined && c !== null && (typeof c !== 'object' || Array.isArray(c)))
    throw new ImportError('fsdp_config', 'fsdp_config: must be a mapping of keys');
  return { ...((c as Record<string, Json> | null | undefined) ?? {}), fsdp_version: y.fsdp_version };
}

// Plugins (src/axolotl/integrations/*, axolotl@067b021c), by their dotted class names.
const isCutCrossEntropy = (name: string) => /cutcrossentropy/i.test(name) || name.includes('cut_cross_entropy');
const isLiger = (name: string) => /liger/i.test(name);
const PLUGIN_NO_EFFECT = /(^|\.)(lm_eval|swanlab)(\.|$)|LMEvalPlugin|SwanLabPlugin/i;
const PLUGIN_NOT_MODELLED: [RegExp, string][] = [
  [/spectrum/i, 'Spectrum trains only the layers it selects: partial fine-tuning is not modelled'],
  [/(^|\.)kd(\.|$)|KDPlugin/i, "knowledge distillation: the teacher's logits are not modelled"],
  [/grokfast/i, 'Grokfast keeps a running average of the gradients (one more gradient-sized buffer), not modelled'],
  [/expert_parallel/i, 'expert_parallel_size says how it is used'],
  [/diffusion/i, 'diffusion language-model training (masked-token denoising, integrations/diffusion) is not modelled'],
  [/llm_compressor|LLMCompressor/i, "LLM Compressor's sparsity masks (integrations/llm_compressor) are not modelled"],
  [/(^|\.)kernels(\.|$)|KernelsPlugin/i, 'use_scattermoe / use_sonicmoe / use_kernels say how it is used'],
];

function pluginNames(v: Json | undefined): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new ImportError('plugins', 'plugins: must be a list of plugin class names');
  return v.map((p, i) => str(p, `plugins[${i}]`));
}

function plugin(d: Draft, name: string): void {
  if (isCutCrossEntropy(name) || isLiger(name)) return; // their keys say what they change
  if (PLUGIN_NO_EFFECT.test(name)) {
    d.ignore(`plugins ${name}`);
    return;
  }
  const hit = PLUGIN_NOT_MODELLED.find(([re]) => re.test(name));
  if (hit?.[1].startsWith('expert_parallel_size') || hit?.[1].startsWith('use_scattermoe')) d.ignore(`plugins ${name}`);
  else d.skip(`plugins ${name}`, `${hit ? hit[1] : 'not a plugin llmem knows'}; not applied`);
}

/** CutCrossEntropyPlugin: cut_cross_entropy defaults to true (src/axolotl/integrations/cut_cross_entropy/args.py, axolotl@067b021c). */
function cutCrossEntropy(d: Draft, v: Json | undefined): void {
  if (v !== undefined && v !== null && !bool(v, 'cut_cross_entropy')) return;
  d.set('training.loss', 'cce');
  d.note(
    `CutCrossEntropyPlugin${v === undefined || v === null ? ' (cut_cross_entropy defaults to true)' : ''}: Apple's Cut Cross-Entropy never materialises the logits (training.loss cce)`,
  );
}

// Liger kernels that change saved activations llmem does not model (src/axolotl/integrations/liger/plugin.py, axolotl@067b021c).
const LIGER_NOT_MODELLED: Record<string, string> = {
  liger_cross_entropy:
    "Liger's cross-entropy kernel (logits kept, their gradient written in place) has no config v1 loss",
  liger_rms_norm: "Liger's RMSNorm kernel (saves fewer activations) is not modelled",
  liger_rms_norm_gated: "Liger's gated RMSNorm kernel is not modelled",
  liger_layer_norm: "Liger's LayerNorm kernel (saves fewer activations) is not modelled",
  liger_rope: "Liger's in-place RoPE kernel is not modelled",
  liger_glu_activation: "Liger's SwiGLU/GeGLU kernel (recomputes the activation in the backward) is not modelled",
  liger_swiglu: "Liger's SwiGLU kernel (recomputes the activation in the backward) is not modelled",
};

function liger(d: Draft, key: string, v: Json, pluginListed: boolean): void {
  if (!bool(v, key)) return;
  if (!pluginListed) d.skip(key, 'read only by the LigerPlugin, which plugins does not list; not applied');
  else if (key === 'liger_fused_linear_cross_entropy') d.set('training.loss', 'fused');
  else d.skip(key, `${LIGER_NOT_MODELLED[key]}; not applied`);
}

/**
 * Parallel sizes -> accelerate's ParallelismConfig (src/axolotl/utils/distributed.py
 * _get_parallel_config_kwargs, axolotl@067b021c): tp and cp as given; FSDP shards over
 * dp_shard x cp and replicates over dp_replicate.
 */
function parallelSizes(d: Draft, y: Record<string, Json>): void {
  const size = (k: string) => (y[k] === undefined || y[k] === null ? 1 : int(y[k], k));
  const tp = size('tensor_parallel_size');
  const cpKey =
    y.context_parallel_size !== undefined && y.context_parallel_size !== null
      ? 'context_parallel_size'
      : 'sequence_parallel_degree';
  const cp = size(cpKey);
  if (tp > 1 && applyDegree(d, 'tensor_parallel_size', 'parallel.tp', tp)) {
    d.set('parallel.sequence_parallel', false);
    d.note(
      `tensor_parallel_size ${tp}: parallel.tp ${tp} without sequence parallelism (transformers' tp_plan splits the attention and MLP linears only)`,
    );
  }
  const cpApplied = cp > 1 && applyDegree(d, cpKey, 'parallel.cp', cp) ? cp : 1;
  const shard = y.dp_shard_size === undefined || y.dp_shard_size === null ? undefined : size('dp_shard_size');
  const replicate = size('dp_replicate_size');
  // the world size given leaves one data-parallel rank beside tp x cp x ep: axolotl then sets no dp_shard
  // (utils/distributed.py build_parallelism_config @067b021c: dp_shard_size only while remaining_world_size > 1)
  const givenWorld = d.get('parallel.gpus') as number | undefined;
  const noDataRanks = givenWorld !== undefined && givenWorld === tp * cp * size('expert_parallel_size');
  if (shard !== undefined && d.get('parallel.engine') !== 'fsdp1' && d.get('parallel.engine') !== 'fsdp2')
    d.skip('dp_shard_size', 'needs FSDP (fsdp_config); not applied');
  else if (shard !== undefined && shard > 1 && noDataRanks)
    d.skip(
      'dp_shard_size',
      `${shard}: the world size given, ${givenWorld}, leaves no data-parallel ranks beside tensor x context x expert, so axolotl sets no dp_shard (utils/distributed.py build_parallelism_config); not applied`,
    );
  else if (shard !== undefined && (replicate > 1 || shard > 1)) {
    d.set('parallel.fsdp_strategy', 'hybrid_shard');
    d.set('parallel.fsdp_shard_size', shard * cpApplied);
    d.note(
      `dp_shard_size ${shard}: FSDP shards over dp_shard x context_parallel_size = ${shard * cpApplied} GPUs (parallel.fsdp_shard_size) and replicates over the rest`,
    );
    if (replicate > 1 && size('expert_parallel_size') === 1) {
      const given = d.get('parallel.gpus') as number | undefined; // the world size given to the import
      agreeWorldSize(
        'dp_replicate_size',
        tp * cp * shard * replicate,
        given,
        'tensor x context x dp_shard x dp_replicate sizes',
      );
      d.set('parallel.gpus', tp * cp * shard * replicate);
      d.note(`parallel.gpus ${tp * cp * shard * replicate} = tensor x context x dp_shard x dp_replicate sizes`);
    } else if (replicate <= 1 && d.get('parallel.gpus') !== undefined) {
      // the world size given: the shard group must fit it, the rest replicating (axolotl's device mesh; accelerate's
      // ParallelismConfig refuses a mesh whose total size is not the world size)
      const given = d.get('parallel.gpus') as number,
        group = tp * cp * shard * size('expert_parallel_size');
      if (given % group !== 0)
        throw new ImportError(
          'dp_shard_size',
          `dp_shard_size: tensor x context x dp_shard${group !== tp * cp * shard ? ' x expert' : ''} sizes = ${group} processes, which the world size given, ${given}, is not a multiple of`,
        );
    } else if (replicate <= 1) {
      // no world size given: the smallest the file runs on (dp_replicate 1; the expert axis beside dp_shard); a
      // larger one replicates the rest
      const ep = size('expert_parallel_size');
      d.set('parallel.gpus', tp * cp * shard * ep);
      d.note(
        `parallel.gpus ${tp * cp * shard * ep} = tensor x context x dp_shard${ep > 1 ? ' x expert' : ''} sizes, the smallest world the file runs on (give the world size for more: the rest replicates)`,
      );
    }
  } else if (replicate > 1)
    d.skip(
      'dp_replicate_size',
      'without dp_shard_size the shard group is the rest of the world size, which the file does not give; not applied',
    );
  const ep = size('expert_parallel_size');
  if (ep > 1)
    d.skip(
      'expert_parallel_size',
      `${ep}: axolotl's expert parallelism is a mesh axis beside dp_shard (experts split over it, the other weights replicated over it); llmem's parallel.ep lies inside data parallelism; not applied`,
    );
}

/** PyYAML (YAML 1.1, what axolotl reads with) takes 500_000 as a number; the 1.2 reader keeps a string. */
function pyInt(v: Json): Json {
  return typeof v === 'string' && /^[0-9]+(_[0-9]+)+$/.test(v) ? Number(v.replace(/_/g, '')) : v;
}

function gradientCheckpointing(d: Draft, key: string, v: Json): void {
  if (v === true || v === 'unsloth') d.set('training.recompute', 'full');
  else if (v === 'offload' || v === 'offload_disk') {
    d.set('training.recompute', 'full');
    d.set('training.activation_offload', true);
    d.note(`${key} ${v}: checkpointed layer inputs offloaded to the host`);
  } else if (v !== false)
    throw new ImportError(key, `${key}: must be true, false, "unsloth" or "offload", not ${JSON.stringify(v)}`);
}

// lora_target_modules as one string: src/axolotl/loaders/adapter.py L171-190 (axolotl@067b021c) passes it to
// LoraConfig(target_modules=...) as given, and PEFT (peft==0.19.1, axolotl's pyproject.toml) check_target_module_exists
// (tuners/tuners_utils.py) takes a str as a regex that must re.fullmatch a module's whole name. The examples use this
// form for vision-language models ('model.language_model.layers.[\d]+.(mlp|self_attn).(up|down|gate|q|k|v|o)_proj').
const REGEX_CHARS = /[[\](){}|*+?\\^$]/;
// Where transformers' causal and vision-language classes keep their decoder layers, and the layer's linears that
// config v1 can adapt (q/k/v/o of the attention, gate/up/down of the MLP or of a MoE's shared experts).
const DECODER_PATHS = [
  'model.layers',
  'model.language_model.layers',
  'language_model.model.layers',
  'model.text_model.layers',
  'model.model.layers',
];
const LAYER_LINEARS = [
  'self_attn.q_proj',
  'self_attn.k_proj',
  'self_attn.v_proj',
  'self_attn.o_proj',
  'mlp.gate_proj',
  'mlp.up_proj',
  'mlp.down_proj',
  'mlp.shared_experts.gate_proj',
  'mlp.shared_experts.up_proj',
  'mlp.shared_experts.down_proj',
  'mlp.shared_expert.gate_proj',
  'mlp.shared_expert.up_proj',
  'mlp.shared_expert.down_proj',
];
const LAYERS_TRIED = 128;

function loraTargetRegex(d: Draft, key: string, pattern: string): void {
  let re: RegExp;
  try {
    // Python's named groups (?P<name>...) are JavaScript's (?<name>...); the rest of these patterns reads the same
    re = new RegExp(`^(?:${pattern.replace(/\(\?P</g, '(?<')})$`);
  } catch {
    throw new ImportError(key, `${key}: ${JSON.stringify(pattern)} is not a regex llmem can read`);
  }
  const layersOf = new Map<string, number[]>(); // linear -> the layer indices whose module the regex matches
  for (const linear of LAYER_LINEARS)
    for (let i = 0; i < LAYERS_TRIED; i++)
      // FSDP's activation checkpointing wraps each layer (…layers.N._checkpoint_wrapped_module.self_attn…)
      for (const path of DECODER_PATHS)
        if (re.test(`${path}.${i}.${linear}`) || re.test(`${path}.${i}._checkpoint_wrapped_module.${linear}`)) {
          layersOf.set(linear, [...(layersOf.get(linear) ?? []), i]);
          break;
        }
  const matched = [...layersOf.keys()];
  if (!matched.length)
    throw new ImportError(
      key,
      `${key}: the regex ${JSON.stringify(pattern)} (PEFT matches it against whole module names) matches no decoder layer's q/k/v/o or gate/up/down projection llmem can count`,
    );
  applyLoraTargets(d, key, matched);
  const some = matched.filter((l) => (layersOf.get(l)?.length ?? 0) < LAYERS_TRIED);
  const targets = (d.get('training.finetune.lora_targets') as string[] | undefined) ?? [];
  d.note(
    `${key} is a regex (PEFT fullmatches it against module names): it matches the decoder layers' ${matched.join(', ')}: lora_targets ${targets.join(', ')}; other modules it may match (a vision tower, a projector, MLA's low-rank projections) get no adapter in the count`,
  );
  for (const l of some)
    d.note(
      `${key}: ${l} matched in layers ${layersOf.get(l)?.join(', ')} only; counted in every layer (an over-estimate of its adapters)`,
    );
}

/**
 * MoE experts under a quantized base. transformers v5 (axolotl pins transformers==5.14.1, pyproject.toml) holds a MoE
 * layer's experts as fused 3D nn.Parameters, not nn.Linear, so bitsandbytes' load_in_4bit / load_in_8bit leaves them
 * in bf16 (docs/expert_quantization.qmd @067b021c: "all expert weights being loaded in full bf16 precision");
 * quantize_moe_experts quantizes them on load (src/axolotl/monkeypatch/moe_quant.py: NF4 parametrization, or
 * row-wise int8 with load_in_8bit): training.finetune.quant_experts. lora_target_parameters puts LoRA on those 3D
 * parameters (PEFT target_parameters; patch_manager.py _apply_moe_expert_quantization_patch).
 */
function moeExperts(d: Draft, y: Record<string, Json>, adapter: boolean): void {
  const quantizeKey = y.quantize_moe_experts;
  const quantize = quantizeKey !== undefined && quantizeKey !== null && bool(quantizeKey, 'quantize_moe_experts');
  const m = draftModel(d);
  const moe = m && isObject(m.moe) ? m.moe : undefined;
  const experts = moe && typeof moe.experts === 'number' ? moe.experts : 0;
  if (d.get('training.finetune.method') === 'qlora' && experts > 0) {
    d.set('training.finetune.quant_experts', quantize);
    d.note(
      quantize
        ? 'quantize_moe_experts: the expert weights are quantized on load (monkeypatch/moe_quant.py): training.finetune.quant_experts true'
        : "no quantize_moe_experts: transformers v5 keeps a MoE layer's experts as fused 3D parameters, which bitsandbytes does not quantize (axolotl docs/expert_quantization.qmd): they stay in bf16, training.finetune.quant_experts false",
    );
  } else if (quantize) d.ignore('quantize_moe_experts'); // no MoE experts, or no quantized base (axolotl's validation needs one)
  const params = y.lora_target_parameters;
  if (params !== undefined && params !== null && !(Array.isArray(params) && params.length === 0)) {
    if (!adapter) d.ignore('lora_target_parameters');
    else
      d.skip(
        'lora_target_parameters',
        `${(Array.isArray(params) ? params : [params]).map(String).join(', ')}: LoRA on the experts' 3D parameters (PEFT target_parameters) is not modelled; no adapter counted for them`,
      );
  }
}
