/* The passes of one rank: the forward and backward of one micro-batch
 * through one virtual chunk of the stage's layers, as allocation events.
 *
 * Forward: parameter gathers and prefetch, autocast weight casts, saved
 * activations, the layer's working set, the loss on the last stage.
 * Backward, in reverse: the loss gradient, recompute, gradient working set,
 * lazily created gradients, unsharded gradients and reduce-scatter input. */
#include <string.h>

#include "sim.h"

/* FSDP1 with CPUOffload(offload_params=True): before each all-gather,
 * pre_unshard copies the rank's shard of the flat parameter to the GPU under
 * the pre-unshard stream, a new tensor (_flat_param.py pre_unshard:
 * flat_param_to(self.device, non_blocking=True), 01caf79e), which
 * _all_gather_flat_param hands to the unshard stream (record_stream) and drops
 * once the all-gather has read it; the stream is FSDP's own, "for pre-unshard
 * logic, namely allocations and writes for CPU offloading (H2D copy)"
 * (_runtime_utils.py _init_streams, _unshard, 00ae0bc9). Its blocks stay in
 * that stream's pool: reserved beside the others. */
void copy_in_shard(const stage_walk *W, const sim *S, uint64_t gather_tag, double gathered) {
  if (!W->rs->copy_in_shards || gathered <= 0) return;
  uint64_t tag = (gather_tag & ~((uint64_t)63 << 58)) | ((uint64_t)TAG_H2D << 58);
  sim_block(S, tag, gathered / W->pl->shard_dense, ALLOC_STREAM_H2D);
  sim_unblock(S, tag, 1);
}

/* An all-gather's output on the gather stream, after its shard is copied in;
 * transient: present for one recorded instant (sim_take_transient). */
void take_gathered(const stage_walk *W, sim *S, int cat, uint64_t tag, double bytes, int transient) {
  copy_in_shard(W, S, tag, bytes);
  if (transient) sim_take_transient(S, cat, tag, bytes, ALLOC_STREAM_GATHER);
  else sim_take(S, cat, tag, bytes, ALLOC_STREAM_GATHER);
}

static layer_cost cost_of(const plan *pl, const stage_layout *st, const rank_states *rs, int layer) {
  layer_cost c = {0};
  c.act[0] = layer_activation_bytes(pl, layer, 0);
  c.act[1] = layer_activation_bytes(pl, layer, 1);
  layer_params lp = layer_params_on_rank(pl, layer);
  if (pl->simulate_allocator) c.tensors = layer_tensors_on_rank(pl, layer); /* the allocator's requests only */
  c.params = lp.matrix_count + lp.vector_count + lp.expert_count;
  int lora = (int)pl->in->ft_method != LLMEM_FT_FULL;
  double trainable = lora ? lp.lora_count : c.params;
  double stage_trainable = st->trainable_count > 0 ? st->trainable_count : 1;
  c.grad_share = rs->gradients * trainable / stage_trainable;
  c.trainable = trainable;
  if (rs->gathers == 1) {
    c.gather = gathered_bytes(rs, c.params, lp.quantizable_count);
    c.prefetch = c.gather * rs->gather_factor_fwd;
    c.prefetch_bwd = c.gather * rs->gather_factor_bwd;
    c.unsharded_grads = trainable * (lora ? dtype_bytes((int)pl->in->adapter_dtype) : rs->unsharded_grad_bytes);
    c.reduce_input = trainable * (lora ? dtype_bytes((int)pl->in->adapter_dtype) : rs->reduce_bytes);
    /* FSDP2 (layer_backward_fsdp2): a dense MLP's backward runs first; its gradient chain (the
     * working set activations.c counts for the layer) peaks at the gate-up product's backward,
     * after down_proj's weight gradient is made and before gate_proj's and up_proj's. The rest of
     * the layer's unsharded gradients appear as its working set goes. */
    c.first_grads = c.unsharded_grads;
    if ((int)pl->in->engine == LLMEM_ENGINE_FSDP2 && !lora && layer_mlp(pl, layer) == LLMEM_LMLP_DENSE)
      c.first_grads =
          min2(c.unsharded_grads, pl->in->hidden * pl->in->ffn_hidden / pl->in->tp * rs->unsharded_grad_bytes);
  } else if (rs->gathers == 2) {
    /* ZeRO-3: the coordinator's live window (states.c), at least the running
     * module: one linear, fetched alone (iter_params(recurse=False)) */
    double running = gathered_bytes(rs, lp.largest_linear_count, lp.largest_linear_count);
    c.gather = max2(rs->live_gathered, running);
    c.unsharded_grads =
        lp.largest_module_count * (lora ? dtype_bytes((int)pl->in->adapter_dtype) : rs->unsharded_grad_bytes);
  }
  if (pl->autocast) c.casts = c.params * pl->weight_bytes; /* autocast's 16-bit weight copies */
  return c;
}

static int layer_recomputed(const plan *pl, int local_index) {
  if ((int)pl->in->recompute != LLMEM_RECOMPUTE_FULL) return 0;
  if (pl->recompute_layers <= 0) return 1;
  return local_index < (int)pl->recompute_layers;
}

/* torch.autocast keeps its casts of the weights cached until the outermost
 * region exits, after the model's forward and loss (torch/amp/autocast_mode.py
 * __exit__: clear_autocast_cache() at nesting 0, pytorch 291bc5ca; aten/src/ATen/
 * autocast_mode.cpp "at the end of each forward pass"); after that only those
 * the layer's matmuls saved stay. A checkpointed layer saved none (its saved
 * tensors are dropped by the checkpoint's pack hook, per-op SAC's policy
 * recomputes the casts): its casts go then and come again in its recompute,
 * which runs in an autocast region of its own (torch/utils/checkpoint.py
 * recompute_fn, pytorch 0008d771), held by the recomputed matmuls until the
 * layer's backward ends. */
static int casts_recast(const stage_walk *W, int c, int i) {
  const plan *pl = W->pl;
  if (!pl->autocast) return 0;
  if ((int)pl->in->recompute == LLMEM_RECOMPUTE_PER_OP) return 1;
  return layer_recomputed(pl, W->local0[c] + (i - W->first_global[c]));
}

static const layer_cost *cost(const stage_walk *W, int layer) {
  return &W->costs[W->single_kind >= 0 ? W->single_kind : layer_kind(W->pl, layer)];
}

const layer_cost *walk_layer_cost(const stage_walk *W, int layer) { return cost(W, layer); }

/* The saved tensors of one layer and micro-batch, as requests or frees. */
static void block_list(const sim *S, const tensor_list *l, int kind, int layer, int mb, int take) {
  if (!S->blocks) return;
  for (int p = 0; p < l->count; p++) {
    uint64_t tag = block_tag(kind, layer, mb, p);
    if (take) alloc_malloc(tag, l->bytes[p], ALLOC_STREAM_COMPUTE);
    else alloc_free(tag, 0);
  }
}

static void block_saved(const sim *S, const layer_activations *la, int layer, int mb, int take) {
  block_list(S, &la->saved_tensors, TAG_ACT, layer, mb, take);
}

/* The layer's activations, its cost (lc) at hand: the kind is not looked up again. */
static const layer_activations *acts_of(const stage_walk *W, const layer_cost *lc, int chunk, int layer) {
  int local = W->local0[chunk] + (layer - W->first_global[chunk]);
  return &lc->act[layer_recomputed(W->pl, local)];
}

static const layer_activations *acts(const stage_walk *W, int chunk, int layer) {
  return acts_of(W, cost(W, layer), chunk, layer);
}

static int is_first_chunk(const stage_walk *W, int c) { return W->st->has_embedding && c == 0; }
static int is_last_chunk(const stage_walk *W, int c) { return W->st->has_head && c == W->v - 1; }

/* The MTP depths (Megatron-LM multi_token_prediction.py, 09ebca7): each runs on
 * the last stage after the decoder: the rolled tokens' embedding and the hidden
 * state through enorm / hnorm, their concat into eh_proj, one layer of the last
 * layer's kind, final_layernorm, and its own logits and loss (process_mtp_loss);
 * MTPLossAutoScaler runs every depth's loss backward only inside the main
 * backward, so each keeps its layer's tensors and its loss's (the fp32 softmax
 * of Megatron's cross-entropy) until then. */
static void mtp_amounts(stage_walk *W) {
  const plan *pl = W->pl;
  if (!W->st->has_head || pl->in->mtp_layers <= 0) return;
  int last = (int)pl->layers - 1;
  const layer_cost *lc = cost(W, last);
  const layer_activations *la = &lc->act[(int)pl->in->recompute == LLMEM_RECOMPUTE_FULL];
  double T = pl->in->seq_len / pl->in->cp * pl->in->micro_batch, out = pl->sp ? pl->in->tp : 1, ab = pl->act_bytes;
  /* enorm and hnorm inputs (+ rstd), the [T, 2h] concat, final_layernorm's input, the depth's
   * slice of the concatenated hidden states the output layer reads, the rolled token ids */
  double extras = (6 * T * pl->in->hidden * ab + 3 * T * 4) / out + 8 * T;
  W->mtp_saved = pl->in->mtp_layers * (la->saved_bytes + extras);
  W->mtp_logits = pl->in->mtp_layers * W->loss.saved_bytes;
  W->mtp_forward_temp = max2(la->forward_temp_bytes, W->loss.forward_peak_bytes);
  W->mtp_backward_temp = max2(la->backward_temp_bytes + la->recompute_bytes, W->loss.backward_peak_bytes);
}

/* A .grad made in the backward is kept to the optimizer step: not when a per-parameter step in the backward
 * (optimizer_in_backward) steps it and frees it as soon as it is made. */
static int grads_kept(const stage_walk *W) { return (int)W->pl->in->optimizer_in_backward == 0; }

/* The head's .grad is made and kept: its autograd buffer (head_buffer_init) stands for it when it is not. */
static int head_grad_kept(const stage_walk *W) { return W->head_table_grad <= 0 || grads_kept(W); }

/* What one pass leaves live, per chunk: the sums the walk rebuilds its state from. */
static void live_amounts(stage_walk *W, int c) {
  const rank_states *rs = W->rs;
  int first = W->first_global[c], n = W->chunk_layers[c];
  double *u = W->in_flight_cat[c];
  if (is_first_chunk(W, c)) u[LLMEM_CAT_ACTIVATIONS] += W->embedding_act;
  if (is_first_chunk(W, c)) u[LLMEM_CAT_ACTIVATIONS] += W->vision.saved_bytes;
  if (is_first_chunk(W, c) && rs->keep_gathered_until_backward) W->kept_gathered[c] += W->embed_gather;
  for (int i = first; i < first + n; i++) {
    const layer_cost *lc = cost(W, i);
    /* offloaded activations stay on the GPU for the last two layers only */
    if (!W->offload || i >= first + n - 2) u[LLMEM_CAT_ACTIVATIONS] += acts_of(W, lc, c, i)->saved_bytes;
    if (!casts_recast(W, c, i)) u[LLMEM_CAT_WEIGHTS] += lc->casts;
    if (rs->gathers && rs->keep_gathered_until_backward) W->kept_gathered[c] += lc->gather;
    if (W->lazy && grads_kept(W)) W->grads_made[c] += lc->grad_share;
    if (rs->accumulate_unsharded) W->accumulated[c] += lc->trainable * rs->unsharded_accum_bytes;
  }
  if (is_last_chunk(W, c)) W->accumulated[c] += W->root_accum;
  if (is_first_chunk(W, c)) W->accumulated[c] += W->root_embed_accum;
  if (is_last_chunk(W, c)) {
    u[LLMEM_CAT_WEIGHTS] += W->head_cast;
    u[LLMEM_CAT_ACTIVATIONS] += W->loss.head_input_bytes;
    u[LLMEM_CAT_LOGITS] += W->loss.saved_bytes;
    u[LLMEM_CAT_ACTIVATIONS] += W->mtp_saved;
    u[LLMEM_CAT_LOGITS] += W->mtp_logits;
    if (W->lazy) W->grads_made[c] += (head_grad_kept(W) ? W->head_grads : 0) + W->norm_grads;
  }
  W->grads_made[c] += W->accumulated[c];
  if (is_first_chunk(W, c) && W->lazy && grads_kept(W)) W->grads_made[c] += W->embed_grads;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) /* zero terms change no bit: walk_state skips them */
    if (u[x] != 0) W->in_flight_cats[c][W->in_flight_cat_count[c]++] = (unsigned char)x;
}

/* The layer kinds on the stage in the order the layers first show them, each at its first layer, from the
 * kinds' counts over each chunk (layer_kind_counts: one period of the pattern, not a look-up per layer). */
static void find_kinds(const stage_walk *W, stage_kinds *kinds) {
  int seen[LAYER_KIND_COUNT] = {0};
  kinds->count = 0;
  for (int c = 0; c < W->v; c++) {
    int counts[LAYER_KIND_COUNT], first_at[LAYER_KIND_COUNT];
    layer_kind_counts(W->pl, W->first_global[c], W->chunk_layers[c], counts, first_at);
    for (;;) { /* this chunk's new kinds, by their first layer */
      int next = -1;
      for (int k = 0; k < LAYER_KIND_COUNT; k++)
        if (counts[k] && !seen[k] && (next < 0 || first_at[k] < first_at[next])) next = k;
      if (next < 0) break;
      seen[next] = 1;
      kinds->kind[kinds->count] = next, kinds->chunk[kinds->count] = c;
      kinds->offset[kinds->count] = first_at[next] - W->first_global[c];
      kinds->count++;
    }
  }
}

static double offloaded_sum(const stage_walk *W, int chunk);

/* The stage's sums cleared: those by chunk for its v chunks only (nothing reads the others), costs not
 * at all (set for the kinds present). */
static void clear_walk(stage_walk *W, int v) {
  memset(W, 0, offsetof(stage_walk, in_flight_cat));
  memset(W->in_flight_cat, 0, (size_t)v * sizeof W->in_flight_cat[0]);
  memset(W->in_flight_cats, 0, (size_t)v * sizeof W->in_flight_cats[0]);
  memset(W->in_flight_cat_count, 0, (size_t)v * sizeof W->in_flight_cat_count[0]);
  memset(W->kept_gathered, 0, (size_t)v * sizeof W->kept_gathered[0]);
  memset(W->grads_made, 0, (size_t)v * sizeof W->grads_made[0]);
  memset(W->accumulated, 0, (size_t)v * sizeof W->accumulated[0]);
  memset(W->offloaded, 0, (size_t)v * sizeof W->offloaded[0]);
}

/* The head weight's gradient as the autograd engine builds it where it hands gradients to .grad itself
 * (one GPU, DDP; a full fine-tune): every use of the weight adds its gradient into one input buffer
 * (torch/csrc/autograd/input_buffer.cpp InputBuffer::accumulate, in place when the buffer holds the only
 * reference), and the weight's AccumulateGrad runs once all uses have (engine.cpp: a node runs when its
 * dependencies are done). A head applied per chunk (torchtune's chunked output, LitGPT's
 * lm_head_chunk_size) makes one weight gradient per chunk beside the buffer; a head tied to the
 * embedding keeps the buffer through the backward, until the embedding's own gradient is added. */
static void head_buffer_init(stage_walk *W, const plan *pl, const stage_layout *st, const rank_states *rs,
                             double stage_trainable) {
  int autograd = (int)pl->in->engine == LLMEM_ENGINE_SINGLE || (int)pl->in->engine == LLMEM_ENGINE_DDP;
  if (!autograd || (int)pl->in->ft_method != LLMEM_FT_FULL || !st->has_head || (int)pl->in->head != LLMEM_HEAD_LM)
    return;
  double table = pl->vocab_padded / pl->in->tp * pl->in->hidden;
  W->head_table_grad = rs->gradients / stage_trainable * table;
  W->head_tied = (int)pl->in->tied_embeddings != 0 && st->has_embedding && W->v == 1;
  W->head_chunked = pl->loss == LLMEM_LOSS_CHUNKED && pl->in->loss_chunks > 1;
  /* under autocast the chunks use the weight's one cached 16-bit cast: their gradients add up in the cast's
   * buffer, in the compute dtype, and the cast's backward hands the sum on as one fp32 gradient */
  W->head_chunk_grad = pl->autocast ? table * pl->act_bytes : W->head_table_grad;
  if (!W->head_tied && !W->head_chunked && (int)pl->in->optimizer_in_backward == 0) W->head_table_grad = 0;
}

void walk_init(stage_walk *W, const plan *pl, const stage_layout *st, const rank_states *rs, int stage) {
  clear_walk(W, (int)pl->in->vpp);
  W->pl = pl, W->st = st, W->rs = rs;
  W->v = (int)pl->in->vpp;
  W->lazy = rs->gradients_lazy || (int)pl->in->optimizer_in_backward != 0;
  W->offload = (int)pl->in->activation_offload != 0;
  /* FSDP2 reduce-scatters each unit at its post-backward (not under pipelining's no-sync, which
   * accumulates unsharded; not with a per-parameter optimizer step in the backward) */
  W->fsdp2 = (int)pl->in->engine == LLMEM_ENGINE_FSDP2 && rs->gathers == 1 && !rs->accumulate_unsharded &&
             (int)pl->in->optimizer_in_backward == 0;
  /* one stage, one chunk: the held inputs of the micro-batch before */
  W->quant_held = (int)pl->in->ft_method == LLMEM_FT_QLORA && pl->quant_keeps_input && pl->quant_inputs_held &&
                  W->v == 1 && pl->in->pp == 1;
  int sum = 0;
  for (int c = 0; c < W->v; c++) {
    W->chunk_layers[c] = layout_stage_layers(pl, stage, c, &W->first_global[c]);
    W->local0[c] = sum;
    sum += W->chunk_layers[c];
  }
  W->summary_row = pass_summaries_for_stage(W, stage);
  /* what going over the layers finds, unless the stage's class kept it */
  stage_kinds kinds;
  int kept = pass_class_recall(W, &kinds);
  if (!kept) find_kinds(W, &kinds);
  /* layer costs by kind (mixer x MLP), each from its first layer here */
  for (int k = 0; k < kinds.count; k++) {
    int kind = kinds.kind[k];
    W->costs[kind] = cost_of(pl, st, rs, W->first_global[kinds.chunk[k]] + kinds.offset[k]);
    W->have[kind] = 1;
    W->single_kind = k == 0 ? kind : -1;
  }
  if (W->quant_held) {
    if (st->has_head && (int)pl->in->head == LLMEM_HEAD_LM)
      W->held_logits =
          pl->in->seq_len / pl->in->cp * pl->in->micro_batch * pl->vocab_padded / pl->in->tp * pl->act_bytes;
    for (int i = W->first_global[0]; i < W->first_global[0] + W->chunk_layers[0]; i++)
      W->held_act += acts(W, 0, i)->quant_input_bytes;
  }
  W->loss = loss_bytes(pl);
  /* the head's linear under autocast: its fp32 weight (tied: the embedding's)
   * cast once, cached, and kept by the matmul for its input's gradient (Liger's
   * fused loss and CCE take the weight itself: left out). A frozen head's weight is not
   * cached (cached_cast needs requires_grad): a chunked head (LitGPT's
   * lm_head_chunk_size, torchtune's output chunks) casts it for every chunk, and
   * each chunk's matmul keeps its own copy for the chunk input's gradient. */
  if (pl->autocast && st->has_head && (int)pl->in->head == LLMEM_HEAD_LM && !loss_takes_weight(pl)) {
    double copies = !loss_head_trains(pl) && pl->loss == LLMEM_LOSS_CHUNKED ? pl->in->loss_chunks : 1;
    W->head_cast = copies * pl->vocab_padded / pl->in->tp * pl->in->hidden * pl->weight_bytes;
  }
  W->embedding_act = embedding_activation_bytes(pl);
  double stage_trainable = st->trainable_count > 0 ? st->trainable_count : 1;
  int lora = (int)pl->in->ft_method != LLMEM_FT_FULL;
  W->head_grads = lora ? 0 : rs->gradients * st->head_count / stage_trainable;
  /* the embedding's and a trained vision tower's gradients appear at the start of the step's first backward end */
  W->embed_grads =
      lora ? 0 : rs->gradients * (st->embedding_count + st->vision_count - st->vision_frozen_count) / stage_trainable;
  if (st->has_embedding && pl->in->vision_layers > 0) W->vision = vision_of(pl);
  W->norm_grads = lora ? 0 : rs->gradients * st->final_norm_count / stage_trainable;
  head_buffer_init(W, pl, st, rs, stage_trainable);
  W->root = rs->root_gathered;
  W->root_grads = rs->root_unsharded_grads;
  W->root_embed_grads = rs->root_embed_grads;
  /* the root unit accumulates too (no_sync keeps every unit's unsharded gradient), in the accumulated dtype */
  double accum_per_grad_byte = rs->accumulate_unsharded && rs->unsharded_grad_bytes > 0
                                   ? rs->unsharded_accum_bytes / rs->unsharded_grad_bytes
                                   : 0;
  W->root_accum = W->root_grads * accum_per_grad_byte;
  W->root_embed_accum = W->root_embed_grads * accum_per_grad_byte;
  W->root_reduce_head = rs->root_reduce_head;
  W->root_reduce_embed = rs->root_reduce_embed;
  if (st->has_head) W->loss_gather = rs->loss_gathered;
  if (st->has_head) W->loss_grads = rs->loss_unsharded_grads;
  if (st->has_head) W->loss_reduce = rs->loss_reduce_input;
  if (st->has_embedding) W->embed_gather = rs->embed_gathered;
  /* persistent states, in the order the setup adds them */
  double *p = W->persistent_cat;
  p[LLMEM_CAT_WEIGHTS] += rs->weights;
  p[LLMEM_CAT_MASTER_WEIGHTS] += rs->master;
  p[LLMEM_CAT_OPTIMIZER_STATES] += rs->optimizer;
  p[LLMEM_CAT_COMM_BUFFERS] += rs->comm_persistent;
  p[LLMEM_CAT_ACTIVATIONS] += rs->pp_kept_act; /* pipelining's output_chunks (states.c) */
  p[LLMEM_CAT_LOGITS] += rs->pp_kept_logits;
  if (!W->lazy) p[LLMEM_CAT_GRADIENTS] += rs->gradients;
  p[LLMEM_CAT_TEMPORARIES] += runtime_workspace_bytes(pl);
  if (W->root > 0) p[LLMEM_CAT_WEIGHTS] += W->root;
  mtp_amounts(W);
  if (kept) return;
  for (int c = 0; c < W->v; c++) {
    live_amounts(W, c);
    if (W->offload) W->offloaded[c] = offloaded_sum(W, c);
  }
  pass_class_keep(W, &kinds);
}

/* The state at a pass boundary, rebuilt from what is live: running sums
 * over a million micro-batches would otherwise carry rounding drift, and a
 * rebuilt state lets repeated passes be accounted for without walking them. */
void walk_state(const stage_walk *W, const walk_sig *g, sim *S) {
  memcpy(S->cat, W->persistent_cat, sizeof S->cat);
  for (int c = 0; c < W->v; c++) {
    if (g->in_flight[c])
      for (int j = 0; j < W->in_flight_cat_count[c]; j++) {
        int x = W->in_flight_cats[c][j];
        S->cat[x] += g->in_flight[c] * W->in_flight_cat[c][x];
      }
    if (g->fwd_started[c]) S->cat[LLMEM_CAT_WEIGHTS] += W->kept_gathered[c];
    if (g->bwd_started[c]) S->cat[LLMEM_CAT_GRADIENTS] += W->grads_made[c];
  }
  S->held = g->held;
  if (g->held) { /* at a pass boundary a micro-batch's held inputs are whole (hold_quant_inputs) */
    S->cat[LLMEM_CAT_ACTIVATIONS] += W->held_act;
    S->cat[LLMEM_CAT_LOGITS] += W->held_logits;
  }
  S->total = 0;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) S->total += S->cat[x];
  S->hole = g->hole ? W->loss.unreusable_bytes : 0;
}

void walk_apply(const stage_walk *W, walk_sig *g, sched_op o) {
  if (o.split == SPLIT_W) {
    g->in_flight[o.chunk]--;
    return;
  }
  if (o.backward) {
    if (o.split != SPLIT_I) g->in_flight[o.chunk]--;
    g->bwd_started[o.chunk] = 1;
  } else {
    g->in_flight[o.chunk]++;
    g->fwd_started[o.chunk] = 1;
  }
  if (is_last_chunk(W, o.chunk)) g->hole = !o.backward;
  if (W->quant_held) g->held = o.backward; /* taken by the backward, dropped after the next forward */
}

double walk_offloaded_bytes(const stage_walk *W, int chunk) {
  return W->offload ? W->offloaded[chunk] : offloaded_sum(W, chunk);
}

static double offloaded_sum(const stage_walk *W, int chunk) {
  int first = W->first_global[chunk], n = W->chunk_layers[chunk];
  double bytes = 0;
  for (int i = first; i < first + n - 2; i++) bytes += acts(W, chunk, i)->saved_bytes;
  return bytes;
}

/* The vision tower's forward before the first layer (every image of the
 * micro-batch), and its backward after the embedding's (vision.c). */
static void vision_forward(const stage_walk *W, sim *S, int mb) {
  const vision_cost *v = &W->vision;
  if (v->tokens_per_microbatch <= 0) return;
  sim_take(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_ACT, LAYER_VISION, mb, 0), v->saved_bytes, ALLOC_STREAM_COMPUTE);
  sim_take_transient(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_VISION, mb, 0), v->forward_temp_bytes,
                     ALLOC_STREAM_COMPUTE);
  sim_record(S, LLMEM_PHASE_FORWARD, mb, LAYER_EMBED);
  sim_give(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_VISION, mb, 0), v->forward_temp_bytes, 0);
}

static void vision_backward(const stage_walk *W, sim *S, int mb) {
  const vision_cost *v = &W->vision;
  if (v->tokens_per_microbatch <= 0) return;
  if (v->trains) {
    sim_take_transient(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_VISION, mb, 1), v->backward_temp_bytes,
                       ALLOC_STREAM_COMPUTE);
    sim_record(S, LLMEM_PHASE_BACKWARD, mb, LAYER_EMBED);
    sim_give(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_VISION, mb, 1), v->backward_temp_bytes, 0);
  }
  sim_give(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_ACT, LAYER_VISION, mb, 0), v->saved_bytes, 0);
}

/* The embedding as an FSDP unit of its own (shard_root_modules): gathered by
 * its pre-forward, resharded by its post-forward unless kept (reshard_after_forward
 * False); the first layer's all-gather is issued meanwhile. */
static void embedding_forward(const stage_walk *W, sim *S, int mb, int c, int kept) {
  int keep = W->rs->keep_gathered_until_backward;
  uint64_t tag = block_tag(keep ? TAG_GATHER_KEPT : TAG_GATHER, LAYER_EMBED, MB_NONE, 0);
  uint64_t next = block_tag(TAG_PREFETCH, LAYER_EMBED, mb, 0);
  double gather = kept ? 0 : W->embed_gather;
  if (gather > 0) sim_sync(S);
  if (W->fsdp2) fsdp2_pre_forward(W, S, tag, LAYER_EMBED, mb, gather);
  else take_gathered(W, S, LLMEM_CAT_WEIGHTS, tag, gather, 0);
  sim_take(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_ACT, LAYER_EMBED, mb, 0), W->embedding_act, ALLOC_STREAM_COMPUTE);
  if (gather <= 0) return;
  double prefetch = W->chunk_layers[c] > 0 && !W->fsdp2 ? cost(W, W->first_global[c])->prefetch : 0;
  take_gathered(W, S, LLMEM_CAT_COMM_BUFFERS, next, prefetch, 1);
  sim_record(S, LLMEM_PHASE_FORWARD, mb, -1);
  if (prefetch > 0) sim_give(S, LLMEM_CAT_COMM_BUFFERS, next, prefetch, 1);
  if (!keep && W->fsdp2) fsdp2_reshard(S, tag, gather);
  else if (!keep) sim_give(S, LLMEM_CAT_WEIGHTS, tag, gather, 1);
}

/* The head as a unit of its own: its all-gather is issued during the last layer's forward. */
static double head_prefetch(const stage_walk *W, int c) {
  return is_last_chunk(W, c) && W->rs->own_root_units ? W->loss_gather * W->rs->gather_factor_fwd : 0;
}

/* The MTP depths' forward: what they keep, and the largest working set of one depth. */
static void mtp_forward(const stage_walk *W, sim *S, int mb) {
  if (W->mtp_saved <= 0) return;
  sim_take(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_ACT, LAYER_MTP, mb, 0), W->mtp_saved, ALLOC_STREAM_COMPUTE);
  sim_take(S, LLMEM_CAT_LOGITS, block_tag(TAG_LOSS, LAYER_MTP, mb, 0), W->mtp_logits, ALLOC_STREAM_COMPUTE);
  sim_take_transient(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_MTP, mb, 0), W->mtp_forward_temp,
                     ALLOC_STREAM_COMPUTE);
  sim_record(S, LLMEM_PHASE_LOSS, mb, -1);
  sim_give(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_MTP, mb, 0), W->mtp_forward_temp, 0);
}

/* Their backward, reached from the main loss's gradient: everything they kept goes. */
static void mtp_backward(const stage_walk *W, sim *S, int mb) {
  if (W->mtp_saved <= 0) return;
  sim_take_transient(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_MTP, mb, 1), W->mtp_backward_temp,
                     ALLOC_STREAM_COMPUTE);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, -1);
  sim_give(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, LAYER_MTP, mb, 1), W->mtp_backward_temp, 0);
  sim_give(S, LLMEM_CAT_LOGITS, block_tag(TAG_LOSS, LAYER_MTP, mb, 0), W->mtp_logits, 0);
  sim_give(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_ACT, LAYER_MTP, mb, 0), W->mtp_saved, 0);
}

/* training.finetune.quant_inputs_held: bitsandbytes <= 0.43.1 MatMul4Bit
 * keeps its input as a ctx attribute (ctx.tensors = (A, B); autograd/_functions.py
 * 0.42.0 4870580 L522-525), which the engine's release_variables() after the
 * node's backward does not free, so each 4-bit input lives as long as the
 * graph. LitGPT's fit() keeps that graph through `logits` and `loss`
 * (litgpt/finetune/lora.py, 47806045; lit-gpt finetune/lora.py train(),
 * 8641822): the micro-batch's logits until the next `logits = model(...)`
 * returns, a layer's inputs past its backward until the next
 * `loss = chunked_cross_entropy(...)` rebinds the loss. Taken per layer as its
 * backward frees the rest. */
/* One micro-batch's are held at a time: its own are taken after the one before's went. */
static uint64_t held_tag(int layer) { return block_tag(TAG_ACT, layer, MB_NONE, 62); }

static void held_inputs(const stage_walk *W, sim *S, int take) {
  int first = W->first_global[0], n = W->chunk_layers[0];
  for (int i = first + n - 1; i >= first; i--) {
    double b = acts(W, 0, i)->quant_input_bytes;
    if (take) sim_take(S, LLMEM_CAT_ACTIVATIONS, held_tag(i), b, ALLOC_STREAM_COMPUTE);
    else sim_give(S, LLMEM_CAT_ACTIVATIONS, held_tag(i), b, 0);
  }
}

void hold_quant_inputs(const stage_walk *W, sim *S, int take) {
  if (!W->quant_held) return;
  held_inputs(W, S, take);
  if (take) sim_take(S, LLMEM_CAT_LOGITS, held_tag(LAYER_HEAD), W->held_logits, ALLOC_STREAM_COMPUTE);
  else sim_give(S, LLMEM_CAT_LOGITS, held_tag(LAYER_HEAD), W->held_logits, 0);
  S->held = take;
}

/* A loss transient (tag part 2: forward, 3: backward) as its tensors, each its
 * own request (parts part + 8·(k+1)), or one request of the total when none are listed. */
static int loss_listed(const double *list) {
  for (int k = 0; k < LOSS_MAX_TENSORS; k++)
    if (list[k] > 0) return 1;
  return 0;
}

static void loss_take(sim *S, int mb, int part, const double *list, double total) {
  if (!loss_listed(list)) {
    sim_take(S, LLMEM_CAT_LOGITS, block_tag(TAG_LOSS, LAYER_HEAD, mb, part), total, ALLOC_STREAM_COMPUTE);
    return;
  }
  for (int k = 0; k < LOSS_MAX_TENSORS; k++)
    if (list[k] > 0)
      sim_take(S, LLMEM_CAT_LOGITS, block_tag(TAG_LOSS, LAYER_HEAD, mb, part + 8 * (k + 1)), list[k],
               ALLOC_STREAM_COMPUTE);
}

/* Its blocks back to the cache (the caller takes the bytes off the sums): all (which 0), all but the last
 * (1), or the last alone (2; one block unlisted counts as the last). */
static void loss_unblock_which(const sim *S, int mb, int part, const double *list, int which) {
  int last = -1;
  for (int k = 0; k < LOSS_MAX_TENSORS; k++)
    if (list[k] > 0) last = k;
  if (last < 0 && which != 1) sim_unblock(S, block_tag(TAG_LOSS, LAYER_HEAD, mb, part), 0);
  for (int k = 0; k <= last; k++)
    if (list[k] > 0 && (which == 0 || (which == 1) == (k < last)))
      sim_unblock(S, block_tag(TAG_LOSS, LAYER_HEAD, mb, part + 8 * (k + 1)), 0);
}

/* started: the chunk's forward has run before in this step (parameters kept gathered stay) */
/* ---- runs of alike steps in a pass being summarised or remembered (pass_summary.c) ----
 * Steps (a layer, or a pattern of up to ALIKE_MAX_PERIOD layers) that add
 * the same amounts (the same kinds, recompute and neighbours' effects) leave
 * the same change each: the first of a run is walked, the rest added in one
 * go, and the run's highest point is its first step's when the steps do not
 * grow the state, else its last step's, the first step's plus the growth of
 * the steps between. With whole-byte amounts, or sums that round alike in
 * every step (rounding_repeats), the sums are the walk's own, bit for bit
 * (the walk itself is the reference: tests/c/test_walk.c). */
typedef struct {
  double total, cat[LLMEM_CAT_COUNT], moved;
  double peak, peak_cat[LLMEM_CAT_COUNT], peak_hole;
  int peak_phase, peak_mb, peak_layer;
} step_mark;

static long layer_runs; /* runs of alike layers added in one go (tests) */
long pass_layer_runs(void) { return layer_runs; }

/* Before the run's first step: the state, and the peak so far set aside. */
static void step_begin(sim *S, step_mark *m) {
  m->total = S->total, m->moved = S->moved;
  memcpy(m->cat, S->cat, sizeof m->cat);
  m->peak = S->peak, m->peak_hole = S->peak_hole;
  memcpy(m->peak_cat, S->peak_cat, sizeof m->peak_cat);
  m->peak_phase = S->peak_phase, m->peak_mb = S->peak_mb, m->peak_layer = S->peak_layer;
  S->peak = -INFINITY;
  if (S->track == TRACK_ROUNDING) rounding_log_begin();
}

/* After it: `more` alike steps, each `stride` layers on, added; the highest point of the run kept if highest.
 * Sums that round: as many as round alike (pass_summary.c rounding_repeats). Returns the steps added. */
static int step_repeat(sim *S, const step_mark *m, int more, int stride) {
  if (S->track == TRACK_ROUNDING) more = rounding_repeats(S, m->cat, m->total, more);
  if (S->track == TRACK_ROUNDING && S->sink && more > 0) rounding_replay_points(S, more, stride);
  double d[LLMEM_CAT_COUNT], d_total = S->total - m->total;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) d[x] = S->cat[x] - m->cat[x];
  if (more > 0 && S->peak > -INFINITY && d_total > 0) { /* the run's last step is its highest */
    S->peak += more * d_total;
    for (int x = 0; x < LLMEM_CAT_COUNT; x++) S->peak_cat[x] += more * d[x];
    if (S->peak_layer >= 0) S->peak_layer += more * stride;
  }
  if (!(S->peak > m->peak)) { /* the walk's first highest point stands */
    S->peak = m->peak, S->peak_hole = m->peak_hole;
    memcpy(S->peak_cat, m->peak_cat, sizeof S->peak_cat);
    S->peak_phase = m->peak_phase, S->peak_mb = m->peak_mb, S->peak_layer = m->peak_layer;
  }
  if (more == 0) return 0; /* adding a zero could still turn a -0 into a 0 */
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) S->cat[x] += more * d[x];
  S->total += more * d_total;
  S->moved += more * (S->moved - m->moved);
  layer_runs++;
  return more;
}

/* What decides a forward step's amounts beyond its layer's kind: its prefetch, what offload moves out. */
typedef struct {
  const layer_cost *lc;
  const layer_activations *la, *off;
  double prefetch;
} forward_step;

static forward_step forward_step_of(const stage_walk *W, int c, int i) {
  int first = W->first_global[c], n = W->chunk_layers[c];
  const layer_cost *lc = cost(W, i);
  forward_step f = {lc, acts_of(W, lc, c, i), W->offload && i >= first + 2 ? acts(W, c, i - 2) : 0,
                    i + 1 < first + n ? lc->prefetch : head_prefetch(W, c)};
  /* FSDP2: the step frees the unit before's all-gather output instead (fsdp2.c) */
  if (W->fsdp2) f.prefetch = i > first ? cost(W, i - 1)->gather : is_first_chunk(W, c) ? W->embed_gather : 0;
  return f;
}


static void layer_forward(const stage_walk *W, sim *S, int mb, int c, int i, int kept) {
  const rank_states *rs = W->rs;
  int first = W->first_global[c], n = W->chunk_layers[c];
  int gather_tag = rs->keep_gathered_until_backward ? TAG_GATHER_KEPT : TAG_GATHER;
  const layer_cost *lc = cost(W, i);
  const layer_activations *la = acts_of(W, lc, c, i);
  sim_sync(S); /* the previous layer's collectives have completed */
  if (rs->gathers && !kept) {
    if (W->fsdp2) fsdp2_pre_forward(W, S, block_tag(gather_tag, i, MB_NONE, 0), i, mb, lc->gather);
    else take_gathered(W, S, LLMEM_CAT_WEIGHTS, block_tag(gather_tag, i, MB_NONE, 0), lc->gather, 0);
  }
  sim_take(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_CAST, i, mb, 0), lc->casts, ALLOC_STREAM_COMPUTE);
  sim_add(S, LLMEM_CAT_ACTIVATIONS, la->saved_bytes);
  block_saved(S, la, i, mb, 1);
  sim_take_transient(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, i, mb, 0), la->forward_temp_bytes,
                     ALLOC_STREAM_COMPUTE);
  /* FSDP2: the next unit's all-gather is its own pre-forward's (fsdp2.c) */
  double prefetch = W->fsdp2 ? 0 : i + 1 < first + n ? lc->prefetch : head_prefetch(W, c);
  int prefetches = !W->fsdp2 && (i + 1 < first + n || prefetch > 0);
  if (prefetches) {
    take_gathered(W, S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_PREFETCH, i, mb, 0), prefetch, 1);
  }
  sim_record(S, LLMEM_PHASE_FORWARD, mb, i);
  sim_give(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, i, mb, 0), la->forward_temp_bytes, 0);
  if (prefetches) sim_give(S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_PREFETCH, i, mb, 0), prefetch, 1);
  if (W->offload && i >= first + 2) { /* the layer two back has reached host memory */
    sim_add(S, LLMEM_CAT_ACTIVATIONS, -acts(W, c, i - 2)->saved_bytes);
    block_saved(S, acts(W, c, i - 2), i - 2, mb, 0);
  }
  /* kept gathered: stays until the end of the step */
  if (rs->gathers && !kept && !rs->keep_gathered_until_backward) {
    if (W->fsdp2) fsdp2_reshard(S, block_tag(TAG_GATHER, i, MB_NONE, 0), lc->gather);
    else sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_GATHER, i, MB_NONE, 0), lc->gather, 1);
  }
}

static int alike_steps(const stage_walk *W, int c, int backward, int at, int *period);

void forward_pass(const stage_walk *W, sim *S, int mb, int c, int started) {
  const rank_states *rs = W->rs;
  int first = W->first_global[c], n = W->chunk_layers[c];
  int kept = started && rs->keep_gathered_until_backward;
  if (is_first_chunk(W, c)) vision_forward(W, S, mb);
  if (is_first_chunk(W, c)) embedding_forward(W, S, mb, c, kept);
  int run_end = first, period = 1; /* tracking: the run of alike steps of `period` layers i is in */
  for (int i = first; i < first + n;) {
    if (S->track && i >= run_end) { /* the call sets period: read after it (operands are unsequenced) */
      int steps = alike_steps(W, c, 0, i - first, &period);
      run_end = i + period * (1 + steps);
    }
    int more = S->track ? (run_end - i) / period - 1 : 0;
    if (more < 2) {
      run_end = i + 1; /* looked for again from the next layer */
      layer_forward(W, S, mb, c, i++, kept);
      continue;
    }
    step_mark m;
    step_begin(S, &m);
    for (int t = 0; t < period; t++) layer_forward(W, S, mb, c, i + t, kept);
    int added = step_repeat(S, &m, more, period);
    i += period * (1 + added);
    if (added < more) { /* the next step rounds otherwise (mostly: leaves a binade): walked unchecked */
      for (int t = 0; t < period; t++) layer_forward(W, S, mb, c, i + t, kept);
      i += period;
    }
  }
  if (is_last_chunk(W, c)) {
    mtp_forward(W, S, mb);
    if (W->loss_gather > 0) sim_sync(S);
    if (W->fsdp2) fsdp2_pre_forward(W, S, block_tag(TAG_GATHER, LAYER_HEAD, mb, 1), LAYER_HEAD, mb, W->loss_gather);
    else take_gathered(W, S, LLMEM_CAT_WEIGHTS, block_tag(TAG_GATHER, LAYER_HEAD, mb, 1), W->loss_gather, 0);
    sim_take(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_CAST, LAYER_HEAD, mb, 0), W->head_cast, ALLOC_STREAM_COMPUTE);
    sim_take(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_LOSS, LAYER_HEAD, mb, 0), W->loss.head_input_bytes,
             ALLOC_STREAM_COMPUTE);
    /* DTensor TP: the vocab-sharded logits all-gathered to every rank; the local shard and the
     * gathered rows go once concatenated (loss.c gather_bytes), the concatenation is the loss's */
    if (W->loss.gather_peak_bytes > 0) {
      loss_take(S, mb, 4, W->loss.gather_tensors, W->loss.gather_peak_bytes);
      sim_record(S, LLMEM_PHASE_LOSS, mb, -1);
      sim_add(S, LLMEM_CAT_LOGITS, -W->loss.gather_peak_bytes);
      loss_unblock_which(S, mb, 4, W->loss.gather_tensors, 0);
    }
    /* model() has returned (FSDP2: the root's post-forward frees the last all-gather output): `logits`
     * is rebound, the micro-batch before's go */
    if (W->fsdp2) fsdp2_forward_done(S);
    if (S->held) sim_give(S, LLMEM_CAT_LOGITS, held_tag(LAYER_HEAD), W->held_logits, 0);
    /* the logits and the loss's working copies, then what it saves for the backward, made from them
     * (the probe's traces: the 16-bit logits, their fp32 copy, then the log-softmax output) */
    loss_take(S, mb, 2, W->loss.forward_tensors, W->loss.forward_peak_bytes);
    sim_take(S, LLMEM_CAT_LOGITS, block_tag(TAG_LOSS, LAYER_HEAD, mb, 1), W->loss.saved_bytes, ALLOC_STREAM_COMPUTE);
    sim_record(S, LLMEM_PHASE_LOSS, mb, -1);
    sim_add(S, LLMEM_CAT_LOGITS, -W->loss.forward_peak_bytes);
    loss_unblock_which(S, mb, 2, W->loss.forward_tensors, 0);
    /* `loss` is rebound: the micro-batch before's graph goes, with its 4-bit inputs */
    if (S->held) held_inputs(W, S, 0), S->held = 0;
    if (W->fsdp2) fsdp2_reshard(S, block_tag(TAG_GATHER, LAYER_HEAD, mb, 1), W->loss_gather);
    else sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_GATHER, LAYER_HEAD, mb, 1), W->loss_gather, 1);
    /* the freed 16-bit logits block is too small for the backward's fp32
     * requests and stays cached beside them */
    S->hole = W->loss.unreusable_bytes;
  }
  if (W->fsdp2) fsdp2_forward_done(S); /* a stage's model chunk without the head: its root's post-forward */
  /* the autocast region ends (casts_recast): the checkpointed layers' casts go */
  if (W->pl->autocast)
    for (int i = first; i < first + n; i++)
      if (casts_recast(W, c, i)) sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_CAST, i, mb, 0), cost(W, i)->casts, 0);
}

/* The head's pre-backward (the root's, or an own head unit's) prefetches the
 * last layer's all-gather (FSDP2 _backward_prefetch: reverse post-forward
 * order, _fsdp_param_group.py 002a76fbf; FSDP1 BACKWARD_PRE). */
static double loss_prefetch(const stage_walk *W, int c) {
  int n = W->chunk_layers[c];
  if (W->fsdp2 && W->rs->keep_gathered_until_backward) return 0; /* kept_unsharded(): no all-gather */
  return W->rs->gathers == 1 && n > 0 ? cost(W, W->first_global[c] + n - 1)->prefetch_bwd : 0;
}

/* FSDP2's post-backward keeps its reduce-scatter input (ReduceScatterState) until the next
 * unit's post-backward, which frees it after resharding and before allocating its own
 * (_fsdp_param_group.py post_backward: comm_ctx.reduce_scatter_state = None, then
 * foreach_reduce; pytorch 002a76fbf, and per group in reduce_scatter_states since #177319,
 * 01c9f4fc). The root's final callback clears the last at the end of the backward
 * (_fsdp_state.py _root_post_backward_final_callback, 01c9f4fc). */
typedef struct {
  double bytes;
  int layer; /* whose input: a layer, or LAYER_HEAD for an output unit of its own */
} held_input;

/* What is held when layer i's backward starts: the input of the layer above it in the chunk, or
 * of an own output unit for the chunk's last layer (a root unit reduces at the end instead). */
static held_input held_before(const stage_walk *W, int c, int i) {
  held_input h = {0, 0};
  if (!W->fsdp2) return h;
  if (i + 1 < W->first_global[c] + W->chunk_layers[c]) h.bytes = cost(W, i + 1)->reduce_input, h.layer = i + 1;
  else if (is_last_chunk(W, c) && W->rs->own_root_units) h.bytes = W->loss_reduce, h.layer = LAYER_HEAD;
  return h;
}

/* The next unit's post-backward frees it. */
static void release_held(const stage_walk *W, sim *S, int mb, held_input *h) {
  if (h->bytes > 0)
    sim_give(S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_COMM, h->layer, mb, 0), h->bytes, !W->pl->reduce_on_compute);
  h->bytes = 0;
}

/* A unit's post-backward: its gathered parameters are already freed
 * (reshard), the reduce-scatter input is copied from the full gradient
 * (foreach_reduce), then the gradient is dropped (_fsdp_param_group.py post_backward, 002a76fbf). */
/* Where a reduce-scatter input is allocated: FSDP2 copies it in on the compute
 * stream (PyTorch #129721), the others under their reduce-scatter stream. */
static int reduce_stream(const stage_walk *W) {
  return W->pl->reduce_on_compute ? ALLOC_STREAM_COMPUTE : ALLOC_STREAM_REDUCE;
}

static void reduce_scatter(const stage_walk *W, sim *S, int mb, uint64_t grads_tag, double grads, uint64_t input_tag,
                           double input) {
  sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, input_tag, input, reduce_stream(W));
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, -1);
  if (input > 0) sim_give(S, LLMEM_CAT_COMM_BUFFERS, input_tag, input, !W->pl->reduce_on_compute);
  sim_give(S, LLMEM_CAT_GRADIENTS, grads_tag, grads, 0);
}

/* Where lazily created sharded gradients come from: FSDP2's are its reduce-scatter
 * outputs, in the reduce-scatter stream's pool, which the compute stream never reuses
 * after zero_grad frees them (c10/cuda/CUDACachingAllocator.cpp: blocks per stream). */
static int grad_stream(const stage_walk *W) {
  return W->rs->gradients_reduce_stream ? ALLOC_STREAM_REDUCE : ALLOC_STREAM_COMPUTE;
}

/* FSDP2's foreach_reduce after the copy-in, the full gradients freed: the reduce-scatter output,
 * the input over the shard group in the reduce dtype, allocated beside the input (_fsdp_collectives.py
 * foreach_reduce, 010ae4a8). On the pass that creates the sharded gradients (`made` bytes of them,
 * just taken) it becomes them, or is cast into them when their dtype differs; otherwise it is added
 * into them and dropped. Above the copy-in only over one or two ranks (TP alone: the input's size). */
static void reduce_output(const stage_walk *W, sim *S, int mb, int layer, double input, double made) {
  double out = input / W->pl->shard_dense;
  int same = made > 0 && fabs(made - out) <= 1e-9 * out; /* the output is the gradient */
  if (same || out <= 0) {
    sim_record(S, LLMEM_PHASE_BACKWARD, mb, layer);
    return;
  }
  uint64_t tag = block_tag(TAG_COMM, layer, mb, 3);
  sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, tag, out, ALLOC_STREAM_REDUCE);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, layer);
  sim_give(S, LLMEM_CAT_COMM_BUFFERS, tag, out, 0);
}

/* Lazily created sharded gradients on the pass that makes them (0 bytes otherwise). */
static double make_sharded(const stage_walk *W, sim *S, int layer, double bytes) {
  if (bytes > 0) sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, layer, MB_NONE, 0), bytes, grad_stream(W));
  return bytes > 0 ? bytes : 0;
}

/* The head weight's autograd buffer (head_buffer_init) becomes its .grad: an untied head's, made lazily on the
 * first pass, unless a per-parameter optimizer step in the backward frees it at once. */
static int head_buffer_becomes_grad(const stage_walk *W, int first_pass) {
  return W->lazy && first_pass && !W->head_tied && grads_kept(W);
}

/* At the head's matmul backward: the buffer (unless it is the .grad take_head_grads makes), and the
 * chunk gradient added into it. */
static void head_buffer_take(const stage_walk *W, sim *S, int mb, int first_pass) {
  if (W->head_table_grad <= 0) return;
  if (!head_buffer_becomes_grad(W, first_pass))
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_HEAD, mb, 2), W->head_table_grad, ALLOC_STREAM_COMPUTE);
  if (W->head_chunked)
    sim_take_transient(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_HEAD, mb, 3), W->head_chunk_grad,
                       ALLOC_STREAM_COMPUTE);
}

/* After that instant: the chunk's gradient added; an untied head's buffer added into .grad (or
 * stepped and freed); a tied one's kept for the embedding's backward. `taken`: head_buffer_take ran
 * before the instant (else the instant was the loss's own backward, before the head's matmul: a tied
 * buffer starts now). */
static void head_buffer_after(const stage_walk *W, sim *S, int mb, int first_pass, int taken) {
  if (W->head_table_grad <= 0) return;
  if (!taken) {
    if (W->head_tied)
      sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_HEAD, mb, 2), W->head_table_grad,
               ALLOC_STREAM_COMPUTE);
    return;
  }
  if (W->head_chunked) sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_HEAD, mb, 3), W->head_chunk_grad, 0);
  if (!head_buffer_becomes_grad(W, first_pass) && !W->head_tied)
    sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_HEAD, mb, 2), W->head_table_grad, 0);
}

/* The head's gradients from its matmul backward: lazily created ones on the
 * first pass, an FSDP2 root's unsharded one, an own head unit's full one. */
static void take_head_grads(const stage_walk *W, sim *S, int mb, int first_pass, uint64_t full) {
  if (W->lazy && first_pass)
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_HEAD, MB_NONE, 0),
             (head_grad_kept(W) ? W->head_grads : 0) + W->norm_grads, grad_stream(W));
  if (W->root_grads > 0)
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_UNSHARDED, LAYER_HEAD, mb, 0), W->root_grads, ALLOC_STREAM_COMPUTE);
  sim_take(S, LLMEM_CAT_GRADIENTS, full, W->loss_grads, ALLOC_STREAM_COMPUTE);
}

/* The loss gradient at the head; the head's gradients. */
static void loss_backward(const stage_walk *W, sim *S, int mb, int c, int first_pass) {
  int own = W->rs->own_root_units, f2 = W->fsdp2;
  double prefetch = loss_prefetch(W, c);
  uint64_t next = block_tag(TAG_PREFETCH, LAYER_HEAD, mb, 0), full = block_tag(TAG_UNSHARDED, LAYER_HEAD, mb, 1);
  int last = W->first_global[c] + W->chunk_layers[c] - 1; /* the unit the head's pre-backward prefetches */
  if (W->loss_gather > 0) sim_sync(S);
  if (f2) fsdp2_pre_backward(W, S, block_tag(TAG_REGATHER, LAYER_HEAD, mb, 1), LAYER_HEAD, mb, W->loss_gather);
  else take_gathered(W, S, LLMEM_CAT_WEIGHTS, block_tag(TAG_REGATHER, LAYER_HEAD, mb, 1), W->loss_gather, 0);
  loss_take(S, mb, 3, W->loss.backward_tensors, W->loss.backward_peak_bytes);
  /* The head's gradients come after the loss's own backward has freed its
   * tensors: the autograd engine runs the head's matmul backward (MmBackward0)
   * once the loss's nodes have handed it the logits' gradient, and each node's
   * saved tensors go when it has run (torch/csrc/autograd/engine.cpp
   * evaluate_function, release_variables). FSDP2's are always made there. */
  double grads = (W->lazy && first_pass ? W->head_grads + W->norm_grads : 0) + W->root_grads + W->loss_grads;
  int late = f2 || (W->loss.head_dgrad_bytes > 0 && (grads > 0 || W->head_table_grad > 0));
  if (!late) take_head_grads(W, S, mb, first_pass, full);
  /* a chunked head's matmuls run chunk by chunk with the loss's: their gradients are at this instant */
  if (!late && W->head_chunked) head_buffer_take(W, S, mb, first_pass);
  /* FSDP2: the root's pre-backward (a hook on the loss) prefetches the last layer; an output unit
   * of its own is the root's prefetch (reverse post-forward order), and its pre-backward, a hook
   * on the logits, prefetches the last layer once the loss's backward is done (_fsdp_state.py
   * _pre_backward, _fsdp_param_group.py _backward_prefetch, 002a76fbf) */
  int late_prefetch = f2 && own;
  if (f2 && !late_prefetch) fsdp2_prefetch(W, S, last, mb, prefetch);
  else if (!late_prefetch) take_gathered(W, S, LLMEM_CAT_COMM_BUFFERS, next, prefetch, 1);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, -1);
  if (!own && !late) sim_give(S, LLMEM_CAT_GRADIENTS, full, W->loss_grads, 0);
  sim_add(S, LLMEM_CAT_LOGITS, -(W->loss.backward_peak_bytes + W->loss.saved_bytes));
  /* the loss's saved tensors go when its node has run; the gradient it hands the head's matmul lives
   * through that matmul's backward, which makes the weight's gradient (head_buffer_after) */
  loss_unblock_which(S, mb, 3, W->loss.backward_tensors, late);
  sim_unblock(S, block_tag(TAG_LOSS, LAYER_HEAD, mb, 1), 0);
  if (!late && !f2) head_buffer_after(W, S, mb, first_pass, W->head_chunked);
  S->hole = 0;
  if (late) { /* the head's matmul backward: the logits' gradient it reads, the weight's it makes */
    uint64_t dgrad = block_tag(TAG_LOSS, LAYER_HEAD, mb, 4);
    /* ToCopyBackward0 casts the loss's last gradient, which goes once the cast has run (the probe's
     * traces: the 16-bit gradient made, then the fp32 one freed, then the weight's gradient) */
    sim_take_transient(S, LLMEM_CAT_LOGITS, dgrad, W->loss.head_dgrad_bytes, ALLOC_STREAM_COMPUTE);
    loss_unblock_which(S, mb, 3, W->loss.backward_tensors, 2);
    if (!f2) {
      take_head_grads(W, S, mb, first_pass, full);
      head_buffer_take(W, S, mb, first_pass);
    } else { /* an FSDP2 root's unsharded gradient; an own output unit's full one */
      if (W->root_grads > 0)
        sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_UNSHARDED, LAYER_HEAD, mb, 0), W->root_grads,
                 ALLOC_STREAM_COMPUTE);
      if (late_prefetch) fsdp2_prefetch(W, S, last, mb, prefetch);
      if (own) sim_take(S, LLMEM_CAT_GRADIENTS, full, W->loss_grads, ALLOC_STREAM_COMPUTE);
    }
    sim_record(S, LLMEM_PHASE_BACKWARD, mb, -1);
    if (!f2) head_buffer_after(W, S, mb, first_pass, 1);
    sim_give(S, LLMEM_CAT_LOGITS, dgrad, W->loss.head_dgrad_bytes, 0);
    if (!own && !f2) sim_give(S, LLMEM_CAT_GRADIENTS, full, W->loss_grads, 0);
  }
  sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_CAST, LAYER_HEAD, mb, 0), W->head_cast, 0);
  sim_give(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_LOSS, LAYER_HEAD, mb, 0), W->loss.head_input_bytes, 0);
  if (W->quant_held) /* the loop's logits outlive the backward (hold_quant_inputs) */
    sim_take(S, LLMEM_CAT_LOGITS, held_tag(LAYER_HEAD), W->held_logits, ALLOC_STREAM_COMPUTE);
  if (f2) fsdp2_reshard(S, block_tag(TAG_REGATHER, LAYER_HEAD, mb, 1), W->loss_gather);
  else sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_REGATHER, LAYER_HEAD, mb, 1), W->loss_gather, 1);
  if (own && f2) { /* its post-backward: the input stays held until the last layer's (held_before) */
    sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_COMM, LAYER_HEAD, mb, 0), W->loss_reduce,
                       reduce_stream(W));
    sim_record(S, LLMEM_PHASE_BACKWARD, mb, -1);
    sim_give(S, LLMEM_CAT_GRADIENTS, full, W->loss_grads, 0);
    /* the sharded gradient (the root's final norm's, tiny, with it) */
    double made = W->lazy && first_pass ? W->head_grads : 0;
    make_sharded(W, S, LAYER_HEAD, made > 0 ? made + W->norm_grads : 0);
    reduce_output(W, S, mb, -1, W->loss_reduce, made);
  } else if (own) reduce_scatter(W, S, mb, full, W->loss_grads, block_tag(TAG_COMM, LAYER_HEAD, mb, 0), W->loss_reduce);
  if (prefetch > 0 && !f2) sim_give(S, LLMEM_CAT_COMM_BUFFERS, next, prefetch, 1); /* FSDP2: the unit's own */
}

/* The unit before layer i, all-gathered during its backward: the layer
 * below, or for the first layer an embedding of its own that was resharded. */
static double backward_prefetch(const stage_walk *W, int c, int i, const layer_cost *lc) {
  if (W->fsdp2 && W->rs->keep_gathered_until_backward) return 0; /* unshard(): already unsharded */
  if (i > W->first_global[c]) return W->fsdp2 ? cost(W, i - 1)->prefetch_bwd : lc->prefetch_bwd;
  return is_first_chunk(W, c) && !W->rs->keep_gathered_until_backward ? W->embed_gather : 0;
}

/* A layer's backward is done: its saved and recomputed tensors go (the 4-bit
 * inputs stay with the graph, hold_quant_inputs), and its autocast weight casts. */
static void release_saved(const stage_walk *W, sim *S, const layer_activations *la, const layer_cost *lc, int i,
                          int mb) {
  sim_add(S, LLMEM_CAT_ACTIVATIONS, -(la->recompute_bytes + la->saved_bytes));
  block_list(S, &la->recompute_tensors, TAG_RECOMPUTE, i, mb, 0);
  block_saved(S, la, i, mb, 0);
  if (W->quant_held) {
    sim_take(S, LLMEM_CAT_ACTIVATIONS, held_tag(i), la->quant_input_bytes, ALLOC_STREAM_COMPUTE);
    S->held = 1;
  }
  sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_CAST, i, mb, 0), lc->casts, 0);
}

/* FSDP2, one decoder-layer unit (_fsdp_param_group.py pre_backward / post_backward, 002a76fbf;
 * _fsdp_collectives.py foreach_reduce, 010ae4a8). Its pre-backward copies the prefetched
 * all-gather out and prefetches the unit below; the backward (after the recompute) runs beside
 * the reduce-scatter input the unit above left held. Its post-backward then reshards (frees the
 * unsharded parameters), frees that held input, allocates its own in the reduce dtype and copies
 * the full gradients in, frees them, and the reduce-scatter output becomes the sharded gradient.
 * With reshard_after_forward False the parameters stay gathered from the forward to here. */
static void layer_backward_fsdp2(const stage_walk *W, sim *S, int mb, int c, int i, int first_pass) {
  const rank_states *rs = W->rs;
  int first = W->first_global[c], n = W->chunk_layers[c];
  const layer_cost *lc = cost(W, i);
  const layer_activations *la = acts_of(W, lc, c, i);
  int kept = rs->keep_gathered_until_backward;
  uint64_t params = block_tag(kept ? TAG_GATHER_KEPT : TAG_REGATHER, i, MB_NONE, 0);
  uint64_t early = block_tag(TAG_UNSHARDED, i, mb, 0), later = block_tag(TAG_UNSHARDED, i, mb, 1);
  uint64_t input = block_tag(TAG_COMM, i, mb, 0);
  sim_sync(S);
  if (!kept) fsdp2_pre_backward(W, S, params, i, mb, lc->gather);
  if (W->offload && i < first + n - 2) { /* brought back from host memory */
    sim_add(S, LLMEM_CAT_ACTIVATIONS, la->saved_bytes);
    block_saved(S, la, i, mb, 1);
  }
  sim_add(S, LLMEM_CAT_ACTIVATIONS, la->recompute_bytes);
  block_list(S, &la->recompute_tensors, TAG_RECOMPUTE, i, mb, 1);
  /* the unit below: the layer's, or the first layer's own embedding unit (fsdp2.c) */
  fsdp2_prefetch(W, S, i > first ? i - 1 : LAYER_EMBED, mb, backward_prefetch(W, c, i, lc));
  sim_take_transient(S, LLMEM_CAT_GRADIENTS, early, lc->first_grads, ALLOC_STREAM_COMPUTE);
  sim_take_transient(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, i, mb, 1), la->backward_temp_bytes,
                     ALLOC_STREAM_COMPUTE);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, i);
  sim_give(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, i, mb, 1), la->backward_temp_bytes, 0);
  release_saved(W, S, la, lc, i, mb);
  double rest = lc->unsharded_grads - lc->first_grads;
  sim_take_transient(S, LLMEM_CAT_GRADIENTS, later, rest, ALLOC_STREAM_COMPUTE);
  /* post-backward */
  fsdp2_reshard(S, params, lc->gather);
  held_input above = held_before(W, c, i);
  release_held(W, S, mb, &above);
  sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, input, lc->reduce_input, reduce_stream(W));
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, i);
  sim_give(S, LLMEM_CAT_GRADIENTS, early, lc->first_grads, 0);
  sim_give(S, LLMEM_CAT_GRADIENTS, later, rest, 0);
  if (W->lazy && first_pass) /* the reduce-scatter output */
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, i, MB_NONE, 0), lc->grad_share, grad_stream(W));
}

static void layer_backward(const stage_walk *W, sim *S, int mb, int c, int i, int first_pass) {
  if (W->fsdp2) {
    layer_backward_fsdp2(W, S, mb, c, i, first_pass);
    return;
  }
  const plan *pl = W->pl;
  const rank_states *rs = W->rs;
  int first = W->first_global[c], n = W->chunk_layers[c];
  const layer_cost *lc = cost(W, i);
  const layer_activations *la = acts_of(W, lc, c, i);
  int regathered = rs->gathers && !rs->keep_gathered_until_backward;
  sim_sync(S);
  if (regathered) {
    take_gathered(W, S, LLMEM_CAT_WEIGHTS, block_tag(TAG_REGATHER, i, MB_NONE, 0), lc->gather, 0);
  }
  if (W->offload && i < first + n - 2) { /* brought back from host memory */
    sim_add(S, LLMEM_CAT_ACTIVATIONS, la->saved_bytes);
    block_saved(S, la, i, mb, 1);
  }
  sim_add(S, LLMEM_CAT_ACTIVATIONS, la->recompute_bytes);
  block_list(S, &la->recompute_tensors, TAG_RECOMPUTE, i, mb, 1);
  if (casts_recast(W, c, i)) /* cast again by the recompute (casts_recast) */
    sim_take(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_CAST, i, mb, 0), lc->casts, ALLOC_STREAM_COMPUTE);
  if ((int)pl->in->optimizer_in_backward != 0)
    sim_take_transient(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, i, mb, 1), lc->grad_share, ALLOC_STREAM_COMPUTE);
  else if (W->lazy && first_pass) blocks_layer_gradients(W, S, i, lc->grad_share, grad_stream(W));
  if (rs->accumulate_unsharded && first_pass)
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_ACCUM, i, MB_NONE, 0), lc->trainable * rs->unsharded_accum_bytes,
             ALLOC_STREAM_COMPUTE);
  double prefetch = backward_prefetch(W, c, i, lc);
  sim_take_transient(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_UNSHARDED, i, mb, 0), lc->unsharded_grads,
                     ALLOC_STREAM_COMPUTE);
  sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_COMM, i, mb, 0), lc->reduce_input, reduce_stream(W));
  take_gathered(W, S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_COMM, i, mb, 2), prefetch, 1);
  sim_take_transient(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, i, mb, 1), la->backward_temp_bytes,
                     ALLOC_STREAM_COMPUTE);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, i);
  sim_give(S, LLMEM_CAT_TEMPORARIES, block_tag(TAG_TEMP, i, mb, 1), la->backward_temp_bytes, 0);
  sim_give(S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_COMM, i, mb, 0), lc->reduce_input, !pl->reduce_on_compute);
  sim_give(S, LLMEM_CAT_COMM_BUFFERS, block_tag(TAG_COMM, i, mb, 2), prefetch, 1);
  sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_UNSHARDED, i, mb, 0), lc->unsharded_grads, 0);
  if ((int)pl->in->optimizer_in_backward != 0)
    sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, i, mb, 1), lc->grad_share, 0);
  release_saved(W, S, la, lc, i, mb);
  if (regathered) sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_REGATHER, i, MB_NONE, 0), lc->gather, 1);
}

/* The embedding's backward: its lazily created gradient on the first pass;
 * an embedding unit of its own is gathered again (unless kept), then its
 * post-backward (the root's final callback: token ids carry no gradient
 * for a post-backward hook, _fsdp_state.py) reshards and reduce-scatters. */
static void embedding_backward(const stage_walk *W, sim *S, int mb, int first_pass, held_input *held) {
  const rank_states *rs = W->rs;
  int own = W->embed_gather > 0, f2 = W->fsdp2;
  /* FSDP2: sharded gradients are reduce-scatter outputs, a root unit's at root_post_backward */
  int lazy = W->lazy && first_pass && !f2;
  if (W->head_tied && W->head_table_grad > 0) { /* the embedding's gradient added into the tied head's buffer */
    uint64_t add = block_tag(TAG_GRAD, LAYER_EMBED, mb, 3);
    sim_take_transient(S, LLMEM_CAT_GRADIENTS, add, W->head_table_grad, ALLOC_STREAM_COMPUTE);
    sim_record(S, LLMEM_PHASE_BACKWARD, mb, LAYER_EMBED);
    sim_give(S, LLMEM_CAT_GRADIENTS, add, W->head_table_grad, 0);
    sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_HEAD, mb, 2), W->head_table_grad, 0);
  }
  if (W->root_embed_grads > 0) /* FSDP2 root: the embedding's full gradient appears now */
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_UNSHARDED, LAYER_EMBED, mb, 1), W->root_embed_grads,
             ALLOC_STREAM_COMPUTE);
  if (!lazy && !own) {
    if (W->root_embed_grads > 0) sim_record(S, LLMEM_PHASE_BACKWARD, mb, LAYER_EMBED);
    return;
  }
  int keep = rs->keep_gathered_until_backward;
  double gather = own && !keep ? W->embed_gather : 0;
  uint64_t again = block_tag(TAG_REGATHER, LAYER_EMBED, MB_NONE, 0),
           full = block_tag(TAG_UNSHARDED, LAYER_EMBED, mb, 0);
  if (f2) fsdp2_pre_backward(W, S, again, LAYER_EMBED, mb, gather);
  else take_gathered(W, S, LLMEM_CAT_WEIGHTS, again, gather, 0);
  if (lazy)
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_EMBED, MB_NONE, 0), W->embed_grads, grad_stream(W));
  if (own) sim_take(S, LLMEM_CAT_GRADIENTS, full, rs->embed_unsharded_grads, ALLOC_STREAM_COMPUTE);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, LAYER_EMBED);
  if (lazy && !grads_kept(W)) /* stepped by its hook and freed */
    sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_EMBED, MB_NONE, 0), W->embed_grads, 0);
  if (!own) return;
  if (gather > 0 && f2) fsdp2_reshard(S, again, gather);
  else if (gather > 0) sim_give(S, LLMEM_CAT_WEIGHTS, again, gather, 1);
  if (!f2) {
    reduce_scatter(W, S, mb, full, rs->embed_unsharded_grads, block_tag(TAG_COMM, LAYER_EMBED, mb, 0),
                   rs->embed_reduce_input);
    return;
  }
  /* FSDP2: reshard (kept ones too: reshard_after_backward), the last layer's held input freed
   * (by the root's post-backward, which the final callback runs first: its own input is the
   * final norm's), then the embedding's reduce-scatter; cleared at the end of the backward */
  if (keep) fsdp2_reshard(S, block_tag(TAG_GATHER_KEPT, LAYER_EMBED, MB_NONE, 0), W->embed_gather);
  release_held(W, S, mb, held);
  uint64_t input = block_tag(TAG_COMM, LAYER_EMBED, mb, 0);
  sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, input, rs->embed_reduce_input, reduce_stream(W));
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, LAYER_EMBED);
  sim_give(S, LLMEM_CAT_GRADIENTS, full, rs->embed_unsharded_grads, 0);
  double made = make_sharded(W, S, LAYER_EMBED, W->lazy && first_pass ? W->embed_grads : 0);
  reduce_output(W, S, mb, LAYER_EMBED, rs->embed_reduce_input, made);
  sim_give(S, LLMEM_CAT_COMM_BUFFERS, input, rs->embed_reduce_input, !W->pl->reduce_on_compute);
}

/* The root's post-backward, once its parameters in this chunk have their
 * gradients: FSDP2's reduce-scatter input beside them, then all freed. */
static void root_post_backward(const stage_walk *W, sim *S, int mb, int c, int first_pass, held_input *held) {
  int head = is_last_chunk(W, c) && W->root_grads > 0, embed = is_first_chunk(W, c) && W->root_embed_grads > 0;
  double input = (head ? W->root_reduce_head : 0) + (embed ? W->root_reduce_embed : 0);
  uint64_t input_tag = block_tag(TAG_COMM, LAYER_REST, mb, 0), root = block_tag(TAG_GATHER, LAYER_HEAD, MB_NONE, 0);
  /* FSDP2 (the root's final callback): post_backward reshards the root before its reduce-scatter
   * input is allocated, after the held input is freed; the next forward's root pre-forward
   * gathers it again (the optimizer step releases it, simulate.c) */
  int reshard = W->fsdp2 && input > 0 && W->root > 0;
  if (reshard) fsdp2_reshard(S, root, W->root);
  release_held(W, S, mb, held);
  sim_take_transient(S, LLMEM_CAT_COMM_BUFFERS, input_tag, input, reduce_stream(W));
  int layer = embed ? LAYER_EMBED : -1;
  if (input > 0) sim_record(S, LLMEM_PHASE_BACKWARD, mb, layer); /* at the end of the backward, after the embedding's */
  if (head) sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_UNSHARDED, LAYER_HEAD, mb, 0), W->root_grads, 0);
  if (embed) sim_give(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_UNSHARDED, LAYER_EMBED, mb, 1), W->root_embed_grads, 0);
  if (first_pass && head && W->root_accum > 0) /* accumulated from the first micro-batch on (accumulate_unsharded) */
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_ACCUM, LAYER_HEAD, MB_NONE, 0), W->root_accum, ALLOC_STREAM_COMPUTE);
  if (first_pass && embed && W->root_embed_accum > 0)
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_ACCUM, LAYER_EMBED, MB_NONE, 0), W->root_embed_accum,
             ALLOC_STREAM_COMPUTE);
  if (W->fsdp2) { /* the root unit's sharded gradients: its reduce-scatter output */
    int made = W->lazy && first_pass, own = W->rs->own_root_units;
    double bytes =
        make_sharded(W, S, LAYER_HEAD, made && is_last_chunk(W, c) && !own ? W->head_grads + W->norm_grads : 0) +
        make_sharded(W, S, LAYER_EMBED, made && is_first_chunk(W, c) && W->embed_gather <= 0 ? W->embed_grads : 0);
    if (input > 0) reduce_output(W, S, mb, layer, input, bytes);
  }
  if (input > 0) sim_give(S, LLMEM_CAT_COMM_BUFFERS, input_tag, input, !W->pl->reduce_on_compute);
  if (reshard) fsdp2_root_unshard(W, S, W->root);
}

/* FSDP2 with reshard_after_forward False: the units resharded by their post-backward are gathered
 * again by the next forward; taken back at the pass's end, the state the walk rebuilds
 * (walk_state: kept_gathered from the chunk's first forward on) */
static void regather_kept(const stage_walk *W, sim *S, int c) {
  if (!W->fsdp2 || !W->rs->keep_gathered_until_backward) return;
  int first = W->first_global[c], n = W->chunk_layers[c];
  for (int i = first; i < first + n; i++) { /* copied out on the compute stream (fsdp2.c) */
    sim_add(S, LLMEM_CAT_WEIGHTS, cost(W, i)->gather);
    blocks_layer_params(W, S, TAG_GATHER_KEPT, i, cost(W, i)->gather);
  }
  if (is_first_chunk(W, c) && W->embed_gather > 0)
    sim_take(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_GATHER_KEPT, LAYER_EMBED, MB_NONE, 0), W->embed_gather,
             ALLOC_STREAM_COMPUTE);
}

/* What decides a backward step's amounts beyond its layer's kind: what offload brings back, the prefetch. */
typedef struct {
  const layer_cost *lc;
  const layer_activations *la;
  int brought_back;
  double prefetch;
  double held; /* FSDP2: the reduce-scatter input held from the unit above */
} backward_step;

static backward_step backward_step_of(const stage_walk *W, int c, int i) {
  int first = W->first_global[c], n = W->chunk_layers[c];
  const layer_cost *lc = cost(W, i);
  backward_step b = {lc, acts_of(W, lc, c, i), W->offload && i < first + n - 2, backward_prefetch(W, c, i, lc),
                     held_before(W, c, i).bytes};
  return b;
}


/* What decides a step's amounts beyond its layer's kind, either way (forward_step, backward_step). */
typedef struct {
  const layer_cost *lc;
  const layer_activations *la, *off;
  double prefetch;
  int brought_back;
  double held;
} step_key;

/* The step of the layer at walk offset `at` (forward: from the chunk's first layer up; backward: from its last down). */
static step_key step_key_of(const stage_walk *W, int c, int backward, int at) {
  int first = W->first_global[c], last = first + W->chunk_layers[c] - 1;
  if (backward) {
    backward_step b = backward_step_of(W, c, last - at);
    return (step_key){b.lc, b.la, 0, b.prefetch, b.brought_back, b.held};
  }
  forward_step f = forward_step_of(W, c, first + at);
  return (step_key){f.lc, f.la, f.off, f.prefetch, 0, 0};
}

static int same_step(const step_key *a, const step_key *b) {
  return a->lc == b->lc && a->la == b->la && a->off == b->off && a->prefetch == b->prefetch &&
         a->brought_back == b->brought_back && a->held == b->held;
}

/* The steps of the layers near the offsets a chunk's runs are looked for from, each found once (a scan
 * that finds no run tries every period, and the next offset's scan the same layers again). */
enum { KEY_CACHE = 32 }; /* more than the ALIKE_MAX_PERIOD + 1 offsets a comparison spans */
typedef struct {
  int at[KEY_CACHE]; /* the walk offset each slot holds (-1: none) */
  step_key key[KEY_CACHE];
} key_cache;

static const step_key *cached_step(const stage_walk *W, int c, int backward, int at, key_cache *k) {
  int i = at % KEY_CACHE;
  if (k->at[i] != at) k->at[i] = at, k->key[i] = step_key_of(W, c, backward, at);
  return &k->key[i];
}

/* Steps of `period` layers from walk offset `at` that repeat the first's,
 * after it: the shortest period with three steps or more (0: none). */
static int alike_scan(const stage_walk *W, int c, int backward, int at, int *period, key_cache *k) {
  int n = W->chunk_layers[c];
  for (int p = 1; p <= ALIKE_MAX_PERIOD && at + 3 * p <= n; p++) {
    int j = at + p;
    for (; j < n; j++) {
      const step_key *before = cached_step(W, c, backward, j - p, k); /* p < KEY_CACHE: another slot */
      if (!same_step(before, cached_step(W, c, backward, j, k))) break;
    }
    if ((j - at) / p >= 3) {
      *period = p;
      return (j - at) / p - 1;
    }
  }
  *period = 1;
  return 0;
}

/* The chunk's runs, found once for its stage class (the layers are the same). */
static const alike_plan *alike_plan_of(const stage_walk *W, int c, int backward) {
  alike_plan *a = pass_alike_plan(W, c, backward);
  if (a->count >= 0) return a;
  static key_cache keys; /* off small stacks */
  for (int i = 0; i < KEY_CACHE; i++) keys.at[i] = -1;
  a->count = 0;
  for (int at = 0, n = W->chunk_layers[c]; at < n && a->count < ALIKE_MAX_SEGS;) {
    int period, more = alike_scan(W, c, backward, at, &period, &keys);
    if (more || a->count == 0 || a->seg[a->count - 1].steps) /* layers one by one: one segment up to the next run */
      a->seg[a->count++] = (alike_seg){at, period, more ? more + 1 : 0};
    at += more ? period * (more + 1) : 1;
  }
  return a;
}

/* Steps of `period` layers from walk offset `at` that repeat the first's, after it (0: none),
 * from the class's plan. */
static int alike_steps(const stage_walk *W, int c, int backward, int at, int *period) {
  const alike_plan *a = alike_plan_of(W, c, backward);
  *period = 1;
  int k = a->count - 1;
  while (k >= 0 && a->seg[k].at > at) k--;
  if (k < 0 || a->seg[k].steps == 0 || (at - a->seg[k].at) % a->seg[k].period) return 0;
  int left = a->seg[k].steps - (at - a->seg[k].at) / a->seg[k].period; /* this step's included */
  if (left < 3) return 0;
  *period = a->seg[k].period;
  return left - 1;
}


/* first_pass: the chunk's first backward of the step (lazy gradients appear) */
void backward_pass(const stage_walk *W, sim *S, int mb, int c, int first_pass) {
  int first = W->first_global[c], n = W->chunk_layers[c];
  if (is_last_chunk(W, c)) loss_backward(W, S, mb, c, first_pass);
  if (is_last_chunk(W, c)) mtp_backward(W, S, mb);
  int run_low = first + n, period = 1; /* tracking: the run of alike steps of `period` layers down from i */
  for (int i = first + n - 1; i >= first;) {
    if (S->track && i < run_low) {
      int steps = alike_steps(W, c, 1, first + n - 1 - i, &period);
      run_low = i + 1 - period * (1 + steps);
    }
    int more = S->track ? (i + 1 - run_low) / period - 1 : 0;
    if (more < 2) {
      run_low = i; /* looked for again from the next layer down */
      layer_backward(W, S, mb, c, i--, first_pass);
      continue;
    }
    step_mark m;
    step_begin(S, &m);
    for (int t = 0; t < period; t++) layer_backward(W, S, mb, c, i - t, first_pass);
    int added = step_repeat(S, &m, more, -period);
    i -= period * (1 + added);
    if (added < more) { /* the next step rounds otherwise (mostly: leaves a binade): walked unchecked */
      for (int t = 0; t < period; t++) layer_backward(W, S, mb, c, i - t, first_pass);
      i -= period;
    }
  }
  /* FSDP2: the last post-backward's input, held until the next unit's (layer_backward_fsdp2) */
  held_input held = held_before(W, c, first - 1);
  if (is_first_chunk(W, c)) {
    sim_give(S, LLMEM_CAT_ACTIVATIONS, block_tag(TAG_ACT, LAYER_EMBED, mb, 0), W->embedding_act, 0);
    embedding_backward(W, S, mb, first_pass, &held);
    vision_backward(W, S, mb);
  }
  root_post_backward(W, S, mb, c, first_pass, &held);
  release_held(W, S, mb, &held); /* the next pass's first post-backward, or the final callback */
  regather_kept(W, S, c);
}

/* Zero-bubble split (Qi et al. 2023, arXiv 2401.10241 §2, Table 1): the
 * backward for the inputs (I) runs the chunk's backward; the backward for
 * the weights (W) needs each linear's input and output gradient, 32sbh of
 * the layer's 34sbh + 5as^2b, so the micro-batch's live set, modelled whole
 * (an upper bound), stays from the I to its W (DualPipe utils.py
 * WeightGradStore: the W closures hold those tensors until pop). The I also
 * makes the chunk's gradients, which the W would. */
void input_backward_pass(const stage_walk *W, sim *S, int mb, int c, int first_pass) {
  backward_pass(W, S, mb, c, first_pass);
  double bytes = 0;
  for (int j = 0; j < W->in_flight_cat_count[c]; j++) {
    int x = W->in_flight_cats[c][j];
    sim_add(S, x, W->in_flight_cat[c][x]);
    bytes += W->in_flight_cat[c][x];
  }
  sim_block(S, block_tag(TAG_WEIGHT_INPUTS, LAYER_REST, mb, c), bytes, ALLOC_STREAM_COMPUTE);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, W->first_global[c]);
}

void weight_backward_pass(const stage_walk *W, sim *S, int mb, int c) {
  for (int j = 0; j < W->in_flight_cat_count[c]; j++) {
    int x = W->in_flight_cats[c][j];
    sim_add(S, x, -W->in_flight_cat[c][x]);
  }
  sim_unblock(S, block_tag(TAG_WEIGHT_INPUTS, LAYER_REST, mb, c), 0);
  sim_record(S, LLMEM_PHASE_BACKWARD, mb, W->first_global[c]);
}

/* The cuBLAS workspace of the thread that runs the pass (runtime.c), at its first matmul, within its first pass:
 * the forward's on the caller's thread, every backward's on the autograd engine's. */
static void make_workspace(const stage_walk *W, sim *S, int backward) {
  int bit = backward ? 2 : 1;
  if (!(S->workspaces_due & bit)) return;
  S->workspaces_due &= ~bit;
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, 32 + backward), runtime_workspace_bytes(W->pl) / 2,
            ALLOC_STREAM_COMPUTE);
}

void walk_pass(const stage_walk *W, sim *S, const walk_sig *g, sched_op o) {
  if (S->workspaces_due) make_workspace(W, S, o.backward);
  if (!o.backward) forward_pass(W, S, o.mb, o.chunk, g->fwd_started[o.chunk]);
  else if (o.split == SPLIT_I) input_backward_pass(W, S, o.mb, o.chunk, !g->bwd_started[o.chunk]);
  else if (o.split == SPLIT_W) weight_backward_pass(W, S, o.mb, o.chunk);
  else backward_pass(W, S, o.mb, o.chunk, !g->bwd_started[o.chunk]);
}
