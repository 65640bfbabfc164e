/* Step-time model, per operation class (core/steptime_ops.c) and assembled
 * per step (core/steptime.c). Internal to the core. */
#ifndef LLMEM_STEPTIME_H
#define LLMEM_STEPTIME_H

#include "internal.h"

/* Achievable rates of one GPU and its links (each fraction cited in steptime_ops.c). */
typedef struct {
  double matmul_flops_per_s;    /* large-GEMM rate: peak x achievable fraction */
  double matmul16_flops_per_s;  /* the same in 16-bit (output layer, attention GEMMs) */
  double matmul32_flops_per_s;  /* the same in fp32 on the CUDA cores (PyTorch's math SDPA) */
  int fp8;                      /* the linears run in float8 */
  double peak_flops_per_s;      /* tensor-core peak of the linears' precision */
  double attn_peak_flops_per_s; /* tensor-core peak of the attention core (16-bit) */
  double flash_fwd_fraction;    /* FlashAttention forward, of peak */
  double flash_bwd_fraction;    /* FlashAttention backward, of peak */
  int flash_by_length;          /* Hopper: FlashAttention-2's measured rate by sequence length instead */
  double hbm_bytes_per_s;       /* memory-bound kernels */
  double sms;                   /* streaming multiprocessors (wave quantisation) */
  double tile_m, tile_n;        /* GEMM output tile of one thread block */
  double intra_bytes_per_s;     /* NCCL bus bandwidth inside a node */
  double inter_bytes_per_s;     /* NCCL bus bandwidth across nodes, per GPU */
  double intra_compute_share;   /* of the compute a collective over NVLink takes while it overlaps */
  double inter_compute_share;   /* the same over the network */
} gpu_rates;

gpu_rates gpu_rates_for(const plan *pl);

/* Bytes per element a GEMM moves through HBM: each operand read, and the
 * output written (read too where it is accumulated into). */
typedef struct {
  double operand_bytes, output_bytes;
} gemm_bytes;

/* One GEMM C[m,n] = A[m,k] B[k,n], `batch` of them: its tensor-core waves
 * plus its HBM traffic (not overlapped, Calculon's no_overlap mode). */
double gemm_seconds(const gpu_rates *g, double m, double n, double k, double batch, gemm_bytes eb);
/* A linear layer over `tokens`: forward, and backward (input and weight
 * gradients); `io` the forward's and input gradient's bytes, `wgrad` the
 * weight gradient's. */
void linear_seconds(const gpu_rates *g, double tokens, double in_features, double out_features, gemm_bytes io,
                    gemm_bytes wgrad, double *fwd, double *bwd);
/* FlashAttention's fraction of the attention peak for a sequence of
 * `seq_len` tokens a call, forward (causal mask or not) or backward. */
double flash_fraction(const gpu_rates *g, double seq_len, int causal, int backward);
/* Bytes through HBM by memory-bound kernels. */
double memory_seconds(const gpu_rates *g, double bytes);
/* A ring collective of `ranks` over a buffer of `bytes`, moving (n-1)/n of it per
 * pass (all-gather, reduce-scatter: 1 pass; all-reduce: 2). */
double collective_seconds(double bytes, double ranks, double passes, double bytes_per_s);

/* The word embedding's dense weight gradient, per micro-batch: zero-filled
 * and written whole by PyTorch's embedding backward, and added into
 * main_grad by Megatron's DDP hook (core/steptime.c). */
double embedding_backward_seconds(const plan *pl, const gpu_rates *g);

#endif
