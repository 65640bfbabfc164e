/* Logits and cross-entropy (docs/memory-model.md §7.11): PyTorch loss_parallel()
 * over vocab-sharded logits, counted tensor by tensor by hand. */
#include <math.h>

#include "allocator.h"
#include "check.h"
#include "check_plan.h"

static void check_same(loss_memory a, loss_memory b, const char *name) {
  CHECK_NEAR(a.saved_bytes, b.saved_bytes, 0, name);
  CHECK_NEAR(a.forward_peak_bytes, b.forward_peak_bytes, 0, name);
  CHECK_NEAR(a.backward_peak_bytes, b.backward_peak_bytes, 0, name);
  CHECK_NEAR(a.unreusable_bytes, b.unreusable_bytes, 0, name);
  CHECK_NEAR(a.head_input_bytes, b.head_input_bytes, 0, name);
}

/* Llama-3-8B shape, 4096 tokens, vocab 128256 = 8 x 16032 */
#define L3                                                                                    \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 " \
  "model.vocab=128256 model.vocab_multiple=1 training.seq_len=4096 training.micro_batch=1 "

/* Gemma 2 soft-capping, Gemma-2-2B shape (vocab 256000, 8 heads), 4096 tokens,
 * one GPU, bf16: the logits' tanh keeps its output, 2 T V = 2,097,152,000 B more
 * saved at the head; eager attention's score tanh keeps 2 T a s = 268,435,456 B
 * more per layer; Liger's fused loss caps inside its kernel (nothing kept). */
static void softcap(void) {
#define G2                                                                                                     \
  "model.layers=26 model.hidden=2304 model.heads=8 model.kv_heads=4 model.head_dim=256 model.ffn_hidden=9216 " \
  "model.vocab=256000 model.vocab_multiple=1 training.seq_len=4096 parallel.gpus=1 parallel.engine=single "
  plan a = plan_for(G2), b = plan_for(G2 "model.final_logit_softcap=30");
  CHECK_NEAR(loss_bytes(&b).saved_bytes - loss_bytes(&a).saved_bytes, 2.0 * 4096 * 256000, 0, "tanh output kept");
  CHECK_NEAR(loss_bytes(&b).forward_peak_bytes, loss_bytes(&a).forward_peak_bytes, 0, "same transient");
  plan f = plan_for(G2 "model.final_logit_softcap=30 training.loss=fused"), g = plan_for(G2 "training.loss=fused");
  check_same(loss_bytes(&f), loss_bytes(&g), "Liger caps inside its kernel");
  plan e = plan_for(G2 "training.attention=eager"),
       c = plan_for(G2 "training.attention=eager model.attn_logit_softcap=50");
  double ea = layer_activation_bytes(&e, 0, 0).saved_bytes, ec = layer_activation_bytes(&c, 0, 0).saved_bytes;
  CHECK_NEAR(ec - ea, 2.0 * 4096 * 8 * 4096, 0, "eager: the capped scores' tanh output per layer");
  plan fl = plan_for(G2), fc = plan_for(G2 "model.attn_logit_softcap=50");
  CHECK_NEAR(layer_activation_bytes(&fc, 0, 0).saved_bytes, layer_activation_bytes(&fl, 0, 0).saved_bytes, 0,
             "flash kernels cap in the kernel");
}

/* verl's flash-attn cross-entropy, Llama-3-8B shape, 4096 tokens, one GPU, bf16:
 * TV = 4096 x 128256 = 525,336,576 elements. Kept: the bf16 logits 2 TV =
 * 1,050,673,152 B and the fp32 logsumexp 4 T = 16,384 B; the forward's fp32
 * losses 4 T = 16,384 B; the backward writes into the logits: nothing new.
 * Before 2025-04 (not in place) verl's profile gives the compiled accounting:
 * a new bf16 gradient 2 TV in the backward. */
static void flash_ce(void) {
#define ONE "parallel.engine=single parallel.gpus=1 "
  plan f = plan_for(L3 ONE "training.loss=flash_ce");
  loss_memory lf = loss_bytes(&f);
  CHECK_NEAR(lf.saved_bytes, 1050673152.0 + 16384, 0, "flash_ce: logits and logsumexp kept");
  CHECK_NEAR(lf.forward_peak_bytes, 16384.0, 0, "flash_ce: fp32 losses");
  CHECK_NEAR(lf.backward_peak_bytes, 0, 0, "flash_ce: in-place backward");
  plan old = plan_for(L3 ONE "runtime.framework=verl runtime.framework_version=2025-03");
  CHECK(old.loss == LLMEM_LOSS_COMPILED, "verl before 2025-04: a new bf16 gradient (compiled accounting)");
  CHECK_NEAR(loss_bytes(&old).backward_peak_bytes, 1050673152.0, 0, "verl 2025-03: backward 2 TV");
  plan now = plan_for(L3 ONE "runtime.framework=verl");
  CHECK(now.loss == LLMEM_LOSS_FLASH_CE, "verl now: flash_ce");
}

/* ms-swift's losses under sequence parallelism, Llama-3-8B shape, 4096 tokens, one GPU, bf16, TV = 525,336,576
 * elements (2 TV = 1,050,673,152 B). bf16_ce (CrossEntropyLoss on the 16-bit logits): the log-softmax kept, 2 TV;
 * forward the logits 2 TV; backward the nll gradient and the log-softmax input gradient, 4 TV =
 * 2,101,346,304 B; the standard loss keeps 4 TV in fp32 and adds the .float() copy. chunked_inplace over 8 chunks
 * (CELOSS_PARALLEL_SIZE 512): kept the logits 2 TV and the bf16 losses 2 T = 8,192 B; forward one chunk's
 * log-softmax 2 TV / 8 = 131,334,144 B; backward a chunk's log-softmax, nll gradient and gradient, 3 x that =
 * 394,002,432 B; the gradient is written into the logits, which the head's backward reads. */
static void swift_sp_losses(void) {
  plan p = plan_for(L3 ONE "training.loss=bf16_ce");
  loss_memory l = loss_bytes(&p);
  CHECK_NEAR(l.saved_bytes, 1050673152.0, 0, "bf16_ce: the 16-bit log-softmax kept");
  CHECK_NEAR(l.forward_peak_bytes, 1050673152.0, 0, "bf16_ce: the logits, no fp32 copy");
  CHECK_NEAR(l.backward_peak_bytes, 2101346304.0, 0, "bf16_ce: two 16-bit gradients");
  plan s = plan_for(L3 ONE "training.loss=standard");
  CHECK(loss_bytes(&s).saved_bytes == 2 * l.saved_bytes, "standard keeps the log-softmax in fp32");
  p = plan_for(L3 ONE "training.loss=chunked_inplace training.loss_chunks=8");
  l = loss_bytes(&p);
  CHECK_NEAR(l.saved_bytes, 1050673152.0 + 8192, 0, "chunked_inplace: the logits and the losses kept");
  CHECK_NEAR(l.forward_peak_bytes, 131334144.0, 0, "chunked_inplace: one chunk's log-softmax");
  CHECK_NEAR(l.backward_peak_bytes, 394002432.0, 0, "chunked_inplace: a chunk's recompute and gradients");
  CHECK_NEAR(l.head_dgrad_bytes, 1050673152.0, 0, "chunked_inplace: the logits are their own gradient");
}

/* Apple's Cut Cross-Entropy, Llama-3-8B shape, 4096 tokens, one GPU, bf16: kept the
 * fp32 logsumexp 4 T = 16,384 B and the per-vocabulary logit average 4 V = 513,024 B;
 * the forward's fp32 target dot products 4 T; no logits, no logits gradient for a
 * matmul backward; the head's input is kept for its gradient under LoRA too (the
 * standard loss keeps it only for a trained head); soft-capping happens in the kernel. */
static void cce(void) {
  plan c = plan_for(L3 ONE "training.loss=cce");
  loss_memory lc = loss_bytes(&c);
  CHECK_NEAR(lc.saved_bytes, 16384.0 + 513024.0, 0, "cce: logsumexp and logit average kept");
  CHECK_NEAR(lc.forward_peak_bytes, 16384.0, 0, "cce: fp32 target dot products");
  CHECK_NEAR(lc.backward_peak_bytes + lc.head_dgrad_bytes, 0, 0, "cce: no logits-sized tensor in the backward");
  plan lora = plan_for(L3 ONE "training.loss=cce training.finetune.method=lora"),
       std = plan_for(L3 ONE "training.finetune.method=lora");
  CHECK_NEAR(loss_bytes(&lora).head_input_bytes - loss_bytes(&std).head_input_bytes, 2.0 * 4096 * 4096, 0,
             "cce keeps its input e under LoRA");
  plan capped = plan_for(L3 ONE "training.loss=cce model.final_logit_softcap=30");
  check_same(loss_bytes(&capped), lc, "cce caps inside its kernel");
}

/* TRL's selective_log_softmax over TV = 525,336,576 bf16 logits (Llama-3-8B shape, 4096 tokens):
 * kept the rows' log-softmax outputs 2 TV = 1,050,673,152 B; the logits themselves 2 TV until the
 * function returns; the backward's row gradients and their stack 2 TV; the head reads a 2 TV gradient.
 * Against the standard loss's fp32 copy and log-softmax (kept 4 TV, peaks 10 TV and 12 TV). */
static void selective(void) {
  const double TV2 = 1050673152.0;
  plan s = plan_for(L3 ONE "training.loss=selective_logps");
  loss_memory ls = loss_bytes(&s);
  CHECK_NEAR(ls.saved_bytes, TV2, 0, "selective: the rows' 16-bit log-softmax outputs kept");
  CHECK_NEAR(ls.forward_peak_bytes, TV2, 0, "selective: the logits beside them");
  CHECK_NEAR(ls.backward_peak_bytes, TV2, 0, "selective: row gradients and their stack");
  CHECK_NEAR(ls.head_dgrad_bytes, TV2, 0, "selective: the head reads a 16-bit gradient");
  plan st = plan_for(L3 ONE);
  CHECK(loss_bytes(&st).saved_bytes == 2 * TV2, "the standard loss keeps twice as much (fp32 log-softmax)");
}

/* The RL entropy (rl.entropy) over TV = 525,336,576 elements (Llama-3-8B shape, 4096
 * tokens, bf16), beside the flash_ce loss (kept 1,050,689,536 B, forward 16,384 B):
 * eager: the softmax kept (2 TV = 1,050,673,152 B) and the product a transient (2 TV);
 * compiled (verl): a logsumexp per token kept (4 T = 16,384 B), the backward's
 * gradient 2 TV; chunked (TRL, no grad): 3 x 128 rows x 128,256 x 2 B = 98,500,608 B
 * of transients, nothing kept. */
static void rl_entropy(void) {
#define RLE L3 ONE "rl.algorithm=grpo rl.entropy=true training.loss=flash_ce "
  const double TV2 = 1050673152.0, kept = 1050673152.0 + 16384, fwd = 16384;
  plan e = plan_for(RLE "rl.entropy_kernel=eager");
  CHECK_NEAR(loss_bytes(&e).saved_bytes, kept + TV2, 0, "eager entropy: softmax kept");
  CHECK_NEAR(loss_bytes(&e).forward_peak_bytes, fwd + TV2, 0, "eager entropy: product transient");
  plan c = plan_for(RLE "rl.entropy_kernel=compiled");
  CHECK_NEAR(loss_bytes(&c).saved_bytes, kept + 16384, 0, "compiled entropy: a logsumexp kept");
  CHECK_NEAR(loss_bytes(&c).backward_peak_bytes, TV2, 0, "compiled entropy: its gradient");
  plan k = plan_for(RLE "rl.entropy_kernel=chunked");
  CHECK_NEAR(loss_bytes(&k).saved_bytes, kept, 0, "chunked entropy: nothing kept");
  CHECK_NEAR(loss_bytes(&k).forward_peak_bytes, fwd + 98500608.0, 0, "chunked entropy: 128-row transients");
  plan v = plan_for(RLE "runtime.framework=verl"), t = plan_for(RLE "runtime.framework=hf_trainer");
  plan g = plan_for(RLE "runtime.framework=generic");
  CHECK(v.rl_entropy_kernel == LLMEM_RL_ENTROPY_COMPILED, "verl compiles the entropy");
  CHECK(t.rl_entropy_kernel == LLMEM_RL_ENTROPY_CHUNKED, "TRL chunks it");
  CHECK(g.rl_entropy_kernel == LLMEM_RL_ENTROPY_EAGER, "generic: eager");
}

/* The loss's transients as the tensors the framework allocates (loss_memory
 * forward_tensors / backward_tensors), replayed through the caching allocator.
 * Llama-3-8B shape, 2 x 4096 tokens, tp 8: Tv = 8192 x 16032 = 131,334,144.
 * loss_parallel: forward bf16 logits 2 Tv = 262,668,288 B, .float() copy and
 * shifted 4 Tv = 525,336,576 B each; backward zeros_like, exp(x), their sum,
 * 4 Tv each. Standard: forward logits and copy, backward nll_loss_backward's
 * zeros and _log_softmax_backward_data's output.
 * Replay (c10 CUDACachingAllocator: >= 10 MiB requests get their own segment
 * rounded to 2 MiB; best fit from the cache): the saved 4 Tv takes a 502 MiB
 * segment (526,385,152 B; the 1 MiB rest is not split off), the forward 126 MiB
 * (264,241,152 B) and two 502 MiB segments, freed; the backward's first two
 * 4 Tv requests reuse those two, the third opens one more: 4 x 526,385,152 +
 * 264,241,152 = 2,369,781,760 B reserved. One block per transient (10 Tv then
 * 12 Tv) would reserve 526,385,152 + 1,314,914,304 + 1,577,058,304 =
 * 3,418,357,760 B: the 12 Tv request fits no freed block. */
static void replay(const double *list, double total, uint64_t tag, int take) {
  int listed = 0;
  for (int k = 0; k < LOSS_MAX_TENSORS; k++) listed |= list[k] > 0;
  for (int k = 0; k < (listed ? LOSS_MAX_TENSORS : 1); k++) {
    double bytes = listed ? list[k] : total;
    if (bytes <= 0) continue;
    if (take) alloc_malloc(tag + (uint64_t)k, bytes, ALLOC_STREAM_COMPUTE);
    else alloc_free(tag + (uint64_t)k, 0);
  }
}

static double loss_reserved(const loss_memory *lm) {
  alloc_settings s = {INFINITY, 0, INFINITY, 0, 1e9};
  alloc_reset(&s);
  alloc_malloc(1, lm->saved_bytes, ALLOC_STREAM_COMPUTE);
  replay(lm->forward_tensors, lm->forward_peak_bytes, 10, 1);
  replay(lm->forward_tensors, lm->forward_peak_bytes, 10, 0);
  replay(lm->backward_tensors, lm->backward_peak_bytes, 20, 1);
  return alloc_get_stats()->reserved_bytes;
}

static void loss_tensors(void) {
  const double Tv = 8192.0 * 16032;
  plan pl = plan_for(
      L3 "training.micro_batch=2 parallel.engine=fsdp2 parallel.gpus=8 parallel.tp=8 training.loss=loss_parallel");
  loss_memory lp = loss_bytes(&pl);
  CHECK_NEAR(lp.forward_tensors[0], 262668288.0, 0, "loss_parallel: bf16 logits");
  CHECK_NEAR(lp.forward_tensors[1], 525336576.0, 0, "loss_parallel: fp32 copy");
  CHECK_NEAR(lp.forward_tensors[2], 525336576.0, 0, "loss_parallel: shifted");
  for (int k = 0; k < 3; k++) CHECK_NEAR(lp.backward_tensors[k], 4 * Tv, 0, "loss_parallel: backward 4 Tv each");
  CHECK_NEAR(loss_reserved(&lp), 2369781760.0, 0, "loss_parallel: the backward reuses two forward blocks");
  loss_memory lumped = lp;
  for (int k = 0; k < LOSS_MAX_TENSORS; k++) lumped.forward_tensors[k] = lumped.backward_tensors[k] = 0;
  CHECK_NEAR(loss_reserved(&lumped), 3418357760.0, 0, "one block per transient");
  /* the standard loss over the same Tv elements: one rank's 16,032-entry vocabulary, no TP */
  plan sp = plan_for(L3
                     "model.vocab=16032 training.micro_batch=2 parallel.engine=fsdp2 parallel.gpus=8 "
                     "training.loss=standard");
  loss_memory sd = loss_bytes(&sp);
  CHECK_NEAR(sd.forward_tensors[0], 2 * Tv, 0, "standard: bf16 logits");
  CHECK_NEAR(sd.forward_tensors[1], 4 * Tv, 0, "standard: fp32 copy");
  CHECK_NEAR(sd.forward_tensors[2], 0, 0, "standard: two forward tensors");
  CHECK_NEAR(sd.backward_tensors[0] + sd.backward_tensors[1], 8 * Tv, 0, "standard: backward 4 + 4 Tv");
  /* saved 502 MiB, forward 126 + 502 MiB freed, backward: one reused, one new: 3 x 526,385,152 + 264,241,152 */
  CHECK_NEAR(loss_reserved(&sd), 1843396608.0, 0, "standard: the zeros reuse the copy's block");
  /* an RL entropy transient is one tensor more in the list (the sums stay the peaks) */
  plan e = plan_for(L3 ONE "rl.algorithm=grpo rl.entropy=true training.loss=standard rl.entropy_kernel=eager");
  loss_memory le = loss_bytes(&e);
  double sum = 0;
  for (int k = 0; k < LOSS_MAX_TENSORS; k++) sum += le.forward_tensors[k];
  CHECK_NEAR(sum, le.forward_peak_bytes, 0, "entropy product listed");
  CHECK_NEAR(le.forward_tensors[2], 1050673152.0, 0, "entropy product: its own tensor, 2 TV");
}

/* PyTorch TP without loss_parallel: the output projection (ColwiseParallel,
 * output_layouts=Replicate()) all-gathers its vocab-sharded logits, and the loss
 * runs over the whole vocabulary on every rank. Llama-3-8B shape, 4096 tokens,
 * bf16, FSDP2 x TP 8: TV = 4096 x 128,256 = 525,336,576 elements.
 * standard: saved log-softmax 4 TV = 2,101,346,304 B; forward bf16 logits 2 TV =
 * 1,050,673,152 B and .float() copy 4 TV; backward 4 + 4 TV.
 * the gather: the local [4096, 16,032] shard 2 x 65,667,072 = 131,334,144 B, the
 * all-gather output [8 x 4096, 16,032] and its concatenation [4096, 128,256],
 * 1,050,673,152 B each: 2,232,680,448 B at once.
 * Megatron's own TP keeps the standard loss vocab-parallel: 4 Tv = 262,668,288 B
 * saved, nothing gathered; loss_parallel keeps the shard (above). */
static void gathered_logits(void) {
#define TP8 "parallel.gpus=8 parallel.tp=8 "
  plan g = plan_for(L3 TP8 "parallel.engine=fsdp2 training.loss=standard");
  loss_memory lg = loss_bytes(&g);
  CHECK_NEAR(lg.saved_bytes, 2101346304.0, 0, "gathered: log-softmax over the whole vocabulary");
  CHECK_NEAR(lg.forward_tensors[0], 1050673152.0, 0, "gathered: bf16 logits [T, V]");
  CHECK_NEAR(lg.forward_tensors[1], 2101346304.0, 0, "gathered: fp32 copy [T, V]");
  CHECK_NEAR(lg.backward_peak_bytes, 4202692608.0, 0, "gathered: backward 8 TV");
  CHECK_NEAR(lg.gather_tensors[0], 131334144.0, 0, "gather: local shard");
  CHECK_NEAR(lg.gather_tensors[1], 1050673152.0, 0, "gather: all-gather output");
  CHECK_NEAR(lg.gather_tensors[2], 1050673152.0, 0, "gather: concatenation");
  CHECK_NEAR(lg.gather_peak_bytes, 2232680448.0, 0, "gather: all three at once");
  plan m = plan_for(L3 TP8 "parallel.engine=megatron training.loss=standard");
  loss_memory lm = loss_bytes(&m);
  CHECK_NEAR(lm.saved_bytes, 262668288.0, 0, "megatron: vocab-parallel softmax 4 Tv");
  CHECK_NEAR(lm.gather_peak_bytes, 0, 0, "megatron: nothing gathered");
  plan lp = plan_for(L3 TP8 "parallel.engine=fsdp2 training.loss=loss_parallel");
  CHECK_NEAR(loss_bytes(&lp).gather_peak_bytes, 0, 0, "loss_parallel: Shard(-1) logits, nothing gathered");
  /* torchtune's chunked output (8 chunks) gathers chunk by chunk: 2,232,680,448 / 8 =
   * 279,085,056 B; its log-softmax outputs are over the whole vocabulary: 4 TV kept */
  plan c = plan_for(L3 TP8 "parallel.engine=fsdp2 training.loss=chunked training.loss_chunks=8");
  CHECK_NEAR(loss_bytes(&c).gather_peak_bytes, 279085056.0, 0, "chunked: one chunk's gather");
  CHECK_NEAR(loss_bytes(&c).saved_bytes, 2101346304.0, 0, "chunked: 4 TV kept");
  /* a vocabulary TP does not divide: 128,257 entries, shards of ceil(128,257 / 8) =
   * 16,033 (the last padded for the all-gather): output 4096 x 128,264 x 2 =
   * 1,050,738,688 B; the unpadded logits 4096 x 128,257: saved 4 x 525,340,672 =
   * 2,101,362,688 B */
  plan u = plan_for(L3 TP8 "model.vocab=128257 parallel.engine=fsdp2 training.loss=standard");
  loss_memory lu = loss_bytes(&u);
  CHECK_NEAR(lu.gather_tensors[1], 1050738688.0, 0, "uneven: padded all-gather output");
  CHECK_NEAR(lu.saved_bytes, 2101362688.0, 0, "uneven: unpadded logits");
}

/* The event of a phase and layer, the nth of them. */
static const llmem_event *event_at(const llmem_result *out, int phase, int layer, int nth) {
  for (int i = 0; i < out->event_count; i++)
    if (out->events[i].phase == phase && out->events[i].layer == layer && nth-- == 0) return &out->events[i];
  return 0;
}

/* Llama-3-8B shape on one GPU, T = 2048, V = 128,256: TV = 262,668,288. */
static void head_and_fp32(void) {
#define L3_ONE L3 "training.seq_len=2048 parallel.gpus=1 parallel.engine=single "
  double T = 2048, h = 4096, TV = 2048.0 * 128256;
  /* fp32 logits: .float() returns them (TensorConversions.cpp to_impl): the
   * forward holds the logits beside the saved log-softmax, no copy, and their
   * freed block is fp32 too (nothing unreusable) */
  plan f32 = plan_for(L3_ONE "training.dtype=fp32 training.master_weights=false");
  loss_memory l32 = loss_bytes(&f32);
  CHECK_NEAR(l32.forward_peak_bytes, 4 * TV, 0, "fp32 logits, no .float() copy");
  CHECK_NEAR(l32.unreusable_bytes, 0, 0, "fp32 logits: their block serves the backward");
  plan b16 = plan_for(L3_ONE "training.master_weights=false");
  CHECK_NEAR(loss_bytes(&b16).forward_peak_bytes, 6 * TV, 0, "bf16 logits and their fp32 copy");
  /* the head's input: the final norm's fp32 input and bf16 normed x (trained
   * weight), and the head's bf16 input (8 T h); frozen under LoRA: the norm's
   * fp32 input only (4 T h) */
  CHECK_NEAR(loss_bytes(&b16).head_input_bytes, 8 * T * h, 0, "trained head keeps its input");
  plan lora = plan_for(L3_ONE "training.finetune.method=lora");
  CHECK_NEAR(loss_bytes(&lora).head_input_bytes, 4 * T * h, 0, "frozen head keeps no input");
  /* pure bf16: the lazily made head gradient (128,256 x 4,096 x 2 B = 1,050,673,152 B, + the
   * final norm's 8,192) comes with the head's matmul backward, after the loss's own backward
   * (its 8 TV beside the saved 4 TV): not at that point, then beside the bf16 logits' gradient */
  static llmem_result out;
  CHECK(run_keys(L3_ONE "training.master_weights=false model.layers=2", &out), "pure bf16 estimate");
  const llmem_event *ce = event_at(&out, LLMEM_PHASE_BACKWARD, -1, 0),
                    *mm = event_at(&out, LLMEM_PHASE_BACKWARD, -1, 1);
  CHECK(ce && mm, "loss backward and head backward points");
  if (ce && mm) {
    CHECK_NEAR(ce->category_bytes[LLMEM_CAT_GRADIENTS], 0, 0, "no head gradient at the loss's backward");
    CHECK_NEAR(ce->category_bytes[LLMEM_CAT_LOGITS], 12 * TV, 0, "log-softmax + its two fp32 gradients");
    CHECK_NEAR(mm->category_bytes[LLMEM_CAT_GRADIENTS], 1050673152.0 + 8192.0, 0, "head gradient at its matmul");
    CHECK_NEAR(mm->category_bytes[LLMEM_CAT_LOGITS], 2 * TV, 0, "beside the logits' bf16 gradient");
  }
}

int main(void) {
  gathered_logits();
  head_and_fp32();
  softcap();
  flash_ce();
  swift_sp_losses();
  cce();
  selective();
  rl_entropy();
  loss_tensors();
  /* tp 8, bf16: Tv = T * V/tp = 4096 * 16032 = 65,667,072 elements.
   * forward: bf16 logits 2 Tv + fp32 copy 4 Tv + shifted 4 Tv + exp(shifted) 4 Tv
   *   (then the result in exp's place) = 14 Tv = 919,339,008 B;
   *   saved: the result (log-softmax) 4 Tv = 262,668,288 B, so the transient is
   *   10 Tv = 656,670,720 B.
   * backward: saved 4 Tv + zeros_like 4 Tv + exp(x) 4 Tv + their sum 4 Tv
   *   = 16 Tv = 1,050,673,152 B; transient 12 Tv = 788,004,864 B.
   * del pred frees the 2 Tv = 131,334,144 B bf16 logits block, too small for the
   *   backward's 4 Tv requests. */
  plan pl = plan_for(L3 "parallel.engine=fsdp2 parallel.gpus=8 parallel.tp=8 training.loss=loss_parallel");
  loss_memory lp = loss_bytes(&pl);
  CHECK_NEAR(lp.saved_bytes, 262668288.0, 0, "loss_parallel saved");
  CHECK_NEAR(lp.forward_peak_bytes, 656670720.0, 0, "loss_parallel forward transient");
  CHECK_NEAR(lp.saved_bytes + lp.forward_peak_bytes, 919339008.0, 0, "loss_parallel forward 14 Tv");
  CHECK_NEAR(lp.backward_peak_bytes, 788004864.0, 0, "loss_parallel backward transient");
  CHECK_NEAR(lp.saved_bytes + lp.backward_peak_bytes, 1050673152.0, 0, "loss_parallel backward 16 Tv");
  CHECK_NEAR(lp.unreusable_bytes, 131334144.0, 0, "loss_parallel freed bf16 logits");

  /* against the standard F.cross_entropy on as many logits (a 16,032-entry vocabulary
   * without TP): 4 Tv more in each pass (forward 10 -> 14 Tv, backward 12 -> 16 Tv) */
  plan st = plan_for(L3 "model.vocab=16032 parallel.engine=fsdp2 parallel.gpus=8 training.loss=standard");
  loss_memory sd = loss_bytes(&st);
  double Tv = 4096.0 * 16032;
  CHECK_NEAR(lp.forward_peak_bytes - sd.forward_peak_bytes, 4 * Tv, 0, "forward +4 Tv over standard");
  CHECK_NEAR(lp.backward_peak_bytes - sd.backward_peak_bytes, 4 * Tv, 0, "backward +4 Tv over standard");

  /* fp32 logits: .float() returns the tensor itself, no copy and no 16-bit block:
   * forward 4 + 4 + 4 = 12 Tv (transient 8 Tv = 525,336,576 B), backward 16 Tv */
  pl = plan_for(L3
                "parallel.engine=fsdp2 parallel.gpus=8 parallel.tp=8 training.dtype=fp32 training.loss=loss_parallel");
  lp = loss_bytes(&pl);
  CHECK_NEAR(lp.forward_peak_bytes, 525336576.0, 0, "fp32 forward transient");
  CHECK_NEAR(lp.backward_peak_bytes, 788004864.0, 0, "fp32 backward transient");
  CHECK_NEAR(lp.unreusable_bytes, 0, 0, "fp32 nothing unreusable");

  /* without TP torchtitan never enters loss_parallel() and a plain tensor never
   * reaches the DTensor handlers: the standard path of the engine */
  const char *engines[] = {"parallel.engine=fsdp2 parallel.gpus=1 ", "parallel.engine=megatron parallel.gpus=1 "};
  for (int i = 0; i < 2; i++) {
    char a[512], b[512];
    snprintf(a, sizeof a, L3 "%s training.loss=loss_parallel", engines[i]);
    snprintf(b, sizeof b, L3 "%s training.loss=standard", engines[i]);
    plan pa = plan_for(a), pb = plan_for(b);
    check_same(loss_bytes(&pa), loss_bytes(&pb), engines[i]);
  }

  /* a whole estimate (2 layers and 2 samples, so the loss sets the peak, above
   * the root's reduce-scatter at the end of the backward): nothing new refused.
   * The standard loss reads the logits gathered over the whole vocabulary (TV =
   * 8192 x 128,256 = 1,050,673,152 elements; saved 4 TV + backward 8 TV = 12 TV),
   * loss_parallel its shard (Tv = TV / 8; saved 4 Tv + backward 12 Tv = 16 Tv =
   * 2 TV): the peak is 10 TV = 10,506,731,520 B lower */
  static llmem_result with, without;
  llmem_input keep;
  llmem_defaults(&keep);
  CHECK(set_keys(&keep, L3 "model.layers=2 training.micro_batch=2 parallel.engine=fsdp2 parallel.gpus=8 parallel.tp=8 "
                           "training.loss=standard"),
        "keys");
  CHECK(llmem_estimate(&keep, &without) == LLMEM_OK, "standard estimate: %s", without.error_message);
  CHECK(set_keys(&keep, "training.loss=loss_parallel"), "loss_parallel key");
  CHECK(llmem_estimate(&keep, &with) == LLMEM_OK, "loss_parallel estimate: %s", with.error_message);
  CHECK_NEAR(without.peak_allocated_bytes - with.peak_allocated_bytes, 10506731520.0, 0, "peak 10 TV lower");
  return check_report("loss");
}
