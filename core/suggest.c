/* "Make it fit": single changes and small combinations of them (recompute,
 * micro-batch, sharding, TP / PP / CP / EP, offload, optimizer precision,
 * loss, LoRA / QLoRA, a shorter sequence, the fewest GPUs), each verified
 * by its own full llmem_estimate and kept only when it leaves the free
 * fraction free, ranked by the step-time model. Search logic only: every
 * memory figure comes from llmem_estimate. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

#define SLOT(in, field) (*input_slot((in), (field)))
#define VALUE(in, field) input_value((in), (field))
#define MAX_SINGLES 64
#define MAX_GPU_STEPS 16
#define MIN_SEQ 512 /* a shorter sequence is suggested down to this (or half the base's) */

void llmem_suggest_defaults(llmem_suggest_options *opt) {
  if (!opt) return;
  opt->free_fraction = 0.10;
  opt->max_gpus = 4096;
}

/* What a single change acts on: pairs combine the best of different families. */
enum {
  FAM_RECOMPUTE,
  FAM_MICRO_BATCH,
  FAM_SHARDING,
  FAM_TP,
  FAM_PP,
  FAM_CP,
  FAM_EP,
  FAM_OFFLOAD,
  FAM_ACT_OFFLOAD,
  FAM_PRECISION,
  FAM_LOSS,
  FAM_METHOD,
  FAM_RL_SLEEP,
  FAM_RL_SHARE,
  FAM_RL_LOGPROB,
  FAM_RL_PARK,
  FAM_ALLOCATOR,
  FAM_SYNC,
  FAM_ZERO_GRAD,
  FAM_COUNT
};

/* A single change, as tried: its input, kind, family and device memory (NaN: invalid). */
typedef struct {
  llmem_input in;
  int kind, family;
  double used;
} single;

typedef struct {
  const llmem_input *base;
  double free_fraction;
  llmem_suggest_result *out;
  single singles[MAX_SINGLES];
  int single_count;
  int accumulating_no_sync; /* the base's FSDP accumulates under no_sync (its key, else its stack's profile) */
  int zeroing_in_place;     /* the base's torch gradients live between steps (training.zero_grad_in_place) */
} ctx;

static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }
static int fits_in(const ctx *c, double used, double capacity) { return used <= capacity * (1 - c->free_fraction); }

/* The changes from the base to `in`, in field order; 0 when none or too many. No suggestion
 * changes a list key (model.layer_types, mlp_types): its first slot stands for it here. */
static int diff_of(const llmem_input *base, const llmem_input *in, llmem_suggestion *s) {
  s->change_count = 0;
  for (int f = 0; f < LLMEM_FIELD_COUNT; f++) {
    if (same_value(VALUE(base, f), VALUE(in, f))) continue;
    if (s->change_count == LLMEM_MAX_CHANGES) return 0;
    s->fields[s->change_count] = f;
    s->values[s->change_count++] = VALUE(in, f);
  }
  return s->change_count > 0;
}

static int same_changes(const llmem_suggestion *a, const llmem_suggestion *b) {
  if (a->change_count != b->change_count) return 0;
  for (int i = 0; i < a->change_count; i++)
    if (a->fields[i] != b->fields[i] || !same_value(a->values[i], b->values[i])) return 0;
  return 1;
}

/* The ranking: changes that keep the training first, then lower-precision
 * optimizer states, another method, another workload, other GPU counts
 * (the kinds' order); within a kind, the time per token relative to the base. */
static double rank_of(const llmem_suggestion *s) { return s->kind * 1e6 + s->time_ratio; }

static double tokens_per_step(const llmem_input *in) {
  return in->micro_batch * in->grad_accum * in->gpus / (in->tp * in->pp * in->cp) * in->seq_len;
}

/* Insert by rank (the best LLMEM_MAX_SUGGESTIONS); returns the index or -1. */
static int keep(llmem_suggest_result *out, const llmem_suggestion *s) {
  for (int i = 0; i < out->count; i++)
    if (same_changes(&out->suggestions[i], s)) return i;
  int n = out->count;
  if (n == LLMEM_MAX_SUGGESTIONS && rank_of(s) >= rank_of(&out->suggestions[n - 1])) return -1;
  int i = n < LLMEM_MAX_SUGGESTIONS ? n : n - 1;
  while (i > 0 && rank_of(&out->suggestions[i - 1]) > rank_of(s)) {
    out->suggestions[i] = out->suggestions[i - 1];
    i--;
  }
  out->suggestions[i] = *s;
  if (n < LLMEM_MAX_SUGGESTIONS) out->count++;
  return i;
}

/* The full estimate of a fitting candidate: kept when it fits there too. */
static int verify(ctx *c, const llmem_input *in, int kind) {
  llmem_suggestion s;
  memset(&s, 0, sizeof s);
  if (!diff_of(c->base, in, &s)) return -1;
  llmem_result *r = &c->out->work;
  if (llmem_estimate(in, r) != LLMEM_OK || !fits_in(c, r->per_gpu.device_used_bytes, r->capacity_bytes)) return -1;
  llmem_step_result step;
  if (llmem_step_time(in, &step) != LLMEM_OK) return -1;
  s.step_seconds = step.step_seconds;
  s.kind = kind;
  s.peak_allocated_bytes = r->peak_allocated_bytes;
  s.peak_reserved_bytes = r->per_gpu.peak_reserved_bytes;
  s.device_used_bytes = r->per_gpu.device_used_bytes;
  s.host_cpu_bytes = r->host_cpu_bytes;
  s.host_nvme_bytes = r->host_nvme_bytes;
  s.host_cpu_bytes_per_node = r->host_cpu_bytes * fmin(in->gpus, in->gpus_per_node);
  s.gpus = in->gpus;
  s.time_ratio = (s.step_seconds / tokens_per_step(in)) / (c->out->base_step_seconds / tokens_per_step(c->base));
  /* a run that fits already: a change on its GPUs that saves no memory and no time is no answer (a chunked
   * loss for a classification head, say); fewer GPUs are one by themselves */
  if (c->out->base_fits && kind != LLMEM_SUGGEST_GPUS && s.device_used_bytes >= c->out->base_device_used_bytes &&
      s.time_ratio >= 1)
    return -1;
  return keep(c->out, &s);
}

static int fits_readings(ctx *c, const llmem_input *in, double *used) {
  llmem_readings r;
  c->out->candidates++;
  *used = NAN;
  if (estimate_readings(in, 1, 1, &r, 0, 0) != LLMEM_OK) return 0;
  *used = r.device_used_bytes;
  return fits_in(c, r.device_used_bytes, r.capacity_bytes);
}

/* The fewest recomputed layers (full recompute) that still fit: fewer recompute less. */
static void fewest_recomputed_layers(ctx *c, const llmem_input *in, int kind) {
  plan pl;
  int field;
  const char *detail;
  if (plan_build(in, &pl, &field, &detail) != LLMEM_OK) return;
  llmem_input t = *in;
  double lo = 0, hi = floor(pl.layers / pl.in->pp), used; /* invariant: hi fits, lo does not */
  t.recompute_layers = hi;
  if (!fits_readings(c, &t, &used)) return;
  while (hi - lo > 1) {
    t.recompute_layers = floor((lo + hi) / 2);
    if (fits_readings(c, &t, &used)) hi = t.recompute_layers;
    else lo = t.recompute_layers;
  }
  if (hi < floor(pl.layers / pl.in->pp)) {
    t.recompute_layers = hi;
    verify(c, &t, kind);
  }
}

/* Estimate one changed input; a fitting one is verified and kept. Returns its device memory (NaN: invalid). */
static double try_input(ctx *c, const llmem_input *in, int kind) {
  double used;
  if (!fits_readings(c, in, &used)) return used;
  verify(c, in, kind);
  if (in->recompute == LLMEM_RECOMPUTE_FULL && isnan(in->recompute_layers) &&
      c->base->recompute != LLMEM_RECOMPUTE_FULL)
    fewest_recomputed_layers(c, in, kind);
  return used;
}

static void add_single(ctx *c, const llmem_input *in, int kind, int family) {
  llmem_suggestion s;
  llmem_input t = *in;
  /* an RL step's accumulation follows rl.mini_batch: a change never states one */
  if (c->base->rl_algorithm != LLMEM_RL_NONE) t.grad_accum = c->base->grad_accum;
  if (c->single_count == MAX_SINGLES || !diff_of(c->base, &t, &s)) return;
  in = &t;
  single *x = &c->singles[c->single_count++];
  x->in = *in;
  x->kind = kind;
  x->family = family;
  x->used = try_input(c, in, kind);
}

static void add_value(ctx *c, int field, double value, int kind, int family) {
  llmem_input in = *c->base;
  SLOT(&in, field) = value;
  if (field == FIELD(recompute)) in.recompute_layers = NAN;
  add_single(c, &in, kind, family);
}

/* The global batch of the base kept on a new data-parallel size: the largest
 * micro-batch (a divisor of the base's) that splits it. 0 when none does. */
static int keep_global_batch(const llmem_input *base, llmem_input *in) {
  double dp0 = base->gpus / (base->tp * base->pp * base->cp), dp = in->gpus / (in->tp * in->pp * in->cp);
  double batch = base->micro_batch * base->grad_accum * dp0;
  if (dp != floor(dp) || dp < 1) return 0;
  for (double mb = base->micro_batch; mb >= 1; mb--) {
    if (fmod(base->micro_batch, mb) != 0 || fmod(batch, dp * mb) != 0) continue;
    in->micro_batch = mb;
    in->grad_accum = batch / (dp * mb);
    return 1;
  }
  return 0;
}

static void model_parallel_singles(ctx *c) {
  const llmem_input *b = c->base;
  for (double n = 2; n <= b->gpus; n *= 2) {
    llmem_input in = *b;
    in.tp = b->tp * n;
    in.sequence_parallel = 1;
    if (keep_global_batch(b, &in)) add_single(c, &in, LLMEM_SUGGEST_SAME, FAM_TP);
    in = *b;
    in.pp = b->pp * n;
    in.vpp = 1;
    if (in.pp_schedule == LLMEM_PP_INTERLEAVED) in.pp_schedule = LLMEM_PP_1F1B;
    if (in.pp_schedule == LLMEM_PP_ZB_V || in.pp_schedule == LLMEM_PP_DUALPIPE_V || in.pp_schedule == LLMEM_PP_DUALPIPE)
      in.vpp = 2; /* two chunks per rank: the V's, DualPipe's two copies */
    if (keep_global_batch(b, &in)) add_single(c, &in, LLMEM_SUGGEST_SAME, FAM_PP);
    in = *b;
    in.cp = b->cp * n;
    if (keep_global_batch(b, &in)) add_single(c, &in, LLMEM_SUGGEST_SAME, FAM_CP);
    in = *b;
    in.ep = b->ep * n; /* expert parallelism splits the experts over the data-parallel ranks */
    if (b->moe_experts > 0) add_single(c, &in, LLMEM_SUGGEST_SAME, FAM_EP);
  }
}

static void micro_batch_singles(ctx *c) {
  const llmem_input *b = c->base;
  for (double mb = b->micro_batch - 1; mb >= 1; mb--) {
    if (fmod(b->micro_batch, mb) != 0) continue;
    llmem_input in = *b;
    in.micro_batch = mb;
    in.grad_accum = b->grad_accum * (b->micro_batch / mb);
    add_single(c, &in, LLMEM_SUGGEST_SAME, FAM_MICRO_BATCH);
  }
}

static void offload_singles(ctx *c) {
  static const int pairs[][2] = {{LLMEM_OFFLOAD_CPU, LLMEM_OFFLOAD_NONE},
                                 {LLMEM_OFFLOAD_NVME, LLMEM_OFFLOAD_NONE},
                                 {LLMEM_OFFLOAD_CPU, LLMEM_OFFLOAD_CPU},
                                 {LLMEM_OFFLOAD_NVME, LLMEM_OFFLOAD_NVME},
                                 {LLMEM_OFFLOAD_NONE, LLMEM_OFFLOAD_CPU}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    llmem_input in = *c->base;
    if (pairs[i][0] != LLMEM_OFFLOAD_NONE) in.offload_optimizer = pairs[i][0];
    if (pairs[i][1] != LLMEM_OFFLOAD_NONE) in.offload_params = pairs[i][1];
    add_single(c, &in, LLMEM_SUGGEST_SAME, FAM_OFFLOAD);
  }
  add_value(c, FIELD(activation_offload), 1, LLMEM_SUGGEST_SAME, FAM_ACT_OFFLOAD);
}

/* An RL step's own levers (core/rl.c, docs/memory-model.md §16), each the same training: the
 * engine sleeping after the rollout (vLLM sleep mode), a smaller engine share (a smaller KV
 * cache: fewer sequences decode at once), smaller log-prob micro-batches and logits of the
 * response only (TRL logits_to_keep), and models parked on the host between phases (verl
 * param_offload / optimizer_offload). Tried first: the singles' table is bounded. */
static void rl_singles(ctx *c) {
  const llmem_input *b = c->base;
  if (b->rl_algorithm == LLMEM_RL_NONE) return;
  for (int v = LLMEM_RL_SLEEP_LEVEL1; v <= LLMEM_RL_SLEEP_LEVEL2; v++)
    add_value(c, FIELD(rl_sleep), v, LLMEM_SUGGEST_SAME, FAM_RL_SLEEP);
  for (int tenths = 8; tenths >= 2; tenths -= 2)
    if (tenths / 10.0 < b->rl_gpu_memory_utilization)
      add_value(c, FIELD(rl_gpu_memory_utilization), tenths / 10.0, LLMEM_SUGGEST_SAME, FAM_RL_SHARE);
  double logprob = isnan(b->rl_logprob_micro_batch) ? b->micro_batch : b->rl_logprob_micro_batch;
  for (double m = floor(logprob / 2); m >= 1; m = floor(m / 2))
    add_value(c, FIELD(rl_logprob_micro_batch), m, LLMEM_SUGGEST_SAME, FAM_RL_LOGPROB);
  add_value(c, FIELD(rl_logits_response_only), 1, LLMEM_SUGGEST_SAME, FAM_RL_LOGPROB);
  add_value(c, FIELD(rl_ref_param_offload), 1, LLMEM_SUGGEST_SAME, FAM_RL_PARK);
  add_value(c, FIELD(rl_actor_param_offload), 1, LLMEM_SUGGEST_SAME, FAM_RL_PARK);
  add_value(c, FIELD(rl_actor_optimizer_offload), 1, LLMEM_SUGGEST_SAME, FAM_RL_PARK);
  if (b->rl_algorithm == LLMEM_RL_PPO) {
    add_value(c, FIELD(rl_critic_param_offload), 1, LLMEM_SUGGEST_SAME, FAM_RL_PARK);
    add_value(c, FIELD(rl_critic_optimizer_offload), 1, LLMEM_SUGGEST_SAME, FAM_RL_PARK);
  }
}

static void singles(ctx *c) {
  const llmem_input *b = c->base;
  rl_singles(c);
  for (int v = LLMEM_RECOMPUTE_SELECTIVE; v <= LLMEM_RECOMPUTE_FULL; v++)
    add_value(c, FIELD(recompute), v, LLMEM_SUGGEST_SAME, FAM_RECOMPUTE);
  micro_batch_singles(c);
  for (int z = 1; z <= 3; z++) add_value(c, FIELD(zero_stage), z, LLMEM_SUGGEST_SAME, FAM_SHARDING);
  add_value(c, FIELD(fsdp_strategy), LLMEM_FSDP_FULL_SHARD, LLMEM_SUGGEST_SAME, FAM_SHARDING);
  add_value(c, FIELD(reshard_after_forward), 1, LLMEM_SUGGEST_SAME, FAM_SHARDING);
  add_value(c, FIELD(distributed_optimizer), 1, LLMEM_SUGGEST_SAME, FAM_SHARDING);
  model_parallel_singles(c);
  offload_singles(c);
  if (b->optimizer == LLMEM_OPT_ADAMW || b->optimizer == LLMEM_OPT_ADAM)
    add_value(c, FIELD(optimizer), LLMEM_OPT_ADAMW_8BIT, LLMEM_SUGGEST_NUMERICS, FAM_PRECISION);
  add_value(c, FIELD(optimizer_dtype), LLMEM_DTYPE_BF16, LLMEM_SUGGEST_NUMERICS, FAM_PRECISION);
  add_value(c, FIELD(loss), LLMEM_LOSS_CHUNKED, LLMEM_SUGGEST_SAME, FAM_LOSS);
  add_value(c, FIELD(loss), LLMEM_LOSS_FUSED, LLMEM_SUGGEST_SAME, FAM_LOSS);
  /* the caching allocator's segments grown in place instead of cut apart (PYTORCH_CUDA_ALLOC_CONF=
   * expandable_segments:True, what PyTorch's own out-of-memory message proposes when reserved memory sits
   * unallocated: c10/cuda/CUDACachingAllocator.cpp): the cache beside the tensors, not the tensors, shrinks */
  add_value(c, FIELD(expandable_segments), 1, LLMEM_SUGGEST_SAME, FAM_ALLOCATOR);
  /* FSDP accumulating under no_sync (states.c): a reduce-scatter every micro-batch instead keeps the gradients
   * sharded (accelerate's GradientAccumulationPlugin(sync_each_batch=True), TrainingArguments accelerator_config) */
  if ((b->engine == LLMEM_ENGINE_FSDP1 || b->engine == LLMEM_ENGINE_FSDP2) && c->accumulating_no_sync)
    add_value(c, FIELD(accumulate_no_sync), 0, LLMEM_SUGGEST_SAME, FAM_SYNC);
  /* PyTorch < 2.0's zero_grad keeps every gradient, zeroed, through the next forward (states.c): passing
   * set_to_none=True (2.0's default, pytorch #92731) frees them at each step, the training the same */
  if (c->zeroing_in_place) add_value(c, FIELD(zero_grad_in_place), 0, LLMEM_SUGGEST_SAME, FAM_ZERO_GRAD);
  if (b->ft_method == LLMEM_FT_FULL) add_value(c, FIELD(ft_method), LLMEM_FT_LORA, LLMEM_SUGGEST_METHOD, FAM_METHOD);
  if (b->ft_method != LLMEM_FT_QLORA) add_value(c, FIELD(ft_method), LLMEM_FT_QLORA, LLMEM_SUGGEST_METHOD, FAM_METHOD);
}

/* The valid single of each family that leaves the least device memory, the least first. */
static int top_singles(const ctx *c, int *idx) {
  int best[FAM_COUNT], n = 0;
  for (int f = 0; f < FAM_COUNT; f++) best[f] = -1;
  for (int i = 0; i < c->single_count; i++) {
    const single *x = &c->singles[i];
    if (!isnan(x->used) && (best[x->family] < 0 || x->used < c->singles[best[x->family]].used)) best[x->family] = i;
  }
  for (int f = 0; f < FAM_COUNT; f++) {
    if (best[f] < 0) continue;
    int j = n++;
    while (j > 0 && c->singles[idx[j - 1]].used > c->singles[best[f]].used) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = best[f];
  }
  return n;
}

/* a and b on top of the base; 0 when they change the same key */
static int combine(const llmem_input *base, const llmem_input *a, const llmem_input *b, llmem_input *out) {
  *out = *a;
  for (int f = 0; f < LLMEM_FIELD_COUNT; f++) {
    if (same_value(VALUE(base, f), VALUE(b, f))) continue;
    if (!same_value(VALUE(base, f), VALUE(a, f))) return 0;
    SLOT(out, f) = VALUE(b, f);
  }
  return 1;
}

static int max_kind(int a, int b) { return a > b ? a : b; }

/* Pairs of the best single of each family; *best: the pair with the least memory. */
static void pairs(ctx *c, llmem_input *best, int *best_kind) {
  int idx[FAM_COUNT];
  int n = top_singles(c, idx);
  double least = INFINITY;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      const single *a = &c->singles[idx[i]], *b = &c->singles[idx[j]];
      llmem_input in;
      if (!combine(c->base, &a->in, &b->in, &in)) continue;
      int kind = max_kind(a->kind, b->kind);
      double used = try_input(c, &in, kind);
      if (used < least) {
        least = used;
        *best = in;
        *best_kind = kind;
      }
    }
}

/* The longest sequence (on the multiples that CP and SP allow) that fits with `in`'s other keys,
 * when the base's does not. */
static void shorter_sequence(ctx *c, const llmem_input *in, int kind) {
  /* an RL step's sequences are its prompts and responses: shorter responses */
  int field = in->rl_algorithm != LLMEM_RL_NONE ? FIELD(rl_response_len) : FIELD(seq_len);
  double step = 2 * in->cp * in->tp * 64, best = 0, used, now = VALUE(c->base, field);
  if (fits_readings(c, in, &used)) return; /* the full sequence fits already */
  double lo = step * ceil(min2(MIN_SEQ, now / 2) / step);
  if (!(now - step >= lo)) return;
  c->out->candidates++;
  if (llmem_largest_fit(in, field, lo, now - step, step, c->free_fraction, &best) != LLMEM_OK || best <= 0) return;
  llmem_input t = *in;
  SLOT(&t, field) = best;
  verify(c, &t, max_kind(kind, LLMEM_SUGGEST_WORKLOAD));
}

/* The fastest layouts of `gpus` at the base's global batch, kept as suggestions; the best index or -1. */
static int layouts_of(ctx *c, double gpus, int kind, int how_many) {
  const llmem_input *b = c->base;
  llmem_search_options opt;
  llmem_search_defaults(&opt);
  opt.gpus = gpus;
  opt.global_batch = b->micro_batch * b->grad_accum * (b->gpus / (b->tp * b->pp * b->cp));
  opt.free_fraction = c->free_fraction;
  llmem_search_result *found = &c->out->search;
  if (llmem_search(b, &opt, found) != LLMEM_OK) return -1;
  c->out->candidates += found->valid;
  int first = -1;
  for (int i = 0; i < found->count && i < how_many; i++) {
    llmem_input in = search_layout_input(b, gpus, &found->layouts[i]);
    if (in.tp == 1) in.sequence_parallel = b->sequence_parallel; /* no effect without TP: not a change */
    int k = verify(c, &in, kind);
    if (first < 0) first = k;
  }
  return first;
}

/* The fewest GPUs that fit at the same global batch: doubling from the base
 * count when it does not fit, halving while it does. */
static void fewest_gpus(ctx *c, double max_gpus) {
  const llmem_input *b = c->base;
  llmem_suggest_result *out = c->out;
  if (!(max_gpus >= 1)) return;
  if (out->base_fits) {
    for (double n = b->gpus / 2; n >= 1 && n == floor(n); n /= 2) {
      int k = layouts_of(c, n, LLMEM_SUGGEST_GPUS, 1);
      if (k < 0) break;
      out->fewest_gpus = n;
    }
  } else {
    double n = b->gpus * 2;
    for (int i = 0; i < MAX_GPU_STEPS && n <= max_gpus; i++, n *= 2)
      if (layouts_of(c, n, LLMEM_SUGGEST_GPUS, 1) >= 0) {
        out->fewest_gpus = n;
        break;
      }
  }
  /* the index after every insertion is done */
  for (int i = 0; i < out->count && out->fewest_gpus > 0; i++)
    if (out->suggestions[i].kind == LLMEM_SUGGEST_GPUS && out->suggestions[i].gpus == out->fewest_gpus)
      out->fewest_index = i;
}

static llmem_status suggest_options_status(const llmem_suggest_options *opt) {
  if (!(opt->free_fraction >= 0 && opt->free_fraction < 1)) return LLMEM_ERR_OPTION_FREE_FRACTION;
  if (!(opt->max_gpus >= 0 && opt->max_gpus <= 1e7)) return LLMEM_ERR_OPTION_GPUS;
  return LLMEM_OK;
}

llmem_status llmem_suggest(const llmem_input *base, const llmem_suggest_options *opt, llmem_suggest_result *out) {
  if (!base || !opt || !out) return LLMEM_ERR_NULL_ARGUMENT;
  memset(out, 0, offsetof(llmem_suggest_result, suggestions));
  out->error_field = -1;
  out->fewest_index = -1;
  out->status = suggest_options_status(opt);
  if (out->status != LLMEM_OK) return out->status;
  llmem_readings r;
  plan pl;
  llmem_status st = estimate_readings(base, 1, 1, &r, &pl, &out->error_field);
  llmem_step_result step;
  if (st == LLMEM_OK) st = llmem_step_time(base, &step);
  if (st == LLMEM_OK) out->base_step_seconds = step.step_seconds;
  if (st != LLMEM_OK) return out->status = st;
  out->error_field = -1;
  /* the accumulation as the plan resolved it (training.global_batch may set it):
   * every change below keeps or recomputes it explicitly */
  llmem_input resolved = *base;
  resolved.grad_accum = pl.grad_accum;
  base = &resolved;
  ctx c;
  memset(&c, 0, sizeof c);
  c.base = base;
  c.free_fraction = opt->free_fraction;
  c.out = out;
  c.accumulating_no_sync = pl.accumulate_no_sync && pl.grad_accum > 1;
  c.zeroing_in_place = pl.zero_grad_in_place;
  out->capacity_bytes = r.capacity_bytes;
  out->base_device_used_bytes = r.device_used_bytes;
  out->base_fits = fits_in(&c, r.device_used_bytes, r.capacity_bytes);

  singles(&c);
  llmem_input best = *base;
  int best_kind = LLMEM_SUGGEST_SAME;
  pairs(&c, &best, &best_kind);
  if (base->gpus > 1) layouts_of(&c, base->gpus, LLMEM_SUGGEST_SAME, 3);
  /* a shorter sequence: alone, after the singles that save the most, after the best pair */
  int idx[FAM_COUNT];
  int n = top_singles(&c, idx);
  shorter_sequence(&c, base, LLMEM_SUGGEST_SAME);
  for (int i = 0; i < n && i < 4; i++) shorter_sequence(&c, &c.singles[idx[i]].in, c.singles[idx[i]].kind);
  if (memcmp(&best, base, sizeof best) != 0) shorter_sequence(&c, &best, best_kind);
  fewest_gpus(&c, opt->max_gpus);
  return LLMEM_OK;
}
