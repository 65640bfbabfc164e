/* The model states as allocator requests: one block per decoder layer and
 * state (the layer's share of the rank's total, by its parameters), one for
 * the rest (embedding, head, norms), in the order a training script creates
 * them (docs/memory-model.md §9). */
#include "sim.h"

/* A state total split over the stage's layers; what is left is the rest block. */
static void split_state(const stage_walk *W, const sim *S, int part, double total, int trainable) {
  if (total <= 0) return;
  double denom = trainable ? W->st->trainable_count : W->st->params_count, used = 0;
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
      const layer_cost *lc = walk_layer_cost(W, i);
      double share = denom > 0 ? total * (trainable ? lc->trainable : lc->params) / denom : 0;
      if (used + share > total) share = total - used;
      sim_block(S, block_tag(TAG_STATE, i, 0, part), share, ALLOC_STREAM_COMPUTE);
      used += share;
    }
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, 0, part), total - used, ALLOC_STREAM_COMPUTE);
}

/* Loading and wrapping: weights, fp32 masters and persistent buffers; states
 * the engine creates eagerly (DeepSpeed's initialize_optimizer_states) too. */
void blocks_setup(const stage_walk *W, const sim *S, int lazy_states) {
  const rank_states *rs = W->rs;
  split_state(W, S, LLMEM_CAT_WEIGHTS, rs->weights, 0);
  split_state(W, S, LLMEM_CAT_MASTER_WEIGHTS, rs->master, 1);
  if (!lazy_states) split_state(W, S, LLMEM_CAT_OPTIMIZER_STATES, rs->optimizer, 1);
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, 0, LLMEM_CAT_COMM_BUFFERS), rs->comm_persistent, ALLOC_STREAM_COMPUTE);
  if (!W->lazy) split_state(W, S, LLMEM_CAT_GRADIENTS, rs->gradients, 1);
}

/* torch.optim creates its states at the first step (_init_group:
 * torch.zeros_like per parameter), after the backward freed the activations. */
void blocks_optimizer_states(const stage_walk *W, const sim *S) {
  split_state(W, S, LLMEM_CAT_OPTIMIZER_STATES, W->rs->optimizer, 1);
}

void blocks_free_gradients(const stage_walk *W, const sim *S) {
  if (!S->blocks) return;
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++)
      alloc_free_if_live(block_tag(TAG_GRAD, i, 0, 0));
  for (int layer = LAYER_REST; layer <= LAYER_HEAD; layer++) alloc_free_if_live(block_tag(TAG_GRAD, layer, 0, 0));
}

/* Weights kept gathered since the chunk's first forward, and accumulated unsharded gradients. */
void blocks_free_kept(const stage_walk *W, const sim *S, int c) {
  if (!S->blocks) return;
  for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
    if (alloc_is_live(block_tag(TAG_GATHER_KEPT, i, 0, 0))) alloc_free(block_tag(TAG_GATHER_KEPT, i, 0, 0), 1);
    alloc_free_if_live(block_tag(TAG_ACCUM, i, 0, 0));
  }
  if (alloc_is_live(block_tag(TAG_GATHER_KEPT, LAYER_EMBED, 0, 0))) alloc_free(block_tag(TAG_GATHER_KEPT, LAYER_EMBED, 0, 0), 1);
}
