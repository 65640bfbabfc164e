/* The fuzz targets' shared half: decoder, oracles, reproducer (fuzz_oracles.h). */
#include "fuzz_oracles.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))
#define SLOT(in, field) (*(double *)(void *)((char *)(in) + llmem_field_at(field)->offset))

unsigned fuzz_byte(fuzz_reader *r) { return r->pos < r->size ? r->data[r->pos++] : 0; }

unsigned fuzz_pick(fuzz_reader *r, unsigned n) { return n ? fuzz_byte(r) % n : 0; }

double fuzz_pick_value(fuzz_reader *r, const double *values, unsigned n) { return values[fuzz_pick(r, n)]; }

#define PICK(r, ...) pick_list(r, (const double[]){__VA_ARGS__}, COUNT(((const double[]){__VA_ARGS__})))
static double pick_list(fuzz_reader *r, const double *v, unsigned n) { return fuzz_pick_value(r, v, n); }
static int coin(fuzz_reader *r) { return fuzz_byte(r) & 1; }

/* One raw key override: plausible small values and powers of two, or
 * arbitrary bits (NaN, inf, negatives, huge) */
static void raw_override(fuzz_reader *r, llmem_input *in) {
  int field = (int)fuzz_pick(r, LLMEM_FIELD_COUNT);
  unsigned mode = fuzz_byte(r);
  const llmem_field *f = llmem_field_at(field);
  double v;
  if (mode & 1) {
    v = (mode >> 1) & 1 ? (double)(1u << ((mode >> 2) % 12)) : (double)((mode >> 2) % 8);
    if (f->kind == LLMEM_KIND_ENUM) v = (double)((mode >> 2) % (f->value_count + 1));
  } else if (r->pos + 8 <= r->size) {
    memcpy(&v, r->data + r->pos, 8);
    r->pos += 8;
  } else {
    v = NAN;
  }
  SLOT(in, field) = v;
}

static void decode_model(fuzz_reader *r, llmem_input *in, double tp, double pp, double vpp) {
  in->heads = tp * PICK(r, 1, 2, 4, 8);
  in->kv_heads = PICK(r, NAN, in->heads, tp, 1);
  in->head_dim = PICK(r, NAN, 16, 64, 128);
  in->hidden = PICK(r, 64, 128, 256, 1024, 4096);
  in->ffn_hidden = tp * PICK(r, 32, 64, 256, 1024);
  in->layers = pp * vpp * PICK(r, 1, 2, 3, 4, 8, 16);
  if (pp > 2 && vpp == 1 && fuzz_pick(r, 4) == 0) { /* uneven first / last stages */
    in->pp_first_stage_layers = PICK(r, 0, 1, 2, 3);
    in->pp_last_stage_layers = PICK(r, 0, 1, 2, 3);
    in->layers = in->pp_first_stage_layers + in->pp_last_stage_layers + (pp - 2) * PICK(r, 1, 2, 3);
  }
  in->vocab = PICK(r, 97, 1000, 32000, 128256);
  in->vocab_multiple = PICK(r, 1, 1, 64, 128);
  in->tied_embeddings = coin(r);
  in->head = fuzz_pick(r, LLMEM_HEAD_COUNT_);
  in->mlp = fuzz_pick(r, LLMEM_MLP_COUNT_);
  in->norm = fuzz_pick(r, LLMEM_NORM_COUNT_);
  in->bias = coin(r);
  in->qkv_bias = coin(r);
  in->qk_norm = fuzz_pick(r, LLMEM_QK_NORM_COUNT_);
  in->attn_sinks = coin(r);
  in->mtp_layers = PICK(r, 0, 0, 1); /* llmem: Megatron engines only (a named error otherwise) */
  if (fuzz_pick(r, 4) == 0) {        /* per-layer kinds: a short repeating pattern, each kind with its dimensions */
    int n = 1 + (int)fuzz_pick(r, 4);
    for (int k = 0; k < n; k++) {
      in->layer_types[k] = fuzz_pick(r, LLMEM_LAYER_MIXER_COUNT_);
      if (coin(r)) in->mlp_types[k] = fuzz_pick(r, LLMEM_LAYER_MLP_COUNT_);
    }
    for (int k = 1; k < n; k++) /* an MLP list is whole or absent */
      if (isnan(in->mlp_types[k]) != isnan(in->mlp_types[0])) in->mlp_types[k] = isnan(in->mlp_types[0]) ? NAN : 0;
    in->sliding_window = PICK(r, 64, 1024, 1000000);
    in->attention_chunk = PICK(r, 32, 512);
    in->attn_output_gate = coin(r);
    in->linear_key_heads = tp * PICK(r, 1, 2);
    in->linear_value_heads = in->linear_key_heads * PICK(r, 1, 2);
    in->linear_key_head_dim = PICK(r, 16, 64);
    in->linear_value_head_dim = PICK(r, 16, 64);
    in->ssm_groups = tp * PICK(r, 1, 2);
    in->ssm_heads = in->ssm_groups * PICK(r, 1, 4);
    in->ssm_head_dim = PICK(r, 16, 64);
    in->ssm_state_size = PICK(r, 16, 128);
    in->ssm_chunk_size = PICK(r, 64, 256);
  }
  in->position = fuzz_pick(r, LLMEM_POSITION_COUNT_);
  in->max_positions = PICK(r, 131072, 512, 100000);
  if (fuzz_pick(r, 5) == 0) { /* MLA */
    in->mla_q_lora_rank = PICK(r, NAN, 0, 64);
    in->mla_kv_lora_rank = PICK(r, 32, 64);
    in->mla_qk_nope_head_dim = PICK(r, 16, 32);
    in->mla_qk_rope_head_dim = PICK(r, 8, 16);
    in->mla_v_head_dim = PICK(r, 16, 32);
  }
}

static void decode_moe(fuzz_reader *r, llmem_input *in, double tp, double group) {
  if (fuzz_pick(r, 3) != 0) return;
  in->moe_experts = PICK(r, 1, 2, 4, 8, 16, 64);
  in->moe_top_k = fmin(in->moe_experts, PICK(r, 1, 2, 4, 8));
  in->etp = PICK(r, 1, 1, tp);
  double ep = PICK(r, 1, 2, 4, 8); /* largest that divides both the experts and the group */
  while (ep > 1 && (fmod(in->moe_experts, ep) != 0 || fmod(group, ep * in->etp) != 0)) ep /= 2;
  if (fmod(group, ep * in->etp) != 0) in->etp = 1;
  in->ep = ep;
  in->moe_ffn_hidden = PICK(r, NAN, 64, 256, 2048) * in->etp;
  in->moe_shared_experts = PICK(r, 0, 0, 1, 2);
  in->moe_shared_ffn_hidden = PICK(r, NAN, 128);
  in->moe_shared_gate = coin(r);
  in->moe_router_bias = coin(r);
  in->moe_dense_layers = fmin(in->layers - 1, PICK(r, 0, 0, 1, 2));
  in->moe_layer_freq = PICK(r, 1, 1, 2);
  in->moe_capacity_factor = PICK(r, NAN, NAN, 1.0, 1.25);
  if (in->formula != LLMEM_FORMULA_LLMEM) in->moe_latent_size = PICK(r, NAN, 64);
  in->moe_load_imbalance = PICK(r, 1, 1, 1.5);
}

static void decode_training(fuzz_reader *r, llmem_input *in, double tp, double pp, double cp) {
  in->micro_batch = PICK(r, 1, 1, 2, 4, 8);
  in->seq_len = 2 * cp * tp * PICK(r, 16, 64, 256, 1024, 2048);
  in->grad_accum = in->pp_schedule == LLMEM_PP_INTERLEAVED ? pp * PICK(r, 1, 2, 3) : PICK(r, 1, 2, 3, 4, 8, 16);
  in->dtype = fuzz_pick(r, LLMEM_DTYPE_COUNT_);
  in->fp8_linear = fuzz_pick(r, 6) == 0;
  in->master_weights = in->dtype == LLMEM_DTYPE_FP8 ? 1 : fuzz_pick(r, 4) != 0;
  in->grad_dtype = fuzz_pick(r, LLMEM_DTYPE_COUNT_);
  in->optimizer = fuzz_pick(r, LLMEM_OPTIMIZER_COUNT_);
  in->optimizer_dtype = PICK(r, LLMEM_DTYPE_FP32, LLMEM_DTYPE_FP32, LLMEM_DTYPE_BF16);
  in->optimizer_impl = fuzz_pick(r, LLMEM_OPT_IMPL_COUNT_);
  in->optimizer_in_backward = fuzz_pick(r, 6) == 0;
  in->paged_optimizer = fuzz_pick(r, 6) == 0;
  in->recompute = fuzz_pick(r, LLMEM_RECOMPUTE_COUNT_);
  in->recompute_modules = fuzz_byte(r) & ((1u << LLMEM_RECOMPUTE_MODULE_COUNT_) - 1);
  if (in->recompute == LLMEM_RECOMPUTE_FULL) in->recompute_layers = PICK(r, NAN, NAN, 1, 2);
  in->dropout = PICK(r, 0, 0, 0.1);
  in->attention = fuzz_pick(r, LLMEM_ATTENTION_COUNT_);
  in->loss = fuzz_pick(r, LLMEM_LOSS_COUNT_);
  in->loss_chunks = PICK(r, 8, 1, 3);
  in->activation_offload = fuzz_pick(r, 6) == 0;
  in->ft_method = PICK(r, LLMEM_FT_FULL, LLMEM_FT_FULL, LLMEM_FT_LORA, LLMEM_FT_QLORA);
  if (in->ft_method != LLMEM_FT_FULL) {
    in->lora_rank = PICK(r, 4, 16, 64);
    in->lora_targets = 1 + fuzz_pick(r, 127);
    in->lora_dropout = PICK(r, 0, 0.05);
    in->adapter_dtype = fuzz_pick(r, LLMEM_DTYPE_COUNT_);
    in->base_dtype = PICK(r, NAN, LLMEM_DTYPE_BF16, LLMEM_DTYPE_FP16);
    in->quant = fuzz_pick(r, LLMEM_QUANT_COUNT_);
    in->double_quant = coin(r);
  }
}

/* engine-specific sharding and offload, mostly within what each engine allows */
static void decode_engine(fuzz_reader *r, llmem_input *in, double dp) {
  int e = (int)in->engine;
  if (e == LLMEM_ENGINE_DEEPSPEED || e == LLMEM_ENGINE_MEGATRON_DEEPSPEED) {
    in->zero_stage = in->pp > 1 ? fuzz_pick(r, 2) : fuzz_pick(r, 4);
    if (in->zero_stage >= 1 && coin(r)) in->offload_optimizer = PICK(r, LLMEM_OFFLOAD_CPU, LLMEM_OFFLOAD_NVME);
    if (in->zero_stage == 3 && coin(r)) in->offload_params = PICK(r, LLMEM_OFFLOAD_CPU, LLMEM_OFFLOAD_NVME);
    in->zero_init = coin(r);
    in->overlap_comm = PICK(r, NAN, 0, 1);
    in->reduce_bucket_size = PICK(r, 5e8, 1e6, 2e9);
    in->allgather_bucket_size = PICK(r, 5e8, 1e6, 2e9);
    in->stage3_prefetch_bucket_size = PICK(r, 5e7, 0, 1e9);
    in->stage3_max_live_parameters = PICK(r, 1e9, 0, 1e6);
    in->stage3_param_persistence_threshold = PICK(r, 1e5, 0, 1e8);
  } else if (e == LLMEM_ENGINE_FSDP1 || e == LLMEM_ENGINE_FSDP2) {
    in->fsdp_strategy = fuzz_pick(r, LLMEM_FSDP_STRATEGY_COUNT_);
    if (in->fsdp_strategy == LLMEM_FSDP_HYBRID_SHARD) in->fsdp_shard_size = PICK(r, NAN, 1, 2, dp);
    in->reshard_after_forward = coin(r);
    in->shard_root_modules = PICK(r, NAN, 0, 1);
    if (fuzz_pick(r, 4) == 0) in->offload_optimizer = in->offload_params = LLMEM_OFFLOAD_CPU;
    in->shard_with_cp = coin(r);
    in->fp8_all_gather = fuzz_pick(r, 4) == 0;
  } else if (e == LLMEM_ENGINE_MEGATRON) {
    in->distributed_optimizer = coin(r);
    if (in->distributed_optimizer && fuzz_pick(r, 4) == 0) in->offload_optimizer = LLMEM_OFFLOAD_CPU;
    in->grad_as_bucket_view = coin(r);
    in->overlap_comm = PICK(r, NAN, 0, 1);
  }
  in->sequence_parallel = coin(r);
}

void fuzz_decode_config(fuzz_reader *r, llmem_input *in) {
  llmem_defaults(in);
  in->formula = fuzz_pick(r, 8) == 0 ? fuzz_pick(r, LLMEM_FORMULA_COUNT_) : LLMEM_FORMULA_LLMEM;
  int e = (int)fuzz_pick(r, LLMEM_ENGINE_COUNT_);
  in->engine = e;
  int model_parallel = e == LLMEM_ENGINE_FSDP2 || e == LLMEM_ENGINE_MEGATRON || e == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  double dp = PICK(r, 1, 2, 4, 8), tp = 1, pp = 1, cp = 1, vpp = 1;
  if (model_parallel) {
    tp = PICK(r, 1, 1, 2, 4, 8);
    cp = PICK(r, 1, 1, 1, 2, 4);
  }
  if (model_parallel || e == LLMEM_ENGINE_DEEPSPEED) pp = PICK(r, 1, 1, 2, 3, 4, 8);
  in->pp_schedule = fuzz_pick(r, LLMEM_SCHEDULE_COUNT_);
  if (in->pp_schedule == LLMEM_PP_INTERLEAVED && pp > 1) vpp = PICK(r, 1, 2, 2, 3, 4);
  if (e == LLMEM_ENGINE_SINGLE) dp = 1;
  in->tp = tp;
  in->pp = pp;
  in->cp = cp;
  in->vpp = vpp;
  in->gpus = dp * tp * pp * cp;
  in->gpus_per_node = PICK(r, 8, 8, 2, 4);
  decode_model(r, in, tp, pp, vpp);
  decode_moe(r, in, tp, in->gpus / pp);
  decode_training(r, in, tp, pp, cp);
  decode_engine(r, in, dp);
  /* small GPUs and no runtime overheads put the small models near capacity,
   * where the planner's fit decisions are made */
  in->memory_gib = PICK(r, 80, 80, 0.25, 0.5, 1, 2, 4, 8, 16, 24, 40, 141, 192);
  in->allocator_reserve = PICK(r, NAN, NAN, 0, 5);
  in->cuda_context_mib = PICK(r, NAN, 0, 0, 500);
  in->cublas_workspace_mib = PICK(r, NAN, 0, 0);
  in->nccl_buffer_mib = PICK(r, NAN, 0, 0);
  in->expandable_segments = coin(r);
  in->torch_compile = coin(r);
  if (fuzz_pick(r, 6) == 0) { /* an RL step (core/rl.c): no pipeline parallelism */
    in->pp = 1, in->vpp = 1;
    in->gpus = dp * tp * cp;
    in->rl_algorithm = 1 + fuzz_pick(r, LLMEM_RL_ALGORITHM_COUNT_ - 1);
    in->rl_group_size = PICK(r, 1, 2, 8);
    in->rl_prompt_len = PICK(r, 64, 512);
    in->rl_response_len = PICK(r, 64, 1024);
    in->rl_rollout_batch = dp * in->micro_batch * PICK(r, 1, 2);
    in->rl_rollout_tp = tp;
    in->rl_gpu_memory_utilization = PICK(r, 0.3, 0.5, 0.9);
    in->rl_sleep = fuzz_pick(r, LLMEM_RL_SLEEP_COUNT_);
    in->rl_actor_param_offload = coin(r);
    in->rl_actor_optimizer_offload = coin(r);
    in->rl_ref_enabled = coin(r);
    in->rl_reward_enabled = coin(r);
    in->rl_weight_sync = coin(r);
    in->rl_entropy = coin(r);
    in->rl_remove_padding = coin(r);
    in->rl_placement = fuzz_pick(r, 4) == 0;
    in->rl_engine = coin(r);
    in->rl_own_process = coin(r);
  }
  unsigned b = fuzz_byte(r);
  unsigned overrides = b < 160 ? 0 : 1 + b % 3;
  for (unsigned i = 0; i < overrides; i++) raw_override(r, in);
}

/* ---- oracles ---- */

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-3; }
static int finite_nonneg(double v, double scale) { return isfinite(v) && v >= -1e-9 * fmax(scale, 1); }

static const char *check_rank(const llmem_rank_result *r, int rank_count) {
  double peak = r->peak_allocated_bytes, sum = 0;
  if (!finite_nonneg(peak, peak)) return "rank: peak_allocated_bytes is negative or not finite";
  for (int c = 0; c < LLMEM_CAT_COUNT; c++) {
    if (!isfinite(r->breakdown_bytes[c])) return "rank: a breakdown category is not finite";
    if (!finite_nonneg(r->breakdown_bytes[c], peak)) return "rank: a breakdown category is negative at the peak";
    sum += r->breakdown_bytes[c];
  }
  if (!close_to(sum, peak)) return "rank: breakdown_bytes do not sum to peak_allocated_bytes";
  if (!isfinite(r->peak_reserved_bytes) || !isfinite(r->device_used_bytes))
    return "rank: reserved or device_used not finite";
  if (r->peak_reserved_bytes < peak - 1e-9 * peak) return "rank: peak_reserved_bytes < peak_allocated_bytes";
  if (r->device_used_bytes < r->peak_reserved_bytes - 1e-9 * peak)
    return "rank: device_used_bytes < peak_reserved_bytes";
  if (!finite_nonneg(r->persistent_bytes, peak)) return "rank: persistent_bytes negative or not finite";
  if (r->persistent_bytes > peak + 1e-9 * peak + 1e-3) return "rank: persistent_bytes exceed the peak";
  if (!finite_nonneg(r->params_count, 0) || !finite_nonneg(r->layers_count, 0))
    return "rank: params or layers count negative";
  if (r->peak_phase < 0 || r->peak_phase >= LLMEM_PHASE_COUNT) return "rank: peak_phase out of range";
  if (r->peak_micro_batch < -1 || r->peak_layer < LLMEM_LAYER_EMBEDDING)
    return "rank: peak_micro_batch below -1 or peak_layer below LLMEM_LAYER_EMBEDDING";
  if (r->stage < 0 || r->stage >= (rank_count > 0 ? rank_count : 1)) return "rank: stage out of range";
  return NULL;
}

static const char *check_events(const llmem_result *out) {
  const llmem_rank_result *p = &out->per_gpu;
  if (out->event_count < 1 || out->event_count > LLMEM_MAX_EVENTS) return "timeline: event_count out of range";
  if (out->event_stride < 1) return "timeline: event_stride < 1";
  double top = -INFINITY;
  for (int i = 0; i < out->event_count; i++) {
    const llmem_event *ev = &out->events[i];
    double sum = 0;
    if (!isfinite(ev->total_bytes)) return "timeline: total_bytes not finite";
    for (int c = 0; c < LLMEM_CAT_COUNT; c++) {
      if (!isfinite(ev->category_bytes[c])) return "timeline: a category is not finite";
      if (!finite_nonneg(ev->category_bytes[c], p->peak_allocated_bytes))
        return "timeline: a category is negative at an event";
      sum += ev->category_bytes[c];
    }
    if (!close_to(sum, ev->total_bytes)) return "timeline: categories do not sum to total_bytes";
    if (ev->phase < 0 || ev->phase >= LLMEM_PHASE_COUNT) return "timeline: phase out of range";
    if (ev->micro_batch < -1 || ev->layer < LLMEM_LAYER_EMBEDDING)
      return "timeline: micro_batch below -1 or layer below LLMEM_LAYER_EMBEDDING";
    if (ev->total_bytes > top) top = ev->total_bytes;
  }
  if (!close_to(top, p->peak_allocated_bytes)) return "timeline: the peak is not the maximum of the timeline";
  return NULL;
}

static const char *check_terms(const llmem_result *out, int complete) {
  const llmem_rank_result *p = &out->per_gpu;
  double by_cat[LLMEM_CAT_COUNT] = {0}, runtime = 0;
  if (out->term_count < 0 || out->term_count > LLMEM_TERM_COUNT) return "terms: term_count out of range";
  for (int i = 0; i < out->term_count; i++) {
    const llmem_term *t = &out->terms[i];
    if (t->id < 0 || t->id >= LLMEM_TERM_COUNT) return "terms: id out of range";
    if (t->category < -1 || t->category >= LLMEM_CAT_COUNT) return "terms: category out of range";
    if (!finite_nonneg(t->value_bytes, p->device_used_bytes)) return "terms: a term is negative or not finite";
    for (int k = 0; k < 4; k++)
      if (!isfinite(t->inputs[k])) return "terms: an input is not finite";
    if (t->category >= 0) by_cat[t->category] += t->value_bytes;
    else runtime += t->value_bytes;
  }
  if (!complete) return NULL;
  for (int c = 0; c < LLMEM_CAT_COUNT; c++)
    if (!close_to(by_cat[c], p->breakdown_bytes[c]))
      return "terms: a category's terms do not sum to its breakdown value";
  if (!close_to(runtime, p->device_used_bytes - p->peak_allocated_bytes))
    return "terms: the runtime terms do not sum to device_used - peak_allocated";
  return NULL;
}

const char *fuzz_check_estimate(const llmem_input *in, llmem_status st, const llmem_result *out) {
  if ((int)st < 0 || st >= LLMEM_STATUS_COUNT) return "status out of the list";
  if (out->status != st) return "result.status differs from the returned status";
  if (st != LLMEM_OK) {
    if (out->error_message[0] == 0) return "error without a message";
    if (out->error_field < -1 || out->error_field >= LLMEM_FIELD_COUNT) return "error_field out of range";
    return NULL;
  }
  int llmem = in->formula == LLMEM_FORMULA_LLMEM;
  const char *why = check_rank(&out->per_gpu, out->rank_count);
  if (why) return why;
  if (llmem) {
    if (out->rank_count != (int)in->pp) return "rank_count differs from parallel.pp";
    double worst = 0;
    for (int s = 0; s < out->rank_count; s++) {
      if ((why = check_rank(&out->ranks[s], out->rank_count))) return why;
      if (out->ranks[s].stage != s) return "ranks[s].stage != s";
      worst = fmax(worst, out->ranks[s].device_used_bytes);
    }
    const llmem_rank_result *w = &out->ranks[out->per_gpu.stage];
    if (!close_to(out->per_gpu.device_used_bytes, worst)) return "per_gpu is not the most-loaded rank";
    if (!close_to(w->peak_allocated_bytes, out->per_gpu.peak_allocated_bytes) ||
        !close_to(w->peak_reserved_bytes, out->per_gpu.peak_reserved_bytes))
      return "per_gpu differs from its stage's rank result";
    for (int c = 0; c < LLMEM_CAT_COUNT; c++)
      if (!close_to(w->breakdown_bytes[c], out->per_gpu.breakdown_bytes[c]))
        return "per_gpu breakdown differs from its stage's";
    if ((why = check_events(out))) return why;
  }
  int partial = 0;
  for (int i = 0; i < out->warning_count; i++) {
    if (out->warnings[i] < 0 || out->warnings[i] >= LLMEM_WARNING_COUNT) return "warning out of range";
    partial |= out->warnings[i] == LLMEM_WARN_COMPAT_PARTIAL;
  }
  if (out->warning_count < 0 || out->warning_count > LLMEM_MAX_WARNINGS) return "warning_count out of range";
  if ((why = check_terms(out, llmem && !partial))) return why;
  if (!finite_nonneg(out->params_total, 0) || !finite_nonneg(out->params_active, 0) ||
      !finite_nonneg(out->params_trainable, 0) || !finite_nonneg(out->params_per_gpu, 0))
    return "a parameter count is negative or not finite";
  if (out->params_active > out->params_total * (1 + 1e-12)) return "active parameters exceed the total";
  /* LoRA adapters are trainable but not part of the model's total */
  if (in->ft_method == LLMEM_FT_FULL && out->params_trainable > out->params_total * (1 + 1e-12))
    return "trainable parameters exceed the total (full fine-tuning)";
  if (!finite_nonneg(out->host_cpu_bytes, 0) || !finite_nonneg(out->host_nvme_bytes, 0))
    return "host bytes negative or not finite";
  if (!(out->capacity_bytes > 0) || !isfinite(out->capacity_bytes)) return "capacity_bytes not positive";
  if (!close_to(out->utilization * out->capacity_bytes, out->per_gpu.device_used_bytes))
    return "utilization != device_used / capacity";
  if (out->fits != (out->per_gpu.device_used_bytes <= out->capacity_bytes))
    return "fits disagrees with device_used <= capacity";
  return NULL;
}

const char *fuzz_check_readings(const llmem_readings *r) {
  if ((int)r->status < 0 || r->status >= LLMEM_STATUS_COUNT) return "readings: status out of the list";
  if (r->status != LLMEM_OK) return NULL;
  double a = r->peak_allocated_bytes;
  if (!finite_nonneg(a, a) || !isfinite(r->peak_reserved_bytes) || !isfinite(r->device_used_bytes))
    return "readings: negative or not finite";
  if (r->peak_reserved_bytes < a - 1e-9 * a || r->device_used_bytes < r->peak_reserved_bytes - 1e-9 * a)
    return "readings: not allocated <= reserved <= device_used";
  if (!(r->capacity_bytes > 0)) return "readings: capacity not positive";
  if (r->fits != (r->device_used_bytes <= r->capacity_bytes))
    return "readings: fits disagrees with device_used <= capacity";
  return NULL;
}

/* ---- reproducer ---- */

static void print_value(FILE *f, const llmem_field *fd, double v) {
  if (isnan(v)) {
    fputs("null", f);
    return;
  }
  if (isinf(v)) {
    fputs(v > 0 ? "1e999" : "-1e999", f);
    return;
  }
  int whole = v == floor(v) && v >= 0;
  if (fd->kind == LLMEM_KIND_BOOL && (v == 0 || v == 1)) {
    fputs(v ? "true" : "false", f);
    return;
  }
  if (fd->kind == LLMEM_KIND_ENUM && whole && v < fd->value_count) {
    fprintf(f, "\"%s\"", fd->values[(int)v]);
    return;
  }
  if (fd->kind == LLMEM_KIND_SET && whole && v < (double)(1u << fd->value_count)) {
    fputc('[', f);
    for (int i = 0, n = 0; i < fd->value_count; i++)
      if (((unsigned)v >> i) & 1) fprintf(f, "%s\"%s\"", n++ ? ", " : "", fd->values[i]);
    fputc(']', f);
    return;
  }
  fprintf(f, "%.17g", v);
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

void fuzz_print_config(FILE *f, const llmem_input *in) {
  llmem_input def;
  llmem_defaults(&def);
  char open[8][48];
  int depth = 0, first[9] = {1};
  fputc('{', f);
  for (int i = 0; i < LLMEM_FIELD_COUNT; i++) {
    const llmem_field *fd = llmem_field_at(i);
    if (fd->kind == LLMEM_KIND_GROUP || fd->kind == LLMEM_KIND_TEXT || same(SLOT(in, i), SLOT(&def, i))) continue;
    char parts[8][48];
    int n = 0;
    for (const char *s = fd->path; *s && n < 8; n++) {
      size_t k = 0;
      while (*s && *s != '.' && k < 47) parts[n][k++] = *s++;
      parts[n][k] = 0;
      if (*s == '.') s++;
    }
    int keep = 0;
    while (keep < depth && keep < n - 1 && strcmp(open[keep], parts[keep]) == 0) keep++;
    while (depth > keep) {
      fputc('}', f);
      depth--;
    }
    for (; depth < n - 1; depth++) {
      fprintf(f, "%s\"%s\": {", first[depth] ? "" : ", ", parts[depth]);
      first[depth] = 0;
      strcpy(open[depth], parts[depth]);
      first[depth + 1] = 1;
    }
    fprintf(f, "%s\"%s\": ", first[depth] ? "" : ", ", parts[n - 1]);
    first[depth] = 0;
    print_value(f, fd, SLOT(in, i));
  }
  while (depth > 0) {
    fputc('}', f);
    depth--;
  }
  fputs("}\n", f);
}

/* LLMEM_FUZZ_IGNORE="text1|text2": failures whose message contains one of
 * these are let through (triage: look past a known bug for the next one) */
static int ignored(const char *what) {
  const char *list = getenv("LLMEM_FUZZ_IGNORE");
  char item[128];
  while (list && *list) {
    size_t n = 0;
    while (list[n] && list[n] != '|') n++;
    if (n > 0 && n < sizeof item) {
      memcpy(item, list, n);
      item[n] = 0;
      if (strstr(what, item)) return 1;
    }
    list += list[n] ? n + 1 : n;
  }
  return 0;
}

void fuzz_trace(const char *target, const char *entry, const llmem_input *in) {
  if (!getenv("LLMEM_FUZZ_TRACE")) return;
  fprintf(stderr, "==llmem-input== %s %s: ", target, entry);
  fuzz_print_config(stderr, in);
  fflush(stderr);
}

void fuzz_fail(const char *target, const char *what, const llmem_input *in) {
  if (ignored(what)) return;
  fprintf(stderr, "\n==llmem-oracle== %s: %s\nreproducer config: ", target, what);
  fuzz_print_config(stderr, in);
  fflush(stderr);
  abort();
}
