/* The order of one pipeline rank's passes (forward or backward of one
 * micro-batch through one virtual chunk), and where that order repeats. */
#include "sim.h"

void schedule_init(schedule *s, const plan *pl, int stage) {
  s->p = (int)pl->pp;
  s->v = (int)pl->vpp;
  s->m = (int)pl->grad_accum;
  s->g = (int)pl->vpp_group; /* interleaved: micro-batches per virtual stage in a row */
  s->stage = stage;
  s->warm = 0;
  s->period_begin = s->period_ops = s->period_count = 0;
  if (s->p == 1) { /* gradient accumulation: forward, backward, repeat */
    s->kind = SCHED_ACCUM;
    s->op_count = 2 * s->m;
  } else if (pl->schedule == LLMEM_PP_GPIPE) {
    s->kind = SCHED_GPIPE;
    s->op_count = 2 * s->m;
  } else if (pl->schedule != LLMEM_PP_INTERLEAVED || s->v == 1) {
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
  return (sched_op){backward, first + offset % size, backward ? s->v - 1 - chunk : chunk};
}

sched_op schedule_op(const schedule *s, int index) {
  int m = s->m;
  switch (s->kind) {
    case SCHED_ACCUM: return (sched_op){index % 2, index / 2, 0};
    case SCHED_GPIPE: return index < m ? (sched_op){0, index, 0} : (sched_op){1, index - m, 0};
    default: break;
  }
  int total = s->op_count / 2, warm = s->warm, steady_end = warm + 2 * (total - warm);
  int backward, k;
  if (index < warm) backward = 0, k = index;
  else if (index < steady_end)
    backward = (index - warm) % 2, k = backward ? (index - warm) / 2 : warm + (index - warm) / 2;
  else backward = 1, k = total - warm + (index - steady_end);
  if (s->kind == SCHED_1F1B) return (sched_op){backward, k, 0};
  return virtual_op(s, backward, k);
}

static int min2i(int a, int b) { return a < b ? a : b; }

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
