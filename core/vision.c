/* Vision towers (model.vision): the ViT encoder and the projector that
 * feeds its tokens to the language model, on the first pipeline stage
 * (docs/memory-model.md §15.4). Parameter counts follow each family's
 * transformers modeling file; C = 3 channels, n = (image / patch)^2 patches,
 * d the tower's width, I its MLP width, T the text hidden size, m the
 * spatial merge (m^2 patches become one language-model token). */
#include "internal.h"

#define CHANNELS 3.0

/* SigLIP / CLIP / Llama 4 / InternViT layers: two LayerNorms, biased q, k, v,
 * o and fc1, fc2 (transformers siglip/modeling_siglip.py SiglipEncoderLayer) */
static double layernorm_gelu_layer(double d, double ffn) { return 4 * d * d + 2 * d * ffn + ffn + 9 * d; }

/* A patch merger: LayerNorm(d), Linear(m2 d, m2 d), Linear(m2 d, T), biased (Qwen2-VL PatchMerger,
 * Qwen3-VL / Qwen3.5's merger) */
static double patch_merger(double d, double m2, double T) { return 2 * d + m2 * d * (m2 * d + 1) + m2 * d * T + T; }

/* Towers whose MLP activation is QuickGELU, x * sigmoid(1.702 x) as three autograd ops (transformers
 * activations.py QuickGELUActivation): the sigmoid's output is kept too, one more I-wide tensor. CLIP's
 * default hidden_act (clip/configuration_clip.py, LLaVA's clip-vit-large-patch14-336) and Qwen2-VL's. */
static int quick_gelu(int kind) { return kind == LLMEM_VISION_CLIP || kind == LLMEM_VISION_QWEN2_VL; }

/* Qwen2.5-VL blocks: two RMSNorms, fused qkv and proj with biases, a SwiGLU
 * with biases (qwen2_5_vl/modeling_qwen2_5_vl.py Qwen2_5_VLVisionBlock) */
static double rmsnorm_swiglu_layer(double d, double ffn) { return 4 * d * d + 3 * d * ffn + 2 * ffn + 7 * d; }

double vision_default_merge(int kind) {
  switch (kind) {
    case LLMEM_VISION_SIGLIP: return 4; /* Gemma3MultiModalProjector: 4 x 4 average pooling, 4096 -> 256 */
    case LLMEM_VISION_CLIP:             /* LLaVA, PaliGemma, LLaVA-OneVision: every patch (of every tile) a token */
    case LLMEM_VISION_PALIGEMMA:
    case LLMEM_VISION_LLAVA_ONEVISION: return 1;
    default: return 2; /* Qwen2.5-VL PatchMerger, Llama 4 / InternVL pixel shuffle 0.5, Pixtral patch merger */
  }
}

static int has_class_token(int kind) {
  return kind == LLMEM_VISION_CLIP || kind == LLMEM_VISION_LLAMA4 || kind == LLMEM_VISION_INTERNVIT;
}

/* Tower parameters (whole model, no TP split). */
static double tower_params(const plan *pl, double n, double m2) {
  double d = pl->in->vision_hidden, ffn = pl->in->vision_ffn_hidden, L = pl->in->vision_layers,
         p2 = pl->in->vision_patch_size * pl->in->vision_patch_size;
  switch ((int)pl->in->vision_kind) {
    case LLMEM_VISION_SIGLIP:          /* Conv2d with bias, learned positions, post_layernorm */
    case LLMEM_VISION_PALIGEMMA:       /* PaliGemma's and LLaVA-OneVision's SiglipVisionModel (vision_use_head */
    case LLMEM_VISION_LLAVA_ONEVISION: /* false: no attention-pooling head) */
    case LLMEM_VISION_IDEFICS3: /* Idefics3 / SmolVLM's SigLIP (idefics3/modeling_idefics3.py Idefics3VisionTransformer,
                                 * smolvlm/modeling_smolvlm.py SmolVLMVisionTransformer): the same */
      return CHANNELS * p2 * d + d + n * d + L * layernorm_gelu_layer(d, ffn) + 2 * d;
    case LLMEM_VISION_CLIP: /* class embedding, Conv2d without bias, n + 1 positions, pre and post LayerNorm */
      return d + CHANNELS * p2 * d + (n + 1) * d + 4 * d + L * layernorm_gelu_layer(d, ffn);
    case LLMEM_VISION_QWEN2_5_VL: /* Conv3d over 2 frames without bias, 2-D RoPE, no final norm */
      return CHANNELS * 2 * p2 * d + L * rmsnorm_swiglu_layer(d, ffn);
    case LLMEM_VISION_LLAMA4: { /* Llama4VisionModel: unfold + Linear, class token, n + 1 positions,
                                 * pre / post LayerNorm, then pixel shuffle and the adapter MLP (fc1, fc2) */
      double P = pl->vision_projector;
      return CHANNELS * p2 * d + d + (n + 1) * d + 4 * d + L * layernorm_gelu_layer(d, ffn) + m2 * d * P + P * P;
    }
    case LLMEM_VISION_PIXTRAL: /* Conv2d without bias, ln_pre RMSNorm, bias-free attention and SwiGLU */
      return CHANNELS * p2 * d + d + L * (4 * d * d + 3 * d * ffn + 2 * d);
    case LLMEM_VISION_QWEN3_VL: { /* Qwen3-VL / Qwen3.5 (transformers qwen3_5/modeling_qwen3_5.py
                                   * Qwen3_5VisionModel): Conv3d over 2 frames with bias, a learned table of
                                   * num_position_embeddings rows, SigLIP-shaped blocks, no final norm */
      double P = isnan(pl->in->vision_positions) ? n : pl->in->vision_positions;
      return CHANNELS * 2 * p2 * d + d + P * d + L * layernorm_gelu_layer(d, ffn);
    }
    case LLMEM_VISION_QWEN2_VL: /* Qwen2-VL (qwen2_vl/modeling_qwen2_vl.py Qwen2VisionTransformerPretrainedModel):
                                 * Conv3d over 2 frames without bias, 2-D RoPE, LayerNorm / QuickGELU blocks with
                                 * biased qkv, proj, fc1, fc2 (embed_dim d, mlp_ratio d = I), no final norm */
      return CHANNELS * 2 * p2 * d + L * layernorm_gelu_layer(d, ffn);
    default: /* InternViT: Conv2d with bias, class token, n + 1 positions, layer scale (2d) per layer */
      return CHANNELS * p2 * d + d + d + (n + 1) * d + L * (layernorm_gelu_layer(d, ffn) + 2 * d);
  }
}

/* Projector parameters: from the tower's tokens (m^2 of them merged) to the text width T. */
static double projector_params(const plan *pl, double m2) {
  double d = pl->in->vision_hidden, T = pl->in->hidden;
  switch ((int)pl->in->vision_kind) {
    case LLMEM_VISION_SIGLIP: return d * T + d;           /* mm_input_projection_weight, mm_soft_emb_norm */
    case LLMEM_VISION_CLIP: return d * T + T + T * T + T; /* LlavaMultiModalProjector: two biased Linears */
    case LLMEM_VISION_QWEN2_5_VL: /* Qwen2_5_VLPatchMerger: RMSNorm(d), Linear(m2 d, m2 d), Linear(m2 d, T) */
      return d + m2 * d * m2 * d + m2 * d + m2 * d * T + T;
    case LLMEM_VISION_LLAMA4: return pl->vision_projector * T; /* Llama4MultiModalProjector, no bias */
    case LLMEM_VISION_PIXTRAL: /* Mistral3MultiModalProjector: RMSNorm, patch merger, two Linears (no bias) */
      return d + m2 * d * d + d * T + T * T;
    case LLMEM_VISION_QWEN3_VL: /* the patch merger: LayerNorm(d), Linear(m2 d, m2 d), Linear(m2 d, T), biased;
                                 * Qwen3-VL's deepstack mergers (qwen3_vl/modeling_qwen3_vl.py deepstack_merger_list,
                                 * use_postshuffle_norm): the same with a LayerNorm over m2 d, one per
                                 * deepstack_visual_indexes entry; their outputs are added to the hidden states
                                 * of the first language-model layers (no parameters) */
      return patch_merger(d, m2, T) + pl->in->vision_deepstack * (2 * m2 * d + m2 * d * (m2 * d + 1) + m2 * d * T + T);
    case LLMEM_VISION_QWEN2_VL:
      return patch_merger(d, m2, T); /* PatchMerger(dim T, context_dim d) */
    /* Idefics3Connector / SmolVLMConnector: pixel shuffle (scale_factor m), then Idefics3SimpleMLP's one
     * Linear(m2 d, T) without bias */
    case LLMEM_VISION_IDEFICS3: return m2 * d * T;
    /* PaliGemmaMultiModalProjector: one biased Linear(d, projection_dim), projection_dim the text width */
    case LLMEM_VISION_PALIGEMMA: return d * T + T;
    /* LlavaOnevisionMultiModalProjector: Linear(d, T), GELU, Linear(T, T), biased; and the image_newline
     * parameter (T) appended after each row of tile features (llava_onevision/modeling_llava_onevision.py) */
    case LLMEM_VISION_LLAVA_ONEVISION: return d * T + T + T * T + T + T;
    default: return 2 * m2 * d + m2 * d * T + T + T * T + T; /* InternVL mlp1: LayerNorm, two biased Linears */
  }
}

/* Saved bytes per tower token and layer of a trained tower (bf16 figures scaled
 * by the activation width): LayerNorm/GELU towers keep both norms' inputs, the
 * shared q/k/v input, q, k, v, the attention output, fc1's input, GELU's input
 * and fc2's input, 16d + 4I bytes (QuickGELU's sigmoid output 2I more); RMSNorm/SwiGLU towers keep each norm's fp32
 * input and bf16 output and four I-wide tensors, 24d + 8I. Eager attention adds
 * its fp32 softmax and bf16 copy over the keys it attends. */
static double layer_saved_per_token(const plan *pl, double keys) {
  double d = pl->in->vision_hidden, ffn = pl->in->vision_ffn_hidden, half = pl->act_bytes / 2;
  int swiglu = (int)pl->in->vision_kind == LLMEM_VISION_QWEN2_5_VL || (int)pl->in->vision_kind == LLMEM_VISION_PIXTRAL;
  double bytes = (swiglu ? 24 * d + 8 * ffn : 16 * d + 4 * ffn) * half;
  if ((int)pl->in->vision_kind == LLMEM_VISION_INTERNVIT) bytes += 4 * d * half; /* the layer scales' inputs */
  if (quick_gelu((int)pl->in->vision_kind)) bytes += 2 * ffn * half;             /* the sigmoid's output */
  if ((int)pl->in->attention == LLMEM_ATTN_EAGER || (int)pl->in->attention == LLMEM_ATTN_SDPA_MATH)
    bytes += pl->in->vision_heads * keys * (4 + pl->act_bytes);
  return bytes;
}

vision_cost vision_of(const plan *pl) {
  vision_cost v = {0};
  if (pl->in->vision_layers <= 0) return v;
  double n =
      (pl->in->vision_image_size / pl->in->vision_patch_size) * (pl->in->vision_image_size / pl->in->vision_patch_size);
  double m = pl->vision_merge, m2 = m * m;
  v.tower_params = tower_params(pl, n, m2);
  v.projector_params = projector_params(pl, m2);
  v.vit_tokens = n + (has_class_token((int)pl->in->vision_kind) ? 1 : 0);
  v.lm_tokens = n / m2;
  int lora = (int)pl->in->ft_method != LLMEM_FT_FULL; /* adapters train; the tower is part of the frozen base */
  v.frozen_params = lora ? 0
                         : ((int)pl->in->vision_train == LLMEM_VISION_TRAIN_FULL ? 0 : v.tower_params) +
                               ((int)pl->in->vision_train == LLMEM_VISION_TRAIN_NONE ? v.projector_params : 0);
  /* per micro-batch: every image of every sample through the tower */
  double images = pl->in->vision_images * pl->in->micro_batch, d = pl->in->vision_hidden, ab = pl->act_bytes;
  double tokens = images * v.vit_tokens, lm = images * v.lm_tokens;
  /* Qwen2.5-VL attends within 64-patch windows (all but fullatt_block_indexes) */
  double keys = (int)pl->in->vision_kind == LLMEM_VISION_QWEN2_5_VL ? 64 : v.vit_tokens;
  int tower_trains = !lora && (int)pl->in->vision_train == LLMEM_VISION_TRAIN_FULL;
  int projector_trains = !lora && (int)pl->in->vision_train != LLMEM_VISION_TRAIN_NONE;
  /* a frozen tower whose input needs no gradient keeps nothing (autograd records no graph) */
  if (tower_trains) {
    /* transformers' gradient_checkpointing_enable checkpoints the vision blocks too: their inputs stay */
    double per_layer = (int)pl->in->recompute == LLMEM_RECOMPUTE_FULL ? d * ab : layer_saved_per_token(pl, keys);
    v.saved_bytes = tokens * per_layer * pl->in->vision_layers;
  }
  if (projector_trains)
    v.saved_bytes += tokens * d * ab + lm * (m2 * d + pl->in->hidden) * ab; /* its input and inner */
  /* each trained deepstack merger keeps its LayerNorm's m2 d input, fc1's input and GELU's input (m2 d each)
   * and fc2's input, per language-model token; its tower-layer input is a block output already kept
   * (a few MB an image against the tower's hundreds) */
  if (projector_trains && (int)pl->in->vision_kind == LLMEM_VISION_QWEN3_VL)
    v.saved_bytes += pl->in->vision_deepstack * lm * 4 * m2 * d * ab;
  double layer_work = tokens * (3 * d + pl->in->vision_ffn_hidden) * ab; /* q, k, v and the MLP's inner tensor */
  v.trains = projector_trains; /* something in the tower or projector needs a backward */
  v.forward_temp_bytes = layer_work;
  v.backward_temp_bytes = tower_trains
                              ? 2 * layer_work + ((int)pl->in->recompute == LLMEM_RECOMPUTE_FULL ? layer_work : 0)
                              : (projector_trains ? lm * m2 * d * ab : 0);
  v.tokens_per_microbatch = tokens;
  return v;
}
