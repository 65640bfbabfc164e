/* The CUDA caching allocator, simulated after c10/cuda/CUDACachingAllocator.cpp
 * (pytorch/pytorch, the rules as of v2.5-v2.9; constants unchanged since v1.10):
 * - requests round up to kMinBlockSize 512 B (round_size);
 * - requests <= kSmallSize 1 MiB use the small pool, carved from kSmallBuffer
 *   2 MiB segments; larger ones the large pool, whose segments are kLargeBuffer
 *   20 MiB below kMinLargeAlloc 10 MiB, else the request rounded to kRoundLarge
 *   2 MiB (get_allocation_size);
 * - a request takes the smallest cached free block of its pool and stream
 *   (get_free_block; BlockComparatorSize orders by stream, size, address);
 *   with max_split_size set, blocks at or above it serve only requests at or
 *   above it and within kLargeBuffer of their size;
 * - the block splits when the rest is >= 512 B (small pool) or > 1 MiB and
 *   the request is below max_split_size (large pool; should_split);
 * - a freed block merges with free neighbours of its segment (free_block /
 *   try_merge_blocks); one used on another stream (record_stream) waits for
 *   that stream's event before it returns to the cache (insert_events /
 *   process_events);
 * - when cudaMalloc would exceed the device, with max_split_size set the
 *   oversize cached segments that cover the request, then (always) every
 *   unsplit cached segment, once the other streams' pending blocks are back,
 *   are released and the request retried (release_available_cached_blocks,
 *   release_cached_blocks);
 * - garbage_collection_threshold frees the oldest unsplit cached segments
 *   once reserved passes the threshold (garbage_collect_cached_blocks; c10
 *   applies it with a per-process memory fraction, whose limit is capacity);
 * - expandable_segments:True: one growing segment per pool and stream whose
 *   pages are mapped as requests need them, kSmallBuffer 2 MiB pages for the
 *   small pool and kLargeBuffer 20 MiB pages for the large one; a request
 *   that no cached block fits maps pages for the rest of the lowest free run
 *   (the free tail, or a hole a release left), every split keeps a rest of
 *   512 B or more, best fit passes over a block that could grow while another
 *   fits, and a release unmaps the whole free pages of every cached block
 *   (find_expandable_block, try_allocate_expandable_block, map_block,
 *   should_split, get_free_block, unmap_block, release_blocks). */
#include "allocator.h"

#include <math.h>
#include <string.h>

/* The wasm build optimises the allocator for speed (a default estimate's hot path: CMakeLists.txt) but the
 * paths an estimate seldom takes (segments opened and released, expandable segments, garbage collection,
 * resets and hashing) for size, as the rest of the core: clang's minsize is -Oz for one function. */
#if defined(__clang__) && defined(__wasm__)
#define COLD __attribute__((minsize))
#else
#define COLD
#endif

#define KIB_512 512.0
#define SMALL_SIZE 1048576.0       /* kSmallSize */
#define SMALL_BUFFER 2097152.0     /* kSmallBuffer */
#define LARGE_BUFFER 20971520.0    /* kLargeBuffer */
#define MIN_LARGE_ALLOC 10485760.0 /* kMinLargeAlloc */
#define ROUND_LARGE 2097152.0      /* kRoundLarge */
/* an expandable segment's room in the address space (c10 reserves 1 1/8 of the device's memory; here
 * more than any device has, and still exact in doubles for every segment) */
#define EXPANDABLE_SPACE 70368744177664.0 /* 2^46 */
#define MAP_SLOTS (2 * ALLOC_MAX_BLOCKS)

typedef struct {
  double size, addr, freed_at;
  uint64_t tag;
  int segment, prev, next, stream;
  unsigned char small, allocated, pending, used;
  unsigned char mapped; /* 0: an expandable segment's unmapped pages between mapped ones (a release's hole) */
} block;

typedef struct {
  double base, size; /* size: mapped bytes (an expandable segment's pages) */
  double page;       /* expandable: the mapping granularity */
  int stream, small, expandable, alive;
  int last;  /* expandable: the block at the highest address (-1: none); past it nothing is mapped */
  int holes; /* expandable: unmapped blocks before `last` */
} segment;

static alloc_settings cfg;
static alloc_stats st;
static alloc_observer observer; /* tools/: every event as it happens; NULL otherwise */
static block blocks[ALLOC_MAX_BLOCKS];
static int spare[ALLOC_MAX_BLOCKS], spare_count; /* block slots freed for reuse */
static int fresh;                                /* slots [fresh, max) never used since the reset */
static segment segs[ALLOC_MAX_SEGMENTS];
static int seg_count;
/* free blocks per pool (stream x small/large), sorted by size then address (BlockComparatorSize) */
#define POOL_COUNT (2 * ALLOC_STREAM_COUNT)
static int expandable_seg[POOL_COUNT]; /* per pool and stream; -1: none yet */
static int cache[POOL_COUNT][ALLOC_MAX_BLOCKS], cache_count[POOL_COUNT];
static unsigned nonempty_pools;         /* bit p: pool p holds a block (the largest free block reads only those) */
static int cached_at[ALLOC_MAX_BLOCKS]; /* where the block went into its pool: a hint, checked before use */
static int changed_at[POOL_COUNT];      /* where the pool last gained or lost a block: the next search's first guess */
static int pending[ALLOC_MAX_BLOCKS], pending_count;
/* tag -> block: a slot holds its generation (high 16 bits) and its block (low 16), and is empty unless its
 * generation is the current one; the tag is the block's. Four bytes a slot keep the table in a core's cache. */
_Static_assert(ALLOC_MAX_BLOCKS <= 0x10000, "a map slot holds a block in 16 bits");
static uint32_t map[MAP_SLOTS];
static uint32_t gen;
/* Segments take addresses downward from TOP_ADDRESS, each below the last: the CUDA driver placed cudaMalloc's
 * segments top-down in every allocator trace the probe recorded (tests/measured/traces: H200, driver 580.159,
 * torch 2.11), and best fit breaks size ties by address (BlockComparatorSize), so a newer segment's block
 * wins a tie. Rising addresses replayed one of those 25 traces 5.4 % under its reserve; top-down, all within
 * 0.02 %. Expandable segments take their room upward from TOP_ADDRESS (no overlap). Exact in doubles: a
 * multiple of 512 below 2^53. */
#define TOP_ADDRESS 1e15
static double next_base, next_expandable_base;
/* alloc_layout_hash, kept up to date lazily: blocks changed since the last
 * hash are listed, and their terms replaced when the hash is asked for */
static uint64_t layout_sum, counted[ALLOC_MAX_BLOCKS];        /* counted: block b's term in layout_sum */
static uint64_t weight_sum, counted_weight[ALLOC_MAX_BLOCKS]; /* the same for the micro-batch weights */
static int dirty[ALLOC_MAX_BLOCKS], dirty_count;
static unsigned char is_dirty[ALLOC_MAX_BLOCKS];
static int hashing; /* the hash was asked for since the reset: changes are listed from then on */

static void touch(int b) {
  if (hashing && !is_dirty[b]) is_dirty[b] = 1, dirty[dirty_count++] = b;
}

/* bytes rounded up to a multiple of a power-of-two unit (the quotient is exact) */
static double round_up_bytes(double bytes, double unit) { return unit * ceil(bytes / unit); }

static double round_size(double bytes) { return bytes < KIB_512 ? KIB_512 : round_up_bytes(bytes, KIB_512); }

static double allocation_size(double rounded) {
  if (rounded <= SMALL_SIZE) return SMALL_BUFFER;
  if (rounded < MIN_LARGE_ALLOC) return LARGE_BUFFER;
  return round_up_bytes(rounded, ROUND_LARGE);
}

static void give_up(void) { st.gave_up = 1; }
void alloc_give_up(void) { give_up(); }

/* ---- tag -> block (open addressing, backward-shift deletion) ---- */
static uint32_t slot_of(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return (uint32_t)(key & (MAP_SLOTS - 1));
}

static int map_empty(uint32_t i) { return map[i] >> 16 != gen; }

static int map_block(uint32_t i) { return (int)(map[i] & 0xFFFF); }

static int map_find(uint64_t key) {
  for (uint32_t i = slot_of(key);; i = (i + 1) & (MAP_SLOTS - 1)) {
    if (map_empty(i)) return -1;
    if (blocks[map_block(i)].tag == key) return (int)i;
  }
}

static void map_put(uint64_t key, int value) {
  uint32_t i = slot_of(key);
  while (!map_empty(i)) i = (i + 1) & (MAP_SLOTS - 1);
  map[i] = gen << 16 | (uint32_t)value;
}

static void map_remove(int at) {
  uint32_t hole = (uint32_t)at, i = hole;
  map[hole] = 0; /* generation 0 is never the current one */
  for (;;) {
    i = (i + 1) & (MAP_SLOTS - 1);
    if (map_empty(i)) return;
    uint32_t home = slot_of(blocks[map_block(i)].tag);
    /* the entry may move into the hole when its home is not in (hole, i] */
    int movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
    if (movable) {
      map[hole] = map[i];
      map[i] = 0;
      hole = i;
    }
  }
}

/* ---- the cache of free blocks ---- */
static int pool_of(int stream, int small) { return 2 * stream + small; }

static double probes, shifted; /* cache searches' steps and entries moved, since the reset (count_op) */

static int before(const block *a, double size, double addr) {
  probes++;
  return a->size != size ? a->size < size : a->addr < addr;
}

/* The first cached block of the pool at or after (size, addr), among positions [lo, hi). */
static int bound_in(int pool, int lo, int hi, double size, double addr) {
  const int *c = cache[pool];
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (before(&blocks[c[mid]], size, addr)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Searches that start from a position next to the answer (the pools change
 * by a block or two between searches): steps of 1, 2, 4, ... away from a
 * block known to sort on the wrong side, then a binary search over the last
 * step, so a search that lands d places away reads about 2 log2(d) blocks. */
/* c[from] sorts before the key: the answer is above it. */
static int gallop_up(int pool, int from, double size, double addr) {
  int n = cache_count[pool], prev = from;
  for (int step = 1;; step *= 2) {
    int at = from + step;
    if (at >= n) return bound_in(pool, prev + 1, n, size, addr);
    if (!before(&blocks[cache[pool][at]], size, addr)) return bound_in(pool, prev + 1, at, size, addr);
    prev = at;
  }
}

/* c[from] does not sort before the key: the answer is at or below it. */
static int gallop_down(int pool, int from, double size, double addr) {
  int prev = from;
  for (int step = 1;; step *= 2) {
    int at = from - step;
    if (at < 0) return bound_in(pool, 0, prev, size, addr);
    if (before(&blocks[cache[pool][at]], size, addr)) return bound_in(pool, at + 1, prev, size, addr);
    prev = at;
  }
}

/* The first cached block of the pool at or after (size, addr), tried at
 * `guess` first (where the pool last changed: a split's rest lands near its
 * parent, the next request of a run of them finds that rest); the keys are
 * sorted and unique, so a position whose left neighbour is before the key and
 * which itself is not is the answer, and a wrong guess says which way to
 * gallop from it. */
static int lower_bound(int pool, int guess, double size, double addr) {
  const int *c = cache[pool];
  int n = cache_count[pool];
  if (guess < 0 || guess > n) guess = n;
  if (guess > 0 && !before(&blocks[c[guess - 1]], size, addr)) return gallop_down(pool, guess - 1, size, addr);
  if (guess == n || !before(&blocks[c[guess]], size, addr)) return guess;
  return gallop_up(pool, guess, size, addr);
}

static void cache_insert(int b) {
  const block *k = &blocks[b];
  int pool = pool_of(k->stream, k->small), at = lower_bound(pool, changed_at[pool], k->size, k->addr);
  int *c = cache[pool];
  shifted += (double)(cache_count[pool] - at);
  memmove(&c[at + 1], &c[at], (size_t)(cache_count[pool] - at) * sizeof c[0]);
  c[at] = b;
  cached_at[b] = at;
  changed_at[pool] = at;
  cache_count[pool]++;
  nonempty_pools |= 1u << pool;
}

/* The block at position `at` leaves its pool and `r`, of a smaller key (its
 * rest after a split), comes in: one shift of the blocks between them. */
static void cache_swap_in(int pool, int at, int r) {
  const block *k = &blocks[r];
  int *c = cache[pool];
  int p = at == 0 || before(&blocks[c[at - 1]], k->size, k->addr) ? at : gallop_down(pool, at - 1, k->size, k->addr);
  shifted += (double)(at - p);
  memmove(&c[p + 1], &c[p], (size_t)(at - p) * sizeof c[0]);
  c[p] = r;
  cached_at[r] = p;
  changed_at[pool] = p;
}

static void remove_at(int pool, int at) {
  int *c = cache[pool];
  shifted += (double)(cache_count[pool] - at - 1);
  memmove(&c[at], &c[at + 1], (size_t)(cache_count[pool] - at - 1) * sizeof c[0]);
  changed_at[pool] = at;
  if (--cache_count[pool] == 0) nonempty_pools &= ~(1u << pool);
}

/* Where a cached block sits in its pool; -1: not there. */
static int cache_position(int b) {
  const block *k = &blocks[b];
  int pool = pool_of(k->stream, k->small), at = cached_at[b];
  if (at >= 0 && at < cache_count[pool] && cache[pool][at] == b) return at; /* mostly still there */
  at = lower_bound(pool, at, k->size, k->addr);
  return at < cache_count[pool] && cache[pool][at] == b ? at : -1; /* keys are unique (addresses differ) */
}

static void cache_remove(int b) {
  int at = cache_position(b);
  if (at >= 0) remove_at(pool_of(blocks[b].stream, blocks[b].small), at);
}

/* The block at position `at` leaves its pool and `b`, of a larger key (the
 * block it merged into), comes in: one shift of the blocks between them. */
static void cache_swap_up(int pool, int at, int b) {
  const block *k = &blocks[b];
  int *c = cache[pool], n = cache_count[pool], p = at + 1;
  if (p < n && before(&blocks[c[p]], k->size, k->addr))
    p = before(&blocks[c[n - 1]], k->size, k->addr) ? n : gallop_up(pool, p, k->size, k->addr);
  shifted += (double)(p - at - 1);
  memmove(&c[at], &c[at + 1], (size_t)(p - at - 1) * sizeof c[0]);
  c[p - 1] = b;
  cached_at[b] = p - 1;
  changed_at[pool] = p - 1;
}

static int new_block(void) {
  int b;
  if (spare_count > 0) b = spare[--spare_count];
  else if (fresh < ALLOC_MAX_BLOCKS)
    b = fresh++, counted[b] = counted_weight[b] = 0; /* counted since the reset: nothing yet */
  else {
    give_up();
    return -1;
  }
  blocks[b] = (block){.used = 1, .prev = -1, .next = -1, .mapped = 1}; /* stores in place of a memset call */
  touch(b); /* its fields are set after: the term is read when the hash is */
  return b;
}

static void drop_block(int b) {
  blocks[b].used = 0;
  touch(b);
  spare[spare_count++] = b;
}

/* ---- segments ---- */
/* The reserved peak, and the fullest it gets while reserved stays there:
 * what is cached then is what the step could not reuse. */
static void note_reserved(void) {
  if (st.reserved_bytes > st.peak_reserved_bytes ||
      (st.reserved_bytes == st.peak_reserved_bytes && st.allocated_bytes > st.allocated_at_peak_bytes)) {
    st.peak_reserved_bytes = st.reserved_bytes;
    st.allocated_at_peak_bytes = st.allocated_bytes;
    st.largest_free_at_peak_bytes = alloc_largest_free_bytes();
  }
  if (st.segment_count > st.peak_segment_count) st.peak_segment_count = st.segment_count;
}

static int unsplit_free(int b) {
  const block *k = &blocks[b];
  return !k->allocated && !k->pending && k->prev < 0 && k->next < 0 && !segs[k->segment].expandable;
}

COLD static void release_segment(int b) {
  segment *s = &segs[blocks[b].segment];
  if (observer) observer('x', (uint64_t)s->base, s->size, s->stream);
  cache_remove(b);
  st.reserved_bytes -= s->size;
  st.segment_count--;
  s->alive = 0;
  drop_block(b);
}

/* ---- expandable segments: the block chain from the segment's base to `last`, mapped blocks (live or
 * cached) and unmapped holes; past `last` the address space is unmapped ---- */
/* Nothing live on the block, nor waiting for another stream (find_expandable_block: allocatable). */
static int allocatable(int b) { return b >= 0 && !blocks[b].allocated && !blocks[b].pending; }

/* b takes its neighbour n (next or prev in the chain, same state) in: the chain and `last` follow. */
COLD static void absorb(int b, int n) {
  block *k = &blocks[b], *o = &blocks[n];
  segment *s = &segs[k->segment];
  if (o->mapped) cache_remove(n);
  else s->holes--;
  k->size += o->size;
  if (k->prev == n) {
    k->addr = o->addr;
    k->prev = o->prev;
    if (k->prev >= 0) blocks[k->prev].next = b;
  } else {
    k->next = o->next;
    if (k->next >= 0) blocks[k->next].prev = b;
    else s->last = b;
  }
  touch(b);
  drop_block(n);
}

/* Free mapped neighbours merge into the free mapped block b, kept out of its pool (map_block's
 * try_merge_blocks; the caller takes b or caches it). */
COLD static void merge_mapped(int b) {
  int p = blocks[b].prev, n = blocks[b].next;
  if (allocatable(p) && blocks[p].mapped) absorb(b, p);
  if (allocatable(n) && blocks[n].mapped) absorb(b, n);
}

/* A new block at the chain's end of segment g (its address the end of the last). */
COLD static int append_block(int g, double size, int mapped) {
  segment *s = &segs[g];
  int b = new_block();
  if (b < 0) return -1;
  block *k = &blocks[b];
  k->addr = s->last >= 0 ? blocks[s->last].addr + blocks[s->last].size : s->base;
  k->size = size, k->segment = g, k->stream = s->stream, k->small = (unsigned char)s->small;
  k->mapped = (unsigned char)mapped;
  k->prev = s->last;
  if (s->last >= 0) blocks[s->last].next = b;
  s->last = b;
  return b;
}

static void add_reserved(segment *s, double bytes) {
  s->size += bytes;
  st.reserved_bytes += bytes;
}

/* unmap_block (CUDACachingAllocator.cpp @ eb42ad6): the whole pages inside the cached block b go back;
 * the partial pages at either end stay mapped and cached. An unmapped block at the chain's end joins
 * the unmapped address space after it; a segment left with no pages is released (release_blocks). */
COLD static void unmap_block(int b) {
  block *k = &blocks[b];
  int g = k->segment;
  segment *s = &segs[g];
  double off = k->addr - s->base, begin = s->page * ceil(off / s->page),
         end = s->page * floor((off + k->size) / s->page);
  if (end <= begin) return;
  cache_remove(b);
  double before = begin - off, after = off + k->size - end;
  if (before > 0) { /* prev -> [before] -> b */
    int f = new_block();
    if (f < 0) return;
    k = &blocks[b];
    blocks[f].addr = k->addr, blocks[f].size = before, blocks[f].segment = g;
    blocks[f].stream = k->stream, blocks[f].small = k->small, blocks[f].freed_at = k->freed_at;
    blocks[f].prev = k->prev, blocks[f].next = b;
    if (k->prev >= 0) blocks[k->prev].next = f;
    k->prev = f;
    cache_insert(f);
  }
  if (after > 0) { /* b -> [after] -> next */
    int f = new_block();
    if (f < 0) return;
    k = &blocks[b];
    blocks[f].addr = s->base + end, blocks[f].size = after, blocks[f].segment = g;
    blocks[f].stream = k->stream, blocks[f].small = k->small, blocks[f].freed_at = k->freed_at;
    blocks[f].prev = b, blocks[f].next = k->next;
    if (k->next >= 0) blocks[k->next].prev = f;
    else s->last = f;
    k->next = f;
    cache_insert(f);
  }
  k = &blocks[b];
  if (observer) observer('u', (uint64_t)(s->base + begin), end - begin, s->stream);
  k->addr = s->base + begin, k->size = end - begin, k->mapped = 0;
  touch(b);
  add_reserved(s, -(end - begin));
  s->holes++;
  int p = k->prev, n = k->next;
  if (p >= 0 && !blocks[p].mapped) absorb(b, p);
  if (n >= 0 && !blocks[n].mapped) absorb(b, n);
  if (blocks[b].next < 0) { /* the chain's end: unmapped from here on */
    s->last = blocks[b].prev;
    if (s->last >= 0) blocks[s->last].next = -1;
    s->holes--;
    drop_block(b);
  }
  if (s->last < 0) { /* no page left: release_expandable_segment */
    s->alive = 0;
    expandable_seg[pool_of(s->stream, s->small)] = -1;
    st.segment_count--;
  }
}

/* Pending blocks return to the cache (synchronize_and_free_events). */
static void sync_pending(void);

/* release_cached_blocks: the other streams' pending blocks come back first; then every unsplit cached
 * segment is released and the whole free pages of expandable segments unmapped (release_blocks). */
COLD static void release_all_cached(void) {
  sync_pending();
  static int to_unmap[ALLOC_MAX_BLOCKS];
  int n = 0;
  for (int p = 0; p < POOL_COUNT; p++)
    for (int i = cache_count[p] - 1; i >= 0; i--) {
      if (i >= cache_count[p]) continue;
      int b = cache[p][i];
      if (segs[blocks[b].segment].expandable) to_unmap[n++] = b; /* unmapping changes the pool: after */
      else if (unsplit_free(b)) release_segment(b);
    }
  /* the listed blocks are free and never adjacent (neighbours merge): each is still there */
  for (int i = 0; i < n; i++) unmap_block(to_unmap[i]);
}

/* release_available_cached_blocks (CUDACachingAllocator.cpp @ eb42ad6): nothing without max_split_size;
 * else the smallest cached block of the pool and stream at or above max(size, max_split_size) (blocks
 * that large are whole segments: never split), or, with none, the largest oversize ones down until they
 * cover it; expandable segments are not released here. 1: something was released. */
COLD static int release_available(int stream, int small, double size) {
  if (!isfinite(cfg.max_split_bytes)) return 0;
  int pool = pool_of(stream, small), n = cache_count[pool];
  double key = size < cfg.max_split_bytes ? cfg.max_split_bytes : size;
  int i = lower_bound(pool, -1, key, -1);
  if (i < n) {
    int b = cache[pool][i];
    if (segs[blocks[b].segment].expandable) return 0;
    release_segment(b);
    return 1;
  }
  double released = 0;
  for (i = n - 1; i >= 0 && released < key; i--) {
    int b = cache[pool][i];
    if (blocks[b].size < cfg.max_split_bytes) break;
    if (segs[blocks[b].segment].expandable) continue;
    released += blocks[b].size;
    release_segment(b);
  }
  return released >= key;
}

/* garbage_collect_cached_blocks: oldest unsplit cached segments first until
 * reserved is back under the threshold. */
COLD static void collect_garbage(void) {
  double limit = cfg.gc_threshold * cfg.capacity_bytes;
  while (st.reserved_bytes > limit) {
    int oldest = -1;
    for (int p = 0; p < POOL_COUNT; p++)
      for (int i = 0; i < cache_count[p]; i++) {
        int b = cache[p][i];
        if (unsplit_free(b) && (oldest < 0 || blocks[b].freed_at < blocks[oldest].freed_at)) oldest = b;
      }
    if (oldest < 0) return;
    release_segment(oldest);
  }
}

static int fits_device(double more) { return st.reserved_bytes + more <= cfg.capacity_bytes; }

/* Before cudaMalloc (or cuMemMap) of `size`: garbage collection, and when the device is full the
 * cache released (malloc: alloc_block, release_available_cached_blocks, release_cached_blocks);
 * still full after that, the request fails (marked when `mark`). 1: the cache was released (an
 * expandable segment's layout may have changed). */
COLD static int make_room(int stream, int small, double size, int mark) {
  /* Past the failure (PyTorch raises there) the walk reports the rest of the step's demand, as on a
   * device with room: nothing more is released. Releasing the cache at each later segment, as a retry
   * would, only churns it (addresses never repeat, so the replay runs to its budget). */
  if (st.oom) return 0;
  if (cfg.gc_threshold > 0 && isfinite(cfg.capacity_bytes)) collect_garbage();
  if (fits_device(size)) return 0;
  if (release_available(stream, small, size) && fits_device(size)) return 1;
  release_all_cached();
  if (mark && !fits_device(size)) st.oom = 1; /* the step fails here; the walk goes on to report the demand */
  return 1;
}

COLD static int open_segment(int stream, int small, double size) {
  if (seg_count == ALLOC_MAX_SEGMENTS) {
    give_up();
    return -1;
  }
  int b = new_block();
  if (b < 0) return -1;
  segment *s = &segs[seg_count];
  next_base -= size;
  s->base = next_base;
  s->size = size;
  s->page = 0;
  s->stream = stream, s->small = small, s->expandable = 0, s->alive = 1, s->last = b, s->holes = 0;
  blocks[b].size = size, blocks[b].addr = s->base;
  blocks[b].segment = seg_count++, blocks[b].stream = stream, blocks[b].small = (unsigned char)small;
  st.reserved_bytes += size;
  st.segment_count++;
  if (observer) observer('s', (uint64_t)s->base, size, stream);
  return b;
}

/* find_expandable_block (CUDACachingAllocator.cpp @ eb42ad6): the lowest run of free and unmapped
 * blocks that holds `size`, starting at a hole (or at the free block before it); else the unmapped
 * space after the last block (or the free last block before it). *start: its first block, -1 for the
 * space after the last block. Returns the bytes of pages it would map (ExpandableSegment::map maps
 * whole pages: segmentRight of the end). */
COLD static double expandable_run(int g, double size, int *start) {
  const segment *s = &segs[g];
  int best = -1;
  if (s->holes > 0) /* walked from the top: the lowest hole with room is the last one found */
    for (int u = s->last; u >= 0; u = blocks[u].prev) {
      if (blocks[u].mapped) continue;
      int c = allocatable(blocks[u].prev) ? blocks[u].prev : u;
      double bytes = 0;
      int x = c;
      while (x >= 0 && bytes < size && allocatable(x)) bytes += blocks[x].size, x = blocks[x].next;
      if (bytes >= size || x < 0) best = c; /* x < 0: the run reaches the unmapped space at the end */
    }
  if (best < 0) best = allocatable(s->last) ? s->last : -1;
  *start = best;
  /* the pages mapped as try_allocate_expandable_block goes: each unmapped block for what is still
   * missing, merging with the free blocks after it */
  double have = 0, mapped = 0;
  int x = best;
  while (have < size) {
    if (x < 0) { /* the space after the last block */
      mapped += s->page * ceil((size - have) / s->page);
      break;
    }
    if (blocks[x].mapped) have += blocks[x].size;
    else {
      double m = s->page * ceil(fmin(blocks[x].size, size - have) / s->page);
      mapped += m, have += m;
      if (m < blocks[x].size) break;
    }
    x = blocks[x].next;
  }
  return mapped;
}

/* map_block: `bytes` of pages at the start of the unmapped block u (-1: after the last block) become a
 * free mapped block, merged with the free mapped blocks beside it; not in its pool. */
COLD static int map_pages(int g, int u, double bytes) {
  segment *s = &segs[g];
  int b;
  if (u < 0) {
    b = append_block(g, bytes, 1);
    if (b < 0) return -1;
  } else if (bytes < blocks[u].size) { /* prev -> [mapped] -> u (the rest, unmapped) */
    b = new_block();
    if (b < 0) return -1;
    block *k = &blocks[b], *o = &blocks[u];
    k->addr = o->addr, k->size = bytes, k->segment = g, k->stream = o->stream, k->small = o->small;
    k->prev = o->prev, k->next = u;
    if (o->prev >= 0) blocks[o->prev].next = b;
    o->prev = b;
    o->addr += bytes, o->size -= bytes;
    touch(u);
  } else {
    b = u;
    blocks[b].mapped = 1;
    touch(b);
    s->holes--;
  }
  add_reserved(s, bytes);
  if (observer) observer('m', (uint64_t)blocks[b].addr, bytes, s->stream);
  merge_mapped(b);
  return b;
}

/* try_allocate_expandable_block: a free block of at least `rounded` in the pool's expandable segment,
 * pages mapped as needed (the cache released first if the device cannot take them); not in its pool. */
COLD static int grow_expandable(int stream, int small, double rounded) {
  int pool = pool_of(stream, small);
  for (int pass = 0;; pass++) {
    int g = expandable_seg[pool];
    if (g < 0) {
      if (seg_count == ALLOC_MAX_SEGMENTS) {
        give_up();
        return -1;
      }
      g = expandable_seg[pool] = seg_count++;
      /* kSmallBuffer pages for the small pool, kLargeBuffer for the large one (find_expandable_block) */
      segs[g] = (segment){next_expandable_base, 0, small ? SMALL_BUFFER : LARGE_BUFFER, stream, small, 1, 1, -1, 0};
      next_expandable_base += EXPANDABLE_SPACE;
      st.segment_count++;
    }
    int start;
    double need = expandable_run(g, rounded, &start);
    if (pass == 0 && need > 0 && make_room(stream, small, need, 0)) continue; /* the layout may have changed */
    if (pass > 0 && !fits_device(need)) st.oom = 1; /* the step fails here; the walk goes on */
    int b = start;
    double page = segs[g].page;
    if (b >= 0 && blocks[b].mapped) cache_remove(b); /* its neighbours are not free: nothing to merge */
    else b = map_pages(g, b, page * ceil(fmin(b < 0 ? rounded : blocks[b].size, rounded) / page));
    while (b >= 0 && blocks[b].size < rounded) { /* free -> unmapped -> ...: map what is still missing */
      int u = blocks[b].next;
      if (u >= 0 && blocks[u].mapped) { /* the run was found to hold the request: not reached */
        give_up();
        return -1;
      }
      double missing = rounded - blocks[b].size;
      b = map_pages(g, u, page * ceil((u < 0 ? missing : fmin(blocks[u].size, missing)) / page));
    }
    return b;
  }
}

/* ---- requests ---- */
/* What a cached block of an expandable segment could grow to: itself and the unmapped block after it
 * (get_free_block's expandable_size; past the last block the address space, here without end). */
static double expandable_size(int b) {
  int n = blocks[b].next;
  if (n < 0) return INFINITY;
  return blocks[b].size + (blocks[n].mapped ? 0 : blocks[n].size);
}

/* The block a request takes, left in its pool at *at (a split's rest takes its place there). */
static int find_cached(int stream, int small, double rounded, int *at) {
  int pool = pool_of(stream, small);
  *at = lower_bound(pool, changed_at[pool], rounded, -1);
  if (*at == cache_count[pool]) return -1;
  /* get_free_block (CUDACachingAllocator.cpp @ eb42ad6): best fit counts a block that could grow by
   * what it could grow to, so the next larger block is taken while it is smaller than that */
  if (cfg.expandable)
    while (*at + 1 < cache_count[pool] && segs[blocks[cache[pool][*at]].segment].expandable &&
           expandable_size(cache[pool][*at + 1]) < expandable_size(cache[pool][*at]))
      ++*at;
  int b = cache[pool][*at];
  const block *k = &blocks[b];
  if (k->size < cfg.max_split_bytes) return b;  /* not oversize (max_split_size unset: always) */
  if (rounded < cfg.max_split_bytes) return -1; /* oversize block, small request */
  return k->size >= rounded + LARGE_BUFFER ? -1 : b;
}

/* should_split (CUDACachingAllocator.cpp @ eb42ad6): with expandable segments every pool keeps a rest of
 * kMinBlockSize or more, as the small pool always does. */
static int should_split(const block *k, double rounded) {
  double rest = k->size - rounded;
  if (k->small || cfg.expandable) return rest >= KIB_512;
  return rounded < cfg.max_split_bytes && rest > SMALL_SIZE;
}

/* at: where the block sits in its pool, -1 if it is not there (a new segment). */
static void split(int b, double rounded, int at) {
  int pool = pool_of(blocks[b].stream, blocks[b].small), r = new_block();
  if (r < 0) {
    if (at >= 0) remove_at(pool, at);
    return;
  }
  block *k = &blocks[b], *rest = &blocks[r];
  rest->size = k->size - rounded, rest->addr = k->addr + rounded;
  rest->segment = k->segment, rest->stream = k->stream, rest->small = k->small;
  rest->prev = b, rest->next = k->next;
  if (k->next >= 0) blocks[k->next].prev = r;
  else if (segs[k->segment].expandable) segs[k->segment].last = r;
  k->next = r;
  k->size = rounded;
  touch(b);
  rest->freed_at = st.ops;
  if (at >= 0) cache_swap_in(pool, at, r);
  else cache_insert(r);
}

/* The budget counts work, not requests: a request or free with its share of the walk around it costs about
 * as much as five steps of a cache search or 330 pool entries shifted (llmem_bench's random configs, fit over
 * those past 20,000 requests: ~20 ns, ~4 ns and ~0.06 ns each), and large pools make a request several
 * times dearer; the budget so bounds the time, whatever the pools hold. */
static int count_op(void) {
  if (st.gave_up) return 0;
  st.work = ++st.ops + probes * 0.2 + shifted * (1.0 / 330);
  if (st.work > cfg.work_budget) give_up();
  return !st.gave_up;
}

void alloc_malloc(uint64_t tag, double bytes, int stream) {
  if (!count_op() || bytes <= 0) return;
  double rounded = round_size(bytes);
  int small = rounded <= SMALL_SIZE;
  int at = -1, b = find_cached(stream, small, rounded, &at);
  if (b < 0) {
    at = -1;
    if (cfg.expandable) {
      b = grow_expandable(stream, small, rounded);
    } else {
      double size = allocation_size(rounded);
      make_room(stream, small, size, 1);
      b = open_segment(stream, small, size);
    }
    if (b < 0) return;
  }
  if (should_split(&blocks[b], rounded)) split(b, rounded, at);
  else if (at >= 0) remove_at(pool_of(stream, small), at);
  if (st.gave_up) return;
  block *k = &blocks[b];
  k->allocated = 1;
  touch(b);
  k->tag = tag;
  map_put(tag, b);
  if (observer) observer('a', tag, bytes, stream); /* after its segment, as c10 records them */
  st.allocated_bytes += k->size;
  if (st.allocated_bytes > st.peak_allocated_bytes) st.peak_allocated_bytes = st.allocated_bytes;
  note_reserved();
}

/* free_block: merge with free neighbours, back into the cache. */
static void to_cache(int b) {
  block *k = &blocks[b];
  touch(b);
  k->freed_at = st.ops;
  int p = k->prev, n = k->next, pool = pool_of(k->stream, k->small);
  int merged_at = -1; /* where the last neighbour merged into it still sits in the pool */
  /* try_merge_blocks: never across mapped and unmapped blocks */
  if (p >= 0 && !blocks[p].allocated && !blocks[p].pending && blocks[p].mapped) {
    merged_at = cache_position(p);
    k->addr = blocks[p].addr;
    k->size += blocks[p].size;
    k->prev = blocks[p].prev;
    if (k->prev >= 0) blocks[k->prev].next = b;
    drop_block(p);
  }
  if (n >= 0 && !blocks[n].allocated && !blocks[n].pending && blocks[n].mapped) {
    if (merged_at >= 0) remove_at(pool, merged_at);
    merged_at = cache_position(n);
    k->size += blocks[n].size;
    k->next = blocks[n].next;
    if (k->next >= 0) blocks[k->next].prev = b;
    else if (segs[k->segment].expandable) segs[k->segment].last = b;
    drop_block(n);
  }
  /* the merged block sorts after the neighbours it absorbed (it is larger) */
  if (merged_at >= 0) cache_swap_up(pool, merged_at, b);
  else cache_insert(b);
}

/* The live block at map slot `at` is freed. */
static void free_slot(int at, int cross_stream) {
  int b = map_block((uint32_t)at);
  map_remove(at);
  block *k = &blocks[b];
  if (observer) observer(cross_stream ? 'r' : 'f', k->tag, k->size, k->stream);
  k->allocated = 0;
  touch(b);
  st.allocated_bytes -= k->size;
  if (cross_stream) {
    k->pending = 1;
    pending[pending_count++] = b;
    return;
  }
  to_cache(b);
}

void alloc_free(uint64_t tag, int cross_stream) {
  if (!count_op()) return;
  int at = map_find(tag);
  if (at >= 0) free_slot(at, cross_stream);
}

/* One look-up where alloc_is_live and alloc_free would take two. */
void alloc_free_if_live(uint64_t tag) {
  if (st.gave_up) return;
  int at = map_find(tag);
  if (at >= 0 && count_op()) free_slot(at, 0);
}

int alloc_is_live(uint64_t tag) { return !st.gave_up && map_find(tag) >= 0; }

static void sync_pending(void) {
  for (int i = 0; i < pending_count; i++) {
    blocks[pending[i]].pending = 0;
    if (observer) observer('f', blocks[pending[i]].tag, blocks[pending[i]].size, blocks[pending[i]].stream);
    to_cache(pending[i]);
  }
  pending_count = 0;
}

COLD void alloc_free_completed(uint64_t tag) {
  if (st.gave_up) return;
  for (int i = 0; i < pending_count; i++) {
    int b = pending[i];
    if (blocks[b].tag != tag) continue;
    pending[i] = pending[--pending_count];
    blocks[b].pending = 0;
    if (observer) observer('f', tag, blocks[b].size, blocks[b].stream);
    to_cache(b);
    return;
  }
}

void alloc_sync(void) {
  if (!st.gave_up) sync_pending();
}

COLD void alloc_empty_cache(void) {
  if (observer) observer('E', 0, 0, 0);
  if (!st.gave_up) release_all_cached();
}

COLD void alloc_reset_peak(void) {
  st.peak_reserved_bytes = st.reserved_bytes;
  st.peak_allocated_bytes = st.allocated_bytes;
  st.allocated_at_peak_bytes = st.allocated_bytes;
  st.largest_free_at_peak_bytes = alloc_largest_free_bytes();
  st.peak_segment_count = st.segment_count;
}

double alloc_largest_free_bytes(void) {
  double best = 0;
  for (unsigned m = nonempty_pools; m; m &= m - 1) { /* each pool's largest is its last */
    int p = __builtin_ctz(m);
    double size = blocks[cache[p][cache_count[p] - 1]].size;
    if (size > best) best = size;
  }
  return best;
}


/* A block's term, order-free (slots are recycled in any order) and linear in its owner's micro-batch: the
 * term counted from another base is the term less the base times the weight (*weight; 0 for free blocks
 * and owners of no micro-batch; odd otherwise, so that owners trading places always show). */
static uint64_t term(const block *k, uint64_t *weight) {
  *weight = 0;
  if (!k->used) return 0;
  uint64_t x = (uint64_t)k->size * 31 + (uint64_t)k->addr * 7 + (uint64_t)k->stream * 3 +
               (uint64_t)(k->allocated * 2 + k->pending + 4 * !k->mapped);
  if (k->allocated) x += (k->tag >> 32) * 0x9e3779b97f4a7c15ULL;
  uint64_t h = slot_of(x) * 0x9e3779b97f4a7c15ULL + x;
  if (!k->allocated || ALLOC_TAG_MB(k->tag) == 0) return h;
  *weight = (h * 0xd6e8feb86659fd93ULL) | 1;
  return h + *weight * ALLOC_TAG_MB(k->tag);
}

/* The first hash since the reset sums every block; later ones replace the changed terms. */
COLD static void start_hashing(void) {
  layout_sum = weight_sum = 0;
  for (int b = 0; b < fresh; b++) {
    layout_sum += counted[b] = term(&blocks[b], &counted_weight[b]);
    weight_sum += counted_weight[b];
  }
  hashing = 1;
}

/* sums wrap: the same value as alloc_layout_hash_scan */
uint64_t alloc_layout_hash(uint32_t mb_base) {
  if (!hashing) start_hashing();
  for (int i = 0; i < dirty_count; i++) {
    int b = dirty[i];
    uint64_t w, t = term(&blocks[b], &w);
    layout_sum += t - counted[b];
    weight_sum += w - counted_weight[b];
    counted[b] = t, counted_weight[b] = w;
    is_dirty[b] = 0;
  }
  dirty_count = 0;
  return layout_sum - mb_base * weight_sum + (uint64_t)st.reserved_bytes;
}

uint64_t alloc_layout_hash_scan(uint32_t mb_base) {
  uint64_t h = 0, w;
  for (int b = 0; b < fresh; b++) h += term(&blocks[b], &w) - mb_base * w;
  return h + (uint64_t)st.reserved_bytes;
}

/* alloc_reset's and alloc_shift_micro_batches': every map slot empty */
COLD static void map_clear(void) {
  if (++gen == 0x10000) { /* wrapped: clear the generations once */
    memset(map, 0, sizeof map);
    gen = 1;
  }
}

COLD void alloc_shift_micro_batches(uint32_t count) {
  if (st.gave_up) return;
  if (observer) observer('C', 0, count, 0);
  map_clear();
  for (int b = 0; b < fresh; b++) {
    block *k = &blocks[b];
    if (!k->used || !k->allocated) continue;
    if (ALLOC_TAG_MB(k->tag) != 0) k->tag += count, touch(b);
    map_put(k->tag, b);
  }
}

COLD int alloc_pools_consistent(void) {
  int cached = 0, free_blocks = 0;
  for (int p = 0; p < POOL_COUNT; p++)
    for (int i = 0; i < cache_count[p]; i++) {
      const block *k = &blocks[cache[p][i]];
      if (!k->used || k->allocated || k->pending || pool_of(k->stream, k->small) != p) return 0;
      if (i > 0 && !before(&blocks[cache[p][i - 1]], k->size, k->addr)) return 0;
      cached++;
    }
  for (int b = 0; b < fresh; b++)
    free_blocks += blocks[b].used && !blocks[b].allocated && !blocks[b].pending && blocks[b].mapped;
  return cached == free_blocks;
}

const alloc_stats *alloc_get_stats(void) { return &st; }

void alloc_observe(alloc_observer fn) { observer = fn; }

COLD void alloc_reset(const alloc_settings *s) {
  cfg = *s;
  if (observer) observer('R', 0, cfg.capacity_bytes, 0);
  memset(&st, 0, sizeof st);
  probes = shifted = 0;
  for (int i = 0; i < dirty_count; i++) is_dirty[dirty[i]] = 0;
  dirty_count = 0;
  hashing = 0; /* counted and layout_sum are set again when the hash is first asked for */
  spare_count = fresh = 0;
  seg_count = 0;
  for (int i = 0; i < POOL_COUNT; i++) expandable_seg[i] = -1;
  memset(cache_count, 0, sizeof cache_count);
  nonempty_pools = 0;
  pending_count = 0;
  map_clear();
  next_base = TOP_ADDRESS, next_expandable_base = TOP_ADDRESS;
}
