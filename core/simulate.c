/* The training step of one rank: persistent states, the passes in the
 * pipeline schedule's order, then the optimizer step (docs/ARCHITECTURE.md "The
 * peak is simulated").
 *
 * Cost: O(layers of the stage) per distinct pass, independent of the
 * micro-batch count. The schedule is a sequence of runs, each one pattern of
 * passes repeated (schedule_run); every copy of a run starts from the state
 * rebuilt from what is live (walk_state) plus its copy index times the
 * pattern's net change, so copy k's points are the same additions onto a
 * start total that moves one way with k. The walk runs the first two copies
 * and the last; when the start total grows, a bisection over the copies
 * finds where the largest point first appears (additions are monotone in
 * floating point, so the reference walk of every copy gives the same peak,
 * bit for bit: tests/c/test_simulate.c). */
#include <string.h>

#include "sim.h"


typedef struct {
  const stage_walk *W;
  const schedule *sc;
  int full;
  walk_check *check;
  int blocks; /* feeding the allocator: every copy until the cache layout repeats */
} walker;

/* Whether the allocator still takes the requests: past its budget (it gave up, reserved comes from the bound)
 * the rest of the walk takes the shortcuts of a walk without it. */
static int feeding_allocator(const walker *K) { return K->blocks && !alloc_get_stats()->gave_up; }

/* One copy of a run's pattern from `start`: the passes, the live set advanced. */
static void walk_copy(const walker *K, sim *S, const sim *start, int index, int length, walk_sig *g) {
  if (K->check) { /* the running state must match the rebuilt one */
    double gap = S->total - start->total, scale = start->total > 1 ? start->total : 1;
    if (gap < 0) gap = -gap;
    K->check->max_boundary_error = max2(K->check->max_boundary_error, gap / scale);
  }
  memcpy(S->cat, start->cat, sizeof S->cat);
  S->total = start->total;
  S->hole = start->hole;
  int summaries = !K->full && !K->check; /* the reference walks every layer */
  for (int i = 0; i < length; i++) {
    sched_op o = schedule_op(K->sc, index + i);
    if (!summaries || !walk_pass_summarized(K->W, S, g, o)) walk_pass(K->W, S, g, o);
    walk_apply(K->W, g, o);
  }
}

/* The start of copy k of a run: the rebuilt start plus k net changes. */
static void copy_start(const sim *base, const double *delta, double delta_total, int k, sim *out) {
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) out->cat[x] = base->cat[x] + k * delta[x];
  out->total = base->total + k * delta_total;
  out->hole = base->hole;
}

/* One run's copies after the flags have settled. */
typedef struct {
  sim base; /* the state rebuilt at copy 0 */
  double delta[LLMEM_CAT_COUNT], delta_total;
  int index, length, reps;
  walk_sig sig;         /* live set at copy 0 */
  int d[LLMEM_MAX_VPP]; /* in-flight change per copy, for the pattern's chunks */
  int chunks[2 * LLMEM_MAX_VPP], chunk_count;
} run_copies;

/* The largest point of copy k, walked without events. */
static sim probe_copy(const walker *K, const run_copies *R, int k) {
  sim P, start;
  memset(&P, 0, sizeof P);
  P.peak = -1;
  copy_start(&R->base, R->delta, R->delta_total, k, &start);
  walk_sig g = R->sig;
  walk_copy(&(walker){K->W, K->sc, 0, 0, 0}, &P, &start, R->index + k * R->length, R->length, &g);
  return P;
}

static void take_peak(sim *S, const sim *P) {
  S->peak = P->peak;
  memcpy(S->peak_cat, P->peak_cat, sizeof S->peak_cat);
  S->peak_phase = P->peak_phase, S->peak_mb = P->peak_mb, S->peak_layer = P->peak_layer;
  S->peak_hole = P->peak_hole;
}

static void live_copy(const walker *K, sim *S, const run_copies *R, int k, walk_sig *g) {
  sim start;
  copy_start(&R->base, R->delta, R->delta_total, k, &start);
  walk_copy(K, S, &start, R->index + k * R->length, R->length, g);
}

/* Copies [from, last] of a growing run: where does the largest point first appear? */
static void growing_peak(const walker *K, sim *S, const run_copies *R, int from) {
  int last = R->reps - 1;
  sim top = probe_copy(K, R, last);
  if (top.largest_transient > S->largest_transient) S->largest_transient = top.largest_transient;
  if (top.peak <= S->peak) return;
  /* mostly the last copy; a bisection when the growth is below rounding */
  if (last - 1 >= from && probe_copy(K, R, last - 1).peak == top.peak) {
    int lo = from, hi = last - 1;
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (probe_copy(K, R, mid).peak == top.peak) hi = mid;
      else lo = mid + 1;
    }
    top = probe_copy(K, R, hi);
  }
  take_peak(S, &top);
}

static int steady_run(const run_copies *R) {
  for (int j = 0; j < R->chunk_count; j++)
    if (R->d[R->chunks[j]]) return 0;
  return 1;
}

/* Micro-batches one copy of the run moves on (each pass of copy k is copy 0's, k of them later), or -1. */
static int copy_mb_step(const walker *K, const run_copies *R) {
  int last = R->reps - 1, step = -1;
  if (last < 1) return -1;
  for (int i = 0; i < R->length; i++) {
    int mb = schedule_op(K->sc, R->index + i).mb, next = schedule_op(K->sc, R->index + R->length + i).mb;
    if (i == 0) step = next - mb;
    if (next - mb != step || schedule_op(K->sc, R->index + last * R->length + i).mb - mb != last * step) return -1;
  }
  return step;
}

static long cycles_skipped; /* runs whose repeating cycle of layouts was passed over (tests) */
long walk_cycles_skipped(void) { return cycles_skipped; }

#define PERIOD_MAX 8 /* the longest cycle of cache layouts looked for (a 1F1B stage's four was seen) */

/* Every copy, as the allocator must see them. A run that leaves the live set alone comes back, after a
 * few copies, to the blocks it found, each owned by the same tensor q copies on (the hash counts owners'
 * micro-batches from the copy's); the copies after are the same requests on the same cache, so whole
 * cycles are passed over by renaming the owners, and the rest walked. Returns the copies walked or passed
 * over: all of them, or those before the allocator gave up. */
static int walk_every_copy(const walker *K, sim *S, const run_copies *R, walk_sig *g) {
  int last = R->reps - 1, step = K->full || !steady_run(R) ? -1 : copy_mb_step(K, R);
  uint64_t seen[PERIOD_MAX + 1]; /* the hash after copy j - 1 at j mod (PERIOD_MAX + 1) */
  if (step >= 0) seen[0] = alloc_layout_hash(0);
  for (int k = 0; k <= last; k++) {
    if (!K->full && !feeding_allocator(K)) return k;
    live_copy(K, S, R, k, g);
    if (step < 0) continue;
    uint32_t base = (uint32_t)((k + 1) * step);
    uint64_t now = alloc_layout_hash(base);
    for (int q = 1; q <= PERIOD_MAX && q <= k + 1; q++)
      if (seen[(k + 1 - q) % (PERIOD_MAX + 1)] == now) {
        int cycles = (last - k) / q;
        alloc_shift_micro_batches((uint32_t)(cycles * q * step));
        sim_skip(S, cycles * q * R->length);
        k += cycles * q; /* the copies left over are walked */
        cycles_skipped += cycles > 0;
        step = -1;
        break;
      }
    seen[(k + 1) % (PERIOD_MAX + 1)] = now;
  }
  return R->reps;
}

static void walk_run(const walker *K, sim *S, int index, int length, int reps, walk_sig *g);

/* Settled copies: walked all (reference), or copy 0 and the last shown and
 * the rest accounted for. Copy k's points are copy 0's additions onto a start
 * total that moves one way with k, so a falling or flat run peaks in copy 0
 * and a growing one in its last copies. */
static void walk_copies(const walker *K, sim *S, const run_copies *R, walk_sig *g) {
  int last = R->reps - 1, shown = S->sink && S->sink->events;
  if (K->full || feeding_allocator(K)) {
    int done = walk_every_copy(K, S, R, g);
    if (done < R->reps) walk_run(K, S, R->index + done * R->length, R->length, R->reps - done, g); /* gave up */
    return;
  }
  int walked = 0;
  if (shown || R->delta_total <= 0 || last == 0) live_copy(K, S, R, 0, g), walked = 1;
  if (last == 0) return;
  if (R->delta_total > 0) growing_peak(K, S, R, walked);
  int skipped = last - walked; /* copies walked for nothing but their live set */
  sim_skip(S, skipped * R->length);
  for (int j = 0; j < R->chunk_count; j++) g->in_flight[R->chunks[j]] += skipped * R->d[R->chunks[j]];
  if (K->check) S->total = R->base.total + last * R->delta_total; /* the running state skipped along */
  if (shown) live_copy(K, S, R, last, g);
  else
    for (int j = 0; j < R->chunk_count; j++) g->in_flight[R->chunks[j]] += R->d[R->chunks[j]];
}

/* Whether a copy of the pattern changes any flag (first forward or backward of a chunk, the cached hole). */
static int changes_flags(const walker *K, const walk_sig *g, int index, int length) {
  walk_sig t = *g;
  for (int i = 0; i < length; i++) {
    sched_op o = schedule_op(K->sc, index + i);
    if (o.split != SPLIT_W && (o.backward ? !t.bwd_started[o.chunk] : !t.fwd_started[o.chunk])) return 1;
    walk_apply(K->W, &t, o);
  }
  return t.hole != g->hole;
}

/* A run: `reps` copies of `length` passes from `index`. A copy that starts
 * a chunk's first forward or backward (flags change) is walked on its own. */
static void walk_run(const walker *K, sim *S, int index, int length, int reps, walk_sig *g) {
  const stage_walk *W = K->W;
  run_copies R;
  R.length = length;
  R.delta_total = 0;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) R.delta[x] = 0;
  /* the in-flight change per copy, over the pattern's chunks only (the walk stays O(pattern), not O(v)) */
  int chunks[2 * LLMEM_MAX_VPP], n = 0;
  for (int i = 0; i < length; i++) {
    sched_op o = schedule_op(K->sc, index + i);
    int seen = 0;
    for (int j = 0; j < n; j++) seen |= chunks[j] == o.chunk;
    if (!seen) chunks[n++] = o.chunk, R.d[o.chunk] = 0;
    R.d[o.chunk] += sched_live_change(o);
  }
  if (changes_flags(K, g, index, length)) {
    sim start;
    walk_state(W, g, &start);
    walk_copy(K, S, &start, index, length, g);
    index += length, reps--;
    if (reps == 0) return;
  }
  R.index = index, R.reps = reps, R.sig = *g;
  walk_state(W, g, &R.base);
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) {
    for (int j = 0; j < n; j++)
      if (R.d[chunks[j]]) R.delta[x] += R.d[chunks[j]] * W->in_flight_cat[chunks[j]][x];
    R.delta_total += R.delta[x];
  }
  R.chunk_count = n;
  memcpy(R.chunks, chunks, (size_t)n * sizeof chunks[0]);
  walk_copies(K, S, &R, g);
}

/* The passes in schedule order; interleaved steady periods after the second
 * repeat the second exactly (same live set, same runs) and are skipped. */
static void walk_schedule(const walker *K, sim *S, walk_sig *g) {
  const schedule *sc = K->sc;
  int index = 0;
  while (index < sc->op_count) {
    int shown = S->sink && S->sink->events, walked = shown ? 3 : 2; /* the last period shown on the timeline */
    if (!K->full && !feeding_allocator(K) && sc->period_count > walked &&
        index == sc->period_begin + 2 * sc->period_ops) {
      int skipped = (sc->period_count - walked) * sc->period_ops;
      sim_skip(S, skipped);
      index += skipped;
    }
    int length, reps;
    schedule_run(sc, index, &length, &reps);
    walk_run(K, S, index, length, reps, g);
    index += length * reps;
  }
}

/* Parameters kept gathered are released at the backward's end, accumulated
 * unsharded gradients after the last reduce-scatter; then the optimizer
 * step, after which lazily created gradients are set to None. */
/* first_step: the allocator's first step, where torch.optim creates its states */
static void optimizer_step(const stage_walk *W, sim *S, const walk_sig *g, int first_step) {
  const plan *pl = W->pl;
  const rank_states *rs = W->rs;
  walk_state(W, g, S);
  sim_sync(S);
  for (int c = 0; c < W->v; c++) {
    if (g->fwd_started[c] && rs->keep_gathered_until_backward) sim_add(S, LLMEM_CAT_WEIGHTS, -W->kept_gathered[c]);
    if (g->bwd_started[c]) sim_add(S, LLMEM_CAT_GRADIENTS, -W->accumulated[c]);
    blocks_free_kept(W, S, c);
  }
  if (W->root > 0 && W->fsdp2) fsdp2_reshard(S, block_tag(TAG_GATHER, LAYER_HEAD, MB_NONE, 0), W->root);
  else if (W->root > 0) sim_give(S, LLMEM_CAT_WEIGHTS, block_tag(TAG_GATHER, LAYER_HEAD, MB_NONE, 0), W->root, 1);
  if (W->fsdp2) fsdp2_forward_done(S); /* the next step's root all-gather, made at the walk's last pass */
  if (first_step) blocks_optimizer_states(W, S);
  if ((int)pl->in->optimizer_in_backward != 0) {
    sim_record(S, LLMEM_PHASE_OPTIMIZER, -1, -1);
  } else {
    if (W->lazy) { /* every gradient exists by now */
      double rest = rs->gradients - S->cat[LLMEM_CAT_GRADIENTS];
      sim_take(S, LLMEM_CAT_GRADIENTS, block_tag(TAG_GRAD, LAYER_REST, MB_NONE, 0), rest, ALLOC_STREAM_COMPUTE);
    }
    blocks_optimizer_temporaries(W, S, rs->optimizer_step_temp, 1);
    sim_record(S, LLMEM_PHASE_OPTIMIZER, -1, -1);
    blocks_optimizer_temporaries(W, S, rs->optimizer_step_temp, 0);
  }
  if (W->lazy) {
    sim_add(S, LLMEM_CAT_GRADIENTS, -S->cat[LLMEM_CAT_GRADIENTS]);
    blocks_free_gradients(W, S);
  }
  sim_record(S, LLMEM_PHASE_OPTIMIZER, -1, -1);
}

/* Reserved and device bytes from the peak. */
static void finish_rank(const stage_walk *W, const sim *S, llmem_rank_result *out) {
  const plan *pl = W->pl;
  out->peak_allocated_bytes = S->peak;
  for (int i = 0; i < LLMEM_CAT_COUNT; i++) out->breakdown_bytes[i] = S->peak_cat[i];
  out->peak_phase = S->peak_phase;
  out->peak_micro_batch = S->peak_mb;
  out->peak_layer = S->peak_layer;
  /* blocks of the collectives' streams are freed late (recordStream; FSDP
   * notes "FSDP buffers sizes": backward needs "at least 2x all-gather
   * buffer size and potentially a bit more"): FSDP1 keeps two more gathered
   * units cached (limit_all_gathers allows two in flight), FSDP2 one */
  double late = 0;
  for (int k = 0; k < LAYER_KIND_COUNT; k++)
    if (W->have[k] && W->costs[k].gather > late) late = W->costs[k].gather;
  if ((int)pl->in->engine == LLMEM_ENGINE_FSDP1) late *= 2;
  out->peak_reserved_bytes = runtime_reserved_bytes(pl, S->peak, S->largest_transient + late + S->peak_hole);
  /* ZeRO-3 without zero.Init: the set-up holds the whole model (step_blocks.c zero3_whole_then_partitioned) */
  if (pl->zero3_loads_whole)
    out->peak_reserved_bytes = max2(
        out->peak_reserved_bytes,
        gathered_bytes(W->rs, W->st->params_count, W->st->layers.quantizable_count + quantized_head_count(pl, W->st)));
  /* an allocator that gave up had reserved its peak so far: the step reserves at least that */
  if (S->blocks && alloc_get_stats()->gave_up && alloc_get_stats()->peak_reserved_bytes > out->peak_reserved_bytes)
    out->peak_reserved_bytes = alloc_get_stats()->peak_reserved_bytes;
  out->reserved_simulated = 0;
  out->fragmentation_bytes = out->peak_reserved_bytes - S->peak;
  out->largest_free_block_bytes = 0;
  if (S->blocks && !alloc_get_stats()->gave_up) {
    const alloc_stats *a = alloc_get_stats();
    /* the allocator's blocks round each request up: never below the exact live bytes */
    out->peak_reserved_bytes = a->peak_reserved_bytes > S->peak ? a->peak_reserved_bytes : S->peak;
    out->fragmentation_bytes = a->peak_reserved_bytes - a->allocated_at_peak_bytes;
    out->largest_free_block_bytes = a->largest_free_at_peak_bytes;
    out->reserved_simulated = 1;
  }
  out->device_used_bytes = out->peak_reserved_bytes + runtime_device_overhead_bytes(pl);
  /* managed (paged) optimizer states occupy what the device has left, the rest pages to host */
  out->device_used_bytes += paged_on_device_bytes(W->rs->paged_bytes, out->device_used_bytes, pl->memory_bytes);
}

double paged_on_device_bytes(double paged, double used, double capacity) {
  double room = capacity - used;
  return paged <= 0 ? 0 : paged < room ? paged : (room > 0 ? room : 0);
}

/* Whether the engine creates optimizer states at its first step (torch.optim
 * _init_group) rather than at set-up (DeepSpeed ZeRO initialize_optimizer_states:
 * runtime/zero/stage_1_and_2.py, stage3.py). */
static int states_at_first_step(const plan *pl) {
  return (int)pl->in->engine != LLMEM_ENGINE_DEEPSPEED && (int)pl->in->engine != LLMEM_ENGINE_MEGATRON_DEEPSPEED;
}

static void start_allocator(const plan *pl) {
  /* what cudaMalloc can take: the device less the context, workspaces and NCCL */
  alloc_settings a = {pl->max_split_bytes, pl->in->gc_threshold, pl->memory_bytes - runtime_device_overhead_bytes(pl),
                      (int)pl->in->expandable_segments != 0, pl->allocator_max_work};
  alloc_reset(&a);
}

/* One training step; blocks: with the allocator, whose state carries over from the previous step. */
static double walk_step(stage_walk *W, schedule *sc, sim *S, int full, walk_check *check, int first_step) {
  const rank_states *rs = W->rs;
  sim_add(S, LLMEM_CAT_WEIGHTS, rs->weights);
  sim_add(S, LLMEM_CAT_MASTER_WEIGHTS, rs->master);
  sim_add(S, LLMEM_CAT_OPTIMIZER_STATES, rs->optimizer);
  sim_add(S, LLMEM_CAT_COMM_BUFFERS, rs->comm_persistent);
  sim_add(S, LLMEM_CAT_ACTIVATIONS, rs->pp_kept_act);
  sim_add(S, LLMEM_CAT_LOGITS, rs->pp_kept_logits);
  if (!W->lazy) sim_add(S, LLMEM_CAT_GRADIENTS, rs->gradients);
  sim_add(S, LLMEM_CAT_TEMPORARIES, runtime_workspace_bytes(W->pl)); /* made by the first step (walk_pass) */
  double persistent = S->total;
  sim_record(S, LLMEM_PHASE_SETUP, -1, -1);
  /* the step before's last micro-batch: its held 4-bit inputs and logits (passes.c hold_quant_inputs) */
  if (W->root > 0 && W->fsdp2) fsdp2_root_unshard(W, S, W->root); /* the root unit gathered for the whole step */
  else if (W->root > 0)
    take_gathered(W, S, LLMEM_CAT_WEIGHTS, block_tag(TAG_GATHER, LAYER_HEAD, MB_NONE, 0), W->root, 0);
  walk_sig g;
  memset(&g, 0, sizeof g);
  if (S->carry_held) hold_quant_inputs(W, S, 1), g.held = 1;
  walker K = {W, sc, full, check, S->blocks};
  walk_schedule(&K, S, &g);
  optimizer_step(W, S, &g, first_step);
  return persistent;
}

/* The allocator's first step: states created at load, the rest as the step creates them. */
static void allocator_first_step(stage_walk *W, schedule *sc, int full) {
  const plan *pl = W->pl;
  int lazy_states = states_at_first_step(pl);
  sim S1;
  memset(&S1, 0, sizeof S1);
  S1.peak = -1;
  S1.blocks = 1;
  S1.workspaces_due = 3; /* the forward's and the backward's thread make theirs at their first matmul */
  start_allocator(pl);
  blocks_setup(W, &S1, lazy_states);
  walk_step(W, sc, &S1, full, 0, lazy_states);
  /* the reported step takes the held inputs again as the step before's */
  if (S1.held) hold_quant_inputs(W, &S1, 0);
}

static double offloaded_host_peak(const stage_walk *W, const schedule *sc);

/* host_bytes (may be NULL): the host memory offloaded activations take (simulate_offloaded_host_bytes), from
 * the same stage walk and schedule. */
static void stage_walk_run(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_rank_result *out,
                           timeline_sink *sink, int full, walk_check *check, double *host_bytes) {
  static stage_walk W; /* large (per-chunk sums): off small stacks; the core is single-threaded */
  walk_init(&W, pl, st, rs, out->stage);
  schedule sc;
  schedule_init(&sc, pl, out->stage);
  if (host_bytes) *host_bytes = (int)pl->in->activation_offload != 0 ? offloaded_host_peak(&W, &sc) : 0;
  int blocks = pl->simulate_allocator && !pl->allocator_reserve_given && full != WALK_EVERY && !check;
  if (blocks) allocator_first_step(&W, &sc, full);
  /* the reported step asks about as much again: past the budget, give up now rather than halfway through it */
  if (blocks && 2 * alloc_get_stats()->work > pl->allocator_max_work) alloc_give_up();
  sim S;
  memset(&S, 0, sizeof S);
  S.sink = sink;
  S.peak = -1;
  S.blocks = blocks;
  S.carry_held = W.quant_held;
  blocks_ddp_rebuild(&W, &S); /* the reported step is the second or later: DDP has rebuilt its buckets */
  out->persistent_bytes = walk_step(&W, &sc, &S, full, check, 0);
  sim_flush(&S);
  finish_rank(&W, &S, out);
}

void simulate_stage_walk(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_rank_result *out,
                         timeline_sink *sink, int full, walk_check *check) {
  stage_walk_run(pl, st, rs, out, sink, full, check, 0);
}

void simulate_stage(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_rank_result *out,
                    timeline_sink *sink) {
  stage_walk_run(pl, st, rs, out, sink, 0, 0, 0);
}

void simulate_stage_host(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_rank_result *out,
                         timeline_sink *sink, double *host_bytes) {
  stage_walk_run(pl, st, rs, out, sink, 0, 0, host_bytes);
}

/* Host memory of offloaded activations: each forward moves the saved tensors
 * of all but the chunk's last two layers to pinned CPU memory and its backward
 * brings them back (torchtune training/_activation_offloading.py pack_tensor:
 * torch.empty_like(pin_memory=True); unpack frees it). The most the host holds
 * is at a pass boundary; a run's copies shift its boundaries by the same step. */
static double offloaded_host_peak(const stage_walk *W, const schedule *sc) {
  double off[LLMEM_MAX_VPP], host = 0, peak = 0;
  for (int c = 0; c < W->v; c++) off[c] = walk_offloaded_bytes(W, c);
  int index = 0;
  while (index < sc->op_count) {
    /* interleaved steady periods after the second repeat it (walk_schedule) */
    if (sc->period_count > 2 && index == sc->period_begin + 2 * sc->period_ops)
      index += (sc->period_count - 2) * sc->period_ops;
    int length, reps;
    schedule_run(sc, index, &length, &reps);
    double start = host, top = host;
    for (int i = 0; i < length; i++) {
      sched_op o = schedule_op(sc, index + i);
      if (o.split != SPLIT_W) host += o.backward ? -off[o.chunk] : off[o.chunk]; /* back for the I */
      top = max2(top, host);
    }
    double step = host - start;
    peak = max2(peak, top + (step > 0 ? (reps - 1) * step : 0));
    host = start + reps * step;
    index += length * reps;
  }
  return peak;
}

double simulate_offloaded_host_bytes(const plan *pl, const stage_layout *st, const rank_states *rs, int stage) {
  if ((int)pl->in->activation_offload == 0) return 0;
  static stage_walk W;
  walk_init(&W, pl, st, rs, stage);
  schedule sc;
  schedule_init(&sc, pl, stage);
  return offloaded_host_peak(&W, &sc);
}

/* The first virtual pass of every chunk, forward or backward: the latest. */
static int all_chunks_started_at(const schedule *sc, int backward) {
  int last = 0;
  for (int c = 0; c < sc->v; c++) {
    int k = schedule_first_virtual(sc, backward, c);
    if (k > last) last = k;
  }
  return last;
}

/* Whether every steady forward of every later middle stage r can be matched
 * with this stage's forward of the same chunk t periods later: a period is
 * g micro-batches through every chunk (P = g v virtual forwards; 1F1B: one),
 * t the fewest periods that cover r's D fewer warm-up forwards. That forward
 * runs here with no fewer backwards done, so the same gradients exist, and
 * P t more forwards against P t - D more backwards: t whole periods of
 * forwards add t g micro-batches of every chunk, at least what any P t
 * backwards free. Needs whole groups (the chunk order repeats every period),
 * every chunk's forward started in every warm-up, and, for r's forwards
 * with no forward t periods later here, every chunk's backward started
 * here before them (the same virtual forward then holds as much). */
static int periods_match(const plan *pl, const schedule *sc) {
  int P = sc->kind == SCHED_INTERLEAVED ? sc->g * sc->v : 1, total = sc->op_count / 2;
  if (sc->kind == SCHED_INTERLEAVED && sc->m % sc->g != 0) return 0;
  schedule last; /* the last middle stage: the fewest warm-up forwards */
  schedule_init(&last, pl, (int)pl->in->pp - 2);
  int D = sc->warm - last.warm, t = (D + P - 1) / P;
  return last.warm > all_chunks_started_at(sc, 0) &&
         (double)total - (double)t * P - sc->warm > all_chunks_started_at(sc, 1);
}

/* Whether every later middle stage with this stage's layers and states holds
 * no more than this one (estimate.c then reports this stage's numbers as
 * its bound instead of walking it). Under 1F1B and Megatron's interleaving
 * (schedules.py get_schedule_table) a later stage r runs the same virtual
 * passes in the same order with fewer warm-up forwards. Its warm-up forwards
 * and its cool-down backwards are this stage's own, from the same state; each
 * of its backwards starts with the same backwards done and no more forwards
 * than here. Each of its steady forwards is the same virtual forward here,
 * done with fewer backwards: r can then hold a chunk's lazily made gradients
 * that its first backward, run ahead, created, which stays within the
 * micro-batch that backward freed when no chunk's gradients exceed one
 * micro-batch's live set; otherwise periods_match pairs it with a later
 * forward of the same chunk here (other schedules never pass the chunk
 * budget: pp is at most 512 and only interleaving has virtual stages). Only
 * where nothing else depends on the order: no held 4-bit inputs, no loss or
 * embedding on the stage. */
int simulate_stage_bounds_later(const plan *pl, const stage_layout *st, const rank_states *rs, int stage) {
  if (st->has_head || st->has_embedding) return 0;
  schedule sc;
  schedule_init(&sc, pl, stage);
  if (sc.kind != SCHED_1F1B && sc.kind != SCHED_INTERLEAVED) return 0;
  static stage_walk W;
  walk_init(&W, pl, st, rs, stage);
  if (W.quant_held || W.vision.tokens_per_microbatch > 0) return 0;
  int grads_within = 1;
  for (int c = 0; c < W.v; c++) {
    double live = 0;
    for (int x = 0; x < LLMEM_CAT_COUNT; x++) live += W.in_flight_cat[c][x];
    if (!(live >= 0) || !(W.kept_gathered[c] >= 0)) return 0;
    grads_within &= W.grads_made[c] <= live;
  }
  return grads_within || periods_match(pl, &sc);
}
