/* The wasm boundary: the only code that JS calls. One input block, one
 * result block, the field table, the name lists and the result layout
 * (offsets), so the TypeScript wrapper never hard-codes a struct offset.
 * scripts/gen-boundary.mjs reads them at build time into wasm/generated.ts
 * (the types: key paths, config v1, the members of the layout). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "llmem.h"
#include "result_text.h"

static llmem_input input_block;
static llmem_result result_block;
static char layout_text[8192];
static double sweep_values[LLMEM_MAX_SWEEP];
static llmem_sweep_point sweep_points[LLMEM_MAX_SWEEP];
static llmem_search_result search_block;
static llmem_suggest_result suggest_block;
static llmem_search_options search_options;
static llmem_suggest_options suggest_options;
static double step_tokens;

int llmem_abi_version(void) { return LLMEM_ABI_VERSION; }
double *llmem_input_ptr(void) { return (double *)&input_block; }
llmem_result *llmem_result_ptr(void) { return &result_block; }
int llmem_field_count(void) { return LLMEM_FIELD_COUNT; }
/* a field's first slot in the input block (a LIST key has LLMEM_MAX_PATTERN), and the block's slots */
int llmem_field_slot(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f ? (int)(f->offset / sizeof(double)) : -1;
}
int llmem_slot_count(void) { return LLMEM_SLOT_COUNT; }
void llmem_reset_input(void) { llmem_defaults(&input_block); }
int llmem_run(void) { return (int)llmem_estimate(&input_block, &result_block); }

/* Every call's failure in one place, the result block's error members, worded as llmem_estimate words its own
 * ("path: message (allowed: ...)"); field -1: a problem of the call's options, which names them itself. */
static int fail(llmem_status st, int field) {
  if (st != LLMEM_OK) result_fill_error(&result_block, st, field);
  return (int)st;
}
/* A config the core refuses: llmem_estimate names the key and words the error (a planner call's status does not). */
static int refused(const llmem_input *in) { return (int)llmem_estimate(in, &result_block); }

/* planner */
int llmem_sweep_capacity(void) { return LLMEM_MAX_SWEEP; }
double *llmem_sweep_values_ptr(void) { return sweep_values; }
llmem_sweep_point *llmem_sweep_points_ptr(void) { return sweep_points; }
int llmem_sweep_run(int field, int count) {
  return fail(llmem_sweep(&input_block, field, sweep_values, count, sweep_points), -1);
}
/* the largest fitting value, or -(status): an option's, or the config's at the range's first value */
double llmem_largest_fit_run(int field, double lo, double hi, double step, double free_fraction) {
  double best = 0;
  llmem_status st = llmem_largest_fit(&input_block, field, lo, hi, step, free_fraction, &best);
  if (st == LLMEM_OK) return best;
  if (st >= LLMEM_ERR_OPTION_GPUS && st <= LLMEM_ERR_OPTION_COUNT) return -fail(st, -1);
  llmem_input in = input_block;
  *(double *)((char *)&in + llmem_field_at(field)->offset) = step * ceil(lo / step);
  return refused(&in) ? -(double)result_block.status : -(double)fail(st, -1);
}
llmem_search_result *llmem_search_ptr(void) { return &search_block; }
/* the options block, reset to the core's defaults (llmem_search_defaults): the caller writes the options it sets */
llmem_search_options *llmem_search_options_ptr(void) {
  llmem_search_defaults(&search_options);
  return &search_options;
}
int llmem_search_run(void) {
  return fail(llmem_search(&input_block, &search_options, &search_block), search_block.error_field);
}
llmem_suggest_result *llmem_suggest_ptr(void) { return &suggest_block; }
llmem_suggest_options *llmem_suggest_options_ptr(void) {
  llmem_suggest_defaults(&suggest_options);
  return &suggest_options;
}
int llmem_suggest_run(void) {
  return fail(llmem_suggest(&input_block, &suggest_options, &suggest_block), suggest_block.error_field);
}
const char *llmem_suggest_kind_text(int k) { return llmem_suggest_kind_name(k); }
/* step seconds, or -(status); tokens per second per GPU via llmem_step_tokens */
double llmem_step_time_run(void) {
  double seconds = 0;
  llmem_status st = llmem_step_time(&input_block, &seconds, &step_tokens);
  if (st == LLMEM_OK) return seconds;
  return refused(&input_block) ? -(double)result_block.status : -(double)fail(st, -1);
}
double llmem_step_tokens(void) { return step_tokens; }

const char *llmem_field_path(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f ? f->path : 0;
}
int llmem_field_kind(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f ? f->kind : -1;
}
int llmem_field_flags(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f ? f->flags : 0;
}
/* the input block's profile value of field i (NaN: none), its term and source */
static int profile_term;
static const char *profile_source;
double llmem_profile_value_run(int i) { return llmem_profile_value(&input_block, i, &profile_term, &profile_source); }
int llmem_profile_term(void) { return profile_term; }
const char *llmem_profile_source_text(void) { return profile_source ? profile_source : ""; }
double llmem_field_default(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f ? f->default_value : 0;
}
double llmem_field_min(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f ? f->min_value : 0;
}
double llmem_field_max(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f ? f->max_value : 0;
}
int llmem_field_value_count(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f && (f->kind == LLMEM_KIND_ENUM || f->kind == LLMEM_KIND_SET || f->kind == LLMEM_KIND_LIST) ? f->value_count
                                                                                                      : 0;
}
const char *llmem_field_value(int i, int j) {
  const llmem_field *f = llmem_field_at(i);
  return f && j >= 0 && j < llmem_field_value_count(i) ? f->values[j] : 0;
}
const char *llmem_status_text(int s) { return llmem_status_message((llmem_status)s); }
const char *llmem_warning_text(int w) { return llmem_warning_message((llmem_warning)w); }
const char *llmem_category_text(int c) { return llmem_category_name(c); }
const char *llmem_phase_text(int p) { return llmem_phase_name(p); }
const char *llmem_term_label_text(int t) { return llmem_term_label(t); }
const char *llmem_term_formula_text(int t) { return llmem_term_formula(t); }
int llmem_category_count(void) { return LLMEM_CAT_COUNT; }
const char *llmem_rl_model_text(int m) { return llmem_rl_model_name(m); }

static size_t put(size_t n, const char *s) { return text_append(layout_text, n, sizeof layout_text, s); }
static size_t put_num(size_t n, const char *key, size_t v) {
  n = put(n, "\"");
  n = put(n, key);
  n = put(n, "\":");
  n = text_append_int(layout_text, n, sizeof layout_text, (double)v);
  return put(n, ",");
}

/* {"result":{...offsets...},"rank":{...},"event":{...}} */
const char *llmem_result_layout(void) {
  size_t n = 0;
#define R(m) n = put_num(n, #m, offsetof(llmem_result, m))
#define K(m) n = put_num(n, #m, offsetof(llmem_rank_result, m))
#define E(m) n = put_num(n, #m, offsetof(llmem_event, m))
#define T(m) n = put_num(n, #m, offsetof(llmem_term, m))
#define F(m) n = put_num(n, #m, offsetof(llmem_rl_phase, m))
#define D(m) n = put_num(n, #m, offsetof(llmem_readings, m))
#define P(m) n = put_num(n, #m, offsetof(llmem_sweep_point, m))
#define S(m) n = put_num(n, #m, offsetof(llmem_search_result, m))
#define L(m) n = put_num(n, #m, offsetof(llmem_layout, m))
#define G(m) n = put_num(n, #m, offsetof(llmem_suggest_result, m))
#define H(m) n = put_num(n, #m, offsetof(llmem_suggestion, m))
#define O(m) n = put_num(n, #m, offsetof(llmem_search_options, m))
#define U(m) n = put_num(n, #m, offsetof(llmem_suggest_options, m))
  n = put(n, "{\"result\":{");
  R(status);
  R(error_field);
  R(error_path);
  R(error_message);
  R(per_gpu);
  R(peak_allocated_bytes);
  R(peak_allocated_stage);
  R(peak_at);
  R(rank_count);
  R(ranks);
  R(params_total);
  R(params_active);
  R(params_trainable);
  R(params_per_gpu);
  R(host_cpu_bytes);
  R(host_nvme_bytes);
  R(fits);
  R(utilization);
  R(capacity_bytes);
  R(warning_count);
  R(warnings);
  R(event_count);
  R(event_stride);
  R(events);
  R(term_count);
  R(terms);
  R(rl_phase_count);
  R(rl_phases);
  R(rl_kv_cache_bytes);
  R(rl_kv_cache_tokens);
  R(rl_engine_bytes);
  n = put_num(n, "size", sizeof(llmem_result));
  n = put(n, "\"end\":0},\"rank\":{");
  K(peak_allocated_bytes);
  K(peak_reserved_bytes);
  K(device_used_bytes);
  K(breakdown_bytes);
  K(persistent_bytes);
  K(fragmentation_bytes);
  K(largest_free_block_bytes);
  K(reserved_simulated);
  K(params_count);
  K(layers_count);
  K(mixer_layers_count);
  K(moe_layers_count);
  K(peak_phase);
  K(peak_micro_batch);
  K(peak_layer);
  K(stage);
  K(peak_bound);
  K(bound_stage);
  n = put_num(n, "size", sizeof(llmem_rank_result));
  n = put(n, "\"end\":0},\"event\":{");
  E(total_bytes);
  E(category_bytes);
  E(reserved_bytes);
  E(phase);
  E(micro_batch);
  E(layer);
  E(skipped_ops);
  n = put_num(n, "size", sizeof(llmem_event));
  n = put(n, "\"end\":0},\"rl_phase\":{");
  F(phase);
  F(peak_allocated_bytes);
  F(device_used_bytes);
  F(breakdown_bytes);
  F(model_bytes);
  n = put_num(n, "size", sizeof(llmem_rl_phase));
  n = put(n, "\"end\":0},\"term\":{");
  T(id);
  T(category);
  T(value_bytes);
  T(inputs);
  n = put_num(n, "size", sizeof(llmem_term));
  n = put(n, "\"end\":0},\"readings\":{");
  D(status);
  D(peak_allocated_bytes);
  D(peak_reserved_bytes);
  D(device_used_bytes);
  D(capacity_bytes);
  D(fits);
  n = put_num(n, "size", sizeof(llmem_readings));
  n = put(n, "\"end\":0},\"sweep_point\":{");
  P(value);
  P(readings);
  n = put_num(n, "size", sizeof(llmem_sweep_point));
  n = put(n, "\"end\":0},\"search\":{");
  S(status);
  S(error_field);
  S(candidates);
  S(valid);
  S(fitting);
  S(count);
  S(empty_reason);
  S(empty_field);
  S(global_batch);
  S(rejected);
  S(layouts);
  n = put_num(n, "status_count", LLMEM_STATUS_COUNT);
  n = put(n, "\"end\":0},\"layout\":{");
  L(dp);
  L(tp);
  L(pp);
  L(vpp);
  L(cp);
  L(ep);
  L(micro_batch);
  L(grad_accum);
  L(rollout_tp);
  L(engine);
  L(recompute);
  L(zero_stage);
  L(fsdp_strategy);
  L(distributed_optimizer);
  L(sequence_parallel);
  L(pp_schedule);
  L(offload_optimizer);
  L(offload_params);
  L(optimizer_dtype);
  L(device_used_bytes);
  L(step_seconds);
  L(tokens_per_second_per_gpu);
  L(pareto);
  n = put_num(n, "size", sizeof(llmem_layout));
  n = put(n, "\"end\":0},\"suggest\":{");
  G(status);
  G(error_field);
  G(base_fits);
  G(base_device_used_bytes);
  G(capacity_bytes);
  G(base_step_seconds);
  G(candidates);
  G(fewest_gpus);
  G(fewest_index);
  G(count);
  G(suggestions);
  n = put(n, "\"end\":0},\"suggestion\":{");
  H(values);
  H(fields);
  H(change_count);
  H(kind);
  H(peak_allocated_bytes);
  H(peak_reserved_bytes);
  H(device_used_bytes);
  H(host_cpu_bytes);
  H(host_cpu_bytes_per_node);
  H(host_nvme_bytes);
  H(step_seconds);
  H(time_ratio);
  H(gpus);
  n = put_num(n, "size", sizeof(llmem_suggestion));
  n = put(n, "\"end\":0},\"search_options\":{");
  O(gpus);
  O(global_batch);
  O(free_fraction);
  O(max_micro_batch);
  O(vary_sharding);
  O(vary_recompute);
  O(vary_offload);
  O(vary_optimizer_dtype);
  O(vary_engine);
  O(tp_across_nodes);
  n = put(n, "\"end\":0},\"suggest_options\":{");
  U(free_fraction);
  U(max_gpus);
  n = put(n, "\"end\":0}}");
#undef R
#undef K
#undef E
#undef T
#undef F
#undef D
#undef P
#undef S
#undef L
#undef G
#undef H
#undef O
#undef U
  return layout_text;
}
