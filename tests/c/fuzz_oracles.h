/* Shared by the libFuzzer targets: a structured config decoder (fuzz bytes ->
 * an llmem_input that reaches every schedule, engine, MoE/MLA and recompute
 * mode), the result oracles, and the reproducer printer. */
#ifndef FUZZ_ORACLES_H
#define FUZZ_ORACLES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llmem.h"

/* A cursor over the fuzz bytes; reads past the end give 0. */
typedef struct {
  const uint8_t *data;
  size_t size, pos;
} fuzz_reader;

unsigned fuzz_byte(fuzz_reader *r);
unsigned fuzz_pick(fuzz_reader *r, unsigned n); /* 0..n-1 */
double fuzz_pick_value(fuzz_reader *r, const double *values, unsigned n);

/* Mostly valid configs (shapes chosen to satisfy the divisibility rules),
 * then a few raw key overrides (plausible or arbitrary bits) so the
 * validator and the edges are reached too. */
void fuzz_decode_config(fuzz_reader *r, llmem_input *in);

/* The oracles for one llmem_estimate call. Returns NULL when every check
 * holds, else a static description of the first one that does not. */
const char *fuzz_check_estimate(const llmem_input *in, llmem_status st, const llmem_result *out);
/* The three readings: finite, non-negative, ordered, fits consistent. */
const char *fuzz_check_readings(const llmem_readings *r);

/* The config as nested JSON, only the keys that differ from the defaults. */
void fuzz_print_config(FILE *f, const llmem_input *in);
/* With LLMEM_FUZZ_TRACE set, print the input before it runs (a timeout
 * leaves no other trace of what hung). */
void fuzz_trace(const char *target, const char *entry, const llmem_input *in);
/* Print the failure and the reproducer to stderr, then abort (libFuzzer
 * writes the input to the findings folder); returns only for a failure that
 * LLMEM_FUZZ_IGNORE lets through. */
void fuzz_fail(const char *target, const char *what, const llmem_input *in);

#endif
