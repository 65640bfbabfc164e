/* Properties over ten thousand random valid configs: every category >= 0 at
 * every timeline event of every rank, every value finite, breakdowns and
 * events sum exactly, terms sum to their categories, reserved >= allocated,
 * the reported allocated is the highest over the ranks, adding a recompute
 * module never raises the estimate, more sharding never raises per-GPU
 * memory, a larger batch or sequence never lowers it; and every layout kept
 * by random searches equals its own full estimate. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "internal.h"

#define CONFIGS 10000
#define SEARCHES 12

static llmem_result a, b;
static llmem_event events[LLMEM_MAX_EVENTS];

/* x >= 0 up to rounding of sums of this size (far below a byte) */
static int nonneg(double x, double scale) { return isfinite(x) && x >= -1e-9 * scale; }
static int same_sum(double sum, double want, double scale) { return fabs(sum - want) <= 1e-12 * scale; }

static int rank_sane(const llmem_rank_result *p) {
  double sum = 0, scale = p->peak_allocated_bytes;
  int ok = isfinite(scale) && scale > 0;
  for (int c = 0; c < LLMEM_CAT_COUNT; c++) {
    ok &= nonneg(p->breakdown_bytes[c], scale);
    sum += p->breakdown_bytes[c];
  }
  ok &= same_sum(sum, p->peak_allocated_bytes, scale);
  ok &= p->peak_reserved_bytes >= p->peak_allocated_bytes && p->device_used_bytes >= p->peak_reserved_bytes;
  return ok;
}

static int events_sane(const llmem_event *ev, int count, double peak) {
  int ok = 1;
  for (int i = 0; i < count; i++) {
    double sum = 0;
    for (int c = 0; c < LLMEM_CAT_COUNT; c++) {
      ok &= nonneg(ev[i].category_bytes[c], peak);
      sum += ev[i].category_bytes[c];
    }
    ok &= same_sum(sum, ev[i].total_bytes, peak) && ev[i].total_bytes <= peak * (1 + 1e-12);
  }
  return ok;
}

/* Every rank's timeline, not only the reported one's. */
static int every_rank_timeline_sane(const llmem_input *in, const llmem_result *r) {
  plan pl;
  int field;
  const char *detail;
  if (plan_build(in, &pl, &field, &detail) != LLMEM_OK) return 0;
  int ok = 1;
  for (int s = 0; s < r->rank_count; s++) {
    stage_layout layout;
    rank_states rs;
    llmem_rank_result rank;
    layout_stage(&pl, s, &layout);
    states_for_stage(&pl, &layout, &rs);
    rank.stage = s;
    timeline_sink sink = {events, LLMEM_MAX_EVENTS, 0, 1, 0};
    simulate_stage(&pl, &layout, &rs, &rank, &sink);
    ok &= events_sane(events, sink.count, rank.peak_allocated_bytes);
    ok &= rank.peak_allocated_bytes == r->ranks[s].peak_allocated_bytes;
  }
  return ok;
}

static int terms_sum(const llmem_result *r) {
  const llmem_rank_result *p = &r->per_gpu;
  double cat[LLMEM_CAT_COUNT] = {0}, runtime = 0;
  for (int i = 0; i < r->term_count; i++) {
    if (!nonneg(r->terms[i].value_bytes, p->device_used_bytes)) return 0;
    if (r->terms[i].category < 0) runtime += r->terms[i].value_bytes;
    else cat[r->terms[i].category] += r->terms[i].value_bytes;
  }
  int ok = 1;
  for (int c = 0; c < LLMEM_CAT_COUNT; c++) ok &= same_sum(cat[c], p->breakdown_bytes[c], p->device_used_bytes);
  return ok && same_sum(runtime, p->device_used_bytes - p->peak_allocated_bytes, p->device_used_bytes);
}

static int sane(const llmem_input *in, const llmem_result *r) {
  int ok = rank_sane(&r->per_gpu);
  double most_allocated = 0, most_used = 0;
  for (int s = 0; s < r->rank_count; s++) {
    ok &= rank_sane(&r->ranks[s]);
    if (r->ranks[s].peak_allocated_bytes > most_allocated) most_allocated = r->ranks[s].peak_allocated_bytes;
    if (r->ranks[s].device_used_bytes > most_used) most_used = r->ranks[s].device_used_bytes;
  }
  ok &= r->peak_allocated_bytes == most_allocated &&
        r->ranks[r->peak_allocated_stage].peak_allocated_bytes == most_allocated;
  ok &= r->per_gpu.device_used_bytes == most_used;
  ok &= r->per_gpu.peak_allocated_bytes == r->ranks[r->per_gpu.stage].peak_allocated_bytes;
  ok &= isfinite(r->params_total) && r->params_total > 0 && r->params_trainable <= r->params_total;
  ok &= events_sane(r->events, r->event_count, r->per_gpu.peak_allocated_bytes);
  ok &= terms_sum(r);
  /* an RL step's timeline is its phases and updates (core/rl.c), checked above */
  if (in->rl_algorithm == LLMEM_RL_NONE) ok &= every_rank_timeline_sane(in, r);
  /* the readings the planner uses are the estimate's */
  llmem_readings rd;
  ok &= llmem_estimate_readings(in, &rd) == LLMEM_OK && rd.peak_allocated_bytes == r->peak_allocated_bytes &&
        rd.device_used_bytes == r->per_gpu.device_used_bytes && rd.fits == r->fits;
  return ok;
}

/* Adding a selective-recompute module never raises the allocated peak. Reserved
 * may rise: the simulated caching allocator, like PyTorch's, is not monotone
 * (other block sizes fragment the cache differently; tests/c/test_allocator.c). */
static int recompute_pairs(const llmem_input *in, int tried) {
  if (in->recompute != LLMEM_RECOMPUTE_SELECTIVE) return 0;
  int pairs = 0;
  for (int m = 0; m < LLMEM_RECOMPUTE_MODULE_COUNT_; m++) {
    int bit = 1 << m, set = (int)in->recompute_modules;
    if (set & bit) continue;
    llmem_input more = *in;
    more.recompute_modules = set | bit;
    if (llmem_estimate(&more, &b) != LLMEM_OK) continue;
    CHECK(
        b.peak_allocated_bytes <= a.peak_allocated_bytes * (1 + 1e-12) &&
            (b.per_gpu.reserved_simulated || b.per_gpu.device_used_bytes <= a.per_gpu.device_used_bytes * (1 + 1e-12)),
        "config %d: adding recompute module %d raised the estimate (%.17g -> %.17g allocated, %.17g -> %.17g "
        "device, simulated %d -> %d)",
        tried, m, a.peak_allocated_bytes, b.peak_allocated_bytes, a.per_gpu.device_used_bytes,
        b.per_gpu.device_used_bytes, a.per_gpu.reserved_simulated, b.per_gpu.reserved_simulated);
    pairs++;
  }
  return pairs;
}

/* Random searches: every kept layout is its own full estimate (same device
 * memory, fits with the free fraction). */
static llmem_search_result found;
static int random_searches(void) {
  int layouts = 0;
  for (int k = 0; k < SEARCHES; k++) {
    llmem_input in;
    check_random_config(&in);
    static const double engines[] = {LLMEM_ENGINE_MEGATRON, LLMEM_ENGINE_FSDP2, LLMEM_ENGINE_DEEPSPEED};
    in.engine = check_pick_of(engines, 3);
    in.gpus = 8;
    in.tp = 1;
    in.pp = 1;
    in.cp = 1;
    in.ep = 1;
    in.vpp = 1;
    in.zero_stage = 0;
    in.pp_schedule = LLMEM_PP_1F1B;
    in.fsdp_strategy = 0;
    in.distributed_optimizer = 0;
    in.layers = 8 << check_pick(2);
    in.memory_gib = 16 << check_pick(3);
    llmem_search_options opt;
    llmem_search_defaults(&opt);
    static const double gpus[] = {8, 16, 32, 64};
    opt.gpus = check_pick_of(gpus, 4);
    opt.global_batch = opt.gpus * (1 << check_pick(3));
    opt.max_micro_batch = 4;
    if (llmem_search(&in, &opt, &found) != LLMEM_OK) continue;
    for (int i = 0; i < found.count; i++) {
      const llmem_layout *l = &found.layouts[i];
      llmem_input c = layout_input(&in, opt.gpus, l);
      llmem_status st = llmem_estimate(&c, &a);
      CHECK(st == LLMEM_OK && a.per_gpu.device_used_bytes == l->device_used_bytes &&
                a.per_gpu.device_used_bytes <= (1 - opt.free_fraction) * a.capacity_bytes,
            "search %d layout %d (tp %g pp %g cp %g ep %g mb %g): kept at %.17g, estimate %.17g (status %d)", k, i,
            l->tp, l->pp, l->cp, l->ep, l->micro_batch, l->device_used_bytes, a.per_gpu.device_used_bytes, st);
      layouts++;
    }
  }
  return layouts;
}

int main(void) {
  int valid = 0, tried = 0, mono = 0, recompute = 0;
  while (valid < CONFIGS && tried < 20 * CONFIGS) {
    tried++;
    llmem_input in;
    check_random_config(&in);
    if (llmem_estimate(&in, &a) != LLMEM_OK) continue;
    valid++;
    CHECK(sane(&in, &a), "config %d: a value is negative or not finite, a sum is off, or a reading is not the highest",
          tried);
    recompute += recompute_pairs(&in, tried);

    /* a larger micro-batch / sequence never lowers the peak */
    llmem_input big = in;
    big.micro_batch *= 2;
    big.rl_rollout_batch *= 2; /* RL: the accumulation follows the batch; keep it (core/rl.c) */
    if (llmem_estimate(&big, &b) == LLMEM_OK) {
      CHECK(b.peak_allocated_bytes >= a.peak_allocated_bytes * (1 - 1e-12),
            "config %d: doubling the micro-batch lowered the peak (%g -> %g)", tried, a.peak_allocated_bytes,
            b.peak_allocated_bytes);
      mono++;
    }
    big = in;
    big.seq_len *= 2;
    if (llmem_estimate(&big, &b) == LLMEM_OK) {
      CHECK(b.peak_allocated_bytes >= a.peak_allocated_bytes * (1 - 1e-12),
            "config %d: doubling the sequence lowered the peak (%g -> %g)", tried, a.peak_allocated_bytes,
            b.peak_allocated_bytes);
      mono++;
    }
    /* more data-parallel sharding never raises it */
    big = in;
    big.gpus *= 2;
    if (in.engine != LLMEM_ENGINE_SINGLE && llmem_estimate(&big, &b) == LLMEM_OK) {
      CHECK(b.peak_allocated_bytes <= a.peak_allocated_bytes * (1 + 1e-12),
            "config %d: doubling the GPUs raised the peak (%g -> %g)", tried, a.peak_allocated_bytes,
            b.peak_allocated_bytes);
      mono++;
    }
  }
  CHECK(valid == CONFIGS, "only %d valid configs in %d tries", valid, tried);
  int layouts = random_searches();
  CHECK(layouts > 0, "the random searches kept no layout");
  printf(
      "properties: %d valid configs of %d tried, %d monotonicity pairs, %d recompute-module pairs, "
      "%d layouts of %d random searches checked\n",
      valid, tried, mono, recompute, layouts, SEARCHES);
  return check_report("properties");
}
