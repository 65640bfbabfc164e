// torchtune recipe configs (recipes/configs/**/*.yaml) -> config v1. Every mapping below cites
// the torchtune file it follows, at pytorch/torchtune@bd2a0fc7 (2026-04-23) unless it says otherwise.
// The recipe (single device or distributed) is not in the file: the world size picks it.
import type { Json } from '../../../wasm/llmem.js';
import { MODELS, presetRef } from '../catalog.js';
import {
  bool,
  Draft,
  guard,
  ImportError,
  type ImportResult,
  int,
  isObject,
  num,
  type Obj,
  obj,
  oneOf,
  parseYamlText,
  str,
} from './common.js';
import { applyOptimizerClass } from './optimizer-class.js';
import { applyDegree } from './parallel-degrees.js';

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

/** Import a torchtune recipe config; `worldSize` is the number of processes (`tune run --nproc_per_node`), not in the file. */
export function importTorchtune(text: string, options: { worldSize?: number } = {}): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'torchtune config');
    const d = new Draft();
    d.stack('torchtune');
    const given = (k: string) => y[k] !== undefined && y[k] !== null;
    const world = options.worldSize;
    // The recipe is named on the command line (tune run <recipe> --config <file>), not in the file.
    const distributed = world !== undefined && world > 1;
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

    const model = obj(y.model, 'model');
    const method = applyModel(d, model, dtype);
    const full = method === 'full';

    const tokenizer = y.tokenizer === undefined || y.tokenizer === null ? {} : obj(y.tokenizer, 'tokenizer');
    applySeqLen(d, tokenizer, y.dataset);

    let optimizerInBwd = false;
    let ac = false;
    let offload = false;
    for (const [key, v] of Object.entries(y)) {
      if (v === null) continue;
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
          if (IGNORED.test(key)) d.ignore(key);
          else d.skip(key, 'not a key of the torchtune fine-tuning recipes llmem reads; not applied');
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
    return d.result();
  });
}

/** model._component_ -> preset; lora_/qlora_ builders -> adapters (torchtune/models/<family>/_model_builders.py). */
function applyModel(d: Draft, model: Obj, dtype: string): 'full' | 'lora' | 'qlora' {
  const key = 'model._component_';
  const component = str(model._component_, key);
  const fn = component.split('.').pop() ?? component;
  const m = /^(q?lora)_(.+)$/.exec(fn);
  const base = (m ? m[2] : fn).replace(/_(base|instruct)$/, '');
  const hit = BUILDERS[base];
  const entry = hit && MODELS.find((e) => e.id === hit[0]);
  if (!hit || !entry)
    throw new ImportError(
      key,
      `${key}: "${component}" is not a torchtune model builder llmem knows (known: ${Object.keys(BUILDERS).join(', ')}, each also as lora_ and qlora_; Qwen2.5 and Qwen3 also with _base / _instruct); give the model's config.json (llmem import hf) or choose model.preset`,
    );
  d.set('model.preset', presetRef(entry));
  d.note(`${key} ${component} -> model.preset ${presetRef(entry)}${hit[1] ? ` (${hit[1]})` : ''}`);
  // qlora_* = partial(lora_*, quantize_base=True) (models/llama3_2/_model_builders.py qlora_llama3_2_3b)
  const quantize =
    m?.[1] === 'qlora' ||
    (model.quantize_base !== undefined &&
      model.quantize_base !== null &&
      bool(model.quantize_base, 'model.quantize_base'));
  const method = !m ? 'full' : quantize ? 'qlora' : 'lora';
  d.set('training.finetune.method', method);
  for (const [k, v] of Object.entries(model)) {
    if (k === '_component_' || v === null) continue;
    const path = `model.${k}`;
    if (!m) {
      d.skip(path, 'an argument of the model builder llmem does not read; the preset shape is used; not applied');
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
  const attn = model.lora_attn_modules;
  if (!Array.isArray(attn))
    throw new ImportError(
      'model.lora_attn_modules',
      'model.lora_attn_modules: must be a list of q_proj, k_proj, v_proj, output_proj',
    );
  const set = new Set<string>();
  for (const n of attn) {
    const t = ATTN_TARGETS[String(n)];
    if (!t)
      throw new ImportError(
        'model.lora_attn_modules',
        `model.lora_attn_modules: "${String(n)}" is not one of q_proj, k_proj, v_proj, output_proj`,
      );
    set.add(t);
  }
  const mlp =
    model.apply_lora_to_mlp !== undefined &&
    model.apply_lora_to_mlp !== null &&
    bool(model.apply_lora_to_mlp, 'model.apply_lora_to_mlp');
  if (mlp) for (const t of ['gate', 'up', 'down']) set.add(t);
  if (!set.size)
    throw new ImportError(
      'model.lora_attn_modules',
      'model.lora_attn_modules: no LoRA target (an empty list and no MLP)',
    );
  d.set(
    'training.finetune.lora_targets',
    ORDER.filter((t) => set.has(t)),
  );
  if (model.lora_rank === undefined || model.lora_rank === null) {
    d.set('training.finetune.lora_rank', 8);
    d.note('model.lora_rank absent: 8 (the lora_ builders default)');
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
      if (m === 'full' || (m === 'selective' && (opt === 1 || opt === '1'))) {
        d.set('training.recompute', 'full');
        ac = true;
      } else if (m === 'selective' && opt === 'op') {
        d.set('training.recompute', 'per_op');
        d.note("ac_mode selective, ac_option op: torchtitan's per-op selective checkpointing");
      } else if (m === 'selective')
        d.skip(
          'ac_mode',
          `selective, ac_option ${String(opt)}: checkpointing every k-th layer is not modelled; not applied`,
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
  if (tp > 1 && applyDegree(d, 'tensor_parallel_dim', 'parallel.tp', tp))
    d.note(
      `tensor_parallel_dim ${tp}: parallel.tp with sequence parallel norms (models/llama3/_parallelism.py base_llama_tp_plan SequenceParallel)`,
    );
  const cpApplied = cp > 1 && applyDegree(d, 'context_parallel_dim', 'parallel.cp', cp) ? cp : 1;
  if (replicate > 1) {
    d.set('parallel.fsdp_strategy', 'hybrid_shard');
    d.set('parallel.fsdp_shard_size', shard * cpApplied);
    d.note(
      `data_parallel_replicate_dim ${replicate}: FSDP shards over dp_shard x cp = ${shard * cpApplied} GPUs and replicates over ${replicate}`,
    );
  }
}
