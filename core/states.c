/* Model states per rank: weights, gradients, master weights, optimizer states
 * and their sharding per engine, with offload to host/NVMe
 * (docs/memory-model.md §4, §5, §6, §8). */
#include <math.h>

#include "internal.h"


/* Optimizer-state bytes for `count` parameters of one class (docs/memory-model.md §4.4), states
 * of `dtype`. dims: rows + cols summed over the class's matrices (Adafactor factors). */
static double optimizer_bytes_as(const plan *pl, int dtype, double count, double dims, int is_matrix) {
  double ob = dtype_bytes(dtype);
  switch ((int)pl->in->optimizer) {
    case LLMEM_OPT_ADAM:
    case LLMEM_OPT_ADAMW: return 2 * ob * count;
    /* bitsandbytes 8-bit: uint8 m, v + fp32 absmax per 256-block per state
     * (optim/optimizer.py L502-529); tensors under 4096 elements stay fp32. */
    case LLMEM_OPT_ADAMW_8BIT: return (is_matrix || pl->in->hidden >= 4096) ? count * (2 + 8.0 / 256) : 8 * count;
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

/* ...of training.optimizer_dtype */
static double optimizer_bytes(const plan *pl, double count, double dims, int is_matrix) {
  return optimizer_bytes_as(pl, (int)pl->in->optimizer_dtype, count, dims, is_matrix);
}

/* QLoRA data of a quantised weight: 4-bit values two to a byte, whatever dtype
 * bnb_4bit_quant_storage packs them in (bitsandbytes functional.py quantize_4bit); int8 one byte. */
static double quantized_data_bytes(const plan *pl) { return (int)pl->in->quant == LLMEM_QUANT_INT8 ? 1 : 0.5; }

/* Its statistics (bitsandbytes 95f9af3 functional.py quantize_4bit L917-951: fp32
 * absmax per 64-value block; double quant: uint8 absmax + fp32 absmax per 256
 * of those, quantize_blockwise(blocksize=256)); int8: fp32 scale per row (SCB). */
static double quantized_stats_bytes(const plan *pl) {
  if ((int)pl->in->quant == LLMEM_QUANT_INT8) return 4.0 / pl->in->hidden;
  if ((int)pl->in->double_quant != 0) return 1.0 / 64 + 4.0 / (64 * 256);
  return 4.0 / 64;
}

/* Whether the statistics are sharded, gathered and offloaded with the data:
 * FSDP2 (torchtune) quantises with torchao's NF4Tensor, whose scalers are inner
 * tensors split like the data (ao 38cb64c nf4tensor.py _INNER_TENSOR_NAMES_FOR_SHARDING).
 * bitsandbytes (FSDP1, DeepSpeed) keeps them in Params4bit.quant_state, a plain
 * attribute (nn/modules.py L213-238, QuantState): FSDP1 flattens the packed data
 * only (fix_4bit_weight_quant_state_from_module L487-501 restores the state "lost
 * when the parameter got converted ... for example for fsdp"), ZeRO-3 partitions
 * parameters only, offload moves only those: each rank keeps them whole on the GPU.
 * Both shard the packed data once bnb_4bit_quant_storage is the model dtype
 * (peft 5d602fd docs/source/accelerate/fsdp.md L242-271, deepspeed.md L241-270). */
static int quant_stats_travel(const plan *pl) { return (int)pl->in->engine == LLMEM_ENGINE_FSDP2; }

/* Output-projection parameters stored in 4 bits (training.finetune.quant_head):
 * Lightning Fabric's BitsandbytesPrecision.module_init_context swaps every
 * torch.nn.Linear for its _Linear4bit while the model is built, LitGPT's
 * lm_head (a LoRALinear around a torch.nn.Linear) included
 * (lightning src/lightning/fabric/plugins/precision/bitsandbytes.py, d1949766;
 * litgpt/lora.py GPT.__init__, 47806045); HF and Answer.AI skip lm_head. */
double quantized_head_count(const plan *pl, const stage_layout *st) {
  if ((int)pl->in->ft_method != LLMEM_FT_QLORA || !pl->quant_head || (pl->full_modules & (1 << LLMEM_FM_HEAD)))
    return 0;
  return st->head_count;
}

static double quant_stats_on_rank(const plan *pl, const stage_layout *st) {
  if ((int)pl->in->ft_method != LLMEM_FT_QLORA || quant_stats_travel(pl)) return 0;
  return (st->layers.quantizable_count + quantized_head_count(pl, st)) * quantized_stats_bytes(pl);
}

/* Bytes per quantised parameter that are sharded and gathered. */
static double quantized_shard_bytes(const plan *pl) {
  return quantized_data_bytes(pl) + (quant_stats_travel(pl) ? quantized_stats_bytes(pl) : 0);
}

/* ZeRO-3 keeps parameters of at most stage3_param_persistence_threshold
 * elements gathered (parameter_offload.py mark_persistent_parameters: ds_numel <= threshold): the norms. */
static int zero3_norms_persist(const plan *pl) { return pl->in->hidden <= pl->in->stage3_param_persistence_threshold; }

/* What a rank holds of its stage and how the engine shards it. */
typedef struct {
  int engine, fsdp, deepspeed, megatron, torch_native, fsdp_sharded, z, lora;
  int shard_params, shard_grads, shard_opt;
  double Nd, Ne; /* sharding degrees of dense and expert states */
  double expert, dense, trainable_dense, trainable_expert, emb_head;
  double full_copy; /* LoRA: trainable copies of modules trained in full (base dtype) */
  double wb, mb;    /* bytes per weight, per master weight */
  double param_div_d, param_div_e, opt_div_d, opt_div_e;
} stage_counts;

static stage_counts counts_of(const plan *pl, const stage_layout *st) {
  stage_counts k;
  stage_counts *c = &k;
  const layer_params *lp = &st->layers;
  c->engine = (int)pl->in->engine;
  c->fsdp = c->engine == LLMEM_ENGINE_FSDP1 || c->engine == LLMEM_ENGINE_FSDP2;
  c->deepspeed = c->engine == LLMEM_ENGINE_DEEPSPEED || c->engine == LLMEM_ENGINE_MEGATRON_DEEPSPEED;
  c->megatron = c->engine == LLMEM_ENGINE_MEGATRON;
  c->torch_native = c->engine == LLMEM_ENGINE_SINGLE || c->engine == LLMEM_ENGINE_DDP || c->fsdp;
  c->fsdp_sharded = c->fsdp && (int)pl->in->fsdp_strategy != LLMEM_FSDP_NO_SHARD;
  c->z = c->deepspeed ? (int)pl->in->zero_stage : 0;
  c->lora = (int)pl->in->ft_method != LLMEM_FT_FULL;
  /* what is sharded, and over how many ranks */
  c->shard_params = c->fsdp_sharded || c->z >= 3;
  c->shard_grads = c->fsdp_sharded || c->z >= 2;
  c->shard_opt = c->fsdp_sharded || c->z >= 1 || (c->megatron && (int)pl->in->distributed_optimizer != 0);
  c->Nd = pl->shard_dense;
  c->Ne = pl->shard_expert;
  c->expert = lp->expert_count;
  c->dense = st->params_count - (c->lora ? lp->lora_count : 0) - c->expert;
  c->trainable_dense = c->lora ? lp->lora_count : c->dense - st->vision_frozen_count; /* a frozen tower: weights only */
  c->trainable_expert = c->lora ? 0 : c->expert;
  c->emb_head = st->embedding_count + st->head_count;
  c->full_copy = c->lora ? full_module_params(pl, st->embedding_count, st->head_count) : 0;
  c->wb = pl->weight_bytes;
  c->mb = pl->master_bytes;
  c->param_div_d = c->shard_params ? c->Nd : 1;
  c->param_div_e = c->shard_params ? c->Ne : 1;
  c->opt_div_d = c->shard_opt ? c->Nd : 1;
  c->opt_div_e = c->shard_opt ? c->Ne : 1;
  return k;
}

/* Weights and master weights: LoRA/QLoRA base + adapters, FSDP shards,
 * autocast's fp32 parameters, or replicated / ZeRO / Megatron copies. */
static void weights_and_master(const plan *pl, const stage_layout *st, const stage_counts *c, double *weights,
                               double *master) {
  const layer_params *lp = &st->layers;
  if (c->lora) {
    /* frozen base: QLoRA quantises every linear of the layers; embeddings,
     * head and norms stay in the base dtype (HF skips lm_head) */
    double base_b = pl->base_weight_bytes;
    double base;
    if ((int)pl->in->ft_method == LLMEM_FT_QLORA) { /* the statistics: quant_stats_on_rank */
      double quantized = lp->quantizable_count + quantized_head_count(pl, st);
      base = quantized * quantized_shard_bytes(pl) + (c->dense + c->expert - quantized) * base_b;
    } else {
      base = (c->dense + c->expert) * base_b;
    }
    *weights += base / c->param_div_d;
    double adapter_b = dtype_bytes((int)pl->in->adapter_dtype);
    *weights += c->trainable_dense * adapter_b / c->param_div_d;
    if ((int)pl->in->adapter_dtype != LLMEM_DTYPE_FP32 && pl->master_weights)
      *master += c->trainable_dense * 4 / c->opt_div_d;
    /* the trainable copies, in the base dtype beside their frozen originals;
     * DeepSpeed's mixed-precision optimizer keeps an fp32 master of them too */
    *weights += c->full_copy * base_b / c->param_div_d;
    if (c->deepspeed && c->mb > 0) *master += c->full_copy * 4 / c->opt_div_d;
  } else if (c->fsdp_sharded) {
    /* FSDP keeps the sharded parameter in its storage dtype: with a bf16
     * MixedPrecision policy the fp32 shard is the master copy (FSDP2 docs). */
    if (c->mb > 0) *master += (c->dense / c->Nd + c->expert / c->Ne) * 4;
    else *weights += (c->dense / c->Nd + c->expert / c->Ne) * c->wb;
  } else if (pl->autocast) {
    /* torch.autocast: fp32 parameters are the master copy; bf16 casts are made
     * per layer in the forward and kept for the backward (timeline.c). */
    *master += (c->dense + c->expert) * 4;
  } else if ((int)pl->in->dtype == LLMEM_DTYPE_FP8 && pl->fp8_recipe >= 0) {
    /* parameters in fp8 (TE fp8_model_init / quantized_model_init, Megatron
     * --fp8-param-gather): each linear weight is a quantised tensor with both
     * usages (TE module/base.py creates it through the weight quantizer); the
     * embedding, the output layer, norms and routers are not TE linears and stay
     * in the activation dtype. No separate high-precision copy. */
    double linear = lp->matrix_count;
    *weights += ((c->dense - linear) * pl->act_bytes + linear * pl->fp8_weight_bytes) / c->param_div_d +
                c->expert / c->param_div_e * pl->fp8_weight_bytes;
    if (c->mb > 0) *master += (c->trainable_dense / c->opt_div_d + c->trainable_expert / c->opt_div_e) * c->mb;
  } else {
    *weights += c->dense / c->param_div_d * c->wb + c->expert / c->param_div_e * c->wb;
    if (c->mb > 0) *master += (c->trainable_dense / c->opt_div_d + c->trainable_expert / c->opt_div_e) * c->mb;
  }
  /* ZeRO-3 keeps parameters of at most stage3_param_persistence_threshold gathered
   * (norms, biases): stage3.py persistent parameters. */
  if (c->z == 3 && lp->vector_count > 0 && zero3_norms_persist(pl))
    *weights += lp->vector_count * c->wb * (1 - 1 / c->Nd);
  /* Transformer Engine keeps an fp8 copy of each linear weight unless the
   * parameters themselves are fp8 (fp8_model_init; docs/memory-model.md §4.5). */
  if (pl->fp8_linear && (int)pl->in->dtype != LLMEM_DTYPE_FP8 && (c->megatron || c->deepspeed)) {
    if (pl->fp8_recipe < 0) *weights += (lp->matrix_count + c->expert) / c->param_div_d;
    else /* the recipe's quantised copies of each linear weight (§4.6) */
      *weights += (lp->matrix_count / c->param_div_d + c->expert / c->param_div_e) * pl->fp8_weight_bytes;
  }
}

/* Gradients of the trainable parameters, per engine. torch's .grad appears in the first backward
 * (gradients_lazy) unless zero_grad only zeroes it (set_to_none=False, PyTorch < 2.0's default:
 * torch/optim/optimizer.py and torch/nn/modules/module.py zero_grad before pytorch #92731): from the
 * second step on, every gradient is alive through the forward and backward. */
static double gradients_bytes(const plan *pl, const stage_counts *c, rank_states *r) {
  double grads = 0;
  if (c->fsdp_sharded) {
    grads = (c->trainable_dense / c->Nd + c->trainable_expert / c->Ne) *
            (c->mb > 0 ? 4 : (c->lora ? dtype_bytes((int)pl->in->adapter_dtype) : c->wb));
    grads += c->full_copy / c->Nd * pl->base_weight_bytes; /* a gradient in each copy's own dtype */
    r->gradients_lazy = !pl->zero_grad_in_place;
    /* FSDP2 foreach_reduce: reduce_output = reduce_scatter_input.new_empty(...) under
     * torch.cuda.stream(reduce_scatter_stream), and the sharded .grad is a view of it
     * (_fsdp_collectives.py, every version since torch 2.4; still after #129721) */
    r->gradients_reduce_stream = c->engine == LLMEM_ENGINE_FSDP2 && (int)pl->in->offload_params == LLMEM_OFFLOAD_NONE;
  } else if (c->deepspeed) {
    /* DeepSpeed (stage_1_and_2.py L3093): 16-bit grads and an fp32 partition */
    double g16 = c->trainable_dense / (c->shard_grads ? c->Nd : 1) * c->wb +
                 c->trainable_expert / (c->shard_grads ? c->Ne : 1) * c->wb;
    double g32 = pl->grad_bytes == 4 && c->mb > 0
                     ? (c->trainable_dense / c->opt_div_d + c->trainable_expert / c->opt_div_e) * 4
                     : 0;
    grads = g16 + g32;
    /* trainable copies of full modules: 16-bit gradients, an fp32 partition with the master */
    grads += c->full_copy / (c->shard_grads ? c->Nd : 1) * pl->base_weight_bytes +
             (pl->grad_bytes == 4 && c->mb > 0 ? c->full_copy / c->opt_div_d * 4 : 0);
    r->gradients_lazy = c->z < 2;
  } else if (c->megatron) {
    /* contiguous main-grad buffer, fp32 unless --grad-reduce-in-bf16 (not sharded) */
    grads = (c->trainable_dense + c->trainable_expert + c->full_copy) * pl->grad_bytes;
  } else {
    double gb = (c->mb > 0 && !c->lora) ? pl->grad_bytes : (c->lora ? dtype_bytes((int)pl->in->adapter_dtype) : c->wb);
    grads = (c->trainable_dense + c->trainable_expert) * gb + c->full_copy * pl->base_weight_bytes;
    r->gradients_lazy = !pl->zero_grad_in_place;
    /* DDP's flat bucket buffers hold a second copy unless gradient_as_bucket_view; with it the gradients are
     * views of the buckets, which the Reducer keeps from construction on (reducer.cpp initialize_buckets,
     * initialize_bucket_views): whole through every step, whatever zero_grad does to .grad */
    if (c->engine == LLMEM_ENGINE_DDP) {
      r->ddp_buckets = grads;
      if ((int)pl->in->grad_as_bucket_view == 0) r->comm_persistent += grads;
      else r->gradients_lazy = 0;
    }
  }
  return grads;
}

static double optimizer_states_bytes(const plan *pl, const stage_layout *st, const stage_counts *c) {
  const layer_params *lp = &st->layers;
  if (c->lora) {
    /* the full copies' states: torch.optim makes them like the parameter
     * (adamw.py _init_group: zeros_like), DeepSpeed like its fp32 master */
    double adapters = optimizer_bytes(pl, c->trainable_dense, c->trainable_dense, 2);
    if (c->full_copy == 0) return adapters / c->opt_div_d;
    int copy_dtype = c->deepspeed && c->mb > 0 ? (int)pl->in->optimizer_dtype : pl->base_dtype;
    double table_dims = pl->vocab_padded / pl->in->tp + pl->in->hidden;
    return (adapters + optimizer_bytes_as(pl, copy_dtype, c->full_copy, table_dims, 2)) / c->opt_div_d;
  } else {
    double mats = lp->matrix_count, vecs = lp->vector_count + st->final_norm_count;
    double table_dims = pl->vocab_padded / pl->in->tp + pl->in->hidden; /* rows + cols of a V x h table */
    double emb_dims = (st->embedding_count > 0 ? table_dims : 0) + (st->head_count > 0 ? table_dims : 0);
    /* a trained vision tower: matrices of its width (rows + cols ~ 2 count / d for factored states) */
    double vision = st->vision_count - st->vision_frozen_count;
    double vision_states = vision > 0 ? optimizer_bytes(pl, vision, 2 * vision / pl->in->vision_hidden, 1) : 0;
    return (optimizer_bytes(pl, mats, lp->matrix_dims_count, 1) + optimizer_bytes(pl, vecs, vecs, 0) +
            optimizer_bytes(pl, c->emb_head, emb_dims, 2) + vision_states) /
               c->opt_div_d +
           optimizer_bytes(pl, c->expert, lp->expert_dims_count, 1) / c->opt_div_e;
  }
}

/* Offload to host / NVMe; paged optimizer states to managed memory. */
static void offload(const plan *pl, const stage_counts *c, rank_states *r, double *weights, double *master,
                    double *grads, double *opt) {
  if ((int)pl->in->offload_optimizer != LLMEM_OFFLOAD_NONE) {
    double host = *opt + *master;
    if (c->deepspeed && pl->grad_bytes == 4 && c->mb > 0) { /* fp32 gradient partition moves with the optimizer */
      double g32 = (c->trainable_dense / c->opt_div_d + c->trainable_expert / c->opt_div_e) * 4;
      host += g32;
      *grads -= g32;
    }
    if (c->fsdp) {
      host += *grads;
      *grads = 0;
    }
    /* ZeRO-2/3 keep no 16-bit gradient partition on the GPU then: stage 2 copies each reduced gradient into the
     * fp32 partition's host buffer (stage_1_and_2.py copy_grads_in_partition under cpu_offload, no
     * grads_in_partition), stage 3 makes grad_partitions_flat_buffer on self.device, the CPU (stage3.py, @edaa7221) */
    if (c->deepspeed && c->z >= 2) {
      if (c->z == 3) host += *grads;
      *grads = 0;
    }
    if ((int)pl->in->offload_optimizer == LLMEM_OFFLOAD_NVME) r->nvme_bytes += host;
    else r->host_bytes += host;
    *opt = 0;
    *master = 0;
  }
  if ((int)pl->in->offload_params != LLMEM_OFFLOAD_NONE) {
    if ((int)pl->in->offload_params == LLMEM_OFFLOAD_NVME) r->nvme_bytes += *weights;
    else r->host_bytes += *weights;
    *weights = 0;
  }
  /* bitsandbytes paged optimizers allocate their states with cudaMallocManaged
   * (bitsandbytes/optim/optimizer.py GlobalPageManager): outside PyTorch's
   * caching allocator, so neither allocated nor reserved sees them. */
  if ((int)pl->in->paged_optimizer != 0) {
    r->paged_bytes = *opt;
    *opt = 0;
  }
}

/* Bytes of `params` gathered parameters, `quantized` of them QLoRA weights:
 * their packed data only; embedding, lm_head and norms stay in the base dtype. */
double gathered_bytes(const rank_states *rs, double params, double quantized) {
  if (rs->quantized_gather_bytes <= 0) return params * rs->unsharded_weight_bytes;
  return quantized * rs->quantized_gather_bytes + (params - quantized) * rs->unsharded_weight_bytes;
}

/* ZeRO-3's live gathered parameters. Every submodule's pre-forward and
 * pre-backward hook calls fetch_sub_module (parameter_offload.py
 * _register_deepspeed_module), which gathers the module's own parameters and
 * then prefetches the next ones of the recorded trace, another
 * stage3_prefetch_bucket_size each call, while fewer than
 * stage3_max_live_parameters are available (DeepSpeed edaa722
 * partitioned_param_coordinator.py L451-485, __n_available_params);
 * release_sub_module frees a module's own after it ran. A decoder layer runs
 * more hooks (layer, attention, MLP, norms, activation) than it has weights,
 * so the window fills to max live, or to all the stage's parameters (the
 * trace holds the backward, which uses each again). Elements count in the
 * storage dtype: QLoRA's 4-bit data in bnb_4bit_quant_storage = the model dtype. */
static double zero3_live_bytes(const plan *pl, const stage_layout *st, const stage_counts *c, const rank_states *r) {
  if (pl->in->stage3_prefetch_bucket_size <= 0) return 0; /* no prefetch: the running module only */
  const layer_params *lp = &st->layers;
  double persistent = zero3_norms_persist(pl) ? lp->vector_count + st->final_norm_count : 0;
  double params = c->dense + c->expert - persistent;
  double quantized = (int)pl->in->ft_method == LLMEM_FT_QLORA ? lp->quantizable_count : 0;
  double storage_b = (int)pl->in->quant == LLMEM_QUANT_INT8 ? 1 : r->unsharded_weight_bytes;
  double numel = params - quantized + (quantized > 0 ? quantized * r->quantized_gather_bytes / storage_b : 0);
  double bytes = gathered_bytes(r, params, quantized);
  return numel > pl->in->stage3_max_live_parameters ? bytes * pl->in->stage3_max_live_parameters / numel : bytes;
}

/* ZeRO-3 at the loss: the lm_head is fetched whole even past max live
 * (fetch_sub_module gathers the running module unconditionally, L364-381); in
 * the backward its full gradient exists until its hook copies it into the
 * reduce bucket (stage3.py L1459 reduce_partition_and_remove_grads, L1543). */
static void zero3_gathers(const plan *pl, const stage_layout *st, const stage_counts *c, rank_states *r) {
  r->gathers = 2;
  r->gather_factor_fwd = 0;
  r->gather_factor_bwd = 0;
  r->live_gathered = zero3_live_bytes(pl, st, c, r);
  r->loss_gathered = max2(r->live_gathered, st->head_count * r->unsharded_weight_bytes);
  r->loss_unsharded_grads = st->head_count * r->unsharded_grad_bytes;
}

/* The FSDP root unit: what no wrapped submodule holds, gathered at the root's
 * pre-forward and kept through backward (FSDP2 sets the root's
 * reshard_after_forward False: pytorch _fully_shard.py docstring, "None ...
 * False for root modules"; torchtune shard_model sets it explicitly,
 * training/_distributed.py bd2a0fc7c; FSDP1 notes "kept in GPU memory until
 * the end of backward"). shard_root_modules: the embedding and the output
 * projection are units of their own (torchtune custom_sharded_layers,
 * afd23fd0b #1287): gathered around their forward and their backward only,
 * their full gradient alive until their reduce-scatter (post_backward,
 * _fsdp_param_group.py 002a76fbf); the root keeps the final norm. A tied
 * output uses the embedding's weight outside the embedding's forward, and
 * pipelining's no-sync keeps every unit gathered: both stay in the root. */
/* FSDP2 keeps a gradient per parameter (DTensor): the root's head gradient
 * appears at the head's matmul backward, after the loss's, its embedding
 * gradient only at the embedding's backward; the root's post-backward then
 * reshards the root and copies all of them into one reduce-scatter input in
 * the reduce dtype (_fsdp_collectives.py foreach_reduce; passes.c) before
 * freeing them. A tied output shares one gradient,
 * made at the loss backward. FSDP1's flat parameter gets its whole gradient
 * at the first backward through any of its views. */
static void fsdp2_root_grads(const stage_layout *st, const stage_counts *c, rank_states *r) {
  double head = c->emb_head - st->embedding_count;
  r->root_unsharded_grads = head * r->unsharded_grad_bytes;
  r->root_embed_grads = st->embedding_count * r->unsharded_grad_bytes;
  r->root_reduce_head = (head + st->final_norm_count) * r->reduce_bytes;
  r->root_reduce_embed = st->embedding_count * r->reduce_bytes;
}

static void root_units(const plan *pl, const stage_layout *st, const stage_counts *c, rank_states *r) {
  int own = pl->shard_root_modules && !((int)pl->in->tied_embeddings != 0 && (int)pl->in->head == LLMEM_HEAD_LM) &&
            !r->accumulate_unsharded;
  double root = own ? st->final_norm_count : c->emb_head + st->final_norm_count;
  r->root_gathered = gathered_bytes(r, root, 0); /* none quantised */
  r->root_unsharded_grads = (own ? st->final_norm_count : c->emb_head) * r->unsharded_grad_bytes;
  if (!own && (int)pl->in->engine == LLMEM_ENGINE_FSDP2 &&
      !((int)pl->in->tied_embeddings != 0 && (int)pl->in->head == LLMEM_HEAD_LM))
    fsdp2_root_grads(st, c, r);
  if (!own) return;
  r->own_root_units = 1;
  r->embed_gathered = gathered_bytes(r, st->embedding_count, 0);
  r->embed_unsharded_grads = st->embedding_count * r->unsharded_grad_bytes;
  r->embed_reduce_input = st->embedding_count * r->reduce_bytes;
  r->loss_gathered = gathered_bytes(r, st->head_count, 0);
  r->loss_unsharded_grads = st->head_count * r->unsharded_grad_bytes;
  r->loss_reduce_input = st->head_count * r->reduce_bytes;
}

/* Per-layer gathers: FSDP units, ZeRO-3 modules, FSDP2 under pipelining. */
static void gathers(const plan *pl, const stage_layout *st, const stage_counts *c, rank_states *r) {
  /* FSDP under torch.autocast keeps param_dtype float32 (plan.c autocast_of): it gathers the fp32 shards and
   * the unsharded gradients come in fp32, the flat parameter's dtype (Lightning Fabric plugins/precision/
   * fsdp.py @b89ca6e mixed_precision_config: "bf16-mixed" -> param_dtype torch.float32, reduce_dtype bf16) */
  double unsharded_b = c->fsdp_sharded && pl->autocast ? 4 : c->wb;
  r->unsharded_weight_bytes = c->lora ? pl->base_weight_bytes : (pl->in->fp8_all_gather != 0 ? 1 : unsharded_b);
  if ((int)pl->in->ft_method == LLMEM_FT_QLORA) r->quantized_gather_bytes = quantized_shard_bytes(pl);
  r->unsharded_grad_bytes = c->lora ? 0 : unsharded_b;
  r->reduce_bytes = c->lora ? 0 : pl->grad_bytes;
  if (c->fsdp_sharded && (int)pl->in->offload_params == LLMEM_OFFLOAD_NONE) {
    r->gathers = 1;
    r->keep_gathered_until_backward = (int)pl->in->fsdp_strategy == LLMEM_FSDP_SHARD_GRAD_OP ||
                                      (c->engine == LLMEM_ENGINE_FSDP2 && (int)pl->in->reshard_after_forward == 0);
    /* FSDP2 copies the all-gather output out into per-parameter tensors
     * (_fsdp_collectives.py foreach_all_gather_copy_out): the prefetched next
     * group briefly exists twice. FSDP1 uses views into the flat buffer. */
    r->gather_factor_fwd = c->engine == LLMEM_ENGINE_FSDP2 ? 2 : 1;
    /* backward prefetch is explicit: the next group's unsharded copy (§6.2) */
    r->gather_factor_bwd = 1;
  } else if (c->fsdp_sharded) {
    r->gathers = 1; /* CPU offload: parameters are copied in per unit */
    r->gather_factor_fwd = 1;
    r->gather_factor_bwd = 1;
    /* FSDP1 pre_unshard copies the CPU shard to the GPU on its own pre-unshard
     * stream (_flat_param.py pre_unshard flat_param_to(device), 01caf79e;
     * _runtime_utils.py _init_streams / _unshard, 00ae0bc9) */
    r->copy_in_shards = c->engine == LLMEM_ENGINE_FSDP1;
  }
  if (c->z == 3) zero3_gathers(pl, st, c, r);
  /* torch.distributed.pipelining runs every micro-batch but the last under
   * FSDP2's no-sync with resharding after backward off
   * (stage.backward_maybe_with_nosync): each stage keeps its parameters
   * gathered and accumulates unsharded gradients in the reduce dtype
   * (_fsdp_param.py to_accumulated_grad_if_needed). */
  if (c->engine == LLMEM_ENGINE_FSDP2 && c->fsdp_sharded && pl->in->pp > 1 && pl->grad_accum > 1) {
    r->accumulate_unsharded = 1;
    r->keep_gathered_until_backward = 1;
    r->unsharded_accum_bytes = c->lora ? dtype_bytes((int)pl->in->adapter_dtype) : pl->grad_bytes;
  }
  /* Gradient accumulation under no_sync (parallel.accumulate_no_sync; FSDP2: set_requires_gradient_sync(False)): the
   * post-backward hook reshards the unit and returns before reducing while gradients do not sync, so each
   * unit's unsharded gradient (the flat parameter's .grad, in its compute dtype) stays and accumulates over
   * the micro-batches; the last micro-batch reduce-scatters it (torch/distributed/fsdp/_runtime_utils.py
   * _post_backward_hook: `if not state._sync_gradients: ... return` before _reduce_grad, pytorch v2.1-v2.9;
   * the FSDP docs' no_sync: "accumulate gradients in unsharded form ... higher memory usage"). */
  if (c->fsdp_sharded && pl->grad_accum > 1 && pl->accumulate_no_sync && !r->accumulate_unsharded) {
    r->accumulate_unsharded = 1;
    /* FSDP2's set_requires_gradient_sync(False) accumulates in the reduce dtype when it differs from the
     * parameters' (_fsdp_param.py to_accumulated_grad_if_needed), as under pipelining above */
    r->unsharded_accum_bytes = c->lora                           ? dtype_bytes((int)pl->in->adapter_dtype)
                               : c->engine == LLMEM_ENGINE_FSDP2 ? pl->grad_bytes
                                                                 : r->unsharded_grad_bytes;
  }
  if (c->fsdp_sharded) root_units(pl, st, c, r);
}

static void deepspeed_buckets(const plan *pl, const stage_counts *c, rank_states *r) {
  if (c->deepspeed && c->z >= 2) {
    double bucket = pl->in->reduce_bucket_size * c->wb;
    double full = (c->dense + c->expert) * c->wb;
    if (bucket > full) bucket = full;
    r->comm_persistent += bucket * (c->z == 2 && pl->overlap_comm ? 2 : 1);
  }
}

static void step_temporaries(const plan *pl, const stage_layout *st, const stage_counts *c, rank_states *r) {
  const layer_params *lp = &st->layers;
  double ob = dtype_bytes((int)pl->in->optimizer_dtype);
  double trainable_here = (c->trainable_dense + c->full_copy) / c->opt_div_d + c->trainable_expert / c->opt_div_e;
  if ((int)pl->in->offload_optimizer != LLMEM_OFFLOAD_NONE) trainable_here = 0;
  int foreach =
      c->torch_native && pl->optimizer_impl == LLMEM_OPT_IMPL_FOREACH && (int)pl->in->optimizer_in_backward == 0;
  if (foreach) {
    /* torch _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs) is
     * a full tensor list (torch/optim/adam.py); Adafactor builds full-size
     * variance estimates; SGD/Lion update in place. */
    if ((int)pl->in->optimizer == LLMEM_OPT_ADAM || (int)pl->in->optimizer == LLMEM_OPT_ADAMW)
      r->optimizer_step_temp = trainable_here * ob;
    if ((int)pl->in->optimizer == LLMEM_OPT_ADAFACTOR) r->optimizer_step_temp = trainable_here * ob;
  } else if (c->torch_native && pl->optimizer_impl == LLMEM_OPT_IMPL_FOR_LOOP) {
    r->optimizer_step_temp = lp->largest_linear_count * ob;
  }
  /* DeepSpeed ZeRO-1/2 steps a client optimizer (torch's: the HF Trainer hands it its own when the config has no
   * optimizer block, transformers integrations/deepspeed.py deepspeed_optim_sched; or optimizer.params.torch_adam) on
   * one flat fp32 partition per parameter group (runtime/zero/stage_1_and_2.py @edaa7221: param_group['params'] =
   * [self.single_partition_of_fp32_groups[i]]): a foreach or for-loop Adam's temporary is the whole partition */
  int client = pl->optimizer_impl == LLMEM_OPT_IMPL_FOREACH || pl->optimizer_impl == LLMEM_OPT_IMPL_FOR_LOOP;
  if (c->deepspeed && c->z >= 1 && c->z <= 2 && client &&
      ((int)pl->in->optimizer == LLMEM_OPT_ADAM || (int)pl->in->optimizer == LLMEM_OPT_ADAMW))
    r->optimizer_step_temp = trainable_here * ob;
  if ((int)pl->in->optimizer == LLMEM_OPT_MUON) /* Newton-Schulz iterations on the largest matrix */
    r->optimizer_step_temp = max2(r->optimizer_step_temp, 3 * lp->largest_linear_count * 4);
  if (c->deepspeed && c->z >= 1 && c->z <= 2) {
    double gather = pl->in->allgather_bucket_size * c->wb;
    double full = (c->dense + c->expert) * c->wb;
    /* the updated partitions are all-gathered after the optimizer's step has returned and freed its temporaries
     * (stage_1_and_2.py step: _optimizer_step per group, then all_gather_dp_groups) */
    r->optimizer_step_temp = max2(r->optimizer_step_temp, gather < full ? gather : full);
  }
}

/* torch.distributed.pipelining's per-micro-batch buffers (pytorch
 * torch/distributed/pipelining/stage.py; torchtitan parallelisms/pipeline_llama.py
 * builds PipelineStage, ba2469780, 2024-12). _prepare_backward_infra creates,
 * for every micro-batch, a receive buffer shaped as the stage's output
 * (_create_grad_recv_info, _make_tensor_from_meta) for each stage but the
 * last; they live as long as the schedule. forward_one_chunk appends each
 * micro-batch's output to output_chunks, cleared only by the next step's
 * clear_runtime_states: every stage until pytorch #153383 (2025-05-13), the
 * last stage only after it. The last stage's output is the logits (in the
 * activation dtype, vocabulary-parallel under TP as loss.c counts them), which
 * the loss otherwise frees after its fp32 upcast; a middle stage's is the
 * hidden state (sequence-parallel under SP). The kept outputs are held as one
 * block for the step: at the end of the step every micro-batch's is live. On
 * the last stage the micro-batch under way's logits are the loss's own
 * (loss.c counts them): the block holds the other n - 1. */
static void pipeline_buffers(const plan *pl, const stage_layout *st, rank_states *r) {
  if (pl->pp_stage_buffers <= 0 || pl->in->pp <= 1 || (int)pl->in->head != LLMEM_HEAD_LM) return;
  double n = pl->grad_accum, T = pl->in->seq_len / pl->in->cp * pl->in->micro_batch, ab = pl->act_bytes;
  double hidden = T * pl->in->hidden * ab / (pl->sp ? pl->in->tp : 1);
  double logits = T * pl->vocab_padded / pl->in->tp * ab;
  double chunks = pl->in->vpp, middle = st->has_head ? chunks - 1 : chunks; /* virtual stages before the last */
  r->comm_persistent += middle * n * hidden;
  if (pl->pp_stage_buffers >= 2) r->pp_kept_act = middle * n * hidden;
  /* schedule.step(return_outputs=False) keeps none (pytorch #165822, 2025-10-20: forward_one_chunk's
   * save_forward_output) */
  if (st->has_head && pl->pp_returns_outputs) r->pp_kept_logits = (n - 1) * logits;
}

void states_for_stage(const plan *pl, const stage_layout *st, rank_states *rs) {
  rank_states r = {0};
  stage_counts c = counts_of(pl, st);
  double weights = 0, master = 0;
  weights_and_master(pl, st, &c, &weights, &master);
  double grads = gradients_bytes(pl, &c, &r);
  double opt = optimizer_states_bytes(pl, st, &c);
  offload(pl, &c, &r, &weights, &master, &grads, &opt);
  r.quant_stats_bytes = quant_stats_on_rank(pl, st);
  r.weights = weights + r.quant_stats_bytes;
  r.master = master;
  r.gradients = grads;
  r.optimizer = opt;
  gathers(pl, st, &c, &r);
  deepspeed_buckets(pl, &c, &r);
  step_temporaries(pl, st, &c, &r);
  pipeline_buffers(pl, st, &r);
  *rs = r;
}
