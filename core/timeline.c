/* The running state of one rank's step and its timeline: the peak is the
 * maximum of the running sum (docs/ARCHITECTURE.md "The peak is simulated"). */
#include <string.h>

#include "sim.h"

static void sink_push(timeline_sink *s, const llmem_event *ev) {
  if (s->count == s->capacity) {
    /* keep the larger of each pair: the peak survives downsampling */
    for (int i = 0; i < s->capacity / 2; i++) {
      const llmem_event *a = &s->events[2 * i], *b = &s->events[2 * i + 1];
      int skipped = a->skipped_ops + b->skipped_ops;
      s->events[i] = b->total_bytes > a->total_bytes ? *b : *a;
      s->events[i].skipped_ops = skipped;
    }
    s->count = s->capacity / 2;
    s->stride *= 2;
  }
  s->events[s->count++] = *ev;
}

void timeline_push(timeline_sink *s, const llmem_event *ev) {
  if (s && s->events) sink_push(s, ev);
}

void sim_event(sim *S, int phase, int mb, int layer) { sim_event_of(S, S->total, S->cat, phase, mb, layer); }

void sim_event_of(sim *S, double total, const double *cat, int phase, int mb, int layer) {
  timeline_sink *s = S->sink;
  if (!s->events) return;
  llmem_event ev;
  ev.total_bytes = total;
  ev.reserved_bytes = S->blocks ? alloc_get_stats()->reserved_bytes : 0;
  memcpy(ev.category_bytes, cat, sizeof ev.category_bytes);
  ev.phase = phase;
  ev.micro_batch = mb;
  ev.layer = layer;
  ev.skipped_ops = 0;
  S->group_skipped += S->skipped;
  S->skipped = 0;
  if (S->group_n == 0 || total > S->group_best.total_bytes) S->group_best = ev;
  if (++S->group_n >= s->stride) sim_flush(S);
}

void sim_skip(sim *S, int passes) { S->skipped += passes; }

void sim_flush(sim *S) {
  if (!S->sink || !S->sink->events || S->group_n == 0) return;
  S->group_best.skipped_ops = S->group_skipped;
  sink_push(S->sink, &S->group_best);
  S->group_n = 0;
  S->group_skipped = 0;
}

/* Change one category; the running total follows (adding zero changes no bit: most models skip most additions). */
void sim_add(sim *S, int cat, double bytes) {
  if (bytes == 0) return;
  if (S->track) sim_track(S, cat, bytes);
  S->cat[cat] += bytes;
  S->total += bytes;
}

/* A transient: present for one recorded instant. */
void sim_transient(sim *S, int cat, double bytes) {
  sim_add(S, cat, bytes);
  if (bytes > S->largest_transient) S->largest_transient = bytes;
}

/* A tensor: the category's running sum and, when the allocator listens, its request. */
void sim_take(sim *S, int cat, uint64_t tag, double bytes, int stream) {
  sim_add(S, cat, bytes);
  sim_block(S, tag, bytes, stream);
}

void sim_take_transient(sim *S, int cat, uint64_t tag, double bytes, int stream) {
  sim_transient(S, cat, bytes);
  sim_block(S, tag, bytes, stream);
}

void sim_give(sim *S, int cat, uint64_t tag, double bytes, int cross_stream) {
  sim_add(S, cat, -bytes);
  sim_unblock(S, tag, cross_stream);
}
