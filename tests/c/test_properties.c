/* Properties over thousands of random valid configs: every value finite and
 * non-negative, the breakdown sums to peak_allocated, reserved >= allocated,
 * more sharding never raises per-GPU memory, a larger batch or sequence
 * never lowers it. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static unsigned next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 16);
}
static int pick(int n) { return (int)(next() % (unsigned)n); }
static double pick_of(const double *v, int n) { return v[pick(n)]; }

static void random_config(llmem_input *in) {
  llmem_defaults(in);
  static const double hidden[] = {256, 512, 1024, 2048, 4096};
  static const double heads[] = {4, 8, 16, 32};
  static const double layers[] = {2, 4, 8, 12, 16, 24, 32};
  in->hidden = pick_of(hidden, 5);
  in->heads = pick_of(heads, 4);
  in->kv_heads = in->heads / (double)(1 << pick(3));
  in->layers = pick_of(layers, 7);
  in->ffn_hidden = in->hidden * (pick(2) ? 4 : 3.5);
  in->vocab = pick(2) ? 32000 : 128256;
  in->mlp = pick(2);
  in->tied_embeddings = pick(2);
  in->norm = pick(2);
  in->bias = pick(4) == 0;
  if (pick(4) == 0) {
    in->moe_experts = 8;
    in->moe_top_k = 1 + pick(2);
    in->moe_shared_experts = pick(2);
  }
  static const double mb[] = {1, 2, 4}, seq[] = {256, 1024, 2048, 4096};
  in->micro_batch = pick_of(mb, 3);
  in->seq_len = pick_of(seq, 4);
  in->grad_accum = 1 + pick(4);
  in->dtype = pick(3) == 0 ? LLMEM_DTYPE_FP32 : LLMEM_DTYPE_BF16;
  in->master_weights = pick(2);
  in->optimizer = pick(LLMEM_OPTIMIZER_COUNT_);
  in->optimizer_impl = pick(3);
  in->recompute = pick(4);
  in->attention = pick(3);
  in->loss = pick(4);
  in->dropout = pick(3) == 0 ? 0.1 : 0;
  in->torch_compile = pick(2);
  if (pick(4) == 0) {
    in->ft_method = 1 + pick(2);
    in->lora_rank = 8 << pick(3);
  }
  static const double gpus[] = {1, 2, 4, 8, 16, 64};
  in->gpus = pick_of(gpus, 6);
  in->engine = pick(LLMEM_ENGINE_COUNT_);
  if (in->engine == LLMEM_ENGINE_SINGLE) in->gpus = 1;
  if (in->engine == LLMEM_ENGINE_DEEPSPEED || in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED) in->zero_stage = pick(4);
  if (in->engine == LLMEM_ENGINE_FSDP1 || in->engine == LLMEM_ENGINE_FSDP2) in->fsdp_strategy = pick(4);
  if (in->engine == LLMEM_ENGINE_MEGATRON) in->distributed_optimizer = pick(2);
  if (in->engine == LLMEM_ENGINE_MEGATRON || in->engine == LLMEM_ENGINE_FSDP2 ||
      in->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED) {
    in->tp = (double)(1 << pick(3));
    in->pp = (double)(1 << pick(3));
    if (pick(3) == 0) in->cp = 2;
    in->sequence_parallel = pick(2);
    in->pp_schedule = pick(4);
    if (in->pp_schedule == LLMEM_PP_INTERLEAVED && in->pp > 1) {
      in->vpp = 2;
      in->grad_accum = in->pp * (1 + pick(2));
    }
  }
  if (in->moe_experts > 0 && pick(2)) in->ep = 2;
}

static llmem_result a, b;

static int sane(const llmem_result *r) {
  const llmem_rank_result *p = &r->per_gpu;
  double sum = 0;
  int ok = 1;
  for (int c = 0; c < LLMEM_CAT_COUNT; c++) {
    ok &= isfinite(p->breakdown_bytes[c]) && p->breakdown_bytes[c] >= -1e-6 * p->peak_allocated_bytes;
    sum += p->breakdown_bytes[c];
  }
  ok &= isfinite(p->peak_allocated_bytes) && p->peak_allocated_bytes > 0;
  ok &= fabs(sum - p->peak_allocated_bytes) <= 1e-9 * p->peak_allocated_bytes;
  ok &= p->peak_reserved_bytes >= p->peak_allocated_bytes && p->device_used_bytes >= p->peak_reserved_bytes;
  ok &= isfinite(r->params_total) && r->params_total > 0 && r->params_trainable <= r->params_total;
  for (int i = 0; i < r->event_count; i++) ok &= r->events[i].total_bytes <= p->peak_allocated_bytes * (1 + 1e-12);
  return ok;
}

int main(void) {
  int valid = 0, tried = 0, mono = 0;
  while (valid < 3000 && tried < 200000) {
    tried++;
    llmem_input in;
    random_config(&in);
    if (llmem_estimate(&in, &a) != LLMEM_OK) continue;
    valid++;
    CHECK(sane(&a), "config %d: a value is not finite, negative, or the breakdown does not sum", tried);

    /* a larger micro-batch / sequence never lowers the peak */
    llmem_input big = in;
    big.micro_batch *= 2;
    if (llmem_estimate(&big, &b) == LLMEM_OK) {
      CHECK(b.per_gpu.peak_allocated_bytes >= a.per_gpu.peak_allocated_bytes * (1 - 1e-12),
            "config %d: doubling the micro-batch lowered the peak (%g -> %g)", tried, a.per_gpu.peak_allocated_bytes,
            b.per_gpu.peak_allocated_bytes);
      mono++;
    }
    big = in;
    big.seq_len *= 2;
    if (llmem_estimate(&big, &b) == LLMEM_OK) {
      CHECK(b.per_gpu.peak_allocated_bytes >= a.per_gpu.peak_allocated_bytes * (1 - 1e-12),
            "config %d: doubling the sequence lowered the peak (%g -> %g)", tried, a.per_gpu.peak_allocated_bytes,
            b.per_gpu.peak_allocated_bytes);
      mono++;
    }
    /* more data-parallel sharding never raises it */
    big = in;
    big.gpus *= 2;
    if (in.engine != LLMEM_ENGINE_SINGLE && llmem_estimate(&big, &b) == LLMEM_OK) {
      CHECK(b.per_gpu.peak_allocated_bytes <= a.per_gpu.peak_allocated_bytes * (1 + 1e-12),
            "config %d: doubling the GPUs raised the peak (%g -> %g)", tried, a.per_gpu.peak_allocated_bytes,
            b.per_gpu.peak_allocated_bytes);
      mono++;
    }
  }
  CHECK(valid == 3000, "only %d valid configs in %d tries", valid, tried);
  printf("properties: %d valid configs of %d tried, %d monotonicity pairs\n", valid, tried, mono);
  return check_report("properties");
}
