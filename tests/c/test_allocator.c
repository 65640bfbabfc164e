/* The simulated caching allocator on hand-worked sequences: each expected
 * reserved total follows from c10/cuda/CUDACachingAllocator.cpp's rules
 * (core/allocator.c lists them). */
#include <math.h>

#include "allocator.h"
#include "check.h"

#define MB 1048576.0
enum { C = ALLOC_STREAM_COMPUTE, G = ALLOC_STREAM_GATHER };

static void reset(double max_split_mb, double capacity_mb, int expandable, double gc) {
  alloc_settings s = {max_split_mb > 0 ? max_split_mb * MB : INFINITY, gc,
                      capacity_mb > 0 ? capacity_mb * MB : INFINITY, expandable, 1e9};
  alloc_reset(&s);
}
static double reserved(void) { return alloc_get_stats()->reserved_bytes; }
static double allocated(void) { return alloc_get_stats()->allocated_bytes; }

static void rounding(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 1, C); /* 512 B block in a 2 MiB small segment */
  CHECK_NEAR(allocated(), 512, 0, "1 B rounds to 512");
  CHECK_NEAR(reserved(), 2 * MB, 0, "small segment");
  alloc_malloc(2, MB + 1, C); /* large pool: 1 MiB + 512 in a 20 MiB segment */
  CHECK_NEAR(allocated(), 512 + MB + 512, 0, "1 MiB + 1 rounds to 512 B");
  CHECK_NEAR(reserved(), 22 * MB, 0, "20 MiB segment below 10 MiB");
  alloc_malloc(3, 11 * MB - 100, C); /* fits the 20 MiB segment's cached rest (~19 MiB) */
  CHECK_NEAR(reserved(), 22 * MB, 0, "11 MiB - 100 B from the cached rest");
  alloc_malloc(4, 11 * MB - 100, C); /* ~8 MiB left: >= 10 MiB opens its own segment rounded to 2 MiB */
  CHECK_NEAR(reserved(), 34 * MB, 0, "11 MiB - 100 B takes a 12 MiB segment");
}

/* round_size and the segment sizes: fractional, exact and past-2^52 sizes. */
static void rounding_edges(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 512.25, C);
  CHECK_NEAR(allocated(), 1024, 0, "512.25 B rounds to 1024");
  alloc_malloc(2, 1536, C);
  CHECK_NEAR(allocated(), 1024 + 1536, 0, "a multiple of 512 stays");
  alloc_malloc(3, 1535.999, C);
  CHECK_NEAR(allocated(), 1024 + 2 * 1536, 0, "just under a multiple rounds to it");
  alloc_malloc(4, 10 * MB + 0.5, C); /* large: 10 MiB + 512 in a segment rounded to 2 MiB */
  CHECK_NEAR(reserved(), 2 * MB + 12 * MB, 0, "10 MiB + 0.5 B takes a 12 MiB segment");
  double huge = ldexp(1, 62) + ldexp(1, 11); /* a quotient by 512 past 2^52 */
  alloc_malloc(5, huge, C);
  CHECK_NEAR(reserved(), 16 * MB + ldexp(1, 62), 0, "a size past 2^52 units rounds up to 2 MiB");
}

static void split_reuse(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 12 * MB, C);
  alloc_free(1, 0);
  alloc_malloc(2, 8 * MB, C); /* best fit 12 MiB, rest 4 MiB > 1 MiB: split */
  CHECK_NEAR(reserved(), 12 * MB, 0, "8 MiB reuses the 12 MiB block");
  CHECK_NEAR(alloc_largest_free_bytes(), 4 * MB, 0, "4 MiB rest cached");
  alloc_malloc(3, 3 * MB, C); /* rest 1 MiB is not > 1 MiB: the whole 4 MiB block */
  CHECK_NEAR(allocated(), 12 * MB, 0, "3 MiB takes the 4 MiB block unsplit");
  CHECK_NEAR(reserved(), 12 * MB, 0, "no new segment");
  alloc_free(2, 0);
  alloc_free(3, 0); /* neighbours merge back into one 12 MiB block */
  CHECK_NEAR(alloc_largest_free_bytes(), 12 * MB, 0, "merged");
  alloc_malloc(4, 13 * MB, C);
  CHECK_NEAR(reserved(), 26 * MB, 0, "13 MiB does not fit the 12 MiB cache");
}

static void merge_small_requests(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 5 * MB, C); /* 20 MiB segment split 5 + 15 */
  alloc_malloc(2, 5 * MB, C); /* 15 split 5 + 10 */
  CHECK_NEAR(reserved(), 20 * MB, 0, "two 5 MiB requests share a segment");
  alloc_free(1, 0);
  alloc_free(2, 0);
  alloc_malloc(3, 18 * MB, C);
  CHECK_NEAR(reserved(), 20 * MB, 0, "18 MiB fits the merged 20 MiB block");
}

static void max_split(void) {
  reset(100, 0, 0, 0);
  alloc_malloc(1, 200 * MB, C);
  alloc_free(1, 0);
  alloc_malloc(2, 50 * MB, C); /* oversize cached block does not serve a small request */
  CHECK_NEAR(reserved(), 250 * MB, 0, "50 MiB opens a segment beside the cached 200 MiB");
  alloc_malloc(3, 190 * MB, C); /* within 20 MiB of the oversize block: taken whole */
  CHECK_NEAR(reserved(), 250 * MB, 0, "190 MiB takes the 200 MiB block");
  CHECK_NEAR(allocated(), 250 * MB, 0, "not split");
  alloc_free(3, 0);
  alloc_malloc(4, 150 * MB, C); /* more than 20 MiB below it: a new segment */
  CHECK_NEAR(reserved(), 400 * MB, 0, "150 MiB cannot use the 200 MiB block");
}

static void streams(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 100 * MB, C);
  alloc_free(1, 0);
  alloc_malloc(2, 100 * MB, G); /* cached on the compute stream: not for the gather stream */
  CHECK_NEAR(reserved(), 200 * MB, 0, "streams keep their caches apart");
  alloc_free(2, 1); /* used on the compute stream too: waits for its event */
  alloc_malloc(3, 100 * MB, G);
  CHECK_NEAR(reserved(), 300 * MB, 0, "a pending block is not reused");
  alloc_sync();
  alloc_free(3, 0);
  alloc_malloc(4, 100 * MB, G);
  alloc_malloc(5, 100 * MB, G);
  CHECK_NEAR(reserved(), 300 * MB, 0, "after the event both gather blocks are reused");
}

/* expandable_segments:True (CUDACachingAllocator.cpp @ eb42ad6, find_expandable_block,
 * try_allocate_expandable_block, unmap_block): 20 MiB pages for the large pool, a growing free tail,
 * whole free pages unmapped by empty_cache and the lowest hole filled first. */
static void expandable(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 100 * MB, C);
  alloc_free(1, 0);
  alloc_malloc(2, 150 * MB, C);
  CHECK_NEAR(reserved(), 250 * MB, 0, "default: 150 MiB opens a new segment");
  reset(0, 0, 1, 0);
  alloc_malloc(1, 100 * MB, C); /* five 20 MiB pages */
  CHECK_NEAR(reserved(), 100 * MB, 0, "100 MiB maps five 20 MiB pages");
  alloc_free(1, 0);
  alloc_malloc(2, 150 * MB, C); /* the free 100 MiB tail grows by 50 MiB: three pages */
  CHECK_NEAR(reserved(), 160 * MB, 0, "expandable: the tail grows by whole 20 MiB pages");
  alloc_malloc(3, 3 * MB, C); /* the 10 MiB rest of the last page */
  CHECK_NEAR(reserved(), 160 * MB, 0, "3 MiB from the mapped rest");
  alloc_malloc(4, 8 * MB, C); /* 7 MiB left: one more page, 19 MiB left after */
  CHECK_NEAR(reserved(), 180 * MB, 0, "8 MiB maps one page past a 7 MiB free tail");
  alloc_free(3, 0);
  alloc_empty_cache(); /* [150, 153) and [161, 180) MiB hold no whole page */
  CHECK_NEAR(reserved(), 180 * MB, 0, "no whole free page: nothing unmapped");
  alloc_free(2, 0); /* [0, 153) MiB free */
  alloc_empty_cache();
  CHECK_NEAR(reserved(), 40 * MB, 0, "empty_cache unmaps the seven whole pages of [0, 153) MiB");
  alloc_malloc(5, 30 * MB, C); /* the hole at 0 and the 13 MiB after it: two pages at the lowest address */
  CHECK_NEAR(reserved(), 80 * MB, 0, "30 MiB maps two pages in the lowest hole");
  CHECK_NEAR(alloc_largest_free_bytes(), 19 * MB, 0, "the free tail is untouched");
  alloc_free(5, 0);
  alloc_free(4, 0);
  alloc_empty_cache(); /* every page free: the segment goes */
  CHECK_NEAR(reserved(), 0, 0, "a segment with no live block is unmapped whole");
  CHECK_NEAR(alloc_get_stats()->peak_reserved_bytes, 180 * MB, 0, "the peak stays");
}

/* Expandable: the small pool grows its own segment in kSmallBuffer 2 MiB pages. */
static void expandable_small_pool(void) {
  reset(0, 0, 1, 0);
  alloc_malloc(1, 3 * MB, C);     /* large pool: one 20 MiB page */
  alloc_malloc(2, 600 * 1024, C); /* small pool: not the large tail's 17 MiB, a 2 MiB page of its own */
  CHECK_NEAR(reserved(), 22 * MB, 0, "a small request maps a 2 MiB page of the small pool");
  alloc_malloc(3, 600 * 1024, C);
  alloc_malloc(4, MB, C); /* 848 KiB left in the page: one more 2 MiB page */
  CHECK_NEAR(reserved(), 24 * MB, 0, "the small pool grows by 2 MiB");
  CHECK_NEAR(allocated(), 3 * MB + 2 * 600 * 1024 + MB, 0, "small blocks keep their rounded sizes");
}

/* Expandable: every split keeps a rest of 512 B or more (should_split), large pool included. */
static void expandable_split(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 11.5 * MB, C); /* a 12 MiB segment; the 0.5 MiB rest is not over 1 MiB: taken whole */
  CHECK_NEAR(allocated(), 12 * MB, 0, "default: a rest of 1 MiB or less stays with the block");
  reset(0, 0, 1, 0);
  alloc_malloc(1, 11.5 * MB, C); /* one page: 11.5 MiB, 8.5 MiB rest */
  alloc_malloc(2, 8 * MB, C);    /* the rest splits again: 0.5 MiB stays free */
  CHECK_NEAR(allocated(), 19.5 * MB, 0, "expandable: 0.5 MiB rests split off");
  CHECK_NEAR(reserved(), 20 * MB, 0, "one page so far");
  alloc_malloc(3, 2 * MB, C); /* the 0.5 MiB tail and one more page */
  CHECK_NEAR(reserved(), 40 * MB, 0, "2 MiB grows the 0.5 MiB tail by a page");
  CHECK_NEAR(alloc_largest_free_bytes(), 18.5 * MB, 0, "18.5 MiB of the new page left");
}

/* Expandable: best fit passes over a free block that could grow (get_free_block's expandable_size). */
static void expandable_best_fit(void) {
  reset(0, 0, 1, 0);
  alloc_malloc(1, 30 * MB, C); /* two pages: [0, 30) and a 10 MiB tail */
  alloc_malloc(2, 25 * MB, C); /* one more page: [30, 55), tail [55, 60) */
  alloc_free(1, 0);            /* [0, 30) free, between nothing and a live block */
  alloc_malloc(3, 4 * MB, C);  /* the 5 MiB tail is the smaller fit, but it could grow: [0, 4) */
  CHECK_NEAR(alloc_largest_free_bytes(), 26 * MB, 0, "4 MiB is carved from the 30 MiB block, not the tail");
  alloc_malloc(4, 26 * MB, C);
  alloc_malloc(5, 5 * MB, C); /* only the tail is left: taken */
  CHECK_NEAR(reserved(), 60 * MB, 0, "no page mapped for what fits");
}

/* release_available_cached_blocks (max_split_size set): oversize cached segments, the largest first,
 * until they cover the request; a cached block below max_split_size stays. */
static void release_oversize_first(void) {
  reset(100, 600, 0, 0);
  alloc_malloc(1, 200 * MB, C);
  alloc_malloc(2, 120 * MB, C);
  alloc_malloc(3, 110 * MB, C);
  alloc_malloc(4, 100 * MB, C);
  alloc_malloc(5, 50 * MB, C);
  for (int t = 2; t <= 5; t++) alloc_free((uint64_t)t, 0);
  alloc_malloc(6, 250 * MB, C); /* 580 + 250 > 600: 120 + 110 + 100 MiB go, the 50 MiB segment stays */
  CHECK_NEAR(reserved(), 500 * MB, 0, "the oversize segments are released, the 50 MiB one is kept");
  CHECK(!alloc_get_stats()->oom, "no out-of-memory");
  reset(0, 600, 0, 0);
  alloc_malloc(1, 200 * MB, C);
  alloc_malloc(2, 120 * MB, C);
  alloc_malloc(3, 50 * MB, C);
  alloc_free(2, 0);
  alloc_free(3, 0);
  alloc_malloc(4, 250 * MB, C); /* without max_split_size: every unsplit cached segment goes */
  CHECK_NEAR(reserved(), 450 * MB, 0, "without max_split_size the whole cache is released");
}

/* release_cached_blocks first waits for the other streams' events (synchronize_and_free_events). */
static void release_waits_for_streams(void) {
  reset(0, 300, 0, 0);
  alloc_malloc(1, 200 * MB, G);
  alloc_free(1, 1);             /* pending: used on the compute stream too */
  alloc_malloc(2, 150 * MB, C); /* 350 > 300: the pending block comes back and is released */
  CHECK_NEAR(reserved(), 150 * MB, 0, "a block waiting for another stream is released once its event is done");
  CHECK(!alloc_get_stats()->oom, "no out-of-memory");
}

static void device_full(void) {
  reset(0, 300, 0, 0);
  alloc_malloc(1, 200 * MB, C);
  alloc_free(1, 0);
  alloc_malloc(2, 250 * MB, C); /* cudaMalloc would pass 300 MiB: the cached segment is released */
  CHECK_NEAR(reserved(), 250 * MB, 0, "cache released when the device is full");
  CHECK(!alloc_get_stats()->oom, "no out-of-memory");
  alloc_malloc(3, 100 * MB, C);
  CHECK(alloc_get_stats()->oom, "350 MiB live on a 300 MiB device is out of memory");
  /* past the failure the demand is reported: a cached segment stays cached, a new one adds to it */
  alloc_free(2, 0);
  alloc_malloc(4, 260 * MB, C);
  CHECK_NEAR(reserved(), 610 * MB, 0, "after the failure nothing is released: 250 + 100 + 260 MiB");
}

static void garbage_collection(void) {
  reset(0, 1000, 0, 0.5);
  alloc_malloc(1, 300 * MB, C);
  alloc_malloc(2, 100 * MB, C);
  alloc_free(1, 0);
  alloc_free(2, 0);
  alloc_malloc(3, 400 * MB, C); /* reserved 400 MiB <= 500: nothing collected */
  CHECK_NEAR(reserved(), 800 * MB, 0, "below the threshold the cache stays");
  alloc_malloc(4, 450 * MB, C); /* 800 > 500: the oldest unsplit cached segment goes, 500 is not above */
  CHECK_NEAR(reserved(), 950 * MB, 0, "garbage collection frees the oldest (300 MiB) segment");
}

static void empty_cache(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 64 * MB, C);
  alloc_malloc(2, 1000, C);
  alloc_free(1, 0);
  alloc_empty_cache();
  CHECK_NEAR(reserved(), 2 * MB, 0, "empty_cache releases the unsplit cached segment only");
  CHECK_NEAR(alloc_get_stats()->peak_reserved_bytes, 66 * MB, 0, "the peak stays");
}

/* The layout hash kept up to date as blocks change equals the hash summed
 * over every block, through random requests, frees on either stream, syncs,
 * empty_cache, device-full releases and resets, in every allocator mode. */
static void layout_hash_incremental(void) {
  uint64_t seed = 12345;
  int bad = 0;
  for (int mode = 0; mode < 6; mode++) {
    reset(mode == 1 ? 64 : 0, mode == 3 ? 2000 : 0, mode == 2 || mode == 5, mode == 4 ? 0.5 : 0);
    if (mode == 4) reset(0, 1500, 0, 0.5);
    int live[64] = {0};
    for (int i = 0; i < 4000; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      unsigned r = (unsigned)(seed >> 33);
      int slot = (int)(r % 64);
      uint64_t tag = ((uint64_t)slot + 1) << 32 | slot % 5; /* micro-batches 0-3 and none */
      uint32_t base = (r >> 24) % 9;
      if (live[slot]) {
        alloc_free(tag, (r >> 8) % 5 == 0);
        live[slot] = 0;
      } else {
        double sizes[] = {300, 4096, 0.6 * MB, 1.5 * MB, 7 * MB, 12 * MB, 33 * MB, 90 * MB};
        alloc_malloc(tag, sizes[(r >> 8) % 8] * (1 + (r >> 12) % 3), (r >> 16) % 3 == 0 ? G : C);
        live[slot] = 1;
      }
      if ((r >> 20) % 7 == 0) alloc_sync();
      if ((r >> 20) % 211 == 0) alloc_empty_cache();
      if ((r >> 4) % 3 == 0) bad += alloc_layout_hash(base) != alloc_layout_hash_scan(base);
    }
    bad += alloc_layout_hash(7) != alloc_layout_hash_scan(7);
  }
  CHECK(bad == 0, "the incremental layout hash equals the full sum");
}

/* The pools stay sorted by size then address, holding every cached block and
 * nothing else, through random requests (sizes repeating, as layers' tensors
 * do: the searches' guesses, the split's rest taking its parent's place and a
 * merged block its neighbour's), frees on either stream, syncs, empty_cache
 * and device-full releases, in every allocator mode. */
static void pools_sorted(void) {
  uint64_t seed = 987654321;
  int bad = 0, checked = 0;
  for (int mode = 0; mode < 6; mode++) {
    reset(mode == 1 ? 64 : 0, mode == 3 ? 2000 : 0, mode == 2 || mode == 5, 0);
    if (mode == 4) reset(0, 1500, 0, 0.5);
    int live[96] = {0};
    for (int i = 0; i < 6000; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      unsigned r = (unsigned)(seed >> 33);
      int slot = (int)(r % 96);
      if (live[slot]) {
        alloc_free((uint64_t)slot + 1, (r >> 8) % 5 == 0);
        live[slot] = 0;
      } else {
        double sizes[] = {512, 16384, 0.5 * MB, 2 * MB, 16 * MB, 32 * MB, 64 * MB, 112 * MB, 336 * MB, 5 * MB + 300};
        alloc_malloc((uint64_t)slot + 1, sizes[(r >> 8) % 10], (r >> 16) % 4 == 0 ? G : C);
        live[slot] = 1;
      }
      if ((r >> 20) % 9 == 0) alloc_sync();
      if ((r >> 20) % 401 == 0) alloc_empty_cache();
      if (alloc_get_stats()->gave_up) break;
      bad += !alloc_pools_consistent();
      checked++;
    }
  }
  CHECK(checked > 30000 && bad == 0, "the pools stay sorted and hold exactly the cached blocks");
}

/* A 1F1B-like cycle: each step frees the oldest micro-batch's two blocks and takes the newest one's. The
 * hash counted from each step's micro-batch repeats when the blocks cycle; renaming the owners then
 * stands for the steps passed over: the next steps free the right blocks and end in the walked state. */
static uint64_t tag_of(int part, int mb) { return (uint64_t)(part + 1) << 32 | (uint32_t)(mb + 1); }
static void cycle_step(int mb) { /* micro-batches mb-2, mb-1 live before; mb-1, mb after */
  alloc_free(tag_of(0, mb - 2), 0);
  alloc_free(tag_of(1, mb - 2), 0);
  alloc_malloc(tag_of(0, mb), 30 * MB, C);
  alloc_malloc(tag_of(1, mb), 3 * MB, C);
}

static void micro_batch_shift(void) {
  for (int walked = 0; walked < 2; walked++) {
    reset(0, 0, 0, 0);
    alloc_malloc(tag_of(9, -1), 5 * MB, C); /* a block of no micro-batch: not renamed */
    for (int mb = 0; mb < 2; mb++) alloc_malloc(tag_of(0, mb), 30 * MB, C), alloc_malloc(tag_of(1, mb), 3 * MB, C);
    uint64_t h2 = 0, h3 = 0, h4 = 0;
    for (int mb = 2; mb < 5; mb++) {
      cycle_step(mb);
      uint64_t h = alloc_layout_hash((uint32_t)mb);
      if (mb == 2) h2 = h;
      if (mb == 3) h3 = h;
      if (mb == 4) h4 = h;
    }
    /* the newest takes the places the oldest left: the two micro-batches swap places each step */
    CHECK(h2 == h4 && h2 != h3, "the blocks cycle every two steps (hashes %d %d)", h2 == h4, h2 != h3);
    if (walked) {
      for (int mb = 5; mb < 105; mb++) cycle_step(mb);
    } else {
      alloc_shift_micro_batches(100); /* micro-batches 5..104 passed over */
      CHECK(alloc_layout_hash(104) == h4, "renamed: the same hash counted from micro-batch 104");
      CHECK(alloc_is_live(tag_of(0, 104)) && !alloc_is_live(tag_of(0, 4)) && alloc_is_live(tag_of(9, -1)),
            "owners renamed, the block of no micro-batch kept");
    }
    for (int mb = 105; mb < 107; mb++) cycle_step(mb);
    CHECK_NEAR(allocated(), 5 * MB + 2 * 33 * MB, 0, "two micro-batches live after the cycles");
    static uint64_t after_walk;
    if (walked) CHECK(alloc_layout_hash(106) == after_walk, "renaming ends where walking every step does");
    else after_walk = alloc_layout_hash(106);
  }
}

/* Two cached blocks of one size: best fit takes the one at the lower address (BlockComparatorSize), and the
 * driver places each new segment below the last (core/allocator.c TOP_ADDRESS), so the newer segment's. */
static void tie_goes_to_the_newer_segment(void) {
  reset(0, 0, 0, 0);
  alloc_malloc(1, 12 * MB, C); /* segment 1: 12 MiB */
  alloc_malloc(2, 24 * MB, C); /* segment 2: 24 MiB, below segment 1 */
  alloc_free(2, 0);
  alloc_malloc(3, 12 * MB, C); /* the 24 MiB block splits: 12 MiB used at its front, 12 MiB cached */
  alloc_free(1, 0);            /* two cached 12 MiB blocks: segment 1 whole, segment 2's rest */
  alloc_malloc(4, 12 * MB, C); /* the tie: segment 2's rest, the lower address */
  alloc_free(3, 0);            /* segment 2's front: its neighbour (4) is live, no merge */
  CHECK_NEAR(alloc_largest_free_bytes(), 12 * MB, 0, "no 24 MiB block formed");
  alloc_malloc(5, 24 * MB, C); /* nothing cached fits: a third segment (rising addresses would merge and reuse) */
  CHECK_NEAR(reserved(), 60 * MB, 0, "12 + 24 + 24 MiB");
}

/* The budget counts work (count_op): each request and free, and what its cache search and shifts cost. 2,000
 * requests then every other freed leave ~1,000 cached blocks to search and shift past; the same 3,000
 * operations under a budget of 3,000 give up before the last, since each cost more than one. */
static void fill_and_thin(void) {
  for (int i = 0; i < 2000; i++) alloc_malloc((uint64_t)i + 1, 2 * MB + 4096.0 * i, C);
  for (int i = 0; i < 2000; i += 2) alloc_free((uint64_t)i + 1, 0);
}

static void work_budget(void) {
  alloc_settings s = {INFINITY, 0, INFINITY, 0, 1e9};
  alloc_reset(&s);
  fill_and_thin();
  const alloc_stats *a = alloc_get_stats();
  CHECK(a->ops == 3000 && !a->gave_up, "3,000 requests and frees (%g)", a->ops);
  CHECK(a->work > a->ops, "their searches and shifts cost more than the requests alone (%g work)", a->work);
  s.work_budget = 3000;
  alloc_reset(&s);
  fill_and_thin();
  CHECK(a->gave_up && a->ops < 3000, "under a budget of 3,000 it gives up first (at %g operations)", a->ops);
}

int main(void) {
  work_budget();
  pools_sorted();
  micro_batch_shift();
  layout_hash_incremental();
  rounding();
  rounding_edges();
  split_reuse();
  tie_goes_to_the_newer_segment();
  merge_small_requests();
  max_split();
  streams();
  expandable();
  expandable_small_pool();
  expandable_split();
  expandable_best_fit();
  release_oversize_first();
  release_waits_for_streams();
  device_full();
  garbage_collection();
  empty_cache();
  return check_report("allocator");
}
