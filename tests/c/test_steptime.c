/* The step-time model, one operation class at a time, against hand-computed
 * times (rates: core/steptime_ops.c). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "steptime.h"

static const gemm_bytes B16 = {2, 2}; /* 16-bit operands and output */

/* The plan of an input (it points at the input: keep `in` alive while it is read). */
static plan plan_of(const llmem_input *in) {
  plan pl;
  int field;
  const char *detail;
  CHECK(plan_build(in, &pl, &field, &detail) == LLMEM_OK, "plan");
  return pl;
}

static gpu_rates rates_of(const llmem_input *in) {
  plan pl = plan_of(in);
  return gpu_rates_for(&pl);
}

static double step_of(const llmem_input *in) {
  llmem_step_result r;
  llmem_status st = llmem_step_time(in, &r);
  CHECK(st == LLMEM_OK, "step time: %s", llmem_status_message(st));
  return st == LLMEM_OK ? r.step_seconds : 0;
}

/* An A100 80 GB: 108 SMs, 128x128 tiles, 86.9 % of 312 TFLOPS, 90 % of 2.039 TB/s. */
static void test_gemm(void) {
  llmem_input in;
  llmem_defaults(&in);
  in.bf16_tflops = 312;
  in.memory_gib = 80;
  gpu_rates g = rates_of(&in);
  CHECK_NEAR(g.matmul_flops_per_s, 312e12 * 0.869, 1e-12, "A100 GEMM rate");
  CHECK_NEAR(g.hbm_bytes_per_s, 2.039e12 * 0.9, 1e-12, "A100 HBM");
  /* 4096^3: 32 x 32 = 1024 tiles in 10 waves of 108, then its traffic, 3 x
   * 4096^2 x 2 bytes, at the HBM rate (Calculon no_overlap: added, not hidden) */
  double math = 10.0 * 108 * 128 * 128 * 2 * 4096 / (312e12 * 0.869);
  double large = math + 3.0 * 4096 * 4096 * 2 / (2.039e12 * 0.9);
  CHECK_NEAR(gemm_seconds(&g, 4096, 4096, 4096, 1, B16), large, 1e-12, "large GEMM: waves at the GEMM rate + traffic");
  CHECK(large > 1.09 * math, "A100, 4096^3: the traffic adds about a tenth");
  /* 16 tokens: one wave, 1 of 128 tile rows used, plus the weights' traffic */
  double bytes = 2.0 * (16 * 8192 + 8192.0 * 8192 + 16 * 8192);
  double small = 108.0 * 128 * 128 * 2 * 8192 / (312e12 * 0.869) + bytes / (2.039e12 * 0.9);
  CHECK_NEAR(gemm_seconds(&g, 16, 8192, 8192, 1, B16), small, 1e-12, "small GEMM");
  CHECK(gemm_seconds(&g, 64, 8192, 8192, 1, B16) / 64 > gemm_seconds(&g, 8192, 8192, 8192, 1, B16) / 8192,
        "small GEMMs are slower per FLOP");
  /* a thin output in the orientation with fewer idle tiles: [4096, 64] as its transpose, 64 rows
   * of one 128-row tile by 16 256-wide columns (16 tiles), not 32 x 1 half-empty 256-wide ones */
  double thin =
      108.0 * 128 * 128 * 2 * 4096 / (312e12 * 0.869) + 2.0 * (4096 * 4096 + 4096 * 64 + 4096 * 64) / (2.039e12 * 0.9);
  CHECK_NEAR(gemm_seconds(&g, 4096, 64, 4096, 1, B16), thin, 1e-12, "thin GEMM: the better orientation");
  CHECK_NEAR(gemm_seconds(&g, 64, 4096, 4096, 1, B16), thin, 1e-12, "thin GEMM: either way round");
  double f, b;
  linear_seconds(&g, 4096, 4096, 4096, B16, B16, &f, &b);
  CHECK_NEAR(f, large, 1e-12, "linear forward");
  CHECK_NEAR(b, 2 * large, 1e-12, "linear backward: input and weight gradients");
  CHECK_NEAR(memory_seconds(&g, 1e9), 1e9 / (2.039e12 * 0.9), 1e-12, "memory-bound bytes over HBM");
}

/* float8 linears on an H100 with no fp8 key: twice the bf16 peak at the fp8 MAMF
 * fraction (70.9 %); the output layer keeps the bf16 rate (80.3 %). */
static void test_fp8(void) {
  llmem_input in;
  llmem_defaults(&in);
  in.fp8_linear = 1;
  in.fp8_tflops = NAN;
  gpu_rates g = rates_of(&in);
  CHECK(g.fp8, "fp8 linears");
  CHECK_NEAR(g.matmul_flops_per_s, 2 * 989e12 * 0.709, 1e-12, "fp8 GEMM rate");
  CHECK_NEAR(g.matmul16_flops_per_s, 989e12 * 0.803, 1e-12, "16-bit GEMM rate");
  in.bf16_tflops = 312; /* A100: no fp8 */
  CHECK(!rates_of(&in).fp8, "no fp8 on Ampere");
}

/* Ring collectives: (n - 1)/n of the buffer per pass at the bus bandwidth. */
static void test_collectives(void) {
  llmem_input in;
  llmem_defaults(&in); /* 450 GB/s NVLink, 50 GB/s network */
  gpu_rates g = rates_of(&in);
  CHECK_NEAR(g.intra_bytes_per_s, 450e9 * 0.67, 1e-12, "NVLink bus bandwidth");
  CHECK_NEAR(g.inter_bytes_per_s, 50e9 * 0.85, 1e-12, "network bus bandwidth");
  CHECK_NEAR(collective_seconds(1e9, 8, 2, g.intra_bytes_per_s), 2 * 1e9 * 7 / 8 / (450e9 * 0.67), 1e-12,
             "all-reduce of 1 GB over 8 GPUs");
  CHECK(collective_seconds(1e9, 1, 2, g.intra_bytes_per_s) == 0, "one rank: nothing to move");
}

/* A small Llama-like model on one H100: 4 layers, hidden 4096, 32 heads. */
static void small_model(llmem_input *in) {
  llmem_defaults(in);
  in->layers = 4;
  in->micro_batch = 1;
  in->seq_len = 4096;
  in->grad_accum = 1;
  in->recompute = LLMEM_RECOMPUTE_NONE;
  in->gpus = 1;
  in->engine = LLMEM_ENGINE_SINGLE;
}

/* Selective recompute repeats the FlashAttention forward: 2 T (s/2) heads (qk + v) FLOPs
 * per layer at FA2's causal forward rate on an H100 at 4096 tokens, 319 of 989.4 TFLOPS
 * (FlashAttention-3 paper, Fig. 5), of the 989 peak. */
static void test_recompute(void) {
  llmem_input in;
  small_model(&in);
  double none = step_of(&in);
  in.recompute = LLMEM_RECOMPUTE_SELECTIVE;
  double selective = step_of(&in);
  double attn_fwd = 2.0 * 4096 * 2048 * 32 * 256 / (989e12 * 319 / 989.4);
  CHECK_NEAR(selective - none, 4 * attn_fwd, 1e-9, "selective recompute: the attention forward again");
  in.recompute = LLMEM_RECOMPUTE_FULL;
  CHECK(step_of(&in) > selective, "full recompute repeats more");
}

/* TP all-reduces: 2 forward + 2 backward per layer of T h bytes, none with infinite links. */
static void test_tp(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 2;
  in.tp = 2;
  in.engine = LLMEM_ENGINE_FSDP2;
  in.sequence_parallel = 0;
  in.intra_node_gb_per_s = 1e6;
  double fast = step_of(&in);
  in.intra_node_gb_per_s = 450;
  double slow = step_of(&in);
  double bytes = 4096.0 * 4096 * 2;
  double all_reduce = 2 * bytes / 2 / (450e9 * 0.67) - 2 * bytes / 2 / (1e6 * 1e9 * 0.67);
  CHECK_NEAR(slow - fast, 4 * 4 * all_reduce, 1e-9, "TP all-reduces, not overlapped");
  /* --tp-comm-overlap: the collectives hide behind the layer's GEMMs, taking
   * 15 % of the compute while they run over NVLink (Calculon's processor
   * usage); a link so slow that nothing hides saves exactly the GEMM time it
   * overlaps */
  in.tp_comm_overlap = 1;
  double hidden = step_of(&in);
  in.intra_node_gb_per_s = 1e6;
  double free_overlap = step_of(&in);
  in.intra_node_gb_per_s = 450;
  /* at 450 GB/s each collective is shorter than the GEMMs beside it: all of it hides */
  CHECK(hidden < slow, "overlap hides the TP time: %.9g < %.9g", hidden, slow);
  CHECK_NEAR(hidden - free_overlap, 0.15 * 4 * 4 * all_reduce, 1e-9,
             "hidden entirely: 15 percent of it taken from compute");
  in.intra_node_gb_per_s = 0.001;
  double crawl_overlap = step_of(&in);
  in.tp_comm_overlap = 0;
  double crawl = step_of(&in);
  in.intra_node_gb_per_s = 1e6;
  in.tp_comm_overlap = 1;
  double fast_overlap = step_of(&in);
  CHECK(crawl - crawl_overlap > 0 && crawl - crawl_overlap < fast_overlap,
        "the GEMM time hidden, at most the step's compute");
}

/* PP bubble: (p - 1) stage-passes for 1F1B, half with 2 virtual stages, none for zero-bubble. */
static void test_bubble(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 2;
  in.pp = 2;
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.intra_node_gb_per_s = 1e6; /* activation sends take next to no time */
  in.grad_accum = 4;
  in.pp_schedule = LLMEM_PP_ZERO_BUBBLE;
  double zb4 = step_of(&in);
  in.grad_accum = 8;
  double zb8 = step_of(&in);
  double stage_pass = (zb8 - zb4) / 4;
  in.pp_schedule = LLMEM_PP_1F1B;
  CHECK_NEAR(step_of(&in) - zb8, stage_pass, 1e-4, "1F1B bubble: p - 1 = 1 stage-pass");
  in.pp_schedule = LLMEM_PP_INTERLEAVED;
  in.vpp = 2;
  CHECK_NEAR(step_of(&in) - zb8, stage_pass / 2, 1e-3, "interleaved: (p - 1) / v");
  /* DualPipe (README @3da1bbe: (PP/2 - 1)(F&B + B - 3W), F = W = B/2): (p - 2)/3
   * stage-passes, with the optimizer step over the two copies' stages: at
   * p = 4 those are half the model, as one rank's at p = 2 */
  in.vpp = 1, in.pp_schedule = LLMEM_PP_ZERO_BUBBLE;
  double pass2 = stage_pass, opt2 = zb8 - 8 * pass2; /* p = 2: the step less its passes */
  in.gpus = 4, in.pp = 4;
  double zb4_8 = step_of(&in);
  in.grad_accum = 16;
  double pass4 = (step_of(&in) - zb4_8) / 8;
  in.grad_accum = 8, in.vpp = 2, in.pp_schedule = LLMEM_PP_DUALPIPE;
  double dual = step_of(&in);
  CHECK_NEAR(dual - 8 * pass4 - opt2, 2 * pass4 / 3, 1e-3, "dualpipe p 4: (p - 2)/3 stage-passes");
  in.grad_accum = 16;
  CHECK_NEAR(step_of(&in) - dual, 8 * pass4, 1e-6, "dualpipe: m stage-passes, m/2 each way through two stages");
}

/* FSDP's gathers and reduce-scatters hide behind the step's compute but for
 * the first gather and last reduction. */
static void test_fsdp_overlap(void) {
  llmem_input in;
  small_model(&in);
  in.layers = 32;
  in.gpus = 8;
  in.engine = LLMEM_ENGINE_FSDP2;
  double fast_links = 0, slow_links = 0;
  in.intra_node_gb_per_s = 1e6;
  fast_links = step_of(&in);
  in.intra_node_gb_per_s = 450;
  slow_links = step_of(&in);
  CHECK(slow_links > fast_links && slow_links < 1.2 * fast_links, "FSDP mostly overlapped: %g vs %g", slow_links,
        fast_links);
}

/* CPU optimizer offload: the GPU's optimizer step goes, the gradients come down
 * and the parameters go up over PCIe Gen5 (64 GB/s); FSDP's parameter offload
 * adds a shard copy up per gather and micro-batch. */
static void test_offload(void) {
  llmem_input in;
  small_model(&in);
  in.engine = LLMEM_ENGINE_DEEPSPEED;
  in.zero_stage = 1;
  double kept = step_of(&in);
  plan pl = plan_of(&in);
  double n, active, trainable;
  model_param_counts(&pl, &n, &active, &trainable);
  gpu_rates g = rates_of(&in);
  double gpu_step =
      trainable * (2 * pl.master_bytes + 2 * pl.grad_bytes + 2 * 2 * 4 + pl.weight_bytes) / g.hbm_bytes_per_s;
  in.offload_optimizer = LLMEM_OFFLOAD_CPU;
  double link = trainable * (pl.grad_bytes + pl.weight_bytes) / 64e9;
  CHECK_NEAR(step_of(&in) - kept, link - gpu_step, 1e-6, "optimizer offload: PCIe both ways, no GPU step");
  in.engine = LLMEM_ENGINE_FSDP2;
  in.zero_stage = 0;
  in.offload_params = LLMEM_OFFLOAD_CPU;
  in.grad_accum = 1;
  double one = step_of(&in);
  in.grad_accum = 2;
  double two = step_of(&in);
  in.offload_optimizer = in.offload_params = LLMEM_OFFLOAD_NONE;
  double plain_two = step_of(&in);
  in.grad_accum = 1;
  double plain_one = step_of(&in);
  CHECK_NEAR((two - one) - (plain_two - plain_one), 2 * pl.weight_bytes * n / 64e9, 1e-6,
             "parameter offload: two shard copies up per micro-batch (gather forward and backward)");
}

/* A layer's forward GEMMs of small_model-like shapes (fused QKV, fused gate/up). */
static double layer_linear_fwd(const gpu_rates *g, const plan *pl, double T) {
  double h = pl->in->hidden, q = pl->in->heads * pl->head_dim, kv = pl->kv_heads * pl->head_dim, f = pl->in->ffn_hidden;
  return gemm_seconds(g, T, q + 2 * kv, h, 1, B16) + gemm_seconds(g, T, h, q, 1, B16) +
         gemm_seconds(g, T, (pl->gated ? 2 : 1) * f, h, 1, B16) + gemm_seconds(g, T, h, f, 1, B16);
}

/* torchtitan's per-op SAC (parallelize_llama.py @9dec370) recomputes the even
 * mm calls of a block, wk, wo and w3 (call order wq wk wv wo w1 w3 w2), and
 * every op outside _save_list (the pointwise forward). The pointwise forward
 * is what full recompute repeats beyond the GEMMs and the attention. */
static void test_per_op_sac(void) {
  llmem_input in;
  small_model(&in);
  plan pl = plan_of(&in);
  CHECK(pl.gated, "a gated MLP");
  gpu_rates g = rates_of(&in);
  double T = 4096, h = pl.in->hidden, L = pl.layers;
  double none = step_of(&in);
  in.recompute = LLMEM_RECOMPUTE_SELECTIVE;
  double attn = step_of(&in) - none; /* L x the attention forward */
  in.recompute = LLMEM_RECOMPUTE_FULL;
  double full = step_of(&in) - none;
  double pointwise = full - attn - L * layer_linear_fwd(&g, &pl, T);
  double sac = gemm_seconds(&g, T, pl.kv_heads * pl.head_dim, h, 1, B16) +
               gemm_seconds(&g, T, h, pl.in->heads * pl.head_dim, 1, B16) +
               gemm_seconds(&g, T, pl.in->ffn_hidden, h, 1, B16);
  in.recompute = LLMEM_RECOMPUTE_PER_OP;
  CHECK_NEAR(step_of(&in) - none, L * sac + pointwise, 1e-9, "per-op SAC: wk, wo, w3 and the pointwise ops");
  CHECK(L * sac < L * layer_linear_fwd(&g, &pl, T) / 2, "fewer than half the GEMMs (w3 not w1+w3, wk not wq)");
}

/* In a MoE layer per-op SAC rebuilds the routed experts (torch._grouped_mm is on no save list) and the
 * router gate (forced) whole, and half the other GEMMs (docs/memory-model.md 7.10): with 8 experts, top 2,
 * every layer MoE, the recompute is L x (half the attention's GEMMs + the router + the experts) + the
 * pointwise forward. */
static void test_per_op_sac_moe(void) {
  llmem_input in;
  small_model(&in);
  in.moe = 1, in.moe_experts = 8, in.moe_top_k = 2, in.moe_ffn_hidden = 2048;
  plan pl = plan_of(&in);
  gpu_rates g = rates_of(&in);
  double T = 4096, h = pl.in->hidden, L = pl.layers, E = 8, f = 2048, per_expert = T * 2 / E;
  double q = pl.in->heads * pl.head_dim, kv = pl.kv_heads * pl.head_dim;
  double attn_lin = gemm_seconds(&g, T, q + 2 * kv, h, 1, B16) + gemm_seconds(&g, T, h, q, 1, B16);
  double rebuilt = gemm_seconds(&g, T, E, h, 1, B16) +
                   E * (gemm_seconds(&g, per_expert, 2 * f, h, 1, B16) + gemm_seconds(&g, per_expert, h, f, 1, B16));
  double none = step_of(&in);
  in.recompute = LLMEM_RECOMPUTE_SELECTIVE;
  double attn = step_of(&in) - none;
  in.recompute = LLMEM_RECOMPUTE_FULL;
  double pointwise = step_of(&in) - none - attn - L * (attn_lin + rebuilt);
  in.recompute = LLMEM_RECOMPUTE_PER_OP;
  CHECK_NEAR(step_of(&in) - none, L * (attn_lin / 2 + rebuilt) + pointwise, 1e-9,
             "per-op SAC, MoE: the experts and router whole, half the attention's GEMMs");
}

/* torchtitan's float8 TP gathers the norm outputs in float8 (torchao
 * PrepareFloat8ModuleInput): the 2 forward all-gathers move 1 byte an element,
 * the reduce-scatters and the backward's collectives 2. */
static void test_fp8_tp_gather(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 2, in.tp = 2, in.sequence_parallel = 1;
  in.engine = LLMEM_ENGINE_FSDP2;
  in.framework = LLMEM_FW_TORCHTITAN;
  in.fp8_linear = 1;
  in.intra_node_gb_per_s = 1e6;
  double fast = step_of(&in);
  in.intra_node_gb_per_s = 450;
  double slow = step_of(&in);
  double bw = 450e9 * 0.67, th = 4096.0 * 4096;
  double one = th / 2 / bw - th / 2 / (1e6 * 1e9 * 0.67); /* a pass of T h elements over 2 ranks, per byte */
  double fwd = 2 * (1 * one + 2 * one), bwd = 2 * (2 * 2 * one);
  CHECK_NEAR(slow - fast, 4 * (fwd + bwd), 1e-6, "float8 forward gathers");
}

/* FSDP2 under torchtitan's wrapping (fully_shard per block, then the root with
 * the embedding and the output layer): the root's gathers and reduce-scatter
 * are exposed, with one block's. */
static void test_fsdp_root(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 8, in.engine = LLMEM_ENGINE_FSDP2;
  in.intra_node_gb_per_s = 1e6;
  double fast = step_of(&in);
  in.intra_node_gb_per_s = 450;
  double slow = step_of(&in);
  plan pl = plan_of(&in);
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  double bw = 450e9 * 0.67, fast_bw = 1e6 * 1e9 * 0.67, gathers = pl.in->reshard_after_forward != 0 ? 2 : 1;
  double per = gathers * pl.weight_bytes + pl.grad_bytes;
  double root = embedding_params(&pl) + head_params(&pl);
  double exposed = collective_seconds(root * per, 8, 1, bw) + collective_seconds((total - root) * per, 8, 1, bw) / 4;
  double exposed_fast =
      collective_seconds(root * per, 8, 1, fast_bw) + collective_seconds((total - root) * per, 8, 1, fast_bw) / 4;
  /* the blocks' collectives hide behind the step, taking 15 % of it over NVLink (Calculon) */
  double hidden =
      collective_seconds((total - root) * per, 8, 1, bw) - collective_seconds((total - root) * per, 8, 1, fast_bw);
  CHECK_NEAR(slow - fast, exposed - exposed_fast + 0.15 * hidden, 1e-9,
             "the root unit's collectives and one block's exposed, the rest hidden");
}

/* FSDP2 under PP: the most loaded stage holds its layers' share and the larger of the embedding and the
 * output layer, which can be more than the stages' average (16 small layers over 16 stages, a 32,000 x 1,024
 * vocabulary: the average stage holds less than the embedding). The root's collectives are exposed, so the DP
 * part is at least the root's gather and reduce-scatter over the 3 data-parallel ranks at 1 TB/s (it was negative: the
 * root taken off the average stage's parameters; found by npm run fuzz, the planner target). */
static void test_fsdp_root_pipeline(void) {
  llmem_input in;
  small_model(&in);
  in.layers = 16, in.hidden = 1024, in.heads = 8, in.kv_heads = 8, in.ffn_hidden = 256, in.vocab = 32000;
  in.gpus = 48, in.pp = 16, in.grad_accum = 32, in.engine = LLMEM_ENGINE_FSDP2;
  llmem_step_result r;
  CHECK(llmem_step_time(&in, &r) == LLMEM_OK, "FSDP2 over 16 stages");
  plan pl = plan_of(&in);
  double per = (pl.in->reshard_after_forward != 0 ? 2 : 1) * pl.weight_bytes + pl.grad_bytes;
  double root = fmax(embedding_params(&pl), head_params(&pl)), bw = 1e12; /* faster than any link: a bound */
  for (int k = 0; k < LLMEM_STEP_PART_COUNT; k++) CHECK(r.parts_seconds[k] >= 0, "part %d: %g", k, r.parts_seconds[k]);
  CHECK(r.parts_seconds[LLMEM_STEP_DP_COMM] >= collective_seconds(root * per, 3, 1, bw),
        "the root's collectives exposed: %g s", r.parts_seconds[LLMEM_STEP_DP_COMM]);
}

/* torchtitan's CP (PyTorch ring attention, all-gather rotation): the K/V
 * gather hides behind the diagonal block, 1/cp of the attention; the merge
 * in fp32 and the fp32 gradient accumulators are memory-bound passes; a slow
 * link leaves the gathers and the last dk/dv send exposed. */
static void test_cp_ring(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 2, in.cp = 2, in.engine = LLMEM_ENGINE_FSDP2;
  in.framework = LLMEM_FW_TORCHTITAN;
  in.gpus_per_node = 1; /* the CP (and FSDP) group across nodes */
  in.inter_node_gb_per_s = 1e6;
  double fast = step_of(&in);
  in.intra_node_gb_per_s = 1e6;
  double slowest_links = 0.01; /* GB/s: every transfer longer than any kernel */
  in.inter_node_gb_per_s = slowest_links;
  double slow = step_of(&in);
  plan pl = plan_of(&in);
  gpu_rates g = rates_of(&in);
  double T = 2048, L = 4, bw = slowest_links * 1e9 * 0.85;
  double width = pl.kv_heads * pl.head_dim, chunk = 2 * T * width * 2;
  /* FA2 on an H100 at the 2048 tokens a rank holds: causal forward 298, backward 291 of 989.4 TFLOPS */
  double flops = 2 * T * 2048 * pl.in->heads * 2 * pl.head_dim;
  double attn_fwd = flops / (989e12 * 298 / 989.4), attn_bwd = 2.5 * flops / (989e12 * 291 / 989.4);
  double gather = chunk / bw, dkv = 2 * (chunk / 2) * 4 / bw;
  double cp = (gather - attn_fwd / 2) + (gather - attn_bwd / 2) + dkv + (dkv - attn_bwd / 2);
  /* FSDP over the CP group: every collective exposed at this rate, the root's and the blocks' */
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  double per = 2 * pl.weight_bytes + pl.grad_bytes;
  double fsdp = collective_seconds(total * per, 2, 1, bw);
  double fast_part = collective_seconds(total * per, 2, 1, 1e6 * 1e9 * 0.85);
  (void)g;
  CHECK(slow - fast > L * cp, "the exposed CP transfers: %.9g > %.9g", slow - fast, L * cp);
  CHECK_NEAR(slow - fast, L * cp + fsdp - fast_part, 1e-3 * (slow - fast), "CP ring exposure and FSDP");
}

/* Ulysses (parallel.cp_all_to_all = cp = 4) under DDP on one node: q, k, v there and the output back, forward
 * and again for the gradients, each moving (a2a - 1) / a2a of its bytes at the node's bus rate, none hidden.
 * T = 4096 / 4 = 1024 tokens a rank; q and the output 32 heads x 128, k and v 8 heads x 128, bf16. */
static void test_cp_ulysses(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 4, in.cp = 4, in.cp_all_to_all = 4, in.engine = LLMEM_ENGINE_DDP;
  llmem_step_result r;
  CHECK(llmem_step_time(&in, &r) == LLMEM_OK, "Ulysses step");
  plan pl = plan_of(&in);
  gpu_rates g = rates_of(&in);
  double T = 1024, q = T * pl.in->heads * pl.head_dim * 2, kv = 2 * T * pl.kv_heads * pl.head_dim * 2;
  double moved = (2 * q + kv) * 3 / 4 / g.intra_bytes_per_s;
  CHECK_NEAR(r.parts_seconds[LLMEM_STEP_CP_COMM], 4 * 2 * moved, 1e-9 * moved, "Ulysses: four exchanges each way");
}

/* A DDP gradient all-reduce across nodes: NCCL's rings each leave a node
 * through a different GPU's NIC, so a group with k ranks in a node has k NICs'
 * bus bandwidth (16 GPUs in 2 nodes: 8 ranks per node; with TP 2 the DP group
 * has 4; Megatron's DDP with its overlap, there). On links slow enough to leave it exposed, the step grows by the
 * all-reduce beyond one micro-batch's backward plus one layer's share. */
static double ddp_slow_link_step(llmem_input *in, double inter_gb_per_s) {
  in->inter_node_gb_per_s = inter_gb_per_s;
  return step_of(in);
}

/* What an overlapped collective takes of the compute goes with its rate
 * (Calculon's processor_usage: 15 % on NVLink, 2 % on the network): a DDP
 * all-reduce over 2 nodes whose 8 NICs a node outrun NVLink (8 x 50 x 0.85 >
 * 450 x 0.67 GB/s) runs at NVLink's rate and takes its share; with 30 GB/s
 * NICs (8 x 30 x 0.85 = 204 GB/s) the network's. The backward it hides
 * behind (16 x 4096 tokens, 4 layers) is longer than either; the last
 * layer's part of it is exposed. */
static void test_share_by_rate(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 16, in.gpus_per_node = 8, in.engine = LLMEM_ENGINE_DDP, in.micro_batch = 16;
  plan pl = plan_of(&in);
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  double all_reduce = 2 * total * pl.grad_bytes * 15 / 16;
  double nvlink = all_reduce / (450e9 * 0.67), network = all_reduce / (8 * 30e9 * 0.85);
  in.inter_node_gb_per_s = 50;
  double fast = step_of(&in);
  in.inter_node_gb_per_s = 30;
  double slow = step_of(&in);
  CHECK_NEAR(slow - fast, (0.02 + 0.25) * network - (0.15 + 0.25) * nvlink, 1e-9,
             "a ring at NVLink's rate takes NVLink's share of the compute");
}

static void test_ring_across_nodes(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 16, in.gpus_per_node = 8, in.engine = LLMEM_ENGINE_DDP;
  for (int tp = 1; tp <= 2; tp *= 2) {
    in.tp = tp;
    if (tp > 1) in.engine = LLMEM_ENGINE_MEGATRON, in.overlap_comm = 1; /* DDP-style overlapped all-reduce */
    plan pl = plan_of(&in);
    double total, active, trainable;
    model_param_counts(&pl, &total, &active, &trainable);
    double dp = 16.0 / tp, per_node = 8.0 / tp, bytes = total / tp * pl.grad_bytes;
    double slow = ddp_slow_link_step(&in, 0.01), slower = ddp_slow_link_step(&in, 0.005);
    double all_reduce = 2 * bytes * (dp - 1) / dp, bw = per_node * 0.01e9 * 0.85;
    double grown = (all_reduce / (bw / 2) - all_reduce / bw) * (1 + 1 / pl.layers);
    CHECK_NEAR(slower - slow, grown, 1e-9 * grown,
               tp == 1 ? "ring all-reduce: 8 NICs per node" : "ring all-reduce: 4 NICs per node (TP 2)");
  }
}

/* Megatron's unfused vocab-parallel cross-entropy passes over the logits in
 * fp32, one kernel per step: 2 ab + 48 bytes a logit forward and backward,
 * against a fused loss's 3 ab (read the logits, write their gradient). */
static void test_megatron_loss(void) {
  llmem_input in;
  small_model(&in);
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.loss = LLMEM_LOSS_STANDARD;
  double unfused = step_of(&in);
  in.loss = LLMEM_LOSS_FUSED;
  double fused = step_of(&in);
  plan pl = plan_of(&in);
  gpu_rates g = rates_of(&in);
  double logits = 4096 * pl.vocab_padded;
  CHECK_NEAR(unfused - fused, logits * (2 * 2 + 48 - 3 * 2) / g.hbm_bytes_per_s, 1e-9,
             "Megatron's fp32 cross-entropy passes");
}

/* A GEMM's traffic by operand and output dtype: float8 operands (1 byte)
 * with a bf16 output (torchao's _scaled_mm), on an H100 (90 % of 3.35 TB/s),
 * and a Megatron weight gradient accumulated into an fp32 main_grad (read and
 * written: 8 bytes an element) against a 16-bit .grad written once. */
static void test_gemm_bytes(void) {
  llmem_input in;
  llmem_defaults(&in);
  gpu_rates g = rates_of(&in);
  double hbm = 3.35e12 * 0.9, n = 4096;
  gemm_bytes fp8 = {1, 2};
  double traffic = (n * n + n * n) * 1 + n * n * 2;
  CHECK_NEAR(gemm_seconds(&g, n, n, n, 1, fp8) - gemm_seconds(&g, n, n, n, 1, B16), (traffic - 6 * n * n) / hbm, 1e-9,
             "float8 operands, 16-bit output");
  gemm_bytes main_grad = {2, 8};
  double f, b16, bacc;
  linear_seconds(&g, 8192, 4096, 1024, B16, B16, &f, &b16);
  linear_seconds(&g, 8192, 4096, 1024, B16, main_grad, &f, &bacc);
  CHECK_NEAR(bacc - b16, 4096.0 * 1024 * (8 - 2) / hbm, 1e-9, "weight gradient accumulated into fp32 main_grad");
}

/* Megatron's gradient-accumulation fusion: every weight gradient GEMM (the
 * layers' linears and the output layer) reads and writes main_grad in the
 * gradient dtype. fp32 against bf16 gradients adds (8 - 4) bytes a weight
 * there, and 2 x (4 - 2) a parameter in the optimizer step (gradient read,
 * and written back unscaled: core/steptime.c optimizer_seconds). */
static void test_megatron_wgrad(void) {
  llmem_input in;
  small_model(&in);
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.grad_dtype = LLMEM_DTYPE_FP32;
  double fp32 = step_of(&in);
  plan pl = plan_of(&in);
  in.grad_dtype = LLMEM_DTYPE_BF16;
  double bf16 = step_of(&in);
  gpu_rates g = rates_of(&in);
  double h = pl.in->hidden, q = pl.in->heads * pl.head_dim, kv = pl.kv_heads * pl.head_dim, f = pl.in->ffn_hidden;
  double layer = h * (q + 2 * kv) + q * h + (pl.gated ? 2 : 1) * h * f + f * h;
  double weights = pl.layers * layer + h * pl.vocab_padded;
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  /* and the embedding's dense gradient added into main_grad (read and write it) */
  double embedding = h * pl.vocab_padded * 2 * (4 - 2);
  CHECK_NEAR(fp32 - bf16, (weights * (8 - 4) + trainable * 2 * (4 - 2) + embedding) / g.hbm_bytes_per_s, 1e-9,
             "Megatron: weight gradients accumulated into main_grad, in its dtype");
}

/* The word embedding's backward, per micro-batch on an H100 (90 % of 3.35
 * TB/s): PyTorch writes the whole zero-filled [vocab, hidden] gradient in bf16
 * (2 bytes an element); Megatron then adds it into the fp32 main_grad (read 4
 * and 2, write 4), over its vocabulary shard under TP. Frozen under LoRA
 * unless trained as a full module. */
static void test_embedding_backward(void) {
  llmem_input in;
  small_model(&in);
  plan pl = plan_of(&in);
  gpu_rates g = rates_of(&in);
  double hbm = 3.35e12 * 0.9, elements = pl.vocab_padded * pl.in->hidden;
  CHECK_NEAR(embedding_backward_seconds(&pl, &g), elements * 2 / hbm, 1e-12, "PyTorch: the dense gradient written");
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.grad_dtype = LLMEM_DTYPE_FP32;
  pl = plan_of(&in);
  CHECK_NEAR(embedding_backward_seconds(&pl, &g), elements * (2 + 4 + 2 + 4) / hbm, 1e-12,
             "Megatron: and added into main_grad");
  in.ft_method = LLMEM_FT_LORA;
  in.full_modules = 0;
  pl = plan_of(&in);
  CHECK(embedding_backward_seconds(&pl, &g) == 0, "LoRA: a frozen embedding has no gradient");
  in.full_modules = 1 << LLMEM_FM_EMBEDDING;
  pl = plan_of(&in);
  CHECK(embedding_backward_seconds(&pl, &g) > 0, "LoRA: an embedding trained in full has one");
  /* pipelined, the embedding's first stage and the output layer's last are
   * apart: the slower of the two sets the stage pass (the head here), and the
   * embedding adds nothing; unpipelined both run in one pass */
  small_model(&in);
  in.engine = LLMEM_ENGINE_MEGATRON;
  in.grad_dtype = LLMEM_DTYPE_FP32;
  in.gpus = 2, in.pp = 2, in.grad_accum = 4;
  in.pp_schedule = LLMEM_PP_ZERO_BUBBLE;
  double fp32_pp = step_of(&in);
  in.grad_dtype = LLMEM_DTYPE_BF16;
  double bf16_pp = step_of(&in);
  pl = plan_of(&in);
  double h = pl.in->hidden, q = pl.in->heads * pl.head_dim, kv = pl.kv_heads * pl.head_dim, f = pl.in->ffn_hidden;
  double layer = h * (q + 2 * kv) + q * h + (pl.gated ? 2 : 1) * h * f + f * h;
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  /* per stage pass: its 2 layers' and the head's weight gradients into main_grad
   * (8 - 4 bytes); the optimizer step over the stage's half of the model */
  double per_pass = (2 * layer + h * pl.vocab_padded) * (8 - 4);
  CHECK_NEAR(fp32_pp - bf16_pp, (4 * per_pass + trainable / 2 * 2 * (4 - 2)) / hbm, 1e-9,
             "pipelined: no embedding term beside the head");
}

/* Eager RMSNorm on x.float() (torchtitan norms.py, transformers LlamaRMSNorm):
 * 4 ab + 28 bytes an element forward, 8 ab + 76 backward (the casts and fp32
 * passes of its ops and their autograd, pow's gradient as x.pow(1), 2 *, grad *:
 * r 4 w 4, r 4 w 4, r 8 w 4), against 7 ab and 18 ab without the upcast; two
 * norms a layer over T h elements. */
static void test_eager_rmsnorm(void) {
  llmem_input in;
  small_model(&in);
  in.master_weights = 0; /* 16-bit parameters: no autocast, a 16-bit residual stream */
  in.torch_compile = 0;
  in.norm_upcast = 1;
  double upcast = step_of(&in);
  in.norm_upcast = 0;
  double plain = step_of(&in);
  gpu_rates g = rates_of(&in);
  double elements = 4 * 2 * 4096.0 * 4096; /* layers x norms x T x h */
  double bytes = (4 * 2 + 28 - 7 * 2) + (8 * 2 + 76 - 18 * 2);
  CHECK_NEAR(upcast - plain, elements * bytes / g.hbm_bytes_per_s, 1e-9, "eager RMSNorm's fp32 passes");
}

/* Eager LayerNorm is one aten kernel each way (2 ab forward, 3 ab backward),
 * against eager RMSNorm's 7 ab and 18 ab without the upcast; LayerNorm's bias
 * adds its parameters to the optimizer step. */
static double optimizer_step_seconds(const llmem_input *in) {
  plan pl;
  int field;
  const char *detail;
  CHECK(plan_build(in, &pl, &field, &detail) == LLMEM_OK, "plan");
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  /* PyTorch's foreach AdamW with clipping (one GPU, generic stack): 4 accesses of the
   * fp32 parameter, 6 of the gradient, 14 of the fp32 states */
  double master = pl.master_bytes > 0 ? pl.master_bytes : pl.weight_bytes;
  double per = 4 * master + 6 * pl.grad_bytes + 14 * 4;
  return trainable * per / rates_of(in).hbm_bytes_per_s;
}

static void test_eager_layernorm(void) {
  llmem_input in;
  small_model(&in);
  in.master_weights = 0; /* as test_eager_rmsnorm */
  in.torch_compile = 0;
  in.norm_upcast = 0;
  double rms = step_of(&in), rms_opt = optimizer_step_seconds(&in);
  in.norm = LLMEM_NORM_LAYERNORM;
  double ln = step_of(&in), ln_opt = optimizer_step_seconds(&in);
  double elements = 4 * 2 * 4096.0 * 4096; /* layers x norms x T x h */
  double saved = elements * ((7 + 18) - (2 + 3)) * 2 / rates_of(&in).hbm_bytes_per_s;
  CHECK_NEAR(rms - ln, saved - (ln_opt - rms_opt), 1e-9, "eager LayerNorm: one kernel each way");
}

/* FlashAttention-2 on an H100 by sequence length (FlashAttention-3 paper,
 * Figs. 5 and 6, TFLOPS of 989.4): the measured points, linear in log2 of the
 * length between them, flat beyond; A100 keeps FA2's fixed fractions. */
static void test_flash_rates(void) {
  llmem_input in;
  llmem_defaults(&in);
  gpu_rates g = rates_of(&in);
  CHECK_NEAR(flash_fraction(&g, 4096, 1, 0), 319 / 989.4, 1e-12, "causal forward at 4k");
  CHECK_NEAR(flash_fraction(&g, 4096, 0, 0), 368 / 989.4, 1e-12, "forward without the mask at 4k");
  CHECK_NEAR(flash_fraction(&g, 4096, 1, 1), 310 / 989.4, 1e-12, "backward at 4k");
  /* 8192 * sqrt(2) is halfway between 8k and 16k in log2: (333 + 335) / 2 */
  CHECK_NEAR(flash_fraction(&g, 8192 * sqrt(2.0), 1, 0), 334 / 989.4, 1e-12, "between the points");
  CHECK_NEAR(flash_fraction(&g, 262144, 1, 1), 322 / 989.4, 1e-12, "flat beyond 16k");
  CHECK_NEAR(flash_fraction(&g, 128, 1, 1), 214 / 989.4, 1e-12, "flat below 512");
  in.bf16_tflops = 312;
  g = rates_of(&in);
  CHECK_NEAR(flash_fraction(&g, 4096, 1, 0), 0.73, 1e-12, "A100: FA2 forward");
  CHECK_NEAR(flash_fraction(&g, 4096, 1, 1), 0.50, 1e-12, "A100: FA2 backward");
}

/* torchtitan's async TP (PyTorch's micro-pipeline TP pass) fuses the forward's
 * all-gathers and reduce-scatters and the backward's all-gathers into their
 * matmuls; the backward's 2 reduce-scatters a layer take a sum of matmuls and
 * stay exposed. With links so slow that nothing hides, the async step exceeds
 * the fast-link one by those reduce-scatters plus what the others leave beyond
 * the GEMMs; here: on fast links only the 2 reduce-scatters' time grows. */
static void test_async_tp(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 2, in.tp = 2, in.sequence_parallel = 1;
  in.engine = LLMEM_ENGINE_FSDP2;
  in.framework = LLMEM_FW_TORCHTITAN;
  in.optimizer_impl = LLMEM_OPT_IMPL_FUSED; /* the same step beside the generic stack below */
  in.tp_comm_overlap = 1;
  in.intra_node_gb_per_s = 1e6;
  double fast = step_of(&in);
  in.intra_node_gb_per_s = 450;
  double async = step_of(&in);
  double bw = 450e9 * 0.67, fast_bw = 1e6 * 1e9 * 0.67, bytes = 4096.0 * 4096 * 2;
  double rs = bytes / 2 / bw - bytes / 2 / fast_bw; /* one reduce-scatter over 2 ranks */
  /* the fused 4 forward and 2 backward collectives a layer hide, 15 % of them taken from compute */
  double fused = 6 * rs;
  CHECK_NEAR(async - fast, 4 * (2 * rs + 0.15 * fused), 1e-9, "backward reduce-scatters exposed");
  in.framework = LLMEM_FW_GENERIC;
  in.loss = LLMEM_LOSS_LOSS_PARALLEL; /* torchtitan's loss under TP, not the generic F.cross_entropy */
  CHECK(step_of(&in) < async, "Megatron-style overlap (userbuffers) hides the backward's too");
}

/* PyTorch's AdamW without the fused kernel (foreach, torchtitan's until
 * 2025-02) and grad-norm clipping: 4 accesses of the parameter, 6 of the
 * gradient and 14 of the states' dtype, against the fused step's 2, 2 and 4
 * (plus the 16-bit copy's write). */
static void test_foreach_adamw(void) {
  llmem_input in;
  small_model(&in);
  in.engine = LLMEM_ENGINE_FSDP2;
  in.optimizer = LLMEM_OPT_ADAMW;
  in.optimizer_impl = LLMEM_OPT_IMPL_FOREACH;
  double foreach = step_of(&in);
  plan pl = plan_of(&in);
  gpu_rates g = gpu_rates_for(&pl);
  double master = pl.master_bytes > 0 ? pl.master_bytes : pl.weight_bytes;
  double state = dtype_bytes((int)pl.in->optimizer_dtype);
  double per = 4 * master + 6 * pl.grad_bytes + 14 * state;
  double fused = 2 * master + 2 * pl.grad_bytes + 4 * state + (pl.master_bytes > 0 ? pl.weight_bytes : 0);
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  in.optimizer_impl = LLMEM_OPT_IMPL_FUSED;
  CHECK_NEAR(foreach - step_of(&in), memory_seconds(&g, trainable * (per - fused)), 1e-9,
             "foreach AdamW and clipping: one pass per op");
  in.engine = LLMEM_ENGINE_MEGATRON, in.optimizer_impl = LLMEM_OPT_IMPL_FOREACH;
  double megatron = step_of(&in);
  in.optimizer_impl = LLMEM_OPT_IMPL_FUSED;
  CHECK_NEAR(megatron, step_of(&in), 1e-12, "Megatron's own fused Adam either way");
}

/* torch.autocast over fp32 parameters (one GPU, fp32 master weights, bf16):
 * per layer, an fp32 residual stream (two adds of r 4 + r 2, w 4 against 3 x
 * 2: +8 bytes an element forward, twice that backward), the eager RMSNorm's
 * casts gone (28 forward against 4 x 2 + 28; 92 backward either way), and
 * each of the five linears on a norm output (q, k, v; gate, up) casting it
 * (r 4 w 2; backward r 2 w 4 and the sums of the fp32 gradients, 2 + 1 of
 * 12 bytes against 16-bit sums of 6): 22 bytes an element forward, 64
 * backward, over T h; rotary embedding in fp32 (transformers' cos and sin in
 * the fp32 stream's dtype) and cast back by SDPA: 6 x 2 + 24 against 2 x 2 +
 * 16 bytes a q and k element forward, 14 x 2 + 28 against 40 backward; per
 * micro-batch every weight but the embedding cast (r 4 w 2) and its
 * gradient cast back (r 2 w 4); with 2 micro-batches, AccumulateGrad's add
 * (r 8, w 4) in the second. */
static void test_autocast(void) {
  llmem_input in;
  small_model(&in);
  plan pl = plan_of(&in);
  CHECK(pl.autocast, "one GPU with fp32 master weights runs under autocast");
  gpu_rates g = gpu_rates_for(&pl);
  double with = step_time_seconds(&pl, NULL, NULL);
  pl.autocast = 0;
  double without = step_time_seconds(&pl, NULL, NULL);
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  double cast = total - embedding_params(&pl) + (pl.in->tied_embeddings ? pl.in->vocab * pl.in->hidden : 0);
  double th = 4096.0 * pl.in->hidden, qk = 4096.0 * (pl.in->heads + pl.kv_heads) * pl.head_dim;
  double rope = qk * ((36 - 20) + (56 - 40));
  CHECK_NEAR(with - without, memory_seconds(&g, 4 * ((22 + 64) * th + rope) + cast * (6 + 6)), 1e-9,
             "autocast: fp32 stream, input casts, weight casts");
  in.grad_accum = 2;
  pl = plan_of(&in);
  double two = step_time_seconds(&pl, NULL, NULL);
  pl.autocast = 0;
  double two_without = step_time_seconds(&pl, NULL, NULL);
  CHECK_NEAR(two - two_without, 2 * (with - without) + memory_seconds(&g, cast * 12), 1e-9,
             "autocast: the second micro-batch adds its gradient into .grad");
  in.grad_accum = 1, in.recompute = LLMEM_RECOMPUTE_FULL;
  pl = plan_of(&in);
  double full = step_time_seconds(&pl, NULL, NULL);
  pl.autocast = 0;
  CHECK_NEAR(full - step_time_seconds(&pl, NULL, NULL),
             (with - without) + memory_seconds(&g, 4 * (22 * th + qk * (36 - 20)) + cast * 6), 1e-9,
             "autocast: a checkpointed layer's recompute casts again");
}

/* torch.optim.Adafactor's for-loop step: 5 accesses of the parameter, 3 of
 * the gradient, 11 of the variance estimate (fp32 throughout here: 76 bytes
 * a parameter), against SGD's update without momentum. */
static void test_adafactor(void) {
  llmem_input in;
  small_model(&in);
  in.master_weights = 0, in.dtype = LLMEM_DTYPE_FP32, in.grad_dtype = LLMEM_DTYPE_FP32;
  in.optimizer = LLMEM_OPT_SGD;
  double sgd = step_of(&in);
  in.optimizer = LLMEM_OPT_ADAFACTOR;
  double adafactor = step_of(&in);
  plan pl = plan_of(&in);
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  double sgd_bytes = 2 * 4 + 2 * 4; /* r w parameter, r w gradient (optimizer_seconds) */
  CHECK_NEAR(adafactor - sgd, trainable * (76 - sgd_bytes) / rates_of(&in).hbm_bytes_per_s, 1e-9,
             "Adafactor: its ops' passes");
}

/* LoRA on every linear with fp32 adapters on a bf16 model: PEFT casts each
 * adapted linear's input to fp32 and autocast casts it back, 2 (2 + 4) bytes
 * an input element each way; dropout adds r 4 w 4 and a byte mask each way.
 * QLoRA's base: bitsandbytes dequantizes each weight forward and backward,
 * 0.5 bytes read and 2 written a parameter each time. */
static void test_lora_traffic(void) {
  llmem_input in;
  small_model(&in);
  in.ft_method = LLMEM_FT_LORA;
  in.lora_rank = 8;
  in.lora_targets = (1 << LLMEM_LORA_TARGET_COUNT_) - 1;
  in.adapter_dtype = LLMEM_DTYPE_BF16;
  double same = step_of(&in);
  in.adapter_dtype = LLMEM_DTYPE_FP32;
  double cast = step_of(&in);
  plan pl = plan_of(&in);
  gpu_rates g = gpu_rates_for(&pl);
  double h = pl.in->hidden, q = pl.in->heads * pl.head_dim, f = pl.in->ffn_hidden;
  double inputs = 4096.0 * (5 * h + q + f); /* q, k, v, gate, up read h; o reads q; down f */
  CHECK_NEAR(cast - same, 4 * memory_seconds(&g, inputs * 2 * 2 * (2 + 4)), 1e-9, "LoRA: PEFT's input casts");
  in.lora_dropout = 0.05;
  CHECK_NEAR(step_of(&in) - cast, 4 * memory_seconds(&g, inputs * 2 * (2 * 4 + 1)), 1e-9, "LoRA: dropout");
  in.lora_dropout = 0;
  /* LitGPT: one lora_A over the input for q, k and v: k's and v's reads go, each way; its fused
   * qkv linear leaves no input gradients to sum (2 adds of r 4 w 2 bytes over T h) */
  in.lora_fused_qkv = 1;
  CHECK_NEAR(cast - step_of(&in), 4 * memory_seconds(&g, 2 * 4096.0 * h * (2 * 12 + 6 * 2 + 6)), 1e-9,
             "LoRA: LitGPT's fused qkv reads its input once");
  in.lora_fused_qkv = NAN;
  in.ft_method = LLMEM_FT_QLORA;
  in.quant = LLMEM_QUANT_NF4;
  double qlora = step_of(&in);
  pl = plan_of(&in);
  layer_params lp = layer_params_on_rank(&pl, 0);
  CHECK_NEAR(qlora - cast, 4 * memory_seconds(&g, 2 * lp.quantizable_count * (0.5 + 2)), 1e-9,
             "QLoRA: a dequantized weight forward and backward");
  in.quant_from_fp16 = 1; /* Lightning's fp16 state under bf16: .to(bf16) reads the copy and writes a second */
  CHECK_NEAR(step_of(&in) - qlora, 4 * memory_seconds(&g, 2 * lp.quantizable_count * (2 + 2)), 1e-9,
             "QLoRA: the cast of an fp16 state's weight");
}

/* Where the time goes (llmem_step_result.parts_seconds): the parts add up to
 * the step; 1F1B's bubble is p - 1 stage passes, (p - 1) / m of the m passes
 * the compute parts hold; no parallelism, no communication part. */
static void test_step_parts(void) {
  llmem_input in;
  small_model(&in);
  in.layers = 8, in.gpus = 4, in.pp = 4, in.grad_accum = 8;
  in.engine = LLMEM_ENGINE_MEGATRON;
  llmem_step_result r;
  CHECK(llmem_step_time(&in, &r) == LLMEM_OK, "step time");
  double sum = 0, compute = 0;
  for (int k = 0; k < LLMEM_STEP_PART_COUNT; k++) sum += r.parts_seconds[k];
  for (int k = LLMEM_STEP_MATMULS; k <= LLMEM_STEP_EP_COMM; k++) compute += r.parts_seconds[k];
  CHECK_NEAR(sum, r.step_seconds, 1e-12, "the parts add up to the step");
  CHECK_NEAR(r.parts_seconds[LLMEM_STEP_PIPELINE_BUBBLE], compute * 3 / 8, 1e-12, "1F1B: 3 idle stage passes of 8");
  CHECK(r.parts_seconds[LLMEM_STEP_PIPELINE_SENDS] > 0 && r.parts_seconds[LLMEM_STEP_TP_COMM] == 0, "PP sends, no TP");
  small_model(&in);
  CHECK(llmem_step_time(&in, &r) == LLMEM_OK, "step time");
  CHECK(r.parts_seconds[LLMEM_STEP_PIPELINE_BUBBLE] == 0 && r.parts_seconds[LLMEM_STEP_DP_COMM] == 0 &&
            r.parts_seconds[LLMEM_STEP_MATMULS] > r.parts_seconds[LLMEM_STEP_ATTENTION] &&
            r.parts_seconds[LLMEM_STEP_OPTIMIZER] > 0,
        "one GPU: compute and the optimizer");
  CHECK(strcmp(llmem_step_part_name(LLMEM_STEP_PIPELINE_BUBBLE), "pipeline_bubble") == 0 &&
            llmem_step_part_name(LLMEM_STEP_PART_COUNT)[0] == 0,
        "part names");
}

/* hardware.hbm_tb_per_s replaces the bandwidth guessed from the bf16 peak and
 * memory size: an L4 (121 bf16 TFLOPS, 24 GB) would read as an A100 40 GB's
 * 1.555 TB/s, its datasheet says 0.3. The memory-bound ops go as 1 / bandwidth,
 * the matmuls' math does not (their traffic does: gemm_seconds). */
static void test_hbm_bandwidth(void) {
  llmem_input in;
  small_model(&in);
  in.bf16_tflops = 121, in.memory_gib = 24;
  CHECK_NEAR(rates_of(&in).hbm_bytes_per_s, 1.555e12 * 0.9, 1e-12, "no key: the generation's guess");
  in.hbm_tb_per_s = 0.3;
  CHECK_NEAR(rates_of(&in).hbm_bytes_per_s, 0.3e12 * 0.9, 1e-12, "the key: 90 % of the datasheet bandwidth");
  llmem_step_result slow, fast;
  CHECK(llmem_step_time(&in, &slow) == LLMEM_OK, "step time at 0.3 TB/s");
  in.hbm_tb_per_s = 0.6;
  CHECK(llmem_step_time(&in, &fast) == LLMEM_OK, "step time at 0.6 TB/s");
  CHECK_NEAR(slow.parts_seconds[LLMEM_STEP_MEMORY_BOUND], 2 * fast.parts_seconds[LLMEM_STEP_MEMORY_BOUND], 1e-12,
             "twice the bandwidth: half the memory-bound time");
  CHECK(slow.parts_seconds[LLMEM_STEP_MATMULS] > fast.parts_seconds[LLMEM_STEP_MATMULS] &&
            slow.parts_seconds[LLMEM_STEP_MATMULS] < 2 * fast.parts_seconds[LLMEM_STEP_MATMULS],
        "matmuls: only their traffic slows");
}

/* Cut Cross-Entropy: no pass over logits in HBM, one more head GEMM (its backward recomputes the logit tiles):
 * against Liger's fused loss, whose logits pass 3 x 2 B a logit it saves, and whose GEMMs are the usual three. */
static void test_cce(void) {
  llmem_input in;
  small_model(&in);
  llmem_step_result fused, cce;
  in.loss = LLMEM_LOSS_FUSED;
  CHECK(llmem_step_time(&in, &fused) == LLMEM_OK, "fused");
  in.loss = LLMEM_LOSS_CCE;
  CHECK(llmem_step_time(&in, &cce) == LLMEM_OK, "cce");
  gpu_rates g = rates_of(&in);
  double logits = 4096.0 * in.vocab;
  CHECK_NEAR(fused.parts_seconds[LLMEM_STEP_MEMORY_BOUND] - cce.parts_seconds[LLMEM_STEP_MEMORY_BOUND],
             memory_seconds(&g, logits * 6), 1e-9, "cce: no logits through HBM");
  double f, b;
  linear_seconds(&g, 4096, 4096, in.vocab, B16, B16, &f, &b);
  CHECK_NEAR(cce.parts_seconds[LLMEM_STEP_MATMULS] - fused.parts_seconds[LLMEM_STEP_MATMULS], f, 1e-9,
             "cce: the head's forward GEMM again");
}

/* Activation offload (torchtune's OffloadActivations): the saved tensors of
 * all but the last two layers go to the host and back, each way over the
 * 64 GB/s host link of an H100, hidden behind the pass's compute where they
 * fit. 4 layers at 16k tokens without recompute: 2 layers' activations, far
 * more than the compute hides; with full recompute only their inputs. */
static void test_activation_offload(void) {
  llmem_input in;
  small_model(&in);
  in.seq_len = 16384;
  llmem_step_result off, on;
  CHECK(llmem_step_time(&in, &off) == LLMEM_OK, "step time");
  in.activation_offload = 1;
  CHECK(llmem_step_time(&in, &on) == LLMEM_OK, "step time, offloaded");
  plan pl = plan_of(&in);
  double each_way = 2 * layer_activation_bytes(&pl, 0, 0).saved_bytes / 64e9;
  double compute = off.parts_seconds[LLMEM_STEP_MATMULS] + off.parts_seconds[LLMEM_STEP_ATTENTION] +
                   off.parts_seconds[LLMEM_STEP_MEMORY_BOUND];
  double part = on.parts_seconds[LLMEM_STEP_OFFLOAD];
  CHECK_NEAR(on.step_seconds - off.step_seconds, part, 1e-12, "the offload part is the difference");
  CHECK(part >= 2 * each_way - compute && part <= 2 * each_way && part > 0,
        "exposed: the copies less the compute they overlap (%g s of %g s each way)", part, each_way);
  in.recompute = LLMEM_RECOMPUTE_FULL;
  CHECK(llmem_step_time(&in, &on) == LLMEM_OK && on.parts_seconds[LLMEM_STEP_OFFLOAD] == 0,
        "with full recompute the layer inputs' copies hide");
}

/* repeat_kv (torchtitan until 2026-01): K and V copied to every query head
 * before SDPA, read 2 T kv hd and written 2 T heads hd, the backward the
 * same: with 8 KV heads of 32, 2 x 4096 x (8 + 32) x 128 x 2 bytes a layer
 * each way. */
static void test_repeat_kv(void) {
  llmem_input in;
  small_model(&in);
  in.kv_heads = 8;
  in.repeat_kv = 0;
  double plain = step_of(&in);
  in.repeat_kv = 1;
  double bytes = 2 * 4096.0 * (8 + 32) * 128 * 2;
  gpu_rates g = rates_of(&in);
  /* the backward's sum of the copies' gradients is the same bytes as FlashAttention-2's own GQA
   * sum of dK and dV over each group (flash_api.cpp mha_bwd) that SDPA with enable_gqa runs */
  CHECK_NEAR(step_of(&in) - plain, 4 * memory_seconds(&g, bytes), 1e-9,
             "repeat_kv: a copy forward, each layer; the sum backward either way");
}

/* FSDP2's copy-out: after each all-gather the gathered buffer is copied into
 * the unsharded parameters on the compute stream, 2 x weight bytes a
 * parameter a gather (twice a micro-batch when resharded after the forward);
 * its reduce-scatter copy-in, which the compute stream waits for, reads each
 * gradient (weight bytes) and writes it in the reduce dtype (fp32 here).
 * On infinitely fast links the FSDP2 step exceeds FSDP1's (flat parameters
 * gathered in place) by exactly that. */
static void test_fsdp2_copy_out(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 8, in.engine = LLMEM_ENGINE_FSDP2;
  in.intra_node_gb_per_s = 1e6;
  double fsdp2 = step_of(&in);
  plan pl = plan_of(&in);
  gpu_rates g = gpu_rates_for(&pl);
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  double gathers = pl.in->reshard_after_forward != 0 ? 2 : 1;
  in.engine = LLMEM_ENGINE_FSDP1;
  double copy_out = gathers * total * 2 * pl.weight_bytes, copy_in = total * (pl.weight_bytes + pl.grad_bytes);
  CHECK_NEAR(fsdp2 - step_of(&in), memory_seconds(&g, copy_out + copy_in), 1e-9,
             "copy-out: every parameter read and written once a gather; copy-in: every gradient read, written in "
             "the reduce dtype");
}

/* Megatron's interleaved schedule overlaps its activation sends with the next
 * chunk's compute (--overlap-p2p-communication, the default from Megatron-LM
 * 4eeff55, 2023-10): 2 v m sends of T h ab bytes across nodes (2 GPUs, one a
 * node: 50 x 0.85 GB/s) hide behind the stage passes, taking the network's
 * 2 % of them (Calculon processor usage); in the code before, or with one
 * virtual stage (1F1B), they are exposed. */
static void test_megatron_p2p_overlap(void) {
  llmem_input in;
  small_model(&in);
  in.gpus = 2, in.gpus_per_node = 1, in.pp = 2, in.vpp = 2, in.grad_accum = 4;
  in.engine = LLMEM_ENGINE_MEGATRON, in.pp_schedule = LLMEM_PP_INTERLEAVED;
  plan pl = plan_of(&in);
  double sends = 2 * 2 * 4 * (4096 * pl.in->hidden * 2) / (50e9 * 0.85);
  in.framework_month = 2023 * 12 + 8; /* September 2023 */
  double exposed = step_of(&in);
  in.framework_month = 2024 * 12 + 6; /* Megatron-Core r0.8.0, July 2024 */
  double overlapped = step_of(&in);
  CHECK_NEAR(exposed - overlapped, sends * (1 - 0.02), 1e-9, "interleaved sends hidden, 2 % of them taken");
  in.framework_month = NAN; /* no version: the current code */
  CHECK_NEAR(step_of(&in), overlapped, 1e-12, "the current code overlaps");
}

/* Megatron's interleaved schedule reduces each chunk's gradients after its
 * last backward and gathers its parameters a chunk ahead (schedules.py at
 * core_v0.8.0: grad_sync_func, param_sync_func per chunk): the distributed
 * optimizer's reduce-scatter and all-gather hide behind p (v - 1) / v passes
 * of the stage, not one, and only the last chunk's 1/v is exposed. PP 2,
 * 8 chunks of one layer, DP 2 across nodes: between a collective of 1.15
 * and of 1.3 stage passes (beyond one pass, within 1.75) the step grows by
 * the network's 2 % of the longer collective and of the longer sends
 * (overlapped too) and by 1/8 of the collective. */
static double chunked_step(llmem_input *in, double collective_seconds_wanted, double params_here, double per) {
  in->inter_node_gb_per_s = params_here * per / 2 / (0.85e9 * collective_seconds_wanted);
  return step_of(in);
}

static void test_megatron_chunked_dp(void) {
  llmem_input in;
  small_model(&in);
  in.layers = 16, in.gpus = 4, in.gpus_per_node = 1, in.pp = 2, in.grad_accum = 4;
  in.engine = LLMEM_ENGINE_MEGATRON, in.distributed_optimizer = 1, in.overlap_comm = 1;
  in.pp_schedule = LLMEM_PP_ZERO_BUBBLE;
  in.gpus = 2; /* DP 1: one stage pass, from the step's growth with the micro-batches */
  double zb4 = step_of(&in);
  in.grad_accum = 8;
  double stage_pass = (step_of(&in) - zb4) / 4;
  in.gpus = 4, in.grad_accum = 4, in.pp_schedule = LLMEM_PP_INTERLEAVED, in.vpp = 8;
  plan pl = plan_of(&in);
  double total, active, trainable;
  model_param_counts(&pl, &total, &active, &trainable);
  double params_here = total / 2, per = pl.grad_bytes + pl.weight_bytes;
  double t1 = 1.15 * stage_pass, t2 = 1.3 * stage_pass;
  double s1 = chunked_step(&in, t1, params_here, per), s2 = chunked_step(&in, t2, params_here, per);
  /* the sends: 2 v m of T h ab bytes over the same link, (params_here per / 2) / t bytes a second */
  double send_bytes = 2 * 8 * 4 * 4096 * pl.in->hidden * 2;
  double sends1 = send_bytes * 2 * t1 / (params_here * per), sends2 = sends1 * t2 / t1;
  CHECK_NEAR(s2 - s1, 0.02 * (t2 - t1 + sends2 - sends1) + (t2 - t1) / 8, 1e-6,
             "chunked DP sync: hidden behind p (v - 1) / v passes, the last chunk's exposed");
}

/* PyTorch's F.cross_entropy on .float() logits (one GPU, generic stack):
 * the cast (r 2, w 4), log_softmax's cunn_SoftMaxForward reading a row of
 * more than 48 KiB three times (max, sum of exponentials, the write pass: r 12
 * w 4), nll_loss's backward zero-filling its fp32 gradient (w 4), log_softmax's
 * backward reading the gradient twice and the output once (r 12 w 4), the
 * cast back (r 4 w 2): 48 bytes a logit against a fused loss's 3 x 2. A row
 * that fits 48 KiB of shared memory (8000 fp32 logits: 32000 bytes) is read
 * once forward: 40. */
static void test_eager_loss(void) {
  llmem_input in;
  small_model(&in);
  in.loss = LLMEM_LOSS_STANDARD;
  double eager = step_of(&in);
  in.loss = LLMEM_LOSS_FUSED;
  double fused = step_of(&in);
  plan pl = plan_of(&in);
  gpu_rates g = rates_of(&in);
  CHECK(pl.vocab_padded * 4 >= 48 * 1024, "a large vocabulary");
  CHECK_NEAR(eager - fused, 4096 * pl.vocab_padded * (48 - 6) / g.hbm_bytes_per_s, 1e-9,
             "F.cross_entropy: three reads of each fp32 row forward, two of the gradient backward");
  in.vocab = 8000;
  fused = step_of(&in);
  in.loss = LLMEM_LOSS_STANDARD;
  eager = step_of(&in);
  pl = plan_of(&in);
  CHECK(pl.vocab_padded * 4 < 48 * 1024, "a row within shared memory");
  CHECK_NEAR(eager - fused, 4096 * pl.vocab_padded * (40 - 6) / g.hbm_bytes_per_s, 1e-9,
             "F.cross_entropy: one read forward (cunn_SoftMaxForwardSmem)");
}

/* ms-swift's losses under sequence parallelism, in the logits' dtype (2 bytes): the log-softmax reading a row of
 * more than 48 KiB three times and writing once (8), nll_loss's zero-filled gradient (2), the log-softmax backward's
 * three reads and write (8): 18 bytes a logit against a fused loss's 6; the in-place chunks recompute the
 * log-softmax (8) and copy the gradient into the logits (4): 30. */
static void test_swift_sp_losses(void) {
  llmem_input in;
  small_model(&in);
  in.loss = LLMEM_LOSS_FUSED;
  double fused = step_of(&in);
  plan pl = plan_of(&in);
  gpu_rates g = rates_of(&in);
  double logits = 4096 * pl.vocab_padded;
  in.loss = LLMEM_LOSS_BF16_CE;
  CHECK_NEAR(step_of(&in) - fused, logits * (18 - 6) / g.hbm_bytes_per_s, 1e-9, "bf16_ce: no casts");
  in.loss = LLMEM_LOSS_CHUNKED_INPLACE;
  CHECK_NEAR(step_of(&in) - fused, logits * (30 - 6) / g.hbm_bytes_per_s, 1e-9, "chunked_inplace: recompute, copy");
}

/* fp32 training: PyTorch's matmuls stay IEEE fp32 (TF32 off by default) on
 * the CUDA cores, 67 of an H100's 989.4 bf16 TFLOPS (datasheet) at the same
 * large-GEMM fraction (80.3 %); attention falls to the memory-efficient kernel
 * whose fp32 products are 3xTF32: a third of TF32's half of the bf16 peak. */
static void test_fp32_rates(void) {
  llmem_input in;
  llmem_defaults(&in);
  in.dtype = LLMEM_DTYPE_FP32, in.master_weights = 0, in.grad_dtype = LLMEM_DTYPE_FP32;
  gpu_rates g = rates_of(&in);
  CHECK_NEAR(g.matmul_flops_per_s, 989e12 * 67 / 989.4 * 0.803, 1e-12, "H100 fp32 GEMM rate");
  CHECK_NEAR(g.matmul16_flops_per_s, g.matmul_flops_per_s, 1e-12, "the output layer in fp32 too");
  CHECK_NEAR(g.attn_peak_flops_per_s, 989e12 / 6, 1e-12, "3xTF32 attention");
  in.bf16_tflops = 312, in.memory_gib = 80;
  CHECK_NEAR(rates_of(&in).matmul_flops_per_s, 19.5e12 * 0.869, 1e-12, "A100 fp32: 19.5 TFLOPS");
}

/* Linears sharing an input outside autocast: autograd sums their input
 * gradients, one add (r 2 w 1 elements of 2 bytes) per linear after the
 * first: q, k, v as three linears against one fused qkv, 2 x 6 bytes over
 * T h a layer, backward. */
static void test_shared_input_sums(void) {
  llmem_input in;
  small_model(&in);
  in.master_weights = 0; /* 16-bit parameters: no autocast */
  plan pl = plan_of(&in);
  CHECK(!pl.autocast && plan_qkv_linears(&pl) == 3, "three linears on the norm output");
  double three = step_time_seconds(&pl, NULL, NULL);
  pl.lora_fused_qkv = 1; /* a full fine-tune: only the linear count changes */
  double one = step_time_seconds(&pl, NULL, NULL);
  gpu_rates g = gpu_rates_for(&pl);
  CHECK_NEAR(three - one, memory_seconds(&g, 4 * 2 * 6 * 4096.0 * pl.in->hidden), 1e-9,
             "q, k, v: two sums of their input gradients a layer");
}

/* PyTorch's math SDPA runs in fp32 (16-bit inputs upcast): its batched GEMMs
 * at the fp32 rate count as matmuls, its mask, softmax and casts as
 * memory-bound kernels, no attention kernel; per layer and score element
 * 8 + 22 + 4 + 2 bytes forward and 37 backward. */
static void test_math_sdpa(void) {
  llmem_input in;
  small_model(&in);
  in.seq_len = 1024;
  in.attention = LLMEM_ATTN_SDPA_MATH;
  llmem_step_result r;
  CHECK(llmem_step_time(&in, &r) == LLMEM_OK, "step time");
  CHECK(r.parts_seconds[LLMEM_STEP_ATTENTION] == 0, "math SDPA: no attention kernel");
  double math_mb = r.parts_seconds[LLMEM_STEP_MEMORY_BOUND];
  in.attention = LLMEM_ATTN_FLASH;
  llmem_step_result f;
  CHECK(llmem_step_time(&in, &f) == LLMEM_OK, "step time");
  plan pl = plan_of(&in);
  gpu_rates g = gpu_rates_for(&pl);
  double heads = pl.in->heads, kv = pl.kv_heads, d = pl.head_dim, T = 1024;
  double scores = heads * T * T * (36 + 37);
  double small = 2 * (T * (heads + 2 * kv) * d * 6 + T * heads * d * 16 + T * heads * d * 6);
  if (kv < heads) small += 2 * T * (kv + heads) * 2 * d * 4;
  double gqa = kv < heads && !pl.repeat_kv ? 2 * T * (kv + heads) * d * 2 : 0; /* flash's own GQA sum */
  CHECK_NEAR(math_mb - f.parts_seconds[LLMEM_STEP_MEMORY_BOUND], memory_seconds(&g, 4 * (scores + small - gqa)), 1e-9,
             "math SDPA: its pointwise passes");
}

/* Over random valid configs under each attention kind: every part of the step is finite and >= 0 and the parts add
 * up to the step (the fuzzer found math SDPA's attention share negative: it was the step less the other parts). */
static void test_parts_never_negative(void) {
  static const int kinds[] = {LLMEM_ATTN_FLASH, LLMEM_ATTN_SDPA_MATH, LLMEM_ATTN_EAGER};
  int bad = 0, valid = 0;
  for (int t = 0; t < 3000; t++) {
    llmem_input in;
    check_random_config(&in);
    in.attention = kinds[t % 3];
    llmem_step_result r;
    if (llmem_step_time(&in, &r) != LLMEM_OK) continue;
    valid++;
    double sum = 0;
    for (int k = 0; k < LLMEM_STEP_PART_COUNT; k++) {
      bad += !(r.parts_seconds[k] >= 0 && isfinite(r.parts_seconds[k]));
      sum += r.parts_seconds[k];
    }
    bad += fabs(sum - r.step_seconds) > 1e-9 * r.step_seconds;
  }
  CHECK(valid > 500 && bad == 0, "random configs: %d valid, %d with a negative part or parts not adding up", valid,
        bad);
}

int main(void) {
  test_offload();
  test_gemm();
  test_fp8();
  test_collectives();
  test_recompute();
  test_tp();
  test_bubble();
  test_fsdp_overlap();
  test_per_op_sac();
  test_per_op_sac_moe();
  test_fp8_tp_gather();
  test_fsdp_root();
  test_fsdp_root_pipeline();
  test_cp_ring();
  test_cp_ulysses();
  test_ring_across_nodes();
  test_share_by_rate();
  test_megatron_loss();
  test_gemm_bytes();
  test_megatron_wgrad();
  test_embedding_backward();
  test_eager_rmsnorm();
  test_eager_layernorm();
  test_flash_rates();
  test_async_tp();
  test_foreach_adamw();
  test_repeat_kv();
  test_autocast();
  test_adafactor();
  test_lora_traffic();
  test_step_parts();
  test_hbm_bandwidth();
  test_cce();
  test_activation_offload();
  test_fsdp2_copy_out();
  test_megatron_p2p_overlap();
  test_megatron_chunked_dp();
  test_eager_loss();
  test_swift_sp_losses();
  test_fp32_rates();
  test_shared_input_sums();
  test_math_sdpa();
  test_parts_never_negative();
  return check_report("steptime");
}
