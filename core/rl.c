/* RL post-training (rl.algorithm not "none"): one RL step on one training
 * rank as phases on the timeline (docs/memory-model.md §16). The actor and
 * critic updates are the training step of core/simulate.c on plans derived
 * from the rl.* keys; the phases around them (weight sync, rollout, engine
 * sleep, reward scoring, old and reference log-probs, critic values) are
 * points built here from what each framework allocates. Sources (read, not
 * copied): vLLM vllm-project/vllm vllm/v1/worker/gpu_worker.py at 35d5cda1,
 * verl volcengine/verl at b178a3cd, TRL huggingface/trl at f2cd5771. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "result_text.h"

#define M_ACTOR LLMEM_RL_MODEL_ACTOR
#define M_REF LLMEM_RL_MODEL_REFERENCE
#define M_REWARD LLMEM_RL_MODEL_REWARD
#define M_CRITIC LLMEM_RL_MODEL_CRITIC
#define M_ENGINE LLMEM_RL_MODEL_ENGINE
#define NM LLMEM_RL_MODEL_COUNT
#define NC LLMEM_CAT_COUNT

/* ---- the step's shapes, from the rl.* keys ---- */
typedef struct {
  int algorithm, dpo, ppo, online;
  double seqs_per_prompt;   /* responses per prompt (group), 2 for DPO (chosen and rejected) */
  double seq_max, seq_mean; /* prompt + response tokens */
  double response_share;    /* response tokens / all tokens of a sequence */
  double dp;
  /* the update: micro-batch (sequences) x tokens per sequence, accumulation */
  double upd_micro, upd_seq, accum;
  /* the no-grad passes: sequences x tokens per micro-batch */
  double lp_micro, lp_seq, critic_micro, critic_seq;
  /* the critic's update: over the mini-batch's share, as the actor's */
  double critic_upd_micro, critic_upd_seq;
} rl_shape;

#define FAIL(status, member) \
  do {                       \
    *field = FIELD(member);  \
    return (status);         \
  } while (0)

/* One micro-batch: `micro` sequences of `seq` tokens; packed by tokens when
 * a token budget is given (verl use_dynamic_bsz: utils/seqlen_balancing.py
 * rearrange_micro_batches splits the rank's `seqs` sequences into
 * ceil(tokens / budget) micro-batches balanced by length
 * (get_seqlen_balanced_partitions): the largest holds ceil(seqs / count)
 * sequences, never more than the budget). remove_padding (verl
 * model.use_remove_padding) packs the real tokens: the mean lengths. */
static void micro_shape(const llmem_input *in, const rl_shape *d, double micro, double budget, double seqs,
                        double *out_micro, double *out_seq) {
  double len = in->rl_remove_padding != 0 ? ceil(d->seq_mean) : d->seq_max;
  if (!isnan(budget)) {
    double count = ceil(seqs * len / budget);
    *out_micro = 1;
    *out_seq = count >= 1 ? min2(budget, ceil(seqs / count) * len) : budget;
    return;
  }
  *out_micro = micro * (d->dpo ? 2 : 1); /* DPO: a micro-batch of pairs is 2x sequences (TRL concatenated_forward) */
  *out_seq = len;
}

/* The passes' token budgets: their own, else the update's (rl.max_tokens_per_gpu). */
static double logprob_budget_tokens(const llmem_input *in) {
  return isnan(in->rl_logprob_max_tokens) ? in->rl_max_tokens : in->rl_logprob_max_tokens;
}

static double critic_budget_tokens(const llmem_input *in) {
  return isnan(in->rl_critic_max_tokens) ? in->rl_max_tokens : in->rl_critic_max_tokens;
}

/* The algorithm, the sequence lengths, the token budgets' checks and the data-parallel size. */
static llmem_status derive_lengths(const llmem_input *in, rl_shape *d, int *field) {
  memset(d, 0, sizeof *d);
  d->algorithm = (int)in->rl_algorithm;
  d->dpo = d->algorithm == LLMEM_RL_DPO;
  d->ppo = d->algorithm == LLMEM_RL_PPO;
  d->online = !d->dpo;
  if (in->formula != LLMEM_FORMULA_LLMEM) FAIL(LLMEM_ERR_RL_FORMULA, rl_algorithm);
  if (in->pp != 1) FAIL(LLMEM_ERR_RL_PP, pp);
  if (in->head != LLMEM_HEAD_LM) FAIL(LLMEM_ERR_RL_HEAD, head);
  if (in->rl_ref_precomputed != 0 && !(d->dpo && in->rl_ref_enabled != 0))
    FAIL(LLMEM_ERR_RL_PRECOMPUTED, rl_ref_precomputed);
  double prompt_mean = isnan(in->rl_prompt_len_mean) ? in->rl_prompt_len : in->rl_prompt_len_mean;
  double response_mean = isnan(in->rl_response_len_mean) ? in->rl_response_len : in->rl_response_len_mean;
  if (prompt_mean > in->rl_prompt_len) FAIL(LLMEM_ERR_RL_MEAN_LEN, rl_prompt_len_mean);
  if (response_mean > in->rl_response_len) FAIL(LLMEM_ERR_RL_MEAN_LEN, rl_response_len_mean);
  d->seqs_per_prompt = d->dpo ? 2 : in->rl_group_size;
  d->seq_max = in->rl_prompt_len + in->rl_response_len;
  d->seq_mean = prompt_mean + response_mean;
  int packed = in->rl_remove_padding != 0;
  d->response_share = packed ? response_mean / d->seq_mean : in->rl_response_len / d->seq_max;
  double one_sequence = d->seq_max * (d->dpo ? 2 : 1);
  if (in->rl_max_tokens < one_sequence) FAIL(LLMEM_ERR_RL_MAX_TOKENS, rl_max_tokens); /* false for null (NaN) */
  if (logprob_budget_tokens(in) < one_sequence) FAIL(LLMEM_ERR_RL_MAX_TOKENS, rl_logprob_max_tokens);
  if (d->ppo && critic_budget_tokens(in) < one_sequence) FAIL(LLMEM_ERR_RL_MAX_TOKENS, rl_critic_max_tokens);
  double model_ranks = in->tp * in->pp * in->cp;
  d->dp = divides(in->gpus, model_ranks) ? in->gpus / model_ranks : 1; /* plan_build names a bad layout */
  return LLMEM_OK;
}

/* The micro-batches of the update, of the log-prob and value passes, and the accumulation. */
static llmem_status derive_batches(const llmem_input *in, rl_shape *d, int *field) {
  /* sequences per optimizer step: verl ppo_mini_batch_size x rollout.n
   * (workers/fsdp_workers.py normalises it by the data-parallel size and
   * asserts it divides by the micro-batch; trainer/ppo/ray_trainer.py asserts
   * the train batch divides by it); TRL: per_device_train_batch_size x
   * gradient_accumulation_steps x processes */
  double mini = isnan(in->rl_mini_batch) ? in->rl_rollout_batch : in->rl_mini_batch;
  if (!divides(in->rl_rollout_batch, mini)) FAIL(LLMEM_ERR_RL_MINI_BATCH, rl_mini_batch);
  double per_rank = mini * d->seqs_per_prompt / d->dp;
  micro_shape(in, d, in->micro_batch, in->rl_max_tokens, per_rank, &d->upd_micro, &d->upd_seq);
  if (isnan(in->rl_max_tokens)) {
    if (!divides(per_rank, d->upd_micro)) FAIL(LLMEM_ERR_RL_MINI_BATCH, rl_mini_batch);
    d->accum = per_rank / d->upd_micro;
  } else {
    int packed = in->rl_remove_padding != 0;
    d->accum = ceil(per_rank * (packed ? d->seq_mean : d->seq_max) / in->rl_max_tokens);
  }
  if (d->accum < 1 || d->accum > 1000000) FAIL(LLMEM_ERR_RL_MINI_BATCH, rl_mini_batch);
  double lp_micro = isnan(in->rl_logprob_micro_batch) ? in->micro_batch : in->rl_logprob_micro_batch;
  /* the log-prob and value passes run over the whole rollout's share of the rank */
  double rollout_per_rank = in->rl_rollout_batch * d->seqs_per_prompt / d->dp;
  micro_shape(in, d, lp_micro, logprob_budget_tokens(in), rollout_per_rank, &d->lp_micro, &d->lp_seq);
  micro_shape(in, d, in->micro_batch, critic_budget_tokens(in), rollout_per_rank, &d->critic_micro, &d->critic_seq);
  micro_shape(in, d, in->micro_batch, critic_budget_tokens(in), per_rank, &d->critic_upd_micro, &d->critic_upd_seq);
  if (d->upd_seq > 100000000 || d->lp_seq > 100000000) FAIL(LLMEM_ERR_RL_MAX_TOKENS, rl_max_tokens);
  return LLMEM_OK;
}

static llmem_status derive_shape(const llmem_input *in, rl_shape *d, int *field) {
  llmem_status st = derive_lengths(in, d, field);
  if (st != LLMEM_OK) return st;
  return derive_batches(in, d, field);
}

/* ---- a second model (reward, critic): the actor's family with other dims ---- */
/* Its input: the actor's with the model's dimensions and a scalar head per token: verl's critic
 * is AutoModelForTokenClassification num_labels=1 (workers/fsdp_workers.py CriticWorker), reward
 * models ...ForSequenceClassification: one h x 1 score linear, counted as no head (hidden
 * parameters, below the rounding of any figure here); both trained in full (the critic) or frozen,
 * without MTP heads (...ForTokenClassification / ForSequenceClassification build none). */
static void other_input(const llmem_input *actor, double hidden, double heads, double ffn, llmem_input *out) {
  *out = *actor;
  if (!isnan(hidden)) out->hidden = hidden;
  if (!isnan(heads)) out->heads = heads;
  if (!isnan(ffn)) out->ffn_hidden = ffn;
  out->head = LLMEM_HEAD_NONE;
  out->tied_embeddings = 0;
  out->ft_method = LLMEM_FT_FULL;
  out->mtp_layers = 0;
}

/* Its plan, over `in` (which outlives it): the actor's, resized. field0: rl.*.heads; kv_heads and
 * ffn_hidden follow it in fields.def */
static llmem_status other_model(const plan *actor, double layers, double hidden, double heads, double kv_heads,
                                double ffn, int field0, llmem_input *in, plan *out, int *field) {
  other_input(actor->in, hidden, heads, ffn, in);
  *out = *actor;
  out->in = in;
  if (!isnan(layers)) out->layers = layers;
  out->kv_heads = !isnan(kv_heads) ? kv_heads : (!isnan(heads) ? in->heads : actor->kv_heads);
  if (!isnan(hidden) || !isnan(heads)) out->head_dim = floor(in->hidden / in->heads);
  out->rl_entropy = 0;
  *field = field0;
  if (!divides(in->heads, in->tp)) return LLMEM_ERR_RL_MODEL_DIMS;
  *field = field0 + 1;
  if (!divides(in->heads, out->kv_heads) || (!divides(out->kv_heads, in->tp) && !divides(in->tp, out->kv_heads)))
    return LLMEM_ERR_RL_MODEL_DIMS;
  *field = field0 + 2;
  if (!divides(in->ffn_hidden, in->tp)) return LLMEM_ERR_RL_MODEL_DIMS;
  *field = -1;
  return LLMEM_OK;
}

/* ---- one model on the rank ---- */
typedef struct {
  plan pl;
  stage_layout st;
  rank_states rs;
  double params_total; /* unsharded, all ranks' share together */
} model_on_rank;

static void place(model_on_rank *m) {
  layout_stage(&m->pl, 0, &m->st);
  states_for_stage(&m->pl, &m->st, &m->rs);
  double active, trainable;
  model_param_counts(&m->pl, &m->params_total, &active, &trainable);
}

/* Bytes of a frozen copy of the model on this rank, sharded as the actor's
 * parameters are (verl ref/reward FSDP workers wrap them like the actor;
 * TRL prepares the reference with the actor's ZeRO-3 or none). */
static double frozen_bytes(const model_on_rank *m, double bytes_per_param) {
  return m->st.params_count * bytes_per_param / (m->rs.gathers ? m->pl.shard_dense : 1);
}

/* One layer's working set in a no-grad forward over `micro` x `seq` tokens:
 * each intermediate is freed once consumed (transformers LlamaDecoderLayer /
 * LlamaMLP under torch.no_grad: down_proj(act(gate_proj(x)) * up_proj(x))
 * holds act(gate), up and their product). */
static double nograd_layer_bytes(const plan *pl, double micro, double seq) {
  double ab = pl->act_bytes, tp = pl->in->tp, T = micro * seq / pl->in->cp;
  double resid = 2 * T * pl->in->hidden * ab; /* the residual stream and the normed input */
  double kv = pl->kv_heads / tp < 1 ? 1 : pl->kv_heads / tp;
  double attn = T * (2 * pl->in->heads / tp + 2 * kv) * pl->head_dim * ab; /* q, attention output, k, v */
  if ((int)pl->in->attention != LLMEM_ATTN_FLASH)
    attn += 2 * micro * pl->in->heads / tp * seq * seq * ab; /* scores, probs */
  double ffn = pl->moe ? pl->in->moe_top_k * pl->expert_ffn * pl->in->moe_load_imbalance +
                             pl->in->moe_shared_experts * pl->shared_ffn
                       : pl->in->ffn_hidden;
  double mlp = T * ffn / tp * ab * (pl->gated ? 3 : 2);
  return resid + max2(attn, mlp);
}

/* The unsharded weights of one layer while it runs (FSDP/ZeRO-3 gather and prefetch). */
static double gathered_layer_bytes(const model_on_rank *m) {
  if (!m->rs.gathers || m->st.layer_count < 1) return 0;
  const layer_params *p = &m->st.layers;
  double params = (p->matrix_count + p->vector_count + p->expert_count + p->lora_count) / m->st.layer_count;
  return m->rs.gather_factor_fwd * gathered_bytes(&m->rs, params, p->quantizable_count / m->st.layer_count);
}

/* The logits of one no-grad micro-batch: the training loss's tensors
 * without its backward (log-softmax over the vocabulary; TRL
 * selective_log_softmax, verl logprobs_from_logits), over `tokens`. */
static double nograd_logits_bytes(const model_on_rank *m, double tokens, int entropy) {
  if (m->pl.in->head != LLMEM_HEAD_LM) return 0;
  llmem_input in = *m->pl.in; /* one micro-batch of `tokens`, the whole sequences' (context parallelism splits them) */
  in.seq_len = tokens;
  in.micro_batch = 1;
  plan p = m->pl;
  p.in = &in;
  p.rl_entropy = p.rl_entropy && entropy;
  loss_memory lm = loss_bytes(&p);
  double head = m->rs.gathers ? m->st.head_count * m->rs.unsharded_weight_bytes : 0;
  return max2(lm.saved_bytes + lm.forward_peak_bytes, lm.gather_peak_bytes) + head; /* gather: DTensor TP */
}

/* ---- the live state and the walk ---- */
typedef struct {
  double mc[NM][NC]; /* bytes by model and category */
  double host;       /* bytes offloaded to host memory */
  double sync;       /* weight-sync buffers (in the actor's comm_buffers) */
} rl_live;

typedef struct {
  timeline_sink *sink;
  const plan *pl;
  double overhead; /* CUDA context, workspaces, NCCL (+ the engine's own context) */
  llmem_result *out;
  /* the overall allocated peak */
  double peak, peak_mc[NM][NC], peak_sync;
  int peak_phase, peak_mb, peak_layer, peak_in_update;
  double update_breakdown[NC]; /* the actor update's own breakdown at its peak */
  double reserved, host;
  const llmem_rank_result *reserved_rank; /* the update whose reserved is the peak; NULL: a bound */
  double transient;                       /* the largest short-lived request of the current phase */
} rl_walk;

static double live_total(const rl_live *L) {
  double t = 0;
  for (int m = 0; m < NM; m++)
    for (int c = 0; c < NC; c++) t += L->mc[m][c];
  return t;
}

static llmem_rl_phase *phase_begin(rl_walk *W, int phase) {
  llmem_result *o = W->out;
  if (o->rl_phase_count >= LLMEM_MAX_RL_PHASES) return &o->rl_phases[LLMEM_MAX_RL_PHASES - 1];
  llmem_rl_phase *p = &o->rl_phases[o->rl_phase_count++];
  memset(p, 0, sizeof *p);
  p->phase = phase;
  p->peak_allocated_bytes = -1;
  W->transient = 0;
  return p;
}

static void phase_close(rl_walk *W, double reserved) {
  llmem_rl_phase *p = &W->out->rl_phases[W->out->rl_phase_count - 1];
  if (reserved < 0) reserved = runtime_reserved_bytes(W->pl, p->peak_allocated_bytes, W->transient);
  p->device_used_bytes = reserved + W->overhead;
  if (reserved > W->reserved) {
    W->reserved = reserved;
    W->reserved_rank = 0;
  }
}

/* A point of the running state: the timeline, the phase's peak, the overall peak. */
static void point(rl_walk *W, const rl_live *L, int phase, int mb, int layer) {
  llmem_event ev;
  memset(&ev, 0, sizeof ev);
  for (int m = 0; m < NM; m++)
    for (int c = 0; c < NC; c++) ev.category_bytes[c] += L->mc[m][c];
  ev.total_bytes = live_total(L);
  ev.phase = phase;
  ev.micro_batch = mb;
  ev.layer = layer;
  timeline_push(W->sink, &ev);
  if (L->host > W->host) W->host = L->host;
  llmem_rl_phase *p = &W->out->rl_phases[W->out->rl_phase_count - 1];
  if (ev.total_bytes > p->peak_allocated_bytes) {
    p->peak_allocated_bytes = ev.total_bytes;
    memcpy(p->breakdown_bytes, ev.category_bytes, sizeof p->breakdown_bytes);
    for (int m = 0; m < NM; m++) {
      p->model_bytes[m] = 0;
      for (int c = 0; c < NC; c++) p->model_bytes[m] += L->mc[m][c];
    }
  }
  if (ev.total_bytes > W->peak) {
    W->peak = ev.total_bytes;
    memcpy(W->peak_mc, L->mc, sizeof W->peak_mc);
    W->peak_sync = L->sync;
    W->peak_phase = phase, W->peak_mb = mb, W->peak_layer = layer;
    W->peak_in_update = 0;
  }
}

static void add(rl_live *L, int model, int cat, double bytes) { L->mc[model][cat] += bytes; }
static void transient(rl_walk *W, rl_live *L, int model, int cat, double bytes) {
  add(L, model, cat, bytes);
  if (bytes > W->transient) W->transient = bytes;
}

/* A model's states between phases: on the GPU, or on the host when offloaded
 * (verl offload_fsdp_model_to_cpu / offload_fsdp_optimizer between phases:
 * workers/fsdp_workers.py, param_offload and optimizer_offload). sign -1 takes them off. */
static void park_params(rl_live *L, int model, const rank_states *rs, int on_gpu, int sign) {
  double grads = rs->gradients_lazy ? 0 : rs->gradients;
  if (!on_gpu) {
    L->host += sign * (rs->weights + rs->master + rs->comm_persistent + grads);
    return;
  }
  add(L, model, LLMEM_CAT_WEIGHTS, sign * rs->weights);
  add(L, model, LLMEM_CAT_MASTER_WEIGHTS, sign * rs->master);
  add(L, model, LLMEM_CAT_COMM_BUFFERS, sign * rs->comm_persistent);
  add(L, model, LLMEM_CAT_GRADIENTS, sign * grads);
}

static void park_optimizer(rl_live *L, int model, const rank_states *rs, int on_gpu, int sign) {
  if (on_gpu) add(L, model, LLMEM_CAT_OPTIMIZER_STATES, sign * rs->optimizer);
  else L->host += sign * rs->optimizer;
}

static void park(rl_live *L, int model, const rank_states *rs, int params_on_gpu, int optimizer_on_gpu, int sign) {
  park_params(L, model, rs, params_on_gpu, sign);
  park_optimizer(L, model, rs, optimizer_on_gpu, sign);
}

/* Parameters parked on the host come to the GPU for a phase (verl load_fsdp_model_to_gpu), or go back. */
static void move_params(rl_live *L, int model, const rank_states *rs, int to_gpu) {
  park_params(L, model, rs, !to_gpu, -1);
  park_params(L, model, rs, to_gpu, 1);
}

/* ---- the rollout engine on this rank ---- */
typedef struct {
  int on_rank; /* colocated: the engine shares these GPUs */
  double weights, kv, workspace, graphs;
  double weight_bytes_per_param; /* the weights' mean bytes a parameter (fp8: its 16-bit vocabulary layers too) */
  double kv_tokens;
} engine_bytes;

/* vLLM (v1/worker/gpu_worker.py determine_available_memory): requested =
 * total x gpu_memory_utilization; KV = requested - (weights + the profiled
 * forward's peak activation + non-torch); the CUDA graphs are captured after
 * (compile_or_warm_up_model: "memory_profiling does not consider CUDAGraph
 * memory"), outside the share. SGLang's mem_fraction_static covers weights
 * and the KV pool only (server_args.py), activations and graphs on top. */
static llmem_status engine_size(const llmem_input *in, const rl_shape *d, const model_on_rank *actor, engine_bytes *e,
                                int *field) {
  memset(e, 0, sizeof *e);
  const plan *pl = &actor->pl;
  e->on_rank = d->online && in->rl_placement == LLMEM_RL_COLOCATED;
  if (!d->online) return LLMEM_OK;
  double tp = in->rl_rollout_tp;
  if (!divides(pl->in->heads, tp) || (!pl->mla && !divides(pl->kv_heads, tp) && !divides(tp, pl->kv_heads)) ||
      (e->on_rank && !divides(in->gpus, tp)))
    FAIL(LLMEM_ERR_RL_ROLLOUT_TP, rl_rollout_tp);
  if (!e->on_rank) return LLMEM_OK;
  /* weights split over the engine's TP (vLLM Column/RowParallelLinear,
   * VocabParallelEmbedding); norms are replicated, a rounding here */
  /* fp8 weights (vLLM Fp8Config: NeMo-RL's policy.generation.vllm_cfg.precision fp8): the linears in one byte; the
   * embedding and output layer stay in 16 bits (vllm/model_executor/layers/quantization/fp8.py get_quant_method
   * quantizes LinearBase layers only, not VocabParallelEmbedding / ParallelLMHead), as do the activations (the
   * engine's dtype stays bfloat16: nemo_rl/models/generation/vllm/vllm_worker.py sets self.precision so) */
  int fp8 = (int)in->rl_rollout_dtype == LLMEM_DTYPE_FP8;
  double wb = dtype_bytes((int)in->rl_rollout_dtype), vocab_params = fp8 ? embedding_params(pl) + head_params(pl) : 0;
  e->weights = ((actor->params_total - vocab_params) * wb + vocab_params * 2) / tp;
  e->weight_bytes_per_param = actor->params_total > 0 ? e->weights * tp / actor->params_total : wb;
  /* the profiled forward (gpu_model_runner.py profile_run): max_num_batched_tokens
   * through the model, then the sampler over max_num_seqs rows of fp32 logits */
  llmem_input engine_in = *pl->in;
  engine_in.tp = tp;
  engine_in.cp = 1;
  engine_in.attention = LLMEM_ATTN_FLASH;
  plan ep = *pl;
  ep.in = &engine_in;
  ep.act_bytes = fp8 ? 2 : wb < 4 ? wb : 4;
  double seqs = min2(in->rl_max_num_seqs, in->rl_max_num_batched_tokens);
  double vocab = pl->vocab_padded;
  e->workspace = nograd_layer_bytes(&ep, 1, in->rl_max_num_batched_tokens) + seqs * vocab * (ep.act_bytes + 4);
  /* CUDA graphs: one pool shared by the captured sizes, held by the largest,
   * min(max_num_seqs, 512) decode tokens (vllm/config/compilation.py
   * max_cudagraph_capture_size); the logits are computed outside the graph */
  if (in->rl_cuda_graphs != 0) e->graphs = nograd_layer_bytes(&ep, 1, min2(in->rl_max_num_seqs, 512));
  double share = in->rl_gpu_memory_utilization * pl->memory_bytes;
  double kv_room = in->rl_engine == LLMEM_RL_ENGINE_VLLM ? share - e->weights - e->workspace : share - e->weights;
  /* KV per token: K and V of every layer (the KV heads split over TP, or
   * replicated below one per rank); MLA caches the latent and the rope key */
  /* kv_cache_dtype "auto": the engine's dtype, 16 bits under fp8 weights */
  double kvb = !isnan(in->rl_kv_cache_dtype) ? dtype_bytes((int)in->rl_kv_cache_dtype) : ep.act_bytes;
  double per_token = pl->mla ? pl->layers * (pl->in->mla_kv_lora_rank + pl->in->mla_qk_rope_head_dim) * kvb
                             : 2 * pl->layers * max2(pl->kv_heads / tp, 1) * pl->head_dim * kvb;
  double block = in->rl_block_size * per_token;
  double blocks = kv_room > 0 ? floor(kv_room / block) : 0;
  if (blocks < 1) FAIL(LLMEM_ERR_RL_KV_NONE, rl_gpu_memory_utilization);
  e->kv = blocks * block;
  e->kv_tokens = blocks * in->rl_block_size;
  /* vLLM v1 core/kv_cache_utils.py check_enough_kv_cache_memory: one request of max_model_len must fit */
  double model_len = isnan(in->rl_max_model_len) ? d->seq_max : in->rl_max_model_len;
  if (model_len > e->kv_tokens) FAIL(LLMEM_ERR_RL_KV_MODEL_LEN, rl_max_model_len);
  return LLMEM_OK;
}

/* The engine's memory on the rank once it sleeps (vllm/device_allocator/cumem.py
 * CuMemAllocator.sleep: level 1 backs the "weights" pool up to the CPU and
 * discards the rest, level 2 discards both; the CUDA graph pool is not in it;
 * the frameworks then empty the cache: verl fsdp_workers.py aggressive_empty_cache).
 * free_cache: verl's free_cache_engine before sleep mode (the KV cache only). */
static void engine_asleep(const llmem_input *in, const engine_bytes *e, rl_live *L, int sign) {
  int level = (int)in->rl_sleep;
  int weights_stay = level == LLMEM_RL_SLEEP_NONE || level == LLMEM_RL_SLEEP_FREE_CACHE;
  add(L, M_ENGINE, LLMEM_CAT_WEIGHTS, sign * (weights_stay ? e->weights : 0));
  add(L, M_ENGINE, LLMEM_CAT_KV_CACHE, sign * (level == LLMEM_RL_SLEEP_NONE ? e->kv : 0));
  add(L, M_ENGINE, LLMEM_CAT_TEMPORARIES, sign * (e->graphs + (level == LLMEM_RL_SLEEP_NONE ? e->workspace : 0)));
  if (level == LLMEM_RL_SLEEP_LEVEL1) L->host += sign * e->weights;
}

/* ---- a no-grad pass of one model over one micro-batch: a layer, then the logits ---- */
static void nograd_pass(rl_walk *W, rl_live *L, int model, int phase, const model_on_rank *m, double micro, double seq,
                        double logit_tokens) {
  double layer = gathered_layer_bytes(m) + nograd_layer_bytes(&m->pl, micro, seq);
  transient(W, L, model, LLMEM_CAT_TEMPORARIES, layer);
  point(W, L, phase, 0, 0);
  add(L, model, LLMEM_CAT_TEMPORARIES, -layer);
  /* the reference's log-probs come without the entropy (verl fsdp_workers.py compute_ref_log_prob:
   * calculate_entropy=False @b178a3cd; TRL grpo_trainer.py: the reference's per-token log-probs alone) */
  double logits = nograd_logits_bytes(m, logit_tokens, phase != LLMEM_PHASE_REF_LOGPROBS);
  transient(W, L, model, LLMEM_CAT_LOGITS, logits);
  point(W, L, phase, 0, -1);
  add(L, model, LLMEM_CAT_LOGITS, -logits);
}

/* Load a parked frozen model for its pass and park it again after. */
static void frozen_phase(rl_walk *W, rl_live *L, int model, int phase, const model_on_rank *m, double weights,
                         int offload, double micro, double seq, double logit_tokens) {
  phase_begin(W, phase);
  if (offload) {
    add(L, model, LLMEM_CAT_WEIGHTS, weights);
    L->host -= weights;
  }
  nograd_pass(W, L, model, phase, m, micro, seq, logit_tokens);
  if (offload) {
    add(L, model, LLMEM_CAT_WEIGHTS, -weights);
    L->host += weights;
  }
  point(W, L, phase, -1, -1);
  phase_close(W, -1);
}

/* A training step (core/simulate.c) beside the other models' resident bytes. */
static void update_phase(rl_walk *W, const rl_live *L, int model, int phase, const model_on_rank *m,
                         llmem_rank_result *rank, llmem_event *scratch) {
  timeline_sink tmp = {scratch, LLMEM_MAX_EVENTS, 0, 1, 0};
  rank->stage = 0;
  simulate_stage(&m->pl, &m->st, &m->rs, rank, W->sink && W->sink->events ? &tmp : 0);
  rank_counts(&m->st, rank);
  double offset[NC] = {0}, offset_total = 0;
  for (int x = 0; x < NM; x++)
    for (int c = 0; c < NC; c++)
      if (x != model) offset[c] += L->mc[x][c], offset_total += L->mc[x][c];
  for (int i = 0; i < tmp.count; i++) {
    llmem_event ev = scratch[i];
    for (int c = 0; c < NC; c++) ev.category_bytes[c] += offset[c];
    ev.total_bytes += offset_total;
    if (ev.reserved_bytes > 0) ev.reserved_bytes += offset_total;
    if (phase != LLMEM_PHASE_ACTOR_UPDATE) ev.phase = phase;
    timeline_push(W->sink, &ev);
  }
  llmem_rl_phase *p = phase_begin(W, phase);
  p->peak_allocated_bytes = rank->peak_allocated_bytes + offset_total;
  for (int c = 0; c < NC; c++) p->breakdown_bytes[c] = rank->breakdown_bytes[c] + offset[c];
  for (int x = 0; x < NM; x++) {
    p->model_bytes[x] = 0;
    for (int c = 0; c < NC; c++) p->model_bytes[x] += x == model ? rank->breakdown_bytes[c] : L->mc[x][c];
  }
  if (L->host > W->host) W->host = L->host;
  if (p->peak_allocated_bytes > W->peak) {
    W->peak = p->peak_allocated_bytes;
    memcpy(W->peak_mc, L->mc, sizeof W->peak_mc);
    for (int c = 0; c < NC; c++) W->peak_mc[model][c] = rank->breakdown_bytes[c];
    memcpy(W->update_breakdown, rank->breakdown_bytes, sizeof W->update_breakdown);
    W->peak_sync = 0;
    W->peak_phase = phase == LLMEM_PHASE_ACTOR_UPDATE ? rank->peak_phase : phase;
    W->peak_mb = rank->peak_micro_batch;
    W->peak_layer = rank->peak_layer;
    W->peak_in_update = model == M_ACTOR;
  }
  double reserved = rank->peak_reserved_bytes + offset_total;
  phase_close(W, reserved);
  if (W->reserved == reserved) W->reserved_rank = rank;
}

/* ---- the estimate ---- */
typedef struct {
  llmem_input upd;                  /* the actor update's input */
  llmem_input critic_in, reward_in; /* the other models' (their plans point at them) */
  model_on_rank actor, critic, reward;
  llmem_rank_result actor_rank, critic_rank;
  llmem_event scratch[LLMEM_MAX_EVENTS];
} rl_work;

static llmem_status build_models(const llmem_input *in, const rl_shape *d, rl_work *w, int *field) {
  const char *detail;
  w->upd = *in;
  w->upd.micro_batch = d->upd_micro;
  w->upd.seq_len = d->upd_seq;
  w->upd.grad_accum = d->accum;
  w->upd.global_batch = NAN;
  llmem_status st = plan_build(&w->upd, &w->actor.pl, field, &detail);
  if (st != LLMEM_OK) return st;
  place(&w->actor);
  if (d->ppo) {
    st = other_model(&w->actor.pl, in->rl_critic_layers, in->rl_critic_hidden, in->rl_critic_heads,
                     in->rl_critic_kv_heads, in->rl_critic_ffn_hidden, FIELD(rl_critic_heads), &w->critic_in,
                     &w->critic.pl, field);
    if (st != LLMEM_OK) return st;
    w->critic_in.micro_batch = d->critic_upd_micro;
    w->critic_in.seq_len = d->critic_upd_seq;
    w->critic.pl.cublas_workspace_bytes = 0; /* the actor's threads' workspaces serve it (park_all) */
    place(&w->critic);
  }
  if (d->online && in->rl_reward_enabled != 0) {
    st = other_model(&w->actor.pl, in->rl_reward_layers, in->rl_reward_hidden, in->rl_reward_heads,
                     in->rl_reward_kv_heads, in->rl_reward_ffn_hidden, FIELD(rl_reward_heads), &w->reward_in,
                     &w->reward.pl, field);
    if (st != LLMEM_OK) return st;
    place(&w->reward);
  }
  return LLMEM_OK;
}

static void fill_rank(const rl_walk *W, const rl_work *w, llmem_rank_result *r) {
  memset(r, 0, sizeof *r);
  r->peak_allocated_bytes = W->peak;
  for (int m = 0; m < NM; m++)
    for (int c = 0; c < NC; c++) r->breakdown_bytes[c] += W->peak_mc[m][c];
  r->peak_reserved_bytes = W->reserved;
  r->device_used_bytes = W->reserved + W->overhead;
  r->fragmentation_bytes = W->reserved - W->peak;
  if (W->reserved_rank) {
    r->reserved_simulated = W->reserved_rank->reserved_simulated;
    r->largest_free_block_bytes = W->reserved_rank->largest_free_block_bytes;
  }
  r->persistent_bytes = w->actor_rank.persistent_bytes;
  rank_counts(&w->actor.st, r);
  r->peak_phase = W->peak_phase;
  r->peak_micro_batch = W->peak_mb;
  r->peak_layer = W->peak_layer;
  r->stage = 0;
}

/* "Why this number": the actor's own terms when the peak is in its update,
 * one term per other model and category, then the runtime. */
static void explain(const rl_walk *W, const rl_work *w, const engine_bytes *e, llmem_result *out) {
  static const int ids[NM] = {LLMEM_TERM_RL_ACTOR, LLMEM_TERM_RL_REFERENCE, LLMEM_TERM_RL_REWARD, LLMEM_TERM_RL_CRITIC,
                              LLMEM_TERM_RL_ENGINE_WEIGHTS};
  const double counts[NM] = {w->actor.params_total, w->actor.params_total, w->reward.params_total,
                             w->critic.params_total, w->actor.params_total};
  out->term_count = 0;
  if (W->peak_in_update) explain_model_terms(&w->actor.pl, &w->actor.st, &w->actor.rs, W->update_breakdown, out);
  for (int m = W->peak_in_update ? 1 : 0; m < NM; m++)
    for (int c = 0; c < NC; c++) {
      double b = W->peak_mc[m][c];
      if (b <= 0) continue;
      if (m == M_ENGINE && c == LLMEM_CAT_KV_CACHE)
        explain_add_term(out, LLMEM_TERM_RL_KV_CACHE, c, b, b, e->kv_tokens, 0, 0);
      else if (m == M_ENGINE && c == LLMEM_CAT_TEMPORARIES)
        explain_add_term(out, LLMEM_TERM_RL_ENGINE_WORKSPACE, c, b, b, b - e->graphs, e->graphs, 0);
      else if (m == M_ENGINE)
        explain_add_term(out, ids[m], c, b, b, counts[m], e->weight_bytes_per_param, w->upd.rl_rollout_tp);
      else if (m == M_ACTOR && c == LLMEM_CAT_COMM_BUFFERS && W->peak_sync > 0) {
        explain_add_term(
            out, LLMEM_TERM_RL_WEIGHT_SYNC, c, W->peak_sync, W->peak_sync,
            w->upd.rl_weight_sync == LLMEM_RL_SYNC_FULL ? W->peak_sync : w->upd.rl_weight_sync_bucket_mib * MIB, 0, 0);
        if (b - W->peak_sync > 0) explain_add_term(out, ids[m], c, b - W->peak_sync, b - W->peak_sync, counts[m], 0, 0);
      } else explain_add_term(out, ids[m], c, b, b, counts[m], 0, 0);
    }
  explain_runtime_terms(&w->actor.pl, &out->per_gpu, W->overhead - runtime_device_overhead_bytes(&w->actor.pl), out);
}

/* "actor update: backward, micro-batch 1, layer 5", "rollout", ...: the updates' passes
 * read as the training step's (peak_place_text) */
static void describe(llmem_result *out) {
  const llmem_rank_result *r = &out->per_gpu;
  size_t cap = sizeof out->peak_at, n = 0;
  int update = r->peak_phase >= LLMEM_PHASE_FORWARD && r->peak_phase <= LLMEM_PHASE_OPTIMIZER;
  out->peak_at[0] = 0;
  if (update) n = text_append(out->peak_at, n, cap, "actor update: ");
  if (update || r->peak_phase == LLMEM_PHASE_CRITIC_UPDATE) peak_place_text(out->peak_at, n, cap, r, 1);
  else text_append(out->peak_at, n, cap, llmem_phase_name(r->peak_phase));
}

/* ---- the step, phase by phase ---- */
/* Where each model's states sit between phases (1: on the GPU, 0: offloaded
 * to the host), and the frozen copies' bytes. */
typedef struct {
  int actor_params, actor_opt, critic_params, critic_opt;
  int reference; /* reference log-probs in the step (not precomputed) */
  double ref_bytes, reward_bytes;
  int ref_offload, reward_offload;
  double ref_host_bytes; /* a reference swapped into the actor: its host copies */
} rl_parking;

/* What each phase reads, and the running state it changes. */
typedef struct {
  const llmem_input *in;
  const rl_shape *d;
  rl_work *models;
  const engine_bytes *e;
  rl_parking k;
  double logit_tokens; /* the log-prob passes' logits, per micro-batch */
  rl_walk *W;
  rl_live *L;
} rl_step;

/* The parameter counts, the engine's bytes, and the warnings every RL estimate carries. */
static void describe_models(const rl_shape *d, const rl_work *models, const engine_bytes *e, llmem_result *out) {
  model_param_counts(&models->actor.pl, &out->params_total, &out->params_active, &out->params_trainable);
  out->params_per_gpu = models->actor.st.params_count;
  out->rl_kv_cache_bytes = e->kv;
  out->rl_kv_cache_tokens = e->kv_tokens;
  out->rl_engine_bytes = e->on_rank ? e->weights + e->kv + e->workspace + e->graphs : 0;
  if (!e->on_rank && d->online) result_add_warning(out, LLMEM_WARN_RL_SEPARATE);
  result_add_warning(out, LLMEM_WARN_RL_PASSES);
}

static void walk_init(rl_walk *W, timeline_sink *sink, const llmem_input *in, const engine_bytes *e, const plan *pl,
                      llmem_result *out) {
  memset(W, 0, sizeof *W);
  W->sink = sink;
  W->pl = pl;
  W->out = out;
  W->peak = -1;
  double engine_context = 0;
  if (e->on_rank && in->rl_own_process != 0) {
    /* an engine process of its own (verl's vLLM server, rollout/vllm_rollout/vllm_async_server.py)
     * holds a CUDA context of its own */
    double nccl;
    int comms;
    runtime_overheads(pl, &engine_context, &nccl, &comms);
  }
  W->overhead = runtime_device_overhead_bytes(pl) + engine_context;
}

static rl_parking parking_of(const llmem_input *in, const rl_work *models) {
  const plan *pl = &models->actor.pl;
  rl_parking k;
  k.actor_params = in->rl_actor_param_offload == 0, k.actor_opt = in->rl_actor_optimizer_offload == 0;
  k.ref_bytes = 0; /* a LoRA actor's reference is its base with the adapters off (TRL, verl ref_in_actor) */
  k.reference = in->rl_ref_enabled != 0 && in->rl_ref_precomputed == 0;
  k.ref_host_bytes = 0;
  if (k.reference && (int)pl->in->ft_method == LLMEM_FT_FULL && in->rl_ref_swapped != 0)
    /* NeMo-RL keeps the reference's sharded state on the host and copies it into the actor's parameters for its
     * pass, the actor's own saved to a second host buffer meanwhile (dtensor_policy_worker_v2.py use_reference_model,
     * automodel/setup.py; megatron_policy_worker.py): the pass runs on the actor's weights, no copy of its own */
    k.ref_host_bytes = 2 * frozen_bytes(&models->actor, pl->master_weights ? 4 : pl->weight_bytes);
  else if (k.reference && (int)pl->in->ft_method == LLMEM_FT_FULL)
    k.ref_bytes = frozen_bytes(&models->actor, pl->weight_bytes);
  k.ref_offload = in->rl_ref_param_offload != 0;
  k.reward_bytes = models->reward.params_total > 0 ? frozen_bytes(&models->reward, pl->weight_bytes) : 0;
  k.reward_offload = in->rl_reward_param_offload != 0;
  k.critic_params = in->rl_critic_param_offload == 0, k.critic_opt = in->rl_critic_optimizer_offload == 0;
  return k;
}

/* The step starts with every model parked as between phases. */
static void park_all(const rl_step *s) {
  const rl_parking *k = &s->k;
  rl_live *L = s->L;
  memset(L, 0, sizeof *L);
  park(L, M_ACTOR, &s->models->actor.rs, k->actor_params, k->actor_opt, 1);
  /* the process's cuBLAS workspaces (runtime.c), made by the previous step's matmuls: on the GPU in every
   * phase, counted with the actor (the other models run on the same threads: none of their own) */
  add(L, M_ACTOR, LLMEM_CAT_TEMPORARIES, runtime_workspace_bytes(&s->models->actor.pl));
  L->host += k->ref_host_bytes;
  if (k->ref_offload) L->host += k->ref_bytes;
  else add(L, M_REF, LLMEM_CAT_WEIGHTS, k->ref_bytes);
  if (k->reward_offload) L->host += k->reward_bytes;
  else add(L, M_REWARD, LLMEM_CAT_WEIGHTS, k->reward_bytes);
  if (s->d->ppo) park(L, M_CRITIC, &s->models->critic.rs, k->critic_params, k->critic_opt, 1);
  if (s->e->on_rank) engine_asleep(s->in, s->e, L, 1);
}

/* The engine's weights leave the GPU when it sleeps (level 1: backed up to the host). */
static int engine_weights_sleep(const llmem_input *in) {
  return in->rl_sleep == LLMEM_RL_SLEEP_LEVEL1 || in->rl_sleep == LLMEM_RL_SLEEP_LEVEL2;
}

/* The weight sync's buffers: the bucket (or the whole model for "full"), and
 * the largest parameter gathered whole from its shards. */
static double weight_sync_bytes(const llmem_input *in, const model_on_rank *actor) {
  const plan *pl = &actor->pl;
  double param_bytes = pl->master_weights ? 4 : pl->weight_bytes; /* the sharded parameters' dtype */
  double largest =
      max2(max2(actor->st.embedding_count, actor->st.head_count), actor->st.layers.largest_linear_count) * param_bytes;
  double gather = actor->rs.gathers ? largest : 0;
  double buffer = in->rl_weight_sync == LLMEM_RL_SYNC_FULL ? actor->st.params_count * pl->weight_bytes
                                                           : in->rl_weight_sync_bucket_mib * MIB;
  return buffer + gather;
}

/* weight sync (verl fsdp_workers.py rollout_mode): the actor's parameters
 * come back to the GPU for their state dict, go back to the host, the
 * engine's weights wake up, then each parameter is gathered whole
 * (DTensor.full_tensor) and sent through a bucket (rollout/vllm_rollout
 * update_weights: torch.empty(update_weights_bucket_megabytes)); "full"
 * gathers the whole model at once (TRL ds3_gather_for_generation) */
static void weight_sync_phase(const rl_step *s) {
  rl_walk *W = s->W;
  rl_live *L = s->L;
  const model_on_rank *actor = &s->models->actor;
  phase_begin(W, LLMEM_PHASE_WEIGHT_SYNC);
  point(W, L, LLMEM_PHASE_WEIGHT_SYNC, -1, -1);
  if (!s->k.actor_params) {
    move_params(L, M_ACTOR, &actor->rs, 1);
    point(W, L, LLMEM_PHASE_WEIGHT_SYNC, -1, -1);
    move_params(L, M_ACTOR, &actor->rs, 0);
  }
  if (s->e->on_rank && engine_weights_sleep(s->in)) {
    add(L, M_ENGINE, LLMEM_CAT_WEIGHTS, s->e->weights);
    if ((int)s->in->rl_sleep == LLMEM_RL_SLEEP_LEVEL1) L->host -= s->e->weights;
  }
  L->sync = weight_sync_bytes(s->in, actor);
  transient(W, L, M_ACTOR, LLMEM_CAT_COMM_BUFFERS, L->sync);
  point(W, L, LLMEM_PHASE_WEIGHT_SYNC, -1, -1);
  add(L, M_ACTOR, LLMEM_CAT_COMM_BUFFERS, -L->sync);
  L->sync = 0;
  point(W, L, LLMEM_PHASE_WEIGHT_SYNC, -1, -1);
  phase_close(W, -1);
}

/* rollout: the KV cache wakes (resume(tags=["kv_cache"])), generation
 * runs in the engine's share; the training states stay as parked */
static void rollout_phase(const rl_step *s) {
  phase_begin(s->W, LLMEM_PHASE_ROLLOUT);
  if (s->e->on_rank) {
    int level = (int)s->in->rl_sleep;
    if (level != LLMEM_RL_SLEEP_NONE) add(s->L, M_ENGINE, LLMEM_CAT_KV_CACHE, s->e->kv);
    if (level != LLMEM_RL_SLEEP_NONE) transient(s->W, s->L, M_ENGINE, LLMEM_CAT_TEMPORARIES, s->e->workspace);
  }
  point(s->W, s->L, LLMEM_PHASE_ROLLOUT, -1, -1);
  phase_close(s->W, -1);
}

/* the engine sleeps (or frees its cache) before the training phases */
static void engine_sleep_phase(const rl_step *s) {
  rl_live *L = s->L;
  const engine_bytes *e = s->e;
  phase_begin(s->W, LLMEM_PHASE_ENGINE_SLEEP);
  if (e->on_rank) {
    int level = (int)s->in->rl_sleep;
    if (level != LLMEM_RL_SLEEP_NONE) {
      add(L, M_ENGINE, LLMEM_CAT_KV_CACHE, -e->kv);
      add(L, M_ENGINE, LLMEM_CAT_TEMPORARIES, -e->workspace);
    }
    if (engine_weights_sleep(s->in)) {
      add(L, M_ENGINE, LLMEM_CAT_WEIGHTS, -e->weights);
      if (level == LLMEM_RL_SLEEP_LEVEL1) L->host += e->weights;
    }
  }
  point(s->W, L, LLMEM_PHASE_ENGINE_SLEEP, -1, -1);
  phase_close(s->W, -1);
}

/* the actor's old log-probs (dp_actor.py compute_log_prob) */
/* A no-grad pass on the actor's own weights (old log-probs; the reference as the LoRA actor's base or swapped into
 * the actor), its parameters on the GPU for the pass if they are parked on the host. */
static void actor_nograd_phase(const rl_step *s, int phase) {
  const model_on_rank *actor = &s->models->actor;
  phase_begin(s->W, phase);
  if (!s->k.actor_params) move_params(s->L, M_ACTOR, &actor->rs, 1);
  nograd_pass(s->W, s->L, M_ACTOR, phase, actor, s->d->lp_micro, s->d->lp_seq, s->logit_tokens);
  if (!s->k.actor_params) move_params(s->L, M_ACTOR, &actor->rs, 0);
  point(s->W, s->L, phase, -1, -1);
  phase_close(s->W, -1);
}

/* The online algorithms' phases before the updates: weight sync, rollout,
 * engine sleep, reward scoring (verl compute_rm_score), old log-probs. */
static void rollout_phases(const rl_step *s) {
  weight_sync_phase(s);
  rollout_phase(s);
  engine_sleep_phase(s);
  if (s->k.reward_bytes > 0)
    frozen_phase(s->W, s->L, M_REWARD, LLMEM_PHASE_REWARD, &s->models->reward, s->k.reward_bytes, s->k.reward_offload,
                 s->d->lp_micro, s->d->lp_seq, 0);
  actor_nograd_phase(s, LLMEM_PHASE_OLD_LOGPROBS);
}

/* reference log-probs (verl compute_ref_log_prob; TRL DPO compute_ref_log_probs per batch) */
static void reference_phase(const rl_step *s) {
  const model_on_rank *actor = &s->models->actor;
  if (s->k.ref_bytes > 0)
    frozen_phase(s->W, s->L, M_REF, LLMEM_PHASE_REF_LOGPROBS, actor, s->k.ref_bytes, s->k.ref_offload, s->d->lp_micro,
                 s->d->lp_seq, s->logit_tokens);
  else if (s->k.reference) /* the LoRA actor's base, adapters off, or a reference swapped in */
    actor_nograd_phase(s, LLMEM_PHASE_REF_LOGPROBS);
}

/* critic values (dp_critic.py compute_values), then its update (update_critic) */
static void critic_phases(const rl_step *s) {
  rl_work *models = s->models;
  int params = s->k.critic_params, opt = s->k.critic_opt;
  phase_begin(s->W, LLMEM_PHASE_CRITIC_VALUES);
  if (!params) move_params(s->L, M_CRITIC, &models->critic.rs, 1);
  nograd_pass(s->W, s->L, M_CRITIC, LLMEM_PHASE_CRITIC_VALUES, &models->critic, s->d->critic_micro, s->d->critic_seq,
              0);
  if (!params) move_params(s->L, M_CRITIC, &models->critic.rs, 0);
  point(s->W, s->L, LLMEM_PHASE_CRITIC_VALUES, -1, -1);
  phase_close(s->W, -1);
  park(s->L, M_CRITIC, &models->critic.rs, params, opt, -1);
  update_phase(s->W, s->L, M_CRITIC, LLMEM_PHASE_CRITIC_UPDATE, &models->critic, &models->critic_rank, models->scratch);
  park(s->L, M_CRITIC, &models->critic.rs, params, opt, 1);
}

/* the actor update (dp_actor.py update_policy: the states loaded back) */
static void actor_update_phase(const rl_step *s) {
  rl_work *models = s->models;
  park(s->L, M_ACTOR, &models->actor.rs, s->k.actor_params, s->k.actor_opt, -1);
  update_phase(s->W, s->L, M_ACTOR, LLMEM_PHASE_ACTOR_UPDATE, &models->actor, &models->actor_rank, models->scratch);
  park(s->L, M_ACTOR, &models->actor.rs, s->k.actor_params, s->k.actor_opt, 1);
}

/* The walk's peak into the result: the timeline, the rank, host bytes, terms, fit and where. */
static void fill_result(const rl_step *s, const timeline_sink *sink, llmem_result *out) {
  const rl_walk *W = s->W;
  const rl_work *models = s->models;
  const plan *pl = &models->actor.pl;
  out->event_count = sink->count;
  out->event_stride = sink->stride;
  if (sink->stride > 1) result_add_warning(out, LLMEM_WARN_TIMELINE_DOWNSAMPLED);
  fill_rank(W, models, &out->per_gpu);
  out->ranks[0] = out->per_gpu;
  out->rank_count = 1;
  out->peak_allocated_bytes = W->peak;
  out->peak_allocated_stage = 0;
  out->host_cpu_bytes = W->host + models->actor.rs.host_bytes;
  /* a paged optimizer's states (outside the allocator's walk): what the device has left, the rest on the host */
  double paged = models->actor.rs.paged_bytes;
  if (paged > 0) {
    double on_device = paged_on_device_bytes(paged, out->per_gpu.device_used_bytes, pl->memory_bytes);
    out->per_gpu.device_used_bytes += on_device;
    out->ranks[0] = out->per_gpu;
    out->host_cpu_bytes += paged - on_device;
    result_add_warning(out, LLMEM_WARN_PAGED_OPTIMIZER);
  }
  out->host_nvme_bytes = models->actor.rs.nvme_bytes;
  explain(W, models, s->e, out);
  out->capacity_bytes = pl->memory_bytes;
  out->utilization = out->per_gpu.device_used_bytes / pl->memory_bytes;
  out->fits = out->per_gpu.device_used_bytes <= pl->memory_bytes;
  if (!out->fits) result_add_warning(out, LLMEM_WARN_DOES_NOT_FIT);
  else if (out->utilization > 0.9) result_add_warning(out, LLMEM_WARN_NEAR_CAPACITY);
  describe(out);
}

/* The shapes, the models and the engine from the input; the first refusal stops it. */
static llmem_status rl_setup(const llmem_input *in, rl_shape *d, rl_work *models, engine_bytes *e, int *field) {
  llmem_status st = plan_check_fields(in, field);
  if (st == LLMEM_OK) st = derive_shape(in, d, field);
  memset(&models->critic, 0, sizeof models->critic);
  memset(&models->reward, 0, sizeof models->reward);
  if (st == LLMEM_OK) st = build_models(in, d, models, field);
  if (st == LLMEM_OK) st = engine_size(in, d, &models->actor, e, field);
  return st;
}

static rl_work w; /* large (event scratch, two ranks): off small stacks; the core is single-threaded */

llmem_status rl_estimate(const llmem_input *in, llmem_result *out) {
  int field = -1;
  rl_shape d;
  engine_bytes e;
  llmem_status st = rl_setup(in, &d, &w, &e, &field);
  if (st != LLMEM_OK) {
    result_fill_error(out, st, field);
    return st;
  }
  describe_models(&d, &w, &e, out);
  rl_walk W;
  timeline_sink sink = {out->events, LLMEM_MAX_EVENTS, 0, 1, 0};
  walk_init(&W, &sink, in, &e, &w.actor.pl, out);
  rl_live L;
  rl_step s = {in, &d, &w, &e, parking_of(in, &w), 0, &W, &L};
  park_all(&s);
  /* TRL keeps the completion's logits only (grpo_trainer.py
   * _get_per_token_logps_and_entropies: logits_to_keep); verl all tokens */
  double lp_tokens = d.lp_micro * d.lp_seq;
  s.logit_tokens = lp_tokens * (in->rl_logits_response_only != 0 ? d.response_share : 1);
  if (d.online) rollout_phases(&s);
  reference_phase(&s);
  if (d.ppo) critic_phases(&s);
  actor_update_phase(&s);
  fill_result(&s, &sink, out);
  return LLMEM_OK;
}

llmem_status rl_readings(const llmem_input *in, llmem_readings *out, plan *resolved, int *error_field) {
  static llmem_result full; /* large: off small stacks; the core is single-threaded */
  memset(&full, 0, offsetof(llmem_result, ranks));
  memset(&full.params_total, 0, offsetof(llmem_result, events) - offsetof(llmem_result, params_total));
  full.error_field = -1;
  llmem_readings r = {0};
  r.status = rl_estimate(in, &full);
  if (error_field) *error_field = full.error_field;
  if (r.status == LLMEM_OK) {
    if (resolved) *resolved = w.actor.pl;
    r.peak_allocated_bytes = full.per_gpu.peak_allocated_bytes;
    r.peak_reserved_bytes = full.per_gpu.peak_reserved_bytes;
    r.device_used_bytes = full.per_gpu.device_used_bytes;
    r.capacity_bytes = full.capacity_bytes;
    r.fits = full.fits;
  }
  *out = r;
  return r.status;
}
