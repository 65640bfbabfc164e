/* The planner: sweeps along one key, the largest micro-batch or sequence that
 * fits, and the step time (the layout search is core/search.c). All loops
 * are here, in C, for the page's Worker and the CLI. */
#include <math.h>
#include <string.h>

#include "internal.h"

#define SLOT(in, field) (*input_slot((in), (field)))

llmem_status llmem_sweep(const llmem_input *base, int field, const double *values, int count,
                         llmem_sweep_point *points) {
  if (!base || !values || !points) return LLMEM_ERR_NULL_ARGUMENT;
  if (field < 0 || field >= LLMEM_FIELD_COUNT || llmem_field_at(field)->kind == LLMEM_KIND_LIST)
    return LLMEM_ERR_OPTION_FIELD; /* a number key (a list has many slots) */
  if (count < 0 || count > LLMEM_MAX_SWEEP) return LLMEM_ERR_OPTION_COUNT;
  llmem_input in = *base;
  for (int i = 0; i < count; i++) {
    SLOT(&in, field) = values[i];
    points[i].value = values[i];
    estimate_readings(&in, 1, 1, &points[i].readings, 0, 0);
  }
  return LLMEM_OK;
}

static int fits_with(const llmem_input *in, double free_fraction, llmem_status *st) {
  llmem_readings r;
  *st = estimate_readings(in, 1, 1, &r, 0, 0);
  return *st == LLMEM_OK && r.device_used_bytes <= r.capacity_bytes * (1 - free_fraction);
}

llmem_status llmem_largest_fit(const llmem_input *base, int field, double lo, double hi, double step,
                               double free_fraction, double *best) {
  if (!base || !best) return LLMEM_ERR_NULL_ARGUMENT;
  if (field < 0 || field >= LLMEM_FIELD_COUNT || llmem_field_at(field)->kind == LLMEM_KIND_LIST)
    return LLMEM_ERR_OPTION_FIELD; /* a number key (a list has many slots) */
  if (!(step >= 1) || !(lo >= step) || !(hi >= lo) || !isfinite(hi)) return LLMEM_ERR_OPTION_RANGE;
  if (!(free_fraction >= 0 && free_fraction < 1)) return LLMEM_ERR_OPTION_FREE_FRACTION;
  llmem_input in = *base;
  llmem_status st;
  /* bisection over k in [k_lo, k_hi], value = k * step */
  double k_lo = ceil(lo / step), k_hi = floor(hi / step);
  SLOT(&in, field) = k_lo * step;
  if (!fits_with(&in, free_fraction, &st)) {
    *best = 0;
    return st == LLMEM_OK ? LLMEM_OK : st;
  }
  SLOT(&in, field) = k_hi * step;
  if (fits_with(&in, free_fraction, &st)) {
    *best = k_hi * step;
    return LLMEM_OK;
  }
  while (k_hi - k_lo > 1) { /* invariant: k_lo fits, k_hi does not */
    double mid = floor((k_lo + k_hi) / 2);
    SLOT(&in, field) = mid * step;
    if (fits_with(&in, free_fraction, &st)) k_lo = mid;
    else k_hi = mid;
  }
  *best = k_lo * step;
  return LLMEM_OK;
}

llmem_status llmem_step_time(const llmem_input *in, llmem_step_result *out) {
  if (!in || !out) return LLMEM_ERR_NULL_ARGUMENT;
  plan pl;
  int field;
  const char *detail;
  llmem_readings r;
  /* an RL step is its actor update's, whose plan core/rl.c builds (training.seq_len is not its sequence) */
  llmem_status st = in->rl_algorithm != LLMEM_RL_NONE ? estimate_readings(in, 1, 0, &r, &pl, &field)
                                                      : plan_build(in, &pl, &field, &detail);
  if (st != LLMEM_OK) return st;
  out->step_seconds = step_time_seconds(&pl, &out->tokens_per_second_per_gpu, out->parts_seconds);
  return LLMEM_OK;
}
