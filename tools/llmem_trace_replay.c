/* llmem_trace_replay [trace | -]: a recorded allocator trace through llmem's simulated caching allocator
 * (tools/trace_replay.h). Exit 0: replayed (whatever the difference); 2: unreadable input or usage. */
#include <stdio.h>
#include <string.h>

#include "trace_replay.h"

static replay_report report; /* large: not on the stack */

int main(int argc, char **argv) {
  if (argc != 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr,
            "usage: llmem_trace_replay <trace | ->   (a .gz trace: zcat run.trace.gz | llmem_trace_replay -)\n");
    return 2;
  }
  FILE *in = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "r");
  if (!in) {
    fprintf(stderr, "llmem_trace_replay: cannot read %s\n", argv[1]);
    return 2;
  }
  int status = replay_trace(in, &report);
  if (in != stdin) fclose(in);
  if (status != 0) {
    fprintf(stderr, "llmem_trace_replay: %s: %s\n", argv[1], report.error);
    return 2;
  }
  replay_print(&report, stdout);
  return 0;
}
