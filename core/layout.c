/* What each pipeline rank holds: its layers (even, uneven, virtual chunks),
 * the embedding on the first stage, the head and final norm on the last
 * (Megatron-Bridge theoretical_memory_utils.py L615-690; docs/memory-model.md §3). */
#include "internal.h"

/* The weighted split (parallel.pp_split; torchtitan distributed/pipeline_parallel.py
 * generate_llm_fqn_per_model_part, 3c84ce095, #1416, 2025-07-30, and generate_split_points before it, input and
 * output weights 1): the embedding and the output each count as a layer, the effective layers spread evenly over
 * the model chunks and one more to each of the first (layers + 2) % chunks. Model chunk m's layers; sets its
 * first layer's global index. */
int layout_chunk_layers(const plan *pl, int m, int *first_layer) {
  int chunks = (int)(pl->in->pp * pl->in->vpp);
  double effective = pl->layers + 2;
  int per = (int)floor(effective / chunks), extra = (int)(effective - (double)per * chunks);
  *first_layer = m * per + (m < extra ? m : extra) - (m > 0);
  return per + (m < extra) - (m == 0) - (m == chunks - 1);
}

static int stage_layer_total(const plan *pl, int stage) {
  int p = (int)pl->in->pp;
  if (pl->pp_first > 0 || pl->pp_last > 0) {
    if (stage == 0 && pl->pp_first > 0) return (int)pl->pp_first;
    if (stage == p - 1 && pl->pp_last > 0) return (int)pl->pp_last;
    int middle = p - (pl->pp_first > 0) - (pl->pp_last > 0);
    return (int)((pl->layers - pl->pp_first - pl->pp_last) / middle);
  }
  return (int)(pl->layers / pl->in->pp);
}

/* Layers of `chunk` on `stage`; sets the global index of its first layer.
 * Virtual chunk j of stage r is model chunk j*p + r (Megatron interleaving). */
int layout_stage_layers(const plan *pl, int stage, int chunk, int *first_layer) {
  int p = (int)pl->in->pp, v = (int)pl->in->vpp;
  if (pl->pp_weighted) /* V: chunk 0 is model chunk r, chunk 1 model chunk 2p - 1 - r; else chunk j is j p + r */
    return layout_chunk_layers(pl, plan_v_shape(pl) ? (chunk == 0 ? stage : 2 * p - 1 - stage) : chunk * p + stage,
                               first_layer);
  if (plan_v_shape(pl)) { /* V: chunk 0 is model chunk r, chunk 1 model chunk 2p - 1 - r (schedule.c) */
    int n = (int)(pl->layers / (2 * p));
    *first_layer = (chunk == 0 ? stage : 2 * p - 1 - stage) * n;
    return n;
  }
  if (plan_dualpipe(pl)) {
    /* DualPipe (deepseek-ai/DualPipe examples/example_dualpipe.py @3da1bbe:
     * modules full_modules[rank] and full_modules[pp_size - 1 - rank]): model
     * stages h and p - 1 - h of L/p layers, h = min(r, p - 1 - r); chunk 0 is
     * the one DualPipe.step calls phase 0 (phase ^= is_in_second_half) */
    int n = (int)(pl->layers / p), h = stage < p - 1 - stage ? stage : p - 1 - stage;
    *first_layer = (chunk == 0 ? h : p - 1 - h) * n;
    return n;
  }
  /* stages 1 .. p - 2 hold the same count: the layers before (chunk, stage) in closed form */
  int first_n = stage_layer_total(pl, 0) / v;
  int middle_n = p > 2 ? stage_layer_total(pl, 1) / v : 0;
  int last_n = p > 1 ? stage_layer_total(pl, p - 1) / v : 0;
  int round = first_n + (p - 2 > 0 ? p - 2 : 0) * middle_n + last_n; /* one chunk over all stages */
  int before = stage == 0 ? 0 : first_n + (stage - 1) * middle_n;
  *first_layer = chunk * round + before;
  return stage_layer_total(pl, stage) / v;
}

static void add_layer(layer_params *sum, const layer_params *lp) {
  sum->matrix_count += lp->matrix_count;
  sum->matrix_dims_count += lp->matrix_dims_count;
  sum->vector_count += lp->vector_count;
  sum->expert_count += lp->expert_count;
  sum->expert_dims_count += lp->expert_dims_count;
  sum->lora_count += lp->lora_count;
  sum->quantizable_count += lp->quantizable_count;
  if (lp->largest_linear_count > sum->largest_linear_count) sum->largest_linear_count = lp->largest_linear_count;
  if (lp->largest_module_count > sum->largest_module_count) sum->largest_module_count = lp->largest_module_count;
}

/* `count` layers of one kind: the sums' fields times the count (the counts are whole, and whole sums below
 * 2^53 are exact in any order: the per-layer sums' own bits), the largest alike. */
static void add_layers(layer_params *sum, const layer_params *lp, int count) {
  layer_params more = *lp;
  more.matrix_count *= count, more.matrix_dims_count *= count, more.vector_count *= count;
  more.expert_count *= count, more.expert_dims_count *= count, more.lora_count *= count;
  more.quantizable_count *= count;
  add_layer(sum, &more);
}

/* The stage's decoder layers by kind: each kind's count from one period of the pattern (layer_kind_counts),
 * its parameters computed once. */
static void stage_layers(const plan *pl, int stage, stage_layout *st) {
  int have[LAYER_KIND_COUNT] = {0};
  layer_params cached[LAYER_KIND_COUNT]; /* one count per layer kind (mixer x MLP) */
  for (int c = 0; c < (int)pl->in->vpp; c++) {
    int first = 0, counts[LAYER_KIND_COUNT], first_at[LAYER_KIND_COUNT];
    int n = layout_stage_layers(pl, stage, c, &first);
    if (c == 0) st->first_layer = first;
    layer_kind_counts(pl, first, n, counts, first_at);
    for (int kind = 0; kind < LAYER_KIND_COUNT; kind++) {
      if (!counts[kind]) continue;
      if (!have[kind]) cached[kind] = layer_params_on_rank(pl, first_at[kind]), have[kind] = 1;
      st->layer_count += counts[kind];
      st->mixer_layer_count[kind / LLMEM_LAYER_MLP_COUNT_] += counts[kind];
      if (kind % LLMEM_LAYER_MLP_COUNT_ == LLMEM_LMLP_MOE) st->moe_layer_count += counts[kind];
      add_layers(&st->layers, &cached[kind], counts[kind]);
    }
  }
}

/* The last stage's head, final norm and MTP modules. */
static void stage_head(const plan *pl, stage_layout *st) {
  double t = pl->in->tp, h = pl->in->hidden;
  if (pl->in->mtp_layers > 0) {
    /* the MTP modules sit on the last stage, which builds its own word embedding
     * for them when the first stage's is elsewhere (Megatron-LM gpt_model.py:
     * pre_process or mtp_process; tied, the head's copy is that embedding) */
    layer_params mtp = mtp_params_on_rank(pl);
    for (int k = 0; k < (int)pl->in->mtp_layers; k++) add_layer(&st->layers, &mtp);
    if ((!st->has_embedding || plan_dualpipe(pl)) && (int)pl->in->tied_embeddings == 0)
      st->embedding_count += pl->vocab_padded * h / t;
  }
  st->final_norm_count = pl->in->final_norm * pl->norm_width * h;
  if ((int)pl->in->head == LLMEM_HEAD_LM) {
    /* untied: own output layer; tied with p > 1: the last stage keeps a copy
     * of the word embedding (Megatron; docs/memory-model.md §11 #14); a V
     * schedule's first rank holds both ends and one table; DualPipe's end
     * ranks hold the first stage of one copy and the last of the other, two
     * modules with a table each */
    if ((int)pl->in->tied_embeddings == 0 || (pl->in->pp > 1 && (!st->has_embedding || plan_dualpipe(pl))))
      st->head_count = pl->vocab_padded * h / t;
    if ((int)pl->in->lm_head_bias != 0) st->head_count += pl->vocab_padded / t;
  } else {
    st->head_count = head_params(pl);
  }
}

void layout_stage(const plan *pl, int stage, stage_layout *out) {
  stage_layout st = {0};
  st.stage = stage;
  st.has_embedding = stage == 0;
  st.has_head = stage == (plan_v_shape(pl) ? 0 : (int)pl->in->pp - 1); /* V: the last model chunk is rank 0's second */
  if (plan_dualpipe(pl))
    st.has_embedding = st.has_head = stage == 0 || stage == (int)pl->in->pp - 1; /* both copies' ends */
  stage_layers(pl, stage, &st);
  double t = pl->in->tp, h = pl->in->hidden;
  /* vocab-parallel embedding: V_padded * h / tp; learned positions replicated */
  if (st.has_embedding) st.embedding_count = embedding_params(pl) - pl->in->vocab * h + pl->vocab_padded * h / t;
  if (st.has_head) stage_head(pl, &st);
  if (st.has_head && pl->in->encoder_layers > 0) /* the encoder's final norm and the stacks' relative position biases */
    st.final_norm_count += pl->in->final_norm * pl->norm_width * h + 2 * pl->in->relative_buckets * pl->in->heads;
  else if (st.has_head) st.final_norm_count += pl->in->relative_buckets * pl->in->heads;
  if (st.has_embedding && pl->in->vision_layers > 0) { /* the tower runs before the first layer */
    vision_cost v = vision_of(pl);
    st.vision_count = (v.tower_params + v.projector_params) / t;
    st.vision_frozen_count = v.frozen_params / t;
  }
  st.params_count = st.layers.matrix_count + st.layers.vector_count + st.layers.expert_count + st.embedding_count +
                    st.head_count + st.final_norm_count + st.vision_count;
  if ((int)pl->in->ft_method == LLMEM_FT_FULL) {
    st.trainable_count = st.params_count - st.vision_frozen_count;
    st.frozen_count = 0;
  } else {
    st.trainable_count = st.layers.lora_count;
    st.frozen_count = st.params_count;
    st.params_count += st.layers.lora_count;
  }
  *out = st;
}

/* Layers [a, a + n) have the same kinds (mixer x MLP, in order) as [b, b + n): with
 * the MoE rule alone, when as many leading dense layers and the same MoE phase follow. */
static int same_kinds(const plan *pl, int a, int b, int n) {
  if (pl->mixer_period || pl->mlp_period || pl->in->encoder_layers > 0) { /* per-layer kinds: layer by layer */
    for (int i = 0; i < n; i++)
      if (layer_kind(pl, a + i) != layer_kind(pl, b + i)) return 0;
    return 1;
  }
  if (!pl->moe) return 1;
  int d = (int)pl->in->moe_dense_layers, f = (int)pl->in->moe_layer_freq;
  int dense_a = d - a < 0 ? 0 : (d - a > n ? n : d - a);
  int dense_b = d - b < 0 ? 0 : (d - b > n ? n : d - b);
  if (dense_a != dense_b) return 0;
  if (dense_a == n) return 1;
  return ((a > d ? a : d) - d) % f == ((b > d ? b : d) - d) % f;
}

int layout_same_layers(const plan *pl, int stage_a, int stage_b) {
  int p = (int)pl->in->pp, v = (int)pl->in->vpp;
  if ((stage_a == 0) != (stage_b == 0) || (stage_a == p - 1) != (stage_b == p - 1)) return 0;
  for (int c = 0; c < v; c++) {
    int a, b, n = layout_stage_layers(pl, stage_a, c, &a);
    if (layout_stage_layers(pl, stage_b, c, &b) != n || !same_kinds(pl, a, b, n)) return 0;
  }
  return 1;
}
