/* What sits beside the tensors: the caching allocator's reserve and the
 * per-process CUDA overheads that nvidia-smi shows (docs/memory-model.md §9). */
#include <math.h>

#include "internal.h"

/* PyTorch caching allocator (c10/cuda/CUDACachingAllocator.cpp): freed blocks
 * stay reserved and a request larger than every cached block opens a new
 * segment. Over a step the largest short-lived tensor leaves a hole of its
 * size next to the peak; blocks >= 10 MiB round up to 2 MiB. Expandable
 * segments map pages on demand and leave only the 2 MiB rounding. */
/* c10/cuda/CUDACachingAllocator.cpp: kMinBlockSize 512, kSmallSize 1 MiB,
 * kSmallBuffer 2 MiB, kLargeBuffer 20 MiB, kMinLargeAlloc 10 MiB, kRoundLarge 2 MiB. */
double allocator_block_bytes(double request) {
  if (request < 512) return 512;
  return 512 * ceil(request / 512);
}

double allocator_segment_bytes(double request) {
  double block = allocator_block_bytes(request);
  if (block <= MIB) return 2 * MIB;
  if (block < 10 * MIB) return 20 * MIB;
  return 2 * MIB * ceil(block / (2 * MIB));
}

double runtime_reserved_bytes(const plan *pl, double peak_allocated, double largest_transient) {
  if (pl->allocator_reserve_given) return peak_allocated * (1 + pl->allocator_reserve);
  double rounding = 2 * MIB * 16; /* a few dozen live large blocks, each rounded */
  if ((int)pl->in->expandable_segments != 0) return peak_allocated + rounding;
  return peak_allocated + (largest_transient > 0 ? allocator_segment_bytes(largest_transient) : 0) + rounding;
}

/* Number of NCCL communicators with more than one rank. */
static int communicators(const plan *pl) {
  int n = 0;
  if (pl->dp * pl->in->cp > 1) n++;
  if (pl->in->tp > 1) n++;
  if (pl->in->pp > 1) n++;
  if (pl->in->cp > 1) n++;
  if (pl->in->ep > 1) n++;
  return n;
}

double runtime_device_overhead_bytes(const plan *pl) {
  double context, nccl;
  int comms;
  runtime_overheads(pl, &context, &nccl, &comms);
  return context + nccl;
}

/* cuBLAS workspaces, inside the caching allocator: torch gives each cuBLAS handle a workspace per stream
 * from it and keeps it for the process (aten/src/ATen/cuda/CublasHandlePool.cpp getCurrentCUDABlasHandle:
 * handles from a thread-local pool, cublas_handle_stream_to_workspace keyed by handle and stream, filled by
 * getNewWorkspace). A training step runs matmuls on two threads, the forward on the caller's and the backward
 * on the autograd engine's device thread (torch/csrc/autograd/engine.cpp), so two handles and two workspaces
 * on the compute stream; runtime.cublas_workspace_mib is their sum (default 2 x 32 MiB, Hopper's
 * CUBLAS_WORKSPACE_CONFIG :4096:8). The probe's allocated peaks on an H200 (torch 2.11) sit 64 MiB above
 * the tensors the step holds (docs/memory-model.md section 11). */
double runtime_workspace_bytes(const plan *pl) {
  return pl->cublas_workspace_bytes >= 0 ? pl->cublas_workspace_bytes * MIB : 64 * MIB;
}

void runtime_overheads(const plan *pl, double *context_bytes, double *nccl_bytes, int *communicator_count) {
  /* CUDA context with lazy module loading: 287,047,680 B measured on PyTorch
   * 1.13 (pytorch PR #86509); current CUDA 12 / PyTorch 2 contexts with
   * kernel images measure about 500 MiB (docs/memory-model.md §11 #16: 0.5 GiB). */
  double context = pl->cuda_context_bytes >= 0 ? pl->cuda_context_bytes * MIB : 512 * MIB;
  /* NCCL: NCCL_BUFFSIZE 4 MiB per channel and protocol buffer; about 16
   * channel buffers per communicator on NVLink/IB systems [EMPIRICAL]. */
  double nccl = pl->nccl_buffer_bytes >= 0 ? pl->nccl_buffer_bytes * MIB : communicators(pl) * 16 * 4 * MIB;
  *context_bytes = context;
  *nccl_bytes = nccl;
  *communicator_count = communicators(pl);
}
