/* Internal types shared by the core's modules. Not part of the public API. */
#ifndef LLMEM_INTERNAL_H
#define LLMEM_INTERNAL_H

#include "llmem.h"

#define GIB 1073741824.0
#define MIB 1048576.0

/* Parameters of one layer on one rank, by optimizer-relevant class. */
typedef struct {
  double matrix_count;      /* 2-D hidden weights (attention, dense MLP, shared experts) on this rank */
  double matrix_dims_count; /* sum over those matrices of rows + cols (Adafactor factored states) */
  double vector_count;      /* norms, biases, router: 1-D or tiny, replicated over TP */
  double expert_count;      /* routed expert weights on this rank (after EP/ETP) */
  double expert_dims_count;
  double lora_count;           /* LoRA adapter parameters on this rank (trainable) */
  double quantizable_count;    /* weights a QLoRA base quantises (all linears of the layer) */
  double largest_linear_count; /* largest single linear weight (dequantise / gather transients) */
  double largest_module_count; /* largest module (DeepSpeed "largest layer" granularity) */
} layer_params;

/* What plan_build derives once from the input: nulls replaced by their automatic values,
 * profiles applied, combinations, degrees, bytes per element. A raw key is read from the
 * input itself, pl->in->member (the input outlives the plan built from it). A model that
 * differs in raw keys (rl.c's reward, critic and rollout engine, a no-grad pass's batch) is a
 * copy of the plan pointed at a changed copy of the input; whole-model counts pass their
 * degrees (model.c layer_params_split). */
typedef struct {
  const llmem_input *in;

  /* model: what plan.c resolves or combines, and the dimensions rl.c's reward and critic
   * models override beside their input's (the other model.* keys: pl->in) */
  double layers, kv_heads, head_dim, vocab_padded;
  int gated, learned_pos, qkv_bias;
  int o_bias, mlp_bias; /* attention output / MLP linear biases (default: model.bias) */
  double norm_width;    /* params per norm per hidden unit: 1 RMSNorm, 2 LayerNorm */
  int moe;
  double expert_ffn, shared_ffn;
  double capacity_factor; /* 0: unset */
  int mla;
  double q_lora_rank;
  /* per-layer kinds: a pattern repeated over the layers (period 0: every layer full / by the MoE rule) */
  unsigned char mixer_pattern[LLMEM_MAX_PATTERN], mlp_pattern[LLMEM_MAX_PATTERN];
  int mixer_period, mlp_period;
  /* encoder-decoder: layers [0, model.encoder_layers) are the encoder's, over source_len tokens; the
   * decoder's (the rest) add cross-attention */
  double source_len;
  /* the vision tower (model.vision; layers 0: none) */
  double vision_merge, vision_projector;

  /* training: what plan.c resolves or combines (the other training.* keys: pl->in) */
  double grad_accum;
  int master_weights, optimizer_impl;
  double recompute_layers;         /* 0 = every layer (with full) */
  int attn_softcap, final_softcap; /* tanh soft-capping of the attention scores / the logits (Gemma 2) */
  int loss, repeat_kv;
  int v_view_keeps_qkv;     /* v is a view of the fused qkv output: the attention kernel's saved v keeps all of it */
  int sac_saves_all_to_all; /* per-op SAC keeps expert parallelism's all-to-all outputs (activations.c per_op_saved) */
  int norm_upcast;          /* an eager RMSNorm computes on x.float() (keeps the fp32 copy) */
  int fp8_linear;
  int autocast; /* torch.autocast over fp32 parameters (no wrapper that keeps 16-bit copies) */
  int base_dtype;
  int full_modules;       /* LLMEM_FM_* bits: trained in full beside the adapters (LoRA / QLoRA only) */
  int quant_keeps_input;  /* 4-bit linears keep their input until backward (bitsandbytes <= 0.43.1) */
  int quant_head;         /* the output projection is a 4-bit linear too (Fabric BitsandbytesPrecision) */
  int quant_from_fp16;    /* 4-bit state quantised from an fp16 copy: dequantised fp16, then cast */
  int logits_fp32_kept;   /* the wrapper casts the logits to fp32; the loop keeps them through the backward */
  int quant_inputs_held;  /* the kept 4-bit inputs and logits outlive the backward to the next forward */
  int lora_fused_qkv;     /* one adapter (one dropout of the input) for the fused q/k/v projection */
  int quant_dequant_temp; /* each 4-bit matmul dequantises its whole weight (bitsandbytes MatMul4Bit) */
  int mean_keeps_input;   /* torch.mean keeps its input (PyTorch <= 2.1): an eager RMSNorm keeps its square */
  int zero_grad_in_place; /* zero_grad fills the gradients with zeros (PyTorch < 2.0): they live from step to step */
  int accumulate_no_sync; /* gradient accumulation under no_sync: unsharded gradients kept over the micro-batches */
  int quant_experts;      /* a quantized base's routed MoE experts are quantized too (else kept in the base dtype) */

  /* parallel: what plan.c resolves or derives (the other parallel.* keys: pl->in) */
  double dp;
  double vpp_group; /* interleaved: micro-batches run per virtual stage in a row (Megatron's group) */
  int sp;
  int shard_root_modules; /* FSDP: embedding and output projection are their own units */
  int overlap_comm;
  int reduce_on_compute; /* FSDP2 reduce-scatter inputs come from the compute stream's pool */
  int ddp_find_unused;   /* DDP's find_unused_parameters: buckets of 1 MiB + cap from construction, never rebuilt */
  double ddp_bucket_bytes, ddp_first_bucket_bytes; /* DDP's bucket cap, and its first bucket's (ddp.c) */
  int pp_stage_buffers;     /* torch.distributed.pipelining buffers: 0 none, 1 gradient receives and the last
                                 stage's outputs per micro-batch, 2 every stage's outputs too (states.c) */
  int pp_returns_outputs;   /* the schedule's step keeps the last stage's outputs to return them (states.c) */
  double pp_first, pp_last; /* 0 = even */
  int pp_weighted;          /* parallel.pp_split weighted: the embedding and the output count as a layer (layout.c) */
  double shard_dense;       /* sharding degree of dense model states (ZeRO/FSDP/dist-opt) */
  double shard_expert;      /* sharding degree of expert model states */

  /* hardware / runtime */
  double memory_bytes;
  double cuda_context_bytes, cublas_workspace_bytes, nccl_buffer_bytes, allocator_reserve;
  int allocator_reserve_given;
  double max_split_bytes;     /* PYTORCH_CUDA_ALLOC_CONF max_split_size_mb; INFINITY when unset */
  int empty_cache_after_init; /* torch.cuda.empty_cache() between set-up and the first step */
  int zero3_loads_whole;      /* DeepSpeed ZeRO-3 without zero.Init: the whole model on the GPU before partitioning */
  int simulate_allocator;     /* reserved from the simulated caching allocator (else the bound) */
  double allocator_max_work;  /* its work per estimate before it gives up (ALLOCATOR_MAX_WORK) */

  /* bytes per element */
  double act_bytes;    /* activations (compute dtype; fp8 stores bf16 activations) */
  double weight_bytes; /* compute copy of trainable weights */
  double master_bytes; /* 0 when there is no separate master copy */
  double grad_bytes;
  double base_weight_bytes; /* frozen base weights for LoRA; QLoRA handled apart */
  /* training.fp8_recipe (docs/memory-model.md §4.6): -1 when null or without fp8
   * linears (the 1-byte approximation); else the recipe and, per element of a
   * linear weight, its quantised copies (rowwise + columnwise, with their
   * scales), and per element of a saved linear input, its one quantised copy */
  int fp8_recipe;
  double fp8_weight_bytes, fp8_input_bytes;

  int rl_entropy;        /* RL: the loss also takes the entropy over the vocabulary (rl.entropy) */
  int rl_entropy_kernel; /* LLMEM_RL_ENTROPY_*: how (rl.entropy_kernel, else the stack's) */
} plan;

/* The V-shape schedules (zb_v, dualpipe_v): rank r holds model chunks r and
 * 2p - 1 - r, so the first rank holds the embedding and the head. */
static inline int plan_v_shape(const plan *p) {
  return p->in->pp > 1 && ((int)p->in->pp_schedule == LLMEM_PP_ZB_V || (int)p->in->pp_schedule == LLMEM_PP_DUALPIPE_V);
}
/* DualPipe (bidirectional): rank r holds stage r of one model copy and stage
 * p - 1 - r of another, run in opposite directions (layout.c, schedule.c). */
static inline int plan_dualpipe(const plan *p) { return p->in->pp > 1 && (int)p->in->pp_schedule == LLMEM_PP_DUALPIPE; }
/* The separate linears on the attention input: q, k and v (transformers
 * LlamaAttention), one fused qkv linear in LitGPT (training.v_view_keeps_qkv,
 * training.finetune.lora_fused_qkv), MLA's down-projections left as one. */
static inline int plan_qkv_linears(const plan *p) { return p->mla || p->v_view_keeps_qkv || p->lora_fused_qkv ? 1 : 3; }
/* Two chunks per rank in an order of their own (V or DualPipe; schedule.c). */
static inline int plan_paired_chunks(const plan *p) { return plan_v_shape(p) || plan_dualpipe(p); }
/* Tensor parallelism by PyTorch DTensor (parallelize_module: torchtitan, torchtune, transformers'
 * tp_plan), the only TP outside Megatron's own layers (plan.c check_tensor_parallel: FSDP2). */
static inline int plan_dtensor_tp(const plan *p) {
  return p->in->tp > 1 && (int)p->in->engine != LLMEM_ENGINE_MEGATRON &&
         (int)p->in->engine != LLMEM_ENGINE_MEGATRON_DEEPSPEED;
}

/* One stage (pipeline rank) of the layout. */
typedef struct {
  int stage;                                                        /* the pipeline stage this layout is */
  int first_layer;                                                  /* of chunk 0 */
  int layer_count;                                                  /* over all virtual chunks */
  int mixer_layer_count[LLMEM_LAYER_MIXER_COUNT_], moe_layer_count; /* of which by mixer, with MoE MLPs */
  int has_embedding, has_head;
  double params_count; /* everything on this rank (TP/EP-sharded, unsharded by DP) */
  double trainable_count;
  double frozen_count;
  layer_params layers;        /* sum over the stage's layers */
  double embedding_count;     /* word (+ position) embedding on this rank */
  double head_count;          /* lm_head / classifier on this rank */
  double vision_count;        /* vision tower and projector on this rank (first stage) */
  double vision_frozen_count; /* of which frozen (model.vision.train) */
  double final_norm_count;
} stage_layout;

/* The tensors of a saved set, for the allocator's requests (sizes sum to the set's bytes). */
#define LAYER_MAX_TENSORS 24
typedef struct {
  double bytes[LAYER_MAX_TENSORS];
  int count;
} tensor_list;

/* Saved and transient bytes of one layer for one micro-batch on one rank. */
typedef struct {
  tensor_list saved_tensors;     /* what saved_bytes is made of, tensor by tensor */
  tensor_list recompute_tensors; /* what recompute_bytes is made of */
  double saved_bytes;            /* kept from forward to backward under the policy */
  double saved_full_bytes;       /* what no recompute would keep */
  double checkpoint_bytes;       /* kept when the whole layer is recomputed */
  double recompute_bytes;        /* rebuilt during this layer's backward */
  double quant_input_bytes;      /* the 4-bit linears' inputs MatMul4Bit holds in ctx.tensors (distinct tensors) */
  double forward_temp_bytes;     /* working set freed inside the forward */
  double backward_temp_bytes;    /* gradient working set inside the backward */
} layer_activations;

/* Model states of one rank, by category. */
typedef struct {
  double weights, gradients, master, optimizer; /* persistent on the GPU */
  int gradients_lazy;                           /* gradients appear during the first backward (torch .grad) */
  int gradients_reduce_stream;                  /* they are the reduce-scatter outputs, made under its stream (FSDP2) */
  double host_bytes, nvme_bytes;
  double optimizer_step_temp; /* optimizer-step temporaries (foreach, 8-bit dequant) */
  double comm_persistent;     /* persistent bucket / flat buffers */
  double ddp_buckets;         /* DDP's gradient buckets: in comm_persistent, or the gradients (bucket view) */
  /* per-layer gather / reduce transients (ZeRO-3, FSDP) */
  int gathers;                      /* parameters are all-gathered per layer */
  int keep_gathered_until_backward; /* shard_grad_op / reshard_after_forward=false */
  double gather_factor_fwd;         /* unsharded copies of one layer alive in forward (current + prefetch + copy-out) */
  double gather_factor_bwd;
  int copy_in_shards;            /* FSDP1 CPU offload: each unshard first copies the rank's shard in (H2D) */
  double unsharded_weight_bytes; /* bytes per parameter of an unsharded (gathered) weight */
  double quantized_gather_bytes; /* QLoRA: bytes per quantised parameter gathered (packed data); 0 otherwise */
  double quant_stats_bytes;      /* QLoRA: the 4-bit statistics kept whole on the rank, part of weights (bytes) */
  double live_gathered;          /* ZeRO-3: parameters the coordinator keeps gathered (bytes) */
  double loss_gathered;          /* ZeRO-3, FSDP own head unit: gathered at the loss, the lm_head among them (bytes) */
  double loss_unsharded_grads;   /* the lm_head's full gradient before the reduce (bytes) */
  double loss_reduce_input;      /* FSDP own head unit: its reduce-scatter input (bytes) */
  int own_root_units;            /* FSDP: embedding and head are units of their own (shard_root_modules) */
  double embed_gathered;         /* FSDP own embedding unit: gathered around its forward and backward (bytes) */
  double embed_unsharded_grads;  /* its full gradient before the reduce-scatter (bytes) */
  double embed_reduce_input;     /* its reduce-scatter input (bytes) */
  double unsharded_grad_bytes;   /* bytes per parameter of an unsharded gradient before reduce */
  double reduce_bytes;           /* bytes per parameter of the reduce-scatter input */
  double root_gathered;          /* FSDP root unit kept gathered: embedding, head, final norm (bytes) */
  double root_unsharded_grads;   /* its full gradients before the reduce-scatter (bytes); FSDP2: the head's */
  double root_embed_grads;       /* FSDP2: the embedding's full gradient, made at its backward (bytes) */
  double root_reduce_head, root_reduce_embed; /* FSDP2: the root's reduce-scatter input by part (bytes) */
  double bucket_bytes;                        /* DeepSpeed IPG/reduce buckets (transient in backward) */
  double paged_bytes;                         /* optimizer states in CUDA managed memory (bitsandbytes paged) */
  int accumulate_unsharded;                   /* FSDP2 under PP: params stay gathered, unsharded grads accumulate */
  double unsharded_accum_bytes;               /* bytes per trainable parameter of the accumulated unsharded grad */
  double pp_kept_act, pp_kept_logits;         /* PP: stage outputs held per micro-batch to the step's end (bytes) */
} rank_states;

/* plan.c */
llmem_status plan_check_fields(const llmem_input *in, int *field); /* each key against its range and kind */
llmem_status plan_build(const llmem_input *in, plan *pl, int *field, const char **detail);
/* A key's value, or its training-stack profile value when null (NaN if none). */
double profiled(const llmem_input *in, int field);
double dtype_bytes(int dtype);

/* model.c */
int layer_is_moe(const plan *pl, int layer);
/* A layer's mixer (LLMEM_MIXER_*) and MLP (LLMEM_LMLP_*), and the pair as one index. */
int layer_mixer(const plan *pl, int layer);
int layer_mlp(const plan *pl, int layer);
#define LAYER_KIND_COUNT (LLMEM_LAYER_MIXER_COUNT_ * LLMEM_LAYER_MLP_COUNT_)
static inline int layer_kind(const plan *pl, int layer) {
  return layer_mixer(pl, layer) * LLMEM_LAYER_MLP_COUNT_ + layer_mlp(pl, layer);
}
/* Layers [first, first + n) by kind: how many of each (counts) and the first of each (first_at, -1: none),
 * from one period of the kinds' pattern rather than a look-up per layer (arrays of LAYER_KIND_COUNT). */
void layer_kind_counts(const plan *pl, int first, int n, int *counts, int *first_at);
static inline int mixer_is_attention(int mixer) {
  return mixer == LLMEM_MIXER_FULL || mixer == LLMEM_MIXER_SLIDING || mixer == LLMEM_MIXER_CHUNKED ||
         mixer == LLMEM_MIXER_ENCODER;
}
/* A layer's parameters split over tensor, expert and expert-tensor parallel degrees: the plan's
 * (on one rank) or MODEL_WHOLE (totals, compat.c's largest layer). */
typedef struct {
  double tp, ep, etp;
} model_split;
#define MODEL_WHOLE ((model_split){1, 1, 1})
layer_params layer_params_split(const plan *pl, int layer, model_split split);
layer_params layer_params_on_rank(const plan *pl, int layer);
/* A layer's parameter tensors on one rank, elements each, in the order its modules register them
 * (model.parameters(): the mixer's, the MLP's, then the norms); LoRA's A and B apart. At most
 * LAYER_TENSORS_MAX of each: more fold into the last (their sum is kept). */
#define LAYER_TENSORS_MAX 32
typedef struct {
  double elems[LAYER_TENSORS_MAX];
  int count;
} param_list;
typedef struct {
  param_list params, adapters;
} layer_tensors;
layer_tensors layer_tensors_on_rank(const plan *pl, int layer);
double layer_params_total(const plan *pl, int layer, int active_only);
void model_param_counts(const plan *pl, double *total, double *active, double *trainable);
double embedding_params(const plan *pl);
/* One MTP module on one rank: the last decoder layer's kind, eh_proj (2h -> h), enorm, hnorm, final norm. */
layer_params mtp_params_on_rank(const plan *pl);
double head_params(const plan *pl);
double lora_params_total(const plan *pl);
double full_module_params(const plan *pl, double embedding, double head);

/* layout.c */
int layout_stage_layers(const plan *pl, int stage, int chunk, int *first_layer);
int layout_chunk_layers(const plan *pl, int model_chunk, int *first_layer);
void layout_stage(const plan *pl, int stage, stage_layout *out);
/* 1 when two stages hold the same kinds of layer in the same order in every
 * chunk, and neither or both hold the embedding / the head */
int layout_same_layers(const plan *pl, int stage_a, int stage_b);

/* states.c */
void states_for_stage(const plan *pl, const stage_layout *st, rank_states *rs);
double gathered_bytes(const rank_states *rs, double params, double quantized);
double quantized_head_count(const plan *pl, const stage_layout *st);
double dequantized_weight_bytes(const plan *pl, double params);

/* vision.c: the tower and projector (whole-model counts; bytes per micro-batch on the first stage) */
typedef struct {
  double tower_params, projector_params, frozen_params;
  double vit_tokens, lm_tokens; /* per image: through the tower, to the language model */
  double tokens_per_microbatch; /* tower tokens of one micro-batch */
  double saved_bytes, forward_temp_bytes, backward_temp_bytes;
  int trains; /* the tower or its projector trains: a backward runs */
} vision_cost;
vision_cost vision_of(const plan *pl);
double vision_default_merge(int kind); /* patches per side merged into one token */

/* estimate.c: a rank's parameter and layer counts from its stage */
void rank_counts(const stage_layout *st, llmem_rank_result *r);

/* activations.c */
layer_activations layer_activation_bytes(const plan *pl, int layer, int recomputed);
double embedding_activation_bytes(const plan *pl);
double lora_saved_bytes(const plan *pl, int layer);
/* the normalised x an eager RMSNorm keeps for its trained weight, bytes an element (activations.c) */
double rmsnorm_normed_bytes(const plan *pl, double input_bytes);
double rmsnorm_square_bytes(const plan *pl, double input_bytes);
/* PEFT casts each adapted linear's input to the adapter dtype (activations.c) */
int lora_input_cast(const plan *pl);
/* an adapter run adapts this linear (LLMEM_LT_*, training.finetune.lora_targets) */
int lora_target(const plan *pl, int target);

/* loss.c */
#define LOSS_MAX_TENSORS 6
typedef struct {
  double saved_bytes;         /* kept from the loss forward to its backward */
  double forward_peak_bytes;  /* extra transient at the loss forward */
  double backward_peak_bytes; /* extra transient at the loss backward */
  double head_input_bytes;    /* final-norm output / head input kept */
  double unreusable_bytes;    /* freed forward block the backward cannot reuse (allocator) */
  double head_dgrad_bytes;    /* the logits' gradient the head's matmul backward reads, after the loss's own
                                 backward (0: not modelled apart; lazily made head gradients come with it) */
  /* the transients as the tensors the loss allocates, each its own allocator
   * request (none listed: one request of the total); their sums are the peaks */
  double forward_tensors[LOSS_MAX_TENSORS];
  double backward_tensors[LOSS_MAX_TENSORS];
  /* the output projection's logits all-gathered to every TP rank before the loss (DTensor TP
   * without loss_parallel): the local shard, the all-gather output and their concatenation */
  double gather_peak_bytes;
  double gather_tensors[LOSS_MAX_TENSORS];
  double vocab; /* vocabulary entries per token the loss reads on this rank */
} loss_memory;
loss_memory loss_bytes(const plan *pl);
/* Managed (paged) optimizer states beside `used` bytes on a device of `capacity`: the part the device has
 * room for (the rest pages to host memory, bitsandbytes GlobalPageManager). */
double paged_on_device_bytes(double paged, double used, double capacity);
/* A loss kernel taking the head's weight that never writes the logits (Liger's fused linear CE, CCE). */
int loss_takes_weight(const plan *pl);
int loss_head_trains(const plan *pl);

/* runtime.c */
double runtime_reserved_bytes(const plan *pl, double peak_allocated, double largest_transient);
double runtime_device_overhead_bytes(const plan *pl); /* outside the caching allocator */
double allocator_block_bytes(double request);
double allocator_segment_bytes(double request);
void runtime_overheads(const plan *pl, double *context_bytes, double *nccl_bytes, int *communicator_count);
/* the cuBLAS workspaces, in the caching allocator (runtime.c) */
double runtime_workspace_bytes(const plan *pl);

/* explain.c */
void explain_peak(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_result *out);
void explain_model_terms(const plan *pl, const stage_layout *st, const rank_states *rs, const double *breakdown,
                         llmem_result *out);
void explain_runtime_terms(const plan *pl, const llmem_rank_result *r, double extra_context, llmem_result *out);
void explain_add_term(llmem_result *out, int id, int category, double value, double a, double b, double c, double d);

/* timeline.c */
typedef struct {
  llmem_event *events; /* NULL: do not record */
  int capacity;
  int count;
  int stride;
  int pending;
} timeline_sink;
void timeline_push(timeline_sink *s, const llmem_event *ev); /* one point; pairs merge when full */
void simulate_stage(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_rank_result *out,
                    timeline_sink *sink);
/* The same, with the host memory its offloaded activations take (simulate_offloaded_host_bytes) from the walk's own
 * schedule, not a second one. */
void simulate_stage_host(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_rank_result *out,
                         timeline_sink *sink, double *host_bytes);
/* 1: every later middle stage with the same layers and states holds no more than this one (simulate.c) */
int simulate_stage_bounds_later(const plan *pl, const stage_layout *st, const rank_states *rs, int stage);
/* pinned host memory of offloaded activations at its most (training.activation_offload) */
double simulate_offloaded_host_bytes(const plan *pl, const stage_layout *st, const rank_states *rs, int stage);

/* compat.c */
llmem_status compat_estimate(const plan *pl, llmem_result *out);

/* steptime.c */
/* parts: NULL, or LLMEM_STEP_PART_COUNT seconds (llmem_step_part) adding up to the step */
double step_time_seconds(const plan *pl, double *tokens_per_second_per_gpu, double *parts);

/* estimate.c: the readings of the most-loaded stage; all_stages 0 skips a
 * stage whose layers equal a lower stage's (the search's fast path, same readings) */
/* The simulated allocator's work (alloc_stats.work: its requests and frees, and what their cache searches and
 * shifts cost, in requests) that one estimate's stage walks may feed it together (both steps each); past it
 * it gives up and reserved comes from the bound. At ~20 ns a unit on llmem_bench's machine (the walk around
 * the requests included) it stops a replay near 3.6 ms, inside issue 12's 5 ms an estimate; it counted
 * requests alone before (1e5), whose cost grows with the pools: up to ~80 ns each, 5.8 ms. The published and
 * probe cases take at most 79,000 units, Llama 3.1 405B over TP 8, PP 16 interleaved (a heavy layout of
 * issue 17) 162,000. */
#define ALLOCATOR_MAX_WORK 1.8e5
/* A step whose requests, counted without the repeating cycles the walk passes over, pass this is not
 * started (estimate.c allocator_within_budget): most such walks would end at ALLOCATOR_MAX_WORK. */
#define ALLOCATOR_PREDICTED_OPS_MAX 5e5
/* allocator: 0 keeps the caching allocator's bound (the search's inner loop) */
llmem_status estimate_readings(const llmem_input *in, int all_stages, int allocator, llmem_readings *out,
                               plan *resolved,
                               int *error_field); /* resolved, error_field: the plan / failing key, may be NULL */

/* planner.c: the input a found layout stands for (what the search's patch loads) */
/* The field index of an input member (its slot in the double array). */
#define FIELD(member) LLMEM_FIELD_##member
/* A field's first slot in the input (a LIST key has LLMEM_MAX_PATTERN). */
static inline double *input_slot(llmem_input *in, int field) {
  return (double *)(void *)((char *)in + llmem_field_at(field)->offset);
}
static inline double input_value(const llmem_input *in, int field) {
  return *(const double *)(const void *)((const char *)in + llmem_field_at(field)->offset);
}
/* Where a rank peaks, in words (estimate.c); appended at n, returns the new length. */
size_t peak_place_text(char *dst, size_t n, size_t cap, const llmem_rank_result *r, int rank_count);
llmem_input search_layout_input(const llmem_input *base, double N, const llmem_layout *l);

/* rl.c: RL post-training (rl.algorithm not "none"), the phases around the update */
llmem_status rl_estimate(const llmem_input *in, llmem_result *out);
/* the readings of rl_estimate; resolved: the actor update's plan (may be NULL) */
llmem_status rl_readings(const llmem_input *in, llmem_readings *out, plan *resolved, int *error_field);

/* result.c */
void result_add_warning(llmem_result *out, llmem_warning w);

static inline double max2(double a, double b) { return a > b ? a : b; }
/* b divides a (whole numbers held as doubles); never for b <= 0 */
static inline int divides(double a, double b) { return b > 0 && fmod(a, b) == 0; }
static inline double min2(double a, double b) { return a < b ? a : b; }

#endif
