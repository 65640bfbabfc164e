/* Model states per rank: weights, gradients, master weights, optimizer states
 * and their sharding per engine, with offload to host/NVMe
 * (memory-model.md §4, §5, §6, §8). */
#include <math.h>

#include "internal.h"


/* Optimizer-state bytes for `count` parameters of one class (memory-model.md §4.4).
 * dims: rows + cols summed over the class's matrices (Adafactor factors). */
static double optimizer_bytes(const plan *pl, double count, double dims, int is_matrix) {
  double ob = dtype_bytes(pl->optimizer_dtype);
  switch (pl->optimizer) {
    case LLMEM_OPT_ADAM:
    case LLMEM_OPT_ADAMW: return 2 * ob * count;
    /* bitsandbytes 8-bit: uint8 m, v + fp32 absmax per 256-block per state
     * (optim/optimizer.py L502-529); tensors under 4096 elements stay fp32. */
    case LLMEM_OPT_ADAMW_8BIT: return (is_matrix || pl->hidden >= 4096) ? count * (2 + 8.0 / 256) : 8 * count;
    case LLMEM_OPT_SGD: return 0;
    case LLMEM_OPT_SGD_MOMENTUM:
    case LLMEM_OPT_LION: return ob * count;
    /* torch.optim.Adafactor: row and column variances for matrices, full for vectors */
    case LLMEM_OPT_ADAFACTOR: return is_matrix ? ob * dims : ob * count;
    /* Muon: one momentum buffer for hidden matrices; AdamW for the rest */
    case LLMEM_OPT_MUON: return is_matrix == 1 ? ob * count : 2 * ob * count;
    default: return 2 * ob * count;
  }
}

/* QLoRA storage of a quantised weight (bitsandbytes functional.py quantize_4bit,
 * blocksize 64; double quant: uint8 absmax + fp32 per 256 blocks; int8: row scale). */
static double quantized_bytes_per_param(const plan *pl) {
  if (pl->quant == LLMEM_QUANT_INT8) return 1 + 4.0 / pl->hidden;
  if (pl->double_quant) return 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
  return 0.5 + 4.0 / 64;
}

void states_for_stage(const plan *pl, const stage_layout *st, rank_states *rs) {
  rank_states r = {0};
  const layer_params *lp = &st->layers;
  int engine = pl->engine;
  int fsdp = engine == LLMEM_ENGINE_FSDP1 || engine == LLMEM_ENGINE_FSDP2;
  int deepspeed = engine == LLMEM_ENGINE_DEEPSPEED || engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  int megatron = engine == LLMEM_ENGINE_MEGATRON;
  int torch_native = engine == LLMEM_ENGINE_SINGLE || engine == LLMEM_ENGINE_DDP || fsdp;
  int fsdp_sharded = fsdp && pl->fsdp_strategy != LLMEM_FSDP_NO_SHARD;
  int z = deepspeed ? pl->zero_stage : 0;
  int lora = pl->ft_method != LLMEM_FT_FULL;

  /* what is sharded, and over how many ranks */
  int shard_params = fsdp_sharded || z >= 3;
  int shard_grads = fsdp_sharded || z >= 2;
  int shard_opt = fsdp_sharded || z >= 1 || (megatron && pl->dist_opt);
  double Nd = pl->shard_dense, Ne = pl->shard_expert;
  double expert = lp->expert_count;
  double dense = st->params_count - (lora ? lp->lora_count : 0) - expert;
  double trainable_dense = lora ? lp->lora_count : dense;
  double trainable_expert = lora ? 0 : expert;
  double emb_head = st->embedding_count + st->head_count;
  double wb = pl->weight_bytes, mb = pl->master_bytes;
  double param_div_d = shard_params ? Nd : 1, param_div_e = shard_params ? Ne : 1;
  double opt_div_d = shard_opt ? Nd : 1, opt_div_e = shard_opt ? Ne : 1;

  /* ---- weights ---- */
  double weights = 0, master = 0;
  if (lora) {
    /* frozen base: QLoRA quantises every linear of the layers; embeddings,
     * head and norms stay in the base dtype (HF skips lm_head) */
    double base_b = pl->base_weight_bytes;
    double base;
    if (pl->ft_method == LLMEM_FT_QLORA) {
      double quantized = lp->quantizable_count;
      base = quantized * quantized_bytes_per_param(pl) + (dense + expert - quantized) * base_b;
    } else {
      base = (dense + expert) * base_b;
    }
    weights += base / param_div_d;
    double adapter_b = dtype_bytes(pl->adapter_dtype);
    weights += trainable_dense * adapter_b / param_div_d;
    if (pl->adapter_dtype != LLMEM_DTYPE_FP32 && pl->master_weights) master += trainable_dense * 4 / opt_div_d;
  } else if (fsdp_sharded) {
    /* FSDP keeps the sharded parameter in its storage dtype: with a bf16
     * MixedPrecision policy the fp32 shard is the master copy (FSDP2 docs). */
    if (mb > 0) master += (dense / Nd + expert / Ne) * 4;
    else weights += (dense / Nd + expert / Ne) * wb;
  } else if (pl->autocast) {
    /* torch.autocast: fp32 parameters are the master copy; bf16 casts are made
     * per layer in the forward and kept for the backward (timeline.c). */
    master += (dense + expert) * 4;
  } else {
    weights += dense / param_div_d * wb + expert / param_div_e * wb;
    if (mb > 0) master += (trainable_dense / opt_div_d + trainable_expert / opt_div_e) * mb;
  }
  /* ZeRO-3 keeps parameters below stage3_param_persistence_threshold gathered
   * (norms, biases): stage3.py persistent parameters. */
  if (z == 3 && lp->vector_count > 0 && pl->hidden < pl->persistence_threshold)
    weights += lp->vector_count * wb * (1 - 1 / Nd);
  /* Transformer Engine keeps an fp8 copy of each linear weight unless the
   * parameters themselves are fp8 (fp8_model_init; memory-model.md §4.5). */
  if (pl->fp8_linear && pl->dtype != LLMEM_DTYPE_FP8 && (megatron || deepspeed))
    weights += (lp->matrix_count + expert) / param_div_d;

  /* ---- gradients (trainable parameters only) ---- */
  double grads = 0;
  if (fsdp_sharded) {
    grads = (trainable_dense / Nd + trainable_expert / Ne) * (mb > 0 ? 4 : (lora ? dtype_bytes(pl->adapter_dtype) : wb));
    r.gradients_lazy = 1;
  } else if (deepspeed) {
    /* DeepSpeed (stage_1_and_2.py L3093): 16-bit grads and an fp32 partition */
    double g16 = trainable_dense / (shard_grads ? Nd : 1) * wb + trainable_expert / (shard_grads ? Ne : 1) * wb;
    double g32 = pl->grad_bytes == 4 && mb > 0 ? (trainable_dense / opt_div_d + trainable_expert / opt_div_e) * 4 : 0;
    grads = g16 + g32;
    r.gradients_lazy = z < 2;
  } else if (megatron) {
    /* contiguous main-grad buffer, fp32 unless --grad-reduce-in-bf16 (not sharded) */
    grads = (trainable_dense + trainable_expert) * pl->grad_bytes;
  } else {
    double gb = (mb > 0 && !lora) ? pl->grad_bytes : (lora ? dtype_bytes(pl->adapter_dtype) : wb);
    grads = (trainable_dense + trainable_expert) * gb;
    r.gradients_lazy = 1;
    /* DDP's flat bucket buffers hold a second copy unless gradient_as_bucket_view */
    if (engine == LLMEM_ENGINE_DDP && !pl->grad_as_bucket_view) r.comm_persistent += grads;
  }

  /* ---- optimizer states ---- */
  double opt;
  if (lora) {
    opt = optimizer_bytes(pl, trainable_dense, trainable_dense, 2) / opt_div_d;
  } else {
    double mats = lp->matrix_count, vecs = lp->vector_count + st->final_norm_count;
    double table_dims = pl->vocab_padded / pl->tp + pl->hidden; /* rows + cols of a V x h table */
    double emb_dims = (st->embedding_count > 0 ? table_dims : 0) + (st->head_count > 0 ? table_dims : 0);
    opt = (optimizer_bytes(pl, mats, lp->matrix_dims_count, 1) + optimizer_bytes(pl, vecs, vecs, 0) +
           optimizer_bytes(pl, emb_head, emb_dims, 2)) / opt_div_d +
          optimizer_bytes(pl, expert, lp->expert_dims_count, 1) / opt_div_e;
  }

  /* ---- offload ---- */
  if (pl->offload_optimizer != LLMEM_OFFLOAD_NONE) {
    double host = opt + master;
    if (deepspeed && pl->grad_bytes == 4 && mb > 0) { /* fp32 gradient partition moves with the optimizer */
      double g32 = (trainable_dense / opt_div_d + trainable_expert / opt_div_e) * 4;
      host += g32;
      grads -= g32;
    }
    if (fsdp) { host += grads; grads = 0; }
    if (pl->offload_optimizer == LLMEM_OFFLOAD_NVME) r.nvme_bytes += host; else r.host_bytes += host;
    opt = 0;
    master = 0;
  }
  if (pl->offload_params != LLMEM_OFFLOAD_NONE) {
    if (pl->offload_params == LLMEM_OFFLOAD_NVME) r.nvme_bytes += weights; else r.host_bytes += weights;
    weights = 0;
  }
  /* bitsandbytes paged optimizers allocate their states with cudaMallocManaged
   * (bitsandbytes/optim/optimizer.py GlobalPageManager): outside PyTorch's
   * caching allocator, so neither allocated nor reserved sees them. */
  if (pl->paged_optimizer) {
    r.paged_bytes = opt;
    opt = 0;
  }
  r.weights = weights;
  r.master = master;
  r.gradients = grads;
  r.optimizer = opt;

  /* ---- per-layer gathers ---- */
  r.unsharded_weight_bytes = lora ? pl->base_weight_bytes : (pl->fp8_all_gather ? 1 : wb);
  if (pl->ft_method == LLMEM_FT_QLORA) r.unsharded_weight_bytes = quantized_bytes_per_param(pl);
  r.unsharded_grad_bytes = lora ? 0 : wb;
  r.reduce_bytes = lora ? 0 : pl->grad_bytes;
  if (fsdp_sharded && pl->offload_params == LLMEM_OFFLOAD_NONE) {
    r.gathers = 1;
    r.keep_gathered_until_backward = pl->fsdp_strategy == LLMEM_FSDP_SHARD_GRAD_OP ||
                                     (engine == LLMEM_ENGINE_FSDP2 && !pl->reshard_after_forward);
    /* FSDP2 copies the all-gather output out into per-parameter tensors
     * (_fsdp_collectives.py foreach_all_gather_copy_out): the prefetched next
     * group briefly exists twice. FSDP1 uses views into the flat buffer. */
    r.gather_factor_fwd = engine == LLMEM_ENGINE_FSDP2 ? 2 : 1;
    /* backward prefetch is explicit: the next group's unsharded copy (§6.2) */
    r.gather_factor_bwd = 1;
  } else if (fsdp_sharded) {
    r.gathers = 1; /* CPU offload: parameters are copied in per unit */
    r.gather_factor_fwd = 1;
    r.gather_factor_bwd = 1;
  }
  if (z == 3) {
    /* ZeRO-3 gathers per module with a prefetch bucket, capped by max live */
    r.gathers = 2;
    r.gather_factor_fwd = 0;
    r.gather_factor_bwd = 0;
  }
  if (fsdp_sharded) {
    r.root_gathered = (emb_head + st->final_norm_count) * r.unsharded_weight_bytes; /* root unit: embedding, head, final norm */
  }
  /* torch.distributed.pipelining runs every micro-batch but the last under
   * FSDP2's no-sync with resharding after backward off
   * (stage.backward_maybe_with_nosync): each stage keeps its parameters
   * gathered and accumulates unsharded gradients in the reduce dtype
   * (_fsdp_param.py to_accumulated_grad_if_needed). */
  if (engine == LLMEM_ENGINE_FSDP2 && fsdp_sharded && pl->pp > 1 && pl->grad_accum > 1) {
    r.accumulate_unsharded = 1;
    r.keep_gathered_until_backward = 1;
    r.unsharded_accum_bytes = lora ? dtype_bytes(pl->adapter_dtype) : pl->grad_bytes;
  }

  /* ---- DeepSpeed buckets ---- */
  if (deepspeed && z >= 2) {
    double bucket = pl->reduce_bucket * wb;
    double full = (dense + expert) * wb;
    if (bucket > full) bucket = full;
    r.comm_persistent += bucket * (z == 2 && pl->overlap_comm ? 2 : 1);
  }

  /* ---- optimizer-step temporaries ---- */
  double ob = dtype_bytes(pl->optimizer_dtype);
  double trainable_here = trainable_dense / opt_div_d + trainable_expert / opt_div_e;
  if (pl->offload_optimizer != LLMEM_OFFLOAD_NONE) trainable_here = 0;
  int foreach = torch_native && pl->optimizer_impl == LLMEM_OPT_IMPL_FOREACH && !pl->optimizer_in_backward;
  if (foreach) {
    /* torch _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs) is
     * a full tensor list (torch/optim/adam.py); Adafactor builds full-size
     * variance estimates; SGD/Lion update in place. */
    if (pl->optimizer == LLMEM_OPT_ADAM || pl->optimizer == LLMEM_OPT_ADAMW) r.optimizer_step_temp = trainable_here * ob;
    if (pl->optimizer == LLMEM_OPT_ADAFACTOR) r.optimizer_step_temp = trainable_here * ob;
  } else if (torch_native && pl->optimizer_impl == LLMEM_OPT_IMPL_FOR_LOOP) {
    r.optimizer_step_temp = lp->largest_linear_count * ob;
  }
  if (pl->optimizer == LLMEM_OPT_MUON) /* Newton-Schulz iterations on the largest matrix */
    r.optimizer_step_temp = max2(r.optimizer_step_temp, 3 * lp->largest_linear_count * 4);
  if (deepspeed && z >= 1 && z <= 2) {
    double gather = pl->allgather_bucket * wb;
    double full = (dense + expert) * wb;
    r.optimizer_step_temp += gather < full ? gather : full;
  }
  *rs = r;
}
