/* The stage simulation's private parts (timeline.c, schedule.c, passes.c,
 * simulate.c): the running state, the schedule's order and the passes. */
#ifndef LLMEM_SIM_H
#define LLMEM_SIM_H

#include <math.h>
#include <string.h>

#include "allocator.h"
#include "internal.h"

/* ---- running state and the peak so far (timeline.c) ---- */
typedef struct {
  double cat[LLMEM_CAT_COUNT];
  double total;
  double hole; /* cached blocks the next requests cannot reuse (caching allocator) */
  double peak;
  double peak_cat[LLMEM_CAT_COUNT];
  int peak_phase, peak_mb, peak_layer;
  double peak_hole;
  double largest_transient;
  timeline_sink *sink; /* NULL: no events */
  llmem_event group_best;
  int group_n;
  int group_skipped; /* passes walked without events inside the current group */
  int skipped;       /* passes walked without events since the last recorded point */
  int blocks;        /* the walk also feeds the simulated caching allocator (allocator.h) */
  int carry_held;    /* the step starts with the previous step's held 4-bit inputs (quant_held) */
  int held;          /* a micro-batch's held 4-bit inputs are live */
  int workspaces_due; /* the first step: bit 0, the forward thread's cuBLAS workspace yet to make; bit 1, the backward's */
  /* FSDP2: an all-gather output held past its copy-out, by the unit it belongs to (fsdp2.c) */
  struct {
    uint64_t tag;
    double bytes;
    int unit;    /* a layer, LAYER_EMBED, LAYER_HEAD or LAYER_REST (the root) */
    int counted; /* in the categories (0: a request only) */
  } held_gather;
  int track;    /* TRACK_GRAIN: summarising a pass; TRACK_ROUNDING: walking one whose sums round (pass_summary.c) */
  int grain;    /* every addition is a multiple of 2^grain (while tracking) */
  double moved; /* the additions' magnitudes, summed (while tracking) */
} sim;

/* ---- the allocation stream: the requests behind the category sums ---- */
/* Who owns a block; with the layer, micro-batch and part it is the block's tag. */
enum {
  TAG_STATE,
  TAG_GATHER,
  TAG_GATHER_KEPT,
  TAG_REGATHER,
  TAG_PREFETCH,
  TAG_CAST,
  TAG_ACT,
  TAG_RECOMPUTE,
  TAG_TEMP,
  TAG_GRAD,
  TAG_ACCUM,
  TAG_UNSHARDED,
  TAG_COMM,
  TAG_LOSS,
  TAG_INIT,          /* set-up buffers freed before the step (FSDP1 flattening) */
  TAG_WEIGHT_INPUTS, /* zero-bubble split: what a W needs, from its I on */
  TAG_H2D,           /* FSDP1 CPU offload: a shard copied in before its all-gather */
  TAG_OPT_STATE,     /* torch.optim's states of one parameter tensor (part: tensor x state) */
  TAG_PARAM_GRAD,    /* the .grad of one parameter tensor (part: the tensor) */
  TAG_OPT_TEMP,      /* the optimizer step's foreach list, one tensor per parameter (part: the tensor) */
  TAG_BUCKET         /* DDP's gradient buckets (layer: the bucket's index; ddp.c) */
};
enum {
  LAYER_HEAD = -1,
  LAYER_EMBED = LLMEM_LAYER_EMBEDDING,
  LAYER_REST = -3,
  LAYER_MTP = -4,
  LAYER_VISION = -5
}; /* blocks outside the decoder layers */
/* The tag's low 32 bits hold the micro-batch + 1 (allocator.h: a run's copies are the same blocks a few
 * micro-batches on); MB_NONE, 0 there, marks a block of no micro-batch (states, gathered parameters). */
enum { MB_NONE = -1 };
static inline uint64_t block_tag(int kind, int layer, int mb, int part) {
  return ((uint64_t)kind << 58) | ((uint64_t)(part & 63) << 52) | (((uint64_t)(layer + 3) & 0xFFFFF) << 32) |
         (uint32_t)(mb + 1);
}
static inline int block_tag_kind(uint64_t tag) { return (int)(tag >> 58); }
static inline int block_tag_layer(uint64_t tag) { return (int)((tag >> 32) & 0xFFFFF) - 3; }
static inline void sim_block(const sim *S, uint64_t tag, double bytes, int stream) {
  if (S->blocks && bytes > 0) alloc_malloc(tag, bytes, stream);
}
/* cross_stream: the block was used on another stream (record_stream) */
static inline void sim_unblock(const sim *S, uint64_t tag, int cross_stream) {
  if (S->blocks) alloc_free(tag, cross_stream);
}
static inline void sim_sync(const sim *S) {
  if (S->blocks) alloc_sync();
}

/* The largest k with x a multiple of 2^k (a very low value for x not finite), from
 * the bits of the double: sums of multiples of 2^k below 2^(53+k) in magnitude
 * are exact in doubles (pass_summary.c). */
static inline int grain_of(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  int biased = (int)((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & 0xfffffffffffffULL;
  if (biased == 0x7ff) return -(1 << 20);
  if (biased == 0 && mantissa == 0) return 1 << 20; /* zero: a multiple of anything */
  if (biased) mantissa |= 1ULL << 52;
  return (biased ? biased : 1) - 1075 + __builtin_ctzll(mantissa); /* trailing zero bits (gcc, clang) */
}

/* A pass being summarised notes each addition's grain and size; one walked
 * with rounding sums logs a run's first step to check that the run's other
 * steps round the same (pass_summary.c). */
enum { TRACK_OFF, TRACK_GRAIN, TRACK_ROUNDING };
void sim_track(sim *S, int cat, double bytes);
/* TRACK_ROUNDING: the additions of a run's first step, from here... */
void rounding_log_begin(void);
/* ...to S, whose start state was cat0 and total0: how many of `more` alike
 * steps after it change every sum by exactly what it did (0: walk the next). */
int rounding_repeats(const sim *S, const double *cat0, double total0, int more);
/* A shown run's points of its first step (sim_record), and theirs for the steps after it, each
 * `stride` layers on, into the timeline (after rounding_repeats). */
void rounding_log_point(const sim *S, int phase, int mb, int layer);
void rounding_replay_points(sim *S, int steps, int stride);

/* Change one category; the running total follows (adding zero changes no bit,
 * so most models skip most additions). Out of line, like the three below: the
 * walk calls them from hundreds of places, and the page's first load carries
 * the code (timeline.c). */
void sim_add(sim *S, int cat, double bytes);
/* A transient: present for one recorded instant. */
void sim_transient(sim *S, int cat, double bytes);
/* A tensor: the category's running sum and, when the allocator listens, its request. */
void sim_take(sim *S, int cat, uint64_t tag, double bytes, int stream);
void sim_take_transient(sim *S, int cat, uint64_t tag, double bytes, int stream);
void sim_give(sim *S, int cat, uint64_t tag, double bytes, int cross_stream);
static inline void sim_new_peak(sim *S, int phase, int mb, int layer) {
  S->peak = S->total;
  for (int x = 0; x < LLMEM_CAT_COUNT; x++) S->peak_cat[x] = S->cat[x];
  S->peak_phase = phase;
  S->peak_mb = mb;
  S->peak_layer = layer;
  S->peak_hole = S->hole;
}
void sim_event(sim *S, int phase, int mb, int layer);
/* A point of the timeline with the given state (a pass applied from its summary). */
void sim_event_of(sim *S, double total, const double *cat, int phase, int mb, int layer);
/* Once the timeline has merged this many points into each kept one, a shown
 * pass adds two points from its summary (its highest and its end) rather
 * than one a layer: the detail is merged away, the walk stays O(passes). */
#define TIMELINE_COARSE_STRIDE 8
/* A point of the running total: the peak so far, and the timeline. */
static inline void sim_record(sim *S, int phase, int mb, int layer) {
  if (S->total > S->peak) sim_new_peak(S, phase, mb, layer);
  if (S->sink) sim_event(S, phase, mb, layer);
  if (S->track == TRACK_ROUNDING && S->sink) rounding_log_point(S, phase, mb, layer); /* a shown run's points */
}
void sim_skip(sim *S, int passes); /* passes accounted for without events */
void sim_flush(sim *S);            /* the last partial group into the sink */

/* ---- the pipeline schedule's order (schedule.c) ---- */
/* One pass: the forward or backward of one micro-batch through one virtual
 * chunk. Zero-bubble schedules split a backward in two (Qi et al. 2023,
 * arXiv 2401.10241 §2): SPLIT_I, the backward for the inputs, and later
 * SPLIT_W, the backward for the weights, both with backward set. */
typedef struct {
  int backward;
  int mb;
  int chunk;
  int split; /* 0: a whole pass; SPLIT_I or SPLIT_W */
} sched_op;

enum { SPLIT_I = 1, SPLIT_W = 2 };
/* Micro-batches a pass adds to its chunk's live set: a forward one, a whole
 * backward or a W takes one away; an I keeps what its W needs (passes.c). */
static inline int sched_live_change(sched_op o) { return !o.backward ? 1 : o.split == SPLIT_I ? 0 : -1; }

/* V schedules: a pattern of passes repeated (schedule.c). */
#define SCHED_MAX_SEGS 12
#define SCHED_SEG_OPS 6
typedef struct {
  int start, reps, n;
  unsigned char kind[SCHED_SEG_OPS], chunk[SCHED_SEG_OPS]; /* SEG_F, SEG_B, SEG_I, SEG_W, SEG_WQ */
  unsigned char per[SCHED_SEG_OPS],
      before[SCHED_SEG_OPS]; /* passes alike (class and chunk; queued W) in a copy, and before this one */
  int count[3][2];           /* before the segment: forwards, backwards (whole or I), W, per chunk */
  int queued;                /* W passes taken from the queue before the segment */
} sched_seg;

typedef struct {
  int kind; /* SCHED_ACCUM, SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_V */
  int p, v, m, g, stage;
  int warm; /* warm-up forwards (virtual ones when interleaved) */
  int op_count;
  /* interleaved: the steady state [period_begin, period_begin + period_count
   * period_ops) is period_count copies of one period (0: none) */
  int period_begin, period_ops, period_count;
  /* V: the segments; the k-th W of chunk c is micro-batch k < i_head[c] ? k : k + whole_b[c] */
  int seg_count;
  sched_seg seg[SCHED_MAX_SEGS];
  int i_head[2], whole_b[2], w_base[2];
} schedule;

enum { SCHED_ACCUM, SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_V };

void schedule_init(schedule *s, const plan *pl, int stage);
sched_op schedule_op(const schedule *s, int index);
/* Ops [index, index + length * reps) repeat one pattern of `length` passes
 * whose chunks are the same in every copy. */
void schedule_run(const schedule *s, int index, int *length, int *reps);
/* The first virtual forward (backward) of the chunk: its index among the
 * forwards (backwards); 1F1B: 0. */
int schedule_first_virtual(const schedule *s, int backward, int chunk);

/* ---- the passes (passes.c) ---- */
typedef struct {
  layer_activations act[2]; /* [recomputed] */
  double params;            /* on this rank, unsharded */
  double grad_share;        /* bytes of the rank's gradients that belong to this layer */
  double gather;            /* unsharded parameters while the layer runs */
  double prefetch;          /* the next layer's gather in flight (forward) */
  double prefetch_bwd;      /* the next layer's gather in flight (backward) */
  double casts;             /* autocast copies of the weights */
  double unsharded_grads;   /* FSDP/ZeRO-3: full gradients before the reduce-scatter */
  double trainable;         /* trainable parameters of the layer on this rank */
  double reduce_input;
  double first_grads;    /* FSDP2: of unsharded_grads, those made when the backward's working set peaks */
  layer_tensors tensors; /* its parameter tensors on the rank (model.c layer_tensors_on_rank) */
} layer_cost;

/* Everything the passes of one stage need, resolved once. */
typedef struct {
  const plan *pl;
  const stage_layout *st;
  const rank_states *rs;
  int v, lazy, offload;
  int fsdp2;          /* FSDP2's post-backward order (passes.c layer_backward_fsdp2) */
  int quant_held;     /* training.finetune.quant_inputs_held applies (passes.c hold_quant_inputs) */
  double held_logits; /* the logits the loop keeps with the graph */
  double held_act;    /* the stage's 4-bit inputs held, all layers */
  int first_global[LLMEM_MAX_VPP], chunk_layers[LLMEM_MAX_VPP], local0[LLMEM_MAX_VPP];
  int have[LAYER_KIND_COUNT]; /* the layer kinds (mixer x MLP) on this stage: costs[kind] is set */
  int single_kind;            /* the stage's one kind, or -1 when it has several */
  int summary_row;            /* its chunks' pass summaries start at this row (pass_summary.c) */
  loss_memory loss;
  double embedding_act;
  double head_grads, embed_grads, norm_grads, root, root_grads;
  /* autograd's own buffer of the head weight's gradient (one GPU, DDP): `head_table_grad` bytes, held from
   * the head's backward to the embedding's when tied (`head_tied`), one more beside it per chunk of a
   * chunked head (`head_chunked`) */
  double head_table_grad, head_chunk_grad; /* the chunk's: in the compute dtype under autocast */
  int head_tied, head_chunked;
  double root_embed_grads, root_reduce_head, root_reduce_embed; /* FSDP2 root by part (states.c fsdp2_root_grads) */
  double root_accum, root_embed_accum; /* the root's gradients kept over the micro-batches (accumulate_unsharded) */
  double loss_gather, loss_grads;      /* ZeRO-3, own head unit: gathered at the loss; the lm_head's full gradient */
  double loss_reduce;                  /* own head unit: its reduce-scatter input */
  double embed_gather;                 /* own embedding unit: gathered around its forward and backward */
  /* MTP depths on the last stage, all of them: kept to the backward, and their largest working sets */
  double mtp_saved, mtp_logits, mtp_forward_temp, mtp_backward_temp;
  double head_cast;   /* autocast's 16-bit copy of the head's weight, from the loss forward to its backward */
  vision_cost vision; /* the first stage's vision tower (saved_bytes 0: none, or nothing kept) */
  /* what stays live between passes, by category: the state at any pass
   * boundary is rebuilt from these (walk_state), not carried as a running sum */
  double persistent_cat[LLMEM_CAT_COUNT];
  double in_flight_cat[LLMEM_MAX_VPP][LLMEM_CAT_COUNT];         /* one micro-batch's forward of the chunk */
  unsigned char in_flight_cats[LLMEM_MAX_VPP][LLMEM_CAT_COUNT]; /* its non-zero categories */
  int in_flight_cat_count[LLMEM_MAX_VPP];
  double kept_gathered[LLMEM_MAX_VPP]; /* weights gathered by the chunk's first forward */
  double grads_made[LLMEM_MAX_VPP];    /* gradients created by the chunk's first backward */
  double accumulated[LLMEM_MAX_VPP];   /* of which accumulated unsharded gradients */
  double offloaded[LLMEM_MAX_VPP];     /* activation offload: walk_offloaded_bytes */
  layer_cost costs[LAYER_KIND_COUNT];  /* by layer kind; walk_init clears the sums above, by chunk its v only */
} stage_walk;

/* What is live at a pass boundary. */
typedef struct {
  int in_flight[LLMEM_MAX_VPP];
  unsigned char fwd_started[LLMEM_MAX_VPP], bwd_started[LLMEM_MAX_VPP];
  int hole; /* the loss forward's unreusable block is cached */
  int held; /* a micro-batch's 4-bit inputs are held (passes.c hold_quant_inputs) */
} walk_sig;

const layer_cost *walk_layer_cost(const stage_walk *W, int layer);
void walk_init(stage_walk *W, const plan *pl, const stage_layout *st, const rank_states *rs, int stage);
void forward_pass(const stage_walk *W, sim *S, int mb, int chunk, int started);
void hold_quant_inputs(const stage_walk *W, sim *S, int take);
/* FSDP1 CPU offload: the shard copied in before an all-gather of `gathered` bytes (passes.c; tests). */
void copy_in_shard(const stage_walk *W, const sim *S, uint64_t gather_tag, double gathered);
/* An all-gather's output, after its shard is copied in; transient: sim_take_transient. */
void take_gathered(const stage_walk *W, sim *S, int cat, uint64_t tag, double bytes, int transient);
void backward_pass(const stage_walk *W, sim *S, int mb, int chunk, int first_pass);
/* Zero-bubble split: the I keeps the micro-batch's live set until its W frees it. */
void input_backward_pass(const stage_walk *W, sim *S, int mb, int chunk, int first_pass);
void weight_backward_pass(const stage_walk *W, sim *S, int mb, int chunk);
/* One pass of the schedule. */
void walk_pass(const stage_walk *W, sim *S, const walk_sig *g, sched_op o);
/* The same pass from its summary (pass_summary.c) where that is exact; 0: walk it. */
int walk_pass_summarized(const stage_walk *W, sim *S, const walk_sig *g, sched_op o);
/* Summaries stay valid from one stage to the next while the plan, the rank's
 * states and the stage's layers are the same (called by walk_init); the
 * first of the stage's rows (summary_row). */
int pass_summaries_for_stage(const stage_walk *W, int stage);
/* A chunk's layers in walk order (forward: up; backward: down) as runs of
 * alike steps, found once per stage class (passes.c alike_plan_of). */
#define ALIKE_MAX_PERIOD 8 /* the longest pattern of layers a step may be (an MoE layer every few, a hybrid's mixers) */
#define ALIKE_MAX_SEGS 32  /* past these, the rest one layer at a time */
typedef struct {
  int at, period, steps; /* from walk offset `at`, `steps` steps of `period` layers; 0: layers one by one */
} alike_seg;
typedef struct {
  unsigned gen;
  int count; /* -1: not found yet */
  alike_seg seg[ALIKE_MAX_SEGS];
} alike_plan;
/* The stage class's plan slot for the chunk and direction: count -1 when it is to be found. */
alike_plan *pass_alike_plan(const stage_walk *W, int chunk, int backward);
/* The layer kinds a stage's walk costs, each at its first layer (chunk, offset in it), in the order found. */
typedef struct {
  int count;
  int kind[LAYER_KIND_COUNT], chunk[LAYER_KIND_COUNT], offset[LAYER_KIND_COUNT];
} stage_kinds;
/* What walk_init finds by going over the stage's layers (its kinds, each
 * chunk's live sums) is the same for every stage of its class: kept for the
 * class (pass_class_keep) and taken back into W (pass_class_recall: 1) when
 * the stage's layout is the class's. */
int pass_class_recall(stage_walk *W, stage_kinds *kinds);
void pass_class_keep(const stage_walk *W, const stage_kinds *kinds);
long pass_summaries_used(void); /* passes applied from a summary so far (tests) */
long pass_layer_runs(void);
long walk_cycles_skipped(void);
/* runs whose repeating allocator layouts were passed over (simulate.c) */ /* runs of alike layers a summarised pass added in one go (tests) */
void walk_state(const stage_walk *W, const walk_sig *g, sim *S);
void walk_apply(const stage_walk *W, walk_sig *g, sched_op o);
/* Saved bytes of one micro-batch's forward of the chunk that offload moves to host memory. */
double walk_offloaded_bytes(const stage_walk *W, int chunk);

/* ---- the step's model-state blocks (step_blocks.c) ---- */
/* Persistent states at load; lazy_states: optimizer states wait for the first step. */
void blocks_setup(const stage_walk *W, const sim *S, int lazy_states);
/* DDP's gradient buckets as the Reducer makes them at construction, and their rebuild at the second
 * forward (find_unused_parameters off; ddp.c). */
void blocks_ddp_buckets(const stage_walk *W, const sim *S);
void blocks_ddp_rebuild(const stage_walk *W, const sim *S);
/* A decoder layer's parameter tensors on the rank in module order (model.c layer_tensors_on_rank): the trainable
 * ones (LoRA: the adapters), or every one (all). */
const param_list *layer_tensor_list(const stage_walk *W, int layer, int all);
void blocks_optimizer_states(const stage_walk *W, const sim *S);
/* The optimizer step's temporaries of `bytes`: take 1 allocates (category and requests), 0 frees them. */
void blocks_optimizer_temporaries(const stage_walk *W, sim *S, double bytes, int take);
/* Gradients set to None after the step. */
void blocks_free_gradients(const stage_walk *W, const sim *S);
/* A layer's lazily created gradients (category and requests), on `stream`. */
void blocks_layer_gradients(const stage_walk *W, sim *S, int layer, double bytes, int stream);
void blocks_free_kept(const stage_walk *W, const sim *S, int chunk);
/* A decoder layer's parameters as one request per tensor (all of them, frozen ones too), in module order on
 * the compute stream, tagged kind (part: the tensor); and freed. */
void blocks_layer_params(const stage_walk *W, const sim *S, int kind, int layer, double bytes);
void blocks_free_layer_params(const sim *S, int kind, int layer);

/* ---- FSDP2's unshard and reshard (fsdp2.c) ---- */
/* A unit's pre-forward: its all-gather, the previous unit's output freed, its copy-out (`tag`: a layer's
 * kind and layer, else the one block's tag); its output held until the next unit's. */
void fsdp2_pre_forward(const stage_walk *W, sim *S, uint64_t tag, int unit, int mb, double bytes);
/* The root's post-forward: the last unit's output freed. */
void fsdp2_forward_done(sim *S);
/* A unit's pre-backward: its copy-out, from the output its prefetch made or from its own all-gather, and
 * that output freed. */
void fsdp2_pre_backward(const stage_walk *W, sim *S, uint64_t tag, int unit, int mb, double bytes);
/* A unit's backward prefetch of `unit`: its all-gather, held until that unit's pre-backward. */
void fsdp2_prefetch(const stage_walk *W, sim *S, int unit, int mb, double bytes);
/* A unit's reshard: its copy-out freed. */
void fsdp2_reshard(sim *S, uint64_t tag, double bytes);
/* The root unit gathered outside the passes: its copy-out; its output held (a request only) until the
 * next unit's copy-out. */
void fsdp2_root_unshard(const stage_walk *W, sim *S, double bytes);

/* ---- the walk (simulate.c) ---- */
typedef struct {
  double max_boundary_error; /* largest relative gap between the running and the rebuilt state */
} walk_check;
/* full: WALK_EVERY, every pass of every micro-batch without the allocator (the reference for tests);
 * WALK_EVERY_BLOCKS, the same with the allocator fed every copy (its reference) */
enum { WALK_EVERY = 1, WALK_EVERY_BLOCKS = 2 };
void simulate_stage_walk(const plan *pl, const stage_layout *st, const rank_states *rs, llmem_rank_result *out,
                         timeline_sink *sink, int full, walk_check *check);

#endif
