/* The training step of one rank as allocation events; the peak is the
 * maximum of the running sum (docs/ARCHITECTURE.md "The peak is simulated").
 *
 * Order of events: persistent states; for each micro-batch in the pipeline
 * schedule's order, the forward through the stage's layers (parameter
 * gathers and prefetch, autocast weight casts, saved activations, the
 * layer's working set), the loss on the last stage, the backward in reverse
 * (recompute, gradient working set, lazily created gradients, unsharded
 * gradients and reduce-scatter input, frees); then the optimizer step. */
#include <string.h>

#include "internal.h"

typedef struct {
  double cat[LLMEM_CAT_COUNT];
  double total;
  double peak;
  double peak_cat[LLMEM_CAT_COUNT];
  int peak_phase, peak_mb, peak_layer;
  double largest_transient;
  double hole;      /* cached blocks the next requests cannot reuse (caching allocator) */
  double peak_hole;
  timeline_sink *sink;
  llmem_event group_best;
  int group_n;
} sim;

/* Change one category; the running total follows. */
static void add(sim *S, int cat, double bytes) {
  S->cat[cat] += bytes;
  S->total += bytes;
}


static void sink_push(timeline_sink *s, const llmem_event *ev) {
  if (s->count == s->capacity) {
    /* keep the larger of each pair: the peak survives downsampling */
    for (int i = 0; i < s->capacity / 2; i++) {
      const llmem_event *a = &s->events[2 * i], *b = &s->events[2 * i + 1];
      s->events[i] = b->total_bytes > a->total_bytes ? *b : *a;
    }
    s->count = s->capacity / 2;
    s->stride *= 2;
  }
  s->events[s->count++] = *ev;
}

static void record(sim *S, int phase, int mb, int layer) {
  double total = S->total;
  if (total > S->peak) {
    S->peak = total;
    memcpy(S->peak_cat, S->cat, sizeof S->cat);
    S->peak_phase = phase;
    S->peak_mb = mb;
    S->peak_layer = layer;
    S->peak_hole = S->hole;
  }
  timeline_sink *s = S->sink;
  if (!s || !s->events) return;
  llmem_event ev;
  ev.total_bytes = total;
  memcpy(ev.category_bytes, S->cat, sizeof S->cat);
  ev.phase = phase;
  ev.micro_batch = mb;
  ev.layer = layer;
  if (S->group_n == 0 || total > S->group_best.total_bytes) S->group_best = ev;
  if (++S->group_n >= s->stride) {
    sink_push(s, &S->group_best);
    S->group_n = 0;
  }
}

/* A transient: present for one recorded instant, then gone. */
static void transient(sim *S, int cat, double bytes) {
  add(S, cat, bytes);
  S->largest_transient = max2(S->largest_transient, bytes);
}

/* ---- the schedule: forward/backward ops of (micro-batch, chunk) ---- */
typedef struct {
  int backward;
  int mb;
  int chunk;
} op;

#define MAX_OPS 4096

/* Micro-batches simulated: after the warm-up the 1F1B steady state repeats
 * itself, so a few more than the in-flight count give the same peak. */
static int simulated_microbatches(const plan *pl, int stage) {
  int m = (int)pl->grad_accum, p = (int)pl->pp;
  int need;
  if (p == 1) need = 2;
  else if (pl->schedule == LLMEM_PP_GPIPE) need = m;
  else if (pl->schedule == LLMEM_PP_INTERLEAVED && pl->vpp > 1) {
    /* warm-up virtual steps plus two steady rounds, in whole groups of p */
    int v = (int)pl->vpp, warm = 2 * (p - stage - 1) + (v - 1) * p;
    need = p * ((warm + 2 * p + p * v - 1) / (p * v));
  }
  else need = p - stage + 2;
  if (need > m) need = m;
  int per_mb = 2 * (int)pl->vpp;
  if (need * per_mb > MAX_OPS) need = MAX_OPS / per_mb;
  return need;
}

static int build_schedule(const plan *pl, int stage, int m, op *ops) {
  int p = (int)pl->pp, v = (int)pl->vpp, n = 0;
  if (p == 1 || pl->schedule == LLMEM_PP_GPIPE) {
    if (p == 1) { /* gradient accumulation: forward, backward, repeat */
      for (int i = 0; i < m; i++) {
        ops[n++] = (op){0, i, 0};
        ops[n++] = (op){1, i, 0};
      }
    } else {
      for (int i = 0; i < m; i++) ops[n++] = (op){0, i, 0};
      for (int i = 0; i < m; i++) ops[n++] = (op){1, i, 0};
    }
    return n;
  }
  if (pl->schedule != LLMEM_PP_INTERLEAVED || v == 1) {
    /* 1F1B (and zero-bubble H1, same memory): warm-up p - r - 1 forwards */
    int warm = p - stage - 1;
    if (warm > m) warm = m;
    int f = 0, b = 0;
    for (; f < warm; f++) ops[n++] = (op){0, f, 0};
    while (f < m) {
      ops[n++] = (op){0, f++, 0};
      ops[n++] = (op){1, b++, 0};
    }
    while (b < m) ops[n++] = (op){1, b++, 0};
    return n;
  }
  /* Interleaved (Megatron schedules.py get_pp_rank_microbatches): virtual
   * micro-batch k runs chunk (k / p) % v of micro-batch (k / (p v)) p + k % p;
   * warm-up 2 (p - r - 1) + (v - 1) p, capped at m v. */
  int total = m * v;
  int warm = 2 * (p - stage - 1) + (v - 1) * p;
  if (warm > total) warm = total;
  int f = 0, b = 0;
#define FWD(k) (op){0, ((k) / (p * v)) * p + (k) % p, ((k) / p) % v}
#define BWD(k) (op){1, ((k) / (p * v)) * p + (k) % p, v - 1 - ((k) / p) % v}
  for (; f < warm; f++) ops[n++] = FWD(f);
  while (f < total) {
    ops[n++] = FWD(f);
    f++;
    ops[n++] = BWD(b);
    b++;
  }
  while (b < total) {
    ops[n++] = BWD(b);
    b++;
  }
#undef FWD
#undef BWD
  return n;
}

/* ---- per-layer costs, computed once per kind of layer ---- */
typedef struct {
  layer_activations act[2]; /* [recomputed] */
  double params;            /* on this rank, unsharded */
  double grad_share;        /* bytes of the rank's gradients that belong to this layer */
  double gather;            /* unsharded parameters while the layer runs */
  double prefetch;          /* the next layer's gather in flight (forward) */
  double prefetch_bwd;      /* the next layer's gather in flight (backward) */
  double casts;             /* autocast copies of the weights */
  double unsharded_grads;   /* FSDP/ZeRO-3: full gradients before the reduce-scatter */
  double trainable;         /* trainable parameters of the layer on this rank */
  double reduce_input;
} layer_cost;

static layer_cost cost_of(const plan *pl, const stage_layout *st, const rank_states *rs, int layer) {
  layer_cost c = {0};
  c.act[0] = layer_activation_bytes(pl, layer, 0);
  c.act[1] = layer_activation_bytes(pl, layer, 1);
  layer_params lp = layer_params_on_rank(pl, layer);
  c.params = lp.matrix_count + lp.vector_count + lp.expert_count;
  int lora = pl->ft_method != LLMEM_FT_FULL;
  double trainable = lora ? lp.lora_count : c.params;
  double stage_trainable = st->trainable_count > 0 ? st->trainable_count : 1;
  c.grad_share = rs->gradients * trainable / stage_trainable;
  c.trainable = trainable;
  if (rs->gathers == 1) {
    c.gather = c.params * rs->unsharded_weight_bytes;
    c.prefetch = c.gather * rs->gather_factor_fwd;
    c.prefetch_bwd = c.gather * rs->gather_factor_bwd;
    c.unsharded_grads = trainable * (lora ? dtype_bytes(pl->adapter_dtype) : rs->unsharded_grad_bytes);
    c.reduce_input = trainable * (lora ? dtype_bytes(pl->adapter_dtype) : rs->reduce_bytes);
  } else if (rs->gathers == 2) {
    /* ZeRO-3: the running module plus the prefetch bucket, capped by
     * stage3_max_live_parameters (runtime/zero/config.py) */
    double live = lp.largest_module_count + pl->prefetch_bucket;
    if (live > c.params) live = c.params;
    if (live > pl->max_live) live = pl->max_live;
    c.gather = live * rs->unsharded_weight_bytes;
    c.unsharded_grads = lp.largest_module_count * (lora ? dtype_bytes(pl->adapter_dtype) : rs->unsharded_grad_bytes);
  }
  if (pl->autocast) c.casts = c.params * pl->weight_bytes; /* autocast's 16-bit weight copies */
  return c;
}

static int layer_recomputed(const plan *pl, int local_index) {
  if (pl->recompute != LLMEM_RECOMPUTE_FULL) return 0;
  if (pl->recompute_layers <= 0) return 1;
  return local_index < (int)pl->recompute_layers;
}

void simulate_stage(const plan *pl, const stage_layout *st, const rank_states *rs,
                    llmem_rank_result *out, timeline_sink *sink) {
  sim S;
  memset(&S, 0, sizeof S);
  S.sink = sink;
  S.peak = -1;
  int stage = out->stage;

  /* persistent states */
  add(&S, LLMEM_CAT_WEIGHTS, rs->weights);
  add(&S, LLMEM_CAT_MASTER_WEIGHTS, rs->master);
  add(&S, LLMEM_CAT_OPTIMIZER_STATES, rs->optimizer);
  add(&S, LLMEM_CAT_COMM_BUFFERS, rs->comm_persistent);
  int lazy = rs->gradients_lazy || pl->optimizer_in_backward;
  if (!lazy) add(&S, LLMEM_CAT_GRADIENTS, rs->gradients);
  double persistent = S.total;
  record(&S, LLMEM_PHASE_SETUP, -1, -1);

  /* layer costs by kind (dense / MoE) */
  layer_cost costs[2];
  int have[2] = {0, 0};
  int first_global[LLMEM_MAX_VPP];
  int chunk_layers[LLMEM_MAX_VPP];
  int v = (int)pl->vpp;
  for (int c = 0; c < v; c++) chunk_layers[c] = layout_stage_layers(pl, stage, c, &first_global[c]);
  for (int c = 0; c < v; c++)
    for (int i = first_global[c]; i < first_global[c] + chunk_layers[c]; i++) {
      int kind = layer_is_moe(pl, i);
      if (!have[kind]) {
        costs[kind] = cost_of(pl, st, rs, i);
        have[kind] = 1;
      }
    }

  loss_memory loss = loss_bytes(pl);
  double stage_trainable = st->trainable_count > 0 ? st->trainable_count : 1;
  int lora = pl->ft_method != LLMEM_FT_FULL;
  double head_grads = lora ? 0 : rs->gradients * st->head_count / stage_trainable;
  double embed_grads = lora ? 0 : rs->gradients * st->embedding_count / stage_trainable;
  double norm_grads = lora ? 0 : rs->gradients * st->final_norm_count / stage_trainable;
  double root = rs->root_gathered;
  double root_grads = root > 0 && !lora ? (st->embedding_count + st->head_count) * rs->unsharded_grad_bytes : 0;

  /* gradients created lazily (torch .grad) exist once their layer's first
   * backward has run; they persist over the accumulation steps */
  int grads_made_head = 0, grads_made_embed = 0;
  /* per virtual chunk: forwards and backwards done so far. A layer's lazy
   * gradients (and accumulated unsharded ones) exist once its chunk's first
   * backward has passed it; parameters kept gathered stay after the chunk's
   * first forward. */
  int fwd_done[LLMEM_MAX_VPP], bwd_done[LLMEM_MAX_VPP];
  memset(fwd_done, 0, sizeof fwd_done);
  memset(bwd_done, 0, sizeof bwd_done);
  double accumulated_bytes = 0;
  int m = simulated_microbatches(pl, stage);
  op ops[MAX_OPS];
  int nops = build_schedule(pl, stage, m, ops);
  int offload = pl->activation_offload;
  double kept_gathered = 0; /* shard_grad_op / no reshard: parameters gathered once per step */

  if (root > 0) add(&S, LLMEM_CAT_WEIGHTS, (root));

  for (int o = 0; o < nops; o++) {
    op cur = ops[o];
    int c = cur.chunk;
    int first = first_global[c], n = chunk_layers[c];
    int local0 = 0;
    for (int j = 0; j < c; j++) local0 += chunk_layers[j];
    int is_first_chunk = st->has_embedding && c == 0;
    int is_last_chunk = st->has_head && c == v - 1;
    if (!cur.backward) {
      if (is_first_chunk) add(&S, LLMEM_CAT_ACTIVATIONS, (embedding_activation_bytes(pl)));
      for (int i = first; i < first + n; i++) {
        const layer_cost *lc = &costs[layer_is_moe(pl, i)];
        int local = local0 + (i - first);
        int rec = layer_recomputed(pl, local);
        const layer_activations *la = &lc->act[rec];
        int kept = fwd_done[c] > 0 && rs->keep_gathered_until_backward;
        if (rs->gathers && !kept) add(&S, LLMEM_CAT_WEIGHTS, (lc->gather));
        add(&S, LLMEM_CAT_WEIGHTS, (lc->casts));
        add(&S, LLMEM_CAT_ACTIVATIONS, (la->saved_bytes));
        transient(&S, LLMEM_CAT_TEMPORARIES, la->forward_temp_bytes);
        if (i + 1 < first + n) transient(&S, LLMEM_CAT_COMM_BUFFERS, lc->prefetch);
        record(&S, LLMEM_PHASE_FORWARD, cur.mb, i);
        add(&S, LLMEM_CAT_TEMPORARIES, -(la->forward_temp_bytes));
        if (i + 1 < first + n) add(&S, LLMEM_CAT_COMM_BUFFERS, -(lc->prefetch));
        if (offload && i >= first + 2) { /* the layer two back has reached host memory */
          const layer_cost *prev = &costs[layer_is_moe(pl, i - 2)];
          add(&S, LLMEM_CAT_ACTIVATIONS, -(prev->act[layer_recomputed(pl, local0 + (i - 2 - first))].saved_bytes));
        }
        if (rs->gathers && !kept) {
          if (rs->keep_gathered_until_backward) { /* stays gathered until the end of the step */
            kept_gathered += lc->gather;
          } else {
            add(&S, LLMEM_CAT_WEIGHTS, -(lc->gather));
          }
        }
      }
      if (is_last_chunk) {
        add(&S, LLMEM_CAT_ACTIVATIONS, (loss.head_input_bytes));
        add(&S, LLMEM_CAT_LOGITS, (loss.saved_bytes));
        add(&S, LLMEM_CAT_LOGITS, (loss.forward_peak_bytes));
        record(&S, LLMEM_PHASE_LOSS, cur.mb, -1);
        add(&S, LLMEM_CAT_LOGITS, -(loss.forward_peak_bytes));
        /* the freed 16-bit logits block is too small for the backward's fp32
         * requests and stays cached beside them */
        S.hole = loss.unreusable_bytes;
      }
    } else {
      if (is_last_chunk) {
        add(&S, LLMEM_CAT_LOGITS, (loss.backward_peak_bytes));
        if (lazy && !grads_made_head) {
          add(&S, LLMEM_CAT_GRADIENTS, (head_grads + norm_grads));
          grads_made_head = 1;
        }
        if (root_grads > 0) add(&S, LLMEM_CAT_GRADIENTS, (root_grads));
        record(&S, LLMEM_PHASE_BACKWARD, cur.mb, -1);
        add(&S, LLMEM_CAT_LOGITS, -(loss.backward_peak_bytes + loss.saved_bytes));
        S.hole = 0;
        add(&S, LLMEM_CAT_ACTIVATIONS, -(loss.head_input_bytes));
      }
      for (int i = first + n - 1; i >= first; i--) {
        const layer_cost *lc = &costs[layer_is_moe(pl, i)];
        int local = local0 + (i - first);
        int rec = layer_recomputed(pl, local);
        const layer_activations *la = &lc->act[rec];
        int regathered = rs->gathers && !(rs->keep_gathered_until_backward && fwd_done[c] > 0);
        int first_pass = bwd_done[c] == 0; /* this chunk's first backward of the step */
        if (regathered) add(&S, LLMEM_CAT_WEIGHTS, (lc->gather));
        if (offload) add(&S, LLMEM_CAT_ACTIVATIONS, ((i >= first + n - 2) ? 0 : la->saved_bytes));
        add(&S, LLMEM_CAT_ACTIVATIONS, (la->recompute_bytes));
        if (pl->optimizer_in_backward) {
          transient(&S, LLMEM_CAT_GRADIENTS, lc->grad_share);
        } else if (lazy && first_pass) {
          add(&S, LLMEM_CAT_GRADIENTS, lc->grad_share);
        }
        if (rs->accumulate_unsharded && first_pass) {
          double g = lc->trainable * rs->unsharded_accum_bytes;
          add(&S, LLMEM_CAT_GRADIENTS, g);
          accumulated_bytes += g;
        }
        transient(&S, LLMEM_CAT_GRADIENTS, lc->unsharded_grads);
        transient(&S, LLMEM_CAT_COMM_BUFFERS, lc->reduce_input + (i > first ? lc->prefetch_bwd : 0));
        transient(&S, LLMEM_CAT_TEMPORARIES, la->backward_temp_bytes);
        record(&S, LLMEM_PHASE_BACKWARD, cur.mb, i);
        add(&S, LLMEM_CAT_TEMPORARIES, -(la->backward_temp_bytes));
        add(&S, LLMEM_CAT_COMM_BUFFERS, -(lc->reduce_input + (i > first ? lc->prefetch_bwd : 0)));
        add(&S, LLMEM_CAT_GRADIENTS, -(lc->unsharded_grads));
        if (pl->optimizer_in_backward) add(&S, LLMEM_CAT_GRADIENTS, -(lc->grad_share));
        add(&S, LLMEM_CAT_ACTIVATIONS, -(la->recompute_bytes + la->saved_bytes));
        add(&S, LLMEM_CAT_WEIGHTS, -(lc->casts));
        if (regathered) add(&S, LLMEM_CAT_WEIGHTS, -(lc->gather));
      }
      if (is_first_chunk) {
        add(&S, LLMEM_CAT_ACTIVATIONS, -(embedding_activation_bytes(pl)));
        if (lazy && !grads_made_embed) {
          add(&S, LLMEM_CAT_GRADIENTS, (embed_grads));
          grads_made_embed = 1;
          record(&S, LLMEM_PHASE_BACKWARD, cur.mb, -1);
        }
      }
      if (is_last_chunk && root_grads > 0) add(&S, LLMEM_CAT_GRADIENTS, -(root_grads));
    }
    if (cur.backward) bwd_done[c]++;
    else fwd_done[c]++;
  }
  /* parameters kept gathered through the backward are released at its end,
   * accumulated unsharded gradients after the last micro-batch's reduce-scatter */
  if (rs->keep_gathered_until_backward) add(&S, LLMEM_CAT_WEIGHTS, -(kept_gathered));
  add(&S, LLMEM_CAT_GRADIENTS, -(accumulated_bytes));

  /* optimizer step; lazily created gradients are then set to None */
  if (pl->optimizer_in_backward) {
    record(&S, LLMEM_PHASE_OPTIMIZER, -1, -1);
  } else {
    if (lazy) { /* every gradient exists by now (also layers of skipped micro-batches) */
      add(&S, LLMEM_CAT_GRADIENTS, rs->gradients - S.cat[LLMEM_CAT_GRADIENTS]);
    }
    transient(&S, LLMEM_CAT_TEMPORARIES, rs->optimizer_step_temp);
    record(&S, LLMEM_PHASE_OPTIMIZER, -1, -1);
    add(&S, LLMEM_CAT_TEMPORARIES, -(rs->optimizer_step_temp));
  }
  if (root > 0) add(&S, LLMEM_CAT_WEIGHTS, -(root));
  if (lazy) add(&S, LLMEM_CAT_GRADIENTS, -S.cat[LLMEM_CAT_GRADIENTS]);
  record(&S, LLMEM_PHASE_OPTIMIZER, -1, -1);

  if (sink && sink->events && S.group_n > 0) {
    sink_push(sink, &S.group_best);
    S.group_n = 0;
  }

  out->peak_allocated_bytes = S.peak;
  for (int i = 0; i < LLMEM_CAT_COUNT; i++) out->breakdown_bytes[i] = S.peak_cat[i];
  out->persistent_bytes = persistent;
  out->peak_phase = S.peak_phase;
  out->peak_micro_batch = S.peak_mb;
  out->peak_layer = S.peak_layer;
  /* blocks of the collectives' streams are freed late (recordStream; FSDP
   * notes "FSDP buffers sizes": backward needs "at least 2x all-gather
   * buffer size and potentially a bit more"): FSDP1 keeps two more gathered
   * units cached (limit_all_gathers allows two in flight), FSDP2 one */
  double late = 0;
  for (int k = 0; k < 2; k++)
    if (have[k] && costs[k].gather > late) late = costs[k].gather;
  if (pl->engine == LLMEM_ENGINE_FSDP1) late *= 2;
  out->peak_reserved_bytes = runtime_reserved_bytes(pl, S.peak, S.largest_transient + late + S.peak_hole);
  out->device_used_bytes = out->peak_reserved_bytes + runtime_device_overhead_bytes(pl);
  /* managed (paged) optimizer states occupy what the device has left, the rest pages to host */
  if (rs->paged_bytes > 0) {
    double room = pl->memory_bytes - out->device_used_bytes;
    out->device_used_bytes += rs->paged_bytes < room ? rs->paged_bytes : (room > 0 ? room : 0);
  }
}
