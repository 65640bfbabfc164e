/* Parameter counts per module, exact for HF-style decoders (docs/memory-model.md
 * §2.4; Llama-2-7B = 6,738,415,616, Llama-3-8B = 8,030,261,248), with the
 * TP / EP / ETP split of each module on one rank (Megatron column/row
 * parallel linears; docs/memory-model.md §3.1). */
#include <math.h>

#include "internal.h"

/* Encoder layers come first; the lists and the MoE rule index the decoder's layers. */
int layer_mixer(const plan *pl, int layer) {
  if (layer < (int)pl->in->encoder_layers) return LLMEM_MIXER_ENCODER;
  layer -= (int)pl->in->encoder_layers;
  return pl->mixer_period ? pl->mixer_pattern[layer % pl->mixer_period] : LLMEM_MIXER_FULL;
}

int layer_mlp(const plan *pl, int layer) {
  if (layer < (int)pl->in->encoder_layers) return LLMEM_LMLP_DENSE;
  layer -= (int)pl->in->encoder_layers;
  if (pl->mlp_period) return pl->mlp_pattern[layer % pl->mlp_period];
  if (!pl->moe || layer < (int)pl->in->moe_dense_layers) return LLMEM_LMLP_DENSE;
  /* first k dense, then every n-th */
  return ((layer - (int)pl->in->moe_dense_layers) % (int)pl->in->moe_layer_freq) == 0 ? LLMEM_LMLP_MOE
                                                                                      : LLMEM_LMLP_DENSE;
}

int layer_is_moe(const plan *pl, int layer) { return layer_mlp(pl, layer) == LLMEM_LMLP_MOE; }

/* Layers [a, b) whose kind repeats every `period` layers: one period looked up, each kind counted by its repeats. */
static void count_periodic(const plan *pl, int a, int b, long long period, int *counts, int *first_at) {
  long long span = b - a < period ? b - a : period;
  for (int i = a; i < a + span; i++) {
    int k = layer_kind(pl, i);
    counts[k] += (int)((b - 1 - i) / period) + 1;
    if (first_at[k] < 0) first_at[k] = i;
  }
}

static long long gcd_ll(long long a, long long b) { return b ? gcd_ll(b, a % b) : a; }

void layer_kind_counts(const plan *pl, int first, int n, int *counts, int *first_at) {
  for (int k = 0; k < LAYER_KIND_COUNT; k++) counts[k] = 0, first_at[k] = -1;
  int end = first + n, enc = (int)pl->in->encoder_layers;
  /* the encoder's layers are of one kind; the decoder's mixers repeat every mixer_period, its MLPs every
   * mlp_period, else dense for the first dense_layers and then MoE every layer_freq (layer_mlp) */
  int dense_end = enc + (!pl->mlp_period && pl->moe ? (int)pl->in->moe_dense_layers : 0);
  long long mixers = pl->mixer_period ? pl->mixer_period : 1;
  long long mlps = pl->mlp_period ? pl->mlp_period : pl->moe ? (long long)pl->in->moe_layer_freq : 1;
  long long both = mixers / gcd_ll(mixers, mlps) * mlps;
  int a = first, b = end < enc ? end : enc;
  if (a < b) count_periodic(pl, a, b, 1, counts, first_at);
  a = first > enc ? first : enc, b = end < dense_end ? end : dense_end;
  if (a < b) count_periodic(pl, a, b, mixers, counts, first_at);
  a = first > dense_end ? first : dense_end;
  if (a < end) count_periodic(pl, a, end, both, counts, first_at);
}


/* Attention on one rank. TP splits heads; KV heads below tp are replicated
 * (docs/config.md: "kv_heads smaller than tp is valid ... replicated"). */
/* A tensor of `elems` on the list (NULL: not listing); past the end it folds into the last. */
static void add_tensor(param_list *t, double elems) {
  if (!t || elems <= 0) return;
  if (t->count < LAYER_TENSORS_MAX) t->elems[t->count++] = elems;
  else t->elems[LAYER_TENSORS_MAX - 1] += elems;
}
/* PEFT LoraLayer: lora_A (r x d_in) and lora_B (d_out x r) of one adapted linear */
static double add_adapter(layer_tensors *out, double r, double d_in, double d_out) {
  if (out) add_tensor(&out->adapters, r * d_in), add_tensor(&out->adapters, d_out * r);
  return r * (d_in + d_out);
}
static param_list *params_of(layer_tensors *out) { return out ? &out->params : 0; }

static void attention_params(const plan *pl, layer_params *lp, int lora_on, double t, layer_tensors *out) {
  param_list *ts = params_of(out);
  double h = pl->in->hidden, r = pl->in->lora_rank;
  int targets = lora_on ? (int)pl->in->lora_targets : 0;
  if (pl->mla) {
    /* DeepSeek-V3 modeling: q_a_proj / q_a_layernorm / q_b_proj (or q_proj),
     * kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj. Down-projections
     * are replicated over TP (Megatron MLA: linear_q_down_proj is not split). */
    double a = pl->in->heads / t, qk = pl->in->mla_qk_nope_head_dim + pl->in->mla_qk_rope_head_dim;
    double q_up = 0, q_up_in = 0;
    if (pl->q_lora_rank > 0) {
      double down = h * pl->q_lora_rank;
      add_tensor(ts, down);
      add_tensor(ts, pl->q_lora_rank * pl->norm_width); /* q_a_layernorm */
      lp->matrix_count += down;
      lp->matrix_dims_count += h + pl->q_lora_rank;
      lp->vector_count += pl->q_lora_rank * pl->norm_width;
      q_up = pl->q_lora_rank * a * qk;
      q_up_in = pl->q_lora_rank;
    } else {
      q_up = h * a * qk;
      q_up_in = h;
    }
    double kv_down = h * (pl->in->mla_kv_lora_rank + pl->in->mla_qk_rope_head_dim);
    double kv_up = pl->in->mla_kv_lora_rank * a * (pl->in->mla_qk_nope_head_dim + pl->in->mla_v_head_dim);
    double o = a * pl->in->mla_v_head_dim * h;
    add_tensor(ts, q_up);
    add_tensor(ts, kv_down);
    add_tensor(ts, pl->in->mla_kv_lora_rank * pl->norm_width); /* kv_a_layernorm */
    add_tensor(ts, kv_up);
    add_tensor(ts, o);
    lp->matrix_count += q_up + kv_down + kv_up + o;
    lp->matrix_dims_count += (q_up_in + a * qk) + (h + pl->in->mla_kv_lora_rank + pl->in->mla_qk_rope_head_dim) +
                             (pl->in->mla_kv_lora_rank + a * (pl->in->mla_qk_nope_head_dim + pl->in->mla_v_head_dim)) +
                             (a * pl->in->mla_v_head_dim + h);
    lp->vector_count += pl->in->mla_kv_lora_rank * pl->norm_width;
    lp->quantizable_count += (pl->q_lora_rank > 0 ? h * pl->q_lora_rank : 0) + q_up + kv_down + kv_up + o;
    lp->largest_linear_count = max2(lp->largest_linear_count, max2(max2(q_up, kv_up), max2(o, kv_down)));
    if (targets & (1 << LLMEM_LT_Q)) lp->lora_count += add_adapter(out, r, q_up_in, a * qk);
    if (targets & ((1 << LLMEM_LT_K) | (1 << LLMEM_LT_V)))
      lp->lora_count +=
          add_adapter(out, r, pl->in->mla_kv_lora_rank, a * (pl->in->mla_qk_nope_head_dim + pl->in->mla_v_head_dim));
    if (targets & (1 << LLMEM_LT_O)) lp->lora_count += add_adapter(out, r, a * pl->in->mla_v_head_dim, h);
    if (pl->o_bias) lp->vector_count += h, add_tensor(ts, h);
    return;
  }
  double d = pl->head_dim;
  double q_out = pl->in->heads * d / t;
  double kv_out = max2(pl->kv_heads / t, 1) * d;
  /* an output gate doubles q_proj: query and gate per head (transformers
   * models/qwen3_next/modeling_qwen3_next.py Qwen3NextAttention, q_proj * 2) */
  double q_rows = (int)pl->in->attn_output_gate != 0 ? 2 * q_out : q_out;
  double q = h * q_rows, k = h * kv_out, v = h * kv_out, o = q_out * h;
  /* q, k, v (with their biases), o; then the norms and sinks the attention module holds */
  double qkv_bias = pl->qkv_bias ? 1 : 0;
  add_tensor(ts, q), add_tensor(ts, qkv_bias * q_out), add_tensor(ts, k), add_tensor(ts, qkv_bias * kv_out);
  add_tensor(ts, v), add_tensor(ts, qkv_bias * kv_out), add_tensor(ts, o), add_tensor(ts, pl->o_bias ? h : 0);
  lp->matrix_count += q + k + v + o;
  lp->matrix_dims_count += (h + q_rows) + 2 * (h + kv_out) + (q_out + h);
  lp->quantizable_count += q + k + v + o;
  lp->largest_linear_count = max2(lp->largest_linear_count, max2(q, o));
  if (pl->qkv_bias) lp->matrix_count += q_out + 2 * kv_out;                /* column-parallel biases split with TP */
  if (pl->o_bias) lp->vector_count += h;                                   /* o_proj bias, replicated */
  if ((int)pl->in->attn_sinks != 0) lp->vector_count += pl->in->heads / t; /* GPT-OSS per-head sink logits */
  if ((int)pl->in->qk_norm == LLMEM_QK_NORM_HEAD) lp->vector_count += 2 * d * pl->norm_width;
  if ((int)pl->in->qk_norm == LLMEM_QK_NORM_FULL) lp->vector_count += (q_out + kv_out) * pl->norm_width;
  if ((int)pl->in->attn_sinks != 0) add_tensor(ts, pl->in->heads / t);
  if ((int)pl->in->qk_norm == LLMEM_QK_NORM_HEAD)
    add_tensor(ts, d * pl->norm_width), add_tensor(ts, d * pl->norm_width);
  if ((int)pl->in->qk_norm == LLMEM_QK_NORM_FULL)
    add_tensor(ts, q_out * pl->norm_width), add_tensor(ts, kv_out * pl->norm_width);
  /* PEFT LoraLayer: A (r x d_in) + B (d_out x r) per adapted linear (peft tuners/lora/layer.py) */
  if (targets & (1 << LLMEM_LT_Q)) lp->lora_count += add_adapter(out, r, h, q_out);
  if (targets & (1 << LLMEM_LT_K)) lp->lora_count += add_adapter(out, r, h, kv_out);
  if (targets & (1 << LLMEM_LT_V)) lp->lora_count += add_adapter(out, r, h, kv_out);
  if (targets & (1 << LLMEM_LT_O)) lp->lora_count += add_adapter(out, r, q_out, h);
}

/* Gated DeltaNet on one rank (transformers models/qwen3_next/modeling_qwen3_next.py
 * Qwen3NextGatedDeltaNet): in_proj_qkvz h x (2 key_dim + 2 value_dim), in_proj_ba
 * h x 2 Hv, a depthwise conv1d over q, k, v (no bias), dt_bias and A_log per value
 * head, a gated RMSNorm of head_v_dim, out_proj value_dim x h. TP splits the heads. */
static void linear_attention_params(const plan *pl, layer_params *lp, double t, param_list *ts) {
  double h = pl->in->hidden;
  double key_dim = pl->in->linear_key_heads * pl->in->linear_key_head_dim / t,
         value_dim = pl->in->linear_value_heads * pl->in->linear_value_head_dim / t;
  double hv = pl->in->linear_value_heads / t, conv_dim = 2 * key_dim + value_dim;
  double qkvz = h * (2 * key_dim + 2 * value_dim), ba = h * 2 * hv, out = value_dim * h;
  add_tensor(ts, qkvz), add_tensor(ts, ba), add_tensor(ts, conv_dim * pl->in->linear_conv_kernel);
  add_tensor(ts, hv), add_tensor(ts, hv), add_tensor(ts, pl->in->linear_value_head_dim * pl->norm_width);
  add_tensor(ts, out);
  lp->matrix_count += qkvz + ba + out;
  lp->matrix_dims_count += (h + 2 * key_dim + 2 * value_dim) + (h + 2 * hv) + (value_dim + h);
  lp->quantizable_count += qkvz + ba + out;
  lp->largest_linear_count = max2(lp->largest_linear_count, max2(qkvz, out));
  lp->vector_count += conv_dim * pl->in->linear_conv_kernel + 2 * hv + pl->in->linear_value_head_dim * pl->norm_width;
}

/* Mamba-2 on one rank (transformers models/nemotron_h/modeling_nemotron_h.py
 * NemotronHMamba2Mixer; Megatron-LM megatron/core/ssm/mamba_mixer.py splits
 * d_inner, heads and groups over TP): in_proj h x (2 d_inner + 2 G N + H),
 * conv1d over x, B, C (conv_dim = d_inner + 2 G N) with its bias, dt_bias,
 * A_log and D per head, a gated RMSNorm of d_inner, out_proj d_inner x h. */
static void ssm_params(const plan *pl, layer_params *lp, double t, param_list *ts) {
  double h = pl->in->hidden;
  double heads = pl->in->ssm_heads / t, inner = heads * pl->in->ssm_head_dim,
         bc = 2 * pl->in->ssm_groups / t * pl->in->ssm_state_size;
  double conv_dim = inner + bc, in_cols = 2 * inner + bc + heads;
  double in_proj = h * in_cols, out_proj = inner * h;
  /* in_proj (+bias), conv1d weight (+bias), dt_bias, A_log, D, norm, out_proj (+bias) */
  double bias = (int)pl->in->ssm_bias != 0;
  add_tensor(ts, in_proj), add_tensor(ts, bias * in_cols), add_tensor(ts, conv_dim * pl->in->ssm_conv_kernel);
  add_tensor(ts, (int)pl->in->ssm_conv_bias != 0 ? conv_dim : 0), add_tensor(ts, heads), add_tensor(ts, heads);
  add_tensor(ts, heads), add_tensor(ts, inner * pl->norm_width), add_tensor(ts, out_proj), add_tensor(ts, bias * h);
  lp->matrix_count += in_proj + out_proj;
  lp->matrix_dims_count += (h + in_cols) + (inner + h);
  lp->quantizable_count += in_proj + out_proj;
  lp->largest_linear_count = max2(lp->largest_linear_count, max2(in_proj, out_proj));
  lp->vector_count += conv_dim * pl->in->ssm_conv_kernel + ((int)pl->in->ssm_conv_bias != 0 ? conv_dim : 0) +
                      3 * heads + inner * pl->norm_width;
  if ((int)pl->in->ssm_bias != 0) lp->vector_count += in_cols + h; /* in_proj bias split with TP, out_proj bias */
}

/* One MLP of intermediate size f (per rank, already split). */
static void mlp_params(const plan *pl, double f, layer_params *lp, int lora_on, int expert, layer_tensors *out) {
  double h = pl->in->hidden, r = pl->in->lora_rank;
  double mats = pl->gated ? 3 : 2;
  double w = mats * h * f;
  double dims = mats * (h + f);
  /* gate (+bias), up (+bias), down (+bias); an expert's on its own list (listed grouped by the caller) */
  param_list *ts = expert ? 0 : params_of(out);
  double bias = pl->mlp_bias ? 1 : 0;
  if (pl->gated) add_tensor(ts, h * f), add_tensor(ts, bias * f);
  add_tensor(ts, h * f), add_tensor(ts, bias * f), add_tensor(ts, f * h), add_tensor(ts, bias * h);
  if (expert) {
    lp->expert_count += w;
    lp->expert_dims_count += dims;
    if (pl->mlp_bias) lp->expert_count += (mats - 1) * f + h;
  } else {
    lp->matrix_count += w;
    lp->matrix_dims_count += dims;
    if (pl->mlp_bias) {
      lp->matrix_count += (mats - 1) * f; /* column-parallel biases */
      lp->vector_count += h;              /* down_proj bias, replicated */
    }
  }
  lp->quantizable_count += w;
  lp->largest_linear_count = max2(lp->largest_linear_count, h * f);
  if (lora_on && !expert) {
    int t = (int)pl->in->lora_targets;
    if (pl->gated && (t & (1 << LLMEM_LT_GATE))) lp->lora_count += add_adapter(out, r, h, f);
    if (t & (1 << LLMEM_LT_UP)) lp->lora_count += add_adapter(out, r, h, f);
    if (t & (1 << LLMEM_LT_DOWN)) lp->lora_count += add_adapter(out, r, f, h);
  }
}

static void mixer_params(const plan *pl, int mixer, layer_params *lp, int lora_on, double tp, layer_tensors *out) {
  if (mixer_is_attention(mixer)) attention_params(pl, lp, lora_on, tp, out);
  /* a decoder layer of an encoder-decoder stack adds cross-attention: q, k, v, o over the encoder's
   * output (transformers models/t5/modeling_t5.py T5LayerCrossAttention) */
  if (pl->in->encoder_layers > 0 && mixer != LLMEM_MIXER_ENCODER) attention_params(pl, lp, lora_on, tp, out);
  else if (mixer == LLMEM_MIXER_LINEAR) linear_attention_params(pl, lp, tp, params_of(out));
  else if (mixer == LLMEM_MIXER_SSM) ssm_params(pl, lp, tp, params_of(out));
}

/* layer_params_split, listing the tensors into `out` when given (layer_tensors_on_rank). */
static layer_params layer_params_listed(const plan *pl, int layer, model_split split, layer_tensors *out) {
  layer_params lp = {0};
  int lora_on = (int)pl->in->ft_method != LLMEM_FT_FULL;
  double h = pl->in->hidden;
  int mixer = layer_mixer(pl, layer), mlp = layer_mlp(pl, layer);
  mixer_params(pl, mixer, &lp, lora_on, split.tp, out);
  double attn_total = lp.matrix_count + lp.vector_count;
  /* norms_per_layer counts both sublayers' norms; a layer without a mixer or
   * an MLP (Nemotron-H's blocks: one mixer or one MLP each) has half of them */
  double sublayers = (mixer != LLMEM_MIXER_NONE) + (mlp != LLMEM_LMLP_NONE) +
                     (pl->in->encoder_layers > 0 && mixer != LLMEM_MIXER_ENCODER); /* the cross-attention's norm */
  double norms = pl->in->norms_per_layer * sublayers / 2;
  lp.vector_count += norms * pl->norm_width * h;
  if (mlp == LLMEM_LMLP_NONE) {
    lp.largest_module_count = attn_total;
  } else if (mlp == LLMEM_LMLP_DENSE) {
    mlp_params(pl, pl->in->ffn_hidden / split.tp, &lp, lora_on, 0, out);
    lp.largest_module_count = max2(attn_total, (pl->gated ? 3 : 2) * h * pl->in->ffn_hidden / split.tp);
  } else {
    double experts_here = pl->in->moe_experts / split.ep;
    double f = pl->expert_ffn / split.etp;
    layer_params one = {0};
    mlp_params(pl, f, &one, 0, 1, 0);
    lp.expert_count += one.expert_count * experts_here;
    lp.expert_dims_count += one.expert_dims_count * experts_here;
    /* a quantized base's routed experts: quantized where they are linear modules, else kept in the base dtype
     * (training.finetune.quant_experts; core/profiles.def) */
    if (pl->quant_experts) lp.quantizable_count += one.quantizable_count * experts_here;
    lp.largest_linear_count = max2(lp.largest_linear_count, one.largest_linear_count);
    /* the rank's experts as grouped weights, w1 w2 w3 [experts, ...] (torchtitan models/moe GroupedExperts),
     * then the router (its gate, replicated) */
    for (int w = 0; w < (pl->gated ? 3 : 2); w++) add_tensor(params_of(out), experts_here * h * f);
    /* router: Megatron counts h*E (+E bias), replicated (docs/memory-model.md §2.1, §11 #6) */
    double router_bias = (int)pl->in->moe_router_bias != 0 ? pl->in->moe_experts : 0;
    lp.vector_count += h * pl->in->moe_experts + router_bias;
    add_tensor(params_of(out), h * pl->in->moe_experts), add_tensor(params_of(out), router_bias);
    if (pl->in->moe_shared_experts > 0) {
      for (int i = 0; i < (int)pl->in->moe_shared_experts; i++)
        mlp_params(pl, pl->shared_ffn / split.tp, &lp, lora_on, 0, out);
      if ((int)pl->in->moe_shared_gate != 0) lp.vector_count += h, add_tensor(params_of(out), h);
    }
    lp.largest_module_count = max2(attn_total, one.expert_count);
  }
  /* the norms last, as the layer registers them (after its attention and MLP modules) */
  for (double n = 0; n < norms * pl->norm_width; n++) add_tensor(params_of(out), h);
  return lp;
}

layer_params layer_params_split(const plan *pl, int layer, model_split split) {
  return layer_params_listed(pl, layer, split, 0);
}

layer_tensors layer_tensors_on_rank(const plan *pl, int layer) {
  layer_tensors t = {0};
  layer_params_listed(pl, layer, (model_split){pl->in->tp, pl->in->ep, pl->in->etp}, &t);
  return t;
}

layer_params layer_params_on_rank(const plan *pl, int layer) {
  return layer_params_split(pl, layer, (model_split){pl->in->tp, pl->in->ep, pl->in->etp});
}

/* Full-model count of one layer (no TP/EP split), for totals. */
double layer_params_total(const plan *pl, int layer, int active_only) {
  layer_params lp = layer_params_split(pl, layer, MODEL_WHOLE);
  double experts = lp.expert_count;
  if (active_only && pl->moe && pl->in->moe_experts > 0) experts *= pl->in->moe_top_k / pl->in->moe_experts;
  return lp.matrix_count + lp.vector_count + experts;
}

/* One MTP module (Megatron-LM multi_token_prediction.py MultiTokenPredictionLayer,
 * 09ebca7): enorm and hnorm over the embedding and the hidden state, eh_proj
 * column-parallel from 2h to h, one transformer layer with the last decoder
 * layer's spec, final_layernorm; the embedding and the output layer are the
 * model's (DeepSeek-V3 README_WEIGHTS.md: embed_tokens and shared_head.head shared). */
layer_params mtp_params_on_rank(const plan *pl) {
  layer_params lp = layer_params_on_rank(pl, (int)pl->layers - 1);
  double h = pl->in->hidden, proj = 2 * h * h / pl->in->tp;
  lp.matrix_count += proj;
  lp.matrix_dims_count += 2 * h + h / pl->in->tp;
  lp.quantizable_count += proj;
  lp.vector_count += 3 * pl->norm_width * h;
  return lp;
}

/* Word embedding + learned positions + token types (BERT) + embedding norm. */
double embedding_params(const plan *pl) {
  double h = pl->in->hidden;
  return pl->in->vocab * h + (pl->learned_pos ? pl->in->max_positions * h : 0) + pl->in->type_vocab * h +
         pl->in->embedding_norm * pl->norm_width * h;
}

double head_params(const plan *pl) {
  double h = pl->in->hidden;
  /* HF *ForSequenceClassification on BERT: pooler (h x h + h) + classifier */
  if ((int)pl->in->head == LLMEM_HEAD_CLASSIFICATION) return h * h + h + h * pl->in->num_labels + pl->in->num_labels;
  if ((int)pl->in->head == LLMEM_HEAD_NONE) return 0;
  return ((int)pl->in->tied_embeddings != 0 ? 0 : pl->in->vocab * h) +
         ((int)pl->in->lm_head_bias != 0 ? pl->in->vocab : 0);
}

/* The trainable copies of modules trained in full beside the adapters: PEFT's
 * ModulesToSaveWrapper deep-copies each listed module and freezes the original
 * (huggingface/peft 5d602fd src/peft/utils/other.py ModulesToSaveWrapper.update);
 * a head tied to the embedding shares the embedding copy's weight (tied_module),
 * so a tied pair is one copy. embedding/head: the counts where the copy is made. */
double full_module_params(const plan *pl, double embedding, double head) {
  double n = 0;
  if (pl->full_modules & (1 << LLMEM_FM_EMBEDDING)) n += embedding;
  if (pl->full_modules & (1 << LLMEM_FM_HEAD))
    n += head > 0
             ? head
             : ((int)pl->in->tied_embeddings != 0 && !(pl->full_modules & (1 << LLMEM_FM_EMBEDDING)) ? embedding : 0);
  return n;
}

double lora_params_total(const plan *pl) {
  if ((int)pl->in->ft_method == LLMEM_FT_FULL) return 0;
  /* by kind: whole adapter counts sum exactly in any order (the per-layer sum's bits) */
  int counts[LAYER_KIND_COUNT], first_at[LAYER_KIND_COUNT];
  layer_kind_counts(pl, 0, (int)pl->layers, counts, first_at);
  double n = 0;
  for (int k = 0; k < LAYER_KIND_COUNT; k++)
    if (counts[k]) n += counts[k] * layer_params_split(pl, first_at[k], MODEL_WHOLE).lora_count;
  return n + full_module_params(pl, embedding_params(pl), head_params(pl));
}

void model_param_counts(const plan *pl, double *total, double *active, double *trainable) {
  int n = (int)pl->layers;
  /* each layer kind (mixer x MLP) counted once, times its layers */
  double kind_total[LAYER_KIND_COUNT], kind_active[LAYER_KIND_COUNT];
  int kind_n[LAYER_KIND_COUNT], first_at[LAYER_KIND_COUNT];
  layer_kind_counts(pl, 0, n, kind_n, first_at);
  for (int k = 0; k < LAYER_KIND_COUNT; k++)
    if (kind_n[k]) {
      kind_total[k] = layer_params_total(pl, first_at[k], 0);
      kind_active[k] = layer_params_total(pl, first_at[k], 1);
    }
  double outer = embedding_params(pl) + head_params(pl) + pl->in->final_norm * pl->norm_width * pl->in->hidden;
  double t = 0, a = 0, frozen = 0;
  if (pl->in->encoder_layers > 0) /* the encoder's final norm, and each stack's relative position bias (T5) */
    outer += pl->in->final_norm * pl->norm_width * pl->in->hidden + 2 * pl->in->relative_buckets * pl->in->heads;
  else outer += pl->in->relative_buckets * pl->in->heads;
  if (pl->in->vision_layers > 0) { /* the vision tower and its projector run for every image */
    vision_cost v = vision_of(pl);
    outer += v.tower_params + v.projector_params;
    frozen = v.frozen_params;
  }
  if (pl->in->mtp_layers > 0) { /* MTP modules: the last layer's kind plus eh_proj and three norms */
    double extra = 2 * pl->in->hidden * pl->in->hidden + 3 * pl->norm_width * pl->in->hidden;
    outer += pl->in->mtp_layers * (layer_params_total(pl, n - 1, 0) + extra);
    a += pl->in->mtp_layers * (layer_params_total(pl, n - 1, 1) - layer_params_total(pl, n - 1, 0));
  }
  for (int k = 0; k < LAYER_KIND_COUNT; k++) /* in kind order (a uniform model adds dense, then MoE, as always) */
    if (kind_n[k]) t += kind_n[k] * kind_total[k], a += kind_n[k] * kind_active[k];
  t += outer;
  a += outer;
  *total = t;
  *active = a;
  *trainable = (int)pl->in->ft_method == LLMEM_FT_FULL ? t - frozen : lora_params_total(pl);
}
