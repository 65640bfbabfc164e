/* Saved and transient activation bytes of one layer, one micro-batch, one rank.
 *
 * Accounting rules of Korthikanti et al. (arXiv:2205.05198 §4.1, Table 2)
 * applied tensor by tensor to the layer as frameworks build it
 * (docs/memory-model.md §7.8 [DERIVED]): every tensor autograd keeps for the
 * backward is counted once at its dtype. With g = a, F = 4h, plain GeLU MLP,
 * dropout and eager attention this reproduces Eq.1 sbh(34 + 5as/h) (tested).
 */
#include "internal.h"


/* The normalised x an eager RMSNorm keeps for its trained weight, bytes per
 * element: transformers LlamaRMSNorm returns self.weight * hidden_states.to(
 * input_dtype) (src/transformers/models/llama/modeling_llama.py, 5dd4a635;
 * torchtune's and LitGPT's RMSNorm the same), and MulBackward0 keeps that
 * operand only when the weight requires grad (tools/autograd/derivatives.yaml
 * mul.Tensor, d327a787): the input dtype, or none when frozen (LoRA/QLoRA).
 * torchtitan's nn.RMSNorm goes through F.rms_norm, whose composite multiplies
 * the weight in fp32 and whose CUDA path is the fused kernel (aten/src/ATen/
 * native/layer_norm.cpp rms_norm_symint, 3de78edb): not this, left as it
 * was (none; under autocast the fp32 one, as every stack). */
double rmsnorm_normed_bytes(const plan *pl, double input_bytes) {
  if ((int)pl->in->ft_method != LLMEM_FT_FULL) return 0;
  if ((int)pl->in->framework == LLMEM_FW_TORCHTITAN && !pl->autocast) return 0;
  return input_bytes;
}

/* An eager RMSNorm's mean(x * x) (lit-gpt) or x.float().pow(2).mean() (transformers, torchtune): before PyTorch 2.2
 * MeanBackward kept its input, the square, because the formula read self.sym_numel() (pytorch issue #109876; fixed by
 * #109935, 2023-09-23, first released in 2.2.0): fp32 when the norm upcasts, else the input's dtype. */
double rmsnorm_square_bytes(const plan *pl, double input_bytes) {
  return pl->mean_keeps_input ? (pl->norm_upcast ? 4 : input_bytes) : 0;
}

typedef struct {
  double tokens;     /* s/cp * b on this rank */
  double seq_keys;   /* keys each query attends to (full sequence) */
  double outside;    /* divisor of tensors outside the TP region: tp with SP, else 1 */
  double lin_in;     /* divisor of the column-parallel linears' saved input: tp with Megatron's SP */
  double ab;         /* activation bytes */
  double lin;        /* bytes of a saved linear input (1 with fp8 linears) */
  double norm_saved; /* bytes per element a norm keeps */
  double residual;   /* bytes per element of the residual stream (fp32 under autocast) */
  int autocast;      /* torch.autocast over fp32 parameters */
  int fused_mlp;
} shape;

static shape layer_shape(const plan *pl) {
  shape sh;
  sh.tokens = pl->in->seq_len / pl->in->cp * pl->in->micro_batch;
  sh.seq_keys = pl->in->seq_len;
  sh.outside = pl->sp ? pl->in->tp : 1;
  /* Megatron's SP linears save their sequence-sharded input and all-gather it into the global
   * buffer, again in the backward (megatron/core/tensor_parallel/layers.py @d98e8a6
   * LinearWithGradAccumulationAndAsyncCommunication: ctx.save_for_backward(input, weight));
   * PyTorch's SP hands the attention and the MLP a Replicate input (PrepareModuleInput
   * desired_input_layouts=(Replicate(),), torchtitan parallelize.py apply_tp @0cb74355), an
   * all-gathered full-sequence tensor that q/k/v (gate/up) keep for the backward as F.linear's
   * saved input (torch/distributed/tensor/parallel/style.py PrepareModuleInput @004c2c9a) */
  sh.lin_in = pl->sp && !plan_dtensor_tp(pl) ? pl->in->tp : 1;
  sh.ab = pl->act_bytes;
  /* with a recipe, the columnwise quantised copy with its scales (§4.6) */
  sh.lin = pl->fp8_recipe >= 0 ? pl->fp8_input_bytes : pl->fp8_linear ? 1 : pl->act_bytes;
  int megatron = (int)pl->in->engine == LLMEM_ENGINE_MEGATRON || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  /* Eager RMSNorm/LayerNorm (HF, torchtitan) keeps the fp32 upcast of its input
   * (x.float() feeds pow and mul); fused kernels (TE/apex, torch.compile) keep
   * the input at its dtype plus per-token statistics. */
  /* torch.autocast with fp32 parameters (HF Trainer fp16/bf16 on an fp32
   * model): embeddings, norms and residual adds produce fp32; matmuls run on
   * 16-bit copies of their inputs. */
  sh.autocast = pl->autocast;
  sh.residual = sh.autocast ? 4 : pl->act_bytes;
  double normed = rmsnorm_normed_bytes(pl, sh.residual);
  if (megatron || (int)pl->in->torch_compile != 0) sh.norm_saved = pl->act_bytes;
  else if (pl->norm_width == 1 && !pl->norm_upcast) /* training.norm_upcast off: x itself (+ x * rsqrt) */
    sh.norm_saved = sh.residual + normed + rmsnorm_square_bytes(pl, sh.residual);
  else if (pl->norm_width == 1) /* x.float() input (+ the normed x for the weight) */
    sh.norm_saved = 4 + normed + rmsnorm_square_bytes(pl, sh.residual);
  else sh.norm_saved = sh.residual; /* native layer_norm keeps its input */
  /* Fused SwiGLU (TE/Megatron bias_swiglu, torch.compile) keeps gate+up and the
   * product; eager keeps gate, up, silu(gate) and the product (§7.8 c_F). */
  sh.fused_mlp = megatron || (int)pl->in->torch_compile != 0;
  return sh;
}

/* PyTorch's math SDPA (aten/src/ATen/native/transformers/attention.cpp
 * _scaled_dot_product_attention_math, pytorch#135964 = 0a35986c, v2.5) upcasts
 * fp16/bf16 q, k, v to fp32 unless allow_fp16_bf16_reduction_math_sdp (default
 * off): q, k, v, scores and probabilities are fp32. Megatron's unfused core
 * attention (the Megatron engines' sdpa_math) keeps the activation dtype. */
static int torch_math_sdpa(const plan *pl) {
  int megatron = (int)pl->in->engine == LLMEM_ENGINE_MEGATRON || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  return (int)pl->in->attention == LLMEM_ATTN_SDPA_MATH && !megatron;
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
    if (save_product) push(l, n * sh->lin);
    return;
  }
  for (int i = 0; i < (sh->fused_mlp ? 2 : 3); i++) push(l, n * sh->ab);
  if (save_product) push(l, n * sh->lin);
}

/* MLP of intermediate f on `tokens` tokens: saved bytes excluding its input. */
static double mlp_internal_bytes(const plan *pl, const shape *sh, double tokens, double f, int save_product) {
  double n = tokens * f;
  double product = save_product ? n * sh->lin : 0;
  /* activation input + fc2 input; a frozen fc2 (LoRA without it) keeps no
   * input: the activation's output is saved by nothing else */
  if (!pl->gated) return n * sh->ab + product;
  if (sh->fused_mlp) return 2 * n * sh->ab + product; /* gate, up, product */
  return 3 * n * sh->ab + product;                    /* gate, up, silu(gate), product */
}

int lora_target(const plan *pl, int target) {
  return (int)pl->in->ft_method != LLMEM_FT_FULL && ((int)pl->in->lora_targets & (1 << target));
}

/* Stacks whose LoRA is PEFT's (the HF Trainer and those built on it, verl,
 * plain PyTorch); LitGPT, torchtune, torchtitan and Megatron/NeMo bring their
 * own adapter modules, which run in the input's dtype (litgpt/lora.py
 * LoRALinear, torchtune/modules/peft/lora.py LoRALinear). */
static int peft_lora(const plan *pl) {
  switch ((int)pl->in->framework) {
    case LLMEM_FW_LITGPT:
    case LLMEM_FW_TORCHTUNE:
    case LLMEM_FW_TORCHTITAN:
    case LLMEM_FW_MEGATRON:
    case LLMEM_FW_NEMO: return 0;
    default: return 1;
  }
}

/* PEFT casts an adapted linear's input to the adapter's dtype before the
 * adapter (peft tuners/lora/layer.py Linear.forward: x = self._cast_input_dtype(x,
 * lora_A.weight.dtype); tuners_utils.py _cast_input_dtype returns x.to(dtype)
 * unless the dtypes match; peft 5d602fdb). With fp32 adapters on a 16-bit
 * model that is a new tensor per adapted linear; under torch.autocast
 * lora_A's matmul casts it back to 16 bits, another new tensor (autocast
 * caches parameters only, autocast_mode.cpp cached_cast), which it keeps for
 * lora_A's gradient: each adapted linear keeps its own copy of its input in
 * the compute dtype, and the frozen base linear keeps none. Plain module
 * weights only: single GPU or DDP (FSDP's mixed precision and DeepSpeed's
 * bf16 hand the adapters over in the compute dtype). */
int lora_input_cast(const plan *pl) {
  if ((int)pl->in->ft_method == LLMEM_FT_FULL || !peft_lora(pl)) return 0;
  if ((int)pl->in->engine != LLMEM_ENGINE_SINGLE && (int)pl->in->engine != LLMEM_ENGINE_DDP) return 0;
  int act_dtype = (int)pl->in->dtype == LLMEM_DTYPE_FP8 ? LLMEM_DTYPE_BF16 : (int)pl->in->dtype;
  return pl->in->adapter_dtype != act_dtype;
}

/* LoRA adapter extras (PEFT tuners/lora/layer.py forward): lora_A output (r),
 * and with lora_dropout > 0 a dropout output + mask of the adapter input.
 * training.finetune.lora_fused_qkv: LitGPT's LoRAQKVLinear drops out the
 * fused qkv linear's input once for all of q, k and v (litgpt/lora.py
 * LoRAQKVLinear.forward: F.linear(self.lora_dropout(x), self.lora_A),
 * a2bd80bd, 2024-04; lit_gpt/lora.py the same at cf91ad27, 2023-10). */
double lora_saved_bytes(const plan *pl, int layer) {
  if ((int)pl->in->ft_method == LLMEM_FT_FULL) return 0;
  shape sh = layer_shape(pl);
  double T = sh.tokens, h = pl->in->hidden, r = pl->in->lora_rank, ab = sh.ab;
  /* lora_input_cast: the copy lora_A keeps, at the compute dtype under
   * autocast (16-bit dtypes), else at the adapter's; dropout's bool mask beside it */
  int cast = lora_input_cast(pl);
  double copy = ab < 4 ? ab : dtype_bytes((int)pl->in->adapter_dtype);
  double q_out = pl->in->heads * pl->head_dim / pl->in->tp;
  double f = layer_is_moe(pl, layer) ? pl->shared_ffn * pl->in->moe_shared_experts / pl->in->tp
                                     : pl->in->ffn_hidden / pl->in->tp;
  int has_mlp = !layer_is_moe(pl, layer) || pl->in->moe_shared_experts > 0;
  double in_dims[7] = {h, h, h, q_out, h, h, f};
  double bytes = 0;
  int qkv_dropped = 0;
  for (int t = LLMEM_LT_Q; t <= LLMEM_LT_DOWN; t++) {
    if (!lora_target(pl, t)) continue;
    if (t >= LLMEM_LT_GATE && !has_mlp) continue;
    if (t == LLMEM_LT_GATE && !pl->gated) continue;
    bytes += T * r * ab;
    if (cast) {
      bytes += T * in_dims[t] * (copy + (pl->in->lora_dropout > 0 ? 1 : 0));
      continue;
    }
    int fused = pl->lora_fused_qkv && t <= LLMEM_LT_V;
    if (pl->in->lora_dropout > 0 && !(fused && qkv_dropped)) bytes += T * in_dims[t] * (ab + 1);
    if (fused) qkv_dropped = 1;
  }
  return bytes;
}

/* torch.autocast caches the 16-bit casts of leaf tensors that require grad,
 * the parameters, and casts every other tensor on each use (aten/src/ATen/
 * autocast_mode.cpp cached_cast, pytorch 008ec6b1: can_try_cache needs
 * arg.requires_grad() && arg.is_leaf()): each linear reading the fp32 norm
 * output makes its own 16-bit copy, which its matmul keeps for the weight's
 * gradient. `linears` read it; one copy without autocast. */
static double input_copies(const shape *sh, int linears) { return sh->autocast ? linears : 1; }

/* The mixer's saved tensors and working sets, one layer, one micro-batch. */
typedef struct {
  double norm_in;  /* the input norm's saved input + rstd */
  double rstd;     /* of which the rstd */
  double proj_in;  /* the input projections' input (norm output), all its copies */
  int proj_copies; /* of which separate copies (autocast: one per linear) */
  double latent;   /* MLA compressed q and kv */
  double core[6];  /* the core's saved inputs (attention: q, k, v after RoPE) */
  int core_count;
  double core_sum; /* their sum, as the accounting adds it */
  double out_in;   /* the output projection's input */
  double lse;      /* softmax statistics (and a recurrent core's small fp32 stats) */
  double scores;   /* saved score-sized tensors (eager / math attention) */
  double drop;     /* dropout mask after the output projection */
  double q_dim, k_dim, v_dim, o_dim, kb;
  double forward_temp, backward_temp; /* freed inside the layer (without the SP gather) */
  double cp_forward, cp_backward;     /* context parallelism's ring buffers beside them */
} mixer_part;

static void set_core(mixer_part *m, const double *t, int n, double sum) {
  for (int i = 0; i < n; i++) m->core[i] = t[i];
  m->core_count = n;
  m->core_sum = sum;
}

/* Per-rank widths of q, k, v and the attention output (MLA's, or heads x head_dim; K/V repeated to
 * every query head before the kernel when repeat_kv). */
static void attention_dims(const plan *pl, mixer_part *m) {
  double t = pl->in->tp, a_t = pl->in->heads / t;
  if (pl->mla) {
    m->q_dim = a_t * (pl->in->mla_qk_nope_head_dim + pl->in->mla_qk_rope_head_dim);
    m->k_dim = m->q_dim;
    m->v_dim = a_t * pl->in->mla_v_head_dim;
    m->o_dim = m->v_dim;
    return;
  }
  double g_t = max2(pl->kv_heads / t, 1);
  m->q_dim = a_t * pl->head_dim;
  m->k_dim = (pl->repeat_kv ? a_t : g_t) * pl->head_dim;
  m->v_dim = m->k_dim;
  m->o_dim = m->q_dim;
}

/* The output projection's input: the kernel's output; with an fp8 recipe the flash kernel keeps its
 * 16-bit output and o_proj its quantised copy, except that Megatron sets save_original_input on
 * linear_proj for every recipe but delayed (Megatron-LM d98e8a6 attention.py L425-444, TE >= 2.6). */
static double out_proj_input_bytes(const plan *pl, const shape *sh, const mixer_part *m) {
  double T = sh->tokens, ab = sh->ab;
  if (pl->fp8_recipe < 0) return T * m->o_dim * sh->lin; /* kernel output = o_proj input */
  int megatron = (int)pl->in->engine == LLMEM_ENGINE_MEGATRON || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int original = megatron && pl->fp8_recipe != LLMEM_FP8_RECIPE_DELAYED;
  double kernel_out = (int)pl->in->attention == LLMEM_ATTN_FLASH || original ? ab : 0;
  return T * m->o_dim * (kernel_out + (original ? 0 : sh->lin));
}

/* Context parallelism's ring attention beside the kernel's own working set, over `ring` ranks. Megatron /
 * Transformer Engine pass K/V chunks round the ring, double-buffered. PyTorch's context_parallel (torchtitan;
 * torch/distributed/tensor/experimental/_attention.py at 0123248a, rotate method all-gather, convert_to_f32):
 * the forward makes K and V contiguous, cats them (the buffer to send) and all-gathers every rank's
 * (_AllGatherRotater: cp chunks, kept through the ring), and merges each step's output in fp32
 * (_SDPAMerger: the running fp32 output, the block's bf16 output and its fp32 cast, the merged result);
 * the backward gathers K and V again beside fp32 accumulators for dq, dk and dv (zeros_like(...,
 * float32)) and the cat of dk, dv it sends round by all-to-all with the buffer it receives. */
static void cp_ring_buffers(const plan *pl, double ring, double T, double ab, mixer_part *m) {
  double kv = 2 * T * m->k_dim;
  if (ring <= 1) return;
  if ((int)pl->in->framework != LLMEM_FW_TORCHTITAN) {
    m->cp_forward += 2 * kv * ab, m->cp_backward += 2 * kv * ab; /* KV chunks, double-buffered */
    return;
  }
  double gathered = (ring + 2) * kv * ab; /* the contiguous K, V, their cat, the all-gather's chunks */
  m->cp_forward += gathered + T * m->o_dim * (3 * 4 + ab);
  m->cp_backward += gathered + T * m->q_dim * 4 + kv * 4 + 2 * kv * 4;
}

/* The all-to-all part of context parallelism (Ulysses: DeepSpeed deepspeed/sequence/layer.py
 * DistributedAttention, ms-swift swift/sequence_parallel/ulysses.py @3602360a, verl
 * verl/utils/ulysses.py): q, k and v trade their sequence shard for a head shard before the kernel and
 * the output trades back after it (_SeqAllToAll; the backward the same for the gradients). Each exchange
 * makes the input contiguous in the send layout, receives into a buffer as large and makes the result
 * contiguous: three copies at once. K and V with fewer heads per rank than the group are repeated to
 * one each first. The kernel keeps the exchanged q, k, v and its head-sharded output, which is no longer
 * o_proj's input (the output traded back); the projections' q, k, v stay alive, held by the attention
 * module, until it returns. */
static void cp_all_to_all(const plan *pl, double T, double ab, mixer_part *m) {
  double a2a = pl->in->cp_all_to_all;
  if (a2a <= 1) return;
  if (!pl->mla) m->k_dim = m->v_dim = max2(m->k_dim, a2a * pl->head_dim); /* repeated K / V heads */
  double largest = T * max2(m->q_dim, m->k_dim) * ab;
  m->cp_forward = T * (m->q_dim + m->k_dim + m->v_dim) * ab + 2 * largest;
  m->cp_backward = T * (m->q_dim + m->k_dim + m->v_dim) * ab + 2 * largest;
}

/* The softmax statistics (flash) or the score-sized tensors (math SDPA, eager), with the score
 * working sets of the forward and the backward. */
static void attention_scores(const plan *pl, const shape *sh, mixer_part *m, double *temp, double *bwd) {
  double T = sh->tokens, ab = sh->ab, a_t = pl->in->heads / pl->in->tp, n = T * a_t * sh->seq_keys;
  m->lse = T * a_t * 4; /* flash softmax LSE, fp32 */
  *temp = *bwd = 0;
  if (torch_math_sdpa(pl)) {
    /* fp32 probabilities (_safe_softmax's result, also the matmul's input);
     * dropout: bool mask + fp32 output. Transient: the pre-softmax scores,
     * softmax's output before _safe_softmax's where, and its -inf mask (1 B). */
    m->scores = n * 4 + (pl->in->dropout > 0 ? n * (1 + 4) : 0);
    *temp = n * (4 + 4 + 1);
    *bwd = 2 * n * 4; /* _softmax_backward_data: incoming and outgoing fp32 score gradients */
    m->lse = 0;
  } else if ((int)pl->in->attention != LLMEM_ATTN_FLASH) {
    /* eager (HF): softmax in fp32 then cast (4 + 2 bytes); Megatron's unfused attention: 2 bytes */
    m->scores = n * ((int)pl->in->attention == LLMEM_ATTN_EAGER ? 4 + ab : ab);
    if (pl->in->dropout > 0)
      m->scores += n * (1 + (sh->autocast ? 4 : ab)); /* dropout mask + output (fp32 softmax under autocast) */
    /* soft-capped scores: / cap, tanh, * cap; tanh keeps its output for the
     * backward (transformers models/gemma2/modeling_gemma2.py eager_attention_forward) */
    if (pl->attn_softcap && (int)pl->in->attention == LLMEM_ATTN_EAGER) m->scores += n * ab;
    *temp = 2 * n * ab; /* pre-softmax scores + masked copy */
    *bwd = 2 * *temp;
    m->lse = 0;
  }
}

/* Softmax attention (full, sliding, chunked: eager and math attention compute
 * the whole score matrix and mask it, transformers eager_attention_forward;
 * flash kernels keep no scores either way). */
static void attention_part(const plan *pl, const shape *sh, int keep_qkv_in, mixer_part *m) {
  double T = sh->tokens, h = pl->in->hidden, ab = sh->ab;
  double out_h = T * h / sh->outside;
  attention_dims(pl, m);
  m->rstd = T * 4 / sh->outside;
  m->norm_in = out_h * sh->norm_saved + T * 4 / sh->outside; /* input (fp32 if eager) + rstd */
  m->proj_copies = (int)input_copies(sh, plan_qkv_linears(pl));
  /* norm output, one copy per linear under autocast; Megatron SP keeps it sharded, PyTorch SP gathered */
  m->proj_in = keep_qkv_in ? m->proj_copies * T * h / sh->lin_in * sh->lin : 0;
  if (pl->mla) /* compressed q and kv (+ their norms' inputs), replicated over TP */
    m->latent = T * (2 * pl->q_lora_rank + 2 * (pl->in->mla_kv_lora_rank + pl->in->mla_qk_rope_head_dim)) * ab;
  double kb = torch_math_sdpa(pl) ? 4 : ab; /* math SDPA keeps its fp32 copies of q, k, v */
  m->kb = kb;
  m->cp_forward = m->cp_backward = 0;
  cp_all_to_all(pl, T, ab, m);
  double qkv[5] = {T * m->q_dim * kb, T * m->k_dim * kb, T * m->v_dim * kb, T * m->q_dim * ab, T * m->q_dim * ab};
  if ((int)pl->in->attn_output_gate !=
      0) /* the output gate: sigmoid's output and the ungated attention output the product keeps
                      * (transformers qwen3_next/modeling_qwen3_next.py Qwen3NextAttention) */
    set_core(m, qkv, 5, T * (m->q_dim + m->k_dim + m->v_dim) * kb + 2 * T * m->q_dim * ab);
  else {
    /* training.v_view_keeps_qkv: v is a view of the fused qkv projection's
     * output and, without GQA, nothing copies it (LitGPT CausalSelfAttention:
     * qkv.view/permute/split, lit_gpt/model.py 8641822; split/view/transpose,
     * litgpt/model.py fabf765b); the kernel's saved v keeps that whole output
     * alive, q and k being RoPE copies. */
    if (pl->v_view_keeps_qkv && !pl->mla && pl->kv_heads == pl->in->heads && !torch_math_sdpa(pl))
      qkv[2] = T * (pl->in->heads + 2 * pl->kv_heads) / pl->in->tp * pl->head_dim * ab;
    set_core(m, qkv, 3, qkv[0] + qkv[1] + qkv[2]); /* attention-kernel inputs after RoPE */
  }
  if (pl->in->cp_all_to_all > 1) { /* the kernel's head-sharded output beside o_proj's input */
    m->core[m->core_count++] = T * m->o_dim * ab;
    m->core_sum += T * m->o_dim * ab;
  }
  m->out_in = out_proj_input_bytes(pl, sh, m);
  double scores_temp, scores_bwd;
  attention_scores(pl, sh, m, &scores_temp, &scores_bwd);
  m->drop = pl->in->dropout > 0 ? out_h : 0; /* 1-byte mask after o_proj */
  cp_ring_buffers(pl, pl->in->cp / pl->in->cp_all_to_all, T, ab, m);
  double rope_temp =
      T * (m->q_dim + m->k_dim) * ((int)pl->in->engine == LLMEM_ENGINE_FSDP2 ? 4 : ab); /* pre-RoPE q,k */
  m->forward_temp = rope_temp + scores_temp;
  /* dq, dk, dv, the output gradient, FlashAttention-2's fp32 dq accumulator, score gradients */
  m->backward_temp = T * (m->q_dim + m->k_dim + m->v_dim + m->o_dim) * ab + T * m->q_dim * 4 + scores_bwd;
}

/* Gated DeltaNet (transformers models/qwen3_next/modeling_qwen3_next.py
 * Qwen3NextGatedDeltaNet on fla's chunk_gated_delta_rule, flash-linear-attention
 * bc3b101 fla/ops/gated_delta_rule/chunk.py, and causal-conv1d 0d2252d): the
 * conv keeps its input (SiLU fused, recomputed); softplus keeps a.float() and
 * its fp32 output, sigmoid its output (= beta); the kernel keeps q and k after
 * l2norm (repeated to the value heads), their fp32 rstd, v, fp32 g, and A
 * ([T, Hv, 64] in k's dtype); the gated norm keeps its input, z and rstd;
 * out_proj its input. Forward: the in_proj output and the kernel's w, u,
 * chunk states h ([T/64, Hv, dk, dv] in k's dtype), v_new and o; backward
 * recomputes them and adds dh beside h. */
static void linear_part(const plan *pl, const shape *sh, int keep_in, mixer_part *m) {
  double T = sh->tokens, h = pl->in->hidden, ab = sh->ab, t = pl->in->tp;
  double hv = pl->in->linear_value_heads / t, dk = pl->in->linear_key_head_dim, dv = pl->in->linear_value_head_dim;
  double key_dim = pl->in->linear_key_heads / t * dk, value_dim = hv * dv, conv_dim = 2 * key_dim + value_dim;
  m->rstd = T * 4 / sh->outside;
  m->norm_in = T * h / sh->outside * sh->norm_saved + m->rstd;
  m->proj_in = keep_in ? T * h / sh->lin_in * sh->lin : 0;
  m->proj_copies = 1;
  double core[6] = {T * conv_dim * ab, T * hv * dk * ab,      T * hv * dk * ab, T * value_dim * ab,
                    T * hv * 64 * ab,  2 * T * value_dim * ab}; /* conv input, q, k, v, A, norm input + z */
  double sum = 0;
  for (int i = 0; i < 6; i++) sum += core[i];
  set_core(m, core, 6, sum);
  m->out_in = T * value_dim * sh->lin;
  m->lse = T * hv * (4 + 4 + ab + 4 + 4 + 4 + 4); /* a.float, softplus, beta, q/k rstd, g, norm rstd */
  double states = T / 64 * hv * dk * dv * ab;
  m->forward_temp = T * (2 * key_dim + 2 * value_dim + 2 * hv) * ab + T * hv * (dk + 3 * dv) * ab + states;
  m->backward_temp = 2 * states + T * hv * (2 * dk + 2 * dv) * ab + T * hv * 4;
  m->q_dim = hv * dk, m->k_dim = hv * dk, m->v_dim = value_dim, m->o_dim = value_dim, m->kb = ab;
}

/* Mamba-2 (mamba_ssm e9594ce mamba_ssm/ops/triton/ssd_combined.py
 * MambaSplitConv1dScanCombinedFn, called by transformers NemotronHMamba2Mixer
 * with the norm and out_proj fused): it keeps zxbcdt (the in_proj output),
 * out_x and the gated norm's fp32 rstd, and recomputes out_proj's input.
 * Megatron-LM (d98e8a6 megatron/core/ssm/mamba_mixer.py) applies the norm and
 * out_proj outside it: their inputs are kept too. Forward: the conv output,
 * fp32 chunk states [T/chunk, H, P, N] and their bf16 passed copy, fp32 CB;
 * backward: dzxbcdt, dxBC and the recomputed states. */
static void ssm_part(const plan *pl, const shape *sh, int keep_in, mixer_part *m) {
  double T = sh->tokens, h = pl->in->hidden, ab = sh->ab, t = pl->in->tp;
  double heads = pl->in->ssm_heads / t, inner = heads * pl->in->ssm_head_dim, groups = pl->in->ssm_groups / t;
  double bc = 2 * groups * pl->in->ssm_state_size, zxbcdt = 2 * inner + bc + heads, conv_dim = inner + bc;
  int megatron = (int)pl->in->engine == LLMEM_ENGINE_MEGATRON || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  m->rstd = T * 4 / sh->outside;
  m->norm_in = T * h / sh->outside * sh->norm_saved + m->rstd;
  m->proj_in = keep_in ? T * h / sh->lin_in * sh->lin : 0;
  m->proj_copies = 1;
  double core[3] = {T * zxbcdt * ab, T * inner * ab, megatron ? T * inner * ab : 0}; /* + the norm's input */
  set_core(m, core, 3, core[0] + core[1] + core[2]);
  m->out_in = megatron ? T * inner * sh->lin : 0;
  m->lse = T * groups * 4;
  double chunks = T / pl->in->ssm_chunk_size, states = chunks * heads * pl->in->ssm_head_dim * pl->in->ssm_state_size;
  m->forward_temp = T * conv_dim * ab + 2 * T * heads * 4 + states * (4 + ab) +
                    T * groups * pl->in->ssm_chunk_size * 4 + T * inner * ab;
  m->backward_temp = T * (zxbcdt + conv_dim) * ab + 2 * states * 4;
  m->q_dim = m->k_dim = m->v_dim = m->o_dim = inner, m->kb = ab;
}

/* The MLP or MoE block's saved tensors and working set. */
typedef struct {
  double norm_x, norm_rstd, norm_in, in; /* the second norm's input and rstd (and both), the block's input */
  int in_copies;                         /* separate copies of the block's input (autocast: one per linear) */
  double mlp;                            /* internal saved bytes */
  double drop;
  double temp;        /* working set */
  double routed, f_e; /* MoE: routed token copies on this rank, expert intermediate */
  double combine;     /* MoE: what the routing-score product keeps for the score gradient */
} mlp_part;

static void dense_or_moe_part(const plan *pl, const shape *sh, int moe, int keep_mlp_in, int keep_qkv_in,
                              int keep_down_in, mlp_part *b) {
  double T = sh->tokens, h = pl->in->hidden, ab = sh->ab, t = pl->in->tp;
  double out_h = T * h / sh->outside;
  /* A parallel block (GPT-J, Falcon, phi-2: x + attn(ln(x)) + mlp(ln(x)))
   * feeds the MLP the attention's norm output; with two norms (GPT-NeoX
   * use_parallel_residual) both read x, kept once when the norm keeps x itself. */
  int one_norm = (int)pl->in->parallel_block != 0 && pl->in->norms_per_layer <= 1;
  int shared_x = one_norm || ((int)pl->in->parallel_block != 0 && sh->norm_saved == sh->residual);
  b->norm_x = shared_x ? 0 : out_h * sh->norm_saved;
  b->norm_rstd = one_norm ? 0 : T * 4 / sh->outside;
  b->norm_in = b->norm_x + b->norm_rstd;
  /* under autocast the MLP's linears cast the shared norm output themselves */
  b->in_copies = moe ? 1 : (int)input_copies(sh, pl->gated ? 2 : 1);
  b->in = keep_mlp_in && (sh->autocast || !(one_norm && keep_qkv_in)) ? b->in_copies * T * h / sh->lin_in * sh->lin : 0;
  double f_t = pl->in->ffn_hidden / t;
  /* MoE: each rank receives tokens * top_k routed copies in expectation, times
   * the load imbalance (or the capacity bound when tokens are dropped) */
  double rho = pl->capacity_factor > 0 ? pl->capacity_factor : pl->in->moe_load_imbalance;
  b->routed = moe ? rho * T * pl->in->moe_top_k : 0;
  b->f_e = pl->expert_ffn / pl->in->etp;
  if (!moe) {
    b->mlp = mlp_internal_bytes(pl, sh, T, f_t, keep_down_in);
    b->temp = (pl->gated ? 3 : 2) * T * f_t * ab;
  } else {
    /* Router and dispatch (docs/memory-model.md §7.10 [DERIVED]): fp32 logits and
     * probabilities, top-k indices, permuted tokens, expert intermediates. */
    double E = pl->in->moe_experts, k = pl->in->moe_top_k, routed = b->routed;
    double router = T * E * 4 * 2 + T * k * 8;
    double dispatched = routed * h * sh->lin; /* permuted tokens = expert fc1 input */
    double experts = mlp_internal_bytes(pl, sh, routed, b->f_e, 1);
    /* The score product keeps its other operand for the score gradient: the
     * experts' outputs when scores scale them, or the routed input when they
     * scale it first (model.moe.score_before_experts). torchtitan's Llama 4 MoE
     * multiplies routed_input.to(float32) by the scores, so eager autograd keeps
     * an fp32 copy of the routed tokens (torchtitan models/moe.py MoE.forward,
     * score_before_experts=True, a9aa50696, 2025-08-05; experiments/llama4/model/
     * moe.py from e4e48349c, 2025-04-07). Compiled, the upcast is a recomputable
     * pointwise op and the bf16 gathered tokens are kept (at most). */
    double combine = routed * h * ((int)pl->in->moe_score_before != 0 && (int)pl->in->torch_compile == 0 ? 4 : ab);
    b->combine = combine;
    double shared = 0;
    if (pl->in->moe_shared_experts > 0)
      shared = pl->in->moe_shared_experts * mlp_internal_bytes(pl, sh, T, pl->shared_ffn / t, keep_down_in);
    b->mlp = router + dispatched + experts + combine + shared;
    /* all-to-all send and receive buffers, and the expert working set */
    b->temp = 2 * routed * h * ab + (pl->gated ? 3 : 2) * routed * b->f_e * ab;
  }
  b->drop = pl->in->dropout > 0 ? out_h : 0;
}

/* torchtitan's op-level SAC: inside each layer the outputs of the save list's ops are kept and every other op
 * is rebuilt in the backward (torchtitan distributed/activation_checkpoint.py SelectiveAC at b5bcd76c; each model's
 * _op_sac_save_list and _apply_op_sac before 114151ad4, #2357, 2026-03-23). Kept: the layer input; of the layer's
 * mm outputs in the order the model makes them, the 1st, 3rd, ... (`mm_count % 2 == 0` recomputes); the attention
 * kernel's output and LSE; topk's (saved since #2357: T k (4 + 8) bytes, counted for every version); the
 * all_to_all outputs of expert parallelism's token dispatch and combine (distributed/expert_parallel.py
 * all_to_all_single_autograd; on the list from c4e229115, #1672, 2025-09-06: training.sac_saves_all_to_all). The router gate's mm is forced to recompute and not counted
 * (force_recompute_mm_shapes_by_fqns ["moe.router.gate"], 9a8cb98f1, 2025-07-16). The routed experts run
 * torch._grouped_mm, which no save list holds (torch/_functorch/partitioners.py get_default_op_list
 * compute_intensive_ops): rebuilt, with the router's scores and the token gathers. */
static double per_op_saved(const plan *pl, const shape *sh, const mixer_part *m, const mlp_part *b, int moe,
                           int has_mlp, double layer_input, tensor_list *kept) {
  double T = sh->tokens, ab = sh->ab, h = pl->in->hidden, t = pl->in->tp;
  double mm[8];
  int n = 0;
  if (pl->mla) { /* deepseek_v3 model.py Attention.forward: wq (or wq_a, wq_b), wkv_a, wkv_b, wo */
    if (pl->q_lora_rank > 0) mm[n++] = T * pl->q_lora_rank * ab;
    mm[n++] = T * m->q_dim * ab;
    mm[n++] = T * (pl->in->mla_kv_lora_rank + pl->in->mla_qk_rope_head_dim) * ab;
    mm[n++] = T * pl->in->heads / t * (pl->in->mla_qk_nope_head_dim + pl->in->mla_v_head_dim) * ab;
  } else { /* wq, wk, wv (the kv heads'), wo */
    double g_dim = max2(pl->kv_heads / t, 1) * pl->head_dim;
    mm[n++] = T * m->q_dim * ab, mm[n++] = T * g_dim * ab, mm[n++] = T * g_dim * ab;
  }
  mm[n++] = T * h * ab / sh->outside;
  /* FeedForward.forward: w2(silu(w1(x)) * w3(x)); MoE: its shared experts, one FeedForward */
  double f = !has_mlp ? 0 : !moe ? pl->in->ffn_hidden / t : pl->in->moe_shared_experts * pl->shared_ffn / t;
  if (f > 0) mm[n++] = T * f * ab, mm[n++] = T * f * ab, mm[n++] = T * h * ab / sh->outside;
  push(kept, layer_input);
  double sum = layer_input;
  for (int i = 0; i < n; i += 2) push(kept, mm[i]), sum += mm[i];
  push(kept, m->out_in), push(kept, m->lse);
  sum += m->out_in + m->lse;
  if (moe) {
    double k = pl->in->moe_top_k, topk = T * k * (4 + 8);
    /* dispatched and combined tokens (training.sac_saves_all_to_all: on the save list from c4e229115, #1672) */
    double a2a = pl->in->ep > 1 && pl->sac_saves_all_to_all ? b->routed * h * ab + T * k * h * ab : 0;
    push(kept, topk), push(kept, a2a);
    sum += topk + a2a;
  }
  return sum;
}

/* What the recompute policy keeps of the full set (selective and per-op; full
 * keeps only the layer input, below). */
static double policy_saved(const plan *pl, const shape *sh, const mixer_part *m, const mlp_part *b, int moe,
                           int has_mlp, double full, double layer_input) {
  double saved = full;
  switch ((int)pl->in->recompute) {
    case LLMEM_RECOMPUTE_SELECTIVE: {
      int r = (int)pl->in->recompute_modules;
      if (r & (1 << LLMEM_RM_CORE_ATTN)) saved -= m->scores + m->lse;
      if (r & (1 << LLMEM_RM_LAYERNORM)) saved -= m->proj_in + b->in; /* norm outputs rebuilt */
      if ((r & (1 << LLMEM_RM_MLP)) && !moe) saved -= b->mlp;
      /* "moe_act" rebuilds the experts' activation (keeps the fc2 input);
       * "moe" rebuilds the whole block, that activation included: each saved
       * tensor is dropped once (Megatron transformer_config.py recompute_modules) */
      double moe_act = moe ? mlp_internal_bytes(pl, sh, b->routed, b->f_e, 1) - b->routed * b->f_e * sh->lin : 0;
      int drop_moe = (r & (1 << LLMEM_RM_MOE)) && moe;
      int drop_moe_act = drop_moe || ((r & (1 << LLMEM_RM_MOE_ACT)) && moe);
      if (drop_moe) saved -= b->mlp - moe_act;
      if (drop_moe_act) saved -= moe_act;
      if ((r & (1 << LLMEM_RM_MLA_UP_PROJ)) && pl->mla) saved -= m->core_sum;
      break;
    }
    case LLMEM_RECOMPUTE_PER_OP: {
      tensor_list kept = {{0}, 0};
      double sum = per_op_saved(pl, sh, m, b, moe, has_mlp, layer_input, &kept);
      saved = sum < full ? sum : full;
      break;
    }
    default: break;
  }
  return saved;
}

/* The same sets tensor by tensor, for the allocator: each tensor is kept or
 * rebuilt in the backward (all of them in a recomputed layer). */
static void list_tensors(const plan *pl, const shape *sh, const mixer_part *m, const mlp_part *b, int moe, int has_mlp,
                         int keep_down_in, double lora, double layer_input, double full, double saved, int recomputed,
                         layer_activations *la) {
  double T = sh->tokens, f_t = pl->in->ffn_hidden / pl->in->tp;
  tensor_list *sv = &la->saved_tensors, *rc = &la->recompute_tensors;
  sv->count = rc->count = 0;
  int r = (int)pl->in->recompute == LLMEM_RECOMPUTE_SELECTIVE ? (int)pl->in->recompute_modules : 0;
  if (!recomputed && (int)pl->in->recompute == LLMEM_RECOMPUTE_PER_OP && saved < full) {
    per_op_saved(pl, sh, m, b, moe, has_mlp, layer_input, sv);
    push(rc, full - saved); /* the op-level policy rebuilds a mix: one request */
    return;
  }
  tensor_list *kept = recomputed ? rc : sv;
  int drop_moe = (r & (1 << LLMEM_RM_MOE)) && moe;
  int drop_moe_act = drop_moe || ((r & (1 << LLMEM_RM_MOE_ACT)) && moe);
  tensor_list *norm = (r & (1 << LLMEM_RM_LAYERNORM)) ? rc : kept;
  tensor_list *core = (r & (1 << LLMEM_RM_CORE_ATTN)) ? rc : kept;
  tensor_list *qkv_l = ((r & (1 << LLMEM_RM_MLA_UP_PROJ)) && pl->mla) ? rc : kept;
  tensor_list *mlp_l = (!moe && (r & (1 << LLMEM_RM_MLP))) ? rc : kept;
  if (recomputed) push(sv, layer_input);
  push(kept, m->norm_in - m->rstd), push(kept, m->rstd);
  for (int k = 0; k < m->proj_copies; k++) push(norm, m->proj_in / m->proj_copies);
  push(kept, m->latent);
  for (int i = 0; i < m->core_count; i++) push(qkv_l, m->core[i]);
  push(kept, m->out_in);
  push(core, m->lse), push(core, m->scores);
  push(kept, m->drop);
  push(kept, b->norm_x), push(kept, b->norm_rstd);
  for (int k = 0; k < b->in_copies; k++) push(norm, b->in / b->in_copies);
  if (has_mlp && !moe) push_mlp(mlp_l, pl, sh, T, f_t, keep_down_in);
  if (moe) {
    tensor_list *block = drop_moe ? rc : kept;
    double routed = b->routed, f_e = b->f_e, h = pl->in->hidden;
    double router = T * pl->in->moe_experts * 8 + T * pl->in->moe_top_k * 8,
           experts = mlp_internal_bytes(pl, sh, routed, f_e, 1);
    push(block, T * pl->in->moe_experts * 4), push(block, T * pl->in->moe_experts * 4),
        push(block, T * pl->in->moe_top_k * 8);
    push(block, routed * h * sh->lin), push(block, routed * f_e * sh->lin), push(block, b->combine);
    if (pl->in->moe_shared_experts > 0) push(block, b->mlp - (router + routed * h * sh->lin + experts + b->combine));
    push(drop_moe_act ? rc : kept, experts - routed * f_e * sh->lin);
  }
  push(kept, b->drop);
  push(kept, lora);
}

/* A decoder layer's cross-attention over the encoder's output (transformers t5 T5LayerCrossAttention):
 * its norm's input and rstd, q's input, q over the target tokens, k and v over the source tokens,
 * the output projection's input, and the softmax statistics (flash) or scores (eager); the k/v input,
 * the encoder's output, is one tensor for every decoder layer (passes.c keeps it once). */
static double cross_attention_saved(const plan *pl, const shape *sh, tensor_list *kept) {
  double T = sh->tokens, S = pl->source_len / pl->in->cp * pl->in->micro_batch, h = pl->in->hidden, ab = sh->ab;
  double a_t = pl->in->heads / pl->in->tp, q_dim = a_t * pl->head_dim,
         kv_dim = max2(pl->kv_heads / pl->in->tp, 1) * pl->head_dim;
  double out_h = T * h / sh->outside;
  double parts[7] = {out_h * sh->norm_saved + T * 4 / sh->outside,
                     T * h / sh->lin_in * sh->lin,
                     T * q_dim * ab,
                     S * kv_dim * ab,
                     S * kv_dim * ab,
                     T * q_dim * sh->lin,
                     (int)pl->in->attention == LLMEM_ATTN_FLASH ? T * a_t * 4 : T * a_t * pl->source_len * (4 + ab)};
  double sum = 0;
  for (int i = 0; i < 7; i++) sum += parts[i], push(kept, parts[i]);
  return sum;
}

/* The MLP's forward working set beyond its saved tensors. A layer that keeps a dense MLP's internals holds
 * them as activations already (SiLU saves its input, the product both factors, fc2 its input: transformers
 * models/llama/modeling_llama.py LlamaMLP.forward, mlp_internal_bytes), so only a product nothing saves (a
 * frozen fc2) and fc2's output, until the residual add, are transient; a checkpointed layer's forward (no
 * grad), an MLP the policy recomputes and the per-op policy free each intermediate once the next is made,
 * holding up to b->temp. */
static double mlp_forward_temp(const plan *pl, const shape *sh, const mlp_part *b, int moe, int keep_down_in,
                               int recomputed) {
  int r = (int)pl->in->recompute == LLMEM_RECOMPUTE_SELECTIVE ? (int)pl->in->recompute_modules : 0;
  if (moe || recomputed || (int)pl->in->recompute == LLMEM_RECOMPUTE_PER_OP || (r & (1 << LLMEM_RM_MLP)))
    return b->temp;
  if (b->temp <= 0) return 0; /* no MLP */
  double T = sh->tokens, product = keep_down_in ? 0 : T * pl->in->ffn_hidden / pl->in->tp * sh->ab;
  return product + T * pl->in->hidden * sh->ab;
}

layer_activations layer_activation_bytes(const plan *pl, int layer, int recomputed) {
  layer_activations la = {0};
  shape sh = layer_shape(pl);
  if (layer < (int)pl->in->encoder_layers) { /* an encoder layer runs over the source tokens, attending all of them */
    sh.tokens = pl->source_len / pl->in->cp * pl->in->micro_batch;
    sh.seq_keys = pl->source_len;
  }
  double T = sh.tokens, h = pl->in->hidden, ab = sh.ab;
  int frozen = (int)pl->in->ft_method != LLMEM_FT_FULL;
  /* bitsandbytes MatMul4Bit up to 0.43.1 keeps its input in ctx.tensors
   * until the backward (autograd/_functions.py; fixed by #1270 in 0.43.2) */
  int qlora = (int)pl->in->ft_method == LLMEM_FT_QLORA && pl->quant_keeps_input;
  int mixer = layer_mixer(pl, layer), mlp_kind = layer_mlp(pl, layer);
  int moe = mlp_kind == LLMEM_LMLP_MOE, has_mlp = mlp_kind != LLMEM_LMLP_NONE;
  /* A frozen linear keeps its input only when something else needs it:
   * an adapter on it (LoRA), or an old bitsandbytes MatMul4Bit (see qlora). */
  /* Adapters that cast their input keep their own copies (lora_saved_bytes), not the shared input. */
  int own = lora_input_cast(pl);
  int keep_qkv_in =
      !frozen || qlora ||
      (!own && (lora_target(pl, LLMEM_LT_Q) || lora_target(pl, LLMEM_LT_K) || lora_target(pl, LLMEM_LT_V)));
  int keep_mlp_in =
      !frozen || qlora || (!own && (lora_target(pl, LLMEM_LT_GATE) || lora_target(pl, LLMEM_LT_UP))) || moe;
  int keep_down_in = !frozen || qlora || (!own && lora_target(pl, LLMEM_LT_DOWN));

  mixer_part m = {0};
  if (mixer_is_attention(mixer)) attention_part(pl, &sh, keep_qkv_in, &m);
  else if (mixer == LLMEM_MIXER_LINEAR) linear_part(pl, &sh, !frozen || qlora, &m);
  else if (mixer == LLMEM_MIXER_SSM) ssm_part(pl, &sh, !frozen || qlora, &m);
  mlp_part b = {0};
  if (has_mlp) dense_or_moe_part(pl, &sh, moe, keep_mlp_in, keep_qkv_in && mixer != LLMEM_MIXER_NONE, keep_down_in, &b);
  double lora = lora_saved_bytes(pl, layer);

  double full = m.norm_in + m.proj_in + m.latent + m.core_sum + m.out_in + m.lse + m.scores + m.drop + b.norm_in +
                b.in + b.mlp + b.drop + lora;
  double layer_input = T * h * sh.residual / sh.outside; /* checkpoint input (Megatron keeps it SP-sharded) */
  double saved = policy_saved(pl, &sh, &m, &b, moe, has_mlp, full, layer_input);
  list_tensors(pl, &sh, &m, &b, moe, has_mlp, keep_down_in, lora, layer_input, full, saved, recomputed, &la);
  if (pl->in->encoder_layers > 0 && layer >= (int)pl->in->encoder_layers) {
    double cross = cross_attention_saved(pl, &sh, recomputed ? &la.recompute_tensors : &la.saved_tensors);
    full += cross;
    if (!recomputed) saved += cross;
  }

  /* The distinct inputs of a dense attention layer's 4-bit linears: the
   * q/k/v input, the output projection's, the MLP input (gate and up share
   * it), the down projection's. MatMul4Bit holds them as ctx attributes
   * (ctx.tensors = (A, B)), which the autograd engine's release_variables()
   * does not free: they live as long as the graph does
   * (training.finetune.quant_inputs_held; passes.c). */
  if (qlora && mixer_is_attention(mixer) && has_mlp && !moe)
    la.quant_input_bytes =
        T * ab * (2 * h + pl->in->heads / pl->in->tp * pl->head_dim + pl->in->ffn_hidden / pl->in->tp);
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
  double gathered = pl->sp ? T * h * ab : 0; /* SP all-gather output */
  la.forward_temp_bytes = max2(m.forward_temp + gathered + m.cp_forward,
                               mlp_forward_temp(pl, &sh, &b, moe, keep_down_in, recomputed) + gathered);
  /* backward: incoming and outgoing residual gradients, plus the larger of the
   * MLP gradient chain (3 intermediates) and the mixer's backward */
  la.backward_temp_bytes = 2 * T * h * ab + gathered + max2(b.temp, m.backward_temp + m.cp_backward);
  /* each 4-bit linear's matmul runs on its whole dequantised weight, forward and
   * backward (bitsandbytes/autograd/_functions.py MatMul4Bit, 0.43.0 48763245 L516/L546;
   * training.finetune.quant_dequant_temp): the largest one beside the working set */
  if ((int)pl->in->ft_method == LLMEM_FT_QLORA && (int)pl->in->quant != LLMEM_QUANT_INT8 && pl->quant_dequant_temp) {
    double deq = dequantized_weight_bytes(pl, layer_params_on_rank(pl, layer).largest_linear_count);
    la.forward_temp_bytes += deq;
    la.backward_temp_bytes += deq;
  }
  return la;
}

/* Token ids (int64) and the embedding-dropout mask (KOR §4.3; MLM L317-379). */
double embedding_activation_bytes(const plan *pl) {
  double T = pl->in->seq_len / pl->in->cp * pl->in->micro_batch;
  double mask = pl->in->dropout > 0 ? T * pl->in->hidden / (pl->sp ? pl->in->tp : 1) : 0;
  if (pl->in->encoder_layers > 0) { /* the source ids, and the encoder's output every cross-attention's k/v reads */
    double S = pl->source_len / pl->in->cp * pl->in->micro_batch;
    return 8 * T + mask + 8 * S + S * pl->in->hidden * pl->act_bytes;
  }
  return 8 * T + mask;
}
