#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <math.h>
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
