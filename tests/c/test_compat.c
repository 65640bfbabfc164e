/* Compat formulas fed directly with the upstream vectors (docs/memory-model.md §12). */
#include <math.h>

#include "check.h"
#include "compat.h"
#include "internal.h"

static const int br_moe_uneven_pattern[8] = {0, 1, 0, 0, 1, 0, 1, 1};
static int list_pattern(const void *ctx, int layer) { return ((const int *)ctx)[layer]; }

static megatron_args bridge_defaults(void) {
  /* Megatron-Bridge unit-test config (test_theoretical_memory_utils.py) */
  megatron_args a = {0};
  a.num_layers = 4;
  a.hidden_size = 16;
  a.seq_length = 8;
  a.ffn_hidden_size = 64;
  a.num_attention_heads = 4;
  a.kv_channels = 4;
  a.padded_vocab_size = 32;
  a.tensor_model_parallel_size = 2;
  a.pipeline_model_parallel_size = 2;
  a.context_parallel_size = 1;
  a.expert_model_parallel_size = 1;
  a.expert_tensor_parallel_size = 1;
  a.moe_router_topk = 1;
  a.micro_batch_size = 2;
  a.use_distributed_optimizer = 1;
  a.data_parallel_size = 4;
  return a;
}

int main(void) {
  /* Bridge MoE with an uneven pipeline and a list pattern: dense 5,856 / routed 4,096 per GPU */
  megatron_args a = bridge_defaults();
  a.num_layers = 8;
  a.tensor_model_parallel_size = 1;
  a.pipeline_model_parallel_size = 4;
  a.num_layers_in_first_pipeline_stage = 1;
  a.num_layers_in_last_pipeline_stage = 3;
  a.untie_embeddings_and_output_weights = 1;
  a.num_experts = 2;
  a.moe_ffn_hidden_size = 32;
  a.is_moe_layer = list_pattern;
  a.pattern_ctx = br_moe_uneven_pattern;
  bridge_estimate e = bridge_estimate_memory(&a);
  CHECK_NEAR(e.dense_gpu, 5856, 0, "br moe uneven dense");
  CHECK_NEAR(e.routed_gpu, 4096, 0, "br moe uneven routed");
  /* Bridge dense: 13,088 params, 3,400 per GPU, 9 B/param, 30,600 B */
  a = bridge_defaults();
  e = bridge_estimate_memory(&a);
  CHECK_NEAR(e.dense_total + e.embedding, 13088, 0, "br dense params");
  CHECK_NEAR(e.dense_gpu, 3400, 0, "br dense per gpu");
  CHECK_NEAR(e.dense_bpp, 9, 0, "br dense bpp");
  CHECK_NEAR(e.weights_optimizer_bytes, 30600, 0, "br dense bytes");

  /* DeepSpeed documentation (memory.rst, t5-3b: 2851e6 params, largest layer 32e6, 1 node x 8) */
  double gpu, cpu;
  deepspeed_zero2(2851e6, 8, 1, 1, 0, &gpu, &cpu);
  CHECK_NEAR(gpu, 5702000000.0, 0, "ds z2 offload gpu");
  CHECK_NEAR(cpu, 136848000000.0, 0, "ds z2 offload cpu");
  deepspeed_zero2(2851e6, 8, 1, 0, 1, &gpu, &cpu);
  CHECK_NEAR(gpu, 17106000000.0, 0, "ds z2 legacy gpu (15.93 GiB)");
  deepspeed_zero2(2851e6, 8, 1, 0, 0, &gpu, &cpu);
  CHECK_NEAR(gpu, 12116750000.0, 0, "ds z2 HEAD gpu (11.28 GiB)");
  const double z3_cpu[6] = {76977000000.0, 136848000000.0, 68424000000.0, 136848000000.0, 1536000000.0, 136848000000.0};
  const double z3_gpu[6] = {128000000.0, 128000000.0, 840750000.0, 840750000.0, 6542750000.0, 6542750000.0};
  const int flags[6][3] = {{1, 1, 1}, {1, 1, 0}, {1, 0, 1}, {1, 0, 0}, {0, 0, 1}, {0, 0, 0}};
  for (int i = 0; i < 6; i++) {
    deepspeed_zero3(2851e6, 32e6, 8, 1, flags[i][0], flags[i][1], flags[i][2], &gpu, &cpu);
    CHECK_NEAR(gpu, z3_gpu[i], 0, "ds z3 gpu");
    CHECK_NEAR(cpu, z3_cpu[i], 0, "ds z3 cpu");
  }

  /* ZeRO paper Table 1 (GB = 1e9, K = 12), rounded as printed */
  const double dps[6] = {1, 4, 16, 64, 256, 1024};
  const double os75[6] = {120, 52.5, 35.62, 31.41, 30.35, 30.09};
  const double osg75[6] = {120, 41.25, 21.56, 16.64, 15.41, 15.10};
  const double osgp75[6] = {120, 30, 7.5, 1.875, 0.469, 0.117};
  for (int i = 0; i < 6; i++) {
    CHECK_NEAR(rint(zero_paper_model_states(7.5e9, dps[i], 12, 1) / 1e7) / 100, os75[i], 0, "zero table1 os");
    CHECK_NEAR(rint(zero_paper_model_states(7.5e9, dps[i], 12, 2) / 1e7) / 100, osg75[i], 0, "zero table1 os+g");
    CHECK_NEAR(rint(zero_paper_model_states(7.5e9, dps[i], 12, 3) / 1e6) / 1000, osgp75[i], 0, "zero table1 os+g+p");
  }
  CHECK_NEAR(zero_paper_model_states(1e12, 1024, 12, 3) / 1e9, 15.625, 0, "zero 1T os+g+p");

  /* Korthikanti Table 2 rows for GPT-3 (s=2048, b=1, h=12288, a=96, t=8) */
  const double rows[6] = {2868903936.0, 578813952.0, 358612992.0, 327155712.0, 106954752.0, 50331648.0};
  for (int r = 0; r < 6; r++)
    CHECK_NEAR(korthikanti_layer_bytes(2048, 1, 12288, 96, 8, (korthikanti_row)r), rows[r], 0, "korthikanti row");
  /* E14: caching-allocator rounding (c10 CUDACachingAllocator constants) */
  const double req[4] = {1000, 1048577, 5000000, 100000001};
  const double block[4] = {1024, 1049088, 5000192, 100000256};
  const double segment[4] = {2097152, 20971520, 20971520, 100663296};
  for (int i = 0; i < 4; i++) {
    CHECK_NEAR(allocator_block_bytes(req[i]), block[i], 0, "allocator block");
    CHECK_NEAR(allocator_segment_bytes(req[i]), segment[i], 0, "allocator segment");
  }
  return check_report("compat");
}
