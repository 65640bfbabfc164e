/* Saved and transient activation bytes of one layer, one micro-batch, one rank.
 *
 * Accounting rules of Korthikanti et al. (arXiv:2205.05198 §4.1, Table 2)
 * applied tensor by tensor to the layer as frameworks build it
 * (docs/memory-model.md §7.8 [DERIVED]): every tensor autograd keeps for the
 * backward is counted once at its dtype. With g = a, F = 4h, plain GeLU MLP,
 * dropout and eager attention this reproduces Eq.1 sbh(34 + 5as/h) (tested).
 */
#include "internal.h"


typedef struct {
  double tokens;     /* s/cp * b on this rank */
  double seq_keys;   /* keys each query attends to (full sequence) */
  double outside;    /* divisor of tensors outside the TP region: tp with SP, else 1 */
  double ab;         /* activation bytes */
  double lin;        /* bytes of a saved linear input (1 with fp8 linears) */
  double norm_saved; /* bytes per element a norm keeps */
  double residual;   /* bytes per element of the residual stream (fp32 under autocast) */
  int autocast;      /* torch.autocast over fp32 parameters */
  int fused_mlp;
} shape;

static shape layer_shape(const plan *pl) {
  shape sh;
  sh.tokens = pl->seq_len / pl->cp * pl->micro_batch;
  sh.seq_keys = pl->seq_len;
  sh.outside = pl->sp ? pl->tp : 1;
  sh.ab = pl->act_bytes;
  sh.lin = pl->fp8_linear ? 1 : pl->act_bytes;
  int megatron = pl->engine == LLMEM_ENGINE_MEGATRON || pl->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  /* Eager RMSNorm/LayerNorm (HF, torchtitan) keeps the fp32 upcast of its input
   * (x.float() feeds pow and mul); fused kernels (TE/apex, torch.compile) keep
   * the input at its dtype plus per-token statistics. */
  /* torch.autocast with fp32 parameters (HF Trainer fp16/bf16 on an fp32
   * model): embeddings, norms and residual adds produce fp32; matmuls run on
   * 16-bit copies of their inputs. */
  sh.autocast = pl->autocast;
  sh.residual = sh.autocast ? 4 : pl->act_bytes;
  if (megatron || pl->torch_compile) sh.norm_saved = pl->act_bytes;
  else if (pl->norm_width == 1) sh.norm_saved = sh.autocast ? 8 : 4; /* x.float() input (+ fp32 normed for the weight) */
  else sh.norm_saved = sh.residual;                                  /* native layer_norm keeps its input */
  /* Fused SwiGLU (TE/Megatron bias_swiglu, torch.compile) keeps gate+up and the
   * product; eager keeps gate, up, silu(gate) and the product (§7.8 c_F). */
  sh.fused_mlp = megatron || pl->torch_compile;
  return sh;
}

/* PyTorch's math SDPA (aten/src/ATen/native/transformers/attention.cpp
 * _scaled_dot_product_attention_math, pytorch#135964 = 0a35986c, v2.5) upcasts
 * fp16/bf16 q, k, v to fp32 unless allow_fp16_bf16_reduction_math_sdp (default
 * off): q, k, v, scores and probabilities are fp32. Megatron's unfused core
 * attention (the Megatron engines' sdpa_math) keeps the activation dtype. */
static int torch_math_sdpa(const plan *pl) {
  int megatron = pl->engine == LLMEM_ENGINE_MEGATRON || pl->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  return pl->attention == LLMEM_ATTN_SDPA_MATH && !megatron;
}

static void push(tensor_list *l, double bytes) {
  if (bytes <= 0) return;
  if (l->count == LAYER_MAX_TENSORS) l->bytes[l->count - 1] += bytes;
  else l->bytes[l->count++] = bytes;
}

/* The tensors of mlp_internal_bytes, one by one. */
static void push_mlp(tensor_list *l, const plan *pl, const shape *sh, double tokens, double f, int save_product) {
  double n = tokens * f;
  if (!pl->gated) {
    push(l, n * sh->ab);
    push(l, n * sh->lin);
    return;
  }
  for (int i = 0; i < (sh->fused_mlp ? 2 : 3); i++) push(l, n * sh->ab);
  if (save_product) push(l, n * sh->lin);
}

/* MLP of intermediate f on `tokens` tokens: saved bytes excluding its input. */
static double mlp_internal_bytes(const plan *pl, const shape *sh, double tokens, double f, int save_product) {
  double n = tokens * f;
  double product = save_product ? n * sh->lin : 0;
  if (!pl->gated) return n * sh->ab + n * sh->lin;      /* activation input + fc2 input */
  if (sh->fused_mlp) return 2 * n * sh->ab + product;  /* gate, up, product */
  return 3 * n * sh->ab + product;                     /* gate, up, silu(gate), product */
}

static int lora_target(const plan *pl, int target) {
  return pl->ft_method != LLMEM_FT_FULL && (pl->lora_targets & (1 << target));
}

/* LoRA adapter extras (PEFT tuners/lora/layer.py forward): lora_A output (r),
 * and with lora_dropout > 0 a dropout output + mask of the adapter input. */
double lora_saved_bytes(const plan *pl, int layer) {
  if (pl->ft_method == LLMEM_FT_FULL) return 0;
  shape sh = layer_shape(pl);
  double T = sh.tokens, h = pl->hidden, r = pl->lora_rank, ab = sh.ab;
  double q_out = pl->heads * pl->head_dim / pl->tp;
  double f = layer_is_moe(pl, layer) ? pl->shared_ffn * pl->shared_experts / pl->tp : pl->ffn / pl->tp;
  int has_mlp = !layer_is_moe(pl, layer) || pl->shared_experts > 0;
  double in_dims[7] = {h, h, h, q_out, h, h, f};
  double bytes = 0;
  for (int t = LLMEM_LT_Q; t <= LLMEM_LT_DOWN; t++) {
    if (!lora_target(pl, t)) continue;
    if (t >= LLMEM_LT_GATE && !has_mlp) continue;
    if (t == LLMEM_LT_GATE && !pl->gated) continue;
    bytes += T * r * ab;
    if (pl->lora_dropout > 0) bytes += T * in_dims[t] * (ab + 1);
  }
  return bytes;
}

layer_activations layer_activation_bytes(const plan *pl, int layer, int recomputed) {
  layer_activations la = {0};
  shape sh = layer_shape(pl);
  double T = sh.tokens, h = pl->hidden, ab = sh.ab, t = pl->tp;
  double out_h = T * h / sh.outside; /* elements of a hidden-size tensor outside the TP region */
  int frozen = pl->ft_method != LLMEM_FT_FULL;
  /* bitsandbytes MatMul4Bit up to 0.43.1 keeps its input in ctx.tensors
   * until the backward (autograd/_functions.py; fixed by #1270 in 0.43.2) */
  int qlora = pl->ft_method == LLMEM_FT_QLORA && pl->quant_keeps_input;
  int moe = layer_is_moe(pl, layer);

  /* ---- attention block ---- */
  double a_t = pl->heads / t;
  double q_dim, k_dim, v_dim, o_dim;
  if (pl->mla) {
    q_dim = a_t * (pl->qk_nope + pl->qk_rope);
    k_dim = q_dim;
    v_dim = a_t * pl->v_head_dim;
    o_dim = v_dim;
  } else {
    double g_t = max2(pl->kv_heads / t, 1);
    int expand = pl->repeat_kv; /* K/V repeated to every query head before the kernel */
    q_dim = a_t * pl->head_dim;
    k_dim = (expand ? a_t : g_t) * pl->head_dim;
    v_dim = k_dim;
    o_dim = q_dim;
  }
  /* A frozen linear keeps its input only when something else needs it:
   * an adapter on it (LoRA), or an old bitsandbytes MatMul4Bit (see qlora). */
  int keep_qkv_in = !frozen || qlora || lora_target(pl, LLMEM_LT_Q) || lora_target(pl, LLMEM_LT_K) ||
                    lora_target(pl, LLMEM_LT_V);
  int keep_mlp_in = !frozen || qlora || lora_target(pl, LLMEM_LT_GATE) || lora_target(pl, LLMEM_LT_UP) || moe;
  int keep_down_in = !frozen || qlora || lora_target(pl, LLMEM_LT_DOWN);

  double norm1_in = out_h * sh.norm_saved + T * 4 / sh.outside; /* input (fp32 if eager) + rstd */
  double qkv_in = keep_qkv_in ? out_h * sh.lin : 0;        /* norm output; SP keeps it sharded */
  double mla_latent = 0;
  if (pl->mla) /* compressed q and kv (+ their norms' inputs), replicated over TP */
    mla_latent = T * (2 * pl->q_lora_rank + 2 * (pl->kv_lora_rank + pl->qk_rope)) * ab;
  int sdpa_fp32 = torch_math_sdpa(pl);
  double kb = sdpa_fp32 ? 4 : ab;                          /* math SDPA keeps its fp32 copies of q, k, v */
  double qkv = T * (q_dim + k_dim + v_dim) * kb;           /* attention-kernel inputs after RoPE */
  double attn_out = T * o_dim * sh.lin;                    /* kernel output = o_proj input */
  double lse = T * a_t * 4;                                /* flash softmax LSE, fp32 */
  double scores = 0, scores_temp = 0, scores_bwd = 0;
  if (sdpa_fp32) {
    double n = T * a_t * sh.seq_keys;
    /* fp32 probabilities (_safe_softmax's result, also the matmul's input);
     * dropout: bool mask + fp32 output. Transient: the pre-softmax scores,
     * softmax's output before _safe_softmax's where, and its -inf mask (1 B). */
    scores = n * 4 + (pl->dropout > 0 ? n * (1 + 4) : 0);
    scores_temp = n * (4 + 4 + 1);
    scores_bwd = 2 * n * 4; /* _softmax_backward_data: incoming and outgoing fp32 score gradients */
    lse = 0;
  } else if (pl->attention != LLMEM_ATTN_FLASH) {
    double n = T * a_t * sh.seq_keys;
    /* eager (HF): softmax in fp32 then cast (4 + 2 bytes); Megatron's unfused attention: 2 bytes */
    scores = n * (pl->attention == LLMEM_ATTN_EAGER ? 4 + ab : ab);
    if (pl->dropout > 0) scores += n * (1 + (sh.autocast ? 4 : ab)); /* dropout mask + output (fp32 softmax under autocast) */
    /* soft-capped scores: / cap, tanh, * cap; tanh keeps its output for the
     * backward (transformers models/gemma2/modeling_gemma2.py eager_attention_forward) */
    if (pl->attn_softcap && pl->attention == LLMEM_ATTN_EAGER) scores += n * ab;
    scores_temp = 2 * n * ab;                              /* pre-softmax scores + masked copy */
    scores_bwd = 2 * scores_temp;
    lse = 0;
  }
  double attn_drop = pl->dropout > 0 ? out_h : 0;          /* 1-byte mask after o_proj */

  /* ---- MLP or MoE block ---- */
  /* A parallel block (GPT-J, Falcon, phi-2: x + attn(ln(x)) + mlp(ln(x)))
   * feeds the MLP the attention's norm output; with two norms (GPT-NeoX
   * use_parallel_residual) both read x, kept once when the norm keeps x itself. */
  int one_norm = pl->parallel_block && pl->norms_per_layer <= 1;
  int shared_x = one_norm || (pl->parallel_block && sh.norm_saved == sh.residual);
  double norm2_x = shared_x ? 0 : out_h * sh.norm_saved, norm2_rstd = one_norm ? 0 : T * 4 / sh.outside;
  double norm2_in = norm2_x + norm2_rstd;
  double mlp_in = keep_mlp_in && !(one_norm && keep_qkv_in) ? out_h * sh.lin : 0;
  double mlp = 0, mlp_temp = 0;
  double f_t = pl->ffn / t;
  /* MoE: each rank receives tokens * top_k routed copies in expectation, times
   * the load imbalance (or the capacity bound when tokens are dropped) */
  double rho = pl->capacity_factor > 0 ? pl->capacity_factor : pl->load_imbalance;
  double routed = moe ? rho * T * pl->top_k : 0, f_e = pl->expert_ffn / pl->etp;
  if (!moe) {
    mlp = mlp_internal_bytes(pl, &sh, T, f_t, keep_down_in);
    mlp_temp = (pl->gated ? 3 : 2) * T * f_t * ab;
  } else {
    /* Router and dispatch (docs/memory-model.md §7.10 [DERIVED]): fp32 logits and
     * probabilities, top-k indices, permuted tokens, expert intermediates. */
    double E = pl->experts, k = pl->top_k;
    double router = T * E * 4 * 2 + T * k * 8;
    double dispatched = routed * h * sh.lin;               /* permuted tokens = expert fc1 input */
    double experts = mlp_internal_bytes(pl, &sh, routed, f_e, 1);
    double combine = routed * h * ab;                      /* expert outputs kept for the prob gradient */
    double shared = 0;
    if (pl->shared_experts > 0)
      shared = pl->shared_experts * mlp_internal_bytes(pl, &sh, T, pl->shared_ffn / t, keep_down_in);
    mlp = router + dispatched + experts + combine + shared;
    /* all-to-all send and receive buffers, and the expert working set */
    mlp_temp = 2 * routed * h * ab + (pl->gated ? 3 : 2) * routed * f_e * ab;
  }
  double mlp_drop = pl->dropout > 0 ? out_h : 0;
  double lora = lora_saved_bytes(pl, layer);

  double full = norm1_in + qkv_in + mla_latent + qkv + attn_out + lse + scores + attn_drop + norm2_in + mlp_in +
                mlp + mlp_drop + lora;

  /* ---- what the recompute policy keeps ---- */
  double layer_input = T * h * sh.residual / sh.outside; /* checkpoint input (Megatron keeps it SP-sharded) */
  double saved = full;
  switch (pl->recompute) {
    case LLMEM_RECOMPUTE_SELECTIVE: {
      int m = pl->recompute_modules;
      if (m & (1 << LLMEM_RM_CORE_ATTN)) saved -= scores + lse;
      if (m & (1 << LLMEM_RM_LAYERNORM)) saved -= qkv_in + mlp_in; /* norm outputs rebuilt */
      if ((m & (1 << LLMEM_RM_MLP)) && !moe) saved -= mlp;
      /* "moe_act" rebuilds the experts' activation (keeps the fc2 input);
       * "moe" rebuilds the whole block, that activation included: each saved
       * tensor is dropped once (Megatron transformer_config.py recompute_modules) */
      double moe_act = moe ? mlp_internal_bytes(pl, &sh, routed, f_e, 1) - routed * f_e * sh.lin : 0;
      int drop_moe = (m & (1 << LLMEM_RM_MOE)) && moe;
      int drop_moe_act = drop_moe || ((m & (1 << LLMEM_RM_MOE_ACT)) && moe);
      if (drop_moe) saved -= mlp - moe_act;
      if (drop_moe_act) saved -= moe_act;
      if ((m & (1 << LLMEM_RM_MLA_UP_PROJ)) && pl->mla) saved -= qkv;
      break;
    }
    case LLMEM_RECOMPUTE_PER_OP: {
      /* torchtitan op-level SAC: keep the output of every other matmul (wq, wv,
       * w1, w2 of the 7) and the attention kernel's output and LSE, plus the
       * layer input; everything else is recomputed
       * (torchtitan parallelize_llama.py _save_list / mm count). */
      double g_dim = pl->mla ? v_dim : max2(pl->kv_heads / t, 1) * pl->head_dim;
      double kept = layer_input + T * (q_dim + g_dim) * ab + attn_out + lse;
      if (!moe) kept += T * f_t * ab + T * h * ab / sh.outside;
      else kept += mlp;  /* MoE experts run outside the mm policy: treat as saved */
      saved = kept < full ? kept : full;
      break;
    }
    default: break;
  }
  /* the same sets tensor by tensor, for the allocator: each tensor is kept
   * or rebuilt in the backward (all of them in a recomputed layer) */
  tensor_list *sv = &la.saved_tensors, *rc = &la.recompute_tensors;
  sv->count = rc->count = 0;
  int m = pl->recompute == LLMEM_RECOMPUTE_SELECTIVE ? pl->recompute_modules : 0;
  if (!recomputed && pl->recompute == LLMEM_RECOMPUTE_PER_OP && saved < full) {
    double g_dim = pl->mla ? v_dim : max2(pl->kv_heads / t, 1) * pl->head_dim;
    push(sv, layer_input), push(sv, T * q_dim * ab), push(sv, T * g_dim * ab), push(sv, attn_out), push(sv, lse);
    if (!moe) push(sv, T * f_t * ab), push(sv, T * h * ab / sh.outside);
    else push(sv, mlp);
    push(rc, full - saved); /* the op-level policy rebuilds a mix: one request */
  } else {
    tensor_list *kept = recomputed ? rc : sv;
    int drop_moe = (m & (1 << LLMEM_RM_MOE)) && moe;
    int drop_moe_act = drop_moe || ((m & (1 << LLMEM_RM_MOE_ACT)) && moe);
    tensor_list *norm = (m & (1 << LLMEM_RM_LAYERNORM)) ? rc : kept;
    tensor_list *core = (m & (1 << LLMEM_RM_CORE_ATTN)) ? rc : kept;
    tensor_list *qkv_l = ((m & (1 << LLMEM_RM_MLA_UP_PROJ)) && pl->mla) ? rc : kept;
    tensor_list *mlp_l = (!moe && (m & (1 << LLMEM_RM_MLP))) ? rc : kept;
    double rstd = T * 4 / sh.outside;
    if (recomputed) push(sv, layer_input);
    push(kept, norm1_in - rstd), push(kept, rstd);
    push(norm, qkv_in);
    push(kept, mla_latent);
    push(qkv_l, T * q_dim * kb), push(qkv_l, T * k_dim * kb), push(qkv_l, T * v_dim * kb);
    push(kept, attn_out);
    push(core, lse), push(core, scores);
    push(kept, attn_drop);
    push(kept, norm2_x), push(kept, norm2_rstd);
    push(norm, mlp_in);
    if (!moe) push_mlp(mlp_l, pl, &sh, T, f_t, keep_down_in);
    if (moe) {
      tensor_list *block = drop_moe ? rc : kept;
      double router = T * pl->experts * 8 + T * pl->top_k * 8, experts = mlp_internal_bytes(pl, &sh, routed, f_e, 1);
      push(block, T * pl->experts * 4), push(block, T * pl->experts * 4), push(block, T * pl->top_k * 8);
      push(block, routed * h * sh.lin), push(block, routed * f_e * sh.lin), push(block, routed * h * ab);
      if (pl->shared_experts > 0) push(block, mlp - (router + routed * h * sh.lin + experts + routed * h * ab));
      push(drop_moe_act ? rc : kept, experts - routed * f_e * sh.lin);
    }
    push(kept, mlp_drop);
    push(kept, lora);
  }

  la.saved_full_bytes = full;
  la.checkpoint_bytes = layer_input;
  if (recomputed) {
    la.saved_bytes = layer_input;
    la.recompute_bytes = full;
  } else {
    la.saved_bytes = saved;
    la.recompute_bytes = full - saved;
  }

  /* ---- working sets freed inside the layer ---- */
  double gathered = pl->sp ? T * h * ab : 0;                     /* SP all-gather output */
  double cp_ring = pl->cp > 1 ? 2 * 2 * T * k_dim * ab : 0;      /* KV chunks, double-buffered */
  double rope_temp = T * (q_dim + k_dim) * (pl->engine == LLMEM_ENGINE_FSDP2 ? 4 : ab); /* pre-RoPE q,k */
  la.forward_temp_bytes = max2(rope_temp + scores_temp + gathered + cp_ring, mlp_temp + gathered);
  /* backward: incoming and outgoing residual gradients, plus the larger of the
   * MLP gradient chain (3 intermediates) and the attention backward (dq, dk,
   * dv, fp32 dq accumulator of FlashAttention-2, score gradients of non-flash attention). */
  double attn_bwd = T * (q_dim + k_dim + v_dim + o_dim) * ab + T * q_dim * 4 + scores_bwd + cp_ring;
  la.backward_temp_bytes = 2 * T * h * ab + gathered + max2(mlp_temp, attn_bwd);
  return la;
}

/* Token ids (int64) and the embedding-dropout mask (KOR §4.3; MLM L317-379). */
double embedding_activation_bytes(const plan *pl) {
  double T = pl->seq_len / pl->cp * pl->micro_batch;
  double mask = pl->dropout > 0 ? T * pl->hidden / (pl->sp ? pl->tp : 1) : 0;
  return 8 * T + mask;
}
