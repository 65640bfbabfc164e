/* Bounded string building without printf (no I/O in the core): the result's
 * messages and the wasm boundary's layout text. Each returns the new length;
 * dst stays NUL-terminated and never exceeds cap. */
#ifndef LLMEM_RESULT_TEXT_H
#define LLMEM_RESULT_TEXT_H

#include <stddef.h>

#include "llmem.h"

size_t text_append(char *dst, size_t n, size_t cap, const char *s);
size_t text_append_int(char *dst, size_t n, size_t cap, double v);    /* the integer part */
size_t text_append_number(char *dst, size_t n, size_t cap, double v); /* up to 6 decimals */
/* A failed call's status as the result's error: "path: message (allowed: ...)"; field -1: no key named. */
void result_fill_error(llmem_result *out, llmem_status st, int field);

#endif
