/* FSDP2's unshard and reshard as the caching allocator sees them (torch/distributed/fsdp/_fully_shard,
 * pytorch 002a76fbf):
 * - unshard (_fsdp_collectives.py foreach_all_gather), on the all-gather copy-in stream: the rank's shards
 *   copied into one flat input (_get_param_all_gather_inputs), the all-gather output, and the input
 *   dropped when the call returns;
 * - wait_for_unshard (_fsdp_param_group.py): the output copied out into one tensor per parameter on the
 *   compute stream (foreach_all_gather_copy_out: FSDPParam.alloc_all_gather_outputs resizes each
 *   parameter's storage, then split_with_sizes_copy). In the forward the output is kept until the next
 *   unit's copy-out (implicit prefetching: comm_ctx.all_gather_state, dropped after that unit's unshard)
 *   and the root's post-forward (_fsdp_state.py _post_forward); in the backward it is dropped at once;
 * - reshard (post-forward, post-backward): the per-parameter tensors freed (free_storage, resize_(0));
 * - _backward_prefetch: a unit's pre-backward unshards the next unit in reverse post-forward order; that
 *   output waits for the unit's own pre-backward.
 * No stream is recorded on these buffers (events order their reuse), so each returns to the pool of the
 * stream that made it as soon as it is freed. A decoder layer's copy-out is one request per parameter
 * tensor (step_blocks.c blocks_layer_params), the root unit's too (its embedding, final norm and head, in the
 * order the model registers them); the embedding's and head's own units are one tensor each. */
#include "sim.h"

enum { PART_OUTPUT = 2, PART_INPUT = 3 }; /* TAG_PREFETCH parts: the all-gather output and its flat input */

/* The all-gather: its flat input (the rank's shard, 1/shard_dense of the output) and its output; with one
 * rank in the group, none (the copy-out reads the shard: wait_for_unshard, world_size 1). */
static void unshard(const stage_walk *W, sim *S, int unit, int mb, double bytes, int counted) {
  if (W->pl->shard_dense <= 1) return;
  uint64_t out = block_tag(TAG_PREFETCH, unit, mb, PART_OUTPUT), in = block_tag(TAG_PREFETCH, unit, mb, PART_INPUT);
  sim_block(S, in, bytes / W->pl->shard_dense, ALLOC_STREAM_GATHER);
  if (counted) sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, out, bytes, ALLOC_STREAM_GATHER);
  else sim_block(S, out, bytes, ALLOC_STREAM_GATHER);
  if (bytes > 0) sim_unblock(S, in, 0);
}

static void release(sim *S) {
  if (S->held_gather.bytes > 0) {
    if (S->held_gather.counted) sim_give(S, LLMEM_CAT_COMM_BUFFERS, S->held_gather.tag, S->held_gather.bytes, 0);
    else sim_unblock(S, S->held_gather.tag, 0);
  }
  S->held_gather.bytes = 0;
  S->held_gather.tag = 0;
}

static void hold(const stage_walk *W, sim *S, int unit, int mb, double bytes, int counted) {
  if (W->pl->shard_dense <= 1) bytes = 0;
  S->held_gather.tag = block_tag(TAG_PREFETCH, unit, mb, PART_OUTPUT);
  S->held_gather.bytes = bytes;
  S->held_gather.unit = unit;
  S->held_gather.counted = counted;
}

/* The root unit's parameter tensors: parts of its tag, by the tag's part bits. */
enum { ROOT_PART_EMBED = 0, ROOT_PART_NORM = 16, ROOT_PART_HEAD = 32 };
static uint64_t root_part(uint64_t tag, int part) { return tag | (uint64_t)part << 52; }
static int is_root(uint64_t tag) { return tag == block_tag(TAG_GATHER, LAYER_HEAD, MB_NONE, 0); }

/* The root's copy-out, one tensor per parameter (alloc_all_gather_outputs), in the order its module
 * registers them (transformers LlamaModel: embed_tokens, norm; LlamaForCausalLM: lm_head; tied, the head
 * is the embedding's weight); with the embedding and head in units of their own, the root is the norm. */
static void root_copy_out(const stage_walk *W, const sim *S, uint64_t tag, double bytes) {
  const stage_layout *st = W->st;
  double embed = W->rs->own_root_units ? 0 : st->embedding_count, norm = st->final_norm_count,
         head = W->rs->own_root_units ? 0 : st->head_count, sum = embed + norm + head;
  if (sum <= 0) {
    sim_block(S, tag, bytes, ALLOC_STREAM_COMPUTE);
    return;
  }
  sim_block(S, root_part(tag, ROOT_PART_EMBED), bytes * embed / sum, ALLOC_STREAM_COMPUTE);
  sim_block(S, root_part(tag, ROOT_PART_NORM), bytes * norm / sum, ALLOC_STREAM_COMPUTE);
  sim_block(S, root_part(tag, ROOT_PART_HEAD), bytes * head / sum, ALLOC_STREAM_COMPUTE);
}

static void copy_out(const stage_walk *W, sim *S, uint64_t tag, double bytes) {
  int layer = block_tag_layer(tag);
  if (is_root(tag)) {
    sim_add(S, LLMEM_CAT_WEIGHTS, bytes);
    root_copy_out(W, S, tag, bytes);
    return;
  }
  if (layer < 0) {
    sim_take(S, LLMEM_CAT_WEIGHTS, tag, bytes, ALLOC_STREAM_COMPUTE);
    return;
  }
  sim_add(S, LLMEM_CAT_WEIGHTS, bytes);
  blocks_layer_params(W, S, block_tag_kind(tag), layer, bytes);
}

void fsdp2_reshard(sim *S, uint64_t tag, double bytes) {
  int layer = block_tag_layer(tag);
  if (is_root(tag)) {
    sim_add(S, LLMEM_CAT_WEIGHTS, -bytes);
    if (S->blocks) /* part 0, the embedding's, is the tag itself: a root of one block frees it too */
      for (int part = ROOT_PART_EMBED; part <= ROOT_PART_HEAD; part += 16) alloc_free_if_live(root_part(tag, part));
    return;
  }
  if (layer < 0) {
    sim_give(S, LLMEM_CAT_WEIGHTS, tag, bytes, 0);
    return;
  }
  sim_add(S, LLMEM_CAT_WEIGHTS, -bytes);
  blocks_free_layer_params(S, block_tag_kind(tag), layer);
}

void fsdp2_pre_forward(const stage_walk *W, sim *S, uint64_t tag, int unit, int mb, double bytes) {
  if (bytes <= 0) return;
  unshard(W, S, unit, mb, bytes, 1);
  release(S);
  copy_out(W, S, tag, bytes);
  hold(W, S, unit, mb, bytes, 1);
}

void fsdp2_forward_done(sim *S) { release(S); }

void fsdp2_pre_backward(const stage_walk *W, sim *S, uint64_t tag, int unit, int mb, double bytes) {
  if (bytes <= 0) return;
  int prefetched = S->held_gather.bytes > 0 && S->held_gather.unit == unit;
  if (!prefetched) {
    release(S);
    unshard(W, S, unit, mb, bytes, 1);
    hold(W, S, unit, mb, bytes, 1);
  }
  copy_out(W, S, tag, bytes);
  release(S);
}

void fsdp2_prefetch(const stage_walk *W, sim *S, int unit, int mb, double bytes) {
  if (bytes <= 0) return;
  release(S);
  unshard(W, S, unit, mb, bytes, 1);
  hold(W, S, unit, mb, bytes, 1);
}

void fsdp2_root_unshard(const stage_walk *W, sim *S, double bytes) {
  if (bytes <= 0) return;
  release(S);
  unshard(W, S, LAYER_REST, MB_NONE, bytes, 0);
  copy_out(W, S, block_tag(TAG_GATHER, LAYER_HEAD, MB_NONE, 0), bytes);
  if (S->blocks) hold(W, S, LAYER_REST, MB_NONE, bytes, 0); /* without requests nothing is held */
}
