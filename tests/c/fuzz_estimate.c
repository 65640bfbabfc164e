/* libFuzzer target for the core entry point. The bytes decode into a
 * structured config (every engine, schedule incl. interleaved and zero
 * bubble, MoE, MLA, recompute modules, LoRA/QLoRA, compat formulas) plus a
 * few raw key overrides (NaN, inf, huge, negative). Whatever comes in,
 * llmem_estimate must return a status from the list, and on success the
 * oracles of fuzz_oracles.c hold: signs on every rank and timeline event, the
 * peak is the timeline's maximum, allocated <= reserved <= device_used, the
 * terms sum to their categories, nothing is NaN or inf. The full-stage
 * readings must agree with the estimate. */
#include <stdint.h>

#include "fuzz_oracles.h"

static llmem_result out;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_reader r = {data, size, 0};
  llmem_input in;
  fuzz_decode_config(&r, &in);
  fuzz_trace("fuzz_estimate", "llmem_estimate", &in);
  llmem_status st = llmem_estimate(&in, &out);
  const char *why = fuzz_check_estimate(&in, st, &out);
  if (why) fuzz_fail("fuzz_estimate", why, &in);
  llmem_readings rd;
  llmem_status rst = llmem_estimate_readings(&in, &rd);
  if ((why = fuzz_check_readings(&rd))) fuzz_fail("fuzz_estimate", why, &in);
  if (in.formula == LLMEM_FORMULA_LLMEM) {
    if (rst != st) fuzz_fail("fuzz_estimate", "readings status differs from the estimate's", &in);
    if (st == LLMEM_OK &&
        (rd.device_used_bytes != out.per_gpu.device_used_bytes || rd.peak_allocated_bytes != out.peak_allocated_bytes))
      fuzz_fail("fuzz_estimate", "readings differ from the estimate's most-loaded rank", &in);
  }
  return 0;
}
