// TRL SFTConfig / GRPOConfig / DPOConfig YAML or JSON (the files `trl sft|grpo|dpo --config`,
// open-r1's recipes/**/{sft,grpo}/config_*.yaml and alignment-handbook's recipes/**/dpo/*.yaml give
// TRL's parser: the trainer's config, which extends TrainingArguments through _BaseConfig, with
// ModelConfig and the script's own arguments beside them) -> config v1, with the rl section for
// GRPO and DPO. Keys and defaults: trl/trainer/sft_config.py, grpo_config.py, dpo_config.py,
// base_config.py and model_config.py (huggingface/trl at f2cd57710ae345ea6428ae95363267fcf38a3dc8);
// older releases' keys (max_seq_length, max_prompt_length, vllm_device, vllm_dtype) are read too.
// ORPOConfig (trl/experimental/orpo/orpo_config.py @f2cd5771, trl/trainer/orpo_config.py before) is read with
// --trainer orpo only: it has no key of its own. TRL trains on the Trainer: runtime.framework hf_trainer.
import type { Json } from '../../../wasm/llmem.js';
import { TRL_ACCELERATE_CONFIGS } from './trl-accelerate.js';
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
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
  str,
  type ImportResult,
  type Obj,
  torchDtype,
} from './common.js';
import { divide, generateWithoutEngine, seqLenFromRl, worldSize } from './rl-common.js';
import {
  applyPrecisionFlags,
  applyTrainingArgument,
  defaultToDdp,
  trainLoadedWeights,
  TRAINING_ARGS_IGNORED,
} from './training-args.js';

export type Trainer = 'sft' | 'grpo' | 'dpo' | 'orpo' | 'reward';
export const TRAINER_IDS = ['sft', 'dpo', 'orpo', 'grpo', 'reward'] as const;
const CLASS: Record<Trainer, string> = {
  sft: 'SFTConfig',
  grpo: 'GRPOConfig',
  dpo: 'DPOConfig',
  orpo: 'ORPOConfig',
  reward: 'RewardConfig',
};

// Keys only one trainer's config class has: the fields of trl/trainer/{sft,grpo,rloo,dpo,kto}_config.py and
// trl/{trainer,experimental}/{orpo,cpo}/..._config.py in every release tag v0.x-v1.9 and @f2cd5771, in no other of
// those classes (RLOOConfig reads GRPO's generation keys and counts as GRPO; SFTConfig's max_seq_length is
// max_length before TRL 0.20). Keys two classes share (max_prompt_length, max_completion_length, padding_value:
// DPO, ORPO, CPO, KTO; precompute_ref_log_probs, precompute_ref_batch_size, ref_model_init_kwargs: DPO and KTO;
// label_smoothing: DPO and CPO) tell no trainer. ORPOConfig has no field of its own: only --trainer orpo names it.
const GRPO_ONLY =
  /^(num_generations|use_vllm|vllm_.*|generation_batch_size|steps_per_generation|num_iterations|reward_funcs|reward_weights|epsilon|epsilon_high|scale_rewards|mask_truncated_completions|ds3_gather_for_generation|log_completions|temperature|top_entropy_quantile)$/;
const DPO_ONLY =
  /^(model_adapter_name|ref_adapter_name|force_use_ref_model|reference_free|rpo_alpha|ld_alpha|f_divergence_type|f_alpha_divergence_coef|use_weighting|discopop_tau|loss_weights|use_logits_to_keep|use_num_logits_to_keep)$/;
const SFT_ONLY =
  /^(packing|packing_strategy|eval_packing|dataset_text_field|dataset_kwargs|eos_token|completion_only_loss|assistant_only_loss|chat_template_path|max_seq_length)$/;
// RewardConfig (trl/trainer/reward_config.py @f2cd5771): center_rewards_coefficient is its own
const REWARD_ONLY = /^(center_rewards_coefficient)$/;
const NONE = /(?!)/;
const ONLY: Record<Trainer, RegExp> = {
  sft: SFT_ONLY,
  grpo: GRPO_ONLY,
  dpo: DPO_ONLY,
  orpo: NONE,
  reward: REWARD_ONLY,
};
// Keys of the preference trainers llmem does not import: CPOConfig (trl/experimental/cpo/cpo_config.py @f2cd5771)
// and KTOConfig (trl/trainer/kto_config.py @f2cd5771), in no other class.
const UNSUPPORTED: Record<string, RegExp> = {
  CPOConfig: /^(cpo_alpha|simpo_gamma)$/,
  KTOConfig: /^(desirable_weight|undesirable_weight|train_sampling_strategy)$/,
};
// DPOConfig's loss_type values that no other trainer takes (dpo_config.py @f2cd5771; sigmoid, hinge and ipo are
// CPOConfig's too)
const DPO_LOSSES = /^(exo_pair|nca_pair|robust|bco_pair|sppo_hard|aot|aot_pair|apo_zero|apo_down|discopop)$/;
// Keys several preference classes share: they make a file a TRL one without telling its trainer.
const SHARED =
  /^(beta|max_prompt_length|max_completion_length|padding_value|precompute_ref_log_probs|precompute_ref_batch_size|ref_model_init_kwargs|label_smoothing)$/;

/** The trainer a file configures, from the keys only its config class has; `given` (the caller's) wins.
 * GRPO keys win over DPO keys (older releases shared max_prompt_length, ...); SFT keys beside either are an error. */
function trainerOf(y: Obj, given: Trainer | undefined): Trainer {
  if (given !== undefined) return oneOf(given, 'trainer', TRAINER_IDS);
  const keys = Object.keys(y);
  const hits = (t: Trainer) => keys.filter((k) => ONLY[t].test(k));
  const rl = hits('grpo').length ? 'grpo' : hits('dpo').length ? 'dpo' : undefined;
  const ask = "give the trainer: sft, dpo, orpo, grpo or reward (llmem import --trainer; the Import dialog's Trainer)";
  for (const [cls, re] of Object.entries(UNSUPPORTED)) {
    const k = keys.find((x) => re.test(x));
    if (k && !rl)
      throw new ImportError(
        k,
        `${k}: a ${cls} key; ${cls.replace('Config', '')} is not a trainer llmem imports (sft, dpo, orpo, grpo); give --trainer to read the file as one of them`,
      );
  }
  if (rl && hits('sft').length)
    throw new ImportError(
      hits('sft')[0],
      `TRL config: keys of two trainers (SFTConfig: ${hits('sft').join(', ')}; ${CLASS[rl]}: ${hits(rl).join(', ')}); ${ask}`,
    );
  if (rl) return rl;
  if (hits('reward').length && hits('sft').length)
    throw new ImportError(
      hits('sft')[0],
      `TRL config: keys of two trainers (SFTConfig: ${hits('sft').join(', ')}; RewardConfig: ${hits('reward').join(', ')}); ${ask}`,
    );
  if (hits('reward').length) return 'reward';
  if (hits('sft').length) return 'sft';
  const shared = keys.filter((k) => SHARED.test(k));
  // DPOConfig (trl/trainer/dpo_config.py @f2cd5771) is the only preference config with padding_free (SFTConfig, which
  // has it too, has no preference key), and its loss types are its own
  if (shared.length && (keys.includes('padding_free') || DPO_LOSSES.test(String(y.loss_type ?? '')))) return 'dpo';
  if (shared.length)
    throw new ImportError(
      shared[0],
      `TRL config: ${shared.join(', ')} ${shared.length > 1 ? 'are keys' : 'is a key'} of several preference trainers (DPOConfig, ORPOConfig, CPOConfig, KTOConfig) and no key only one of them has tells which (ORPOConfig has none of its own); ${ask}`,
    );
  throw new ImportError(
    '',
    `TRL config: no key that only SFTConfig (packing, eos_token, dataset_text_field, ...), DPOConfig (reference_free, loss_weights, rpo_alpha, ...) or GRPOConfig (num_generations, use_vllm, ...) has, so the trainer cannot be told; ${ask}`,
  );
}

/**
 * The mapping: each TRL key read, and what it sets (GRPO: G = num_generations, world = the
 * training processes; DPO: sequences are chosen/rejected pairs). Keys not listed here are the
 * TrainingArguments keys of training-args.ts (micro-batch, accumulation, checkpointing,
 * optimizer, deepspeed, fsdp, torch_compile, liger) or reported.
 */
export const TRL_MAPPING: readonly { keys: string[]; to: string; trainer?: Trainer | 'rl' | Trainer[] }[] = [
  { keys: ['model_name_or_path'], to: 'model.preset' },
  { keys: ['bf16', 'fp16'], to: 'training.dtype (bf16 unless fp16: _BaseConfig default)' },
  { keys: ['dtype', 'torch_dtype'], to: 'training.master_weights false (weights loaded in bf16/fp16)' },
  { keys: ['attn_implementation'], to: 'training.attention (flash unless eager)' },
  {
    keys: ['use_peft', 'lora_r', 'lora_target_modules', 'lora_dropout', 'lora_modules_to_save'],
    to: 'training.finetune.{method,lora_rank,lora_targets,lora_dropout,full_modules}',
  },
  {
    keys: ['load_in_4bit', 'load_in_8bit', 'bnb_4bit_quant_type', 'use_bnb_nested_quant'],
    to: 'training.finetune.{method qlora,quant,double_quant}',
  },
  { keys: ['num_generations'], to: 'rl.group_size', trainer: 'grpo' },
  { keys: ['max_prompt_length'], to: 'rl.prompt_len', trainer: 'rl' },
  { keys: ['max_completion_length'], to: 'rl.response_len', trainer: 'grpo' },
  { keys: ['max_length'], to: 'rl.response_len = max_length - rl.prompt_len', trainer: ['dpo', 'orpo'] },
  { keys: ['max_length', 'max_seq_length'], to: 'training.seq_len (SFTConfig default 1024)', trainer: 'sft' },
  { keys: ['max_length'], to: 'training.seq_len (RewardConfig default 1024)', trainer: 'reward' },
  { keys: ['center_rewards_coefficient'], to: 'note: a term of the loss (no memory)', trainer: 'reward' },
  { keys: ['packing'], to: 'note: sequences packed to training.seq_len', trainer: 'sft' },
  { keys: ['loss_type'], to: 'training.loss (chunked_nll reported)', trainer: 'sft' },
  {
    keys: ['per_device_train_batch_size', 'gradient_accumulation_steps', 'num_processes'],
    to: 'training.micro_batch; rl.mini_batch = per-device batch x accumulation x world / G (DPO: pairs; SFT: training.grad_accum)',
  },
  {
    keys: ['generation_batch_size', 'steps_per_generation'],
    to: 'rl.rollout_batch = generation batch / G',
    trainer: 'grpo',
  },
  {
    keys: ['use_vllm', 'vllm_mode', 'vllm_device'],
    to: 'rl.rollout.placement (colocate colocated; server separate)',
    trainer: 'grpo',
  },
  { keys: ['vllm_gpu_memory_utilization'], to: 'rl.rollout.gpu_memory_utilization', trainer: 'grpo' },
  { keys: ['vllm_tensor_parallel_size'], to: 'rl.rollout.tp; rl.rollout.max_num_seqs', trainer: 'grpo' },
  { keys: ['vllm_enable_sleep_mode'], to: 'rl.rollout.sleep level2', trainer: 'grpo' },
  { keys: ['vllm_max_model_length', 'vllm_max_model_len'], to: 'rl.rollout.max_model_len', trainer: 'grpo' },
  { keys: ['vllm_dtype'], to: 'rl.rollout.dtype', trainer: 'grpo' },
  {
    keys: ['beta'],
    to: 'rl.reference.enabled (GRPO: beta != 0; PEFT: the base, adapters off)',
    trainer: ['grpo', 'dpo'],
  },
  { keys: ['ds3_gather_for_generation'], to: 'rl.weight_sync full (ZeRO-3 / FSDP)', trainer: 'grpo' },
  { keys: ['entropy_coef', 'top_entropy_quantile'], to: 'rl.entropy', trainer: 'grpo' },
  { keys: ['precompute_ref_log_probs'], to: 'rl.reference.precomputed', trainer: 'dpo' },
  { keys: ['reference_free'], to: 'rl.reference.enabled false', trainer: 'dpo' },
  { keys: ['padding_free'], to: 'rl.remove_padding', trainer: ['grpo', 'dpo'] },
];

// No effect on per-GPU memory: data, prompts, rewards, sampling, loss weights, logging, hub.
const IGNORED =
  /^(model_revision|trust_remote_code|dataset_.*|dataset|datasets|system_prompt|chat_template|chat_template_kwargs|reward_funcs|reward_weights|reward_model_name_or_path|callbacks|benchmarks|wandb_.*|temperature|top_p|top_k|min_p|repetition_penalty|generation_kwargs|cache_implementation|loss_type|scale_rewards|epsilon|epsilon_high|delta|num_iterations|importance_sampling_level|mask_truncated_completions|multi_objective_aggregation|sync_ref_model|ref_model_mixup_alpha|ref_model_sync_steps|log_completions|log_unique_prompts|num_completions_to_print|log_completions_hub_repo|vllm_server_.*|vllm_group_port|vllm_model_impl|vllm_structured_outputs_regex|vllm_guided_decoding_regex|vllm_importance_sampling_.*|vllm_enable_prefix_caching|shuffle_dataset|disable_dropout|router_aux_loss_coef|label_smoothing|f_divergence_type|f_alpha_divergence_coef|use_weighting|discopop_tau|rpo_alpha|ld_alpha|loss_weights|truncation_mode|precompute_ref_batch_size|pad_token|padding_value|label_pad_token_id|lora_alpha|lora_task_type|use_rslora|lora_target_parameters|bnb_4bit_quant_storage|code_.*|parallel_code_exec_per_proc|e2b_router_url|morph_router_url|ioi_provider|max_completion_len|model_init_kwargs|ref_model_init_kwargs|model_adapter_name|ref_adapter_name|force_use_ref_model|generate_during_eval|sapo_.*|vespo_.*|off_policy_mask_threshold|use_bias_correction_kl|num_generations_eval|pad_to_multiple_of|remove_unused_columns|log_multimodal|hub_model_revision|overwrite_hub_revision|push_to_hub_revision|wandb_log_unique_prompts|max_tool_calling_iterations|use_adaptive_entropy|entropy_coef_.*|entropy_target)$/;

// Read and reported with a reason of their own.
const NOT_MODELLED: Record<string, string> = {
  use_dora: 'DoRA adds a magnitude vector and a column-norm pass per adapted layer; counted as plain LoRA',
  use_transformers_paged: "transformers' paged generation instead of vLLM is not modelled",
  use_transformers_continuous_batching: "transformers' continuous batching instead of vLLM is not modelled",
  transformers_continuous_batching_config: "transformers' continuous batching instead of vLLM is not modelled",
  cast_lm_head_to_fp32: 'an fp32 copy of the output head is not modelled',
  activation_offloading: 'TRL offloads the saved activations to the host; counted as training.activation_offload',
  is_encoder_decoder: 'an encoder-decoder model is not modelled',
};

const isSet = (v: Json | undefined): v is Json => v !== undefined && v !== null;

/** Import a TRL SFTConfig / GRPOConfig / DPOConfig / ORPOConfig file; `trainer` names the class where no key tells it. */
export function importTrl(
  text: string,
  options: { worldSize?: number; also?: string; trainer?: Trainer; launch?: Record<string, Json> } = {},
): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'TRL config');
    const trainer = trainerOf(y, options.trainer);
    const d = new Draft();
    d.stack('hf_trainer');
    for (const [k, v] of Object.entries(options.launch ?? {})) d.set(`parallel.${k}`, v);
    d.note(
      `TRL ${CLASS[trainer]} (${options.trainer ? 'the trainer given' : 'keys only it has'}) on the Trainer: the hf_trainer profile${trainer === 'grpo' ? '; RLOOConfig reads the same keys and counts the same' : ''}`,
    );
    if (trainer !== 'sft' && trainer !== 'reward') d.set('rl.algorithm', trainer === 'orpo' ? 'dpo' : trainer);
    const file: DeepSpeedFile = { text: options.also, read: false };
    // _BaseConfig (trl/trainer/base_config.py @f2cd5771): bf16 defaults to not fp16, gradient_checkpointing to true
    const bf16Default = !isSet(y.bf16) && !(isSet(y.fp16) && bool(y.fp16, 'fp16'));
    applyPrecisionFlags(d, bf16Default ? true : y.bf16, y.fp16);
    if (bf16Default) d.note('bf16 absent: true (TRL default unless fp16)');
    if (!isSet(y.gradient_checkpointing)) {
      d.set('training.recompute', 'full');
      d.note('gradient_checkpointing absent: true (TRL default)');
    }
    model(d, y);
    const world = worldSize(
      d,
      isSet(y.num_processes) ? int(y.num_processes, 'num_processes') : undefined,
      options.worldSize,
      'A TRL config',
    );
    const micro = isSet(y.per_device_train_batch_size)
      ? int(y.per_device_train_batch_size, 'per_device_train_batch_size')
      : 8;
    const accum = isSet(y.gradient_accumulation_steps)
      ? int(y.gradient_accumulation_steps, 'gradient_accumulation_steps')
      : 1;
    d.set('training.micro_batch', micro);
    if (trainer === 'grpo') applyGrpo(d, y, micro, accum, world);
    else if (trainer === 'dpo' || trainer === 'orpo') applyDpo(d, y, micro, accum, world, trainer);
    else if (trainer === 'reward') reward(d, y, micro, accum);
    else sft(d, y, accum);
    const mapped = new Set(
      TRL_MAPPING.filter(
        (m) =>
          !m.trainer ||
          m.trainer === trainer ||
          (Array.isArray(m.trainer) && m.trainer.includes(trainer)) ||
          (m.trainer === 'rl' && trainer !== 'sft' && trainer !== 'reward'),
      ).flatMap((m) => m.keys),
    );
    for (const [key, v] of Object.entries(y)) {
      if (mapped.has(key) || key === 'per_device_train_batch_size' || key === 'gradient_accumulation_steps') continue;
      if (v === null) continue;
      if (key === 'activation_offloading') {
        if (bool(v, key)) d.set('training.activation_offload', true);
        continue;
      }
      if (key === 'deepspeed') {
        applyDeepSpeedRef(d, key, v, file);
        continue;
      }
      const other = TRAINER_IDS.find((t) => t !== trainer && ONLY[t].test(key));
      const unsupported = Object.keys(UNSUPPORTED).find((c) => UNSUPPORTED[c].test(key));
      if (other) d.skip(key, `a ${CLASS[other]} key in a ${trainer.toUpperCase()} file; not applied`);
      else if (unsupported) d.skip(key, `a ${unsupported} key in a ${trainer.toUpperCase()} file; not applied`);
      else if (trainer === 'orpo' && key === 'beta')
        d.ignore(key); // ORPOConfig beta: the odds-ratio loss weight
      else if (trainer === 'orpo' && key === 'max_completion_length')
        d.ignore(key); // orpo_config.py @f2cd5771: truncates the completion of encoder-decoder models only
      else if (key in NOT_MODELLED) {
        if (v !== false) d.skip(key, `${NOT_MODELLED[key]}; not applied`);
      } else if (key === 'accelerate_config') {
        // trl/cli/accelerate_config.py @f2cd5771: a packaged name or a path, given to accelerate launch --config_file
        const name = str(v, key);
        if (name in TRL_ACCELERATE_CONFIGS)
          d.note(
            `accelerate_config ${name}: TRL's trl/accelerate_configs/${name}.yaml, the accelerate config the run is launched with (unless another is given with the file)`,
          );
        else
          d.skip(
            key,
            `"${name}" was not read: give that accelerate config with the file (llmem import trl <file> <it>)`,
          );
      } else if (applyTrainingArgument(d, key, v, y, file)) continue;
      else if (IGNORED.test(key) || TRAINING_ARGS_IGNORED.test(key)) d.ignore(key);
      else d.skip(key, 'not a TRL key llmem maps; not applied');
    }
    reportUnreadFile(d, file);
    defaultToDdp(d, 'deepspeed or fsdp (an accelerate config usually gives them: import it too)');
    loadedDtypeFullFinetune(d, y);
    if (trainer === 'grpo') applyWeightSync(d, y);
    if (trainer !== 'sft' && trainer !== 'reward') seqLenFromRl(d);
    return d.result();
  });
}

/** A full fine-tune of the bf16/fp16-loaded weights (model() set no master copy): training-args.ts trainLoadedWeights. */
function loadedDtypeFullFinetune(d: Draft, y: Obj): void {
  if (d.get('training.master_weights') !== false || d.get('training.finetune.method') !== 'full') return;
  const load = y[isSet(y.dtype) ? 'dtype' : 'torch_dtype'] === 'float16' ? 'fp16' : 'bf16';
  const dtype = d.get('training.dtype');
  trainLoadedWeights(d, load, y.optim, dtype === 'bf16' || dtype === 'fp16');
}

/** ModelConfig: the model id, its load dtype, attention, PEFT and quantization. */
function model(d: Draft, y: Obj): void {
  applyModelId(d, 'model_name_or_path', y.model_name_or_path);
  const dtypeKey = isSet(y.dtype) ? 'dtype' : 'torch_dtype';
  const dtype = y[dtypeKey];
  if (isSet(dtype) && dtype !== 'auto') {
    const t = oneOf(dtype, dtypeKey, ['bfloat16', 'float16', 'float32'] as const);
    if (t !== 'float32') {
      d.set('training.master_weights', false);
      if (y.bf16 !== true && y.fp16 !== true) d.set('training.dtype', t === 'bfloat16' ? 'bf16' : 'fp16');
      // whether an fp32 copy exists is the engine's (loadedDtypeFullFinetune, once it is known)
      d.note(`${dtypeKey} ${t}: the weights are loaded in ${t}`);
    }
  } else if (dtype === 'auto') d.note(`${dtypeKey} auto: the checkpoint's dtype; fp32 weights (master copy) assumed`);
  if (isSet(y.attn_implementation))
    d.set('training.attention', str(y.attn_implementation, 'attn_implementation') === 'eager' ? 'eager' : 'flash');
  const four = isSet(y.load_in_4bit) && bool(y.load_in_4bit, 'load_in_4bit');
  const eight = isSet(y.load_in_8bit) && bool(y.load_in_8bit, 'load_in_8bit');
  if (!isSet(y.use_peft) || !bool(y.use_peft, 'use_peft')) {
    d.set('training.finetune.method', 'full');
    if (four || eight)
      d.skip(four ? 'load_in_4bit' : 'load_in_8bit', 'a quantized base without use_peft is not trainable; not applied');
    return;
  }
  d.set('training.finetune.method', four || eight ? 'qlora' : 'lora');
  if (four || eight) {
    d.set(
      'training.finetune.quant',
      eight && !four ? 'int8' : oneOf(y.bnb_4bit_quant_type ?? 'nf4', 'bnb_4bit_quant_type', ['nf4', 'fp4'] as const),
    );
    d.set(
      'training.finetune.double_quant',
      isSet(y.use_bnb_nested_quant) && bool(y.use_bnb_nested_quant, 'use_bnb_nested_quant'),
    );
  }
  d.set('training.finetune.lora_rank', isSet(y.lora_r) ? int(y.lora_r, 'lora_r') : 16);
  if (!isSet(y.lora_r)) d.note('lora_r absent: 16 (ModelConfig default)');
  if (isSet(y.lora_target_modules)) applyLoraTargets(d, 'lora_target_modules', y.lora_target_modules);
  else {
    d.set('training.finetune.lora_targets', ['q', 'v']);
    d.note('lora_target_modules absent: PEFT default targets (q_proj, v_proj)');
  }
  d.set('training.finetune.lora_dropout', isSet(y.lora_dropout) ? num(y.lora_dropout, 'lora_dropout') : 0.05);
  if (isSet(y.lora_modules_to_save)) applyFullModules(d, 'lora_modules_to_save', y.lora_modules_to_save);
}

/**
 * The name a GRPOConfig / DPOConfig key has in the file being imported, for errors and notes: the key itself in a
 * TRL file; axolotl's `trl.num_generations`, `vllm.gpu_memory_utilization`, `sequence_len`, ... (axolotl.ts).
 */
export type KeyName = (trlKey: string) => string;
const sameName: KeyName = (k) => k;

/** GRPOConfig: group, lengths, batches, the vLLM engine, the reference. `y` holds GRPOConfig's keys; `n` names them. */
export function applyGrpo(
  d: Draft,
  y: Obj,
  micro: number,
  accum: number,
  world: number,
  n: KeyName = sameName,
  perSample = false,
): void {
  const g = isSet(y.num_generations) ? int(y.num_generations, n('num_generations'), 2) : 8;
  d.set('rl.group_size', g);
  if (isSet(y.max_prompt_length)) d.set('rl.prompt_len', int(y.max_prompt_length, n('max_prompt_length')));
  else
    d.note(
      'no max_prompt_length (TRL no longer truncates prompts): rl.prompt_len left at llmem default; set it to the longest prompt',
    );
  d.set(
    'rl.response_len',
    isSet(y.max_completion_length) ? int(y.max_completion_length, n('max_completion_length')) : 512,
  );
  if (!isSet(y.max_completion_length)) d.note(`${n('max_completion_length')} absent: 512 (GRPOConfig default)`);
  // grpo_config.py __post_init__: generation batch = per-device batch x processes x steps_per_generation
  // (default: the accumulation); one optimizer step is per-device batch x accumulation x processes completions
  const perStep = micro * world;
  let generation: number;
  if (isSet(y.generation_batch_size) && isSet(y.steps_per_generation))
    throw new ImportError(
      n('generation_batch_size'),
      `${n('generation_batch_size')}: '${n('generation_batch_size')}' and '${n('steps_per_generation')}' can not be both configured at the same time`,
    );
  if (isSet(y.generation_batch_size)) {
    generation = int(y.generation_batch_size, n('generation_batch_size'));
    divide(
      generation,
      perStep,
      n('generation_batch_size'),
      'must be divisible by per_device_train_batch_size x processes',
    );
  } else
    generation =
      perStep * (isSet(y.steps_per_generation) ? int(y.steps_per_generation, n('steps_per_generation')) : accum);
  // the batches count the processes: say how many were used (the world size given, or the one assumed)
  const processes = `${world} process${world === 1 ? '' : 'es'} (the world size)`;
  d.set(
    'rl.rollout_batch',
    divide(
      generation,
      g,
      n('num_generations'),
      `the generation batch (per-device batch ${micro} x ${processes} x ${generation / perStep} steps) must be divisible by num_generations`,
    ),
  );
  d.set(
    'rl.mini_batch',
    divide(
      micro * accum * world,
      g,
      n('num_generations'),
      `the completions of one optimizer step (per-device batch ${micro} x accumulation ${accum} x ${processes}) must be whole groups of num_generations`,
    ),
  );
  d.set('rl.logits_response_only', true); // _get_per_token_logps_and_entropies: logits_to_keep = the completion
  d.set('rl.remove_padding', isSet(y.padding_free) && bool(y.padding_free, n('padding_free')));
  // the reference: beta 0 builds none (grpo_trainer.py); PEFT uses the base with adapters off
  const beta = isSet(y.beta) ? num(y.beta, n('beta'), -Infinity) : 0;
  if (!isSet(y.beta)) d.note(`${n('beta')} absent: 0.0 (GRPOConfig default since 2025-05): no reference model`);
  d.set('rl.reference.enabled', beta !== 0);
  const entropy =
    (isSet(y.entropy_coef) && num(y.entropy_coef, n('entropy_coef'), -Infinity) !== 0) ||
    (isSet(y.top_entropy_quantile) && num(y.top_entropy_quantile, n('top_entropy_quantile')) < 1);
  d.set('rl.entropy', entropy);
  // the generation engine
  const vllm = isSet(y.use_vllm) && bool(y.use_vllm, n('use_vllm'));
  if (!vllm) {
    generateWithoutEngine(d, n('use_vllm'), 'false');
    return;
  }
  d.set('rl.rollout.engine', 'vllm');
  let mode: 'colocate' | 'server';
  if (isSet(y.vllm_mode)) mode = oneOf(y.vllm_mode, n('vllm_mode'), ['colocate', 'server'] as const);
  else if (isSet(y.vllm_device)) {
    mode = 'server';
    d.note(`vllm_device ${String(y.vllm_device)} (TRL before 0.18): vLLM on a GPU of its own, as vllm_mode server`);
  } else {
    mode = 'colocate';
    d.note(
      'vllm_mode absent: colocate (TRL default since 2026-03; releases from 0.18, as open-r1 pins, defaulted to server: set rl.rollout.placement separate for those)',
    );
  }
  d.set('rl.rollout.placement', mode === 'colocate' ? 'colocated' : 'separate');
  if (mode === 'server') {
    for (const k of ['vllm_gpu_memory_utilization', 'vllm_tensor_parallel_size', 'vllm_enable_sleep_mode'])
      if (isSet(y[k]))
        d.note(`${n(k)}: read by the colocated engine only; the vLLM server (trl vllm-serve) runs on GPUs of its own`);
    return;
  }
  const util = isSet(y.vllm_gpu_memory_utilization)
    ? num(y.vllm_gpu_memory_utilization, n('vllm_gpu_memory_utilization'), 0.01)
    : 0.3;
  if (util > 1)
    throw new ImportError(n('vllm_gpu_memory_utilization'), `${n('vllm_gpu_memory_utilization')}: must be at most 1`);
  d.set('rl.rollout.gpu_memory_utilization', util);
  const tp = isSet(y.vllm_tensor_parallel_size) ? int(y.vllm_tensor_parallel_size, n('vllm_tensor_parallel_size')) : 1;
  d.set('rl.rollout.tp', tp);
  // grpo_trainer.py: max_num_seqs = per-device batch x vLLM TP x steps_per_generation
  d.set('rl.rollout.max_num_seqs', (micro * tp * generation) / perStep);
  if (isSet(y.vllm_enable_sleep_mode) && bool(y.vllm_enable_sleep_mode, n('vllm_enable_sleep_mode')))
    d.set('rl.rollout.sleep', 'level2'); // generation/vllm_generation.py: self.llm.sleep(level=2)
  const len = isSet(y.vllm_max_model_length) ? 'vllm_max_model_length' : 'vllm_max_model_len';
  if (isSet(y[len])) {
    const cap = int(y[len], n(len));
    d.set('rl.rollout.max_model_len', cap);
    // vLLM stops a sample at max_model_len (the length-capped finish), prompt and completion together; an unset
    // prompt length is the core's default (rl-common.ts seqLenFromRl), 512
    const prompt = (d.get('rl.prompt_len') as number | undefined) ?? 512;
    const response = d.get('rl.response_len') as number | undefined;
    if (response === undefined || prompt + response <= cap) {
      // nothing to cap
    } else if (!perSample) {
      // TRL's batch is the left-padded prompts beside the right-padded completions (grpo_trainer.py @f2cd5771:
      // torch.cat([prompt_ids, completion_ids]), "(B, P+C)"): its longest completion may follow a short prompt, so the
      // cap bounds each part, not their sum
      if (prompt > cap) d.set('rl.prompt_len', cap);
      if (response > cap) d.set('rl.response_len', cap);
      d.note(
        `${n(len)} ${cap}: vLLM ends each sample there, but a batch lines its longest prompt up beside its longest completion (grpo_trainer.py: (B, P+C)), so only each part is capped (rl.prompt_len ${Math.min(prompt, cap)}, rl.response_len ${Math.min(response, cap)})`,
      );
    } else if (prompt < cap) {
      d.set('rl.response_len', cap - prompt);
      d.note(
        `${n(len)} ${cap}: vLLM stops each sequence there, so completions are at most ${cap - prompt} tokens (rl.response_len, not ${response})`,
      );
    } else {
      // the prompt cap is not below the cap, and vLLM takes no prompt that long: a sequence is at most the cap,
      // counted with as much of the completion as fits after a one-token prompt
      const completion = Math.min(response, cap - 1);
      d.set('rl.prompt_len', cap - completion);
      d.set('rl.response_len', completion);
      d.note(
        `${n(len)} ${cap}: no longer than the ${prompt}-token prompt cap, so vLLM ends every sequence at ${cap} tokens; counted as a ${cap - completion}-token prompt and a ${completion}-token completion (rl.prompt_len, rl.response_len)`,
      );
    }
  }
  if (isSet(y.vllm_dtype) && y.vllm_dtype !== 'auto') {
    d.set('rl.rollout.dtype', torchDtype(y.vllm_dtype, n('vllm_dtype')));
  }
}

/** ds3_gather_for_generation (default true): ZeRO-3 gathers the whole model for the sync to vLLM. */
export function applyWeightSync(d: Draft, y: Obj, n: KeyName = sameName): void {
  const sharded = d.get('parallel.zero_stage') === 3 || String(d.get('parallel.engine') ?? '').startsWith('fsdp');
  const gather =
    !isSet(y.ds3_gather_for_generation) || bool(y.ds3_gather_for_generation, n('ds3_gather_for_generation'));
  if (sharded && gather) d.set('rl.weight_sync', 'full');
  else if (sharded)
    d.skip(
      n('ds3_gather_for_generation'),
      'false: parameters gathered one at a time for the sync; counted as rl.weight_sync bucketed',
    );
}

/** The pair trainers: DPOConfig, ORPOConfig and CPOConfig (CPO / SimPO; axolotl rl: simpo). */
export type PairTrainer = 'dpo' | 'orpo' | 'cpo';
const PAIR_CLASS: Record<PairTrainer, string> = { dpo: 'DPOConfig', orpo: 'ORPOConfig', cpo: 'CPOConfig' };

/** DPOConfig, ORPOConfig and CPOConfig: pairs, lengths, the reference (ORPO, CPO: none). `n` names the keys. */
export function applyDpo(
  d: Draft,
  y: Obj,
  micro: number,
  accum: number,
  world: number,
  trainer: PairTrainer,
  n: KeyName = sameName,
): void {
  const pairs = micro * accum * world;
  d.set('rl.rollout_batch', pairs);
  d.set('rl.mini_batch', pairs);
  const total = isSet(y.max_length) ? int(y.max_length, n('max_length'), 2) : 1024;
  if (!isSet(y.max_length)) d.note(`${n('max_length')} absent: 1024 (${PAIR_CLASS[trainer]} default)`);
  const prompt = isSet(y.max_prompt_length) ? int(y.max_prompt_length, n('max_prompt_length')) : Math.floor(total / 2);
  if (prompt >= total)
    throw new ImportError(
      n('max_prompt_length'),
      `${n('max_prompt_length')}: ${prompt} leaves no completion within ${n('max_length')} ${total}`,
    );
  d.set('rl.prompt_len', prompt);
  d.set('rl.response_len', total - prompt);
  if (!isSet(y.max_prompt_length))
    d.note(
      `${n('max_length')} ${total}: prompt + completion (rl.prompt_len + rl.response_len; DPO's logits cover both, so only the sum matters)`,
    );
  d.set('rl.logits_response_only', false); // concatenated_forward: the logits of the whole sequence
  if (trainer === 'orpo' || trainer === 'cpo') {
    // trl/experimental/orpo/orpo_trainer.py and cpo/cpo_trainer.py @f2cd5771: no ref_model; concatenated_forward runs
    // chosen and rejected in one forward (2x the micro-batch); ORPO takes the NLL of the chosen and the odds ratio
    // from its logits, CPO / SimPO the NLL and the (length-normalised) log-prob margin
    d.set('rl.remove_padding', false);
    d.set('rl.reference.enabled', false);
    d.note(
      `${trainer === 'orpo' ? 'ORPO' : 'CPO / SimPO'}: no reference model; chosen and rejected in one forward (concatenated_forward, 2x the micro-batch): counted as rl.algorithm dpo with rl.reference.enabled false`,
    );
    return;
  }
  d.set('rl.remove_padding', isSet(y.padding_free) && bool(y.padding_free, n('padding_free')));
  const free = isSet(y.reference_free) && bool(y.reference_free, n('reference_free'));
  d.set('rl.reference.enabled', !free);
  const pre = isSet(y.precompute_ref_log_probs) && bool(y.precompute_ref_log_probs, n('precompute_ref_log_probs'));
  if (pre && !free) d.set('rl.reference.precomputed', true);
}

/**
 * RewardConfig / RewardTrainer (trl/trainer/reward_trainer.py @f2cd5771): the model loads as
 * AutoModelForSequenceClassification with one label (a bias-free score Linear(hidden, 1), no LM head and no logits
 * over the vocabulary: model.head none), and DataCollatorForPreference stacks the chosen then the rejected sequences,
 * one forward of 2 x the per-device batch, each padded to its longest, at most max_length (default 1024).
 */
function reward(d: Draft, y: Obj, micro: number, accum: number): void {
  d.set('model.head', 'none');
  d.set('training.micro_batch', 2 * micro);
  d.set('training.grad_accum', accum);
  d.note(
    `RewardTrainer: a one-label sequence classifier (score head not counted, no vocabulary logits: model.head none); chosen and rejected in one batch (DataCollatorForPreference): training.micro_batch ${2 * micro} = 2 x per_device_train_batch_size ${micro}`,
  );
  maxLength(d, y, 'max_length', 'RewardConfig');
  if (isSet(y.center_rewards_coefficient)) num(y.center_rewards_coefficient, 'center_rewards_coefficient');
}

/** max_length (SFTConfig and RewardConfig: 1024 by default; null: no truncation) as training.seq_len. */
function maxLength(d: Draft, y: Obj, key: string, cls: string): void {
  if (!(key in y)) {
    d.set('training.seq_len', 1024);
    d.note(`max_length absent: 1024 (${cls} default)`);
  } else if (y[key] === null)
    d.skip(key, 'null: sequences are not truncated; training.seq_len left at llmem default (set it to the longest)');
  else d.set('training.seq_len', int(y[key], key));
}

/** SFTConfig: accumulation, the sequence length (max_length, packed or the longest padded), the loss. */
function sft(d: Draft, y: Obj, accum: number): void {
  d.set('training.grad_accum', accum);
  const key = 'max_length' in y || !('max_seq_length' in y) ? 'max_length' : 'max_seq_length';
  maxLength(d, y, key, 'SFTConfig');
  if (isSet(y.packing) && bool(y.packing, 'packing'))
    d.note(`packing: sequences packed into blocks of ${key} (training.seq_len)`);
  else d.note(`no packing: each batch padded to its longest sequence; training.seq_len (${key}) is the worst case`);
  // sft_config.py: loss_type None -> "nll" with use_liger_kernel, else "chunked_nll"
  const liger = isSet(y.use_liger_kernel) && bool(y.use_liger_kernel, 'use_liger_kernel');
  const loss = isSet(y.loss_type)
    ? oneOf(y.loss_type, 'loss_type', ['nll', 'dft', 'chunked_nll'] as const)
    : liger
      ? 'nll'
      : 'chunked_nll';
  if (loss === 'chunked_nll' && liger)
    throw new ImportError(
      'loss_type',
      "loss_type: 'chunked_nll' is not compatible with use_liger_kernel true (nll | dft)",
    );
  if (loss === 'chunked_nll')
    d.skip(
      'loss_type',
      `chunked_nll${isSet(y.loss_type) ? '' : ' (SFTConfig default without use_liger_kernel)'}: sft_trainer.py computes the head's logits 256 tokens at a time, recomputed in the backward; no config v1 loss has that, counted as the standard loss (the whole logits, an over-estimate)`,
    );
}
