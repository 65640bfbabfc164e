/* llmem's own request stream as a trace, and two traces' requests compared by size (tools/trace_replay.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "llmem.h"
#include "trace_replay.h"

#define LINE_BYTES 512
#define ROWS_SHOWN 30

static const char *const STREAM_NAMES[ALLOC_STREAM_COUNT] = {"compute", "all_gather", "reduce_scatter", "p2p", "h2d"};
static FILE *model_out;
static int stream_id[ALLOC_STREAM_COUNT], streams_seen;

static void write_event(char code, uint64_t tag, double bytes, int stream) {
  if (code == 'R') { /* a stage walk starts: its allocator's capacity */
    fprintf(model_out, "mark allocator reset\n");
    if (isfinite(bytes)) fprintf(model_out, "capacity %.17g\n", bytes);
    return;
  }
  if (code == 'E') {
    fprintf(model_out, "mark empty_cache\n");
    return;
  }
  if (code == 'C') { /* a repeating cycle passed over: the live blocks' owners renamed that many micro-batches on */
    fprintf(model_out, "shift %.0f\n", bytes);
    return;
  }
  if (stream_id[stream] < 0) {
    stream_id[stream] = streams_seen++;
    fprintf(model_out, "stream %d %s\n", stream_id[stream], STREAM_NAMES[stream]);
  }
  fprintf(model_out, "%c %llu %.17g %d\n", code, (unsigned long long)tag, bytes, stream_id[stream]);
}

int model_trace(const void *input, FILE *out) {
  const llmem_input *in = input;
  static llmem_result result;
  fprintf(out, "llmem-alloc-trace 1\n# modelled: the simulated allocator's own requests (llmem_estimate)\n");
  fprintf(out, "# PYTORCH_CUDA_ALLOC_CONF expandable_segments:%s", in->expandable_segments != 0 ? "True" : "False");
  if (!isnan(in->max_split_size_mib)) fprintf(out, ",max_split_size_mb:%.17g", in->max_split_size_mib);
  if (in->gc_threshold > 0) fprintf(out, ",garbage_collection_threshold:%g", in->gc_threshold);
  fprintf(out, "\nbaseline 0 0\n");
  model_out = out;
  streams_seen = 0;
  for (int i = 0; i < ALLOC_STREAM_COUNT; i++) stream_id[i] = -1;
  alloc_observe(write_event);
  int status = (int)llmem_estimate(in, &result);
  alloc_observe(NULL);
  fprintf(out, "end 0 0\n");
  return status;
}

/* ---- two traces' requests by (stream, size) ---- */
typedef struct {
  int stream;
  double bytes; /* rounded as the allocator rounds (512 B) */
} request;

typedef struct {
  request *at;
  long count, capacity;
  char names[8][32]; /* the streams' raw names, by id */
} requests;

static int push(requests *r, int stream, double bytes) {
  if (r->count == r->capacity) {
    long grown = r->capacity ? 2 * r->capacity : 4096;
    request *at = realloc(r->at, (size_t)grown * sizeof *at);
    if (!at) return -1;
    r->at = at, r->capacity = grown;
  }
  r->at[r->count++] = (request){stream, bytes < 512 ? 512 : 512 * ceil(bytes / 512)};
  return 0;
}

/* The requests up to the first mark starting with `until` (*found: it was there), or (until NULL) up to the
 * second reset; with any_stream all on stream 0. *shifted: the micro-batches a `shift` passed over. */
static int read_requests(FILE *in, const char *until, int any_stream, requests *r, int *found, double *shifted,
                         char *error, size_t error_size) {
  char line[LINE_BYTES];
  int resets = 0;
  long n = 0;
  *found = 0, *shifted = 0;
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\r\n")] = 0;
    if (++n == 1 && strcmp(line, "llmem-alloc-trace 1") != 0) {
      snprintf(error, error_size, "%s",
               (unsigned char)line[0] == 0x1f ? "a gzip file: zcat it first" : "not an llmem-alloc-trace 1 file");
      return -1;
    }
    if (strncmp(line, "mark ", 5) == 0) {
      if (until && strncmp(line + 5, until, strlen(until)) == 0) {
        *found = 1;
        break;
      }
      if (!until && strcmp(line + 5, "allocator reset") == 0 && ++resets == 2) break;
    }
    int id;
    char name[32];
    double count;
    trace_event e;
    if (sscanf(line, "stream %d %31s", &id, name) == 2 && id >= 0 && id < 8) snprintf(r->names[id], 32, "%s", name);
    if (sscanf(line, "shift %lf", &count) == 1) *shifted += count;
    if (!trace_event_of(line, &e) || e.code != 'a') continue;
    if (e.stream >= 8) {
      snprintf(error, error_size, "line %ld: stream %d (the comparison keeps 8)", n, e.stream);
      return -1;
    }
    if (push(r, any_stream ? 0 : e.stream, e.bytes) != 0) {
      snprintf(error, error_size, "out of memory reading the trace");
      return -1;
    }
  }
  if (n == 0) snprintf(error, error_size, "an empty trace");
  return n == 0 ? -1 : 0;
}

static int by_key(const void *a, const void *b) {
  const request *x = a, *y = b;
  if (x->stream != y->stream) return x->stream - y->stream;
  return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

typedef struct {
  int stream;
  double bytes;
  long recorded, modelled;
} size_row;

static int by_bytes_apart(const void *a, const void *b) {
  const size_row *x = a, *y = b;
  double dx = fabs((double)(x->recorded - x->modelled) * x->bytes);
  double dy = fabs((double)(y->recorded - y->modelled) * y->bytes);
  return (dx < dy) - (dx > dy);
}

/* Merged counts of the two sorted lists, the rows whose counts differ. */
static long count_rows(const requests *a, const requests *b, size_row *rows) {
  long i = 0, j = 0, n = 0;
  while (i < a->count || j < b->count) {
    const request *k = i < a->count && (j == b->count || by_key(&a->at[i], &b->at[j]) <= 0) ? &a->at[i] : &b->at[j];
    size_row row = {k->stream, k->bytes, 0, 0};
    while (i < a->count && by_key(&a->at[i], k) == 0) row.recorded++, i++;
    while (j < b->count && by_key(&b->at[j], k) == 0) row.modelled++, j++;
    if (row.recorded != row.modelled) rows[n++] = row;
  }
  return n;
}

static double total_bytes(const requests *r) {
  double sum = 0;
  for (long i = 0; i < r->count; i++) sum += r->at[i].bytes;
  return sum;
}

int diff_traces(FILE *recorded, FILE *model, const diff_options *o, FILE *out, char *error, size_t error_size) {
  requests a = {0}, b = {0};
  int status = -1;
  size_row *rows = NULL;
  int found, unused;
  double shifted, none;
  if (read_requests(recorded, o->until, o->any_stream, &a, &found, &none, error, error_size) != 0 ||
      read_requests(model, NULL, o->any_stream, &b, &unused, &shifted, error, error_size) != 0)
    goto done;
  qsort(a.at, (size_t)a.count, sizeof *a.at, by_key);
  qsort(b.at, (size_t)b.count, sizeof *b.at, by_key);
  rows = malloc((size_t)(a.count + b.count + 1) * sizeof *rows);
  if (!rows) {
    snprintf(error, error_size, "out of memory");
    goto done;
  }
  long n = count_rows(&a, &b, rows);
  qsort(rows, (size_t)n, sizeof *rows, by_bytes_apart);
  fprintf(out, "requests: recorded %ld (%.3f GiB; up to \"%s\"), modelled %ld (%.3f GiB; the first stage's walk)\n",
          a.count, total_bytes(&a) / 1073741824.0, o->until, b.count, total_bytes(&b) / 1073741824.0);
  if (!found) fprintf(out, "note: no mark \"%s\" in the recorded trace: all of it is counted\n", o->until);
  if (shifted > 0)
    fprintf(out,
            "note: llmem passed over %.0f micro-batches of a repeating cycle: their requests are not in its trace "
            "(a run of as many fewer micro-batches compares alike)\n",
            shifted);
  fprintf(out, "%ld sizes whose counts differ (streams by order of first use: recorded / modelled names)\n", n);
  fprintf(out, "  %-24s %14s %10s %10s %14s\n", "stream", "bytes", "recorded", "modelled", "apart (GiB)");
  for (long i = 0; i < n && i < ROWS_SHOWN; i++) {
    char stream[80];
    int s = rows[i].stream;
    snprintf(stream, sizeof stream, "%d %s/%s", s, o->any_stream ? "any" : a.names[s],
             o->any_stream ? "any" : b.names[s]);
    fprintf(out, "  %-24.24s %14.0f %10ld %10ld %+14.3f\n", stream, rows[i].bytes, rows[i].recorded, rows[i].modelled,
            (double)(rows[i].recorded - rows[i].modelled) * rows[i].bytes / 1073741824.0);
  }
  status = 0;
done:
  free(a.at), free(b.at), free(rows);
  return status;
}
