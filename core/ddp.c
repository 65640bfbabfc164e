/* DDP's gradient buckets as allocator requests (docs/memory-model.md §9).
 *
 * torch.nn.parallel.DistributedDataParallel's Reducer keeps one flat tensor per bucket, in the parameters'
 * dtype, made bucket by bucket in the bucket list's order (torch/csrc/distributed/c10d/reducer.cpp
 * initialize_buckets: at::empty per bucket, after clearing the old ones). compute_bucket_assignment_by_size
 * fills a bucket tensor by tensor and closes it once it holds at least its limit, the first limit for the
 * first bucket and the cap for the rest. Which tensors, in which order, and when:
 *  - find_unused_parameters=False (and not static_graph): one bucket of every parameter at construction
 *    (torch/nn/parallel/distributed.py _ddp_init_helper: bucket_size_limits = [sys.maxsize]); at the second
 *    forward the Reducer rebuilds them once in the order the first backward made the gradients, limits
 *    [1 MiB, cap] (reducer.cpp should_rebuild_buckets, rebuild_buckets). The allocator traces show it: one
 *    request of every gradient at construction, freed at step 2's forward, then a request per bucket
 *    (tests/measured/traces/probe-h200-llama-3.2-1b-ddp1-mixed-s4096-b2, torch 2.11);
 *  - find_unused_parameters=True: buckets of [1 MiB, cap] over model.parameters() order from construction,
 *    the list reversed (the gradients come in about the reverse order), never rebuilt.
 * The gradients' order is the backward's: the head, the final norm, the layers from the last (each one's
 * tensors in reverse registration order, as step_blocks.c's per-parameter gradients), the embedding. */
#include "sim.h"

/* Bucket sizes, bytes, in the order the tensors were taken. Past ALLOC_MAX_BLOCKS the allocator could not
 * hold them anyway (it gives up); the rest fold into the last bucket, their sum kept. */
static double sizes[ALLOC_MAX_BLOCKS];

typedef struct {
  double limits[2]; /* the first bucket's, the others' */
  double bytes_per_elem;
  double open; /* bytes in the bucket being filled */
  int count;   /* buckets closed */
} bucketing;

static void close_bucket(bucketing *b) {
  if (b->count < ALLOC_MAX_BLOCKS) sizes[b->count++] = b->open;
  else sizes[ALLOC_MAX_BLOCKS - 1] += b->open;
  b->open = 0;
}

static void add_tensor(bucketing *b, double elems) {
  if (elems <= 0) return;
  b->open += elems * b->bytes_per_elem;
  if (b->open >= b->limits[b->count > 0]) close_bucket(b);
}

/* The stage's trainable tensors in model.parameters() order, or (backward) the reverse, the order the
 * gradients come: whatever lies outside the decoder stack (a vision tower, registered first), the embedding,
 * the layers, the final norm, the head. Under LoRA only the adapters (and that rest) train. */
static void add_tensors(bucketing *b, const stage_walk *W, int backward) {
  const stage_layout *st = W->st;
  const layer_params *lp = &st->layers;
  int full = (int)W->pl->in->ft_method == LLMEM_FT_FULL;
  double in_layers = full ? lp->matrix_count + lp->vector_count + lp->expert_count : lp->lora_count;
  double outer[5] = {0, full ? st->embedding_count : 0, 0, full ? st->final_norm_count : 0,
                     full ? st->head_count : 0}; /* rest, embedding, (layers), final norm, head */
  outer[0] = fmax(0, st->trainable_count - in_layers - outer[1] - outer[3] - outer[4]);
  for (int k = 0; k < 5; k++) {
    int item = backward ? 4 - k : k;
    if (item != 2) add_tensor(b, outer[item]);
    else
      for (int cc = 0; cc < W->v; cc++) {
        int c = backward ? W->v - 1 - cc : cc, first = W->first_global[c], count = W->chunk_layers[c];
        for (int j = 0; j < count; j++) {
          const param_list *l = layer_tensor_list(W, backward ? first + count - 1 - j : first + j, 0);
          for (int i = 0; i < l->count; i++) add_tensor(b, l->elems[backward ? l->count - 1 - i : i]);
        }
      }
  }
}

/* The buckets over the tensors in model.parameters() order or (backward) the gradients' into `sizes`, each closed
 * at its limit (INFINITY: one bucket); their count. */
static int assign_buckets(const stage_walk *W, int backward, double first, double rest) {
  double bytes = W->rs->ddp_buckets, elems = W->st->trainable_count;
  if (elems <= 0 || bytes <= 0) return 0;
  bucketing b = {{first, rest}, bytes / elems, 0, 0};
  add_tensors(&b, W, backward);
  if (b.open > 0) close_bucket(&b);
  return b.count;
}

static uint64_t bucket_tag(int index) { return block_tag(TAG_BUCKET, index, MB_NONE, 0); }

/* At construction: one bucket ([sys.maxsize]), or with find_unused_parameters buckets over model.parameters()
 * made from the list's end (reversed: the head's side first). */
void blocks_ddp_buckets(const stage_walk *W, const sim *S) {
  const plan *pl = W->pl;
  if (!S->blocks) return;
  int unused = pl->ddp_find_unused;
  int n =
      assign_buckets(W, 0, unused ? pl->ddp_first_bucket_bytes : INFINITY, unused ? pl->ddp_bucket_bytes : INFINITY);
  for (int i = 0; i < n; i++) sim_block(S, bucket_tag(i), sizes[n - 1 - i], ALLOC_STREAM_COMPUTE);
}

/* At the second forward, without find_unused_parameters: the old buckets freed, then the gradients' order. */
void blocks_ddp_rebuild(const stage_walk *W, const sim *S) {
  if (!S->blocks || W->pl->ddp_find_unused) return;
  for (int i = 0; alloc_is_live(bucket_tag(i)); i++) alloc_free(bucket_tag(i), 0);
  int n = assign_buckets(W, 1, W->pl->ddp_first_bucket_bytes, W->pl->ddp_bucket_bytes);
  for (int i = 0; i < n; i++) sim_block(S, bucket_tag(i), sizes[i], ALLOC_STREAM_COMPUTE);
}
