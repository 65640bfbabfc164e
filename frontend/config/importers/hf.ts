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
import { familyBiases, familyExtras, minicpmMoe } from './hf-families.js';
import { layerKinds, shortestPattern } from './hf-layers.js';
import { LEGACY_FAMILIES, legacyDecoder } from './hf-legacy.js';
import { PARALLEL_FAMILIES, parallelFamily } from './hf-parallel.js';
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
  // OPTConfig's switches for the common OPT checkpoints' layout
  'enable_bias',
  'layer_norm_elementwise_affine',
  '_remove_final_layer_norm',
  'do_layer_norm_before',
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
  // Exaone4MLP is Olmo2MLP (LlamaMLP: gate, up, down; modular_exaone4.py, transformers 008e574)
  'exaone4',
  'gpt_oss',
  'chatglm',
  'glm4_moe',
  // GraniteMoeHybridMLP / GraniteMoeHybridMoE (input_linear to 2 x width, chunked: SiLU(a) * b), Ernie4_5_MoeMLP,
  // SeedOssMLP: gate, up and down projections
  'granitemoehybrid',
  'ernie4_5_moe',
  'seed_oss',
  // CohereMLP / Cohere2MLP (LlamaMLP: gate, up, down; modular_cohere.py 03ea97a), QWenMLP (w1, w2, c_proj: a1 * silu(a2);
  // vLLM qwen.py 002800f, adapted from Qwen/Qwen-7B modeling_qwen.py), DbrxExpertGLU (w1, v1, w2; modular_dbrx.py 05a8405),
  // HunYuanMLP (gate_and_up_proj chunked into two for silu; code-search corpus file id 69227337646, and
  // modular_hunyuan_v1_moe.py 05bf8f6 HunYuanMoEV1MLP(LlamaMLP))
  'cohere',
  'cohere2',
  'qwen',
  'dbrx',
  'hunyuan',
  // StableLmMLP is MistralMLP (gate, up, down; hf-parallel.ts)
  'stablelm',
  // hf-families.ts: GlmMLP / Glm4MLP (gate_up_proj chunked), OlmoMLP, ExaoneGatedMLP, InternLM2MLP (w1, w3, w2), MiniCPMMLP,
  // PhimoeExperts (MixtralExperts), Baichuan's MLP (gate, up, down)
  'glm',
  'glm4',
  'olmo',
  'exaone',
  'internlm2',
  'minicpm',
  'phimoe',
  'baichuan',
]);
// Families whose Mamba-2 layers model.ssm describes (hf-layers.ts ssmDims): their SSM keys are read, not warned about
const SSM_FAMILIES = new Set(['nemotron_h', 'granitemoehybrid', 'mamba2']);
// GPTBigCodeBlock ln_1 / ln_2 (modeling_gpt_bigcode.py 0057454); DbrxNormAttentionNorm norm_1 / norm_2 are
// nn.LayerNorm(bias=False) (modular_dbrx.py 05a8405): a native layer_norm that keeps its input, counted with a bias
// vector config v1's layernorm has (2 x d_model per norm; 0.5 M of DBRX's 132 B)
// OPT, BLOOM, MPT and GPT-Neo: nn.LayerNorm (hf-legacy.ts; MPT's without bias, counted as DBRX's)
// GPT-J / CodeGen ln_1, StableLM / Persimmon nn.LayerNorm, Nemotron's LayerNorm1P (weight and bias; hf-parallel.ts)
// PhimoeDecoderLayer / PhimoeModel: nn.LayerNorm with weight and bias (modular_phimoe.py 0233e50)
const LAYERNORM = new Set([
  'gpt2',
  'gpt_neox',
  'falcon',
  'bert',
  'starcoder2',
  'gpt_bigcode',
  'dbrx',
  'phi',
  'opt',
  'bloom',
  'mpt',
  'gpt_neo',
  'phimoe',
  ...PARALLEL_FAMILIES,
]);
// Families whose MLP width defaults to 4 x hidden when the key is None (GPT2Config.n_inner, FalconConfig.ffn_hidden_size,
// GPTBigCodeConfig.n_inner, GPTJBlock / CodeGenBlock n_inner, ExaoneConfig.intermediate_size): any other family's null
// width is refused, never guessed
const FOUR_X_WIDTH = new Set(['gpt2', 'falcon', 'gpt_bigcode', 'gptj', 'codegen', 'exaone']);

// Read and judged irrelevant to training memory (tokens ids, init, rope
// frequencies and scaling, norm epsilons, routing math, bookkeeping).
const IRRELEVANT = new Set([
  // PaliGemma's text_config repeats the wrapper's image token count (the tower's patches, read by hf-vision.ts)
  'num_image_tokens',
  // multimodal token ids and quantisation-tool flags
  'vision_start_token_id',
  'vision_end_token_id',
  'vision_token_id',
  'image_token_id',
  'video_token_id',
  'for_llm_compressor',
  'architectures',
  'model_type',
  '_from_model_config',
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
  // GPTJConfig / CodeGenConfig: rotary over the first rotary_dim channels of each head (no parameters)
  'rotary_dim',
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
  // GPTBigCode / Qwen-1: the softmax's compute dtype and its scaling (as attention_softmax_in_fp32 above); Qwen-1's
  // inference-only switches (use_logn_attn runs only when not self.training, use_dynamic_ntk rescales rotary bases,
  // the KV-cache quantisation) and its checkpoint dtype flags
  'scale_attention_softmax_in_fp32',
  'softmax_in_fp32',
  'use_logn_attn',
  'use_dynamic_ntk',
  'use_cache_quantization',
  'use_cache_kernel',
  'bf16',
  'fp16',
  'fp32',
  // DBRX ffn_config: routing math (as router_jitter_noise, norm_topk_prob above) and the aux-loss weight
  'ffn_config.moe_jitter_eps',
  'ffn_config.moe_loss_weight',
  'ffn_config.moe_normalize_expert_weights',
  'ffn_config.uniform_expert_assignment',
  'attn_config.rope_theta',
  // Hunyuan routing math
  'moe_random_routing_dropped_token',
  'group_limited_greedy',
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
  // DbrxConfig.emb_pdrop and DbrxAttentionConfig.attn_pdrop (flattened); QWenConfig's emb_dropout_prob, attn_dropout_prob
  'emb_pdrop',
  'attn_config.attn_pdrop',
  'emb_dropout_prob',
  'attn_dropout_prob',
  // GPTNeoConfig resid_dropout (attention output and MLP), embed_dropout; ExaoneConfig the same (EXAONE 3.x remote code)
  'resid_dropout',
  'embed_dropout',
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
// PretrainedConfig's own attributes with no shape (generation defaults and bookkeeping): a nested config's to_dict()
// writes every one of them (transformers configuration_utils.py PretrainedConfig.__init__), a top-level one only those
// set; none is a model key
const PRETRAINED_ATTRIBUTES = [
  'temperature',
  'top_k',
  'top_p',
  'typical_p',
  'num_beams',
  'num_beam_groups',
  'diversity_penalty',
  'repetition_penalty',
  'length_penalty',
  'no_repeat_ngram_size',
  'encoder_no_repeat_ngram_size',
  'bad_words_ids',
  'num_return_sequences',
  'output_scores',
  'return_dict_in_generate',
  'forced_bos_token_id',
  'forced_eos_token_id',
  'remove_invalid_values',
  'exponential_decay_length_penalty',
  'suppress_tokens',
  'begin_suppress_tokens',
  'max_length',
  'min_length',
  'do_sample',
  'early_stopping',
  'chunk_size_feed_forward',
  'is_encoder_decoder',
  'cross_attention_hidden_size',
  'tie_encoder_decoder',
  'finetuning_task',
  'prefix',
  'tf_legacy_loss',
  'pruned_heads',
  'use_bfloat16',
];
for (const k of PRETRAINED_ATTRIBUTES) IRRELEVANT.add(k);
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
  // InternVLChatConfig (remote): the pixel-shuffle ratio (read by hf-vision.ts), the chat template, the projector's
  // version and the tower layer it reads, LoRA switches of its own trainer
  'downsample_ratio',
  'template',
  'ps_version',
  'select_layer',
  'use_backbone_lora',
  'use_llm_lora',
  'pad2square',
  // Idefics3Config / SmolVLMConfig: the connector's pixel shuffle (read by hf-vision.ts)
  'scale_factor',
  // LlavaNextConfig / LlavaOnevisionConfig: AnyRes tiles (read by hf-vision.ts), how OneVision pools them after the tower
  'image_grid_pinpoints',
  'vision_aspect_ratio',
  // PaliGemmaConfig: the projector's width (the text width), the image tokens (the tower's patches) and a copy of the
  // text hidden size
  'projection_dim',
  'num_image_tokens',
  'hidden_size',
]);

/** Import a transformers config.json; {error} names the key when the file is malformed. */
export function importHfConfig(json: unknown): HfImport | { error: ConfigError } {
  return guard(() => run(json));
}

function run(input: unknown): HfImport {
  if (!isObject(input)) throw new ImportError('', 'config.json must be a JSON object');
  let json: Obj = input;
  const warnings: string[] = [],
    unknown: string[] = [],
    notes: string[] = [];
  let cfg: Obj = json;
  let type = typeof json.model_type === 'string' ? json.model_type : undefined;
  // a vision tower beside the text decoder (a wrapper's vision_config, or one at the top level)
  let vision = visionTower(json, type, notes);
  // Qwen2.5-Omni: the language model is the thinker's text_config (handled as a text_config wrapper below), its vision
  // encoder Qwen2.5-VL's tower
  if (type === 'qwen2_5_omni' || type === 'qwen2_5_omni_thinker') {
    [json, vision] = omniThinker(json, type, warnings, notes, unknown);
    type = 'qwen2_5_omni_thinker';
  }

  // InternVL 2.5 / 3 / 3.5 remote code (model_type "internvl_chat", OpenGVLab configuration_internvl_chat.py
  // InternVLChatConfig): the language model is llm_config (a Qwen2 / Qwen3 / Llama / InternLM config.json of its own), the
  // tower vision_config; read as the text_config of a wrapper (transformers' converted "internvl" configs name it so)
  if (type === 'internvl_chat' && !isObject(json.text_config) && isObject(json.llm_config)) {
    const { llm_config, ...rest } = json;
    json = { ...rest, text_config: llm_config };
  }
  // DeepSeek-VL2 (deepseek-ai/DeepSeek-VL2 deepseek_vl2/models/modeling_deepseek_vl_v2.py DeepseekVLV2Config): the
  // language model is language_config (a DeepseekV2 config of its own), the SigLIP tower vision_config
  if (!isObject(json.text_config) && isObject(json.language_config)) {
    const { language_config, ...rest } = json;
    json = { ...rest, text_config: language_config };
  }
  // Multimodal wrappers (gemma3, llava, mistral3, ...): the text decoder is text_config.
  if (isObject(json.text_config)) {
    cfg = { ...json.text_config };
    if (cfg.tie_word_embeddings === undefined && typeof json.tie_word_embeddings === 'boolean')
      cfg.tie_word_embeddings = json.tie_word_embeddings;
    // a checkpoint's quantization describes the decoder's weights too (read below as a top-level one is)
    if (cfg.quantization_config === undefined && json.quantization_config !== undefined)
      cfg.quantization_config = json.quantization_config;
    const inner = typeof cfg.model_type === 'string' ? cfg.model_type : undefined;
    notes.push(
      `text_config (${inner ?? 'no model_type'}) imported as the model; the ${type ?? 'wrapper'} wrapper is multimodal`,
    );
    type = inner ?? (type === 'gemma3' ? 'gemma3_text' : type);
    for (const k of Object.keys(json)) {
      if (MULTIMODAL_KEYS.includes(k)) continue;
      if (!IRRELEVANT.has(k) && !WRAPPER_KEYS.has(k) && k !== 'tie_word_embeddings' && k !== 'quantization_config')
        unknown.push(k);
    }
    for (const k of MULTIMODAL_KEYS)
      if (json[k] !== undefined && json[k] !== null && !(k === 'vision_config' && vision !== null))
        warnings.push(multimodalWarning(k, json[k]));
  }
  if (typeof vision === 'string') warnings.push(vision);
  if (type === 'gemma3') type = 'gemma3_text';
  if (type === 'qwen2_5_omni_thinker') type = 'qwen2_5_omni_text';
  if (type === undefined)
    throw new ImportError('model_type', 'model_type: missing; config.json must name its model_type');
  refuseUnmodelled(type, cfg);
  // DbrxConfig's attn_config / ffn_config sub-configs (configuration_dbrx.py 032b32a), MptConfig's attn_config
  // (MptAttentionConfig, configuration_mpt.py 79f1fc7): read as "attn_config.<key>"
  if (type === 'dbrx') cfg = flattenSubConfigs(cfg, ['attn_config', 'ffn_config']);
  if (type === 'mpt') cfg = flattenSubConfigs(cfg, ['attn_config']);
  const family = familyOf(type, cfg.architectures ?? json.architectures, notes);
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
        const note = `${k}: not in config.json; ${type} default ${JSON.stringify(defaults[k])}`;
        if (!QUIET_DEFAULTS.has(k) && !notes.includes(note)) notes.push(note);
        return defaults[k];
      }
    }
    return undefined;
  };
  const int = (keys: string[], required: boolean): number | undefined => {
    const v = get(...keys);
    if (v === undefined || v === null) {
      if (required)
        throw new ImportError(
          keys[0],
          `${keys[0]}: missing (needed for the model shape)${family === 'generic' ? `; model_type "${type}" has no dedicated mapping, so its keys were read as a llama-like decoder's` : ''}`,
        );
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

  // BloomConfig takes an n_embed kwarg over hidden_size (configuration_bloom.py d94ee40)
  const hidden = int(family === 'bloom' ? ['n_embed', 'hidden_size'] : ['hidden_size', 'n_embd', 'd_model'], true)!;
  // ChatGLMConfig keeps num_layers (its modeling reads config.num_layers; a num_hidden_layers beside it is an alias);
  // DbrxConfig n_layers / n_heads (attribute_map num_hidden_layers / num_attention_heads)
  const layers = int(
    family === 'chatglm'
      ? ['num_layers', 'num_hidden_layers']
      : ['num_hidden_layers', 'n_layer', 'num_layers', 'n_layers'],
    true,
  )!;
  const heads = int(['num_attention_heads', 'n_head', 'num_heads', 'n_heads'], true)!;
  if (family === 'chatglm') chatglmAliases(cfg, used, notes, ['num_layers', 'num_hidden_layers']);
  const model: Config = {};
  const name = json._name_or_path;
  if (typeof name === 'string' && name) model.name = name;
  model.layers = layers;
  model.hidden = hidden;
  model.heads = heads;

  // Attention heads: falcon's multi_query / num_kv_heads (configuration_falcon.py).
  let kv = int(['num_key_value_heads', 'num_kv_heads', 'n_head_kv'], false);
  if (family === 'falcon') {
    const newArch = falconNewArchitecture(cfg, flag);
    kv = newArch ? (int(['num_kv_heads', 'n_head_kv'], false) ?? heads) : (flag('multi_query') ?? true) ? 1 : heads;
  }
  // GPTBigCodeAttention (modeling_gpt_bigcode.py 0057454): kv_heads = 1 if multi_query else num_heads (multi_query
  // defaults to True); QWenAttention (vLLM qwen.py 002800f): c_attn of 3 x kv_channels x heads, every head its own K/V;
  // DbrxAttention (modular_dbrx.py 05a8405): attn_config.kv_n_heads (DbrxAttentionConfig default 1)
  if (family === 'gpt_bigcode') kv = (flag('multi_query') ?? true) ? 1 : heads;
  if (family === 'qwen') kv = heads;
  if (family === 'dbrx') kv = int(['attn_config.kv_n_heads'], true);
  // ChatGLM (configuration_chatglm.py): multi_query_attention groups K/V into multi_query_group_num heads
  if (family === 'chatglm') {
    if (flag('multi_query_attention') ?? false) kv = int(['multi_query_group_num'], true)!;
    else {
      used.add('multi_query_group_num'); // read only with multi_query_attention
      kv = heads;
    }
  }
  model.kv_heads = kv ?? heads;
  const mla =
    family === 'deepseek_v3' || type === 'minicpm3' || (cfg.kv_lora_rank !== undefined && cfg.kv_lora_rank !== null);
  // QWenAttention: kv_channels per head; Hunyuan's remote HunYuanAttention: attention_head_dim (code-search corpus file id
  // 69227337646), HunYuanMoEV1Attention (LlamaAttention): head_dim
  let headDim = int(
    family === 'chatglm' || family === 'qwen'
      ? ['kv_channels']
      : family === 't5'
        ? ['d_kv']
        : family === 'hunyuan'
          ? ['attention_head_dim', 'head_dim']
          : ['head_dim'],
    false,
  );
  // MiniCPM3Config: v_head_dim None is hidden_size // num_attention_heads (transformers modular_minicpm3.py, code-search
  // file id 53335125769; vLLM minicpm3.py reads it so)
  if (mla && type === 'minicpm3' && (cfg.v_head_dim === undefined || cfg.v_head_dim === null)) {
    used.add('v_head_dim');
    headDim = Math.floor(hidden / heads);
    notes.push(`v_head_dim: not in config.json; minicpm3's hidden_size // num_attention_heads = ${headDim}`);
  } else if (mla) headDim = int(['v_head_dim'], true);
  if (headDim === undefined) {
    if (hidden % heads !== 0)
      throw new ImportError(
        'num_attention_heads',
        `num_attention_heads: ${heads} does not divide hidden_size ${hidden} and there is no head_dim`,
      );
    headDim = hidden / heads;
  }
  model.head_dim = headDim;
  // outside MLA one head size serves queries, keys and values: a value head of another size is not expressible
  // (DeepSeek-VL2's MHA decoders, use_mla false, write 0 for the unused MLA sizes)
  if (!mla && cfg.v_head_dim !== undefined && cfg.v_head_dim !== null) {
    used.add('v_head_dim');
    if (cfg.v_head_dim !== headDim && cfg.v_head_dim !== 0)
      throw new ImportError(
        'v_head_dim',
        `v_head_dim: ${JSON.stringify(cfg.v_head_dim)} beside head_dim ${headDim}; config v1 has one head size for queries, keys and values outside MLA (model.mla); not imported rather than counted at head_dim`,
      );
  }

  // MLP width: n_inner / ffn_hidden_size default to 4*hidden (GPT-2, Falcon). GraniteMoeHybridMLP (every layer's
  // shared MLP, the whole MLP of a model without experts) is shared_intermediate_size wide; intermediate_size is
  // its experts' width (modeling_granitemoehybrid.py 1c0ff25).
  // Qwen3_5MoeTextConfig has no intermediate_size (modular_qwen3_5_moe.py, transformers 0960594: intermediate_size =
  // AttributeError()): every Qwen3_5MoeDecoderLayer's MLP is the sparse block, so the dense width is nominal
  // OPT, BLOOM, MPT, GPT-Neo: hf-legacy.ts reads the width (ffn_dim, 4 x hidden, 4 x d_model, intermediate_size)
  const legacy = LEGACY_FAMILIES.has(family);
  const widthKeys = legacy
    ? []
    : type === 'qwen3_5_moe_text'
      ? ['moe_intermediate_size']
      : family === 'granitemoehybrid'
        ? ['shared_intermediate_size']
        : family === 'dbrx'
          ? ['ffn_config.ffn_hidden_size']
          : ['intermediate_size', 'n_inner', 'ffn_hidden_size', 'ffn_dim', 'd_ff'];
  const widthKey = widthKeys.find((k) => cfg[k] !== undefined);
  // intermediate_size None has no rule in the Llama-style classes; n_inner / ffn_hidden_size None is 4 x hidden in the
  // GPT-2-style ones (GPT2Config, GPTJConfig, GPTBigCodeConfig, FalconConfig, Phi-1.5/2's remote MixFormer config)
  if (
    widthKey?.endsWith('intermediate_size') &&
    cfg[widthKey] === null &&
    !FOUR_X_WIDTH.has(family) &&
    family !== 'mamba2'
  )
    throw new ImportError(
      widthKey,
      `${widthKey}: null; the MLP width is not given and ${type} has no rule for it (not guessed as 4 x hidden_size)`,
    );
  let ffn = int(widthKeys, false);
  // QWenMLP (vLLM qwen.py 002800f, from Qwen/Qwen-7B modeling_qwen.py): w1, w2 and c_proj of intermediate_size // 2
  if (family === 'qwen' && ffn !== undefined) {
    notes.push(`qwen: QWenMLP is intermediate_size // 2 = ${Math.floor(ffn / 2)} wide (w1, w2, c_proj)`);
    ffn = Math.floor(ffn / 2);
  }
  if (family === 'mamba2') {
    // Mamba2Block (modeling_mamba2.py 4711664): an RMSNorm and the Mamba2Mixer, no attention and no MLP
    get('intermediate_size'); // expand * hidden_size, the mixer's width (model.ssm)
    notes.push(
      'mamba2: every layer is a Mamba-2 mixer without attention or MLP; heads, head_dim and ffn_hidden are nominal',
    );
  } else if (ffn === undefined && !legacy)
    notes.push(
      widthKey
        ? `${widthKey} null: ffn_hidden = 4 * hidden = ${4 * hidden} (None is 4 x hidden in GPT-2-style classes)`
        : FOUR_X_WIDTH.has(family)
          ? `no MLP width (${family === 'falcon' ? 'ffn_hidden_size' : family === 'exaone' ? 'intermediate_size' : 'n_inner'}): ffn_hidden = 4 * hidden = ${4 * hidden} (the ${type} class rule)`
          : `no intermediate_size: ffn_hidden = 4 * hidden = ${4 * hidden} assumed (no ${type} class rule known; check the model card)`,
    );
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
  if (family === 'chatglm') chatglmAliases(cfg, used, notes, ['padded_vocab_size', 'vocab_size']);
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
  model.head = headOf(cfg.architectures ?? json.architectures, family, notes);
  const hasRms = cfg.rms_norm_eps !== undefined;
  // Hunyuan's remote HunYuanDecoderLayer: norm_type "fused" / "torch_nn" builds nn.LayerNorm, "rms" / "hf_rms" RMSNorm.
  // CohereLayerNorm (modular_cohere.py 03ea97a) has a weight and no bias and computes on x.float() (mean and variance),
  // as an eager RMSNorm does: config v1's rmsnorm counts its one vector and keeps its fp32 input (model.norm "rmsnorm").
  const normType = family === 'hunyuan' ? get('norm_type') : undefined;
  model.norm =
    LAYERNORM.has(family) ||
    normType === 'fused' ||
    normType === 'torch_nn' ||
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
  const ownBiases = familyBiases(family, flag, model, notes);
  // GPTBigCodeAttention c_attn / c_proj and GPTBigCodeMLP c_fc / c_proj: nn.Linear with bias (modeling_gpt_bigcode.py 0057454)
  if (ownBiases) [bias, qkvBias] = ownBiases;
  else if (family === 'gpt2' || family === 'bert' || family === 'gpt_bigcode') bias = true;
  else if (family === 'qwen') {
    // QWenAttention c_attn: Linear(bias=True); c_proj and QWenMLP w1, w2, c_proj: bias=not no_bias (Qwen/Qwen-7B
    // modeling_qwen.py as copied in code-search corpus file id 33940490084; vLLM qwen.py 002800f)
    bias = !(flag('no_bias') ?? true);
    qkvBias = !bias;
  } else if (family === 'dbrx')
    bias = false; // DbrxAttention Wqkv / out_proj bias=False, DbrxExpertGLU w1 / v1 / w2 bare weights, DbrxRouter bias=False
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
  const learned = family === 'gpt2' || family === 'bert' || family === 'gpt_bigcode'; // GPTBigCodeModel wpe
  model.position = learned ? 'learned' : 'rope';
  // Baichuan 13B configs give only model_max_length (BaichuanConfig's context)
  const maxPos = int(
    ['max_position_embeddings', 'n_positions', 'max_seq_len', 'seq_length'].concat(
      family === 'baichuan' ? ['model_max_length'] : [],
    ),
    false,
  );
  if (maxPos !== undefined) model.max_positions = maxPos;
  else if (!legacy) notes.push('no max_position_embeddings: llmem default kept (rotary positions have no parameters)');
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
  // Exaone4Attention (modular_exaone4.py, transformers 008e574): q_norm / k_norm are RMSNorm(head_dim), always built
  if (family === 'exaone4') model.qk_norm = 'head';
  // Glm4MoeAttention: q_norm / k_norm over head_dim when use_qk_norm
  if (family === 'glm4_moe' && flag('use_qk_norm')) model.qk_norm = 'head';
  if (family === 'gemma2' || family === 'gemma3_text') model.norms_per_layer = 4;
  if (family === 'falcon') {
    const newArch = falconNewArchitecture(cfg, flag);
    const parallel = flag('parallel_attn') ?? true;
    if (!newArch && parallel) model.norms_per_layer = 1;
    if (newArch && cfg.num_ln_in_parallel_attn === 1) model.norms_per_layer = 1;
    // FalconDecoderLayer: attention and MLP both read the layer input (one or two norms of it)
    if (newArch || parallel) model.parallel_block = true;
  }
  // PhiDecoderLayer (modeling_phi.py, transformers 008e574): one input_layernorm feeds attention and the MLP, summed
  // with the residual; q/k/v/dense, fc1/fc2 and lm_head are biased Linears; qk_layernorm: LayerNorm(head_dim) on q and k
  if (family === 'phi') {
    model.bias = true;
    model.lm_head_bias = true;
    model.parallel_block = true;
    model.norms_per_layer = 1;
    if (flag('qk_layernorm')) model.qk_norm = 'head';
  }
  // GPT-J, CodeGen, StableLM, Persimmon, Nemotron: biases, norms, parallel block, q/k norms (hf-parallel.ts)
  if (PARALLEL_FAMILIES.has(family)) parallelFamily({ family, layers, get, int, flag, model, warnings, notes });
  // GPTNeoXLayer with use_parallel_residual (default true): x + attn(ln1(x)) + mlp(ln2(x))
  if (family === 'gpt_neox' && (flag('use_parallel_residual') ?? true)) model.parallel_block = true;
  if (family === 'gpt_oss') model.attn_sinks = true;
  if (family === 'chatglm') chatglmExtras(get, int, flag, model, warnings);
  if (family === 'cohere' || family === 'cohere2') cohereExtras(family, get, flag, model, warnings);
  if (family === 'hunyuan') hunyuanAttention(type, get, flag, model);
  familyExtras({ family, layers, get, int, flag, model, warnings, notes });
  if (family === 'qwen') {
    // QWenModel / QWenBlock: rotary over kv_channels, no parameters; the attention kernel is training.attention's
    get('seq_length'); // QWenConfig.seq_length: the context of use_logn_attn (inference only), not a shape
    const fa = get('use_flash_attn');
    if (fa !== undefined)
      notes.push(`use_flash_attn ${JSON.stringify(fa)}: the attention kernel is set by training.attention`);
  }
  if (family === 'dbrx') {
    const clip = get('attn_config.clip_qkv');
    if (typeof clip === 'number')
      warnings.push(
        `attn_config.clip_qkv ${clip}: DbrxAttention clamps the Wqkv output, and the clamp keeps that output for the backward (seq x (hidden + 2 x kv_n_heads x head_dim) per layer), which llmem does not add`,
      );
    const act = get('ffn_config.ffn_act_fn');
    const actName = isObject(act) ? act.name : act;
    if (actName !== undefined && actName !== 'silu')
      notes.push(
        `ffn_config.ffn_act_fn ${JSON.stringify(actName)}: DbrxExpertGLU gates with it (the same three matrices)`,
      );
  }
  // MllamaTextModel (modeling_mllama.py, transformers befb795): layers listed in cross_attention_layers are
  // MllamaCrossAttentionDecoderLayer (q/k/v/o over the vision states, q_norm and k_norm, two tanh gates)
  const cross = get('cross_attention_layers');
  if (Array.isArray(cross) && cross.length > 0)
    warnings.push(
      `cross_attention_layers: ${cross.length} of ${layers} layers attend to the image tokens (MllamaCrossAttentionDecoderLayer); counted as self-attention layers (the same q, k, v, o; their q/k norms and two gates, ${2 * headDim + 2} parameters a layer, left out), and their keys and values over the vision tokens are not modelled`,
    );
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
      `BERT imported with a sequence-classification head (pooler + ${labels}-label classifier${type !== 'bert' ? `; ${type}'s classification head, dense and out_proj, has the same sizes` : ''})${arch && !/^(Bert|Roberta|XLMRoberta|Camembert)ForSequenceClassification$/.test(String(arch)) ? `; architectures says ${String(arch)}, whose head is not modelled` : ''}`,
    );
  }
  const lmHeadBias = flag('lm_head_bias');
  if (lmHeadBias) model.lm_head_bias = true;

  // Per-layer kinds: sliding / chunked / linear-attention / Mamba-2 layers and per-layer MLPs.
  layerKinds({ family, layers, get, int, flag, model, warnings, notes });
  if (legacy) legacyDecoder({ family, layers, get, int, flag, model, warnings, notes });

  // Mixture of experts.
  model.moe = moe(family, get, int, flag, model, warnings, notes, type);

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
      v_head_dim: type === 'minicpm3' ? (int(['v_head_dim'], false) ?? headDim) : int(['v_head_dim'], true)!,
    };
    notes.push('MLA: heads/kv_heads/head_dim are nominal (head_dim = v_head_dim); model.mla defines the attention');
  } else model.mla = null;
  // DeepSeek-V3 / GLM-4.5 num_nextn_predict_layers, Qwen3.5 mtp_num_hidden_layers (mtp.* weights), MiniMax-M2's
  // num_mtp_modules (with use_mtp and mtp_transformer_layers, its remote code's switches)
  const mtpKey =
    cfg.mtp_num_hidden_layers !== undefined
      ? 'mtp_num_hidden_layers'
      : cfg.num_mtp_modules !== undefined
        ? 'num_mtp_modules'
        : 'num_nextn_predict_layers';
  if (mtpKey === 'num_mtp_modules') for (const k of ['use_mtp', 'mtp_transformer_layers']) used.add(k);
  const mtp = mtpKey === 'num_mtp_modules' && cfg.use_mtp === false ? 0 : int([mtpKey], false);
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
  // GLM-5 (glm_moe_dsa) runs DeepSeek Sparse Attention too: the same index_* keys and indexer
  if (type === 'deepseek_v32' || type === 'glm_moe_dsa') deepseekIndexer(int, model, warnings);
  if (type === 'glm_moe_dsa') get('indexer_rope_interleave');
  for (const k of SSM_KEYS) {
    used.add(k);
    if (!SSM_FAMILIES.has(family) && cfg[k] !== undefined && cfg[k] !== null)
      warnings.push(
        `${k}: state-space / linear-attention layers are not modelled; every layer is counted as attention + MLP`,
      );
  }
  // GraniteForCausalLM / GraniteMoe*: logits = logits / config.logits_scaling, out of place (as Cohere's logit_scale)
  const logitsScaling = cfg.logits_scaling;
  if (typeof logitsScaling === 'number' && logitsScaling !== 1)
    warnings.push(
      `logits_scaling ${logitsScaling}: Granite divides the logits by it out of place, one more logits-sized tensor at the head that llmem does not add`,
    );
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
  RWForCausalLM: 'falcon',
  MistralForCausalLM: 'mistral',
  MixtralForCausalLM: 'mixtral',
  Qwen2ForCausalLM: 'qwen2',
  // Qwen2.5-VL's language model is Qwen2's (modeling_qwen2_5_vl.py Qwen2_5_VLTextModel: biased q, k, v)
  Qwen2_5_VLForConditionalGeneration: 'qwen2',
  Qwen3ForCausalLM: 'qwen3',
  Qwen3MoeForCausalLM: 'qwen3_moe',
  DeepseekV3ForCausalLM: 'deepseek_v3',
  Glm4MoeForCausalLM: 'glm4_moe',
  // Qwen2-VL's language model (modeling_qwen2_vl.py 928b556 Qwen2VLAttention): Qwen2's q, k, v with biases, o_proj without
  Qwen2VLForConditionalGeneration: 'qwen2',
};

// model_types read with a family of another name: Hunyuan-A13B's remote-code "hunyuan" (HunYuanConfig) and transformers'
// "hunyuan_v1_moe" (HunYuanMoEV1Config) build the same decoder from partly different keys (hunyuanMoe, hunyuanAttention)
// MiniCPM3 (modular_minicpm3.py, code-search file id 53335125769): MiniCPM's decoder (LlamaMLP, the scaled embedding and
// residuals) with MLA attention (the generic MLA keys); its own class defaults (hf-defaults.ts)
// HunYuanDenseV1 (transformers modeling_hunyuan_v1_dense.py): the hunyuan family's attention (q/k norms with use_qk_norm,
// use_cla refused) without experts
const OWN_FAMILY: Record<string, string> = {
  // Falcon's remote-code configs (tiiuae's RWForCausalLM): transformers reads them as falcon
  // (models/falcon/convert_custom_code_checkpoint.py @15ea02a: n_head, n_layer renamed; n_head_kv present means the
  // new decoder architecture with that many K/V heads, else the old one, multi_query kept)
  RefinedWebModel: 'falcon',
  RefinedWeb: 'falcon',
  // microsoft/phi-1_5 and phi-2's first remote-code configs (modeling_phi.py of the checkpoint, "phi-msft": n_embd,
  // n_layer, n_head, parallel attention and MLP, biased linears and head): the modules transformers' phi has
  'phi-msft': 'phi',
  // RoBERTa and its kin are BERT's modules with another vocabulary and padding offset (modeling_roberta.py:
  // RobertaEmbeddings word + position (max_position_embeddings, 514 in the checkpoints) + token type + LayerNorm,
  // BertLayer-shaped post-LN layers with biases; RobertaClassificationHead dense + out_proj, the pooler's size)
  roberta: 'bert',
  'xlm-roberta': 'bert',
  camembert: 'bert',
  hunyuan: 'hunyuan',
  hunyuan_v1_moe: 'hunyuan',
  hunyuan_v1_dense: 'hunyuan',
  minicpm3: 'minicpm',
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
  // MiMoForCausalLM(Qwen2ForCausalLM), MiMoModel(Qwen2Model) plus the MTP layers transformers does not load (remote code;
  // vLLM mimo.py 1b55f1e): Qwen2's q/k/v biases, no o_proj bias, whatever attention_bias says
  mimo: 'qwen2',
  // Qwen2.5-Omni's thinker language model (modular_qwen2_5_omni.py 008e574: Qwen2_5OmniThinkerTextModel(Qwen2_5_VLTextModel))
  qwen2_5_omni_text: 'qwen2',
  // modular_qwen3_5_moe.py (transformers 0960594): Qwen3_5MoeDecoderLayer(Qwen3NextDecoderLayer) builds a Gated DeltaNet or
  // Qwen3NextAttention (gated q_proj, q/k norms) per layer_types and a Qwen3NextSparseMoeBlock (routed experts, a shared
  // expert with its sigmoid gate) in every layer: no decoder_sparse_step, no mlp_only_layers (the class deletes both)
  qwen3_5_moe_text: 'qwen3_next',
};

// model_types whose layers no config v1 kind describes: refused with the reason rather than counted as another model.
//   falcon_h1 modular_falcon_h1.py (transformers 00511f5) FalconH1DecoderLayer: attention and a Mamba-2 mixer in
//     parallel on the same input, then the MLP; lfm2 / lfm2_moe modeling_lfm2.py (transformers 1d6b6ca)
//     Lfm2ShortConv "conv" layers (configuration_lfm2.py 05cd1ec: layer_types, else "full_attention" at
//     full_attn_idxs, every layer without either); mamba / falcon_mamba modeling_mamba.py (transformers 1160c0f)
//     MambaMixer (Mamba-1: x_proj, dt_proj, an A_log of d_inner x state_size), not the Mamba-2 mixer of model.ssm.
//   jamba configuration_jamba.py (transformers 008f5c8) JambaConfig: attention where i % attn_layer_period ==
//     attn_layer_offset, else a JambaMambaMixer (Mamba-1), experts where i % expert_layer_period == expert_layer_offset.
//   gemma3n / gemma3n_text configuration_gemma3n.py (transformers 0185480): per-layer embeddings
//     (vocab_size_per_layer_input x num_hidden_layers x hidden_size_per_layer_input), AltUp (altup_num_inputs copies of the
//     hidden state), the Laurel low-rank block (laurel_rank), KV shared across the last num_kv_shared_layers, a gated MLP and
//     tied embeddings (Gemma3nConfig tie_word_embeddings True).
//   minimax modular_minimax.py (transformers 008e574) MiniMaxLightningAttention ("linear_attention" layers): qkv_proj (3 x
//     heads x head_dim), output_gate, an RMSNorm over heads x head_dim, out_proj and a decayed linear-attention scan with no
//     convolution and no gates of its own; config v1's linear mixer is Gated DeltaNet (in_proj_ba, conv1d, A_log, dt_bias,
//     the delta rule), whose tensors and saved state differ. MiniMax-M1 / Text-01 (remote code) list it as attn_type_list 0.
//   kimi_linear configuration_kimi_linear.py (transformers 0bc4dd0): linear_attn_config.kda_layers are Kimi Delta Attention
//     (per-channel decay gates f_a/f_b, output gates g_a/g_b, short convolutions on q, k and v), not Gated DeltaNet.
//   Nemotron-NAS (DeciLM, remote code; vLLM nemotron_nas.py 2ee6ae7): block_configs gives each layer its own attention (no_op,
//     replace_with_linear, n_heads_in_group) and FFN (no_op, replace_with_linear, ffn_mult: width round_up(int(2 x ffn_mult x
//     hidden / 3), 256)); config v1 has one ffn_hidden and one kv_heads for every layer.
//   phi4flash Phi-4-mini-flash (SambaY, remote code; vLLM phi4flash.py 03356f8 SambaYDecoderLayer): every mb_per_layer-th
//     layer a Mamba-1 mixer (x_proj, dt_proj, a d_inner x d_state A), the layers from num_hidden_layers // 2 + 2 on a
//     YOCO cross-decoder whose Mamba layers are gated memory units over the shared scan output and whose attention layers
//     reuse one layer's keys and values.
//   longcat_flash modeling_longcat_flash.py (transformers b1e784f): each decoder layer holds two MLA attentions, two dense
//     MLPs and one shortcut-connected MoE whose router also picks zero_expert_num identity ("zero-computation") experts.
//   step3_text / step3_vl Step-3 (vLLM step3_text.py Step3TextAttention / Step3TextDecoderLayer): attention factorised as
//     qkv_proj to share_q_dim + 2 x head_dim, an RMSNorm, then wq to heads x head_dim (one shared K/V head); experts and a
//     share_expert_dim shared MLP only in the layers moe_layers_enum lists.
function refuseUnmodelled(type: string, cfg: Obj): void {
  const refuse = (key: string, why: string) => {
    throw new ImportError(key, `${key}: ${why}; not imported rather than counted as another model`);
  };
  if (type === 'phi4flash')
    refuse(
      'model_type',
      'phi4flash (Phi-4-mini-flash, SambaY) interleaves Mamba-1 mixers (x_proj, dt_proj, a d_inner x state A; mb_per_layer) with sliding-window attention and, from the middle layer on, a YOCO cross-decoder of gated memory units and attention layers that reuse the keys and values of one layer; config v1 has Mamba-2 mixers only (model.ssm) and no shared KV',
    );
  if (type === 'longcat_flash')
    refuse(
      'model_type',
      `longcat_flash layers each hold two MLA attentions, two dense MLPs and a shortcut-connected MoE whose router also picks ${typeof cfg.zero_expert_num === 'number' ? cfg.zero_expert_num : 'zero_expert_num'} identity ("zero-computation") experts, so the experts per token vary; config v1 gives a layer one attention, one MLP and a fixed top-k`,
    );
  if (type === 'step3_text' || type === 'step3_vl' || type === 'step3vl')
    refuse(
      type === 'step3_text' ? 'share_q_dim' : 'model_type',
      `${type}: Step-3's attention factorises the query (qkv_proj to share_q_dim + 2 x head_dim, an RMSNorm, wq to heads x head_dim) over one shared key/value head, and its experts and share_expert_dim shared MLP sit only in the moe_layers_enum layers; config v1 has no low-rank query without a latent KV (model.mla is DeepSeek's)`,
    );
  if (type === 'falcon_h1')
    refuse(
      'model_type',
      'falcon_h1 runs attention and a Mamba-2 mixer in parallel in every layer (FalconH1DecoderLayer), and config v1 gives each layer one mixer (model.layer_types)',
    );
  if (cfg.block_configs !== undefined && cfg.block_configs !== null) refuse('block_configs', nasLayers(cfg));
  if (type === 'jamba')
    refuse(
      'model_type',
      'jamba interleaves Mamba-1 layers (JambaMambaMixer: x_proj, dt_proj, a d_inner x state_size A) with attention every attn_layer_period layers and experts every expert_layer_period layers; config v1 models Mamba-2 mixers only (model.ssm)',
    );
  if (type === 'gemma4' || type === 'gemma4_text')
    refuse(
      'model_type',
      `${type}: Gemma 4's global layers have their own head size and key/value heads (global_head_dim ${JSON.stringify(cfg.global_head_dim ?? null)}, num_global_key_value_heads ${JSON.stringify(cfg.num_global_key_value_heads ?? null)}, beside head_dim ${JSON.stringify(cfg.head_dim ?? null)} on the sliding ones) and share one projection for keys and values (attention_k_eq_v)${cfg.enable_moe_block === true ? ', and each layer runs a MoE block beside its MLP (enable_moe_block)' : ''}; config v1 gives every layer one head size and one key/value head count`,
    );
  if (type === 'deepseek_v4')
    refuse(
      'model_type',
      `deepseek_v4: its attention reads low-rank queries (q_lora_rank ${JSON.stringify(cfg.q_lora_rank ?? null)}) against ${JSON.stringify(cfg.num_key_value_heads ?? null)} key/value head of ${JSON.stringify(cfg.head_dim ?? null)} and projects out through ${JSON.stringify(cfg.o_groups ?? null)} groups of rank ${JSON.stringify(cfg.o_lora_rank ?? null)}, compresses the keys of most layers (compress_ratios) with an indexer, and carries ${JSON.stringify(cfg.hc_mult ?? null)} copies of the residual stream (hc_mult hyper-connections); config v1 has none of these (its MLA is DeepSeek-V3's)`,
    );
  if (type === 'phi3small')
    refuse(
      'model_type',
      'phi3small (Phi-3-small, remote code): block-sparse attention on every other layer (dense_attention_every_n_layers, blocksparse_*), a GeGELU MLP of ff_intermediate_size and muP scalings; config v1 has no block-sparse attention and the generic reading miscounts it (6.5 B for 7.4 B)',
    );
  if (type === 'mimo_v2_flash')
    refuse(
      'model_type',
      `mimo_v2_flash: its sliding-window layers have their own key/value heads (swa_num_key_value_heads ${JSON.stringify(cfg.swa_num_key_value_heads ?? null)} beside num_key_value_heads ${JSON.stringify(cfg.num_key_value_heads ?? null)}) and its values a smaller head (v_head_dim ${JSON.stringify(cfg.v_head_dim ?? null)}, head_dim ${JSON.stringify(cfg.head_dim ?? null)}); config v1 gives every layer one head size and one key/value head count`,
    );
  if (typeof cfg.moe_latent_size === 'number')
    refuse(
      'moe_latent_size',
      `${cfg.moe_latent_size}: the experts run in a latent space that narrow (NemotronH's LatentMoE: fc1_latent_proj from hidden_size, fc2_latent_proj back), which config v1 has no key for; counted at hidden_size they would come out several times too large`,
    );
  if (type === 'gemma3n' || type === 'gemma3n_text')
    refuse(
      'model_type',
      `${type}: Gemma 3n's per-layer embeddings (vocab_size_per_layer_input x num_hidden_layers x hidden_size_per_layer_input), AltUp (altup_num_inputs copies of the hidden state, their predictions and corrections), the Laurel block (laurel_rank) and the KV sharing of its last num_kv_shared_layers layers are not in config v1`,
    );
  const attnTypes = cfg.attn_type_list;
  // transformers' MiniMaxConfig names them in layer_types ("linear_attention"); MiniMax-M1 / Text-01 in attn_type_list (0)
  const kinds = Array.isArray(cfg.layer_types) ? cfg.layer_types : undefined;
  const minimax =
    (type === 'minimax' && (!kinds || kinds.includes('linear_attention'))) ||
    ((type === 'minimax_m1' || type === 'minimax_text_01') && !Array.isArray(attnTypes));
  if (minimax || (Array.isArray(attnTypes) && attnTypes.includes(0))) {
    const linear = Array.isArray(attnTypes) ? attnTypes.filter((t) => t === 0).length : undefined;
    refuse(
      Array.isArray(attnTypes) ? 'attn_type_list' : 'model_type',
      `${Array.isArray(attnTypes) ? `${linear} of ${attnTypes.length} layers (attn_type_list 0)` : `${type}'s linear_attention layers`} are MiniMax lightning attention (qkv_proj, output_gate, an RMSNorm of heads x head_dim, out_proj and a decayed linear-attention scan), which config v1's linear mixer (Gated DeltaNet: model.linear) does not describe`,
    );
  }
  if (type === 'kimi_linear') {
    const lin = isObject(cfg.linear_attn_config) ? cfg.linear_attn_config.kda_layers : undefined;
    refuse(
      isObject(cfg.linear_attn_config) ? 'linear_attn_config' : 'model_type',
      `kimi_linear's ${Array.isArray(lin) ? `${lin.length} ` : ''}Kimi Delta Attention layers (linear_attn_config.kda_layers: per-channel decay gates, output gates, short convolutions on q, k and v) are not config v1's Gated DeltaNet (model.linear), and its other layers are MLA`,
    );
  }
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

/** What block_configs gives each layer (DeciLM, vLLM nemotron_nas.py 2ee6ae7), for the refusal. */
function nasLayers(cfg: Obj): string {
  const blocks = cfg.block_configs;
  if (!Array.isArray(blocks)) return 'must be a list of per-layer blocks (Nemotron-NAS / DeciLM)';
  const hidden = typeof cfg.hidden_size === 'number' ? cfg.hidden_size : undefined;
  const heads = typeof cfg.num_attention_heads === 'number' ? cfg.num_attention_heads : undefined;
  const widths = new Set<string>(),
    kv = new Set<string>();
  let noAttn = 0,
    noFfn = 0,
    linear = 0;
  for (const b of blocks) {
    const a = isObject(b) && isObject(b.attention) ? b.attention : {};
    const f = isObject(b) && isObject(b.ffn) ? b.ffn : {};
    if (a.no_op === true) noAttn++;
    else if (a.replace_with_linear === true) linear++;
    else if (typeof a.n_heads_in_group === 'number' && a.n_heads_in_group > 0)
      kv.add(heads !== undefined ? String(heads / a.n_heads_in_group) : `1/${a.n_heads_in_group} of the heads`);
    if (f.no_op === true) noFfn++;
    else if (f.replace_with_linear === true) linear++;
    else if (typeof f.ffn_mult === 'number')
      widths.add(
        hidden !== undefined
          ? String(Math.ceil(Math.trunc((2 * f.ffn_mult * hidden) / 3) / 256) * 256)
          : `x${f.ffn_mult}`,
      );
  }
  const layers = typeof cfg.num_hidden_layers === 'number' ? ` for ${cfg.num_hidden_layers} layers` : '';
  return `Nemotron-NAS (DeciLM) sets each layer apart: ${blocks.length} blocks${layers}, FFN widths ${[...widths].join(', ') || 'none'} (ffn_mult), KV heads ${[...kv].join(', ') || 'none'} (n_heads_in_group), ${noAttn} attention and ${noFfn} FFN no-ops, ${linear} replaced with a linear layer; config v1 has one ffn_hidden and one kv_heads for every layer (model.layer_types "none" drops an attention, nothing resizes an MLP)`;
}

/** A copy of cfg with each named sub-config object's keys at the top level as "<sub>.<key>" (DBRX's attn_config,
 * ffn_config), so that errors, defaults and unknown keys name the key as the file nests it. */
function flattenSubConfigs(cfg: Obj, subs: string[]): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(cfg)) {
    if (!subs.includes(k) || v === null) out[k] = v;
    else if (!isObject(v))
      throw new ImportError(k, `${k}: must be an object (a ${k} sub-config), not ${JSON.stringify(v)}`);
    else for (const [kk, vv] of Object.entries(v)) out[`${k}.${kk}`] = vv;
  }
  return out;
}

// Qwen2.5-Omni (configuration_qwen2_5_omni.py 008e574): Qwen2_5OmniConfig holds thinker_config (Qwen2_5OmniThinkerConfig:
// audio_config, vision_config and text_config, the language model), talker_config (a second decoder that writes speech
// codes) and token2wav_config (a DiT and a BigVGAN vocoder). Qwen2_5OmniThinkerTextModel is Qwen2_5_VLTextModel, Qwen2's
// decoder: q/k/v with biases, o_proj without (modular_qwen2_5_omni.py, transformers 008e574).
const OMNI_THINKER_KEYS = new Set([
  'text_config',
  'audio_config',
  'vision_config',
  'audio_token_index',
  'image_token_index',
  'video_token_index',
  'position_id_per_seconds',
  'seconds_per_chunk',
  'audio_start_token_id',
  'audio_end_token_id',
  'user_token_id',
  'initializer_range',
  'tie_word_embeddings',
]);

/** A text_config wrapper for the thinker of a Qwen2.5-Omni config (its language model) and its vision tower
 * (Qwen2_5OmniVisionEncoder is Qwen2_5_VisionTransformerPretrainedModel with Qwen2_5_VLVisionBlock blocks:
 * modular_qwen2_5_omni.py 008e574, read as model.vision kind qwen2_5_vl); the rest is warned about. */
function omniThinker(
  json: Obj,
  type: string,
  warnings: string[],
  notes: string[],
  unknown: string[],
): [Obj, Config | string | null] {
  const outer = type === 'qwen2_5_omni';
  const thinker = outer ? json.thinker_config : json;
  const where = outer ? 'thinker_config.text_config' : 'text_config';
  if (!isObject(thinker) || !isObject(thinker.text_config))
    throw new ImportError(where, `${where}: missing; Qwen2.5-Omni's language model is the thinker's text_config`);
  if (outer) {
    for (const k of Object.keys(json)) {
      if (k === 'talker_config' || k === 'token2wav_config') {
        if (json[k] !== null)
          warnings.push(
            `${k}: Qwen2.5-Omni's ${k === 'talker_config' ? 'talker (a second decoder writing speech codes)' : 'token2wav (DiT and BigVGAN vocoder)'} is not modelled; llmem counts the thinker's language model only`,
          );
      } else if (!['thinker_config', 'enable_audio_output', 'enable_talker'].includes(k) && !IRRELEVANT.has(k))
        unknown.push(k);
    }
  }
  const prefix = outer ? 'thinker_config.' : '';
  const tower = visionTower({ vision_config: thinker.vision_config }, 'qwen2_5_vl', notes);
  if (typeof tower === 'string') warnings.push(`${prefix}${tower}`);
  for (const k of Object.keys(thinker)) {
    if (k === 'vision_config') continue;
    if (k === 'audio_config' && thinker[k] !== null)
      warnings.push(multimodalWarning(`${prefix}${k}`, thinker[k] as Json));
    else if (!OMNI_THINKER_KEYS.has(k) && !IRRELEVANT.has(k)) unknown.push(`${prefix}${k}`);
  }
  const wrapper: Obj = { model_type: 'qwen2_5_omni_thinker', text_config: thinker.text_config };
  for (const k of ['_name_or_path', 'architectures']) if (json[k] !== undefined) wrapper[k] = json[k];
  return [wrapper, typeof tower === 'string' ? null : tower];
}

/** The mapping to read a model_type with: its own, that of its modeling class, or the generic one. */
/** Falcon's new decoder architecture (grouped K/V, two norms): the key, else (a remote-code RefinedWeb config) the
 * presence of n_head_kv (convert_custom_code_checkpoint.py @15ea02a). */
function falconNewArchitecture(cfg: Record<string, Json>, flag: (k: string) => boolean | undefined): boolean {
  if (cfg.new_decoder_architecture === undefined && cfg.n_head_kv !== undefined && cfg.n_head_kv !== null) return true;
  return flag('new_decoder_architecture') ?? false;
}

function familyOf(type: string, architectures: Json | undefined, notes: string[]): string {
  const decoder = DECODER_OF[type];
  if (decoder) {
    const same = type === 'deepseek_v32' ? 'its decoder with an indexer beside the attention' : 'the same decoder';
    notes.push(`model_type "${type}" read as ${decoder} (${same}; ${type} class defaults)`);
    return decoder;
  }
  const own = OWN_FAMILY[type];
  if (own) return own;
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

/**
 * The output head the checkpoint's class builds: a decoder's *ForSequenceClassification / *ForTokenClassification
 * (reward models: transformers modeling_llama.py LlamaForSequenceClassification, a bias-free score Linear(hidden,
 * num_labels) on one token) or its bare *Model (embedding models: e5-mistral's MistralModel) has no vocabulary-sized
 * head and no logits; config v1's classification head is BERT's pooler (read for bert), so these count none.
 */
function headOf(architectures: Json | undefined, family: string, notes: string[]): string {
  const arch = Array.isArray(architectures) && typeof architectures[0] === 'string' ? architectures[0] : undefined;
  // ChatGLM's remote ChatGLMModel builds its output_layer (the LM head) itself
  if (!arch || family === 'bert' || family === 'chatglm') return 'lm';
  if (/For(Sequence|Token)Classification$/.test(arch)) {
    notes.push(
      `architectures ${arch}: a score head of hidden x num_labels (a few thousand parameters, not counted) instead of the vocabulary-sized lm_head; no logits over the vocabulary (model.head "none")`,
    );
    return 'none';
  }
  // (GPT2LMHeadModel, QWenLMHeadModel and T5WithLMHeadModel keep their lm_head)
  if (/^[A-Za-z0-9]+Model$/.test(arch) && !/Head|For[A-Z]/.test(arch)) {
    notes.push(`architectures ${arch}: the bare decoder, no lm_head and no logits (model.head "none")`);
    return 'none';
  }
  return 'lm';
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

/** ChatGLMConfig aliases (num_layers / num_hidden_layers, padded_vocab_size / vocab_size): the first is the one the
 * modeling reads; the other is read too, and a different value is named. */
function chatglmAliases(cfg: Obj, used: Set<string>, notes: string[], [key, alias]: [string, string]): void {
  used.add(key);
  used.add(alias);
  if (cfg[key] !== undefined && cfg[alias] !== undefined && cfg[key] !== cfg[alias])
    notes.push(
      `${alias} ${JSON.stringify(cfg[alias])} differs from ${key} ${JSON.stringify(cfg[key])}: ChatGLM's modeling reads ${key}`,
    );
}

/** CohereDecoderLayer / Cohere2DecoderLayer (modular_cohere.py 03ea97a, modular_cohere2.py 64c2ae8): one input_layernorm
 * feeds attention and the MLP, summed with the residual; CohereAttention's use_qk_norm adds q_norm and k_norm, each a
 * CohereLayerNorm of (heads, head_dim) / (kv_heads, head_dim) weights; CohereForCausalLM scales the logits by logit_scale. */
function cohereExtras(family: string, get: Get, flag: Flag, model: Config, warnings: string[]): void {
  model.parallel_block = true;
  model.norms_per_layer = 1;
  // one weight per query and per key channel: config v1's "full" q/k norm (heads x head_dim + kv_heads x head_dim)
  if (family === 'cohere' && flag('use_qk_norm')) model.qk_norm = 'full';
  const scale = get('logit_scale');
  if (typeof scale === 'number' && scale !== 1)
    warnings.push(
      `logit_scale ${scale}: CohereForCausalLM multiplies the logits by it out of place, one more logits-sized tensor at the head that llmem does not add`,
    );
}

/** HunYuanAttention (remote code, code-search corpus file id 69227337646): qkv_proj / o_proj with attention_bias,
 * query_layernorm / key_layernorm over head_dim when use_qk_norm; use_cla shares K/V across cla_share_factor layers and
 * use_mla is latent attention, neither in config v1. HunYuanMoEV1Attention (modular_hunyuan_v1_moe.py 05bf8f6): both
 * norms always. */
function hunyuanAttention(type: string, get: Get, flag: Flag, model: Config): void {
  if (flag('use_cla'))
    throw new ImportError(
      'use_cla',
      'use_cla: cross-layer attention (layers that reuse the K/V of the layer before, without k/v projections) is not in config v1; not imported rather than counted as another model',
    );
  get('cla_share_factor');
  if (flag('use_mla'))
    throw new ImportError(
      'use_mla',
      "use_mla: Hunyuan's latent attention is not read (config v1's model.mla is DeepSeek's); not imported rather than counted as another model",
    );
  if (type === 'hunyuan_v1_moe' || flag('use_qk_norm')) model.qk_norm = 'head';
  get('use_rotary_pos_emb');
}

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
function moe(
  family: string,
  get: Get,
  int: Int,
  flag: Flag,
  model: Config,
  warnings: string[],
  notes: string[],
  type: string,
): Json {
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
    case 'minicpm':
      return minicpmMoe(base, int, model);
    case 'mixtral':
    case 'phimoe':
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
    case 'dbrx':
      // DbrxFFN (modular_dbrx.py 05a8405) in every block: DbrxRouter (no bias) and moe_num_experts GLU experts of
      // ffn_hidden_size, moe_top_k per token
      return {
        ...base,
        experts: int(['ffn_config.moe_num_experts'], true)!,
        top_k: int(['ffn_config.moe_top_k'], true)!,
        expert_ffn_hidden: model.ffn_hidden as number,
      };
    case 'hunyuan':
      return hunyuanMoe(base, type !== 'hunyuan_v1_moe', get, int, flag, model, warnings);
    default:
      return genericMoe(base, int, flag, model, warnings);
  }
}

/** HunYuanMoE (remote HunYuanMoE / HunYuanMLP, code-search corpus file id 69227337646): num_experts experts of
 * moe_intermediate_size (else intermediate_size), top moe_topk, a router without bias and, with use_mixed_mlp_moe, a shared
 * MLP (moe_intermediate_size or intermediate_size) x num_shared_expert wide; each may be a per-layer list; the first
 * moe_layer_num_skipped layers keep a dense MLP of intermediate_size. transformers' HunYuanMoEV1 (modular_hunyuan_v1_moe.py
 * 05bf8f6): experts and one shared MLP of intermediate_size in every layer. */
function hunyuanMoe(
  base: Config,
  remote: boolean,
  get: Get,
  int: Int,
  flag: Flag,
  model: Config,
  warnings: string[],
): Config | null {
  const layers = model.layers as number;
  /** A whole number, or a per-layer list of one value (config v1 gives every MoE layer the same shape). */
  const per = (key: string, required = false): number | undefined => {
    const v = get(key);
    if (v === undefined || v === null) {
      if (required) throw new ImportError(key, `${key}: missing (needed for the model shape)`);
      return undefined;
    }
    const list = Array.isArray(v) ? v : [v];
    const first = list[0];
    if (Array.isArray(v) && v.length !== layers)
      throw new ImportError(key, `${key}: ${v.length} entries for ${layers} layers (num_hidden_layers)`);
    if (typeof first !== 'number' || !Number.isSafeInteger(first) || first < 0)
      throw new ImportError(key, `${key}: must be a whole number or a list of them, not ${JSON.stringify(v)}`);
    if (list.some((x) => x !== first))
      throw new ImportError(
        key,
        `${key}: the layers differ (${[...new Set(list)].join(', ')}); config v1 gives every MoE layer the same experts, top-k and widths`,
      );
    return first;
  };
  const experts = per('num_experts') ?? 1;
  const topK = per('moe_topk') ?? 1;
  // the remote HunYuanDecoderLayer builds HunYuanMoE only for num_experts > 1; HunYuanMoEV1DecoderLayer always
  if (remote && experts <= 1) return null;
  const dense = model.ffn_hidden as number;
  const width = remote ? (per('moe_intermediate_size') ?? dense) : dense;
  let shared = 0;
  if (!remote) shared = dense;
  else if (flag('use_mixed_mlp_moe')) shared = width * per('num_shared_expert', true)!;
  const skipped = remote ? (int(['moe_layer_num_skipped'], false) ?? 0) : 0;
  get('moe_drop_tokens');
  get('capacity_factor');
  warnings.push(
    'HunYuanMoE routes with capacity-bounded one-hot dispatch masks (topkgating: tokens x experts x capacity, einsum dispatch and combine); counted as a dropless MoE (model.moe.capacity_factor null), as grouped-GEMM kernels run it: the masks and any dropped tokens are not modelled',
  );
  return {
    ...base,
    experts,
    top_k: topK,
    expert_ffn_hidden: width,
    shared_experts: shared > 0 ? 1 : 0,
    shared_expert_ffn_hidden: shared,
    dense_layers: skipped,
  };
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
  // moe_num_experts / moe_topk / moe_num_shared_experts: Aria's AriaTextConfig (configuration_aria.py)
  const experts = int(['num_local_experts', 'num_experts', 'n_routed_experts', 'moe_num_experts'], false);
  if (!experts) return null;
  const r: Config = {
    ...base,
    experts,
    top_k: int(['num_experts_per_tok', 'moe_top_k', 'top_k', 'moe_topk'], true)!,
    expert_ffn_hidden:
      int(['moe_intermediate_size', 'expert_intermediate_size'], false) ?? (model.ffn_hidden as number),
  };
  const shared = int(['n_shared_experts', 'num_shared_experts', 'moe_num_shared_experts'], false);
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
