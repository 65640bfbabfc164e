/* Parameter counts (docs/memory-model.md §2.4, §12) and their split over TP/EP ranks. */
#include "check.h"
#include "check_plan.h"

static double total_of(const char *keys) {
  plan pl = plan_for(keys);
  double t, a, tr;
  model_param_counts(&pl, &t, &a, &tr);
  return t;
}

int main(void) {
  /* Llama-2-7B = 6,738,415,616; Llama-3-8B = 8,030,261,248 (§2.4) */
  CHECK_NEAR(total_of("model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=32 model.ffn_hidden=11008 "
                      "model.vocab=32000"),
             6738415616.0, 0, "llama-2-7b");
  CHECK_NEAR(total_of("model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 "
                      "model.vocab=128256"),
             8030261248.0, 0, "llama-3-8b");
  /* Mixtral-8x7B, Megatron count incl. router: 46,702,792,704 total, 12,879,925,248 active (E8) */
  {
    plan pl = plan_for(
        "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 model.vocab=32000 "
        "model.moe.experts=8 model.moe.top_k=2");
    double t, a, tr;
    model_param_counts(&pl, &t, &a, &tr);
    CHECK_NEAR(t, 46702792704.0, 0, "mixtral total");
    CHECK_NEAR(a, 12879925248.0, 0, "mixtral active");
  }
  /* GPT-2 XL (1,557,611,200 by the v1 count: learned positions, biases, LayerNorm, tied) */
  CHECK_NEAR(total_of("model.layers=48 model.hidden=1600 model.heads=25 model.ffn_hidden=6400 model.mlp=plain "
                      "model.vocab=50257 model.tied_embeddings=true model.norm=layernorm model.bias=true "
                      "model.position=learned model.max_positions=1024"),
             1557611200.0, 0, "gpt2-xl");
  /* TP split: the TP-sharded part of a layer sums back over the ranks; norms replicate */
  {
    plan one = plan_for("model.layers=2 model.hidden=1024 model.heads=16 model.kv_heads=4 model.ffn_hidden=4096");
    plan four = plan_for(
        "model.layers=2 model.hidden=1024 model.heads=16 model.kv_heads=4 model.ffn_hidden=4096 parallel.tp=4 "
        "parallel.engine=megatron");
    layer_params a = layer_params_on_rank(&one, 0), b = layer_params_on_rank(&four, 0);
    CHECK_NEAR(b.matrix_count * 4, a.matrix_count, 0, "tp split of matrices");
    CHECK_NEAR(b.vector_count, a.vector_count, 0, "norms replicated over tp");
  }
  /* KV heads below tp are replicated: each rank keeps one KV head */
  {
    plan p8 = plan_for(
        "model.layers=2 model.hidden=1024 model.heads=16 model.kv_heads=2 model.ffn_hidden=4096 parallel.tp=8 "
        "parallel.engine=megatron");
    layer_params lp = layer_params_on_rank(&p8, 0);
    double h = 1024, d = 64, q_out = 16 * d / 8;
    double want = h * q_out + 2 * h * d + q_out * h + 3 * h * 4096 / 8;
    CHECK_NEAR(lp.matrix_count, want, 0, "kv replicated under tp");
  }
  /* MoE layer pattern: first k dense, then every n-th (DeepSeek first_k_dense_replace) */
  {
    plan pl = plan_for("model.layers=8 model.moe.experts=4 model.moe.dense_layers=1 model.moe.layer_freq=2");
    int want[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    for (int i = 0; i < 8; i++) CHECK(layer_is_moe(&pl, i) == want[i], "layer %d moe", i);
  }
  /* LoRA r16 on all linears of Llama-3-8B: 41,943,040 trainable (E6) */
  {
    plan pl = plan_for(
        "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 model.vocab=128256 "
        "training.finetune.method=lora training.finetune.lora_rank=16");
    CHECK_NEAR(lora_params_total(&pl), 41943040.0, 0, "lora r16");
  }
  /* MLA (DeepSeek-V3 attention) per-layer count */
  {
    plan pl = plan_for(
        "model.layers=1 model.hidden=7168 model.heads=128 model.ffn_hidden=18432 model.mla.q_lora_rank=1536 "
        "model.mla.kv_lora_rank=512 model.mla.qk_nope_head_dim=128 model.mla.qk_rope_head_dim=64 "
        "model.mla.v_head_dim=128");
    layer_params lp = layer_params_on_rank(&pl, 0);
    double h = 7168, attn = h * 1536 + 1536 + 1536 * 128 * 192 + h * (512 + 64) + 512 + 512 * 128 * 256 + 128 * 128 * h;
    CHECK_NEAR(lp.matrix_count + lp.vector_count - 2 * h - 3 * h * 18432, attn, 0, "mla attention");
  }
  /* biases per projection, Llama-3-8B shape: q/k/v (4096 + 2 x 1024) and o (4096) per
   * layer with HF attention_bias; gate/up (2 x 14336) and down (4096) with mlp_bias */
  {
    const char *l3 =
        "model.layers=32 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 model.vocab=128256 ";
    char k[512];
    double base = total_of(l3);
    snprintf(k, sizeof k, "%s model.qkv_bias=true model.o_bias=true", l3);
    CHECK_NEAR(total_of(k) - base, 32.0 * (6144 + 4096), 0, "attention_bias: q, k, v and o");
    snprintf(k, sizeof k, "%s model.mlp_bias=true", l3);
    CHECK_NEAR(total_of(k) - base, 32.0 * (2 * 14336 + 4096), 0, "mlp_bias: gate, up and down");
    snprintf(k, sizeof k, "%s model.bias=true model.mlp_bias=false", l3);
    CHECK_NEAR(total_of(k) - base, 32.0 * (6144 + 4096), 0, "bias without the MLP's");
    snprintf(k, sizeof k, "%s model.bias=true", l3);
    CHECK_NEAR(total_of(k) - base, 32.0 * (6144 + 4096 + 2 * 14336 + 4096), 0, "bias: every linear");
  }
  /* a layer's tensors in module order (the optimizer's per-parameter states): Llama-3-8B's q, k, v, o,
   * gate, up, down, then its two RMSNorms; with LoRA on q and v, their A and B apart */
  {
    plan pl = plan_for(
        "model.layers=2 model.hidden=4096 model.heads=32 model.kv_heads=8 model.ffn_hidden=14336 "
        "training.finetune.method=lora training.finetune.lora_rank=16 "
        "training.finetune.lora_targets=q,v");
    layer_tensors t = layer_tensors_on_rank(&pl, 0);
    double h = 4096, kv = 1024, f = 14336, want[9] = {h * h, h * kv, h * kv, h * h, h * f, h * f, f * h, h, h};
    CHECK(t.params.count == 9, "llama layer: %d tensors", t.params.count);
    for (int i = 0; i < 9 && i < t.params.count; i++) CHECK(near(t.params.elems[i], want[i], 0), "tensor %d", i);
    double lora[4] = {16 * h, h * 16, 16 * h, kv * 16};
    CHECK(t.adapters.count == 4, "lora q, v: %d adapter tensors", t.adapters.count);
    for (int i = 0; i < 4 && i < t.adapters.count; i++) CHECK(near(t.adapters.elems[i], lora[i], 0), "adapter %d", i);
  }
  /* every architecture: the listed tensors sum to the layer's count on the rank, the adapters to its LoRA count */
  {
    const char *shapes[] = {
        "model.layers=4 model.hidden=1024 model.heads=16 model.kv_heads=4 model.ffn_hidden=4096 model.bias=true",
        "model.layers=4 model.hidden=1600 model.heads=25 model.ffn_hidden=6400 model.mlp=plain model.norm=layernorm "
        "model.bias=true model.position=learned model.max_positions=1024",
        "model.layers=4 model.moe.experts=8 model.moe.top_k=2 model.moe.shared_experts=1 parallel.gpus=8 "
        "parallel.ep=4 parallel.engine=megatron",
        "model.layers=2 model.hidden=7168 model.heads=128 model.ffn_hidden=18432 model.mla.q_lora_rank=1536 "
        "model.mla.kv_lora_rank=512 model.mla.qk_nope_head_dim=128 model.mla.qk_rope_head_dim=64 "
        "model.mla.v_head_dim=128 parallel.gpus=8 parallel.tp=8 parallel.engine=megatron",
        "model.preset=qwen3-next-80b-a3b",
        "model.preset=nemotron-h-8b",
        "model.preset=gpt-oss-20b",
        "model.preset=t5-3b",
        "model.layers=4 training.finetune.method=lora training.finetune.lora_targets=q,k,v,o,gate,up,down",
    };
    for (int s = 0; s < (int)(sizeof shapes / sizeof *shapes); s++) {
      plan pl = plan_for(shapes[s]);
      for (int layer = 0; layer < (int)pl.layers; layer++) {
        layer_params lp = layer_params_on_rank(&pl, layer);
        layer_tensors t = layer_tensors_on_rank(&pl, layer);
        double sum = 0, lora = 0;
        for (int i = 0; i < t.params.count; i++) sum += t.params.elems[i];
        for (int i = 0; i < t.adapters.count; i++) lora += t.adapters.elems[i];
        double want = lp.matrix_count + lp.vector_count + lp.expert_count;
        CHECK(near(sum, want, 1e-12), "shape %d layer %d: tensors sum to %.17g, the layer %.17g", s, layer, sum, want);
        CHECK(near(lora, lp.lora_count, 1e-12), "shape %d layer %d: adapters %.17g of %.17g", s, layer, lora,
              lp.lora_count);
      }
    }
  }
  return check_report("params");
}
