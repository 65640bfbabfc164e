/* libFuzzer target for the core entry point: the bytes pick fields and
 * values (half of them plausible, half arbitrary doubles incl. NaN/inf).
 * Whatever comes in, llmem_estimate must not crash, must return a status from
 * the list, and on success every number must be finite and consistent. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llmem.h"

static llmem_result out;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llmem_input in;
  llmem_defaults(&in);
  double *slot = (double *)&in;
  size_t i = 0;
  while (i + 2 <= size) {
    int field = data[i] % LLMEM_FIELD_COUNT;
    uint8_t mode = data[i + 1];
    i += 2;
    const llmem_field *f = llmem_field_at(field);
    double v;
    if (mode & 1) { /* plausible: small integers and powers of two */
      v = (mode >> 1) & 1 ? (double)(1u << ((mode >> 2) % 12)) : (double)((mode >> 2) % 8);
      if (f->kind == LLMEM_KIND_ENUM) v = (double)((mode >> 2) % (f->value_count + 1));
    } else if (i + 8 <= size) { /* arbitrary bits */
      memcpy(&v, data + i, 8);
      i += 8;
    } else {
      v = NAN;
    }
    slot[field] = v;
  }
  llmem_status st = llmem_estimate(&in, &out);
  if ((int)st < 0 || st >= LLMEM_STATUS_COUNT) abort();
  if (st != LLMEM_OK) {
    if (out.error_message[0] == 0) abort();
    return 0;
  }
  double sum = 0, peak = out.per_gpu.peak_allocated_bytes;
  for (int c = 0; c < LLMEM_CAT_COUNT; c++) {
    if (!isfinite(out.per_gpu.breakdown_bytes[c])) abort();
    sum += out.per_gpu.breakdown_bytes[c];
  }
  if (!isfinite(peak) || peak < 0 || fabs(sum - peak) > 1e-6 * peak + 1) abort();
  if (!(out.per_gpu.peak_reserved_bytes >= peak) || !isfinite(out.per_gpu.device_used_bytes)) abort();
  return 0;
}
