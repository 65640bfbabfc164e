/* "Why this number": the terms behind the most-loaded GPU's peak. Each
 * category's terms sum to its value at the peak; the runtime terms sum to
 * device_used - peak_allocated. Formulas and labels: LLMEM_TERMS in llmem.h. */
#include "internal.h"

static void term(llmem_result *out, int id, int category, double value, double a, double b, double c, double d) {
  if (out->term_count >= LLMEM_TERM_COUNT) return;
  llmem_term *t = &out->terms[out->term_count++];
  t->id = id;
  t->category = category;
  t->value_bytes = value;
  t->inputs[0] = a;
  t->inputs[1] = b;
  t->inputs[2] = c;
  t->inputs[3] = d;
}

static double per(double value, double count, double shard) { return count > 0 ? value * shard / count : 0; }

void explain_peak(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_result *out) {
  const llmem_rank_result *r = &out->per_gpu;
  const double *b = r->breakdown_bytes;
  int fsdp = (pl->engine == LLMEM_ENGINE_FSDP1 || pl->engine == LLMEM_ENGINE_FSDP2) &&
             pl->fsdp_strategy != LLMEM_FSDP_NO_SHARD;
  int deepspeed = pl->engine == LLMEM_ENGINE_DEEPSPEED || pl->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int z = deepspeed ? pl->zero_stage : 0;
  double shard_w = (fsdp || z >= 3) ? pl->shard_dense : 1;
  double shard_g = (fsdp || z >= 2) ? pl->shard_dense : 1;
  double shard_o = (fsdp || z >= 1 || (pl->engine == LLMEM_ENGINE_MEGATRON && pl->dist_opt)) ? pl->shard_dense : 1;
  double params = st->params_count, trainable = st->trainable_count;
  out->term_count = 0;

  if (rs->weights > 0)
    term(out, LLMEM_TERM_WEIGHTS, LLMEM_CAT_WEIGHTS, rs->weights, params, per(rs->weights, params, shard_w), shard_w, 0);
  if (b[LLMEM_CAT_WEIGHTS] - rs->weights > 0)
    term(out, LLMEM_TERM_WEIGHTS_TRANSIENT, LLMEM_CAT_WEIGHTS, b[LLMEM_CAT_WEIGHTS] - rs->weights,
         b[LLMEM_CAT_WEIGHTS] - rs->weights, 0, 0, 0);
  if (rs->master > 0)
    term(out, LLMEM_TERM_MASTER, LLMEM_CAT_MASTER_WEIGHTS, b[LLMEM_CAT_MASTER_WEIGHTS], trainable, 4, shard_o, 0);
  term(out, LLMEM_TERM_GRADIENTS, LLMEM_CAT_GRADIENTS, b[LLMEM_CAT_GRADIENTS], trainable,
       per(rs->gradients, trainable, shard_g), shard_g, b[LLMEM_CAT_GRADIENTS]);
  term(out, LLMEM_TERM_OPTIMIZER, LLMEM_CAT_OPTIMIZER_STATES, b[LLMEM_CAT_OPTIMIZER_STATES], trainable,
       per(rs->optimizer, trainable, shard_o), shard_o, 0);
  layer_activations la = layer_activation_bytes(pl, st->first_layer, pl->recompute == LLMEM_RECOMPUTE_FULL);
  double passes = la.saved_bytes > 0 ? (b[LLMEM_CAT_ACTIVATIONS] - la.recompute_bytes) / la.saved_bytes : 0;
  term(out, LLMEM_TERM_ACTIVATIONS, LLMEM_CAT_ACTIVATIONS, b[LLMEM_CAT_ACTIVATIONS], la.saved_bytes,
       la.checkpoint_bytes, passes > 0 ? (double)(long long)(passes * 10 + 0.5) / 10 : 0, 0);
  if (b[LLMEM_CAT_LOGITS] > 0) {
    loss_memory lm = loss_bytes(pl);
    term(out, LLMEM_TERM_LOGITS, LLMEM_CAT_LOGITS, b[LLMEM_CAT_LOGITS], pl->seq_len / pl->cp * pl->micro_batch,
         pl->vocab_padded / pl->tp, lm.saved_bytes, 0);
  }
  if (b[LLMEM_CAT_COMM_BUFFERS] > 0)
    term(out, LLMEM_TERM_COMM, LLMEM_CAT_COMM_BUFFERS, b[LLMEM_CAT_COMM_BUFFERS], b[LLMEM_CAT_COMM_BUFFERS], 0, 0, 0);
  if (b[LLMEM_CAT_TEMPORARIES] > 0)
    term(out, LLMEM_TERM_TEMPORARIES, LLMEM_CAT_TEMPORARIES, b[LLMEM_CAT_TEMPORARIES], b[LLMEM_CAT_TEMPORARIES], 0, 0, 0);

  double context, workspace, nccl;
  int comms;
  runtime_overheads(pl, &context, &workspace, &nccl, &comms);
  double reserve = r->peak_reserved_bytes - r->peak_allocated_bytes;
  if (r->reserved_simulated)
    term(out, LLMEM_TERM_RESERVE_SIMULATED, -1, reserve, reserve, r->fragmentation_bytes, r->largest_free_block_bytes, 0);
  else
    term(out, LLMEM_TERM_RESERVE, -1, reserve, reserve, 0, 0, 0);
  term(out, LLMEM_TERM_CONTEXT, -1, context, context, 0, 0, 0);
  term(out, LLMEM_TERM_WORKSPACE, -1, workspace, workspace, 0, 0, 0);
  if (nccl > 0) term(out, LLMEM_TERM_NCCL, -1, nccl, nccl, comms, 0, 0);
  double paged = r->device_used_bytes - r->peak_reserved_bytes - (context + workspace + nccl);
  if (paged > 0) term(out, LLMEM_TERM_PAGED, -1, paged, paged, 0, 0, 0);
}
