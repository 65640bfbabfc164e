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
 * search's kept layouts equal their own estimates). Such a pass is walked
 * once per start state (the memo below: stages of a deep pipeline start the
 * same passes from the same bits), and its runs of alike layers are added
 * in one go where every addition rounds alike in every step (rounding_repeats),
 * its timeline points replayed: still the walk's own bits. */
#include <stddef.h>
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
static llmem_input owner_input;                /* the plan reads raw keys from its input */
static int slot_stage[LLMEM_MAX_VPP];          /* the class's stage in each slot of v rows (-1: free) */
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
static alike_plan plans[LLMEM_MAX_VPP][2]; /* by row, direction (passes.c alike_plan_of) */
/* what walk_init finds over a stage's layers (pass_class_keep) */
typedef struct {
  double in_flight_cat[LLMEM_CAT_COUNT];
  unsigned char in_flight_cats[LLMEM_CAT_COUNT];
  int in_flight_cat_count;
  double kept_gathered, grads_made, accumulated, offloaded;
} chunk_sums;
static unsigned class_gen[LLMEM_MAX_VPP]; /* by slot: kept while it equals the slot's generation */
static stage_layout class_layout[LLMEM_MAX_VPP];
static stage_kinds class_kinds[LLMEM_MAX_VPP];
static chunk_sums class_sums[LLMEM_MAX_VPP]; /* by row */

static unsigned fresh_gen(void) {
  if (++gen == 0) { /* wrapped: clear once, every slot freed */
    memset(table, 0, sizeof table);
    memset(memo, 0, sizeof memo);
    memset(plans, 0, sizeof plans);
    memset(class_gen, 0, sizeof class_gen);
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

/* ---- runs of alike steps in a pass whose sums round (passes.c step_repeat) ----
 * A run's steps make the same additions, each onto the values the step
 * before left, so every value moves by the step's change D from one step to
 * the next. An addition moves its value by the same amount in every step
 * when either every number is a multiple of 2^g and every sum stays below
 * 2^(53+g) (nothing rounds), or the value and the sum stay inside one
 * binade [2^e, 2^(e+1)) and the addition is not half-way between two of its
 * points: the value is then on the binade's grid of u = 2^(e-52), and the
 * sum rounds to it plus the addition rounded to the grid (a tie would round
 * to even, which depends on the value). Then every step adds D exactly and
 * the run's sums and points are the walk's own, bit for bit. */
#define ROUNDING_LOG_ADDS 256 /* a step of up to ALIKE_MAX_PERIOD layers (passes.c) */
typedef struct {
  double total, value, bytes; /* before the addition: the total, its category's value */
  int cat;
} logged_add;
static logged_add rounding_log[ROUNDING_LOG_ADDS];
static int rounding_logged = -1; /* -1: not logging */
static int rounding_overflow;
/* a shown step's points, and the step's change once checked */
#define ROUNDING_LOG_POINTS 64
typedef struct {
  double total, cat[LLMEM_CAT_COUNT];
  int phase, mb, layer;
} logged_point;
static logged_point rounding_points[ROUNDING_LOG_POINTS];
static int rounding_pointed;
static double rounding_d[LLMEM_CAT_COUNT], rounding_d_total;

void rounding_log_begin(void) { rounding_logged = 0, rounding_overflow = 0, rounding_pointed = 0; }

void rounding_log_point(const sim *S, int phase, int mb, int layer) {
  if (rounding_logged < 0 || !S->sink->events) return;
  if (rounding_pointed == ROUNDING_LOG_POINTS) {
    rounding_overflow = 1;
    return;
  }
  logged_point *p = &rounding_points[rounding_pointed++];
  p->total = S->total, p->phase = phase, p->mb = mb, p->layer = layer;
  memcpy(p->cat, S->cat, sizeof p->cat);
}

/* x moved by `steps` changes d (none added when d is zero: a -0 stays). */
static double moved_by(double x, int steps, double d) { return d != 0 ? x + steps * d : x; }

/* Replayed point i (step 1 + i / points, the points of the first step in order), its total. */
static double replayed_total(int i) {
  return moved_by(rounding_points[i % rounding_pointed].total, 1 + i / rounding_pointed, rounding_d_total);
}

/* Replayed point i into the timeline. */
static void replay_point(sim *S, int i, int stride) {
  const logged_point *p = &rounding_points[i % rounding_pointed];
  int j = 1 + i / rounding_pointed;
  double cat[LLMEM_CAT_COUNT];
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) cat[x] = moved_by(p->cat[x], j, rounding_d[x]);
  sim_event_of(S, moved_by(p->total, j, rounding_d_total), cat, p->phase, p->mb,
               p->layer >= 0 ? p->layer + j * stride : p->layer);
}

/* The first of the highest replayed points in [from, end): each point of
 * the step moves one way with the step, so its highest is its first or last copy. */
static int first_highest(int from, int end) {
  int r = rounding_pointed, best = from;
  if (end - from <= 2 * r) {
    for (int i = from + 1; i < end; i++)
      if (replayed_total(i) > replayed_total(best)) best = i;
    return best;
  }
  best = -1;
  for (int q = 0; q < r; q++) {
    int first = from + ((q - from % r) % r + r) % r, last = end - 1 - (((end - 1 - q) % r) + r) % r;
    int i = rounding_d_total > 0 ? last : first;
    if (best < 0 || replayed_total(i) > replayed_total(best) || (replayed_total(i) == replayed_total(best) && i < best))
      best = i;
  }
  return best;
}

/* The timeline groups points (timeline.c sim_event_of): a group of `stride`
 * keeps its first highest. A group's points are fed as the walk would, its
 * others only counted: the highest among them, if higher than the group's so far. */
void rounding_replay_points(sim *S, int steps, int stride) {
  int n = steps * rounding_pointed;
  for (int i = 0; i < n;) {
    if (S->skipped || S->group_n == 0) { /* the group's first point: built */
      replay_point(S, i++, stride);
      continue;
    }
    int end = i + (S->sink->stride - S->group_n); /* the point that closes the group */
    if (end > n) end = n;
    int top = first_highest(i, end);
    if (replayed_total(top) > S->group_best.total_bytes) {
      S->group_n += top - i;
      replay_point(S, top, stride); /* closes the group when it is its last */
      if (S->group_n > 0) S->group_n += end - top - 1;
    } else {
      S->group_n += end - i;
    }
    if (S->group_n >= S->sink->stride) sim_flush(S);
    i = end;
  }
}

/* ---- what walk_init finds over a stage's layers, kept per class ---- */

/* Layouts alike but for the stage and where its layers start (the layer
 * kinds are the class's: layout_same_layers). */
static int same_layout(const stage_layout *a, const stage_layout *b) {
  return a->layer_count == b->layer_count && a->moe_layer_count == b->moe_layer_count &&
         a->has_embedding == b->has_embedding && a->has_head == b->has_head &&
         memcmp(a->mixer_layer_count, b->mixer_layer_count, sizeof a->mixer_layer_count) == 0 &&
         memcmp(&a->params_count, &b->params_count, sizeof *a - offsetof(stage_layout, params_count)) == 0;
}

int pass_class_recall(stage_walk *W, stage_kinds *kinds) {
  int slot = W->summary_row / W->v;
  if (class_gen[slot] != slot_gen[slot] || !same_layout(W->st, &class_layout[slot])) return 0;
  *kinds = class_kinds[slot];
  for (int c = 0; c < W->v; c++) {
    const chunk_sums *k = &class_sums[W->summary_row + c];
    memcpy(W->in_flight_cat[c], k->in_flight_cat, sizeof k->in_flight_cat);
    memcpy(W->in_flight_cats[c], k->in_flight_cats, sizeof k->in_flight_cats);
    W->in_flight_cat_count[c] = k->in_flight_cat_count;
    W->kept_gathered[c] = k->kept_gathered, W->grads_made[c] = k->grads_made;
    W->accumulated[c] = k->accumulated, W->offloaded[c] = k->offloaded;
  }
  return 1;
}

void pass_class_keep(const stage_walk *W, const stage_kinds *kinds) {
  int slot = W->summary_row / W->v;
  class_gen[slot] = slot_gen[slot];
  class_layout[slot] = *W->st;
  class_kinds[slot] = *kinds;
  for (int c = 0; c < W->v; c++) {
    chunk_sums *k = &class_sums[W->summary_row + c];
    memcpy(k->in_flight_cat, W->in_flight_cat[c], sizeof k->in_flight_cat);
    memcpy(k->in_flight_cats, W->in_flight_cats[c], sizeof k->in_flight_cats);
    k->in_flight_cat_count = W->in_flight_cat_count[c];
    k->kept_gathered = W->kept_gathered[c], k->grads_made = W->grads_made[c];
    k->accumulated = W->accumulated[c], k->offloaded = W->offloaded[c];
  }
}

alike_plan *pass_alike_plan(const stage_walk *W, int chunk, int backward) {
  int row = W->summary_row + chunk;
  alike_plan *a = &plans[row][backward];
  if (a->gen != slot_gen[row / W->v]) a->gen = slot_gen[row / W->v], a->count = -1;
  return a;
}

void sim_track(sim *S, int cat, double bytes) {
  if (S->track == TRACK_ROUNDING) {
    if (rounding_logged < 0) return;
    if (rounding_logged == ROUNDING_LOG_ADDS) {
      rounding_overflow = 1;
      return;
    }
    logged_add *a = &rounding_log[rounding_logged++];
    a->total = S->total, a->value = S->cat[cat], a->bytes = bytes, a->cat = cat;
    return;
  }
  int v = grain_of(bytes);
  if (v < S->grain) S->grain = v;
  S->moved += fabs(bytes);
}

/* The biased exponent of x: its binade (0: zero or subnormal, 0x7ff: not finite). */
static int binade_of(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return (int)((bits >> 52) & 0x7ff);
}

/* Whether x is in v's binade, with v's sign. */
static int in_binade_of(double x, double v) { return binade_of(x) == binade_of(v) && signbit(x) == signbit(v); }

/* 2^k for |k| <= 1000, as a double built from its bits. */
static double two_pow(int k) {
  if (k < -1022) return 0;
  uint64_t bits = (uint64_t)(k + 1023) << 52;
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* The same, strictly above the binade's lowest value: a rounded sum there may come from below it. */
static int inside_binade_of(double x, double v) {
  return in_binade_of(x, v) && fabs(x) != two_pow(binade_of(v) - 1023);
}

/* A value the logged step moves (the total or a category), over its
 * additions: every value it takes (before each, and at the end) lies in
 * [lo, hi]; the additions are at most top_add. */
typedef struct {
  int x; /* the category (-1: the total) */
  int adds;
  double lo, hi, top_add, d; /* d: its change a step */
  double limit;              /* 2^(53+g), every value and addition a multiple of 2^g; 0: none */
  int binade;                /* [lo, hi] inside one binade, d on its grid, no addition half-way between its points */
  int first_binade;          /* the binade of its first value: lo's where they share one */
  int tie;                   /* an addition half-way between points of first_binade's grid */
  int add_grain;             /* every addition a multiple of 2^add_grain */
} value_range;

static void range_start(value_range *r, int x, double d) {
  r->x = x, r->adds = 0, r->lo = INFINITY, r->hi = -INFINITY, r->top_add = 0, r->d = d;
  r->tie = 0, r->add_grain = 1 << 20;
}

static void range_take(value_range *r, double v) {
  if (v < r->lo) r->lo = v;
  if (v > r->hi) r->hi = v;
}

/* An addition of a (of grain a_grain) to the value at v. */
static void range_add(value_range *r, double v, double a, int a_grain) {
  if (r->adds++ == 0) r->first_binade = binade_of(v);
  range_take(r, v);
  if (fabs(a) > r->top_add) r->top_add = fabs(a);
  r->tie |= a_grain == r->first_binade - 1076;
  if (a_grain < r->add_grain) r->add_grain = a_grain;
}

/* The least grain of the value's logged values (before each of the n additions that move it). */
static int values_grain(const value_range *r, int n) {
  int g = 1 << 20;
  for (int i = 0; i < n; i++) {
    const logged_add *a = &rounding_log[i];
    if (r->x >= 0 && a->cat != r->x) continue;
    int v = grain_of(r->x < 0 ? a->total : a->value);
    if (v < g) g = v;
  }
  return g;
}

/* What holds for any number of steps, from its n logged additions: one binade (its grid, ties; a range
 * inside one binade has its first value's), else the grain of every value. */
static void range_finish(value_range *r, int n, double end) {
  int e = binade_of(r->lo);
  r->binade = e != 0 && e != 0x7ff && inside_binade_of(r->lo, r->lo) && inside_binade_of(r->hi, r->lo) &&
              grain_of(r->d) >= e - 1075 && !r->tie;
  r->limit = 0;
  if (r->binade) return;
  int g = grain_of(r->d) < grain_of(end) ? grain_of(r->d) : grain_of(end);
  if (r->add_grain < g) g = r->add_grain;
  int v = values_grain(r, n);
  if (v < g) g = v;
  if (g >= -1000 && g <= 960 && max2(fabs(r->lo), fabs(r->hi)) + r->top_add < 9007199254740992.0 * two_pow(g))
    r->limit = 9007199254740992.0 * two_pow(g);
}

/* Whether every addition moves the value alike for k more steps: every
 * value and sum inside one binade, on its grid, no addition half-way (a sum
 * then rounds to the value plus the addition rounded to the grid; a sum's
 * real value is within half a grid step of its rounded one, so inside the
 * binade too); or no rounding (all below 2^(53+g)). */
static int range_holds(const value_range *r, int k) {
  double shift = k * r->d, lo = r->lo + shift, hi = r->hi + shift;
  if (r->binade) return inside_binade_of(lo, r->lo) && inside_binade_of(hi, r->lo);
  return fabs(shift) < r->limit && max2(fabs(lo), fabs(hi)) + r->top_add < r->limit;
}

/* Whether to - from is exact (then it is the step's change, as a real number). */
static int change_exact(double from, double to) {
  if (from == 0 || to == 0) return 1;
  int g = grain_of(from) < grain_of(to) ? grain_of(from) : grain_of(to);
  if (g < -1000 || g > 960) return 0;
  return fabs(to - from) < 9007199254740992.0 * two_pow(g);
}

/* The most steps of k <= most that the value holds for: mostly all; else bisected (a value leaves its binade once). */
static int steps_held(const value_range *r, int most) {
  if (range_holds(r, most)) return most;
  int lo = 0, hi = most - 1;
  while (lo < hi) {
    int mid = hi - (hi - lo) / 2;
    if (range_holds(r, mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

int rounding_repeats(const sim *S, const double *cat0, double total0, int more) {
  int n = rounding_logged;
  rounding_logged = -1;
  if (n < 0 || rounding_overflow || !change_exact(total0, S->total)) return 0;
  double d[LLMEM_CAT_COUNT], d_total = S->total - total0;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) {
    if (!change_exact(cat0[x], S->cat[x])) return 0;
    d[x] = S->cat[x] - cat0[x];
  }
  /* each addition moves the total and its category (one that vanished in rounding, or turned a -0 into
   * a 0, moves nothing: none then); NaNs and infinities fail the ranges below */
  value_range r[1 + LLMEM_CAT_COUNT]; /* the total, then by category */
  range_start(&r[0], -1, d_total);
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) range_start(&r[1 + x], x, d[x]);
  for (int i = 0; i < n; i++) {
    const logged_add *a = &rounding_log[i];
    if (a->value + a->bytes == a->value) return 0;
    int a_grain = grain_of(a->bytes);
    range_add(&r[0], a->total, a->bytes, a_grain);
    range_add(&r[1 + a->cat], a->value, a->bytes, a_grain);
  }
  memcpy(rounding_d, d, sizeof d);
  rounding_d_total = d_total;
  int most = more;
  for (int x = 0; x <= LLMEM_CAT_COUNT; x++) {
    if (r[x].adds == 0) continue;
    double end = x ? S->cat[x - 1] : S->total;
    range_take(&r[x], end);
    range_finish(&r[x], n, end);
    most = steps_held(&r[x], most);
  }
  return most;
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
static void summarize(const stage_walk *W, const walk_sig *g, sched_op o, double hole, pass_summary *p,
                      unsigned valid) {
  sim Z;
  memset(&Z, 0, sizeof Z);
  Z.peak = -INFINITY;
  Z.hole = hole;
  Z.track = TRACK_GRAIN;
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
  return top + p->moved < 9007199254740992.0 * two_pow(k); /* 2^53 x 2^k */
}

/* x == floor(x) (NaN: no; infinities: yes) without floor, which x86-64 before SSE4.1 computes in software:
 * below 2^52 in magnitude the conversion to an integer truncates exactly, at or above it every double is whole. */
static int is_whole(double x) { return fabs(x) < 4503599627370496.0 ? x == (double)(int64_t)x : x == x; }

/* The same, first for the common case: whole bytes below 2^53. */
static int exact_from(const sim *S, const pass_summary *p) {
  int whole = p->grain >= 0 && is_whole(S->total);
  double top = fabs(S->total);
  for (int x = 0; x < LLMEM_CAT_COUNT && whole; x++) {
    whole = is_whole(S->cat[x]);
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

/* A double's bits into the hash: a word at a time (a byte at a time was a chain of a hundred multiplies a pass). */
static uint64_t mix_double(uint64_t h, double x) {
  uint64_t w;
  memcpy(&w, &x, sizeof w);
  h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
  return h ^ (h >> 32);
}

/* The memo's slot for the pass from S's state. */
static pass_memo *memo_slot(const sim *S, int row, int kind, int flag) {
  uint64_t h = ((uint64_t)(unsigned)row << 8 | (uint64_t)(unsigned)kind << 1 | (uint64_t)(unsigned)flag) + 1;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) h = mix_double(h, S->cat[x]);
  h = mix_double(h, S->total);
  h = mix_double(h, S->hole);
  h ^= h >> 29;
  return &memo[(h ^ (h >> 13)) & (PASS_MEMO_SIZE - 1)];
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
  Z.track = TRACK_ROUNDING; /* runs of alike layers added in one go where they round alike */
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

/* A shown pass walked with its runs of alike steps added in one go where
 * they round alike, their points replayed into the timeline. */
static void walk_pass_in_runs(const stage_walk *W, sim *S, const walk_sig *g, sched_op o) {
  int track = S->track;
  S->track = TRACK_ROUNDING;
  walk_pass(W, S, g, o);
  S->track = track;
}

int walk_pass_summarized(const stage_walk *W, sim *S, const walk_sig *g, sched_op o) {
  int shown = S->sink && S->sink->events;
  if (W->quant_held || S->blocks) return 0;
  if (shown && S->sink->stride < TIMELINE_COARSE_STRIDE) { /* a point a layer */
    walk_pass_in_runs(W, S, g, o);
    return 1;
  }
  int row = W->summary_row + o.chunk;
  pass_summary *p = &table[row][pass_kind(o)][pass_flag(g, o)][S->hole != 0];
  unsigned valid = slot_gen[row / W->v];
  if (p->gen != valid || p->hole_in != S->hole) summarize(W, g, o, S->hole, p, valid);
  if (!p->exact) return 0;
  if (!exact_from(S, p)) {
    if (shown) walk_pass_in_runs(W, S, g, o); /* its points are the walk's own */
    else walk_pass_remembered(W, S, g, o, row);
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
