/* Pass summaries: one pass of the walk (a micro-batch's forward or backward
 * through a chunk) reduced to what it does to the running state — the
 * category sums it leaves, its highest point (the categories there, its
 * label) and its largest transient — walked once per stage class and applied
 * in O(1) after that. A deep pipeline then costs O(layers + stages) rather
 * than O(passes walked x layers per stage) (issues 12 and 17).
 *
 * Applied only where it is exact: when every addition of the pass and every
 * category of the state it starts from is a multiple of 2^k (bytes are whole,
 * and mostly multiples of large powers of two) and every partial sum stays
 * below 2^(53+k), floating-point sums have no rounding, so the state and the
 * peak are the walk's own, bit for bit (tests/c/test_walk.c compares them
 * with the reference walk). Anything else is walked: a fraction of a byte (a
 * count sharded over a group that is not a power of two) would round
 * differently here and in a walk with the timeline or the allocator, and an
 * estimate must give the same bits whichever path reads it (the layout
 * search's kept layouts equal their own estimates). */
#include <string.h>

#include "sim.h"

typedef struct {
  unsigned gen; /* valid while it equals its slot's generation */
  int exact;    /* every point labelled by the pass's micro-batch */
  int grain;    /* every addition a multiple of 2^grain */
  double moved; /* the additions' magnitudes, summed */
  double hole_in, hole_after;
  double delta[LLMEM_CAT_COUNT], delta_total;
  int has_peak, peak_phase, peak_layer; /* peak_layer: relative to the chunk's first layer when >= 0 */
  double peak_off, peak_cat[LLMEM_CAT_COUNT], peak_hole;
  double largest_transient;
} pass_summary;

enum { PASS_FORWARD, PASS_BACKWARD, PASS_INPUTS, PASS_WEIGHTS, PASS_KINDS };

/* Rows by chunk, kind, first-pass flag, hole cached. A stage class (stages
 * with the same layers) takes v rows; as many classes as fit stay cached, so
 * a pipeline whose stages cycle through a few classes (an MoE or hybrid
 * pattern not dividing the stage) walks each class's passes once. */
static pass_summary table[LLMEM_MAX_VPP][PASS_KINDS][2][2];
static unsigned gen = 1;
static long used; /* passes applied from a summary (tests) */

long pass_summaries_used(void) { return used; }
/* the plan the summaries were walked under, with what makes another stage's passes the same */
static int owner_valid;
static plan owner_plan;
static llmem_input owner_input;           /* the plan reads raw keys from its input */
static int slot_stage[LLMEM_MAX_VPP];     /* the class's stage in each slot of v rows (-1: free) */
static rank_states slot_states[LLMEM_MAX_VPP]; /* and its rank's states */
static unsigned slot_gen[LLMEM_MAX_VPP];
static int next_slot;

/* A pass whose sums round, by its exact start state: walked once, then its
 * end and highest point taken again wherever the same pass starts from the
 * same bits (the walk is a function of them). Deep pipelines with fractional
 * bytes (sharding over a group that is not a power of two) start the same
 * warm-up and cool-down passes from the same states on many stages. */
typedef struct {
  unsigned gen; /* valid while it equals its row's slot generation */
  int row, kind, flag;
  double cat_in[LLMEM_CAT_COUNT], total_in, hole_in;
  double cat_out[LLMEM_CAT_COUNT], total_out, hole_out;
  int has_peak, peak_phase, peak_mb, peak_layer; /* peak_layer: relative to the chunk's first layer when >= 0 */
  double peak, peak_cat[LLMEM_CAT_COUNT], peak_hole;
  double largest_transient;
} pass_memo;

#define PASS_MEMO_SIZE 4096 /* a power of two; more distinct passes than this evict each other */
static pass_memo memo[PASS_MEMO_SIZE];

static unsigned fresh_gen(void) {
  if (++gen == 0) { /* wrapped: clear once, every slot freed */
    memset(table, 0, sizeof table);
    memset(memo, 0, sizeof memo);
    for (int k = 0; k < LLMEM_MAX_VPP; k++) slot_stage[k] = -1;
    gen = 1;
  }
  return gen;
}

int pass_summaries_for_stage(const stage_walk *W, int stage) {
  int slots = LLMEM_MAX_VPP / W->v;
  if (!owner_valid || memcmp(&owner_plan, W->pl, sizeof owner_plan) != 0 ||
      memcmp(&owner_input, W->pl->in, sizeof owner_input) != 0) {
    for (int k = 0; k < LLMEM_MAX_VPP; k++) slot_stage[k] = -1;
    owner_valid = 1, next_slot = 0;
    owner_plan = *W->pl;
    owner_input = *W->pl->in;
  }
  for (int k = 0; k < slots; k++)
    if (slot_stage[k] >= 0 && memcmp(&slot_states[k], W->rs, sizeof *W->rs) == 0 &&
        (slot_stage[k] == stage || layout_same_layers(W->pl, stage, slot_stage[k])))
      return k * W->v;
  int k = next_slot;
  next_slot = (next_slot + 1) % slots;
  slot_gen[k] = fresh_gen();
  slot_stage[k] = stage;
  slot_states[k] = *W->rs;
  return k * W->v;
}

void sim_track(sim *S, double bytes) {
  int v = grain_of(bytes);
  if (v < S->grain) S->grain = v;
  S->moved += fabs(bytes);
}

static int pass_kind(sched_op o) {
  if (!o.backward) return PASS_FORWARD;
  return o.split == SPLIT_I ? PASS_INPUTS : o.split == SPLIT_W ? PASS_WEIGHTS : PASS_BACKWARD;
}

/* The flag the pass takes: a forward whether the chunk ran before, a backward whether it is the first. */
static int pass_flag(const walk_sig *g, sched_op o) {
  if (!o.backward) return g->fwd_started[o.chunk] != 0;
  return o.split == SPLIT_W ? 0 : !g->bwd_started[o.chunk];
}

/* The pass walked from nothing, its additions checked. */
static void summarize(const stage_walk *W, const walk_sig *g, sched_op o, double hole, pass_summary *p, unsigned valid) {
  sim Z;
  memset(&Z, 0, sizeof Z);
  Z.peak = -INFINITY;
  Z.hole = hole;
  Z.track = 1;
  Z.grain = 1 << 20;
  walk_pass(W, &Z, g, o);
  p->gen = valid;
  p->hole_in = hole;
  p->hole_after = Z.hole;
  memcpy(p->delta, Z.cat, sizeof p->delta);
  p->delta_total = Z.total;
  p->has_peak = Z.peak > -INFINITY;
  p->peak_off = Z.peak;
  memcpy(p->peak_cat, Z.peak_cat, sizeof p->peak_cat);
  p->peak_phase = Z.peak_phase;
  p->peak_layer = Z.peak_layer >= 0 ? Z.peak_layer - W->first_global[o.chunk] : Z.peak_layer;
  p->peak_hole = Z.peak_hole;
  p->largest_transient = Z.largest_transient;
  p->grain = Z.grain;
  p->moved = Z.moved;
  p->exact = !p->has_peak || Z.peak_mb == o.mb;
}

/* 2^k for |k| <= 1000, as a double built from its bits. */
static double grain_scale(int k) {
  if (k < -1022) return 0;
  uint64_t bits = (uint64_t)(k + 1023) << 52;
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* Whether every sum of the pass from S is exact: all terms multiples of 2^k, every partial sum below 2^(53+k). */
static int exact_by_grain(const sim *S, const pass_summary *p) {
  int k = p->grain;
  double top = fabs(S->total);
  int v = grain_of(S->total);
  if (v < k) k = v;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) {
    v = grain_of(S->cat[x]);
    if (v < k) k = v;
    if (fabs(S->cat[x]) > top) top = fabs(S->cat[x]);
  }
  if (k < -1000 || k > 960) return 0;
  return top + p->moved < 9007199254740992.0 * grain_scale(k); /* 2^53 x 2^k */
}

/* The same, first for the common case: whole bytes below 2^53. */
static int exact_from(const sim *S, const pass_summary *p) {
  int whole = p->grain >= 0 && S->total == floor(S->total);
  double top = fabs(S->total);
  for (int x = 0; x < LLMEM_CAT_COUNT && whole; x++) {
    whole = S->cat[x] == floor(S->cat[x]);
    if (fabs(S->cat[x]) > top) top = fabs(S->cat[x]);
  }
  if (whole && top + p->moved < 9007199254740992.0) return 1;
  return exact_by_grain(S, p);
}

/* The pass's highest point on the timeline. */
static void summary_peak_event(const stage_walk *W, sim *S, const pass_summary *p, sched_op o) {
  double cat[LLMEM_CAT_COUNT];
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) cat[x] = S->cat[x] + p->peak_cat[x];
  int layer = p->peak_layer >= 0 ? p->peak_layer + W->first_global[o.chunk] : p->peak_layer;
  sim_event_of(S, S->total + p->peak_off, cat, p->peak_phase, o.mb, layer);
}

static uint64_t mix_bits(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* The memo's slot for the pass from S's state. */
static pass_memo *memo_slot(const sim *S, int row, int kind, int flag) {
  int key[3] = {row, kind, flag};
  uint64_t h = mix_bits(1469598103934665603ULL, key, sizeof key);
  h = mix_bits(h, S->cat, sizeof S->cat);
  h = mix_bits(h, &S->total, sizeof S->total);
  h = mix_bits(h, &S->hole, sizeof S->hole);
  return &memo[(h ^ (h >> 29)) & (PASS_MEMO_SIZE - 1)];
}

/* Whether the slot holds this pass from exactly S's bits. */
static int memo_holds(const pass_memo *m, const sim *S, unsigned valid, int row, int kind, int flag) {
  return m->gen == valid && m->row == row && m->kind == kind && m->flag == flag &&
         memcmp(m->cat_in, S->cat, sizeof m->cat_in) == 0 && memcmp(&m->total_in, &S->total, sizeof S->total) == 0 &&
         memcmp(&m->hole_in, &S->hole, sizeof S->hole) == 0;
}

/* The pass walked from S's state with no peak yet, into the slot (kept for other passes only where its
 * points are labelled by the pass's micro-batch, as all are). */
static void memo_fill(const stage_walk *W, const sim *S, const walk_sig *g, sched_op o, pass_memo *m, unsigned valid,
                      int row) {
  sim Z = *S;
  Z.sink = 0;
  Z.peak = -INFINITY;
  Z.largest_transient = 0;
  walk_pass(W, &Z, g, o);
  m->has_peak = Z.peak > -INFINITY;
  m->gen = m->has_peak && Z.peak_mb != o.mb ? 0 : valid;
  m->row = row, m->kind = pass_kind(o), m->flag = pass_flag(g, o);
  memcpy(m->cat_in, S->cat, sizeof m->cat_in);
  m->total_in = S->total, m->hole_in = S->hole;
  memcpy(m->cat_out, Z.cat, sizeof m->cat_out);
  m->total_out = Z.total, m->hole_out = Z.hole;
  m->peak = Z.peak, m->peak_phase = Z.peak_phase, m->peak_mb = Z.peak_mb, m->peak_hole = Z.peak_hole;
  m->peak_layer = Z.peak_layer >= 0 ? Z.peak_layer - W->first_global[o.chunk] : Z.peak_layer;
  memcpy(m->peak_cat, Z.peak_cat, sizeof m->peak_cat);
  m->largest_transient = Z.largest_transient;
}

/* The remembered pass onto S: its end state, and its first highest point where it beats the peak so far
 * (mb: that point's micro-batch). */
static void memo_apply(const stage_walk *W, sim *S, const pass_memo *m, sched_op o, int mb) {
  if (m->has_peak && m->peak > S->peak) {
    S->peak = m->peak;
    memcpy(S->peak_cat, m->peak_cat, sizeof S->peak_cat);
    S->peak_phase = m->peak_phase;
    S->peak_mb = mb;
    S->peak_layer = m->peak_layer >= 0 ? m->peak_layer + W->first_global[o.chunk] : m->peak_layer;
    S->peak_hole = m->peak_hole;
  }
  if (m->largest_transient > S->largest_transient) S->largest_transient = m->largest_transient;
  memcpy(S->cat, m->cat_out, sizeof S->cat);
  S->total = m->total_out;
  S->hole = m->hole_out;
}

/* A pass without events whose sums round: from the memo, else walked into it. */
static void walk_pass_remembered(const stage_walk *W, sim *S, const walk_sig *g, sched_op o, int row) {
  unsigned valid = slot_gen[row / W->v];
  int kind = pass_kind(o), flag = pass_flag(g, o);
  pass_memo *m = memo_slot(S, row, kind, flag);
  if (memo_holds(m, S, valid, row, kind, flag)) {
    memo_apply(W, S, m, o, o.mb);
    return;
  }
  memo_fill(W, S, g, o, m, valid, row);
  memo_apply(W, S, m, o, m->peak_mb);
}

int walk_pass_summarized(const stage_walk *W, sim *S, const walk_sig *g, sched_op o) {
  int shown = S->sink && S->sink->events;
  if (W->quant_held || S->blocks || (shown && S->sink->stride < TIMELINE_COARSE_STRIDE)) return 0;
  int row = W->summary_row + o.chunk;
  pass_summary *p = &table[row][pass_kind(o)][pass_flag(g, o)][S->hole != 0];
  unsigned valid = slot_gen[row / W->v];
  if (p->gen != valid || p->hole_in != S->hole) summarize(W, g, o, S->hole, p, valid);
  if (!p->exact) return 0;
  if (!exact_from(S, p)) {
    if (shown) return 0; /* its points are the walk's own */
    walk_pass_remembered(W, S, g, o, row);
    return 1;
  }
  if (p->has_peak && S->total + p->peak_off > S->peak) { /* the walk's first highest point, exactly */
    S->peak = S->total + p->peak_off;
    for (int x = 0; x < LLMEM_CAT_COUNT; x++) S->peak_cat[x] = S->cat[x] + p->peak_cat[x];
    S->peak_phase = p->peak_phase;
    S->peak_mb = o.mb;
    S->peak_layer = p->peak_layer >= 0 ? p->peak_layer + W->first_global[o.chunk] : p->peak_layer;
    S->peak_hole = p->peak_hole;
  }
  if (p->largest_transient > S->largest_transient) S->largest_transient = p->largest_transient;
  int phase = o.backward ? LLMEM_PHASE_BACKWARD : LLMEM_PHASE_FORWARD;
  if (shown && p->has_peak) summary_peak_event(W, S, p, o);
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) S->cat[x] += p->delta[x];
  S->total += p->delta_total;
  S->hole = p->hole_after;
  if (shown) sim_event(S, phase, o.mb, -1);
  used++;
  return 1;
}
