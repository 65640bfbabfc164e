/* Step-time model, a ranking aid for the layout search (not a performance
 * promise). Compute from FLOPs at the GPU's peak times an efficiency, plus
 * the communication that is not hidden behind compute:
 *   - FLOPs: 6 N tokens for the linears (Kaplan et al. 2020; Narayanan et al.
 *     2021 eq. 3 for the attention term), 6 L s (a d) tokens/2 for causal
 *     attention, plus the recomputed forward (full: all of it; per-op SAC:
 *     half of the linears; selective: the attention core).
 *   - TP: 4 all-gather/reduce-scatter (SP) or all-reduce collectives of the
 *     hidden state per layer and micro-batch (Megatron-LM), not overlapped.
 *   - DP / ZeRO / FSDP: parameter all-gathers and gradient reduce-scatters
 *     (or all-reduces) per step, overlapped with compute except one layer.
 *   - PP: bubble (p - 1) / (m v) of the compute (Narayanan et al. 2021);
 *     none for zero-bubble.
 *   - CP: ring exchange of K and V per layer, hidden behind attention.
 *   - EP: dispatch and combine all-to-alls per MoE layer, forward and backward.
 * The efficiency (runtime.compute_efficiency, 0.4) is the model FLOPs
 * utilisation large dense runs report: 41-52 % on A100 for GPT models
 * (Narayanan et al. 2021, Table 1), 30-40 % on H100 in torchtitan's tables.
 * Ring collectives move (n - 1)/n of the buffer; groups that fit in a node
 * use hardware.intra_node_gb_per_s, others hardware.inter_node_gb_per_s. */
#include <math.h>

#include "internal.h"

static double ring(double n) { return n > 1 ? (n - 1) / n : 0; }

/* Bandwidth of a group of `size` ranks whose members are `stride` ranks apart. */
static double group_bandwidth(const plan *pl, double size, double stride) {
  const llmem_input *in = pl->in;
  double span = size * stride;
  double gbps = span <= pl->gpus_per_node ? in->intra_node_gb_per_s : in->inter_node_gb_per_s;
  return gbps * 1e9;
}

double step_time_seconds(const plan *pl, double *tokens_per_second_per_gpu) {
  const llmem_input *in = pl->in;
  double total, active, trainable;
  model_param_counts(pl, &total, &active, &trainable);
  double dp = pl->dp;
  double global_tokens = pl->micro_batch * pl->grad_accum * dp * pl->seq_len;
  double embed = pl->vocab * pl->hidden;
  double linear_params = active - embed - (pl->learned_pos ? pl->max_positions * pl->hidden : 0);
  double attn_width = pl->mla ? pl->heads * (pl->qk_nope + pl->qk_rope) : pl->heads * pl->head_dim;
  double attn_flops_per_token = 6 * pl->layers * pl->seq_len * attn_width / 2; /* causal */
  double flops = 6 * linear_params * global_tokens + attn_flops_per_token * global_tokens;
  double fwd_linear = 2 * linear_params * global_tokens, fwd_attn = attn_flops_per_token / 3 * global_tokens;
  if (pl->recompute == LLMEM_RECOMPUTE_FULL) {
    double share = pl->recompute_layers > 0 ? pl->recompute_layers * pl->pp / pl->layers : 1;
    flops += (fwd_linear + fwd_attn) * share;
  } else if (pl->recompute == LLMEM_RECOMPUTE_PER_OP) {
    flops += fwd_linear / 2;
  } else if (pl->recompute == LLMEM_RECOMPUTE_SELECTIVE) {
    flops += fwd_attn;
  }
  if (pl->ft_method != LLMEM_FT_FULL) flops -= 2 * linear_params * global_tokens; /* no weight gradients */
  double peak = pl->fp8_linear && !isnan(in->fp8_tflops) ? in->fp8_tflops : in->bf16_tflops;
  if (pl->dtype == LLMEM_DTYPE_FP32) peak /= 2; /* TF32 tensor cores */
  double compute = flops / pl->gpus / (peak * 1e12 * in->compute_efficiency);

  double ab = pl->act_bytes, T = pl->seq_len / pl->cp * pl->micro_batch, m = pl->grad_accum;
  double layers_here = pl->layers / pl->pp;
  /* tensor parallel: adjacent ranks */
  double tp_bytes = pl->tp > 1 ? 4 * T * pl->hidden * ab * ring(pl->tp) * layers_here * m : 0;
  double tp_time = tp_bytes / group_bandwidth(pl, pl->tp, 1);
  /* data parallel / sharding: strided by tp * cp * pp */
  double shard = pl->shard_dense;
  double params_here = total / (pl->tp * pl->pp);
  int fsdp = (pl->engine == LLMEM_ENGINE_FSDP1 || pl->engine == LLMEM_ENGINE_FSDP2) &&
             pl->fsdp_strategy != LLMEM_FSDP_NO_SHARD;
  int z3 = (pl->engine == LLMEM_ENGINE_DEEPSPEED || pl->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED) && pl->zero_stage == 3;
  double grad_b = pl->ft_method == LLMEM_FT_FULL ? pl->grad_bytes : 0;
  double dp_bytes;
  if (fsdp || z3) dp_bytes = (2 * pl->weight_bytes + grad_b) * params_here * ring(shard);
  else dp_bytes = 2 * grad_b * params_here * ring(dp * pl->cp);
  double dp_time = dp_bytes / group_bandwidth(pl, dp * pl->cp, pl->tp);
  double dp_exposed = fmax(0, dp_time - compute) + dp_time / fmax(1, layers_here);
  /* pipeline bubble */
  double bubble = 0;
  if (pl->pp > 1 && pl->schedule != LLMEM_PP_ZERO_BUBBLE) {
    double v = pl->schedule == LLMEM_PP_INTERLEAVED ? pl->vpp : 1;
    bubble = compute * (pl->pp - 1) / (m * v);
  }
  /* context parallel ring: K and V chunks, forward and backward */
  double cp_time = 0;
  if (pl->cp > 1) {
    double kv = 2 * T * (pl->mla ? attn_width : pl->kv_heads * pl->head_dim) / pl->tp * ab;
    double bytes = 3 * kv * (pl->cp - 1) * layers_here * m;
    double attn_compute = attn_flops_per_token * global_tokens / pl->gpus / (peak * 1e12 * in->compute_efficiency);
    cp_time = fmax(0, bytes / group_bandwidth(pl, pl->cp, pl->tp) - attn_compute);
  }
  /* expert parallel all-to-all */
  double ep_time = 0;
  if (pl->moe && pl->ep > 1) {
    double moe_layers = 0;
    for (int i = 0; i < (int)pl->layers; i++) moe_layers += layer_is_moe(pl, i);
    double bytes = 4 * T * pl->top_k * pl->hidden * ab * ring(pl->ep) * moe_layers / pl->pp * m;
    ep_time = bytes / group_bandwidth(pl, pl->ep, pl->tp);
  }
  double step = compute + tp_time + dp_exposed + bubble + cp_time + ep_time;
  if (tokens_per_second_per_gpu) *tokens_per_second_per_gpu = global_tokens / step / pl->gpus;
  return step;
}
