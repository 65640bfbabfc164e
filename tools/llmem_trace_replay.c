/* llmem_trace_replay: recorded allocator traces against llmem's simulated caching allocator
 * (tools/trace_replay.h). Exit 0: done (whatever the difference); 1: --model's estimate failed (an invalid
 * input); 2: unreadable input or usage. */
#include <stdio.h>
#include <string.h>

#include "llmem.h"
#include "trace_replay.h"

static const char USAGE[] =
    "usage: llmem_trace_replay <trace | ->              replay a trace through the simulated allocator\n"
    "       llmem_trace_replay --model <input.f64>      llmem's own trace of a run (input: scripts/flat-input.mjs)\n"
    "       llmem_trace_replay --diff <recorded> <modelled> [--until <mark>] [--any-stream]\n"
    "                                                   their requests by stream and size (recorded: up to\n"
    "                                                   \"step 3\"; --any-stream: by size alone)\n"
    "a .gz trace: zcat run.trace.gz | llmem_trace_replay -\n";

static replay_report report; /* large: not on the stack */

static FILE *open_input(const char *path) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
  if (!f) fprintf(stderr, "llmem_trace_replay: cannot read %s\n", path);
  return f;
}

static int replay_main(const char *path) {
  FILE *in = open_input(path);
  if (!in) return 2;
  int status = replay_trace(in, &report);
  if (in != stdin) fclose(in);
  if (status != 0) {
    fprintf(stderr, "llmem_trace_replay: %s: %s\n", path, report.error);
    return 2;
  }
  replay_print(&report, stdout);
  return 0;
}

static int model_main(const char *path) {
  static llmem_input in;
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(&in, 1, sizeof in, f) : 0;
  int extra = f ? fgetc(f) != EOF : 0;
  if (f) fclose(f);
  if (got != sizeof in || extra) {
    fprintf(stderr, "llmem_trace_replay: %s: not a flat input of this core (%zu bytes expected)\n", path, sizeof in);
    return 2;
  }
  int status = model_trace(&in, stdout);
  if (status != 0) fprintf(stderr, "llmem_trace_replay: the estimate failed (status %d)\n", status);
  return status == 0 ? 0 : 1;
}

static int diff_main(const char *recorded, const char *modelled, const diff_options *o) {
  FILE *a = open_input(recorded), *b = a ? open_input(modelled) : NULL;
  char error[160] = "";
  int status = a && b ? diff_traces(a, b, o, stdout, error, sizeof error) : -1;
  if (a && a != stdin) fclose(a);
  if (b && b != stdin) fclose(b);
  if (status != 0 && error[0]) fprintf(stderr, "llmem_trace_replay: %s\n", error);
  return status == 0 ? 0 : 2;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--help") != 0 && strncmp(argv[1], "--", 2) != 0) return replay_main(argv[1]);
  if (argc == 3 && strcmp(argv[1], "--model") == 0) return model_main(argv[2]);
  if (argc >= 4 && strcmp(argv[1], "--diff") == 0) {
    diff_options o = {"step 3", 0};
    for (int i = 4; i < argc; i++)
      if (strcmp(argv[i], "--any-stream") == 0) o.any_stream = 1;
      else if (strcmp(argv[i], "--until") == 0 && i + 1 < argc) o.until = argv[++i];
      else return fputs(USAGE, stderr), 2;
    return diff_main(argv[2], argv[3], &o);
  }
  fputs(USAGE, stderr);
  return 2;
}
