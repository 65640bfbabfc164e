/* PyTorch's CUDA caching allocator, simulated over one rank's allocation
 * stream (docs/memory-model.md §9): which segments the step reserves, not
 * only which tensors it keeps. One allocator at a time (the core is
 * single-threaded); blocks live in fixed arrays so the wasm heap stays fixed. */
#ifndef LLMEM_ALLOCATOR_H
#define LLMEM_ALLOCATOR_H

#include <stdint.h>

/* CUDA streams whose cached blocks are kept apart (a block freed on one
 * stream is reused by that stream only). */
enum {
  ALLOC_STREAM_COMPUTE,
  ALLOC_STREAM_GATHER, /* FSDP / ZeRO-3 all-gather */
  ALLOC_STREAM_REDUCE, /* reduce-scatter */
  ALLOC_STREAM_P2P,    /* pipeline send / recv */
  ALLOC_STREAM_H2D,    /* FSDP1 pre-unshard: CPU-offloaded shards copied in */
  ALLOC_STREAM_COUNT
};

#define ALLOC_MAX_BLOCKS 32768
#define ALLOC_MAX_SEGMENTS 8192

typedef struct {
  double max_split_bytes; /* max_split_size_mb; INFINITY when unset */
  double gc_threshold;    /* garbage_collection_threshold (fraction of capacity); 0 = off */
  double capacity_bytes;  /* what cudaMalloc may take before it fails; INFINITY = no limit */
  int expandable;         /* expandable_segments:True */
  double work_budget;     /* its work (alloc_stats.work) before the simulation gives up */
} alloc_settings;

typedef struct {
  double allocated_bytes; /* live blocks, rounded sizes (torch.cuda.memory_allocated) */
  double reserved_bytes;  /* segments (torch.cuda.memory_reserved) */
  double peak_reserved_bytes;
  double allocated_at_peak_bytes;    /* the most allocated while reserved is at its peak */
  double largest_free_at_peak_bytes; /* largest cached free block then */
  double peak_allocated_bytes;
  double segment_count, peak_segment_count;
  double ops;
  double work; /* the requests and frees, plus what their cache searches and shifts cost (allocator.c count_op) */
  int gave_up; /* too many blocks or operations: the caller uses its bound */
  int oom;     /* a request needed more than capacity even after freeing the cache */
} alloc_stats;

void alloc_reset(const alloc_settings *s);
/* A request of `bytes` on `stream`, known later by `tag` (unique among live blocks). */
void alloc_malloc(uint64_t tag, double bytes, int stream);
/* Freed; cross_stream: used on another stream too (record_stream), so the
 * block returns to the cache only at the next alloc_sync. */
void alloc_free(uint64_t tag, int cross_stream);
void alloc_free_if_live(uint64_t tag);
/* The other streams' work has completed: pending blocks return to the cache. */
void alloc_sync(void);
/* One pending block's streams have completed: it returns to the cache (tools: a trace's free completed). */
void alloc_free_completed(uint64_t tag);
/* The caller stops the replay (reserved then comes from its bound). */
void alloc_give_up(void);
/* torch.cuda.empty_cache(): unsplit cached segments go back to the driver. */
void alloc_empty_cache(void);
/* torch.cuda.reset_peak_memory_stats(): the peaks restart from what is held now. */
void alloc_reset_peak(void);
int alloc_is_live(uint64_t tag);
const alloc_stats *alloc_get_stats(void);
/* The largest cached free block now. */
double alloc_largest_free_bytes(void);
/* A tag's low 32 bits: its micro-batch + 1, or 0 for a block of no micro-batch. */
#define ALLOC_TAG_MB(tag) ((uint32_t)(tag))
/* A hash of the blocks (sizes, streams, places, owners) with each owner's micro-batch counted from
 * mb_base: equal after copy k of a repeated pattern (base k m) and after copy k - q (base (k - q) m)
 * means the copies since left every block as they found it, m q micro-batches on. */
uint64_t alloc_layout_hash(uint32_t mb_base);
/* The same hash summed over every block (alloc_layout_hash keeps it up to date as blocks change). */
uint64_t alloc_layout_hash_scan(uint32_t mb_base);
/* The live blocks of micro-batches pass to the micro-batch `count` later (their tags renamed, nothing
 * moved): the state after copies a pattern repeats unchanged, without walking them. */
void alloc_shift_micro_batches(uint32_t count);
/* Tests: each pool sorted by size then address and holding exactly the free
 * blocks not waiting for another stream (1), or not (0). */
int alloc_pools_consistent(void);
/* Tools (tools/trace_replay.c): fn sees every event as it happens, in the codes of the allocator trace
 * format (probe/snapshot_to_json.py TRACE_FORMAT: 'a' request, 'r' / 'f' free requested / completed,
 * 's' / 'x' segment opened / released, 'm' / 'u' pages mapped / unmapped), 'R' for a reset (bytes: the
 * capacity), 'E' for alloc_empty_cache and 'C' for the micro-batches a repeating cycle passed over (bytes:
 * their count, by which alloc_shift_micro_batches renames the live blocks' owners); NULL: none. */
typedef void (*alloc_observer)(char code, uint64_t tag, double bytes, int stream);
void alloc_observe(alloc_observer fn);

#endif
