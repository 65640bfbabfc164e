/* The wasm boundary: the only code that JS calls. One input block, one
 * result block, the field table and the name lists. scripts/gen-boundary.mjs
 * reads them at build time into wasm/generated.ts (the types: key paths,
 * config v1), with the result structs' offsets from wasm/layout.c, so the
 * TypeScript wrapper never hard-codes a struct offset. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "layout.h"
#include "llmem.h"
#include "result_text.h"

static llmem_input input_block;
static llmem_result result_block;
static double sweep_values[LLMEM_MAX_SWEEP];
static llmem_sweep_point sweep_points[LLMEM_MAX_SWEEP];
static llmem_search_result search_block;
static llmem_suggest_result suggest_block;
static llmem_search_options search_options;
static llmem_suggest_options suggest_options;
static llmem_step_result step_block;

int llmem_abi_version(void) { return LLMEM_ABI_VERSION; }
int llmem_layout_check(void) { return layout_sizes_check(); }
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
/* step seconds, or -(status); tokens per second per GPU via llmem_step_tokens, its parts via llmem_step_part_seconds */
double llmem_step_time_run(void) {
  llmem_status st = llmem_step_time(&input_block, &step_block);
  if (st == LLMEM_OK) return step_block.step_seconds;
  return refused(&input_block) ? -(double)result_block.status : -(double)fail(st, -1);
}
double llmem_step_tokens(void) { return step_block.tokens_per_second_per_gpu; }
double llmem_step_part_seconds(int part) {
  return part >= 0 && part < LLMEM_STEP_PART_COUNT ? step_block.parts_seconds[part] : 0;
}
const char *llmem_step_part_text(int part) { return llmem_step_part_name(part); }

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
/* the input block's profile value of field i (NaN: none), its term and its row of core/profiles.def (the
 * source texts are in wasm/profile-sources.json) */
static int profile_term;
double llmem_profile_value_run(int i) { return llmem_profile_value(&input_block, i, &profile_term, 0); }
int llmem_profile_term(void) { return profile_term; }
int llmem_profile_row_run(int i) { return llmem_profile_row(&input_block, i); }
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
