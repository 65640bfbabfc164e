/* Replays a PyTorch caching allocator trace (what `llmem_probe --trace-allocator` or
 * `probe/snapshot_to_json.py --trace` writes; the format is TRACE_FORMAT there) through llmem's simulated
 * allocator (core/allocator.c), and compares the simulated reserve with the one the run recorded.
 * Given the run's own requests, a difference is the simulator's (an allocator rule it lacks); the same
 * simulator given llmem's modelled requests and a different answer says the requests are what differ. */
#ifndef LLMEM_TRACE_REPLAY_H
#define LLMEM_TRACE_REPLAY_H

#include <stdio.h>

#define REPLAY_MAX_MARKS 1024
#define REPLAY_LABEL_BYTES 64

typedef struct {
  char label[REPLAY_LABEL_BYTES];
  double real_reserved_bytes, sim_reserved_bytes; /* at the mark (what the phase before it left) */
  double real_peak_bytes, sim_peak_bytes;         /* the most reserved from the mark to the next */
} replay_mark;

typedef struct {
  long events, allocs, frees, segment_events;
  int streams;
  double baseline_allocated_bytes, baseline_reserved_bytes;
  double real_peak_reserved_bytes, sim_peak_reserved_bytes, sim_peak_allocated_bytes;
  long real_segments_opened;
  /* the first request or free after which the two reserves differ; 0: none */
  long first_difference_line;
  double first_real_reserved_bytes, first_sim_reserved_bytes;
  char first_mark[REPLAY_LABEL_BYTES]; /* the phase it happened in */
  replay_mark marks[REPLAY_MAX_MARKS];
  int mark_count;
  long marks_folded; /* marks past REPLAY_MAX_MARKS: their phases count in the last one kept */
  replay_mark end;   /* the state at the end of the trace (label "end") */
  int expandable;    /* from the trace's PYTORCH_CUDA_ALLOC_CONF line */
  double max_split_bytes, gc_threshold;
  double capacity_bytes; /* from its `capacity` line; INFINITY without one */
  long shifted;          /* micro-batches llmem's own trace passed over (`shift` lines) */
  char error[160];       /* non-empty: the trace could not be read (error names the line) */
} replay_report;

/* One event line of a trace ("a <addr> <bytes> <stream>", any of the codes a r f s x m u o). */
typedef struct {
  char code;
  unsigned long long addr;
  double bytes;
  int stream;
} trace_event;
/* 1: `line` is an event line, read into *e; 0: it is not. */
int trace_event_of(const char *line, trace_event *e);

/* 0: replayed; -1: report->error says why. */
int replay_trace(FILE *in, replay_report *report);
void replay_print(const replay_report *r, FILE *out);

/* llmem's own request stream for a run, written as a trace in the same format: llmem_estimate of `in`
 * with the simulated allocator's every event (each reset of it, one per stage walked, a mark). 0: the
 * estimate's status. */
int model_trace(const void *input /* llmem_input */, FILE *out);

/* Requests by size and stream in two traces: a recorded one up to its first mark starting with `until`
 * ("step 3": the build and two steps, what llmem replays) and a modelled one up to its second allocator
 * reset (its first stage's walk); the sizes whose counts differ, the most bytes first. any_stream: by size
 * alone (the run's streams need not pair with llmem's by order of first use). */
typedef struct {
  const char *until;
  int any_stream;
} diff_options;
/* -1: unreadable (error says why). */
int diff_traces(FILE *recorded, FILE *model, const diff_options *o, FILE *out, char *error, size_t error_size);

#endif
