/* Bounded string building for the result's messages and the wasm boundary. */
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
