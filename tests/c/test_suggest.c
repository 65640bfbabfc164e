/* Suggestions that make a run fit: each verified by its own full estimate. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static llmem_suggest_result res;
static llmem_result full;
static int verbose;

static void print_result(const char *name) {
  if (!verbose) return;
  printf("%s: base %.2f GiB of %.2f, %g candidates, fewest GPUs %g\n", name, res.base_device_used_bytes / 1073741824.0,
         res.capacity_bytes / 1073741824.0, res.candidates, res.fewest_gpus);
  for (int i = 0; i < res.count; i++) {
    const llmem_suggestion *s = &res.suggestions[i];
    printf("  %-9s %7.2f GiB  host %7.2f GiB  x%.2f ", llmem_suggest_kind_name(s->kind),
           s->device_used_bytes / 1073741824.0, s->host_cpu_bytes / 1073741824.0, s->time_ratio);
    for (int j = 0; j < s->change_count; j++) printf(" %s=%g", llmem_field_at(s->fields[j])->path, s->values[j]);
    printf("\n");
  }
}

/* The input a suggestion stands for. */
static llmem_input applied(const llmem_input *base, const llmem_suggestion *s) {
  llmem_input in = *base;
  for (int j = 0; j < s->change_count; j++) *field_slot(&in, s->fields[j]) = s->values[j];
  return in;
}

/* Every kept suggestion fits by its own full estimate, with the readings it reports. */
static int unverified(const llmem_input *base, double free_fraction) {
  int bad = 0;
  for (int i = 0; i < res.count; i++) {
    llmem_input in = applied(base, &res.suggestions[i]);
    if (llmem_estimate(&in, &full) != LLMEM_OK ||
        full.per_gpu.device_used_bytes > (1 - free_fraction) * full.capacity_bytes ||
        full.per_gpu.device_used_bytes != res.suggestions[i].device_used_bytes ||
        full.host_cpu_bytes != res.suggestions[i].host_cpu_bytes ||
        /* a node holds min(gpus, gpus_per_node) GPU processes, each with host_cpu_bytes */
        full.host_cpu_bytes * fmin(in.gpus, in.gpus_per_node) != res.suggestions[i].host_cpu_bytes_per_node)
      bad++;
    if (i > 0) { /* the training kept first (kinds in order), then the time per token */
      const llmem_suggestion *a = &res.suggestions[i - 1], *b = &res.suggestions[i];
      if (b->kind < a->kind || (b->kind == a->kind && b->time_ratio < a->time_ratio)) bad++;
    }
  }
  return bad;
}

static const llmem_suggestion *with_change(int field, double value, int only) {
  for (int i = 0; i < res.count; i++) {
    const llmem_suggestion *s = &res.suggestions[i];
    for (int j = 0; j < s->change_count; j++)
      if (s->fields[j] == field && s->values[j] == value && (!only || s->change_count == 1)) return s;
  }
  return 0;
}

static void llama70b(llmem_input *in) {
  llmem_defaults(in);
  CHECK(set_keys(in,
                 "model.layers=80 model.hidden=8192 model.heads=64 model.kv_heads=8 model.ffn_hidden=28672 "
                 "model.vocab=128256 training.seq_len=8192"),
        "70B keys");
}

int main(int argc, char **argv) {
  verbose = argc > 2 && strcmp(argv[2], "-v") == 0;
  llmem_suggest_options opt;
  llmem_suggest_defaults(&opt);

  /* Llama 3.1 70B, 8x H100, FSDP2, 8192 tokens: three or more fitting changes, and the fewest GPUs */
  llmem_input in;
  llama70b(&in);
  CHECK(set_keys(&in, "parallel.gpus=8 parallel.engine=fsdp2 training.grad_accum=4 hardware.memory_gib=79.6"),
        "8x H100");
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_OK, "suggest 70B: status %d", res.status);
  print_result("70B 8x H100 FSDP2");
  CHECK(!res.base_fits, "the base does not fit");
  CHECK(res.count >= 3, "at least three suggestions, got %d", res.count);
  CHECK(unverified(&in, opt.free_fraction) == 0, "every suggestion fits by its full estimate, fastest first");
  CHECK(res.fewest_gpus > 8 && res.fewest_index >= 0, "the fewest GPUs: %g", res.fewest_gpus);
  if (res.fewest_index >= 0) {
    const llmem_suggestion *g = &res.suggestions[res.fewest_index];
    CHECK(g->kind == LLMEM_SUGGEST_GPUS && g->gpus == res.fewest_gpus, "the fewest-GPUs suggestion");
    /* the same global batch: micro-batch x grad. accum. x dp */
    llmem_input a = applied(&in, g);
    CHECK(a.micro_batch * a.grad_accum * a.gpus / (a.tp * a.pp * a.cp) == 32, "same global batch");
    /* half as many GPUs do not fit in any layout */
    llmem_search_options so;
    llmem_search_defaults(&so);
    so.gpus = res.fewest_gpus / 2;
    so.global_batch = 32;
    static llmem_search_result found;
    if (so.gpus > 8) CHECK(llmem_search(&in, &so, &found) == LLMEM_OK && found.count == 0, "half the GPUs do not fit");
  }
  int same = 0;
  for (int i = 0; i < res.count; i++) same += res.suggestions[i].kind == LLMEM_SUGGEST_SAME;
  CHECK(same >= 1, "a change that keeps the training the same");

  /* QLoRA 70B on one 48 GB GPU: recompute, and the sequence that fits */
  llama70b(&in);
  CHECK(
      set_keys(&in, "parallel.gpus=1 parallel.engine=single training.finetune.method=qlora hardware.memory_gib=47.99"),
      "QLoRA 48 GB");
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_OK, "suggest QLoRA: status %d", res.status);
  print_result("QLoRA 70B 1x 48 GB");
  CHECK(!res.base_fits && res.count >= 1, "QLoRA: suggestions %d", res.count);
  CHECK(unverified(&in, opt.free_fraction) == 0, "QLoRA: every suggestion fits by its full estimate");
  const llmem_suggestion *rec = with_change(llmem_field_index("training.recompute"), LLMEM_RECOMPUTE_FULL, 0);
  CHECK(rec != 0, "QLoRA: full recompute is part of a suggestion");
  int seq = llmem_field_index("training.seq_len");
  int shorter = 0;
  for (int i = 0; rec && i < rec->change_count; i++)
    if (rec->fields[i] == seq && rec->values[i] < 8192 && rec->kind == LLMEM_SUGGEST_WORKLOAD) shorter = 1;
  CHECK(shorter, "QLoRA: with the longest sequence that fits");

  /* Llama-2-7B LoRA at 512 tokens on 19.2 GiB: 16.35 GiB of tensors, 17.45 GiB on the card with the segments the
   * caching allocator cuts; expandable segments (PyTorch's own out-of-memory advice) fit it, at no time */
  llmem_defaults(&in);
  CHECK(set_keys(&in,
                 "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=11008 "
                 "model.vocab=32000 parallel.engine=single parallel.gpus=1 training.seq_len=512 "
                 "training.finetune.method=lora hardware.memory_gib=19.2"),
        "7B LoRA on 19.2 GiB");
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_OK && !res.base_fits, "7B LoRA: the base does not fit");
  print_result("7B LoRA 19.2 GiB");
  const llmem_suggestion *grow = with_change(llmem_field_index("runtime.expandable_segments"), 1, 1);
  CHECK(grow && grow->kind == LLMEM_SUGGEST_SAME && grow->time_ratio == 1 &&
            grow->device_used_bytes <= 0.9 * 19.2 * 1073741824.0,
        "expandable segments alone fit, the training and its time the same");
  CHECK(unverified(&in, opt.free_fraction) == 0, "7B LoRA: every suggestion fits by its full estimate");

  /* Llama-2-7B fully fine-tuned with the HF Trainer on 4 GPUs of 24 GB, FSDP1, 4 micro-batches: accelerate's no_sync keeps
   * every unit's unsharded bf16 gradient (13.5 GB); reducing every micro-batch (sync_each_batch) is a change that keeps
   * the training, and it saves about that much */
  llmem_defaults(&in);
  CHECK(set_keys(&in,
                 "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=11008 "
                 "model.vocab=32000 parallel.engine=fsdp1 parallel.gpus=4 training.seq_len=512 training.grad_accum=4 "
                 "training.recompute=full runtime.framework=hf_trainer hardware.memory_gib=22.5"),
        "7B FSDP1 HF Trainer");
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_OK && !res.base_fits, "7B FSDP1 no_sync: the base does not fit");
  print_result("7B FSDP1 no_sync");
  const llmem_suggestion *sync = with_change(llmem_field_index("parallel.accumulate_no_sync"), 0, 0);
  CHECK(sync && sync->kind == LLMEM_SUGGEST_SAME, "reduce every micro-batch: the same training");
  if (sync) {
    llmem_input a = applied(&in, sync);
    CHECK(llmem_estimate(&a, &full) == LLMEM_OK, "its estimate");
  }
  CHECK(unverified(&in, opt.free_fraction) == 0, "7B FSDP1: every suggestion fits by its full estimate");

  /* BERT-large-shaped full fine-tune on one 16 GB GPU with a PyTorch 1.x stack (2022): zero_grad() zeroes the
   * gradients in place, so they live through the forward; set_to_none=True frees them: the same training */
  llmem_defaults(&in);
  CHECK(set_keys(&in,
                 "model.layers=24 model.hidden=1024 model.heads=16 model.kv_heads=16 model.ffn_hidden=4096 "
                 "model.vocab=30522 model.mlp=plain model.norm=layernorm parallel.engine=single parallel.gpus=1 "
                 "training.seq_len=512 training.micro_batch=8 training.dtype=fp32 training.master_weights=false "
                 "runtime.framework=hf_trainer runtime.framework_version=2022-01 hardware.memory_gib=16"),
        "BERT-large shape, 2022");
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_OK, "suggest");
  print_result("BERT-large 2022");
  const llmem_suggestion *none = with_change(llmem_field_index("training.zero_grad_in_place"), 0, 0);
  CHECK(none && none->kind == LLMEM_SUGGEST_SAME && none->device_used_bytes < res.base_device_used_bytes,
        "set_to_none=True: the same training, less memory");
  CHECK(unverified(&in, opt.free_fraction) == 0, "BERT 2022: every suggestion fits by its full estimate");

  /* a run that fits: the fewest GPUs may be fewer; options are checked */
  llmem_defaults(&in);
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_OK && res.base_fits, "default config fits");
  int idle = 0; /* a change that saves neither memory nor time is no answer */
  for (int i = 0; i < res.count; i++)
    idle += res.suggestions[i].device_used_bytes >= res.base_device_used_bytes && res.suggestions[i].time_ratio >= 1;
  CHECK(idle == 0, "default: %d suggestions save nothing", idle);
  CHECK(unverified(&in, opt.free_fraction) == 0, "default: verified");
  print_result("defaults");
  /* a small model that fits on 8 GPUs with DDP fits on one: fewer GPUs are an answer though they take more memory */
  llmem_defaults(&in);
  CHECK(set_keys(&in,
                 "model.layers=4 model.hidden=1024 model.heads=8 model.kv_heads=8 model.ffn_hidden=4096 "
                 "parallel.gpus=8 parallel.engine=ddp"),
        "small DDP");
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_OK && res.base_fits && res.fewest_gpus == 1,
        "small DDP: the fewest GPUs 1 (%g)", res.fewest_gpus);
  llmem_defaults(&in);
  opt.free_fraction = 1;
  CHECK(llmem_suggest(&in, &opt, &res) == LLMEM_ERR_OPTION_FREE_FRACTION, "free fraction checked");
  llmem_suggest_defaults(&opt);
  in.tp = 3;
  CHECK(llmem_suggest(&in, &opt, &res) != LLMEM_OK && res.count == 0, "an invalid base is refused");
  return check_report("suggest");
}
