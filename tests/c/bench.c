#define _POSIX_C_SOURCE 200809L
/* Native benchmark: microseconds per estimate (timeline included). Prints figures; asserts nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "llmem.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time of this thread */
static double cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static llmem_result out;

static void bench(const char *name, llmem_input *in) {
  int n = 0;
  double start = now_us(), t = 0;
  do {
    for (int i = 0; i < 100; i++) llmem_estimate(in, &out);
    n += 100;
    t = now_us() - start;
  } while (t < 300000);
  printf("native  %-44s %8.2f us/estimate  (%d events, status %d)\n", name, t / n, out.event_count, out.status);
}

/* 99,840 layers (195 a stage) over 512 pipeline stages, about a million micro-batches */
static void deep_pipeline(llmem_input *in, int schedule, int vpp) {
  llmem_defaults(in);
  in->layers = 99840;
  in->engine = LLMEM_ENGINE_MEGATRON;
  in->gpus = 512;
  in->pp = 512;
  in->vpp = vpp;
  in->pp_schedule = schedule;
  in->grad_accum = schedule == LLMEM_PP_INTERLEAVED ? 999936 : 1000000; /* interleaved: a multiple of pp */
}


/* issue 12's budget (every valid config under 5 ms) over random valid configs, fixed seed: the shapes that
 * stress the walk (deep pipelines, many virtual stages, MoE patterns, a million micro-batches, offload) */
static unsigned long long rng = 88172645463325252ull;
static int pick(int n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (int)(rng % (unsigned long long)n);
}

static void random_config(llmem_input *in) {
  static const int pps[] = {1, 2, 8, 64, 256, 512};
  static const int schedules[] = {LLMEM_PP_GPIPE, LLMEM_PP_1F1B,       LLMEM_PP_INTERLEAVED, LLMEM_PP_ZERO_BUBBLE,
                                  LLMEM_PP_ZB_V,  LLMEM_PP_DUALPIPE_V, LLMEM_PP_DUALPIPE};
  static const int engines[] = {
      LLMEM_ENGINE_MEGATRON,           LLMEM_ENGINE_FSDP2, LLMEM_ENGINE_FSDP1, LLMEM_ENGINE_DEEPSPEED,
      LLMEM_ENGINE_MEGATRON_DEEPSPEED, LLMEM_ENGINE_DDP};
  llmem_defaults(in);
  int pp = pps[pick(6)], schedule = schedules[pick(7)], vpp = 1;
  if (schedule == LLMEM_PP_INTERLEAVED) vpp = 2 + pick(63);
  if (schedule >= LLMEM_PP_ZB_V) vpp = 2;
  int per = 1 + pick(200);
  while (per > 1 && (double)pp * vpp * per > 100000) per /= 2;
  in->layers = pp * vpp * per;
  in->hidden = 256 << pick(5);
  in->ffn_hidden = 1024 << pick(3);
  in->heads = 8;
  in->vocab = 32000;
  if (pick(2)) {
    in->moe_experts = 16, in->moe_top_k = 2, in->moe_ffn_hidden = 512;
    in->moe_dense_layers = pick(4), in->moe_layer_freq = 1 + pick(3);
  }
  in->seq_len = 64 << pick(8);
  in->grad_accum = schedule == LLMEM_PP_INTERLEAVED ? pp * (1 + pick(1953))
                   : pick(2)                        ? pp * (1 + pick(2000))
                                                    : 1 + pick(1000000);
  in->recompute = pick(3);
  in->engine = engines[pick(6)];
  in->pp = pp, in->vpp = vpp, in->pp_schedule = schedule;
  in->gpus = pp * (1 + pick(4));
  in->activation_offload = pick(5) == 0;
}

/* An enum key's value name. */
static const char *value_name(const char *path, double value) {
  const llmem_field *f = llmem_field_at(llmem_field_index(path));
  return f && value >= 0 && value < f->value_count ? f->values[(int)value] : "?";
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void random_scan(int tries) {
  static double ms[4096];
  int n = 0, over = 0;
  double slowest = -1;
  llmem_input in, worst;
  llmem_defaults(&worst);
  for (int t = 0; t < tries && n < 4096; t++) {
    random_config(&in);
    /* the least CPU time of three runs: the work, not the machine's other load or a first touch of memory */
    double took = INFINITY;
    int status = LLMEM_OK;
    for (int run = 0; run < 3 && status == LLMEM_OK; run++) {
      double start = cpu_us();
      status = llmem_estimate(&in, &out);
      took = fmin(took, (cpu_us() - start) / 1000);
    }
    if (status != LLMEM_OK) continue;
    over += took > 5;
    if (took > slowest) slowest = took, worst = in;
    ms[n++] = took;
  }
  if (n == 0) return;
  qsort(ms, (size_t)n, sizeof ms[0], by_value);
  printf(
      "native  %d random valid configs (CPU time, least of 3 runs): median %.2f ms, p90 %.2f, p99 %.2f, max %.1f; %d "
      "over 5 ms "
      "(slowest: %g layers, pp %g, vpp %g, schedule %s, engine %s, %g micro-batches)\n",
      n, ms[n / 2], ms[n * 9 / 10], ms[n * 99 / 100], ms[n - 1], over, worst.layers, worst.pp, worst.vpp,
      value_name("parallel.pp_schedule", worst.pp_schedule), value_name("parallel.engine", worst.engine),
      worst.grad_accum);
}

int main(void) {
  llmem_input in;
  llmem_defaults(&in);
  bench("llama-3.1-8b fsdp2 8 gpus (default)", &in);
  in.recompute = LLMEM_RECOMPUTE_FULL;
  in.grad_accum = 8;
  bench("  + full recompute, 8 micro-batches", &in);
  llmem_defaults(&in);
  in.layers = 80;
  in.hidden = 8192;
  in.heads = 64;
  in.kv_heads = 8;
  in.ffn_hidden = 28672;
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.gpus = 512;
  in.tp = 8;
  in.pp = 8;
  in.vpp = 5;
  in.pp_schedule = LLMEM_PP_INTERLEAVED;
  in.grad_accum = 32;
  in.distributed_optimizer = 1;
  bench("llama-70b-shape megatron tp8 pp8 vpp5, 32 mb", &in);
  llmem_defaults(&in);
  in.moe_experts = 64;
  in.moe_top_k = 8;
  in.moe_ffn_hidden = 1408;
  in.ep = 8;
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.gpus = 64;
  in.pp = 4;
  in.grad_accum = 16;
  bench("moe 64 experts ep8 pp4, 16 mb", &in);
  /* issue 12: the worst valid pipelines (99,840 layers over 512 stages, a million micro-batches) */
  static const struct {
    int schedule, vpp;
    const char *name;
  } deep[] = {{LLMEM_PP_GPIPE, 1, "99840 layers pp512 gpipe, 1e6 mb"},
              {LLMEM_PP_1F1B, 1, "99840 layers pp512 1f1b, 1e6 mb"},
              {LLMEM_PP_ZERO_BUBBLE, 1, "99840 layers pp512 zero_bubble, 1e6 mb"},
              {LLMEM_PP_INTERLEAVED, 5, "99840 layers pp512 vpp5 interleaved, 999936 mb"},
              {LLMEM_PP_INTERLEAVED, 39, "99840 layers pp512 vpp39 interleaved, 999936 mb"}};
  for (int k = 0; k < 5; k++) {
    deep_pipeline(&in, deep[k].schedule, deep[k].vpp);
    bench(deep[k].name, &in);
  }
  /* FSDP2's lazily made gradients (more than a micro-batch's activations per chunk) */
  deep_pipeline(&in, LLMEM_PP_INTERLEAVED, 39);
  in.engine = LLMEM_ENGINE_FSDP2;
  bench("99840 layers pp512 vpp39 interleaved, fsdp2", &in);
  /* the V schedules: two chunks per rank, 99,328 layers (a multiple of 2 x 512) */
  static const struct {
    int schedule;
    const char *name;
  } v_shaped[] = {{LLMEM_PP_ZB_V, "99328 layers pp512 zb_v, 1e6 mb"},
                  {LLMEM_PP_DUALPIPE_V, "99328 layers pp512 dualpipe_v, 1e6 mb"},
                  {LLMEM_PP_DUALPIPE, "99328 layers pp512 dualpipe, 1e6 mb"}};
  for (int k = 0; k < 3; k++) {
    deep_pipeline(&in, v_shaped[k].schedule, 2);
    in.layers = 99328;
    bench(v_shaped[k].name, &in);
  }
  random_scan(3000);
  /* a 4096-point sweep of a 1F1B variant: the micro-batch count over the deep pipeline */
  {
    deep_pipeline(&in, LLMEM_PP_1F1B, 1);
    static double accum[LLMEM_MAX_SWEEP];
    static llmem_sweep_point swept[LLMEM_MAX_SWEEP];
    for (int i = 0; i < LLMEM_MAX_SWEEP; i++) accum[i] = 244.0 * (i + 1);
    double start = now_us();
    llmem_sweep(&in, llmem_field_index("training.grad_accum"), accum, LLMEM_MAX_SWEEP, swept);
    double t = now_us() - start;
    printf("native  4096-point sweep of training.grad_accum, 99840 layers pp512 1f1b %8.1f ms (%.1f us/point)\n",
           t / 1000, t / LLMEM_MAX_SWEEP);
  }
  /* layout search (Llama-3.1-70B shape, global batch 1024) over 64 and 1024 GPUs */
  static llmem_search_result found;
  llmem_search_options opt;
  llmem_defaults(&in);
  in.layers = 80;
  in.hidden = 8192;
  in.heads = 64;
  in.kv_heads = 8;
  in.ffn_hidden = 28672;
  in.seq_len = 8192;
  for (int g = 0; g < 2; g++) {
    llmem_search_defaults(&opt);
    opt.gpus = g ? 1024 : 64;
    opt.global_batch = 1024;
    for (int e = 0; e < 2; e++) {
      in.engine = e ? LLMEM_ENGINE_MEGATRON : LLMEM_ENGINE_FSDP2;
      double start = now_us();
      llmem_search(&in, &opt, &found);
      double t = now_us() - start;
      printf(
          "native  search %4g gpus %-7s %8.1f ms  (%g candidates, %g valid, %g fit; best tp %g pp %g cp %g dp %g mb "
          "%g, %.0f tok/s/gpu)\n",
          opt.gpus, e ? "megatron" : "fsdp2", t / 1000, found.candidates, found.valid, found.fitting,
          found.layouts[0].tp, found.layouts[0].pp, found.layouts[0].cp, found.layouts[0].dp,
          found.layouts[0].micro_batch, found.layouts[0].tokens_per_second_per_gpu);
    }
  }
  /* DeepSeek-V3 shape (8 dense layers first) on 1024 H200, global batch 2048 */
  llmem_defaults(&in);
  in.layers = 64;
  in.hidden = 7168;
  in.heads = 128;
  in.kv_heads = 128;
  in.ffn_hidden = 18432;
  in.vocab = 129280;
  in.moe_experts = 256;
  in.moe_top_k = 8;
  in.moe_ffn_hidden = 2048;
  in.moe_shared_experts = 1;
  in.moe_dense_layers = 8;
  in.memory_gib = 141;
  in.engine = LLMEM_ENGINE_MEGATRON;
  llmem_search_defaults(&opt);
  opt.gpus = 1024;
  opt.global_batch = 2048;
  {
    double start = now_us();
    llmem_search(&in, &opt, &found);
    printf("native  search 1024 gpus deepseek-v3 megatron %8.1f ms  (%g candidates, %g valid, %g fit)\n",
           (now_us() - start) / 1000, found.candidates, found.valid, found.fitting);
  }
  /* a 1,000-point sweep */
  llmem_defaults(&in);
  static double values[1000];
  static llmem_sweep_point points[1000];
  for (int i = 0; i < 1000; i++) values[i] = 256.0 * (i + 1);
  double start = now_us();
  llmem_sweep(&in, llmem_field_index("training.seq_len"), values, 1000, points);
  printf("native  1000-point sweep of training.seq_len   %8.2f ms\n", (now_us() - start) / 1000);
  return 0;
}
