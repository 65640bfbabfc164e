/* Per-layer kinds (model.layer_types, model.mlp_types): parameter counts exact
 * against published models, each new mixer's saved tensors by hand, the
 * checks that name the key, and pipeline stages that split unequal layers. */
#include <string.h>

#include "check.h"
#include "check_plan.h"
#include "compat.h"

static llmem_result out;

/* Qwen3-Next-80B-A3B (Qwen/Qwen3-Next-80B-A3B-Instruct config.json): 36 Gated
 * DeltaNet + 12 gated-attention layers, every one MoE (512 experts, top 10,
 * one gated shared expert) */
#define QWEN3_NEXT                                                                                                 \
  "model.layers=48 model.hidden=2048 model.heads=16 model.kv_heads=2 model.head_dim=256 model.ffn_hidden=5120 "    \
  "model.vocab=151936 model.qk_norm=head model.attn_output_gate=true model.layer_types=linear,linear,linear,full " \
  "model.linear.key_heads=16 model.linear.value_heads=32 model.linear.key_head_dim=128 "                           \
  "model.linear.value_head_dim=128 model.linear.conv_kernel=4 model.moe.experts=512 model.moe.top_k=10 "           \
  "model.moe.expert_ffn_hidden=512 model.moe.shared_experts=1 model.moe.shared_expert_ffn_hidden=512 "             \
  "model.moe.shared_expert_gate=true "

/* Nemotron-H-8B-Base-8K: hybrid_override_pattern, one mixer or one MLP per block
 * (M Mamba-2, - relu2 MLP, * attention), no RoPE, untied */
static const char *NEMOTRON_PATTERN = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-";

static void nemotron_keys(char *buf, size_t size, const char *extra) {
  char mixers[1024] = "", mlps[1024] = "";
  for (const char *c = NEMOTRON_PATTERN; *c; c++) {
    strcat(mixers, *c == 'M' ? "ssm," : *c == '*' ? "full," : "none,");
    strcat(mlps, *c == '-' ? "dense," : "none,");
  }
  mixers[strlen(mixers) - 1] = mlps[strlen(mlps) - 1] = 0;
  snprintf(buf, size,
           "model.layers=52 model.hidden=4096 model.heads=32 model.kv_heads=8 model.head_dim=128 "
           "model.ffn_hidden=21504 model.mlp=plain model.vocab=131072 model.layer_types=%s model.mlp_types=%s "
           "model.ssm.heads=128 model.ssm.head_dim=64 model.ssm.groups=8 model.ssm.state_size=128 %s",
           mixers, mlps, extra);
}

static void params(void) {
  CHECK(run_keys(QWEN3_NEXT, &out), "qwen3-next runs");
  /* 36 x (33,718,464 GDN + 1,614,809,088 MoE + 4,096 norms) + 12 x (27,263,488 gated attention + ...)
   * + final norm + embedding and lm_head 311,164,928 each */
  CHECK_NEAR(out.params_total, 79674391296.0, 0, "Qwen3-Next-80B-A3B total (HF, without MTP)");
  CHECK_NEAR(out.params_active, 3874929408.0, 0, "Qwen3-Next-80B-A3B active");
  char keys[4096];
  nemotron_keys(keys, sizeof keys, "");
  CHECK(run_keys(keys, &out), "nemotron-h runs");
  /* 24 x 109,640,064 (Mamba-2 + norm) + 24 x 176,164,864 (MLP) + 4 x 41,947,136 (attention) + 4,096 + 2 x 536,870,912 */
  CHECK_NEAR(out.params_total, 8100852736.0, 0, "Nemotron-H-8B total");
  /* Gemma 3 27B text: 52 sliding + 10 global layers, four norms a layer, head QK-norm, tied */
  CHECK(run_keys("model.layers=62 model.hidden=5376 model.heads=32 model.kv_heads=16 model.head_dim=128 "
                 "model.ffn_hidden=21504 model.vocab=262208 model.tied_embeddings=true model.norms_per_layer=4 "
                 "model.qk_norm=head model.layer_types=sliding,sliding,sliding,sliding,sliding,full "
                 "model.sliding_window=1024",
                 &out),
        "gemma 3 runs");
  CHECK_NEAR(out.params_total, 27009346304.0, 0, "Gemma 3 27B text");
}

/* Saved bytes per token of one mixer-only layer (no MLP), T = 4096 tokens, bf16,
 * flash attention; eager norms keep their fp32 input (4 B), the bf16 normed x their
 * trained weight multiplies (2 B) and rstd (4 B a token). */
static void activations(void) {
  double T = 4096;
  plan pl = plan_for(QWEN3_NEXT "model.mlp_types=none,none,none,moe parallel.gpus=1 training.seq_len=4096");
  layer_activations la = layer_activation_bytes(&pl, 0, 0);
  /* norm 6h+4 = 12,292; in_proj input 2h = 4,096; conv input 2 x 8,192 = 16,384; q, k after l2norm
   * (repeated to 32 value heads) 2 x 8,192; v 8,192; A 32 x 64 x 2 = 4,096; gated norm input and z
   * 2 x 8,192; out_proj input 8,192; fp32 a, softplus, rstd x3, g and bf16 beta 32 x 26 = 832 */
  CHECK_NEAR(la.saved_full_bytes, T * (12292 + 4096 + 16384 + 3 * 8192 + 4096 + 2 * 8192 + 8192 + 832), 0,
             "Gated DeltaNet layer (fla kernels)");
  char keys[4096];
  nemotron_keys(keys, sizeof keys, "parallel.gpus=1 training.seq_len=4096");
  pl = plan_for(keys);
  la = layer_activation_bytes(&pl, 0, 0);
  /* norm 6h+4 = 24,580; in_proj input 8,192; zxbcdt (2 x 8,192 + 2,048 + 128) x 2 = 37,120; out_x 16,384;
   * the gated norm's fp32 rstd per group 8 x 4 = 32; out_proj's input recomputed */
  CHECK_NEAR(la.saved_full_bytes, T * (24580 + 8192 + 37120 + 16384 + 32), 0, "Mamba-2 layer (fused kernel)");
  nemotron_keys(keys, sizeof keys, "parallel.gpus=1 training.seq_len=4096 parallel.engine=megatron");
  pl = plan_for(keys);
  la = layer_activation_bytes(&pl, 0, 0);
  /* Megatron: fused norms keep their bf16 input (8,196); the gated norm's input and out_proj's input on top */
  CHECK_NEAR(la.saved_full_bytes, T * (8196 + 8192 + 37120 + 16384 + 16384 + 16384 + 32), 0,
             "Mamba-2 layer (Megatron mixer)");
  la = layer_activation_bytes(&pl, 1, 0); /* "-": the relu2 MLP alone, one norm */
  double mlp_only = la.saved_full_bytes;
  CHECK_NEAR(mlp_only, T * (8196 + 8192 + 21504 * 2 * 2), 0,
             "MLP block: norm, its input, activation input + fc2 input");
}

static void errors(void) {
  llmem_input in;
  const struct {
    const char *keys;
    llmem_status status;
    const char *field;
  } bad[] = {
      {"model.layers=2 model.layer_types=full,full,full", LLMEM_ERR_PATTERN_LONG, "model.layer_types"},
      {"model.layer_types=none model.mlp_types=none", LLMEM_ERR_PATTERN_EMPTY_LAYER, "model.layer_types"},
      {"model.mlp_types=dense,moe", LLMEM_ERR_PATTERN_MOE, "model.mlp_types"},
      {"model.layer_types=sliding,full", LLMEM_ERR_SLIDING_WINDOW, "model.sliding_window"},
      {"model.layer_types=chunked,full", LLMEM_ERR_ATTENTION_CHUNK, "model.attention_chunk"},
      {"model.moe.experts=8 model.moe.dense_layers=1 model.mlp_types=dense,moe", LLMEM_ERR_PATTERN_MOE_RULE,
       "model.mlp_types"},
      {"model.layer_types=linear,full model.linear.key_heads=3", LLMEM_ERR_LINEAR_HEADS, "model.linear.value_heads"},
      {"model.layer_types=ssm,full parallel.engine=megatron parallel.gpus=16 parallel.tp=16", LLMEM_ERR_SSM_HEADS,
       "parallel.tp"},
      {"formula=megatron parallel.engine=megatron model.layer_types=full,full", LLMEM_ERR_PATTERN_FORMULA,
       "model.layer_types"},
      {"rl.algorithm=grpo model.layer_types=linear,full", LLMEM_ERR_PATTERN_RL, "model.layer_types"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    llmem_defaults(&in);
    CHECK(set_keys(&in, bad[i].keys), "keys %s", bad[i].keys);
    llmem_status st = llmem_estimate(&in, &out);
    CHECK(st == bad[i].status, "%s: status %d (%s), want %d", bad[i].keys, st, out.error_message, bad[i].status);
    CHECK(st != LLMEM_OK && strcmp(out.error_path, bad[i].field) == 0, "%s: names %s, want %s", bad[i].keys,
          out.error_path, bad[i].field);
  }
  /* a gap inside a list */
  llmem_defaults(&in);
  in.layer_types[0] = LLMEM_MIXER_FULL, in.layer_types[2] = LLMEM_MIXER_FULL;
  CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_LIST_GAP, "a null between entries");
}

/* Pipeline stages of a hybrid model: each stage counts its own kinds; the stages sum to the model. */
static void stages(void) {
  char keys[4096];
  nemotron_keys(keys, sizeof keys, "parallel.engine=megatron parallel.gpus=4 parallel.pp=4 training.grad_accum=8");
  CHECK(run_keys(keys, &out), "nemotron-h pp4 runs");
  double sum = 0;
  for (int s = 0; s < out.rank_count; s++) sum += out.ranks[s].params_count;
  CHECK_NEAR(sum, out.params_total, 0, "stages sum to the model");
  CHECK(out.ranks[0].params_count != out.ranks[1].params_count, "stages differ with their layer kinds");
  /* "why this number": a stage of several kinds gives its mean layer's saved bytes */
  nemotron_keys(keys, sizeof keys, "parallel.gpus=1");
  CHECK(run_keys(keys, &out), "nemotron-h one stage");
  plan pl = plan_for(keys);
  double mean = 0;
  for (int i = 0; i < 52; i++) mean += layer_activation_bytes(&pl, i, 0).saved_bytes;
  mean /= 52;
  int found = 0;
  for (int t = 0; t < out.term_count; t++)
    if (out.terms[t].id == LLMEM_TERM_ACTIVATIONS) {
      found = 1;
      CHECK_NEAR(out.terms[t].inputs[0], mean, 1e-15, "mean layer");
    }
  CHECK(found, "an activations term");
  /* the uniform list equals no list */
  llmem_result plain;
  CHECK(run_keys("model.layers=8", &plain), "plain");
  CHECK(run_keys("model.layers=8 model.layer_types=full model.mlp_types=dense", &out), "uniform lists");
  CHECK_NEAR(out.per_gpu.peak_allocated_bytes, plain.per_gpu.peak_allocated_bytes, 0,
             "[full] x [dense] = the default layer");
  /* flash attention over a 1,024-token window takes less time than over 8,192 */
  llmem_input in;
  llmem_defaults(&in);
  CHECK(set_keys(&in, "training.seq_len=8192"), "keys");
  llmem_step_result full, windowed;
  CHECK(llmem_step_time(&in, &full) == LLMEM_OK, "step time");
  CHECK(set_keys(&in, "model.layer_types=sliding model.sliding_window=1024"), "keys");
  CHECK(llmem_step_time(&in, &windowed) == LLMEM_OK && windowed.step_seconds < full.step_seconds,
        "a sliding window shortens the attention");
}

/* MTP modules (Megatron-LM multi_token_prediction.py): parameters and what each depth keeps. */
static void mtp(void) {
  CHECK(run_keys(QWEN3_NEXT "model.mtp_layers=1 parallel.engine=megatron", &out), "qwen3-next with MTP");
  /* + fc 2,048 x 4,096, three norms, one gated-attention MoE layer (1,642,076,672): the checkpoint's
   * 81,324,862,720 (model.safetensors.index.json total_size / 2) */
  CHECK_NEAR(out.params_total, 81324862720.0, 0, "Qwen3-Next-80B-A3B with its MTP module");
  /* DeepSeek-V3: 671,026,419,200 (README_WEIGHTS: 671B main) + one MTP module of the last (MoE) layer's
   * kind, eh_proj 2 x 7,168^2 and three norms: 11,610,068,224 unique ("11.5B unique" beside the
   * shared 0.9B embedding and 0.9B head) */
  CHECK(run_keys("model.layers=61 model.hidden=7168 model.heads=128 model.kv_heads=128 model.head_dim=128 "
                 "model.ffn_hidden=18432 model.vocab=129280 model.moe.experts=256 model.moe.top_k=8 "
                 "model.moe.expert_ffn_hidden=2048 model.moe.shared_experts=1 model.moe.shared_expert_ffn_hidden=2048 "
                 "model.moe.dense_layers=3 model.moe.router_bias=true model.mla.q_lora_rank=1536 "
                 "model.mla.kv_lora_rank=512 model.mla.qk_nope_head_dim=128 model.mla.qk_rope_head_dim=64 "
                 "model.mla.v_head_dim=128 parallel.engine=megatron model.mtp_layers=1",
                 &out),
        "deepseek-v3 with MTP");
  CHECK_NEAR(out.params_total, 671026419200.0 + 11610068224.0, 0, "DeepSeek-V3 with its MTP module");
  /* a small dense model, one micro-batch, the peak at the loss: each depth keeps another loss's
   * tensors and a layer's with its enorm / hnorm inputs, concat, final-norm input, hidden slice, ids */
  const char *base =
      "model.layers=4 model.hidden=1024 model.heads=8 model.ffn_hidden=4096 model.vocab=32000 "
      "parallel.engine=megatron parallel.sequence_parallel=false training.seq_len=2048 ";
  llmem_result none;
  char keys[1024];
  CHECK(run_keys(base, &none), "no MTP");
  snprintf(keys, sizeof keys, "%s model.mtp_layers=2", base);
  CHECK(run_keys(keys, &out), "two MTP depths");
  plan pl = plan_for(base);
  layer_activations la = layer_activation_bytes(&pl, 3, 0);
  double T = 2048, extras = 6 * T * 1024 * 2 + 3 * T * 4 + 8 * T;
  CHECK(out.per_gpu.peak_phase == none.per_gpu.peak_phase, "the same peak phase");
  /* Megatron's cross-entropy keeps an fp32 softmax: 4 x 2,048 x 32,000 per depth */
  CHECK_NEAR(out.per_gpu.breakdown_bytes[LLMEM_CAT_LOGITS] - none.per_gpu.breakdown_bytes[LLMEM_CAT_LOGITS],
             2 * loss_bytes(&pl).saved_bytes, 0, "two more losses' tensors");
  CHECK_NEAR(loss_bytes(&pl).saved_bytes, 4 * T * 32000, 0, "fp32 softmax");
  CHECK_NEAR(out.per_gpu.breakdown_bytes[LLMEM_CAT_ACTIVATIONS] - none.per_gpu.breakdown_bytes[LLMEM_CAT_ACTIVATIONS],
             2 * (la.saved_bytes + extras), 1e-12, "two depths' layer and extras");
}

/* Vision towers: each family's tower and projector against its published total. */
#define GEMMA3_27B                                                                                                \
  "model.layers=62 model.hidden=5376 model.heads=32 model.kv_heads=16 model.head_dim=128 model.ffn_hidden=21504 " \
  "model.vocab=262208 model.tied_embeddings=true model.norms_per_layer=4 model.qk_norm=head "
#define SIGLIP_896                                                                                  \
  "model.vision.kind=siglip model.vision.layers=27 model.vision.hidden=1152 model.vision.heads=16 " \
  "model.vision.ffn_hidden=4304 model.vision.patch_size=14 model.vision.image_size=896 "
static void vision(void) {
  /* Gemma 3 27B: text 27,009,346,304 + SigLIP 416,866,032 + projector 6,194,304 (HF safetensors) */
  CHECK(run_keys(GEMMA3_27B SIGLIP_896, &out), "gemma 3 27b with vision");
  CHECK_NEAR(out.params_total, 27432406640.0, 0, "Gemma 3 27B with its vision tower");
  /* Qwen2.5-VL-7B: Qwen2.5-7B text 7,615,616,512 + vision 676,550,144 = 8,292,166,656 */
  CHECK(run_keys("model.layers=28 model.hidden=3584 model.heads=28 model.kv_heads=4 model.ffn_hidden=18944 "
                 "model.vocab=152064 model.qkv_bias=true model.vision.kind=qwen2_5_vl model.vision.layers=32 "
                 "model.vision.hidden=1280 model.vision.heads=16 model.vision.ffn_hidden=3420 "
                 "model.vision.patch_size=14 model.vision.image_size=448",
                 &out),
        "qwen2.5-vl");
  CHECK_NEAR(out.params_total, 8292166656.0, 0, "Qwen2.5-VL-7B");
  /* LLaVA-1.5-7B: Llama 2 7B (vocab 32,000) + CLIP ViT-L/14-336 303,507,456 + projector 20,979,712 */
  CHECK(run_keys("model.layers=32 model.hidden=4096 model.heads=32 model.ffn_hidden=11008 model.vocab=32000 "
                 "model.vision.kind=clip model.vision.layers=24 model.vision.hidden=1024 model.vision.heads=16 "
                 "model.vision.ffn_hidden=4096 model.vision.patch_size=14 model.vision.image_size=336",
                 &out),
        "llava");
  CHECK_NEAR(out.params_total, 7062902784.0, 0, "LLaVA-1.5-7B");
  /* its CLIP tower trained: QuickGELU (CLIPVisionConfig's hidden_act) keeps the sigmoid's output too, 16d + 6I
   * per token and layer = 40,960 B over 577 tokens (a class token) and 24 layers, plus the projector's input
   * and inner tensors (577 x d, and 576 x (d + T)) */
  plan llava = plan_for(
      "model.layers=32 model.hidden=4096 model.heads=32 model.ffn_hidden=11008 model.vocab=32000 "
      "model.vision.kind=clip model.vision.layers=24 model.vision.hidden=1024 model.vision.heads=16 "
      "model.vision.ffn_hidden=4096 model.vision.patch_size=14 model.vision.image_size=336 "
      "parallel.gpus=1");
  vision_cost lv = vision_of(&llava);
  CHECK_NEAR(lv.saved_bytes, 577.0 * 40960 * 24 + 577.0 * 1024 * 2 + 576.0 * (1024 + 4096) * 2, 0,
             "LLaVA's trained CLIP tower");
  /* Qwen2-VL-7B: Qwen2.5-7B-shaped text 7,615,616,512 + tower 631,183,360 (bias-free Conv3d 1,505,280 and 32
   * LayerNorm / QuickGELU blocks of 19,677,440) + PatchMerger 44,575,744 = 8,291,375,616 (HF safetensors) */
#define QWEN2_VL_7B                                                                                         \
  "model.layers=28 model.hidden=3584 model.heads=28 model.kv_heads=4 model.ffn_hidden=18944 "               \
  "model.vocab=152064 model.qkv_bias=true model.vision.kind=qwen2_vl model.vision.layers=32 "               \
  "model.vision.hidden=1280 model.vision.heads=16 model.vision.ffn_hidden=5120 model.vision.patch_size=14 " \
  "model.vision.image_size=448 "
  CHECK(run_keys(QWEN2_VL_7B, &out), "qwen2-vl");
  CHECK_NEAR(out.params_total, 8291375616.0, 0, "Qwen2-VL-7B");
  /* trained, one 448 px image (1,024 patches, 256 language-model tokens), flash, bf16: per token and layer
   * 16d + 4I + 2I for QuickGELU's kept sigmoid output = 51,200 B over 32 layers; the merger keeps its input
   * (1,024 x d) and, per language-model token, m^2 d and T */
  plan q2 = plan_for(QWEN2_VL_7B "parallel.gpus=1");
  vision_cost q2v = vision_of(&q2);
  CHECK_NEAR(q2v.saved_bytes, 1024.0 * 51200 * 32 + 1024.0 * 1280 * 2 + 256.0 * (4 * 1280 + 3584) * 2, 0,
             "Qwen2-VL trained tower and merger");
  /* SmolVLM-256M (smolvlm: Idefics3's design): a 30-layer Llama-shaped text model of 162,974,016 (hidden 576,
   * untied vocab 49,280), a SigLIP tower of 86,433,024 (Conv2d 16 px with bias, 1,024 learned positions, 12
   * layers of 7,087,872, post_layernorm) and the connector's Linear(16 x 768, 576) without bias, 7,077,888:
   * 256,484,928 */
  CHECK(run_keys("model.layers=30 model.hidden=576 model.heads=9 model.kv_heads=3 model.head_dim=64 "
                 "model.ffn_hidden=1536 model.vocab=49280 model.vision.kind=idefics3 model.vision.layers=12 "
                 "model.vision.hidden=768 model.vision.heads=12 model.vision.ffn_hidden=3072 "
                 "model.vision.patch_size=16 model.vision.image_size=512 model.vision.merge=4",
                 &out),
        "smolvlm");
  CHECK_NEAR(out.params_total, 256484928.0, 0, "SmolVLM-256M");
  /* PaliGemma 3B (224 px): Gemma 2B (vocab 257,216, tied) 2,508,662,784 + SigLIP-so400m 412,442,352 + a biased
   * Linear(1152, 2048) 2,361,344 = 2,923,466,480 */
  CHECK(run_keys("model.layers=18 model.hidden=2048 model.heads=8 model.kv_heads=1 model.head_dim=256 "
                 "model.ffn_hidden=16384 model.vocab=257216 model.tied_embeddings=true model.vision.kind=paligemma "
                 "model.vision.layers=27 model.vision.hidden=1152 model.vision.heads=16 model.vision.ffn_hidden=4304 "
                 "model.vision.patch_size=14 model.vision.image_size=224",
                 &out),
        "paligemma");
  CHECK_NEAR(out.params_total, 2923466480.0, 0, "PaliGemma 3B");
  /* LLaVA-OneVision 0.5B: Qwen2-0.5B (vocab 152,000, tied) 494,090,112 + SigLIP-so400m at 384 px (27 x 27 patches,
   * 26 layers) 397,747,744 + Linear(1152, 896), GELU, Linear(896, 896) and the image_newline 896: 1,837,696 */
  CHECK(run_keys("model.layers=24 model.hidden=896 model.heads=14 model.kv_heads=2 model.ffn_hidden=4864 "
                 "model.vocab=152000 model.tied_embeddings=true model.qkv_bias=true model.vision.kind=llava_onevision "
                 "model.vision.layers=26 model.vision.hidden=1152 model.vision.heads=16 model.vision.ffn_hidden=4304 "
                 "model.vision.patch_size=14 model.vision.image_size=378",
                 &out),
        "llava-onevision");
  CHECK_NEAR(out.params_total, 893675552.0, 0, "LLaVA-OneVision 0.5B");
  /* Llama 4 Scout: text 107,769,861,120 + vision 850,960,896 + projector 20,971,520 */
  CHECK(run_keys("model.layers=48 model.hidden=5120 model.heads=40 model.kv_heads=8 model.head_dim=128 "
                 "model.ffn_hidden=16384 model.vocab=202048 model.moe.experts=16 model.moe.top_k=1 "
                 "model.moe.expert_ffn_hidden=8192 model.moe.shared_experts=1 model.moe.shared_expert_ffn_hidden=8192 "
                 "model.layer_types=chunked,chunked,chunked,full model.attention_chunk=8192 "
                 "model.vision.kind=llama4 model.vision.layers=34 model.vision.hidden=1408 model.vision.heads=16 "
                 "model.vision.ffn_hidden=5632 model.vision.patch_size=14 model.vision.image_size=336",
                 &out),
        "llama 4 scout");
  CHECK_NEAR(out.params_total, 108641793536.0, 0, "Llama 4 Scout with its vision tower");

  /* Qwen3.5's Qwen3-VL-style tower: biased Conv3d, 2,304 learned positions, 27 SigLIP-shaped blocks, a
   * LayerNorm patch merger to 5,120: 460,730,096 (the HF total less the decoder and the MTP module) */
  plan q = plan_for(
      "model.hidden=5120 model.heads=24 model.kv_heads=4 model.head_dim=256 model.vision.kind=qwen3_vl "
      "model.vision.layers=27 model.vision.hidden=1152 model.vision.heads=16 model.vision.ffn_hidden=4304 "
      "model.vision.patch_size=16 model.vision.image_size=448 model.vision.positions=2304");
  vision_cost qv = vision_of(&q);
  CHECK_NEAR(qv.tower_params + qv.projector_params, 460730096.0, 0, "Qwen3.5 vision tower");
  /* Qwen3-VL-8B: the same tower shape (to 4,096) with three deepstack mergers (deepstack_visual_indexes
   * [8, 16, 24]), each LayerNorm(4d) + Linear(4d, 4d) + Linear(4d, T), biased: 40,125,952 each; tower
   * 415,891,440 + merger 40,119,040 + 120,377,856 = 576,388,336; with the Qwen3-8B-shaped decoder
   * (untied, vocab 151,936) the HF safetensors total 8,767,123,696 */
#define QWEN3_VL_8B                                                                                              \
  "model.layers=36 model.hidden=4096 model.heads=32 model.kv_heads=8 model.head_dim=128 model.ffn_hidden=12288 " \
  "model.vocab=151936 model.qk_norm=head model.vision.kind=qwen3_vl model.vision.layers=27 "                     \
  "model.vision.hidden=1152 model.vision.heads=16 model.vision.ffn_hidden=4304 model.vision.patch_size=16 "      \
  "model.vision.image_size=448 model.vision.positions=2304 "
  q = plan_for(QWEN3_VL_8B "model.vision.deepstack=3");
  qv = vision_of(&q);
  CHECK_NEAR(qv.tower_params, 415891440.0, 0, "Qwen3-VL-8B tower");
  CHECK_NEAR(qv.projector_params, 40119040.0 + 3 * 40125952.0, 0, "Qwen3-VL-8B merger and three deepstack mergers");
  CHECK(run_keys(QWEN3_VL_8B "model.vision.deepstack=3", &out), "qwen3-vl-8b");
  CHECK_NEAR(out.params_total, 8767123696.0, 0, "Qwen3-VL-8B (HF safetensors total)");
  /* trained, one 448 px image (784 patches, 196 language-model tokens), bf16: each deepstack merger keeps
   * four m^2 d-wide tensors per language-model token */
  plan q0 = plan_for(QWEN3_VL_8B "parallel.gpus=1");
  vision_cost qv0 = vision_of(&q0);
  q = plan_for(QWEN3_VL_8B "parallel.gpus=1 model.vision.deepstack=3");
  qv = vision_of(&q);
  CHECK_NEAR(qv.saved_bytes - qv0.saved_bytes, 3 * 196.0 * 4 * 4608 * 2, 0, "deepstack mergers' saved bytes");
  /* a trained SigLIP tower, one 896 px image, flash, bf16: per token and layer 16d + 4I = 35,648 B over
   * 4,096 patches and 27 layers; the projector keeps its input (4,096 x d) and, per language-model
   * token (256), the pooled m^2 d and the T-wide output */
  plan pl = plan_for(GEMMA3_27B SIGLIP_896 "parallel.gpus=1");
  vision_cost v = vision_of(&pl);
  CHECK_NEAR(v.vit_tokens, 4096, 0, "patches");
  CHECK_NEAR(v.lm_tokens, 256, 0, "language-model tokens per image (4 x 4 pooling)");
  CHECK_NEAR(v.saved_bytes, 4096.0 * 35648 * 27 + 4096.0 * 1152 * 2 + 256.0 * (16 * 1152 + 5376) * 2, 0,
             "trained tower and projector");
  pl = plan_for(GEMMA3_27B SIGLIP_896 "parallel.gpus=1 model.vision.train=none");
  v = vision_of(&pl);
  CHECK_NEAR(v.saved_bytes, 0, 0, "a frozen tower and projector keep nothing (no input needs a gradient)");
  CHECK(run_keys(GEMMA3_27B SIGLIP_896 "model.vision.train=none", &out), "frozen tower");
  CHECK_NEAR(out.params_total - out.params_trainable, 416866032.0 + 6194304.0, 0, "frozen: not trainable");
  llmem_result trained;
  CHECK(run_keys(GEMMA3_27B SIGLIP_896 "model.vision.train=full", &trained), "trained tower");
  CHECK(trained.per_gpu.breakdown_bytes[LLMEM_CAT_OPTIMIZER_STATES] >
            out.per_gpu.breakdown_bytes[LLMEM_CAT_OPTIMIZER_STATES],
        "a trained tower has optimizer states");
}

/* Encoder-decoder (T5): t5-3b's 24 + 24 layers, ReLU MLP, tied shared embedding, 32 relative buckets. */
#define T5_3B                                                                                    \
  "model.encoder_layers=24 model.layers=24 model.hidden=1024 model.heads=32 model.head_dim=128 " \
  "model.ffn_hidden=16384 model.mlp=plain model.vocab=32128 model.tied_embeddings=true "         \
  "model.relative_attention_buckets=32 "
static void encoder_decoder(void) {
  /* 24 x 50,333,696 (attention, MLP, 2 norms) + 24 x 67,111,936 (+ cross-attention and its norm)
   * + 32,899,072 shared embedding + 2 final norms + 2 x 32 x 32 relative biases */
  CHECK(run_keys(T5_3B, &out), "t5-3b");
  CHECK_NEAR(out.params_total, 2851598336.0, 0, "T5-3B (HF t5-3b)");
  /* the DeepSpeed estimator of the docs' example (E4: 1 node x 8 GPUs), fed T5-3B's own counts:
   * 2,851,598,336 parameters, the largest module the 32,128 x 1,024 embedding */
  CHECK(run_keys(T5_3B "formula=deepspeed parallel.engine=deepspeed parallel.zero_stage=3 parallel.gpus=8", &out),
        "t5-3b deepspeed");
  double gpu = 0, cpu = 0;
  deepspeed_zero3(2851598336.0, 32899072.0, 8, 1, 0, 0, 1, &gpu, &cpu);
  CHECK_NEAR(out.per_gpu.device_used_bytes, gpu, 0, "ZeRO-3 estimator on T5-3B");
  /* an encoder layer is a decoder-only layer over the source tokens; a decoder layer adds cross-attention:
   * the eager norm under autocast 8h + 4 (its fp32 input and normed output, rstd), q's input 2h, q 2 x 4,096 and the output projection's input 2 x 4,096 per target token,
   * k and v 2 x 4,096 each per source token, fp32 LSE 4 x 32 (T = 512 target, S = 1,024 source) */
  plan enc = plan_for(T5_3B "training.seq_len=512 training.source_len=1024 parallel.gpus=1 parallel.engine=single");
  plan plain = plan_for(
      "model.layers=24 model.hidden=1024 model.heads=32 model.head_dim=128 model.ffn_hidden=16384 "
      "model.mlp=plain model.vocab=32128 training.seq_len=1024 parallel.gpus=1 parallel.engine=single");
  CHECK_NEAR(layer_activation_bytes(&enc, 0, 0).saved_full_bytes, layer_activation_bytes(&plain, 0, 0).saved_full_bytes,
             0, "encoder layer = the same layer over the source");
  plan dec = plan_for(
      "model.layers=24 model.hidden=1024 model.heads=32 model.head_dim=128 model.ffn_hidden=16384 "
      "model.mlp=plain model.vocab=32128 training.seq_len=512 parallel.gpus=1 parallel.engine=single");
  double T = 512, S = 1024,
         cross = T * (8 * 1024 + 4) + T * 2 * 1024 + T * 2 * 4096 + 2 * S * 2 * 4096 + T * 2 * 4096 + T * 32 * 4;
  CHECK_NEAR(layer_activation_bytes(&enc, 30, 0).saved_full_bytes,
             layer_activation_bytes(&dec, 6, 0).saved_full_bytes + cross, 0, "decoder layer + cross-attention");
  llmem_input in;
  llmem_defaults(&in);
  CHECK(set_keys(&in, T5_3B "parallel.engine=megatron parallel.gpus=2 parallel.pp=2"), "keys");
  CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_ENCODER_SETUP, "no pipeline for an encoder-decoder");
  llmem_defaults(&in);
  CHECK(set_keys(&in, "model.layer_types=encoder,full"), "keys");
  CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_ENCODER_LIST, "encoder is not a layer_types entry");
}

int main(void) {
  params();
  encoder_decoder();
  vision();
  mtp();
  activations();
  errors();
  stages();
  return check_report("layer_kinds");
}
