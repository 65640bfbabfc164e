/* Sharded parameters: QLoRA under FSDP / ZeRO-3 (what is gathered, what stays
 * whole on every rank) and ZeRO-3's live gathered parameters
 * (docs/memory-model.md §5.3, §8.3). Expected values are worked by hand. */
#include "allocator.h"
#include <stdio.h>

#include "check.h"
#include "check_plan.h"
#include "internal.h"
#include "sim.h"

static llmem_result out;
static int run(const char *keys) { return run_keys(keys, &out); }

/* The model states of one pipeline stage. */
static rank_states stage_states(const char *keys, int stage) {
  plan pl = plan_for(keys);
  rank_states rs = {0};
  stage_layout st;
  layout_stage(&pl, stage, &st);
  states_for_stage(&pl, &st, &rs);
  return rs;
}

/* The model states of stage 0. */
static rank_states states_of(const char *keys) { return stage_states(keys, 0); }

/* The largest category reading over the events of one phase (layer: -9 any, else that layer). */
static double max_at(int phase, int layer, int category) {
  double m = -1;
  for (int i = 0; i < out.event_count; i++) {
    const llmem_event *e = &out.events[i];
    if (e->phase == phase && (layer == -9 || e->layer == layer) && e->category_bytes[category] > m)
      m = e->category_bytes[category];
  }
  return m;
}

#define L2_7B \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=11008 model.vocab=32000 "
#define QLORA_QV                                                                                     \
  "training.finetune.method=qlora training.finetune.lora_targets=q,v training.finetune.lora_rank=8 " \
  "training.finetune.adapter_dtype=bf16 training.finetune.quant=nf4 training.finetune.double_quant=true "

/* Llama-2-7B, QLoRA NF4 with double quant, LoRA r=8 on q and v (bf16 adapters):
 *   quantised linears  Q = 32 x (4 x 4096^2 + 3 x 4096 x 11008) = 6,476,005,376
 *   left in bf16       B = 2 x 32000 x 4096 + 32 x 2 x 4096 + 4096 = 262,410,240
 *                          (embedding, lm_head, norms)
 *   adapters           A = 32 x 8 x (2 x 4096 + 2 x 4096) = 4,194,304
 *   statistics         S = Q / 64 (uint8 absmax) + 4 Q / (64 x 256) (fp32 absmax) = 101,187,584 + 1,581,056
 *                        = 102,768,640 B, whole on every rank
 *   sharded over 8     (Q / 2 + 2 B + 2 A) / 8 = (3,238,002,688 + 524,820,480 + 8,388,608) / 8 = 471,401,472 B */
static void qlora_sharded(void) {
  const char *fsdp = L2_7B QLORA_QV "parallel.engine=fsdp1 parallel.gpus=8 training.seq_len=16";
  rank_states rs = states_of(fsdp);
  CHECK_NEAR(rs.weights, 471401472.0 + 102768640.0, 1e-15, "FSDP1 QLoRA: packed data sharded, statistics whole");
  /* the root unit (embedding, lm_head, final norm) is not quantised: bf16
   * (2 x 32000 x 4096 + 4096) x 2 B = 524,296,192 B */
  CHECK_NEAR(rs.root_gathered, 524296192.0, 0, "FSDP1 QLoRA root gathered in bf16");
  /* a decoder layer gathers its packed 4-bit data and its bf16 norms, not the
   * statistics: 202,375,168 / 2 + 2 x 4096 x 2 = 101,203,968 B; forward at a
   * middle layer holds weights + root + that layer (FSDP1 prefetch is a comm buffer) */
  if (run(fsdp))
    CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS), 574170112.0 + 524296192.0 + 101203968.0, 1e-15,
               "FSDP1 QLoRA layer gather");
  /* CPU parameter offload moves the flat parameter, not Params4bit.quant_state */
  rank_states off = states_of(L2_7B QLORA_QV
                              "parallel.engine=fsdp1 parallel.gpus=8 parallel.offload_params=cpu "
                              "parallel.offload_optimizer=cpu");
  CHECK_NEAR(off.weights, 102768640.0, 1e-15, "FSDP1 QLoRA offload keeps the statistics on the GPU");
  /* FSDP2 (torchtune, torchao NF4Tensor) shards the scalers with the data:
   * (Q x (1/2 + 1/64 + 4/16384) + 2 B + 2 A) / 8 = (3,340,771,328 + 533,209,088) / 8
   * = 484,247,552 B; its root is bf16 too */
  rank_states f2 = states_of(L2_7B QLORA_QV "parallel.engine=fsdp2 parallel.gpus=8");
  CHECK_NEAR(f2.weights, 484247552.0, 1e-15, "FSDP2 QLoRA: torchao scalers sharded with the data");
  CHECK_NEAR(f2.root_gathered, 524296192.0, 0, "FSDP2 QLoRA root gathered in bf16");
  /* ZeRO-3 partitions parameters only: the same split as FSDP1 */
  rank_states z3 = states_of(L2_7B QLORA_QV "parallel.engine=deepspeed parallel.zero_stage=3 parallel.gpus=8");
  CHECK_NEAR(z3.weights - 32 * 2 * 4096 * 2.0 * 7 / 8, 471401472.0 + 102768640.0, 1e-15,
             "ZeRO-3 QLoRA: packed data partitioned, statistics whole (less the persistent norms)");
}

/* Llama-2-7B full fine-tuning, ZeRO-3 over 8 GPUs, bf16 + fp32 master,
 * stage3_max_live_parameters 1e9, prefetch bucket 5e7, persistence 1e5:
 * the norms (4096 <= 1e5) stay gathered; the other 6,738,415,616 - 266,240
 * = 6,738,149,376 parameters exceed max live, so the coordinator keeps 1e9
 * of them gathered: 1e9 x 2 B = 2,000,000,000 B through the layers and the
 * loss (the lm_head, 131,072,000 x 2 B, is among them). At the loss backward
 * the lm_head's full bf16 gradient, 262,144,000 B, exists before the reduce. */
static void zero3_live(void) {
#define Z3_7B L2_7B "parallel.engine=deepspeed parallel.zero_stage=3 parallel.gpus=8 training.seq_len=16 "
  if (run(Z3_7B)) {
    double setup = max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS);
    CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS) - setup, 2e9, 1e-15, "ZeRO-3 window in a layer");
    CHECK_NEAR(max_at(LLMEM_PHASE_LOSS, -9, LLMEM_CAT_WEIGHTS) - setup, 2e9, 1e-15, "ZeRO-3 window at the loss");
    double grads = max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_GRADIENTS);
    CHECK_NEAR(max_at(LLMEM_PHASE_BACKWARD, -1, LLMEM_CAT_GRADIENTS) - grads, 262144000.0, 1e-15,
               "ZeRO-3 lm_head gradient before the reduce");
  }
  /* max live 1e8: the window is 2e8 B in a layer; the lm_head (262,144,000 B)
   * is fetched whole whatever the budget */
  if (run(Z3_7B "parallel.stage3_max_live_parameters=1e8")) {
    double setup = max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS);
    CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS) - setup, 2e8, 1e-15, "ZeRO-3 window, max live 1e8");
    CHECK_NEAR(max_at(LLMEM_PHASE_LOSS, -9, LLMEM_CAT_WEIGHTS) - setup, 262144000.0, 1e-15, "lm_head over max live");
  }
  /* no prefetch: the running module only, the largest linear 4096 x 11008 x 2 B = 90,177,536 B */
  if (run(Z3_7B "parallel.stage3_prefetch_bucket_size=0")) {
    double setup = max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS);
    CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS) - setup, 90177536.0, 1e-15, "ZeRO-3 no prefetch");
  }
  /* QLoRA: 4-bit data packed in bf16 storage (bnb_4bit_quant_storage = the
   * model dtype) counts Q / 4 elements: 1,619,001,344 + 262,144,000 bf16
   * elements > 1e9, so the window is again 1e9 x 2 B = 2e9 B */
  if (run(L2_7B QLORA_QV "parallel.engine=deepspeed parallel.zero_stage=3 parallel.gpus=8 training.seq_len=16")) {
    double setup = max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS);
    CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS) - setup, 2e9, 1e-12, "ZeRO-3 QLoRA window");
  }
}

/* Event readings of one phase and layer (the first of them when layer -1 has several). */
static const llmem_event *event_at(int phase, int layer, int nth) {
  for (int i = 0; i < out.event_count; i++)
    if (out.events[i].phase == phase && out.events[i].layer == layer && nth-- == 0) return &out.events[i];
  return 0;
}

/* Llama-3-8B full fine-tuning, FSDP2 over 8 GPUs, bf16 parameters, fp32
 * reduce (training.grad_dtype fp32):
 *   embedding = output = 128,256 x 4,096 = 525,336,576 params
 *     gathered in bf16: E = H = 1,050,673,152 B; final norm 4,096 x 2 = 8,192 B
 *   a decoder layer: 2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 2 x 4096
 *     = 218,112,000 params, gathered 436,224,000 B
 * The root unit (default) keeps E + H + 8,192 gathered through the step; with
 * shard_root_modules (torchtune custom_sharded_layers) the root keeps the
 * norm only, so the weights at a middle layer's forward drop by E + H =
 * 2,101,346,304 B. The embedding is gathered at its forward: E + 8,192 over
 * the sharded weights (its copy-out), and its all-gather output E, which FSDP2
 * keeps until layer 0's copy-out (core/fsdp2.c); the output at the loss (H + 8,192). At the loss backward the output is the
 * root's prefetch (H + 8,192 over the sharded weights) and nothing else is in
 * flight; the output's own pre-backward, once the logits' gradient exists,
 * prefetches the last layer (436,224,000 B), and its matmul's backward makes
 * its full bf16 gradient H. After its reshard, the reduce-scatter input is
 * 525,336,576 x 4 = 2,101,346,304 B beside that gradient and the prefetch; the
 * input stays held (ReduceScatterState) into the last layer's backward, whose
 * post-backward frees it before allocating its own (218,112,000 x 4 =
 * 872,448,000 B). */
static void own_root_units(void) {
#define L3_8B                                                                                                    \
  "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 model.vocab=128256 " \
  "parallel.engine=fsdp2 parallel.gpus=8 training.seq_len=16 "
  double root_mode = -1;
  if (run(L3_8B)) {
    root_mode = max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS);
    /* the root's post-backward reshards it (reshard_after_backward): the
     * optimizer step sees the sharded weights only */
    CHECK_NEAR(max_at(LLMEM_PHASE_OPTIMIZER, -9, LLMEM_CAT_WEIGHTS), max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS),
               0, "root resharded before the optimizer step");
    /* the root's pre-backward prefetches the last layer (reverse post-forward order) */
    const llmem_event *loss = event_at(LLMEM_PHASE_BACKWARD, -1, 0);
    CHECK(loss && loss->category_bytes[LLMEM_CAT_COMM_BUFFERS] == 436224000.0,
          "root: last layer prefetched at the loss");
  }
  if (!run(L3_8B "parallel.shard_root_modules=true")) return;
  double setup = max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS);
  double own_mode = max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS);
  CHECK_NEAR(root_mode - own_mode, 2101346304.0, 1e-15, "own units: a middle layer's forward drops E + H");
  CHECK_NEAR(own_mode - setup, 436224000.0 + 8192.0, 1e-15, "own units: the layer and the norm gathered");
  const llmem_event *embed = event_at(LLMEM_PHASE_FORWARD, -1, 0);
  CHECK(embed != 0, "own units: an embedding forward point");
  if (embed) {
    CHECK_NEAR(embed->category_bytes[LLMEM_CAT_WEIGHTS] - setup, 1050673152.0 + 8192.0, 1e-15, "embedding gathered");
    CHECK_NEAR(embed->category_bytes[LLMEM_CAT_COMM_BUFFERS], 1050673152.0, 1e-15, "its all-gather output held");
  }
  CHECK_NEAR(max_at(LLMEM_PHASE_LOSS, -9, LLMEM_CAT_WEIGHTS) - setup, 1050673152.0 + 8192.0, 1e-15,
             "output gathered at the loss");
  const llmem_event *loss = event_at(LLMEM_PHASE_BACKWARD, -1, 0), *head = event_at(LLMEM_PHASE_BACKWARD, -1, 1),
                    *reduce = event_at(LLMEM_PHASE_BACKWARD, -1, 2);
  CHECK(loss && head && reduce, "own units: loss backward, output backward and reduce-scatter points");
  if (loss && head && reduce) {
    CHECK_NEAR(loss->category_bytes[LLMEM_CAT_WEIGHTS] - setup, 1050673152.0 + 8192.0, 1e-15, "output regathered");
    CHECK_NEAR(loss->category_bytes[LLMEM_CAT_COMM_BUFFERS], 0, 0, "no layer prefetched at the loss");
    CHECK_NEAR(loss->category_bytes[LLMEM_CAT_GRADIENTS], 0, 0, "no gradient at the loss");
    CHECK_NEAR(head->category_bytes[LLMEM_CAT_WEIGHTS] - setup, 1050673152.0 + 8192.0, 1e-15, "output gathered");
    CHECK_NEAR(head->category_bytes[LLMEM_CAT_COMM_BUFFERS], 436224000.0, 1e-15, "last layer prefetched");
    /* the output's full gradient, and the root's final norm's (8,192 B) */
    CHECK_NEAR(head->category_bytes[LLMEM_CAT_GRADIENTS], 1050673152.0 + 8192.0, 1e-15, "output's full gradient");
    CHECK_NEAR(reduce->category_bytes[LLMEM_CAT_WEIGHTS] - setup, 8192.0, 1e-15, "output resharded");
    CHECK_NEAR(reduce->category_bytes[LLMEM_CAT_COMM_BUFFERS], 2101346304.0 + 436224000.0, 1e-15,
               "reduce-scatter input beside the prefetch");
    CHECK_NEAR(reduce->category_bytes[LLMEM_CAT_GRADIENTS], 1050673152.0 + 8192.0, 1e-15,
               "output gradient alive until the reduce");
  }
  /* the last layer's backward runs beside the output's held input; its post-backward holds its own */
  const llmem_event *last = event_at(LLMEM_PHASE_BACKWARD, 31, 0), *last_reduce = event_at(LLMEM_PHASE_BACKWARD, 31, 1);
  CHECK(last && last_reduce, "own units: the last layer's backward and post-backward points");
  if (last && last_reduce) {
    CHECK_NEAR(last->category_bytes[LLMEM_CAT_COMM_BUFFERS], 2101346304.0 + 436224000.0, 1e-15,
               "last layer: the output's input held, layer 30 prefetched");
    CHECK_NEAR(last_reduce->category_bytes[LLMEM_CAT_COMM_BUFFERS], 872448000.0 + 436224000.0, 1e-15,
               "last layer's post-backward: its own input instead");
  }
  /* tied embeddings: the output uses the embedding's weight; all stays in the root */
  rank_states tied = states_of(L3_8B "model.tied_embeddings=true parallel.shard_root_modules=true");
  CHECK_NEAR(tied.root_gathered, 1050673152.0 + 8192.0, 0, "tied: embedding in the root");
}

/* FSDP2's backward, unit by unit (core/passes.c layer_backward_fsdp2; pytorch
 * _fsdp_param_group.py post_backward 002a76fbf, _fsdp_collectives.py
 * foreach_reduce 010ae4a8), on the Llama-3-8B shape above over 8 ranks, bf16
 * parameters, fp32 reduce, 16 tokens:
 *   a layer: P = 218,112,000 params, gathered 2P = 436,224,000 B, its full bf16
 *     gradients 436,224,000 B, of which down_proj's 4,096 x 14,336 x 2 =
 *     117,440,512 B; reduce-scatter input 4P = 872,448,000 B; its sharded fp32
 *     gradient 4P / 8 = 109,056,000 B;
 *   the root: embedding + output + final norm gathered 2 x 1,050,673,152 +
 *     8,192 = 2,101,354,496 B; its input (2 x 525,336,576 + 4,096) x 4 =
 *     4,202,708,992 B; the output's and the embedding's full gradients
 *     1,050,673,152 B each.
 * 1. Sharded gradients are reduce-scatter outputs: none at the loss, a layer's
 *    only after its own post-backward, the root's after the root's.
 * 2. The output's full gradient comes from its matmul's backward, after the
 *    loss's fp32 gradients are freed: not at the loss backward.
 * 3. A unit's post-backward frees the input the unit above left held, after
 *    resharding, before allocating its own: the backward of layer i runs beside
 *    layer i+1's input; layer 31's beside none (the root reduces last).
 * 4. At the layer's working-set peak (the MLP's gradient chain) only down_proj's
 *    weight gradient exists; the rest before its post-backward.
 * 5. The root reshards before its input is allocated, after layer 0's input
 *    is freed; its sharded gradients come beside the input. */
static const llmem_event *backward_at(int layer, int nth) { return event_at(LLMEM_PHASE_BACKWARD, layer, nth); }

static void fsdp2_post_backward(void) {
  const double layer = 436224000.0, input = 872448000.0, shard = 109056000.0, down = 117440512.0;
  const double root = 2101354496.0, root_input = 4202708992.0, table = 1050673152.0;
  if (!run(L3_8B)) return;
  double setup = max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS);
  const llmem_event *loss = backward_at(-1, 0);
  CHECK(loss != 0, "a loss backward point");
  if (loss) {
    CHECK_NEAR(loss->category_bytes[LLMEM_CAT_GRADIENTS], 0, 0, "1, 2: no gradient at the loss backward");
    CHECK_NEAR(loss->category_bytes[LLMEM_CAT_COMM_BUFFERS], layer, 0, "layer 31 prefetched by the root");
  }
  const llmem_event *l31 = backward_at(31, 0), *l31_post = backward_at(31, 1);
  const llmem_event *l30 = backward_at(30, 0), *l30_post = backward_at(30, 1);
  CHECK(l31 && l31_post && l30 && l30_post, "two points per layer: its working set, its post-backward");
  if (l31 && l31_post && l30 && l30_post) {
    CHECK_NEAR(l31->category_bytes[LLMEM_CAT_GRADIENTS], table + down, 1e-15, "2, 4: output's and down_proj's");
    CHECK_NEAR(l31->category_bytes[LLMEM_CAT_COMM_BUFFERS], layer, 0, "3: layer 31 beside no held input");
    CHECK_NEAR(l31->category_bytes[LLMEM_CAT_WEIGHTS] - setup, root + layer, 1e-15, "layer 31 gathered");
    CHECK_NEAR(l31_post->category_bytes[LLMEM_CAT_WEIGHTS] - setup, root, 1e-15, "resharded before its reduce");
    CHECK_NEAR(l31_post->category_bytes[LLMEM_CAT_GRADIENTS], table + layer, 1e-15, "4: its full gradients");
    CHECK_NEAR(l31_post->category_bytes[LLMEM_CAT_COMM_BUFFERS], input + layer, 1e-15,
               "its input, layer 30's prefetch");
    CHECK_NEAR(l30->category_bytes[LLMEM_CAT_GRADIENTS], table + shard + down, 1e-15, "1: layer 31's sharded");
    CHECK_NEAR(l30->category_bytes[LLMEM_CAT_COMM_BUFFERS], input + layer, 1e-15, "3: layer 31's input held");
    CHECK_NEAR(l30_post->category_bytes[LLMEM_CAT_GRADIENTS], table + shard + layer, 1e-15, "1: not yet its own");
    CHECK_NEAR(l30_post->category_bytes[LLMEM_CAT_COMM_BUFFERS], input + layer, 1e-15, "3: its own input only");
  }
  const llmem_event *embed = backward_at(LLMEM_LAYER_EMBEDDING, 0), *reduce = backward_at(LLMEM_LAYER_EMBEDDING, 1),
                    *output = backward_at(LLMEM_LAYER_EMBEDDING, 2);
  CHECK(embed && reduce && output, "embedding, root reduce-scatter and its output points");
  if (embed && reduce && output) {
    CHECK_NEAR(embed->category_bytes[LLMEM_CAT_WEIGHTS] - setup, root, 1e-15, "root gathered at the embedding");
    CHECK_NEAR(embed->category_bytes[LLMEM_CAT_COMM_BUFFERS], input, 1e-15, "layer 0's input held");
    CHECK_NEAR(embed->category_bytes[LLMEM_CAT_GRADIENTS], 32 * shard + 2 * table, 1e-15,
               "layers' sharded, root's full");
    CHECK_NEAR(reduce->category_bytes[LLMEM_CAT_WEIGHTS] - setup, 0, 0, "5: root resharded");
    CHECK_NEAR(reduce->category_bytes[LLMEM_CAT_COMM_BUFFERS], root_input, 1e-15, "5: layer 0's input freed");
    CHECK_NEAR(reduce->category_bytes[LLMEM_CAT_GRADIENTS], 32 * shard + 2 * table, 1e-15, "copy-in");
    CHECK_NEAR(output->category_bytes[LLMEM_CAT_GRADIENTS], 4015130624.0, 1e-15, "1: every sharded gradient");
    CHECK_NEAR(output->category_bytes[LLMEM_CAT_COMM_BUFFERS], root_input, 1e-15, "the input still live");
  }
  /* reshard_after_forward=false: no all-gather in the backward, each layer resharded by its
   * post-backward (reshard_after_backward) */
  if (!run(L3_8B "parallel.reshard_after_forward=false")) return;
  CHECK_NEAR(backward_at(-1, 0)->category_bytes[LLMEM_CAT_COMM_BUFFERS], 0, 0, "kept: nothing prefetched");
  l30 = backward_at(30, 0), l30_post = backward_at(30, 1);
  CHECK(l30 && l30_post, "kept: layer 30's points");
  if (l30 && l30_post) {
    CHECK_NEAR(l30->category_bytes[LLMEM_CAT_WEIGHTS] - setup, root + 31 * layer, 1e-15, "kept: layer 31 resharded");
    CHECK_NEAR(l30->category_bytes[LLMEM_CAT_COMM_BUFFERS], input, 1e-15, "kept: the held input only");
    CHECK_NEAR(l30_post->category_bytes[LLMEM_CAT_WEIGHTS] - setup, root + 30 * layer, 1e-15, "kept: 30 resharded");
  }
  /* one rank: the reduce-scatter output is the input's size, beside it (4,202,708,992 B fp32), once
   * the root's full bf16 gradients (2,101,346,304 B) are freed: the higher of the two points */
  if (!run(L3_8B "parallel.gpus=1")) return;
  reduce = backward_at(LLMEM_LAYER_EMBEDDING, 1), output = backward_at(LLMEM_LAYER_EMBEDDING, 2);
  CHECK(reduce && output, "one rank: the root's reduce-scatter points");
  if (reduce && output)
    CHECK_NEAR(output->total_bytes - reduce->total_bytes, root_input - 2 * table, 1e-15, "one rank: output + input");
}

/* FSDP1 wrapping leaves its flattening buffers cached (core/step_blocks.c):
 * Llama-3.1-8B on 8 GPUs, a 128-token step whose working set is far below
 * the largest unit, the root (embedding + output + final norm: 2 x 128,256 x
 * 4,096 + 4,096 = 1,050,677,248 params x 2 B = 2,101,354,496 B unsharded).
 * The wrap holds a unit's original parameters and its flat copy at once;
 * both blocks stay reserved unless the cache is emptied after set-up, so the
 * difference lies between one and two root units (2 MiB-rounded segments). */
static void fsdp1_residue(void) {
  const char *base = "parallel.engine=fsdp1 training.seq_len=128 runtime.framework_version=2025-01";
  char keys[256];
  double unit = 1050677248.0 * 2, mib2 = 2097152;
  snprintf(keys, sizeof keys, "%s runtime.empty_cache_after_init=false", base);
  if (!run(keys)) return;
  double kept = out.per_gpu.peak_reserved_bytes, allocated = out.per_gpu.peak_allocated_bytes;
  snprintf(keys, sizeof keys, "%s runtime.empty_cache_after_init=true", base);
  if (!run(keys)) return;
  double emptied = out.per_gpu.peak_reserved_bytes;
  CHECK(out.per_gpu.peak_allocated_bytes == allocated, "the cache does not change allocated");
  CHECK(kept - emptied >= unit, "at least the root unit stays reserved: %.0f", kept - emptied);
  CHECK(kept - emptied <= 2 * (ceil(unit / mib2) * mib2), "at most the original and flat blocks: %.0f", kept - emptied);
  if (!run("parallel.engine=fsdp2 training.seq_len=128 runtime.empty_cache_after_init=false")) return;
  double fsdp2 = out.per_gpu.peak_reserved_bytes;
  if (!run("parallel.engine=fsdp2 training.seq_len=128 runtime.empty_cache_after_init=true")) return;
  CHECK(out.per_gpu.peak_reserved_bytes == fsdp2, "FSDP2 shards at construction: nothing to empty");
}

/* FSDP1 QLoRA wrapping by bytes, originals held through the shard
 * (core/step_blocks.c fsdp1_setup): Llama-2-7B QLoRA as above on 2 GPUs.
 * The root unit is bf16: (2 x 32000 x 4096 + 4096) x 2 B = 524,296,192 B
 * unsharded, a 502 MiB segment (2 MiB rounding: 526,385,152 B). Its
 * originals and its flat copy are both live while shard() clones the
 * rank's half (262,148,096 B, a segment of its own), so both 502 MiB blocks
 * stay cached: emptying the cache after set-up frees at least 2 x 526,385,152
 * = 1,052,770,304 B. A decoder layer's unit is far smaller:
 * 202,375,168 / 2 (4-bit) + (2 x 4096 + 2 x 4 x 4096 x 8) x 2 = 101,466,112 B
 * (98 MiB segments), two of them cached beside the root's at most. Split by
 * parameters the root got 3.8 % of the rank's weights (~0.25 GB): below the
 * first bound. */
/* What torch.cuda.empty_cache() after set-up takes off the reserved peak (-1: a run failed). */
static double freed_by_empty_cache(const char *base) {
  char keys[512];
  snprintf(keys, sizeof keys, "%s runtime.empty_cache_after_init=false", base);
  if (!run(keys)) return -1;
  double kept = out.per_gpu.peak_reserved_bytes;
  snprintf(keys, sizeof keys, "%s runtime.empty_cache_after_init=true", base);
  if (!run(keys)) return -1;
  return kept - out.per_gpu.peak_reserved_bytes;
}

static void fsdp1_qlora_root(void) {
  double freed = freed_by_empty_cache(L2_7B QLORA_QV "parallel.engine=fsdp1 parallel.gpus=2 training.seq_len=16 ");
  if (freed < 0) return;
  double mib = 1048576;
  CHECK(freed >= 2 * 526385152.0, "the root's originals and flat copy stay cached: %.0f", freed);
  CHECK(freed <= 2 * 526385152.0 + 2 * 98 * mib, "and at most two layer units beside: %.0f", freed);
}

/* FSDP1 with CPUOffload(offload_params=True) wraps on the GPU too when
 * device_id is given: _move_module_to_device moves the unit's CPU
 * parameters to the device, FlatParamHandle flattens and shard() clones
 * there, then flat_param_to(cpu) moves the shard off
 * (torch/distributed/fsdp/_init_utils.py v2.2.0; core/step_blocks.c). The
 * Llama-2-7B QLoRA case above, offloaded: the root's originals and flat copy
 * (2 x 526,385,152 B segments) and its shard's segment (262,148,096 B ->
 * 126 x 2 MiB = 264,241,152 B) all stay cached, the shard freed as well; at
 * most three 98 MiB layer-unit segments beside them. */
static void fsdp1_offload_residue(void) {
  double freed = freed_by_empty_cache(L2_7B QLORA_QV
                                      "parallel.engine=fsdp1 parallel.gpus=2 training.seq_len=16 "
                                      "parallel.offload_params=cpu parallel.offload_optimizer=cpu ");
  if (freed < 0) return;
  double mib = 1048576, root = 2 * 526385152.0 + 264241152.0;
  CHECK(freed >= root, "offload: the root's originals, flat copy and shard stay cached: %.0f", freed);
  CHECK(freed <= root + 3 * 98 * mib, "and at most three layer-unit segments beside: %.0f", freed);
}

/* LoRA with the embedding and lm_head trained in full (PEFT modules_to_save):
 * Llama-2-7B shape, one GPU, bf16 base, AdamW. Each module gets a trainable
 * bf16 copy beside its frozen original, C = 2 x 32000 x 4096 = 262,144,000
 * parameters: weights + 2C B, gradients + 2C B, AdamW states (like the
 * parameter, bf16) + 2 x 2C B; trainable + C. Under FSDP over 8 each is /8;
 * under ZeRO-2 with fp32 masters the copies add an fp32 master and states. */
static void full_modules(void) {
  const double C = 2.0 * 32000 * 4096;
  const char *lora = L2_7B
      "parallel.gpus=1 parallel.engine=single training.finetune.method=lora "
      "training.finetune.lora_targets=q,v training.finetune.lora_rank=8 ";
  char with[512];
  snprintf(with, sizeof with, "%s training.finetune.full_modules=embedding,head", lora);
  rank_states a = states_of(lora), b = states_of(with);
  CHECK_NEAR(b.weights - a.weights, 2 * C, 0, "copies in bf16 beside the originals");
  CHECK_NEAR(b.gradients - a.gradients, 2 * C, 0, "their bf16 gradients");
  CHECK_NEAR(b.optimizer - a.optimizer, 2 * 2 * C, 0, "AdamW states like the parameter (bf16)");
  CHECK_NEAR(b.master - a.master, 0, 0, "no master: torch.optim updates the bf16 copy");
  run(lora);
  double trainable = out.params_trainable;
  run(with);
  CHECK_NEAR(out.params_trainable - trainable, C, 0, "trainable: the two copies");
  snprintf(with, sizeof with, "%s training.finetune.full_modules=head model.tied_embeddings=true", lora);
  char tied[512];
  snprintf(tied, sizeof tied, "%s model.tied_embeddings=true", lora);
  CHECK_NEAR(states_of(with).weights - states_of(tied).weights, C, 0, "tied head: one copy of the shared table");
  /* FSDP over 8 GPUs: every copy sharded */
  const char *fsdp = L2_7B
      "parallel.gpus=8 parallel.engine=fsdp2 training.finetune.method=lora "
      "training.finetune.lora_targets=q,v training.finetune.lora_rank=8 ";
  snprintf(with, sizeof with, "%s training.finetune.full_modules=embedding,head", fsdp);
  a = states_of(fsdp), b = states_of(with);
  CHECK_NEAR(b.weights - a.weights, 2 * C / 8, 1e-12, "FSDP: copies sharded");
  CHECK_NEAR(b.optimizer - a.optimizer, 4 * C / 8, 1e-12, "FSDP: their states sharded");
  /* ignored without adapters: full fine-tuning trains everything already */
  CHECK_NEAR(states_of(L2_7B "training.finetune.full_modules=embedding").weights, states_of(L2_7B).weights, 0,
             "full fine-tuning: no copy");
}


/* torch.distributed.pipelining's per-micro-batch buffers (states.c
 * pipeline_buffers). 4 layers, hidden 256, vocab 1000, micro-batch 2 x 64
 * tokens, bf16, 4 micro-batches, PP 2, TP 2 with SP:
 *   stage output (hidden) = 128 * 256 * 2 / 2 (SP) = 32768 bytes;
 *   logits (vocab-parallel) = 128 * 1000 / 2 * 2 = 128000 bytes. */
static void pipeline_stage_buffers(void) {
#define PP_TOY                                                                                                    \
  "model.layers=4 model.hidden=256 model.heads=4 model.kv_heads=4 model.ffn_hidden=512 model.vocab=1000 "         \
  "training.micro_batch=2 training.seq_len=64 training.grad_accum=4 parallel.gpus=4 parallel.tp=2 parallel.pp=2 " \
  "parallel.sequence_parallel=true "
  double n = 4, hidden = 32768, logits = 128000;
  rank_states none0 = stage_states(PP_TOY "parallel.pp_stage_buffers=0", 0);
  rank_states none1 = stage_states(PP_TOY "parallel.pp_stage_buffers=0", 1);
  rank_states all0 = stage_states(PP_TOY "parallel.pp_stage_buffers=2", 0);
  rank_states all1 = stage_states(PP_TOY "parallel.pp_stage_buffers=2", 1);
  rank_states last0 = stage_states(PP_TOY "parallel.pp_stage_buffers=1", 0);
  rank_states last1 = stage_states(PP_TOY "parallel.pp_stage_buffers=1", 1);
  CHECK_NEAR(none0.pp_kept_act + none0.pp_kept_logits + none1.pp_kept_act + none1.pp_kept_logits, 0, 0, "0: none kept");
  /* first stage: a gradient receive buffer per micro-batch, and (2) its outputs */
  CHECK_NEAR(all0.comm_persistent - none0.comm_persistent, n * hidden, 1e-12, "grad receive buffers");
  CHECK_NEAR(all0.pp_kept_act, n * hidden, 1e-12, "2: first stage keeps its outputs");
  CHECK_NEAR(last0.pp_kept_act, 0, 0, "1: first stage keeps none");
  CHECK_NEAR(last0.comm_persistent - none0.comm_persistent, n * hidden, 1e-12, "1: receive buffers stay");
  /* last stage: nothing to receive in backward, every micro-batch's logits kept (the one under way
   * is the loss's own: n - 1 besides it) */
  CHECK_NEAR(all1.comm_persistent - none1.comm_persistent, 0, 0, "last stage: no gradient receives");
  CHECK_NEAR(all1.pp_kept_logits, (n - 1) * logits, 1e-12, "2: last stage keeps the logits");
  CHECK_NEAR(last1.pp_kept_logits, (n - 1) * logits, 1e-12, "1: last stage keeps the logits");
  CHECK_NEAR(all1.pp_kept_act, 0, 0, "last stage: no hidden output");
  /* the torchtitan profile: every stage before pytorch #153383 (2025-05), the last after */
  rank_states t24 = stage_states(PP_TOY "runtime.framework=torchtitan runtime.framework_version=2024-12", 0);
  rank_states t25 = stage_states(PP_TOY "runtime.framework=torchtitan runtime.framework_version=2025-06", 0);
  CHECK_NEAR(t24.pp_kept_act, n * hidden, 1e-12, "torchtitan 2024-12: every stage");
  CHECK_NEAR(t25.pp_kept_act, 0, 0, "torchtitan 2025-06: last stage only");
  CHECK_NEAR(stage_states(PP_TOY, 1).pp_kept_logits, 0, 0, "generic: no pipelining buffers");
  /* schedule.step(return_outputs=False) (pytorch #165822): the last stage keeps no logits, the receive buffers stay;
   * torchtitan passes it from 2025-10 (#1922) */
  rank_states kept = stage_states(PP_TOY "parallel.pp_stage_buffers=1 parallel.pp_returns_outputs=false", 1);
  rank_states kept0 = stage_states(PP_TOY "parallel.pp_stage_buffers=1 parallel.pp_returns_outputs=false", 0);
  CHECK_NEAR(kept.pp_kept_logits, 0, 0, "return_outputs=False: no logits kept");
  CHECK_NEAR(kept0.comm_persistent, last0.comm_persistent, 0, "return_outputs=False: receive buffers stay");
  rank_states t2509 = stage_states(PP_TOY "runtime.framework=torchtitan runtime.framework_version=2025-09", 1);
  rank_states t2510 = stage_states(PP_TOY "runtime.framework=torchtitan runtime.framework_version=2025-10", 1);
  CHECK_NEAR(t2509.pp_kept_logits, (n - 1) * logits, 1e-12, "torchtitan 2025-09: the last stage's logits kept");
  CHECK_NEAR(t2510.pp_kept_logits, 0, 0, "torchtitan 2025-10: none");
#undef PP_TOY
}

/* FSDP2's sharded gradients are its reduce-scatter outputs, allocated under the
 * reduce-scatter stream (foreach_reduce: reduce_scatter_input.new_empty inside
 * torch.cuda.stream(reduce_scatter_stream)); the caching allocator keeps a pool
 * per stream, so once zero_grad frees them the compute stream cannot reuse them.
 * Llama-3-8B on 8 GPUs, a decoder layer: 2 x 4096^2 + 2 x 1024 x 4096 + 3 x 4096
 * x 14336 + 2 x 4096 = 218,112,000 parameters, fp32 shard 218,112,000 / 8 x 4 =
 * 109,056,000 B, one segment rounded to 2 MiB: 53 x 2,097,152 = 111,149,056 B.
 * Freed, then a compute request of the same size: a second segment (222,298,112 B
 * reserved) where a compute-stream gradient's block would be reused (111,149,056 B). */
static double regrown_reserved(int grad_stream) {
  alloc_settings s = {INFINITY, 0, INFINITY, 0, 1e9};
  alloc_reset(&s);
  alloc_malloc(1, 109056000.0, grad_stream);
  alloc_free(1, 0); /* zero_grad(set_to_none=True) */
  alloc_malloc(2, 109056000.0, ALLOC_STREAM_COMPUTE);
  return alloc_get_stats()->reserved_bytes;
}

static void fsdp2_gradient_stream(void) {
  rank_states r2 = states_of(L3_8B);
  CHECK(r2.gradients_lazy && r2.gradients_reduce_stream, "FSDP2: gradients made under the reduce-scatter stream");
  /* 8,030,261,248 parameters / 8 x 4 B */
  CHECK_NEAR(r2.gradients, 4015130624.0, 0, "FSDP2: fp32 sharded gradients");
  CHECK(!states_of(L3_8B "parallel.offload_params=cpu parallel.offload_optimizer=cpu").gradients_reduce_stream,
        "offloaded: copied to the host");
  CHECK(!states_of("parallel.engine=fsdp1 parallel.gpus=8").gradients_reduce_stream, "FSDP1: not this path");
  CHECK_NEAR(regrown_reserved(ALLOC_STREAM_REDUCE), 222298112.0, 0, "reduce-scatter pool: not reused by compute");
  CHECK_NEAR(regrown_reserved(ALLOC_STREAM_COMPUTE), 111149056.0, 0, "compute pool: reused");
}

/* FSDP1 with CPUOffload(offload_params=True): pre_unshard copies the rank's
 * shard to the GPU under the pre-unshard stream before each all-gather
 * (_flat_param.py pre_unshard, _runtime_utils.py _unshard). Llama-2-70B QLoRA
 * NF4 on 2 GPUs, a decoder layer's flat parameter: 4-bit data of
 * 2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 28672 = 855,638,016 weights,
 * 427,819,008 B, and two bf16 norms of 8192, 32,768 B: gathered 427,851,776 B,
 * the rank's shard 213,925,888 B, one segment of the pre-unshard pool rounded to
 * 2 MiB: 103 x 2,097,152 = 216,006,656 B. Freed once the all-gather has read it;
 * a compute request of the same size then opens a segment of its own. */
#define L2_70B_OFF                                                                                              \
  "model.layers=80 model.hidden=8192 model.heads=64 model.kv_heads=8 model.ffn_hidden=28672 model.vocab=32000 " \
  "training.seq_len=16 training.finetune.method=qlora training.finetune.adapter_dtype=bf16 "                    \
  "parallel.engine=fsdp1 parallel.gpus=2 "
/* Stage 0's walk of "path=value ..." (one at a time: the plan, layout and states are kept here), with
 * the allocator reset to an unbounded device and a sim feeding it. */
static const stage_walk *walk_of(const char *keys, sim *S) {
  static plan pl;
  static stage_layout st;
  static rank_states rs;
  static stage_walk W;
  pl = plan_for(keys);
  memset(&rs, 0, sizeof rs);
  layout_stage(&pl, 0, &st);
  states_for_stage(&pl, &st, &rs);
  walk_init(&W, &pl, &st, &rs, 0);
  alloc_settings s = {INFINITY, 0, INFINITY, 0, 1e9};
  alloc_reset(&s);
  memset(S, 0, sizeof *S);
  S->blocks = 1;
  return &W;
}

static double copied_in(const char *keys, double *gathered) {
  sim S;
  const stage_walk *W = walk_of(keys, &S);
  *gathered = walk_layer_cost(W, 0)->gather;
  copy_in_shard(W, &S, block_tag(TAG_GATHER, 0, 0, 0), *gathered);
  return alloc_get_stats()->reserved_bytes;
}

/* FSDP2's unshard and reshard as allocator requests (core/fsdp2.c), Llama-3-8B over 8 GPUs: a layer's
 * 9 parameter tensors gathered in bf16, G = 436,224,000 B, each rank's shard G / 8 = 54,528,000 B.
 * Forward: layer 0's pre-forward allocates the shard's copy-in and the output G on the all-gather
 * stream, drops the copy-in, copies the output out into one block per tensor (G in all) and keeps
 * the output: 2 G live. After layer 0's reshard, layer 1's all-gather comes while layer 0's output is
 * still kept: 2 G + G / 8 at the top, then layer 0's output goes and layer 1's copy-out comes: 2 G.
 * The root's post-forward drops layer 1's output. Backward: layer 1's pre-backward gathers it again and
 * drops the output after the copy-out; its prefetch of layer 0 is held past its reshard, and layer 0's
 * pre-backward copies it out with no all-gather of its own: 9 requests and one free. */
static void fsdp2_unshard_blocks(void) {
  sim S;
  const stage_walk *W = walk_of(L3_8B, &S);
  double g = walk_layer_cost(W, 0)->gather;
  CHECK_NEAR(g, 436224000.0, 0, "FSDP2: a Llama-3-8B layer gathered");
  const alloc_stats *a = alloc_get_stats();
  fsdp2_pre_forward(W, &S, block_tag(TAG_GATHER, 0, MB_NONE, 0), 0, 0, g);
  int tensors = 0;
  while (alloc_is_live(block_tag(TAG_GATHER, 0, MB_NONE, tensors))) tensors++;
  CHECK(tensors == 9, "layer 0 copied out per parameter tensor");
  CHECK_NEAR(a->allocated_bytes, 2 * g, 0, "copy-out and the kept output");
  CHECK_NEAR(S.cat[LLMEM_CAT_WEIGHTS] + S.cat[LLMEM_CAT_COMM_BUFFERS], 2 * g, 0, "the same in the categories");
  fsdp2_reshard(&S, block_tag(TAG_GATHER, 0, MB_NONE, 0), g);
  CHECK(!alloc_is_live(block_tag(TAG_GATHER, 0, MB_NONE, 0)), "layer 0 resharded");
  fsdp2_pre_forward(W, &S, block_tag(TAG_GATHER, 1, MB_NONE, 0), 1, 0, g);
  CHECK_NEAR(a->peak_allocated_bytes, 2 * g + g / 8, 0, "layer 1's all-gather beside layer 0's kept output");
  CHECK_NEAR(a->allocated_bytes, 2 * g, 0, "layer 0's output dropped after layer 1's copy-out");
  fsdp2_forward_done(&S);
  CHECK_NEAR(a->allocated_bytes, g, 0, "the root's post-forward drops the last output");
  fsdp2_reshard(&S, block_tag(TAG_GATHER, 1, MB_NONE, 0), g);
  fsdp2_pre_backward(W, &S, block_tag(TAG_REGATHER, 1, MB_NONE, 0), 1, 0, g);
  CHECK_NEAR(a->allocated_bytes, g, 0, "backward: the output dropped after the copy-out");
  fsdp2_prefetch(W, &S, 0, 0, g);
  CHECK_NEAR(a->allocated_bytes, 2 * g, 0, "layer 0 prefetched");
  fsdp2_reshard(&S, block_tag(TAG_REGATHER, 1, MB_NONE, 0), g);
  double ops = a->ops;
  fsdp2_pre_backward(W, &S, block_tag(TAG_REGATHER, 0, MB_NONE, 0), 0, 0, g);
  CHECK_NEAR(a->allocated_bytes, g, 0, "layer 0 copied out from its prefetch, which goes");
  CHECK_NEAR(a->ops - ops, 10, 0, "no all-gather of its own");
  CHECK_NEAR(S.cat[LLMEM_CAT_COMM_BUFFERS], 0, 0, "no output left");
}

static void fsdp1_offload_copy_in(void) {
  CHECK(states_of(L2_70B_OFF "parallel.offload_params=cpu parallel.offload_optimizer=cpu").copy_in_shards,
        "FSDP1 offload copies shards in");
  CHECK(!states_of(L2_70B_OFF).copy_in_shards, "FSDP1 on the GPU: nothing to copy in");
  CHECK(!states_of(L2_70B_OFF "parallel.engine=fsdp2 parallel.offload_params=cpu parallel.offload_optimizer=cpu")
             .copy_in_shards,
        "FSDP2: not this path");
  double gathered = 0;
  double reserved = copied_in(L2_70B_OFF "parallel.offload_params=cpu parallel.offload_optimizer=cpu", &gathered);
  CHECK_NEAR(gathered, 427851776.0, 0, "a 70B QLoRA layer gathered");
  CHECK_NEAR(reserved, 216006656.0, 0, "its shard in the pre-unshard pool");
  CHECK_NEAR(alloc_get_stats()->allocated_bytes, 0, 0, "freed after the all-gather");
  alloc_sync();
  alloc_malloc(9, 213925888.0, ALLOC_STREAM_COMPUTE);
  CHECK_NEAR(alloc_get_stats()->reserved_bytes, 432013312.0, 0, "not reused by the compute stream");
  CHECK_NEAR(copied_in(L2_70B_OFF, &gathered), 0, 0, "no offload: no copy");
}

/* FSDP2 under torch.autocast with param_dtype float32 (Lightning Fabric "bf16-mixed"; training.autocast), Llama-3-8B
 * shape with per-module root units, 8 GPUs, 16 tokens. A layer holds L = 2 x 4096^2 + 2 x 4096 x 1024 (q, o; k, v)
 * + 3 x 4096 x 14336 (MLP) = 218,103,808 linear + 8,192 norm = 218,112,000 parameters. In layer k's forward (from 0) the weights are the
 * gathered layer in fp32 (4 L = 872,448,000 B) with the final norm (4,096 x 4 = 16,384 B; 2 B each without
 * autocast) and the 16-bit casts of layers 0..k, 2 L each, which the matmuls keep for their backward; at the
 * last layer's backward every layer's casts are still held. The unsharded gradients there (the last layer's and
 * the final norm's) are fp32: 2 B a parameter more than under FSDP's bf16 param_dtype. */
static void fsdp_autocast(void) {
  const char *keys = L3_8B "parallel.shard_root_modules=true training.autocast=true";
  double layer = 218112000.0;
  if (!run(L3_8B "parallel.shard_root_modules=true")) return;
  double grads_bf16 = max_at(LLMEM_PHASE_BACKWARD, 31, LLMEM_CAT_GRADIENTS);
  CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS), 2 * layer + 8192, 1e-15, "bf16 param_dtype: no casts");
  if (!run(keys)) return;
  CHECK_NEAR(max_at(LLMEM_PHASE_SETUP, -9, LLMEM_CAT_WEIGHTS), 0, 0, "the fp32 shards are the master copy");
  CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 0, LLMEM_CAT_WEIGHTS), 4 * layer + 16384 + 2 * layer, 1e-15,
             "layer 0: gathered in fp32, its casts");
  CHECK_NEAR(max_at(LLMEM_PHASE_FORWARD, 5, LLMEM_CAT_WEIGHTS), 4 * layer + 16384 + 6 * 2 * layer, 1e-15,
             "layer 5: the casts of layers 0..5 held");
  CHECK_NEAR(max_at(LLMEM_PHASE_BACKWARD, 31, LLMEM_CAT_WEIGHTS), 4 * layer + 16384 + 32 * 2 * layer, 1e-15,
             "last layer's backward: every layer's casts");
  CHECK_NEAR(max_at(LLMEM_PHASE_BACKWARD, 31, LLMEM_CAT_GRADIENTS) - grads_bf16, 2 * layer + 2 * 4096, 1e-15,
             "fp32 unsharded gradients of the layer and the final norm");
  rank_states rs = states_of(keys);
  CHECK(rs.unsharded_weight_bytes == 4 && rs.unsharded_grad_bytes == 4, "fp32 gathers and unsharded gradients");
}

/* Gradient accumulation under FSDP1's no_sync (parallel.accumulate_no_sync; HF Trainer and LitGPT on FSDP1), the
 * Llama-3-8B shape on 8 GPUs, 4 micro-batches of 16 tokens. Every unit keeps its unsharded bf16 gradient from
 * the first micro-batch to the last one's reduce-scatter: the 32 layers' 32 x 218,112,000 x 2 B =
 * 13,959,168,000 B and the root unit's embedding and output, 2 x 128,256 x 4,096 x 2 B = 2,101,346,304 B; at the
 * last micro-batch's first backward layer (and at the step's peak) they are all held, 16,060,514,304 B more than
 * with a reduce-scatter every micro-batch. */
static void fsdp1_no_sync(void) {
  const char *keys =
      "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 "
      "model.vocab=128256 parallel.engine=fsdp1 parallel.gpus=8 training.seq_len=16 training.grad_accum=4 ";
  char synced[512], no_sync[512];
  snprintf(synced, sizeof synced, "%s parallel.accumulate_no_sync=false", keys);
  snprintf(no_sync, sizeof no_sync, "%s parallel.accumulate_no_sync=true", keys);
  if (!run(synced)) return;
  double grads = max_at(LLMEM_PHASE_BACKWARD, 31, LLMEM_CAT_GRADIENTS), peak = out.per_gpu.peak_allocated_bytes;
  if (!run(no_sync)) return;
  double accumulated = 32 * 218112000.0 * 2 + 2 * 128256.0 * 4096 * 2;
  CHECK_NEAR(accumulated, 16060514304.0, 0, "hand count");
  CHECK_NEAR(max_at(LLMEM_PHASE_BACKWARD, 31, LLMEM_CAT_GRADIENTS) - grads, accumulated, 1e-15,
             "the last micro-batch's backward holds every unit's accumulated gradient");
  CHECK_NEAR(out.per_gpu.peak_allocated_bytes - peak, accumulated, 1e-15, "and so does the peak");
  rank_states rs = states_of(no_sync);
  CHECK(rs.accumulate_unsharded && !rs.keep_gathered_until_backward, "FSDP1 reshards as usual under no_sync");
}

/* FSDP2 under accelerate's no_sync (set_requires_gradient_sync(False): the HF Trainer from accelerate 1.11), the same
 * shape, 4 micro-batches: every parameter's unsharded gradient accumulates in the reduce dtype (fp32 here, the
 * parameters' bf16 differing): 32 x 218,112,000 x 4 B of layers and 2 x 128,256 x 4,096 x 4 B of embedding and
 * output = 32,121,028,608 B more at the last micro-batch's first backward layer than with a reduce-scatter each time. */
static void fsdp2_no_sync(void) {
  const char *keys =
      "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 "
      "model.vocab=128256 parallel.engine=fsdp2 parallel.gpus=8 training.seq_len=16 training.grad_accum=4 ";
  char synced[512], no_sync[512];
  snprintf(synced, sizeof synced, "%s parallel.accumulate_no_sync=false", keys);
  snprintf(no_sync, sizeof no_sync, "%s parallel.accumulate_no_sync=true", keys);
  if (!run(synced)) return;
  double grads = max_at(LLMEM_PHASE_BACKWARD, 31, LLMEM_CAT_GRADIENTS);
  if (!run(no_sync)) return;
  CHECK_NEAR(max_at(LLMEM_PHASE_BACKWARD, 31, LLMEM_CAT_GRADIENTS) - grads,
             32 * 218112000.0 * 4 + 2 * 128256.0 * 4096 * 4, 1e-15, "fp32 accumulated gradients of every parameter");
  rank_states rs = states_of(no_sync);
  CHECK(rs.accumulate_unsharded && rs.unsharded_accum_bytes == 4 && !rs.keep_gathered_until_backward,
        "in the reduce dtype; parameters resharded as usual");
}

/* DeepSpeed ZeRO-2 stepping a client (torch) AdamW on its flat fp32 partition (stage_1_and_2.py: one tensor a
 * parameter group): the foreach or for-loop temporary is the whole partition, P / 8 x 4 = 6,738,415,616 / 8 x 4 =
 * 3,369,207,808 B (Llama-2-7B: P = Q + B above); with DeepSpeed's FusedAdam, none: the step's peak is the all-gather
 * bucket, 5e8 x 2 B, which follows the step rather than adding to it. */
static void zero2_client_optimizer(void) {
  const char *zero2 = L2_7B "parallel.gpus=8 parallel.engine=deepspeed parallel.zero_stage=2 training.optimizer=adamw ";
  char keys[512];
  snprintf(keys, sizeof keys, "%s%s", zero2, "training.optimizer_impl=foreach");
  CHECK_NEAR(states_of(keys).optimizer_step_temp, 3369207808.0, 0, "zero-2, torch foreach AdamW: the partition");
  snprintf(keys, sizeof keys, "%s%s", zero2, "training.optimizer_impl=for_loop");
  CHECK_NEAR(states_of(keys).optimizer_step_temp, 3369207808.0, 0, "zero-2, torch for-loop AdamW: the partition");
  snprintf(keys, sizeof keys, "%s%s", zero2, "training.optimizer_impl=fused");
  CHECK_NEAR(states_of(keys).optimizer_step_temp, 1e9, 0, "zero-2, FusedAdam: the all-gather bucket alone");
}

/* DeepSpeed ZeRO-3 without zero.Init moves the whole bf16 model to each GPU before partitioning it. Llama-2-7B's
 * tensors as segments: per layer q, k, v, o 32 MiB each and gate, up, down 86 MiB each (4,096 x 11,008 x 2 B =
 * 90,177,536 B, a multiple of 2 MiB), the 65 norms (8 KiB each) in one 2 MiB small segment, embedding and head
 * 250 MiB each: 32 x 386 + 500 + 2 = 12,854 MiB = 13,478,395,904 B; then layer 0's shard over 64 ranks
 * (202,383,360 / 64 x 2 = 6,324,480 B) in a 20 MiB segment (below kMinLargeAlloc) while every tensor is live, the
 * later shards in its rest and the freed tensors: reserved peaks at 13,499,367,424 B during the set-up. The
 * optimizer's defragmenting empties the cache, so the step (a few GiB a rank) starts without those segments; the
 * tensors it allocates are the same either way. */
static void zero3_without_zero_init(void) {
  const char *z3 = L2_7B "parallel.gpus=64 parallel.engine=deepspeed parallel.zero_stage=3 training.seq_len=16 ";
  char keys[512];
  snprintf(keys, sizeof keys, "%s%s", z3, "parallel.zero_init=true");
  if (!run(keys)) return;
  double allocated = out.per_gpu.peak_allocated_bytes, reserved = out.per_gpu.peak_reserved_bytes;
  CHECK(!has_warning(&out, LLMEM_WARN_ZERO3_LOADS_WHOLE) && reserved < 13478395904.0,
        "zero.Init: no whole model, no warning (%.0f)", reserved);
  snprintf(keys, sizeof keys, "%s%s", z3, "parallel.zero_init=false");
  if (!run(keys)) return;
  CHECK_NEAR(out.per_gpu.peak_allocated_bytes, allocated, 0, "the step's tensors are the same");
  CHECK_NEAR(out.per_gpu.peak_reserved_bytes, 13499367424.0, 0, "reserved peaks with the whole model at set-up");
  CHECK(has_warning(&out, LLMEM_WARN_ZERO3_LOADS_WHOLE), "the whole-model warning");
  /* with parameter offload the shards go to the host, nothing defragments and the segments stay cached for the
   * step, which cannot reuse all of them: more than the whole model's 13,478,395,904 B */
  snprintf(keys, sizeof keys, "%s%s", z3, "parallel.zero_init=false parallel.offload_params=cpu");
  if (!run(keys)) return;
  CHECK(out.per_gpu.peak_reserved_bytes > 13478395904.0, "offloaded parameters: the model's segments stay (%.0f)",
        out.per_gpu.peak_reserved_bytes);
  /* a QLoRA base reaches the GPU as its packed 4-bit data (its embedding and head 16-bit): well under the 16-bit
   * model's 13.5 GB, and more than with zero.Init */
  snprintf(keys, sizeof keys, "%s%s", z3, QLORA_QV "parallel.zero_init=true");
  if (!run(keys)) return;
  double qlora_init = out.per_gpu.peak_reserved_bytes;
  snprintf(keys, sizeof keys, "%s%s", z3, QLORA_QV "parallel.zero_init=false");
  if (!run(keys)) return;
  CHECK(out.per_gpu.peak_reserved_bytes > qlora_init && out.per_gpu.peak_reserved_bytes < 6738415616.0,
        "QLoRA: the packed base at set-up (%.0f; zero.Init %.0f)", out.per_gpu.peak_reserved_bytes, qlora_init);
  /* the reserve's bound (no simulated allocator) keeps the whole model too */
  snprintf(keys, sizeof keys, "%s%s", z3, "parallel.zero_init=false runtime.allocator_reserve=0.05");
  if (!run(keys)) return;
  CHECK(out.per_gpu.peak_reserved_bytes >= 6738415616.0 * 2, "bound: at least the model's bytes");
}

/* DeepSpeed with the optimizer offloaded keeps no gradient partition on the GPU: ZeRO-2 copies each reduced
 * gradient into the fp32 partition's host buffer (stage_1_and_2.py copy_grads_in_partition), ZeRO-3 makes its
 * grad_partitions_flat_buffer on the CPU (stage3.py self.device). Llama-2-7B over 8, bf16: the 16-bit partition
 * P / 8 x 2 = 1,684,603,904 B leaves the GPU; ZeRO-3 holds it on the host besides the fp32 one. */
static void deepspeed_offload_gradients(void) {
  const char *ds = L2_7B "parallel.gpus=8 parallel.engine=deepspeed training.dtype=bf16 ";
  char keys[512];
  for (int z = 2; z <= 3; z++) {
    snprintf(keys, sizeof keys, "%sparallel.zero_stage=%d", ds, z);
    rank_states on = states_of(keys);
    snprintf(keys, sizeof keys, "%sparallel.zero_stage=%d parallel.offload_optimizer=cpu", ds, z);
    rank_states off = states_of(keys);
    CHECK(on.gradients > 0 && off.gradients == 0, "ZeRO-%d offload: no gradients on the GPU (%g)", z, off.gradients);
    double g16 = 6738415616.0 / 8 * 2;
    CHECK_NEAR(off.host_bytes - (on.optimizer + on.master + (on.gradients - g16)), z == 3 ? g16 : 0, 1e-12,
               z == 3 ? "ZeRO-3: the 16-bit partition on the host" : "ZeRO-2: the fp32 buffer alone on the host");
  }
}

int main(void) {
  zero2_client_optimizer();
  deepspeed_offload_gradients();
  zero3_without_zero_init();
  fsdp2_unshard_blocks();
  fsdp1_offload_copy_in();
  pipeline_stage_buffers();
  full_modules();
  fsdp1_residue();
  fsdp1_qlora_root();
  fsdp1_offload_residue();
  qlora_sharded();
  zero3_live();
  own_root_units();
  fsdp2_post_backward();
  fsdp2_gradient_stream();
  fsdp_autocast();
  fsdp1_no_sync();
  fsdp2_no_sync();
  return check_report("sharding");
}
