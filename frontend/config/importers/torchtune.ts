// torchtune recipe configs (recipes/configs/**/*.yaml) -> config v1. Every mapping below cites
// the torchtune file it follows, at pytorch/torchtune@bd2a0fc7 (2026-04-23) unless it says otherwise.
// The recipe (single device or distributed) is not in the file: the world size picks it. The loss (DPOLoss,
// GRPO*Loss) or the PPO models (policy_model, reward_and_value_model) name the RL recipes: DPO, GRPO and PPO
// map to the rl section (rl.algorithm dpo | grpo | ppo).
import type { Json } from '../../../wasm/llmem.js';
import { findModel, MODELS, presetRef } from '../catalog.js';
import {
  bool,
  Draft,
  draftModel,
  expertsOverTp,
  guard,
  ImportError,
  type ImportResult,
  int,
  isObject,
  num,
  type Obj,
  obj,
  oneOf,
  ordinal,
  parseYamlText,
  str,
} from './common.js';
import { applyOptimizerClass } from './optimizer-class.js';
import { applyDegree } from './parallel-degrees.js';
import { divide, seqLenFromRl } from './rl-common.js';

// Read, no effect on per-GPU memory: paths, logging, checkpointing, data order, schedules, validation, generation.
const IGNORED =
  /^(output_dir|checkpointer|teacher_checkpointer|ref_checkpointer|resume_from_checkpoint|save_adapter_weights_only|save_every_n_steps|save_every_n_epochs|enable_async_checkpointing|metric_logger|profiler|log_every_n_steps|log_peak_memory_stats|log_level|seed|shuffle|epochs|max_steps_per_epoch|lr_scheduler|device|cudnn_deterministic_mode|collate_fn|dataset_val|batch_size_val|run_val_every_n_steps|low_cpu_ram|clip_grad_norm|tensor_parallel_plan|context_parallel_rotate_method|activation_offloading_use_streams|kd_ratio|enable_kv_cache|max_new_tokens|temperature|top_k|prompt|tasks|limit|max_seq_length)$/;

// Builder function -> catalog preset id, with what the match takes for granted
// (torchtune/models/<family>/_model_builders.py: vocab_size, num_layers, num_heads, num_kv_heads, embed_dim, intermediate_dim).
const BUILDERS: Record<string, [string, string?]> = {
  llama2_7b: ['llama-2-7b'],
  llama2_13b: ['llama-2-13b'],
  llama2_70b: ['llama-2-70b'],
  llama3_8b: ['llama-3-8b'],
  // models/llama3/_model_builders.py llama3_70b: the llama3_1_70b shape, max_seq_len 8192 and no RoPE scaling
  llama3_70b: ['llama-3.1-70b', 'Llama 3 70B has the shape of Llama 3.1 70B'],
  llama3_1_8b: ['llama-3.1-8b'],
  llama3_1_70b: ['llama-3.1-70b'],
  llama3_1_405b: ['llama-3.1-405b'],
  llama3_2_1b: ['llama-3.2-1b'],
  llama3_2_3b: ['llama-3.2-3b'],
  llama3_3_70b: ['llama-3.3-70b'],
  // models/mistral/_component_builders.py mistral(): no sliding window, every layer attends to all tokens
  mistral_7b: [
    'mistral-7b-v0.1',
    "torchtune's mistral_7b has no sliding window (the preset's window changes no memory under flash attention)",
  ],
  // models/gemma/_model_builders.py gemma_2b, gemma_7b: the Gemma 1 shapes
  gemma_2b: ['gemma-2b'],
  gemma_7b: ['gemma-7b'],
  gemma2_2b: ['gemma-2-2b'],
  gemma2_9b: ['gemma-2-9b'],
  gemma2_27b: ['gemma-2-27b'],
  // models/phi3/_model_builders.py phi3_mini: no sliding window
  phi3_mini: [
    'phi-3-mini',
    "torchtune's phi3_mini has no sliding window (the preset's window changes no memory under flash attention)",
  ],
  phi4_14b: ['phi-4'],
  // models/qwen2/_model_builders.py: the Qwen2.5 shapes (vocab, layers, heads, widths, tied 0.5B/1.5B)
  qwen2_0_5b: ['qwen2.5-0.5b', 'Qwen2 0.5B has the shape of Qwen2.5 0.5B'],
  qwen2_1_5b: ['qwen2.5-1.5b', 'Qwen2 1.5B has the shape of Qwen2.5 1.5B'],
  qwen2_7b: ['qwen2.5-7b', 'Qwen2 7B has the shape of Qwen2.5 7B'],
  qwen2_5_0_5b: ['qwen2.5-0.5b'],
  qwen2_5_1_5b: ['qwen2.5-1.5b'],
  qwen2_5_3b: ['qwen2.5-3b'],
  qwen2_5_7b: ['qwen2.5-7b'],
  qwen2_5_14b: ['qwen2.5-14b'],
  qwen2_5_32b: ['qwen2.5-32b'],
  qwen2_5_72b: ['qwen2.5-72b'],
  qwen3_0_6b: ['qwen3-0.6b'],
  qwen3_1_7b: ['qwen3-1.7b'],
  qwen3_4b: ['qwen3-4b'],
  qwen3_8b: ['qwen3-8b'],
  qwen3_14b: ['qwen3-14b'],
  qwen3_32b: ['qwen3-32b'],
  llama4_scout_17b_16e: ['llama-4-scout-17b-16e'],
};

// torchtune/modules/peft/lora.py LORA_ATTN_MODULES; models/*/_component_builders.py lora_*: apply_lora_to_mlp -> w1, w2, w3
const ATTN_TARGETS: Record<string, string> = { q_proj: 'q', k_proj: 'k', v_proj: 'v', output_proj: 'o' };
const ORDER = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'];

/** Import a torchtune recipe config; `worldSize` is the number of processes (`tune run --nproc_per_node`), not in
 * the file; `modelFromHf`: the model comes from a config.json given beside it (llmem import --hf). */
export function importTorchtune(
  text: string,
  options: { worldSize?: number; modelFromHf?: boolean } = {},
): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'torchtune config');
    const d = new Draft();
    d.stack('torchtune');
    const given = (k: string) => y[k] !== undefined && y[k] !== null;
    const rl = rlKind(y);
    refuseIfNotTraining(y);
    const world = options.worldSize;
    // The recipe is named on the command line (tune run <recipe> --config <file>), not in the file.
    const distributed = world !== undefined && world > 1;
    if (rl === 'ppo' && distributed)
      // recipes/ppo_full_finetune_single_device.py @bd2a0fc7: torchtune's only PPO recipe
      throw new ImportError(
        'policy_model',
        `PPO (policy_model, reward_and_value_model): torchtune's only PPO recipe is ppo_full_finetune_single_device (one GPU); world size ${world} has no recipe`,
      );
    if (distributed) {
      d.set('parallel.gpus', world);
      d.set('parallel.engine', 'fsdp2');
      // recipes/*_distributed.py: training.shard_model -> fully_shard per layer (torchtune/training/_distributed.py)
      d.note(
        `world size ${world}: a distributed recipe (FSDP2 fully_shard per layer, training/_distributed.py shard_model)`,
      );
    } else {
      d.set('parallel.gpus', 1);
      d.set('parallel.engine', 'single');
      if (!rl)
        d.note(
          world === undefined
            ? 'no world size given: one GPU, a single-device recipe (give the world size for the distributed recipes)'
            : 'world size 1: a single-device recipe',
        );
    }

    // dtype: recipes/*.py training.get_dtype (training/precision.py): the model, gradients and optimizer
    // states in that dtype, no AMP and no fp32 master copy; fp16 is refused by the recipes.
    const dtype = given('dtype') ? oneOf(y.dtype, 'dtype', ['bf16', 'fp32', 'fp16'] as const) : 'fp32';
    if (dtype === 'fp16')
      throw new ImportError('dtype', 'dtype: fp16 is refused by the torchtune recipes (use bf16 or fp32)');
    if (!given('dtype')) d.note('dtype absent: fp32 (training/precision.py get_dtype default)');
    d.set('training.dtype', dtype);
    d.set('training.master_weights', false);
    d.set('training.grad_dtype', dtype);

    // PPO's policy is policy_model (recipes/ppo_full_finetune_single_device.py _setup_models)
    const modelKey = rl === 'ppo' ? 'policy_model' : 'model';
    const model = obj(y[modelKey], modelKey);
    const method = applyModel(d, model, dtype, modelKey, options.modelFromHf === true);
    const full = method === 'full';

    // the RL recipes read their own keys (batch, lengths, the other models) and not some of the fine-tuning ones
    const consumed = new Set<string>();
    if (rl) {
      const recipe = rlRecipe(rl, method, distributed);
      if (!full && rl !== 'dpo')
        throw new ImportError(
          `${modelKey}._component_`,
          `${modelKey}._component_: a ${method === 'qlora' ? 'QLoRA' : 'LoRA'} builder, but ${recipe} is a full fine-tuning recipe (it never freezes the base: set_trainable_params is not called); use the full builder`,
        );
      if (!distributed)
        d.note(
          `${world === undefined ? 'no world size given' : 'world size 1'}: one GPU${recipe.endsWith('distributed') ? `, ${recipe} on one process (FSDP2 over one GPU shards nothing); give the world size for more` : ''}`,
        );
      notRead(d, y, recipe, consumed);
      const ctx: RlContext = { d, y, recipe, world: world ?? 1, distributed, dtype, consumed };
      if (rl === 'dpo') applyDpo(ctx, method);
      else if (rl === 'grpo') applyGrpo(ctx);
      else applyPpo(ctx);
    } else {
      const tokenizer = y.tokenizer === undefined || y.tokenizer === null ? {} : obj(y.tokenizer, 'tokenizer');
      applySeqLen(d, tokenizer, y.dataset);
    }

    let optimizerInBwd = false;
    let ac = false;
    let offload = false;
    for (const [key, v] of Object.entries(y)) {
      if (v === null || consumed.has(key) || key === modelKey) continue;
      switch (key) {
        case 'model':
        case 'dtype':
        case 'tokenizer':
        case 'dataset':
          break;
        case 'batch_size': // recipes/*.py: the DataLoader's batch per rank (DistributedSampler)
          d.set('training.micro_batch', int(v, key));
          break;
        case 'gradient_accumulation_steps':
          d.set('training.grad_accum', int(v, key));
          break;
        case 'optimizer':
          applyOptimizer(d, obj(v, key), dtype);
          break;
        case 'optimizer_in_bwd':
          // recipes/full_finetune_*.py: one optimizer per parameter stepped in a post-accumulate-grad hook
          // (training/memory.py register_optim_in_bwd_hooks); the LoRA recipes do not read the key
          optimizerInBwd = bool(v, key);
          if (!full) {
            d.ignore(key);
            if (optimizerInBwd)
              d.note('optimizer_in_bwd: the LoRA recipes do not read it; the optimizer steps after the backward');
          } else if (optimizerInBwd) d.set('training.optimizer_in_backward', true);
          break;
        case 'enable_activation_checkpointing':
          // training/activations.py set_activation_checkpointing(model, auto_wrap_policy={TransformerSelfAttentionLayer})
          ac = bool(v, key);
          if (ac) d.set('training.recompute', 'full');
          break;
        case 'enable_activation_offloading':
          offload = bool(v, key);
          // recipes/knowledge_distillation_{single_device,distributed}.py @bd2a0fc7 read enable_activation_checkpointing
          // but never enable_activation_offloading (no OffloadActivations context in their train loops)
          if (offload && given('teacher_model')) {
            offload = false;
            d.skip(key, 'the knowledge_distillation recipes do not read it (no activation offloading); not applied');
          }
          break;
        case 'ac_mode':
        case 'ac_option':
          break; // below, with enable_activation_checkpointing
        case 'compile': {
          // recipes/full_finetune_distributed.py: compile (bool, or {model, loss, optimizer_step, scale_grads})
          const on = isObject(v) ? v.model !== false : bool(v, key);
          if (on) d.set('runtime.torch_compile', true);
          break;
        }
        case 'loss':
          applyLoss(d, obj(v, key));
          break;
        case 'fsdp_cpu_offload':
          // training/_distributed.py shard_model: CPUOffloadPolicy() (parameters, gradients, optimizer states on the host)
          if (!bool(v, key)) d.ignore(key);
          else if (distributed) {
            d.set('parallel.offload_params', 'cpu');
            d.set('parallel.offload_optimizer', 'cpu');
          } else d.skip(key, 'read only by the distributed recipes (world size 1); not applied');
          break;
        case 'fsdp_reshard_after_forward':
          // training/_distributed.py shard_model: fully_shard(reshard_after_forward=...) of every layer
          if (!distributed) d.ignore(key);
          else if (!bool(v, key)) d.set('parallel.reshard_after_forward', false);
          break;
        case 'custom_sharded_layers':
          break; // below
        case 'tensor_parallel_dim':
        case 'context_parallel_dim':
        case 'data_parallel_shard_dim':
        case 'data_parallel_replicate_dim':
          break; // below, together
        case 'enable_fp8_training':
          // recipes/full_finetune_distributed.py convert_to_float8_training (training/quantization.py): torchao Float8Linear
          if (bool(v, key)) {
            if (!distributed || !full) d.skip(key, 'read only by full_finetune_distributed; not applied');
            else {
              d.set('training.fp8_linear', true);
              const recipe = y.fp8_recipe_name ?? 'tensorwise';
              // training/quantization.py: no recipe name -> Float8LinearConfig(enable_fsdp_float8_all_gather=True)
              if (y.fp8_recipe_name === undefined || y.fp8_recipe_name === null) d.set('parallel.fp8_all_gather', true);
              d.note(`enable_fp8_training: torchao fp8 linears (${String(recipe)} scaling)`);
            }
          }
          break;
        case 'fp8_recipe_name':
          d.ignore(key);
          break;
        case 'fsdp':
          // an old block of the QLoRA configs (llama3_1/405B_qlora.yaml); the recipes read fsdp_cpu_offload instead
          if (isObject(v) && v.cpu_offload === true)
            d.skip('fsdp.cpu_offload', 'not read by the recipes (they read fsdp_cpu_offload); not applied');
          else d.ignore(key);
          break;
        case 'teacher_model':
          // recipes/knowledge_distillation_*.py: a second, frozen model and its logits beside the student's
          d.skip(key, "knowledge distillation: the teacher model's weights and logits are not modelled; not applied");
          break;
        case 'kd_loss':
          d.skip(key, "the distillation loss over the teacher's logits is not modelled; not applied");
          break;
        case 'quantizer':
          d.skip(key, 'quantization-aware training (fake-quantized linears) is not modelled; not applied');
          break;
        default:
          if (IGNORED.test(key) || (rl && RL_IGNORED.test(key))) d.ignore(key);
          else d.skip(key, `not a key of the torchtune ${rl ? 'RL' : 'fine-tuning'} recipes llmem reads; not applied`);
      }
    }
    applyCheckpointing(d, y, ac, offload, distributed);
    if (optimizerInBwd && full && given('gradient_accumulation_steps') && y.gradient_accumulation_steps !== 1)
      d.note('optimizer_in_bwd with gradient_accumulation_steps > 1: the recipes refuse it');
    if (distributed) {
      applyShardedLayers(d, y.custom_sharded_layers);
      applyParallelDims(d, y, world);
    } else {
      for (const k of [
        'custom_sharded_layers',
        'tensor_parallel_dim',
        'context_parallel_dim',
        'data_parallel_shard_dim',
        'data_parallel_replicate_dim',
      ])
        if (given(k)) {
          const n = typeof y[k] === 'number' ? (y[k] as number) : undefined;
          if (k !== 'custom_sharded_layers' && (n === 1 || n === -1)) d.ignore(k);
          else if (k === 'custom_sharded_layers') d.ignore(k);
          else d.skip(k, `${String(y[k])}: read only by the distributed recipes; give a world size > 1; not applied`);
        }
    }
    if (rl) seqLenFromRl(d);
    return d.result();
  });
}

/**
 * Every training recipe builds an optimizer from cfg.optimizer (recipes/{full,lora,qat,qat_lora,knowledge_distillation}_
 * *.py, *_dpo_*.py, ppo_*.py, dev/grpo_*.py _setup_optimizer @bd2a0fc7); the configs of the recipes that do not train
 * have none: eleuther_eval.py (tasks: the evaluation.yaml of each model folder), generate.py and dev/generate_v2*.py
 * (prompt: generation*.yaml), quantize.py (quantizer alone: quantization.yaml). Their model would otherwise be
 * counted as a full fine-tune (an evaluation's batch_size as the training batch).
 */
function refuseIfNotTraining(y: Obj): void {
  if (y.optimizer !== undefined && y.optimizer !== null) return;
  const recipe =
    y.tasks !== undefined
      ? ['tasks', 'eleuther_eval (an evaluation)']
      : y.prompt !== undefined
        ? ['prompt', 'generate / dev/generate_v2 (generation)']
        : y.quantizer !== undefined
          ? ['quantizer', 'quantize (post-training quantization)']
          : undefined;
  if (recipe)
    throw new ImportError(
      recipe[0],
      `${recipe[0]} and no optimizer: a config of torchtune's ${recipe[1]} recipe, which does not train; llmem estimates training (the training recipes read cfg.optimizer)`,
    );
}

/** model._component_ -> preset; lora_/qlora_ builders -> adapters (torchtune/models/<family>/_model_builders.py).
 * `prefix`: model, or PPO's policy_model; `fromHf`: a builder llmem does not know takes the model given apart. */
function applyModel(d: Draft, model: Obj, dtype: string, prefix: string, fromHf: boolean): 'full' | 'lora' | 'qlora' {
  const key = `${prefix}._component_`;
  const component = str(model._component_, key);
  const fn = component.split('.').pop() ?? component;
  const m = /^(q?lora)_(.+)$/.exec(fn);
  const base = (m ? m[2] : fn).replace(/_(base|instruct)$/, '');
  const hit = BUILDERS[base];
  const entry = hit && MODELS.find((e) => e.id === hit[0]);
  if ((!hit || !entry) && !fromHf)
    throw new ImportError(
      key,
      `${key}: "${component}" is not a torchtune model builder llmem knows (known: ${Object.keys(BUILDERS).join(', ')}, each also as lora_ and qlora_; Qwen2.5 and Qwen3 also with _base / _instruct); give the model's config.json (llmem import torchtune <file> --hf config.json, or llmem import hf) or choose model.preset`,
    );
  if (hit && entry) {
    d.set('model.preset', presetRef(entry));
    d.note(`${key} ${component} -> model.preset ${presetRef(entry)}${hit[1] ? ` (${hit[1]})` : ''}`);
  } else
    d.note(
      `${key} "${component}": not a builder llmem knows; the model is the config.json given apart (--hf, or the page's)${m ? `; the ${m[1]}_ prefix still makes it ${m[1] === 'qlora' ? 'QLoRA' : 'LoRA'}` : ''}`,
    );
  // qlora_* = partial(lora_*, quantize_base=True) (models/llama3_2/_model_builders.py qlora_llama3_2_3b)
  const quantize =
    m?.[1] === 'qlora' ||
    (model.quantize_base !== undefined &&
      model.quantize_base !== null &&
      bool(model.quantize_base, `${prefix}.quantize_base`));
  const method = !m ? 'full' : quantize ? 'qlora' : 'lora';
  d.set('training.finetune.method', method);
  for (const [k, v] of Object.entries(model)) {
    if (k === '_component_' || v === null) continue;
    const path = `${prefix}.${k}`;
    if (!m) {
      d.skip(
        path,
        `an argument of the model builder llmem does not read; the ${entry ? 'preset' : 'config.json'} shape is used; not applied`,
      );
      continue;
    }
    switch (k) {
      case 'lora_attn_modules':
      case 'apply_lora_to_mlp':
      case 'quantize_base':
        break;
      case 'lora_rank':
        d.set('training.finetune.lora_rank', int(v, path));
        break;
      case 'lora_dropout':
        d.set('training.finetune.lora_dropout', num(v, path));
        break;
      case 'lora_alpha':
        d.ignore(path);
        break;
      case 'apply_lora_to_output':
        // models/llama3_2/_component_builders.py lora_llama3_2: a LoRALinear on the output projection (not when tied)
        if (bool(v, path)) d.skip(path, 'an adapter on the output projection is not modelled; not applied');
        else d.ignore(path);
        break;
      case 'use_dora':
        if (bool(v, path))
          d.skip(path, "DoRA's magnitude vector and weight-norm activations are not modelled; counted as LoRA");
        else d.ignore(path);
        break;
      case 'tie_word_embeddings':
        d.ignore(path);
        break;
      default:
        d.skip(path, 'an argument of the LoRA builder llmem does not read; not applied');
    }
  }
  if (!m) return 'full';
  // lora_* builders: lora_attn_modules is required, apply_lora_to_mlp defaults to False, lora_rank to 8
  const attnKey = `${prefix}.lora_attn_modules`;
  const attn = model.lora_attn_modules;
  if (!Array.isArray(attn))
    throw new ImportError(attnKey, `${attnKey}: must be a list of q_proj, k_proj, v_proj, output_proj`);
  const set = new Set<string>();
  for (const n of attn) {
    const t = ATTN_TARGETS[String(n)];
    if (!t)
      throw new ImportError(attnKey, `${attnKey}: "${String(n)}" is not one of q_proj, k_proj, v_proj, output_proj`);
    set.add(t);
  }
  const mlp =
    model.apply_lora_to_mlp !== undefined &&
    model.apply_lora_to_mlp !== null &&
    bool(model.apply_lora_to_mlp, `${prefix}.apply_lora_to_mlp`);
  if (mlp) for (const t of ['gate', 'up', 'down']) set.add(t);
  if (!set.size) throw new ImportError(attnKey, `${attnKey}: no LoRA target (an empty list and no MLP)`);
  d.set(
    'training.finetune.lora_targets',
    ORDER.filter((t) => set.has(t)),
  );
  if (model.lora_rank === undefined || model.lora_rank === null) {
    d.set('training.finetune.lora_rank', 8);
    d.note(`${prefix}.lora_rank absent: 8 (the lora_ builders default)`);
  }
  // LoRA weights are built under training.set_default_dtype(self._dtype) (recipes/lora_finetune_*.py _setup_model)
  d.set('training.finetune.adapter_dtype', dtype);
  if (method === 'qlora') {
    // modules/low_precision/nf4_linear.py FrozenNF4Linear: torchao to_nf4, whose scalers are quantized too
    d.set('training.finetune.quant', 'nf4');
    d.set('training.finetune.double_quant', true);
  }
  return method;
}

/** tokenizer.max_seq_len (the truncation length) and dataset.packed (datasets/_packed.py PackedDataset fills every row). */
function applySeqLen(d: Draft, tokenizer: Obj, dataset: Json | undefined): void {
  const sets = dataset === undefined || dataset === null ? [] : Array.isArray(dataset) ? dataset : [dataset];
  const packed = sets.some(
    (s, i) =>
      isObject(s) &&
      s.packed !== undefined &&
      s.packed !== null &&
      bool(s.packed, Array.isArray(dataset) ? `dataset[${i}].packed` : 'dataset.packed'),
  );
  const max = tokenizer.max_seq_len;
  if (max === undefined || max === null) {
    d.skip(
      'tokenizer.max_seq_len',
      `null: samples are not truncated${packed ? '' : ' and each batch is padded to its longest sample'}, a length the file does not give; training.seq_len left at llmem's default (set it)`,
    );
    return;
  }
  const n = int(max, 'tokenizer.max_seq_len');
  d.set('training.seq_len', n);
  d.note(
    packed
      ? `dataset.packed: every sample is tokenizer.max_seq_len ${n} tokens`
      : `tokenizer.max_seq_len ${n}: the longest a batch is padded to (unpacked samples are padded to the batch's longest): an upper bound`,
  );
}

/** optimizer._component_: torch, bitsandbytes and torchao optimizers (recipes/configs: torch.optim.AdamW,
 * bitsandbytes.optim.PagedAdamW(8bit)), its other keys the constructor's arguments. */
function applyOptimizer(d: Draft, o: Obj, dtype: string): void {
  const key = 'optimizer._component_';
  const component = str(o._component_, key);
  if (!applyOptimizerClass(d, key, component, o, dtype))
    d.skip(key, `${component}: not an optimizer llmem knows; llmem's default (AdamW) counted`);
}

/** loss._component_ (torchtune/modules/loss): the chunked losses keep per-chunk fp32 log-softmax outputs. */
function applyLoss(d: Draft, l: Obj): void {
  const key = 'loss._component_';
  const component = str(l._component_, key);
  const name = component.split('.').pop() ?? component;
  const chunks = () => {
    if (l.num_output_chunks !== undefined && l.num_output_chunks !== null)
      d.set('training.loss_chunks', int(l.num_output_chunks, 'loss.num_output_chunks'));
  };
  if (name === 'CEWithChunkedOutputLoss') {
    // modules/loss/ce_chunked_output_loss.py: the output projection per chunk, upcast + cross-entropy per chunk
    d.set('training.loss', 'chunked');
    chunks();
  } else if (name === 'LinearCrossEntropyLoss') {
    // modules/loss/cross_entropy_loss.py: the output projection moved into the loss, one chunk of logits at a
    // time, logits.float() + F.cross_entropy per chunk: the per-chunk fp32 log-softmax outputs stay saved
    // as in CEWithChunkedOutputLoss; ignored tokens are masked out first (counted as all tokens)
    d.set('training.loss', 'chunked');
    chunks();
    d.note(
      'loss LinearCrossEntropyLoss: counted as the chunked output loss (per-chunk fp32 log-softmax saved); the full list of 16-bit logits chunks it never forms and the masked-out prompt tokens are counted, an over-estimate',
    );
  } else if (component === 'torch.nn.CrossEntropyLoss') {
    d.set('training.loss', 'standard');
  } else
    d.skip(
      key,
      `${component}: not a supervised fine-tuning loss llmem models (preference / RL losses need their other models); not applied`,
    );
}

/** enable_activation_checkpointing / ac_mode / enable_activation_offloading (recipes/full_finetune_distributed.py _setup_model). */
function applyCheckpointing(d: Draft, y: Obj, ac: boolean, offload: boolean, distributed: boolean): void {
  const mode = y.ac_mode;
  if (mode !== undefined && mode !== null) {
    // only full_finetune_distributed reads ac_mode, and only with enable_activation_checkpointing False
    if (ac || !distributed) d.ignore('ac_mode');
    else {
      const m = oneOf(mode, 'ac_mode', ['full', 'selective', 'none'] as const);
      const opt = y.ac_option;
      // training/activations.py apply_selective_activation_checkpointing: "op" is per-op SAC, an int k every k-th layer
      // (checkpoint_wrapper._count % k == 0: floor(layers / k) of them; 0 or 1: all)
      const every =
        m === 'selective' && opt !== 'op' && opt !== undefined && opt !== null ? int(opt, 'ac_option', 0) : 1;
      const layers = draftModel(d)?.layers;
      if (m === 'full' || (m === 'selective' && every <= 1 && opt !== 'op')) {
        d.set('training.recompute', 'full');
        ac = true;
      } else if (m === 'selective' && opt === 'op') {
        d.set('training.recompute', 'per_op');
        d.note("ac_mode selective, ac_option op: torchtitan's per-op selective checkpointing");
      } else if (m === 'selective' && typeof layers === 'number' && Math.floor(layers / every) === 0)
        d.note(`ac_mode selective, ac_option ${every}: more than the ${layers} layers, so none is checkpointed`);
      else if (m === 'selective' && typeof layers === 'number') {
        d.set('training.recompute', 'full');
        d.set('training.recompute_layers', Math.floor(layers / every));
        d.note(
          `ac_mode selective, ac_option ${every}: every ${ordinal(every)} layer checkpointed = ${Math.floor(layers / every)} of ${layers} layers recomputed (training.recompute_layers)`,
        );
        ac = true;
      } else if (m === 'selective')
        d.skip(
          'ac_mode',
          `selective, ac_option ${every}: every ${ordinal(every)} layer needs the model's layer count; not applied`,
        );
    }
  }
  if (offload) {
    // training/_activation_offloading.py OffloadActivations: saved tensors of the checkpointed layers go to the host
    if (!ac)
      d.skip(
        'enable_activation_offloading',
        'needs enable_activation_checkpointing (the recipes refuse it otherwise); not applied',
      );
    else d.set('training.activation_offload', true);
  }
}

/** custom_sharded_layers (training/_distributed.py get_shard_conditions): the embedding and output as own fully_shard units. */
function applyShardedLayers(d: Draft, v: Json | undefined): void {
  const names =
    v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [str(v, 'custom_sharded_layers')];
  const emb = names.includes('tok_embeddings');
  const out = names.includes('output');
  if (emb && out) d.set('parallel.shard_root_modules', true);
  else if (!names.length) {
    d.set('parallel.shard_root_modules', false);
    d.note('no custom_sharded_layers: the embedding and output are sharded with the root module');
  } else
    d.skip(
      'custom_sharded_layers',
      `${names.join(', ')}: only tok_embeddings with output together are modelled; not applied`,
    );
}

/** tensor / context / data-parallel dims (recipes/full_finetune_distributed.py training.ParallelDims; shard -1 infers). */
function applyParallelDims(d: Draft, y: Obj, world: number | undefined): void {
  const dim = (k: string, dflt: number) =>
    y[k] === undefined || y[k] === null ? dflt : y[k] === -1 ? -1 : int(y[k], k);
  const tp = dim('tensor_parallel_dim', 1);
  const cp = dim('context_parallel_dim', 1);
  const replicate = dim('data_parallel_replicate_dim', 1);
  let shard = dim('data_parallel_shard_dim', -1);
  if (tp === -1 || cp === -1 || replicate === -1)
    throw new ImportError(
      'tensor_parallel_dim',
      'tensor_parallel_dim, context_parallel_dim, data_parallel_replicate_dim: must be >= 1',
    );
  if (world !== undefined) {
    const rest = world / (tp * cp * replicate);
    if (shard === -1) {
      if (!Number.isInteger(rest))
        throw new ImportError(
          'data_parallel_shard_dim',
          `world size ${world} is not a multiple of tensor x context x replicate dims ${tp * cp * replicate}`,
        );
      shard = rest;
    } else if (shard * tp * cp * replicate !== world)
      throw new ImportError(
        'data_parallel_shard_dim',
        `data_parallel_shard_dim: replicate x shard x tensor x context dims make ${shard * tp * cp * replicate} GPUs, the world size given is ${world}`,
      );
  }
  if (tp > 1 && applyDegree(d, 'tensor_parallel_dim', 'parallel.tp', tp)) {
    d.note(
      `tensor_parallel_dim ${tp}: parallel.tp with sequence parallel norms (models/llama3/_parallelism.py base_llama_tp_plan SequenceParallel)`,
    );
    // models/llama4/_parallelism.py decoder_only_tp_plan: "mlp.experts": ExpertTensorParallel() on the TP mesh
    // (modules/moe/_parallelism.py: each expert's weights split over it)
    expertsOverTp(d, tp, `tensor_parallel_dim ${tp}`);
  }
  const cpApplied = cp > 1 && applyDegree(d, 'context_parallel_dim', 'parallel.cp', cp) ? cp : 1;
  if (replicate > 1) {
    d.set('parallel.fsdp_strategy', 'hybrid_shard');
    d.set('parallel.fsdp_shard_size', shard * cpApplied);
    d.note(
      `data_parallel_replicate_dim ${replicate}: FSDP shards over dp_shard x cp = ${shard * cpApplied} GPUs and replicates over ${replicate}`,
    );
  }
}

// ---- the RL recipes: DPO (recipes/full_dpo_distributed.py, lora_dpo_{single_device,distributed}.py), GRPO
// (recipes/dev/grpo_full_finetune_distributed.py), PPO (recipes/ppo_full_finetune_single_device.py), @bd2a0fc7 ----

type RlKind = 'dpo' | 'grpo' | 'ppo';

interface RlContext {
  d: Draft;
  y: Obj;
  recipe: string;
  /** the processes (1 where no world size is given) */
  world: number;
  distributed: boolean;
  dtype: string;
  /** keys read here, which the fine-tuning loop leaves alone */
  consumed: Set<string>;
}

// Read by the RL recipes with no effect on per-GPU memory: names and paths, the other checkpoints, step counts,
// rewards and the PPO / GRPO coefficients, sampling.
const RL_IGNORED =
  /^(name|base_model_path|ref_policy_checkpointer|value_checkpointer|reward_checkpointer|num_steps|ppo_epochs|kl_coeff|gamma|lmbda|whiten_rewards|min_response_length|penalise_no_eos|reward_penalty|stop_token_ids|reward_functions|temperature|top_k)$/;

const DIMS = ['tensor_parallel_dim', 'context_parallel_dim', 'data_parallel_shard_dim', 'data_parallel_replicate_dim'];
const FP8 = ['enable_fp8_training', 'fp8_recipe_name'];
// Keys of the fine-tuning recipes that an RL recipe does not read (its cfg.* reads at bd2a0fc7)
const NOT_READ: Record<string, string[]> = {
  full_dpo_distributed: [...DIMS, 'ac_mode', 'ac_option', ...FP8],
  lora_dpo_distributed: [...DIMS, 'ac_mode', 'ac_option', ...FP8, 'compile'],
  lora_dpo_single_device: [...DIMS, 'ac_mode', 'ac_option', ...FP8],
  'dev/grpo_full_finetune_distributed': [
    ...DIMS,
    'ac_mode',
    'ac_option',
    ...FP8,
    'gradient_accumulation_steps',
    'optimizer_in_bwd',
    'enable_activation_offloading',
    'fsdp_reshard_after_forward',
  ],
  ppo_full_finetune_single_device: [
    ...DIMS,
    'ac_mode',
    'ac_option',
    ...FP8,
    'enable_activation_offloading',
    'fsdp_cpu_offload',
    'fsdp_reshard_after_forward',
    'custom_sharded_layers',
  ],
};

const lossName = (y: Obj): string | undefined => {
  const loss = y.loss;
  const comp = isObject(loss) ? loss._component_ : undefined;
  return typeof comp === 'string' ? comp.split('.').pop() : undefined;
};

/** The RL recipe a file is for: its loss (rlhf/loss/dpo.py DPOLoss, RSOLoss; dev/grpo/loss.py GRPO*Loss) or PPO's
 * models; the async GRPO recipe's sections are refused. */
function rlKind(y: Obj): RlKind | undefined {
  if (y.orchestration !== undefined || y.inference !== undefined || y.postprocessing !== undefined)
    // recipes/dev/async_grpo_full_finetune_distributed.py (configs/dev/qwen3B_async_grpo.yaml @bd2a0fc7)
    throw new ImportError(
      y.orchestration !== undefined ? 'orchestration' : y.inference !== undefined ? 'inference' : 'postprocessing',
      "orchestration / inference / postprocessing: torchtune's async GRPO recipe (Ray workers, vLLM inference workers apart from the trainers) is not one llmem imports; the synchronous dev/grpo_full_finetune_distributed configs are",
    );
  const loss = lossName(y);
  if (y.policy_model !== undefined || y.reward_and_value_model !== undefined || loss === 'PPOLoss') return 'ppo';
  if ((loss !== undefined && /^GRPO\w*Loss$/.test(loss)) || y.grpo_samples !== undefined) return 'grpo';
  if (loss === 'DPOLoss' || loss === 'RSOLoss') return 'dpo';
  return undefined;
}

function rlRecipe(rl: RlKind, method: string, distributed: boolean): string {
  if (rl === 'ppo') return 'ppo_full_finetune_single_device';
  if (rl === 'grpo') return 'dev/grpo_full_finetune_distributed';
  if (method === 'full') return 'full_dpo_distributed';
  return distributed ? 'lora_dpo_distributed' : 'lora_dpo_single_device';
}

/** Fine-tuning keys the recipe does not read: reported when set to something, else read as no effect. */
function notRead(d: Draft, y: Obj, recipe: string, consumed: Set<string>): void {
  for (const k of NOT_READ[recipe] ?? []) {
    const v = y[k];
    if (v === undefined) continue;
    consumed.add(k);
    const off =
      v === null ||
      v === false ||
      k === 'fp8_recipe_name' ||
      k === 'ac_option' ||
      (k.endsWith('_dim') && (v === 1 || v === -1)) ||
      (k === 'gradient_accumulation_steps' && v === 1);
    if (off) d.ignore(k);
    else d.skip(k, `${String(typeof v === 'object' ? JSON.stringify(v) : v)}: ${recipe} does not read it; not applied`);
  }
  // a later check (optimizer_in_bwd with accumulation, checkpointing modes) must not see them either
  for (const k of consumed) delete y[k];
}

/** An int the recipe reads as cfg.<key> (required there); `dflt` where a test file leaves it out, noted. */
function required(c: RlContext, key: string, dflt?: number): number {
  c.consumed.add(key);
  const v = c.y[key];
  if (v !== undefined && v !== null) return int(v, key);
  if (dflt === undefined)
    throw new ImportError(key, `${key}: ${c.recipe} reads it (cfg.${key}) and the file does not give it`);
  c.d.note(`${key} absent (${c.recipe} reads cfg.${key}): ${dflt} assumed`);
  return dflt;
}

/** The loss's keyword arguments: `known` read with no effect, others reported. */
function lossArgs(c: RlContext, known: string[]): string {
  c.consumed.add('loss');
  const l = obj(c.y.loss, 'loss');
  const name = str(l._component_, 'loss._component_');
  const short = name.split('.').pop() ?? name;
  for (const [k, v] of Object.entries(l)) {
    if (k === '_component_' || v === null) continue;
    if (known.includes(k)) c.d.ignore(`loss.${k}`);
    else c.d.skip(`loss.${k}`, `not an argument of ${short} llmem reads; not applied`);
  }
  return short;
}

/** tokenizer.max_seq_len, or undefined (reported) when null or absent. */
function maxSeqLen(c: RlContext, why: string): number | undefined {
  c.consumed.add('tokenizer');
  const t = c.y.tokenizer === undefined || c.y.tokenizer === null ? {} : obj(c.y.tokenizer, 'tokenizer');
  if (t.max_seq_len === undefined || t.max_seq_len === null) {
    c.d.skip('tokenizer.max_seq_len', `null: ${why}`);
    return undefined;
  }
  return int(t.max_seq_len, 'tokenizer.max_seq_len', 2);
}

/**
 * DPO: chosen and rejected concatenated (data/_collate.py padded_collate_dpo: 2 x batch_size rows per forward,
 * recipes' concatenated_forward), the reference's no-grad forward per batch (DPOLoss and RSOLoss are not
 * reference-free, rlhf/loss/dpo.py); full: a second frozen copy from ref_checkpointer, sharded as the policy
 * (full_dpo_distributed.py _setup_reference_model); LoRA: the policy with its adapters disabled (lora_dpo_*.py
 * train: torch.no_grad(), disable_adapter(self._model)), no second copy.
 */
function applyDpo(c: RlContext, method: string): void {
  const { d, y } = c;
  d.set('rl.algorithm', 'dpo');
  d.note(
    `loss ${lossName(y)}: torchtune's ${c.recipe} recipe (recipes/${c.recipe}.py @bd2a0fc7): rl.algorithm dpo, pairs of chosen and rejected in one forward`,
  );
  const pairs = required(c, 'batch_size', 1);
  const accum = required(c, 'gradient_accumulation_steps', 1);
  d.set('training.micro_batch', pairs);
  d.set('rl.rollout_batch', pairs * accum * c.world);
  d.set('rl.mini_batch', pairs * accum * c.world);
  d.note(
    `batch_size ${pairs}: pairs per GPU per forward (padded_collate_dpo: ${2 * pairs} sequences); rl.mini_batch ${pairs * accum * c.world} = batch_size x gradient_accumulation_steps x ${c.world} GPU${c.world > 1 ? 's' : ''}`,
  );
  // datasets/_preference.py: chosen and rejected each truncated to tokenizer.max_seq_len by tokenize_messages
  const total = maxSeqLen(
    c,
    "chosen and rejected are not truncated, a length the file does not give; rl.prompt_len and rl.response_len left at llmem's defaults (set them)",
  );
  if (total !== undefined) {
    d.set('rl.prompt_len', Math.floor(total / 2));
    d.set('rl.response_len', total - Math.floor(total / 2));
    d.note(
      `tokenizer.max_seq_len ${total}: prompt + response of each of chosen and rejected (rl.prompt_len + rl.response_len; the logits cover both, so only the sum matters); each batch is padded to its longest, an upper bound`,
    );
  }
  d.set('rl.logits_response_only', false); // concatenated_forward: the logits of every token
  d.set('rl.remove_padding', false);
  d.set('rl.reference.enabled', true);
  d.note(
    method === 'full'
      ? 'the reference: a second, frozen copy of the model (ref_checkpointer), sharded as the policy (full_dpo_distributed.py _setup_reference_model)'
      : 'the reference: the policy with its adapters disabled (disable_adapter), no second copy',
  );
  const name = lossArgs(c, ['beta', 'label_smoothing', 'gamma']);
  // recipes/*dpo*.py train: the policy's concatenated_forward, then the reference's under no_grad, then the loss
  d.skip(
    'loss._component_',
    `${name}: the reference's no-grad forward runs after the policy's forward, while the policy's activations and logits are held (recipes/${c.recipe}.py train); llmem counts it as a phase of its own before the update, an under-estimate of that moment`,
  );
}

/**
 * GRPO (recipes/dev/grpo_full_finetune_distributed.py @bd2a0fc7): per rank batch_size prompts x grpo_samples
 * completions, generated by the policy itself (dev/rl/generation.py generate under local_kv_cache, no vLLM),
 * their log-probs under no_grad (policy then reference, forward_batch_size prompts at a time), then one
 * forward/backward over the whole trajectory (grpo_step) and the optimizer step; no gradient accumulation.
 */
function applyGrpo(c: RlContext): void {
  const { d } = c;
  d.set('rl.algorithm', 'grpo');
  d.note(
    `loss ${lossName(c.y) ?? '(grpo_samples)'}: torchtune's ${c.recipe} recipe (recipes/${c.recipe}.py @bd2a0fc7): rl.algorithm grpo`,
  );
  const g = required(c, 'grpo_samples');
  const batch = required(c, 'batch_size');
  const forward = required(c, 'forward_batch_size');
  const response = required(c, 'max_generated_tokens');
  d.set('rl.group_size', g);
  d.set('rl.response_len', response);
  d.set('training.micro_batch', batch * g);
  d.set('rl.rollout_batch', batch * c.world);
  d.set('rl.mini_batch', batch * c.world);
  d.set('rl.logprob_micro_batch', Math.min(forward, batch) * g);
  d.note(
    `batch_size ${batch} x grpo_samples ${g}: ${batch * g} sequences per GPU in one forward and backward (grpo_step, training.micro_batch); forward_batch_size ${forward}: ${Math.min(forward, batch) * g} per no-grad pass (rl.logprob_micro_batch); rl.rollout_batch = rl.mini_batch = ${batch * c.world} prompts (batch_size x ${c.world} GPU${c.world > 1 ? 's' : ''})`,
  );
  // dev/grpo/data.py _prepare_sample: tokenizer.encode(question), which does not truncate
  c.consumed.add('tokenizer');
  const t = c.y.tokenizer === undefined || c.y.tokenizer === null ? {} : obj(c.y.tokenizer, 'tokenizer');
  if (t.max_seq_len !== undefined && t.max_seq_len !== null)
    d.skip(
      'tokenizer.max_seq_len',
      `${String(t.max_seq_len)}: the GRPO data encodes prompts with tokenizer.encode, which does not truncate (dev/grpo/data.py); not a prompt length`,
    );
  d.note(
    "the prompt length is not in the file (prompts are not truncated): rl.prompt_len left at llmem's default (set it to the longest prompt)",
  );
  d.set('rl.logits_response_only', false); // the model's logits over every token, sliced after
  d.set('rl.remove_padding', false);
  d.set('rl.entropy', false);
  // _setup_model(ref_checkpointer, eval_mode=True): a second frozen copy, run whatever kl_coeff is
  d.set('rl.reference.enabled', true);
  logitsOverCounted(c, lossArgs(c, ['epsilon', 'kl_coeff']));
  generation(c, batch, forward, g, response);
  if (c.distributed) {
    // setup: the policy is sharded with reshard_after_forward=False ("for faster generation"), the reference with True
    d.set('parallel.reshard_after_forward', false);
    d.set('rl.weight_sync', 'full');
    d.note(
      'the policy keeps its gathered parameters after each forward (reshard_after_forward False): parallel.reshard_after_forward false for the update, and the whole policy gathered while it generates (rl.weight_sync full stands for it; nothing is sent to an engine)',
    );
  }
}

/**
 * PPO (recipes/ppo_full_finetune_single_device.py @bd2a0fc7, one GPU): policy, a frozen reference copy, a reward
 * model and a value model (both reward_and_value_model); the policy generates (forward_batch_size prompts at a
 * time), then ppo_batch_size trajectories per optimizer step in gradient_accumulation_steps backward passes.
 */
function applyPpo(c: RlContext): void {
  const { d, y } = c;
  d.set('rl.algorithm', 'ppo');
  d.note(
    `policy_model and reward_and_value_model: torchtune's ${c.recipe} recipe (recipes/${c.recipe}.py @bd2a0fc7): rl.algorithm ppo`,
  );
  const batch = required(c, 'batch_size');
  const forward = required(c, 'forward_batch_size');
  const ppoBatch = required(c, 'ppo_batch_size');
  const accum = required(c, 'gradient_accumulation_steps');
  const response = required(c, 'max_generated_tokens');
  // _setup_training_parameters: the ValueErrors of the recipe
  divide(batch, forward, 'forward_batch_size', 'batch_size must be exactly divisible by forward_batch_size');
  divide(batch, ppoBatch, 'ppo_batch_size', 'batch_size must be exactly divisible by ppo_batch_size');
  const micro = divide(
    ppoBatch,
    accum,
    'gradient_accumulation_steps',
    'ppo_batch_size must be exactly divisible by gradient_accumulation_steps',
  );
  d.set('rl.group_size', 1);
  d.set('training.micro_batch', micro);
  d.set('rl.rollout_batch', batch);
  d.set('rl.mini_batch', ppoBatch);
  d.set('rl.logprob_micro_batch', forward);
  d.set('rl.response_len', response);
  d.note(
    `batch_size ${batch} prompts per step (rl.rollout_batch), ppo_batch_size ${ppoBatch} per optimizer step (rl.mini_batch) in backward passes of ${micro} (training.micro_batch); forward_batch_size ${forward} per no-grad pass`,
  );
  // datasets/_text_completion.py: truncate(tokens, tokenizer.max_seq_len - 1)
  const prompt = maxSeqLen(
    c,
    "prompts are not truncated, a length the file does not give; rl.prompt_len left at llmem's default (set it)",
  );
  if (prompt !== undefined) {
    d.set('rl.prompt_len', prompt);
    d.note(`tokenizer.max_seq_len ${prompt}: the longest prompt (text_completion_dataset truncates to it)`);
  }
  d.set('rl.logits_response_only', false);
  d.set('rl.remove_padding', false);
  d.set('rl.reference.enabled', true); // ref_policy_checkpointer: a frozen copy of the policy
  d.set('rl.reward.enabled', true);
  c.consumed.add('reward_and_value_model');
  valueModel(d, obj(y.reward_and_value_model, 'reward_and_value_model'));
  const name = lossArgs(c, ['epsilon', 'value_coeff', 'value_clip_range']);
  logitsOverCounted(c, name);
  // ppo_step: the policy's and the value model's forwards, one loss, one backward; one optimizer over both
  d.skip(
    'loss._component_',
    `${name}: the policy and the value model run forward together and share one backward and one optimizer (ppo_step, _setup_optimizer); llmem counts the critic update, then the actor update, each beside the other's resident states: the value model's activations during the policy's backward are not counted`,
  );
  c.consumed.add('enable_kv_cache');
  const cache =
    y.enable_kv_cache === undefined || y.enable_kv_cache === null || bool(y.enable_kv_cache, 'enable_kv_cache');
  if (cache) generation(c, forward, forward, 1, response);
  else {
    d.set('rl.rollout.placement', 'separate');
    d.set('rl.weight_sync_bucket_mib', 1);
    d.skip(
      'enable_kv_cache',
      'false: the policy generates without a KV cache (each token a full forward, not modelled); counted as generation elsewhere (rl.rollout.placement separate)',
    );
  }
}

/** rlhf/sequence_processing.py (logits_to_logprobs, batched_logits_to_logprobs): the log-probs of the response
 * slice of the model's logits, log_softmax in the logits' dtype; config v1's RL update takes the training loss
 * over every token. */
function logitsOverCounted(c: RlContext, name: string): void {
  c.d.skip(
    'loss._component_',
    `${name}: the log-probs come from the response slice of the model's ${c.dtype} logits, log_softmax in ${c.dtype} (rlhf/sequence_processing.py); llmem counts the standard loss over every token (the logits, an fp32 copy and the log-softmax), an over-estimate`,
  );
}

/** reward_and_value_model: its dims (classifier_model / *_classifier keyword arguments), else a *_reward_7b
 * builder's shape, else the policy's (reported). */
function valueModel(d: Draft, v: Obj): void {
  const comp = str(v._component_, 'reward_and_value_model._component_');
  const dims: [string, string][] = [
    ['num_layers', 'layers'],
    ['embed_dim', 'hidden'],
    ['num_heads', 'heads'],
    ['num_kv_heads', 'kv_heads'],
    ['intermediate_dim', 'ffn_hidden'],
  ];
  const set = (k: string, n: number) => {
    d.set(`rl.critic.${k}`, n);
    d.set(`rl.reward.${k}`, n);
  };
  // num_classes 1 (the scalar head), vocab_size, max_seq_len, norm_eps, attn_dropout, base_model_path
  for (const k of Object.keys(v))
    if (k !== '_component_' && !dims.some(([n]) => n === k)) d.ignore(`reward_and_value_model.${k}`);
  if (dims.some(([k]) => v[k] !== undefined && v[k] !== null)) {
    for (const [k, to] of dims)
      if (v[k] !== undefined && v[k] !== null) set(to, int(v[k], `reward_and_value_model.${k}`));
    d.note(
      'reward_and_value_model: the reward model and the value model (rl.reward, rl.critic) take its num_layers, embed_dim, num_heads, num_kv_heads and intermediate_dim, with a scalar head',
    );
    return;
  }
  // models/{llama2,mistral}/_model_builders.py llama2_reward_7b, mistral_reward_7b: the 7B shape, num_classes 1
  const fn = comp.split('.').pop() ?? comp;
  const hit = BUILDERS[fn.replace(/_(reward|classifier)(?=_|$)/, '')];
  const model = hit ? findModel(hit[0])?.model : undefined;
  if (model) {
    for (const [, to] of dims) if (typeof model[to] === 'number') set(to, model[to] as number);
    d.note(`reward_and_value_model ${comp}: the ${hit?.[0]} shape with a scalar head (rl.reward, rl.critic)`);
  } else
    d.skip(
      'reward_and_value_model._component_',
      `"${comp}": no dims llmem reads; the reward and value models are counted with the policy's shape (set rl.reward.* and rl.critic.*)`,
    );
}

/**
 * The policy generates itself (dev/rl/generation.py / generation/_generation.py generate, under
 * modules/common_utils.py local_kv_cache: per layer k and v caches of [sequences, kv heads, prompt + generated,
 * head_dim] in the training dtype, modules/kv_cache.py); config v1's rollout is an engine (vLLM, SGLang): the
 * rollout is counted as elsewhere and the cache reported, sized where the model's shape is known.
 */
function generation(c: RlContext, prompts: number, forward: number, g: number, response: number): void {
  const { d } = c;
  const seqs = Math.min(forward, prompts) * g;
  d.set('rl.rollout.placement', 'separate');
  // no engine to send weights to: the weight-sync bucket at its smallest (distributed GRPO sets rl.weight_sync full)
  if (!c.distributed) d.set('rl.weight_sync_bucket_mib', 1);
  const prompt = typeof d.get('rl.prompt_len') === 'number' ? (d.get('rl.prompt_len') as number) : 512;
  const tokens = prompt + response;
  const ref = d.get('model.preset');
  const m = typeof ref === 'string' ? findModel(ref)?.model : undefined;
  const n = (k: string) => (m && typeof m[k] === 'number' ? (m[k] as number) : undefined);
  const layers = n('layers');
  const kv = n('kv_heads') ?? n('heads');
  const headDim =
    n('head_dim') ?? (n('hidden') && n('heads') ? (n('hidden') as number) / (n('heads') as number) : undefined);
  const bytes = c.dtype === 'fp32' ? 4 : 2;
  const size =
    layers && kv && headDim
      ? ` = ${((2 * layers * seqs * kv * tokens * headDim * bytes) / 2 ** 30).toFixed(2)} GiB`
      : ' (2 x layers x kv heads x head_dim bytes per token)';
  d.skip(
    'generation',
    `the policy generates itself (torchtune generate, no vLLM): its KV cache, ${seqs} sequences x ${tokens} tokens in ${c.dtype}${size}, and the decoding are not modelled (config v1's rollout is an engine); counted as generation elsewhere (rl.rollout.placement separate)`,
  );
}
