/* Replays an allocator trace through core/allocator.c (tools/trace_replay.h). */
#include "trace_replay.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"

#define GIB 1073741824.0
#define LINE_BYTES 512

#define PENDING_MAX 65536

typedef struct {
  replay_report *r;
  double real_reserved_bytes; /* since the baseline */
  int started;                /* an event was replayed since the last reset: the settings are fixed */
  int deferred;               /* a segment release followed completions: they wait for the next request */
  long line;
  uint64_t pending[PENDING_MAX]; /* frees requested ('r'), not completed */
  int pending_count;
  uint64_t completed[PENDING_MAX]; /* their completions ('f') read, not applied yet */
  int completed_count;
} replay;

static int fail(replay *p, const char *what) {
  snprintf(p->r->error, sizeof p->r->error, "line %ld: %s", p->line, what);
  return -1;
}

static void reset_allocator(const replay_report *r) {
  alloc_settings s = {r->max_split_bytes, r->gc_threshold, r->capacity_bytes, r->expandable, 1e15};
  alloc_reset(&s);
}

/* "# PYTORCH_CUDA_ALLOC_CONF expandable_segments:True,max_split_size_mb:128": the settings the run had */
static void read_alloc_conf(replay *p, const char *conf) {
  replay_report *r = p->r;
  const char *at;
  if ((at = strstr(conf, "expandable_segments:")) != NULL) r->expandable = strncmp(at + 20, "True", 4) == 0;
  if ((at = strstr(conf, "max_split_size_mb:")) != NULL) r->max_split_bytes = atof(at + 18) * 1048576.0;
  if ((at = strstr(conf, "garbage_collection_threshold:")) != NULL) r->gc_threshold = atof(at + 29);
  if (!p->started) reset_allocator(r);
}

static replay_mark *current_mark(replay_report *r) { return r->mark_count ? &r->marks[r->mark_count - 1] : NULL; }

static void set_mark(const replay *p, replay_mark *m, const char *label) {
  snprintf(m->label, sizeof m->label, "%.*s", REPLAY_LABEL_BYTES - 1, label);
  m->real_reserved_bytes = m->real_peak_bytes = p->real_reserved_bytes;
  m->sim_reserved_bytes = m->sim_peak_bytes = alloc_get_stats()->reserved_bytes;
}

/* Past REPLAY_MAX_MARKS a phase folds into the last one kept (its peak covers them). */
static void add_mark(replay *p, const char *label) {
  replay_report *r = p->r;
  if (r->mark_count == REPLAY_MAX_MARKS) r->marks_folded++;
  else set_mark(p, &r->marks[r->mark_count++], label);
}

/* After each event: the peaks, and after a request or a free whether the two reserves still agree. */
static void compare(replay *p, int request_or_free) {
  replay_report *r = p->r;
  double real = p->real_reserved_bytes, sim = alloc_get_stats()->reserved_bytes;
  r->real_peak_reserved_bytes = fmax(r->real_peak_reserved_bytes, real);
  r->sim_peak_reserved_bytes = fmax(r->sim_peak_reserved_bytes, alloc_get_stats()->peak_reserved_bytes);
  r->sim_peak_allocated_bytes = fmax(r->sim_peak_allocated_bytes, alloc_get_stats()->peak_allocated_bytes);
  replay_mark *m = current_mark(r);
  if (m) m->real_peak_bytes = fmax(m->real_peak_bytes, real), m->sim_peak_bytes = fmax(m->sim_peak_bytes, sim);
  if (!request_or_free || r->first_difference_line || real == sim) return;
  r->first_difference_line = p->line;
  r->first_real_reserved_bytes = real;
  r->first_sim_reserved_bytes = sim;
  snprintf(r->first_mark, sizeof r->first_mark, "%.*s", REPLAY_LABEL_BYTES - 1,
           m ? m->label : "(before the first mark)");
}

/* 'r': the block waits for other streams (pending, as in c10 and core/allocator.c) until its 'f'. */
static int request_free(replay *p, uint64_t tag) {
  if (p->pending_count == PENDING_MAX) return fail(p, "too many frees requested and not completed");
  alloc_free(tag, 1);
  p->pending[p->pending_count++] = tag;
  return 0;
}

static int take_pending(replay *p, uint64_t tag) {
  for (int i = 0; i < p->pending_count; i++)
    if (p->pending[i] == tag) {
      p->pending[i] = p->pending[--p->pending_count];
      return 1;
    }
  return 0;
}

/* The completions read since the last other event, applied. A run of them that a segment release follows was
 * the release's own (c10 release_cached_blocks and core/allocator.c release_all_cached return the pending blocks
 * first, inside the request that failed to find one): they wait for that request, whose replay makes its own
 * release. */
static void complete_frees(replay *p) {
  for (int i = 0; i < p->completed_count; i++) alloc_free_completed(p->completed[i]);
  p->completed_count = 0;
}

/* `shift <count>`: llmem renamed its live blocks' owners <count> micro-batches on (alloc_shift_micro_batches). */
static int shift(replay *p, const char *rest) {
  double count;
  int used = 0;
  if (sscanf(rest, "%lf%n", &count, &used) != 1 || rest[used] != 0 || !(count >= 0 && count < 4294967296.0))
    return fail(p, "shift <micro-batches>");
  complete_frees(p);
  alloc_shift_micro_batches((uint32_t)count);
  p->r->shifted += (long)count;
  return 0;
}

static int event(replay *p, const trace_event *e) {
  replay_report *r = p->r;
  if (e->stream >= r->streams) return fail(p, "an event on a stream no `stream` line named");
  p->started = 1;
  r->events++;
  uint64_t tag = (uint64_t)e->addr;
  int releasing = e->code == 'x' || e->code == 'u';
  if (e->code == 'f' && take_pending(p, tag)) { /* completed: applied before the next other event */
    p->completed[p->completed_count++] = tag;
    r->frees++;
    return 0;
  }
  if (releasing && p->completed_count) p->deferred = 1;
  if (!releasing && !p->deferred) complete_frees(p);
  switch (e->code) {
    case 'a':
      alloc_malloc(tag, e->bytes, e->stream);
      r->allocs++;
      if (p->deferred) p->deferred = 0, complete_frees(p); /* the release's request: its own sync came first */
      break;
    case 'r':
      if (request_free(p, tag) != 0) return -1;
      break;
    case 'f':
      alloc_free(tag, 0);
      r->frees++;
      break;
    case 's':
    case 'm':
      p->real_reserved_bytes += e->bytes;
      r->segment_events++;
      r->real_segments_opened += e->code == 's';
      break;
    default: /* 'x', 'u': the replay's allocator releases on its own, from the capacity and the settings (and at
              * `mark empty_cache`); where the run's releases differ, the reserves part */
      p->real_reserved_bytes -= e->bytes;
      r->segment_events++;
  }
  if (alloc_get_stats()->gave_up) return fail(p, "the simulated allocator's block table is full (core/allocator.h)");
  compare(p, e->code == 'a' || e->code == 'f');
  return 0;
}

/* A modelled trace's allocator reset (one per stage walked): both sides start from nothing again. */
static void restart(replay *p) {
  reset_allocator(p->r);
  p->real_reserved_bytes = 0;
  p->started = 0;
  p->pending_count = p->completed_count = p->deferred = 0;
}

static int stream_line(replay *p, const char *rest) {
  int id = -1;
  if (sscanf(rest, "%d", &id) != 1 || id != p->r->streams) return fail(p, "streams are numbered 0, 1, ... in order");
  if (id >= ALLOC_STREAM_COUNT) return fail(p, "more CUDA streams than the simulator keeps apart (5)");
  p->r->streams++;
  return 0;
}

/* Two non-negative finite numbers and nothing else ("baseline", "end"); `capacity` takes one. */
static int read_bytes(const char *rest, double *a, double *b) {
  int used = 0;
  int n = b ? sscanf(rest, "%lf %lf%n", a, b, &used) : sscanf(rest, "%lf%n", a, &used);
  return n == (b ? 2 : 1) && rest[used] == 0 && isfinite(*a) && *a >= 0 && (!b || (isfinite(*b) && *b >= 0));
}

static int header_line(replay *p, const char *s) {
  replay_report *r = p->r;
  double unused;
  if (strncmp(s, "baseline ", 9) == 0)
    return read_bytes(s + 9, &r->baseline_allocated_bytes, &r->baseline_reserved_bytes)
               ? 0
               : fail(p, "baseline <allocated> <reserved>");
  if (strncmp(s, "end ", 4) == 0)
    return read_bytes(s + 4, &unused, &unused) ? 0 : fail(p, "end <allocated> <reserved>");
  if (!read_bytes(s + 9, &r->capacity_bytes, NULL)) return fail(p, "capacity <bytes>");
  if (!p->started) reset_allocator(r);
  return 0;
}

static int parse_line(replay *p, char *s) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = 0;
  if (n == 0) return 0;
  if (s[0] == '#') {
    const char *conf = strstr(s, "PYTORCH_CUDA_ALLOC_CONF");
    if (conf) read_alloc_conf(p, conf);
    return 0;
  }
  if (p->line == 1 && (unsigned char)s[0] == 0x1f) return fail(p, "a gzip file: zcat it into llmem_trace_replay -");
  if (p->line == 1) return strcmp(s, "llmem-alloc-trace 1") == 0 ? 0 : fail(p, "not an llmem-alloc-trace 1 file");
  if (strcmp(s, "mark allocator reset") == 0) restart(p); /* llmem's next stage walk starts afresh */
  if (strcmp(s, "mark empty_cache") == 0) alloc_empty_cache();
  if (strncmp(s, "mark ", 5) == 0) return add_mark(p, s + 5), 0;
  if (strncmp(s, "stream ", 7) == 0) return stream_line(p, s + 7);
  if (strncmp(s, "shift ", 6) == 0) return shift(p, s + 6);
  if (strncmp(s, "baseline ", 9) == 0 || strncmp(s, "end ", 4) == 0 || strncmp(s, "capacity ", 9) == 0)
    return header_line(p, s);
  trace_event e;
  if (!trace_event_of(s, &e))
    return fail(p, "expected `<a|r|f|s|x|m|u|o> <addr> <bytes> <stream>` (bytes finite and >= 0, stream >= 0)");
  if (e.code == 'o') return p->r->events++, 0; /* the run's out-of-memory: the replay's allocator finds its own */
  return event(p, &e);
}

int trace_event_of(const char *line, trace_event *e) {
  int used = 0;
  if (line[0] == 0 || line[1] != ' ' || !strchr("arfsxmuo", line[0]) || line[2] == '-') return 0;
  e->code = line[0];
  return sscanf(line + 2, "%llu %lf %d%n", &e->addr, &e->bytes, &e->stream, &used) == 3 && line[2 + used] == 0 &&
         isfinite(e->bytes) && e->bytes >= 0 && e->stream >= 0;
}

int replay_trace(FILE *in, replay_report *report) {
  static replay p; /* large (the pending frees): not on the stack */
  memset(report, 0, sizeof *report);
  memset(&p, 0, sizeof p);
  report->max_split_bytes = INFINITY;
  report->capacity_bytes = INFINITY;
  p.r = report;
  reset_allocator(report);
  char buf[LINE_BYTES];
  while (fgets(buf, sizeof buf, in)) {
    p.line++;
    int whole = strchr(buf, '\n') != NULL || feof(in);
    if (!whole && buf[0] != '#') return fail(&p, "a line longer than the format's");
    if (parse_line(&p, buf) != 0) return -1;
    while (!whole && fgets(buf, sizeof buf, in)) whole = strchr(buf, '\n') != NULL; /* a long comment's rest */
  }
  if (p.line == 0) return fail(&p, "empty trace");
  complete_frees(&p);
  set_mark(&p, &report->end, "end");
  return 0;
}

static void row(FILE *out, const char *name, double real, double sim) {
  fprintf(out, "  %-26s %10.3f GiB %10.3f GiB   %+.1f %%\n", name, real / GIB, sim / GIB,
          real > 0 ? 100 * (sim / real - 1) : 0.0);
}

void replay_print(const replay_report *r, FILE *out) {
  fprintf(out, "%ld events: %ld requests, %ld frees, %ld segment events (%ld cudaMalloc), %d streams\n", r->events,
          r->allocs, r->frees, r->segment_events, r->real_segments_opened, r->streams);
  fprintf(out, "settings: expandable_segments %s, max_split_size %s, capacity %s\n", r->expandable ? "on" : "off",
          isfinite(r->max_split_bytes) ? "set" : "unset", isfinite(r->capacity_bytes) ? "given" : "none (no limit)");
  if (r->shifted)
    fprintf(out, "llmem passed over %ld micro-batches of a repeating cycle (their owners renamed, `shift`)\n",
            r->shifted);
  if (r->baseline_reserved_bytes > 0 || r->baseline_allocated_bytes > 0)
    fprintf(out,
            "the recording started with %.3f GiB reserved, %.3f GiB allocated that the replay does not know: "
            "reserves are counted from there\n",
            r->baseline_reserved_bytes / GIB, r->baseline_allocated_bytes / GIB);
  fprintf(out, "  %-26s %14s %14s   %s\n", "", "recorded", "simulated", "simulated / recorded");
  row(out, "peak reserved", r->real_peak_reserved_bytes, r->sim_peak_reserved_bytes);
  for (int i = 0; i < r->mark_count; i++) {
    char name[96];
    snprintf(name, sizeof name, "%.20s: peak", r->marks[i].label);
    row(out, name, r->marks[i].real_peak_bytes, r->marks[i].sim_peak_bytes);
  }
  if (r->marks_folded) fprintf(out, "  (%ld more marks: their phases count in the last row)\n", r->marks_folded);
  row(out, "reserved at the end", r->end.real_reserved_bytes, r->end.sim_reserved_bytes);
  if (r->first_difference_line)
    fprintf(out, "the reserves first differ at line %ld (in \"%s\"): recorded %.3f GiB, simulated %.3f GiB\n",
            r->first_difference_line, r->first_mark, r->first_real_reserved_bytes / GIB,
            r->first_sim_reserved_bytes / GIB);
  else fprintf(out, "the reserves agree after every request and free\n");
}
