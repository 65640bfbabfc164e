/* Every invalid-input class gets a named error: status, key path, allowed values. */
#include <math.h>
#include <string.h>

#include "check.h"

static llmem_result out;

static void expect_error(const char *keys, llmem_status want, const char *path) {
  llmem_input in;
  llmem_defaults(&in);
  set_keys(&in, keys);
  llmem_status st = llmem_estimate(&in, &out);
  CHECK(st == want, "%s: status %d, want %d (%s)", keys, st, want, out.error_message);
  CHECK(strcmp(out.error_path, path) == 0, "%s: path '%s', want '%s'", keys, out.error_path, path);
  CHECK(strstr(out.error_message, path) == out.error_message, "%s: message names the key: %s", keys, out.error_message);
}

int main(void) {
  llmem_input in;
  llmem_defaults(&in);
  CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "defaults are valid: %s", out.error_message);
  CHECK(llmem_estimate(NULL, &out) == LLMEM_ERR_NULL_ARGUMENT, "NULL input");

  /* field classes: zero / negative / NaN / fraction / out-of-range enum / bad set */
  expect_error("model.layers=0", LLMEM_ERR_OUT_OF_RANGE, "model.layers");
  expect_error("training.micro_batch=-1", LLMEM_ERR_OUT_OF_RANGE, "training.micro_batch");
  expect_error("model.hidden=nan", LLMEM_ERR_NOT_NULLABLE, "model.hidden");
  expect_error("training.seq_len=inf", LLMEM_ERR_NOT_A_NUMBER, "training.seq_len");
  expect_error("parallel.tp=1.5", LLMEM_ERR_NOT_INTEGER, "parallel.tp");
  expect_error("training.dropout=1.5", LLMEM_ERR_OUT_OF_RANGE, "training.dropout");
  {
    llmem_defaults(&in);
    in.engine = 99;
    CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_BAD_ENUM, "enum index out of range");
    CHECK(strstr(out.error_message, "fsdp2") != NULL, "message lists the allowed values: %s", out.error_message);
    llmem_defaults(&in);
    in.recompute_modules = 1 << 12;
    CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_BAD_SET, "set bit out of range");
    llmem_defaults(&in);
    in.tied_embeddings = 2;
    CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_BAD_ENUM, "bool must be 0/1");
  }
  /* combinations */
  expect_error("model.heads=32 parallel.engine=megatron parallel.tp=3 parallel.gpus=3", LLMEM_ERR_TP_HEADS,
               "parallel.tp");
  expect_error("model.heads=32 model.kv_heads=5", LLMEM_ERR_HEADS_KV, "model.kv_heads");
  /* head_dim null: hidden / heads rounded down, zero below one (a fuzzer's RL config read NaN from it) */
  expect_error("model.hidden=128 model.heads=2048 model.kv_heads=1", LLMEM_ERR_HEAD_DIM, "model.head_dim");
  expect_error(
      "model.heads=48 model.kv_heads=12 model.ffn_hidden=14400 parallel.engine=megatron parallel.tp=8 parallel.gpus=8",
      LLMEM_ERR_TP_KV_HEADS, "parallel.tp");
  expect_error("model.ffn_hidden=1001 parallel.engine=megatron parallel.tp=2 parallel.gpus=2", LLMEM_ERR_TP_FFN,
               "parallel.tp");
  expect_error("parallel.gpus=6 parallel.engine=megatron parallel.tp=4", LLMEM_ERR_GPUS_LAYOUT, "parallel.gpus");
  expect_error("model.layers=30 parallel.engine=megatron parallel.pp=4 parallel.gpus=4", LLMEM_ERR_PP_LAYERS,
               "parallel.pp");
  expect_error("model.layers=2 parallel.engine=megatron parallel.pp=4 parallel.gpus=4", LLMEM_ERR_PP_LAYERS,
               "parallel.pp");
  expect_error(
      "model.layers=10 parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.pp_first_stage_layers=2",
      LLMEM_ERR_PP_UNEVEN, "parallel.pp_first_stage_layers");
  expect_error("parallel.engine=megatron parallel.pp=2 parallel.gpus=2 parallel.vpp=2", LLMEM_ERR_VPP, "parallel.vpp");
  expect_error(
      "parallel.engine=megatron parallel.pp=2 parallel.gpus=2 parallel.vpp=2 parallel.pp_schedule=interleaved "
      "training.grad_accum=3",
      LLMEM_ERR_INTERLEAVED_MICROBATCHES, "training.grad_accum");
  /* Megatron's micro-batch groups: from pp to m; a last group of fewer than pp is refused */
  expect_error(
      "parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.vpp=2 parallel.pp_schedule=interleaved "
      "training.grad_accum=10 parallel.vpp_group=3",
      LLMEM_ERR_VPP_GROUP, "parallel.vpp_group");
  expect_error(
      "parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.vpp=2 parallel.pp_schedule=interleaved "
      "training.grad_accum=10 parallel.vpp_group=8",
      LLMEM_ERR_INTERLEAVED_MICROBATCHES, "training.grad_accum");
  expect_error(
      "parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.vpp=2 parallel.pp_schedule=interleaved "
      "training.grad_accum=2",
      LLMEM_ERR_INTERLEAVED_MICROBATCHES, "training.grad_accum");
  /* DualPipe (dualpipe.py DualPipe.step: num_ranks % 2 == 0, num_chunks % 2 == 0 and >= 2 num_ranks) */
  expect_error(
      "model.layers=24 parallel.engine=megatron parallel.pp=3 parallel.gpus=3 parallel.vpp=2 "
      "parallel.pp_schedule=dualpipe training.grad_accum=6",
      LLMEM_ERR_DUALPIPE, "parallel.pp");
  expect_error(
      "parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.pp_schedule=dualpipe training.grad_accum=8",
      LLMEM_ERR_DUALPIPE, "parallel.vpp");
  expect_error(
      "model.layers=32 parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.vpp=2 "
      "parallel.pp_schedule=dualpipe training.grad_accum=8 parallel.pp_first_stage_layers=5",
      LLMEM_ERR_DUALPIPE, "parallel.pp_first_stage_layers");
  expect_error(
      "parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.vpp=2 parallel.pp_schedule=dualpipe "
      "training.grad_accum=6",
      LLMEM_ERR_DUALPIPE_MICROBATCHES, "training.grad_accum");
  expect_error(
      "parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.vpp=2 parallel.pp_schedule=dualpipe "
      "training.grad_accum=9",
      LLMEM_ERR_DUALPIPE_MICROBATCHES, "training.grad_accum");
  llmem_defaults(&in);
  set_keys(&in,
           "parallel.engine=megatron parallel.pp=4 parallel.gpus=4 parallel.vpp=2 parallel.pp_schedule=dualpipe "
           "training.grad_accum=8");
  CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "dualpipe p 4 m 8: %s", out.error_message);
  llmem_defaults(&in);
  /* global batch: 8 GPUs x micro-batch 2 = 16 samples per accumulation step */
  expect_error("parallel.gpus=8 training.micro_batch=2 training.global_batch=24", LLMEM_ERR_GLOBAL_BATCH_SPLIT,
               "training.global_batch");
  expect_error("parallel.gpus=8 training.micro_batch=2 training.global_batch=64 training.grad_accum=2",
               LLMEM_ERR_GLOBAL_BATCH_ACCUM, "training.global_batch");
  expect_error("parallel.gpus=1 parallel.engine=single training.global_batch=2000000", LLMEM_ERR_GLOBAL_BATCH_STEPS,
               "training.global_batch");
  expect_error("parallel.engine=fsdp2 parallel.cp=4 training.seq_len=4100", LLMEM_ERR_CP_SEQ, "parallel.cp");
  /* Ulysses: the all-to-all part divides cp and the heads a rank holds; without a ring, chunks need no pairs */
  expect_error("parallel.cp=4 parallel.cp_all_to_all=3", LLMEM_ERR_CP_A2A, "parallel.cp_all_to_all");
  expect_error("model.heads=12 model.kv_heads=12 parallel.cp=8 parallel.cp_all_to_all=8", LLMEM_ERR_CP_A2A_HEADS,
               "parallel.cp_all_to_all");
  expect_error("parallel.cp=4 parallel.cp_all_to_all=2 training.seq_len=4100", LLMEM_ERR_CP_SEQ, "parallel.cp");
  {
    llmem_defaults(&in);
    set_keys(&in, "parallel.engine=ddp parallel.cp=4 parallel.cp_all_to_all=4 training.seq_len=4100");
    CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "Ulysses under DDP, seq_len a multiple of cp only: %s",
          out.error_message);
    set_keys(&in, "parallel.engine=deepspeed parallel.zero_stage=3");
    CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "Ulysses under ZeRO-3: %s", out.error_message);
  }
  expect_error("model.moe.top_k=2", LLMEM_ERR_MOE_REQUIRED, "model.moe.experts");
  expect_error("model.moe.experts=4 model.moe.top_k=8", LLMEM_ERR_MOE_TOP_K, "model.moe.top_k");
  expect_error("parallel.ep=2", LLMEM_ERR_EP_DENSE, "parallel.ep");
  expect_error("model.moe.experts=6 parallel.ep=4", LLMEM_ERR_EP_EXPERTS, "parallel.ep");
  expect_error("model.moe.experts=16 parallel.ep=16", LLMEM_ERR_EP_GROUP, "parallel.ep");
  expect_error("model.mla.kv_lora_rank=512", LLMEM_ERR_MLA_DIMS, "model.mla.kv_lora_rank");
  expect_error("parallel.engine=single parallel.gpus=8", LLMEM_ERR_ENGINE_SINGLE, "parallel.engine");
  expect_error("parallel.engine=fsdp2 parallel.zero_stage=2", LLMEM_ERR_ZERO_ENGINE, "parallel.zero_stage");
  expect_error("parallel.engine=deepspeed parallel.zero_stage=3 parallel.pp=2", LLMEM_ERR_ZERO_PP,
               "parallel.zero_stage");
  expect_error("parallel.engine=fsdp2 parallel.distributed_optimizer=true", LLMEM_ERR_DIST_OPT_ENGINE,
               "parallel.distributed_optimizer");
  expect_error("parallel.engine=ddp parallel.offload_optimizer=cpu", LLMEM_ERR_OFFLOAD_OPT_ENGINE,
               "parallel.offload_optimizer");
  expect_error("parallel.engine=deepspeed parallel.zero_stage=2 parallel.offload_params=cpu",
               LLMEM_ERR_OFFLOAD_PARAMS_ENGINE, "parallel.offload_params");
  expect_error("parallel.engine=fsdp2 parallel.offload_params=cpu", LLMEM_ERR_FSDP_OFFLOAD_SPLIT,
               "parallel.offload_params");
  expect_error("parallel.engine=ddp parallel.tp=2", LLMEM_ERR_TP_ENGINE, "parallel.tp");
  expect_error("training.finetune.method=lora training.finetune.lora_targets=", LLMEM_ERR_LORA_TARGETS,
               "training.finetune.lora_targets");
  expect_error("training.recompute_layers=4", LLMEM_ERR_RECOMPUTE_LAYERS, "training.recompute_layers");
  expect_error("training.dtype=fp8 training.master_weights=false", LLMEM_ERR_FP8_MASTER, "training.master_weights");
  expect_error("parallel.engine=deepspeed training.autocast=true", LLMEM_ERR_AUTOCAST_ENGINE, "training.autocast");
  expect_error("parallel.engine=deepspeed parallel.accumulate_no_sync=true", LLMEM_ERR_NO_SYNC_ENGINE,
               "parallel.accumulate_no_sync");
  expect_error("training.autocast=true training.master_weights=false", LLMEM_ERR_AUTOCAST_ENGINE, "training.autocast");
  expect_error("training.autocast=true training.dtype=fp32", LLMEM_ERR_AUTOCAST_ENGINE, "training.autocast");
  expect_error("training.autocast=true training.finetune.method=lora", LLMEM_ERR_AUTOCAST_ENGINE, "training.autocast");
  expect_error("model.mtp_layers=1", LLMEM_ERR_MTP_ENGINE, "model.mtp_layers");
  expect_error("model.mtp_layers=1 parallel.engine=megatron parallel.gpus=2 parallel.cp=2", LLMEM_ERR_MTP_ENGINE,
               "model.mtp_layers");
  expect_error("formula=deepspeed parallel.engine=fsdp2", LLMEM_ERR_COMPAT_ENGINE, "formula");
  expect_error("parallel.engine=fsdp2 parallel.fsdp_strategy=hybrid_shard parallel.fsdp_shard_size=3",
               LLMEM_ERR_SHARD_SIZE, "parallel.fsdp_shard_size");
  /* hybrid_shard's default shard (one node) does not divide: name gpus_per_node, not the unset fsdp_shard_size */
  expect_error("parallel.engine=fsdp2 parallel.fsdp_strategy=hybrid_shard parallel.gpus=12 parallel.gpus_per_node=8",
               LLMEM_ERR_SHARD_NODE, "parallel.gpus_per_node");

  /* range messages print the real bounds: 0.999, 0.01 (not "0 to 0", not "above 0") */
  expect_error("training.dropout=1.5", LLMEM_ERR_OUT_OF_RANGE, "training.dropout");
  CHECK(strstr(out.error_message, "from 0 to 0.999)") != NULL, "dropout bounds: %s", out.error_message);
  expect_error("runtime.compute_efficiency=0", LLMEM_ERR_OUT_OF_RANGE, "runtime.compute_efficiency");
  CHECK(strstr(out.error_message, "from 0.01 to 1)") != NULL, "efficiency bounds: %s", out.error_message);
  expect_error("hardware.memory_gib=0", LLMEM_ERR_OUT_OF_RANGE, "hardware.memory_gib");
  CHECK(strstr(out.error_message, "from 0.001 to 1000000)") != NULL, "memory bounds: %s", out.error_message);

  /* compat formulas refuse what their sources do not model, as the status says */
  expect_error(
      "formula=megatron parallel.engine=megatron parallel.distributed_optimizer=true parallel.offload_optimizer=cpu",
      LLMEM_ERR_COMPAT_FEATURE, "formula");
  expect_error(
      "formula=deepspeed parallel.engine=deepspeed parallel.zero_stage=3 parallel.offload_params=nvme "
      "parallel.offload_optimizer=nvme",
      LLMEM_ERR_COMPAT_FEATURE, "formula");
  expect_error(
      "formula=korthikanti parallel.engine=megatron model.mla.kv_lora_rank=512 model.mla.qk_nope_head_dim=128 "
      "model.mla.qk_rope_head_dim=64 model.mla.v_head_dim=128",
      LLMEM_ERR_COMPAT_FEATURE, "formula");
  expect_error(
      "formula=zero_paper parallel.engine=deepspeed parallel.zero_stage=1 model.mla.kv_lora_rank=512 "
      "model.mla.qk_nope_head_dim=128 model.mla.qk_rope_head_dim=64 model.mla.v_head_dim=128",
      LLMEM_ERR_COMPAT_FEATURE, "formula");
  llmem_defaults(&in);
  set_keys(&in, "formula=deepspeed parallel.engine=deepspeed parallel.zero_stage=2 parallel.offload_optimizer=cpu");
  CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "deepspeed formula models CPU offload: %s", out.error_message);
  /* megatron compat: its own parameter count, trainable never above total */
  static const char *compat[] = {"formula=megatron parallel.engine=megatron",
                                 "formula=megatron_bridge parallel.engine=megatron",
                                 "formula=megatron parallel.engine=megatron model.moe.experts=8 model.moe.top_k=2"};
  for (int i = 0; i < 3; i++) {
    llmem_defaults(&in);
    set_keys(&in, compat[i]);
    CHECK(llmem_estimate(&in, &out) == LLMEM_OK && out.params_trainable <= out.params_total &&
              out.params_active <= out.params_total,
          "%s: trainable %g, active %g, total %g", compat[i], out.params_trainable, out.params_active,
          out.params_total);
  }

  /* every status has its own message */
  for (int s = 1; s < LLMEM_STATUS_COUNT; s++)
    for (int t = s + 1; t < LLMEM_STATUS_COUNT; t++)
      CHECK(strcmp(llmem_status_message((llmem_status)s), llmem_status_message((llmem_status)t)) != 0,
            "statuses %d, %d share a message", s, t);
  /* the field table: unique paths, defaults within range */
  for (int i = 0; i < LLMEM_FIELD_COUNT; i++) {
    const llmem_field *f = llmem_field_at(i);
    CHECK(llmem_field_index(f->path) == i, "duplicate path %s", f->path);
  }
  return check_report("validate");
}
