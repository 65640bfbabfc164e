// Hugging Face config.json -> config-v1 "model" (offline: only the file is read).
// Field names and the defaults used when a key is absent are those of the
// transformers configuration classes (src/transformers/models/<type>/configuration_<type>.py,
// https://huggingface.co/docs/transformers/main_classes/configuration); the module
// layout each maps to is the matching modeling_<type>.py. Every key that changes
// memory and that config v1 cannot express becomes a warning; keys not recognised
// are listed in `unknown`.
import type { Config, ConfigError, Json } from '../../../wasm/llmem.js';
import { guard, ImportError, isObject, type Obj } from './common.js';
import { HF_DEFAULTS as DEFAULTS } from './hf-defaults.js';
import { layerKinds, shortestPattern } from './hf-layers.js';
import { visionTower } from './hf-vision.js';

export interface HfImport {
  config: Config;
  /** memory-relevant fields config v1 cannot express (never silent) */
  warnings: string[];
  /** keys of config.json that this importer does not know */
  unknown: string[];
  /** what was assumed (defaults of the transformers config class, derived values) */
  notes: string[];
}

// Defaults applied without a note (flags whose default is the common case, activations).
const QUIET_DEFAULTS = new Set([
  'attention_bias',
  'mlp_bias',
  'use_sliding_window',
  'mlp_only_layers',
  'alibi',
  'bias',
  'new_decoder_architecture',
  'parallel_attn',
  'multi_query',
  'hidden_act',
  'hidden_activation',
  'activation_function',
  'rmsnorm',
  'post_layer_norm',
  'apply_residual_connection_post_layernorm',
  'quantization_bit',
  'pre_seq_len',
  'prefix_projection',
]);
const GATED = new Set([
  'llama',
  'qwen3_next',
  'qwen3_5_text',
  'llama4_text',
  'mistral',
  'mixtral',
  'qwen2',
  'qwen2_moe',
  'qwen3',
  'qwen3_moe',
  'deepseek_v3',
  'gemma',
  'gemma2',
  'gemma3_text',
  'phi3',
  'olmo2',
  'olmo3',
  'gpt_oss',
  'chatglm',
  'glm4_moe',
  // GraniteMoeHybridMLP / GraniteMoeHybridMoE (input_linear to 2 x width, chunked: SiLU(a) * b), Ernie4_5_MoeMLP,
  // SeedOssMLP: gate, up and down projections
  'granitemoehybrid',
  'ernie4_5_moe',
  'seed_oss',
]);
// Families whose Mamba-2 layers model.ssm describes (hf-layers.ts ssmDims): their SSM keys are read, not warned about
const SSM_FAMILIES = new Set(['nemotron_h', 'granitemoehybrid', 'mamba2']);
const LAYERNORM = new Set(['gpt2', 'gpt_neox', 'falcon', 'bert', 'starcoder2']);

// Read and judged irrelevant to training memory (tokens ids, init, rope
// frequencies and scaling, norm epsilons, routing math, bookkeeping).
const IRRELEVANT = new Set([
  // multimodal token ids and quantisation-tool flags
  'vision_start_token_id',
  'vision_end_token_id',
  'vision_token_id',
  'image_token_id',
  'video_token_id',
  'for_llm_compressor',
  'architectures',
  'model_type',
  '_name_or_path',
  'auto_map',
  'bos_token_id',
  'eos_token_id',
  'pad_token_id',
  'sep_token_id',
  'decoder_start_token_id',
  'initializer_range',
  'initializer_factor',
  'rms_norm_eps',
  'layer_norm_eps',
  'layer_norm_epsilon',
  'norm_eps',
  'rope_theta',
  'rope_scaling',
  'rope_parameters',
  'rope_local_base_freq',
  'rotary_emb_base',
  'rotary_pct',
  'partial_rotary_factor',
  'rope_interleave',
  'torch_dtype',
  'dtype',
  'transformers_version',
  'use_cache',
  'pretraining_tp',
  'tokenizer_class',
  'max_window_layers',
  'router_aux_loss_coef',
  'output_router_logits',
  'router_jitter_noise',
  'norm_topk_prob',
  'scoring_func',
  'topk_method',
  'n_group',
  'topk_group',
  'routed_scaling_factor',
  'aux_loss_alpha',
  'seq_aux',
  'ep_size',
  'cache_implementation',
  'query_pre_attn_scalar',
  'initial_context_length',
  'swiglu_limit',
  'original_max_position_embeddings',
  'n_ctx',
  'summary_type',
  'summary_use_proj',
  'summary_activation',
  'summary_proj_to_labels',
  'summary_first_dropout',
  'task_specific_params',
  'scale_attn_weights',
  'scale_attn_by_inverse_layer_idx',
  'reorder_and_upcast_attn',
  'use_parallel_residual',
  'problem_type',
  'label2id',
  'gradient_checkpointing',
  'use_mrope',
  'is_decoder',
  'add_cross_attention',
  'output_attentions',
  'output_hidden_states',
  'return_dict',
  'torchscript',
  'apply_residual_connection_post_layernorm',
  'experts_per_token',
  'use_sliding_window',
  'num_ln_in_parallel_attn',
  'hidden_act',
  'hidden_activation',
  'activation_function',
  'rms_norm_eps',
  'embedding_multiplier',
  'logits_scaling',
  'classifier_dropout',
  'layer_norm_type',
  'n_special',
  'predict_special_tokens',
  'output_past',
  'norm_epsilon',
  'layernorm_epsilon',
  'bias_dropout_fusion',
  'apply_query_key_layer_scaling',
  'attention_softmax_in_fp32',
  'fp32_residual_connection',
  'rope_ratio',
  'original_rope',
  // Qwen3.5 text_config keys no transformers class reads: the recurrent state's dtype in serving engines
  // (the chunked delta rule runs in fp32 either way) and the name of the output gate's activation
  'mamba_ssm_dtype',
  'output_gate_type',
]);

const DROPOUT_KEYS = [
  'attention_dropout',
  'hidden_dropout',
  'resid_pdrop',
  'embd_pdrop',
  'attn_pdrop',
  'hidden_dropout_prob',
  'attention_probs_dropout_prob',
  'embd_dropout',
  'dropout',
  'residual_dropout',
  'embedding_dropout',
  'dropout_rate',
];
const MULTIMODAL_KEYS = [
  'vision_config',
  'audio_config',
  'vision_tower',
  'mm_vision_tower',
  'img_processor',
  'embd_layer',
  'speech_config',
];
const SSM_KEYS = [
  'ssm_cfg',
  'mamba_d_state',
  'mamba_expand',
  'state_size',
  'layers_block_type',
  'hybrid_override_pattern',
  'attn_layer_period',
  'mamba_n_heads',
  'linear_attn_config',
  'ssm_state_size',
];
// Keys of a multimodal wrapper around text_config that carry no text-model memory.
const WRAPPER_KEYS = new Set([
  'vocab_size', // LLaVA repeats text_config's
  'boi_token_index',
  'eoi_token_index',
  'image_token_index',
  'image_token_id',
  'mm_tokens_per_image',
  'projector_hidden_act',
  'multimodal_projector_bias',
  'spatial_merge_size',
  'vision_feature_layer',
  'vision_feature_select_strategy',
  'text_config',
  'initializer_range',
  'ignore_index',
  'language_model_only', // Qwen3.5: a serving switch (skip the vision tower), not a shape
]);

/** Import a transformers config.json; {error} names the key when the file is malformed. */
export function importHfConfig(json: unknown): HfImport | { error: ConfigError } {
  return guard(() => run(json));
}

function run(json: unknown): HfImport {
  if (!isObject(json)) throw new ImportError('', 'config.json must be a JSON object');
  const warnings: string[] = [],
    unknown: string[] = [],
    notes: string[] = [];
  let cfg: Obj = json;
  let type = typeof json.model_type === 'string' ? json.model_type : undefined;
  // a vision tower beside the text decoder (a wrapper's vision_config, or one at the top level)
  const vision = visionTower(json, type, notes);

  // Multimodal wrappers (gemma3, llava, mistral3, ...): the text decoder is text_config.
  if (isObject(json.text_config)) {
    cfg = { ...json.text_config };
    if (cfg.tie_word_embeddings === undefined && typeof json.tie_word_embeddings === 'boolean')
      cfg.tie_word_embeddings = json.tie_word_embeddings;
    const inner = typeof cfg.model_type === 'string' ? cfg.model_type : undefined;
    notes.push(
      `text_config (${inner ?? 'no model_type'}) imported as the model; the ${type ?? 'wrapper'} wrapper is multimodal`,
    );
    type = inner ?? (type === 'gemma3' ? 'gemma3_text' : type);
    for (const k of Object.keys(json)) {
      if (MULTIMODAL_KEYS.includes(k)) continue;
      if (!IRRELEVANT.has(k) && !WRAPPER_KEYS.has(k) && k !== 'tie_word_embeddings') unknown.push(k);
    }
    for (const k of MULTIMODAL_KEYS)
      if (json[k] !== undefined && json[k] !== null && !(k === 'vision_config' && vision !== null))
        warnings.push(multimodalWarning(k, json[k]));
  }
  if (typeof vision === 'string') warnings.push(vision);
  if (type === 'gemma3') type = 'gemma3_text';
  if (type === undefined)
    throw new ImportError('model_type', 'model_type: missing; config.json must name its model_type');
  refuseUnmodelled(type, cfg);
  const family = familyOf(type, json.architectures, notes);
  const defaults = DEFAULTS[type] ?? DEFAULTS[family] ?? {};

  const used = new Set<string>();
  /** The value of the first key present, else the config class default; undefined if neither. */
  const get = (...keys: string[]): Json | undefined => {
    for (const k of keys) {
      used.add(k);
      if (cfg[k] !== undefined) return cfg[k];
    }
    for (const k of keys) {
      if (defaults[k] !== undefined) {
        if (!QUIET_DEFAULTS.has(k))
          notes.push(`${k}: not in config.json; ${type} default ${JSON.stringify(defaults[k])}`);
        return defaults[k];
      }
    }
    return undefined;
  };
  const int = (keys: string[], required: boolean): number | undefined => {
    const v = get(...keys);
    if (v === undefined || v === null) {
      if (required) throw new ImportError(keys[0], `${keys[0]}: missing (needed for the model shape)`);
      return undefined;
    }
    // below 2^53: sizes derived from it (4 x hidden_size) stay finite
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      throw new ImportError(
        keys.find((k) => cfg[k] !== undefined) ?? keys[0],
        `${keys[0]}: must be a whole number below 2^53, not ${JSON.stringify(v)}`,
      );
    return v;
  };
  const flag = (key: string): boolean | undefined => {
    const v = get(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw new ImportError(key, `${key}: must be true or false, not ${JSON.stringify(v)}`);
    return v;
  };

  const hidden = int(['hidden_size', 'n_embd', 'd_model'], true)!;
  const layers = int(['num_hidden_layers', 'n_layer', 'num_layers'], true)!;
  const heads = int(['num_attention_heads', 'n_head', 'num_heads'], true)!;
  const model: Config = {};
  const name = json._name_or_path;
  if (typeof name === 'string' && name) model.name = name;
  model.layers = layers;
  model.hidden = hidden;
  model.heads = heads;

  // Attention heads: falcon's multi_query / num_kv_heads (configuration_falcon.py).
  let kv = int(['num_key_value_heads', 'num_kv_heads', 'n_head_kv'], false);
  if (family === 'falcon') {
    const newArch = flag('new_decoder_architecture') ?? false;
    kv = newArch ? (int(['num_kv_heads'], false) ?? heads) : (flag('multi_query') ?? true) ? 1 : heads;
  }
  // ChatGLM (configuration_chatglm.py): multi_query_attention groups K/V into multi_query_group_num heads
  if (family === 'chatglm') {
    if (flag('multi_query_attention') ?? false) kv = int(['multi_query_group_num'], true)!;
    else {
      used.add('multi_query_group_num'); // read only with multi_query_attention
      kv = heads;
    }
  }
  model.kv_heads = kv ?? heads;
  const mla = family === 'deepseek_v3' || (cfg.kv_lora_rank !== undefined && cfg.kv_lora_rank !== null);
  let headDim = int(family === 'chatglm' ? ['kv_channels'] : family === 't5' ? ['d_kv'] : ['head_dim'], false);
  if (mla) headDim = int(['v_head_dim'], true);
  if (headDim === undefined) {
    if (hidden % heads !== 0)
      throw new ImportError(
        'num_attention_heads',
        `num_attention_heads: ${heads} does not divide hidden_size ${hidden} and there is no head_dim`,
      );
    headDim = hidden / heads;
  }
  model.head_dim = headDim;

  // MLP width: n_inner / ffn_hidden_size default to 4*hidden (GPT-2, Falcon). GraniteMoeHybridMLP (every layer's
  // shared MLP, the whole MLP of a model without experts) is shared_intermediate_size wide; intermediate_size is
  // its experts' width (modeling_granitemoehybrid.py 1c0ff25).
  const ffn = int(
    family === 'granitemoehybrid'
      ? ['shared_intermediate_size']
      : ['intermediate_size', 'n_inner', 'ffn_hidden_size', 'ffn_dim', 'd_ff'],
    false,
  );
  if (family === 'mamba2') {
    // Mamba2Block (modeling_mamba2.py 4711664): an RMSNorm and the Mamba2Mixer, no attention and no MLP
    get('intermediate_size'); // expand * hidden_size, the mixer's width (model.ssm)
    notes.push(
      'mamba2: every layer is a Mamba-2 mixer without attention or MLP; heads, head_dim and ffn_hidden are nominal',
    );
  } else if (ffn === undefined)
    notes.push(`no intermediate_size: ffn_hidden = 4 * hidden = ${4 * hidden} (${type} default)`);
  model.ffn_hidden = ffn ?? 4 * hidden;
  const act = get('hidden_act', 'hidden_activation', 'activation_function', 'mlp_hidden_act');
  if (family === 't5') t5Stack(get, int, model);
  if (family === 't5') model.mlp = String(get('feed_forward_proj') ?? 'relu').startsWith('gated') ? 'gated' : 'plain';
  else if (GATED.has(family)) model.mlp = 'gated';
  else if (family !== 'generic') model.mlp = 'plain';
  else {
    const gated = typeof act !== 'string' || /silu|swish|swiglu|geglu/.test(act);
    model.mlp = gated ? 'gated' : 'plain';
    notes.push(`mlp "${model.mlp}" inferred from hidden_act ${JSON.stringify(act ?? null)}`);
  }
  // ChatGLMConfig sets vocab_size = padded_vocab_size
  model.vocab = int(
    family === 'chatglm' ? ['padded_vocab_size', 'vocab_size'] : ['vocab_size', 'n_vocab', 'padded_vocab_size'],
    true,
  )!;
  model.vocab_multiple = 1;
  const tied = flag('tie_word_embeddings');
  if (family === 'chatglm') {
    // modeling_chatglm.py: output_layer is its own Linear, never tied to the embedding
    if (tied) notes.push('tie_word_embeddings true: ChatGLM keeps output_layer apart from the embedding (untied)');
    model.tied_embeddings = false;
  } else {
    if (tied === undefined) notes.push('tie_word_embeddings absent: untied input and output embeddings assumed');
    model.tied_embeddings = tied ?? false;
  }
  model.head = 'lm';
  const hasRms = cfg.rms_norm_eps !== undefined;
  model.norm =
    LAYERNORM.has(family) ||
    (family === 'chatglm' && flag('rmsnorm') === false) ||
    (family === 'generic' && !hasRms && (cfg.layer_norm_eps !== undefined || cfg.layer_norm_epsilon !== undefined))
      ? 'layernorm'
      : 'rmsnorm';

  // Biases. config v1: "bias" = every attention and MLP linear, "qkv_bias" = q/k/v only,
  // "o_bias" / "mlp_bias" the attention output / the MLP linears (null: as "bias").
  const attnBias = flag('attention_bias');
  const mlpBias = flag('mlp_bias');
  let bias = false,
    qkvBias = false;
  if (family === 'gpt2' || family === 'bert') bias = true;
  else if (family === 'falcon') bias = flag('bias') ?? false;
  else if (family === 'starcoder2') bias = flag('use_bias') ?? true;
  else if (family === 'chatglm') {
    // SelfAttention.query_key_value: bias=add_bias_linear or add_qkv_bias; dense and MLP: add_bias_linear
    const qkv = flag('add_qkv_bias') ?? false;
    bias = flag('add_bias_linear') ?? false;
    qkvBias = !bias && qkv;
  } else if (family === 'gpt_neox' || family === 'gpt_oss') bias = attnBias ?? true;
  else if (family === 'qwen2')
    qkvBias = true; // modeling_qwen2.py: q/k/v Linear(bias=True), o_proj bias=False
  else if (family === 'qwen2_moe')
    qkvBias = flag('qkv_bias') ?? true; // Qwen2MoeConfig.qkv_bias
  else if (family === 'glm4_moe')
    qkvBias = attnBias ?? false; // modeling_glm4_moe.py: o_proj bias=False
  else if (family === 'seed_oss') {
    // modular_seed_oss.py (transformers 052b1dc) SeedOssAttention: q/k/v bias=attention_bias,
    // o_proj bias=attention_out_bias; SeedOssMLP bias=mlp_bias
    qkvBias = attnBias ?? true;
    if (flag('attention_out_bias')) model.o_bias = true;
    if (mlpBias) model.mlp_bias = true;
  } else if (family === 'ernie4_5_moe') {
    // modular_ernie4_5_moe.py (transformers 01187e2): q/k/v/o, every MLP and lm_head Linear(bias=use_bias)
    bias = flag('use_bias') ?? false;
    if (bias) model.lm_head_bias = true;
  } else if (attnBias && mlpBias) bias = true;
  else if (attnBias) {
    // modeling_llama.py LlamaAttention: q/k/v/o Linear(bias=attention_bias); LlamaMLP: bias=mlp_bias
    qkvBias = true;
    model.o_bias = true;
  } else if (mlpBias) model.mlp_bias = true;
  model.bias = bias;
  if (qkvBias) model.qkv_bias = true;

  // Positions: learned tables for GPT-2 and BERT, rotary elsewhere (ALiBi has no parameters either).
  const learned = family === 'gpt2' || family === 'bert';
  model.position = learned ? 'learned' : 'rope';
  const maxPos = int(['max_position_embeddings', 'n_positions', 'max_seq_len', 'seq_length'], false);
  if (maxPos !== undefined) model.max_positions = maxPos;
  else notes.push('no max_position_embeddings: llmem default kept (rotary positions have no parameters)');
  if (family === 'granitemoehybrid') {
    // GraniteMoeHybridModel builds rotary embeddings only for position_embedding_type "rope" (Granite 4.0: "nope");
    // neither has parameters. The muP multipliers scale activations, not shapes.
    const pet = get('position_embedding_type');
    if (pet !== 'rope') notes.push(`position_embedding_type ${JSON.stringify(pet ?? null)}: no positional encoding`);
    for (const k of ['residual_multiplier', 'attention_multiplier', 'normalization_function']) get(k);
  }
  if (family === 'falcon' && flag('alibi'))
    warnings.push(
      'alibi true: ALiBi positions are not modelled (no parameters; HF Falcon uses eager attention with ALiBi, keeping s*s scores; set training.attention "eager")',
    );
  if (family === 'bert') {
    const pet = get('position_embedding_type');
    if (pet !== undefined && pet !== 'absolute')
      warnings.push(`position_embedding_type "${String(pet)}": relative position embeddings are not modelled`);
  }

  // Norms and special layers per family (modeling_<type>.py decoder layers).
  const qwenNext = family === 'qwen3_next' || family === 'qwen3_5_text';
  if (family === 'qwen3' || family === 'qwen3_moe' || family === 'gemma3_text' || qwenNext) model.qk_norm = 'head';
  // Qwen3NextAttention / Qwen3_5Attention: q_proj also outputs the sigmoid gate of the attention output
  // (always: the classes read no attn_output_gate key)
  if (qwenNext) {
    model.attn_output_gate = true;
    if (flag('attn_output_gate') === false)
      notes.push('attn_output_gate false: transformers builds the gate regardless (q_proj of 2 x heads x head_dim)');
  }
  // Llama4TextL2Norm on q and k (use_qk_norm) has no weight: no parameters
  if (family === 'llama4_text') get('use_qk_norm');
  if (family === 'olmo2' || family === 'olmo3') model.qk_norm = 'full';
  // Glm4MoeAttention: q_norm / k_norm over head_dim when use_qk_norm
  if (family === 'glm4_moe' && flag('use_qk_norm')) model.qk_norm = 'head';
  if (family === 'gemma2' || family === 'gemma3_text') model.norms_per_layer = 4;
  if (family === 'falcon') {
    const newArch = flag('new_decoder_architecture') ?? false;
    const parallel = flag('parallel_attn') ?? true;
    if (!newArch && parallel) model.norms_per_layer = 1;
    if (newArch && cfg.num_ln_in_parallel_attn === 1) model.norms_per_layer = 1;
    // FalconDecoderLayer: attention and MLP both read the layer input (one or two norms of it)
    if (newArch || parallel) model.parallel_block = true;
  }
  // GPTNeoXLayer with use_parallel_residual (default true): x + attn(ln1(x)) + mlp(ln2(x))
  if (family === 'gpt_neox' && (flag('use_parallel_residual') ?? true)) model.parallel_block = true;
  if (family === 'gpt_oss') model.attn_sinks = true;
  if (family === 'chatglm') chatglmExtras(get, int, flag, model, warnings);
  if (family === 'bert') {
    model.head = 'classification';
    const labels = isObject(cfg.id2label) ? Object.keys(cfg.id2label).length : (int(['num_labels'], false) ?? 2);
    used.add('id2label');
    model.num_labels = labels;
    model.type_vocab = int(['type_vocab_size'], false) ?? 2;
    model.embedding_norm = true;
    model.final_norm = false;
    const arch = Array.isArray(json.architectures) ? json.architectures[0] : undefined;
    warnings.push(
      `BERT imported with a sequence-classification head (pooler + ${labels}-label classifier)${arch && arch !== 'BertForSequenceClassification' ? `; architectures says ${String(arch)}, whose head is not modelled` : ''}`,
    );
  }
  const lmHeadBias = flag('lm_head_bias');
  if (lmHeadBias) model.lm_head_bias = true;

  // Per-layer kinds: sliding / chunked / linear-attention / Mamba-2 layers and per-layer MLPs.
  layerKinds({ family, layers, get, int, flag, model, warnings, notes });

  // Mixture of experts.
  model.moe = moe(family, get, int, flag, model, warnings, notes);

  // Multi-latent attention (modeling_deepseek_v3.py DeepseekV3Attention).
  if (mla) {
    const q = get('q_lora_rank');
    if (q !== null && q !== undefined && (typeof q !== 'number' || !Number.isInteger(q) || q < 0))
      throw new ImportError('q_lora_rank', `q_lora_rank: must be a whole number or null, not ${JSON.stringify(q)}`);
    model.mla = {
      q_lora_rank: (q as number | null | undefined) ?? null,
      kv_lora_rank: int(['kv_lora_rank'], true)!,
      qk_nope_head_dim: int(['qk_nope_head_dim'], true)!,
      qk_rope_head_dim: int(['qk_rope_head_dim'], true)!,
      v_head_dim: int(['v_head_dim'], true)!,
    };
    notes.push('MLA: heads/kv_heads/head_dim are nominal (head_dim = v_head_dim); model.mla defines the attention');
  } else model.mla = null;
  // DeepSeek-V3 / GLM-4.5 num_nextn_predict_layers, Qwen3.5 mtp_num_hidden_layers (mtp.* weights)
  const mtpKey = cfg.mtp_num_hidden_layers !== undefined ? 'mtp_num_hidden_layers' : 'num_nextn_predict_layers';
  const mtp = int([mtpKey], false);
  if (mtp)
    warnings.push(
      `${mtpKey} ${mtp}: the multi-token-prediction module is not counted (transformers ignores its weights); set model.mtp_layers ${mtp} with parallel.engine "megatron" to train it as Megatron-LM does`,
    );
  if (flag('mtp_use_dedicated_embeddings'))
    warnings.push(
      'mtp_use_dedicated_embeddings true: the MTP module has its own embedding table, which model.mtp_layers does not count',
    );

  used.add('sliding_window_pattern');
  // tanh soft-capping (Gemma 2): what it keeps for the backward is modelled; eager attention is what
  // transformers recommends for training these models (kernels without soft-capping cannot take them)
  const softcap = get('attn_logit_softcapping');
  if (typeof softcap === 'number' && softcap > 0) {
    model.attn_logit_softcap = softcap;
    notes.push(
      `attn_logit_softcapping ${softcap}: kept by eager attention (set training.attention "eager" when training runs it, as transformers recommends for Gemma 2)`,
    );
  }
  const finalCap = get('final_logit_softcapping');
  if (typeof finalCap === 'number' && finalCap > 0) model.final_logit_softcap = finalCap;
  for (const k of MULTIMODAL_KEYS) {
    used.add(k);
    if (cfg[k] !== undefined && cfg[k] !== null && !(k === 'vision_config' && vision !== null))
      warnings.push(multimodalWarning(k, cfg[k]));
  }
  if (isObject(vision)) model.vision = vision;
  if (family === 'mamba2') mamba2Extras(get, flag, notes);
  if (type === 'deepseek_v32') deepseekIndexer(int, model, warnings);
  for (const k of SSM_KEYS) {
    used.add(k);
    if (!SSM_FAMILIES.has(family) && cfg[k] !== undefined && cfg[k] !== null)
      warnings.push(
        `${k}: state-space / linear-attention layers are not modelled; every layer is counted as attention + MLP`,
      );
  }
  const quant = get('quantization_config');
  if (isObject(quant))
    warnings.push(
      `quantization_config (${String(quant.quant_method ?? quant.fmt ?? 'quantized')}): the released weights are quantized; llmem counts parameters in training.dtype (use training.finetune.method "qlora" for 4-bit bases)`,
    );

  // Dropout in the config is applied during training (saves masks).
  const drops = DROPOUT_KEYS.map((k) => [k, get(k)] as const).filter(([, v]) => typeof v === 'number' && v > 0) as [
    string,
    number,
  ][];
  const config: Config = { model };
  if (drops.length) {
    const p = Math.max(...drops.map(([, v]) => v));
    config.training = { dropout: p };
    notes.push(
      `training.dropout ${p} from ${drops.map(([k, v]) => `${k} ${v}`).join(', ')} (transformers applies it in training)`,
    );
  }

  for (const k of Object.keys(cfg))
    if (!used.has(k) && !IRRELEVANT.has(k) && !DROPOUT_KEYS.includes(k)) unknown.push(k);
  return { config, warnings, unknown, notes };
}

// Modeling classes of the mapped types, for a remote-code model_type (e.g. Kimi K2's "kimi_k2")
// whose config.json names one of them in architectures.
const FAMILY_OF_ARCHITECTURE: Record<string, string> = {
  LlamaForCausalLM: 'llama',
  MistralForCausalLM: 'mistral',
  MixtralForCausalLM: 'mixtral',
  Qwen2ForCausalLM: 'qwen2',
  // Qwen2.5-VL's language model is Qwen2's (modeling_qwen2_5_vl.py Qwen2_5_VLTextModel: biased q, k, v)
  Qwen2_5_VLForConditionalGeneration: 'qwen2',
  Qwen3ForCausalLM: 'qwen3',
  Qwen3MoeForCausalLM: 'qwen3_moe',
  DeepseekV3ForCausalLM: 'deepseek_v3',
  Glm4MoeForCausalLM: 'glm4_moe',
};

// Text models built as another family's decoder (same keys, same modules), with their own class defaults
// (hf-defaults.ts): Qwen3-VL's Qwen3VLTextModel is Qwen3's decoder with q/k norms (its interleaved MRoPE
// and the deepstack additions to the first layers' hidden states have no parameters).
const DECODER_OF: Record<string, string> = {
  qwen3_vl_text: 'qwen3',
  // modeling_qwen3_vl_moe.py (transformers ede92a8): Qwen3VLMoeTextDecoderLayer(Qwen3MoeDecoderLayer), q/k norms,
  // experts where (i + 1) % decoder_sparse_step == 0 outside mlp_only_layers
  qwen3_vl_moe_text: 'qwen3_moe',
  // modular_deepseek_v32.py (transformers 01f8fa5): DeepSeek-V3's MLA, MoE (router bias) and dense layers, plus a
  // lightning indexer in every attention (deepseekIndexer: not in config v1)
  deepseek_v32: 'deepseek_v3',
};

// model_types whose layers no config v1 kind describes: refused with the reason rather than counted as another model.
//   falcon_h1 modular_falcon_h1.py (transformers 00511f5) FalconH1DecoderLayer: attention and a Mamba-2 mixer in
//     parallel on the same input, then the MLP; lfm2 / lfm2_moe modeling_lfm2.py (transformers 1d6b6ca)
//     Lfm2ShortConv "conv" layers (configuration_lfm2.py 05cd1ec: layer_types, else "full_attention" at
//     full_attn_idxs, every layer without either); mamba / falcon_mamba modeling_mamba.py (transformers 1160c0f)
//     MambaMixer (Mamba-1: x_proj, dt_proj, an A_log of d_inner x state_size), not the Mamba-2 mixer of model.ssm.
function refuseUnmodelled(type: string, cfg: Obj): void {
  const refuse = (key: string, why: string) => {
    throw new ImportError(key, `${key}: ${why}; not imported rather than counted as another model`);
  };
  if (type === 'falcon_h1')
    refuse(
      'model_type',
      'falcon_h1 runs attention and a Mamba-2 mixer in parallel in every layer (FalconH1DecoderLayer), and config v1 gives each layer one mixer (model.layer_types)',
    );
  if (type === 'mamba' || type === 'falcon_mamba')
    refuse(
      'model_type',
      `${type} layers are Mamba-1 mixers (MambaMixer: x_proj, dt_proj, a d_inner x state_size A), which config v1 does not model (its ssm layers are Mamba-2, model.ssm)`,
    );
  if (type === 'lfm2' || type === 'lfm2_moe') {
    const listed = Array.isArray(cfg.layer_types) ? cfg.layer_types : undefined;
    const idxs = Array.isArray(cfg.full_attn_idxs) ? cfg.full_attn_idxs : undefined;
    const layers = typeof cfg.num_hidden_layers === 'number' ? cfg.num_hidden_layers : 0;
    const conv = listed
      ? listed.filter((t) => t === 'conv').length
      : idxs
        ? Array.from({ length: layers }, (_, i) => i).filter((i) => !idxs.includes(i)).length
        : 0;
    refuse(
      listed ? 'layer_types' : 'model_type',
      conv > 0
        ? `${type}'s ${conv} "conv" layers are LFM2's gated short convolution (Lfm2ShortConv: in_proj to B, C and x, a depthwise causal conv of conv_L_cache taps, out_proj), which no config v1 mixer describes (attention, Gated DeltaNet "linear", Mamba-2 "ssm")`
        : `${type} has no mapping (its "conv" layers have no config v1 mixer, and Lfm2MLP resizes intermediate_size by block_auto_adjust_ff_dim)`,
    );
  }
}

/** The mapping to read a model_type with: its own, that of its modeling class, or the generic one. */
function familyOf(type: string, architectures: Json | undefined, notes: string[]): string {
  const decoder = DECODER_OF[type];
  if (decoder) {
    const same = type === 'deepseek_v32' ? 'its decoder with an indexer beside the attention' : 'the same decoder';
    notes.push(`model_type "${type}" read as ${decoder} (${same}; ${type} class defaults)`);
    return decoder;
  }
  if (type in DEFAULTS) return type;
  const arch = Array.isArray(architectures) && typeof architectures[0] === 'string' ? architectures[0] : undefined;
  const byArch = arch ? FAMILY_OF_ARCHITECTURE[arch] : undefined;
  if (byArch) {
    notes.push(`model_type "${type}" read as ${byArch} (architectures: ${arch})`);
    return byArch;
  }
  notes.push(`model_type "${type}" has no dedicated mapping: read as a llama-like decoder (generic keys)`);
  return 'generic';
}

function multimodalWarning(key: string, v: Json): string {
  const shape = isObject(v)
    ? [
        v.model_type,
        v.num_hidden_layers !== undefined ? `${String(v.num_hidden_layers)} layers` : undefined,
        v.hidden_size !== undefined ? `hidden ${String(v.hidden_size)}` : undefined,
      ]
        .filter(Boolean)
        .join(', ')
    : String(v);
  return `${key}${shape ? ` (${shape})` : ''}: the vision/audio encoder and its projector are not modelled; llmem counts the text decoder only`;
}

type Get = (...keys: string[]) => Json | undefined;

/** ChatGLM keys beyond the shape: the final norm, quantized weights, P-tuning prefixes. */
function chatglmExtras(get: Get, int: Int, flag: Flag, model: Config, warnings: string[]): void {
  if (flag('post_layer_norm') === false) model.final_norm = false;
  get('apply_residual_connection_post_layernorm');
  const bits = int(['quantization_bit'], false);
  if (bits)
    warnings.push(
      `quantization_bit ${bits}: the released weights are quantized; llmem counts parameters in training.dtype (use training.finetune.method "qlora" for 4-bit bases)`,
    );
  const prefix = int(['pre_seq_len'], false);
  get('prefix_projection');
  if (prefix)
    warnings.push(
      `pre_seq_len ${prefix}: the P-tuning v2 prefix encoder is not modelled; its parameters are not counted`,
    );
}

type Int = (keys: string[], required: boolean) => number | undefined;

/** Mamba2Config keys without a shape (modeling_mamba2.py 4711664): the time-step init and clamp, the init rule;
 * Mamba2Mixer builds its gated RMSNorm whatever rms_norm says and calls the scan with norm_before_gate False. */
function mamba2Extras(get: Get, flag: Flag, notes: string[]): void {
  for (const k of [
    'time_step_rank',
    'time_step_min',
    'time_step_max',
    'time_step_floor',
    'time_step_limit',
    'time_step_init_scheme',
    'time_step_scale',
    'norm_before_gate',
  ])
    get(k);
  if (flag('rms_norm') === false)
    notes.push('rms_norm false: transformers Mamba2Mixer builds its gated RMSNorm regardless (counted)');
}

/** DeepseekV32Indexer (modular_deepseek_v32.py 01f8fa5), in every layer's attention: wq_b (q_lora_rank to
 * index_n_heads x index_head_dim), wk (hidden to index_head_dim), k_norm (a LayerNorm: weight and bias),
 * weights_proj (hidden to index_n_heads); it runs under no_grad and keeps index_topk keys per query. */
function deepseekIndexer(int: Int, model: Config, warnings: string[]): void {
  const heads = int(['index_n_heads'], true)!;
  const dim = int(['index_head_dim'], true)!;
  const topk = int(['index_topk'], true)!;
  const h = model.hidden as number;
  const q = ((model.mla as Config | null)?.q_lora_rank as number | null) ?? h;
  const perLayer = q * heads * dim + h * dim + 2 * dim + h * heads;
  const total = perLayer * (model.layers as number);
  warnings.push(
    `index_n_heads ${heads}, index_head_dim ${dim}, index_topk ${topk}: the DeepSeek Sparse Attention lightning indexer is not modelled: its ${total.toLocaleString('en-US')} parameters (${perLayer.toLocaleString('en-US')} per layer, outside the total; transformers runs it under no_grad) and its scores of each query over every key are not counted; attention is counted as MLA over every key (the top-${topk} selection only masks it)`,
  );
}

/** T5 (configuration_t5.py T5Config, modeling_t5.py): num_layers encoder layers and num_decoder_layers
 * (default num_layers) decoder layers, each stack with its relative attention bias and final norm. */
function t5Stack(get: Get, int: Int, model: Config): void {
  const encoder = model.layers as number;
  model.encoder_layers = encoder;
  model.layers = int(['num_decoder_layers'], false) ?? encoder;
  model.relative_attention_buckets = int(['relative_attention_num_buckets'], false) ?? 32;
  get('relative_attention_max_distance', 'is_encoder_decoder');
}
type Flag = (key: string) => boolean | undefined;

/** config v1 model.moe from the MoE keys of each family, or null for a dense model. */
function moe(family: string, get: Get, int: Int, flag: Flag, model: Config, warnings: string[], notes: string[]): Json {
  const base = {
    experts: 0,
    top_k: 1,
    expert_ffn_hidden: model.ffn_hidden as number,
    shared_experts: 0,
    shared_expert_ffn_hidden: 0,
    dense_layers: 0,
    layer_freq: 1,
    capacity_factor: null,
  } as Config;
  switch (family) {
    case 'mixtral':
      return {
        ...base,
        experts: int(['num_local_experts'], true)!,
        top_k: int(['num_experts_per_tok'], true)!,
        expert_ffn_hidden: model.ffn_hidden as number,
      };
    case 'gpt_oss':
      return {
        ...base,
        experts: int(['num_local_experts'], true)!,
        top_k: int(['num_experts_per_tok', 'experts_per_token'], true)!,
        expert_ffn_hidden: model.ffn_hidden as number,
        router_bias: true,
      };
    case 'qwen2_moe':
    case 'qwen3_next':
      return qwenSharedMoe(base, get, int, model);
    case 'llama4_text':
      return llama4Moe(base, get, int, model);
    case 'nemotron_h':
      return nemotronMoe(base, int, model);
    case 'qwen3_moe':
      sparseLayers(base, get, int, model);
      return {
        ...base,
        experts: int(['num_experts'], true)!,
        top_k: int(['num_experts_per_tok'], true)!,
        expert_ffn_hidden: int(['moe_intermediate_size'], true)!,
      };
    case 'glm4_moe':
    case 'deepseek_v3':
      return deepseekMoe(base, int);
    case 'granitemoehybrid':
      return graniteMoe(base, int, model, notes);
    case 'ernie4_5_moe':
      return ernieMoe(base, get, int, model);
    case 'mamba2':
      return null;
    default:
      return genericMoe(base, int, flag, model, warnings);
  }
}

/** Qwen MoE decoder layers: sparse iff not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0
 * (modeling_qwen2_moe.py / qwen3_moe / qwen3_next decoder layer). */
function sparseLayers(base: Config, get: Get, int: Int, model: Config): void {
  const step = int(['decoder_sparse_step'], false) ?? 1;
  const onlyKey = get('mlp_only_layers');
  const only = Array.isArray(onlyKey) ? onlyKey : [];
  placeExperts(base, model, (i) => !only.includes(i) && (i + 1) % step === 0);
}

/** The layers with experts: a leading dense block is moe.dense_layers (set on base), any other placement
 * model.mlp_types. */
function placeExperts(base: Config, model: Config, isMoe: (i: number) => boolean): void {
  const layers = model.layers as number;
  const sparse = Array.from({ length: layers }, (_, i) => isMoe(i));
  const dense = sparse.findIndex((v) => v);
  if (dense >= 0 && sparse.every((v, i) => v === i >= dense)) base.dense_layers = dense;
  else model.mlp_types = shortestPattern(sparse.map((v) => (v ? 'moe' : 'dense')));
}

/** GraniteMoeHybridMoE (modeling_granitemoehybrid.py 1c0ff25): num_local_experts gated experts of intermediate_size
 * and a router without bias beside the shared MLP (model.ffn_hidden wide) in every layer; with num_local_experts 0
 * GraniteMoeHybridDecoderLayer runs the shared MLP alone (modular_granitemoehybrid.py 403a367 has_experts). */
function graniteMoe(base: Config, int: Int, model: Config, notes: string[]): Config | null {
  const experts = int(['num_local_experts'], false) ?? 0;
  if (experts === 0) {
    // GraniteMoeHybridDecoderLayer builds no block_sparse_moe: the experts' keys size nothing
    int(['intermediate_size'], false);
    int(['num_experts_per_tok'], false);
    notes.push('num_local_experts 0: no experts; each layer has the shared MLP only (shared_intermediate_size)');
    return null;
  }
  const shared = int(['shared_intermediate_size'], false) ?? 0;
  const width = int(['intermediate_size'], true)!;
  if (!model.ffn_hidden) model.ffn_hidden = width; // no shared MLP: the dense width is nominal (every layer has experts)
  return {
    ...base,
    experts,
    top_k: int(['num_experts_per_tok'], true)!,
    expert_ffn_hidden: width,
    shared_experts: shared > 0 ? 1 : 0,
    shared_expert_ffn_hidden: shared,
  };
}

/** Ernie4_5_MoeSparseMoeBlock (modular_ernie4_5_moe.py 01187e2): moe_num_experts experts of moe_intermediate_size,
 * the gate with its e_score_correction_bias (moe_statics), one shared MLP moe_num_shared_experts x as wide; in
 * layer i iff (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i <= moe_layer_end_index (-1: last). */
function ernieMoe(base: Config, get: Get, int: Int, model: Config): Config | null {
  const experts = int(['moe_num_experts'], true)!;
  const layers = model.layers as number;
  const start = int(['moe_layer_start_index'], false) ?? 0;
  const interval = Math.max(1, int(['moe_layer_interval'], false) ?? 1);
  const endKey = get('moe_layer_end_index');
  if (endKey !== undefined && endKey !== null && !(typeof endKey === 'number' && Number.isInteger(endKey)))
    throw new ImportError(
      'moe_layer_end_index',
      `moe_layer_end_index: must be a whole number, not ${JSON.stringify(endKey)}`,
    );
  const end = typeof endKey === 'number' && endKey !== -1 ? endKey : layers - 1;
  const isMoe = (i: number) => (i + 1) % interval === 0 && i >= start && i <= end;
  const fe = int(['moe_intermediate_size'], true)!;
  const shared = int(['moe_num_shared_experts'], false) ?? 0;
  const topK = int(['moe_k'], true)!;
  if (experts === 0 || !Array.from({ length: layers }, (_, i) => isMoe(i)).some(Boolean)) return null;
  placeExperts(base, model, isMoe);
  return {
    ...base,
    experts,
    top_k: topK,
    expert_ffn_hidden: fe,
    shared_experts: shared > 0 ? 1 : 0,
    shared_expert_ffn_hidden: shared * fe,
    router_bias: true,
  };
}

/** Qwen2MoeSparseMoeBlock / Qwen3NextSparseMoeBlock: a gated shared expert beside the routed ones. */
function qwenSharedMoe(base: Config, get: Get, int: Int, model: Config): Config {
  sparseLayers(base, get, int, model);
  const shared = int(['shared_expert_intermediate_size'], false) ?? 0;
  return {
    ...base,
    experts: int(['num_experts'], true)!,
    top_k: int(['num_experts_per_tok'], true)!,
    expert_ffn_hidden: int(['moe_intermediate_size'], true)!,
    shared_experts: shared > 0 ? 1 : 0,
    shared_expert_ffn_hidden: shared,
    ...(shared > 0 ? { shared_expert_gate: true } : {}),
  };
}

/** Llama4TextMoe: routed experts of intermediate_size, one shared expert of the same width, a router
 * without bias; the dense layers' MLP is intermediate_size_mlp; MoE layers interleave_moe_layer_step - 1, ... */
function llama4Moe(base: Config, get: Get, int: Int, model: Config): Config {
  const expertFfn = model.ffn_hidden as number;
  model.ffn_hidden = int(['intermediate_size_mlp'], false) ?? expertFfn;
  const step = int(['interleave_moe_layer_step'], false) ?? 1;
  const listed = get('moe_layers');
  const layers = model.layers as number;
  const isMoe = (i: number) => (Array.isArray(listed) ? listed.includes(i) : (i + 1) % step === 0);
  const kinds = Array.from({ length: layers }, (_, i) => (isMoe(i) ? 'moe' : 'dense'));
  if (kinds.some((k) => k === 'dense')) model.mlp_types = shortestPattern(kinds);
  return {
    ...base,
    experts: int(['num_local_experts'], true)!,
    top_k: int(['num_experts_per_tok'], true)!,
    expert_ffn_hidden: expertFfn,
    shared_experts: 1,
    shared_expert_ffn_hidden: expertFfn,
  };
}

/** NemotronHMoE ("E" blocks): relu2 routed experts and shared experts; model.mlp_types places them. */
function nemotronMoe(base: Config, int: Int, model: Config): Config | null {
  if (!(model.mlp_types as string[] | undefined)?.includes('moe')) return null;
  const shared = int(['n_shared_experts'], false) ?? 0;
  return {
    ...base,
    experts: int(['n_routed_experts'], true)!,
    top_k: int(['num_experts_per_tok'], true)!,
    expert_ffn_hidden: int(['moe_intermediate_size'], true)!,
    shared_experts: shared,
    shared_expert_ffn_hidden: shared > 0 ? int(['moe_shared_expert_intermediate_size'], true)! : 0,
  };
}

/** Glm4MoeMoE as DeepseekV3MoE: shared MLP of moe_intermediate_size * n_shared_experts, router with
 * e_score_correction_bias, first_k_dense_replace dense layers (GLM has no moe_layer_freq: every layer after). */
function deepseekMoe(base: Config, int: Int): Config {
  const fe = int(['moe_intermediate_size'], true)!;
  const shared = int(['n_shared_experts'], false) ?? 0;
  return {
    ...base,
    experts: int(['n_routed_experts'], true)!,
    top_k: int(['num_experts_per_tok'], true)!,
    expert_ffn_hidden: fe,
    shared_experts: shared,
    shared_expert_ffn_hidden: shared > 0 ? fe : 0,
    dense_layers: int(['first_k_dense_replace'], false) ?? 0,
    layer_freq: int(['moe_layer_freq'], false) ?? 1,
    router_bias: true,
  };
}

/** Any other family: the common spellings of expert counts (null: none, a dense model). */
function genericMoe(base: Config, int: Int, flag: Flag, model: Config, warnings: string[]): Config | null {
  const experts = int(['num_local_experts', 'num_experts', 'n_routed_experts'], false);
  if (!experts) return null;
  const r: Config = {
    ...base,
    experts,
    top_k: int(['num_experts_per_tok', 'moe_top_k', 'top_k'], true)!,
    expert_ffn_hidden:
      int(['moe_intermediate_size', 'expert_intermediate_size'], false) ?? (model.ffn_hidden as number),
  };
  const shared = int(['n_shared_experts', 'num_shared_experts'], false);
  if (shared)
    Object.assign(r, {
      shared_experts: shared,
      shared_expert_ffn_hidden: int(['shared_expert_intermediate_size'], false) ?? r.expert_ffn_hidden,
    });
  const dense = int(['first_k_dense_replace'], false);
  if (dense) r.dense_layers = dense;
  if (flag('router_bias')) r.router_bias = true;
  warnings.push(
    'MoE keys read generically (expert count, top-k, expert width); check model.moe against the model card',
  );
  return r;
}
