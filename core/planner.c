/* The planner: sweeps along one key, the largest micro-batch or sequence that
 * fits, and a ranked search over every layout of a GPU count (DP, TP + SP,
 * PP, VPP, CP, EP, sharding, recompute, micro-batch), ranked by the step-time
 * model. All loops are here, in C, for the page's Worker and the CLI. */
#include <math.h>
#include <string.h>

#include "internal.h"

#define SLOT(in, field) (((double *)(in))[field])

llmem_status llmem_sweep(const llmem_input *base, int field, const double *values, int count,
                         llmem_sweep_point *points) {
  if (!base || !values || !points) return LLMEM_ERR_NULL_ARGUMENT;
  if (field < 0 || field >= LLMEM_FIELD_COUNT) return LLMEM_ERR_OPTION_FIELD;
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
  if (field < 0 || field >= LLMEM_FIELD_COUNT) return LLMEM_ERR_OPTION_FIELD;
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

llmem_status llmem_step_time(const llmem_input *in, double *step_seconds, double *tokens_per_second_per_gpu) {
  if (!in || !step_seconds) return LLMEM_ERR_NULL_ARGUMENT;
  plan pl;
  int field;
  const char *detail;
  llmem_status st = plan_build(in, &pl, &field, &detail);
  if (st != LLMEM_OK) return st;
  *step_seconds = step_time_seconds(&pl, tokens_per_second_per_gpu);
  return LLMEM_OK;
}

void llmem_search_defaults(llmem_search_options *opt) {
  if (!opt) return;
  opt->gpus = 8;
  opt->global_batch = 0; /* 0: micro_batch x grad_accum x dp of the base config */
  opt->free_fraction = 0.10;
  opt->max_micro_batch = 16;
  opt->vary_sharding = 1;
  opt->vary_recompute = 1;
}

/* Insert by step time into the kept list (the fastest LLMEM_MAX_LAYOUTS). */
static void keep(llmem_search_result *out, const llmem_layout *l) {
  int n = out->count;
  if (n == LLMEM_MAX_LAYOUTS && l->step_seconds >= out->layouts[n - 1].step_seconds) return;
  int i = n < LLMEM_MAX_LAYOUTS ? n : n - 1;
  while (i > 0 && out->layouts[i - 1].step_seconds > l->step_seconds) {
    out->layouts[i] = out->layouts[i - 1];
    i--;
  }
  out->layouts[i] = *l;
  if (n < LLMEM_MAX_LAYOUTS) out->count++;
}

static int divides(double a, double b) { return b > 0 && fmod(a, b) == 0; }

/* The run config of a layout on N GPUs (what the search's patch loads). */
llmem_input search_layout_input(const llmem_input *base, double N, const llmem_layout *l) {
  llmem_input in = *base;
  in.gpus = N;
  in.engine = l->engine;
  in.tp = l->tp, in.pp = l->pp, in.cp = l->cp, in.ep = l->ep, in.etp = 1, in.vpp = l->vpp;
  in.pp_schedule = l->pp_schedule;
  in.pp_first_stage_layers = NAN;
  in.pp_last_stage_layers = NAN;
  in.sequence_parallel = l->sequence_parallel;
  in.micro_batch = l->micro_batch;
  in.grad_accum = l->grad_accum;
  in.recompute = l->recompute;
  in.recompute_layers = NAN;
  in.zero_stage = l->zero_stage;
  in.fsdp_strategy = l->fsdp_strategy;
  in.distributed_optimizer = l->distributed_optimizer;
  if (!isnan(in.fsdp_shard_size) && in.fsdp_strategy != LLMEM_FSDP_HYBRID_SHARD) in.fsdp_shard_size = NAN;
  return in;
}

/* The kept layouts again with the simulated allocator (the inner loop used
 * its bound): each keeps its own estimate's reading, or goes if it no longer fits. */
static void recheck_kept(const llmem_input *base, double N, const llmem_search_options *opt, llmem_search_result *out) {
  int n = 0;
  for (int i = 0; i < out->count; i++) {
    llmem_layout l = out->layouts[i];
    llmem_input in = search_layout_input(base, N, &l);
    llmem_readings r;
    if (estimate_readings(&in, 1, 1, &r, 0, 0) != LLMEM_OK) continue;
    if (r.device_used_bytes > r.capacity_bytes * (1 - opt->free_fraction)) continue;
    l.device_used_bytes = r.device_used_bytes;
    out->layouts[n++] = l;
  }
  out->count = n;
}

static llmem_status search_options_status(const llmem_search_options *opt) {
  if (!(opt->gpus >= 1 && opt->gpus <= 1e7) || opt->gpus != floor(opt->gpus)) return LLMEM_ERR_OPTION_GPUS;
  if (!(opt->global_batch >= 0 && opt->global_batch <= 1e15) || opt->global_batch != floor(opt->global_batch))
    return LLMEM_ERR_OPTION_GLOBAL_BATCH;
  if (!(opt->free_fraction >= 0 && opt->free_fraction < 1)) return LLMEM_ERR_OPTION_FREE_FRACTION;
  if (!(opt->max_micro_batch >= 1 && opt->max_micro_batch <= 1e6)) return LLMEM_ERR_OPTION_MAX_MICRO_BATCH;
  return LLMEM_OK;
}

/* Why a search kept nothing: no layout, no batch split, the commonest failed
 * config check (with its key), or nothing fits. */
static void set_empty_reason(llmem_search_result *out, double batch_matches, const int *failures,
                             const int *failure_field) {
  if (out->candidates == 0) {
    out->empty_reason = LLMEM_ERR_SEARCH_NO_LAYOUT;
  } else if (batch_matches == 0) {
    out->empty_reason = LLMEM_ERR_SEARCH_NO_BATCH;
  } else if (out->valid == 0) {
    int commonest = 1;
    for (int s = 1; s < LLMEM_STATUS_COUNT; s++)
      if (failures[s] > failures[commonest]) commonest = s;
    out->empty_reason = (llmem_status)commonest;
    out->empty_field = failure_field[commonest];
  } else {
    out->empty_reason = LLMEM_ERR_SEARCH_NO_FIT;
  }
}

llmem_status llmem_search(const llmem_input *base, const llmem_search_options *opt, llmem_search_result *out) {
  if (!base || !opt || !out) return LLMEM_ERR_NULL_ARGUMENT;
  memset(out, 0, offsetof(llmem_search_result, layouts));
  out->error_field = -1;
  out->empty_field = -1;
  out->status = search_options_status(opt);
  if (out->status != LLMEM_OK) return out->status;
  plan bp;
  int field;
  const char *detail;
  llmem_status st = plan_build(base, &bp, &field, &detail);
  if (st != LLMEM_OK) {
    out->status = st;
    out->error_field = field;
    return st;
  }
  int failures[LLMEM_STATUS_COUNT] = {0}, failure_field[LLMEM_STATUS_COUNT];
  for (int i = 0; i < LLMEM_STATUS_COUNT; i++) failure_field[i] = -1;
  double batch_matches = 0;
  double N = opt->gpus;
  double B = opt->global_batch > 0 ? opt->global_batch : bp.micro_batch * bp.grad_accum * bp.dp;
  int engine = bp.engine;
  if (engine == LLMEM_ENGINE_SINGLE && N > 1) engine = LLMEM_ENGINE_FSDP2;
  int deepspeed = engine == LLMEM_ENGINE_DEEPSPEED || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int fsdp = engine == LLMEM_ENGINE_FSDP1 || engine == LLMEM_ENGINE_FSDP2;
  int megatron = engine == LLMEM_ENGINE_MEGATRON;
  int model_parallel = engine == LLMEM_ENGINE_FSDP2 || megatron || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;

  /* the sharding choices of the engine */
  int shard_n = 1;
  int shard_values[4] = {0, 0, 0, 0};
  if (opt->vary_sharding) {
    if (deepspeed) { shard_n = 3; shard_values[0] = 1; shard_values[1] = 2; shard_values[2] = 3; }
    else if (fsdp) { shard_n = 2; shard_values[0] = LLMEM_FSDP_FULL_SHARD; shard_values[1] = LLMEM_FSDP_HYBRID_SHARD; }
    else if (megatron) { shard_n = 2; shard_values[0] = 1; shard_values[1] = 0; }
  }
  int rec_n = 1;
  int rec_values[3] = {bp.recompute, 0, 0};
  if (opt->vary_recompute) {
    rec_n = 3;
    rec_values[0] = LLMEM_RECOMPUTE_NONE;
    rec_values[1] = engine == LLMEM_ENGINE_FSDP2 ? LLMEM_RECOMPUTE_PER_OP : LLMEM_RECOMPUTE_SELECTIVE;
    rec_values[2] = LLMEM_RECOMPUTE_FULL;
  }

  for (double tp = 1; tp <= (model_parallel ? 64 : 1) && tp <= N; tp *= 2) {
    if (!divides(N, tp) || !divides(bp.heads, tp)) continue;
    for (double pp = 1; pp <= (model_parallel || deepspeed ? 128 : 1) && tp * pp <= N; pp *= 2) {
      if (!divides(N, tp * pp) || !divides(bp.layers, pp)) continue;
      for (double cp = 1; cp <= (model_parallel ? 16 : 1) && tp * pp * cp <= N; cp *= 2) {
        if (!divides(N, tp * pp * cp)) continue;
        double dp = N / (tp * pp * cp);
        for (double ep = 1; ep <= (bp.moe ? bp.experts : 1); ep *= 2) {
          if (bp.moe && !divides(bp.experts, ep)) continue;
          for (double vpp = 1; vpp <= (pp > 1 && (megatron || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED) ? 4 : 1); vpp *= 2) {
            for (int si = 0; si < shard_n; si++) {
              if (deepspeed && pp > 1 && shard_values[si] > 1) continue;
              if (fsdp && shard_values[si] == LLMEM_FSDP_HYBRID_SHARD && dp * cp <= bp.gpus_per_node) continue;
              for (int ri = 0; ri < rec_n; ri++) {
                for (double mb = 1; mb <= opt->max_micro_batch; mb *= 2) {
                  out->candidates++;
                  if (!divides(B, dp * mb)) continue;
                  batch_matches++;
                  double ga = B / (dp * mb);
                  llmem_layout l;
                  memset(&l, 0, sizeof l);
                  l.dp = dp; l.tp = tp; l.pp = pp; l.vpp = vpp; l.cp = cp; l.ep = ep;
                  l.micro_batch = mb; l.grad_accum = ga;
                  l.engine = engine;
                  l.recompute = rec_values[ri];
                  l.zero_stage = deepspeed && shard_n > 1 ? shard_values[si] : (int)base->zero_stage;
                  l.fsdp_strategy = fsdp && shard_n > 1 ? shard_values[si] : (int)base->fsdp_strategy;
                  l.distributed_optimizer = megatron && shard_n > 1 ? shard_values[si] : (int)base->distributed_optimizer;
                  l.sequence_parallel = tp > 1;
                  l.pp_schedule = vpp > 1 ? LLMEM_PP_INTERLEAVED
                                : (base->pp_schedule == LLMEM_PP_INTERLEAVED ? LLMEM_PP_1F1B : (int)base->pp_schedule);
                  llmem_input in = search_layout_input(base, N, &l);
                  llmem_readings r;
                  plan pl;
                  int failed_field;
                  /* the allocator's bound here; the kept layouts are simulated at the end */
                  llmem_status rs = estimate_readings(&in, 0, 0, &r, &pl, &failed_field);
                  if (rs != LLMEM_OK) {
                    if (failures[rs]++ == 0) failure_field[rs] = failed_field; /* the key of the first such failure */
                    continue;
                  }
                  out->valid++;
                  /* memory only grows with the micro-batch: stop at the first that does not fit */
                  if (r.device_used_bytes > r.capacity_bytes * (1 - opt->free_fraction)) break;
                  out->fitting++;
                  l.device_used_bytes = r.device_used_bytes;
                  l.step_seconds = step_time_seconds(&pl, &l.tokens_per_second_per_gpu);
                  keep(out, &l);
                }
              }
            }
          }
        }
      }
    }
  }
  recheck_kept(base, N, opt, out);
  if (out->count == 0) set_empty_reason(out, batch_matches, failures, failure_field);
  /* Pareto front of the kept layouts: no other is both faster and smaller */
  for (int i = 0; i < out->count; i++) {
    int dominated = 0;
    for (int j = 0; j < out->count && !dominated; j++)
      dominated = j != i && out->layouts[j].step_seconds <= out->layouts[i].step_seconds &&
                  out->layouts[j].device_used_bytes <= out->layouts[i].device_used_bytes &&
                  (out->layouts[j].step_seconds < out->layouts[i].step_seconds ||
                   out->layouts[j].device_used_bytes < out->layouts[i].device_used_bytes);
    out->layouts[i].pareto = !dominated;
  }
  out->status = LLMEM_OK;
  return LLMEM_OK;
}
