/* The planner: sweeps, the largest fit, and the layout search. */
#include <math.h>
#include <string.h>

#include "check.h"

static llmem_result full;
static llmem_search_result found;


/* Every kept layout is what its own full estimate says: same device memory, fits. */
static int kept_layouts_differ(const llmem_input *base, const llmem_search_options *opt) {
  int differ = 0;
  for (int i = 0; i < found.count; i++) {
    llmem_input c = layout_input(base, opt->gpus, &found.layouts[i]);
    if (llmem_estimate(&c, &full) != LLMEM_OK || full.per_gpu.device_used_bytes != found.layouts[i].device_used_bytes ||
        full.per_gpu.device_used_bytes > (1 - opt->free_fraction) * full.capacity_bytes)
      differ++;
  }
  return differ;
}

/* training.global_batch: the accumulation derived (Megatron's rule) gives the
 * estimate of the same config with that accumulation written out. */
static void global_batch_key(void) {
  llmem_input a, b;
  llmem_defaults(&a);
  a.micro_batch = 2;
  a.global_batch = 64; /* 8 GPUs x 2 = 16 per accumulation step: 4 steps */
  b = a;
  b.global_batch = NAN;
  b.grad_accum = 4;
  static llmem_result ra, rb;
  CHECK(llmem_estimate(&a, &ra) == LLMEM_OK && llmem_estimate(&b, &rb) == LLMEM_OK, "both valid");
  CHECK(ra.per_gpu.device_used_bytes == rb.per_gpu.device_used_bytes && ra.event_count == rb.event_count,
        "global batch 64 = accumulation 4 (%g vs %g)", ra.per_gpu.device_used_bytes, rb.per_gpu.device_used_bytes);
  llmem_step_result ta, tb;
  llmem_step_time(&a, &ta);
  llmem_step_time(&b, &tb);
  CHECK(ta.step_seconds == tb.step_seconds, "the same step time");
  a.grad_accum = 4; /* stated and agreeing */
  CHECK(llmem_estimate(&a, &ra) == LLMEM_OK, "global batch and accumulation that agree");
  /* neither: one micro-batch per step */
  llmem_defaults(&a);
  b = a;
  b.grad_accum = 1;
  llmem_estimate(&a, &ra);
  llmem_estimate(&b, &rb);
  CHECK(ra.per_gpu.device_used_bytes == rb.per_gpu.device_used_bytes, "null accumulation is 1");
}

/* The search keeps the config's global batch, TP within a node unless told,
 * and counts every candidate it leaves out by its reason. */
static void search_batch_and_reasons(void) {
  llmem_input in;
  llmem_defaults(&in);
  in.layers = 80;
  in.hidden = 8192;
  in.heads = 64;
  in.kv_heads = 8;
  in.ffn_hidden = 28672;
  in.seq_len = 8192;
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.global_batch = 256;
  llmem_search_options opt;
  llmem_search_defaults(&opt);
  opt.gpus = 256;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK && found.count > 0, "70B on 256: %d kept", found.count);
  CHECK(found.global_batch == 256, "the config's global batch (%g)", found.global_batch);
  double counted = found.fitting;
  for (int s = 0; s < LLMEM_STATUS_COUNT; s++) counted += found.rejected[s];
  CHECK(counted == found.candidates, "every candidate counted once: %g of %g", counted, found.candidates);
  CHECK(found.rejected[LLMEM_ERR_SEARCH_TP_NODE] > 0, "TP 16..64 left out by the node (%g)",
        found.rejected[LLMEM_ERR_SEARCH_TP_NODE]);
  int wide = 0, keeps_batch = 1;
  for (int i = 0; i < found.count; i++) {
    wide += found.layouts[i].tp > in.gpus_per_node;
    keeps_batch &= found.layouts[i].dp * found.layouts[i].micro_batch * found.layouts[i].grad_accum == 256;
  }
  CHECK(wide == 0 && keeps_batch, "TP within a node (%d wider), the batch kept (%d)", wide, keeps_batch);
  CHECK(kept_layouts_differ(&in, &opt) == 0, "kept layouts equal their estimates");
  double valid_in_node = found.valid;
  opt.tp_across_nodes = 1;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK && found.rejected[LLMEM_ERR_SEARCH_TP_NODE] == 0 &&
            found.valid > valid_in_node,
        "across nodes: %g valid (within: %g)", found.valid, valid_in_node);
  /* offload, optimizer dtype and engine varied on request */
  llmem_search_defaults(&opt);
  opt.gpus = 256;
  opt.vary_offload = opt.vary_optimizer_dtype = opt.vary_engine = 1;
  opt.free_fraction = 0;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK && found.count > 0, "varied search");
  int engines = 0, offloaded = 0, bf16_states = 0;
  for (int i = 0; i < found.count; i++) {
    engines |= 1 << found.layouts[i].engine;
    offloaded += found.layouts[i].offload_optimizer == LLMEM_OFFLOAD_CPU;
    bf16_states += found.layouts[i].optimizer_dtype == LLMEM_DTYPE_BF16;
  }
  CHECK(engines != (1 << LLMEM_ENGINE_MEGATRON), "other engines kept too (mask %d)", engines);
  CHECK(offloaded > 0 && bf16_states > 0, "offloaded %d, bf16 states %d", offloaded, bf16_states);
  CHECK(kept_layouts_differ(&in, &opt) == 0, "varied: kept layouts equal their estimates");
}

int main(void) {
  global_batch_key();
  search_batch_and_reasons();
  llmem_input in;
  llmem_defaults(&in);
  /* a sweep along the sequence never lowers allocated memory (reserved may
   * dip near capacity: the caching allocator frees its cache and retries) */
  int seq = llmem_field_index("training.seq_len");
  double values[16];
  llmem_sweep_point points[16];
  for (int i = 0; i < 16; i++) values[i] = 1024.0 * (i + 1);
  CHECK(llmem_sweep(&in, seq, values, 16, points) == LLMEM_OK, "sweep");
  for (int i = 1; i < 16; i++)
    CHECK(points[i].readings.peak_allocated_bytes >= points[i - 1].readings.peak_allocated_bytes,
          "sweep monotone at %d", i);
  /* a sweep point equals the direct estimate */
  in.seq_len = values[7];
  llmem_estimate(&in, &full);
  CHECK_NEAR(points[7].readings.device_used_bytes, full.per_gpu.device_used_bytes, 0, "sweep = estimate");
  llmem_defaults(&in);

  /* the largest micro-batch that fits agrees with direct estimates at the boundary */
  int mb = llmem_field_index("training.micro_batch");
  in.recompute = LLMEM_RECOMPUTE_FULL;
  double best = 0;
  CHECK(llmem_largest_fit(&in, mb, 1, 256, 1, 0.10, &best) == LLMEM_OK && best >= 1, "largest micro-batch %g", best);
  llmem_readings r;
  in.micro_batch = best;
  llmem_estimate_readings(&in, &r);
  CHECK(r.device_used_bytes <= 0.9 * r.capacity_bytes, "best fits");
  in.micro_batch = best + 1;
  llmem_estimate_readings(&in, &r);
  CHECK(r.device_used_bytes > 0.9 * r.capacity_bytes, "best + 1 does not");
  /* the longest sequence, on multiples of 1024 */
  llmem_defaults(&in);
  CHECK(llmem_largest_fit(&in, seq, 1024, 1048576, 1024, 0.10, &best) == LLMEM_OK && best >= 1024,
        "longest sequence %g", best);
  in.seq_len = best + 1024;
  llmem_estimate_readings(&in, &r);
  CHECK(r.device_used_bytes > 0.9 * r.capacity_bytes, "longest + 1024 does not fit");

  /* layout search: Llama-3.1-70B shape on 64 H100s, global batch 64 */
  llmem_defaults(&in);
  in.layers = 80;
  in.hidden = 8192;
  in.heads = 64;
  in.kv_heads = 8;
  in.ffn_hidden = 28672;
  in.seq_len = 8192;
  in.engine = LLMEM_ENGINE_FSDP2;
  llmem_search_options opt;
  llmem_search_defaults(&opt);
  opt.gpus = 64;
  opt.global_batch = 64;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK, "search status %d", found.status);
  CHECK(found.count > 0 && found.fitting >= found.count,
        "fitting layouts: %d kept of %g fitting, %g valid, %g candidates", found.count, found.fitting, found.valid,
        found.candidates);
  int pareto = 0;
  for (int i = 0; i < found.count; i++) {
    const llmem_layout *l = &found.layouts[i];
    llmem_input c = in;
    c.gpus = 64;
    c.tp = l->tp;
    c.pp = l->pp;
    c.vpp = l->vpp;
    c.cp = l->cp;
    c.ep = l->ep;
    c.micro_batch = l->micro_batch;
    c.grad_accum = l->grad_accum;
    c.recompute = l->recompute;
    c.fsdp_strategy = l->fsdp_strategy;
    c.sequence_parallel = l->sequence_parallel;
    c.pp_schedule = l->pp_schedule;
    c.zero_stage = l->zero_stage;
    c.distributed_optimizer = l->distributed_optimizer;
    llmem_status st = llmem_estimate(&c, &full);
    CHECK(st == LLMEM_OK, "layout %d valid: %s", i, full.error_message);
    CHECK(full.per_gpu.device_used_bytes <= 0.9 * full.capacity_bytes, "layout %d fits (%.1f GiB)", i,
          full.per_gpu.device_used_bytes / 1073741824.0);
    CHECK(l->dp * l->tp * l->pp * l->cp == 64 && l->dp * l->micro_batch * l->grad_accum == 64, "layout %d sizes", i);
    if (i > 0) CHECK(l->step_seconds >= found.layouts[i - 1].step_seconds, "sorted by step time");
    pareto += l->pareto;
  }
  CHECK(pareto >= 1 && found.layouts[0].pareto, "the fastest is on the Pareto front");
  CHECK(found.layouts[0].tp <= 8, "best layout keeps TP within a node (tp %g)", found.layouts[0].tp);

  /* DeepSeek-V3 shape (8 dense layers first): the first MoE stage, a middle
   * stage, is the most loaded; every kept layout must equal its estimate */
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
  opt.gpus = 256;
  opt.global_batch = 512;
  opt.vary_recompute = 0;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK && found.count > 0, "deepseek search: %d kept", found.count);
  int differ = kept_layouts_differ(&in, &opt);
  CHECK(differ == 0, "deepseek search: %d of %d kept layouts differ from their estimate", differ, found.count);

  /* options out of range: a status naming the option, never a config key */
  llmem_defaults(&in);
  llmem_search_defaults(&opt);
  opt.gpus = 0;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_ERR_OPTION_GPUS && found.error_field == -1, "gpus 0: %d",
        found.status);
  llmem_search_defaults(&opt);
  opt.free_fraction = 1.5;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_ERR_OPTION_FREE_FRACTION, "search free 1.5: %d", found.status);
  llmem_search_defaults(&opt);
  opt.global_batch = 2.5;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_ERR_OPTION_GLOBAL_BATCH, "global batch 2.5: %d", found.status);
  llmem_search_defaults(&opt);
  opt.max_micro_batch = 0;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_ERR_OPTION_MAX_MICRO_BATCH, "max mb 0: %d", found.status);
  CHECK(llmem_largest_fit(&in, mb, 1, 64, 1, 1.5, &best) == LLMEM_ERR_OPTION_FREE_FRACTION, "largest fit free 1.5");
  CHECK(llmem_largest_fit(&in, mb, 1, 64, 1, -0.1, &best) == LLMEM_ERR_OPTION_FREE_FRACTION, "largest fit free -0.1");
  CHECK(llmem_largest_fit(&in, mb, 8, 4, 1, 0.1, &best) == LLMEM_ERR_OPTION_RANGE, "largest fit lo > hi");
  CHECK(llmem_largest_fit(&in, -1, 1, 4, 1, 0.1, &best) == LLMEM_ERR_OPTION_FIELD, "largest fit field -1");
  CHECK(llmem_sweep(&in, seq, values, LLMEM_MAX_SWEEP + 1, points) == LLMEM_ERR_OPTION_COUNT, "sweep count");
  for (int s = LLMEM_ERR_OPTION_GPUS; s <= LLMEM_ERR_OPTION_COUNT; s++)
    CHECK(strstr(llmem_status_message((llmem_status)s), "option") != NULL ||
              strstr(llmem_status_message((llmem_status)s), "sweep"),
          "status %d names its option: %s", s, llmem_status_message((llmem_status)s));

  /* an empty search says why */
  llmem_search_defaults(&opt);
  opt.gpus = 1000000; /* the base global batch (8) splits over no data-parallel size of a million GPUs */
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK && found.count == 0 &&
            found.empty_reason == LLMEM_ERR_SEARCH_NO_BATCH,
        "a million GPUs: reason %d", found.empty_reason);
  llmem_search_defaults(&opt);
  opt.gpus = 8;
  in.memory_gib = 1;
  CHECK(
      llmem_search(&in, &opt, &found) == LLMEM_OK && found.count == 0 && found.empty_reason == LLMEM_ERR_SEARCH_NO_FIT,
      "1 GiB: reason %d", found.empty_reason);
  llmem_defaults(&in);
  in.formula = LLMEM_FORMULA_KORTHIKANTI; /* compat formulas give no readings: every layout fails that check */
  CHECK(
      llmem_search(&in, &opt, &found) == LLMEM_OK && found.count == 0 && found.empty_reason == LLMEM_ERR_COMPAT_ENGINE,
      "compat formula: reason %d field %d", found.empty_reason, found.empty_field);
  llmem_defaults(&in);
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK && found.count > 0 && found.empty_reason == LLMEM_OK,
        "kept: no reason");

  /* the step time grows with the global batch and falls with more GPUs */
  llmem_step_result t1, t2;
  llmem_defaults(&in);
  CHECK(llmem_step_time(&in, &t1) == LLMEM_OK && t1.step_seconds > 0 && t1.tokens_per_second_per_gpu > 0, "step time");
  in.grad_accum = 2;
  llmem_step_time(&in, &t2);
  CHECK(t2.step_seconds > 1.9 * t1.step_seconds, "twice the tokens, about twice the time (%g vs %g)", t2.step_seconds,
        t1.step_seconds);
  return check_report("planner");
}
