/* Published estimators, reproduced operation by operation (docs/memory-model.md
 * §2.1, §2.2, §3.1, §3.2, §4.1, §4.2, §5.1, §5.2, §7.2, §7.5, §7.6), and the
 * mapping from a config to their arguments. */
#include <math.h>

#include "compat.h"
#include "internal.h"


static int pattern_at(const megatron_args *a, int layer) {
  if (a->num_experts <= 0) return 0;
  return a->is_moe_layer ? a->is_moe_layer(a->pattern_ctx, layer) : 1;
}

/* The layer pattern (MLM theoretical_memory_usage.py @d98e8a64): MoE and
 * dense decoder layers, and the MTP layers, of the last layer's kind. */
typedef struct {
  double moe, dense, mtp_moe, mtp_dense;
} megatron_layer_counts;

static megatron_layer_counts megatron_count_layers(const megatron_args *a) {
  megatron_layer_counts n = {0};
  int L = (int)a->num_layers;
  int last_is_moe = 0;
  if (a->num_experts > 0) {
    for (int i = 0; i < L; i++) n.moe += pattern_at(a, i);
    last_is_moe = pattern_at(a, L - 1);
  }
  n.dense = L - n.moe;
  n.mtp_moe = last_is_moe * a->mtp_num_layers;
  n.mtp_dense = (1 - last_is_moe) * a->mtp_num_layers;
  return n;
}

/* One layer's self-attention parameters: MLA's low-rank projections, or Q, K, V and the output projection. */
static double megatron_attention_count(const megatron_args *a, double norm) {
  double h = a->hidden_size, heads = a->num_attention_heads;
  if (a->multi_latent_attention) {
    double q = a->q_lora_rank <= 0 ? h * heads * (a->qk_head_dim + a->qk_pos_emb_head_dim)
                                   : a->q_lora_rank * (h + heads * (a->qk_head_dim + a->qk_pos_emb_head_dim) + norm);
    return q + a->kv_lora_rank * (h + heads * (a->qk_head_dim + a->v_head_dim) + norm) + h * a->qk_pos_emb_head_dim +
           heads * a->v_head_dim * h;
  }
  double qps = a->kv_channels * heads;
  double ratio = qps / h;
  double g = a->group_query_attention ? a->num_query_groups : heads;
  return 2 * h * h * ((1 + g / heads) * ratio);
}

/* The parameter terms of one layer, the embedding and the final norm. */
typedef struct {
  double attn, dense_mlp, shared, routed, active_routed, latproj, ln, router, sgate;
  double emb, final_ln;
} megatron_terms;

static megatron_terms megatron_layer_terms(const megatron_args *a) {
  megatron_terms t;
  double h = a->hidden_size;
  int moe = a->num_experts > 0;
  double E = moe ? a->num_experts : 1;
  double glu = a->swiglu ? 1.5 : 1.0;
  double shared = a->moe_shared_expert_intermediate_size;
  double Fm = moe ? a->moe_ffn_hidden_size : 0;
  double norm = a->rmsnorm ? 1 : 2;
  t.attn = megatron_attention_count(a, norm);
  t.emb = h * a->padded_vocab_size;
  t.final_ln = norm * h;
  t.dense_mlp = 2 * h * a->ffn_hidden_size * glu;
  t.shared = 2 * h * shared * glu;
  double lat = a->moe_latent_size > 0 ? a->moe_latent_size : h;
  t.routed = 2 * lat * Fm * E * glu;
  t.active_routed = moe ? 2 * lat * Fm * a->moe_router_topk * glu : 0;
  t.latproj = (moe && a->moe_latent_size > 0) ? 2 * h * a->moe_latent_size : 0;
  t.ln = 2 * h * norm;
  t.router = moe ? h * E + (a->add_bias_linear ? E : 0) : 0;
  t.sgate = (shared > 0 && a->moe_shared_expert_gate) ? h : 0;
  return t;
}

/* The whole model's parameters, and those a token goes through (top-k of the routed experts). */
static void megatron_totals(const megatron_args *a, const megatron_terms *t, const megatron_layer_counts *n,
                            megatron_weights *w) {
  double emb_layers = a->untie_embeddings_and_output_weights ? 2 * t->emb : t->emb;
  double L_dense = t->attn + t->dense_mlp + t->ln;
  double L_moe = t->attn + t->shared + t->routed + t->latproj + t->ln + t->router + t->sgate;
  double L_moe_act = t->attn + t->shared + t->active_routed + t->latproj + t->ln + t->router + t->sgate;
  double block = L_dense * n->dense + L_moe * n->moe + t->final_ln;
  double block_act = L_dense * n->dense + L_moe_act * n->moe + t->final_ln;
  double mtp = L_dense * n->mtp_dense + L_moe * n->mtp_moe;
  w->total = block + mtp + emb_layers;
  w->active = block_act + mtp + emb_layers;
}

/* The most loaded rank (the first pipeline stage, with the embedding; the
 * MTP layers on it): its TP-sharded, replicated and expert parameters, and
 * their bytes (6 + 12/DP per parameter under the distributed optimizer, else 18). */
static void megatron_most_loaded(const megatron_args *a, const megatron_terms *t, const megatron_layer_counts *n,
                                 megatron_weights *w) {
  double etp = a->expert_tensor_parallel_size, ep = a->expert_model_parallel_size;
  double pp = a->pipeline_model_parallel_size, tp = a->tensor_model_parallel_size;
  w->edp = floor(a->world_size / (etp * ep * pp));
  double tp_sh = (t->attn + t->dense_mlp) * n->dense + (t->attn + t->shared) * n->moe;
  double rep = t->ln * n->dense + (t->ln + t->latproj + t->router + t->sgate) * n->moe + t->final_ln;
  double exp_sh = t->routed * n->moe;
  double tp_sh_mtp = (t->attn + t->dense_mlp) * n->mtp_dense + (t->attn + t->shared) * n->mtp_moe;
  double rep_mtp = t->ln * n->mtp_dense + (t->ln + t->latproj + t->router + t->sgate) * n->mtp_moe;
  double exp_mtp = t->routed * n->mtp_moe;
  double tp_most = (tp_sh / pp + tp_sh_mtp + t->emb) / tp;
  double rep_most = rep / pp + rep_mtp;
  double exp_most = (exp_sh / pp + exp_mtp) / (etp * ep);
  double n_most = tp_most + rep_most + exp_most;
  if (a->untie_embeddings_and_output_weights && pp == 1) {
    tp_most += t->emb / tp;
    n_most += t->emb / tp;
  }
  double bpp_d = a->use_distributed_optimizer ? 6 + 12 / a->data_parallel_size : 18;
  double bpp_e = a->use_distributed_optimizer ? 6 + 12 / w->edp : 18;
  w->tp_most = tp_most;
  w->rep_most = rep_most;
  w->exp_most = exp_most;
  w->most_loaded = n_most;
  w->bytes = (tp_most + rep_most) * bpp_d + exp_most * bpp_e;
}

/* MLM theoretical_memory_usage.py L12-303 @d98e8a64 */
megatron_weights megatron_weight_optimizer(const megatron_args *a) {
  megatron_weights w = {0};
  megatron_layer_counts n = megatron_count_layers(a);
  megatron_terms t = megatron_layer_terms(a);
  megatron_totals(a, &t, &n, &w);
  megatron_most_loaded(a, &t, &n, &w);
  return w;
}

/* In-flight scaling shared by the MLM and Bridge activation formulas. */
static double pipeline_scale(double act, double p, double vp, double m) {
  if (vp > 0) act *= 1 + (p - 1) / (p * vp);
  if (vp <= 0 && p > 1 && m > 0) act *= min2(1, m / p);
  return act;
}

/* MLM compute_activation_memory L317-379 (SP + selective recompute) */
double megatron_activation_sp(const megatron_args *a) {
  double s = a->seq_length, b = a->micro_batch_size, h = a->hidden_size, L = a->num_layers;
  double p = a->pipeline_model_parallel_size, t = a->tensor_model_parallel_size, V = a->padded_vocab_size;
  double act = s * b * h * (18 + 4 * (a->ffn_hidden_size / h)) * L;
  act += 8 * s * b * p;
  act += s * b * h * p;
  act = pipeline_scale(act, p, a->virtual_pipeline_model_parallel_size, a->num_microbatches);
  if (p == 1) act += s * b * h * 4 * (1 + V / h);
  return act / t;
}

/* MLM compute_activation_memory_without_sp L382-453 (every other setting) */
double megatron_activation_without_sp(const megatron_args *a) {
  double s = a->seq_length, b = a->micro_batch_size, h = a->hidden_size, L = a->num_layers;
  double p = a->pipeline_model_parallel_size, t = a->tensor_model_parallel_size, V = a->padded_vocab_size;
  double act = s * b * h * (10 + 24 / t) * L;
  act += 8 * s * b * p + s * b * h * p;
  act = pipeline_scale(act, p, a->virtual_pipeline_model_parallel_size, a->num_microbatches);
  if (p == 1) act += (s * b * V / t + s * b * h) * 2;
  return act * 1.05;
}

/* Bridge layer pattern: the decoder's, then MTP layers of the last layer's kind (L523-543). */
static int bridge_is_moe(const megatron_args *a, int i) {
  int L = (int)a->num_layers;
  return pattern_at(a, i < L ? i : L - 1);
}

/* One layer's parameter terms in Bridge's count; Fm: the routed experts' FFN width. */
typedef struct {
  double attn, ln, fln, dense, shared, routed, latp, Fm;
} bridge_terms;

static bridge_terms bridge_layer_terms(const megatron_args *a) {
  bridge_terms t = {0};
  double h = a->hidden_size, heads = a->num_attention_heads;
  int tot = (int)a->num_layers + (int)a->mtp_num_layers;
  double f = a->swiglu ? 3.0 : 2.0;
  double qr = a->kv_channels * heads / h;
  double g = a->group_query_attention ? a->num_query_groups : heads;
  t.attn = 2 * h * h * ((1 + g / heads) * qr);
  t.ln = 4 * h, t.fln = 2 * h, t.dense = f * h * a->ffn_hidden_size;
  t.shared = f * h * a->moe_shared_expert_intermediate_size;
  int any_moe = 0;
  for (int i = 0; i < tot; i++) any_moe |= bridge_is_moe(a, i);
  t.Fm = a->moe_ffn_hidden_size > 0 ? a->moe_ffn_hidden_size : a->ffn_hidden_size;
  if (a->num_experts > 0 && any_moe) {
    if (a->moe_latent_size <= 0) t.routed = f * h * t.Fm * a->num_experts;
    else {
      t.routed = f * a->moe_latent_size * t.Fm * a->num_experts;
      t.latp = 2 * h * a->moe_latent_size;
    }
  }
  return t;
}

/* Layer i's parameters added to the dense (attention, norms, dense or shared MLP) and routed sums. */
static void bridge_add_layer(const megatron_args *a, const bridge_terms *t, int i, double *dense_sum,
                             double *routed_sum) {
  int m = bridge_is_moe(a, i);
  *dense_sum += t->attn + t->ln + (m ? t->shared + t->latp : t->dense);
  *routed_sum += m ? t->routed : 0.0;
}

/* Parameters on pipeline rank r with uneven stages (L615-659): its chunk of
 * each virtual stage (L662-690), the MTP layers and the final norm on the
 * last rank, the embedding on the first and the output layer on the last.
 * mid: the layers of a stage that is neither first nor last. */
static void bridge_rank_counts(const megatron_args *a, const bridge_terms *t, int r, double mid, double *ds,
                               double *rs) {
  int P = (int)a->pipeline_model_parallel_size;
  int L = (int)a->num_layers, tot = L + (int)a->mtp_num_layers;
  double fs = a->num_layers_in_first_pipeline_stage, ls = a->num_layers_in_last_pipeline_stage;
  double embsz = a->hidden_size * a->padded_vocab_size;
  int vp = a->virtual_pipeline_model_parallel_size > 0 ? (int)a->virtual_pipeline_model_parallel_size : 1;
  *ds = 0, *rs = 0;
  int offset = 0;
  for (int c = 0; c < vp; c++)
    for (int q = 0; q < P; q++) {
      double count = q == 0 && fs > 0 ? fs : q == P - 1 && ls > 0 ? ls : mid;
      int ch = (int)(count / vp);
      if (q == r)
        for (int i = offset; i < offset + ch; i++) bridge_add_layer(a, t, i, ds, rs);
      offset += ch;
    }
  if (r == P - 1) {
    for (int i = L; i < tot; i++) bridge_add_layer(a, t, i, ds, rs);
    *ds += t->fln;
  }
  if (r == 0) *ds += embsz;
  if (r == P - 1) *ds += embsz;
}

/* The most loaded pipeline rank's dense and routed parameters with uneven stages. */
static void bridge_uneven_gpu_counts(const megatron_args *a, const bridge_terms *t, bridge_estimate *e) {
  double tp = a->tensor_model_parallel_size, pp = a->pipeline_model_parallel_size;
  double ep = a->expert_model_parallel_size, etp = a->expert_tensor_parallel_size;
  double fs = a->num_layers_in_first_pipeline_stage, ls = a->num_layers_in_last_pipeline_stage;
  int P = (int)pp;
  double rem = (int)a->num_layers, left = pp;
  if (fs > 0) {
    rem -= fs;
    left -= 1;
  }
  if (ls > 0) {
    rem -= ls;
    left -= 1;
  }
  double mid = left == 0 ? 0 : floor(rem / left);
  double ds_max = 0, rs_max = 0;
  for (int r = 0; r < P; r++) {
    double ds, rs;
    bridge_rank_counts(a, t, r, mid, &ds, &rs);
    ds_max = max2(ds_max, ds);
    rs_max = max2(rs_max, rs);
  }
  e->dense_gpu = ds_max / tp;
  e->routed_gpu = rs_max / (ep * etp);
}

/* Bytes per parameter: 6 + 12 over the optimizer's shards under the distributed optimizer, else 18. */
static void bridge_weight_optimizer_bytes(const megatron_args *a, bridge_estimate *e) {
  double tp = a->tensor_model_parallel_size, cp = a->context_parallel_size;
  double ep = a->expert_model_parallel_size, etp = a->expert_tensor_parallel_size;
  double dshard = a->data_parallel_size * cp;
  double eshard = max2(1, floor((a->data_parallel_size * tp * cp) / max2(1, ep * etp)));
  e->dense_bpp = a->use_distributed_optimizer ? 6.0 + 12.0 / max2(1, dshard) : 18.0;
  e->routed_bpp = a->use_distributed_optimizer ? 6.0 + 12.0 / max2(1, eshard) : 18.0;
  e->dense_bytes = e->dense_gpu * e->dense_bpp;
  e->routed_bytes = e->routed_total > 0 ? e->routed_gpu * e->routed_bpp : 0.0;
  e->weights_optimizer_bytes = e->dense_bytes + e->routed_bytes;
}

/* Activations (L356-432, L769-791): MLM's SP formula with the layers' mean FFN ratio, over TP x CP. */
static double bridge_activation_bytes(const megatron_args *a, const bridge_terms *t) {
  double h = a->hidden_size, tp = a->tensor_model_parallel_size, pp = a->pipeline_model_parallel_size;
  double cp = a->context_parallel_size;
  int tot = (int)a->num_layers + (int)a->mtp_num_layers;
  double nm = 0;
  for (int i = 0; i < tot; i++) nm += bridge_is_moe(a, i);
  double nd = tot - nm, moe_ffn = 0;
  if (a->num_experts > 0 && nm > 0)
    moe_ffn = nm * (t->Fm * a->moe_router_topk + a->moe_shared_expert_intermediate_size);
  double r = (nd * a->ffn_hidden_size + moe_ffn) / (tot * h);
  double s = a->seq_length, b = a->micro_batch_size;
  double act = s * b * h * (18 + 4 * r) * tot + 8 * s * b * pp + s * b * h * pp;
  act = pipeline_scale(act, pp, a->virtual_pipeline_model_parallel_size, a->num_microbatches);
  if (pp == 1) act += s * b * h * 4 * (1 + a->padded_vocab_size / h);
  return act / (tp * cp);
}

/* Megatron-Bridge theoretical_memory_utils.py @067f987d */
bridge_estimate bridge_estimate_memory(const megatron_args *a) {
  bridge_estimate e = {0};
  bridge_terms t = bridge_layer_terms(a);
  int tot = (int)a->num_layers + (int)a->mtp_num_layers;
  double dense_sum = 0, routed_sum = 0;
  for (int i = 0; i < tot; i++) bridge_add_layer(a, &t, i, &dense_sum, &routed_sum);
  int untied = a->untie_embeddings_and_output_weights;
  double embsz = a->hidden_size * a->padded_vocab_size;
  e.dense_total = dense_sum + t.fln;
  e.routed_total = routed_sum;
  e.embedding = embsz * (untied ? 2 : 1);
  double tp = a->tensor_model_parallel_size, pp = a->pipeline_model_parallel_size;
  double ep = a->expert_model_parallel_size, etp = a->expert_tensor_parallel_size;
  if (a->num_layers_in_first_pipeline_stage <= 0 && a->num_layers_in_last_pipeline_stage <= 0) {
    e.dense_gpu = e.dense_total / (pp * tp) + embsz / tp + ((untied && pp == 1) ? embsz / tp : 0);
    e.routed_gpu = e.routed_total / (pp * ep * etp);
  } else {
    bridge_uneven_gpu_counts(a, &t, &e);
  }
  bridge_weight_optimizer_bytes(a, &e);
  e.activation_bytes = bridge_activation_bytes(a, &t);
  return e;
}

/* DeepSpeed stage_1_and_2.py L3081-3098; legacy = docs memory.rst L137 */
void deepspeed_zero2(double params, double gpus_per_node, double nodes, int cpu_offload, int legacy, double *gpu_bytes,
                     double *cpu_bytes) {
  double G = nodes * gpus_per_node, abf = 1.5;
  double gpu, cpu;
  if (cpu_offload) {
    gpu = 2 * params;
    cpu = params * max2(4 * G, 16) * abf;
  } else {
    gpu = legacy ? 4 * params + trunc(16 * params / G) : 2 * params + trunc(18 * params / G);
    cpu = params * 4 * gpus_per_node * abf;
  }
  *gpu_bytes = trunc(gpu);
  *cpu_bytes = trunc(cpu);
}

/* DeepSpeed stage3.py L3744-3780 */
void deepspeed_zero3(double params, double largest_layer_params, double gpus_per_node, double nodes, int cpu_offload,
                     int cpu_offload_params, int zero_init, double *gpu_bytes, double *cpu_bytes) {
  double G = nodes * gpus_per_node, gf = 1 / nodes, abf = 1.5, llm = 4 * largest_layer_params;
  double gpu, cpu;
  if (cpu_offload) {
    if (cpu_offload_params) {
      gpu = llm;
      cpu = zero_init ? params * 18 * gf * abf : params * max2(4 * gpus_per_node, 18 * gf) * abf;
    } else {
      gpu = llm + trunc(2 * params / G);
      cpu = zero_init ? params * 16 * gf * abf : params * max2(4 * gpus_per_node, 16 * gf) * abf;
    }
  } else {
    gpu = llm + trunc(18 * params / G);
    cpu = zero_init ? largest_layer_params * 4 * gpus_per_node * abf : params * 4 * gpus_per_node * abf;
  }
  *gpu_bytes = trunc(gpu);
  *cpu_bytes = trunc(cpu);
}

/* ZeRO paper §5.1-5.3, Table 1 (K = 12 for mixed-precision Adam) */
double zero_paper_model_states(double params, double dp, double k, int stage) {
  switch (stage) {
    case 0: return (2 + 2 + k) * params;
    case 1: return 4 * params + k * params / dp;
    case 2: return 2 * params + (2 + k) * params / dp;
    default: return (2 + 2 + k) * params / dp;
  }
}

/* Korthikanti et al. Table 2 */
double korthikanti_layer_bytes(double s, double b, double h, double a, double t, korthikanti_row row) {
  double sbh = s * b * h, as_h = a * s / h;
  switch (row) {
    case KOR_NONE: return sbh * (34 + 5 * as_h);
    case KOR_TP: return sbh * (10 + 24 / t + 5 * as_h / t);
    case KOR_TP_SP: return sbh * (34 / t + 5 * as_h / t);
    case KOR_TP_SELECTIVE: return sbh * (10 + 24 / t);
    case KOR_TP_SP_SELECTIVE: return sbh * (34 / t);
    default: return sbh * 2;
  }
}

/* ---------------- config -> source arguments ---------------- */

static int plan_is_moe(const void *ctx, int layer) { return layer_is_moe((const plan *)ctx, layer); }

static megatron_args megatron_args_from_plan(const plan *pl) {
  megatron_args a = {0};
  a.hidden_size = pl->in->hidden;
  a.num_attention_heads = pl->in->heads;
  a.kv_channels = pl->head_dim;
  a.group_query_attention = pl->kv_heads != pl->in->heads;
  a.num_query_groups = pl->kv_heads;
  a.num_layers = pl->layers;
  a.ffn_hidden_size = pl->in->ffn_hidden;
  a.num_experts = pl->moe ? pl->in->moe_experts : 0;
  a.moe_ffn_hidden_size = pl->expert_ffn;
  a.moe_shared_expert_intermediate_size = pl->in->moe_shared_experts * pl->shared_ffn;
  a.moe_router_topk = pl->in->moe_top_k;
  a.moe_shared_expert_gate = (int)pl->in->moe_shared_gate;
  a.moe_latent_size = isnan(pl->in->moe_latent_size) ? 0 : pl->in->moe_latent_size;
  a.mtp_num_layers = pl->in->mtp_layers;
  a.is_moe_layer = plan_is_moe;
  a.pattern_ctx = pl;
  a.swiglu = pl->gated;
  a.rmsnorm = pl->norm_width == 1;
  a.add_bias_linear = (int)pl->in->bias != 0 || (int)pl->in->moe_router_bias != 0;
  a.untie_embeddings_and_output_weights = (int)pl->in->tied_embeddings == 0;
  a.multi_latent_attention = pl->mla;
  a.q_lora_rank = pl->q_lora_rank;
  a.kv_lora_rank = pl->in->mla_kv_lora_rank;
  a.qk_head_dim = pl->in->mla_qk_nope_head_dim;
  a.qk_pos_emb_head_dim = pl->in->mla_qk_rope_head_dim;
  a.v_head_dim = pl->in->mla_v_head_dim;
  a.padded_vocab_size = pl->vocab_padded;
  a.tensor_model_parallel_size = pl->in->tp;
  a.pipeline_model_parallel_size = pl->in->pp;
  a.virtual_pipeline_model_parallel_size = pl->in->vpp > 1 ? pl->in->vpp : 0;
  a.expert_model_parallel_size = pl->in->ep;
  a.expert_tensor_parallel_size = pl->in->etp;
  a.context_parallel_size = pl->in->cp;
  a.world_size = pl->in->gpus;
  a.data_parallel_size = pl->dp;
  a.use_distributed_optimizer = (int)pl->in->distributed_optimizer != 0;
  a.seq_length = pl->in->seq_len;
  a.micro_batch_size = pl->in->micro_batch;
  a.num_microbatches = pl->grad_accum;
  a.num_layers_in_first_pipeline_stage = pl->pp_first;
  a.num_layers_in_last_pipeline_stage = pl->pp_last;
  return a;
}

/* Largest leaf module (DeepSpeed stage3.py L3783-3793: model_to_params). */
static double largest_layer_params(const plan *pl) {
  double biggest = pl->in->vocab * pl->in->hidden;
  for (int kind = 0; kind < 2; kind++) {
    int layer = kind ? (int)pl->in->moe_dense_layers : 0;
    if (kind && !layer_is_moe(pl, layer)) continue;
    layer_params lp = layer_params_split(pl, layer, MODEL_WHOLE);
    biggest = max2(biggest, lp.largest_linear_count);
  }
  return biggest;
}

static void set_single_rank(llmem_result *out, const double *cat) {
  llmem_rank_result *r = &out->per_gpu;
  double total = 0;
  for (int i = 0; i < LLMEM_CAT_COUNT; i++) {
    r->breakdown_bytes[i] = cat[i];
    total += cat[i];
  }
  r->peak_allocated_bytes = total;
  r->peak_reserved_bytes = total;
  r->device_used_bytes = total;
  r->peak_phase = LLMEM_PHASE_SETUP;
  r->peak_micro_batch = -1;
  r->peak_layer = -1;
  out->ranks[0] = *r;
  out->rank_count = 1;
  result_add_warning(out, LLMEM_WARN_COMPAT_PARTIAL);
}

static int engine_is_deepspeed(const plan *pl) {
  return (int)pl->in->engine == LLMEM_ENGINE_DEEPSPEED || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
}

static int engine_is_megatron(const plan *pl) {
  return (int)pl->in->engine == LLMEM_ENGINE_MEGATRON || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
}

/* What no formula models: LoRA; offload, which only DeepSpeed's estimators
 * model (CPU, not NVMe); MLA, where the activation formulas of the ZeRO paper
 * and Korthikanti et al. assume MHA. */
static llmem_status compat_supported(const plan *pl) {
  if ((int)pl->in->ft_method != LLMEM_FT_FULL) return LLMEM_ERR_COMPAT_FEATURE;
  int ds_formula =
      (int)pl->in->formula == LLMEM_FORMULA_DEEPSPEED || (int)pl->in->formula == LLMEM_FORMULA_DEEPSPEED_LEGACY;
  int offload =
      (int)pl->in->offload_optimizer != LLMEM_OFFLOAD_NONE || (int)pl->in->offload_params != LLMEM_OFFLOAD_NONE;
  int nvme = (int)pl->in->offload_optimizer == LLMEM_OFFLOAD_NVME || (int)pl->in->offload_params == LLMEM_OFFLOAD_NVME;
  if (offload && (!ds_formula || nvme)) return LLMEM_ERR_COMPAT_FEATURE;
  if (pl->mla &&
      ((int)pl->in->formula == LLMEM_FORMULA_ZERO_PAPER || (int)pl->in->formula == LLMEM_FORMULA_KORTHIKANTI))
    return LLMEM_ERR_COMPAT_FEATURE;
  return LLMEM_OK;
}

/* Megatron-LM: the most loaded rank's states and activations, and the formula's own parameter counts. */
static llmem_status megatron_formula(const plan *pl, double *cat, llmem_result *out) {
  if (!engine_is_megatron(pl)) return LLMEM_ERR_COMPAT_ENGINE;
  megatron_args a = megatron_args_from_plan(pl);
  megatron_weights w = megatron_weight_optimizer(&a);
  double dense = w.tp_most + w.rep_most, d = pl->dp;
  cat[LLMEM_CAT_WEIGHTS] = 2 * w.most_loaded;
  cat[LLMEM_CAT_GRADIENTS] = 4 * w.most_loaded;
  cat[LLMEM_CAT_MASTER_WEIGHTS] =
      (int)pl->in->distributed_optimizer != 0 ? 4 * dense / d + 4 * w.exp_most / w.edp : 4 * w.most_loaded;
  cat[LLMEM_CAT_OPTIMIZER_STATES] =
      w.bytes - cat[LLMEM_CAT_WEIGHTS] - cat[LLMEM_CAT_GRADIENTS] - cat[LLMEM_CAT_MASTER_WEIGHTS];
  int sp_path = pl->sp && (int)pl->in->recompute == LLMEM_RECOMPUTE_SELECTIVE; /* MLM L466-477 */
  cat[LLMEM_CAT_ACTIVATIONS] = sp_path ? megatron_activation_sp(&a) : megatron_activation_without_sp(&a);
  out->params_total = w.total;
  out->params_trainable = w.total; /* full training (LoRA is refused): the formula's own count */
  out->params_active = w.active;
  out->params_per_gpu = w.most_loaded;
  return LLMEM_OK;
}

/* Megatron-Bridge: the same categories from its estimate, and its parameter counts. */
static llmem_status bridge_formula(const plan *pl, double *cat, llmem_result *out) {
  if (!engine_is_megatron(pl)) return LLMEM_ERR_COMPAT_ENGINE;
  megatron_args a = megatron_args_from_plan(pl);
  bridge_estimate e = bridge_estimate_memory(&a);
  double n = e.dense_gpu + e.routed_gpu;
  cat[LLMEM_CAT_WEIGHTS] = 2 * n;
  cat[LLMEM_CAT_GRADIENTS] = 4 * n;
  cat[LLMEM_CAT_MASTER_WEIGHTS] = e.dense_gpu * (e.dense_bpp - 6) / 3 + e.routed_gpu * (e.routed_bpp - 6) / 3;
  cat[LLMEM_CAT_OPTIMIZER_STATES] =
      e.weights_optimizer_bytes - cat[LLMEM_CAT_WEIGHTS] - cat[LLMEM_CAT_GRADIENTS] - cat[LLMEM_CAT_MASTER_WEIGHTS];
  cat[LLMEM_CAT_ACTIVATIONS] = e.activation_bytes;
  out->params_total = e.dense_total + e.routed_total + e.embedding;
  out->params_trainable = out->params_total; /* full training (LoRA is refused) */
  /* active from the formula's own terms: a token sees top-k of the routed experts */
  out->params_active =
      e.dense_total + e.embedding + (a.num_experts > 0 ? e.routed_total * a.moe_router_topk / a.num_experts : 0);
  out->params_per_gpu = n;
  return LLMEM_OK;
}

/* DeepSpeed's estimators (ZeRO-1/2 and ZeRO-3): their GPU total split into
 * categories, their CPU total as host memory. P: all the model's parameters. */
static llmem_status deepspeed_formula(const plan *pl, double P, double *cat, llmem_result *out) {
  if (!engine_is_deepspeed(pl) || pl->in->zero_stage < 1) return LLMEM_ERR_COMPAT_ENGINE;
  double gpn = min2(pl->in->gpus, pl->in->gpus_per_node), nodes = ceil(pl->in->gpus / gpn), G = nodes * gpn;
  double gpu, cpu;
  int off_opt = (int)pl->in->offload_optimizer != LLMEM_OFFLOAD_NONE,
      off_par = (int)pl->in->offload_params != LLMEM_OFFLOAD_NONE;
  if (pl->in->zero_stage <= 2) {
    deepspeed_zero2(P, gpn, nodes, off_opt, (int)pl->in->formula == LLMEM_FORMULA_DEEPSPEED_LEGACY, &gpu, &cpu);
    cat[LLMEM_CAT_WEIGHTS] = 2 * P;
    if (!off_opt) {
      cat[LLMEM_CAT_MASTER_WEIGHTS] = floor(4 * P / G);
      cat[LLMEM_CAT_OPTIMIZER_STATES] = floor(8 * P / G);
    }
  } else {
    double ll = largest_layer_params(pl);
    deepspeed_zero3(P, ll, gpn, nodes, off_opt, off_par, (int)pl->in->zero_init != 0, &gpu, &cpu);
    cat[LLMEM_CAT_WEIGHTS] = 2 * ll;
    if (!off_opt) {
      cat[LLMEM_CAT_WEIGHTS] += floor(2 * P / G);
      cat[LLMEM_CAT_MASTER_WEIGHTS] = floor(4 * P / G);
      cat[LLMEM_CAT_OPTIMIZER_STATES] = floor(8 * P / G);
    } else if (!off_par) {
      cat[LLMEM_CAT_WEIGHTS] += trunc(2 * P / G);
    }
  }
  /* what is left of the estimator's GPU total is gradients (16- and 32-bit) */
  cat[LLMEM_CAT_GRADIENTS] =
      gpu - cat[LLMEM_CAT_WEIGHTS] - cat[LLMEM_CAT_MASTER_WEIGHTS] - cat[LLMEM_CAT_OPTIMIZER_STATES];
  out->host_cpu_bytes = cpu;
  return LLMEM_OK;
}

/* The ZeRO paper's model states by stage, and its activation estimate. P: all the model's parameters. */
static llmem_status zero_paper_formula(const plan *pl, double P, double *cat) {
  int deepspeed = engine_is_deepspeed(pl);
  int stage = deepspeed ? (int)pl->in->zero_stage : 0;
  if (!(deepspeed || (int)pl->in->engine == LLMEM_ENGINE_SINGLE || (int)pl->in->engine == LLMEM_ENGINE_DDP))
    return LLMEM_ERR_COMPAT_ENGINE;
  double k = 12, N = pl->dp;
  double w = 2 * P / (stage >= 3 ? N : 1), g = 2 * P / (stage >= 2 ? N : 1), kk = k * P / (stage >= 1 ? N : 1);
  cat[LLMEM_CAT_WEIGHTS] = w;
  cat[LLMEM_CAT_GRADIENTS] = g;
  cat[LLMEM_CAT_MASTER_WEIGHTS] = kk / 3;
  cat[LLMEM_CAT_OPTIMIZER_STATES] = zero_paper_model_states(P, N, k, stage) - w - g - kk / 3;
  /* ZeRO §3.2: "the total activations is about 12 x hidden_dim x batch x seq_length x transformer_layers" 16-bit values */
  cat[LLMEM_CAT_ACTIVATIONS] = 12 * pl->in->hidden * pl->in->micro_batch * pl->in->seq_len * pl->layers * 2;
  return LLMEM_OK;
}

/* Korthikanti et al.: the activations of the first stage only. */
static void korthikanti_formula(const plan *pl, double *cat) {
  korthikanti_row row;
  if ((int)pl->in->recompute == LLMEM_RECOMPUTE_FULL) row = KOR_FULL;
  else if ((int)pl->in->recompute == LLMEM_RECOMPUTE_SELECTIVE) row = pl->sp ? KOR_TP_SP_SELECTIVE : KOR_TP_SELECTIVE;
  else row = pl->sp ? KOR_TP_SP : KOR_TP;
  double per_layer =
      korthikanti_layer_bytes(pl->in->seq_len, pl->in->micro_batch, pl->in->hidden, pl->in->heads, pl->in->tp, row);
  /* first stage: p micro-batches x L/p layers = L (Eq.5), times the
   * interleaving factor 1 + (p-1)/(p v) (§4.2.3); fewer if m < p */
  double p = pl->in->pp, layers = pl->layers * min2(1, pl->grad_accum / p);
  if (pl->in->vpp > 1) layers = pl->layers * (1 + (p - 1) / (p * pl->in->vpp));
  cat[LLMEM_CAT_ACTIVATIONS] = per_layer * layers;
}

llmem_status compat_estimate(const plan *pl, llmem_result *out) {
  double cat[LLMEM_CAT_COUNT] = {0};
  llmem_status st = compat_supported(pl);
  if (st != LLMEM_OK) return st;
  double P = out->params_total;
  switch ((int)pl->in->formula) {
    case LLMEM_FORMULA_MEGATRON: st = megatron_formula(pl, cat, out); break;
    case LLMEM_FORMULA_MEGATRON_BRIDGE: st = bridge_formula(pl, cat, out); break;
    case LLMEM_FORMULA_DEEPSPEED:
    case LLMEM_FORMULA_DEEPSPEED_LEGACY: st = deepspeed_formula(pl, P, cat, out); break;
    case LLMEM_FORMULA_ZERO_PAPER: st = zero_paper_formula(pl, P, cat); break;
    case LLMEM_FORMULA_KORTHIKANTI: korthikanti_formula(pl, cat); break;
    default: return LLMEM_ERR_COMPAT_ENGINE;
  }
  if (st != LLMEM_OK) return st;
  set_single_rank(out, cat);
  return LLMEM_OK;
}
