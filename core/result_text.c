/* Bounded string building for the result's messages and the wasm boundary; the error text. */
#include <math.h>

#include "result_text.h"

size_t text_append(char *dst, size_t n, size_t cap, const char *s) {
  while (s && *s && n + 1 < cap) dst[n++] = *s++;
  dst[n] = 0;
  return n;
}

size_t text_append_int(char *dst, size_t n, size_t cap, double v) {
  char digits[32];
  int len = 0;
  long long x = (long long)v;
  int neg = x < 0;
  if (neg) x = -x;
  do {
    digits[len++] = (char)('0' + x % 10);
    x /= 10;
  } while (x && len < 30);
  if (neg) digits[len++] = '-';
  char out[32];
  for (int i = 0; i < len; i++) out[i] = digits[len - 1 - i];
  out[len] = 0;
  return text_append(dst, n, cap, out);
}

/* A bound: whole numbers as integers, others with up to 6 decimals (0.999, 0.01). */
size_t text_append_number(char *dst, size_t n, size_t cap, double v) {
  if (v == floor(v)) return text_append_int(dst, n, cap, v);
  if (v < 0) {
    n = text_append(dst, n, cap, "-");
    v = -v;
  }
  double whole = floor(v);
  long long frac = (long long)llround((v - whole) * 1e6);
  if (frac >= 1000000) {
    whole += 1;
    frac -= 1000000;
  }
  n = text_append_int(dst, n, cap, whole);
  if (frac == 0) return n;
  char digits[8] = ".000000";
  for (int i = 6; i >= 1; i--, frac /= 10) digits[i] = (char)('0' + frac % 10);
  int len = 7;
  while (digits[len - 1] == '0') len--;
  digits[len] = 0;
  return text_append(dst, n, cap, digits);
}

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
