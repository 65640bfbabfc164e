/* The wasm boundary: the only code that JS calls. One input block, one
 * result block, the field table, and the result layout (offsets), so the
 * TypeScript wrapper never hard-codes a struct offset. */
#include <stddef.h>
#include <string.h>

#include "llmem.h"

static llmem_input input_block;
static llmem_result result_block;
static char layout_text[4096];

int llmem_abi_version(void) { return LLMEM_ABI_VERSION; }
double *llmem_input_ptr(void) { return (double *)&input_block; }
llmem_result *llmem_result_ptr(void) { return &result_block; }
int llmem_field_count(void) { return LLMEM_FIELD_COUNT; }
void llmem_reset_input(void) { llmem_defaults(&input_block); }
int llmem_run(void) { return (int)llmem_estimate(&input_block, &result_block); }

const char *llmem_field_path(int i) { const llmem_field *f = llmem_field_at(i); return f ? f->path : 0; }
int llmem_field_kind(int i) { const llmem_field *f = llmem_field_at(i); return f ? f->kind : -1; }
int llmem_field_flags(int i) { const llmem_field *f = llmem_field_at(i); return f ? f->flags : 0; }
double llmem_field_default(int i) { const llmem_field *f = llmem_field_at(i); return f ? f->default_value : 0; }
double llmem_field_min(int i) { const llmem_field *f = llmem_field_at(i); return f ? f->min_value : 0; }
double llmem_field_max(int i) { const llmem_field *f = llmem_field_at(i); return f ? f->max_value : 0; }
int llmem_field_value_count(int i) {
  const llmem_field *f = llmem_field_at(i);
  return f && (f->kind == LLMEM_KIND_ENUM || f->kind == LLMEM_KIND_SET) ? f->value_count : 0;
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

static size_t put(size_t n, const char *s) {
  while (*s && n + 1 < sizeof layout_text) layout_text[n++] = *s++;
  layout_text[n] = 0;
  return n;
}
static size_t put_num(size_t n, const char *key, size_t v) {
  char digits[24];
  int len = 0;
  do { digits[len++] = (char)('0' + v % 10); v /= 10; } while (v);
  n = put(n, "\"");
  n = put(n, key);
  n = put(n, "\":");
  while (len) { char c[2] = {digits[--len], 0}; n = put(n, c); }
  return put(n, ",");
}

/* {"result":{...offsets...},"rank":{...},"event":{...}} */
const char *llmem_layout(void) {
  size_t n = 0;
#define R(m) n = put_num(n, #m, offsetof(llmem_result, m))
#define K(m) n = put_num(n, #m, offsetof(llmem_rank_result, m))
#define E(m) n = put_num(n, #m, offsetof(llmem_event, m))
#define T(m) n = put_num(n, #m, offsetof(llmem_term, m))
  n = put(n, "{\"result\":{");
  R(status); R(error_field); R(error_path); R(error_message); R(per_gpu); R(peak_at); R(rank_count); R(ranks);
  R(params_total); R(params_active); R(params_trainable); R(params_per_gpu); R(host_cpu_bytes); R(host_nvme_bytes);
  R(fits); R(utilization); R(capacity_bytes); R(warning_count); R(warnings); R(event_count); R(event_stride); R(events);
  R(term_count); R(terms);
  n = put_num(n, "size", sizeof(llmem_result));
  n = put(n, "\"end\":0},\"rank\":{");
  K(peak_allocated_bytes); K(peak_reserved_bytes); K(device_used_bytes); K(breakdown_bytes); K(persistent_bytes);
  K(params_count); K(layers_count); K(peak_phase); K(peak_micro_batch); K(peak_layer); K(stage);
  n = put_num(n, "size", sizeof(llmem_rank_result));
  n = put(n, "\"end\":0},\"event\":{");
  E(total_bytes); E(category_bytes); E(phase); E(micro_batch); E(layer);
  n = put_num(n, "size", sizeof(llmem_event));
  n = put(n, "\"end\":0},\"term\":{");
  T(id); T(category); T(value_bytes); T(inputs);
  n = put_num(n, "size", sizeof(llmem_term));
  n = put(n, "\"end\":0}}");
#undef R
#undef K
#undef E
#undef T
  return layout_text;
}
