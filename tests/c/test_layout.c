/* Pipeline layout: even, uneven and interleaved stages; embedding and head placement. */
#include "check.h"
#include "check_plan.h"

int main(void) {
  plan pl = plan_for(
      "model.layers=8 parallel.engine=megatron parallel.gpus=4 parallel.pp=4 parallel.pp_first_stage_layers=1 "
      "parallel.pp_last_stage_layers=3");
  int first, n;
  n = layout_stage_layers(&pl, 0, 0, &first);
  CHECK(n == 1 && first == 0, "uneven stage 0: %d layers from %d", n, first);
  n = layout_stage_layers(&pl, 1, 0, &first);
  CHECK(n == 2 && first == 1, "uneven stage 1: %d from %d", n, first);
  n = layout_stage_layers(&pl, 3, 0, &first);
  CHECK(n == 3 && first == 5, "uneven stage 3: %d from %d", n, first);

  /* interleaved: chunk j of stage r is model chunk j*p + r */
  pl = plan_for(
      "model.layers=8 parallel.engine=megatron parallel.gpus=2 parallel.pp=2 parallel.vpp=2 "
      "parallel.pp_schedule=interleaved training.grad_accum=2");
  n = layout_stage_layers(&pl, 1, 1, &first);
  CHECK(n == 2 && first == 6, "vpp stage 1 chunk 1: %d from %d", n, first);
  n = layout_stage_layers(&pl, 0, 1, &first);
  CHECK(n == 2 && first == 4, "vpp stage 0 chunk 1: %d from %d", n, first);

  /* torchtitan's weighted split (parallel.pp_split weighted): 27 layers + embedding + output = 29 over 4 x 2
   * model chunks, 3 each and one more to the first 5: 4 4 4 4 4 3 3 3 effective, the first and the last less one:
   * model chunks 3 4 4 4 4 3 3 2 layers; rank r holds chunks r and r + 4: 7, 7, 7 and 6 layers */
  pl = plan_for(
      "model.layers=27 parallel.engine=fsdp2 parallel.gpus=8 parallel.pp=4 parallel.vpp=2 "
      "parallel.pp_schedule=interleaved parallel.pp_split=weighted training.grad_accum=8");
  int want_n[8] = {3, 4, 4, 4, 4, 3, 3, 2}, want_first[8] = {0, 3, 7, 11, 15, 19, 22, 25};
  for (int m = 0; m < 8; m++) {
    n = layout_stage_layers(&pl, m % 4, m / 4, &first);
    CHECK(n == want_n[m] && first == want_first[m], "weighted chunk %d: %d layers from %d", m, n, first);
  }
  stage_layout w3;
  layout_stage(&pl, 3, &w3);
  CHECK(w3.layer_count == 6 && w3.has_head, "weighted: the last rank's 6 layers and the head");
  CHECK(layout_same_layers(&pl, 1, 2), "weighted: ranks 1 and 2 alike (4 + 3 layers)");
  /* the torchtitan profile sets it; the split of 126 layers over 8 single stages: 15, 16 x 6, 15 (the tt24 cases) */
  pl = plan_for(
      "model.layers=126 parallel.engine=fsdp2 parallel.gpus=8 parallel.pp=8 runtime.framework=torchtitan "
      "training.grad_accum=8");
  CHECK(pl.pp_weighted, "torchtitan: weighted");
  n = layout_stage_layers(&pl, 0, 0, &first);
  int n1 = layout_stage_layers(&pl, 1, 0, &first), n7 = layout_stage_layers(&pl, 7, 0, &first);
  CHECK(n == 15 && n1 == 16 && n7 == 15 && first == 111, "126 over 8: %d %d .. %d from %d", n, n1, n7, first);
  /* a chunk left without a layer is an error naming parallel.pp */
  llmem_input bad;
  llmem_defaults(&bad);
  CHECK(set_keys(&bad,
                 "model.layers=8 parallel.engine=fsdp2 parallel.gpus=8 parallel.pp=8 parallel.pp_split=weighted "
                 "training.grad_accum=8"),
        "keys");
  llmem_result bad_out;
  CHECK(llmem_estimate(&bad, &bad_out) != LLMEM_OK, "weighted: 8 layers over 8 stages leave the last empty");

  /* embedding on the first stage, head on the last; tied embeddings keep a copy on the last stage */
  pl = plan_for(
      "model.layers=4 model.hidden=64 model.heads=4 model.ffn_hidden=128 model.vocab=1000 model.tied_embeddings=true "
      "parallel.engine=megatron parallel.gpus=2 parallel.pp=2");
  stage_layout s0, s1;
  layout_stage(&pl, 0, &s0);
  layout_stage(&pl, 1, &s1);
  CHECK(s0.has_embedding && !s0.has_head && s0.embedding_count == 1000 * 64, "stage 0 embedding");
  CHECK(s1.has_head && s1.head_count == 1000 * 64 && s1.final_norm_count == 64, "stage 1 tied copy + final norm");
  pl = plan_for(
      "model.layers=4 model.hidden=64 model.heads=4 model.ffn_hidden=128 model.vocab=1000 model.tied_embeddings=true "
      "parallel.engine=single parallel.gpus=1");
  layout_stage(&pl, 0, &s0);
  CHECK(s0.head_count == 0 && s0.embedding_count == 64000, "tied, one stage: counted once");
  /* padded vocabulary: multiple of vocab_multiple * tp */
  pl = plan_for("model.vocab=50257 model.vocab_multiple=128 parallel.engine=megatron parallel.tp=2 parallel.gpus=2");
  CHECK(pl.vocab_padded == 50432, "padded vocab %g", pl.vocab_padded);

  /* layout_same_layers agrees with a layer-by-layer comparison (dense first,
   * MoE every 2nd layer, uneven first/last stages, virtual chunks) */
  static const char *shapes[] = {
      "model.layers=64 model.moe.experts=8 model.moe.dense_layers=8 parallel.engine=megatron parallel.gpus=32 "
      "parallel.pp=32",
      "model.layers=48 model.moe.experts=8 model.moe.dense_layers=3 model.moe.layer_freq=2 parallel.engine=megatron "
      "parallel.gpus=8 parallel.pp=8 parallel.vpp=2 parallel.pp_schedule=interleaved training.grad_accum=8",
      "model.layers=30 model.moe.experts=4 model.moe.dense_layers=5 model.moe.layer_freq=3 parallel.engine=megatron "
      "parallel.gpus=8 parallel.pp=8 parallel.pp_first_stage_layers=2 parallel.pp_last_stage_layers=4",
      "model.layers=32 parallel.engine=megatron parallel.gpus=4 parallel.pp=4",
      "model.layers=24 model.moe.experts=8 model.moe.dense_layers=3 model.moe.layer_freq=2 parallel.engine=megatron "
      "parallel.gpus=8 parallel.pp=8 parallel.vpp=2 parallel.pp_schedule=dualpipe training.grad_accum=16"};
  for (int k = 0; k < 5; k++) {
    pl = plan_for(shapes[k]);
    int p = (int)pl.in->pp, v = (int)pl.in->vpp, disagree = 0;
    for (int a = 0; a < p; a++)
      for (int b = 0; b < p; b++) {
        int same = (a == 0) == (b == 0) && (a == p - 1) == (b == p - 1);
        for (int c = 0; c < v && same; c++) {
          int fa, fb, na = layout_stage_layers(&pl, a, c, &fa), nb = layout_stage_layers(&pl, b, c, &fb);
          same = na == nb;
          for (int i = 0; i < na && same; i++) same = layer_is_moe(&pl, fa + i) == layer_is_moe(&pl, fb + i);
        }
        disagree += same != layout_same_layers(&pl, a, b);
      }
    CHECK(disagree == 0, "shape %d: layout_same_layers disagrees on %d stage pairs", k, disagree);
  }

  /* layer kinds counted from one period of their pattern (layer_kind_counts) agree with a look-up per
   * layer, and a stage's parameter sums (by kind) are the per-layer sums' own bits, on tp 3 as well */
  static const char *kind_shapes[] = {
      "model.layers=60 model.layer_types=sliding,sliding,full model.sliding_window=1024 "
      "model.mlp_types=dense,moe,moe,dense model.moe.experts=8 "
      "parallel.engine=megatron parallel.gpus=4 parallel.pp=4 parallel.vpp=3 parallel.pp_schedule=interleaved "
      "training.grad_accum=8",
      "model.layers=40 model.moe.experts=8 model.moe.dense_layers=3 model.moe.layer_freq=3 parallel.engine=megatron "
      "parallel.gpus=8 parallel.pp=8 parallel.pp_first_stage_layers=2 parallel.pp_last_stage_layers=8",
      "model.layers=24 model.encoder_layers=8 model.tied_embeddings=true parallel.gpus=1",
      "model.layers=30 model.hidden=1000 model.heads=12 model.kv_heads=12 model.head_dim=80 model.ffn_hidden=2100 "
      "model.moe.expert_ffn_hidden=300 model.moe.experts=6 model.moe.dense_layers=1 model.moe.layer_freq=2 "
      "parallel.engine=megatron parallel.gpus=6 "
      "parallel.tp=3 parallel.pp=2 training.seq_len=3072 "
      "training.finetune.method=lora"};
  for (int k = 0; k < 4; k++) {
    pl = plan_for(kind_shapes[k]);
    int counts[LAYER_KIND_COUNT], first_at[LAYER_KIND_COUNT], wrong = 0;
    for (int from = 0; from < (int)pl.layers; from += 7)
      for (int n = 0; from + n <= (int)pl.layers; n += 5) {
        layer_kind_counts(&pl, from, n, counts, first_at);
        for (int kind = 0; kind < LAYER_KIND_COUNT; kind++) {
          int count = 0, at = -1;
          for (int i = from + n - 1; i >= from; i--)
            if (layer_kind(&pl, i) == kind) count++, at = i;
          wrong += count != counts[kind] || at != first_at[kind];
        }
      }
    CHECK(wrong == 0, "kind shape %d: %d kind counts differ from a look-up per layer", k, wrong);
    for (int st = 0; st < (int)pl.in->pp; st++) {
      stage_layout got;
      layout_stage(&pl, st, &got);
      layer_params sum = {0};
      int layers = 0, moe = 0;
      for (int c = 0; c < (int)pl.in->vpp; c++) {
        int f, m = layout_stage_layers(&pl, st, c, &f);
        for (int i = f; i < f + m; i++) {
          layer_params lp = layer_params_on_rank(&pl, i);
          sum.matrix_count += lp.matrix_count, sum.matrix_dims_count += lp.matrix_dims_count;
          sum.vector_count += lp.vector_count, sum.expert_count += lp.expert_count;
          sum.expert_dims_count += lp.expert_dims_count, sum.lora_count += lp.lora_count;
          sum.quantizable_count += lp.quantizable_count;
          layers++, moe += layer_is_moe(&pl, i);
        }
      }
      CHECK(got.layers.matrix_count == sum.matrix_count && got.layers.vector_count == sum.vector_count &&
                got.layers.expert_count == sum.expert_count && got.layers.lora_count == sum.lora_count &&
                got.layers.matrix_dims_count == sum.matrix_dims_count &&
                got.layers.expert_dims_count == sum.expert_dims_count &&
                got.layers.quantizable_count == sum.quantizable_count && got.layer_count == layers &&
                got.moe_layer_count == moe,
            "kind shape %d stage %d: sums %.17g %.17g %.17g, per layer %.17g %.17g %.17g", k, st,
            got.layers.matrix_count, got.layers.vector_count, got.layers.expert_count, sum.matrix_count,
            sum.vector_count, sum.expert_count);
    }
  }

  /* DualPipe (deepseek-ai/DualPipe README @3da1bbe: "Parameter Per Device
   * 2x"; examples/example_dualpipe.py: rank r holds full_modules[r] and
   * full_modules[pp_size - 1 - r]): rank r holds 1F1B's stages r and
   * p - 1 - r, their weights, gradients, master copies and optimizer states;
   * the middle ranks twice 1F1B's own; untied, tied (the head's copy) and
   * with an MTP module (its embedding copy) */
  static const char *dual_models[] = {
      "model.layers=16 model.hidden=256 model.heads=4 model.ffn_hidden=512 model.vocab=1000",
      "model.layers=16 model.hidden=256 model.heads=4 model.ffn_hidden=512 model.vocab=1000 model.tied_embeddings=true",
      ("model.layers=24 model.hidden=256 model.heads=4 model.ffn_hidden=512 model.vocab=1000 model.mtp_layers=1 "
       "model.moe.experts=8 model.moe.dense_layers=3 model.moe.expert_ffn_hidden=128")};
  for (int k = 0; k < 3; k++) {
    char one[512], two[600];
    snprintf(one, sizeof one, "%s parallel.engine=megatron parallel.gpus=8 parallel.pp=4 training.grad_accum=8",
             dual_models[k]);
    snprintf(two, sizeof two, "%s parallel.vpp=2 parallel.pp_schedule=dualpipe", one);
    plan a = plan_for(one), d = plan_for(two);
    for (int r = 0; r < 4; r++) {
      stage_layout x, y, z;
      rank_states rx, ry, rz;
      layout_stage(&a, r, &x), layout_stage(&a, 3 - r, &y), layout_stage(&d, r, &z);
      states_for_stage(&a, &x, &rx), states_for_stage(&a, &y, &ry), states_for_stage(&d, &z, &rz);
      CHECK(z.params_count == x.params_count + y.params_count && z.layer_count == x.layer_count + y.layer_count &&
                z.trainable_count == x.trainable_count + y.trainable_count,
            "dualpipe %d rank %d: %.17g parameters, 1F1B's %d and %d: %.17g", k, r, z.params_count, r, 3 - r,
            x.params_count + y.params_count);
      CHECK_NEAR(rz.weights, rx.weights + ry.weights, 1e-15, "dualpipe weights");
      CHECK_NEAR(rz.gradients, rx.gradients + ry.gradients, 1e-15, "dualpipe gradients");
      CHECK_NEAR(rz.master, rx.master + ry.master, 1e-15, "dualpipe master weights");
      CHECK_NEAR(rz.optimizer, rx.optimizer + ry.optimizer, 1e-15, "dualpipe optimizer states");
      CHECK(z.has_embedding == (r == 0 || r == 3) && z.has_head == z.has_embedding, "dualpipe rank %d ends", r);
      if (r == 1 || r == 2)
        CHECK(z.params_count == 2 * x.params_count && rz.optimizer == 2 * rx.optimizer,
              "dualpipe %d middle rank %d: twice 1F1B's", k, r);
    }
  }

  /* a paged optimizer over the capacity: the reported rank is the one asking
   * for the most (clamped at the capacity, every rank would tie at stage 0) */
  static llmem_result out;
  llmem_input in;
  llmem_defaults(&in);
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.gpus = 4;
  in.pp = 4;
  in.grad_accum = 8;
  in.layers = 8;
  in.paged_optimizer = 1;
  in.memory_gib = 400;
  CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "paged: %s", out.error_message);
  int roomy = out.per_gpu.stage;
  in.memory_gib = 20; /* between the reserved and the paged total of stages 0 and 3 */
  CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "paged: %s", out.error_message);
  CHECK(roomy == 3 && out.per_gpu.stage == roomy, "paged: reported stage %d at 20 GiB, %d with room", out.per_gpu.stage,
        roomy);
  CHECK(out.peak_allocated_stage == 3 && out.peak_allocated_bytes == out.ranks[3].peak_allocated_bytes,
        "paged: allocated from stage %d", out.peak_allocated_stage);
  return check_report("layout");
}
