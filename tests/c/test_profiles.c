/* Training-stack profiles (core/profiles.def): which row a framework and
 * version pick, that explicit keys win, and the mechanisms they switch,
 * each against a hand-computed number. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "check_plan.h"

static llmem_input in;
static double value_of(const char *keys, const char *path) {
  llmem_defaults(&in);
  CHECK(set_keys(&in, keys), "keys %s", keys);
  return llmem_profile_value(&in, llmem_field_index(path), 0, 0);
}

/* `keys` with the boolean `flag` true (on) and false (off); each buffer 512 bytes. */
static void both_ways(const char *keys, const char *flag, char *on, char *off) {
  snprintf(on, 512, "%s %s=true", keys, flag);
  snprintf(off, 512, "%s %s=false", keys, flag);
}

static void rows(void) {
  const char *impl = "training.optimizer_impl", *loss = "training.loss";
  CHECK(value_of("", impl) == LLMEM_OPT_IMPL_FOREACH, "generic: torch AdamW picks foreach");
  CHECK(value_of("runtime.framework_version=2022-06", impl) == LLMEM_OPT_IMPL_FOR_LOOP,
        "PyTorch 1.x: foreach=None is the for loop");
  CHECK(value_of("runtime.framework=torchtitan runtime.framework_version=2024-12", impl) == LLMEM_OPT_IMPL_FOREACH,
        "torchtitan before 6e4988550: foreach");
  CHECK(value_of("runtime.framework=torchtitan runtime.framework_version=2025-06", impl) == LLMEM_OPT_IMPL_FUSED,
        "torchtitan v0.1.0: fused");
  CHECK(value_of("runtime.framework=torchtitan", impl) == LLMEM_OPT_IMPL_FUSED, "no version: the current code");
  CHECK(value_of("runtime.framework=torchtitan runtime.framework_version=2025-06 runtime.torch_compile=true", loss) ==
            LLMEM_LOSS_COMPILED,
        "torchtitan compiles the loss with the model");
  CHECK(value_of("runtime.framework=torchtitan runtime.framework_version=2025-06", loss) == LLMEM_LOSS_STANDARD,
        "without compile: the generic loss");
  CHECK(value_of("runtime.framework=torchtitan runtime.framework_version=2025-06 parallel.tp=8", loss) ==
            LLMEM_LOSS_LOSS_PARALLEL,
        "torchtitan under TP: loss_parallel");
  CHECK(value_of("runtime.framework=torchtitan parallel.tp=8 runtime.torch_compile=true", loss) == LLMEM_LOSS_COMPILED,
        "compiled wins over loss_parallel (dynamo traces the DTensor handlers)");
  CHECK(value_of("runtime.framework=torchtune runtime.framework_version=2024-05", impl) == LLMEM_OPT_IMPL_FOR_LOOP,
        "torchtune full fine-tuning before cca50f02e: foreach False");
  CHECK(value_of("runtime.framework=torchtune runtime.framework_version=2024-05 training.finetune.method=lora", impl) ==
            LLMEM_OPT_IMPL_FOREACH,
        "torchtune LoRA configs then set no kernel: foreach");
  CHECK(value_of("runtime.framework=hf_trainer rl.algorithm=grpo", loss) == LLMEM_LOSS_SELECTIVE,
        "TRL's RL trainers: selective_log_softmax");
  CHECK(value_of("runtime.framework=hf_trainer rl.algorithm=dpo runtime.framework_version=2025-01", loss) ==
            LLMEM_LOSS_STANDARD,
        "TRL before #2799: the generic loss");
  CHECK(value_of("runtime.framework=hf_trainer", loss) == LLMEM_LOSS_STANDARD, "SFT: the model's own loss");
  CHECK(value_of("runtime.framework=axolotl rl.algorithm=dpo", loss) == LLMEM_LOSS_SELECTIVE, "axolotl: TRL's DPO");
  CHECK(value_of("runtime.framework=deepspeed rl.algorithm=grpo", loss) == LLMEM_LOSS_STANDARD,
        "OpenRLHF on DeepSpeed upcasts its logits: not TRL's row-wise log-softmax");
  CHECK(
      value_of("runtime.framework=llamafactory runtime.framework_version=2025-09", impl) == LLMEM_OPT_IMPL_FUSED &&
          value_of("runtime.framework=llamafactory runtime.framework_version=2025-06", impl) == LLMEM_OPT_IMPL_FOREACH,
      "LLaMA-Factory: the HF Trainer's optimizer default");
  CHECK(value_of("runtime.framework=llamafactory runtime.framework_version=2025-06 parallel.engine=megatron", impl) ==
            LLMEM_OPT_IMPL_FUSED,
        "LLaMA-Factory on Megatron (mcore_adapter, Megatron-Bridge): Megatron's rows");
  CHECK(value_of("runtime.framework=axolotl runtime.framework_version=2024-03", loss) == LLMEM_LOSS_HF_UPCAST,
        "axolotl inherits the HF model code of its month");
  CHECK(value_of("runtime.framework=axolotl runtime.framework_version=2024-03", impl) == LLMEM_OPT_IMPL_FOR_LOOP,
        "axolotl adamw_hf");
  CHECK(value_of("runtime.framework=deepspeed runtime.framework_version=2024-03", impl) == LLMEM_OPT_IMPL_FUSED,
        "DeepSpeed FusedAdam, not the HF Trainer's");
  CHECK(value_of("runtime.framework=nemo", impl) == LLMEM_OPT_IMPL_FUSED, "NeMo inherits Megatron Core");
  CHECK(isnan(value_of("runtime.framework=torchtitan training.optimizer_impl=foreach", impl)), "an explicit key wins");
  CHECK(value_of("runtime.framework_version=2024-03", "training.finetune.quant_keeps_input") == 1,
        "bitsandbytes 0.43.1 keeps A");
  CHECK(value_of("runtime.framework_version=2024-09", "training.finetune.quant_keeps_input") == 0, "0.43.2 does not");
  CHECK(isnan(value_of("", "training.repeat_kv")), "generic: no row, the attention kernel decides");
  CHECK(value_of("runtime.framework=litgpt", "training.finetune.quant_head") == 1, "Fabric quantises lm_head too");
  CHECK(value_of("runtime.framework=litgpt", "training.finetune.quant_from_fp16") == 1, "Fabric quantises from fp16");
  CHECK(value_of("runtime.framework=litgpt", "training.finetune.quant_inputs_held") == 1, "fit() keeps logits");
  CHECK(isnan(value_of("runtime.framework=hf_trainer", "training.finetune.quant_head")), "HF skips lm_head: no row");
  CHECK(value_of("runtime.framework=hf_trainer", "training.finetune.quant_dequant_temp") == 1,
        "bitsandbytes MatMul4Bit dequantises per matmul");
  CHECK(value_of("runtime.framework=torchtune", "training.finetune.quant_dequant_temp") == 0,
        "torchtune: torchao NF4, not MatMul4Bit");
  const char *no_sync = "parallel.accumulate_no_sync";
  CHECK(value_of("runtime.framework=hf_trainer parallel.engine=fsdp1", no_sync) == 1, "accelerate no_sync on FSDP1");
  CHECK(value_of("runtime.framework=axolotl parallel.engine=fsdp1", no_sync) == 1, "axolotl runs the HF Trainer");
  CHECK(
      isnan(value_of("runtime.framework=hf_trainer runtime.framework_version=2025-08 parallel.engine=fsdp2", no_sync)),
      "FSDP2 modules have no no_sync: accelerate's was a null context");
  CHECK(value_of("runtime.framework=hf_trainer runtime.framework_version=2025-09 parallel.engine=fsdp2", no_sync) == 1,
        "accelerate #3762: set_requires_gradient_sync(False)");
  CHECK(isnan(value_of("runtime.framework=deepspeed parallel.engine=deepspeed", no_sync)), "DeepSpeed: no row");
  CHECK(value_of("runtime.framework=litgpt parallel.engine=fsdp1", no_sync) == 1, "fabric.no_backward_sync");
  CHECK(isnan(value_of("parallel.engine=fsdp1", no_sync)), "a plain loop: no row (reduce-scatter every micro-batch)");
  const char *unused = "parallel.ddp_find_unused_parameters", *ddp = "parallel.engine=ddp ";
  char k[160];
  struct {
    const char *keys;
    double want;
    const char *why;
  } cases[] = {
      {"", 0, "PyTorch's default"},
      {"runtime.framework=accelerate", 0, "DistributedDataParallelKwargs' default, not the HF Trainer's choice"},
      {"runtime.framework=hf_trainer training.recompute=none", 1, "the Trainer: not is_gradient_checkpointing"},
      {"runtime.framework=hf_trainer training.recompute=full", 0, "the Trainer: gradient checkpointing on"},
      {"runtime.framework=hf_trainer training.recompute=full training.finetune.method=lora", 1,
       "a PEFT model is not a PreTrainedModel: True"},
      {"runtime.framework=axolotl training.recompute=none", 1, "axolotl runs the HF Trainer"},
      {"runtime.framework=llamafactory training.finetune.method=lora", 0, "LLaMA-Factory: False for LoRA"},
      {"runtime.framework=llamafactory training.recompute=none", 1, "LLaMA-Factory full: the Trainer's"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(k, sizeof k, "%s%s", ddp, cases[i].keys);
    CHECK(value_of(k, unused) == cases[i].want, "%s: %s", cases[i].keys, cases[i].why);
  }
  CHECK(value_of("runtime.framework=litgpt", "training.autocast") == 1, "Fabric FSDP bf16-mixed: fp32 param_dtype");
  CHECK(isnan(value_of("runtime.framework=litgpt training.finetune.method=lora", "training.autocast")),
        "LoRA: the base dtype says it (no row)");
  CHECK(isnan(value_of("runtime.framework=torchtune", "training.autocast")), "torchtune: no row, by engine");
  CHECK(value_of("", "training.finetune.quant_experts") == 1, "generic: experts are nn.Linear modules, quantized");
  CHECK(value_of("runtime.framework=hf_trainer runtime.framework_version=2025-11", "training.finetune.quant_experts") ==
            1,
        "transformers 4.x: one nn.Linear MLP per expert");
  CHECK(value_of("runtime.framework=hf_trainer", "training.finetune.quant_experts") == 0,
        "transformers v5: fused 3D experts stay in the model dtype");
  CHECK(value_of("runtime.framework=axolotl runtime.framework_version=2026-07", "training.finetune.quant_experts") == 0,
        "axolotl inherits transformers' experts");
  CHECK(value_of("runtime.framework=litgpt", "training.finetune.quant_experts") == 1, "LitGPT: per-expert Linear");
  plan pl = plan_for("runtime.framework=torchtitan runtime.framework_version=2025-06");
  CHECK(pl.optimizer_impl == LLMEM_OPT_IMPL_FUSED && pl.repeat_kv == 1, "the plan takes the profile");
  pl = plan_for("runtime.framework=torchtitan runtime.framework_version=2025-06 training.repeat_kv=false");
  CHECK(pl.repeat_kv == 0, "explicit repeat_kv wins in the plan");
}

/* Llama-3-8B shape, one rank, s = 4096, b = 1, pure bf16 (no autocast), flash attention. */
#define LLAMA                                                                                 \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 " \
  "training.master_weights=false "                                                            \
  "training.seq_len=4096 parallel.gpus=1 parallel.engine=single "

static void mechanisms(void) {
  double T = 4096, ab = 2, d = 128;
  /* repeat_kv: saved K and V at 32 heads instead of 8: + 2 * T * (32 - 8) * 128 * 2 B */
  plan a = plan_for(LLAMA "training.repeat_kv=false"), b = plan_for(LLAMA "training.repeat_kv=true");
  double grow = layer_activation_bytes(&b, 0, 0).saved_full_bytes - layer_activation_bytes(&a, 0, 0).saved_full_bytes;
  CHECK_NEAR(grow, 2 * T * (32 - 8) * d * ab, 0, "repeat_kv keeps K/V per query head");
  /* PyTorch <= 2.1 kept torch.mean's input: each eager RMSNorm keeps its fp32 x.float().pow(2) too: 2 norms x T x h x 4 B;
   * lit-gpt's norm without the upcast squares in bf16: 2 B */
  a = plan_for(LLAMA "training.mean_keeps_input=false");
  b = plan_for(LLAMA "training.mean_keeps_input=true");
  grow = layer_activation_bytes(&b, 0, 0).saved_full_bytes - layer_activation_bytes(&a, 0, 0).saved_full_bytes;
  CHECK_NEAR(grow, 2 * T * 4096 * 4, 0, "torch.mean keeps the fp32 square of each RMSNorm's input");
  a = plan_for(LLAMA "training.mean_keeps_input=false training.norm_upcast=false");
  b = plan_for(LLAMA "training.mean_keeps_input=true training.norm_upcast=false");
  grow = layer_activation_bytes(&b, 0, 0).saved_full_bytes - layer_activation_bytes(&a, 0, 0).saved_full_bytes;
  CHECK_NEAR(grow, 2 * T * 4096 * ab, 0, "without the upcast, the bf16 square");
  CHECK(value_of("runtime.framework=litgpt runtime.framework_version=2023-10", "training.mean_keeps_input") == 1 &&
            value_of("runtime.framework=litgpt runtime.framework_version=2024-03", "training.mean_keeps_input") != 1,
        "PyTorch 2.1 in October 2023, 2.2 from 2024-02");
  /* a parallel block with one norm: the second norm's fp32 input (eager
   * RMSNorm keeps x.float(): 4 B), its normed bf16 x for the trained weight
   * (2 B), its rstd (4 B per token) and the MLP's copy of the norm output
   * (2 B) are gone: T * h * (4 + 2 + 2) + 4 * T */
  a = plan_for(LLAMA "model.norms_per_layer=1");
  b = plan_for(LLAMA "model.norms_per_layer=1 model.parallel_block=true");
  double drop = layer_activation_bytes(&a, 0, 0).saved_full_bytes - layer_activation_bytes(&b, 0, 0).saved_full_bytes;
  CHECK_NEAR(drop, T * 4096 * (4 + 2 + 2) + 4 * T, 0, "parallel block: one norm, one saved norm output");
  /* QLoRA on q,v: with bitsandbytes <= 0.43.1 every 4-bit linear keeps its
   * input: the MLP input (T * h) and the down-projection input (T * ffn);
   * bf16 adapters (no PEFT input cast: q and v's adapters share the norm output) */
  const char *q =
      LLAMA "training.finetune.method=qlora training.finetune.lora_targets=q,v training.finetune.adapter_dtype=bf16 ";
  char old_keys[1024], new_keys[1024];
  snprintf(old_keys, sizeof old_keys, "%s runtime.framework_version=2024-03", q);
  snprintf(new_keys, sizeof new_keys, "%s runtime.framework_version=2024-09", q);
  a = plan_for(old_keys);
  b = plan_for(new_keys);
  drop = layer_activation_bytes(&a, 0, 0).saved_full_bytes - layer_activation_bytes(&b, 0, 0).saved_full_bytes;
  CHECK_NEAR(drop, T * 4096 * ab + T * 14336 * ab, 0, "MatMul4Bit keeps A up to 0.43.1");
}

/* QLoRA of an MoE base (8 experts, top 2, expert ffn 1024, h 512, 4 layers, gated): transformers v5's fused experts
 * stay in bf16 where a quantized expert is NF4 with double-quantized statistics. Each layer's experts hold
 * 8 x 3 x 512 x 1024 parameters; kept in bf16 they take 2 B each instead of 0.5 B + 1/64 + 4/(64 x 256) B. */
static void quantized_experts(void) {
  const char *moe =
      "model.layers=4 model.hidden=512 model.heads=8 model.kv_heads=8 model.ffn_hidden=1024 "
      "model.vocab=1024 model.moe.experts=8 model.moe.top_k=2 model.moe.expert_ffn_hidden=1024 "
      "training.finetune.method=qlora parallel.gpus=1 parallel.engine=single ";
  char on[512], off[512];
  both_ways(moe, "training.finetune.quant_experts", on, off);
  plan pq = plan_for(on), pb = plan_for(off);
  stage_layout sq, sb;
  layout_stage(&pq, 0, &sq);
  layout_stage(&pb, 0, &sb);
  rank_states rq, rb;
  states_for_stage(&pq, &sq, &rq);
  states_for_stage(&pb, &sb, &rb);
  double experts = 4 * 8 * 3 * 512.0 * 1024, per_quantized = 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
  CHECK_NEAR(rb.weights - rq.weights, experts * (2 - per_quantized), 1e-12, "bf16 experts: 2 B a parameter");
  CHECK_NEAR(sb.layers.quantizable_count, sq.layers.quantizable_count - experts, 0, "experts not quantizable");
}

/* zero_grad(set_to_none=False), PyTorch < 2.0's default: the last step's gradients stay allocated (as zeros) through
 * the forward and backward of the next, so the peak holds every gradient: 4 B x the parameters in fp32. */
static void zeroed_gradients(void) {
  const char *tiny =
      "model.layers=2 model.hidden=256 model.heads=4 model.kv_heads=4 model.ffn_hidden=512 model.vocab=1024 "
      "training.seq_len=512 training.micro_batch=4 training.dtype=fp32 training.master_weights=false "
      "parallel.gpus=1 parallel.engine=single runtime.framework_version=2024-06 ";
  char on[512], off[512];
  both_ways(tiny, "training.zero_grad_in_place", on, off);
  static llmem_result kept, freed;
  CHECK(run_keys(on, &kept) && run_keys(off, &freed), "both run");
  double params = 1024 * 256 * 2 + 2 * (4 * 256 * 256 + 3 * 256 * 512 + 2 * 256) + 256;
  CHECK_NEAR(kept.per_gpu.params_count, params, 0, "untied llama-like parameters");
  CHECK_NEAR(kept.per_gpu.breakdown_bytes[LLMEM_CAT_GRADIENTS], params * 4, 0, "every fp32 gradient at the peak");
  CHECK(freed.per_gpu.breakdown_bytes[LLMEM_CAT_GRADIENTS] < params * 4, "set to None: made during the backward");
  CHECK(kept.per_gpu.peak_allocated_bytes > freed.per_gpu.peak_allocated_bytes, "a higher peak");
  CHECK(
      value_of("runtime.framework=hf_trainer runtime.framework_version=2022-01", "training.zero_grad_in_place") == 1 &&
          value_of("runtime.framework=hf_trainer runtime.framework_version=2023-04", "training.zero_grad_in_place") !=
              1,
      "PyTorch 1.x until 2.0.0 (2023-03-15)");
  llmem_defaults(&in);
  CHECK(
      set_keys(&in, "parallel.engine=deepspeed parallel.zero_stage=2 parallel.gpus=8 training.zero_grad_in_place=true"),
      "keys");
  static llmem_result r;
  CHECK(
      llmem_estimate(&in, &r) == LLMEM_ERR_ZERO_GRAD_ENGINE && strcmp(r.error_path, "training.zero_grad_in_place") == 0,
      "DeepSpeed's buffers are its own: refused, naming the key");
  llmem_defaults(&in);
  CHECK(set_keys(&in,
                 "parallel.engine=single parallel.gpus=1 training.optimizer_in_backward=true "
                 "training.zero_grad_in_place=true"),
        "keys");
  CHECK(llmem_estimate(&in, &r) == LLMEM_ERR_ZERO_GRAD_ENGINE, "a step in the backward frees each gradient: refused");
}

/* The row the core reports (the page reads its text from wasm/profile-sources.json by row) and the native text. */
static void row_of_value(void) {
  llmem_defaults(&in);
  CHECK(set_keys(&in, "runtime.framework=litgpt parallel.engine=fsdp1 parallel.gpus=8"), "keys");
  int field = llmem_field_index("training.autocast");
  const char *source = 0;
  CHECK(llmem_profile_value(&in, field, 0, &source) == 1 && source && strstr(source, "FSDPPrecision"),
        "native builds keep the text");
  CHECK(llmem_profile_row(&in, field) >= 0, "a row");
  CHECK(set_keys(&in, "training.autocast=false") && llmem_profile_row(&in, field) == -1, "an explicit key: no row");
}

int main(void) {
  rows();
  mechanisms();
  quantized_experts();
  zeroed_gradients();
  row_of_value();
  return check_report("profiles");
}
