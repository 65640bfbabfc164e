/* Step-time model, a ranking aid for the layout search (not a performance
 * promise). The step of the slowest pipeline stage, built per operation class
 * (rates and their sources: core/steptime_ops.c):
 *   - matmuls: each linear's GEMMs (forward; input and weight gradients) at
 *     the large-GEMM rate, slowed by tile and wave quantisation when small
 *     (MoE experts, thin TP shards), plus their operands' and output's HBM
 *     traffic (not hidden under the math: Calculon's no_overlap mode);
 *   - attention core: FlashAttention's FLOPs (causal: half the scores) at its
 *     own efficiency; eager/math attention as batched GEMMs plus the softmax
 *     and dropout passes over the score matrix through HBM;
 *   - memory-bound ops: norms, activation, rotary, residual adds, dropout, the
 *     loss over the logits and the optimizer step, as bytes over HBM
 *     bandwidth; PyTorch eager runs each primitive op as its own kernel,
 *     fused kernels (torch.compile, Megatron's) read inputs and write outputs once;
 *   - the embedding's dense weight gradient, written whole each micro-batch
 *     (and added into Megatron's main_grad), on the first stage;
 *   - recompute: the forward work the policy repeats in the backward;
 *   - TP: all-reduces (or all-gathers + reduce-scatters with SP) of the hidden
 *     state, 2 per layer forward and 2 backward (Megatron-LM; Korthikanti et
 *     al. 2022 §4.2.2: Megatron's SP re-gathers the input in the backward),
 *     exposed, or with tp_comm_overlap hidden behind the GEMMs;
 *   - DP / ZeRO / FSDP: gradient reduction and parameter gathers (rings at
 *     the NICs of the group's ranks in a node), overlapped
 *     with the compute they may hide behind (the whole step for per-layer
 *     FSDP/ZeRO-3 units; one micro-batch's backward for DDP-style buckets),
 *     the first gather and last reduction always exposed; what overlaps takes
 *     a share of the compute (Calculon's processor usage), as overlapped TP;
 *   - PP: the bubble (p - 1) / v stage-passes (Narayanan et al. 2021 §2.2),
 *     none for zero-bubble and ZB-V, (p - 1) / 3 for DualPipeV, plus
 *     activation sends between stages;
 *   - CP: K and V exchange per layer (3 passes of (cp - 1) chunks); hidden
 *     behind attention by ring attention, exposed by torchtitan's default
 *     all-gather rotation (torch.distributed.tensor.experimental._attention);
 *   - EP: dispatch and combine all-to-alls per MoE layer, forward and backward.
 * O(layers) per call, no allocation. Each class has its own cited rate;
 * runtime.compute_efficiency, when set, replaces the large-GEMM one. */
#include <math.h>

#include "steptime.h"

/* Seconds of one layer for one micro-batch on one rank. */
typedef struct {
  double linear_fwd, linear_bwd;
  double attn_fwd, attn_bwd;
  double attn_gemm, attn_memory; /* of attn_fwd + attn_bwd: eager/math attention's GEMMs and pointwise passes */
  double attn_kernel;            /* of attn_fwd + attn_bwd: FlashAttention's and the scans' kernels */
  double memory_fwd, memory_bwd;
  double tp_fwd, tp_bwd;
  double tp_fwd_serial, tp_bwd_serial; /* TP collectives tp_comm_overlap cannot hide */
  double ep_fwd, ep_bwd;
  double cp_fwd, cp_bwd; /* exposed */
  double sac_fwd;        /* per-op SAC: the forward of the GEMMs it recomputes (< 0: not known, half) */
  double sac_tp;         /* per-op SAC: the TP all-gathers it re-runs to feed them */
} layer_time;

typedef struct {
  const plan *pl;
  gpu_rates g;
  double tokens; /* per micro-batch on this rank: micro_batch x seq / cp */
  double ab;     /* activation bytes */
  int fused;     /* fused pointwise kernels */
} step_ctx;

static double ring(double n) { return n > 1 ? (n - 1) / n : 0; }

/* Bandwidth of one rank's transfers (point-to-point, all-to-all) in a group
 * of `size` ranks `stride` ranks apart: NVLink inside a node, else its NIC. */
static double group_bytes_per_s(const step_ctx *c, double size, double stride) {
  return size * stride <= c->pl->in->gpus_per_node ? c->g.intra_bytes_per_s : c->g.inter_bytes_per_s;
}

/* Bus bandwidth of a ring collective (all-reduce, all-gather, reduce-scatter)
 * over such a group. Across nodes NCCL runs one ring per channel, each entering
 * and leaving a node once, through the NIC of a different GPU: with one NIC per
 * GPU the group's k ranks in a node give k NICs' worth, up to NVLink's rate
 * (nccl-tests #119: 4 HDR NICs per 8 A100s, 84.8 GB/s bus bandwidth of the
 * 4 x 25 GB/s; nccl-tests #283: 8 H200s with 8 x 400 Gb/s NICs, about 350 GB/s). */
static double ring_bytes_per_s(const step_ctx *c, double size, double stride) {
  double per_node = c->pl->in->gpus_per_node;
  if (size * stride <= per_node) return c->g.intra_bytes_per_s;
  double ranks_per_node = fmax(1, fmin(size, floor(per_node / stride)));
  return fmin(c->g.intra_bytes_per_s, ranks_per_node * c->g.inter_bytes_per_s);
}

/* float8 linears (torchao tensorwise scaling): each operand's amax and cast
 * (read twice, write 1 byte) forward and backward, and the transposed fp8
 * copies the backward GEMMs read (read 1, write 1); weights are cast before
 * the all-gather under fp8_all_gather, else per micro-batch. */
static void add_fp8_casts(const step_ctx *c, layer_time *t, double tokens, double in, double out, double count) {
  const plan *pl = c->pl;
  double ab = c->ab, weight = in * out * (pl->in->fp8_all_gather != 0 ? 1 / fmax(1, pl->shard_dense) : 1);
  double fwd = tokens * in * (2 * ab + 1) + weight * (2 * pl->weight_bytes + 1);
  double bwd = tokens * out * (2 * ab + 1) + 2 * (tokens * in + tokens * out + in * out);
  t->memory_fwd += memory_seconds(&c->g, fwd) * count;
  t->memory_bwd += memory_seconds(&c->g, bwd) * count;
}

static int is_megatron(const plan *pl) {
  return (int)pl->in->engine == LLMEM_ENGINE_MEGATRON || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
}

/* A linear's GEMM bytes, forward and input gradient: float8 operands under
 * fp8 linears, the output in the 16-bit activation dtype (torchao's
 * _scaled_mm out_dtype, Transformer Engine's fp8 GEMMs); else both 16-bit. */
static gemm_bytes linear_io_bytes(const step_ctx *c) {
  gemm_bytes b = {c->g.fp8 ? 1 : c->ab, c->ab};
  return b;
}

/* The weight gradient's: Megatron's gradient-accumulation fusion accumulates
 * it into main_grad in the gradient dtype, read and written (megatron/core/
 * tensor_parallel/layers.py @000c4ac, LinearWithGradAccumulationAndAsync-
 * Communication.backward: wgrad_gemm_accum_fp32 / _fp16 into weight.main_grad);
 * PyTorch writes a 16-bit .grad once. */
static gemm_bytes wgrad_bytes(const step_ctx *c, gemm_bytes io) {
  if (is_megatron(c->pl)) io.output_bytes = 2 * c->pl->grad_bytes;
  return io;
}

static void linear_pair(const step_ctx *c, const gpu_rates *g, double tokens, double in, double out, double *f,
                        double *b) {
  gemm_bytes io = linear_io_bytes(c);
  linear_seconds(g, tokens, in, out, io, wgrad_bytes(c, io), f, b);
}

static void add_linear(const step_ctx *c, layer_time *t, double tokens, double in, double out, double count) {
  double f, b;
  linear_pair(c, &c->g, tokens, in, out, &f, &b);
  t->linear_fwd += f * count;
  t->linear_bwd += b * count;
  if (c->g.fp8) add_fp8_casts(c, t, tokens, in, out, count);
}

static double tp_gather_bytes(const step_ctx *c);

/* The forward of one linear alone (its GEMM, and with fp8 its forward casts). */
static double linear_fwd_seconds(const step_ctx *c, double tokens, double in, double out) {
  double f, b;
  linear_pair(c, &c->g, tokens, in, out, &f, &b);
  if (c->g.fp8) {
    layer_time casts = {0};
    add_fp8_casts(c, &casts, tokens, in, out, 1);
    f += casts.memory_fwd;
  }
  return f;
}

/* torchtitan's per-op selective activation checkpointing (torchtitan
 * parallelisms/parallelize_llama.py @9dec370, _apply_ac_to_transformer_block):
 * its policy counts aten.mm calls within a block and saves every odd one (and
 * the SDPA output), so the even ones are recomputed in the backward, with every
 * op outside _save_list (norms, activation, rotary: memory_fwd). Llama's call
 * order (models/llama/model.py @9dec370, L189, L214, L253) is wq, wk, wv, wo,
 * w1, w3, w2: wk, wo and w3 are recomputed (w2 for a plain MLP: w1, w2). The
 * all-gathers of sequence-parallel TP are not in _save_list either: the
 * recomputed wk and w3 read the gathered norm outputs, so both gathers run
 * again. Dense attention layers only; MoE layers rebuild their routed experts and router whole and half
 * their other GEMMs (layer_seconds), other kinds half their GEMMs. */
static void add_sac_recompute(const step_ctx *c, layer_time *t, double f) {
  const plan *pl = c->pl;
  double T = c->tokens, h = pl->in->hidden;
  double q_out = pl->in->heads * pl->head_dim / pl->in->tp;
  double kv_out = fmax(pl->kv_heads / pl->in->tp, 1) * pl->head_dim;
  t->sac_fwd = linear_fwd_seconds(c, T, h, kv_out) + linear_fwd_seconds(c, T, q_out, h) +
               (pl->gated ? linear_fwd_seconds(c, T, h, f) : linear_fwd_seconds(c, T, f, h));
  if (pl->in->tp > 1 && pl->sp)
    t->sac_tp = 2 * collective_seconds(T * h * tp_gather_bytes(c), pl->in->tp, 1, ring_bytes_per_s(c, pl->in->tp, 1));
}

/* Dense MLP (or shared expert) of intermediate size f per rank. */
static void add_mlp(const step_ctx *c, layer_time *t, double tokens, double f, double count) {
  const plan *pl = c->pl;
  add_linear(c, t, tokens, pl->in->hidden, (pl->gated ? 2 : 1) * f, count);
  add_linear(c, t, tokens, f, pl->in->hidden, count);
}

/* Attention projections: Q/K/V and output, or MLA's projections as one GEMM. */
static void add_attention_linears(const step_ctx *c, layer_time *t, double attn_params) {
  const plan *pl = c->pl;
  double h = pl->in->hidden, T = c->tokens;
  if (pl->mla) {
    add_linear(c, t, T, h, attn_params / h, 1);
    return;
  }
  double q_out = pl->in->heads * pl->head_dim / pl->in->tp;
  double kv_out = fmax(pl->kv_heads / pl->in->tp, 1) * pl->head_dim;
  add_linear(c, t, T, h, ((int)pl->in->attn_output_gate != 0 ? 2 : 1) * q_out + 2 * kv_out,
             1); /* q_proj also makes the gate */
  add_linear(c, t, T, q_out, h, 1);
}

/* The sequence one attention call sees on this rank: CP splits it. */
static double local_seq(const plan *pl) { return pl->in->seq_len / pl->in->cp; }

/* Keys a query attends on average under a causal mask: half the sequence,
 * the window less its ramp-up (sliding), half a chunk (chunked). */
static double mean_keys(const plan *pl, int mixer) {
  double s = pl->in->seq_len;
  if (mixer == LLMEM_MIXER_SLIDING && pl->in->sliding_window < s)
    return pl->in->sliding_window * (1 - pl->in->sliding_window / (2 * s));
  if (mixer == LLMEM_MIXER_CHUNKED && pl->in->attention_chunk < s) return pl->in->attention_chunk / 2;
  if (mixer == LLMEM_MIXER_ENCODER) return pl->source_len; /* bidirectional: every source token */
  return s / 2;
}

/* PyTorch's math SDPA, not Megatron's unfused core attention (activations.c
 * torch_math_sdpa). */
static int torch_math_sdpa(const plan *pl) {
  return (int)pl->in->attention == LLMEM_ATTN_SDPA_MATH && !is_megatron(pl);
}

/* The attention core: scores and weighted values. */
static void add_attention_core(const step_ctx *c, layer_time *t, int mixer) {
  const plan *pl = c->pl;
  double heads = pl->in->heads / pl->in->tp, T = c->tokens, keys = pl->in->seq_len;
  double qk = pl->mla ? pl->in->mla_qk_nope_head_dim + pl->in->mla_qk_rope_head_dim : pl->head_dim;
  double v = pl->mla ? pl->in->mla_v_head_dim : pl->head_dim;
  if ((int)pl->in->attention == LLMEM_ATTN_FLASH) {
    /* causal: half the score matrix (a window's or chunk's share with those
     * masks); CP's load-balanced chunks keep the half */
    double flops = 2 * T * mean_keys(pl, mixer) * heads * (qk + v);
    int causal = mixer != LLMEM_MIXER_ENCODER;
    double fwd = flops / (c->g.attn_peak_flops_per_s * flash_fraction(&c->g, local_seq(pl), causal, 0));
    double bwd = 2.5 * flops / (c->g.attn_peak_flops_per_s * flash_fraction(&c->g, local_seq(pl), causal, 1));
    t->attn_fwd += fwd, t->attn_bwd += bwd, t->attn_kernel += fwd + bwd;
    return;
  }
  /* eager / math: batched GEMMs over the full score matrix, then softmax
   * (read + write) and dropout (read + write + a byte mask) passes over it;
   * backward: two GEMMs per forward GEMM, softmax backward reads 2 writes 1 */
  double batch = pl->in->micro_batch * heads, sq = pl->in->seq_len / pl->in->cp, ab = c->ab;
  double scores = batch * sq * keys;
  gpu_rates g = c->g; /* attention stays in 16-bit */
  g.matmul_flops_per_s = g.matmul16_flops_per_s;
  double eb_bytes = ab, fwd_bytes = scores * 2 * ab, bwd_bytes = scores * 3 * ab;
  if (torch_math_sdpa(pl)) {
    /* PyTorch's math SDPA (aten/src/ATen/native/transformers/attention.cpp
     * _scaled_dot_product_attention_math, since v2.5 pytorch#135964) upcasts
     * 16-bit q, k, v to fp32 (allow_fp16_bf16_reduction_math_sdp off): fp32
     * GEMMs at the FP32 rate; per score: the causal mask's add_ (r 4, w 4),
     * _safe_softmax (softmax r 4 w 4, eq(-inf) r 4 w 1, all r 1, where r 4
     * w 4), the weights' .to(origin dtype) it also returns (r 4, w ab);
     * backward: where's (r 4 w 4, r 1), softmax's grad * output (r 8, w 4)
     * then cunn_SoftMaxBackward (r 12, w 4). Per q, k, v element: the casts
     * (r ab, w 4), q's and k's scaling (r 4, w 4), enable_gqa's
     * repeat_interleave of k and v (r 4 per K/V head, w 4 per query head),
     * the output cast back (r 4, w ab); their backward the same bytes */
    g.matmul_flops_per_s = g.matmul32_flops_per_s;
    eb_bytes = 4;
    fwd_bytes = scores * (8 + 22 + 4 + ab);
    bwd_bytes = scores * (9 + 12 + 16);
    double kvh = fmax(pl->kv_heads / pl->in->tp, 1);
    double small = T * (heads * qk + kvh * (qk + v)) * (ab + 4) + T * heads * qk * 2 * 8 + T * heads * v * (4 + ab);
    if (kvh < heads) small += T * (kvh + heads) * (qk + v) * 4;
    fwd_bytes += small;
    bwd_bytes += small;
  }
  gemm_bytes eb = {eb_bytes, eb_bytes};
  double gf = gemm_seconds(&g, sq, keys, qk, batch, eb) + gemm_seconds(&g, sq, v, keys, batch, eb);
  double gb = gemm_seconds(&g, sq, qk, keys, batch, eb) + gemm_seconds(&g, keys, qk, sq, batch, eb) +
              gemm_seconds(&g, sq, keys, v, batch, eb) + gemm_seconds(&g, keys, v, sq, batch, eb);
  double dropout = pl->in->dropout > 0 ? 2 * ab + 1 : 0;
  double mf = memory_seconds(&c->g, fwd_bytes + scores * dropout),
         mb = memory_seconds(&c->g, bwd_bytes + scores * dropout);
  t->attn_fwd += gf + mf;
  t->attn_bwd += gb + mb;
  t->attn_gemm += gf + gb;
  t->attn_memory += mf + mb;
}

/* Bytes per element of one norm, forward and backward, over a residual
 * stream of rb bytes an element. Fused: read and write (the backward twice
 * that). Eager LayerNorm: one aten kernel each way (native_layer_norm: r + w;
 * its backward: r x, r grad, w grad). Eager RMSNorm on x.float() (torchtitan
 * models/norms.py @9dec370, transformers' LlamaRMSNorm): cast (r ab, w 4), pow
 * (r 4, w 4), mean (r 4), x * rsqrt (r 4, w 4), cast back (r 4, w ab), x weight
 * (r ab, w ab); its autograd backward: x weight (grad r ab w ab; weight grad mul
 * r 2ab w ab, sum r ab), cast (r ab, w 4), mul by rsqrt (r 4, w 4), the rsqrt
 * path's mul and sum (r 8, w 4; r 4), mean's expand (w 4), pow's gradient
 * grad * (2 * x.pow(1)) as three kernels (torch/csrc/autograd/FunctionsManual.cpp
 * pow_backward: grad * (exp * self.pow(exp - 1)); aten/src/ATen/native/Pow.cpp
 * pow_Tensor_Scalar_out copies the base for exponent 1: r 4 w 4, r 4 w 4,
 * r 8 w 4), the two paths added (r 8, w 4), cast back (r 4, w ab). On an fp32
 * stream (autocast) both casts are no-ops (.float() and .to(input_dtype) of
 * an fp32 tensor return it) and every other op runs in fp32: 28 and 92.
 * Without the upcast: pow, mean, mul, mul at rb, the backward's the same ops
 * at rb (18 rb). */
static void norm_bytes(const step_ctx *c, double rb, double *fwd, double *bwd) {
  const plan *pl = c->pl;
  double ab = c->ab;
  if (c->fused) *fwd = 2 * rb, *bwd = 4 * rb;
  else if (pl->norm_width == 2) *fwd = 2 * rb, *bwd = 3 * rb;
  else if (pl->norm_upcast && rb == 4) *fwd = 28, *bwd = 92;
  else if (pl->norm_upcast) *fwd = 4 * ab + 28, *bwd = 8 * ab + 76;
  else *fwd = 7 * rb, *bwd = 18 * rb;
}

/* Bytes of repeat_kv each way: expand + reshape copies K and V to every
 * query head before SDPA (torchtitan models/llama/model.py @9dec370 L116-125,
 * L201-202), reading the KV heads and writing the query heads' worth; its
 * backward reads the copies' gradients and sums them into the KV heads. */
static double repeat_kv_bytes(const step_ctx *c, int mixer) {
  const plan *pl = c->pl;
  if (!pl->repeat_kv || pl->mla || !mixer_is_attention(mixer) || pl->kv_heads >= pl->in->heads) return 0;
  double kv = fmax(pl->kv_heads / pl->in->tp, 1), q = pl->in->heads / pl->in->tp;
  return 2 * c->tokens * (kv + q) * pl->head_dim * c->ab;
}

/* Bytes of FlashAttention-2's GQA backward outside its kernel: with fewer
 * K/V heads than query heads it writes dK and dV per query head and then sums
 * each group (aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp
 * mha_bwd: dk_expanded, dv_expanded, at::sum_out over the group dimension), a
 * reduction kernel reading the query heads' worth and writing the K/V heads'.
 * PyTorch SDPA (enable_gqa) only: repeat_kv hands flash every head, Megatron's
 * Transformer Engine attention is not this path. */
static double gqa_sum_bytes(const step_ctx *c, int mixer) {
  const plan *pl = c->pl;
  if ((int)pl->in->attention != LLMEM_ATTN_FLASH || pl->repeat_kv || pl->mla || !mixer_is_attention(mixer) ||
      pl->kv_heads >= pl->in->heads || is_megatron(pl))
    return 0;
  double kv = fmax(pl->kv_heads / pl->in->tp, 1), q = pl->in->heads / pl->in->tp;
  return 2 * c->tokens * (kv + q) * pl->head_dim * c->ab;
}

/* Linears that share one input (q, k, v, or one fused; the MLP's gate and
 * up): autograd sums their input gradients (torch/csrc/autograd/input_buffer.cpp
 * InputBuffer::add), one add each after the first, r 2 w 1 elements; a fused
 * pointwise backward (torch.compile, Megatron) takes it into its kernel.
 * Under torch.autocast over fp32 parameters each matmul also casts its fp32
 * input to 16 bits (aten/src/ATen/autocast_mode.cpp cached_cast caches leaf
 * tensors that require grad only), so every linear on a norm's fp32 output
 * casts it again, read 4 write ab (activations.c keeps these copies); the
 * backward casts each one's gradient back (ToCopyBackward0: r ab, w 4) and
 * the sums are of the fp32 gradients (r 8, w 4 each after the first). Linears
 * on the norms: q, k, v (or one fused) or one for other mixers, the MLP's gate
 * and up (plain: one; MoE: router and the experts' dispatch). */
static void shared_input_bytes(const step_ctx *c, double th, int mixer, int mlp_kind, double *fwd, double *bwd) {
  const plan *pl = c->pl;
  if (!pl->autocast && c->fused) return;
  int mlp = mlp_kind == LLMEM_LMLP_NONE ? 0 : mlp_kind == LLMEM_LMLP_MOE ? 2 : pl->gated ? 2 : 1;
  int mixer_linears = mixer_is_attention(mixer) ? plan_qkv_linears(pl) : 1;
  for (int i = 0; i < 2; i++) {
    int n = i == 0 ? mixer_linears : mlp;
    if (n == 0) continue;
    if (!pl->autocast) {
      *bwd += (n - 1) * th * 3 * c->ab;
      continue;
    }
    *fwd += n * th * (4 + c->ab);
    *bwd += n * th * (c->ab + 4) + (n - 1) * th * 12;
  }
}

/* LoRA's adapter path on each adapted linear, per micro-batch: PEFT's
 * result + lora_B(lora_A(dropout(x))) * scaling (peft tuners/lora/layer.py
 * Linear.forward @5d602fdb), x first cast to the adapter's dtype where it
 * differs (lora_input_cast) and back to 16 bits by lora_A's matmul under
 * autocast; LitGPT's and torchtune's LoRALinear the same without the casts.
 * Rank-r matmuls do r FLOPs a byte of their wide operand, far below any
 * GPU's ridge point: they are their traffic. Per input element, forward: the
 * casts (r ab w adb, r adb w ab), dropout (r, w, a byte mask), lora_A's read;
 * backward: lora_A's input gradient written and its input read again for
 * the weight gradient, the casts' and dropout's backward the same bytes, and
 * the sum with the frozen linear's input gradient (r 2ab, w ab). Per output
 * element, forward: lora_B's write, the scaling (r, w), the add (r 2ab, w
 * ab); backward: the scaling's, and lora_B's two reads of the gradient.
 * LitGPT's fused qkv (training.finetune.lora_fused_qkv: LoRAQKVLinear, one
 * lora_A over the dropped-out input for q, k and v) reads its input once. */
static void add_lora(const step_ctx *c, layer_time *t, int layer) {
  const plan *pl = c->pl;
  if ((int)pl->in->ft_method == LLMEM_FT_FULL) return;
  double ab = c->ab, adb = dtype_bytes((int)pl->in->adapter_dtype), T = c->tokens, h = pl->in->hidden;
  double casts = lora_input_cast(pl) ? 2 * (ab + adb) : 0;
  double drop = pl->in->lora_dropout > 0 ? 2 * (lora_input_cast(pl) ? adb : ab) + 1 : 0;
  double q_out = pl->in->heads * pl->head_dim / pl->in->tp, kv_out = fmax(pl->kv_heads / pl->in->tp, 1) * pl->head_dim;
  int moe = layer_is_moe(pl, layer), has_mlp = !moe || pl->in->moe_shared_experts > 0;
  double f = moe ? pl->shared_ffn * pl->in->moe_shared_experts / pl->in->tp : pl->in->ffn_hidden / pl->in->tp;
  double in_dims[7] = {h, h, h, q_out, h, h, f}, out_dims[7] = {q_out, kv_out, kv_out, h, f, f, h};
  double fwd = 0, bwd = 0;
  int qkv_read = 0;
  for (int k = LLMEM_LT_Q; k <= LLMEM_LT_DOWN; k++) {
    if (!lora_target(pl, k) || (k >= LLMEM_LT_GATE && !has_mlp) || (k == LLMEM_LT_GATE && !pl->gated)) continue;
    int shared = pl->lora_fused_qkv && k <= LLMEM_LT_V;
    double in = shared && qkv_read ? 0 : in_dims[k];
    if (shared) qkv_read = 1;
    fwd += T * (in * (casts + drop + ab) + out_dims[k] * 6 * ab);
    bwd += T * (in * (2 * ab + casts + drop + 3 * ab) + out_dims[k] * 4 * ab);
  }
  t->memory_fwd += memory_seconds(&c->g, fwd);
  t->memory_bwd += memory_seconds(&c->g, bwd);
}

/* QLoRA's frozen 4-bit base: bitsandbytes MatMul4Bit dequantizes each
 * weight before its matmul, forward and again for the input gradient
 * (bitsandbytes/autograd/_functions.py MatMul4Bit forward and backward,
 * 0.42.0 4870580: dequantize_4bit(B, quant_state), loss.c
 * dequantized_weight_bytes): the packed data read and
 * the 16-bit weight written, and where the state's dtype differs the cast's
 * read of it and its second copy written. */
static void add_dequant(const step_ctx *c, layer_time *t, double quantized_params) {
  const plan *pl = c->pl;
  if ((int)pl->in->ft_method != LLMEM_FT_QLORA || (int)pl->in->quant == LLMEM_QUANT_INT8) return;
  /* two 4-bit values a byte (bitsandbytes functional.py quantize_4bit) */
  double written = dequantized_weight_bytes(pl, quantized_params), cast_read = written - 2 * quantized_params;
  double once = memory_seconds(&c->g, quantized_params * 0.5 + written + cast_read);
  t->memory_fwd += once;
  t->memory_bwd += once;
}

/* Norms, residual adds, activation, rotary, dropout of one layer: bytes per
 * element of each, eager (one kernel per primitive op) or fused. */
static void add_pointwise(const step_ctx *c, layer_time *t, double f, int mixer, int mlp) {
  const plan *pl = c->pl;
  double ab = c->ab, T = c->tokens;
  double hidden_tokens = pl->sp && pl->in->tp > 1 ? T / pl->in->tp : T; /* SP splits them over TP */
  double th = hidden_tokens * pl->in->hidden, tf = T * f;
  double rb = pl->autocast ? 4 : ab; /* the residual stream: fp32 under autocast (activations.c) */
  double norm_fwd, norm_bwd;
  norm_bytes(c, rb, &norm_fwd, &norm_bwd);
  double norms = th * pl->in->norms_per_layer;
  double residual = 2 * (2 * rb + ab) * th; /* two adds: the stream and a 16-bit branch output in, the stream out */
  double casts_fwd = 0, casts_bwd = 0;
  shared_input_bytes(c, th, mixer, mlp, &casts_fwd, &casts_bwd);
  /* SwiGLU: silu (r+w) then mul (2r+w); fused: 2 reads, 1 write. GELU: r+w */
  double act = pl->gated ? (c->fused ? 3 : 5) * ab * tf : 2 * ab * tf;
  double rope = 0, rope_bwd = 0;
  if (pl->learned_pos == 0 && !pl->mla && mixer_is_attention(mixer)) {
    double qk = T * (pl->in->heads / pl->in->tp + fmax(pl->kv_heads / pl->in->tp, 1)) * pl->head_dim; /* q and k */
    /* eager (torchtitan): to fp32, complex multiply, back: 2 ab + 16 bytes; fused: r + w */
    rope = qk * (c->fused ? 2 * ab : 2 * ab + 16);
    rope_bwd = 2 * rope;
    if (pl->autocast && !c->fused) {
      /* autocast over an fp32 model: transformers' rotary embedding returns cos
       * and sin in the fp32 hidden states' dtype (models/llama/modeling_llama.py
       * LlamaRotaryEmbedding.forward: cos.to(dtype=x.dtype)), so q * cos +
       * rotate_half(q) * sin promotes the 16-bit q and k to fp32: mul (r ab, w 4),
       * neg of a half (r, w ab / 2), cat (r ab, w ab), mul (r ab, w 4), add (r 8,
       * w 4), and SDPA (autocast's lower-precision list) casts them back (r 4, w
       * ab): 6 ab + 24. Backward: the cast's (r ab, w 4), each mul's (r 4, w 4)
       * cast to the input's dtype (torch/csrc/autograd/engine.cpp
       * validate_outputs: r 4, w ab), neg's (ab), each slice's zero-filled
       * gradient and copy (2 ab each), and the three gradients of q summed (2
       * adds, r 2 ab w ab): 14 ab + 28 */
      rope = qk * (6 * ab + 24);
      rope_bwd = qk * (14 * ab + 28);
    }
  }
  double dropout = pl->in->dropout > 0 ? 2 * th * (c->fused ? 1 : 2 * ab + 1) : 0;
  double fwd = residual + act + dropout, repeat = repeat_kv_bytes(c, mixer);
  t->memory_fwd += memory_seconds(&c->g, fwd + rope + norms * norm_fwd + repeat + casts_fwd);
  /* each backward reads the saved input and the incoming gradient, writes one */
  t->memory_bwd +=
      memory_seconds(&c->g, 2 * fwd + rope_bwd + norms * norm_bwd + repeat + casts_bwd + gqa_sum_bytes(c, mixer));
}

/* Bytes per element of the forward all-gathers of sequence-parallel TP:
 * torchtitan's float8 TP (parallelize_llama.py @9dec370, apply_tp: torchao's
 * PrepareFloat8ModuleInput and Float8ColwiseParallel) casts the norm output to
 * float8 before it is gathered; else the activation dtype. */
static double tp_gather_bytes(const step_ctx *c) {
  const plan *pl = c->pl;
  return c->g.fp8 && pl->sp && (int)pl->in->framework == LLMEM_FW_TORCHTITAN ? 1 : c->ab;
}

/* torchtitan's async TP is PyTorch's micro-pipeline TP pass
 * (torch/_inductor/fx_passes/micro_pipeline_tp.py at 5f65158, and its 2024
 * form at 00122fb): it fuses an all-gather with the matmuls that take its
 * output as their first operand, and a reduce-scatter with the one matmul that
 * produces its input. The backward's reduce-scatters of the column-parallel
 * linears' input gradients take a sum (wq + wk + wv, w1 + w3: autograd adds
 * the branches before the redistribution), not a matmul, so they run as they
 * are; without SP the all-reduces match no pattern at all. */
static void split_async_tp(const step_ctx *c, layer_time *t, double reduce_scatter) {
  const plan *pl = c->pl;
  if ((int)pl->in->tp_comm_overlap == 0 || (int)pl->in->framework != LLMEM_FW_TORCHTITAN) return;
  double fwd = pl->sp ? 0 : t->tp_fwd, bwd = pl->sp ? 2 * reduce_scatter : t->tp_bwd;
  t->tp_fwd -= fwd, t->tp_fwd_serial += fwd;
  t->tp_bwd -= bwd, t->tp_bwd_serial += bwd;
}

/* TP collectives of one layer (hidden state, 2 forward + 2 backward). */
static void add_tp(const step_ctx *c, layer_time *t) {
  const plan *pl = c->pl;
  if (pl->in->tp <= 1) return;
  double bytes = c->tokens * pl->in->hidden * c->ab, bw = ring_bytes_per_s(c, pl->in->tp, 1);
  double one = collective_seconds(bytes, pl->in->tp, 2, bw); /* all-reduce, or AG + RS */
  double gather = collective_seconds(c->tokens * pl->in->hidden * tp_gather_bytes(c), pl->in->tp, 1, bw);
  double reduce_scatter = collective_seconds(bytes, pl->in->tp, 1, bw);
  t->tp_fwd += pl->sp ? 2 * (gather + reduce_scatter) : 2 * one;
  t->tp_bwd += 2 * one;
  int megatron = is_megatron(pl);
  if (pl->sp && megatron && (int)pl->in->recompute != LLMEM_RECOMPUTE_FULL)
    t->tp_bwd += 2 * reduce_scatter; /* re-gathered inputs */
  split_async_tp(c, t, reduce_scatter);
}

/* CP exchange of K and V chunks, exposed beyond the attention it overlaps. */
static void add_cp(const step_ctx *c, layer_time *t) {
  const plan *pl = c->pl;
  if (pl->in->cp <= 1) return;
  int torchtitan = (int)pl->in->framework == LLMEM_FW_TORCHTITAN;
  /* K and V repeated to every query head before SDPA (torchtitan models/llama/model.py
   * @9dec370 L201-209: repeat_kv, then F.scaled_dot_product_attention): the ring carries them all */
  double kv_heads = pl->repeat_kv && !pl->mla ? pl->in->heads : pl->kv_heads;
  double a2a = pl->in->cp_all_to_all, ring = pl->in->cp / a2a;
  double width = pl->mla ? pl->in->mla_kv_lora_rank + pl->in->mla_qk_rope_head_dim
                         : fmax(kv_heads / pl->in->tp, a2a) * pl->head_dim;
  double chunk = 2 * c->tokens * width * c->ab;
  if (a2a > 1) { /* Ulysses: q, k, v there and the output back, on the critical path (activations.c cp_all_to_all) */
    double q = c->tokens * pl->in->heads / pl->in->tp * (pl->mla ? pl->in->mla_v_head_dim : pl->head_dim) * c->ab;
    double moved = (2 * q + chunk) * (a2a - 1) / a2a / group_bytes_per_s(c, a2a, pl->in->tp);
    t->cp_fwd += moved, t->cp_bwd += moved;
    if (ring <= 1) return;
  }
  double bw = group_bytes_per_s(c, ring, pl->in->tp * a2a);
  double fwd = chunk * (ring - 1) / bw, bwd = 2 * fwd;
  if (!torchtitan) {
    t->cp_fwd += fmax(0, fwd - t->attn_fwd);
    t->cp_bwd += fmax(0, bwd - t->attn_bwd);
    return;
  }
  /* torchtitan: PyTorch's ring attention (torch/distributed/tensor/experimental/
   * _attention.py at 0123248, _templated_ring_attention and its backward),
   * load-balanced, rotate method all-gather, convert_to_f32:
   *  - the K/V all-gather is issued before the local (diagonal) block's flash
   *    call and awaited after it: it hides behind that block, 1/cp of the
   *    attention, forward and again in the backward;
   *  - each later step's output and logsumexp are cast to fp32 and merged
   *    (out - sigmoid(lse_b - lse)(out - out_b): sub, sigmoid, mul, sub, 4
   *    bytes each read and written), the half-sequence steps rebuilt whole by
   *    chunk + cat; the result cast back;
   *  - the backward accumulates dq, dk, dv in fp32 (zeros, += per step, the
   *    cat of dk, dv to send) and passes dk, dv round the ring by all-to-all,
   *    each hidden behind the next step's kernel but the last;
   *  - forward and backward make K and V contiguous (transposed views of the
   *    projections) and cat them into the buffer to send before every step but
   *    the last: a read and a write of the local K and V each time. */
  double cp = ring, steps = cp - 1;
  double heads = pl->in->heads / pl->in->tp,
         out = c->tokens * heads * (pl->mla ? pl->in->mla_v_head_dim : pl->head_dim);
  double kv = chunk / c->ab; /* elements of the local K and V */
  t->cp_fwd += fmax(0, fwd - t->attn_fwd / cp);
  t->cp_bwd += fmax(0, fwd - t->attn_bwd / cp);
  double copies = (1 + steps) * 2 * kv * c->ab; /* contiguous(), then a cat a step */
  double merge = out * (c->ab + 4 + 6 * 4 + 2 * 4) * steps + out * (4 + c->ab);
  t->memory_fwd += memory_seconds(&c->g, merge + copies);
  double grads = 4 * (out + kv) + steps * ((out + kv) * (4 + c->ab + 4) + 2 * kv * 4);
  t->memory_bwd += memory_seconds(&c->g, grads + copies);
  double dkv = 2 * kv * 4 / bw; /* fp32 dk, dv to the next rank, each step */
  t->cp_bwd += dkv + steps * fmax(0, dkv - t->attn_bwd / cp);
}

/* A recurrent mixer's chunked scan (Gated DeltaNet: fla chunk_gated_delta_rule;
 * Mamba-2: SSD, Dao & Gu 2024 §6): per token and head, the intra-chunk
 * attention-like products (2 x chunk x (dk + dv)) and the state update and
 * read-out (4 x dk x dv), at the attention kernels' rate; backward 2.5x. */
static void add_scan(const step_ctx *c, layer_time *t, double heads, double dk, double dv, double chunk) {
  double flops = c->tokens * heads * (2 * chunk * (dk + dv) + 4 * dk * dv);
  double fwd = flops / (c->g.attn_peak_flops_per_s * flash_fraction(&c->g, local_seq(c->pl), 1, 0));
  double bwd = 2.5 * flops / (c->g.attn_peak_flops_per_s * flash_fraction(&c->g, local_seq(c->pl), 1, 1));
  t->attn_fwd += fwd, t->attn_bwd += bwd, t->attn_kernel += fwd + bwd;
}

/* The mixer's projections and core; mixer_params: its weights on this rank. */
static void add_mixer(const step_ctx *c, layer_time *t, int mixer, double mixer_params) {
  const plan *pl = c->pl;
  double h = pl->in->hidden, T = c->tokens, tp = pl->in->tp;
  if (mixer_is_attention(mixer)) {
    add_attention_linears(c, t, mixer_params);
    add_attention_core(c, t, mixer);
    add_cp(c, t);
  }
  if (pl->in->encoder_layers > 0 && mixer != LLMEM_MIXER_ENCODER) { /* cross-attention: q, o over the target, */
    double S = pl->source_len / pl->in->cp * pl->in->micro_batch;   /* k, v over the source, every source key */
    double q_out = pl->in->heads * pl->head_dim / tp, kv_out = fmax(pl->kv_heads / tp, 1) * pl->head_dim;
    add_linear(c, t, T, h, q_out, 1);
    add_linear(c, t, T, q_out, h, 1);
    add_linear(c, t, S, h, 2 * kv_out, 1);
    add_attention_core(c, t, LLMEM_MIXER_ENCODER);
  } else if (mixer == LLMEM_MIXER_LINEAR) {
    double v = pl->in->linear_value_heads * pl->in->linear_value_head_dim / tp;
    add_linear(c, t, T, h, (mixer_params - v * h) / h, 1); /* in_proj_qkvz and in_proj_ba */
    add_linear(c, t, T, v, h, 1);
    add_scan(c, t, pl->in->linear_value_heads / tp, pl->in->linear_key_head_dim, pl->in->linear_value_head_dim,
             64); /* fla's chunk size BT = 64 */
  } else if (mixer == LLMEM_MIXER_SSM) {
    double inner = pl->in->ssm_heads * pl->in->ssm_head_dim / tp;
    add_linear(c, t, T, h, (mixer_params - inner * h) / h, 1);
    add_linear(c, t, T, inner, h, 1);
    add_scan(c, t, pl->in->ssm_heads / tp, pl->in->ssm_state_size, pl->in->ssm_head_dim, pl->in->ssm_chunk_size);
  }
}

static layer_time layer_seconds(const step_ctx *ctx, int layer) {
  const plan *pl = ctx->pl;
  step_ctx enc = *ctx; /* an encoder layer runs over the source tokens */
  if (layer < (int)pl->in->encoder_layers) enc.tokens = pl->source_len / pl->in->cp * pl->in->micro_batch;
  const step_ctx *c = &enc;
  layer_time t = {0};
  t.sac_fwd = -1;
  layer_params lp = layer_params_on_rank(pl, layer);
  double mats = pl->gated ? 3 : 2, h = pl->in->hidden, T = c->tokens;
  double f = pl->in->ffn_hidden / pl->in->tp;
  int mixer = layer_mixer(pl, layer), mlp = layer_mlp(pl, layer);
  if (mlp == LLMEM_LMLP_NONE) {
    add_mixer(c, &t, mixer, lp.matrix_count);
    f = 0;
  } else if (mlp == LLMEM_LMLP_MOE) {
    double shared = pl->in->moe_shared_experts * mats * h * pl->shared_ffn / pl->in->tp;
    add_mixer(c, &t, mixer, lp.matrix_count - shared);
    if (pl->in->moe_shared_experts > 0) add_mlp(c, &t, T, pl->shared_ffn / pl->in->tp, pl->in->moe_shared_experts);
    /* routed: the EP group's tokens x top_k spread over the experts */
    double local = pl->in->moe_experts / pl->in->ep,
           per_expert = T * pl->in->moe_top_k * pl->in->ep / pl->in->moe_experts;
    f = pl->expert_ffn / pl->in->etp;
    double before = t.linear_fwd;
    add_mlp(c, &t, per_expert, f, local);
    add_linear(c, &t, T, h, pl->in->moe_experts, 1); /* router */
    /* per-op SAC rebuilds the routed experts (_grouped_mm) and the router gate whole, every other mm of the rest
     * (docs/memory-model.md §7.10); the all-to-all outputs are kept: no exchange again */
    double rebuilt = t.linear_fwd - before;
    if ((int)pl->in->recompute == LLMEM_RECOMPUTE_PER_OP) t.sac_fwd = before / 2 + rebuilt;
    if (pl->in->ep > 1) {
      double bytes = T * pl->in->moe_top_k * h * c->ab * ring(pl->in->ep);
      double a2a = 2 * bytes / group_bytes_per_s(c, pl->in->ep, pl->in->tp);
      t.ep_fwd += a2a;
      t.ep_bwd += a2a;
    }
  } else {
    add_mixer(c, &t, mixer, lp.matrix_count - mats * h * f);
    add_mlp(c, &t, T, f, 1);
    if ((int)pl->in->recompute == LLMEM_RECOMPUTE_PER_OP && mixer_is_attention(mixer) && !pl->mla &&
        pl->in->encoder_layers == 0 && (int)pl->in->attn_output_gate == 0)
      add_sac_recompute(c, &t, f);
  }
  add_pointwise(c, &t, f, mixer, mlp);
  add_lora(c, &t, layer);
  add_dequant(c, &t, lp.quantizable_count);
  add_tp(c, &t);
  return t;
}

/* The share of the compute a collective over a group of `size` ranks
 * `stride` apart takes while it overlaps (Calculon processor_usage, per
 * network: NVLink's, or the network's). Its kernels' SM and HBM use goes with
 * the bytes a second they move: a ring across nodes whose NICs outrun
 * NVLink runs at NVLink's rate, so it takes NVLink's share. */
static double compute_share(const step_ctx *c, double size, double stride) {
  return ring_bytes_per_s(c, size, stride) >= c->g.intra_bytes_per_s ? c->g.intra_compute_share
                                                                     : c->g.inter_compute_share;
}

/* Time `comm` adds beside `compute` it overlaps: what the compute cannot hide,
 * and the share of the compute the hidden part takes. */
static double overlapped_seconds(double comm, double compute, double share) {
  return fmax(0, comm - compute) + share * fmin(comm, compute);
}

/* TP collectives left exposed: all of them, or with tp_comm_overlap (Megatron
 * --tp-comm-overlap: Transformer Engine's userbuffers split each all-gather /
 * reduce-scatter into chunks pipelined with the GEMM that consumes or produces
 * them; torchtitan's async TP the same with SymmetricMemory) what the layer's
 * GEMMs cannot hide, and the compute the hidden part takes. */
static double tp_exposed(const step_ctx *c, double tp, double linear) {
  const plan *pl = c->pl;
  return (int)pl->in->tp_comm_overlap != 0 ? overlapped_seconds(tp, linear, compute_share(c, pl->in->tp, 1)) : tp;
}

/* Forward, backward and recomputed forward of one layer for one micro-batch,
 * n times, added to parts (llmem_step_part). */
static void add_layer_pass(const step_ctx *c, const layer_time *t, double recompute_share, double n, double *p) {
  const plan *pl = c->pl;
  double fwd_tp = tp_exposed(c, t->tp_fwd, t->linear_fwd) + t->tp_fwd_serial;
  double fwd = t->linear_fwd + t->attn_fwd + t->memory_fwd + fwd_tp + t->ep_fwd + t->cp_fwd;
  double linear_bwd = t->linear_bwd;
  if ((int)pl->in->ft_method != LLMEM_FT_FULL) linear_bwd /= 2; /* frozen weights: no weight gradients */
  double bwd_tp = tp_exposed(c, t->tp_bwd, linear_bwd) + t->tp_bwd_serial;
  double again = 0;
  if ((int)pl->in->recompute == LLMEM_RECOMPUTE_FULL) again = fwd * recompute_share;
  else if ((int)pl->in->recompute == LLMEM_RECOMPUTE_PER_OP) /* every other mm (add_sac_recompute) */
    again = (t->sac_fwd >= 0 ? t->sac_fwd + tp_exposed(c, t->sac_tp, t->sac_fwd) : t->linear_fwd / 2) + t->memory_fwd;
  else if ((int)pl->in->recompute == LLMEM_RECOMPUTE_SELECTIVE) again = t->attn_fwd;
  p[LLMEM_STEP_MATMULS] += n * (t->linear_fwd + linear_bwd);
  /* eager/math attention's GEMMs and pointwise kernels are matmul and memory-bound kernels */
  p[LLMEM_STEP_MATMULS] += n * t->attn_gemm;
  p[LLMEM_STEP_ATTENTION] += n * t->attn_kernel; /* summed, not the rest of a difference (a rounding residue) */
  p[LLMEM_STEP_MEMORY_BOUND] += n * (t->memory_fwd + t->memory_bwd + t->attn_memory);
  p[LLMEM_STEP_TP_COMM] += n * (fwd_tp + bwd_tp);
  p[LLMEM_STEP_EP_COMM] += n * (t->ep_fwd + t->ep_bwd);
  p[LLMEM_STEP_CP_COMM] += n * (t->cp_fwd + t->cp_bwd);
  p[LLMEM_STEP_RECOMPUTE] += n * again;
}

static double sum_parts(const double *p) {
  double s = 0;
  for (int k = 0; k < LLMEM_STEP_PART_COUNT; k++) s += p[k];
  return s;
}

/* Bytes through HBM per logit of the loss, forward and backward. Fused or
 * compiled: read the logits, write their gradient. Eager PyTorch: cast to
 * fp32, log-softmax, its backward, cast back. Megatron's unfused
 * vocab-parallel cross-entropy (megatron/core/tensor_parallel/cross_entropy.py
 * @f2e5db4, from 2019's mpu on) runs one kernel per step in fp32: .float()
 * (r ab, w 4), max (r 4), -= max (r 4, w 4), exp_ (r 4, w 4), sum (r 4),
 * div_ (r 4, w 4); backward mul_ by the loss gradient (r 4, w 4) and the cast
 * back (r 4, w ab). */
static double loss_bytes_per_logit(const step_ctx *c) {
  const plan *pl = c->pl;
  if (pl->loss == LLMEM_LOSS_CCE) return 0; /* the logits stay in on-chip tiles (loss.c cce_bytes) */
  /* TRL's row-wise log_softmax in 16 bits: read and write forward; the backward's gather scatter, the
   * log-softmax gradient (reads the output), the stack and the division's gradient, each a pass */
  if (pl->loss == LLMEM_LOSS_SELECTIVE) return 8 * c->ab;
  if (pl->loss == LLMEM_LOSS_FUSED || pl->loss == LLMEM_LOSS_COMPILED) return 3 * c->ab;
  int megatron = is_megatron(pl);
  if (megatron && pl->loss == LLMEM_LOSS_STANDARD) return 2 * c->ab + 48;
  if (pl->loss == LLMEM_LOSS_STANDARD || pl->loss == LLMEM_LOSS_CHUNKED || pl->loss == LLMEM_LOSS_HF_UPCAST) {
    /* F.cross_entropy on .float() logits: the cast (r ab, w 4), log_softmax,
     * nll_loss's backward zero-filling its fp32 gradient (w 4), log_softmax's
     * backward and the cast back (r 4, w ab). aten/src/ATen/native/cuda/
     * SoftMax.cu host_softmax: a row of more than sharedMemPerBlock (48 KiB,
     * 12k fp32 logits) runs cunn_SoftMaxForward, which reads the row three
     * times (ilpReduce for the max, again for the sum of exponentials, then
     * WriteFpropResults), else cunn_SoftMaxForwardSmem once; cunn_SoftMaxBackward
     * reads the gradient for its sum, then the gradient and the output again */
    double row_bytes = pl->vocab_padded / pl->in->tp * 4;
    double forward = row_bytes >= 48 * 1024 ? 3 * 4 + 4 : 4 + 4, backward = 4 + (3 * 4 + 4);
    return 2 * c->ab + 2 * 4 + forward + backward; /* the casts' 16-bit and fp32 sides */
  }
  if (pl->loss == LLMEM_LOSS_BF16_CE || pl->loss == LLMEM_LOSS_CHUNKED_INPLACE) {
    /* the same kernels in the logits' dtype, without the casts (loss.c bf16_ce_bytes): the log-softmax's reads
     * and write, nll_loss's zero-filled gradient, the log-softmax backward's three reads and write; the in-place
     * chunks recompute the log-softmax in the backward and copy each chunk's gradient into the logits */
    double row = pl->vocab_padded / pl->in->tp * c->ab, forward = (row >= 48 * 1024 ? 3 : 1) * c->ab + c->ab;
    double backward = c->ab + 4 * c->ab;
    return forward + backward + (pl->loss == LLMEM_LOSS_CHUNKED_INPLACE ? forward + 2 * c->ab : 0);
  }
  return 2 * c->ab + 24;
}

/* The output layer and loss on the last stage, per micro-batch: its GEMMs
 * (*matmuls) and the loss's passes over the logits (*loss). */
static void head_parts(const step_ctx *c, double *matmuls, double *loss) {
  const plan *pl = c->pl;
  *matmuls = *loss = 0;
  if ((int)pl->in->head != LLMEM_HEAD_LM) return;
  double f, b, vocab = pl->vocab_padded / pl->in->tp;
  gpu_rates g16 = c->g; /* float8 recipes keep the output layer in 16-bit */
  g16.matmul_flops_per_s = g16.matmul16_flops_per_s;
  gemm_bytes io = {c->ab, c->ab};
  linear_seconds(&g16, c->tokens, pl->in->hidden, vocab, io, wgrad_bytes(c, io), &f, &b);
  *matmuls = f + b;
  if (pl->loss == LLMEM_LOSS_CCE) *matmuls += f; /* CCE's backward recomputes the logit tiles */
  *loss = memory_seconds(&c->g, c->tokens * vocab * loss_bytes_per_logit(c));
}

static void add_head(const step_ctx *c, double n, double *p) {
  double matmuls, loss;
  head_parts(c, &matmuls, &loss);
  p[LLMEM_STEP_MATMULS] += n * matmuls;
  p[LLMEM_STEP_MEMORY_BOUND] += n * loss;
}

/* The word embedding's weight gradient, per micro-batch. PyTorch's dense
 * embedding backward allocates the whole [vocab, hidden] gradient zero-filled
 * in the incoming gradient's dtype and scatters the tokens' rows into it
 * (pytorch aten/src/ATen/native/cuda/Embedding.cu embedding_dense_backward_cuda
 * and EmbeddingBackwardKernel.cu embedding_backward_cuda_kernel @d299946:
 * at::zeros({num_weights, ...}, grad.options())): a write of every row, however
 * few tokens. Megatron's embedding is F.embedding over the rank's vocabulary
 * shard (megatron/core/tensor_parallel/layers.py VocabParallelEmbedding at
 * core_v0.8.0), and its DDP hook then adds that .grad into the fp32 main_grad
 * (megatron/core/distributed/distributed_data_parallel.py _make_param_hook at
 * core_v0.8.0: param.main_grad.add_(param.grad.data); read main_grad and the
 * gradient, write main_grad), every micro-batch. Frozen embeddings: none (an
 * adapter run trains the weight only as a full module, or as the tied head). */
double embedding_backward_seconds(const plan *pl, const gpu_rates *g) {
  int fm = pl->full_modules;
  int trained = (int)pl->in->ft_method == LLMEM_FT_FULL || (fm & (1 << LLMEM_FM_EMBEDDING)) ||
                ((int)pl->in->tied_embeddings != 0 && (fm & (1 << LLMEM_FM_HEAD)));
  if (!trained || pl->vocab_padded <= 0) return 0;
  double elements = pl->vocab_padded / pl->in->tp * pl->in->hidden, ab = pl->act_bytes;
  double bytes = elements * ab;
  if (is_megatron(pl)) bytes += elements * (2 * pl->grad_bytes + ab);
  return memory_seconds(g, bytes);
}

/* torch.autocast over fp32 parameters (plan.c derive_bytes: HF Trainer
 * bf16/fp16 on an fp32 model), per micro-batch: each matmul casts its fp32
 * weight to 16 bits once a forward (cached for the autocast region:
 * aten/src/ATen/autocast_mode.cpp cached_cast) and again in a checkpointed
 * layer's recompute (its own region, torch/utils/checkpoint.py recompute_fn;
 * per-op SAC's policy does not save the casts), read 4 write ab; the backward
 * casts each 16-bit weight gradient to the parameter's fp32 (ToCopyBackward0:
 * r ab, w 4) and, from the step's second micro-batch on, AccumulateGrad adds
 * it into .grad (r 4 twice, w 4; the first is taken as .grad). The word
 * embedding is not cast (embedding is not on autocast's lower-precision
 * list); a tied head casts it as its weight. */
static double autocast_weight_seconds(const step_ctx *c, double total, double recompute_share) {
  const plan *pl = c->pl;
  if (!pl->autocast) return 0;
  int tied_head = (int)pl->in->tied_embeddings != 0 && (int)pl->in->head == LLMEM_HEAD_LM;
  double cast =
      (total - embedding_params(pl) + (tied_head ? pl->in->vocab * pl->in->hidden : 0)) / (pl->in->tp * pl->in->pp);
  double recasts = (int)pl->in->recompute == LLMEM_RECOMPUTE_FULL     ? recompute_share
                   : (int)pl->in->recompute == LLMEM_RECOMPUTE_PER_OP ? 1
                                                                      : 0;
  double accumulate = (pl->grad_accum - 1) / pl->grad_accum * 12;
  return memory_seconds(&c->g, cast * ((1 + recasts) * (4 + c->ab) + (c->ab + 4) + accumulate));
}

/* Bytes a parameter of PyTorch's AdamW without the fused kernel
 * (torch/optim/adamw.py: _multi_tensor_adamw, foreach, the default on CUDA;
 * _single_tensor_adamw the same ops a tensor at a time) and of grad-norm
 * clipping (clip_grad_norm_, max norm 1.0 by default in torchtitan and the HF
 * Trainer), one kernel per op over every tensor: decay mul_ (r p, w p), lerp_
 * (r m, r g, w m), mul_ (r v, w v), addcmul_ (r v, r g twice, w v), sqrt (r v,
 * w s), div_ and add_ (r s, w s each), addcdiv_ (r p, r m, r s, w p); the norm
 * (r g), the clip mul_ (r g, w g). */
static double unfused_adamw_bytes(double param_b, double grad_b, double state_b) {
  return 4 * param_b + 6 * grad_b + 14 * state_b;
}

/* Bytes a matrix parameter of torch.optim.Adafactor moves in its default
 * for-loop step (torch/optim/_adafactor.py _single_tensor_adafactor, pytorch
 * 051d6a0; foreach only when asked): the parameter's norm (r p), decoupled
 * weight decay mul_ (r p, w p), the gradient's row and column norms (r g
 * each), the variance estimate row_var @ col_var written whole (w s), its
 * div_, clamp_ and rsqrt_ (r s, w s each), mul_ by the gradient (r s, r g,
 * w s), the update's norm (r s), and param.add_ (r p, r s, w p). Its two
 * .item() host syncs a tensor are not counted. */
static double adafactor_bytes(double param_b, double grad_b, double state_b) {
  return 5 * param_b + 3 * grad_b + 11 * state_b;
}

/* PyTorch's own optimizer (not Megatron's or DeepSpeed's fused Adam), as
 * core/states.c decides it, without the fused kernel (the stack's profile:
 * torchtitan foreach until 2025-02, optimizer.py @9dec370 fused=False). */
static int unfused_torch_adamw(const plan *pl) {
  int torch_native = (int)pl->in->engine == LLMEM_ENGINE_SINGLE || (int)pl->in->engine == LLMEM_ENGINE_DDP ||
                     (int)pl->in->engine == LLMEM_ENGINE_FSDP1 || (int)pl->in->engine == LLMEM_ENGINE_FSDP2;
  int unfused = pl->optimizer_impl == LLMEM_OPT_IMPL_FOREACH || pl->optimizer_impl == LLMEM_OPT_IMPL_FOR_LOOP;
  return torch_native && unfused && (int)pl->in->optimizer == LLMEM_OPT_ADAMW;
}

/* Optimizer step over this rank's shard: read and write master weights,
 * states, read gradients (twice with norm clipping), write 16-bit weights. */
static double optimizer_seconds(const step_ctx *c, double params_here) {
  const plan *pl = c->pl;
  if ((int)pl->in->offload_optimizer != LLMEM_OFFLOAD_NONE) return 0;
  double master_b = pl->master_bytes > 0 ? pl->master_bytes : pl->weight_bytes;
  if ((int)pl->in->optimizer == LLMEM_OPT_ADAFACTOR)
    return memory_seconds(
        &c->g, params_here * adafactor_bytes(master_b, pl->grad_bytes, dtype_bytes((int)pl->in->optimizer_dtype)));
  if (unfused_torch_adamw(pl))
    return memory_seconds(
        &c->g, params_here * unfused_adamw_bytes(master_b, pl->grad_bytes, dtype_bytes((int)pl->in->optimizer_dtype)));
  double states = (int)pl->in->optimizer == LLMEM_OPT_SGD ? 0
                  : ((int)pl->in->optimizer == LLMEM_OPT_ADAM || (int)pl->in->optimizer == LLMEM_OPT_ADAMW ||
                     (int)pl->in->optimizer == LLMEM_OPT_ADAMW_8BIT)
                      ? 2
                      : 1;
  double state_b = (int)pl->in->optimizer == LLMEM_OPT_ADAMW_8BIT ? 1 : dtype_bytes((int)pl->in->optimizer_dtype);
  double per = 2 * master_b + 2 * pl->grad_bytes + 2 * states * state_b + (pl->master_bytes > 0 ? pl->weight_bytes : 0);
  return memory_seconds(&c->g, params_here * per);
}

static int is_fsdp_sharded(const plan *pl) {
  return ((int)pl->in->engine == LLMEM_ENGINE_FSDP1 || (int)pl->in->engine == LLMEM_ENGINE_FSDP2) &&
         (int)pl->in->fsdp_strategy != LLMEM_FSDP_NO_SHARD;
}

/* Bytes a parameter moves in a gather: fp8 all-gather 1, FSDP under autocast its fp32 (states.c gathers),
 * else the parameters' dtype. */
static double gathered_param_bytes(const plan *pl) {
  if (pl->in->fp8_all_gather != 0) return 1;
  return is_fsdp_sharded(pl) && pl->autocast ? 4 : pl->weight_bytes;
}

static int is_zero3(const plan *pl) {
  return ((int)pl->in->engine == LLMEM_ENGINE_DEEPSPEED || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED) &&
         pl->in->zero_stage == 3;
}

/* Ranks over which the optimizer step is split: sharded engines only. */
static double optimizer_shard(const plan *pl) {
  int sharded =
      is_fsdp_sharded(pl) || is_zero3(pl) || (int)pl->in->distributed_optimizer != 0 || pl->in->zero_stage >= 1;
  return sharded ? fmax(1, pl->shard_dense) : 1;
}

/* The host link per direction, at its rate (a lower bound on the time): PCIe
 * Gen4 x16 32 GB/s on A100, Gen5 x16 64 GB/s on H100 and later (NVIDIA A100
 * and H100 datasheets). */
static double host_link_bytes_per_s(const plan *pl) { return pl->in->bf16_tflops < 500 ? 32e9 : 64e9; }

/* Activation offload (torchtune training/_activation_offloading.py
 * OffloadActivations with its streams; the host memory simulate.c holds):
 * each forward copies the saved tensors of all but the stage's last two
 * layers to pinned host memory, each backward copies them back ahead of
 * their layer, `bytes` each way a micro-batch over the host link, on the copy
 * engines beside the compute: exposed where a pass's copies outlast its
 * compute (fwd, bwd seconds). */
static double activation_offload_seconds(const plan *pl, double bytes, double fwd, double bwd) {
  double each_way = bytes / host_link_bytes_per_s(pl);
  return fmax(0, each_way - fwd) + fmax(0, each_way - bwd);
}

/* Offloaded state over the host link, exposed: the optimizer shard's
 * gradients go down and its updated parameters come back up each step
 * (DeepSpeed ZeRO-Offload, Megatron --optimizer-cpu-offload); with parameters
 * on the host (FSDP CPUOffload, ZeRO-3 offload_param) every gather first
 * copies the shard up, per micro-batch. The host's optimizer step and NVMe's
 * own (slower) reads are not counted: offload costs at least this much. */
static double offload_seconds(const plan *pl, double trainable_shard, double params_here) {
  double bytes = 0;
  if ((int)pl->in->offload_optimizer != LLMEM_OFFLOAD_NONE)
    bytes += trainable_shard * (pl->grad_bytes + pl->weight_bytes);
  if ((int)pl->in->offload_params != LLMEM_OFFLOAD_NONE) {
    double gathers = (int)pl->in->reshard_after_forward != 0 || is_zero3(pl) ? 2 : 1;
    bytes += pl->grad_accum * gathers * pl->weight_bytes * params_here / fmax(1, pl->shard_dense);
  }
  return bytes / host_link_bytes_per_s(pl);
}

/* Megatron's interleaved schedule starts each model chunk's gradient
 * reduction as soon as that chunk's last backward is done, and gathers each
 * chunk's parameters a chunk ahead of its first forward (megatron/core/
 * pipeline_parallel/schedules.py at core_v0.8.0,
 * forward_backward_pipelining_with_interleaving: grad_sync_func and
 * param_sync_func per chunk). The last group of p micro-batches runs the v
 * chunks in turn (backward: chunk v - 1 first), so the first chunk's
 * reduction has p (v - 1) chunk passes, p (v - 1) / v micro-batch passes of
 * the stage, to hide behind, and the last chunk's (1/v of the bytes) none;
 * the gathers the same in the first group's forwards. Without virtual stages
 * (1F1B) the reductions start in the last micro-batch's backward. Megatron-LM's
 * engine only: the Megatron-DeepSpeed engine is left as it was. */
static int megatron_syncs_by_chunk(const plan *pl) {
  return (int)pl->in->engine == LLMEM_ENGINE_MEGATRON && (int)pl->in->pp_schedule == LLMEM_PP_INTERLEAVED &&
         pl->in->pp > 1 && pl->in->vpp > 1;
}

/* The micro-batch passes of the stage a chunked sync hides behind. */
static double megatron_sync_window_passes(const plan *pl) { return pl->in->pp * (pl->in->vpp - 1) / pl->in->vpp; }

/* DP / sharding communication left exposed. */
static double dp_exposed_seconds(const step_ctx *c, double params_here, double mb_fwd, double mb_bwd,
                                 double layers_here) {
  const plan *pl = c->pl;
  double group = pl->dp * pl->in->cp;
  if (group <= 1) return 0;
  double bw = ring_bytes_per_s(c, group, pl->in->tp), m = pl->grad_accum;
  double grad_b = (int)pl->in->ft_method == LLMEM_FT_FULL ? pl->grad_bytes : 0;
  double weight_b = gathered_param_bytes(pl);
  int fsdp = is_fsdp_sharded(pl), z3 = is_zero3(pl);
  double shard = pl->shard_dense;
  if (fsdp || z3) {
    /* the root (below): under PP the most loaded stage holds its layers' share and the whole of the larger
     * of the embedding and the output layer, not the stages' average (params_here) */
    double root =
        (pl->in->pp > 1 ? fmax(embedding_params(pl), head_params(pl)) : embedding_params(pl) + head_params(pl)) /
        pl->in->tp;
    if (fsdp && pl->in->pp > 1)
      params_here = fmax(0, params_here - (embedding_params(pl) + head_params(pl)) / (pl->in->tp * pl->in->pp)) + root;
    /* gathers forward (and backward when resharded), reduce-scatter per
     * micro-batch; FSDP2 under PP keeps them gathered over the micro-batches;
     * hybrid sharding all-reduces the gradient shards over the replicas */
    double gathers = (int)pl->in->reshard_after_forward != 0 || z3 ? 2 : 1;
    double rounds = fsdp && pl->in->pp > 1 ? 1 : m;
    double shard_bw = ring_bytes_per_s(c, shard, pl->in->tp),
           replica_bw = ring_bytes_per_s(c, group / shard, pl->in->tp * shard);
    /* FSDP under no_sync (parallel.accumulate_no_sync) reduces once a step: its bytes spread over the rounds */
    if (fsdp && pl->accumulate_no_sync) grad_b /= rounds;
    double per_round = collective_seconds(params_here * (gathers * weight_b + grad_b), shard, 1, shard_bw) +
                       collective_seconds(params_here * grad_b / shard, group / shard, 2, replica_bw);
    double total = per_round * rounds;
    double exposed = per_round / fmax(1, layers_here); /* the first gather, the last reduction */
    if (fsdp) {
      /* per-block units under a root unit holding the rest (torchtitan
       * parallelize_llama.py @9dec370 apply_fsdp: fully_shard per transformer
       * block, then fully_shard(model)): the root's gather runs before the
       * first block (and again as the backward starts when resharded, the
       * output layer's backward coming first), its reduce-scatter after the
       * last (the embedding's gradient comes last): nothing to hide behind.
       * The root holds the embedding and the output layer (the first and the
       * last stage's under PP: the larger). Each round: every micro-batch
       * without PP. */
      double root_round = collective_seconds(root * (gathers * weight_b + grad_b), shard, 1, shard_bw) +
                          collective_seconds(root * grad_b / shard, group / shard, 2, replica_bw);
      exposed = rounds * (root_round + (per_round - root_round) / fmax(1, layers_here)); /* each round */
      total -= rounds * root_round;                                                      /* exposed, not overlapped */
    }
    return overlapped_seconds(total, m * (mb_fwd + mb_bwd), compute_share(c, shard, pl->in->tp)) + exposed;
  }
  /* unsharded gradients: one all-reduce; sharded optimizer: reduce-scatter + all-gather */
  int sharded = (int)pl->in->distributed_optimizer != 0 || pl->in->zero_stage >= 1;
  double t = sharded ? collective_seconds(params_here * (grad_b + weight_b), shard, 1, bw)
                     : collective_seconds(params_here * grad_b, group, 2, bw);
  int overlapped = pl->overlap_comm || (int)pl->in->engine == LLMEM_ENGINE_DDP ||
                   (int)pl->in->engine == LLMEM_ENGINE_FSDP1 || (int)pl->in->engine == LLMEM_ENGINE_FSDP2;
  if (!overlapped) return t;
  double window = sharded ? mb_fwd + mb_bwd : mb_bwd, last = t / fmax(1, layers_here);
  if (megatron_syncs_by_chunk(pl)) {
    window *= megatron_sync_window_passes(pl);
    last = t / pl->in->vpp;
  }
  return overlapped_seconds(t, window, compute_share(c, sharded ? shard : group, pl->in->tp)) + last;
}

/* FSDP2's copies on the compute stream, per round (the rounds as
 * dp_exposed_seconds): after each all-gather, its copy-out
 * (torch/distributed/_composable/fsdp/_fsdp_collectives.py,
 * foreach_all_gather_copy_out: split_with_sizes_copy) reads the gathered
 * buffer and writes every unsharded parameter, once a gather (twice a round
 * when resharded after the forward); before each reduce-scatter, its copy-in
 * (foreach_reduce's foreach_reduce_scatter_copy_in) reads every unsharded
 * gradient (the gathered parameters' dtype) and writes it in the reduce dtype,
 * and the compute stream waits for it ("Only after the copy-in finishes can
 * we free the gradients": current_stream.wait_stream(reduce_scatter_stream),
 * or the copy-in on the current stream in later versions). */
static double fsdp2_copies_seconds(const step_ctx *c, double params_here) {
  const plan *pl = c->pl;
  if ((int)pl->in->engine != LLMEM_ENGINE_FSDP2 || !is_fsdp_sharded(pl) || pl->shard_dense <= 1) return 0;
  double gathers = (int)pl->in->reshard_after_forward != 0 ? 2 : 1, rounds = pl->in->pp > 1 ? 1 : pl->grad_accum;
  double weight_b = gathered_param_bytes(pl);
  double copy_in = (int)pl->in->ft_method == LLMEM_FT_FULL ? (pl->autocast ? 4 : pl->weight_bytes) + pl->grad_bytes : 0;
  return memory_seconds(&c->g, rounds * params_here * (gathers * 2 * weight_b + copy_in));
}

/* The vision tower on the first stage (its GEMMs over every image of the micro-batch, the
 * backward when it trains) and the MTP depths on the last (a layer of the last kind and a
 * head each), added to the stage pass: the slowest stage. */
static void add_extras(const step_ctx *c, const layer_time *last_kind, double share, double *p) {
  const plan *pl = c->pl;
  if (pl->in->vision_layers > 0) {
    vision_cost v = vision_of(pl);
    double f = 0, b = 0, d = pl->in->vision_hidden;
    gemm_bytes io = {c->ab, c->ab};
    linear_seconds(&c->g, v.tokens_per_microbatch, d, (v.tower_params + v.projector_params) / (d * pl->in->tp), io,
                   wgrad_bytes(c, io), &f, &b);
    p[LLMEM_STEP_MATMULS] += f + (v.trains ? b : 0);
  }
  if (pl->in->mtp_layers > 0) {
    add_layer_pass(c, last_kind, share, pl->in->mtp_layers, p);
    add_head(c, pl->in->mtp_layers, p);
  }
}

/* Megatron's interleaved schedule posts each chunk's sends and receives
 * beside the next chunk's compute and waits for them only when their data is
 * needed (--overlap-p2p-communication, megatron/core/pipeline_parallel/
 * schedules.py forward_backward_pipelining_with_interleaving: overlap_p2p_comm);
 * the default since Megatron-LM 4eeff55 (2023-10-12), and turned off without
 * virtual stages (megatron/training/arguments.py at core_v0.8.0, "non-interleaved
 * schedule does not support overlapping p2p communication"). A config without
 * framework_version is the current code. Megatron-LM's engine only. */
static int megatron_overlaps_p2p(const plan *pl) {
  double month = pl->in->framework_month, since = 2023 * 12 + 9; /* YM(2023, 10), core/profiles.c */
  return (int)pl->in->engine == LLMEM_ENGINE_MEGATRON && (int)pl->in->pp_schedule == LLMEM_PP_INTERLEAVED &&
         pl->in->vpp > 1 && (isnan(month) || month >= since);
}

/* Activation sends between stages, forward and backward, for the step's m
 * micro-batches over `compute` seconds of stage passes: exposed, or with
 * Megatron's p2p overlap hidden behind that compute (taking its share). */
static double p2p_seconds(const step_ctx *c, double m, double compute) {
  const plan *pl = c->pl;
  if (pl->in->pp <= 1) return 0;
  double v = (int)pl->in->pp_schedule == LLMEM_PP_INTERLEAVED || plan_v_shape(pl) ? pl->in->vpp : 1;
  /* split over TP by SP, or by Megatron's scatter/gather: each TP rank sends
   * 1/t, the receivers all-gather it over NVLink (Narayanan et al. 2021 §4.1) */
  int megatron = is_megatron(pl);
  double full = c->tokens * pl->in->hidden * c->ab, stride = pl->in->tp * pl->in->cp * pl->dp;
  double bytes = full / (pl->sp || megatron ? pl->in->tp : 1);
  double gather = !pl->sp && megatron ? collective_seconds(full, pl->in->tp, 1, ring_bytes_per_s(c, pl->in->tp, 1)) : 0;
  double p2p = 2 * v * m * (bytes / group_bytes_per_s(c, 2, stride) + gather);
  return megatron_overlaps_p2p(pl) ? overlapped_seconds(p2p, compute, compute_share(c, 2, stride)) : p2p;
}

double step_time_seconds(const plan *pl, double *tokens_per_second_per_gpu, double *parts) {
  step_ctx c;
  c.pl = pl;
  c.g = gpu_rates_for(pl);
  c.tokens = pl->in->micro_batch * pl->in->seq_len / pl->in->cp;
  c.ab = pl->act_bytes;
  c.fused = (int)pl->in->torch_compile != 0 || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON ||
            (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED || (int)pl->in->framework == LLMEM_FW_MEGATRON;
  double layers_here = pl->layers / pl->in->pp;
  double share = pl->recompute_layers > 0 ? fmin(1, pl->recompute_layers * pl->in->pp / pl->layers) : 1;

  /* time each layer kind (mixer x MLP) once; a stage holds the kinds in the model's proportions */
  layer_time kind_time[LAYER_KIND_COUNT];
  double kind_n[LAYER_KIND_COUNT] = {0}, kind_saved[LAYER_KIND_COUNT] = {0};
  int offload = (int)pl->in->activation_offload != 0;
  for (int i = 0; i < (int)pl->layers; i++) {
    int k = layer_kind(pl, i);
    if (kind_n[k]++ > 0) continue;
    kind_time[k] = layer_seconds(&c, i);
    if (offload) { /* what a layer keeps: full recompute keeps its input alone, on the share of layers it takes */
      int full = (int)pl->in->recompute == LLMEM_RECOMPUTE_FULL;
      kind_saved[k] = (full ? share * layer_activation_bytes(pl, i, 1).saved_bytes : 0) +
                      (full ? 1 - share : 1) * layer_activation_bytes(pl, i, 0).saved_bytes;
    }
  }
  /* the output layer on the last stage, the embedding on the first: both in
   * one micro-batch's pass of a rank when unpipelined or under the V-shape
   * schedules (rank 0 holds chunks 0 and 2p - 1); DualPipe's rank 0 holds the
   * first stage of one copy and the last of the other, each micro-batch
   * passing one of them */
  double head_mm, loss, embedding = embedding_backward_seconds(pl, &c.g);
  head_parts(&c, &head_mm, &loss);
  int ends_together = pl->in->pp <= 1 || plan_v_shape(pl);
  double mb[LLMEM_STEP_PART_COUNT] = {0}; /* one micro-batch's stage pass, by part */
  if (ends_together || head_mm + loss >= embedding) {
    mb[LLMEM_STEP_MATMULS] += head_mm;
    mb[LLMEM_STEP_MEMORY_BOUND] += loss;
  }
  if (ends_together || head_mm + loss < embedding) mb[LLMEM_STEP_MEMORY_BOUND] += embedding;
  double mb_fwd = 0, mb_bwd = 0;
  for (int k = 0; k < LAYER_KIND_COUNT; k++) {
    if (kind_n[k] == 0) continue;
    const layer_time *t = &kind_time[k];
    double n = layers_here * (kind_n[k] / pl->layers);
    mb_fwd += n * (t->linear_fwd + t->attn_fwd + t->memory_fwd);
    mb_bwd += n * (t->linear_bwd + t->attn_bwd + t->memory_bwd);
    add_layer_pass(&c, t, share, n, mb);
  }
  add_extras(&c, &kind_time[layer_kind(pl, (int)pl->layers - 1)], share, mb);
  double total, active, trainable;
  model_param_counts(pl, &total, &active, &trainable);
  mb[LLMEM_STEP_MEMORY_BOUND] += autocast_weight_seconds(&c, total, share);
  double stage_mb = sum_parts(mb);

  /* pipeline: m stage-passes plus the bubble, plus activation sends */
  double m = pl->grad_accum, passes = m;
  if ((int)pl->in->pp_schedule == LLMEM_PP_DUALPIPE_V && pl->in->pp > 1) {
    /* deepseek-ai/DualPipe README @3da1bbe: bubble (PP/2 - 1)(F&B + B - 3W)
     * with PP = 2p chunks; F = W = B/2 per chunk (Qi et al.'s equal F, I, W)
     * and F&B = F + B: 2(p - 1) of the 6 units of one micro-batch's rank pass */
    passes += (pl->in->pp - 1) / 3;
  } else if (plan_dualpipe(pl)) {
    /* the same bubble with PP = p stages of L/p layers, the unit here:
     * (p/2 - 1)(3 + 2 - 3) of one micro-batch's 3 units, (p - 2)/3
     * stage-passes; the m passes are m/2 each way through the rank's two
     * stages */
    passes += (pl->in->pp - 2) / 3;
  } else if (pl->in->pp > 1 && (int)pl->in->pp_schedule != LLMEM_PP_ZERO_BUBBLE &&
             (int)pl->in->pp_schedule != LLMEM_PP_ZB_V) {
    double v = (int)pl->in->pp_schedule == LLMEM_PP_INTERLEAVED ? pl->in->vpp : 1;
    passes += (pl->in->pp - 1) / v;
  }
  double p2p = p2p_seconds(&c, m, passes * stage_mb);
  double copies = plan_dualpipe(pl) ? 2 : 1; /* DualPipe: two model copies' stages per rank */
  double params_here = copies * total / (pl->in->tp * pl->in->pp);
  double dp = dp_exposed_seconds(&c, params_here, mb_fwd, mb_bwd, copies * layers_here);
  double trainable_here = copies * trainable / (pl->in->tp * pl->in->pp) / optimizer_shard(pl);
  double copies_s = fsdp2_copies_seconds(&c, params_here), optimizer_s = optimizer_seconds(&c, trainable_here);
  double saved_per_layer = 0;
  for (int k = 0; k < LAYER_KIND_COUNT; k++) saved_per_layer += kind_saved[k] * kind_n[k] / pl->layers;
  double offload_s = offload_seconds(pl, trainable_here, params_here) +
                     m * activation_offload_seconds(pl, fmax(0, layers_here - 2) * saved_per_layer, mb_fwd, mb_bwd);
  double step = passes * stage_mb + p2p + dp + copies_s + optimizer_s + offload_s;
  if (parts) {
    for (int k = 0; k < LLMEM_STEP_PART_COUNT; k++) parts[k] = m * mb[k];
    parts[LLMEM_STEP_PIPELINE_BUBBLE] = (passes - m) * stage_mb;
    parts[LLMEM_STEP_PIPELINE_SENDS] = p2p;
    parts[LLMEM_STEP_DP_COMM] = dp;
    parts[LLMEM_STEP_FSDP_COPIES] = copies_s;
    parts[LLMEM_STEP_OPTIMIZER] = optimizer_s;
    parts[LLMEM_STEP_OFFLOAD] = offload_s;
  }
  double global_tokens = pl->in->micro_batch * pl->grad_accum * pl->dp * pl->in->seq_len;
  if (tokens_per_second_per_gpu) *tokens_per_second_per_gpu = global_tokens / step / pl->in->gpus;
  return step;
}
