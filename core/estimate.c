/* The entry point: validate, plan, lay out the ranks, simulate each stage,
 * and fill the result (or dispatch to a compat formula). */
#include <math.h>
#include <string.h>

#include "allocator.h"
#include "internal.h"
#include "result_text.h"

/* The allocator replays every request of the step (steady repeats once):
 * about 60 requests and frees per layer and pass, two steps. A step that
 * would pass ALLOCATOR_PREDICTED_OPS_MAX is not started (reserved comes from the bound). */
static void allocator_within_budget(plan *pl) {
  double passes = pl->in->pp > 1 ? pl->grad_accum : (pl->grad_accum < 4 ? pl->grad_accum : 4);
  if (2 * 60 * passes * pl->layers > ALLOCATOR_PREDICTED_OPS_MAX) pl->simulate_allocator = 0;
}

/* Where a rank peaks, in words: "backward, stage 3, micro-batch 1, layer 31" (stage only when there are
 * several). Appended at n; the new length. Shared by the training step and the RL step's updates. */
size_t peak_place_text(char *dst, size_t n, size_t cap, const llmem_rank_result *r, int rank_count) {
  n = text_append(dst, n, cap, llmem_phase_name(r->peak_phase));
  if (rank_count > 1) {
    n = text_append(dst, n, cap, ", stage ");
    n = text_append_int(dst, n, cap, r->stage);
  }
  if (r->peak_micro_batch >= 0) {
    n = text_append(dst, n, cap, ", micro-batch ");
    n = text_append_int(dst, n, cap, r->peak_micro_batch);
  }
  if (r->peak_layer >= 0) {
    n = text_append(dst, n, cap, ", layer ");
    n = text_append_int(dst, n, cap, r->peak_layer);
  } else if (r->peak_layer == LLMEM_LAYER_EMBEDDING) {
    n = text_append(dst, n, cap, ", embedding (end of the backward)");
  } else if (r->peak_phase == LLMEM_PHASE_FORWARD) {
    n = text_append(dst, n, cap, ", embedding");
  } else if (r->peak_phase == LLMEM_PHASE_BACKWARD) {
    n = text_append(dst, n, cap, ", loss and output layer");
  }
  return n;
}

static void describe_peak(llmem_result *out) {
  out->peak_at[0] = 0;
  peak_place_text(out->peak_at, 0, sizeof out->peak_at, &out->per_gpu, out->rank_count);
}

static void finish(const plan *pl, llmem_result *out) {
  out->capacity_bytes = pl->memory_bytes;
  out->utilization = out->per_gpu.device_used_bytes / pl->memory_bytes;
  out->fits = out->per_gpu.device_used_bytes <= pl->memory_bytes;
  if (!out->fits) result_add_warning(out, LLMEM_WARN_DOES_NOT_FIT);
  else if (out->utilization > 0.9) result_add_warning(out, LLMEM_WARN_NEAR_CAPACITY);
  describe_peak(out);
}

static void add_config_warnings(const plan *pl, llmem_result *out) {
  if ((int)pl->in->sequence_parallel != 0 && pl->in->tp == 1 && (int)pl->in->engine == LLMEM_ENGINE_MEGATRON)
    result_add_warning(out, LLMEM_WARN_SP_WITHOUT_TP);
  if (pl->in->pp > 1 && pl->grad_accum < pl->in->pp) result_add_warning(out, LLMEM_WARN_PP_BUBBLE);
  if (pl->fp8_linear && pl->fp8_recipe < 0) result_add_warning(out, LLMEM_WARN_FP8_APPROX);
  if (pl->fp8_recipe >= 0) result_add_warning(out, LLMEM_WARN_FP8_RECIPE);
  if (pl->capacity_factor > 0) result_add_warning(out, LLMEM_WARN_CAPACITY_DROPS);
  if ((int)pl->in->offload_optimizer == LLMEM_OFFLOAD_CPU) result_add_warning(out, LLMEM_WARN_OPT_OFFLOAD_HOST);
  if ((int)pl->in->activation_offload != 0) result_add_warning(out, LLMEM_WARN_ACT_OFFLOAD);
  if (pl->zero3_loads_whole) result_add_warning(out, LLMEM_WARN_ZERO3_LOADS_WHOLE);
  if ((int)pl->in->paged_optimizer != 0) result_add_warning(out, LLMEM_WARN_PAGED_OPTIMIZER);
}

/* A rank's parameter and layer counts, from its stage. */
void rank_counts(const stage_layout *st, llmem_rank_result *r) {
  r->params_count = st->params_count;
  r->layers_count = st->layer_count;
  for (int k = 0; k < LLMEM_LAYER_MIXER_COUNT_; k++) r->mixer_layers_count[k] = st->mixer_layer_count[k];
  r->moe_layers_count = st->moe_layer_count;
}

/* One stage without a timeline; returns the device memory it asks for with
 * paged optimizer states in full (device_used_bytes clamps them at the
 * capacity, where paged ranks tie: the demand breaks the tie). */
static double simulate_one_stage(const plan *pl, int s, stage_layout *layout, rank_states *rs, llmem_rank_result *r,
                                 timeline_sink *sink, double *host_bytes) {
  static stage_layout last_layout; /* the stage laid out before, with its states */
  static rank_states last_states;
  static plan last_plan;
  static llmem_input last_input; /* the plan reads raw keys from its input */
  if (s > 1 && last_layout.stage == s - 1 && memcmp(&last_plan, pl, sizeof *pl) == 0 &&
      memcmp(&last_input, pl->in, sizeof last_input) == 0 && layout_same_layers(pl, s, s - 1)) {
    /* the same layers make the same layout and states (states.c reads counts, not the place) */
    *layout = last_layout, *rs = last_states;
    layout->stage = s;
    layout_stage_layers(pl, s, 0, &layout->first_layer);
  } else {
    layout_stage(pl, s, layout);
    states_for_stage(pl, layout, rs);
  }
  last_layout = *layout, last_states = *rs, last_plan = *pl, last_input = *pl->in;
  r->stage = s;
  r->peak_bound = 0, r->bound_stage = 0; /* walked (ranks are reused between estimates) */
  rank_counts(layout, r);
  simulate_stage_host(pl, layout, rs, r, sink, host_bytes);
  return r->peak_reserved_bytes + runtime_device_overhead_bytes(pl) + rs->paged_bytes;
}

/* Managed (paged) optimizer states the device has no room for: they page out to host memory (CUDA unified
 * memory; bitsandbytes GlobalPageManager), where they stay while the step runs. */
static double paged_on_host_bytes(const plan *pl, const rank_states *rs, const llmem_rank_result *r) {
  double on_device = r->device_used_bytes - r->peak_reserved_bytes - runtime_device_overhead_bytes(pl);
  return rs->paged_bytes > on_device ? rs->paged_bytes - on_device : 0;
}

/* The rank that uses the most device memory; of equals, the one asking for more. */
static int more_loaded(const llmem_rank_result *r, double demand, double worst_used, double worst_demand) {
  return r->device_used_bytes > worst_used || (r->device_used_bytes == worst_used && demand > worst_demand);
}

/* The lowest middle stage below s with s's layers; -1: none. Such a stage
 * holds no more than that one: the same events, with fewer micro-batches in
 * flight (1F1B and interleaved warm-ups shrink with the stage, GPipe's does
 * not change). */
static int first_same_layers(const plan *pl, int s) {
  for (int t = 1; t < s; t++)
    if (layout_same_layers(pl, s, t)) return t;
  return -1;
}

/* Clear the header and the tail; ranks and events are written as they are used. */
static void clear_result(llmem_result *out) {
  memset(out, 0, offsetof(llmem_result, ranks));
  memset(&out->params_total, 0, offsetof(llmem_result, events) - offsetof(llmem_result, params_total));
  out->term_count = 0;
  out->error_field = -1;
}

/* A published formula in place of the simulation (core/compat.c). */
static llmem_status compat_result(const plan *pl, llmem_result *out) {
  llmem_status st = compat_estimate(pl, out);
  if (st != LLMEM_OK) {
    result_fill_error(out, st, llmem_field_index("formula"));
    return st;
  }
  out->peak_allocated_bytes = out->per_gpu.peak_allocated_bytes;
  out->peak_allocated_stage = out->per_gpu.stage;
  finish(pl, out);
  return LLMEM_OK;
}

/* The most loaded of the first `p` ranks (demand: device use with paged states in full). */
static int most_loaded_of(const llmem_rank_result *ranks, const double *demand, int p) {
  int worst = 0;
  for (int s = 1; s < p; s++)
    if (more_loaded(&ranks[s], demand[s], ranks[worst].device_used_bytes, demand[worst])) worst = s;
  return worst;
}

/* A deep pipeline's middle stages are each walked while stages x virtual
 * stages stays within this (a walk costs O(virtual stages) runs of passes);
 * beyond it, a middle stage repeating a lower one's layers and states takes
 * that stage's numbers as its bound where they bound it
 * (simulate_stage_bounds_later), and the estimate stays O(layers + stages)
 * (issue 12). */
#define STAGE_WALK_MAX_CHUNKS 1024

/* How a stage's numbers were found. */
enum { STAGE_WALKED, STAGE_RESERVE_BOUND, STAGE_COPIED };

/* Stage s from the stage that bounds it (sources: by the first stage of
 * their layers, -1: none yet; first: s's, first_same_layers), when there is
 * one: its numbers; the same layers make the same counts and states
 * (states.c reads the stage's counts, not its place). */
static int copy_bounded_stage(const int *sources, int first, int s, llmem_result *out) {
  if (first < 0 || sources[first] < 0) return 0;
  llmem_rank_result *r = &out->ranks[s];
  *r = out->ranks[sources[first]];
  r->stage = s;
  r->peak_bound = 1;
  r->bound_stage = sources[first];
  r->peak_micro_batch = -1, r->peak_layer = -1; /* where it peaks is not walked */
  return 1;
}

/* A stage walked with the caching allocator records its points too (the walk costs far more than
 * they do): into a scratch sink, copied out when the stage is the most loaded so far, so that the most
 * loaded stage is not walked a second time for its timeline (most_loaded_stage). NULL: no timeline. */
static timeline_sink *points_sink(const timeline_sink *sink) {
  static llmem_event scratch_events[LLMEM_MAX_EVENTS];
  static timeline_sink scratch;
  if (!sink || !sink->events) return 0;
  scratch = (timeline_sink){scratch_events, LLMEM_MAX_EVENTS, 0, 1, 0};
  return &scratch;
}

/* *shown: the stage whose points the result's timeline holds (stage 0's first); s takes its place when it
 * is more loaded (ties stay with the lower stage, as in most_loaded_of). */
static void keep_points(llmem_result *out, const double *demand, int s, const timeline_sink *points,
                        timeline_sink *sink, int *shown) {
  if (!points || s == 0) return;
  const llmem_rank_result *held = &out->ranks[*shown];
  if (!more_loaded(&out->ranks[s], demand[s], held->device_used_bytes, demand[*shown])) return;
  memcpy(out->events, points->events, (size_t)points->count * sizeof *out->events);
  *sink = *points;
  sink->events = out->events;
  *shown = s;
}

/* The stages whose walk ran the simulated allocator out of memory (allocator.c make_room). */
static unsigned char allocator_oom[LLMEM_MAX_STAGES];

static void note_oom(int s, const llmem_rank_result *r) {
  allocator_oom[s] = r->reserved_simulated && alloc_get_stats()->oom; /* this walk's own allocator */
}

/* Each stage once, with the timeline only when there is one stage; the
 * highest allocated, parameters and host bytes over the stages. Returns the
 * most loaded stage. A middle stage whose layers equal a lower one's holds no
 * more than it (first_same_layers): it is walked without the caching allocator (its
 * reserve is the bound, reserved_simulated 0), unless it comes out the most
 * loaded, when it is walked again with it; the allocator replays every request,
 * so a deep pipeline costs it three stages rather than all. Past
 * STAGE_WALK_MAX_CHUNKS such a stage is not walked at all where a lower
 * stage bounds it (copy_bounded_stage); ties go to the lower stage. */
static int simulate_stages(const plan *pl, llmem_result *out, timeline_sink *sink, int *shown) {
  int p = (int)pl->in->pp, most_allocated = 0;
  static double demand[LLMEM_MAX_STAGES];
  static unsigned char how[LLMEM_MAX_STAGES];
  static int sources[LLMEM_MAX_STAGES];
  plan bound = *pl, walk = *pl; /* walk: the allocator's budget shrinks by what each stage's walk fed it */
  bound.simulate_allocator = 0;
  int blocks = pl->simulate_allocator && !pl->allocator_reserve_given;
  int copying = pl->in->pp * pl->in->vpp > STAGE_WALK_MAX_CHUNKS;
  for (int s = 0; s < p; s++) sources[s] = -1;
  for (int s = 0; s < p; s++) {
    stage_layout layout;
    rank_states rs;
    llmem_rank_result *r = &out->ranks[s];
    int first = first_same_layers(pl, s);
    allocator_oom[s] = 0;
    if (copying && copy_bounded_stage(sources, first, s, out)) {
      how[s] = STAGE_COPIED;
      demand[s] = demand[r->bound_stage];
      continue;
    }
    how[s] = blocks && first >= 0 ? STAGE_RESERVE_BOUND : STAGE_WALKED;
    /* stage 0 with the timeline: mostly the most loaded, then not walked again */
    timeline_sink *points = s == 0 ? sink : (blocks && how[s] == STAGE_WALKED ? points_sink(sink) : 0);
    double offloaded = 0; /* host bytes of offloaded activations */
    demand[s] = simulate_one_stage(how[s] ? &bound : &walk, s, &layout, &rs, r, points, &offloaded);
    note_oom(s, r);
    keep_points(out, demand, s, points, sink, shown);
    if (blocks && !how[s]) walk.allocator_max_work -= alloc_get_stats()->work;
    if (r->peak_allocated_bytes > out->ranks[most_allocated].peak_allocated_bytes) most_allocated = s;
    double on_gpu = layout.params_count;
    if (on_gpu > out->params_per_gpu) out->params_per_gpu = on_gpu;
    double host = rs.host_bytes + offloaded + paged_on_host_bytes(pl, &rs, r);
    if (host > out->host_cpu_bytes) out->host_cpu_bytes = host;
    if (rs.nvme_bytes > out->host_nvme_bytes) out->host_nvme_bytes = rs.nvme_bytes;
    /* a bound's reserve must be the formula's, which follows the peak: not the allocator's */
    int key = first < 0 ? s : first;
    if (copying && s < p - 1 && !r->reserved_simulated && sources[key] < 0 &&
        simulate_stage_bounds_later(pl, &layout, &rs, s))
      sources[key] = s;
  }
  int worst = most_loaded_of(out->ranks, demand, p);
  while (how[worst] != STAGE_WALKED) {
    stage_layout layout;
    rank_states rs;
    timeline_sink *points = points_sink(sink);
    demand[worst] = simulate_one_stage(&walk, worst, &layout, &rs, &out->ranks[worst], points, 0);
    note_oom(worst, &out->ranks[worst]);
    keep_points(out, demand, worst, points, sink, shown);
    if (blocks) walk.allocator_max_work -= alloc_get_stats()->work;
    if (out->ranks[worst].peak_allocated_bytes > out->ranks[most_allocated].peak_allocated_bytes)
      most_allocated = worst;
    how[worst] = STAGE_WALKED;
    worst = most_loaded_of(out->ranks, demand, p);
  }
  out->peak_allocated_stage = most_allocated;
  out->peak_allocated_bytes = out->ranks[most_allocated].peak_allocated_bytes;
  out->rank_count = p;
  return worst;
}

/* The most loaded stage again, with the timeline (unless its points were kept: stage 0, or a stage walked
 * with the caching allocator, keep_points), then its warnings, its terms and the fit. */
static void most_loaded_stage(const plan *pl, int worst, int shown, timeline_sink *sink, llmem_result *out) {
  stage_layout layout;
  rank_states rs;
  layout_stage(pl, worst, &layout);
  states_for_stage(pl, &layout, &rs);
  out->per_gpu.stage = worst;
  if (worst == shown) {
    out->per_gpu = out->ranks[worst];
  } else {
    *sink = (timeline_sink){out->events, LLMEM_MAX_EVENTS, 0, 1, 0}; /* the kept points out */
    simulate_stage(pl, &layout, &rs, &out->per_gpu, sink);
    note_oom(worst, &out->per_gpu);
  }
  rank_counts(&layout, &out->per_gpu);
  out->event_count = sink->count;
  out->event_stride = sink->stride;
  if (sink->stride > 1) result_add_warning(out, LLMEM_WARN_TIMELINE_DOWNSAMPLED);
  /* not started, or past ALLOCATOR_MAX_WORK on the way */
  if (!out->per_gpu.reserved_simulated && !pl->allocator_reserve_given)
    result_add_warning(out, LLMEM_WARN_RESERVE_BOUND);
  if (allocator_oom[worst]) result_add_warning(out, LLMEM_WARN_ALLOCATOR_OOM);
  explain_peak(pl, &layout, &rs, out);
  finish(pl, out);
}

llmem_status llmem_estimate(const llmem_input *in, llmem_result *out) {
  if (!in || !out) return LLMEM_ERR_NULL_ARGUMENT;
  clear_result(out);
  if (in->rl_algorithm != LLMEM_RL_NONE) return rl_estimate(in, out); /* NaN or a bad index: its field check */
  plan pl;
  int field;
  const char *detail;
  llmem_status st = plan_build(in, &pl, &field, &detail);
  if (st != LLMEM_OK) {
    result_fill_error(out, st, field);
    return st;
  }
  model_param_counts(&pl, &out->params_total, &out->params_active, &out->params_trainable);
  if (pl.in->formula != LLMEM_FORMULA_LLMEM) return compat_result(&pl, out);
  add_config_warnings(&pl, out);
  allocator_within_budget(&pl);
  /* each stage once, the most loaded again for its timeline unless its points were kept */
  timeline_sink sink = {out->events, LLMEM_MAX_EVENTS, 0, 1, 0};
  int shown = 0; /* the stage whose points the timeline holds */
  int worst = simulate_stages(&pl, out, &sink, &shown);
  most_loaded_stage(&pl, worst, shown, &sink, out);
  return LLMEM_OK;
}

llmem_status estimate_readings(const llmem_input *in, int all_stages, int allocator, llmem_readings *out,
                               plan *resolved, int *error_field) {
  llmem_readings r = {0};
  if (in->rl_algorithm != LLMEM_RL_NONE) return rl_readings(in, out, resolved, error_field);
  plan local;
  plan *pl_ = resolved ? resolved : &local;
  int field;
  const char *detail;
  r.status = plan_build(in, pl_, &field, &detail);
  if (error_field) *error_field = field;
  if (r.status == LLMEM_OK && in->formula != LLMEM_FORMULA_LLMEM) r.status = LLMEM_ERR_COMPAT_ENGINE;
  if (r.status != LLMEM_OK) { /* a failed build leaves the plan unset */
    *out = r;
    return r.status;
  }
  pl_->simulate_allocator = allocator;
  allocator_within_budget(pl_);
  const plan pl = *pl_;
  if (all_stages) { /* the estimate's own stages, so readings and estimate agree bit for bit */
    static llmem_result scratch;
    clear_result(&scratch);
    timeline_sink none = {0, 0, 0, 1, 0};
    int shown = 0;
    const llmem_rank_result *worst = &scratch.ranks[simulate_stages(&pl, &scratch, &none, &shown)];
    r.peak_allocated_bytes = scratch.peak_allocated_bytes;
    r.device_used_bytes = worst->device_used_bytes;
    for (int s = 0; s < scratch.rank_count; s++)
      r.peak_reserved_bytes = max2(r.peak_reserved_bytes, scratch.ranks[s].peak_reserved_bytes);
    r.capacity_bytes = pl.memory_bytes;
    r.fits = r.device_used_bytes <= pl.memory_bytes;
    *out = r;
    return LLMEM_OK;
  }
  int p = (int)pl.in->pp;
  double worst_demand = -1, max_reserved = 0;
  for (int s = 0; s < p; s++) {
    if (first_same_layers(&pl, s) >= 0) continue;
    stage_layout layout;
    rank_states rs;
    llmem_rank_result rank;
    double demand = simulate_one_stage(&pl, s, &layout, &rs, &rank, 0, 0);
    if (s == 0 || more_loaded(&rank, demand, r.device_used_bytes, worst_demand)) {
      worst_demand = demand;
      r.peak_reserved_bytes = rank.peak_reserved_bytes;
      r.device_used_bytes = rank.device_used_bytes;
    }
    if (rank.peak_allocated_bytes > r.peak_allocated_bytes) r.peak_allocated_bytes = rank.peak_allocated_bytes;
    if (rank.peak_reserved_bytes > max_reserved) max_reserved = rank.peak_reserved_bytes;
  }
  /* reserved, like allocated, is the highest over the ranks: the most-loaded rank
   * by device use may reserve less than another rank allocates */
  r.peak_reserved_bytes = max_reserved;
  r.capacity_bytes = pl.memory_bytes;
  r.fits = r.device_used_bytes <= pl.memory_bytes;
  *out = r;
  return LLMEM_OK;
}

llmem_status llmem_estimate_readings(const llmem_input *in, llmem_readings *out) {
  if (!in || !out) return LLMEM_ERR_NULL_ARGUMENT;
  return estimate_readings(in, 1, 1, out, 0, 0);
}
