/* Test helpers that need the core's internals (the plan). */
#ifndef LLMEM_CHECK_PLAN_H
#define LLMEM_CHECK_PLAN_H

#include "internal.h"

/* The plan of "path=value ..." over the defaults (a failed build is a failed check). */
plan plan_for(const char *keys);
/* The input of the latest plan_for, to estimate or change it further. */
llmem_input *last_plan_input(void);

#endif
