/* Filling the result: warnings (deduplicated) and the error text
 * "path: message (allowed: ...)". Used by estimate.c and compat.c. */
#include "internal.h"
#include "result_text.h"

/* "path: message (allowed: a | b | c)" */
void result_fill_error(llmem_result *out, llmem_status st, int field) {
  out->status = st;
  out->error_field = field;
  const llmem_field *f = llmem_field_at(field);
  const char *path = f ? f->path : "";
  text_append(out->error_path, 0, sizeof out->error_path, path);
  size_t cap = sizeof out->error_message, n = 0;
  out->error_message[0] = 0;
  if (f) {
    n = text_append(out->error_message, n, cap, path);
    n = text_append(out->error_message, n, cap, ": ");
  }
  n = text_append(out->error_message, n, cap, llmem_status_message(st));
  if (!f) return;
  if (st == LLMEM_ERR_BAD_ENUM || st == LLMEM_ERR_BAD_SET) {
    n = text_append(out->error_message, n, cap, " (allowed: ");
    if (f->kind == LLMEM_KIND_BOOL) n = text_append(out->error_message, n, cap, "true | false");
    for (int i = 0; f->kind != LLMEM_KIND_BOOL && i < f->value_count; i++) {
      if (i) n = text_append(out->error_message, n, cap, " | ");
      n = text_append(out->error_message, n, cap, f->values[i]);
    }
    n = text_append(out->error_message, n, cap, ")");
  } else if (st == LLMEM_ERR_OUT_OF_RANGE || st == LLMEM_ERR_NOT_INTEGER || st == LLMEM_ERR_NOT_A_NUMBER) {
    n = text_append(out->error_message, n, cap, " (allowed: ");
    n = text_append(out->error_message, n, cap, f->kind == LLMEM_KIND_INT ? "whole number from " : "number from ");
    n = text_append_number(out->error_message, n, cap, f->min_value);
    n = text_append(out->error_message, n, cap, " to ");
    n = text_append_number(out->error_message, n, cap, f->max_value);
    n = text_append(out->error_message, n, cap, ")");
  } else if (st == LLMEM_ERR_NOT_NULLABLE) {
    n = text_append(out->error_message, n, cap, " (give a value)");
  }
}

void result_add_warning(llmem_result *out, llmem_warning w) {
  for (int i = 0; i < out->warning_count; i++)
    if (out->warnings[i] == (int)w) return;
  if (out->warning_count < LLMEM_MAX_WARNINGS) out->warnings[out->warning_count++] = (int)w;
}
