/* DistributedDataParallel's gradient buckets as the allocator sees them (ddp.c). */
#ifndef LLMEM_DDP_H
#define LLMEM_DDP_H

#include "sim.h"

/* DDP keeps its buckets as tensors of their own (gradient_as_bucket_view off) and rebuilds them. */
int ddp_rebuilds_buckets(const plan *pl);
/* The tag of the rebuilt bucket `index`. */
uint64_t ddp_bucket_tag(int index);
/* At the second iteration's first forward: the one first-iteration bucket freed, the rebuilt ones allocated.
 * Returns how many. */
int ddp_rebuild_buckets(const stage_walk *W, const sim *S);

#endif
