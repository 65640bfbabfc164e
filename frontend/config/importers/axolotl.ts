// axolotl YAML (examples/*/qlora.yml, lora.yml, fft*.yml) -> config v1. Keys:
// https://docs.axolotl.ai/docs/config-reference.html (src/axolotl/utils/schemas/config.py);
// optimizer names are the Trainer's `optim`, fsdp/fsdp_config are accelerate's.
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
import { applyDegree } from './parallel-degrees.js';
import { applyFsdpOption, applyOptim, defaultToDdp, loadedDtypeStates } from './training-args.js';
import {
  agreeWorldSize,
  applyFullModules,
  ALL_TARGETS,
  applyLoraTargets,
  applyModelId,
  bool,
  Draft,
  guard,
  ImportError,
  isObject,
  int,
  num,
  oneOf,
  parseYamlText,
  str,
  type ImportResult,
} from './common.js';
import type { Json } from '../../../wasm/llmem.js';

// No effect on per-GPU memory: data, prompts, logging, evaluation, saving, hub, schedules.
const IGNORED =
  /^(base_model_config|tokenizer_type|tokenizer_config|tokenizer_use_fast|tokenizer_legacy|is_llama_derived_model|is_mistral_derived_model|is_qwen_derived_model|trust_remote_code|strict|datasets|test_datasets|dataset_prepared_path|push_dataset_to_hub|dataset_processes|dataset_exact_deduplication|shuffle_merged_datasets|val_set_size|output_dir|lora_model_dir|lora_alpha|lora_fan_in_fan_out|wandb_.*|mlflow_.*|comet_.*|use_wandb|use_mlflow|num_epochs|max_steps|lr_scheduler|lr_scheduler_kwargs|learning_rate|cosine_min_lr_ratio|train_on_inputs|group_by_length|early_stopping_patience|resume_from_checkpoint|auto_resume_from_checkpoints|local_rank|logging_steps|warmup_steps|warmup_ratio|evals_per_epoch|eval_.*|saves_per_epoch|save_.*|debug|weight_decay|max_grad_norm|special_tokens|tokens|chat_template|chat_template_jinja|default_system_message|hub_model_id|hub_strategy|seed|tf32|gpu_memory_limit|low_cpu_mem_usage|sample_packing_eff_est|sample_packing_group_size|sample_packing_bin_size|pretraining_dataset|total_num_tokens|loss_watchdog_.*|adam_.*|ddp_.*|dataloader_.*|include_tokens_per_second|profiler_steps|shuffle_before_merging_datasets|remove_unused_columns|gradient_checkpointing_kwargs|flash_attn_cross_entropy|flash_attn_rms_norm|flash_attn_fuse_qkv|flash_attn_fuse_mlp|flash_optimum|bnb_config_kwargs|optim_args|max_packed_sequence_len|sequence_length|skip_prepare_dataset|dataset_keep_in_memory|streaming|llama4_linearized_experts|sdp_attention_kwargs|embeddings_skip_upcast|unfrozen_parameters_regex|neftune_noise_alpha|liger_use_token_scaling|heads_k_stride|ring_attn_func|peft_use_rslora|min_sample_len|flex_attn_compile_kwargs|cosine_constant_lr_ratio|save_only_model|fp8_backend|eot_tokens|experimental_skip_move_to_device|model_quantization_config_kwargs)$/;

/** Import an axolotl YAML; `worldSize` is the number of training processes (not in the file). */
export function importAxolotl(text: string, also?: string, worldSize?: number): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'axolotl YAML');
    const d = new Draft();
    d.stack('axolotl');
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
      else if (set('lora_target_modules')) applyLoraTargets(d, 'lora_target_modules', y.lora_target_modules);
      else {
        d.set('training.finetune.lora_targets', ['q', 'v']);
        d.note('no lora_target_modules / lora_target_linear: PEFT default targets (q_proj, v_proj)');
      }
    } else {
      d.set('training.finetune.method', 'full');
      if (four || eight)
        d.skip(four ? 'load_in_4bit' : 'load_in_8bit', 'a quantized base without an adapter is not trainable; ignored');
    }
    let micro: number | undefined;
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
          break;
        case 'model_type':
          modelType(d, key, v);
          break;
        case 'num_labels':
          // src/axolotl/loaders/utils.py L178-180 (axolotl@067b021c): config_kwargs num_labels, read by a classification head only
          if (isSequenceClassification(y.model_type)) d.set('model.num_labels', int(v, key));
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
          d.set('training.grad_accum', int(pyInt(v), key));
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
          d.skip(key, `${String(v)}: the reference / reward models of preference training are not modelled`);
          break;
        default:
          if (IGNORED.test(key)) d.ignore(key);
          else d.skip(key, 'not a known axolotl key; not applied');
      }
    }
    parallelSizes(d, y);
    if (set('reward_model')) rewardModel(d, y, micro);
    if (plugins.some(isCutCrossEntropy)) cutCrossEntropy(d, y.cut_cross_entropy);
    reportUnreadFile(d, file);
    if (set('batch_size')) {
      const total = int(y.batch_size, 'batch_size');
      if (micro && !set('gradient_accumulation_steps') && total % micro === 0)
        d.set('training.grad_accum', total / micro);
      else if (!set('gradient_accumulation_steps'))
        d.skip('batch_size', 'needs micro_batch_size to derive gradient accumulation');
    }
    if (!set('sequence_len')) {
      d.set('training.seq_len', 2048);
      d.note('sequence_len absent: 2048 (axolotl default)');
    }
    defaultToDdp(d, 'deepspeed or fsdp');
    masterCopy(d, y, prec);
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
    // AutoModelForSequenceClassification: a score linear (hidden x num_labels) in place of the LM head
    d.set('model.head', 'classification');
    d.note(
      `${key} ${name}: model.head classification (a hidden x num_labels score; llmem's head adds a hidden x hidden pooler, a slight over-estimate)`,
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
  if (hit?.[1].startsWith('expert_parallel_size')) d.ignore(`plugins ${name}`);
  else d.skip(`plugins ${name}`, `${hit ? hit[1] : 'not a plugin llmem knows'}; not applied`);
}

/** CutCrossEntropyPlugin: cut_cross_entropy defaults to true (src/axolotl/integrations/cut_cross_entropy/args.py, axolotl@067b021c). */
function cutCrossEntropy(d: Draft, v: Json | undefined): void {
  if (v !== undefined && v !== null && !bool(v, 'cut_cross_entropy')) return;
  d.set('training.loss', 'fused');
  d.note(
    `CutCrossEntropyPlugin${v === undefined || v === null ? ' (cut_cross_entropy defaults to true)' : ''}: the loss never materialises the logits; counted as the fused (Liger) loss`,
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
  if (shard !== undefined && d.get('parallel.engine') !== 'fsdp1' && d.get('parallel.engine') !== 'fsdp2')
    d.skip('dp_shard_size', 'needs FSDP (fsdp_config); not applied');
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
