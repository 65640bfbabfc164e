/* llmem: per-GPU training memory, simulated step by step.
 *
 * One input struct in, one result struct out, one status code:
 *
 *   llmem_input in;  llmem_defaults(&in);  in.parallel_tp = 2; ...
 *   static llmem_result out;   // large (timeline): keep it off small stacks
 *   if (llmem_estimate(&in, &out) != LLMEM_OK) puts(out.error_message);
 *
 * Pure C11: no I/O, no malloc, no globals that change; every function is
 * re-entrant. All byte counts are doubles (exact to 2^53).
 */
#ifndef LLMEM_H
#define LLMEM_H

#include <math.h>
#include <stddef.h>

#define LLMEM_ABI_VERSION 5
#define LLMEM_MAX_STAGES 512  /* pipeline stages reported one by one */
#define LLMEM_MAX_VPP 64      /* virtual stages per pipeline rank */
#define LLMEM_MAX_EVENTS 2048 /* timeline points kept for the chart */
#define LLMEM_MAX_WARNINGS 16
#define LLMEM_MAX_PATTERN 256 /* entries of a per-layer list (model.layer_types); it repeats over the layers */
#define LLMEM_NULL NAN        /* JSON null: "automatic" */

#include "enums.def"
#include "fields.def"
#include "status.def"

#define LLMEM_ENUM_NAME_(c_name, json) c_name,
#define LLMEM_DECLARE_ENUM_(LIST) enum { LLMEM_##LIST##_VALUES(LLMEM_ENUM_NAME_) LLMEM_##LIST##_COUNT_ };
LLMEM_ENUM_LISTS(LLMEM_DECLARE_ENUM_)

typedef enum { LLMEM_STATUSES(LLMEM_ENUM_NAME_) LLMEM_STATUS_COUNT } llmem_status;

/* The input: one double per config key, in the order of fields.def (a LIST
 * key: LLMEM_MAX_PATTERN doubles, its entries then NaN). Enums hold the
 * value's index, sets a bit mask, booleans 0/1, NaN = null. */
#define LLMEM_SLOTS_INT(member) double member;
#define LLMEM_SLOTS_NUM(member) double member;
#define LLMEM_SLOTS_BOOL(member) double member;
#define LLMEM_SLOTS_ENUM(member) double member;
#define LLMEM_SLOTS_SET(member) double member;
#define LLMEM_SLOTS_TEXT(member) double member;
#define LLMEM_SLOTS_GROUP(member) double member;
#define LLMEM_SLOTS_LIST(member) double member[LLMEM_MAX_PATTERN];
typedef struct {
#define LLMEM_MEMBER_(path, member, kind, list, def, lo, hi, flags) LLMEM_SLOTS_##kind(member)
  LLMEM_FIELDS(LLMEM_MEMBER_)
#undef LLMEM_MEMBER_
} llmem_input;

/* Field indices (the rows of fields.def); a field's slots start at its offset. */
#define LLMEM_FIELD_ID_(path, member, kind, list, def, lo, hi, flags) LLMEM_FIELD_##member,
enum { LLMEM_FIELDS(LLMEM_FIELD_ID_) LLMEM_FIELD_COUNT };
#undef LLMEM_FIELD_ID_
#define LLMEM_SLOT_COUNT ((int)(sizeof(llmem_input) / sizeof(double)))

/* Breakdown categories (docs/config.md, result `breakdown_bytes`). */
#define LLMEM_CATEGORIES(C)                         \
  C(LLMEM_CAT_WEIGHTS, "weights")                   \
  C(LLMEM_CAT_GRADIENTS, "gradients")               \
  C(LLMEM_CAT_MASTER_WEIGHTS, "master_weights")     \
  C(LLMEM_CAT_OPTIMIZER_STATES, "optimizer_states") \
  C(LLMEM_CAT_ACTIVATIONS, "activations")           \
  C(LLMEM_CAT_LOGITS, "logits")                     \
  C(LLMEM_CAT_COMM_BUFFERS, "comm_buffers")         \
  C(LLMEM_CAT_TEMPORARIES, "temporaries")           \
  C(LLMEM_CAT_KV_CACHE, "kv_cache") /* the RL rollout engine's KV cache pool (rl.*) */
typedef enum { LLMEM_CATEGORIES(LLMEM_ENUM_NAME_) LLMEM_CAT_COUNT } llmem_category;

/* Phases of a training step, for the timeline and `peak_at`. */
#define LLMEM_PHASES(P)                                                        \
  P(LLMEM_PHASE_SETUP, "setup")                                                \
  P(LLMEM_PHASE_FORWARD, "forward")                                            \
  P(LLMEM_PHASE_LOSS, "loss")                                                  \
  P(LLMEM_PHASE_BACKWARD, "backward")                                          \
  P(LLMEM_PHASE_OPTIMIZER, "optimizer")                                        \
  /* RL post-training (core/rl.c): the phases around the actor update, whose \
   * own points keep forward / loss / backward / optimizer */ \
  P(LLMEM_PHASE_WEIGHT_SYNC, "weight sync")                                    \
  P(LLMEM_PHASE_ROLLOUT, "rollout")                                            \
  P(LLMEM_PHASE_ENGINE_SLEEP, "engine sleep")                                  \
  P(LLMEM_PHASE_REWARD, "reward scoring")                                      \
  P(LLMEM_PHASE_OLD_LOGPROBS, "old log-probs")                                 \
  P(LLMEM_PHASE_REF_LOGPROBS, "reference log-probs")                           \
  P(LLMEM_PHASE_CRITIC_VALUES, "critic values")                                \
  P(LLMEM_PHASE_CRITIC_UPDATE, "critic update")                                \
  P(LLMEM_PHASE_ACTOR_UPDATE, "actor update") /* a phase summary only: its points are forward ... optimizer */
typedef enum { LLMEM_PHASES(LLMEM_ENUM_NAME_) LLMEM_PHASE_COUNT } llmem_phase;

#define LLMEM_WARNINGS(W)                                                                                              \
  W(LLMEM_WARN_DOES_NOT_FIT, "the estimate exceeds the GPU memory (hardware.memory_gib)")                              \
  W(LLMEM_WARN_NEAR_CAPACITY,                                                                                          \
    "less than 10% of GPU memory stays free: allocator fragmentation may cause out-of-memory errors")                  \
  W(LLMEM_WARN_FP8_APPROX,                                                                                             \
    "fp8: linear inputs are counted at 1 byte and an fp8 weight cache is added; scaling-factor tensors are ignored")   \
  W(LLMEM_WARN_SP_WITHOUT_TP, "parallel.sequence_parallel has no effect with parallel.tp = 1")                         \
  W(LLMEM_WARN_PP_BUBBLE, "training.grad_accum is smaller than parallel.pp: most of the pipeline idles")               \
  W(LLMEM_WARN_CAPACITY_DROPS,                                                                                         \
    "model.moe.capacity_factor drops tokens above the capacity; the estimate uses the capacity as the per-expert "     \
    "load bound")                                                                                                      \
  W(LLMEM_WARN_OPT_OFFLOAD_HOST,                                                                                       \
    "optimizer offload needs the host memory reported under host.cpu_bytes per GPU process")                           \
  W(LLMEM_WARN_COMPAT_PARTIAL,                                                                                         \
    "compat formula: only the terms its source defines are reported (no runtime, no transients)")                      \
  W(LLMEM_WARN_TIMELINE_DOWNSAMPLED, "the timeline was downsampled to fit; the peak is exact")                         \
  W(LLMEM_WARN_ACT_OFFLOAD,                                                                                            \
    "activation offload: saved activations live in host memory; one layer's worth stays on the GPU per stream")        \
  W(LLMEM_WARN_PAGED_OPTIMIZER,                                                                                        \
    "paged optimizer: states in CUDA managed memory fill what the GPU has left (nvidia-smi); the rest pages to host")  \
  W(LLMEM_WARN_RESERVE_BOUND,                                                                                          \
    "reserved is the caching allocator's bound, not its simulation: the step makes too many allocations to replay")    \
  W(LLMEM_WARN_RL_PASSES,                                                                                              \
    "RL: the log-prob, reference, reward and critic-value passes count one layer's no-grad working set, its gathered " \
    "weights and one micro-batch's logits; reserved in those phases is the caching allocator's bound")                 \
  W(LLMEM_WARN_RL_SEPARATE,                                                                                            \
    "RL: the rollout engine runs on GPUs of its own (rl.rollout.placement \"separate\"): its memory is not on the "    \
    "training GPUs reported here")                                                                                     \
  W(LLMEM_WARN_ALLOCATOR_OOM,                                                                                          \
    "the simulated caching allocator runs out of memory where PyTorch raises torch.OutOfMemoryError; reserved counts " \
    "the rest of the step as if the device had room")                                                                  \
  W(LLMEM_WARN_ZERO3_LOADS_WHOLE,                                                                                      \
    "parallel.zero_init false: DeepSpeed ZeRO-3 loads the whole model on each GPU before partitioning it")             \
  W(LLMEM_WARN_FP8_RECIPE,                                                                                             \
    "training.fp8_recipe: linear weights and saved linear inputs are counted in the recipe's format with its scales "  \
    "(delayed/current: Hopper, with a transposed weight copy); the step time still counts fp8 GEMMs")
typedef enum { LLMEM_WARNINGS(LLMEM_ENUM_NAME_) LLMEM_WARNING_COUNT } llmem_warning;

/* "Why this number": the terms of the most-loaded GPU, each with its
 * category, a formula whose placeholders {c0} (a count), {b0} (bytes) or
 * {x0} (a plain number) refer to inputs[0..3], and its value. The terms of a
 * category sum to its value in breakdown_bytes; the runtime terms sum to
 * device_used_bytes - peak_allocated_bytes. T(C_NAME, "label", "formula") */
#define LLMEM_TERMS(T)                                                                                               \
  T(LLMEM_TERM_WEIGHTS, "weights kept on the GPU", "{c0} parameters x {x1} B / {x2}-way sharding")                   \
  T(LLMEM_TERM_WEIGHTS_TRANSIENT, "gathered or cast weights at the peak",                                            \
    "unsharded layers, prefetch and autocast copies alive at the peak: {b0}")                                        \
  T(LLMEM_TERM_MASTER, "fp32 master weights", "{c0} parameters x 4 B / {x2}-way sharding")                           \
  T(LLMEM_TERM_GRADIENTS, "gradients",                                                                               \
    "{c0} trainable parameters x {x1} B / {x2}-way sharding; {b3} exist at the peak (incl. unsharded ones)")         \
  T(LLMEM_TERM_OPTIMIZER, "optimizer states", "{c0} trainable parameters x {x1} B / {x2}-way sharding")              \
  T(LLMEM_TERM_ACTIVATIONS, "saved activations",                                                                     \
    "{b0} per layer and micro-batch ({b1} with full recompute); {x2} layer passes held at the peak, plus the layer " \
    "being recomputed")                                                                                              \
  T(LLMEM_TERM_LOGITS, "logits and cross-entropy",                                                                   \
    "{c0} tokens x {c1} vocabulary entries on this rank; {b2} kept for the backward")                                \
  T(LLMEM_TERM_COMM, "communication buffers",                                                                        \
    "reduce-scatter inputs, prefetched all-gathers and buckets at the peak: {b0}")                                   \
  T(LLMEM_TERM_TEMPORARIES, "temporaries",                                                                           \
    "working set of the operation at the peak (layer forward/backward or optimizer step): {b0}")                     \
  T(LLMEM_TERM_RESERVE, "allocator reserve", "cached blocks beside the peak (caching allocator): {b0}")              \
  T(LLMEM_TERM_RESERVE_SIMULATED, "allocator reserve",                                                               \
    "segments the simulated caching allocator holds beyond the tensors at the peak: {b0}; at the reserved "          \
    "peak, {b1} of cached blocks are free (largest {b2})")                                                           \
  T(LLMEM_TERM_CONTEXT, "CUDA context", "context and kernel images: {b0}")                                           \
  T(LLMEM_TERM_WORKSPACE, "cuBLAS workspaces", "one per thread running matmuls (forward, backward), kept: {b0}")     \
  T(LLMEM_TERM_NCCL, "NCCL buffers", "{x1} communicators: {b0}")                                                     \
  T(LLMEM_TERM_PAGED, "paged optimizer states", "managed memory resident on the GPU: {b0}")                          \
  T(LLMEM_TERM_WEIGHTS_EXPERT, "routed-expert weights kept on the GPU",                                              \
    "{c0} expert parameters x {x1} B / {x2}-way expert-data-parallel sharding")                                      \
  T(LLMEM_TERM_MASTER_EXPERT, "routed-expert fp32 master weights",                                                   \
    "{c0} expert parameters x 4 B / {x2}-way expert-data-parallel sharding")                                         \
  T(LLMEM_TERM_GRADIENTS_EXPERT, "routed-expert gradients",                                                          \
    "{c0} trainable expert parameters x {x1} B / {x2}-way expert-data-parallel sharding; {b3} exist at the peak")    \
  T(LLMEM_TERM_OPTIMIZER_EXPERT, "routed-expert optimizer states",                                                   \
    "{c0} trainable expert parameters x {x1} B / {x2}-way expert-data-parallel sharding")                            \
  T(LLMEM_TERM_RL_ACTOR, "actor (policy)", "the actor's share of this category in this phase: {b0}")                 \
  T(LLMEM_TERM_RL_REFERENCE, "reference model", "{c1} parameters; its share of this category in this phase: {b0}")   \
  T(LLMEM_TERM_RL_REWARD, "reward model", "{c1} parameters; its share of this category in this phase: {b0}")         \
  T(LLMEM_TERM_RL_CRITIC, "critic (value model)", "{c1} parameters; its share of this category in this phase: {b0}") \
  T(LLMEM_TERM_RL_ENGINE_WEIGHTS, "rollout engine weights",                                                          \
    "{c1} parameters x {x2} B / {x3}-way engine tensor parallelism: {b0}")                                           \
  T(LLMEM_TERM_RL_KV_CACHE, "rollout KV cache",                                                                      \
    "the engine's memory share less its weights and activation workspace: {b0}, {c1} tokens")                        \
  T(LLMEM_TERM_RL_ENGINE_WORKSPACE, "rollout activation workspace and CUDA graphs",                                  \
    "profiled forward of the batched tokens {b1}, CUDA graph pool {b2}: {b0}")                                       \
  T(LLMEM_TERM_RL_WEIGHT_SYNC, "weight-sync buffers",                                                                \
    "bucket or gathered model {b1}, largest gathered tensor {b2}: {b0}")
#define LLMEM_TERM_NAME_(c_name, label, formula) c_name,
typedef enum { LLMEM_TERMS(LLMEM_TERM_NAME_) LLMEM_TERM_COUNT } llmem_term_id;

typedef struct {
  int id;       /* llmem_term_id */
  int category; /* llmem_category, or -1 for runtime terms */
  double value_bytes;
  double inputs[4];
} llmem_term;

/* RL post-training: the models a phase's bytes belong to (core/rl.c). */
#define LLMEM_RL_MODELS(M)                 \
  M(LLMEM_RL_MODEL_ACTOR, "actor")         \
  M(LLMEM_RL_MODEL_REFERENCE, "reference") \
  M(LLMEM_RL_MODEL_REWARD, "reward")       \
  M(LLMEM_RL_MODEL_CRITIC, "critic")       \
  M(LLMEM_RL_MODEL_ENGINE, "rollout_engine")
typedef enum { LLMEM_RL_MODELS(LLMEM_ENUM_NAME_) LLMEM_RL_MODEL_COUNT } llmem_rl_model;
#define LLMEM_MAX_RL_PHASES 12

/* One RL phase's peak on the most-loaded rank (its highest point). */
typedef struct {
  int phase; /* llmem_phase */
  double peak_allocated_bytes;
  double device_used_bytes;                 /* reserved bound + runtime, as per_gpu */
  double breakdown_bytes[LLMEM_CAT_COUNT];  /* at the phase's peak */
  double model_bytes[LLMEM_RL_MODEL_COUNT]; /* the same bytes by model */
} llmem_rl_phase;

/* The layer of an event or peak outside the decoder layers: the embedding (its backward). */
#define LLMEM_LAYER_EMBEDDING (-2)

/* One pipeline stage's (rank's) numbers. */
typedef struct {
  double peak_allocated_bytes;
  double peak_reserved_bytes;
  double device_used_bytes;
  double breakdown_bytes[LLMEM_CAT_COUNT]; /* at the peak; sums to peak_allocated_bytes */
  double persistent_bytes;                 /* held for the whole step */
  double fragmentation_bytes;              /* reserved - allocated at the fullest moment of the reserved peak */
  double largest_free_block_bytes;         /* the largest cached free block then */
  int reserved_simulated;                  /* 1: reserved from the simulated caching allocator; 0: its bound */
  double params_count;                     /* parameters this rank holds (unsharded count) */
  double layers_count;
  double mixer_layers_count[LLMEM_LAYER_MIXER_COUNT_]; /* of which with each mixer (model.layer_types order) */
  double moe_layers_count;                             /* of which with an MoE MLP */
  int peak_phase;                                      /* llmem_phase */
  int peak_micro_batch;                                /* -1: not in a micro-batch */
  int peak_layer;                                      /* global layer index, -1: none (or the loss and output layer),
                                              LLMEM_LAYER_EMBEDDING: the embedding's backward */
  int stage;
  int peak_bound;  /* 1: not walked: at most these numbers, bound_stage's (a lower stage with the same layers) */
  int bound_stage; /* when peak_bound */
} llmem_rank_result;

/* One timeline point: the running totals right after an event. */
typedef struct {
  double total_bytes;
  double category_bytes[LLMEM_CAT_COUNT];
  double reserved_bytes; /* segments the simulated allocator holds; 0 when not simulated */
  int phase;             /* llmem_phase */
  int micro_batch;
  int layer;       /* as llmem_rank_result.peak_layer */
  int skipped_ops; /* forward/backward passes (one micro-batch through one chunk) walked right
                       before this point without points of their own: copies of the steady state
                       (or of a growing run, e.g. GPipe's forwards) the timeline shows once; 0 mostly */
} llmem_event;

typedef struct {
  llmem_status status;
  int error_field;         /* index into the field table, -1 if none */
  char error_path[64];     /* e.g. "parallel.tp" */
  char error_message[320]; /* "parallel.tp: ... (allowed: ...)" */

  llmem_rank_result per_gpu;   /* the rank that uses the most device memory */
  double peak_allocated_bytes; /* the highest allocated peak over the ranks (the headline "allocated") */
  int peak_allocated_stage;    /* its rank: ranks[peak_allocated_stage]; may differ from per_gpu.stage */
  char peak_at[96];            /* "backward, stage 0, micro-batch 1, layer 31" */
  int rank_count;
  llmem_rank_result ranks[LLMEM_MAX_STAGES];

  double params_total;
  double params_active;
  double params_trainable;
  double params_per_gpu;
  double host_cpu_bytes;  /* per GPU process */
  double host_nvme_bytes; /* per GPU process */
  int fits;
  double utilization; /* device_used_bytes / memory */
  double capacity_bytes;

  int warning_count;
  int warnings[LLMEM_MAX_WARNINGS]; /* llmem_warning ids */

  int term_count;
  llmem_term terms[LLMEM_TERM_COUNT];

  /* RL post-training (rl.algorithm not "none"); zero otherwise */
  int rl_phase_count;
  llmem_rl_phase rl_phases[LLMEM_MAX_RL_PHASES]; /* in step order */
  double rl_kv_cache_bytes;                      /* the rollout engine's KV cache per GPU */
  double rl_kv_cache_tokens;                     /* tokens it holds (whole blocks) */
  double rl_engine_bytes;                        /* the engine's memory per GPU while awake */

  int event_count;  /* timeline of the most-loaded rank */
  int event_stride; /* >1 when downsampled */
  llmem_event events[LLMEM_MAX_EVENTS];
} llmem_result;

/* Field table kinds and flags. */
enum {
  LLMEM_KIND_INT,
  LLMEM_KIND_NUM,
  LLMEM_KIND_BOOL,
  LLMEM_KIND_ENUM,
  LLMEM_KIND_SET,
  LLMEM_KIND_TEXT,
  LLMEM_KIND_GROUP,
  LLMEM_KIND_LIST
};
enum { LLMEM_FLAG_NULLABLE = 1, LLMEM_FLAG_MONTHS = 2 };

typedef struct {
  const char *path;
  int kind;
  int flags;
  double default_value;
  double min_value;
  double max_value;
  const char *const *values; /* enum/set value names, NULL otherwise */
  int value_count;
  size_t offset; /* of the member in llmem_input */
} llmem_field;

void llmem_defaults(llmem_input *in);
llmem_status llmem_estimate(const llmem_input *in, llmem_result *out);

/* ---- planner (core/planner.c) ---- */
#define LLMEM_MAX_SWEEP 4096
#define LLMEM_MAX_LAYOUTS 256

/* The readings of llmem_estimate without timeline or terms: peak_allocated_bytes
 * is the highest over the ranks (result.peak_allocated_bytes), peak_reserved_bytes
 * the highest over the ranks, device-used per_gpu's (the most-loaded rank). */
typedef struct {
  llmem_status status;
  double peak_allocated_bytes, peak_reserved_bytes, device_used_bytes;
  double capacity_bytes;
  int fits;
} llmem_readings;

llmem_status llmem_estimate_readings(const llmem_input *in, llmem_readings *out);

/* One sweep point: `field` set to values[i]. Invalid points carry their status. */
typedef struct {
  double value;
  llmem_readings readings;
} llmem_sweep_point;

/* field: index in the field table (llmem_field_index); count <= LLMEM_MAX_SWEEP */
llmem_status llmem_sweep(const llmem_input *base, int field, const double *values, int count,
                         llmem_sweep_point *points);

/* The largest value of `field` in [lo, hi], on multiples of `step`, whose
 * device_used_bytes leaves `free_fraction` of the GPU free (bisection; memory
 * grows with micro_batch and seq_len). *best = 0 when even lo does not fit. */
llmem_status llmem_largest_fit(const llmem_input *base, int field, double lo, double hi, double step,
                               double free_fraction, double *best);

typedef struct {
  double gpus;          /* world size to lay out */
  double global_batch;  /* samples per optimizer step (must be a multiple of dp x micro_batch) */
  double free_fraction; /* HBM left free by a fitting layout (0.10) */
  double max_micro_batch;
  int vary_sharding; /* ZeRO stage / FSDP strategy / distributed optimizer */
  int vary_recompute;
  int vary_offload;         /* optimizer offload to CPU (with FSDP: parameters too) where the engine allows */
  int vary_optimizer_dtype; /* optimizer states in fp32 and bf16 */
  int vary_engine;          /* fsdp2, megatron and deepspeed besides the config's engine */
  int tp_across_nodes;      /* tensor parallelism above parallel.gpus_per_node (off: within a node) */
} llmem_search_options;

typedef struct {
  double dp, tp, pp, vpp, cp, ep, micro_batch, grad_accum;
  double rollout_tp; /* RL runs: the rollout engine's tensor parallelism (rl.rollout.tp); 0 otherwise */
  int engine, recompute, zero_stage, fsdp_strategy, distributed_optimizer, sequence_parallel, pp_schedule;
  int offload_optimizer, offload_params, optimizer_dtype;
  double device_used_bytes;
  double step_seconds;
  double tokens_per_second_per_gpu;
  int pareto; /* on the memory / step-time Pareto front of the kept layouts */
} llmem_layout;

typedef struct {
  llmem_status status;
  int error_field;
  double candidates;                   /* layouts enumerated */
  double valid;                        /* passed every divisibility check */
  double fitting;                      /* fit with the free fraction */
  int count;                           /* kept: the fastest, sorted by step time */
  llmem_status empty_reason;           /* with count 0: why (LLMEM_ERR_SEARCH_NO_LAYOUT / _NO_BATCH / _NO_FIT,
                                or the commonest config check the layouts failed); LLMEM_OK otherwise */
  int empty_field;                     /* the key that check names, -1 if none */
  double global_batch;                 /* the samples per step every layout keeps */
  double rejected[LLMEM_STATUS_COUNT]; /* candidates rejected, by the status that rejected them
                                          (LLMEM_ERR_SEARCH_NO_BATCH, _NO_FIT, _TP_NODE, config checks) */
  llmem_layout layouts[LLMEM_MAX_LAYOUTS];
} llmem_search_result;

void llmem_search_defaults(llmem_search_options *opt);
llmem_status llmem_search(const llmem_input *base, const llmem_search_options *opt, llmem_search_result *out);

/* ---- suggestions (core/suggest.c): changes that make a run fit ---- */
#define LLMEM_MAX_SUGGESTIONS 48
#define LLMEM_MAX_CHANGES 16

/* What a suggestion changes besides memory and time (the page marks all but SAME). */
#define LLMEM_SUGGEST_KINDS(K)                                                          \
  K(LLMEM_SUGGEST_SAME, "same")         /* the same training: memory traded for time */ \
  K(LLMEM_SUGGEST_NUMERICS, "numerics") /* optimizer states in lower precision */       \
  K(LLMEM_SUGGEST_METHOD, "method")     /* LoRA / QLoRA: a different training method */ \
  K(LLMEM_SUGGEST_WORKLOAD, "workload") /* shorter sequences: a different workload */   \
  K(LLMEM_SUGGEST_GPUS, "gpus")         /* another GPU count at the same global batch */
typedef enum { LLMEM_SUGGEST_KINDS(LLMEM_ENUM_NAME_) LLMEM_SUGGEST_KIND_COUNT } llmem_suggest_kind;

typedef struct {
  double free_fraction; /* HBM a suggestion must leave free (0.10) */
  double max_gpus;      /* the fewest-GPUs search stops here (0: no such search) */
} llmem_suggest_options;

/* One suggestion: its changes to the input (field index, value; NaN = null),
 * and the readings of its own full llmem_estimate. */
typedef struct {
  double values[LLMEM_MAX_CHANGES];
  int fields[LLMEM_MAX_CHANGES];
  int change_count;
  int kind; /* llmem_suggest_kind */
  double peak_allocated_bytes, peak_reserved_bytes, device_used_bytes;
  double host_cpu_bytes, host_nvme_bytes; /* per GPU process */
  double host_cpu_bytes_per_node;         /* host_cpu_bytes times the GPU processes of a node */
  double step_seconds;                    /* the step-time model (llmem_step_time) */
  double time_ratio;                      /* step time per token of the global batch, over the base's: the ranking */
  double gpus;
} llmem_suggestion;

typedef struct {
  llmem_status status;
  int error_field;
  int base_fits; /* the base config leaves free_fraction free */
  double base_device_used_bytes, capacity_bytes, base_step_seconds;
  double candidates;  /* changed inputs estimated */
  double fewest_gpus; /* the fewest GPUs that fit at the same global batch (0: none found) */
  int fewest_index;   /* its suggestion, -1: none */
  int count;          /* kept: fitting, verified; by time_ratio, other GPU counts last */
  llmem_suggestion suggestions[LLMEM_MAX_SUGGESTIONS];
  llmem_search_result search; /* scratch: the layout searches */
  llmem_result work;          /* scratch: the verifying estimates */
} llmem_suggest_result;

void llmem_suggest_defaults(llmem_suggest_options *opt);
llmem_status llmem_suggest(const llmem_input *base, const llmem_suggest_options *opt, llmem_suggest_result *out);
const char *llmem_suggest_kind_name(int kind);

/* Where a step's time goes in the step-time model (core/steptime.c): each
 * part's seconds, adding up to the step. The compute parts are the stage's
 * micro-batch passes; the pipeline bubble is the stage passes the schedule
 * idles; communication parts are what the compute does not hide (and the
 * share of the compute that hidden collectives take). */
#define LLMEM_STEP_PARTS(K)                                                                                \
  K(LLMEM_STEP_MATMULS, "matmuls")                 /* the layers' and the output layer's GEMMs */          \
  K(LLMEM_STEP_ATTENTION, "attention")             /* the attention core (FlashAttention, eager scores) */ \
  K(LLMEM_STEP_MEMORY_BOUND, "memory_bound")       /* norms, activations, casts, adapters, the loss */     \
  K(LLMEM_STEP_RECOMPUTE, "recompute")             /* the forward work recompute repeats */                \
  K(LLMEM_STEP_TP_COMM, "tp_comm")                 /* tensor-parallel collectives */                       \
  K(LLMEM_STEP_CP_COMM, "cp_comm")                 /* context-parallel K/V exchange */                     \
  K(LLMEM_STEP_EP_COMM, "ep_comm")                 /* expert-parallel all-to-alls */                       \
  K(LLMEM_STEP_PIPELINE_BUBBLE, "pipeline_bubble") /* stage passes the schedule idles */                   \
  K(LLMEM_STEP_PIPELINE_SENDS, "pipeline_sends")   /* activations sent between stages */                   \
  K(LLMEM_STEP_DP_COMM, "dp_comm")                 /* gradient reduction and parameter gathers */          \
  K(LLMEM_STEP_FSDP_COPIES, "fsdp_copies")         /* FSDP2's copy-in and copy-out */                      \
  K(LLMEM_STEP_OPTIMIZER, "optimizer")             /* the optimizer step */                                \
  K(LLMEM_STEP_OFFLOAD, "offload")                 /* offloaded states over the host link */
typedef enum { LLMEM_STEP_PARTS(LLMEM_ENUM_NAME_) LLMEM_STEP_PART_COUNT } llmem_step_part;

typedef struct {
  double step_seconds;
  double tokens_per_second_per_gpu;
  double parts_seconds[LLMEM_STEP_PART_COUNT]; /* by llmem_step_part, adding up to step_seconds */
} llmem_step_result;

/* Step-time estimate of a config: a ranking aid (core/steptime.c). */
llmem_status llmem_step_time(const llmem_input *in, llmem_step_result *out);
const char *llmem_step_part_name(int part); /* "" past the end */

const llmem_field *llmem_field_at(int index); /* NULL past the end */
int llmem_field_index(const char *path);      /* -1 if unknown */
/* Training-stack profiles (core/profiles.c): the automatic value a profiled
 * key takes for this input's runtime.framework and framework_version; NaN
 * when the key is set or no profile row covers it. *term: the "why this
 * number" term it shapes (-1: none); *source: the framework file it follows. */
double llmem_profile_value(const llmem_input *in, int field, int *term, const char **source);
/* The row of core/profiles.def that gives field its automatic value (-1: none, or the key is set): the page
 * reads the row's source text from wasm/profile-sources.json, which the wasm build leaves out of the binary
 * (llmem_profile_value's source is NULL there). */
int llmem_profile_row(const llmem_input *in, int field);
const char *llmem_status_message(llmem_status status);
const char *llmem_warning_message(llmem_warning warning);
const char *llmem_category_name(int category);
const char *llmem_phase_name(int phase);
const char *llmem_term_label(int term);
const char *llmem_term_formula(int term);
const char *llmem_rl_model_name(int model);

#endif
