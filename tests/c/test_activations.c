/* Per-layer activations: the generalised accounting reduces to Korthikanti
 * Eq.1 / Table 2 for a GPT layer (plus the 4 B per token LayerNorm statistics
 * the paper leaves out), and to docs/memory-model.md §7.8 for a Llama layer. */
#include "check.h"
#include "check_plan.h"

#define GPT                                                                                                       \
  "model.layers=4 model.hidden=12288 model.heads=96 model.ffn_hidden=49152 model.mlp=plain model.norm=layernorm " \
  "training.seq_len=2048 training.dropout=0.1 training.attention=sdpa_math parallel.engine=megatron "

int main(void) {
  double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
  plan pl = plan_for(GPT "parallel.gpus=1");
  layer_activations la = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(la.saved_full_bytes - 2 * 4 * s * b, sbh * (34 + 5 * a * s / h), 0, "Eq.1");
  pl = plan_for(GPT "parallel.gpus=8 parallel.tp=8 parallel.sequence_parallel=false");
  la = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(la.saved_full_bytes - 2 * 4 * s * b, sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)), 0, "Table 2 TP");
  pl = plan_for(GPT "parallel.gpus=8 parallel.tp=8");
  la = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(la.saved_full_bytes - 2 * 4 * s * b / 8, sbh * (34.0 / 8 + 5 * a * s / (h * 8)), 1e-15, "Table 2 TP+SP");
  pl = plan_for(GPT "parallel.gpus=8 parallel.tp=8 training.recompute=selective");
  la = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(la.saved_bytes - 2 * 4 * s * b / 8, sbh * (34.0 / 8), 1e-15, "Table 2 TP+SP+selective");
  pl = plan_for(GPT "parallel.gpus=8 parallel.tp=8 parallel.sequence_parallel=false training.recompute=full");
  la = layer_activation_bytes(&pl, 0, 1);
  CHECK_NEAR(la.saved_bytes, sbh * 2, 0, "Table 2 full recompute");

  /* Llama-3-8B, s=2048, fused norms (Megatron), FlashAttention, eager vs fused SwiGLU:
   * §7.8 E10: 41*sbh + 4bas = 344,195,072 B (eager SwiGLU); fused 285,474,816 B */
  pl = plan_for(
      "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 training.seq_len=2048 "
      "parallel.engine=fsdp2 parallel.gpus=1 runtime.torch_compile=false");
  la = layer_activation_bytes(&pl, 0, 0);
  /* eager norms keep fp32 inputs: +2 bytes x 2 norms x sbh over the fused accounting;
   * their trained weights keep the normed x in bf16 too (weight * x.to(dtype)): +2 x 2 sbh */
  double sbh8 = 2048.0 * 4096;
  CHECK_NEAR(la.saved_full_bytes - 2 * 4 * 2048 - 8 * sbh8, 344195072.0, 0, "Llama-3-8B eager layer");
  pl = plan_for(
      "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 training.seq_len=2048 "
      "parallel.engine=megatron parallel.gpus=1 parallel.sequence_parallel=false");
  la = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(la.saved_full_bytes - 2 * 4 * 2048, 285474816.0, 0, "Llama-3-8B fused layer");
  /* PyTorch math SDPA upcasts bf16 q, k, v to fp32 (attention.cpp _scaled_dot_product_attention_math):
   * T = 2048 tokens, a = 8 heads, h = 1024, n = T*a*s = 33,554,432 score elements.
   * math - flash saved = fp32 probabilities 4n = 134,217,728 + q,k,v at 4 instead of 2 B:
   * 2*T*3h = 12,582,912 - flash LSE 4*T*a = 65,536  => 146,735,104 B.
   * Forward working set: pre-RoPE q,k 2*T*2h = 8,388,608 + pre-softmax scores, softmax
   * output before the where and the -inf mask (4+4+1)n = 301,989,888 => 310,378,496 B. */
#define SMALL                                                                              \
  "model.layers=2 model.hidden=1024 model.heads=8 model.kv_heads=8 model.ffn_hidden=2816 " \
  "training.seq_len=2048 parallel.engine=single parallel.gpus=1 "
  pl = plan_for(SMALL "training.attention=sdpa_math");
  layer_activations math = layer_activation_bytes(&pl, 0, 0);
  pl = plan_for(SMALL "training.attention=flash");
  layer_activations flash = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(math.saved_full_bytes - flash.saved_full_bytes, 146735104.0, 0, "math SDPA fp32 scores and q,k,v");
  CHECK_NEAR(math.forward_temp_bytes, 310378496.0, 0, "math SDPA softmax working set");
  /* backward: 2*T*h*2 residual grads 8,388,608 + dq,dk,dv,do 2*T*4h 16,777,216 + fp32 dq
   * 4*T*h 8,388,608 + two fp32 score gradients 8n 268,435,456 => 301,989,888 B */
  CHECK_NEAR(math.backward_temp_bytes, 301989888.0, 0, "math SDPA score gradients");
  /* dropout 0.1 adds the bool mask and the fp32 dropout output: 5n = 167,772,160 B */
  pl = plan_for(SMALL "training.attention=sdpa_math training.dropout=0.1");
  layer_activations drop = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(drop.saved_full_bytes - math.saved_full_bytes - 2 * 2048.0 * 1024, 167772160.0, 0,
             "math SDPA dropout (less the two 1-B hidden masks)");
  /* Megatron's unfused core attention keeps its own softmax at any dtype: fp32 here,
   * pre-RoPE q,k T*2h*4 = 16,777,216 + scores and masked copy 2*n*4 = 268,435,456 => 285,212,672 B */
  pl = plan_for(SMALL "training.attention=sdpa_math parallel.engine=megatron training.dtype=fp32");
  CHECK_NEAR(layer_activation_bytes(&pl, 0, 0).forward_temp_bytes, 285212672.0, 0, "Megatron unfused attention");
  /* Context parallelism over 4 ranks, T = 8192 / 4 = 2048 tokens a rank, h = 1024 (8 heads, no GQA), bf16,
   * FSDP2: local K and V kv = 2*T*h = 4,194,304 elements. Megatron / TE pass chunks round the ring, double-
   * buffered: 2*kv*2 = 16,777,216 B beside the pre-RoPE q,k (fp32 under FSDP2) 2*T*h*4 = 16,777,216: 33,554,432
   * (the MLP keeps its intermediates saved: only fc2's output T*h*2 = 4,194,304 is transient). PyTorch's context_parallel (torchtitan; _attention.py at 0123248a):
   * contiguous K, V + their cat + the all-gather's 4 chunks (4+2)*kv*2 = 50,331,648 and the fp32 merge (running
   * output, the block's fp32 cast, the result: 3*4 B, and the block's bf16 output) T*h*14 = 29,360,128: forward
   * 16,777,216 + 79,691,776 = 96,468,992 B. Backward: the gathered K, V again 50,331,648, fp32 dq T*h*4 =
   * 8,388,608, dk, dv kv*4 = 16,777,216, the dk,dv cat sent and the buffer received 2*kv*4 = 33,554,432, beside
   * dq,dk,dv,do T*4h*2 = 16,777,216 and FlashAttention's fp32 dq 8,388,608, plus the residual gradients
   * 2*T*h*2 = 8,388,608: 142,606,336 B (TE: 8,388,608 + 25,165,824 + 16,777,216 = 50,331,648). */
#define CP4                                                                                \
  "model.layers=2 model.hidden=1024 model.heads=8 model.kv_heads=8 model.ffn_hidden=2816 " \
  "training.seq_len=8192 parallel.engine=fsdp2 parallel.gpus=4 parallel.cp=4 "
  pl = plan_for(CP4 "runtime.framework=generic");
  layer_activations ring = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(ring.forward_temp_bytes, 33554432.0, 0, "CP ring chunks beside attention");
  CHECK_NEAR(ring.backward_temp_bytes, 50331648.0, 0, "CP ring chunks in the backward");
  pl = plan_for(CP4 "runtime.framework=torchtitan");
  layer_activations gather = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(gather.forward_temp_bytes, 96468992.0, 0, "PyTorch CP: all-gathered K, V and the fp32 merge");
  CHECK_NEAR(gather.backward_temp_bytes, 142606336.0, 0, "PyTorch CP: K, V again, fp32 dq, dk, dv and their sends");
  /* Ulysses (parallel.cp_all_to_all = cp = 4) under DDP, T = 2048 tokens a rank, h = 1024 (8 heads of 128, no
   * GQA), bf16, F = 1024 (so that attention sets the working sets): the kernel keeps q, k, v exchanged (as many
   * bytes as before) and its head-sharded output beside o_proj's input: T*h*2 = 4,194,304 B more than the ring.
   * Forward: pre-RoPE q,k 2*T*h*2 = 8,388,608, the projections' q, k, v held by the module 3*T*h*2 = 12,582,912
   * and an exchange's send copy and receive buffer 2*T*h*2 = 8,388,608: 29,360,128 B. Backward: the residual
   * gradients 2*T*h*2 = 8,388,608, dq,dk,dv,do T*4h*2 = 16,777,216, FlashAttention's fp32 dq 8,388,608, and
   * the same 20,971,520 for the gradients' exchange: 54,525,952 B. With 2 KV heads K and V are repeated to one
   * head a rank before the exchange: k and v kept at T*4*128*2 = 2,097,152 B each, not T*2*128*2 (the ring's). */
  /* The MLP's forward working set (one GPU, T = 4096 tokens, h = 1024, F = 8192, bf16, flash): a layer that
   * keeps gate, up and silu(gate) as saved tensors holds nothing more in the forward than fc2's output
   * T*h*2 = 8,388,608, under the attention's pre-RoPE q,k 2*T*h*2 = 16,777,216; checkpointed (no grad), the
   * intermediates are freed as the next is made: 3*T*F*2 = 201,326,592; LoRA on q, v only leaves fc2 frozen,
   * so nothing saves the product: T*F*2 + T*h*2 = 75,497,472. */
#define MLP_WS                                                                                                   \
  "model.layers=2 model.hidden=1024 model.heads=8 model.kv_heads=8 model.ffn_hidden=8192 training.seq_len=4096 " \
  "parallel.engine=single parallel.gpus=1 "
  pl = plan_for(MLP_WS);
  CHECK_NEAR(layer_activation_bytes(&pl, 0, 0).forward_temp_bytes, 16777216.0, 0, "kept MLP: no forward working set");
  CHECK_NEAR(layer_activation_bytes(&pl, 0, 1).forward_temp_bytes, 201326592.0, 0, "checkpointed MLP: 3 T F");
  pl = plan_for(MLP_WS "training.finetune.method=lora training.finetune.lora_targets=q,v");
  CHECK_NEAR(layer_activation_bytes(&pl, 0, 0).forward_temp_bytes, 75497472.0, 0,
             "frozen fc2: the product is transient");
#define ULYSSES                                                                                 \
  "model.layers=2 model.hidden=1024 model.heads=8 model.ffn_hidden=1024 training.seq_len=8192 " \
  "parallel.engine=ddp parallel.gpus=4 parallel.cp=4 "
  pl = plan_for(ULYSSES "model.kv_heads=8 parallel.cp_all_to_all=4");
  layer_activations a2a = layer_activation_bytes(&pl, 0, 0);
  pl = plan_for(ULYSSES "model.kv_heads=8");
  ring = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(a2a.saved_full_bytes - ring.saved_full_bytes, 4194304.0, 0, "Ulysses: the kernel's head-sharded output");
  CHECK_NEAR(a2a.forward_temp_bytes, 29360128.0, 0, "Ulysses: q, k, v held and an exchange's two copies");
  CHECK_NEAR(a2a.backward_temp_bytes, 54525952.0, 0, "Ulysses: the gradients' exchange");
  pl = plan_for(ULYSSES "model.kv_heads=2 parallel.cp_all_to_all=4");
  a2a = layer_activation_bytes(&pl, 0, 0);
  pl = plan_for(ULYSSES "model.kv_heads=2");
  ring = layer_activation_bytes(&pl, 0, 0);
  CHECK_NEAR(a2a.saved_full_bytes - ring.saved_full_bytes, 4194304.0 + 2 * 2048.0 * 256 * 2, 0,
             "Ulysses: K and V repeated to a head a rank");
  /* Liger fused linear cross-entropy (fused_linear_cross_entropy.py): T = 2048, h = 1024,
   * V = 32768: inc = 32, chunk = next_pow2(2048/32) = 64 tokens.
   * FSDP2 bf16 full fine-tuning: grad_input T*h*2 = 4,194,304 + bf16 grad_weight
   * V*h*2 = 67,108,864 => 71,303,168 B kept; forward: loss_1d 4T = 8,192 + chunk logits
   * 64*V*2 = 4,194,304 + mm(...) bf16 and its .float() copy V*h*(2+4) = 201,326,592
   * => 205,529,088 B. */
#define LIGER                                                                               \
  "model.layers=2 model.hidden=1024 model.heads=8 model.ffn_hidden=2816 model.vocab=32768 " \
  "training.seq_len=2048 training.loss=fused parallel.gpus=1 "
  pl = plan_for(LIGER "parallel.engine=fsdp2");
  loss_memory lm = loss_bytes(&pl);
  CHECK_NEAR(lm.saved_bytes, 71303168.0, 0, "Liger bf16 grad_weight");
  CHECK_NEAR(lm.forward_peak_bytes, 205529088.0, 0, "Liger grad_weight accumulation");
  /* LoRA: the frozen head has no grad_weight and nothing to accumulate: 4,194,304 B kept;
   * forward 8,192 + 4,194,304 + grad_input chunk 64*h*2 = 131,072 => 4,333,568 B */
  pl = plan_for(LIGER "parallel.engine=fsdp2 training.finetune.method=lora");
  lm = loss_bytes(&pl);
  CHECK_NEAR(lm.saved_bytes, 4194304.0, 0, "Liger frozen head");
  CHECK_NEAR(lm.forward_peak_bytes, 4333568.0, 0, "Liger frozen head forward");
  /* autocast over fp32 parameters: fp32 grad_weight V*h*4 = 134,217,728 (+ 4,194,304),
   * accumulated by addmm(out_dtype=fp32) in place: forward 4,333,568 B */
  pl = plan_for(LIGER "parallel.engine=single");
  lm = loss_bytes(&pl);
  CHECK_NEAR(lm.saved_bytes, 138412032.0, 0, "Liger fp32 grad_weight under autocast");
  CHECK_NEAR(lm.forward_peak_bytes, 4333568.0, 0, "Liger addmm accumulation");
  /* recompute never keeps more than no recompute; per-op SAC sits in between */
  pl = plan_for(
      "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 training.seq_len=2048 "
      "training.recompute=per_op parallel.gpus=1 parallel.engine=single");
  la = layer_activation_bytes(&pl, 0, 0);
  CHECK(la.saved_bytes < la.saved_full_bytes && la.saved_bytes > la.checkpoint_bytes, "per-op between full and none");
  /* LoRA dropout > 0: 28.5 sbh more per layer for all-linear targets of Llama-3-8B (E10);
   * bf16 adapters: no input cast (lora_input_cast) */
#define L3_LORA                                                                                                     \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 training.seq_len=2048 " \
  "training.finetune.method=lora parallel.gpus=1 parallel.engine=single "
  plan with = plan_for(L3_LORA "training.finetune.lora_dropout=0.05 training.finetune.adapter_dtype=bf16");
  plan without = plan_for(L3_LORA "training.finetune.adapter_dtype=bf16");
  CHECK_NEAR(lora_saved_bytes(&with, 0) - lora_saved_bytes(&without, 0), 239075328.0, 0, "LoRA dropout copies");
  /* LitGPT's LoRAQKVLinear drops out the fused qkv input once: k's and v's
   * copies go, 2 x T x h x (2 B + 1 B mask) = 2 x 2048 x 4096 x 3 = 50,331,648 B */
  plan fused = plan_for(L3_LORA
                        "training.finetune.lora_dropout=0.05 training.finetune.lora_fused_qkv=true "
                        "training.finetune.adapter_dtype=bf16");
  CHECK_NEAR(lora_saved_bytes(&with, 0) - lora_saved_bytes(&fused, 0), 50331648.0, 0, "LitGPT fused qkv: one dropout");
  /* PEFT with fp32 adapters on a bf16 model, one GPU (lora_input_cast): each
   * adapted linear keeps the bf16 re-cast of its x.to(fp32) copy and the
   * frozen base keeps no input. Llama-3-8B, T = 2048, all linears adapted:
   * copies 2T(3h + h + 2h + F) against the shared qkv input 2Th, MLP input
   * 2Th and product 2TF kept with bf16 adapters: + 8Th = 67,108,864 B a layer */
  plan cast = plan_for(L3_LORA);
  double no_cast = layer_activation_bytes(&without, 0, 0).saved_bytes;
  CHECK_NEAR(layer_activation_bytes(&cast, 0, 0).saved_bytes - no_cast, 67108864.0, 0, "PEFT input casts: a copy each");
  plan litgpt = plan_for(L3_LORA "runtime.framework=litgpt");
  plan litgpt_bf16 = plan_for(L3_LORA "runtime.framework=litgpt training.finetune.adapter_dtype=bf16");
  CHECK_NEAR(layer_activation_bytes(&litgpt, 0, 0).saved_bytes, layer_activation_bytes(&litgpt_bf16, 0, 0).saved_bytes,
             0, "LitGPT's LoRALinear casts nothing");
  plan fsdp_mp = plan_for(
      "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 training.seq_len=2048 "
      "training.finetune.method=lora parallel.gpus=2 parallel.engine=fsdp2");
  plan fsdp_bf16 = plan_for(
      "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 training.seq_len=2048 "
      "training.finetune.method=lora parallel.gpus=2 parallel.engine=fsdp2 training.finetune.adapter_dtype=bf16");
  CHECK_NEAR(layer_activation_bytes(&fsdp_mp, 0, 0).saved_bytes, layer_activation_bytes(&fsdp_bf16, 0, 0).saved_bytes,
             0, "FSDP hands the adapters over in bf16: no cast");
  /* torch.autocast over fp32 parameters (autocast_mode.cpp cached_cast: only
   * parameters are cached): q, k and v each keep their own bf16 copy of the
   * fp32 norm output, gate and up theirs. Llama-3-8B, one GPU, T = 2048:
   * norms (4 + 4) B x 2 + rstd, q/k/v copies 3 x 2h, q, k, v 2 x 6,144,
   * output projection input 2h, LSE 4 x 32, gate/up copies 2 x 2h, MLP 8F:
   * T x (28h + 12,288 + 128 + 8 + 8F) = 2048 x 241,800 = 495,206,400 B */
#define L3_SINGLE                                                                                                   \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 training.seq_len=2048 " \
  "parallel.gpus=1 parallel.engine=single "
  plan ac = plan_for(L3_SINGLE "training.master_weights=true");
  CHECK(ac.autocast, "master weights on one GPU: autocast");
  layer_activations lac = layer_activation_bytes(&ac, 0, 0);
  CHECK_NEAR(lac.saved_full_bytes, 495206400.0, 0, "autocast layer: a copy of the norm output per linear");
  int copies = 0;
  for (int i = 0; i < lac.saved_tensors.count; i++) copies += lac.saved_tensors.bytes[i] == 2048.0 * 4096 * 2;
  CHECK(copies == 3 + 2 + 2, "q, k, v, gate, up copies, q and o_proj's input: separate tensors (%d)", copies);
  plan ac_fused = plan_for(L3_SINGLE "training.master_weights=true training.v_view_keeps_qkv=true");
  CHECK_NEAR(lac.saved_full_bytes - layer_activation_bytes(&ac_fused, 0, 0).saved_full_bytes, 2 * 2048.0 * 4096 * 2, 0,
             "a fused qkv linear casts once");
  /* fp32 (no autocast): the RMSNorm's x.float() is x itself, and its trained
   * weight keeps the fp32 normed x: (4 + 4) B x 2 norms; q/k/v input 4h, q, k,
   * v 4 x 6,144, o input 4h, LSE 128, MLP input 4h, MLP 16F:
   * T x (28h + 24,576 + 128 + 8 + 16F) = 2048 x 368,776 = 755,253,248 B */
  plan f32 = plan_for(L3_SINGLE "training.dtype=fp32 training.master_weights=false");
  CHECK_NEAR(layer_activation_bytes(&f32, 0, 0).saved_full_bytes, 755253248.0, 0, "fp32 layer, normed x kept");
  /* training.v_view_keeps_qkv: Llama-2-7B shape (MHA, h = 4096), T = 2048,
   * bf16: the saved v keeps the whole qkv output, 3h instead of h values per
   * token: + 2 x 2048 x 4096 x 2 B = 33,554,432 B; GQA copies v (no change) */
#define L2_MHA                                                                                                       \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=11008 training.seq_len=2048 " \
  "training.finetune.method=lora parallel.gpus=1 parallel.engine=single "
  plan mha = plan_for(L2_MHA), mha_view = plan_for(L2_MHA "training.v_view_keeps_qkv=true");
  CHECK_NEAR(layer_activation_bytes(&mha_view, 0, 0).saved_bytes - layer_activation_bytes(&mha, 0, 0).saved_bytes,
             33554432.0, 0, "v view keeps the fused qkv output");
  plan gqa_view = plan_for(L3_LORA "training.v_view_keeps_qkv=true training.finetune.adapter_dtype=bf16");
  CHECK_NEAR(layer_activation_bytes(&gqa_view, 0, 0).saved_bytes, layer_activation_bytes(&without, 0, 0).saved_bytes, 0,
             "GQA: v is a copy");
  /* training.norm_upcast=false: each RMSNorm keeps its bf16 input, not the
   * fp32 copy: 2 norms x 2048 x 4096 x (4 - 2) B = 33,554,432 B less; the
   * final norm before the head 2048 x 4096 x 2 = 16,777,216 B less */
  plan no_up = plan_for(L2_MHA "training.norm_upcast=false");
  CHECK_NEAR(layer_activation_bytes(&mha, 0, 0).saved_bytes - layer_activation_bytes(&no_up, 0, 0).saved_bytes,
             33554432.0, 0, "RMSNorm without upcast keeps the 16-bit input");
  CHECK_NEAR(loss_bytes(&mha).head_input_bytes - loss_bytes(&no_up).head_input_bytes, 16777216.0, 0,
             "final RMSNorm without upcast");
  /* a non-gated MLP whose fc2 is frozen (LoRA on attention only) keeps the
   * activation's input, not fc2's: GPT-NeoX shape F = 4h = 16384, T = 2048:
   * 2048 x 16384 x 2 B = 67,108,864 B less than with fc2 adapted */
#define NEOX                                                                                                   \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=16384 model.mlp=plain " \
  "training.seq_len=2048 training.finetune.method=lora training.finetune.adapter_dtype=bf16 parallel.gpus=1 "  \
  "parallel.engine=single "
  plan neox_qv = plan_for(NEOX "training.finetune.lora_targets=q,v");
  plan neox_down = plan_for(NEOX "training.finetune.lora_targets=q,v,down");
  CHECK_NEAR(layer_activation_bytes(&neox_down, 0, 0).saved_bytes - lora_saved_bytes(&neox_down, 0) -
                 (layer_activation_bytes(&neox_qv, 0, 0).saved_bytes - lora_saved_bytes(&neox_qv, 0)),
             67108864.0, 0, "frozen fc2 keeps no input");
  /* training.logits_fp32_kept (Fabric convert_output): chunked loss, T = 2048,
   * V = 32000, bf16, 8 chunks: the fp32 logits and fp32 log-softmax kept,
   * 8 TV = 524,288,000 B; no 16-bit list at the peak; a chunk's backward
   * (8 + 2) TV / 8 = 81,920,000 B */
  plan fab = plan_for(L2_MHA "model.vocab=32000 training.loss=chunked training.logits_fp32_kept=true");
  loss_memory lf = loss_bytes(&fab);
  CHECK_NEAR(lf.saved_bytes, 524288000.0, 0, "fp32 logits beside fp32 log-softmax");
  CHECK_NEAR(lf.forward_peak_bytes, 0, 0, "no upcast per chunk");
  CHECK_NEAR(lf.backward_peak_bytes, 81920000.0, 0, "a chunk's fp32 gradients and the cast's bf16 one");
  /* training.finetune.quant_dequant_temp (bitsandbytes MatMul4Bit): Llama-2-70B
   * shape, QLoRA NF4, bf16: the largest 4-bit linear, gate/up/down 8192 x 28672 =
   * 234,881,024 weights, dequantised to bf16 = 469,762,048 B beside the forward
   * and the backward working sets; quantised from fp16 (Fabric) a second, bf16
   * copy: 939,524,096 B; TP 2 halves the weight: 234,881,024 B; int8: none */
#define L2_70B                                                                                                      \
  "model.layers=80 model.hidden=8192 model.heads=64 model.kv_heads=8 model.ffn_hidden=28672 training.seq_len=2048 " \
  "training.finetune.method=qlora parallel.engine=single "
  plan qoff = plan_for(L2_70B "parallel.gpus=1 training.finetune.quant_dequant_temp=false");
  plan qon = plan_for(L2_70B "parallel.gpus=1 training.finetune.quant_dequant_temp=true");
  layer_activations q_off = layer_activation_bytes(&qoff, 0, 0);
  layer_activations q_on = layer_activation_bytes(&qon, 0, 0);
  CHECK_NEAR(q_on.forward_temp_bytes - q_off.forward_temp_bytes, 469762048.0, 0, "MatMul4Bit forward dequantises");
  CHECK_NEAR(q_on.backward_temp_bytes - q_off.backward_temp_bytes, 469762048.0, 0, "MatMul4Bit backward dequantises");
  CHECK_NEAR(q_on.saved_bytes, q_off.saved_bytes, 0, "a transient: nothing kept");
  plan qfp16 = plan_for(
      L2_70B "parallel.gpus=1 training.finetune.quant_dequant_temp=true training.finetune.quant_from_fp16=true");
  CHECK_NEAR(layer_activation_bytes(&qfp16, 0, 0).forward_temp_bytes - q_off.forward_temp_bytes, 939524096.0, 0,
             "fp16 state: dequantised, then cast");
  plan qtp =
      plan_for(L2_70B "parallel.engine=fsdp2 parallel.gpus=2 parallel.tp=2 training.finetune.quant_dequant_temp=true");
  plan qtp_off =
      plan_for(L2_70B "parallel.engine=fsdp2 parallel.gpus=2 parallel.tp=2 training.finetune.quant_dequant_temp=false");
  CHECK_NEAR(layer_activation_bytes(&qtp, 0, 0).backward_temp_bytes -
                 layer_activation_bytes(&qtp_off, 0, 0).backward_temp_bytes,
             234881024.0, 0, "TP: the rank's shard of the weight");
  plan q8 = plan_for(L2_70B "parallel.gpus=1 training.finetune.quant=int8 training.finetune.quant_dequant_temp=true");
  plan q8_off =
      plan_for(L2_70B "parallel.gpus=1 training.finetune.quant=int8 training.finetune.quant_dequant_temp=false");
  CHECK_NEAR(layer_activation_bytes(&q8, 0, 0).forward_temp_bytes,
             layer_activation_bytes(&q8_off, 0, 0).forward_temp_bytes, 0, "int8: not MatMul4Bit");
  /* torchtune's chunked loss with torch.compile: bf16 logits (2 TV) and a
   * logsumexp per token kept, T = 2048, V = 32000: 131,072,000 + 8,192 B; no
   * fp32 chunk: the backward writes one bf16 chunk gradient, 2 TV / 8 =
   * 16,384,000 B (inductor optimize_scatter_upon_const_tensor) */
  plan tt = plan_for(L2_MHA "model.vocab=32000 training.loss=chunked runtime.torch_compile=true");
  loss_memory lt = loss_bytes(&tt);
  CHECK_NEAR(lt.saved_bytes, 131080192.0, 0, "compiled chunked loss keeps bf16 logits + lse");
  CHECK_NEAR(lt.backward_peak_bytes, 16384000.0, 0, "compiled chunked loss: one bf16 chunk gradient");

  /* Mixtral shape, Megatron selective recompute: "moe" rebuilds the whole MoE
   * block, "moe_act" the experts' activation inside it; both together keep
   * what "moe" alone keeps (each saved tensor is dropped once) */
#define MIXTRAL                                                                                           \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 "             \
  "model.moe.experts=8 model.moe.top_k=2 training.seq_len=4096 parallel.engine=megatron parallel.gpus=8 " \
  "parallel.ep=8 training.recompute=selective "
  plan moe = plan_for(MIXTRAL "training.recompute_modules=moe");
  plan both = plan_for(MIXTRAL "training.recompute_modules=moe,moe_act");
  plan act = plan_for(MIXTRAL "training.recompute_modules=moe_act");
  plan none = plan_for(MIXTRAL "training.recompute_modules=core_attn");
  layer_activations l_moe = layer_activation_bytes(&moe, 0, 0), l_both = layer_activation_bytes(&both, 0, 0);
  layer_activations l_act = layer_activation_bytes(&act, 0, 0), l_none = layer_activation_bytes(&none, 0, 0);
  CHECK_NEAR(l_both.saved_bytes, l_moe.saved_bytes, 0, "moe + moe_act = moe");
  CHECK(l_both.saved_bytes > 0 && l_act.saved_bytes <= l_none.saved_bytes && l_moe.saved_bytes <= l_act.saved_bytes,
        "saved: none %g >= moe_act %g >= moe %g > 0", l_none.saved_bytes, l_act.saved_bytes, l_moe.saved_bytes);
  static llmem_result out;
  CHECK(llmem_estimate(last_plan_input(), &out) == LLMEM_OK, "mixtral estimate: %s", out.error_message);
  int negative = 0;
  for (int i = 0; i < out.event_count; i++)
    for (int c = 0; c < LLMEM_CAT_COUNT; c++) negative += out.events[i].category_bytes[c] < 0;
  CHECK(negative == 0, "mixtral moe,core_attn timeline: %d negative category readings", negative);
  CHECK(set_keys(last_plan_input(), "training.recompute_modules=moe,moe_act") &&
            llmem_estimate(last_plan_input(), &out) == LLMEM_OK,
        "both");
  negative = 0;
  for (int i = 0; i < out.event_count; i++)
    for (int c = 0; c < LLMEM_CAT_COUNT; c++) negative += out.events[i].category_bytes[c] < 0;
  CHECK(negative == 0, "mixtral moe,moe_act timeline: %d negative category readings", negative);

  /* torchtitan Llama 4 MoE scales the routed tokens by the scores before the
   * experts, in fp32: eager autograd keeps routed_input.to(float32) (T x k x h x
   * 4 B) where the score-after product keeps the bf16 expert outputs (x 2 B).
   * One layer, T = 8192, h = 5120, k = 1: 8192 x 5120 x (4 - 2) = 83,886,080 B.
   * Compiled, the upcast is recomputed from the bf16 gathered tokens: no change. */
#define SCOUT1                                                                               \
  "model.layers=2 model.hidden=5120 model.heads=40 model.kv_heads=8 model.ffn_hidden=8192 "  \
  "model.moe.experts=16 model.moe.top_k=1 model.moe.shared_experts=1 training.seq_len=8192 " \
  "parallel.gpus=1 parallel.engine=single "
  plan after = plan_for(SCOUT1);
  plan before = plan_for(SCOUT1 "model.moe.score_before_experts=true");
  plan after_c = plan_for(SCOUT1 "runtime.torch_compile=true");
  plan before_c = plan_for(SCOUT1 "runtime.torch_compile=true model.moe.score_before_experts=true");
  layer_activations la_after = layer_activation_bytes(&after, 0, 0), la_before = layer_activation_bytes(&before, 0, 0);
  CHECK_NEAR(la_before.saved_bytes - la_after.saved_bytes, 83886080.0, 0, "score before experts: fp32 routed copy");
  double listed = 0;
  for (int i = 0; i < la_before.saved_tensors.count; i++) listed += la_before.saved_tensors.bytes[i];
  CHECK_NEAR(listed, la_before.saved_bytes, 1, "score before experts: tensor list sums to the saved bytes");
  CHECK_NEAR(layer_activation_bytes(&before_c, 0, 0).saved_bytes, layer_activation_bytes(&after_c, 0, 0).saved_bytes, 0,
             "score before experts, compiled: bf16 gathered tokens kept");

  /* torchtitan per-op SAC on a DeepSeek-V2-Lite MoE layer (MLA without q compression), T = 4096, bf16: kept
   * are the layer input T h 2 = 16,777,216; of the mms wq, wkv_a, wkv_b, wo, then the shared experts' w1, w3,
   * w2, the 1st, 3rd, 5th and 7th: wq T x 16 x 192 x 2 = 25,165,824, wkv_b T x 16 x 256 x 2 = 33,554,432,
   * w1 T x 2816 x 2 = 23,068,672, w2 T h 2 = 16,777,216; the flash kernel's output T x 16 x 128 x 2 =
   * 16,777,216 and LSE T x 16 x 4 = 262,144; topk T x 6 x 12 = 294,912: 132,677,632 B. The routed experts'
   * grouped mm is rebuilt. EP 8 adds the all_to_all outputs, dispatched and combined: 2 x T x 6 x h x 2 =
   * 201,326,592 B. */
#define DSV2_LITE                                                                                       \
  "model.layers=27 model.hidden=2048 model.heads=16 model.kv_heads=16 model.ffn_hidden=10944 "          \
  "model.moe.experts=64 model.moe.top_k=6 model.moe.expert_ffn_hidden=1408 model.moe.shared_experts=2 " \
  "model.moe.shared_expert_ffn_hidden=1408 model.moe.dense_layers=1 model.mla.kv_lora_rank=512 "        \
  "model.mla.qk_nope_head_dim=128 model.mla.qk_rope_head_dim=64 model.mla.v_head_dim=128 "              \
  "training.seq_len=4096 training.recompute=per_op training.attention=flash parallel.engine=fsdp2 parallel.gpus=8 "
  plan sac_ep1 = plan_for(DSV2_LITE "parallel.ep=1"), sac_ep8 = plan_for(DSV2_LITE "parallel.ep=8");
  layer_activations sac1 = layer_activation_bytes(&sac_ep1, 1, 0), sac8 = layer_activation_bytes(&sac_ep8, 1, 0);
  CHECK_NEAR(sac1.saved_bytes, 132677632.0, 0, "per-op SAC MoE layer: alternate mms, kernel output, topk");
  CHECK_NEAR(sac8.saved_bytes - sac1.saved_bytes, 201326592.0, 0, "per-op SAC MoE layer: EP all_to_all outputs");
  /* torchtitan's save list before c4e229115 (2025-09) held no all_to_all_single: the exchanges run again */
  plan no_a2a = plan_for(DSV2_LITE "parallel.ep=8 training.sac_saves_all_to_all=false");
  CHECK_NEAR(layer_activation_bytes(&no_a2a, 1, 0).saved_bytes, sac1.saved_bytes, 0, "per-op SAC, a2a not on the list");
  plan tt_aug = plan_for(DSV2_LITE "parallel.ep=8 runtime.framework=torchtitan runtime.framework_version=2025-08"),
       tt_sep = plan_for(DSV2_LITE "parallel.ep=8 runtime.framework=torchtitan runtime.framework_version=2025-09");
  CHECK(!tt_aug.sac_saves_all_to_all && tt_sep.sac_saves_all_to_all, "torchtitan: the a2a outputs saved from 2025-09");
  listed = 0;
  for (int i = 0; i < sac8.saved_tensors.count; i++) listed += sac8.saved_tensors.bytes[i];
  CHECK_NEAR(listed, sac8.saved_bytes, 1, "per-op SAC MoE layer: tensor list sums to the saved bytes");
  CHECK_NEAR(sac8.saved_bytes + sac8.recompute_bytes, sac8.saved_full_bytes, 1, "per-op SAC: saved + rebuilt = all");

  /* Sequence parallel, Llama-3-8B layer, T = 4096, h = 4096, tp 8, no recompute.
   * PyTorch's SP (FSDP2 engine) gathers the norm output before the attention and the
   * MLP (PrepareModuleInput to Replicate) and q/k/v and gate/up keep that full
   * [T, h] tensor; only the two norms' fp32 inputs (4 B), their bf16 normed x
   * (2 B, kept for the weight's gradient by the eager RMSNorm) and rstd shrink:
   * no SP - SP = 2 x (T h 6 + 4 T) x 7/8 = 2 x 100,679,680 x 7/8 = 176,189,440 B.
   * Megatron's SP linears keep the sharded input (and its fused norms their 2 B
   * inputs): 2 x (T h 2 + 4 T) x 7/8 + 2 x T h 2 x 7/8 = 58,748,928 + 58,720,256 =
   * 117,469,184 B, of which the linears' inputs are 58,720,256 B: the SP layer's
   * saved set is that much smaller under Megatron than under PyTorch. */
#define L8                                                                                    \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 " \
  "training.seq_len=4096 parallel.gpus=8 parallel.tp=8 runtime.torch_compile=false "
  plan dt_sp = plan_for(L8 "parallel.engine=fsdp2"),
       dt_no = plan_for(L8 "parallel.engine=fsdp2 parallel.sequence_parallel=false");
  CHECK_NEAR(layer_activation_bytes(&dt_no, 0, 0).saved_bytes - layer_activation_bytes(&dt_sp, 0, 0).saved_bytes,
             176189440.0, 0, "PyTorch SP: the gathered input kept whole, only the norms shrink");
  plan mg_sp = plan_for(L8 "parallel.engine=megatron"),
       mg_no = plan_for(L8 "parallel.engine=megatron parallel.sequence_parallel=false");
  CHECK_NEAR(layer_activation_bytes(&mg_no, 0, 0).saved_bytes - layer_activation_bytes(&mg_sp, 0, 0).saved_bytes,
             117469184.0, 0, "Megatron SP: norms and the linears' sharded inputs");
  /* the recomputed layer (full recompute) rebuilds the same set: the gathered inputs in it */
  plan dt_full = plan_for(L8 "parallel.engine=fsdp2 training.recompute=full");
  CHECK_NEAR(layer_activation_bytes(&dt_full, 0, 1).recompute_bytes, layer_activation_bytes(&dt_sp, 0, 0).saved_bytes,
             0, "full recompute rebuilds the SP layer's set");
  return check_report("activations");
}
