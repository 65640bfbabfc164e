#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int check_passed, check_failed;

int near(double got, double want, double rel) {
  if (rel == 0) return got == want;
  return fabs(got - want) <= rel * fabs(want);
}

int set_key(llmem_input *in, const char *path, const char *value) {
  int i = llmem_field_index(path);
  if (i < 0) return 0;
  const llmem_field *f = llmem_field_at(i);
  double *slot = (double *)((char *)in + f->offset);
  if (strcmp(value, "null") == 0) {
    *slot = NAN;
    return 1;
  }
  switch (f->kind) {
    case LLMEM_KIND_LIST: {
      char buf[4096];
      int n = 0;
      snprintf(buf, sizeof buf, "%s", value);
      for (int k = 0; k < LLMEM_MAX_PATTERN; k++) slot[k] = NAN;
      for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int j = 0; j < f->value_count; j++)
          if (strcmp(f->values[j], tok) == 0) found = j;
        if (found < 0 || n == LLMEM_MAX_PATTERN) return 0;
        slot[n++] = found;
      }
      return n > 0;
    }
    case LLMEM_KIND_BOOL:
      *slot = strcmp(value, "true") == 0 ? 1 : 0;
      return strcmp(value, "true") == 0 || strcmp(value, "false") == 0;
    case LLMEM_KIND_ENUM:
      for (int j = 0; j < f->value_count; j++)
        if (strcmp(f->values[j], value) == 0) {
          *slot = j;
          return 1;
        }
      return 0;
    case LLMEM_KIND_SET: {
      double mask = 0;
      char buf[256];
      snprintf(buf, sizeof buf, "%s", value);
      for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int j = 0; j < f->value_count; j++)
          if (strcmp(f->values[j], tok) == 0) {
            mask += (double)(1 << j);
            found = 1;
          }
        if (!found) return 0;
      }
      *slot = mask;
      return 1;
    }
    case LLMEM_KIND_TEXT: {
      int year, month;
      if (!(f->flags & LLMEM_FLAG_MONTHS)) return 1;
      if (sscanf(value, "%4d-%2d", &year, &month) != 2) return 0; /* "YYYY-MM" as the wrapper stores it */
      *slot = year * 12 + month - 1;
      return 1;
    }
    case LLMEM_KIND_GROUP: return 1;
    default: {
      char *end;
      *slot = strtod(value, &end);
      return *end == 0;
    }
  }
}

int set_keys(llmem_input *in, const char *spec) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) return 0;
    *eq = 0;
    if (!set_key(in, tok, eq + 1)) {
      fprintf(stderr, "unknown key or value: %s=%s\n", tok, eq + 1);
      return 0;
    }
  }
  return 1;
}

double metric_of(const llmem_result *r, const char *metric) {
  const double *b = r->per_gpu.breakdown_bytes;
  if (strcmp(metric, "params.total") == 0) return r->params_total;
  if (strcmp(metric, "params.active") == 0) return r->params_active;
  if (strcmp(metric, "params.trainable") == 0) return r->params_trainable;
  if (strcmp(metric, "peak_allocated") == 0) return r->per_gpu.peak_allocated_bytes;
  if (strcmp(metric, "host_cpu") == 0) return r->host_cpu_bytes;
  if (strcmp(metric, "model_states") == 0)
    return b[LLMEM_CAT_WEIGHTS] + b[LLMEM_CAT_GRADIENTS] + b[LLMEM_CAT_MASTER_WEIGHTS] + b[LLMEM_CAT_OPTIMIZER_STATES];
  for (int c = 0; c < LLMEM_CAT_COUNT; c++)
    if (strcmp(metric, llmem_category_name(c)) == 0) return b[c];
  return NAN;
}

int check_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
  return check_failed ? 1 : 0;
}

/* ---- shared by the tests: estimates and plans from "path=value ..." ---- */
#include "check_plan.h"

int has_warning(const llmem_result *r, int w) {
  for (int i = 0; i < r->warning_count; i++)
    if (r->warnings[i] == w) return 1;
  return 0;
}

int run_keys(const char *keys, llmem_result *out) {
  llmem_input in;
  llmem_defaults(&in);
  CHECK(set_keys(&in, keys), "keys %s", keys);
  llmem_status st = llmem_estimate(&in, out);
  CHECK(st == LLMEM_OK, "estimate %s: %s", keys, out->error_message);
  return st == LLMEM_OK;
}

/* a ring of inputs: a plan points at its input, so recent plans stay valid */
static llmem_input plan_inputs[64];
static int plan_next;

plan plan_for(const char *keys) {
  llmem_input *in = &plan_inputs[plan_next];
  plan_next = (plan_next + 1) % 64;
  llmem_defaults(in);
  CHECK(set_keys(in, keys), "keys %s", keys);
  plan pl = {0};
  int field;
  const char *detail;
  llmem_status st = plan_build(in, &pl, &field, &detail);
  CHECK(st == LLMEM_OK, "plan %s: status %d (field %d)", keys, st, field);
  return pl;
}

llmem_input *last_plan_input(void) { return &plan_inputs[(plan_next + 63) % 64]; }

/* The input a kept search layout stands for, applied by hand (the oracle beside core/search.c's). */
llmem_input layout_input(const llmem_input *base, double gpus, const llmem_layout *l) {
  llmem_input c = *base;
  c.gpus = gpus;
  c.engine = l->engine;
  c.tp = l->tp;
  c.pp = l->pp;
  c.vpp = l->vpp;
  c.cp = l->cp;
  c.ep = l->ep;
  c.etp = 1;
  c.micro_batch = l->micro_batch;
  c.grad_accum = l->grad_accum;
  c.recompute = l->recompute;
  c.recompute_layers = NAN;
  c.fsdp_strategy = l->fsdp_strategy;
  c.sequence_parallel = l->sequence_parallel;
  c.pp_schedule = l->pp_schedule;
  c.pp_first_stage_layers = NAN;
  c.pp_last_stage_layers = NAN;
  c.zero_stage = l->zero_stage;
  c.distributed_optimizer = l->distributed_optimizer;
  c.offload_optimizer = l->offload_optimizer;
  c.offload_params = l->offload_params;
  c.optimizer_dtype = l->optimizer_dtype;
  if (!isnan(c.global_batch)) c.global_batch = l->dp * l->micro_batch * l->grad_accum;
  if (l->rollout_tp > 0) c.rl_rollout_tp = l->rollout_tp;
  return c;
}

/* ---- random valid-looking configs (test_properties, test_trace_replay) ---- */
static uint64_t rng = 0x9E3779B97F4A7C15ull; /* one sequence per test process */
static unsigned next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 16);
}
int check_pick(int n) { return (int)(next() % (unsigned)n); }
double check_pick_of(const double *v, int n) { return v[check_pick(n)]; }

void check_random_config(llmem_input *in) {
  llmem_defaults(in);
  static const double hidden[] = {256, 512, 1024, 2048, 4096};
  static const double heads[] = {4, 8, 16, 32};
  static const double layers[] = {2, 4, 8, 12, 16, 24, 32};
  in->hidden = check_pick_of(hidden, 5);
  in->heads = check_pick_of(heads, 4);
  in->kv_heads = in->heads / (double)(1 << check_pick(3));
  in->layers = check_pick_of(layers, 7);
  in->ffn_hidden = in->hidden * (check_pick(2) ? 4 : 3.5);
  in->vocab = check_pick(2) ? 32000 : 128256;
  in->mlp = check_pick(2);
  in->tied_embeddings = check_pick(2);
  in->norm = check_pick(2);
  in->bias = check_pick(4) == 0;
  if (check_pick(4) == 0) {
    in->moe_experts = 8;
    in->moe_top_k = 1 + check_pick(2);
    in->moe_shared_experts = check_pick(2);
    in->moe_dense_layers = check_pick(3);
    in->moe_layer_freq = 1 + check_pick(2);
  }
  static const double mb[] = {1, 2, 4}, seq[] = {256, 1024, 2048, 4096};
  in->micro_batch = check_pick_of(mb, 3);
  in->seq_len = check_pick_of(seq, 4);
  in->grad_accum = 1 + check_pick(4);
  in->dtype = check_pick(3) == 0 ? LLMEM_DTYPE_FP32 : LLMEM_DTYPE_BF16;
  in->master_weights = check_pick(2);
  in->optimizer = check_pick(LLMEM_OPTIMIZER_COUNT_);
  in->optimizer_impl = check_pick(3);
  in->recompute = check_pick(4);
  in->recompute_modules = check_pick(1 << LLMEM_RECOMPUTE_MODULE_COUNT_);
  in->paged_optimizer = check_pick(8) == 0;
  in->activation_offload = check_pick(8) == 0;
  in->attention = check_pick(3);
  in->loss = check_pick(4);
  in->dropout = check_pick(3) == 0 ? 0.1 : 0;
  in->torch_compile = check_pick(2);
  if (check_pick(4) == 0) {
    in->ft_method = 1 + check_pick(2);
    in->lora_rank = 8 << check_pick(3);
  }
  static const double gpus[] = {1, 2, 4, 8, 16, 64};
  in->gpus = check_pick_of(gpus, 6);
  in->engine = check_pick(LLMEM_ENGINE_COUNT_);
  if (in->engine == LLMEM_ENGINE_SINGLE) in->gpus = 1;
  if (in->engine == LLMEM_ENGINE_DEEPSPEED || in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED)
    in->zero_stage = check_pick(4);
  if (in->engine == LLMEM_ENGINE_FSDP1 || in->engine == LLMEM_ENGINE_FSDP2) in->fsdp_strategy = check_pick(4);
  if (in->engine == LLMEM_ENGINE_MEGATRON) in->distributed_optimizer = check_pick(2);
  if (in->engine == LLMEM_ENGINE_MEGATRON || in->engine == LLMEM_ENGINE_FSDP2 ||
      in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED) {
    in->tp = (double)(1 << check_pick(3));
    in->pp = (double)(1 << check_pick(3));
    if (check_pick(3) == 0) in->cp = 2;
    in->sequence_parallel = check_pick(2);
    in->pp_schedule = check_pick(4);
    if (in->pp_schedule == LLMEM_PP_INTERLEAVED && in->pp > 1) {
      in->vpp = 2;
      in->grad_accum = in->pp * (1 + check_pick(2));
    }
  }
  if (in->moe_experts > 0 && check_pick(2)) in->ep = 2;
  if (check_pick(6) == 0) { /* an RL step (core/rl.c): no pipeline parallelism */
    static const double lens[] = {128, 512, 1024}, shares[] = {0.2, 0.4, 0.8};
    in->pp = 1, in->vpp = 1, in->pp_schedule = LLMEM_PP_1F1B;
    in->rl_algorithm = 1 + check_pick(LLMEM_RL_ALGORITHM_COUNT_ - 1);
    in->rl_group_size = (double)(1 << check_pick(4));
    in->rl_prompt_len = check_pick_of(lens, 3);
    in->rl_response_len = check_pick_of(lens, 3);
    double model_ranks = in->tp * in->cp, dp = fmod(in->gpus, model_ranks) == 0 ? in->gpus / model_ranks : 1;
    in->rl_rollout_batch = dp * in->micro_batch * (1 + check_pick(2));
    in->rl_rollout_tp = in->tp;
    in->rl_gpu_memory_utilization = check_pick_of(shares, 3);
    in->rl_sleep = check_pick(LLMEM_RL_SLEEP_COUNT_);
    in->rl_actor_param_offload = check_pick(2);
    in->rl_actor_optimizer_offload = check_pick(2);
    in->rl_ref_enabled = check_pick(2);
    in->rl_reward_enabled = check_pick(2);
    in->rl_weight_sync = check_pick(2);
    in->rl_entropy = check_pick(2);
    in->rl_logits_response_only = check_pick(2);
    if (check_pick(3) == 0) in->rl_remove_padding = 1, in->rl_response_len_mean = in->rl_response_len / 2;
    if (check_pick(3) == 0) in->rl_max_tokens = 4 * (in->rl_prompt_len + in->rl_response_len);
    in->rl_placement = check_pick(4) == 0;
    in->rl_engine = check_pick(2);
  }
}
