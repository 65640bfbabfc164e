/* Filling the result: warnings (deduplicated; the error text is result_text.c's). Used by estimate.c and
 * compat.c. */
#include "internal.h"

void result_add_warning(llmem_result *out, llmem_warning w) {
  for (int i = 0; i < out->warning_count; i++)
    if (out->warnings[i] == (int)w) return;
  if (out->warning_count < LLMEM_MAX_WARNINGS) out->warnings[out->warning_count++] = (int)w;
}
