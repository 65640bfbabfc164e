/* The layout search: every way to lay a config out over a GPU count (engine,
 * DP, TP + SP, PP, VPP, CP, EP, sharding, recompute, offload, optimizer-state
 * precision, micro-batch) at one global batch, the ones that fit kept and
 * ranked by the step-time model; each rejected candidate counted by its
 * reason (a status), so an empty answer says why. */
#include <math.h>
#include <string.h>

#include "internal.h"

void llmem_search_defaults(llmem_search_options *opt) {
  if (!opt) return;
  opt->gpus = 8;
  opt->global_batch = 0; /* 0: the config's training.global_batch, else micro_batch x grad_accum x dp */
  opt->free_fraction = 0.10;
  opt->max_micro_batch = 16;
  opt->vary_sharding = 1;
  opt->vary_recompute = 1;
  opt->vary_offload = 0;
  opt->vary_optimizer_dtype = 0;
  opt->vary_engine = 0;
  opt->tp_across_nodes = 0;
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
  if (!isnan(in.global_batch)) in.global_batch = l->dp * l->micro_batch * l->grad_accum; /* the same batch */
  in.recompute = l->recompute;
  in.recompute_layers = NAN;
  in.zero_stage = l->zero_stage;
  in.fsdp_strategy = l->fsdp_strategy;
  in.distributed_optimizer = l->distributed_optimizer;
  in.offload_optimizer = l->offload_optimizer;
  in.offload_params = l->offload_params;
  in.optimizer_dtype = l->optimizer_dtype;
  if (l->rollout_tp > 0) in.rl_rollout_tp = l->rollout_tp;
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
    if (r.device_used_bytes > r.capacity_bytes * (1 - opt->free_fraction)) {
      out->rejected[LLMEM_ERR_SEARCH_NO_FIT]++;
      out->fitting--;
      continue;
    }
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

/* One search: the base, its plan, the options and what is counted. */
typedef struct {
  const llmem_input *base;
  const plan *bp;
  const llmem_search_options *opt;
  llmem_search_result *out;
  double N, B;
  int failure_field[LLMEM_STATUS_COUNT]; /* the key of the first failure of each config check */
} search_ctx;

/* Why a search kept nothing: no layout, no batch split, the commonest failed
 * check (with its key), or nothing fits. */
static void set_empty_reason(search_ctx *c) {
  llmem_search_result *out = c->out;
  if (out->candidates == 0) {
    out->empty_reason = LLMEM_ERR_SEARCH_NO_LAYOUT;
  } else if (out->valid == 0) {
    int commonest = 1;
    for (int s = 1; s < LLMEM_STATUS_COUNT; s++)
      if (s != LLMEM_ERR_SEARCH_NO_FIT && out->rejected[s] > out->rejected[commonest]) commonest = s;
    out->empty_reason = (llmem_status)commonest;
    out->empty_field = c->failure_field[commonest];
  } else {
    out->empty_reason = LLMEM_ERR_SEARCH_NO_FIT;
  }
}

static void reject(search_ctx *c, llmem_status why, int field, double count) {
  c->out->rejected[why] += count;
  if (c->failure_field[why] < 0) c->failure_field[why] = field;
}

/* The engine's choices of one kind of setting: sharding, recompute, offload, optimizer dtype. */
typedef struct {
  int n, values[4];
} choices;

static choices sharding_choices(const search_ctx *c, int engine) {
  choices s = {1, {0}};
  int deepspeed = engine == LLMEM_ENGINE_DEEPSPEED || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int fsdp = engine == LLMEM_ENGINE_FSDP1 || engine == LLMEM_ENGINE_FSDP2;
  if (!c->opt->vary_sharding) {
    s.values[0] = deepspeed                         ? (int)c->base->zero_stage
                  : fsdp                            ? (int)c->base->fsdp_strategy
                  : engine == LLMEM_ENGINE_MEGATRON ? (int)c->base->distributed_optimizer
                                                    : 0;
    return s;
  }
  if (deepspeed) s = (choices){3, {1, 2, 3}};
  else if (fsdp) s = (choices){2, {LLMEM_FSDP_FULL_SHARD, LLMEM_FSDP_HYBRID_SHARD}};
  else if (engine == LLMEM_ENGINE_MEGATRON) s = (choices){2, {1, 0}};
  return s;
}

static choices recompute_choices(const search_ctx *c, int engine) {
  if (!c->opt->vary_recompute) return (choices){1, {(int)c->base->recompute}};
  int selective = engine == LLMEM_ENGINE_FSDP2 ? LLMEM_RECOMPUTE_PER_OP : LLMEM_RECOMPUTE_SELECTIVE;
  return (choices){3, {LLMEM_RECOMPUTE_NONE, selective, LLMEM_RECOMPUTE_FULL}};
}

/* Optimizer offload to CPU where the engine and sharding allow it (FSDP moves
 * parameters with it: CPUOffload(offload_params) is one switch). */
static choices offload_choices(const search_ctx *c, int engine, int shard) {
  int base_offload = (int)c->base->offload_optimizer;
  if (!c->opt->vary_offload) return (choices){1, {base_offload}};
  int fsdp = engine == LLMEM_ENGINE_FSDP1 || engine == LLMEM_ENGINE_FSDP2;
  int deepspeed = engine == LLMEM_ENGINE_DEEPSPEED || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int allowed = fsdp || (deepspeed && shard >= 1) || (engine == LLMEM_ENGINE_MEGATRON && shard == 1);
  return allowed ? (choices){2, {LLMEM_OFFLOAD_NONE, LLMEM_OFFLOAD_CPU}} : (choices){1, {LLMEM_OFFLOAD_NONE}};
}

static choices dtype_choices(const search_ctx *c) {
  if (!c->opt->vary_optimizer_dtype) return (choices){1, {(int)c->base->optimizer_dtype}};
  return (choices){2, {LLMEM_DTYPE_FP32, LLMEM_DTYPE_BF16}};
}

/* The structural checks of a parallel layout, cheapest first: a status, or LLMEM_OK. */
static llmem_status layout_check(const search_ctx *c, double tp, double pp, double ep, int *field) {
  const plan *bp = c->bp;
  *field = -1;
  if (!c->opt->tp_across_nodes && tp > c->base->gpus_per_node) return *field = FIELD(tp), LLMEM_ERR_SEARCH_TP_NODE;
  if (!divides(bp->in->heads, tp)) return *field = FIELD(tp), LLMEM_ERR_TP_HEADS;
  if (!divides(bp->layers, pp)) return *field = FIELD(pp), LLMEM_ERR_PP_LAYERS;
  if (bp->moe && !divides(c->base->moe_experts, ep)) return *field = FIELD(ep), LLMEM_ERR_EP_EXPERTS;
  return LLMEM_OK;
}

/* One candidate estimated (the allocator's bound here; the kept layouts are
 * simulated at the end): -1 rejected with its status, 0 valid but not fitting
 * (the caller counts it), 1 fitting and kept. */
static int try_layout(search_ctx *c, llmem_layout *l) {
  llmem_input in = search_layout_input(c->base, c->N, l);
  llmem_readings r;
  plan pl;
  int failed_field;
  llmem_status rs = estimate_readings(&in, 0, 0, &r, &pl, &failed_field);
  if (rs != LLMEM_OK) {
    reject(c, rs, failed_field, 1);
    return -1;
  }
  c->out->valid++;
  if (r.device_used_bytes > r.capacity_bytes * (1 - c->opt->free_fraction)) return 0;
  c->out->fitting++;
  l->device_used_bytes = r.device_used_bytes;
  l->step_seconds = step_time_seconds(&pl, &l->tokens_per_second_per_gpu, NULL);
  keep(c->out, l);
  return 1;
}

/* The micro-batches of one layout: estimated smallest first; memory only
 * grows with the micro-batch, so the first that does not fit ends the row. */
static void micro_batches(search_ctx *c, llmem_layout l, llmem_status structural, int structural_field) {
  llmem_search_result *out = c->out;
  for (double mb = 1; mb <= c->opt->max_micro_batch; mb *= 2) {
    out->candidates++;
    if (structural != LLMEM_OK) {
      reject(c, structural, structural_field, 1);
      continue;
    }
    if (!divides(c->B, l.dp * mb)) {
      reject(c, LLMEM_ERR_SEARCH_NO_BATCH, -1, 1); /* the batch may be the option's, not a key's */
      continue;
    }
    l.micro_batch = mb;
    l.grad_accum = c->B / (l.dp * mb);
    if (try_layout(c, &l) == 0) {
      double rest = 0; /* this one and the larger ones, not estimated */
      for (double m = mb; m <= c->opt->max_micro_batch; m *= 2) rest++;
      reject(c, LLMEM_ERR_SEARCH_NO_FIT, -1, rest);
      out->candidates += rest - 1;
      return;
    }
  }
}

/* The settings beyond the parallel layout: sharding, recompute, offload, optimizer dtype. */
static void settings(search_ctx *c, llmem_layout l, llmem_status structural, int structural_field) {
  int engine = l.engine;
  int deepspeed = engine == LLMEM_ENGINE_DEEPSPEED || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int fsdp = engine == LLMEM_ENGINE_FSDP1 || engine == LLMEM_ENGINE_FSDP2;
  double dp = l.dp;
  choices sh = sharding_choices(c, engine), rec = recompute_choices(c, engine), dt = dtype_choices(c);
  for (int si = 0; si < sh.n; si++) {
    int shard = sh.values[si];
    if (deepspeed && l.pp > 1 && shard > 1) continue; /* DeepSpeed's pipeline engine: ZeRO 0 or 1 */
    if (fsdp && shard == LLMEM_FSDP_HYBRID_SHARD && dp * l.cp <= c->base->gpus_per_node) continue;
    l.zero_stage = deepspeed ? shard : 0;
    l.fsdp_strategy = fsdp ? shard : (int)c->base->fsdp_strategy;
    l.distributed_optimizer = engine == LLMEM_ENGINE_MEGATRON ? shard : 0;
    choices off = offload_choices(c, engine, shard);
    for (int ri = 0; ri < rec.n; ri++)
      for (int oi = 0; oi < off.n; oi++)
        for (int di = 0; di < dt.n; di++) {
          l.recompute = rec.values[ri];
          l.offload_optimizer = off.values[oi];
          l.offload_params = fsdp ? off.values[oi] : (int)c->base->offload_params;
          l.optimizer_dtype = dt.values[di];
          micro_batches(c, l, structural, structural_field);
        }
  }
}

/* Every parallel layout of N GPUs for one engine. */
static void search_engine(search_ctx *c, int engine) {
  const plan *bp = c->bp;
  double N = c->N;
  int deepspeed = engine == LLMEM_ENGINE_DEEPSPEED || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int megatron = engine == LLMEM_ENGINE_MEGATRON;
  int model_parallel = engine == LLMEM_ENGINE_FSDP2 || megatron || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int interleaves = megatron || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int v_shape = c->base->pp_schedule == LLMEM_PP_ZB_V || c->base->pp_schedule == LLMEM_PP_DUALPIPE_V ||
                c->base->pp_schedule == LLMEM_PP_DUALPIPE; /* two chunks per rank */
  for (double tp = 1; tp <= (model_parallel ? 64 : 1) && tp <= N; tp *= 2) {
    if (!divides(N, tp)) continue;
    for (double pp = 1; pp <= (model_parallel || deepspeed ? 128 : 1) && tp * pp <= N; pp *= 2) {
      if (!divides(N, tp * pp)) continue;
      for (double cp = 1; cp <= (model_parallel ? 16 : 1) && tp * pp * cp <= N; cp *= 2) {
        if (!divides(N, tp * pp * cp)) continue;
        for (double ep = 1; ep <= (bp->moe ? c->base->moe_experts : 1); ep *= 2)
          for (double vpp = v_shape && pp > 1 ? 2 : 1;
               vpp <= (pp > 1 && (interleaves || v_shape) ? (v_shape ? 2 : 4) : 1); vpp *= 2) {
            llmem_layout l;
            memset(&l, 0, sizeof l);
            l.dp = N / (tp * pp * cp), l.tp = tp, l.pp = pp, l.vpp = vpp, l.cp = cp, l.ep = ep;
            l.engine = engine;
            l.sequence_parallel = tp > 1;
            l.pp_schedule =
                v_shape   ? (int)c->base->pp_schedule /* the V keeps its two chunks */
                : vpp > 1 ? LLMEM_PP_INTERLEAVED
                          : (c->base->pp_schedule == LLMEM_PP_INTERLEAVED ? LLMEM_PP_1F1B : (int)c->base->pp_schedule);
            int field;
            llmem_status why = layout_check(c, tp, pp, ep, &field);
            settings(c, l, why, field);
          }
      }
    }
  }
}

/* An RL run (core/rl.c): the rollout engine's TP (verl
 * rollout.tensor_model_parallel_size, TRL vllm_tensor_parallel_size) within a
 * node unless tp_across_nodes, beside the training layout as given (verl's and
 * TRL's FSDP workers shard by data; their sequence parallelism is the
 * config's) on N GPUs. The batches follow rl.* and stay as given; no pipeline
 * (RL runs refuse it). The step time ranks by the actor update's. */
static void search_rl(search_ctx *c, int engine) {
  const plan *bp = c->bp;
  llmem_search_result *out = c->out;
  double N = c->N, tp = bp->in->tp;
  if (divides(N, tp * bp->in->cp))
    for (double rtp = 1; rtp <= 64 && rtp <= N; rtp *= 2) {
      if (!divides(N, rtp)) continue;
      out->candidates++;
      llmem_layout l;
      memset(&l, 0, sizeof l);
      l.dp = N / (tp * bp->in->cp), l.tp = tp, l.pp = 1, l.vpp = 1, l.cp = bp->in->cp, l.ep = c->base->ep;
      l.engine = engine;
      l.sequence_parallel = tp > 1;
      l.pp_schedule = (int)c->base->pp_schedule;
      l.micro_batch = c->base->micro_batch, l.grad_accum = bp->grad_accum;
      l.recompute = (int)c->base->recompute, l.zero_stage = (int)c->base->zero_stage;
      l.fsdp_strategy = (int)c->base->fsdp_strategy, l.distributed_optimizer = (int)c->base->distributed_optimizer;
      l.offload_optimizer = (int)c->base->offload_optimizer, l.offload_params = (int)c->base->offload_params;
      l.optimizer_dtype = (int)c->base->optimizer_dtype;
      l.rollout_tp = rtp;
      int field;
      llmem_status why = layout_check(c, tp, 1, l.ep, &field);
      if (why == LLMEM_OK && !c->opt->tp_across_nodes && rtp > c->base->gpus_per_node)
        why = LLMEM_ERR_SEARCH_TP_NODE, field = FIELD(rl_rollout_tp);
      if (why != LLMEM_OK) {
        reject(c, why, field, 1);
        continue;
      }
      if (try_layout(c, &l) == 0) reject(c, LLMEM_ERR_SEARCH_NO_FIT, -1, 1);
    }
}

/* Pareto front of the kept layouts: no other is both faster and smaller. */
static void mark_pareto(llmem_search_result *out) {
  for (int i = 0; i < out->count; i++) {
    int dominated = 0;
    for (int j = 0; j < out->count && !dominated; j++)
      dominated = j != i && out->layouts[j].step_seconds <= out->layouts[i].step_seconds &&
                  out->layouts[j].device_used_bytes <= out->layouts[i].device_used_bytes &&
                  (out->layouts[j].step_seconds < out->layouts[i].step_seconds ||
                   out->layouts[j].device_used_bytes < out->layouts[i].device_used_bytes);
    out->layouts[i].pareto = !dominated;
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
  search_ctx c = {base, &bp, opt, out, opt->gpus, 0, {0}};
  for (int i = 0; i < LLMEM_STATUS_COUNT; i++) c.failure_field[i] = -1;
  c.B = opt->global_batch > 0 ? opt->global_batch : bp.in->micro_batch * bp.grad_accum * bp.dp;
  out->global_batch = c.B;
  int engine = (int)base->engine;
  if (engine == LLMEM_ENGINE_SINGLE && c.N > 1) engine = LLMEM_ENGINE_FSDP2;
  if (base->rl_algorithm != LLMEM_RL_NONE) out->global_batch = 0; /* an RL step's batches follow rl.* */
  if (base->rl_algorithm != LLMEM_RL_NONE) search_rl(&c, engine);
  else search_engine(&c, engine);
  if (opt->vary_engine && base->rl_algorithm == LLMEM_RL_NONE) {
    static const int others[] = {LLMEM_ENGINE_FSDP2, LLMEM_ENGINE_MEGATRON, LLMEM_ENGINE_DEEPSPEED};
    for (int i = 0; i < 3; i++)
      if (others[i] != engine) search_engine(&c, others[i]);
  }
  recheck_kept(base, c.N, opt, out);
  if (out->count == 0) set_empty_reason(&c);
  mark_pareto(out);
  out->status = LLMEM_OK;
  return LLMEM_OK;
}
