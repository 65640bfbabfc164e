/* Logits and cross-entropy on the last stage, one micro-batch
 * (docs/memory-model.md §7.11). T = tokens on the rank, V_t = vocabulary shard. */
#include <math.h>

#include "internal.h"

/* A transient as the separate tensors that make it (a zero is none); returns their sum. */
static double tensors(double *list, double a, double b, double c) {
  list[0] = a, list[1] = b, list[2] = c;
  return a + b + c;
}

/* One more tensor in a transient: its own entry when the transient lists its
 * tensors (the last entry grows when all are taken), else only the total. */
static void more(double *list, double *total, double bytes) {
  *total += bytes;
  int k = 0;
  while (k < LOSS_MAX_TENSORS && list[k] > 0) k++;
  if (k == 0 || bytes <= 0) return; /* not listed: one request of the total */
  list[k < LOSS_MAX_TENSORS ? k : LOSS_MAX_TENSORS - 1] += bytes;
}

/* Liger fused linear cross-entropy (liger_kernel/ops/fused_linear_cross_entropy.py
 * at ead96b61, fused_linear_cross_entropy_forward): the forward computes the
 * gradients and keeps them for the backward. */
static void liger_fused(const plan *pl, double T, double V, loss_memory *lm) {
  double h = pl->in->hidden, ab = pl->act_bytes;
  double inc = ceil(V / h); /* chunk logits of next_pow2(ceil(T / ceil(V/h))) tokens */
  double chunk = pow(2, ceil(log2(ceil(T / inc))));
  if (chunk > T) chunk = T;
  /* grad_weight = zeros_like(weight) (accum_dtype None) only when the head
   * requires grad; the weight is fp32 under autocast, else the compute dtype */
  int trained = (int)pl->in->ft_method == LLMEM_FT_FULL;
  double wb = pl->autocast ? 4 : pl->weight_bytes;
  double grad_weight = trained ? V * h * wb : 0;
  /* accumulation: addmm(out_dtype=fp32) into an fp32 grad_weight from 16-bit
   * logits; otherwise grad_weight += mm(grad_logits.t(), x).float() makes a
   * V x h product in the logits dtype and its fp32 copy */
  double accumulate = 0;
  if (trained && !(wb == 4 && ab < 4)) accumulate = V * h * ab + (ab < 4 ? V * h * 4 : 0);
  lm->saved_bytes = T * h * ab + grad_weight; /* grad_input (input dtype) + grad_weight */
  /* fp32 loss_1d, the chunk logits (the kernel writes their gradient in place),
   * then the grad_input chunk product or the grad_weight accumulation */
  lm->forward_peak_bytes = 4 * T + chunk * V * ab + max2(chunk * h * ab, accumulate);
  lm->backward_peak_bytes = 0; /* the backward scales the kept gradients in place */
}

/* Apple's Cut Cross-Entropy (apple/ml-cross-entropy cut_cross_entropy/cce.py
 * LinearCrossEntropyFunction; axolotl's CutCrossEntropyPlugin): the forward's
 * kernel takes the classifier weight and computes the logsumexp of each token
 * tile by tile, never writing the logits (fp32 lse per token, and the fp32
 * per-vocabulary logit average its gradient filtering sorts by); its backward
 * recomputes the tiles to write the input's gradient (the head's usual T x h)
 * and, if the classifier trains, its gradient (what mm's backward would): no
 * logits gradient for a matmul backward to read (head_dgrad_bytes 0). */
static void cce_bytes(loss_memory *lm, double T, double V) {
  lm->saved_bytes = 4 * T + 4 * V;
  lm->forward_peak_bytes = 4 * T; /* the target logits' negative dot products, added to lse */
  lm->backward_peak_bytes = 0;
}

/* TRL's selective_log_softmax (trl/trainer/utils.py, 09eefa73, #2799, 2025-02-07; GRPO, RLOO, DPO and KTO
 * log-probabilities): over 16-bit logits, a log_softmax row by row (one sequence at a time: `for row_logits,
 * row_labels in zip(logits, index)`) and a gather of the label's entry. Each row's log-softmax output, in
 * the logits dtype, is saved for its backward; the logits (GRPO divides them by the temperature in place)
 * are needed by nothing once the function returns. The backward gives each row's gradient, unbind's
 * backward stacks them into the logits' gradient, the head's matmul backward reads that. Over fp32 logits
 * it gathers and takes a logsumexp row by row instead, which keeps each row (the logits) for its backward. */
static void selective_bytes(loss_memory *lm, double TV, double ab) {
  if (ab >= 4) {
    lm->saved_bytes = ab * TV;
    lm->backward_peak_bytes = ab * TV;
  } else {
    lm->saved_bytes = ab * TV;         /* the rows' log-softmax outputs */
    lm->forward_peak_bytes = ab * TV;  /* the logits, until the function returns */
    lm->backward_peak_bytes = ab * TV; /* the rows' gradients, then their stack */
  }
  lm->head_dgrad_bytes = ab * TV;
}

/* The RL entropy over the vocabulary, T tokens x V entries (rl.entropy_kernel). */
static void rl_entropy_bytes(const plan *pl, double T, double V, loss_memory *lm) {
  double ab = pl->act_bytes, TV = T * V;
  switch (pl->rl_entropy_kernel) {
    case LLMEM_RL_ENTROPY_COMPILED:
      /* verl compiles it (workers/actor/dp_actor.py torch.compile(entropy_from_logits,
       * dynamic=True), 54051c85, #118, 2025-01-21): the reductions fuse, a logsumexp per
       * token is kept, the backward makes the logits-sized gradient it adds */
      lm->saved_bytes += 4 * T;
      more(lm->backward_tensors, &lm->backward_peak_bytes, ab * TV);
      break;
    case LLMEM_RL_ENTROPY_CHUNKED: {
      /* TRL trainer/utils.py entropy_from_logits(logits, chunk_size=128) under no_grad:
       * log_softmax, its exp and their product per chunk of 128 rows, nothing kept */
      double rows = min2(T, 128);
      more(lm->forward_tensors, &lm->forward_peak_bytes, 3 * rows * V * ab);
      break;
    }
    default:
      /* verl utils/torch_functional.py entropy_from_logits, eager (b178a3cd): pd =
       * softmax(logits), then logsumexp(logits) - sum(pd * logits): the softmax kept
       * for the backward, the product a transient, both in the logits dtype */
      lm->saved_bytes += ab * TV;
      more(lm->forward_tensors, &lm->forward_peak_bytes, ab * TV);
      break;
  }
}

/* The unchunked, uncompiled cross-entropy of the engine. */
static void standard_bytes(loss_memory *lm, double TV, double ab, int megatron) {
  if (megatron) {
    /* Megatron vocab_parallel_cross_entropy: fp32 copy, shifted logits,
     * exp in place; the softmax is kept and turned into the gradient in place. */
    lm->saved_bytes = 4 * TV;
    lm->forward_peak_bytes = ab * TV + 4 * TV;
    lm->backward_peak_bytes = ab * TV;
  } else {
    /* HF ForCausalLMLoss / torchtitan: bf16 logits, .float() copy, saved
     * log-softmax (forward 10·T·V bytes); backward: dense nll gradient and
     * log-softmax input gradient next to the saved output (12·T·V). */
    lm->saved_bytes = 4 * TV;
    /* the logits and their .float() copy; nll_loss_backward's zeros (scattered) and
     * _log_softmax_backward_data's output, each its own allocation (aten
     * native/LossNLL.cpp, native/SoftMax.cpp): the zeros can take the copy's freed block.
     * fp32 logits: .float() returns the tensor itself (Tensor.to with the same
     * dtype and copy=False, aten/src/ATen/native/TensorConversions.cpp to_impl),
     * no copy, and their freed block is one the fp32 backward reuses */
    double upcast = ab < 4 ? 4 : 0;
    lm->forward_peak_bytes = tensors(lm->forward_tensors, ab * TV, upcast * TV, 0);
    lm->backward_peak_bytes = tensors(lm->backward_tensors, 4 * TV, 4 * TV, 0);
    lm->unreusable_bytes = upcast > 0 ? ab * TV : 0;
    /* the head's matmul backward runs after these are freed: ToCopyBackward0
     * casts the fp32 gradient back to the logits dtype (fp32: the gradient
     * itself), and mm's backward makes the weight's gradient beside it */
    lm->head_dgrad_bytes = ab * TV;
  }
}

/* PyTorch loss_parallel() over vocab-sharded fp32 DTensor logits (pytorch
 * torch/distributed/tensor/parallel/loss.py @ 02eef6b8; same ops since its
 * first version, torch 2.3). torchtitan enters it only under TP
 * (train.py @ 0cb74355: tp_enabled and not disable_loss_parallel) and, from
 * b3b60dab (2026-06), runs the same ops in _LossParallelCrossEntropy
 * (components/loss.py). Tv = T·V/tp. */
static void loss_parallel_bytes(loss_memory *lm, double Tv, double ab) {
  double upcast = ab < 4 ? 4 : 0; /* pred.flatten(0, 1).float(): a copy unless already fp32 */
  /* _log_softmax: x - amax (shifted), exp(shifted) summed, then shifted - logsumexp
   * (result, saved for nll_loss and _log_softmax backward) */
  lm->saved_bytes = 4 * Tv;
  /* logits, fp32 copy and shifted beside exp(shifted), then beside result in exp's place */
  lm->forward_peak_bytes = tensors(lm->forward_tensors, ab * Tv, upcast * Tv, 4 * Tv);
  /* _nll_loss_and_log_softmax_backward: zeros_like grad_input, exp(x), their sum,
   * then sum * grad_output in exp's place; next to the saved result. Each its own
   * tensor, so the backward reuses the forward's freed fp32 blocks */
  lm->backward_peak_bytes = tensors(lm->backward_tensors, 4 * Tv, 4 * Tv, 4 * Tv);
  lm->unreusable_bytes = upcast > 0 ? ab * Tv : 0; /* del pred: the freed 16-bit logits */
  lm->head_dgrad_bytes = ab * Tv;                  /* the head's matmul backward after it (standard_bytes) */
}

/* torchtune's chunked output loss over pl->loss_chunks chunks. */
static void chunked_bytes(const plan *pl, loss_memory *lm, double T, double TV) {
  double c = pl->in->loss_chunks, ab = pl->act_bytes;
  if ((int)pl->in->torch_compile != 0) {
    /* torchtune compiles compute_cross_entropy per chunk: the fused kernel
     * keeps the bf16 chunk logits and one fp32 logsumexp per token. As in
     * compiled_bytes below, the fp32 upcast is never materialised: the
     * forward's logsumexp reads the bf16 chunk, and nll_loss_backward's
     * scatter into zeros is lowered to a pointwise kernel
     * (torch/_inductor/config.py optimize_scatter_upon_const_tensor, default
     * on; fx_passes/post_grad.py scatter_upon_const_tensor) that fuses with
     * the softmax gradient and the cast back: one bf16 chunk gradient. */
    lm->saved_bytes = ab * TV + 4 * T;
    lm->forward_peak_bytes = 4 * T / c;
    lm->backward_peak_bytes = ab * TV / c;
  } else {
    /* torchtune CEWithChunkedOutputLoss: per chunk upcast + log-softmax; the
     * log-softmax outputs of all chunks stay saved until the backward. */
    lm->saved_bytes = 4 * TV;
    lm->forward_peak_bytes = ab * TV + 4 * TV / c;
    lm->backward_peak_bytes = 8 * TV / c;
  }
  /* training.logits_fp32_kept: Lightning Fabric's _FabricModule.forward
   * returns precision.convert_output(output), which casts every floating
   * output to torch.get_default_dtype() (fp32) for bf16-true and
   * bitsandbytes precision (fabric/wrappers.py, plugins/precision/half.py
   * and bitsandbytes.py, 71aed751). LitGPT's loop holds the fp32 chunk list
   * in `logits` through the backward (lit_gpt finetune/lora.py 8641822,
   * litgpt/finetune/lora.py 47806045): fp32 logits beside the fp32
   * log-softmax outputs; the 16-bit list lives only while it is cast (below
   * the peak), the chunk needs no upcast, and a chunk's backward adds the
   * 16-bit gradient of the cast. */
  if (pl->logits_fp32_kept && (int)pl->in->torch_compile == 0) {
    lm->saved_bytes = 8 * TV;
    lm->forward_peak_bytes = 0;
    lm->backward_peak_bytes = (8 + ab) * TV / c;
  }
}

/* transformers < 4.46 (PR #34191) LlamaForCausalLM.forward: logits.float() is kept in
 * the returned output, the shifted .contiguous() copy feeds
 * CrossEntropyLoss; the slice's backward writes a full fp32 gradient. */
static void hf_upcast_bytes(loss_memory *lm, double TV, double ab) {
  lm->saved_bytes = 8 * TV;
  lm->forward_peak_bytes = 4 * TV;
  lm->backward_peak_bytes = 8 * TV;
  lm->unreusable_bytes = ab * TV;
}

/* flash-attn's Triton cross-entropy with inplace_backward (verl
 * utils/torch_functional.py logprobs_from_logits, in place from 25b0f226,
 * #1100, 2025-04-17): it keeps the bf16 logits and an fp32 logsumexp per
 * token, its fp32 losses are per token, and the backward writes the
 * gradient into the logits. */
static void flash_ce_bytes(loss_memory *lm, double T, double TV, double ab) {
  lm->saved_bytes = ab * TV + 4 * T;
  lm->forward_peak_bytes = 4 * T;
  lm->backward_peak_bytes = 0;
}

/* F.cross_entropy straight over the 16-bit logits, no fp32 copy (ms-swift under sequence parallelism:
 * swift/trainers/utils.py per_token_loss_func_sp @3602360a, CrossEntropyLoss(reduction='none')): the
 * log-softmax in the logits dtype is kept; the backward's dense nll gradient and the log-softmax input gradient,
 * the logits' gradient the head reads, are 16-bit too (no cast back). */
static void bf16_ce_bytes(loss_memory *lm, double TV, double ab) {
  lm->saved_bytes = ab * TV;
  lm->forward_peak_bytes = tensors(lm->forward_tensors, ab * TV, 0, 0); /* the logits, until the loss returns */
  lm->backward_peak_bytes = tensors(lm->backward_tensors, ab * TV, ab * TV, 0);
  lm->head_dgrad_bytes = ab * TV;
}

/* ms-swift's ChunkedCrossEntropyLoss (swift/sequence_parallel/utils.py @3602360a, CELOSS_PARALLEL_SIZE tokens a
 * chunk, training.loss_chunks chunks): it keeps the 16-bit logits for its backward; the forward takes the
 * cross-entropy of one chunk at a time (its log-softmax freed with the chunk); the backward recomputes a chunk's
 * log-softmax, takes its gradient (the nll gradient and the log-softmax input gradient) and writes it into the
 * logits, which it returns as their own gradient for the head. */
static void chunked_inplace_bytes(const plan *pl, loss_memory *lm, double T, double TV, double ab) {
  double chunk = TV / pl->in->loss_chunks;
  lm->saved_bytes = ab * TV + ab * T; /* the logits and the per-token losses */
  lm->forward_peak_bytes = chunk * ab;
  lm->backward_peak_bytes = 3 * chunk * ab;
  lm->head_dgrad_bytes = ab * TV; /* the logits, now their gradient, until the head's backward has read them */
}

/* torch.compile'd F.cross_entropy(logits.float()) (torchtitan
 * build_cross_entropy_loss with compile): the upcast fuses into the
 * log-softmax; bf16 logits and a logsumexp per token are kept and the
 * backward writes the bf16 gradient directly. */
static void compiled_bytes(loss_memory *lm, double T, double TV, double ab) {
  lm->saved_bytes = ab * TV + 4 * T;
  lm->forward_peak_bytes = 0;
  lm->backward_peak_bytes = ab * TV;
}

/* The loss's own tensors over T tokens and a V-entry vocabulary shard, by training.loss. */
static void vocab_loss_bytes(const plan *pl, double T, double V, int megatron, loss_memory *lm) {
  double ab = pl->act_bytes, TV = T * V;
  switch (pl->loss) {
    case LLMEM_LOSS_FUSED: liger_fused(pl, T, V, lm); break;
    case LLMEM_LOSS_CHUNKED: chunked_bytes(pl, lm, T, TV); break;
    case LLMEM_LOSS_HF_UPCAST: hf_upcast_bytes(lm, TV, ab); break;
    case LLMEM_LOSS_LOSS_PARALLEL:
      /* without TP no DTensor reaches the handlers: the standard path */
      if (pl->in->tp > 1) loss_parallel_bytes(lm, TV, ab);
      else standard_bytes(lm, TV, ab, megatron);
      break;
    case LLMEM_LOSS_FLASH_CE: flash_ce_bytes(lm, T, TV, ab); break;
    case LLMEM_LOSS_BF16_CE: bf16_ce_bytes(lm, TV, ab); break;
    case LLMEM_LOSS_CHUNKED_INPLACE: chunked_inplace_bytes(pl, lm, T, TV, ab); break;
    case LLMEM_LOSS_CCE: cce_bytes(lm, T, V); break;
    case LLMEM_LOSS_SELECTIVE: selective_bytes(lm, TV, ab); break;
    case LLMEM_LOSS_COMPILED: compiled_bytes(lm, T, TV, ab); break;
    default: standard_bytes(lm, TV, ab, megatron); break;
  }
}

/* bitsandbytes MatMul4Bit, forward and backward alike: dequantize_4bit(B,
 * quant_state) writes the whole weight in the state's dtype, .to(A.dtype) a
 * second copy when that differs from the compute dtype; both live for the one
 * matmul (bitsandbytes/autograd/_functions.py MatMul4Bit L516 and L546, 0.42.0
 * 4870580). Lightning Fabric quantises from weight.to(torch.half), so under
 * bf16 its state is fp16 (training.finetune.quant_from_fp16). */
double dequantized_weight_bytes(const plan *pl, double params) {
  int cast = pl->quant_from_fp16 && (int)pl->in->dtype != LLMEM_DTYPE_FP16;
  return params * 2 * (1 + cast);
}

/* A loss kernel that takes the head's weight and never writes the logits (Liger's fused linear CE, CCE): the
 * head's projection, its soft-capping and its gathers happen inside it. */
int loss_takes_weight(const plan *pl) { return pl->loss == LLMEM_LOSS_FUSED || pl->loss == LLMEM_LOSS_CCE; }

/* Whether the loss reads logits over the whole vocabulary although TP shards the output
 * projection: PyTorch TP's ColwiseParallel with output_layouts=Replicate() redistributes its
 * vocab-sharded output to every rank (torch/distributed/tensor/parallel/style.py
 * ColwiseParallel._prepare_output_fn @004c2c9a), as torchtitan's plan does unless loss_parallel
 * (torchtitan/models/llama3/infra/parallelize.py apply_tp @0cb74355: output_layouts=Shard(-1) if
 * loss_parallel else Replicate()) and torchtune's (torchtune/models/llama3/_parallelism.py
 * @bd2a0fc7: "output": ColwiseParallel(output_layouts=Replicate())). Megatron's own layers keep
 * vocab-parallel logits; Liger's fused kernel reads the projection's weight, not its output. */
static int logits_gathered(const plan *pl) {
  return plan_dtensor_tp(pl) && pl->loss != LLMEM_LOSS_LOSS_PARALLEL && !loss_takes_weight(pl);
}

/* The Shard(-1) -> Replicate redistribution of the logits (torch/distributed/tensor/
 * placement_types.py Shard._to_replicate_tensor @00131b6b): funcol.all_gather_tensor gathers the
 * local [T, V/tp] shards along dim 0 and, gather_dim being the last, torch.cat's the tp chunks
 * into the [T, V] logits (torch/distributed/_functional_collectives.py all_gather_tensor; a view
 * only when every dim before gather_dim is 1, pytorch #169404): local shard, gathered rows and
 * the concatenation are live together. Chunked output (torchtune) gathers each chunk's. */
static void gather_bytes(const plan *pl, double T, double V_shard, double V, loss_memory *lm) {
  double ab = pl->act_bytes, c = pl->loss == LLMEM_LOSS_CHUNKED ? pl->in->loss_chunks : 1;
  lm->gather_peak_bytes =
      tensors(lm->gather_tensors, ab * T * V_shard / c, ab * T * V_shard * pl->in->tp / c, ab * T * V / c);
}

/* The output projection trains: a full fine-tune, or adapters with the head (or a tied embedding) trained in full. */
int loss_head_trains(const plan *pl) {
  return (int)pl->in->ft_method == LLMEM_FT_FULL || (pl->full_modules & (1 << LLMEM_FM_HEAD)) ||
         ((int)pl->in->tied_embeddings != 0 && (pl->full_modules & (1 << LLMEM_FM_EMBEDDING)));
}

loss_memory loss_bytes(const plan *pl) {
  loss_memory lm = {0};
  double T = pl->in->seq_len / pl->in->cp * pl->in->micro_batch;
  double h = pl->in->hidden, ab = pl->act_bytes;
  int megatron = (int)pl->in->engine == LLMEM_ENGINE_MEGATRON || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  /* the final RMSNorm as the layers' (activations.c layer_shape): its input
   * (x.float()), and the normalised x in the input dtype when its weight trains */
  double residual = pl->autocast ? 4 : ab, normed = rmsnorm_normed_bytes(pl, residual);
  double norm_saved = megatron || (int)pl->in->torch_compile != 0 ? ab
                      : pl->norm_width != 1                       ? 4
                      : pl->norm_upcast                           ? 4 + normed + rmsnorm_square_bytes(pl, residual)
                                        : residual + normed + rmsnorm_square_bytes(pl, residual);
  /* The head keeps its input (the norm output; under autocast its 16-bit
   * cast) for its weight's gradient only: mm saves self when mat2 requires
   * grad (tools/autograd/derivatives.yaml mm). A frozen head (LoRA) keeps
   * none, unless an old 4-bit linear keeps it anyway (quant_keeps_input). */
  int head_trains = loss_head_trains(pl);
  /* CCE saves its input e for the input's gradient whether the classifier trains or not */
  int head_keeps = head_trains || pl->loss == LLMEM_LOSS_CCE ||
                   ((int)pl->in->ft_method == LLMEM_FT_QLORA && pl->quant_head && pl->quant_keeps_input);
  lm.head_input_bytes =
      pl->in->final_norm * T * h / (pl->sp ? pl->in->tp : 1) * norm_saved + (head_keeps ? T * h * ab : 0);
  if ((int)pl->in->head == LLMEM_HEAD_NONE) return lm;
  if ((int)pl->in->head == LLMEM_HEAD_CLASSIFICATION) {
    lm.head_input_bytes = 2 * pl->in->micro_batch * h * ab; /* pooled token + pooler output */
    return lm;
  }
  double V = pl->vocab_padded / pl->in->tp; /* vocab-parallel logits (Megatron, torchtitan loss_parallel) */
  double V_shard = V;
  if (logits_gathered(pl)) {
    /* the whole vocabulary after the all-gather: the projection's out_features (vocab_multiple's
     * padding; DTensor shards it unevenly and unpads the gather, placement_types.py) */
    double mult = pl->in ? pl->in->vocab_multiple : 1;
    V = ceil(pl->in->vocab / mult) * mult;
    gather_bytes(pl, T, V_shard, V, &lm);
  }
  double TV = T * V;
  lm.vocab = V;
  vocab_loss_bytes(pl, T, V, megatron, &lm);
  /* final logit soft-capping before the loss: logits / cap, tanh, * cap, each a
   * new logits-sized tensor; tanh keeps its output for the backward
   * (transformers models/gemma2/modeling_gemma2.py Gemma2ForCausalLM.forward;
   * torchtune's gemma2 decoder the same per output chunk). Liger's fused
   * kernel caps inside its chunks (softcap argument): nothing kept. */
  if (pl->final_softcap && !loss_takes_weight(pl)) lm.saved_bytes += ab * TV;
  if (pl->rl_entropy) rl_entropy_bytes(pl, T, V, &lm);
  /* a 4-bit output projection (training.finetune.quant_head) dequantises its
   * weight for each logits chunk's matmul, forward and backward (quant_dequant_temp) */
  int head_4bit = (int)pl->in->ft_method == LLMEM_FT_QLORA && pl->quant_head &&
                  !(pl->full_modules & (1 << LLMEM_FM_HEAD)) && (int)pl->in->head == LLMEM_HEAD_LM &&
                  !loss_takes_weight(pl) && pl->quant_dequant_temp;
  if (head_4bit) {
    double deq = dequantized_weight_bytes(pl, V_shard * h); /* the rank's shard of the weight */
    more(lm.forward_tensors, &lm.forward_peak_bytes, deq);
    more(lm.backward_tensors, &lm.backward_peak_bytes, deq);
  }
  return lm;
}
