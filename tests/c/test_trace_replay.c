/* tools/trace_replay.c on hand-written traces: a recorded run whose segments follow the allocator's rules
 * replays with the same reserve; one whose run opened a segment the rules would not is found at its line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_replay.h"

#define MB 1048576.0

static replay_report report;

static int replay_text(const char *text) {
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  int status = replay_trace(f, &report);
  fclose(f);
  return status;
}

/* 3 MB in a 20 MiB segment, 5 MB from its cached rest, both freed, empty_cache releases the segment. */
static void a_run_the_rules_explain(void) {
  const char *t =
      "llmem-alloc-trace 1\n# torch 2.11\nbaseline 0 0\nmark build\nstream 0 0\n"
      "s 1000 20971520 0\na 1000 3000000 0\n"
      "mark step 1 forward 0\na 4000000 5000000 0\n"
      "r 1000 3000000 0\nf 1000 3000000 0\nf 4000000 5000000 0\n"
      "mark empty_cache\nx 1000 20971520 0\nend 0 0\n";
  CHECK(replay_text(t) == 0, "replayed: %s", report.error);
  CHECK(report.first_difference_line == 0, "no difference (line %ld)", report.first_difference_line);
  CHECK_NEAR(report.real_peak_reserved_bytes, 20 * MB, 0, "recorded peak");
  CHECK_NEAR(report.sim_peak_reserved_bytes, 20 * MB, 0, "simulated peak");
  CHECK(report.allocs == 2 && report.frees == 2 && report.real_segments_opened == 1, "counts");
  CHECK(report.mark_count == 3 && strcmp(report.end.label, "end") == 0, "marks and the end");
  CHECK_NEAR(report.end.real_reserved_bytes, 0, 0, "released at the end (recorded)");
  CHECK_NEAR(report.end.sim_reserved_bytes, 0, 0, "released at empty_cache (simulated)");
  CHECK_NEAR(report.marks[1].sim_peak_bytes, 20 * MB, 0, "the forward's peak");
}

/* The run opens a second 2 MiB small segment where the rules reuse the first one's rest. */
static void a_segment_the_rules_would_not_open(void) {
  const char *t =
      "llmem-alloc-trace 1\nbaseline 0 0\nstream 0 0\nstream 1 93\n"
      "s 0 2097152 0\na 0 1000 0\n"
      "mark step 1 backward\ns 4194304 2097152 0\na 4194304 1000 0\n"
      "s 8388608 2097152 1\na 8388608 1000 1\nend 1536 6291456\n";
  CHECK(replay_text(t) == 0, "replayed: %s", report.error);
  CHECK(report.first_difference_line == 9, "the second request's line, got %ld", report.first_difference_line);
  CHECK(strcmp(report.first_mark, "step 1 backward") == 0, "in its phase: %s", report.first_mark);
  CHECK_NEAR(report.first_real_reserved_bytes, 4 * MB, 0, "recorded then");
  CHECK_NEAR(report.first_sim_reserved_bytes, 2 * MB, 0, "simulated then");
  CHECK_NEAR(report.sim_peak_reserved_bytes, 4 * MB, 0, "the other stream's request opens its own segment");
  CHECK(report.streams == 2, "two streams");
}

static void expandable_settings_come_from_the_header(void) {
  const char *t =
      "llmem-alloc-trace 1\n# PYTORCH_CUDA_ALLOC_CONF expandable_segments:True\nstream 0 0\n"
      "m 0 20971520 0\na 0 3000000 0\nend 3000064 20971520\n";
  CHECK(replay_text(t) == 0, "replayed: %s", report.error);
  CHECK(report.expandable == 1, "expandable segments on");
  CHECK(report.first_difference_line == 0, "one 20 MiB page mapped, as recorded");
}

/* Past REPLAY_MAX_MARKS the phases fold into the last row kept; the end is still the end. */
static void many_marks_keep_the_end(void) {
  static char t[64 * (REPLAY_MAX_MARKS + 200)];
  size_t n = (size_t)snprintf(t, sizeof t, "llmem-alloc-trace 1\nstream 0 0\ns 0 2097152 0\na 0 1000 0\n");
  for (int i = 0; i < REPLAY_MAX_MARKS + 100; i++) n += (size_t)snprintf(t + n, sizeof t - n, "mark step %d\n", i);
  snprintf(t + n, sizeof t - n, "f 0 1000 0\nmark empty_cache\nx 0 2097152 0\nend 0 0\n");
  CHECK(replay_text(t) == 0, "replayed: %s", report.error);
  CHECK(report.mark_count == REPLAY_MAX_MARKS && report.marks_folded == 101, "kept %d, folded %ld", report.mark_count,
        report.marks_folded);
  CHECK_NEAR(report.end.real_reserved_bytes, 0, 0, "the end, after the release (recorded)");
  CHECK_NEAR(report.end.sim_reserved_bytes, 0, 0, "the end, after the release (simulated)");
}

static void bad_traces_name_their_line(void) {
  CHECK(replay_text("hello\n") == -1 && strstr(report.error, "line 1: not an llmem-alloc-trace"), "%s", report.error);
  CHECK(replay_text("llmem-alloc-trace 1\nstream 0 0\nq 1 2 0\n") == -1 && strstr(report.error, "line 3"), "%s",
        report.error);
  CHECK(replay_text("llmem-alloc-trace 1\na 1 2 0\n") == -1 && strstr(report.error, "stream"), "%s", report.error);
  CHECK(replay_text("llmem-alloc-trace 1\nstream 0 0\nstream 1 1\nstream 2 2\nstream 3 3\nstream 4 4\nstream 5 5\n") ==
                -1 &&
            strstr(report.error, "line 7: more CUDA streams"),
        "%s", report.error);
  CHECK(replay_text("\x1f\x8b\x08\n") == -1 && strstr(report.error, "gzip"), "%s", report.error);
  static const char *const bad_numbers[] = {"a 0 nan 0", "a 0 inf 0",   "a 0 -5 0",   "a 0 5 0 junk", "a -1 5 0",
                                            "a 0 5 -2",  "capacity -1", "baseline 1", "shift -1"};
  for (size_t i = 0; i < sizeof bad_numbers / sizeof bad_numbers[0]; i++) {
    char t[128];
    snprintf(t, sizeof t, "llmem-alloc-trace 1\nstream 0 0\n%s\n", bad_numbers[i]);
    CHECK(replay_text(t) == -1 && strstr(report.error, "line 3"), "%s: %s", bad_numbers[i], report.error);
  }
  CHECK(replay_text("") == -1 && strstr(report.error, "empty"), "%s", report.error);
}

/* llmem's own request stream, written as a trace and replayed, reserves what the estimate reserved, after
 * every request and free: the trace says all the simulation did (resets, cross-stream frees, releases). */
static void the_models_own_trace_replays_to_its_estimate(void) {
  static const char *const specs[] = {
      "",
      "runtime.expandable_segments=true",
      "parallel.engine=deepspeed parallel.zero_stage=3 training.grad_accum=3",
      "parallel.engine=fsdp1 parallel.offload_params=cpu parallel.offload_optimizer=cpu",
      "parallel.engine=megatron parallel.pp=2 parallel.tp=2 training.grad_accum=4",
      "parallel.engine=single parallel.gpus=1 model.layers=4 hardware.memory_gib=8",
      /* cycles passed over (`shift`), partial releases: garbage collection, max_split_size near capacity */
      "parallel.engine=megatron parallel.pp=4 parallel.tp=2 training.grad_accum=32",
      "runtime.gc_threshold=0.5",
      "runtime.max_split_size_mib=128 hardware.memory_gib=40",
      "runtime.max_split_size_mib=200 hardware.memory_gib=60",
      /* at capacity with frees pending on other streams: the failed request's release returns them first */
      "model.layers=16 model.kv_heads=32 model.ffn_hidden=16384 model.mlp=plain model.norm=layernorm "
      "training.micro_batch=4 training.seq_len=2048 training.grad_accum=2 training.dtype=fp32 "
      "training.optimizer=adafactor training.optimizer_impl=foreach training.recompute=selective "
      "training.attention=sdpa_math parallel.gpus=2 parallel.engine=fsdp1 parallel.fsdp_strategy=hybrid_shard",
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    static llmem_input in;
    static llmem_result out;
    llmem_defaults(&in);
    CHECK(set_keys(&in, specs[i]), "keys: %s", specs[i]);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    int status = model_trace(&in, f);
    fclose(f);
    CHECK(status == 0, "%s: estimated", specs[i]);
    CHECK(llmem_estimate(&in, &out) == 0 && out.per_gpu.reserved_simulated, "%s: simulated", specs[i]);
    CHECK(replay_text(text) == 0, "%s: replayed: %s", specs[i], report.error);
    CHECK(report.first_difference_line == 0, "%s: agree throughout (line %ld: %.0f vs %.0f)", specs[i],
          report.first_difference_line, report.first_real_reserved_bytes, report.first_sim_reserved_bytes);
    CHECK_NEAR(report.sim_peak_reserved_bytes, report.real_peak_reserved_bytes, 0, "replayed = traced peak");
    CHECK(report.allocs > 0, "%s: requests", specs[i]);
    free(text);
  }
}

/* Requests counted by stream and size (rounded to 512 B): the recorded ones up to the mark named, the modelled
 * ones up to their second allocator reset; the sizes whose counts differ, the most bytes apart first. */
static void two_traces_compared_by_size(void) {
  const char *recorded =
      "llmem-alloc-trace 1\nstream 0 0\nmark build\na 1 1000 0\na 2 1048576 0\n"
      "mark step 1 forward 0\na 3 1048576 0\na 4 4194304 0\nstream 1 55\na 5 600 1\n"
      "mark step 3 forward 0\na 6 999999999 0\n";
  const char *modelled =
      "llmem-alloc-trace 1\nmark allocator reset\nstream 0 compute\na 1 1024 0\na 2 1048576 0\n"
      "stream 1 all_gather\na 5 1000 1\nmark allocator reset\na 9 999999999 0\n";
  FILE *a = fmemopen((void *)recorded, strlen(recorded), "r"), *b = fmemopen((void *)modelled, strlen(modelled), "r");
  char *text = NULL, error[160] = "";
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  diff_options o = {"step 3", 0};
  int status = diff_traces(a, b, &o, out, error, sizeof error);
  fclose(out), fclose(a), fclose(b);
  CHECK(status == 0, "compared: %s", error);
  CHECK(strstr(text, "recorded 5 ") && strstr(text, "modelled 3 "), "counts up to the cuts:\n%s", text);
  CHECK(strstr(text, "2 sizes whose counts differ"), "1000 and 1024 round alike, and so do 600 and 1000:\n%s", text);
  const char *big = strstr(text, "4194304"), *mib = strstr(text, "1048576");
  CHECK(big && mib && big < mib, "the 4 MiB row first (4 MiB apart), then 1 MiB:\n%s", text);
  CHECK(!strstr(text, "999999999"), "nothing past the cuts:\n%s", text);
  free(text);
  /* by size alone the streams' 1024 B requests pool: still two sizes apart, none of them 1024 B */
  a = fmemopen((void *)recorded, strlen(recorded), "r");
  b = fmemopen((void *)modelled, strlen(modelled), "r");
  out = open_memstream(&text, &size);
  o.any_stream = 1;
  CHECK(diff_traces(a, b, &o, out, error, sizeof error) == 0, "compared by size: %s", error);
  fclose(out), fclose(a), fclose(b);
  CHECK(strstr(text, "2 sizes whose counts differ") && !strstr(text, " 1024 "), "by size alone:\n%s", text);
  free(text);
  /* a mark that is not there is said; what is not a trace is refused */
  a = fmemopen((void *)recorded, strlen(recorded), "r");
  b = fmemopen((void *)modelled, strlen(modelled), "r");
  out = open_memstream(&text, &size);
  o.until = "step 9";
  CHECK(diff_traces(a, b, &o, out, error, sizeof error) == 0, "compared: %s", error);
  fclose(out), fclose(a), fclose(b);
  CHECK(strstr(text, "no mark \"step 9\""), "the missing cut is said:\n%s", text);
  free(text);
  a = fmemopen((void *)"\x1f\x8b\x08\n", 4, "r");
  b = fmemopen((void *)modelled, strlen(modelled), "r");
  out = open_memstream(&text, &size);
  CHECK(diff_traces(a, b, &o, out, error, sizeof error) == -1 && strstr(error, "gzip"), "a gzip file: %s", error);
  fclose(out), fclose(a), fclose(b);
  free(text);
}

/* The same over random configs (check.c check_random_config): every one the allocator simulates agrees. */
static void random_configs_replay_to_their_estimate(void) {
  int simulated = 0;
  for (int t = 0; t < 300; t++) {
    static llmem_input in;
    static llmem_result out;
    check_random_config(&in);
    if (llmem_estimate(&in, &out) != 0 || !out.per_gpu.reserved_simulated) continue;
    simulated++;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    model_trace(&in, f);
    fclose(f);
    int ok = replay_text(text) == 0 && report.first_difference_line == 0 &&
             report.sim_peak_reserved_bytes == report.real_peak_reserved_bytes;
    CHECK(ok, "random config %d: line %ld, %.0f vs %.0f (%s)", t, report.first_difference_line,
          report.first_real_reserved_bytes, report.first_sim_reserved_bytes, report.error);
    free(text);
  }
  CHECK(simulated >= 150, "configs the allocator simulated: %d of 300", simulated);
}

int main(void) {
  a_run_the_rules_explain();
  a_segment_the_rules_would_not_open();
  expandable_settings_come_from_the_header();
  bad_traces_name_their_line();
  many_marks_keep_the_end();
  the_models_own_trace_replays_to_its_estimate();
  two_traces_compared_by_size();
  random_configs_replay_to_their_estimate();
  return check_report("trace_replay");
}
