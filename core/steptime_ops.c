/* Step-time model: the time of one operation of each class on one GPU.
 *
 * The core gets hardware.bf16_tflops / fp8_tflops / hbm_tb_per_s / memory_gib
 * and the two link rates, not the GPU's name or SM count; those come from a
 * small table per GPU generation, recognised by its bf16 peak and memory, as
 * does the HBM bandwidth when hardware.hbm_tb_per_s is null (the page and CLI
 * fill it from the GPU catalog's datasheet figure).
 *
 * Sources of every rate below:
 *  - Large-GEMM achievable fraction of peak: the "maximum achievable matmul
 *    FLOPS" (MAMF), torch.matmul over a search of shapes (S. Bekman, ML
 *    Engineering, compute/accelerator/README.md at 744d01e, "Maximum
 *    Achievable Matmul FLOPS comparison table"): A100 SXM bf16 271.2 of 312
 *    TFLOPS (86.9 %), H100 SXM bf16 794.5 of 989 (80.3 %), fp8 1402.6 of 1979
 *    (70.9 %).
 *  - Shape: tile and wave quantisation (NVIDIA Deep Learning Performance
 *    guide, "Matrix Multiplication Background": a GEMM runs in waves of one
 *    output tile per SM; 128x128 tiles on A100 (108 SMs), 128x256 on H100
 *    (132 SMs) as in cuBLAS's sm90 kernels), plus its HBM traffic (operands
 *    read, output written) at the HBM rate, not hidden under the math:
 *    Calculon's "no_overlap" processing mode, time = FLOP time + memory time
 *    per op (calculon/system.py _compute_processing_time at caa4b11; every
 *    shipped system file, a100_80e.json of its Korthikanti validation and
 *    h100_80g_nvl8.json included, sets it). The large-GEMM fraction below is
 *    a whole-kernel time, its own traffic inside: on its large shapes that
 *    traffic is a few per cent of the math, counted again here.
 *  - FlashAttention: FlashAttention-2 (Dao 2023, arXiv 2307.08691) reaches
 *    50-73 % of A100 peak, forward at the top of the range, backward at the
 *    bottom. On H100 (what PyTorch SDPA's flash kernel runs) by sequence
 *    length, head dim 128, 16k tokens a call: FlashAttention-3 (Shah et al.
 *    2024, arXiv 2407.08608) Fig. 5, FA2's forward with the causal mask
 *    191/260/298/319/333/335 TFLOPS at 512..16k, without 309/350/362/368/
 *    370/370, and Fig. 6, its backward 214/260/291/310/318/322 (no causal
 *    backward is published: the non-causal one bounds it), of 989.4 on an
 *    H100 SXM5. Backward FLOPs are 2.5x forward (5 GEMMs against 2; FA2 §4.1).
 *  - HBM: vendor datasheets (A100 40 GB 1.555 TB/s, 80 GB 2.039; H100 SXM
 *    3.35; H100 96 GB HBM2e 2.4 (torchtitan benchmarks/
 *    llama3_h100_202412_torchtitan.md); H200 4.8) at 90 % achievable for
 *    transfers of 100 MB or more (Calculon, systems/a100_80g.json mem1 at caa4b11;
 *    its a100_80e.json, the one its validation runs, says 95 %).
 *  - Links: NCCL all-reduce bus bandwidth on 8x A100 SXM over NVLink is about
 *    200 of 300 GB/s (nccl-tests issue #149: 67 %); over 4x HDR InfiniBand per
 *    8 GPUs 84.8 of 100 GB/s (nccl-tests issue #119: 85 %).
 *  - Overlap is not free: a collective running beside compute takes a share of
 *    the GPU (its kernels' SMs and HBM traffic): 15 % over NVLink, 2 % over
 *    the network (Calculon, Isaev et al. SC'23, systems/a100_80g.json and
 *    h100_80g_nvl8.json "processor_usage" at caa4b11, applied in
 *    calculon/llm/layers.py compute_processing_time and llm.py's DP overlap). */
#include <math.h>

#include "steptime.h"

#define NVLINK_BUS_FRACTION 0.67   /* nccl-tests #149 */
#define NETWORK_BUS_FRACTION 0.85  /* nccl-tests #119 */
#define HBM_FRACTION 0.90          /* Calculon systems/a100_80g.json, >= 100 MB */
#define NVLINK_COMPUTE_SHARE 0.15  /* Calculon systems processor_usage, NVLink */
#define NETWORK_COMPUTE_SHARE 0.02 /* the same, InfiniBand */

typedef struct {
  double gemm_fraction, fp8_gemm_fraction, flash_fwd, flash_bwd, sms, tile_m, tile_n;
  double fp32_of_bf16; /* FP32 (CUDA-core) peak over the dense bf16 tensor-core peak */
} generation;

/* fp32_of_bf16: NVIDIA A100 datasheet FP32 19.5 of BF16 312 TFLOPS; H100 SXM
 * datasheet FP32 67 of BF16 989.4 (dense) */
static const generation AMPERE = {0.869, 0.869, 0.73, 0.50, 108, 128, 128, 19.5 / 312}; /* no fp8 */
static const generation HOPPER = {0.803, 0.709, 0.35, 0.35, 132, 128, 256, 67 / 989.4}; /* flash: by sequence */

/* FlashAttention-2 on an H100 SXM5, TFLOPS at 512, 1k, ... 16k tokens a
 * sequence (FlashAttention-3 paper, Figs. 5 and 6, head dim 128). */
#define FA2_H100_POINTS 6
#define FA2_H100_PEAK_TFLOPS 989.4
static const double FA2_H100_FWD_CAUSAL[FA2_H100_POINTS] = {191, 260, 298, 319, 333, 335};
static const double FA2_H100_FWD[FA2_H100_POINTS] = {309, 350, 362, 368, 370, 370};
static const double FA2_H100_BWD[FA2_H100_POINTS] = {214, 260, 291, 310, 318, 322};

/* A measured curve at 512 x 2^i tokens, linear in log2 of the length between
 * points, flat beyond the ends. */
static double at_length(const double *tflops, double seq_len) {
  double x = log2(fmax(seq_len, 512) / 512);
  int i = (int)fmin(floor(x), FA2_H100_POINTS - 2);
  double t = fmin(x - i, 1);
  return tflops[i] + t * (tflops[i + 1] - tflops[i]);
}

double flash_fraction(const gpu_rates *g, double seq_len, int causal, int backward) {
  if (!g->flash_by_length) return backward ? g->flash_bwd_fraction : g->flash_fwd_fraction;
  const double *curve = backward ? FA2_H100_BWD : causal ? FA2_H100_FWD_CAUSAL : FA2_H100_FWD;
  return at_length(curve, seq_len) / FA2_H100_PEAK_TFLOPS;
}

/* HBM bandwidth (bytes/s): hardware.hbm_tb_per_s, else guessed by generation
 * and memory size (newer parts scale the H100's bytes per FLOP). */
static double hbm_bytes_per_s(const llmem_input *in) {
  if (!isnan(in->hbm_tb_per_s)) return in->hbm_tb_per_s * 1e12;
  double bf16_tflops = in->bf16_tflops, memory_gib = in->memory_gib;
  if (bf16_tflops < 500) return (memory_gib < 60 ? 1.555 : 2.039) * 1e12;
  if (bf16_tflops < 1200) {
    if (memory_gib >= 120) return 4.8e12; /* H200 */
    if (memory_gib >= 90) return 2.4e12;  /* H100 96 GB HBM2e */
    return 3.35e12;
  }
  return bf16_tflops / 989.4 * 3.35e12;
}

gpu_rates gpu_rates_for(const plan *pl) {
  const llmem_input *in = pl->in;
  const generation *gen = in->bf16_tflops < 500 ? &AMPERE : &HOPPER;
  double bf16 = in->bf16_tflops * 1e12;
  /* fp8 peak: the key, else twice bf16 from Hopper on (H100 datasheet: 1979 vs 989 TFLOPS) */
  double fp8_peak = !isnan(in->fp8_tflops) ? in->fp8_tflops * 1e12 : gen == &HOPPER ? 2 * bf16 : NAN;
  int fp8 = pl->fp8_linear && !isnan(fp8_peak) && (int)pl->in->dtype != LLMEM_DTYPE_FP32;
  double peak = fp8 ? fp8_peak : bf16;
  /* fp32 GEMMs run on the CUDA cores at the FP32 rate: PyTorch leaves TF32 off
   * for matmuls (torch.backends.cuda.matmul.allow_tf32 = False since 1.12;
   * torch.get_float32_matmul_precision() "highest"), so cuBLAS runs IEEE SGEMM */
  int fp32 = (int)pl->in->dtype == LLMEM_DTYPE_FP32;
  double fp32_peak = bf16 * gen->fp32_of_bf16;
  if (fp32) peak = fp32_peak;
  gpu_rates g;
  g.peak_flops_per_s = peak;
  /* runtime.compute_efficiency, when set, is the large-GEMM fraction of peak (a measured one) */
  int given = !isnan(in->compute_efficiency);
  double gemm = given ? in->compute_efficiency : gen->gemm_fraction;
  g.matmul_flops_per_s = peak * (given ? gemm : fp8 ? gen->fp8_gemm_fraction : gemm);
  g.matmul16_flops_per_s = (fp32 ? fp32_peak : bf16) * gemm;
  g.matmul32_flops_per_s = fp32_peak * gemm;
  g.fp8 = fp8;
  /* fp32 attention: FlashAttention has no fp32 kernel, so SDPA takes the
   * memory-efficient one, whose fp32 GEMMs on sm80+ are 3xTF32 (three TF32
   * MMAs a product: aten/src/ATen/native/transformers/cuda/mem_eff_attention/
   * gemm_kernel_utils.h DefaultGemmType<ArchTag, float>, OpMultiplyAddFastF32):
   * a third of the TF32 tensor-core peak (half the bf16 one) */
  g.attn_peak_flops_per_s = fp32 ? bf16 / 2 / 3 : bf16;
  g.flash_fwd_fraction = gen->flash_fwd;
  g.flash_bwd_fraction = gen->flash_bwd;
  g.flash_by_length = gen == &HOPPER;
  g.hbm_bytes_per_s = hbm_bytes_per_s(in) * HBM_FRACTION;
  g.sms = gen->sms;
  g.tile_m = gen->tile_m;
  g.tile_n = gen->tile_n;
  g.intra_bytes_per_s = in->intra_node_gb_per_s * 1e9 * NVLINK_BUS_FRACTION;
  g.inter_bytes_per_s = in->inter_node_gb_per_s * 1e9 * NETWORK_BUS_FRACTION;
  g.intra_compute_share = NVLINK_COMPUTE_SHARE;
  g.inter_compute_share = NETWORK_COMPUTE_SHARE;
  return g;
}

double gemm_seconds(const gpu_rates *g, double m, double n, double k, double batch, gemm_bytes eb) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
  /* the output in either orientation (C or its transpose: cuBLAS's column-
   * major C^T = B^T A^T costs nothing), whichever leaves fewer idle tile rows */
  double tiles = fmin(ceil(m / g->tile_m) * ceil(n / g->tile_n), ceil(n / g->tile_m) * ceil(m / g->tile_n)) * batch;
  double waves = ceil(tiles / g->sms);
  /* each wave runs one tile per SM at the large-GEMM rate; the operand and
   * output traffic adds to it (Calculon no_overlap, above) */
  double math = waves * g->sms * g->tile_m * g->tile_n * 2 * k / g->matmul_flops_per_s;
  double bytes = (eb.operand_bytes * (m * k + k * n) + eb.output_bytes * m * n) * batch;
  return math + memory_seconds(g, bytes);
}

void linear_seconds(const gpu_rates *g, double tokens, double in_features, double out_features, gemm_bytes io,
                    gemm_bytes wgrad, double *fwd, double *bwd) {
  *fwd = gemm_seconds(g, tokens, out_features, in_features, 1, io);
  /* input gradient [tokens, in] and weight gradient [in, out] */
  *bwd = gemm_seconds(g, tokens, in_features, out_features, 1, io) +
         gemm_seconds(g, in_features, out_features, tokens, 1, wgrad);
}

double memory_seconds(const gpu_rates *g, double bytes) { return bytes / g->hbm_bytes_per_s; }

double collective_seconds(double bytes, double ranks, double passes, double bytes_per_s) {
  if (ranks <= 1 || bytes <= 0) return 0;
  return passes * bytes * (ranks - 1) / ranks / bytes_per_s;
}
