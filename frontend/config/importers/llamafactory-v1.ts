// LLaMA-Factory's newer (v1) YAML schema (examples/v1/*, `llamafactory-cli v1`) -> config v1.
// Keys and defaults: src/llamafactory/v1/config/{model_args,training_args}.py, the plugins
// under src/llamafactory/v1/plugins/ (peft.py LoraParams, quantization.py BnbParams,
// trainer_plugins/distributed/fsdp2.py FSDP2Engine, deepspeed.py), hiyouga/LLaMA-Factory@ff6d4d12.
import type { Json } from '../../../wasm/llmem.js';
import {
  applyFullModules,
  applyLoraTargets,
  applyModelId,
  bool,
  type Draft,
  int,
  isObject,
  num,
  obj,
  oneOf,
  str,
  type Obj,
} from './common.js';
import { applyDeepSpeedRef, type DeepSpeedFile } from './deepspeed-ref.js';
import { applyDegree, applyUlysses } from './parallel-degrees.js';

/** A v1 file: `model` is the model id and the plugins are `*_config` mappings (the old schema has model_name_or_path). */
export function isLlamaFactoryV1(y: Obj): boolean {
  return (
    typeof y.model === 'string' &&
    y.model_name_or_path === undefined &&
    [
      'model_class',
      'dist_config',
      'peft_config',
      'kernel_config',
      'quant_config',
      'train_dataset',
      'micro_batch_size',
    ].some((k) => k in y)
  );
}

// No effect on per-GPU memory: data, output, schedules, logging, saving, sampling.
const IGNORED =
  /^(trust_remote_code|custom_chat_template|train_dataset|eval_dataset|output_dir|learning_rate|num_train_epochs|max_steps|max_grad_norm|batching_workers|dist_timeout|lr_scheduler_config|seed|full_determinism|resume_from_checkpoint|save_.*|logging_steps|eval_.*|sample_backend|max_new_tokens|report_to|cp_mode|init_config|dp_size|mp_replicate_size|mp_shard_size)$/;

/** Import a v1-schema LLaMA-Factory YAML (its stack is the same llamafactory profile). */
export function applyLlamaFactoryV1(d: Draft, y: Obj, file: DeepSpeedFile): void {
  d.note('LLaMA-Factory v1 config schema (model, *_config plugins)');
  // v1/launcher.py @ff6d4d12: the command picks the trainer (llamafactory-cli sft | dpo | rm), not the file
  d.note(
    "a v1 file does not say its trainer (llamafactory-cli sft, dpo or rm picks it): counted as supervised fine-tuning; a DPO or reward-model run's pairs and reference are not counted",
  );
  const bf16 = y.bf16 === undefined || y.bf16 === null ? true : bool(y.bf16, 'bf16');
  d.set('training.dtype', bf16 ? 'bf16' : 'fp32');
  if (y.bf16 === undefined) d.note('bf16 absent: true (the v1 default)');
  d.set('training.seq_len', y.cutoff_len === undefined ? 2048 : int(y.cutoff_len, 'cutoff_len'));
  if (y.cutoff_len === undefined) d.note('cutoff_len absent: 2048 (the v1 default)');
  d.set('training.micro_batch', y.micro_batch_size === undefined ? 1 : int(y.micro_batch_size, 'micro_batch_size'));
  const ckpt = y.enable_activation_checkpointing;
  if (ckpt === undefined || ckpt === null || bool(ckpt, 'enable_activation_checkpointing')) {
    d.set('training.recompute', 'full');
    if (ckpt === undefined) d.note('activation checkpointing on (the v1 default)');
  }
  applyPeft(d, y.peft_config);
  for (const [key, v] of Object.entries(y)) {
    if (v === null) continue;
    switch (key) {
      case 'model':
        applyModelId(d, key, v);
        break;
      case 'bf16':
      case 'cutoff_len':
      case 'micro_batch_size':
      case 'enable_activation_checkpointing':
      case 'peft_config':
      case 'quant_config':
        break;
      case 'model_class':
        if (oneOf(v, key, ['llm', 'cls', 'other'] as const) !== 'llm')
          d.skip(key, `${String(v)}: only causal language models are modelled; not applied`);
        break;
      case 'flash_attn':
        d.set('training.attention', v === 'eager' ? 'eager' : 'flash');
        break;
      case 'kernel_config':
        if (pluginName(v, key) !== 'none')
          d.skip(
            key,
            `${pluginName(v, key)}: fused kernel replacements (RMSNorm, RoPE, SwiGLU, MoE, loss) are not modelled; not applied`,
          );
        break;
      case 'dist_config':
        applyDist(d, v, file);
        break;
      case 'cp_size':
        break; // below, once the engine is known
      case 'global_batch_size':
        d.skip(
          key,
          'gradient accumulation = global / (micro x data-parallel size) needs the world size; set training.grad_accum',
        );
        break;
      case 'batching_strategy':
        if (v !== 'normal')
          d.skip(
            key,
            `${String(v)}: packed or dynamic batches are not modelled (training.seq_len is the padded length); not applied`,
          );
        break;
      case 'optim_config':
        d.skip(key, 'v1 optimizer plugins are not mapped; training.optimizer left at llmem default (AdamW)');
        break;
      default:
        if (IGNORED.test(key)) d.ignore(key);
        else d.skip(key, 'not a known LLaMA-Factory v1 key; not applied');
    }
  }
  applyQuant(d, y.quant_config);
  if (y.dist_config === undefined || y.dist_config === null) {
    d.set('parallel.engine', 'ddp');
    d.note('no dist_config: DistributedDataParallel');
  }
  const cp = y.cp_size === undefined || y.cp_size === null ? 1 : int(y.cp_size, 'cp_size');
  if (cp > 1) {
    const mode = String(y.cp_mode ?? 'ulysses');
    if (mode === 'ulysses') applyUlysses(d, 'cp_size', cp);
    else applyDegree(d, 'cp_size', 'parallel.cp', cp);
    d.note(
      `cp_size ${cp} (cp_mode ${mode}): the sequence split over ${cp} ranks (parallel.cp)${mode === 'ulysses' ? ', heads traded by all-to-all (parallel.cp_all_to_all)' : ''}`,
    );
  }
  if (bf16 && d.get('parallel.engine') !== 'deepspeed' && d.get('training.finetune.method') === 'full') {
    // model_engine.py _init_model (ea0b4e24, 2026-01-06; unchanged at ff6d4d12): a full tuning's model is moved to
    // fp32 (model.to(torch.float32)); FSDP2's mixed precision (param bf16, reduce fp32) computes in bf16
    d.note(
      'full tuning: LLaMA-Factory v1 moves the model to fp32 (model_engine.py model.to(torch.float32)): fp32 master weights, gradients and states, bf16 compute',
    );
  } else if (bf16 && d.get('parallel.engine') !== 'deepspeed') {
    // model_engine.py loads with dtype="auto": the checkpoint's dtype (bf16 for current models), trained as
    // loaded; FSDP2's reduce_dtype fp32 casts each gradient shard back to the parameter's dtype
    d.set('training.master_weights', false);
    d.set('training.grad_dtype', 'bf16');
    d.note('the model loads in its checkpoint dtype (bf16 assumed): bf16 weights and gradients, no fp32 master copy');
  } else if (!bf16) d.note('bf16 false: fp32 compute (the weights counted in fp32)');
}

function pluginName(v: Json, key: string): string {
  if (typeof v === 'string') return v;
  return str(obj(v, key).name, `${key}.name`);
}

/** peft_config: lora (LoraParams: r 8, lora_dropout 0.05, target_modules all) or freeze; none: full. */
function applyPeft(d: Draft, v: Json | undefined): void {
  if (v === undefined || v === null) {
    d.set('training.finetune.method', 'full');
    return;
  }
  const p = isObject(v) ? v : { name: v };
  const name = oneOf(p.name, 'peft_config.name', ['lora', 'freeze'] as const);
  if (name === 'freeze') {
    d.skip('peft_config', 'freeze: partial fine-tuning is not modelled; set training.finetune yourself');
    return;
  }
  d.set('training.finetune.method', 'lora');
  d.set('training.finetune.lora_rank', p.r === undefined ? 8 : int(p.r, 'peft_config.r'));
  if (p.r === undefined) d.note('peft_config.r absent: 8 (LoraParams default)');
  d.set(
    'training.finetune.lora_dropout',
    p.lora_dropout === undefined ? 0.05 : num(p.lora_dropout, 'peft_config.lora_dropout'),
  );
  applyLoraTargets(d, 'peft_config.target_modules', p.target_modules ?? 'all');
  for (const [k, pv] of Object.entries(p)) {
    const at = `peft_config.${k}`;
    if (['name', 'r', 'lora_dropout', 'target_modules'].includes(k) || pv === null || pv === false) continue;
    if (k === 'use_dora') d.skip(at, 'DoRA is not modelled; not applied');
    else if (k === 'modules_to_save') applyFullModules(d, at, pv);
    else d.ignore(at); // lora_alpha, use_rslora, adapter_name_or_path, export_*, infer_dtype
  }
}

/** quant_config: bnb 4-bit (nf4, double quantisation) or 8-bit (BnbParams). */
function applyQuant(d: Draft, v: Json | undefined): void {
  if (v === undefined || v === null) return;
  const q = obj(v, 'quant_config');
  const name = str(q.name, 'quant_config.name');
  if (name !== 'bnb' && name !== 'auto') {
    d.skip('quant_config', `${name} quantization is not modelled (bitsandbytes only); not applied`);
    return;
  }
  if (d.get('training.finetune.method') !== 'lora') {
    d.skip('quant_config', 'quantized bases are modelled with LoRA (qlora) only; not applied');
    return;
  }
  const bits = int(q.quantization_bit, 'quant_config.quantization_bit');
  if (name === 'auto') d.note('quant_config auto: bitsandbytes assumed');
  d.set('training.finetune.method', 'qlora');
  d.set(
    'training.finetune.quant',
    bits === 8
      ? 'int8'
      : oneOf(q.quantization_type ?? 'nf4', 'quant_config.quantization_type', ['nf4', 'fp4'] as const),
  );
  d.set(
    'training.finetune.double_quant',
    q.double_quantization === undefined ? true : bool(q.double_quantization, 'quant_config.double_quantization'),
  );
  for (const k of Object.keys(q))
    if (!['name', 'quantization_bit', 'quantization_type', 'double_quantization'].includes(k))
      d.ignore(`quant_config.${k}`);
}

/** dist_config: fsdp2 (FSDP2Engine: reshard_after_forward, offload_params) or deepspeed (config_file). */
function applyDist(d: Draft, v: Json, file: DeepSpeedFile): void {
  const c = isObject(v) ? v : { name: v };
  const name = str(c.name, 'dist_config.name');
  if (name === 'deepspeed') {
    // deepspeed.py: config_file is required; it is read with DeepSpeedPlugin(hf_ds_config=...)
    applyDeepSpeedRef(d, 'dist_config.config_file', str(c.config_file, 'dist_config.config_file'), file);
    return;
  }
  if (name !== 'fsdp2') {
    d.skip('dist_config', `${name} is not mapped; not applied`);
    return;
  }
  d.set('parallel.engine', 'fsdp2');
  for (const [k, cv] of Object.entries(c)) {
    const at = `dist_config.${k}`;
    if (k === 'reshard_after_forward') d.set('parallel.reshard_after_forward', bool(cv, at));
    else if (k === 'offload_params' && bool(cv, at)) {
      d.set('parallel.offload_params', 'cpu');
      d.set('parallel.offload_optimizer', 'cpu');
      d.note(`${at}: FSDP2 CPU offload moves parameters, gradients and the optimizer step to the host`);
    } else if (k !== 'name') d.ignore(at); // dcp_path, pin_memory
  }
}
