/* RL post-training (core/rl.c): phase peaks computed by hand from the
 * formulas of docs/memory-model.md §16, the update phases as the training
 * step plus the other models' resident bytes, rl none unchanged, the
 * invalid combinations and the invariants of every RL point. */
#include <math.h>
#include <string.h>

#include "check.h"

/* Qwen2.5-0.5B's shapes (HF Qwen/Qwen2.5-0.5B config.json), one 80 GiB GPU, FSDP2.
 * Parameters: embedding 151936 x 896 = 136,134,656; per layer q 896x896+896 =
 * 803,712, k and v 896x128+128 = 114,816 each, o 802,816, MLP 3 x 896 x 4864 =
 * 13,074,432, two norms 1,792: 14,912,384; x 24 = 357,897,216; final norm 896;
 * tied head: total P = 494,032,768. */
#define MODEL                                                                                                 \
  "model.layers=24 model.hidden=896 model.heads=14 model.kv_heads=2 model.head_dim=64 model.ffn_hidden=4864 " \
  "model.vocab=151936 model.tied_embeddings=true model.qkv_bias=true parallel.gpus=1 parallel.engine=fsdp2 "  \
  "training.micro_batch=4 hardware.memory_gib=80 "
#define GRPO MODEL "rl.algorithm=grpo rl.group_size=8 rl.rollout_batch=4 rl.rollout.gpu_memory_utilization=0.3 "
#define PPO                                                                                    \
  MODEL                                                                                        \
  "rl.algorithm=ppo rl.group_size=1 rl.rollout_batch=4 rl.rollout.gpu_memory_utilization=0.3 " \
  "rl.reward.enabled=true rl.rollout.sleep=level2 rl.actor.param_offload=true rl.actor.optimizer_offload=true "

static llmem_result out, plain;

/* Hand figures shared by both configs (bytes).
 * Actor, FSDP2 on one GPU: fp32 sharded parameters 4P = 1,976,131,072 (master_weights),
 * AdamW states 8P = 3,952,262,144; the bf16 copies are gathered per unit.
 * Reference / reward (bf16, verl ref torch_dtype bfloat16): 2P = 988,065,536.
 * Engine (vLLM, bf16, tp 1): weights 2P = 988,065,536.
 *   profiled forward of 8192 tokens: residual 2 x 8192 x 896 x 2 = 29,360,128 +
 *   MLP act(gate), up, product 3 x 8192 x 4864 x 2 = 239,075,328 (> attention
 *   8192 x 32 x 64 x 2) = 268,435,456; sampler 256 x 151936 x (2 + 4) =
 *   233,373,696: workspace 501,809,152.
 *   CUDA graph pool, 256 tokens: 2 x 256 x 896 x 2 + 3 x 256 x 4864 x 2 = 8,388,608.
 *   share 0.3 x 80 GiB = 25,769,803,776; KV room 25,769,803,776 - 988,065,536 -
 *   501,809,152 = 24,279,929,088; a block of 16 tokens x 2 x 24 layers x 2 KV
 *   heads x 64 x 2 B = 196,608; 123,494 blocks = 24,279,908,352 B, 1,975,904 tokens.
 *   Awake: 988,065,536 + 24,279,908,352 + 501,809,152 + 8,388,608 = 25,778,171,648.
 * Log-prob pass, 4 x 1024 tokens, standard loss without its backward: bf16 logits,
 * fp32 copy, log-softmax 10 x 4096 x 151936 = 6,223,298,560 (above one layer's
 * 193,867,264: gathered 2 x 14,912,384 x 2 + residual and MLP of 4096 tokens). */
#define P_MASTER 1976131072.0
#define P_ADAM 3952262144.0
#define P_BF16 988065536.0
#define KV_BYTES 24279908352.0
#define KV_TOKENS 1975904.0
#define ENGINE_AWAKE 25778171648.0
#define GRAPHS 8388608.0
#define LOGITS 6223298560.0
#define LAYER_PASS 193867264.0
#define BUCKET 2147483648.0
#define LARGEST 544538624.0 /* the embedding gathered whole in fp32: 136,134,656 x 4 */
/* the process's two cuBLAS workspaces, 2 x 32 MiB, on the GPU in every phase (core/runtime.c) */
#define WORKSPACES 67108864.0

static const llmem_rl_phase *phase_of(int phase) {
  for (int i = 0; i < out.rl_phase_count; i++)
    if (out.rl_phases[i].phase == phase) return &out.rl_phases[i];
  return 0;
}

static double phase_peak(int phase) {
  const llmem_rl_phase *p = phase_of(phase);
  return p ? p->peak_allocated_bytes : -1;
}

static void grpo(void) {
  /* sleep none: the engine stays awake; resident 4P + 8P + 2P (reference) + the engine */
  if (!run_keys(GRPO, &out)) return;
  double resident = P_MASTER + P_ADAM + P_BF16 + WORKSPACES;
  CHECK_NEAR(out.rl_kv_cache_bytes, KV_BYTES, 0, "kv cache");
  CHECK_NEAR(out.rl_kv_cache_tokens, KV_TOKENS, 0, "kv tokens");
  CHECK_NEAR(out.rl_engine_bytes, ENGINE_AWAKE, 0, "engine awake");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_ROLLOUT), resident + ENGINE_AWAKE, 0, "grpo rollout"); /* 32,761,739,264 */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_ENGINE_SLEEP), resident + ENGINE_AWAKE, 0, "grpo sleep none");
  /* weight sync: bucket 2 GiB and the largest parameter gathered, beside everything: 35,453,761,536 */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_WEIGHT_SYNC), resident + ENGINE_AWAKE + BUCKET + LARGEST, 0, "grpo sync");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_OLD_LOGPROBS), resident + ENGINE_AWAKE + LOGITS, 0, "grpo old log-probs");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_REF_LOGPROBS), resident + ENGINE_AWAKE + LOGITS, 0, "grpo ref log-probs");
  /* the update: the training step of 4 x 1024 tokens, 4 x 8 / 4 = 8 micro-batches, beside the rest */
  double update = phase_peak(LLMEM_PHASE_ACTOR_UPDATE);
  if (run_keys(MODEL "training.seq_len=1024 training.grad_accum=8", &plain))
    CHECK_NEAR(update, plain.per_gpu.peak_allocated_bytes + P_BF16 + ENGINE_AWAKE, 0, "grpo update");
  CHECK(out.per_gpu.peak_phase == LLMEM_PHASE_FORWARD || out.per_gpu.peak_phase == LLMEM_PHASE_BACKWARD ||
            out.per_gpu.peak_phase == LLMEM_PHASE_LOSS,
        "grpo, engine awake: the peak is in the actor update (%s)", out.peak_at);
  CHECK(strncmp(out.peak_at, "actor update: ", 14) == 0, "peak_at names the update: %s", out.peak_at);

  /* sleep level 1: weights to the host, KV and workspace freed, the graph pool stays */
  if (!run_keys(GRPO "rl.rollout.sleep=level1", &out)) return;
  CHECK_NEAR(phase_peak(LLMEM_PHASE_ROLLOUT), resident + ENGINE_AWAKE, 0, "level1 rollout");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_ENGINE_SLEEP), resident + GRAPHS, 0, "level1 sleep"); /* 6,991,956,224 */
  /* sync: the engine's weights wake, then bucket and gathered parameter: 10,672,044,032 */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_WEIGHT_SYNC), resident + GRAPHS + P_BF16 + BUCKET + LARGEST, 0, "level1 sync");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_OLD_LOGPROBS), resident + GRAPHS + LOGITS, 0, "level1 old log-probs");
  CHECK_NEAR(out.per_gpu.peak_allocated_bytes, resident + ENGINE_AWAKE, 0, "level1 overall peak");
  CHECK(out.per_gpu.peak_phase == LLMEM_PHASE_ROLLOUT && strcmp(out.peak_at, "rollout") == 0,
        "level1: the peak is the rollout (%s)", out.peak_at);
  CHECK_NEAR(out.host_cpu_bytes, P_BF16, 0, "level1: the engine's weights on the host");
  CHECK_NEAR(out.per_gpu.breakdown_bytes[LLMEM_CAT_KV_CACHE], KV_BYTES, 0, "kv_cache category at the peak");
  if (run_keys(MODEL "training.seq_len=1024 training.grad_accum=8", &plain))
    CHECK_NEAR(phase_peak(LLMEM_PHASE_ACTOR_UPDATE), plain.per_gpu.peak_allocated_bytes + P_BF16 + GRAPHS, 0,
               "level1 update");
}

/* Context parallelism splits each sequence: a rank's log-prob logits are its share, 4 x 1,024 / 2 tokens x 151,936 x 10
 * bytes = LOGITS / 2 (they were counted whole, cp times the rank's). */
/* fp8 engine weights (vLLM Fp8Config): the linears in one byte, the embedding (tied: the head too) in two,
 * activations and the KV cache ("auto") in bf16. Weights P - E + 2E with E = 136,134,656: 630,167,424; KV room
 * 25,769,803,776 - 630,167,424 - 501,809,152 = 24,637,827,200: 125,314 blocks of 196,608 = 24,637,734,912 B,
 * 2,005,024 tokens; awake 630,167,424 + 24,637,734,912 + 501,809,152 + 8,388,608 = 25,778,100,096. */
static void fp8_engine(void) {
  if (!run_keys(GRPO "rl.rollout.dtype=fp8", &out)) return;
  CHECK_NEAR(out.rl_kv_cache_bytes, 24637734912.0, 0, "fp8 engine: kv cache in bf16");
  CHECK_NEAR(out.rl_kv_cache_tokens, 2005024.0, 0, "fp8 engine: kv tokens");
  CHECK_NEAR(out.rl_engine_bytes, 25778100096.0, 0, "fp8 engine: awake");
  if (!run_keys(GRPO "rl.rollout.dtype=fp8 rl.rollout.kv_cache_dtype=fp8", &out)) return;
  CHECK_NEAR(out.rl_kv_cache_tokens, 4010048.0, 0, "fp8 engine and cache: twice the tokens");
  /* untied: the head's E more parameters, in 2 bytes too: P + E - 2E + 2 x 2E = 902,436,736; KV room
   * 24,365,557,888: 123,929 blocks, 1,982,864 tokens; awake 25,778,067,328 */
  if (!run_keys(GRPO "model.tied_embeddings=false rl.rollout.dtype=fp8", &out)) return;
  CHECK_NEAR(out.rl_kv_cache_tokens, 1982864.0, 0, "fp8 engine, untied head: kv tokens");
  CHECK_NEAR(out.rl_engine_bytes, 25778067328.0, 0, "fp8 engine, untied head: awake");
}

/* The entropy over the vocabulary is the actor's: the reference's log-probs come without it (verl
 * compute_ref_log_prob: calculate_entropy=False), so only the old log-probs' pass grows. */
static void entropy_not_in_reference(void) {
  if (!run_keys(GRPO "rl.entropy=false", &out)) return;
  double ref = phase_peak(LLMEM_PHASE_REF_LOGPROBS), old = phase_peak(LLMEM_PHASE_OLD_LOGPROBS);
  if (!run_keys(GRPO "rl.entropy=true", &out)) return;
  CHECK_NEAR(phase_peak(LLMEM_PHASE_REF_LOGPROBS), ref, 0, "entropy: the reference pass unchanged");
  CHECK(phase_peak(LLMEM_PHASE_OLD_LOGPROBS) > old, "entropy: the old log-probs' pass holds it");
}

static void context_parallel_logits(void) {
  if (!run_keys(GRPO "parallel.gpus=2 parallel.cp=2", &out)) return;
  CHECK_NEAR(phase_peak(LLMEM_PHASE_OLD_LOGPROBS) - phase_peak(LLMEM_PHASE_ROLLOUT), LOGITS / 2, 0,
             "cp 2: the rank's half of the log-prob logits");
}

/* A reference swapped into the actor (NeMo-RL): no bf16 copy resident, its pass on the actor's weights; the host holds
 * its sharded fp32 state and the actor's saved during the swap, 2 x 4P. */
static void swapped_reference(void) {
  if (!run_keys(GRPO "rl.reference.swapped=true", &out)) return;
  double resident = P_MASTER + P_ADAM + WORKSPACES;
  CHECK_NEAR(phase_peak(LLMEM_PHASE_ROLLOUT), resident + ENGINE_AWAKE, 0, "swapped: no reference copy resident");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_REF_LOGPROBS), resident + ENGINE_AWAKE + LOGITS, 0, "swapped: the actor's weights");
  CHECK_NEAR(out.host_cpu_bytes, 2 * P_MASTER, 0, "swapped: two host copies");
}

/* Dynamic batching by tokens (verl use_dynamic_bsz): the rank's 4 x 8 = 32 sequences of
 * 1,024 tokens (32,768 tokens) under a 24,000-token budget are ceil(32,768 / 24,000) = 2
 * micro-batches balanced by length: 16 sequences, 16,384 tokens each, not the budget. */
static void dynamic_batching(void) {
  if (!run_keys(GRPO "rl.rollout.sleep=level1 rl.max_tokens_per_gpu=24000", &out)) return;
  if (run_keys(MODEL "training.micro_batch=1 training.seq_len=16384 training.grad_accum=2", &plain))
    CHECK_NEAR(phase_peak(LLMEM_PHASE_ACTOR_UPDATE), plain.per_gpu.peak_allocated_bytes + P_BF16 + GRAPHS, 0,
               "dynamic batching: the update's largest micro-batch is 16,384 tokens");
  /* a budget below the rank's share: ceil(32,768 / 4,096) = 8 micro-batches of 4 sequences */
  if (!run_keys(GRPO "rl.rollout.sleep=level1 rl.max_tokens_per_gpu=4096", &out)) return;
  if (run_keys(MODEL "training.micro_batch=1 training.seq_len=4096 training.grad_accum=8", &plain))
    CHECK_NEAR(phase_peak(LLMEM_PHASE_ACTOR_UPDATE), plain.per_gpu.peak_allocated_bytes + P_BF16 + GRAPHS, 0,
               "dynamic batching: a full budget of 4,096 tokens");
}

static void ppo(void) {
  /* actor parameters and optimizer on the host between phases; critic resident
   * (4P + 8P, no head); reward 2P; reference 2P; the graph pool */
  if (!run_keys(PPO, &out)) return;
  double parked = 2 * P_BF16 + P_MASTER + P_ADAM + GRAPHS + WORKSPACES; /* 7,980,021,760 */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_ENGINE_SLEEP), parked, 0, "ppo sleep level2");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_ROLLOUT), parked - GRAPHS + ENGINE_AWAKE, 0, "ppo rollout"); /* 33,749,804,800 */
  /* sync: the engine's weights, the bucket and the gathered embedding (the parameters went back first): 11,660,109,568 */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_WEIGHT_SYNC), parked + P_BF16 + BUCKET + LARGEST, 0, "ppo sync");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_REWARD), parked + LAYER_PASS, 0, "ppo reward scoring"); /* 8,173,889,024 */
  /* old log-probs: the actor's fp32 parameters back for the pass: 16,179,451,392 */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_OLD_LOGPROBS), parked + P_MASTER + LOGITS, 0, "ppo old log-probs");
  CHECK_NEAR(phase_peak(LLMEM_PHASE_REF_LOGPROBS), parked + LOGITS, 0, "ppo ref log-probs"); /* 14,203,320,320 */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_CRITIC_VALUES), parked + LAYER_PASS, 0, "ppo critic values");
  CHECK_NEAR(out.per_gpu.peak_allocated_bytes, parked - GRAPHS + ENGINE_AWAKE, 0, "ppo overall peak");
  CHECK(out.per_gpu.peak_phase == LLMEM_PHASE_ROLLOUT, "ppo: the peak is the rollout (%s)", out.peak_at);
  /* host: the actor's 4P + 8P while it is parked */
  CHECK_NEAR(out.host_cpu_bytes, P_MASTER + P_ADAM, 0, "ppo host");
  /* the updates: the critic's step (no head) beside reference, reward and graphs;
   * the actor's beside those and the resident critic; 4 x 1 / 4 = one micro-batch */
  double critic = phase_peak(LLMEM_PHASE_CRITIC_UPDATE), actor = phase_peak(LLMEM_PHASE_ACTOR_UPDATE);
  if (run_keys(MODEL "training.seq_len=1024 model.head=none model.tied_embeddings=false", &plain))
    CHECK_NEAR(critic, plain.per_gpu.peak_allocated_bytes + 2 * P_BF16 + GRAPHS, 0, "ppo critic update");
  if (run_keys(MODEL "training.seq_len=1024", &plain))
    CHECK_NEAR(actor, plain.per_gpu.peak_allocated_bytes + parked - WORKSPACES, 0,
               "ppo actor update (its own step holds the workspaces)");
  const llmem_rl_phase *p = phase_of(LLMEM_PHASE_ROLLOUT);
  if (p) {
    CHECK_NEAR(p->model_bytes[LLMEM_RL_MODEL_ENGINE], ENGINE_AWAKE, 0, "rollout: engine by model");
    CHECK_NEAR(p->model_bytes[LLMEM_RL_MODEL_CRITIC], P_MASTER + P_ADAM, 0, "rollout: critic by model");
    CHECK_NEAR(p->model_bytes[LLMEM_RL_MODEL_ACTOR], WORKSPACES, 0,
               "rollout: actor parked on the host, its threads' workspaces kept");
  }
  CHECK(out.rl_phase_count == 9, "ppo: nine phases (%d)", out.rl_phase_count);
}

/* DPO: chosen and rejected (2x sequences), the reference per batch or precomputed */
static void dpo(void) {
  if (!run_keys(MODEL "rl.algorithm=dpo rl.rollout_batch=4 training.micro_batch=2", &out)) return;
  CHECK(phase_of(LLMEM_PHASE_ROLLOUT) == 0 && out.rl_engine_bytes == 0, "dpo: no rollout engine");
  /* reference pass over 2 x 2 sequences of 1024 tokens: the logits of 4096 tokens */
  CHECK_NEAR(phase_peak(LLMEM_PHASE_REF_LOGPROBS), P_MASTER + P_ADAM + P_BF16 + WORKSPACES + LOGITS, 0,
             "dpo reference");
  if (run_keys(MODEL "training.seq_len=1024 training.grad_accum=2", &plain))
    CHECK_NEAR(phase_peak(LLMEM_PHASE_ACTOR_UPDATE), plain.per_gpu.peak_allocated_bytes + P_BF16, 0, "dpo update");
  if (!run_keys(MODEL "rl.algorithm=dpo rl.rollout_batch=4 training.micro_batch=2 rl.reference.precomputed=true", &out))
    return;
  CHECK(phase_of(LLMEM_PHASE_REF_LOGPROBS) == 0, "dpo precomputed: no reference phase");
  if (run_keys(MODEL "training.seq_len=1024 training.grad_accum=2", &plain))
    CHECK_NEAR(out.per_gpu.peak_allocated_bytes, plain.per_gpu.peak_allocated_bytes, 0, "dpo precomputed update");
}

/* rl.* keys other than the algorithm change nothing while it is "none". */
static void none_unchanged(void) {
  static llmem_result a, b;
  if (!run_keys(MODEL, &a)) return;
  if (!run_keys(MODEL "rl.group_size=3 rl.rollout.sleep=level2 rl.reward.enabled=true rl.entropy=true "
                      "rl.rollout.gpu_memory_utilization=0.9 rl.actor.param_offload=true",
                &b))
    return;
  CHECK(memcmp(&a.per_gpu, &b.per_gpu, sizeof a.per_gpu) == 0, "rl none: per_gpu bit-identical");
  CHECK(a.event_count == b.event_count && memcmp(a.events, b.events, (size_t)a.event_count * sizeof a.events[0]) == 0,
        "rl none: timeline bit-identical");
  CHECK(b.rl_phase_count == 0 && b.rl_engine_bytes == 0, "rl none: no RL result");
}

/* The layout search of an RL run places the rollout engine's TP beside the
 * training layout as given: every kept layout fits by its own full estimate,
 * names its rollout TP, and keeps the batches. */
/* An RL step's time is its actor update's: training.seq_len, which the RL step does not run, is not checked
 * against the layout (a fuzzer's search kept a TP 4 layout that llmem_step_time refused for seq_len 7) */
static void step_time_rl(void) {
  llmem_input in;
  llmem_defaults(&in);
  if (!set_keys(&in, GRPO "parallel.gpus=2 parallel.tp=2 parallel.engine=megatron parallel.sequence_parallel=true "
                          "training.seq_len=7"))
    return;
  static llmem_result out;
  llmem_step_result step;
  CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "RL estimate with seq_len 7 on TP 2: %s", out.error_message);
  llmem_status st = llmem_step_time(&in, &step);
  CHECK(st == LLMEM_OK && step.step_seconds > 0, "RL step time with seq_len 7 on TP 2: %s", llmem_status_message(st));
}

static void search_rl(void) {
  static llmem_search_result found;
  static llmem_result check;
  llmem_input in;
  llmem_defaults(&in);
  if (!set_keys(&in, GRPO "parallel.gpus=8 parallel.gpus_per_node=8 rl.rollout_batch=8")) return;
  llmem_search_options opt;
  llmem_search_defaults(&opt);
  opt.gpus = 8;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK && found.count > 0, "search of an RL config: %d kept (status %d)",
        found.count, found.status);
  int rollout_tps = 0;
  for (int i = 0; i < found.count; i++) {
    const llmem_layout *l = &found.layouts[i];
    llmem_input t = in; /* the layout applied by hand: only the TPs and the data-parallel rest change */
    t.tp = l->tp, t.sequence_parallel = l->sequence_parallel, t.rl_rollout_tp = l->rollout_tp;
    CHECK(l->rollout_tp >= 1 && t.rl_rollout_tp == l->rollout_tp, "layout %d names its rollout TP", i);
    CHECK(t.micro_batch == in.micro_batch && t.rl_rollout_batch == in.rl_rollout_batch, "layout %d keeps the batches",
          i);
    CHECK(llmem_estimate(&t, &check) == LLMEM_OK && check.per_gpu.device_used_bytes == l->device_used_bytes,
          "layout %d: its own estimate", i);
    llmem_step_result step;
    CHECK(llmem_step_time(&t, &step) == LLMEM_OK && step.step_seconds == l->step_seconds,
          "layout %d: its own step time", i);
    rollout_tps |= 1 << (int)log2(l->rollout_tp);
  }
  /* 14 heads: TP 4 and 8 do not split them (vLLM asserts it) */
  CHECK(rollout_tps == (1 | 2), "rollout TP 1 and 2 kept (%x)", rollout_tps);
  CHECK(found.rejected[LLMEM_ERR_RL_ROLLOUT_TP] == 2, "rollout TP 4 and 8 rejected: they do not split 14 heads");
  CHECK(found.count == 2 && found.layouts[0].tp == 1 && found.layouts[1].tp == 1, "the training layout as given");
  /* the rollout engine stays within a node unless tp_across_nodes */
  if (!set_keys(&in, "parallel.gpus_per_node=4")) return;
  CHECK(llmem_search(&in, &opt, &found) == LLMEM_OK, "search, 4 GPUs a node");
  CHECK(found.rejected[LLMEM_ERR_SEARCH_TP_NODE] >= 1, "rollout TP 8 across nodes rejected");
}

/* "Make it fit" for an RL step: GRPO at 0.3 of a 40 GiB card does not fit (rollout 32.7 GB
 * on 80 GiB above); the suggestions include the RL levers, each fits by its own estimate,
 * and none states an accumulation (it follows rl.mini_batch). */
static void suggest_rl(void) {
  static llmem_suggest_result s;
  static llmem_result check;
  llmem_input in;
  llmem_defaults(&in);
  if (!set_keys(&in, GRPO "hardware.memory_gib=40 rl.rollout.gpu_memory_utilization=0.8")) return;
  llmem_suggest_options opt;
  llmem_suggest_defaults(&opt);
  CHECK(llmem_suggest(&in, &opt, &s) == LLMEM_OK && !s.base_fits, "suggest rl: status %d", s.status);
  int rl_lever = 0, accum = 0;
  for (int i = 0; i < s.count; i++) {
    llmem_input t = in;
    for (int k = 0; k < s.suggestions[i].change_count; k++) {
      int f = s.suggestions[i].fields[k];
      *field_slot(&t, f) = s.suggestions[i].values[k];
      if (strncmp(llmem_field_at(f)->path, "rl.", 3) == 0) rl_lever = 1;
      if (f == llmem_field_index("training.grad_accum")) accum = 1;
    }
    CHECK(llmem_estimate(&t, &check) == LLMEM_OK && check.per_gpu.device_used_bytes <= 0.9 * check.capacity_bytes,
          "suggest rl: suggestion %d fits by its own estimate", i);
  }
  CHECK(s.count > 0 && rl_lever, "suggest rl: %d suggestions, an RL lever among them", s.count);
  CHECK(!accum, "suggest rl: no suggestion states training.grad_accum");
}

static void invalid(void) {
  static const struct {
    const char *keys, *path;
    llmem_status status;
  } cases[] = {
      {GRPO "formula=megatron", "rl.algorithm", LLMEM_ERR_RL_FORMULA},
      {GRPO "parallel.pp=2 parallel.gpus=2", "parallel.pp", LLMEM_ERR_RL_PP},
      /* no LM head, no log-probabilities (a fuzzer's config: every phase read NaN, the peak -1) */
      {GRPO "model.head=none", "model.head", LLMEM_ERR_RL_HEAD},
      {GRPO "rl.mini_batch=3", "rl.mini_batch", LLMEM_ERR_RL_MINI_BATCH},
      {GRPO "training.micro_batch=3", "rl.mini_batch", LLMEM_ERR_RL_MINI_BATCH},
      {GRPO "rl.reference.precomputed=true", "rl.reference.precomputed", LLMEM_ERR_RL_PRECOMPUTED},
      {GRPO "rl.max_tokens_per_gpu=1000", "rl.max_tokens_per_gpu", LLMEM_ERR_RL_MAX_TOKENS},
      {GRPO "rl.logprob_max_tokens_per_gpu=100", "rl.logprob_max_tokens_per_gpu", LLMEM_ERR_RL_MAX_TOKENS},
      {GRPO "rl.rollout.tp=4", "rl.rollout.tp", LLMEM_ERR_RL_ROLLOUT_TP},
      {GRPO "rl.rollout.gpu_memory_utilization=0.01", "rl.rollout.gpu_memory_utilization", LLMEM_ERR_RL_KV_NONE},
      {GRPO "rl.rollout.max_model_len=3000000", "rl.rollout.max_model_len", LLMEM_ERR_RL_KV_MODEL_LEN},
      {GRPO "rl.prompt_len_mean=600", "rl.prompt_len_mean", LLMEM_ERR_RL_MEAN_LEN},
      {PPO "rl.critic.kv_heads=4", "rl.critic.kv_heads", LLMEM_ERR_RL_MODEL_DIMS},
      {PPO "rl.reward.ffn_hidden=4865 parallel.tp=2 parallel.gpus=2", "rl.reward.ffn_hidden", LLMEM_ERR_RL_MODEL_DIMS},
      {GRPO "rl.algorithm=sarsa", "", LLMEM_OK}, /* an unknown value: set_key refuses it */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    llmem_input in;
    llmem_defaults(&in);
    if (!set_keys(&in, cases[i].keys)) {
      CHECK(cases[i].status == LLMEM_OK, "case %zu: keys refused", i);
      continue;
    }
    llmem_status st = llmem_estimate(&in, &out);
    CHECK(st == cases[i].status, "case %zu: status %d, want %d (%s)", i, st, cases[i].status, out.error_message);
    CHECK(strcmp(out.error_path, cases[i].path) == 0, "case %zu: path %s, want %s", i, out.error_path, cases[i].path);
  }
  llmem_input in;
  llmem_defaults(&in);
  in.rl_algorithm = 9;
  CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_BAD_ENUM && strcmp(out.error_path, "rl.algorithm") == 0,
        "rl.algorithm out of its list: %s", out.error_message);
}

/* Every RL point: categories >= 0, totals their sum; the breakdown sums to
 * the peak; each category's terms sum to it; runtime terms to device - allocated. */
static void invariants(const char *keys) {
  if (!run_keys(keys, &out)) return;
  int bad = 0;
  for (int i = 0; i < out.event_count; i++) {
    double sum = 0;
    for (int c = 0; c < LLMEM_CAT_COUNT; c++) {
      bad += out.events[i].category_bytes[c] < -1e-6 * out.events[i].total_bytes;
      sum += out.events[i].category_bytes[c];
    }
    bad += fabs(sum - out.events[i].total_bytes) > 1e-9 * (out.events[i].total_bytes + 1);
  }
  CHECK(bad == 0, "%s: %d bad events", keys, bad);
  double sum = 0, by_cat[LLMEM_CAT_COUNT] = {0}, runtime = 0;
  for (int c = 0; c < LLMEM_CAT_COUNT; c++) sum += out.per_gpu.breakdown_bytes[c];
  CHECK(near(sum, out.per_gpu.peak_allocated_bytes, 1e-12), "breakdown sums to the peak");
  for (int t = 0; t < out.term_count; t++) {
    if (out.terms[t].category < 0) runtime += out.terms[t].value_bytes;
    else by_cat[out.terms[t].category] += out.terms[t].value_bytes;
  }
  for (int c = 0; c < LLMEM_CAT_COUNT; c++)
    CHECK(fabs(by_cat[c] - out.per_gpu.breakdown_bytes[c]) <= 1e-9 * out.per_gpu.peak_allocated_bytes,
          "%s: terms of %s sum to %.0f, breakdown %.0f", keys, llmem_category_name(c), by_cat[c],
          out.per_gpu.breakdown_bytes[c]);
  CHECK(near(runtime, out.per_gpu.device_used_bytes - out.per_gpu.peak_allocated_bytes, 1e-9), "%s: runtime terms",
        keys);
  double top = 0;
  for (int i = 0; i < out.rl_phase_count; i++) top = fmax(top, out.rl_phases[i].peak_allocated_bytes);
  CHECK_NEAR(top, out.per_gpu.peak_allocated_bytes, 0, "the highest phase is the peak");
}

/* A paged optimizer under RL: its states (P_ADAM, outside the allocator's walk) fill what the device has left
 * and the rest is host memory, as for a training step (test_simulate). The engine elsewhere (placement
 * separate), so that the device's other use does not follow its size. */
static void paged_rl(void) {
  if (!run_keys(GRPO "rl.rollout.placement=separate training.paged_optimizer=true hardware.memory_gib=400", &out))
    return;
  double used = out.per_gpu.device_used_bytes;
  CHECK(out.host_cpu_bytes == 0, "paged, room for all: nothing on the host (%g)", out.host_cpu_bytes);
  CHECK(has_warning(&out, LLMEM_WARN_PAGED_OPTIMIZER), "paged: the warning");
  double without = used - P_ADAM; /* the rest of the device's use */
  double cap = without + P_ADAM / 2;
  char keys[512];
  snprintf(keys, sizeof keys,
           GRPO "rl.rollout.placement=separate training.paged_optimizer=true hardware.memory_gib=%.17g",
           cap / 1073741824.0);
  if (!run_keys(keys, &out)) return;
  CHECK_NEAR(out.per_gpu.device_used_bytes, cap, 1e-9, "paged: the device full");
  CHECK_NEAR(out.host_cpu_bytes, P_ADAM / 2, 1e-6, "paged: the other half on the host");
}

int main(void) {
  grpo();
  fp8_engine();
  entropy_not_in_reference();
  context_parallel_logits();
  swapped_reference();
  paged_rl();
  ppo();
  dpo();
  none_unchanged();
  dynamic_batching();
  search_rl();
  step_time_rl();
  suggest_rl();
  invalid();
  invariants(GRPO);
  invariants(GRPO "rl.rollout.sleep=level1");
  invariants(PPO);
  invariants(PPO "rl.rollout.engine=sglang rl.rollout.own_process=true rl.entropy=true rl.weight_sync=full");
  invariants(MODEL "rl.algorithm=dpo rl.rollout_batch=4");
  invariants(GRPO
             "training.finetune.method=lora rl.remove_padding=true rl.response_len_mean=300 "
             "rl.max_tokens_per_gpu=8192 rl.logits_response_only=true");
  invariants(GRPO "parallel.gpus=8 rl.rollout_batch=8 rl.rollout.tp=2 rl.rollout.placement=separate");
  return check_report("rl");
}
