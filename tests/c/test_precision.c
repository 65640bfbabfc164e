/* Precision formats of training.fp8_recipe (docs/memory-model.md §4.6), by
 * hand: the quantised weight copies per recipe, fp8 parameters with their
 * master, the saved linear inputs, and null leaving the 1-byte approximation. */
#include <math.h>

#include "check.h"
#include "check_plan.h"

/* Two layers, h 1024, 8 heads of 128 (no GQA), SwiGLU F 4096, V 32000 untied.
 * Linear weights a layer: q, k, v, o 4 x 1024^2 + gate, up, down 3 x 1024 x 4096
 * = 4,194,304 + 12,582,912 = 16,777,216; two layers M = 33,554,432.
 * Norms 2 x 1024 a layer + the final 1024 = 5,120; embedding and lm_head
 * 32000 x 1024 = 32,768,000 each: P = 33,554,432 + 5,120 + 65,536,000 = 99,095,552. */
#define SMALL                                                                                                \
  "model.layers=2 model.hidden=1024 model.heads=8 model.kv_heads=8 model.ffn_hidden=4096 model.vocab=32000 " \
  "parallel.gpus=1 training.seq_len=4096 "
static const double M = 33554432.0, P = 99095552.0;

static rank_states states_of(const char *keys) {
  plan pl = plan_for(keys);
  stage_layout st;
  layout_stage(&pl, 0, &st);
  rank_states rs;
  states_for_stage(&pl, &st, &rs);
  return rs;
}

static void counts(void) {
  plan pl = plan_for(SMALL);
  stage_layout st;
  layout_stage(&pl, 0, &st);
  CHECK_NEAR(st.layers.matrix_count, M, 0, "linear weights of the small model");
  CHECK_NEAR(st.params_count, P, 0, "parameters of the small model");
}

/* bf16 parameters, fp8 linears under Megatron (TE): the weights plus each
 * linear weight's quantised rowwise and columnwise copies. */
static void weight_copies(void) {
  const char *base = SMALL "parallel.engine=megatron training.fp8_linear=true ";
  char keys[1024];
  rank_states rs = states_of(base);
  CHECK_NEAR(rs.weights, 2 * P + M, 0, "null: bf16 weights + a 1-byte fp8 cache (unchanged)");
  /* delayed / current on Hopper: _data + _transpose, 1 B each; scales one fp32 a tensor (ignored) */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=delayed", base);
  CHECK_NEAR(states_of(keys).weights, 2 * P + 2 * M, 0, "delayed: 2 B a linear weight");
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=current", base);
  CHECK_NEAR(states_of(keys).weights, 2 * P + 2 * M, 0, "current: 2 B a linear weight");
  /* blockwise: two copies of 1 B + an fp32 scale per 128 x 128 block: 2 + 8/16384 = 2.00048828125 */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=blockwise", base);
  CHECK_NEAR(states_of(keys).weights, 2 * P + 2.00048828125 * M, 0, "blockwise: 2.00048828125 B");
  /* mxfp8: two copies of 1 B + an E8M0 byte per 32: 2 x 1.03125 = 2.0625 */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=mxfp8", base);
  CHECK_NEAR(states_of(keys).weights, 2 * P + 2.0625 * M, 0, "mxfp8: 2.0625 B");
  /* nvfp4: two copies of 0.5 B + an E4M3 byte per 16: 2 x 0.5625 = 1.125 */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=nvfp4", base);
  CHECK_NEAR(states_of(keys).weights, 2 * P + 1.125 * M, 0, "nvfp4: 1.125 B");
  /* 235,939,840 B = 2 x 99,095,552 + 1.125 x 33,554,432: spelled out once */
  CHECK_NEAR(2 * P + 1.125 * M, 235939840.0, 0, "nvfp4 weights in bytes");
  /* a recipe without fp8 linears changes nothing */
  CHECK_NEAR(states_of(SMALL "parallel.engine=megatron training.fp8_recipe=mxfp8").weights, 2 * P, 0,
             "recipe without fp8 linears");
}

/* Parameters stored in fp8 (fp8_model_init, --fp8-param-gather): linear weights
 * quantised with both usages, everything else bf16, the master in the optimizer. */
static void fp8_parameters(void) {
  const char *base = SMALL "parallel.engine=megatron training.dtype=fp8 ";
  char keys[1024];
  rank_states rs = states_of(base);
  CHECK_NEAR(rs.weights, P, 0, "null: every parameter at 1 B (unchanged)");
  CHECK_NEAR(rs.master, 4 * P, 0, "null: fp32 master");
  /* mxfp8: (P - M) x 2 + M x 2.0625 = 131,082,240 + 69,206,016 = 200,288,256 */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=mxfp8", base);
  rs = states_of(keys);
  CHECK_NEAR(rs.weights, 200288256.0, 0, "mxfp8 parameters");
  CHECK_NEAR(rs.master, 4 * P, 0, "fp32 master of mxfp8 parameters");
  /* delayed (Hopper): (P - M) x 2 + M x 2 = 2P */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=delayed", base);
  CHECK_NEAR(states_of(keys).weights, 2 * P, 0, "delayed fp8 parameters with their transposes");
  /* nvfp4: 131,082,240 + 33,554,432 x 1.125 = 131,082,240 + 37,748,736 = 168,830,976 */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=nvfp4", base);
  CHECK_NEAR(states_of(keys).weights, 168830976.0, 0, "nvfp4 parameters");
  /* a bf16 master (training.master_dtype, Megatron --main-params-dtype) */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=mxfp8 training.master_dtype=bf16", base);
  CHECK_NEAR(states_of(keys).master, 2 * P, 0, "bf16 master");
  /* distributed optimizer over 8 ranks: the master is sharded, the parameters are not */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=mxfp8 parallel.gpus=8 parallel.distributed_optimizer=true", base);
  rs = states_of(keys);
  CHECK_NEAR(rs.weights, 200288256.0, 0, "mxfp8 parameters, replicated");
  CHECK_NEAR(rs.master, 4 * P / 8, 0, "fp32 master sharded 8 ways");
  /* fp8 optimizer states (training.optimizer_dtype fp8, Megatron --exp-avg-dtype fp8) */
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=mxfp8 training.optimizer_dtype=fp8", base);
  CHECK_NEAR(states_of(keys).optimizer, 2 * P, 0, "fp8 Adam moments");
  /* no master with fp8 parameters stays refused */
  llmem_result out;
  llmem_input in;
  llmem_defaults(&in);
  set_keys(&in, base);
  set_keys(&in, "training.fp8_recipe=mxfp8 training.master_weights=false");
  CHECK(llmem_estimate(&in, &out) == LLMEM_ERR_FP8_MASTER, "fp8 parameters need a master");
}

static double saved_of(const char *base, const char *recipe) {
  char keys[1024];
  snprintf(keys, sizeof keys, "%s training.fp8_recipe=%s", base, recipe);
  plan pl = plan_for(keys);
  return layer_activation_bytes(&pl, 0, 0).saved_full_bytes;
}

/* One layer's saved bytes against null (every linear input at 1 B), T = 4096
 * tokens: the QKV, MLP and down-projection inputs (h, h, F a token) move from
 * 1 B to q, the recipe's columnwise copy; the o_proj input (h) becomes the
 * flash kernel's bf16 output (2 B) + the o_proj's copy (q), or under Megatron
 * with any recipe but delayed the bf16 output alone (save_original_input).
 *   single: T [(3h + F)(q - 1) + 2h]     Megatron: T [(2h + F)(q - 1) + h] */
static void saved_inputs(void) {
  const double T = 4096;
  const char *single = SMALL "training.fp8_linear=true";
  double null_single = saved_of(single, "null");
  CHECK_NEAR(saved_of(single, "delayed") - null_single, T * 2048, 0, "delayed: 8,388,608 B more (o_proj copy)");
  CHECK_NEAR(saved_of(single, "current") - null_single, T * 2048, 0, "current: 8,388,608 B more");
  /* 1 + 1/32: 7168 x 0.03125 + 2048 = 2272 a token */
  CHECK_NEAR(saved_of(single, "mxfp8") - null_single, 9306112.0, 0, "mxfp8: 4096 x 2272 B more");
  /* 1 + 4/128 (fp32 per 1 x 128 tile): the same 1.03125 */
  CHECK_NEAR(saved_of(single, "blockwise") - null_single, 9306112.0, 0, "blockwise: 4096 x 2272 B more");
  /* 0.5 + 1/16 = 0.5625: 7168 x -0.4375 + 2048 = -1088 a token */
  CHECK_NEAR(saved_of(single, "nvfp4") - null_single, -4456448.0, 0, "nvfp4: 4096 x 1088 B less");
  const char *megatron = SMALL "training.fp8_linear=true parallel.engine=megatron";
  double null_megatron = saved_of(megatron, "null");
  CHECK_NEAR(saved_of(megatron, "delayed") - null_megatron, T * 2048, 0, "Megatron delayed: the o_proj copy too");
  CHECK_NEAR(saved_of(megatron, "current") - null_megatron, T * 1024, 0, "Megatron current: o_proj keeps bf16");
  /* 6144 x 0.03125 + 1024 = 1216 a token */
  CHECK_NEAR(saved_of(megatron, "mxfp8") - null_megatron, 4980736.0, 0, "Megatron mxfp8: 4096 x 1216 B more");
  /* 6144 x -0.4375 + 1024 = -1664 a token */
  CHECK_NEAR(saved_of(megatron, "nvfp4") - null_megatron, -6815744.0, 0, "Megatron nvfp4: 4096 x 1664 B less");
  /* without fp8 linears the recipe is ignored */
  CHECK_NEAR(saved_of(SMALL, "mxfp8"), saved_of(SMALL, "null"), 0, "recipe without fp8 linears");
}

static const llmem_event *event_at(const llmem_result *out, int phase, int layer, int nth) {
  for (int i = 0; i < out->event_count; i++)
    if (out->events[i].phase == phase && out->events[i].layer == layer && nth-- == 0) return &out->events[i];
  return 0;
}

/* torch.autocast over the fp32 small model on one GPU: its bf16 weight copies.
 * A layer's (linears and, as counted, its norms) 16,779,264 x 2 = 33,558,528 B,
 * two layers 67,117,056 B; the head's 32000 x 1024 x 2 = 65,536,000 B, cast at
 * the loss and kept by its matmul to the head's backward. Without recompute the
 * layers' copies are kept by their matmuls into the backward; checkpointed layers
 * keep none: autocast's exit after the loss clears its cache, and each layer's
 * recompute casts its weights again until its backward ends. */
static void autocast_casts(void) {
  const double layer = 33558528.0, head = 65536000.0;
  const char *modes[] = {"none", "full", "per_op"};
  for (int m = 0; m < 3; m++) {
    static llmem_result out;
    char keys[1024];
    snprintf(keys, sizeof keys, "%s parallel.engine=single training.master_weights=true training.recompute=%s", SMALL,
             modes[m]);
    CHECK(run_keys(keys, &out), "autocast estimate, recompute %s", modes[m]);
    int kept = m == 0;
    const llmem_event *loss = event_at(&out, LLMEM_PHASE_LOSS, -1, 0);
    const llmem_event *ce = event_at(&out, LLMEM_PHASE_BACKWARD, -1, 0);
    const llmem_event *top = event_at(&out, LLMEM_PHASE_BACKWARD, 1, 0);
    CHECK(loss && ce && top, "loss forward, loss backward and layer 1 backward points (%s)", modes[m]);
    if (!(loss && ce && top)) continue;
    CHECK(loss->category_bytes[LLMEM_CAT_WEIGHTS] == 2 * layer + head, "every copy at the loss (%s)", modes[m]);
    CHECK(ce->category_bytes[LLMEM_CAT_WEIGHTS] == (kept ? 2 * layer : 0) + head,
          "after autocast's exit: the kept copies and the head's (%s): %.0f", modes[m],
          ce->category_bytes[LLMEM_CAT_WEIGHTS]);
    CHECK(top->category_bytes[LLMEM_CAT_WEIGHTS] == (kept ? 2 * layer : layer),
          "layer 1's backward: its copies, cast again when recomputed (%s): %.0f", modes[m],
          top->category_bytes[LLMEM_CAT_WEIGHTS]);
  }
}

/* LoRA over an fp32 base under torch.autocast (Lightning Fabric's "bf16-mixed"; a 16-bit Trainer flag on an
 * fp32-loaded model), 2 layers of h 512 (8 heads, gated MLP of 1024), vocabulary 1024, adapters on q and v, 16 tokens,
 * the head in 4 chunks. The fp32 base: 25,438,208 B. A layer's frozen linears and norms, 4 x 512^2 + 3 x 512 x 1024
 * + 2 x 512 = 2,622,464 parameters, are cast to bf16 per op (frozen: cached_cast does not cache them) and kept by
 * the matmuls for their inputs' gradients: 5,244,928 B a layer; the frozen head is cast once per chunk, each chunk's
 * matmul keeping its copy: 4 x 1024 x 512 x 2 = 4,194,304 B. A head trained in full is cached: one copy. */
static void lora_autocast_casts(void) {
  const char *lora =
      "model.layers=2 model.hidden=512 model.heads=8 model.kv_heads=8 model.ffn_hidden=1024 "
      "model.vocab=1024 parallel.engine=single parallel.gpus=1 training.seq_len=16 "
      "training.finetune.method=lora training.finetune.lora_targets=q,v training.finetune.base_dtype=fp32 "
      "training.finetune.adapter_dtype=fp32 training.loss=chunked training.loss_chunks=4";
  const double base = 25438208.0, layer = 5244928.0, head = 1024 * 512 * 2.0;
  static llmem_result out;
  char keys[1024];
  snprintf(keys, sizeof keys, "%s training.autocast=false", lora);
  CHECK(run_keys(keys, &out), "no autocast");
  const llmem_event *loss = event_at(&out, LLMEM_PHASE_LOSS, -1, 0);
  CHECK(loss && loss->category_bytes[LLMEM_CAT_WEIGHTS] == base, "the fp32 base alone");
  CHECK(run_keys(lora, &out), "autocast by default: one GPU, an fp32 base, bf16 compute");
  loss = event_at(&out, LLMEM_PHASE_LOSS, -1, 0);
  CHECK(loss && loss->category_bytes[LLMEM_CAT_WEIGHTS] == base + 2 * layer + 4 * head,
        "at the loss: both layers' casts and one head cast per chunk");
  double frozen_casts = loss ? loss->category_bytes[LLMEM_CAT_WEIGHTS] - base : 0;
  snprintf(keys, sizeof keys, "%s training.finetune.full_modules=head", lora);
  CHECK(run_keys(keys, &out), "the head trained in full");
  loss = event_at(&out, LLMEM_PHASE_LOSS, -1, 0);
  const llmem_event *setup = 0; /* the states before the step */
  for (int i = 0; i < out.event_count && !setup; i++)
    if (out.events[i].phase == LLMEM_PHASE_SETUP) setup = &out.events[i];
  CHECK(
      loss && setup &&
          loss->category_bytes[LLMEM_CAT_WEIGHTS] - setup->category_bytes[LLMEM_CAT_WEIGHTS] == frozen_casts - 3 * head,
      "a trained head is cast once (cached): three copies fewer");
}

int main(void) {
  autocast_casts();
  lora_autocast_casts();
  counts();
  weight_copies();
  fp8_parameters();
  saved_inputs();
  return check_report("precision");
}
