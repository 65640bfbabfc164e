/* Replays an allocator trace through core/allocator.c (tools/trace_replay.h). */
#include "trace_replay.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"

#define GIB 1073741824.0
#define LINE_BYTES 512

typedef struct {
  replay_report *r;
  double real_reserved_bytes; /* since the baseline */
  int releasing;              /* inside a run of segment frees / unmaps */
  int started;                /* an event was replayed: the settings are fixed */
  long line;
} replay;

static int fail(replay *p, const char *what) {
  snprintf(p->r->error, sizeof p->r->error, "line %ld: %s", p->line, what);
  return -1;
}

static void reset_allocator(const replay_report *r) {
  alloc_settings s = {r->max_split_bytes, r->gc_threshold, INFINITY, r->expandable, 1e15};
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

static void add_mark(replay *p, const char *label) {
  replay_report *r = p->r;
  if (r->mark_count == REPLAY_MAX_MARKS + 1) return;
  replay_mark *m = &r->marks[r->mark_count++];
  snprintf(m->label, sizeof m->label, "%.*s", REPLAY_LABEL_BYTES - 1, label);
  m->real_reserved_bytes = m->real_peak_bytes = p->real_reserved_bytes;
  m->sim_reserved_bytes = m->sim_peak_bytes = alloc_get_stats()->reserved_bytes;
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

static int event(replay *p, char code, uint64_t addr, double bytes, int stream) {
  replay_report *r = p->r;
  if (stream < 0 || stream >= r->streams) return fail(p, "an event on a stream no `stream` line named");
  p->started = 1;
  r->events++;
  int releasing = code == 'x' || code == 'u';
  if (code == 'a') alloc_malloc(addr, bytes, stream), r->allocs++;
  else if (code == 'f') alloc_free(addr, 0), r->frees++;
  else if (code == 's' || code == 'm') p->real_reserved_bytes += bytes, r->segment_events++;
  else if (releasing) {
    /* the run released its cache (torch.cuda.empty_cache, or a failed cudaMalloc's retry): so does the replay */
    if (!p->releasing) alloc_empty_cache();
    p->real_reserved_bytes -= bytes, r->segment_events++;
  }
  r->real_segments_opened += code == 's';
  p->releasing = releasing;
  if (alloc_get_stats()->gave_up) return fail(p, "the simulated allocator's block table is full (core/allocator.h)");
  compare(p, code == 'a' || code == 'f');
  return 0;
}

/* A modelled trace's allocator reset (one per stage walked): both sides start from nothing again. */
static void restart(replay *p) {
  reset_allocator(p->r);
  p->real_reserved_bytes = 0;
  p->releasing = 0;
}

static int stream_line(replay *p, const char *rest) {
  int id = -1;
  if (sscanf(rest, "%d", &id) != 1 || id != p->r->streams) return fail(p, "streams are numbered 0, 1, ... in order");
  if (id >= ALLOC_STREAM_COUNT) return fail(p, "more CUDA streams than the simulator keeps apart (5)");
  p->r->streams++;
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
  if (strncmp(s, "mark ", 5) == 0) return add_mark(p, s + 5), 0;
  if (strncmp(s, "stream ", 7) == 0) return stream_line(p, s + 7);
  if (strncmp(s, "baseline ", 9) == 0)
    return sscanf(s + 9, "%lf %lf", &p->r->baseline_allocated_bytes, &p->r->baseline_reserved_bytes) == 2
               ? 0
               : fail(p, "baseline <allocated> <reserved>");
  if (strncmp(s, "end ", 4) == 0) return 0;
  trace_event e;
  if (!trace_event_of(s, &e)) return fail(p, "expected `<a|r|f|s|x|m|u|o> <addr> <bytes> <stream>`");
  if (e.code == 'r' || e.code == 'o') return p->r->events++, 0; /* a free waits for 'f'; an OOM is the run's */
  return event(p, e.code, (uint64_t)e.addr, e.bytes, e.stream);
}

int trace_event_of(const char *line, trace_event *e) {
  if (line[0] == 0 || line[1] != ' ' || !strchr("arfsxmuo", line[0])) return 0;
  e->code = line[0];
  return sscanf(line + 2, "%llu %lf %d", &e->addr, &e->bytes, &e->stream) == 3;
}

int replay_trace(FILE *in, replay_report *report) {
  memset(report, 0, sizeof *report);
  report->max_split_bytes = INFINITY;
  replay p = {report, 0, 0, 0, 0};
  reset_allocator(report);
  char buf[LINE_BYTES];
  while (fgets(buf, sizeof buf, in)) {
    p.line++;
    int whole = strchr(buf, '\n') != NULL || feof(in);
    if (parse_line(&p, buf) != 0) return -1;
    while (!whole && fgets(buf, sizeof buf, in)) whole = strchr(buf, '\n') != NULL; /* a long comment's rest */
  }
  if (p.line == 0) return fail(&p, "empty trace");
  add_mark(&p, "end");
  return 0;
}

static void row(FILE *out, const char *name, double real, double sim) {
  fprintf(out, "  %-26s %10.3f GiB %10.3f GiB   %+.1f %%\n", name, real / GIB, sim / GIB,
          real > 0 ? 100 * (sim / real - 1) : 0.0);
}

void replay_print(const replay_report *r, FILE *out) {
  fprintf(out, "%ld events: %ld requests, %ld frees, %ld segment events (%ld cudaMalloc), %d streams\n", r->events,
          r->allocs, r->frees, r->segment_events, r->real_segments_opened, r->streams);
  fprintf(out, "settings: expandable_segments %s, max_split_size %s\n", r->expandable ? "on" : "off",
          isfinite(r->max_split_bytes) ? "set" : "unset");
  if (r->baseline_reserved_bytes > 0 || r->baseline_allocated_bytes > 0)
    fprintf(out,
            "the recording started with %.3f GiB reserved, %.3f GiB allocated that the replay does not know: "
            "reserves are counted from there\n",
            r->baseline_reserved_bytes / GIB, r->baseline_allocated_bytes / GIB);
  fprintf(out, "  %-26s %14s %14s   %s\n", "", "recorded", "simulated", "simulated / recorded");
  row(out, "peak reserved", r->real_peak_reserved_bytes, r->sim_peak_reserved_bytes);
  for (int i = 0; i + 1 < r->mark_count; i++) {
    char name[96];
    snprintf(name, sizeof name, "%.20s: peak", r->marks[i].label);
    row(out, name, r->marks[i].real_peak_bytes, r->marks[i].sim_peak_bytes);
  }
  const replay_mark *end = &r->marks[r->mark_count - 1];
  row(out, "reserved at the end", end->real_reserved_bytes, end->sim_reserved_bytes);
  if (r->first_difference_line)
    fprintf(out, "the reserves first differ at line %ld (in \"%s\"): recorded %.3f GiB, simulated %.3f GiB\n",
            r->first_difference_line, r->first_mark, r->first_real_reserved_bytes / GIB,
            r->first_sim_reserved_bytes / GIB);
  else fprintf(out, "the reserves agree after every request and free\n");
}
