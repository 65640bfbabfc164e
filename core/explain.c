/* "Why this number": the terms behind the most-loaded GPU's peak. Each
 * category's terms sum to its value at the peak; the runtime terms sum to
 * device_used - peak_allocated. Formulas and labels: LLMEM_TERMS in llmem.h. */
#include <math.h>

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

/* One model state split into its non-expert and routed-expert parts, each
 * sharded over its own degree (states.c counts_of: Nd dense, Ne expert-DP). */
typedef struct {
  int id, expert_id, category, show_peak;
  double at_peak, total, expert_total; /* the category at the peak; the state in full, its expert part */
  double count, experts;               /* parameters of the state, of which routed-expert ones */
  double shard, expert_shard, bytes;   /* bytes: fixed bytes per parameter (master), else 0 */
} state_split;

static int differ(double a, double b) { return fabs(a - b) > 1e-9 * fabs(a + b); }

/* Split when the expert part is sharded or sized otherwise (DeepSpeed's fp32
 * gradient partition follows the optimizer's shards, not the gradients'). */
static void state_terms(llmem_result *out, const state_split *s) {
  double n_all = s->count - s->experts;
  int split =
      s->experts > 0 && n_all > 0 && s->expert_total > 0 && s->expert_total < s->total &&
      (s->expert_shard != s->shard || differ(s->expert_total / s->experts, (s->total - s->expert_total) / n_all));
  /* the expert share of what exists at the peak (all of it once the state is complete) */
  double e_peak = split && s->total > 0 ? s->expert_total * (s->at_peak < s->total ? s->at_peak / s->total : 1) : 0;
  double n = s->count - (split ? s->experts : 0), d_total = s->total - (split ? s->expert_total : 0);
  double d_peak = s->at_peak - e_peak;
  double b = s->bytes > 0 ? s->bytes : per(d_total, n, s->shard);
  term(out, s->id, s->category, d_peak, n, b, s->shard, s->show_peak ? d_peak : 0);
  if (!split) return;
  b = s->bytes > 0 ? s->bytes : per(s->expert_total, s->experts, s->expert_shard);
  term(out, s->expert_id, s->category, e_peak, s->experts, b, s->expert_shard, s->show_peak ? e_peak : 0);
}

/* The routed experts' part of each state: what the stage holds less what it
 * would hold without them (every state is a sum over the two classes). */
/* The mean saved bytes of the stage's layers (one layer of each kind, weighted by its count), for a
 * stage whose layers differ (per-layer kinds, an encoder-decoder stack). */
static layer_activations mean_layer_activations(const plan *pl, const stage_layout *st) {
  layer_activations mean = {0}, kind_acts[LAYER_KIND_COUNT];
  int full = (int)pl->in->recompute == LLMEM_RECOMPUTE_FULL, counted = 0, kind_n[LAYER_KIND_COUNT] = {0};
  for (int c = 0; c < (int)pl->in->vpp; c++) { /* each kind's layer once, times its count on the stage */
    int first = 0, n = layout_stage_layers(pl, st->stage, c, &first);
    for (int i = first; i < first + n; i++, counted++)
      if (kind_n[layer_kind(pl, i)]++ == 0) kind_acts[layer_kind(pl, i)] = layer_activation_bytes(pl, i, full);
  }
  for (int k = 0; k < LAYER_KIND_COUNT; k++) {
    if (!kind_n[k]) continue;
    mean.saved_bytes += kind_n[k] * kind_acts[k].saved_bytes;
    mean.recompute_bytes += kind_n[k] * kind_acts[k].recompute_bytes;
    mean.checkpoint_bytes += kind_n[k] * kind_acts[k].checkpoint_bytes;
  }
  if (counted > 0) mean.saved_bytes /= counted, mean.recompute_bytes /= counted, mean.checkpoint_bytes /= counted;
  return mean;
}

static rank_states expert_part(const plan *pl, const stage_layout *st, const rank_states *rs) {
  stage_layout dense = *st;
  double e = st->layers.expert_count;
  dense.layers.expert_count = dense.layers.expert_dims_count = 0;
  dense.params_count -= e;
  dense.trainable_count -= e;
  rank_states d, x = {0};
  states_for_stage(pl, &dense, &d);
  x.weights = rs->weights - d.weights, x.master = rs->master - d.master;
  x.gradients = rs->gradients - d.gradients, x.optimizer = rs->optimizer - d.optimizer;
  return x;
}

/* The model's category terms; b: its breakdown at the peak. */
void explain_model_terms(const plan *pl, const stage_layout *st, const rank_states *rs, const double *b,
                         llmem_result *out) {
  int fsdp = ((int)pl->in->engine == LLMEM_ENGINE_FSDP1 || (int)pl->in->engine == LLMEM_ENGINE_FSDP2) &&
             (int)pl->in->fsdp_strategy != LLMEM_FSDP_NO_SHARD;
  int deepspeed =
      (int)pl->in->engine == LLMEM_ENGINE_DEEPSPEED || (int)pl->in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int z = deepspeed ? (int)pl->in->zero_stage : 0;
  int sharded_w = fsdp || z >= 3, sharded_g = fsdp || z >= 2;
  int sharded_o =
      fsdp || z >= 1 || ((int)pl->in->engine == LLMEM_ENGINE_MEGATRON && (int)pl->in->distributed_optimizer != 0);
  double shard_w = sharded_w ? pl->shard_dense : 1, ne_w = sharded_w ? pl->shard_expert : 1;
  double shard_g = sharded_g ? pl->shard_dense : 1, ne_g = sharded_g ? pl->shard_expert : 1;
  double shard_o = sharded_o ? pl->shard_dense : 1, ne_o = sharded_o ? pl->shard_expert : 1;
  double params = st->params_count, trainable = st->trainable_count;
  /* routed experts (full fine-tuning) are sharded over the expert-data-parallel degree */
  double E = (int)pl->in->ft_method == LLMEM_FT_FULL ? st->layers.expert_count : 0;
  rank_states x = {0};
  if (E > 0) x = expert_part(pl, st, rs);

  if (rs->weights > 0)
    state_terms(out, &(state_split){LLMEM_TERM_WEIGHTS, LLMEM_TERM_WEIGHTS_EXPERT, LLMEM_CAT_WEIGHTS, 0, rs->weights,
                                    rs->weights, x.weights, params, E, shard_w, ne_w, 0});
  if (b[LLMEM_CAT_WEIGHTS] - rs->weights > 0)
    term(out, LLMEM_TERM_WEIGHTS_TRANSIENT, LLMEM_CAT_WEIGHTS, b[LLMEM_CAT_WEIGHTS] - rs->weights,
         b[LLMEM_CAT_WEIGHTS] - rs->weights, 0, 0, 0);
  if (rs->master > 0)
    state_terms(out, &(state_split){LLMEM_TERM_MASTER, LLMEM_TERM_MASTER_EXPERT, LLMEM_CAT_MASTER_WEIGHTS, 0,
                                    b[LLMEM_CAT_MASTER_WEIGHTS], rs->master, x.master, trainable, E, shard_o, ne_o, 4});
  state_terms(out, &(state_split){LLMEM_TERM_GRADIENTS, LLMEM_TERM_GRADIENTS_EXPERT, LLMEM_CAT_GRADIENTS, 1,
                                  b[LLMEM_CAT_GRADIENTS], rs->gradients, x.gradients, trainable, E, shard_g, ne_g, 0});
  state_terms(
      out, &(state_split){LLMEM_TERM_OPTIMIZER, LLMEM_TERM_OPTIMIZER_EXPERT, LLMEM_CAT_OPTIMIZER_STATES, 0,
                          b[LLMEM_CAT_OPTIMIZER_STATES], rs->optimizer, x.optimizer, trainable, E, shard_o, ne_o, 0});
  layer_activations la = layer_activation_bytes(pl, st->first_layer, (int)pl->in->recompute == LLMEM_RECOMPUTE_FULL);
  if (st->layer_count > 0 && (pl->mixer_period || pl->mlp_period || pl->in->encoder_layers > 0))
    la = mean_layer_activations(pl, st); /* layers of several kinds: the stage's mean layer */
  double passes = la.saved_bytes > 0 ? (b[LLMEM_CAT_ACTIVATIONS] - la.recompute_bytes) / la.saved_bytes : 0;
  term(out, LLMEM_TERM_ACTIVATIONS, LLMEM_CAT_ACTIVATIONS, b[LLMEM_CAT_ACTIVATIONS], la.saved_bytes,
       la.checkpoint_bytes, passes > 0 ? (double)(long long)(passes * 10 + 0.5) / 10 : 0, 0);
  if (b[LLMEM_CAT_LOGITS] > 0) {
    loss_memory lm = loss_bytes(pl);
    term(out, LLMEM_TERM_LOGITS, LLMEM_CAT_LOGITS, b[LLMEM_CAT_LOGITS],
         pl->in->seq_len / pl->in->cp * pl->in->micro_batch, lm.vocab, lm.saved_bytes, 0);
  }
  if (b[LLMEM_CAT_COMM_BUFFERS] > 0)
    term(out, LLMEM_TERM_COMM, LLMEM_CAT_COMM_BUFFERS, b[LLMEM_CAT_COMM_BUFFERS], b[LLMEM_CAT_COMM_BUFFERS], 0, 0, 0);
  /* the cuBLAS workspaces are kept for the process: at every point of the step (runtime.c) */
  double workspace = runtime_workspace_bytes(pl), temporaries = b[LLMEM_CAT_TEMPORARIES] - workspace;
  if (workspace > 0) term(out, LLMEM_TERM_WORKSPACE, LLMEM_CAT_TEMPORARIES, workspace, workspace, 0, 0, 0);
  if (temporaries > 0) term(out, LLMEM_TERM_TEMPORARIES, LLMEM_CAT_TEMPORARIES, temporaries, temporaries, 0, 0, 0);
}

/* The runtime terms: they sum to device_used - peak_allocated; extra_context:
 * a second process's CUDA context (an RL rollout engine of its own). */
void explain_runtime_terms(const plan *pl, const llmem_rank_result *r, double extra_context, llmem_result *out) {
  double context, nccl;
  int comms;
  runtime_overheads(pl, &context, &nccl, &comms);
  context += extra_context;
  double reserve = r->peak_reserved_bytes - r->peak_allocated_bytes;
  if (r->reserved_simulated)
    term(out, LLMEM_TERM_RESERVE_SIMULATED, -1, reserve, reserve, r->fragmentation_bytes, r->largest_free_block_bytes,
         0);
  else term(out, LLMEM_TERM_RESERVE, -1, reserve, reserve, 0, 0, 0);
  term(out, LLMEM_TERM_CONTEXT, -1, context, context, 0, 0, 0);
  if (nccl > 0) term(out, LLMEM_TERM_NCCL, -1, nccl, nccl, comms, 0, 0);
  double paged = r->device_used_bytes - r->peak_reserved_bytes - (context + nccl);
  if (paged > 0) term(out, LLMEM_TERM_PAGED, -1, paged, paged, 0, 0, 0);
}

void explain_peak(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_result *out) {
  out->term_count = 0;
  explain_model_terms(pl, st, rs, out->per_gpu.breakdown_bytes, out);
  explain_runtime_terms(pl, &out->per_gpu, 0, out);
}

void explain_add_term(llmem_result *out, int id, int category, double value, double a, double b, double c, double d) {
  term(out, id, category, value, a, b, c, d);
}
