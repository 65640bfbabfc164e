/* From the flat input to a resolved plan: field checks against the table,
 * nulls replaced by their automatic values, combination checks. */
#include <math.h>

#include "internal.h"


double dtype_bytes(int dtype) {
  switch (dtype) {
    case LLMEM_DTYPE_FP32: return 4;
    case LLMEM_DTYPE_FP16:
    case LLMEM_DTYPE_BF16: return 2;
    case LLMEM_DTYPE_FP8: return 1;
    default: return 4;
  }
}

static llmem_status check_field(const llmem_field *f, double v) {
  int months = f->kind == LLMEM_KIND_TEXT && (f->flags & LLMEM_FLAG_MONTHS);
  if ((f->kind == LLMEM_KIND_TEXT && !months) || f->kind == LLMEM_KIND_GROUP) return LLMEM_OK;
  if (isnan(v)) return (f->flags & LLMEM_FLAG_NULLABLE) ? LLMEM_OK : LLMEM_ERR_NOT_NULLABLE;
  if (!isfinite(v)) return LLMEM_ERR_NOT_A_NUMBER;
  switch (months ? LLMEM_KIND_INT : f->kind) {
    case LLMEM_KIND_INT:
      if (v != floor(v)) return LLMEM_ERR_NOT_INTEGER;
      if (v < f->min_value || v > f->max_value) return LLMEM_ERR_OUT_OF_RANGE;
      return LLMEM_OK;
    case LLMEM_KIND_NUM:
      if (v < f->min_value || v > f->max_value) return LLMEM_ERR_OUT_OF_RANGE;
      return LLMEM_OK;
    case LLMEM_KIND_BOOL: return (v == 0 || v == 1) ? LLMEM_OK : LLMEM_ERR_BAD_ENUM;
    case LLMEM_KIND_ENUM: return (v == floor(v) && v >= 0 && v < f->value_count) ? LLMEM_OK : LLMEM_ERR_BAD_ENUM;
    case LLMEM_KIND_SET:
      return (v == floor(v) && v >= 0 && v < (double)(1 << f->value_count)) ? LLMEM_OK : LLMEM_ERR_BAD_SET;
    default: return LLMEM_OK;
  }
}

static double or_default(double v, double automatic) { return isnan(v) ? automatic : v; }

#define FAIL(status, name) \
  do {                     \
    *field = FIELD(name);  \
    return (status);       \
  } while (0)

/* A list: entries from the start (each one of the list's values), then NaN
 * to the end; all NaN is null. */
static int list_count(const double *slot) {
  int n = 0;
  while (n < LLMEM_MAX_PATTERN && !isnan(slot[n])) n++;
  return n;
}

static llmem_status check_list(const llmem_field *f, const double *slot) {
  int n = list_count(slot);
  for (int k = n; k < LLMEM_MAX_PATTERN; k++)
    if (!isnan(slot[k])) return LLMEM_ERR_LIST_GAP;
  if (n == 0) return (f->flags & LLMEM_FLAG_NULLABLE) ? LLMEM_OK : LLMEM_ERR_NOT_NULLABLE;
  for (int k = 0; k < n; k++)
    if (slot[k] != floor(slot[k]) || slot[k] < 0 || slot[k] >= f->value_count) return LLMEM_ERR_BAD_ENUM;
  return LLMEM_OK;
}

llmem_status plan_check_fields(const llmem_input *in, int *field) {
  for (int i = 0; i < LLMEM_FIELD_COUNT; i++) {
    const llmem_field *f = llmem_field_at(i);
    const double *slot = (const double *)(const void *)((const char *)in + f->offset);
    llmem_status st = f->kind == LLMEM_KIND_LIST ? check_list(f, slot) : check_field(f, *slot);
    if (st != LLMEM_OK) {
      *field = i;
      return st;
    }
  }
  return LLMEM_OK;
}

/* ---- resolve: nulls replaced by their automatic values, profiles applied, combinations ---- */
static void resolve_layer_kinds(const llmem_input *in, plan *p) {
  p->mixer_period = list_count(in->layer_types);
  p->mlp_period = list_count(in->mlp_types);
  for (int k = 0; k < p->mixer_period; k++) p->mixer_pattern[k] = (unsigned char)in->layer_types[k];
  for (int k = 0; k < p->mlp_period; k++) p->mlp_pattern[k] = (unsigned char)in->mlp_types[k];
  p->vision_merge = or_default(in->vision_merge, vision_default_merge((int)in->vision_kind));
  /* Llama 4's adapter and projector width (Llama4VisionConfig projector_input_dim 4096) */
  p->vision_projector = or_default(in->vision_projector_hidden, 4096);
}

static void resolve_model(const llmem_input *in, plan *p) {
  p->layers = in->layers + in->encoder_layers; /* the whole stack: encoder layers first */
  p->kv_heads = or_default(in->kv_heads, in->heads);
  p->head_dim = or_default(in->head_dim, floor(in->hidden / in->heads));
  p->gated = in->mlp == LLMEM_MLP_GATED;
  p->norm_width = in->norm == LLMEM_NORM_LAYERNORM ? 2 : 1;
  p->qkv_bias = in->qkv_bias != 0 || in->bias != 0;
  /* the attention output and MLP biases follow model.bias unless set (HF
   * attention_bias without mlp_bias: q, k, v and o biased, the MLP not) */
  p->o_bias = (int)or_default(in->o_bias, in->bias != 0);
  p->mlp_bias = (int)or_default(in->mlp_bias, in->bias != 0);
  p->learned_pos = in->position == LLMEM_POSITION_LEARNED;
  p->moe = in->moe_experts >= 1;
  p->expert_ffn = or_default(in->moe_ffn_hidden, in->ffn_hidden);
  p->shared_ffn = or_default(in->moe_shared_ffn_hidden, p->expert_ffn);
  p->capacity_factor = or_default(in->moe_capacity_factor, 0);
  p->mla = in->mla_kv_lora_rank >= 1 || in->mla_qk_nope_head_dim >= 1 || in->mla_v_head_dim >= 1 ||
           in->mla_qk_rope_head_dim >= 1 || or_default(in->mla_q_lora_rank, 0) >= 1;
  p->q_lora_rank = or_default(in->mla_q_lora_rank, 0);
  resolve_layer_kinds(in, p);
}

static int is_fsdp(const plan *p) {
  return (int)p->in->engine == LLMEM_ENGINE_FSDP1 || (int)p->in->engine == LLMEM_ENGINE_FSDP2;
}

/* The engines that leave the module its own parameters and .grad (torch.autocast casts them per op; zero_grad frees
 * or zeroes them): one GPU, DDP and FSDP. DeepSpeed and Megatron hold copies and gradient buffers of their own. */
static int torch_engine(const llmem_input *in, int fsdp) {
  return in->engine == LLMEM_ENGINE_SINGLE || in->engine == LLMEM_ENGINE_DDP || fsdp;
}

static void resolve_training(const llmem_input *in, plan *p) {
  p->source_len = or_default(in->source_len, in->seq_len);
  p->grad_accum = in->grad_accum; /* NaN until resolve_batch */
  p->fp8_linear = in->fp8_linear != 0 || in->dtype == LLMEM_DTYPE_FP8;
  p->master_weights = in->master_weights != 0 && in->dtype != LLMEM_DTYPE_FP32;
  p->optimizer_impl = (int)profiled(in, FIELD(optimizer_impl));
  p->recompute_layers = or_default(in->recompute_layers, 0);
  p->attn_softcap = !isnan(in->attn_softcap);
  p->final_softcap = !isnan(in->final_softcap);
  p->loss = (int)profiled(in, FIELD(loss));
  /* K/V expanded to every query head before the kernel: eager and math
   * attention always do (HF repeat_kv); some stacks do it before flash too */
  p->repeat_kv = (int)or_default(profiled(in, FIELD(repeat_kv)), (int)p->in->attention != LLMEM_ATTN_FLASH);
  p->v_view_keeps_qkv = (int)or_default(profiled(in, FIELD(v_view_keeps_qkv)), 0);
  p->sac_saves_all_to_all = (int)or_default(profiled(in, FIELD(sac_saves_all_to_all)), 1);
  p->norm_upcast = (int)or_default(profiled(in, FIELD(norm_upcast)), 1);
  p->mean_keeps_input = (int)or_default(profiled(in, FIELD(mean_keeps_input)), 0);
  /* zeroed in place, torch's own .grad lives on: not a step in the backward's, nor DeepSpeed's or Megatron's buffers */
  p->zero_grad_in_place = torch_engine(in, is_fsdp(p)) && (int)in->optimizer_in_backward == 0 &&
                          (int)or_default(profiled(in, FIELD(zero_grad_in_place)), 0);
  p->full_modules = (int)p->in->ft_method != LLMEM_FT_FULL ? (int)in->full_modules : 0;
  p->base_dtype = (int)or_default(in->base_dtype, in->dtype);
  p->quant_keeps_input = (int)or_default(profiled(in, FIELD(quant_keeps_input)), 0);
  p->quant_head = (int)or_default(profiled(in, FIELD(quant_head)), 0);
  p->quant_from_fp16 = (int)or_default(profiled(in, FIELD(quant_from_fp16)), 0);
  p->quant_inputs_held = (int)or_default(profiled(in, FIELD(quant_inputs_held)), 0);
  p->logits_fp32_kept = (int)or_default(profiled(in, FIELD(logits_fp32_kept)), 0);
  p->lora_fused_qkv = (int)or_default(profiled(in, FIELD(lora_fused_qkv)), 0);
  p->quant_dequant_temp = (int)or_default(profiled(in, FIELD(quant_dequant_temp)), 0);
  p->quant_experts = (int)or_default(profiled(in, FIELD(quant_experts)), 1);
}

static void resolve_parallel(const llmem_input *in, plan *p) {
  p->vpp_group = or_default(in->vpp_group, in->pp);
  p->sp = in->sequence_parallel != 0 && in->tp > 1;
  /* FSDP2's reduce-scatter input: the compute stream's pool (PyTorch #129721)
   * or the reduce-scatter stream's; FSDP1 and ZeRO keep their own streams */
  p->reduce_on_compute =
      in->engine == LLMEM_ENGINE_FSDP2 && (int)or_default(profiled(in, FIELD(reduce_input_on_compute_stream)), 1);
  p->shard_root_modules = (int)or_default(profiled(in, FIELD(shard_root_modules)), 0);
  p->accumulate_no_sync = (int)or_default(profiled(in, FIELD(accumulate_no_sync)), 0);
  p->ddp_find_unused = (int)or_default(profiled(in, FIELD(ddp_find_unused_parameters)), 0);
  /* bucket_cap_mb (default 25) in bytes; the first bucket is 1 MiB unless the cap is given
   * (torch/nn/parallel/distributed.py: dist._DEFAULT_FIRST_BUCKET_BYTES if bucket_bytes_cap_default) */
  p->ddp_bucket_bytes = floor(or_default(in->ddp_bucket_cap_mib, 25) * MIB);
  p->ddp_first_bucket_bytes = isnan(in->ddp_bucket_cap_mib) ? MIB : p->ddp_bucket_bytes;
  p->pp_stage_buffers = in->pp > 1 ? (int)or_default(profiled(in, FIELD(pp_stage_buffers)), 0) : 0;
  p->pp_returns_outputs = (int)or_default(profiled(in, FIELD(pp_returns_outputs)), 1);
  /* DeepSpeed's default: overlap_comm is on for ZeRO-3, off for 1/2 (runtime/zero/config.py). */
  p->overlap_comm = (int)or_default(in->overlap_comm, in->zero_stage == 3 ? 1 : 0);
  p->pp_first = or_default(in->pp_first_stage_layers, 0);
  p->pp_last = or_default(in->pp_last_stage_layers, 0);
  /* given first / last stage sizes are the split; DualPipe holds two copies' stages, evenly */
  p->pp_weighted = in->pp > 1 && p->pp_first <= 0 && p->pp_last <= 0 && (int)in->pp_schedule != LLMEM_PP_DUALPIPE &&
                   (int)or_default(profiled(in, FIELD(pp_split)), LLMEM_PP_SPLIT_EVEN) == LLMEM_PP_SPLIT_WEIGHTED;
}

static void resolve_hardware(const llmem_input *in, plan *p) {
  p->memory_bytes = in->memory_gib * GIB;
  p->cuda_context_bytes = or_default(in->cuda_context_mib, -1);
  p->cublas_workspace_bytes = or_default(in->cublas_workspace_mib, -1);
  p->nccl_buffer_bytes = or_default(in->nccl_buffer_mib, -1);
  p->allocator_reserve_given = !isnan(in->allocator_reserve);
  p->allocator_reserve = or_default(in->allocator_reserve, 0);
  p->max_split_bytes = isnan(in->max_split_size_mib) ? INFINITY : in->max_split_size_mib * MIB;
  p->empty_cache_after_init = (int)or_default(profiled(in, FIELD(empty_cache_after_init)), 0);
  /* runtime/engine.py _configure_distributed_model: module.to(device) unless zero.Init made the model (step_blocks.c) */
  p->zero3_loads_whole = (int)in->engine == LLMEM_ENGINE_DEEPSPEED && in->zero_stage == 3 && (int)in->zero_init == 0;
  p->simulate_allocator = 1;
  p->allocator_max_work = ALLOCATOR_MAX_WORK;
}

/* ---- combination checks, each naming the key to change ---- */
static int uses_mixer(const plan *p, int mixer) {
  for (int k = 0; k < p->mixer_period; k++)
    if (p->mixer_pattern[k] == mixer) return 1;
  return 0;
}

/* model.layer_types / mlp_types: lists that fit the layers, each kind with its dimensions */
static llmem_status check_layer_kinds(const llmem_input *in, const plan *p, int *field) {
  if (p->mixer_period == 0 && p->mlp_period == 0) return LLMEM_OK;
  if (in->formula != LLMEM_FORMULA_LLMEM) FAIL(LLMEM_ERR_PATTERN_FORMULA, layer_types);
  if (p->mixer_period > in->layers) FAIL(LLMEM_ERR_PATTERN_LONG, layer_types); /* lists cover the decoder */
  if (p->mlp_period > in->layers) FAIL(LLMEM_ERR_PATTERN_LONG, mlp_types);
  if (uses_mixer(p, LLMEM_MIXER_ENCODER)) FAIL(LLMEM_ERR_ENCODER_LIST, layer_types);
  if (p->mlp_period > 0 && (in->moe_dense_layers != 0 || in->moe_layer_freq != 1))
    FAIL(LLMEM_ERR_PATTERN_MOE_RULE, mlp_types);
  for (int k = 0; k < p->mlp_period; k++)
    if (p->mlp_pattern[k] == LLMEM_LMLP_MOE && !p->moe) FAIL(LLMEM_ERR_PATTERN_MOE, mlp_types);
  /* a layer without mixer and MLP: only a "none" MLP entry can make one, and the (mixer, MLP) pairs
   * repeat within the product of the periods (not every layer of a deep model on every estimate) */
  int pairs = p->mlp_period * (p->mixer_period > 0 ? p->mixer_period : 1);
  for (int i = 0; i < pairs && i < (int)p->layers; i++)
    if (layer_mixer(p, i) == LLMEM_MIXER_NONE && layer_mlp(p, i) == LLMEM_LMLP_NONE)
      FAIL(LLMEM_ERR_PATTERN_EMPTY_LAYER, layer_types);
  if (uses_mixer(p, LLMEM_MIXER_SLIDING) && isnan(in->sliding_window)) FAIL(LLMEM_ERR_SLIDING_WINDOW, sliding_window);
  if (uses_mixer(p, LLMEM_MIXER_CHUNKED) && isnan(in->attention_chunk))
    FAIL(LLMEM_ERR_ATTENTION_CHUNK, attention_chunk);
  if (uses_mixer(p, LLMEM_MIXER_LINEAR) && !divides(in->linear_value_heads, in->linear_key_heads))
    FAIL(LLMEM_ERR_LINEAR_HEADS, linear_value_heads);
  if (uses_mixer(p, LLMEM_MIXER_SSM) && !divides(in->ssm_heads, in->ssm_groups)) FAIL(LLMEM_ERR_SSM_HEADS, ssm_heads);
  if (in->rl_algorithm != LLMEM_RL_NONE &&
      (uses_mixer(p, LLMEM_MIXER_LINEAR) || uses_mixer(p, LLMEM_MIXER_SSM) || uses_mixer(p, LLMEM_MIXER_NONE)))
    FAIL(LLMEM_ERR_PATTERN_RL, layer_types);
  return LLMEM_OK;
}

static llmem_status check_model(const llmem_input *in, const plan *p, int *field) {
  if (in->formula == LLMEM_FORMULA_LLMEM && !isnan(in->moe_latent_size)) FAIL(LLMEM_ERR_UNMODELLED, moe_latent_size);
  if (p->moe == 0) {
    if (!isnan(in->moe_ffn_hidden) || in->moe_shared_experts != 0 || in->moe_dense_layers != 0 || in->moe_top_k != 1 ||
        in->moe_layer_freq != 1 || !isnan(in->moe_capacity_factor) || !isnan(in->moe_shared_ffn_hidden) ||
        !isnan(in->moe_latent_size) || in->moe_shared_gate != 0 || in->moe_router_bias != 0 ||
        in->moe_score_before != 0 || in->moe_load_imbalance != 1)
      FAIL(LLMEM_ERR_MOE_REQUIRED, moe_experts);
  } else {
    if (in->moe_top_k > in->moe_experts) FAIL(LLMEM_ERR_MOE_TOP_K, moe_top_k);
    if (in->moe_dense_layers >= p->layers) FAIL(LLMEM_ERR_MOE_DENSE_LAYERS, moe_dense_layers);
  }
  if (p->mla && (in->mla_kv_lora_rank < 1 || in->mla_qk_nope_head_dim < 1 || in->mla_qk_rope_head_dim < 1 ||
                 in->mla_v_head_dim < 1))
    FAIL(LLMEM_ERR_MLA_DIMS, mla_kv_lora_rank);
  if (!p->mla && !divides(p->in->heads, p->kv_heads)) FAIL(LLMEM_ERR_HEADS_KV, kv_heads);
  /* heads of zero width (hidden below heads, head_dim null) hold nothing: the RL engine's KV pool divided by them */
  if (!p->mla && p->head_dim < 1) FAIL(LLMEM_ERR_HEAD_DIM, head_dim);
  if (in->vision_layers > 0) {
    int counts_params = in->formula == LLMEM_FORMULA_LLMEM || in->formula == LLMEM_FORMULA_DEEPSPEED ||
                        in->formula == LLMEM_FORMULA_DEEPSPEED_LEGACY || in->formula == LLMEM_FORMULA_ZERO_PAPER;
    if (!counts_params) FAIL(LLMEM_ERR_VISION_FORMULA, vision_layers);
    if (!divides(in->vision_image_size, in->vision_patch_size * p->vision_merge) ||
        !divides(in->vision_hidden, in->vision_heads))
      FAIL(LLMEM_ERR_VISION_PATCH, vision_image_size);
  }
  return check_layer_kinds(in, p, field);
}

/* An encoder-decoder stack (T5): one stage, the model-state formulas that count parameters only */
static llmem_status check_encoder(const plan *p, int *field) {
  if (p->in->encoder_layers <= 0) return LLMEM_OK;
  int formula_ok = (int)p->in->formula == LLMEM_FORMULA_LLMEM || (int)p->in->formula == LLMEM_FORMULA_DEEPSPEED ||
                   (int)p->in->formula == LLMEM_FORMULA_DEEPSPEED_LEGACY ||
                   (int)p->in->formula == LLMEM_FORMULA_ZERO_PAPER;
  if (!formula_ok || p->in->pp > 1 || p->in->mtp_layers > 0 || p->in->vision_layers > 0 ||
      (int)p->in->rl_algorithm != LLMEM_RL_NONE || p->mixer_period > 0 || p->mlp_period > 0)
    FAIL(LLMEM_ERR_ENCODER_SETUP, encoder_layers);
  return LLMEM_OK;
}

/* Megatron-LM's MTP block (megatron/core/transformer/multi_token_prediction.py, 09ebca7 2025-03-22):
 * the modelled trainer; its documentation rules out context parallelism */
static llmem_status check_mtp(const plan *p, int *field) {
  if ((int)p->in->formula != LLMEM_FORMULA_LLMEM || p->in->mtp_layers == 0) return LLMEM_OK;
  if ((int)p->in->engine != LLMEM_ENGINE_MEGATRON || p->in->cp > 1) FAIL(LLMEM_ERR_MTP_ENGINE, mtp_layers);
  return LLMEM_OK;
}

#define STEP(call)                   \
  do {                               \
    llmem_status st_ = (call);       \
    if (st_ != LLMEM_OK) return st_; \
  } while (0)

/* The engine can split the model as asked, and TP divides what it splits */
static llmem_status check_tensor_parallel(const plan *p, int *field) {
  if ((int)p->in->engine == LLMEM_ENGINE_SINGLE && p->in->gpus != 1) FAIL(LLMEM_ERR_ENGINE_SINGLE, engine);
  /* context parallelism splits the sequence under any engine (DeepSpeed-Ulysses, ms-swift and verl run it beside
   * DDP, ZeRO and FSDP1); tensor parallelism needs the engine's own */
  if (p->in->tp > 1 && !((int)p->in->engine == LLMEM_ENGINE_FSDP2 || (int)p->in->engine == LLMEM_ENGINE_MEGATRON ||
                         (int)p->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED))
    FAIL(LLMEM_ERR_TP_ENGINE, tp);
  if (p->in->pp > 1 &&
      !((int)p->in->engine == LLMEM_ENGINE_FSDP2 || (int)p->in->engine == LLMEM_ENGINE_MEGATRON ||
        (int)p->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED || (int)p->in->engine == LLMEM_ENGINE_DEEPSPEED))
    FAIL(LLMEM_ERR_TP_ENGINE, pp);
  if (!divides(p->in->heads, p->in->tp)) FAIL(LLMEM_ERR_TP_HEADS, tp);
  if (!p->mla && !divides(p->kv_heads, p->in->tp) && !divides(p->in->tp, p->kv_heads)) FAIL(LLMEM_ERR_TP_KV_HEADS, tp);
  if (!divides(p->in->ffn_hidden, p->in->tp)) FAIL(LLMEM_ERR_TP_FFN, tp);
  if (uses_mixer(p, LLMEM_MIXER_LINEAR) && !divides(p->in->linear_key_heads, p->in->tp))
    FAIL(LLMEM_ERR_LINEAR_HEADS, tp);
  if (uses_mixer(p, LLMEM_MIXER_SSM) && !divides(p->in->ssm_groups, p->in->tp)) FAIL(LLMEM_ERR_SSM_HEADS, tp);
  if (!divides(p->in->gpus, p->in->tp * p->in->pp * p->in->cp)) FAIL(LLMEM_ERR_GPUS_LAYOUT, gpus);
  return LLMEM_OK;
}

/* The layers split over the stages: evenly, or with a set first and last stage */
static llmem_status check_stages(const plan *p, int *field) {
  if (p->in->pp > p->layers) FAIL(LLMEM_ERR_PP_LAYERS, pp);
  if (p->pp_weighted) { /* every model chunk keeps a layer: the first and the last give one to the embedding, output */
    int first = 0, chunks = (int)(p->in->pp * p->in->vpp);
    if (layout_chunk_layers(p, 0, &first) < 1 || layout_chunk_layers(p, chunks - 1, &first) < 1)
      FAIL(LLMEM_ERR_PP_LAYERS, pp);
  } else if (p->pp_first > 0 || p->pp_last > 0) {
    if (p->in->pp < 2) FAIL(LLMEM_ERR_PP_UNEVEN, pp_first_stage_layers);
    double rest_stages = p->in->pp - (p->pp_first > 0) - (p->pp_last > 0);
    double rest_layers = p->layers - p->pp_first - p->pp_last;
    if (rest_layers < rest_stages || (rest_stages == 0 && rest_layers != 0) ||
        (rest_stages > 0 && !divides(rest_layers, rest_stages)))
      FAIL(LLMEM_ERR_PP_UNEVEN, pp_first_stage_layers);
  } else if (!divides(p->layers, p->in->pp)) {
    FAIL(LLMEM_ERR_PP_LAYERS, pp);
  }
  return LLMEM_OK;
}

/* Two chunks per rank in a V (schedule.c) */
static llmem_status check_v_schedule(const plan *p, int *field) {
  if (p->in->vpp != 2 || p->pp_first > 0 || p->pp_last > 0 || (!p->pp_weighted && !divides(p->layers, 2 * p->in->pp)))
    FAIL(LLMEM_ERR_V_SCHEDULE, vpp);
  if (p->grad_accum < 2 * p->in->pp - ((int)p->in->pp_schedule == LLMEM_PP_ZB_V))
    FAIL(LLMEM_ERR_V_MICROBATCHES, grad_accum);
  return LLMEM_OK;
}

/* One stage of each model copy per rank (layout.c) */
static llmem_status check_dualpipe(const plan *p, int *field) {
  if ((int)p->in->pp % 2 != 0) FAIL(LLMEM_ERR_DUALPIPE, pp); /* DualPipe.step: num_ranks % 2 == 0 */
  if (p->pp_first > 0 || p->pp_last > 0) FAIL(LLMEM_ERR_DUALPIPE, pp_first_stage_layers);
  if (p->in->vpp != 2) FAIL(LLMEM_ERR_DUALPIPE, vpp);
  /* DualPipe.step: num_chunks % 2 == 0 and num_chunks >= num_ranks * 2 */
  if ((long long)p->grad_accum % 2 != 0 || p->grad_accum < 2 * p->in->pp)
    FAIL(LLMEM_ERR_DUALPIPE_MICROBATCHES, grad_accum);
  return LLMEM_OK;
}

/* Virtual stages: the interleaved schedule, each stage's layers split evenly into vpp chunks */
static llmem_status check_virtual_stages(const plan *p, int *field) {
  if (p->in->pp < 2 || (int)p->in->pp_schedule != LLMEM_PP_INTERLEAVED) FAIL(LLMEM_ERR_VPP, vpp);
  for (int s = 0; s < (int)p->in->pp && !p->pp_weighted; s++) { /* weighted: each model chunk its own count */
    double n = s == 0 && p->pp_first > 0                   ? p->pp_first
               : s == (int)p->in->pp - 1 && p->pp_last > 0 ? p->pp_last
               : (p->pp_first > 0 || p->pp_last > 0)
                   ? (p->layers - p->pp_first - p->pp_last) / (p->in->pp - (p->pp_first > 0) - (p->pp_last > 0))
                   : p->layers / p->in->pp;
    if (!divides(n, p->in->vpp)) FAIL(LLMEM_ERR_VPP, vpp);
  }
  return LLMEM_OK;
}

/* Megatron's interleaved schedule (pipeline_parallel/schedules.py
 * forward_backward_pipelining_with_interleaving): micro-batch groups of
 * microbatch_group_size_per_vp_stage (default pp) in [pp, m], the last of
 * m mod group micro-batches either none or at least pp */
static llmem_status check_interleaved_groups(const plan *p, int *field) {
  if ((int)p->in->pp_schedule != LLMEM_PP_INTERLEAVED || p->in->pp <= 1) return LLMEM_OK;
  double group = p->vpp_group, rest = fmod(p->grad_accum, group);
  if (isnan(p->in->vpp_group) && group > p->grad_accum) FAIL(LLMEM_ERR_INTERLEAVED_MICROBATCHES, grad_accum);
  if (group < p->in->pp || group > p->grad_accum) FAIL(LLMEM_ERR_VPP_GROUP, vpp_group);
  if (rest > 0 && rest < p->in->pp) FAIL(LLMEM_ERR_INTERLEAVED_MICROBATCHES, grad_accum);
  return LLMEM_OK;
}

/* Context and sequence parallelism split the sequence; expert parallelism the experts */
static llmem_status check_sequence_experts(const plan *p, int *field) {
  if (!divides(p->in->cp, p->in->cp_all_to_all)) FAIL(LLMEM_ERR_CP_A2A, cp_all_to_all);
  if (!divides(p->in->heads / p->in->tp, p->in->cp_all_to_all)) FAIL(LLMEM_ERR_CP_A2A_HEADS, cp_all_to_all);
  double ring = p->in->cp / p->in->cp_all_to_all; /* a ring's chunks come in load-balanced pairs */
  if (p->in->cp > 1 && !divides(p->in->seq_len, (ring > 1 ? 2 : 1) * p->in->cp)) FAIL(LLMEM_ERR_CP_SEQ, cp);
  if (p->sp && !divides(p->in->seq_len / p->in->cp, p->in->tp)) FAIL(LLMEM_ERR_SP_SEQ, sequence_parallel);
  if (!p->moe && (p->in->ep > 1 || p->in->etp > 1)) FAIL(LLMEM_ERR_EP_DENSE, ep);
  if (p->moe) {
    if (!divides(p->in->moe_experts, p->in->ep)) FAIL(LLMEM_ERR_EP_EXPERTS, ep);
    if (!divides(p->in->gpus / p->in->pp, p->in->ep * p->in->etp)) FAIL(LLMEM_ERR_EP_GROUP, ep);
    if (!divides(p->expert_ffn, p->in->etp)) FAIL(LLMEM_ERR_ETP_FFN, etp);
  }
  return LLMEM_OK;
}

static llmem_status check_layout(const plan *p, int *field) {
  STEP(check_tensor_parallel(p, field));
  STEP(check_stages(p, field));
  if (plan_v_shape(p)) STEP(check_v_schedule(p, field));
  else if (plan_dualpipe(p)) STEP(check_dualpipe(p, field));
  else if (p->in->vpp > 1) STEP(check_virtual_stages(p, field));
  STEP(check_interleaved_groups(p, field));
  return check_sequence_experts(p, field);
}

/* The micro-batches per step. training.global_batch fixes the samples per
 * optimizer step and the accumulation follows, as Megatron-LM derives it
 * (megatron/core/num_microbatches_calculator.py: global_batch_size //
 * (micro_batch_size * data_parallel_size), which must divide evenly); given
 * both, they must agree. Neither: one micro-batch per step. */
static llmem_status resolve_batch(const llmem_input *in, plan *p, int *field) {
  p->grad_accum = or_default(in->grad_accum, 1);
  if (isnan(in->global_batch) || !divides(in->gpus, p->in->tp * in->pp * p->in->cp))
    return LLMEM_OK; /* check_layout names a bad layout */
  double per_accum = p->in->micro_batch * in->gpus / (p->in->tp * in->pp * p->in->cp); /* x the data-parallel size */
  if (!divides(in->global_batch, per_accum)) FAIL(LLMEM_ERR_GLOBAL_BATCH_SPLIT, global_batch);
  double accum = in->global_batch / per_accum;
  if (!isnan(in->grad_accum) && in->grad_accum != accum) FAIL(LLMEM_ERR_GLOBAL_BATCH_ACCUM, global_batch);
  if (accum > 1000000) FAIL(LLMEM_ERR_GLOBAL_BATCH_STEPS, global_batch); /* training.grad_accum's range */
  p->grad_accum = accum;
  return LLMEM_OK;
}

static int is_deepspeed(const plan *p) {
  return (int)p->in->engine == LLMEM_ENGINE_DEEPSPEED || (int)p->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
}
static llmem_status check_engine(const plan *p, int *field) {
  int deepspeed = is_deepspeed(p), fsdp = is_fsdp(p);
  if (p->in->zero_stage > 0 && !deepspeed) FAIL(LLMEM_ERR_ZERO_ENGINE, zero_stage);
  if (deepspeed && p->in->pp > 1 && p->in->zero_stage > 1) FAIL(LLMEM_ERR_ZERO_PP, zero_stage);
  if ((int)p->in->distributed_optimizer != 0 && (int)p->in->engine != LLMEM_ENGINE_MEGATRON)
    FAIL(LLMEM_ERR_DIST_OPT_ENGINE, distributed_optimizer);
  if ((int)p->in->offload_optimizer != LLMEM_OFFLOAD_NONE &&
      !((deepspeed && p->in->zero_stage >= 1) || fsdp ||
        ((int)p->in->engine == LLMEM_ENGINE_MEGATRON && (int)p->in->distributed_optimizer != 0)))
    FAIL(LLMEM_ERR_OFFLOAD_OPT_ENGINE, offload_optimizer);
  if ((int)p->in->offload_params != LLMEM_OFFLOAD_NONE && !((deepspeed && p->in->zero_stage == 3) || fsdp))
    FAIL(LLMEM_ERR_OFFLOAD_PARAMS_ENGINE, offload_params);
  int no_nvme = !(deepspeed && p->in->zero_stage == 3);
  if ((int)p->in->offload_params == LLMEM_OFFLOAD_NVME && no_nvme) FAIL(LLMEM_ERR_NVME_ENGINE, offload_params);
  if ((int)p->in->offload_optimizer == LLMEM_OFFLOAD_NVME && no_nvme) FAIL(LLMEM_ERR_NVME_ENGINE, offload_optimizer);
  if (fsdp && p->in->offload_params != p->in->offload_optimizer) FAIL(LLMEM_ERR_FSDP_OFFLOAD_SPLIT, offload_params);
  if (p->in->accumulate_no_sync == 1 && (int)p->in->engine != LLMEM_ENGINE_FSDP1 &&
      (int)p->in->engine != LLMEM_ENGINE_FSDP2 && (int)p->in->engine != LLMEM_ENGINE_DDP)
    FAIL(LLMEM_ERR_NO_SYNC_ENGINE, accumulate_no_sync);
  if (p->in->zero_grad_in_place == 1 && (!torch_engine(p->in, fsdp) || (int)p->in->optimizer_in_backward != 0))
    FAIL(LLMEM_ERR_ZERO_GRAD_ENGINE, zero_grad_in_place);
  return LLMEM_OK;
}

static llmem_status check_training(const llmem_input *in, const plan *p, int *field) {
  int lora = (int)p->in->ft_method != LLMEM_FT_FULL;
  if (lora && in->lora_targets == 0) FAIL(LLMEM_ERR_LORA_TARGETS, lora_targets);
  if (!isnan(in->recompute_layers)) {
    double per_stage_max = p->pp_first > p->layers / in->pp ? p->pp_first : p->layers / in->pp;
    if (p->pp_last > per_stage_max) per_stage_max = p->pp_last;
    if (in->recompute != LLMEM_RECOMPUTE_FULL || p->recompute_layers > per_stage_max)
      FAIL(LLMEM_ERR_RECOMPUTE_LAYERS, recompute_layers);
  }
  if (in->dtype == LLMEM_DTYPE_FP8 && in->master_weights == 0) FAIL(LLMEM_ERR_FP8_MASTER, master_weights);
  int half = in->dtype == LLMEM_DTYPE_BF16 || in->dtype == LLMEM_DTYPE_FP16;
  int fp32_lora_base = (int)in->ft_method == LLMEM_FT_LORA && p->base_dtype == LLMEM_DTYPE_FP32;
  int fp32_params = lora ? fp32_lora_base : in->master_weights != 0;
  if (in->autocast == 1 && (!half || !fp32_params || !torch_engine(in, is_fsdp(p))))
    FAIL(LLMEM_ERR_AUTOCAST_ENGINE, autocast);
  return LLMEM_OK;
}

/* ---- derive: degrees and bytes the modules use ---- */
static llmem_status derive_sharding(const llmem_input *in, plan *p, int *field) {
  int fsdp = is_fsdp(p);
  p->dp = in->gpus / (p->in->tp * in->pp * p->in->cp);
  /* Sharding degrees. Megatron's distributed optimizer and FSDP/ZeRO shard over
   * DP x CP (megatron/core/optimizer/__init__.py intra_dp_cp_group; docs/memory-model.md §11 #4). */
  double dp_cp = p->dp * (in->shard_with_cp != 0 ? p->in->cp : 1);
  p->shard_dense = dp_cp;
  if (fsdp && in->fsdp_strategy == LLMEM_FSDP_HYBRID_SHARD) {
    double size = or_default(in->fsdp_shard_size, in->gpus_per_node < dp_cp ? in->gpus_per_node : dp_cp);
    if (!divides(dp_cp, size)) {
      if (isnan(in->fsdp_shard_size)) FAIL(LLMEM_ERR_SHARD_NODE, gpus_per_node); /* the default: one node */
      FAIL(LLMEM_ERR_SHARD_SIZE, fsdp_shard_size);
    }
    p->shard_dense = size;
  } else if (!isnan(in->fsdp_shard_size)) {
    if (!(fsdp && in->fsdp_strategy == LLMEM_FSDP_HYBRID_SHARD)) FAIL(LLMEM_ERR_SHARD_SIZE, fsdp_shard_size);
  }
  if (fsdp && in->fsdp_strategy == LLMEM_FSDP_NO_SHARD) p->shard_dense = 1;
  /* Experts are replicated over gpus / (pp * ep * etp) ranks (Megatron expert-data-parallel). */
  p->shard_expert = p->moe ? in->gpus / (in->pp * p->in->ep * p->in->etp) : 1;
  if (p->shard_expert > p->shard_dense * p->in->tp * p->in->cp)
    p->shard_expert = p->shard_dense * p->in->tp * p->in->cp;
  if (fsdp && in->fsdp_strategy == LLMEM_FSDP_NO_SHARD) p->shard_expert = 1;
  return LLMEM_OK;
}

/* Bytes of Transformer Engine's quantised tensors per element (docs/memory-model.md
 * §4.6; TransformerEngine d0067d0, transformer_engine/pytorch/tensor/{float8,float8_blockwise,mxfp8,nvfp4}_tensor.py
 * inner_tensor_specs and get_scale_shape, common/recipe/__init__.py). A linear
 * weight is quantised for both usages (module/linear.py L467-475: columnwise
 * while the input needs a gradient); a saved input keeps the columnwise copy
 * only (L602-616 "Discard row-wise data since it is not needed in backward pass").
 *   delayed, current: Float8Tensor, one fp32 scale per tensor (negligible); on
 *     Hopper the columnwise copy is a separate _transpose (float8_tensor.py
 *     L423-427, utils.py is_non_tn_fp8_gemm_supported: sm90 is TN-only)
 *   blockwise (Float8BlockScaling, DeepSeek-V3): fp32 scales, 128x128 blocks
 *     for weights (w_block_scaling_dim 2), 1x128 tiles for inputs (x_ 1)
 *   mxfp8: one E8M0 byte per 32 values per copy (mxfp8_tensor.py get_scale_shape)
 *   nvfp4: two E2M1 values a byte + one E4M3 byte per 16 values per copy (the
 *     weights' 16x16 blocks keep a byte per 16 values too, nvfp4_tensor.py
 *     get_scale_shape) + an fp32 amax per copy (negligible) */
static void fp8_formats(const llmem_input *in, plan *p) {
  p->fp8_recipe = p->fp8_linear && !isnan(in->fp8_recipe) ? (int)in->fp8_recipe : -1;
  double data = 1, weight_scale = 0, input_scale = 0;
  switch (p->fp8_recipe) {
    case LLMEM_FP8_RECIPE_BLOCKWISE: weight_scale = 4.0 / (128 * 128), input_scale = 4.0 / 128; break;
    case LLMEM_FP8_RECIPE_MXFP8: weight_scale = input_scale = 1.0 / 32; break;
    case LLMEM_FP8_RECIPE_NVFP4: data = 0.5, weight_scale = input_scale = 1.0 / 16; break;
    default: break;
  }
  p->fp8_weight_bytes = 2 * (data + weight_scale);
  p->fp8_input_bytes = data + input_scale;
}

/* torch.autocast over fp32 parameters with a 16-bit compute dtype (HF Trainer fp16/bf16 on an fp32 model):
 * training.autocast, else its profile row, else single GPU, DDP and unsharded FSDP. Sharded FSDP takes it
 * when its MixedPrecision keeps param_dtype float32 under autocast (Lightning Fabric's "bf16-mixed", a
 * script without mp_policy); the FSDP default is param_dtype bf16, 16-bit gathers and no per-op casts. */
static int autocast_of(const llmem_input *in, const plan *p, int fsdp) {
  if (!torch_engine(in, fsdp) || (in->dtype != LLMEM_DTYPE_BF16 && in->dtype != LLMEM_DTYPE_FP16)) return 0;
  /* LoRA over an fp32 base (Lightning Fabric's "bf16-mixed" leaves the frozen weights fp32; a 16-bit Trainer
   * flag on an fp32-loaded model): autocast casts the frozen weights per op; on one GPU or DDP by default */
  if ((int)in->ft_method == LLMEM_FT_LORA && p->base_dtype == LLMEM_DTYPE_FP32) {
    double given = profiled(in, FIELD(autocast));
    return isnan(given) ? in->engine == LLMEM_ENGINE_SINGLE || in->engine == LLMEM_ENGINE_DDP : given != 0;
  }
  if (!p->master_weights || (int)in->ft_method != LLMEM_FT_FULL) return 0;
  double given = profiled(in, FIELD(autocast));
  if (!isnan(given)) return given != 0;
  return in->engine == LLMEM_ENGINE_SINGLE || in->engine == LLMEM_ENGINE_DDP ||
         (fsdp && in->fsdp_strategy == LLMEM_FSDP_NO_SHARD);
}

static void derive_bytes(const llmem_input *in, plan *p) {
  int fsdp = is_fsdp(p);
  /* vocabulary padded as Megatron does: to a multiple of vocab_multiple * tp */
  double mult = in->vocab_multiple * p->in->tp;
  p->vocab_padded = ceil(in->vocab / mult) * mult;

  p->autocast = autocast_of(in, p, fsdp);

  /* bytes per element */
  p->act_bytes = in->dtype == LLMEM_DTYPE_FP32 ? 4 : 2;
  p->weight_bytes = dtype_bytes((int)in->dtype);
  /* training.master_dtype: Megatron's --main-params-dtype (precision-aware optimizer),
   * Transformer Engine FusedAdam's master_weight_dtype; null: fp32 */
  p->master_bytes = p->master_weights ? (isnan(in->master_dtype) ? 4 : dtype_bytes((int)in->master_dtype)) : 0;
  p->grad_bytes = dtype_bytes((int)in->grad_dtype);
  p->base_weight_bytes = dtype_bytes(p->base_dtype);
  fp8_formats(in, p);
}

llmem_status plan_build(const llmem_input *in, plan *pl, int *field, const char **detail) {
  *field = -1;
  *detail = 0;
  STEP(plan_check_fields(in, field));
  plan p = {0};
  p.in = in;
  resolve_model(in, &p);
  resolve_training(in, &p);
  resolve_parallel(in, &p);
  resolve_hardware(in, &p);
  STEP(check_model(in, &p, field));
  STEP(resolve_batch(in, &p, field));
  STEP(check_layout(&p, field));
  STEP(check_engine(&p, field));
  STEP(check_mtp(&p, field));
  STEP(check_encoder(&p, field));
  STEP(derive_sharding(in, &p, field));
  STEP(check_training(in, &p, field));
  derive_bytes(in, &p);
  p.rl_entropy = in->rl_algorithm != LLMEM_RL_NONE && in->rl_entropy != 0;
  p.rl_entropy_kernel = (int)profiled(in, FIELD(rl_entropy_kernel));
  *pl = p;
  return LLMEM_OK;
}
