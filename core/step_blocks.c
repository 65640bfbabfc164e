/* The model states as allocator requests: one block per decoder layer and
 * state (the layer's share of the rank's total, by its parameters), one for
 * the rest (embedding, head, norms), in the order a training script creates
 * them (docs/memory-model.md §9). */
#include "sim.h"

/* A layer's share of a state total, by its parameters (trainable ones for trainable states). */
static double share_of(const stage_walk *W, int layer, double total, int trainable) {
  const layer_cost *lc = walk_layer_cost(W, layer);
  double denom = trainable ? W->st->trainable_count : W->st->params_count;
  return denom > 0 ? total * (trainable ? lc->trainable : lc->params) / denom : 0;
}

/* A state total split over the stage's layers; what is left is the rest block. */
static void split_state(const stage_walk *W, const sim *S, int part, double total, int trainable) {
  if (total <= 0) return;
  double used = 0;
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
      double share = share_of(W, i, total, trainable);
      if (used + share > total) share = total - used;
      sim_block(S, block_tag(TAG_STATE, i, MB_NONE, part), share, ALLOC_STREAM_COMPUTE);
      used += share;
    }
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, part), total - used, ALLOC_STREAM_COMPUTE);
}

/* FSDP1 wrapping, one unit at a time (layers first, the root last): the
 * unit's parameters reach the GPU unsharded, torch.cat makes the flat
 * parameter, shard() clones the rank's chunk and resizes the unsharded
 * storage to 0 (torch/distributed/fsdp/_flat_param.py FlatParamHandle
 * flatten_tensors_into_flat_param, shard). The originals outlive the shard:
 * _init_param_handle_from_module holds them in managed_params until
 * _init_param_handle_from_params (FlatParamHandle(...), handle.shard())
 * returns (torch/distributed/fsdp/_init_utils.py, v2.2.0), so the shard
 * never lands in their blocks. With CPUOffload(offload_params=True) the same
 * happens on the GPU when device_id is given (_move_module_to_device moves
 * the unit's CPU parameters to device_id first); the shard then goes to the
 * CPU (handle.flat_param_to(cpu) after shard(), same file), its block freed
 * too (to_cpu). Unless the script empties the cache, these blocks stay
 * reserved for the step. */
static void fsdp1_unit(const sim *S, int layer, double weights, double master, double shard, int to_cpu) {
  double unit = (weights + master) * shard;
  uint64_t orig = block_tag(TAG_INIT, layer, MB_NONE, 0), flat = block_tag(TAG_INIT, layer, MB_NONE, 1);
  uint64_t kept =
      to_cpu ? block_tag(TAG_INIT, layer, MB_NONE, 2) : block_tag(TAG_STATE, layer, MB_NONE, LLMEM_CAT_WEIGHTS);
  sim_block(S, orig, unit, ALLOC_STREAM_COMPUTE);
  sim_block(S, flat, unit, ALLOC_STREAM_COMPUTE);
  sim_block(S, kept, weights, ALLOC_STREAM_COMPUTE);
  if (!to_cpu)
    sim_block(S, block_tag(TAG_STATE, layer, MB_NONE, LLMEM_CAT_MASTER_WEIGHTS), master, ALLOC_STREAM_COMPUTE);
  if (unit > 0) sim_unblock(S, flat, 0);
  if (to_cpu && weights > 0) sim_unblock(S, kept, 0);
  if (unit > 0) sim_unblock(S, orig, 0);
}

static int fsdp1_flattens(const plan *pl) {
  return (int)pl->in->engine == LLMEM_ENGINE_FSDP1 && (int)pl->in->fsdp_strategy != LLMEM_FSDP_NO_SHARD;
}

/* The flat parameters split by their bytes (gathered_bytes: a QLoRA layer's
 * 4-bit data is a quarter of the 16-bit embedding and head per parameter);
 * bitsandbytes' statistics stay outside them (Params4bit.quant_state, made
 * at load, states.c quant_stats_on_rank). */
static void fsdp1_setup(const stage_walk *W, const sim *S) {
  const rank_states *rs = W->rs;
  const stage_layout *st = W->st;
  int to_cpu = (int)W->pl->in->offload_params != LLMEM_OFFLOAD_NONE;
  double kept = rs->weights - rs->quant_stats_bytes, in_layers = 0, bytes = 0;
  /* offloaded, what stays on the GPU (the 4-bit statistics, made at load) is per layer, as without FSDP1 */
  if (to_cpu) split_state(W, S, LLMEM_CAT_WEIGHTS, rs->weights, 0);
  else
    sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_COUNT), rs->quant_stats_bytes,
              ALLOC_STREAM_COMPUTE);
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
      in_layers += walk_layer_cost(W, i)->params;
      bytes += walk_layer_cost(W, i)->gather;
    }
  double rest = st->params_count - in_layers;
  bytes += gathered_bytes(rs, rest > 0 ? rest : 0, quantized_head_count(W->pl, st));
  /* offloaded: the rank's shards of the unsharded units pass through the GPU, no master there */
  double flat = to_cpu ? bytes / W->pl->shard_dense : kept, master = to_cpu ? 0 : rs->master;
  double used_w = 0, used_m = 0;
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
      double w = bytes > 0 ? flat * walk_layer_cost(W, i)->gather / bytes : share_of(W, i, flat, 0);
      double m = share_of(W, i, master, 1);
      fsdp1_unit(S, i, w, m, W->pl->shard_dense, to_cpu);
      used_w += w, used_m += m;
    }
  fsdp1_unit(S, LAYER_REST, flat - used_w, master - used_m, W->pl->shard_dense, to_cpu);
  if (to_cpu) split_state(W, S, LLMEM_CAT_MASTER_WEIGHTS, rs->master, 1);
}

/* DeepSpeed ZeRO-3 without zero.Init (parallel.zero_init false: accelerate's zero3_init_flag false, a model
 * built before deepspeed.initialize): the engine moves the whole model, cast to its 16-bit dtype, to the GPU
 * (runtime/engine.py _configure_distributed_model: module.to(self.device) unless is_zero_init_model, @edaa7221)
 * and only then partitions it, parameter by parameter (DeepSpeedZeRoOffload._convert_to_zero_parameters ->
 * zero.Init(module=...): param.partition() allocates the rank's shard and frees the full tensor,
 * partition_parameters.py): the set-up holds the whole model at once (a QLoRA base as its packed 4-bit data). The optimizer then defragments the
 * shards: copied to the host, freed, the cache emptied, one flat buffer back (runtime/zero/utils.py defragment,
 * from stage3.py 4912e0ad7, #1453, 2022-01), which releases the model's segments before the step; with
 * parameter offload it does not run and they stay cached. */
static void tensor_list_blocks(const stage_walk *W, const sim *S, int kind, int layer, double share, int per,
                               int stream, int reverse, int all);
static void free_per_tensor_blocks(int kind, int layer);
static void outer_tensor_blocks(const sim *S, int kind, int layer, double bytes, int per);

static void zero3_whole_then_partitioned(const stage_walk *W, const sim *S) {
  const stage_layout *st = W->st;
  const rank_states *rs = W->rs;
  double layers = 0;
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++)
      layers += walk_layer_cost(W, i)->params;
  double norm = st->final_norm_count, embed = st->embedding_count;
  double head = st->params_count - layers - embed - norm; /* the head, and whatever else the stage holds */
  /* module.to(device), in model.parameters() order: embedding, layers, final norm, head */
  outer_tensor_blocks(S, TAG_INIT, LAYER_EMBED, gathered_bytes(rs, embed, 0), 1);
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++)
      tensor_list_blocks(
          W, S, TAG_INIT, i,
          gathered_bytes(rs, walk_layer_cost(W, i)->params, layer_params_on_rank(W->pl, i).quantizable_count), 1,
          ALLOC_STREAM_COMPUTE, 0, 1);
  outer_tensor_blocks(S, TAG_INIT, LAYER_REST, gathered_bytes(rs, norm, 0), 1);
  outer_tensor_blocks(S, TAG_INIT, LAYER_HEAD, gathered_bytes(rs, head > 0 ? head : 0, quantized_head_count(W->pl, st)),
                      1);
  /* each layer's shards made, its full tensors freed; the rest (embedding, norm, head) last */
  double used = 0;
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
      double share = share_of(W, i, rs->weights, 0);
      if (used + share > rs->weights) share = rs->weights - used;
      sim_block(S, block_tag(TAG_STATE, i, MB_NONE, LLMEM_CAT_WEIGHTS), share, ALLOC_STREAM_COMPUTE);
      used += share;
      free_per_tensor_blocks(TAG_INIT, i);
    }
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_WEIGHTS), rs->weights - used, ALLOC_STREAM_COMPUTE);
  for (int layer = LAYER_REST; layer <= LAYER_HEAD; layer++) alloc_free_if_live(block_tag(TAG_INIT, layer, MB_NONE, 0));
  if ((int)W->pl->in->offload_params != LLMEM_OFFLOAD_NONE) return;
  for (int c = 0; c < W->v; c++) /* defragment: the shards out, the cache emptied, the shards back */
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++)
      alloc_free_if_live(block_tag(TAG_STATE, i, MB_NONE, LLMEM_CAT_WEIGHTS));
  alloc_free_if_live(block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_WEIGHTS));
  alloc_empty_cache();
  split_state(W, S, LLMEM_CAT_WEIGHTS, rs->weights, 0);
}

/* Loading and wrapping: weights, fp32 masters and persistent buffers; states
 * the engine creates eagerly (DeepSpeed's initialize_optimizer_states) too. */
void blocks_setup(const stage_walk *W, const sim *S, int lazy_states) {
  const rank_states *rs = W->rs;
  if (fsdp1_flattens(W->pl)) fsdp1_setup(W, S);
  else {
    if (W->pl->zero3_loads_whole && S->blocks) zero3_whole_then_partitioned(W, S); /* its shards included */
    else split_state(W, S, LLMEM_CAT_WEIGHTS, rs->weights, 0);
    split_state(W, S, LLMEM_CAT_MASTER_WEIGHTS, rs->master, 1);
  }
  if (!lazy_states) split_state(W, S, LLMEM_CAT_OPTIMIZER_STATES, rs->optimizer, 1);
  /* DDP's buckets: in comm_persistent, or the gradients themselves under gradient_as_bucket_view */
  int bucket_view = rs->ddp_buckets > 0 && (int)W->pl->in->grad_as_bucket_view != 0;
  blocks_ddp_buckets(W, S);
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_COMM_BUFFERS),
            rs->comm_persistent - (bucket_view ? 0 : rs->ddp_buckets), ALLOC_STREAM_COMPUTE);
  /* pipelining's kept stage outputs, one block for the step (states.c pipeline_buffers) */
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_ACTIVATIONS), rs->pp_kept_act, ALLOC_STREAM_COMPUTE);
  sim_block(S, block_tag(TAG_STATE, LAYER_REST, MB_NONE, LLMEM_CAT_LOGITS), rs->pp_kept_logits, ALLOC_STREAM_COMPUTE);
  if (!W->lazy && !bucket_view) split_state(W, S, LLMEM_CAT_GRADIENTS, rs->gradients, 1);
  if (W->pl->empty_cache_after_init && S->blocks) {
    alloc_empty_cache(); /* torch.cuda.empty_cache(), then torch.cuda.reset_peak_memory_stats() */
    alloc_reset_peak();
  }
}

/* torch.optim over the modules' own parameters, one tensor each (one GPU, DDP, FSDP2's DTensor shards);
 * FSDP1's flat parameters and DeepSpeed's and Megatron's flat partitions keep one block a layer. */
static int per_parameter_states(const plan *pl) {
  int e = (int)pl->in->engine;
  return e == LLMEM_ENGINE_SINGLE || e == LLMEM_ENGINE_DDP || e == LLMEM_ENGINE_FSDP2;
}

/* States a parameter tensor gets: exp_avg and exp_avg_sq (Adam, AdamW, bitsandbytes' state1 and state2),
 * else one (the momentum buffer of SGD and Lion; Adafactor's and Muon's, counted as one here). */
static int states_per_tensor(const plan *pl) {
  int o = (int)pl->in->optimizer;
  return o == LLMEM_OPT_ADAM || o == LLMEM_OPT_ADAMW || o == LLMEM_OPT_ADAMW_8BIT ? 2 : 1;
}

/* A layer's share as one block per trainable parameter tensor (its adapters' under LoRA) and `per` pieces
 * each, split by the tensors' elements, in model.parameters() order or (reverse) the backward's; `kind`
 * tags them (part: tensor x piece; 63: one block, without a listing). */
const param_list *layer_tensor_list(const stage_walk *W, int layer, int all) {
  const layer_tensors *t = &walk_layer_cost(W, layer)->tensors;
  return all || (int)W->pl->in->ft_method == LLMEM_FT_FULL ? &t->params : &t->adapters;
}

static void tensor_list_blocks(const stage_walk *W, const sim *S, int kind, int layer, double share, int per,
                               int stream, int reverse, int all) {
  const param_list *l = layer_tensor_list(W, layer, all);
  double elems = 0;
  for (int i = 0; i < l->count; i++) elems += l->elems[i];
  if (elems <= 0) {
    sim_block(S, block_tag(kind, layer, MB_NONE, 63), share, stream);
    return;
  }
  for (int n = 0; n < l->count; n++) { /* parts i * per + s < 2 LAYER_TENSORS_MAX = 64: the tag's 6 bits */
    int i = reverse ? l->count - 1 - n : n;
    for (int s = 0; s < per; s++)
      sim_block(S, block_tag(kind, layer, MB_NONE, i * per + s), share * l->elems[i] / elems / per, stream);
  }
}

static void per_tensor_blocks(const stage_walk *W, const sim *S, int kind, int layer, double share, int per, int stream,
                              int reverse) {
  tensor_list_blocks(W, S, kind, layer, share, per, stream, reverse, 0);
}

/* The same blocks freed: their parts run from 0 without a gap (63: the unlisted block). */
static void free_per_tensor_blocks(int kind, int layer) {
  alloc_free_if_live(block_tag(kind, layer, MB_NONE, 63));
  for (int k = 0; k < 2 * LAYER_TENSORS_MAX && alloc_is_live(block_tag(kind, layer, MB_NONE, k)); k++)
    alloc_free(block_tag(kind, layer, MB_NONE, k), 0);
}

/* `per` blocks of one tensor outside the decoder layers, tagged (kind, layer, part 0..per-1). */
static void outer_tensor_blocks(const sim *S, int kind, int layer, double bytes, int per) {
  if (bytes <= 0.5) return; /* below a byte: the shares' rounding */
  for (int s = 0; s < per; s++) sim_block(S, block_tag(kind, layer, MB_NONE, s), bytes / per, ALLOC_STREAM_COMPUTE);
}

/* `total` over the stage's layers by their trainable parameters, per_tensor_blocks for each layer's share, in
 * model.parameters() order: a decoder-only model registers the embedding before the layers, the final norm
 * and the head after them (transformers models/llama/modeling_llama.py LlamaModel.__init__: embed_tokens,
 * layers, norm; LlamaForCausalLM: model, lm_head), so a full fine-tune's first optimizer step makes the
 * embedding's states first, in whatever cached block then fits them; the rest (the final norm and the head,
 * a vision tower, MTP modules) after the layers, `per` pieces each as well. */
static void stage_per_tensor_blocks(const stage_walk *W, const sim *S, int kind, double total, int per) {
  const stage_layout *st = W->st;
  int full = (int)W->pl->in->ft_method == LLMEM_FT_FULL && st->trainable_count > 0;
  double embed = full ? total * st->embedding_count / st->trainable_count : 0, used = embed;
  outer_tensor_blocks(S, kind, LAYER_EMBED, embed, per);
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
      double share = share_of(W, i, total, 1);
      if (used + share > total) share = total - used;
      if (share > 0) per_tensor_blocks(W, S, kind, i, share, per, ALLOC_STREAM_COMPUTE, 0);
      used += share;
    }
  outer_tensor_blocks(S, kind, LAYER_HEAD, total - used, per);
}

static void stage_free_per_tensor_blocks(const stage_walk *W, int kind) {
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) free_per_tensor_blocks(kind, i);
  free_per_tensor_blocks(kind, LAYER_EMBED);
  free_per_tensor_blocks(kind, LAYER_HEAD);
}

/* torch.optim creates its states at the first step (_init_group: torch.zeros_like per parameter), after
 * the backward freed the activations: torch/optim/adam.py _init_group makes state["exp_avg"] then
 * state["exp_avg_sq"] of each parameter (sgd.py, lion: the momentum buffer). */
void blocks_optimizer_states(const stage_walk *W, const sim *S) {
  double total = W->rs->optimizer;
  if (!per_parameter_states(W->pl) || total <= 0) split_state(W, S, LLMEM_CAT_OPTIMIZER_STATES, total, 1);
  else stage_per_tensor_blocks(W, S, TAG_OPT_STATE, total, states_per_tensor(W->pl));
}

/* The optimizer step's temporaries (states.c step_temporaries). The foreach kernels' list (torch/optim/adam.py
 * _multi_tensor_adam: exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs), one new tensor per
 * parameter) as one request per parameter tensor where the optimizer sees them (blocks_optimizer_states);
 * else one block. take 0: freed. */
void blocks_optimizer_temporaries(const stage_walk *W, sim *S, double bytes, int take) {
  const plan *pl = W->pl;
  uint64_t rest = block_tag(TAG_TEMP, LAYER_REST, MB_NONE, 0);
  if (!per_parameter_states(pl) || pl->optimizer_impl != LLMEM_OPT_IMPL_FOREACH || !S->blocks || bytes <= 0) {
    if (take) sim_take_transient(S, LLMEM_CAT_TEMPORARIES, rest, bytes, ALLOC_STREAM_COMPUTE);
    else sim_give(S, LLMEM_CAT_TEMPORARIES, rest, bytes, 0);
  } else if (take) {
    sim_transient(S, LLMEM_CAT_TEMPORARIES, bytes);
    stage_per_tensor_blocks(W, S, TAG_OPT_TEMP, bytes, 1);
  } else {
    sim_add(S, LLMEM_CAT_TEMPORARIES, -bytes);
    stage_free_per_tensor_blocks(W, TAG_OPT_TEMP);
  }
}

/* autograd's AccumulateGrad makes each parameter's .grad as its gradient comes (one GPU; DDP unless the
 * gradients are views into its buckets, gradient_as_bucket_view); FSDP's and ZeRO's reduce outputs and
 * Megatron's gradient buffers are flat, one block a layer. */
static int per_parameter_grads(const plan *pl) {
  int e = (int)pl->in->engine;
  return e == LLMEM_ENGINE_SINGLE || (e == LLMEM_ENGINE_DDP && (int)pl->in->grad_as_bucket_view == 0);
}

/* A layer's lazily created gradients: one request per parameter tensor in the backward's order (the norms,
 * the MLP's, then the mixer's) where autograd makes them, else one block. */
void blocks_layer_gradients(const stage_walk *W, sim *S, int layer, double bytes, int stream) {
  if (bytes <= 0) return;
  if (!S->blocks || !per_parameter_grads(W->pl)) {
    sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, layer, MB_NONE, 0), bytes, stream);
    return;
  }
  sim_add(S, LLMEM_CAT_GRADIENTS, bytes);
  per_tensor_blocks(W, S, TAG_PARAM_GRAD, layer, bytes, 1, stream, 1);
}

void blocks_free_gradients(const stage_walk *W, const sim *S) {
  if (!S->blocks) return;
  for (int c = 0; c < W->v; c++)
    for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++)
      alloc_free_if_live(block_tag(TAG_GRAD, i, MB_NONE, 0));
  if (per_parameter_grads(W->pl)) stage_free_per_tensor_blocks(W, TAG_PARAM_GRAD);
  for (int layer = LAYER_REST; layer <= LAYER_HEAD; layer++) alloc_free_if_live(block_tag(TAG_GRAD, layer, MB_NONE, 0));
}

/* Weights kept gathered since the chunk's first forward, and accumulated unsharded gradients. */
void blocks_free_kept(const stage_walk *W, const sim *S, int c) {
  if (!S->blocks) return;
  for (int i = W->first_global[c]; i < W->first_global[c] + W->chunk_layers[c]; i++) {
    if (W->fsdp2) blocks_free_layer_params(S, TAG_GATHER_KEPT, i);
    else if (alloc_is_live(block_tag(TAG_GATHER_KEPT, i, MB_NONE, 0)))
      alloc_free(block_tag(TAG_GATHER_KEPT, i, MB_NONE, 0), 1);
    alloc_free_if_live(block_tag(TAG_ACCUM, i, MB_NONE, 0));
  }
  if (alloc_is_live(block_tag(TAG_GATHER_KEPT, LAYER_EMBED, MB_NONE, 0)))
    alloc_free(block_tag(TAG_GATHER_KEPT, LAYER_EMBED, MB_NONE, 0), !W->fsdp2);
  alloc_free_if_live(block_tag(TAG_ACCUM, LAYER_HEAD, MB_NONE, 0));
  alloc_free_if_live(block_tag(TAG_ACCUM, LAYER_EMBED, MB_NONE, 0));
}

void blocks_layer_params(const stage_walk *W, const sim *S, int kind, int layer, double bytes) {
  if (S->blocks && bytes > 0) tensor_list_blocks(W, S, kind, layer, bytes, 1, ALLOC_STREAM_COMPUTE, 0, 1);
}

void blocks_free_layer_params(const sim *S, int kind, int layer) {
  if (S->blocks) free_per_tensor_blocks(kind, layer);
}
