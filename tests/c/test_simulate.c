/* The simulated step: FSDP2 transients of docs/memory-model.md §6.2 / E3, the
 * timeline's consistency, schedules and where the peak falls. */
#include <string.h>

#include "allocator.h"
#include "check.h"
#include "sim.h"

static llmem_result out;
static int run(const char *keys) { return run_keys(keys, &out); }

/* The running total at the first micro-batch's loss. */
static double loss_total(const llmem_result *r) {
  for (int i = 0; i < r->event_count; i++)
    if (r->events[i].phase == LLMEM_PHASE_LOSS) return r->events[i].total_bytes;
  return 0;
}

#define L2_7B \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=11008 model.vocab=32000 "

/* The most gradient bytes any event of the backward holds at the head (layer -1) and at the embedding. */
static void head_and_embedding_grads(double *head, double *embed) {
  *head = *embed = 0;
  for (int i = 0; i < out.event_count; i++) {
    const llmem_event *e = &out.events[i];
    double g = e->category_bytes[LLMEM_CAT_GRADIENTS];
    if (e->phase != LLMEM_PHASE_BACKWARD || e->micro_batch != 0) continue;
    if (e->layer == -1 && g > *head) *head = g;
    if (e->layer == LLMEM_LAYER_EMBEDDING && g > *embed) *embed = g;
  }
}

/* Autograd's buffer of the head weight's gradient (passes.c head_buffer_init), one GPU, bf16 (2 B a
 * gradient), V x h = 32,000 x 512, a step in the backward (no .grad kept): torchtune's chunked output makes
 * one gradient per chunk beside the buffer, 2 V h 2 B at the head; tied to the embedding, the buffer stays
 * to the embedding's backward, which adds its own beside it: 2 V h 2 B there too (untied: nothing left). */
static void autograd_head_buffer(void) {
  const char *base =
      "model.layers=2 model.hidden=512 model.heads=8 model.kv_heads=8 model.ffn_hidden=1024 "
      "model.vocab=32000 model.vocab_multiple=1 training.seq_len=512 training.dtype=bf16 "
      "training.master_weights=false training.grad_dtype=bf16 training.optimizer_dtype=bf16 "
      "training.optimizer_in_backward=true parallel.engine=single parallel.gpus=1 "
      "training.loss=chunked training.loss_chunks=8 ";
  double table = 32000.0 * 512 * 2, norm = 512 * 2, head, embed; /* the final norm's gradient, made at the head */
  char k[640];
  snprintf(k, sizeof k, "%s model.tied_embeddings=true", base);
  if (run(k)) {
    head_and_embedding_grads(&head, &embed);
    CHECK_NEAR(head, 2 * table + norm, 0, "tied, chunked: the buffer and a chunk's gradient at the head");
    CHECK_NEAR(embed, 2 * table + norm, 0, "tied: the buffer and the embedding's gradient at the embedding");
  }
  snprintf(k, sizeof k, "%s model.tied_embeddings=false", base);
  if (run(k)) {
    head_and_embedding_grads(&head, &embed);
    CHECK_NEAR(head, 2 * table + norm, 0, "untied, chunked: the same at the head");
    CHECK_NEAR(embed, table + norm, 0, "untied: the embedding's own gradient only");
    double at_step = 0;
    for (int i = 0; i < out.event_count; i++)
      if (out.events[i].phase == LLMEM_PHASE_OPTIMIZER && out.events[i].category_bytes[LLMEM_CAT_GRADIENTS] > at_step)
        at_step = out.events[i].category_bytes[LLMEM_CAT_GRADIENTS];
    CHECK(at_step < table, "stepped in the backward: no table's gradient left for the step (%g)", at_step);
  }
  snprintf(k, sizeof k, "%s model.tied_embeddings=false parallel.engine=megatron", base);
  if (run(k)) {
    head_and_embedding_grads(&head, &embed);
    CHECK(head < 2 * table, "Megatron's main_grad buffers: no autograd buffer modelled (%g)", head);
  }
}

/* One recorder for the request-order tests below: the allocator's events that `keep` accepts, in order. */
typedef struct {
  char code;
  uint64_t tag;
  double bytes;
} seen_event;
#define SEEN_MAX 256
static seen_event seen[SEEN_MAX];
static int seen_count;
static int (*keep_event)(char code, uint64_t tag);
static void record_event(char code, uint64_t tag, double bytes, int stream) {
  (void)stream;
  if (seen_count < SEEN_MAX && keep_event(code, tag)) seen[seen_count++] = (seen_event){code, tag, bytes};
}
static int run_recording(const char *keys, int (*keep)(char code, uint64_t tag)) {
  seen_count = 0;
  keep_event = keep;
  alloc_observe(record_event);
  int ok = run(keys);
  alloc_observe(0);
  return ok;
}
static int tag_part(uint64_t tag) { return (int)((tag >> 52) & 63); }

/* torch.optim's states as the first step makes them, in model.parameters() order (transformers LlamaModel:
 * embed_tokens, layers, norm; LlamaForCausalLM: lm_head): one GPU, fp32 AdamW, full fine-tune, V x h =
 * 32,000 x 512 untied: the embedding's exp_avg and exp_avg_sq first (V h 4 = 65,536,000 B each), the final
 * norm's and the head's last ((V + 1) h 4 = 65,538,048 B each). */
static int optimizer_state_made(char code, uint64_t tag) { return code == 'a' && block_tag_kind(tag) == TAG_OPT_STATE; }

static void states_in_parameter_order(void) {
  if (!run_recording("model.layers=2 model.hidden=512 model.heads=8 model.kv_heads=8 model.ffn_hidden=1024 "
                     "model.vocab=32000 model.vocab_multiple=1 model.tied_embeddings=false training.seq_len=64 "
                     "training.optimizer_impl=foreach parallel.engine=single parallel.gpus=1",
                     optimizer_state_made))
    return;
  CHECK(seen_count > 6, "one request per parameter tensor and state (%d)", seen_count);
  if (seen_count <= 6) return;
  int n = seen_count;
  CHECK(block_tag_layer(seen[0].tag) == LAYER_EMBED && block_tag_layer(seen[1].tag) == LAYER_EMBED,
        "the embedding's states first (layers %d, %d)", block_tag_layer(seen[0].tag), block_tag_layer(seen[1].tag));
  CHECK_NEAR(seen[0].bytes, 65536000.0, 0, "exp_avg of the embedding");
  CHECK_NEAR(seen[1].bytes, 65536000.0, 0, "exp_avg_sq of the embedding");
  CHECK(block_tag_layer(seen[2].tag) == 0, "then layer 0's (layer %d)", block_tag_layer(seen[2].tag));
  CHECK(block_tag_layer(seen[n - 2].tag) == LAYER_HEAD && block_tag_layer(seen[n - 1].tag) == LAYER_HEAD,
        "the final norm's and the head's last (layers %d, %d)", block_tag_layer(seen[n - 2].tag),
        block_tag_layer(seen[n - 1].tag));
  CHECK_NEAR(seen[n - 2].bytes, 65538048.0, 0, "exp_avg of the final norm and the head");
  CHECK_NEAR(seen[n - 1].bytes, 65538048.0, 0, "exp_avg_sq of the final norm and the head");
}

/* FSDP2's root unit copied out one tensor per parameter (alloc_all_gather_outputs), in registration order:
 * 8 GPUs, bf16 parameters, V x h = 32,000 x 512 untied: the embedding 32,768,000 B, the final norm 1,024 B,
 * the head 32,768,000 B (one block of 65,537,024 B before). */
static int root_copied_out(char code, uint64_t tag) {
  return code == 'a' && block_tag_kind(tag) == TAG_GATHER && block_tag_layer(tag) == LAYER_HEAD &&
         ALLOC_TAG_MB(tag) == 0;
}

static void root_copied_out_per_parameter(void) {
  if (!run_recording("model.layers=2 model.hidden=512 model.heads=8 model.kv_heads=8 model.ffn_hidden=1024 "
                     "model.vocab=32000 model.vocab_multiple=1 model.tied_embeddings=false training.seq_len=64 "
                     "parallel.engine=fsdp2 parallel.gpus=8",
                     root_copied_out))
    return;
  CHECK(seen_count >= 3, "the root's three parameters (%d requests)", seen_count);
  if (seen_count < 3) return;
  CHECK_NEAR(seen[0].bytes, 32768000.0, 0, "the embedding first");
  CHECK_NEAR(seen[1].bytes, 1024.0, 0, "the final norm");
  CHECK_NEAR(seen[2].bytes, 32768000.0, 0, "the head last");
}

/* The loss's requests in the order the probe's traces show them (one GPU, bf16, the standard loss): the
 * logits (part 10) and their fp32 copy (18), then the log-softmax output the backward keeps (1); in the
 * backward the zeros (11) and the log-softmax gradient (19), the zeros and the saved output freed, the
 * 16-bit gradient cast from it (4), and only then the fp32 gradient freed. */
static int first_loss_event(char code, uint64_t tag) {
  return (code == 'a' || code == 'f') && block_tag_kind(tag) == TAG_LOSS && block_tag_layer(tag) == LAYER_HEAD &&
         ALLOC_TAG_MB(tag) == 1 && tag_part(tag) != 0; /* part 0: the head's input */
}

static void loss_in_trace_order(void) {
  if (!run_recording("model.layers=2 model.hidden=512 model.heads=8 model.kv_heads=8 model.ffn_hidden=1024 "
                     "model.vocab=32000 training.seq_len=512 training.loss=standard parallel.engine=single "
                     "parallel.gpus=1 training.grad_accum=1",
                     first_loss_event))
    return;
  static const char codes[] = "aaaffaaffaff";
  static const int parts[] = {10, 18, 1, 10, 18, 11, 19, 11, 1, 4, 19, 4};
  int n = (int)(sizeof parts / sizeof parts[0]);
  CHECK(seen_count >= n, "the loss's requests and frees (%d)", seen_count);
  for (int i = 0; i < n && i < seen_count; i++)
    CHECK(seen[i].code == codes[i] && tag_part(seen[i].tag) == parts[i], "event %d: %c part %d, want %c part %d", i,
          seen[i].code, tag_part(seen[i].tag), codes[i], parts[i]);
}

/* DDP's gradient buckets (core/ddp.c), bf16 parameters and gradients, V x h = 32,000 x 512 untied, two
 * layers of q, k, v, o (524,288 B each), gate, up, down (1,048,576 B each) and two norms (1,024 B each):
 * 76,026,880 B of gradients. bucket_cap_mb 4 (4,194,304 B, the first bucket's limit too). Without
 * find_unused_parameters: one bucket of all at construction, freed at the reported step's start and made
 * again in the backward's order, each closed at the cap: the head 32,768,000; the final norm, layer 1's norms,
 * down, up, gate, o, v 4,197,376; its k, q, layer 0's norms, down, up, gate 4,196,352; its o, v, k, q and the
 * embedding 34,865,152. With it: model.parameters() order, reversed, never rebuilt: the head side first. */
static int bucket_event(char code, uint64_t tag) {
  return (code == 'a' || code == 'f') && block_tag_kind(tag) == TAG_BUCKET;
}

#define DDP_TWO_LAYERS                                                                                        \
  "model.layers=2 model.hidden=512 model.heads=8 model.kv_heads=8 model.ffn_hidden=1024 model.vocab=32000 "   \
  "model.vocab_multiple=1 model.tied_embeddings=false training.seq_len=64 training.dtype=bf16 "               \
  "training.master_weights=false training.grad_dtype=bf16 training.optimizer_dtype=bf16 parallel.engine=ddp " \
  "parallel.gpus=2 parallel.ddp_bucket_cap_mib=4 "

static void ddp_buckets_rebuilt(void) {
  if (!run_recording(DDP_TWO_LAYERS "parallel.ddp_find_unused_parameters=false", bucket_event)) return;
  static const char codes[] = "afaaaa";
  static const double bytes[] = {76026880, 76026880, 32768000, 4197376, 4196352, 34865152};
  CHECK(seen_count >= 6, "one bucket, freed, then four (%d events)", seen_count);
  for (int i = 0; i < 6 && i < seen_count; i++) {
    CHECK(seen[i].code == codes[i], "event %d: %c, want %c", i, seen[i].code, codes[i]);
    CHECK(seen[i].bytes == bytes[i], "event %d: %.0f B, want %.0f", i, seen[i].bytes, bytes[i]);
  }
  if (!run_recording(DDP_TWO_LAYERS "parallel.ddp_find_unused_parameters=true", bucket_event)) return;
  /* registration order with the 4 MiB limit: the embedding 32,768,000; layer 0's q, k, v, o, gate, up
   * 4,194,304 (the cap exactly); its down, norms and layer 1's q, k, v, o, gate 4,196,352; layer 1's up, down,
   * norms, the final norm and the head 34,868,224; then the list reversed */
  static const double unused[] = {34868224, 4196352, 4194304, 32768000};
  CHECK(seen_count == 4, "four buckets from construction, none rebuilt (%d events)", seen_count);
  for (int i = 0; i < 4 && i < seen_count; i++) {
    CHECK(seen[i].code == 'a', "event %d made", i);
    CHECK(seen[i].bytes == unused[i], "bucket %d: %.0f B, want %.0f (the head's side first)", i, seen[i].bytes,
          unused[i]);
  }
}

/* gradient_as_bucket_view: the gradients are the buckets' views, kept from construction: the first forward
 * already holds every gradient (76,026,880 B); without it .grad comes with the backward (none in the forward). */
static double forward_gradients(void) {
  double g = -1;
  for (int i = 0; i < out.event_count; i++)
    if (out.events[i].phase == LLMEM_PHASE_FORWARD && out.events[i].category_bytes[LLMEM_CAT_GRADIENTS] > g)
      g = out.events[i].category_bytes[LLMEM_CAT_GRADIENTS];
  return g;
}

static void ddp_bucket_view_gradients(void) {
  if (run(DDP_TWO_LAYERS "parallel.grad_as_bucket_view=true"))
    CHECK_NEAR(forward_gradients(), 76026880.0, 0, "bucket view: every gradient in the forward");
  if (run(DDP_TWO_LAYERS "parallel.grad_as_bucket_view=false"))
    CHECK_NEAR(forward_gradients(), 0, 0, "own .grad: none in the forward");
}

int main(void) {
  ddp_buckets_rebuilt();
  ddp_bucket_view_gradients();
  loss_in_trace_order();
  root_copied_out_per_parameter();
  states_in_parameter_order();
  /* E3: Llama-2-7B, FSDP2 full shard over 8 GPUs, bf16 params, fp32 reduce:
   * forward transient 2 P_R + 2 P_g + 2 P_g = 1,333,829,632 B (the root, the group's copy-out and its
   * all-gather output, kept until the next group's copy-out);
   * backward transient at a group's working set 2 P_R + 2 P_head + 8 P_g + 2 P_down
   * = 2,495,684,608 B (E3b: the root, the output's gradient, the group and its prefetched
   * neighbour, down_proj's gradient, the fp32 input the group above left held). */
  if (run(L2_7B "parallel.engine=fsdp2 parallel.gpus=8 training.seq_len=16")) {
    double fwd = 0, bwd = 0;
    for (int i = 0; i < out.event_count; i++) {
      const llmem_event *e = &out.events[i];
      double gathered = e->category_bytes[LLMEM_CAT_WEIGHTS] + e->category_bytes[LLMEM_CAT_COMM_BUFFERS];
      if (e->phase == LLMEM_PHASE_FORWARD && e->layer > 0 && e->layer < 31 && gathered > fwd) fwd = gathered;
      if (e->phase == LLMEM_PHASE_BACKWARD && e->layer > 0 && e->layer < 31) {
        double unsharded = gathered + e->category_bytes[LLMEM_CAT_GRADIENTS];
        /* remove the sharded fp32 gradients created so far: 4 B x params / 8 */
        (void)unsharded;
        if (gathered > bwd) bwd = gathered;
      }
    }
    CHECK_NEAR(fwd, 1333829632.0, 0, "FSDP2 forward transient (E3)");
    /* backward: root params + current + prefetched + fp32 reduce-scatter input (grads counted apart) */
    CHECK_NEAR(bwd, 2.0 * 262148096 + 2 * 202383360.0 * 2 + 4 * 202383360.0, 0, "FSDP2 backward gathers (E3b)");
    /* layer 15's working set, less the sharded gradients of the 16 layers above (4 B x P_g / 8 each) */
    for (int i = 0; i < out.event_count; i++) {
      const llmem_event *e = &out.events[i];
      if (e->phase != LLMEM_PHASE_BACKWARD || e->layer != 15) continue;
      double transient = e->category_bytes[LLMEM_CAT_WEIGHTS] + e->category_bytes[LLMEM_CAT_COMM_BUFFERS] +
                         e->category_bytes[LLMEM_CAT_GRADIENTS] - 16 * 101191680.0;
      CHECK_NEAR(transient, 2495684608.0, 0, "FSDP2 backward transient (E3b)");
      break;
    }
    /* fp32 master and AdamW states, sharded, and the two cuBLAS workspaces (2 x 32 MiB, core/runtime.c) */
    CHECK_NEAR(out.per_gpu.persistent_bytes, 12.0 * 6738415616 / 8 + 67108864.0, 1e-15,
               "FSDP2 persistent fp32 master + AdamW + cuBLAS workspaces");
  }

  /* a later stage walked with the caching allocator keeps its points for the timeline (estimate.c
   * keep_points): the last stage, holding the 256k-vocabulary logits, is the most loaded, and its
   * timeline peaks at its allocated and reserved peaks */
  if (run("parallel.pp=2 parallel.gpus=8 model.vocab=256000")) {
    const llmem_rank_result *last = &out.ranks[1];
    double top = 0, top_reserved = 0;
    for (int i = 0; i < out.event_count; i++) {
      if (out.events[i].total_bytes > top) top = out.events[i].total_bytes;
      if (out.events[i].reserved_bytes > top_reserved) top_reserved = out.events[i].reserved_bytes;
    }
    CHECK(out.per_gpu.stage == 1 && last->reserved_simulated, "stage 1 most loaded, simulated (%d)", out.per_gpu.stage);
    CHECK(out.per_gpu.peak_allocated_bytes == last->peak_allocated_bytes &&
              out.per_gpu.peak_reserved_bytes == last->peak_reserved_bytes &&
              out.per_gpu.device_used_bytes == last->device_used_bytes,
          "per_gpu is stage 1's");
    CHECK_NEAR(top, last->peak_allocated_bytes, 0, "kept timeline peaks at stage 1's allocated");
    CHECK_NEAR(top_reserved, last->peak_reserved_bytes, 0, "kept timeline peaks at stage 1's reserved");
  }

  /* one estimate's stage walks share the allocator's budget (ALLOCATOR_MAX_WORK): in a two-stage ZB-V step
   * whose cache layouts never repeat within 14 micro-batches (124 small layers), stage 0's walk takes most
   * of it and stage 1's gives up partway; its reserve is then the bound or what it had reached */
  if (run("model.layers=124 model.hidden=256 model.heads=8 model.ffn_hidden=4096 model.vocab=32000 "
          "training.seq_len=512 training.grad_accum=14 parallel.gpus=4 parallel.pp=2 parallel.vpp=2 "
          "parallel.pp_schedule=zb_v")) {
    CHECK(out.ranks[0].reserved_simulated && !out.ranks[1].reserved_simulated,
          "stage 0 simulated (%d), stage 1 past the estimate's budget (%d)", out.ranks[0].reserved_simulated,
          out.ranks[1].reserved_simulated);
    CHECK(out.ranks[1].peak_reserved_bytes >= out.ranks[1].peak_allocated_bytes, "stage 1 reserved >= allocated");
  }

  /* timeline: the largest point is the peak, and the peak's parts sum to it */
  if (run("parallel.engine=fsdp2 parallel.gpus=8 training.seq_len=8192 training.grad_accum=3")) {
    double max = 0, sum = 0;
    for (int i = 0; i < out.event_count; i++)
      if (out.events[i].total_bytes > max) max = out.events[i].total_bytes;
    for (int c = 0; c < LLMEM_CAT_COUNT; c++) sum += out.per_gpu.breakdown_bytes[c];
    CHECK_NEAR(max, out.per_gpu.peak_allocated_bytes, 0, "timeline max = peak");
    CHECK_NEAR(sum, out.per_gpu.peak_allocated_bytes, 1e-12, "breakdown sums to peak");
    CHECK(out.per_gpu.peak_reserved_bytes >= out.per_gpu.peak_allocated_bytes, "reserved >= allocated");
    CHECK(out.per_gpu.device_used_bytes > out.per_gpu.peak_reserved_bytes, "device >= reserved");
    CHECK(out.event_count > 100, "timeline has per-layer points (%d)", out.event_count);
  }

  /* gradient accumulation: torch .grad persists, so micro-batch 1's forward
   * sees the gradients of micro-batch 0 (a summed bound would miss the timing) */
  if (run("parallel.engine=single parallel.gpus=1 model.layers=4 model.hidden=1024 model.heads=8 model.kv_heads=8 "
          "model.ffn_hidden=4096 model.vocab=32000 training.seq_len=1024 training.grad_accum=2")) {
    double first = -1, second = -1;
    for (int i = 0; i < out.event_count; i++) {
      const llmem_event *e = &out.events[i];
      if (e->phase == LLMEM_PHASE_FORWARD && e->layer == 0 && e->micro_batch == 0)
        first = e->category_bytes[LLMEM_CAT_GRADIENTS];
      if (e->phase == LLMEM_PHASE_FORWARD && e->layer == 0 && e->micro_batch == 1)
        second = e->category_bytes[LLMEM_CAT_GRADIENTS];
    }
    CHECK(first == 0 && second > 0, "gradients appear after the first backward (%g, %g)", first, second);
  }

  /* 1F1B: stage 0 holds p micro-batches in flight, the last stage one */
  if (run("model.layers=8 model.hidden=1024 model.heads=8 model.ffn_hidden=4096 model.vocab=32000 "
          "parallel.engine=megatron parallel.gpus=4 parallel.pp=4 training.grad_accum=8 training.seq_len=1024 "
          "model.head=none")) {
    CHECK(out.rank_count == 4, "4 ranks");
    double a0 = out.ranks[0].breakdown_bytes[LLMEM_CAT_ACTIVATIONS];
    double a3 = out.ranks[3].breakdown_bytes[LLMEM_CAT_ACTIVATIONS];
    CHECK(a0 > 3 * a3, "stage 0 keeps more in flight (%g vs %g)", a0, a3);
  }
  /* GPipe keeps all micro-batches: more than 1F1B on stage 0 */
  {
    const char *base =
        "model.layers=8 model.hidden=1024 model.heads=8 model.ffn_hidden=4096 model.vocab=32000 "
        "parallel.engine=megatron parallel.gpus=4 parallel.pp=4 training.grad_accum=16 training.seq_len=1024 ";
    char keys[512];
    snprintf(keys, sizeof keys, "%sparallel.pp_schedule=1f1b", base);
    double one = run(keys) ? out.ranks[0].breakdown_bytes[LLMEM_CAT_ACTIVATIONS] : 0;
    snprintf(keys, sizeof keys, "%sparallel.pp_schedule=gpipe", base);
    double all = run(keys) ? out.ranks[0].breakdown_bytes[LLMEM_CAT_ACTIVATIONS] : 0;
    CHECK(all > 3 * one, "gpipe keeps m micro-batches (%g vs %g)", all, one);
  }
  /* activation offload: each micro-batch in flight keeps every layer but the chunk's last two in
   * pinned host memory. Llama-3-8B shape with MHA (a = g = 32), s = 2048, FSDP2 eager norms (their
   * fp32 input and, the weights training, the bf16 normed x): per layer
   * T*(24h + 8 + 4a + 8F) = 2048*(98,304 + 8 + 128 + 114,688) = 436,486,144 B.
   * One stage of 32 layers, 4 micro-batches one at a time: 30 x 436,486,144 = 13,094,584,320 B;
   * 1F1B over 2 stages of 16: stage 0 holds 2 micro-batches: 2 x 14 x 436,486,144 = 12,221,612,032 B. */
#define L3_MHA                                                                                          \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=14336 "          \
  "training.seq_len=2048 training.grad_accum=4 training.activation_offload=true parallel.engine=fsdp2 " \
  "runtime.torch_compile=false "
  if (run(L3_MHA "parallel.gpus=1"))
    CHECK_NEAR(out.host_cpu_bytes, 13094584320.0, 0, "offloaded activations, one stage");
  if (run(L3_MHA "parallel.gpus=2 parallel.pp=2"))
    CHECK_NEAR(out.host_cpu_bytes, 12221612032.0, 0, "offloaded activations, 1F1B stage 0");
  /* FSDP2, 16 tokens, a 256,000-entry vocabulary: the last backward event holds the most (the
   * root unit's unsharded embedding and head gradients beside every sharded gradient, the
   * embedding's just created); it is the embedding's backward, not the loss's */
  if (run("model.layers=2 model.hidden=1024 model.heads=8 model.ffn_hidden=2816 model.vocab=256000 "
          "training.seq_len=16 parallel.engine=fsdp2 parallel.gpus=8")) {
    CHECK(out.per_gpu.peak_layer == LLMEM_LAYER_EMBEDDING, "peak at the embedding (layer %d)", out.per_gpu.peak_layer);
    CHECK(strcmp(out.peak_at, "backward, micro-batch 0, embedding (end of the backward)") == 0, "peak_at: %s",
          out.peak_at);
  }
  /* the optimizer step is the peak when activations are tiny */
  if (run(L2_7B "parallel.engine=single parallel.gpus=1 training.seq_len=16 training.optimizer_impl=foreach"))
    CHECK(out.per_gpu.peak_phase == LLMEM_PHASE_OPTIMIZER, "peak at optimizer (%s)", out.peak_at);
  /* paged optimizer states stay out of the allocator's numbers */
  if (run(L2_7B "parallel.engine=single parallel.gpus=1 training.seq_len=16 training.paged_optimizer=true"))
    CHECK(out.per_gpu.breakdown_bytes[LLMEM_CAT_OPTIMIZER_STATES] == 0, "paged states outside allocated");
  /* ... and fill the device's free memory; what it has no room for pages out to the host and is counted
   * there (fp32 AdamW: 8 B a parameter; the device overhead from a device with room for all of them) */
  if (run(L2_7B "parallel.engine=single parallel.gpus=1 training.seq_len=16 training.paged_optimizer=true "
                "hardware.memory_gib=400")) {
    double paged = out.params_trainable * 8;
    double overhead = out.per_gpu.device_used_bytes - out.per_gpu.peak_reserved_bytes - paged;
    CHECK(out.host_cpu_bytes == 0, "paged, room for all: nothing on the host (%g)", out.host_cpu_bytes);
    if (run(L2_7B "parallel.engine=single parallel.gpus=1 training.seq_len=16 training.paged_optimizer=true "
                  "hardware.memory_gib=100")) {
      double on_device = out.capacity_bytes - out.per_gpu.peak_reserved_bytes - overhead;
      CHECK_NEAR(out.per_gpu.device_used_bytes, out.capacity_bytes, 1e-12, "paged: the device full");
      CHECK_NEAR(out.host_cpu_bytes, paged - on_device, 1e-9, "paged: the rest on the host");
      CHECK(on_device > 0 && out.host_cpu_bytes > 0, "paged: split between device and host (%g on the host)",
            out.host_cpu_bytes);
    }
  }
  /* "why this number" with expert parallelism: Megatron distributed optimizer, 16 GPUs, ep 8 =>
   * dense states over 16 data-parallel ranks, experts over 16 / 8 = 2 expert-data-parallel ranks.
   * Routed experts here: 2 layers x 1 expert x 3 x 1024 x 512 = 3,145,728 parameters;
   * fp32 Adam 8 B: 3,145,728 x 8 / 2 = 12,582,912 B; fp32 master 3,145,728 x 4 / 2 = 6,291,456 B.
   * The non-expert states keep 8 B and 4 B per parameter over 16 ranks. */
#define SMALL_MOE                                                                          \
  "model.layers=2 model.hidden=1024 model.heads=8 model.kv_heads=8 model.ffn_hidden=2816 " \
  "model.vocab=32000 model.moe=true model.moe.experts=8 model.moe.top_k=2 "                \
  "model.moe.expert_ffn_hidden=512 training.seq_len=1024 "
  if (run(SMALL_MOE "parallel.engine=megatron parallel.gpus=16 parallel.ep=8 parallel.distributed_optimizer=true")) {
    int opt = 0, master = 0;
    for (int i = 0; i < out.term_count; i++) {
      const llmem_term *t = &out.terms[i];
      if (t->category != LLMEM_CAT_OPTIMIZER_STATES && t->category != LLMEM_CAT_MASTER_WEIGHTS) continue;
      int is_opt = t->category == LLMEM_CAT_OPTIMIZER_STATES;
      opt += is_opt, master += !is_opt;
      double bytes = is_opt ? 8 : 4;
      if (t->inputs[0] == 3145728) { /* the expert part */
        CHECK(t->inputs[1] == bytes && t->inputs[2] == 2, "expert %s: %g B / %g-way", is_opt ? "optimizer" : "master",
              t->inputs[1], t->inputs[2]);
        CHECK_NEAR(t->value_bytes, 3145728.0 * bytes / 2, 0, is_opt ? "expert optimizer bytes" : "expert master bytes");
      } else {
        CHECK(t->inputs[1] == bytes && t->inputs[2] == 16, "dense %s: %g B / %g-way", is_opt ? "optimizer" : "master",
              t->inputs[1], t->inputs[2]);
        CHECK_NEAR(t->value_bytes, t->inputs[0] * bytes / 16, 1e-12, "dense state bytes");
      }
    }
    CHECK(opt == 2 && master == 2, "expert and non-expert terms: %d optimizer, %d master", opt, master);
  }
  /* "why this number": each category's terms sum to its value, runtime terms to the rest */
  const char *configs[5] = {
      "parallel.engine=fsdp2 parallel.gpus=8 training.seq_len=8192",
      "parallel.engine=megatron parallel.gpus=16 parallel.tp=2 parallel.pp=2 training.grad_accum=4",
      "parallel.engine=deepspeed parallel.zero_stage=3 parallel.gpus=8 training.finetune.method=qlora",
      SMALL_MOE "parallel.engine=fsdp2 parallel.gpus=16 parallel.ep=8",
      SMALL_MOE "parallel.engine=deepspeed parallel.zero_stage=1 parallel.gpus=16 parallel.ep=8"};
  for (int k = 0; k < 5; k++) {
    if (!run(configs[k])) continue;
    double cat[LLMEM_CAT_COUNT] = {0}, runtime = 0;
    for (int i = 0; i < out.term_count; i++) {
      if (out.terms[i].category >= 0) cat[out.terms[i].category] += out.terms[i].value_bytes;
      else runtime += out.terms[i].value_bytes;
    }
    for (int c = 0; c < LLMEM_CAT_COUNT; c++)
      CHECK_NEAR(cat[c], out.per_gpu.breakdown_bytes[c], 1e-12, llmem_category_name(c));
    CHECK_NEAR(runtime, out.per_gpu.device_used_bytes - out.per_gpu.peak_allocated_bytes, 1e-12, "runtime terms");
  }
  /* Megatron's interleaved micro-batch groups: stage 0 of pp 4, vpp 2 runs
   * 2 (p - 1) + (v - 1) g forwards before its first backward, so 11 virtual
   * chunks of activations are in flight with groups of g = p = 4 and 13 with
   * g = 6; m = 10 (not a multiple of pp) runs with g = 6 (last group 4). */
  {
    const char *meg = L2_7B
        "parallel.engine=megatron parallel.gpus=4 parallel.pp=4 parallel.vpp=2 "
        "parallel.pp_schedule=interleaved training.seq_len=2048 ";
    char k[512];
    snprintf(k, sizeof k, "%s training.grad_accum=12", meg);
    double g4 = run(k) ? out.ranks[0].breakdown_bytes[LLMEM_CAT_ACTIVATIONS] : 0;
    snprintf(k, sizeof k, "%s training.grad_accum=12 parallel.vpp_group=6", meg);
    double g6 = run(k) ? out.ranks[0].breakdown_bytes[LLMEM_CAT_ACTIVATIONS] : 0;
    CHECK_NEAR(g6 / g4, 13.0 / 11.0, 0.01, "groups of 6: 13 chunks in flight, not 11");
    snprintf(k, sizeof k, "%s training.grad_accum=10 parallel.vpp_group=6", meg);
    CHECK(run(k), "m = 10 with groups of 6");
  }
  /* middle stages repeating stage 1's layers are walked without the caching allocator (their reserve
   * is the bound); stage 0, stage 1, the last and the reported rank are simulated, and every rank's
   * allocated peak is what a walk with the allocator gives */
  {
#define PP8                                                                                                       \
  "parallel.engine=megatron parallel.gpus=64 parallel.pp=8 parallel.tp=8 model.layers=32 training.grad_accum=16 " \
  "training.seq_len=2048"
    static llmem_result with_bound;
    if (run(PP8)) {
      with_bound = out;
      CHECK(with_bound.per_gpu.reserved_simulated, "the reported rank is simulated");
      for (int s = 0; s < 8; s++) {
        int middle = s >= 2 && s <= 6 && s != with_bound.per_gpu.stage;
        CHECK(with_bound.ranks[s].reserved_simulated == !middle, "only repeated middle stages use the bound");
      }
    }
    /* a given reserve simulates no stage's allocator: the same allocated peaks */
    if (run(PP8 " runtime.allocator_reserve=0")) {
      for (int s = 0; s < 8; s++)
        CHECK_NEAR(out.ranks[s].peak_allocated_bytes, with_bound.ranks[s].peak_allocated_bytes, 0,
                   "allocated does not depend on the allocator");
    }
  }
  /* QLoRA under LitGPT (training.finetune.quant_inputs_held): the micro-batch
   * before's 4-bit inputs are live through the next forward and loss (its
   * logits went when model() returned). Llama-2-7B, b = 2, s = 512 (T = 1024),
   * bf16: per layer T x 2 B x (2h + q + F) = 1024 x 2 x (8192 + 4096 + 11008)
   * = 47,710,208 B, x 32 layers = 1,526,726,656 B more at the loss. */
  {
    const char *q = L2_7B
        "parallel.engine=single parallel.gpus=1 training.seq_len=512 training.micro_batch=2 "
        "training.finetune.method=qlora training.finetune.lora_targets=q,v "
        "runtime.framework=litgpt runtime.framework_version=2024-04 ";
    char k[768];
    snprintf(k, sizeof k, "%s training.finetune.quant_inputs_held=false", q);
    double off = run(k) ? loss_total(&out) : 0, w_head = out.per_gpu.persistent_bytes;
    double on = run(q) ? loss_total(&out) : 0;
    CHECK_NEAR(on - off, 1526726656.0, 1e-9, "held 4-bit inputs of the micro-batch before");
    /* the 4-bit head dequantised for the loss: fp16 state, then a bf16 copy
     * (quant_from_fp16): 32000 x 4096 x 2 B more than one copy = 262,144,000 B */
    snprintf(k, sizeof k, "%s training.finetune.quant_from_fp16=false", q);
    double one = run(k) ? loss_total(&out) : 0;
    CHECK_NEAR(on - one, 262144000.0, 1e-9, "the dequantised head's bf16 copy");
    /* a bf16 head instead: 131,072,000 params x (2 - 0.5 - 1/64 - 4/16384) B
     * (nf4, double quant) = 194,528,000 B (196,608,000 - 2,048,000 - 32,000) more weights, and no dequantised head:
     * 2 x 262,144,000 B less at the loss; the frozen bf16 head keeps no input either, which the old
     * MatMul4Bit kept (quant_keeps_input): T x h x 2 = 1024 x 4096 x 2 = 8,388,608 B less */
    snprintf(k, sizeof k, "%s training.finetune.quant_head=false training.finetune.quant_inputs_held=false", q);
    double bf16_head = run(k) ? loss_total(&out) : 0;
    CHECK_NEAR(out.per_gpu.persistent_bytes - w_head, 194528000.0, 1e-9, "the head in bf16 (quant_head false)");
    CHECK_NEAR(off - bf16_head, 524288000.0 - 194528000.0 + 8388608.0, 1e-9, "no dequantised head at the loss");
  }
  /* The cuBLAS workspaces (core/runtime.c): 2 x 32 MiB, the forward's and the backward's thread's, allocated
   * tensors at every point of the step (temporaries), made by the first step's matmuls; outside the allocator
   * stay the context (512 MiB) and NCCL (none on one GPU). */
  {
    const char *q = L2_7B "parallel.engine=single parallel.gpus=1 training.seq_len=512 ";
    char k[512];
    snprintf(k, sizeof k, "%s runtime.cublas_workspace_mib=0", q);
    double none = run(k) ? out.per_gpu.peak_allocated_bytes : 0;
    if (run(q)) {
      CHECK_NEAR(out.per_gpu.peak_allocated_bytes - none, 67108864.0, 0, "two 32 MiB cuBLAS workspaces allocated");
      int low = 0;
      for (int i = 0; i < out.event_count; i++) low += out.events[i].category_bytes[LLMEM_CAT_TEMPORARIES] < 67108864.0;
      CHECK(low == 0, "the workspaces at every point of the step (%d points without)", low);
      CHECK(out.per_gpu.reserved_simulated && out.per_gpu.peak_reserved_bytes >= out.per_gpu.peak_allocated_bytes,
            "the simulated allocator holds them");
      CHECK_NEAR(out.per_gpu.device_used_bytes - out.per_gpu.peak_reserved_bytes, 536870912.0, 0,
                 "outside the allocator: the CUDA context only");
      double term = -1;
      for (int i = 0; i < out.term_count; i++)
        if (out.terms[i].id == LLMEM_TERM_WORKSPACE && out.terms[i].category == LLMEM_CAT_TEMPORARIES)
          term = out.terms[i].value_bytes;
      CHECK_NEAR(term, 67108864.0, 0, "the cuBLAS workspaces term, among the allocated ones");
    }
  }
  /* A simulated out-of-memory (allocator.c make_room): Llama-2-7B LoRA on one GPU, seq 512, peaks at 16.35 GiB
   * allocated. On 14 GiB (13.5 GiB for cudaMalloc beside the 512 MiB context) the tensors alone do not fit;
   * on 17 GiB they would (16.85 GiB with the context) but the segments do not: the cache released, a segment
   * still finds no room. On 40 GiB nothing fails. */
  {
    const char *q = L2_7B "parallel.engine=single parallel.gpus=1 training.seq_len=512 training.finetune.method=lora ";
    const double gib[] = {14, 17, 40};
    const int want[] = {1, 1, 0};
    for (int i = 0; i < 3; i++) {
      char k[512];
      snprintf(k, sizeof k, "%s hardware.memory_gib=%g", q, gib[i]);
      if (!run(k)) continue;
      int oom = 0;
      for (int w = 0; w < out.warning_count; w++) oom |= out.warnings[w] == LLMEM_WARN_ALLOCATOR_OOM;
      CHECK(oom == want[i] && out.fits == !want[i], "%g GiB: out of memory %d (want %d), fits %d", gib[i], oom, want[i],
            out.fits);
      if (i == 1)
        CHECK(out.per_gpu.peak_allocated_bytes + 536870912.0 < 17 * 1073741824.0,
              "17 GiB: allocated and the context fit; the allocator's segments do not");
    }
  }
  autograd_head_buffer();
  return check_report("simulate");
}
