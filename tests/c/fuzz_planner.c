/* libFuzzer target for the planner: llmem_sweep, llmem_largest_fit and
 * llmem_search on a structured base config (fuzz_oracles.c). Oracles: every
 * sweep point carries a listed status and, when valid, readings equal to a
 * full estimate's; the largest fit really fits (full estimate, every stage)
 * and the next step does not; every layout the search keeps, re-estimated in
 * full, is valid, fits with the free fraction on every stage, and has the
 * device_used and step time the search reported. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_oracles.h"

static llmem_result out;
static llmem_search_result found;

#define FAIL(why, in) fuzz_fail("fuzz_planner", why, in)

/* full estimate with every oracle; returns its status */
static llmem_status estimate_checked(const llmem_input *in) {
  llmem_status st = llmem_estimate(in, &out);
  const char *why = fuzz_check_estimate(in, st, &out);
  if (why) FAIL(why, in);
  return st;
}

/* the readings refuse every compat formula with LLMEM_ERR_COMPAT_ENGINE
 * (planner.c); otherwise their status is the full estimate's */
static int same_status(const llmem_input *in, llmem_status readings, llmem_status full) {
  if (in->formula != LLMEM_FORMULA_LLMEM && readings == LLMEM_ERR_COMPAT_ENGINE) return 1;
  return readings == full;
}

/* the last full estimate (out) fits with the free fraction on every stage */
static int estimate_fits(double free_fraction) {
  for (int s = 0; s < out.rank_count; s++)
    if (out.ranks[s].device_used_bytes > out.capacity_bytes * (1 - free_fraction)) return 0;
  return out.per_gpu.device_used_bytes <= out.capacity_bytes * (1 - free_fraction);
}

static int fits_in_full(const llmem_input *in, double free_fraction) {
  return estimate_checked(in) == LLMEM_OK && estimate_fits(free_fraction);
}

static void fuzz_sweep(fuzz_reader *r, llmem_input *base) {
  static const char *keys[] = {"training.micro_batch", "training.seq_len",    "training.grad_accum",
                               "parallel.tp",          "parallel.pp",         "parallel.vpp",
                               "model.layers",         "parallel.zero_stage", "training.recompute",
                               "parallel.pp_schedule", "model.moe.experts",   "parallel.ep"};
  int field = fuzz_pick(r, 8) == 0 ? (int)fuzz_pick(r, LLMEM_FIELD_COUNT)
                                   : llmem_field_index(keys[fuzz_pick(r, sizeof keys / sizeof *keys)]);
  double values[8];
  int count = (int)fuzz_pick(r, 9);
  for (int i = 0; i < count; i++) {
    unsigned b = fuzz_byte(r);
    values[i] = b < 200 ? (double)(b % 17) : b < 250 ? (double)(1u << (b % 12)) : (b & 1 ? NAN : -1);
  }
  static llmem_sweep_point points[8];
  llmem_status st = llmem_sweep(base, field, values, count, points);
  if (llmem_field_at(field)->kind == LLMEM_KIND_LIST) { /* a list has many slots: refused by name */
    if (st != LLMEM_ERR_OPTION_FIELD) FAIL("sweep took a list field", base);
    return;
  }
  if (st != LLMEM_OK) FAIL("sweep refused a valid field and count", base);
  for (int i = 0; i < count; i++) {
    llmem_input in = *base;
    *(double *)(void *)((char *)&in + llmem_field_at(field)->offset) = values[i];
    const char *why = fuzz_check_readings(&points[i].readings);
    if (why) FAIL(why, &in);
    if (!(points[i].value == values[i] || (isnan(values[i]) && isnan(points[i].value)))) FAIL("sweep point value", &in);
    llmem_status full = estimate_checked(&in);
    if (!same_status(&in, points[i].readings.status, full))
      FAIL("sweep point status differs from the full estimate's", &in);
    if (full == LLMEM_OK && points[i].readings.status == LLMEM_OK &&
        points[i].readings.device_used_bytes != out.per_gpu.device_used_bytes)
      FAIL("sweep point device_used differs from the full estimate's", &in);
  }
}

static void fuzz_largest_fit(fuzz_reader *r, llmem_input *base) {
  int seq = fuzz_byte(r) & 1;
  int field = llmem_field_index(seq ? "training.seq_len" : "training.micro_batch");
  double step = seq ? 2 * base->cp * base->tp * (double)(1u << fuzz_pick(r, 8)) : (double)(1 + fuzz_pick(r, 4));
  double lo = step * (1 + fuzz_pick(r, 4));
  /* hi = inf must be refused (it once looped forever when lo fit) */
  double hi = fuzz_pick(r, 16) == 0 ? INFINITY : lo + step * fuzz_pick(r, 200);
  double free_fraction = fuzz_pick(r, 5) * 0.1;
  double best = -1;
  llmem_status st = llmem_largest_fit(base, field, lo, hi, step, free_fraction, &best);
  if ((int)st < 0 || st >= LLMEM_STATUS_COUNT) FAIL("largest_fit: status out of the list", base);
  /* the step follows tp and cp, which the raw overrides may have made NaN or negative */
  if (!(step >= 1 && lo >= step && hi >= lo && isfinite(hi))) {
    if (st != LLMEM_ERR_OPTION_RANGE) FAIL("largest_fit: bad arguments not refused", base);
    return;
  }
  llmem_input in = *base;
  if (st != LLMEM_OK) { /* only when the config at lo is invalid */
    *(double *)(void *)((char *)&in + llmem_field_at(field)->offset) = ceil(lo / step) * step;
    llmem_status full = estimate_checked(&in);
    if (!same_status(&in, st, full)) FAIL("largest_fit: error status differs from the estimate's at lo", &in);
    return;
  }
  if (best == 0) {
    *(double *)(void *)((char *)&in + llmem_field_at(field)->offset) = ceil(lo / step) * step;
    if (fits_in_full(&in, free_fraction)) FAIL("largest_fit said nothing fits, but lo fits", &in);
    return;
  }
  if (!(best >= lo && best <= hi) || fmod(best, step) != 0)
    FAIL("largest_fit: best outside [lo, hi] or off the step", base);
  *(double *)(void *)((char *)&in + llmem_field_at(field)->offset) = best;
  if (!fits_in_full(&in, free_fraction)) FAIL("largest_fit: the best value does not fit (full estimate)", &in);
  if (best + step <= hi) {
    *(double *)(void *)((char *)&in + llmem_field_at(field)->offset) = best + step;
    if (fits_in_full(&in, free_fraction)) FAIL("largest_fit: the next step fits too", &in);
  }
}

/* the input llmem_search estimated for a kept layout (planner.c) */
static void layout_input(const llmem_input *base, const llmem_search_options *opt, const llmem_layout *l,
                         llmem_input *in) {
  *in = *base;
  in->gpus = opt->gpus;
  in->engine = l->engine;
  in->tp = l->tp;
  in->pp = l->pp;
  in->cp = l->cp;
  in->ep = l->ep;
  in->etp = 1;
  in->vpp = l->vpp;
  in->pp_schedule = l->pp_schedule;
  in->pp_first_stage_layers = NAN;
  in->pp_last_stage_layers = NAN;
  in->sequence_parallel = l->sequence_parallel;
  in->micro_batch = l->micro_batch;
  in->grad_accum = l->grad_accum;
  in->recompute = l->recompute;
  in->recompute_layers = NAN;
  in->zero_stage = l->zero_stage;
  in->fsdp_strategy = l->fsdp_strategy;
  in->distributed_optimizer = l->distributed_optimizer;
  if (!isnan(in->fsdp_shard_size) && in->fsdp_strategy != LLMEM_FSDP_HYBRID_SHARD) in->fsdp_shard_size = NAN;
  if (l->rollout_tp > 0) in->rl_rollout_tp = l->rollout_tp; /* RL runs: the rollout engine's TP */
}

static double near_scale(fuzz_reader *r) {
  static const double scales[] = {0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0};
  return fuzz_pick_value(r, scales, sizeof scales / sizeof *scales);
}

static void fuzz_search(fuzz_reader *r, llmem_input *base) {
  llmem_search_options opt;
  llmem_search_defaults(&opt);
  opt.gpus = (double)(1u << fuzz_pick(r, 5)) * (fuzz_pick(r, 4) == 0 ? 3 : 1);
  opt.global_batch = fuzz_pick(r, 3) == 0 ? 0 : opt.gpus * (double)(1u << fuzz_pick(r, 4));
  opt.free_fraction = fuzz_pick(r, 4) * 0.1;
  opt.max_micro_batch = (double)(1u << fuzz_pick(r, 3));
  opt.vary_sharding = fuzz_byte(r) & 1;
  opt.vary_recompute = fuzz_byte(r) & 1;
  /* put the GPU's capacity near the base config's need, where the search's
   * fit decisions fall between its layouts */
  if (fuzz_byte(r) & 1 && llmem_estimate(base, &out) == LLMEM_OK) {
    double gib = out.per_gpu.device_used_bytes * near_scale(r) / 1073741824.0;
    if (gib >= 0.001) base->memory_gib = gib;
  }
  llmem_status st = llmem_search(base, &opt, &found);
  if ((int)st < 0 || st >= LLMEM_STATUS_COUNT || found.status != st)
    FAIL("search: status out of the list or inconsistent", base);
  if (st != LLMEM_OK) return;
  if (!(found.fitting <= found.valid && found.valid <= found.candidates))
    FAIL("search: not fitting <= valid <= candidates", base);
  if (found.count < 0 || found.count > LLMEM_MAX_LAYOUTS || found.count > found.fitting)
    FAIL("search: count out of range", base);
  for (int i = 0; i < found.count; i++) {
    const llmem_layout *l = &found.layouts[i];
    llmem_input in;
    layout_input(base, &opt, l, &in);
    if (!(isfinite(l->step_seconds) && l->step_seconds > 0) || !isfinite(l->tokens_per_second_per_gpu))
      FAIL("search: step time not finite and positive", &in);
    if (i > 0 && l->step_seconds < found.layouts[i - 1].step_seconds)
      FAIL("search: layouts not sorted by step time", &in);
    if (l->dp * l->tp * l->pp * l->cp != opt.gpus) FAIL("search: dp x tp x pp x cp != gpus", &in);
    if (estimate_checked(&in) != LLMEM_OK) FAIL("search: a kept layout is invalid when estimated in full", &in);
    if (out.per_gpu.device_used_bytes != l->device_used_bytes)
      FAIL(
          "search: a kept layout's device_used differs from the full estimate's (a stage the search did not read is "
          "larger)",
          &in);
    if (!estimate_fits(opt.free_fraction)) FAIL("search: a kept layout does not fit on every stage", &in);
    llmem_step_result s;
    if (llmem_step_time(&in, &s) != LLMEM_OK || s.step_seconds != l->step_seconds)
      FAIL("search: step time differs from llmem_step_time", &in);
    double parts = 0;
    for (int k = 0; k < LLMEM_STEP_PART_COUNT; k++) {
      if (!(s.parts_seconds[k] >= 0)) FAIL("step time: a part is negative or not a number", &in);
      parts += s.parts_seconds[k];
    }
    if (fabs(parts - s.step_seconds) > 1e-9 * s.step_seconds)
      FAIL("step time: the parts do not add up to the step", &in);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_reader r = {data, size, 0};
  unsigned entry = fuzz_pick(&r, 3);
  llmem_input base;
  fuzz_decode_config(&r, &base);
  fuzz_trace("fuzz_planner", entry == 0 ? "llmem_sweep" : entry == 1 ? "llmem_largest_fit" : "llmem_search", &base);
  if (entry == 0) fuzz_sweep(&r, &base);
  else if (entry == 1) fuzz_largest_fit(&r, &base);
  else fuzz_search(&r, &base);
  return 0;
}
