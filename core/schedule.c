/* The order of one pipeline rank's passes (forward or backward of one
 * micro-batch through one virtual chunk), and where that order repeats. */
#include <string.h>

#include "sim.h"

/* ---- V schedules: two chunks per rank (chunk 0 is model chunk r, chunk 1
 * model chunk 2p - 1 - r; layout.c), their order as segments, each one
 * pattern of passes repeated. A pattern is written "F0 I1 W1": F forward,
 * B whole backward, I backward for the inputs, W backward for the weights of
 * the oldest I of that chunk, Wq of the oldest I of the rank (DualPipeV's
 * FIFO WeightGradStore), each followed by its chunk. ---- */
enum { SEG_F, SEG_B, SEG_I, SEG_W, SEG_WQ };

static int seg_class(int kind) { return kind == SEG_F ? 0 : kind == SEG_W || kind == SEG_WQ ? 2 : 1; }

/* The passes of a copy alike to the one at pos (the same class and chunk; queued W: all), and those before it. */
static void seg_alike(sched_seg *g, int pos) {
  int per = 0, before = 0, kind = g->kind[pos], c = g->chunk[pos];
  for (int j = 0; j < g->n; j++) {
    int alike = kind == SEG_WQ ? g->kind[j] == SEG_WQ : seg_class(g->kind[j]) == seg_class(kind) && g->chunk[j] == c;
    if (alike) per++, before += j < pos;
  }
  g->per[pos] = (unsigned char)per, g->before[pos] = (unsigned char)before;
}

static void add_seg(schedule *s, int reps, const char *pattern, int counts[3][2], int *queued) {
  if (reps <= 0) return;
  sched_seg *g = &s->seg[s->seg_count++];
  g->start = s->op_count, g->reps = reps, g->n = 0;
  memcpy(g->count, counts, sizeof g->count);
  g->queued = *queued;
  for (const char *c = pattern; *c; c++) {
    if (*c == ' ') continue;
    int kind = *c == 'F' ? SEG_F : *c == 'B' ? SEG_B : *c == 'I' ? SEG_I : c[1] == 'q' ? SEG_WQ : SEG_W;
    c++;
    g->kind[g->n] = (unsigned char)kind;
    g->chunk[g->n] = (unsigned char)(kind == SEG_WQ ? 0 : *c - '0');
    if (kind == SEG_WQ) *queued += reps;
    else counts[seg_class(kind)][g->chunk[g->n]] += reps;
    g->n++;
  }
  for (int pos = 0; pos < g->n; pos++) seg_alike(g, pos);
  s->op_count += reps * g->n;
}

static void schedule_v_init(schedule *s, int dualpipe) {
  int p = s->p, m = s->m, r = s->stage, counts[3][2] = {{0}}, queued = 0;
  s->kind = SCHED_V;
  s->op_count = s->seg_count = 0;
  if (!dualpipe) {
    /* ZB-V (Qi et al. 2024, arXiv 2405.15362 §4; the paper's generator,
     * sail-sg/zero-bubble-pipeline-parallelism zbv.py @39f2c18, caps each
     * rank at 2p chunk activations): the order PyTorch writes down for equal
     * F, B and W, pytorch/pytorch torch/distributed/pipelining/schedules.py
     * @1fd7abc ScheduleZBVZeroBubble._calculate_single_rank_operations */
    add_seg(s, 2 * (p - r) - 1, "F0", counts, &queued);                  /* warmup_n1 */
    add_seg(s, r, "F1 F0", counts, &queued);                             /* warmup_n2 */
    add_seg(s, p - r, "F1 I1 W1", counts, &queued);                      /* warmup_n3 */
    add_seg(s, m - 2 * p + r + 1, "F0 I0 W0 F1 I1 W1", counts, &queued); /* stable, while f0 < m */
    add_seg(s, p - r - 1, "I0 W0 F1 I1 W1", counts, &queued);            /* stable, while f1 < f0 */
    add_seg(s, r, "I0 I1", counts, &queued);                             /* cooldown_n1 */
    add_seg(s, p - r, "I0 W0", counts, &queued);                         /* cooldown_n2 */
    add_seg(s, r, "W1", counts, &queued);
    add_seg(s, r, "W0", counts, &queued);
    s->i_head[0] = s->i_head[1] = m; /* every backward is split */
    s->whole_b[0] = s->whole_b[1] = 0;
    return;
  }
  /* DualPipeV: deepseek-ai/DualPipe dualpipe/dualpipev.py @3da1bbe
   * DualPipeV.step, steps 1-8 (F0B1 / F1B0 pairs run one after the other, as
   * _forward_backward_compute_chunk does without overlapped_forward_backward) */
  int half = (r + 1) / 2;                                        /* step 6: zero bubble from i == step_6 // 2 */
  add_seg(s, 2 * (p - r - 1), "F0", counts, &queued);            /* step 1 */
  add_seg(s, r + 1, "F0 F1", counts, &queued);                   /* step 2 */
  add_seg(s, p - r - 1, "I1 W1 F1", counts, &queued);            /* step 3 */
  add_seg(s, m - 2 * p + r + 1, "F0 B1 F1 B0", counts, &queued); /* step 4 */
  add_seg(s, p - r - 1, "B1 F1 B0", counts, &queued);            /* step 5 */
  add_seg(s, half, "B1 B0", counts, &queued);                    /* step 6, i < step_6 // 2 */
  add_seg(s, 1, r % 2 ? "I1 I0" : "B1 I0", counts, &queued);     /* i == step_6 // 2 */
  add_seg(s, r - half, "I1 I0", counts, &queued);
  s->w_base[0] = counts[2][0], s->w_base[1] = counts[2][1];
  add_seg(s, p - r - 1, "Wq I0", counts, &queued); /* step 7 */
  add_seg(s, r + 1, "Wq", counts, &queued);        /* step 8 */
  s->i_head[0] = 0, s->i_head[1] = p - r - 1;
  s->whole_b[0] = (m - 2 * p + r + 1) + (p - r - 1) + half;
  s->whole_b[1] = s->whole_b[0] + (r % 2 == 0);
}

/* DualPipeV's queue of weight passes after step 6: step 6's split backwards
 * (odd r: I1 I0 pairs; even r: I0, then pairs), then step 7's I0. */
static int queue_chunk(const schedule *s, int e) {
  int r = s->stage;
  if (e > r) return 0;
  return r % 2 ? e % 2 == 0 : e % 2 == 1;
}

/* Entries of chunk c among the queue's first e (queue_chunk, counted in closed form). */
static int queued_before(const schedule *s, int e, int c) {
  int r = s->stage, n = e < r + 1 ? e : r + 1; /* entries 0..r alternate, the rest are chunk 0 */
  int ones = r % 2 ? (n + 1) / 2 : n / 2;
  return c ? ones : n - ones + (e > r + 1 ? e - (r + 1) : 0);
}

/* The segment holding pass `index` (starts increase: add_seg skips empty ones). */
static const sched_seg *seg_at(const schedule *s, int index) {
  int lo = 0, hi = s->seg_count - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (s->seg[mid].start <= index) lo = mid;
    else hi = mid - 1;
  }
  return &s->seg[lo];
}

static sched_op v_op(const schedule *s, int index) {
  const sched_seg *g = seg_at(s, index);
  int local = index - g->start, copy = local / g->n, pos = local % g->n;
  int kind = g->kind[pos], c = g->chunk[pos], cls = seg_class(kind), k;
  if (kind == SEG_WQ) {
    int e = g->queued + copy * g->per[pos] + g->before[pos];
    c = queue_chunk(s, e);
    k = s->w_base[c] + queued_before(s, e, c);
  } else {
    k = g->count[cls][c] + copy * g->per[pos] + g->before[pos];
  }
  if (cls == 2) return (sched_op){1, k < s->i_head[c] ? k : k + s->whole_b[c], c, SPLIT_W};
  return (sched_op){kind != SEG_F, k, c, kind == SEG_I ? SPLIT_I : 0};
}

/* A segment's copies from `copy` on whose queue entries all fall in the
 * alternating part (entries 0..r) or all after it, whole copies only; a
 * copy with one queue entry repeats every second copy while they alternate. */
static void queue_run(const schedule *s, const sched_seg *g, int copy, int *length, int *reps) {
  int per = 0;
  for (int j = 0; j < g->n; j++) per += g->kind[j] == SEG_WQ;
  int e = g->queued + copy * per, r = s->stage, left = g->reps - copy;
  if (e > r) { /* all chunk 0 */
    *length = g->n, *reps = left;
    return;
  }
  int span = per % 2 ? 2 : 1;             /* copies per repeat of the chunk sequence */
  int whole = (r + 1 - e) / (per * span); /* repeats whose entries all stay within 0..r */
  if (whole > left / span) whole = left / span;
  if (whole < 1) *length = 1, *reps = 1;
  else *length = span * g->n, *reps = whole;
}

static void v_run(const schedule *s, int index, int *length, int *reps) {
  const sched_seg *g = seg_at(s, index);
  int local = index - g->start, queue = 0;
  for (int j = 0; j < g->n; j++) queue |= g->kind[j] == SEG_WQ;
  if (local % g->n) *length = 1, *reps = 1; /* inside a copy: pass by pass */
  else if (queue) queue_run(s, g, local / g->n, length, reps);
  else *length = g->n, *reps = g->reps - local / g->n;
}

void schedule_init(schedule *s, const plan *pl, int stage) {
  s->p = (int)pl->in->pp;
  s->v = (int)pl->in->vpp;
  s->m = (int)pl->grad_accum;
  s->g = (int)pl->vpp_group; /* interleaved: micro-batches per virtual stage in a row */
  s->stage = stage;
  s->warm = 0;
  s->period_begin = s->period_ops = s->period_count = 0;
  if (s->p == 1) { /* gradient accumulation: forward, backward, repeat */
    s->kind = SCHED_ACCUM;
    s->op_count = 2 * s->m;
  } else if ((int)pl->in->pp_schedule == LLMEM_PP_GPIPE) {
    s->kind = SCHED_GPIPE;
    s->op_count = 2 * s->m;
  } else if (plan_dualpipe(pl)) {
    /* DualPipe: deepseek-ai/DualPipe dualpipe/dualpipe.py @3da1bbe
     * DualPipe.step is DualPipeV.step with num_half_ranks for num_ranks,
     * half_rank = min(r, p - 1 - r) for rank and half_num_chunks for
     * num_chunks (each direction's micro-batches through one chunk): rank r
     * walks DualPipeV's order of rank h over p/2 ranks and m/2 micro-batches
     * per chunk; chunk 1's micro-batch k is the other direction's */
    s->p = s->p / 2, s->m = s->m / 2;
    s->stage = stage < (int)pl->in->pp - 1 - stage ? stage : (int)pl->in->pp - 1 - stage;
    schedule_v_init(s, 1);
  } else if (plan_v_shape(pl)) {
    schedule_v_init(s, (int)pl->in->pp_schedule == LLMEM_PP_DUALPIPE_V);
  } else if ((int)pl->in->pp_schedule != LLMEM_PP_INTERLEAVED || s->v == 1) {
    /* 1F1B (and zero-bubble H1, same memory): warm-up p - r - 1 forwards */
    s->kind = SCHED_1F1B;
    s->warm = s->p - stage - 1;
    if (s->warm > s->m) s->warm = s->m;
    s->op_count = 2 * s->m;
  } else {
    /* Interleaved (Megatron schedules.py get_pp_rank_microbatches): warm-up
     * 2 (p - r - 1) + (v - 1) p virtual forwards, capped at m v */
    s->kind = SCHED_INTERLEAVED;
    int total = s->m * s->v;
    s->warm = 2 * (s->p - stage - 1) + (s->v - 1) * s->g;
    if (s->warm > total) s->warm = total;
    s->op_count = 2 * total;
    /* the chunks of the steady pairs repeat every g v pairs while the groups are whole */
    s->period_begin = s->warm;
    s->period_ops = 2 * s->g * s->v;
    s->period_count = s->m % s->g == 0 ? (total - s->warm) / (s->g * s->v) : 0;
  }
}

/* Megatron's schedule table (schedules.py get_schedule_table): micro-batches in
 * groups of g, each group through every chunk in turn; the last group (the
 * first whose end reaches m) holds what is left, at most g. Virtual micro-batch
 * k: its group's first micro-batch, the group's size, k's offset in it. */
static void group_of(const schedule *s, int k, int *first_mb, int *size, int *offset) {
  int g = s->g, v = s->v;
  int last = (s->m + g - 1) / g - 1; /* the last group's index */
  int group = k / (g * v) < last ? k / (g * v) : last;
  *first_mb = group * g;
  *size = group < last ? g : s->m - group * g;
  *offset = k - *first_mb * v;
}

static sched_op virtual_op(const schedule *s, int backward, int k) {
  int first, size, offset;
  group_of(s, k, &first, &size, &offset);
  int chunk = offset / size;
  return (sched_op){backward, first + offset % size, backward ? s->v - 1 - chunk : chunk, 0};
}

sched_op schedule_op(const schedule *s, int index) {
  int m = s->m;
  switch (s->kind) {
    case SCHED_ACCUM: return (sched_op){index % 2, index / 2, 0, 0};
    case SCHED_GPIPE: return index < m ? (sched_op){0, index, 0, 0} : (sched_op){1, index - m, 0, 0};
    case SCHED_V: return v_op(s, index);
    default: break;
  }
  int total = s->op_count / 2, warm = s->warm, steady_end = warm + 2 * (total - warm);
  int backward, k;
  if (index < warm) backward = 0, k = index;
  else if (index < steady_end)
    backward = (index - warm) % 2, k = backward ? (index - warm) / 2 : warm + (index - warm) / 2;
  else backward = 1, k = total - warm + (index - steady_end);
  if (s->kind == SCHED_1F1B) return (sched_op){backward, k, 0, 0};
  return virtual_op(s, backward, k);
}

static int min2i(int a, int b) { return a < b ? a : b; }

int schedule_first_virtual(const schedule *s, int backward, int chunk) {
  if (s->kind != SCHED_INTERLEAVED) return 0;
  int first, size, offset;
  group_of(s, 0, &first, &size, &offset); /* the first group runs every chunk in turn, size passes each */
  return (backward ? s->v - 1 - chunk : chunk) * size;
}

/* Passes left before virtual index k reaches a new chunk. */
static int to_chunk_end(const schedule *s, int k) {
  if (s->kind != SCHED_INTERLEAVED) return 1 << 30;
  int first, size, offset;
  group_of(s, k, &first, &size, &offset);
  return size - offset % size;
}

void schedule_run(const schedule *s, int index, int *length, int *reps) {
  int m = s->m;
  if (s->kind == SCHED_ACCUM) {
    *length = 2, *reps = (s->op_count - index) / 2;
    return;
  }
  if (s->kind == SCHED_GPIPE) {
    *length = 1, *reps = index < m ? m - index : 2 * m - index;
    return;
  }
  if (s->kind == SCHED_V) {
    v_run(s, index, length, reps);
    return;
  }
  int total = s->op_count / 2, warm = s->warm, steady_end = warm + 2 * (total - warm);
  *length = 1;
  if (index < warm) { /* warm-up forwards, chunk by chunk */
    *reps = min2i(warm - index, to_chunk_end(s, index));
  } else if (index >= steady_end) { /* cool-down backwards */
    int b = total - warm + (index - steady_end);
    *reps = min2i(s->op_count - index, to_chunk_end(s, b));
  } else { /* steady pairs (forward f, backward b) while both chunks hold */
    int pair = (index - warm) / 2, f = warm + pair, b = pair;
    int n = min2i(total - warm - pair, min2i(to_chunk_end(s, f), to_chunk_end(s, b)));
    if (s->period_count > 0) n = min2i(n, s->period_ops / 2 - pair % (s->period_ops / 2)); /* not across periods */
    *length = 2, *reps = n;
  }
}
