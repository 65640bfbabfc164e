/* The result structs' sizes folded into one number. wasm/layout.c reports it with the offsets that
 * scripts/gen-boundary.mjs writes into wasm/generated.ts (LAYOUT_CHECK); the core reports it too
 * (wasm/boundary.c llmem_layout_check), and the wrapper refuses a core whose structs are not the ones
 * the offsets were generated from. */
#ifndef LLMEM_WASM_LAYOUT_H
#define LLMEM_WASM_LAYOUT_H

#include "llmem.h"

static inline int layout_sizes_check(void) {
  static const size_t sizes[] = {
      sizeof(llmem_result),         sizeof(llmem_rank_result),   sizeof(llmem_event),
      sizeof(llmem_rl_phase),       sizeof(llmem_term),          sizeof(llmem_readings),
      sizeof(llmem_sweep_point),    sizeof(llmem_search_result), sizeof(llmem_layout),
      sizeof(llmem_suggest_result), sizeof(llmem_suggestion),    sizeof(llmem_search_options),
      sizeof(llmem_suggest_options)};
  unsigned h = 17;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) h = h * 31u + (unsigned)sizes[i];
  return (int)(h & 0x7fffffffu);
}

#endif
