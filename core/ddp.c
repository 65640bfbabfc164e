/* DistributedDataParallel's gradient buckets, rebuilt at the second iteration (torch/nn/parallel/distributed.py,
 * torch 2.x; seen in the probe's DDP trace, tests/measured/traces). Without find_unused_parameters or
 * static_graph the first iteration reduces every gradient in one bucket (_ddp_init_helper: bucket_size_limits =
 * [sys.maxsize]; llmem's comm_persistent block, states.c). The second iteration's forward rebuilds them in the
 * order the gradients became ready (_pre_forward -> Reducer::rebuild_buckets, torch/csrc/distributed/c10d/
 * reducer.cpp): the one bucket is freed first (initialize_buckets clears buckets_), then one flat tensor a new
 * bucket is allocated; compute_bucket_assignment_by_size closes a bucket once it reaches its limit,
 * dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB) for the first and bucket_cap_mb (25 MiB) after. */
#include "ddp.h"

#define FIRST_BUCKET_BYTES 1048576.0 /* dist._DEFAULT_FIRST_BUCKET_BYTES */
#define BUCKET_CAP_BYTES 26214400.0  /* DistributedDataParallel bucket_cap_mb=25 */

typedef struct {
  const sim *S;
  double open, limit;
  int count;
} bucketing;

/* A gradient of `bytes` joins the open bucket; the bucket closes (is allocated) once it reaches its limit. */
static void add_grad(bucketing *b, double bytes) {
  if (bytes <= 0) return;
  b->open += bytes;
  if (b->open < b->limit) return;
  sim_block(b->S, ddp_bucket_tag(b->count++), b->open, ALLOC_STREAM_COMPUTE);
  b->open = 0, b->limit = BUCKET_CAP_BYTES;
}

int ddp_rebuilds_buckets(const plan *pl) {
  return (int)pl->in->engine == LLMEM_ENGINE_DDP && (int)pl->in->grad_as_bucket_view == 0;
}

uint64_t ddp_bucket_tag(int index) { return block_tag(TAG_COMM, index, MB_NONE, 62); }

/* The ready order, reversed from the forward's: the head and final norm, the layers from the last (each one's
 * tensors in reverse registration order), the embedding; a layer's share of the gradients split by its
 * trainable tensors' elements (step_blocks.c tensor_list_blocks). Returns the buckets made. */
int ddp_rebuild_buckets(const stage_walk *W, const sim *S) {
  const rank_states *rs = W->rs;
  const stage_layout *st = W->st;
  double total = rs->gradients < rs->comm_persistent ? rs->gradients : rs->comm_persistent;
  if (!ddp_rebuilds_buckets(W->pl) || total <= 0 || st->trainable_count <= 0) return 0;
  sim_unblock(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_COMM_BUFFERS), 0);
  double per_elem = total / st->trainable_count, layers = 0;
  int full = (int)W->pl->in->ft_method == LLMEM_FT_FULL;
  bucketing b = {S, 0, FIRST_BUCKET_BYTES, 0};
  double outside = full ? (st->head_count + st->final_norm_count) * per_elem : 0;
  add_grad(&b, outside);
  for (int c = W->v - 1; c >= 0; c--)
    for (int i = W->first_global[c] + W->chunk_layers[c] - 1; i >= W->first_global[c]; i--) {
      const layer_cost *lc = walk_layer_cost(W, i);
      const param_list *l = full ? &lc->tensors.params : &lc->tensors.adapters;
      double share = lc->trainable * per_elem, elems = 0;
      layers += share;
      for (int k = 0; k < l->count; k++) elems += l->elems[k];
      if (elems <= 0) add_grad(&b, share);
      for (int k = l->count - 1; k >= 0 && elems > 0; k--) add_grad(&b, share * l->elems[k] / elems);
    }
  add_grad(&b, total - outside - layers); /* the embedding, and what the lists above leave */
  if (b.open > 0) sim_block(S, ddp_bucket_tag(b.count++), b.open, ALLOC_STREAM_COMPUTE); /* the last, under its limit */
  double rest = rs->comm_persistent - total; /* other persistent buffers beside the buckets */
  if (rest > 0)
    sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_COMM_BUFFERS), rest, ALLOC_STREAM_COMPUTE);
  return b.count;
}
