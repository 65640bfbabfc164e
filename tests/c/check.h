/* A tiny test harness: checks count, failures print, main returns non-zero. */
#ifndef LLMEM_CHECK_H
#define LLMEM_CHECK_H

#include <stdio.h>

#include "llmem.h"

extern int check_passed, check_failed;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (cond) {                                             \
      check_passed++;                                       \
    } else {                                                \
      check_failed++;                                       \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                         \
      fputc('\n', stderr);                                  \
    }                                                       \
  } while (0)

/* |got - want| <= rel * |want| (rel 0: exact) */
int near(double got, double want, double rel);
#define CHECK_NEAR(got, want, rel, name)                                                                         \
  CHECK(near((got), (want), (rel)), "%s: got %.17g, want %.17g (rel %g)", (name), (double)(got), (double)(want), \
        (double)(rel))

/* Set a key of the input by its config path and a text value ("2", "true",
 * "fsdp2", "q,v", "null"); returns 0 when the key or the value is unknown. */
int set_key(llmem_input *in, const char *path, const char *value);
/* A field's (first) slot in the input. */
static inline double *field_slot(llmem_input *in, int field) {
  return (double *)(void *)((char *)in + llmem_field_at(field)->offset);
}
/* Apply "path=value path=value ..." (a list: "full,full,sliding") */
int set_keys(llmem_input *in, const char *spec);
/* The value of a vector metric (tests/vectors/core.txt header). */
double metric_of(const llmem_result *r, const char *metric);
/* llmem_estimate of "path=value ..." over the defaults; 0 (and a failed check) when it fails. */
int run_keys(const char *keys, llmem_result *out);
/* Whether the result carries warning w. */
int has_warning(const llmem_result *r, int w);
/* The input a kept search layout stands for, applied by hand (check.c). */
llmem_input layout_input(const llmem_input *base, double gpus, const llmem_layout *l);
/* Prints "N passed, N failed" and returns the exit status. */
int check_report(const char *name);

/* A seeded pseudo-random config over the defaults (mostly valid: llmem_estimate decides), and the draws it
 * makes: check_pick(n) in [0, n), check_pick_of(v, n) one of v's n values. One sequence per test process. */
void check_random_config(llmem_input *in);
int check_pick(int n);
double check_pick_of(const double *v, int n);

#endif
