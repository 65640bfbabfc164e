/* Logits and cross-entropy (docs/memory-model.md §7.11): PyTorch loss_parallel()
 * over vocab-sharded logits, counted tensor by tensor by hand. */
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
#define L3 "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 " \
           "model.vocab=128256 model.vocab_multiple=1 training.seq_len=4096 training.micro_batch=1 "

/* Gemma 2 soft-capping, Gemma-2-2B shape (vocab 256000, 8 heads), 4096 tokens,
 * one GPU, bf16: the logits' tanh keeps its output, 2 T V = 2,097,152,000 B more
 * saved at the head; eager attention's score tanh keeps 2 T a s = 268,435,456 B
 * more per layer; Liger's fused loss caps inside its kernel (nothing kept). */
static void softcap(void) {
#define G2 "model.layers=26 model.hidden=2304 model.heads=8 model.kv_heads=4 model.head_dim=256 model.ffn_hidden=9216 " \
           "model.vocab=256000 model.vocab_multiple=1 training.seq_len=4096 parallel.gpus=1 parallel.engine=single "
  plan a = plan_for(G2), b = plan_for(G2 "model.final_logit_softcap=30");
  CHECK_NEAR(loss_bytes(&b).saved_bytes - loss_bytes(&a).saved_bytes, 2.0 * 4096 * 256000, 0, "tanh output kept");
  CHECK_NEAR(loss_bytes(&b).forward_peak_bytes, loss_bytes(&a).forward_peak_bytes, 0, "same transient");
  plan f = plan_for(G2 "model.final_logit_softcap=30 training.loss=fused"), g = plan_for(G2 "training.loss=fused");
  check_same(loss_bytes(&f), loss_bytes(&g), "Liger caps inside its kernel");
  plan e = plan_for(G2 "training.attention=eager"), c = plan_for(G2 "training.attention=eager model.attn_logit_softcap=50");
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

int main(void) {
  softcap();
  flash_ce();
  rl_entropy();
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

  /* against the standard F.cross_entropy on the same shard: 4 Tv more in each pass
   * (forward 10 -> 14 Tv, backward 12 -> 16 Tv) */
  plan st = plan_for(L3 "parallel.engine=fsdp2 parallel.gpus=8 parallel.tp=8 training.loss=standard");
  loss_memory sd = loss_bytes(&st);
  double Tv = 4096.0 * 16032;
  CHECK_NEAR(lp.forward_peak_bytes - sd.forward_peak_bytes, 4 * Tv, 0, "forward +4 Tv over standard");
  CHECK_NEAR(lp.backward_peak_bytes - sd.backward_peak_bytes, 4 * Tv, 0, "backward +4 Tv over standard");

  /* fp32 logits: .float() returns the tensor itself, no copy and no 16-bit block:
   * forward 4 + 4 + 4 = 12 Tv (transient 8 Tv = 525,336,576 B), backward 16 Tv */
  pl = plan_for(L3 "parallel.engine=fsdp2 parallel.gpus=8 parallel.tp=8 training.dtype=fp32 training.loss=loss_parallel");
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
   * the root's reduce-scatter at the end of the backward): nothing new refused,
   * and the peak is 4 Tv higher, Tv now 2 x 65,667,072: 525,336,576 B */
  static llmem_result with, without;
  llmem_input keep;
  llmem_defaults(&keep);
  CHECK(set_keys(&keep, L3 "model.layers=2 training.micro_batch=2 parallel.engine=fsdp2 parallel.gpus=8 parallel.tp=8 training.loss=standard"), "keys");
  CHECK(llmem_estimate(&keep, &without) == LLMEM_OK, "standard estimate: %s", without.error_message);
  CHECK(set_keys(&keep, "training.loss=loss_parallel"), "loss_parallel key");
  CHECK(llmem_estimate(&keep, &with) == LLMEM_OK, "loss_parallel estimate: %s", with.error_message);
  CHECK_NEAR(with.peak_allocated_bytes - without.peak_allocated_bytes, 4 * 2 * Tv, 0, "peak +4 Tv");
  return check_report("loss");
}
