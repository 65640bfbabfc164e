// What the form adds to the core's field table: a label, a unit, a hint and
// where it sits. Keys, kinds, enum values, ranges and defaults come from the
// core (Core.fields), and when a field matters (dependent fields are hidden
// otherwise) from config/relevance.ts; none is repeated here.
import { LORA, matters, MLA_ON, MOE_ON, type Get } from './config/relevance.js';

export type { Get } from './config/relevance.js';

export interface FieldUi {
  label: string;
  /** Shown beside the input; every number has one. */
  unit?: string;
  /** What null ("automatic") means, shown as the placeholder of a nullable field. */
  auto?: string;
  hint?: string;
  /** Arrow keys double / halve instead of adding one (parallel degrees). */
  pow2?: boolean;
}

export const UI: Record<string, FieldUi> = {
  formula: { label: 'Formula', hint: 'others reproduce a published formula' },
  'model.name': { label: 'Name', unit: 'text' },
  'model.layers': { label: 'Layers', unit: 'layers' },
  'model.hidden': { label: 'Hidden size', unit: 'dim' },
  'model.heads': { label: 'Attention heads', unit: 'heads' },
  'model.kv_heads': { label: 'KV heads', unit: 'heads', auto: '= heads (MHA)', hint: '1 = MQA, < heads = GQA' },
  'model.head_dim': { label: 'Head dim', unit: 'dim', auto: 'hidden / heads' },
  'model.ffn_hidden': { label: 'FFN hidden size', unit: 'dim' },
  'model.mlp': { label: 'MLP', hint: 'gated = SwiGLU/GeGLU' },
  'model.vocab': { label: 'Vocabulary', unit: 'tokens' },
  'model.vocab_multiple': { label: 'Pad vocab to multiple of', unit: '× tp' },
  'model.tied_embeddings': { label: 'Tied input/output embeddings' },
  'model.head': { label: 'Output head' },
  'model.num_labels': { label: 'Classes', unit: 'labels' },
  'model.norm': { label: 'Norm' },
  'model.norms_per_layer': { label: 'Norms per layer', unit: 'norms' },
  'model.bias': { label: 'Biases on linears' },
  'model.qkv_bias': { label: 'QKV bias' },
  'model.qk_norm': { label: 'QK norm' },
  'model.attn_sinks': { label: 'Attention sinks' },
  'model.position': { label: 'Positions' },
  'model.max_positions': { label: 'Max positions', unit: 'tokens' },
  'model.type_vocab': { label: 'Token types', unit: 'types' },
  'model.embedding_norm': { label: 'Embedding norm' },
  'model.final_norm': { label: 'Final norm' },
  'model.lm_head_bias': { label: 'LM head bias' },
  'model.parallel_block': { label: 'Parallel attention + MLP', hint: 'GPT-J, Falcon, phi-2: one norm feeds both' },
  'model.mtp_layers': { label: 'MTP layers', unit: 'layers', hint: 'multi-token prediction' },

  'model.moe.experts': { label: 'Experts', unit: 'experts', hint: '0 = dense' },
  'model.moe.top_k': { label: 'Experts per token', unit: 'top-k' },
  'model.moe.expert_ffn_hidden': { label: 'Expert FFN size', unit: 'dim', auto: '= FFN hidden' },
  'model.moe.shared_experts': { label: 'Shared experts', unit: 'experts' },
  'model.moe.shared_expert_ffn_hidden': { label: 'Shared expert FFN', unit: 'dim', auto: '= expert FFN' },
  'model.moe.shared_expert_gate': { label: 'Shared expert gate' },
  'model.moe.router_bias': { label: 'Router bias' },
  'model.moe.dense_layers': { label: 'Leading dense layers', unit: 'layers' },
  'model.moe.layer_freq': { label: 'MoE every n-th layer', unit: 'layers' },
  'model.moe.capacity_factor': { label: 'Capacity factor', unit: '×', auto: 'dropless' },
  'model.moe.latent_size': { label: 'Latent size', unit: 'dim', auto: 'none' },
  'model.moe.load_imbalance': { label: 'Load imbalance', unit: '× mean' },

  'model.mla.kv_lora_rank': { label: 'KV LoRA rank', unit: 'rank', hint: '0 = standard attention' },
  'model.mla.q_lora_rank': { label: 'Q LoRA rank', unit: 'rank', auto: 'none (full Q)' },
  'model.mla.qk_nope_head_dim': { label: 'QK no-PE head dim', unit: 'dim' },
  'model.mla.qk_rope_head_dim': { label: 'QK RoPE head dim', unit: 'dim' },
  'model.mla.v_head_dim': { label: 'V head dim', unit: 'dim' },

  'training.micro_batch': { label: 'Micro-batch', unit: 'samples', pow2: true },
  'training.seq_len': { label: 'Sequence length', unit: 'tokens', pow2: true },
  'training.grad_accum': { label: 'Grad. accumulation', unit: 'micro-batches', auto: 'from global batch, else 1' },
  'training.global_batch': {
    label: 'Global batch',
    unit: 'samples',
    auto: 'micro-batch × accumulation × DP',
    hint: 'per optimizer step; sets the accumulation',
  },
  'training.dtype': { label: 'Compute dtype' },
  'training.fp8_linear': { label: 'FP8 linears' },
  'training.master_weights': { label: 'FP32 master weights' },
  'training.grad_dtype': { label: 'Gradient dtype' },
  'training.optimizer': { label: 'Optimizer' },
  'training.optimizer_dtype': { label: 'Optimizer state dtype' },
  'training.optimizer_impl': { label: 'Optimizer kernel', auto: 'from the training stack' },
  'training.optimizer_in_backward': { label: 'Optimizer step in backward' },
  'training.paged_optimizer': { label: 'Paged optimizer' },
  'training.recompute': { label: 'Recompute' },
  'training.recompute_modules': { label: 'Recompute modules' },
  'training.recompute_layers': { label: 'Recompute layers', unit: 'layers/stage', auto: 'all' },
  'training.dropout': { label: 'Dropout', unit: 'prob.' },
  'training.attention': { label: 'Attention kernel' },
  'training.loss': { label: 'Loss', auto: 'from the training stack' },
  'training.repeat_kv': {
    label: 'K/V repeated to all heads',
    auto: 'from the training stack',
    hint: 'GQA keys/values expanded before the attention kernel',
  },
  'training.loss_chunks': { label: 'Loss chunks', unit: 'chunks' },
  'training.activation_offload': { label: 'Offload activations to CPU' },
  'training.finetune.quant_keeps_input': {
    label: '4-bit linears keep their input',
    auto: 'from the training stack',
    hint: 'bitsandbytes ≤ 0.43.1 MatMul4Bit',
  },
  'training.finetune.method': { label: 'Fine-tuning', hint: 'lora / qlora: adapters on a frozen base' },
  'training.finetune.lora_rank': { label: 'LoRA rank', unit: 'rank', pow2: true },
  'training.finetune.lora_targets': { label: 'LoRA targets' },
  'training.finetune.lora_dropout': { label: 'LoRA dropout', unit: 'prob.' },
  'training.finetune.adapter_dtype': { label: 'Adapter dtype' },
  'training.finetune.base_dtype': { label: 'Frozen base dtype', auto: 'auto: compute dtype' },
  'training.finetune.quant': { label: 'Base quantisation' },
  'training.finetune.double_quant': { label: 'Double quantisation' },

  'parallel.gpus': { label: 'GPUs', unit: 'GPUs', pow2: true },
  'parallel.gpus_per_node': { label: 'GPUs per node', unit: 'GPUs', pow2: true },
  'parallel.tp': { label: 'Tensor parallel', unit: 'TP', pow2: true },
  'parallel.pp': { label: 'Pipeline parallel', unit: 'PP', pow2: true },
  'parallel.vpp': { label: 'Virtual stages', unit: 'VPP' },
  'parallel.cp': { label: 'Context parallel', unit: 'CP', pow2: true },
  'parallel.ep': { label: 'Expert parallel', unit: 'EP', pow2: true },
  'parallel.etp': { label: 'Expert tensor parallel', unit: 'ETP', pow2: true },
  'parallel.sequence_parallel': { label: 'Sequence parallel' },
  'parallel.pp_schedule': { label: 'Pipeline schedule' },
  'parallel.pp_first_stage_layers': { label: 'First stage layers', unit: 'layers', auto: 'even split' },
  'parallel.pp_last_stage_layers': { label: 'Last stage layers', unit: 'layers', auto: 'even split' },
  'parallel.engine': { label: 'Engine' },
  'parallel.zero_stage': { label: 'ZeRO stage', unit: 'stage' },
  'parallel.fsdp_strategy': { label: 'FSDP strategy' },
  'parallel.fsdp_shard_size': { label: 'Shard group', unit: 'GPUs', auto: 'GPUs per node' },
  'parallel.reshard_after_forward': { label: 'Reshard after forward' },
  'parallel.shard_root_modules': {
    label: 'Embedding and output as own FSDP units',
    auto: 'from the training stack',
    hint: 'torchtune custom_sharded_layers: gathered only around their forward and backward',
  },
  'parallel.distributed_optimizer': { label: 'Distributed optimizer' },
  'parallel.shard_with_cp': { label: 'Shard over DP × CP' },
  'parallel.offload_optimizer': { label: 'Offload optimizer' },
  'parallel.offload_params': { label: 'Offload parameters' },
  'parallel.fp8_all_gather': { label: 'FP8 all-gather' },
  'parallel.zero_init': { label: 'zero.Init' },
  'parallel.grad_as_bucket_view': { label: 'Gradients as bucket view' },
  'parallel.reduce_bucket_size': { label: 'Reduce bucket', unit: 'elements' },
  'parallel.allgather_bucket_size': { label: 'All-gather bucket', unit: 'elements' },
  'parallel.overlap_comm': { label: 'Overlap comm', auto: 'auto: on for ZeRO-3' },
  'parallel.stage3_prefetch_bucket_size': { label: 'Stage-3 prefetch bucket', unit: 'elements' },
  'parallel.stage3_max_live_parameters': { label: 'Stage-3 max live params', unit: 'params' },
  'parallel.stage3_param_persistence_threshold': { label: 'Stage-3 persistence threshold', unit: 'params' },

  'hardware.memory_gib': { label: 'GPU memory', unit: 'GiB' },
  'hardware.bf16_tflops': { label: 'BF16 dense compute', unit: 'TFLOPS' },
  'hardware.fp8_tflops': { label: 'FP8 dense compute', unit: 'TFLOPS', auto: '2 × BF16' },
  'hardware.intra_node_gb_per_s': { label: 'Intra-node bandwidth', unit: 'GB/s' },
  'hardware.inter_node_gb_per_s': { label: 'Inter-node bandwidth', unit: 'GB/s' },
  'runtime.compute_efficiency': {
    label: 'GEMM efficiency',
    unit: 'of peak',
    auto: 'measured per GPU',
    hint: 'large matmuls, step time only',
  },
  'runtime.cuda_context_mib': { label: 'CUDA context', unit: 'MiB', auto: 'auto' },
  'runtime.cublas_workspace_mib': { label: 'cuBLAS workspace', unit: 'MiB', auto: 'auto' },
  'runtime.nccl_buffer_mib': { label: 'NCCL buffers', unit: 'MiB', auto: 'auto' },
  'runtime.allocator_reserve': { label: 'Allocator reserve', unit: '× alloc.', auto: 'modelled' },
  'runtime.expandable_segments': { label: 'Expandable segments' },
  'runtime.max_split_size_mib': { label: 'Max split size', unit: 'MiB', auto: 'unset: any block splits' },
  'runtime.gc_threshold': { label: 'Allocator GC threshold', unit: '× memory' },
  'runtime.empty_cache_after_init': {
    label: 'Empty the cache after set-up',
    auto: 'from the training stack',
    hint: 'torch.cuda.empty_cache() before the first step',
  },
  'runtime.torch_compile': { label: 'torch.compile' },
  'parallel.reduce_input_on_compute_stream': {
    label: 'Reduce-scatter input on the compute stream',
    auto: 'from the training stack',
    hint: 'FSDP2 in PyTorch 2.5 on',
  },
  'runtime.framework': { label: 'Training stack', hint: 'sets the mechanisms listed below unless given' },
  'runtime.framework_version': {
    label: 'Stack version',
    unit: 'YYYY-MM or release',
    auto: 'current',
  },
};

export interface Group {
  /** A collapsible sub-section; opens by itself when `used` holds. */
  title?: string;
  used?: (get: Get) => boolean;
  /** A button that resets the group's keys to the core defaults (e.g. "dense model"). */
  clear?: string;
  /** Extra widget rendered first: the model preset picker or the GPU picker. */
  picker?: 'model' | 'gpu' | 'profile';
  paths: string[];
}

export interface Section {
  id: string;
  title: string;
  groups: Group[];
}

export const SECTIONS: Section[] = [
  {
    id: 'model',
    title: 'Model',
    groups: [
      {
        picker: 'model',
        paths: [
          'model.name',
          'model.layers',
          'model.hidden',
          'model.heads',
          'model.kv_heads',
          'model.head_dim',
          'model.ffn_hidden',
          'model.mlp',
          'model.vocab',
          'model.tied_embeddings',
          'model.head',
          'model.num_labels',
        ],
      },
      {
        title: 'Mixture of experts',
        used: MOE_ON,
        clear: 'Make dense',
        paths: [
          'model.moe.experts',
          'model.moe.top_k',
          'model.moe.expert_ffn_hidden',
          'model.moe.shared_experts',
          'model.moe.shared_expert_ffn_hidden',
          'model.moe.shared_expert_gate',
          'model.moe.router_bias',
          'model.moe.dense_layers',
          'model.moe.layer_freq',
          'model.moe.capacity_factor',
          'model.moe.latent_size',
          'model.moe.load_imbalance',
        ],
      },
      {
        title: 'Multi-latent attention',
        used: MLA_ON,
        clear: 'Standard attention',
        paths: [
          'model.mla.kv_lora_rank',
          'model.mla.q_lora_rank',
          'model.mla.qk_nope_head_dim',
          'model.mla.qk_rope_head_dim',
          'model.mla.v_head_dim',
        ],
      },
      {
        title: 'More architecture',
        paths: [
          'model.norm',
          'model.norms_per_layer',
          'model.final_norm',
          'model.qk_norm',
          'model.bias',
          'model.qkv_bias',
          'model.lm_head_bias',
          'model.attn_sinks',
          'model.position',
          'model.max_positions',
          'model.vocab_multiple',
          'model.type_vocab',
          'model.embedding_norm',
          'model.parallel_block',
          'model.mtp_layers',
        ],
      },
    ],
  },
  {
    id: 'training',
    title: 'Training',
    groups: [
      {
        picker: 'profile',
        paths: ['runtime.framework', 'runtime.framework_version'],
      },
      {
        paths: [
          'training.micro_batch',
          'training.seq_len',
          'training.grad_accum',
          'training.global_batch',
          'training.dtype',
          'training.master_weights',
          'training.grad_dtype',
          'training.optimizer',
          'training.optimizer_dtype',
          'training.recompute',
          'training.recompute_modules',
          'training.recompute_layers',
          'training.attention',
          'training.loss',
          'training.loss_chunks',
          'training.finetune.method',
        ],
      },
      {
        title: 'LoRA / QLoRA adapters',
        used: LORA,
        paths: [
          'training.finetune.lora_rank',
          'training.finetune.lora_targets',
          'training.finetune.lora_dropout',
          'training.finetune.adapter_dtype',
          'training.finetune.base_dtype',
          'training.finetune.quant',
          'training.finetune.double_quant',
          'training.finetune.quant_keeps_input',
        ],
      },
      {
        title: 'More training',
        paths: [
          'training.fp8_linear',
          'training.optimizer_impl',
          'training.optimizer_in_backward',
          'training.paged_optimizer',
          'training.dropout',
          'training.activation_offload',
          'training.repeat_kv',
        ],
      },
    ],
  },
  {
    id: 'parallel',
    title: 'Parallelism',
    groups: [
      {
        paths: [
          'parallel.gpus',
          'parallel.gpus_per_node',
          'parallel.tp',
          'parallel.sequence_parallel',
          'parallel.pp',
          'parallel.pp_schedule',
          'parallel.vpp',
          'parallel.pp_first_stage_layers',
          'parallel.pp_last_stage_layers',
          'parallel.cp',
          'parallel.shard_with_cp',
          'parallel.ep',
          'parallel.etp',
        ],
      },
      {
        paths: [
          'parallel.engine',
          'parallel.zero_stage',
          'parallel.fsdp_strategy',
          'parallel.fsdp_shard_size',
          'parallel.reshard_after_forward',
          'parallel.reduce_input_on_compute_stream',
          'parallel.shard_root_modules',
          'parallel.distributed_optimizer',
          'parallel.offload_optimizer',
          'parallel.offload_params',
          'parallel.fp8_all_gather',
          'parallel.zero_init',
          'parallel.grad_as_bucket_view',
        ],
      },
      {
        title: 'DeepSpeed buckets',
        used: () => false,
        paths: [
          'parallel.overlap_comm',
          'parallel.reduce_bucket_size',
          'parallel.allgather_bucket_size',
          'parallel.stage3_prefetch_bucket_size',
          'parallel.stage3_max_live_parameters',
          'parallel.stage3_param_persistence_threshold',
        ],
      },
    ],
  },
  {
    id: 'hardware',
    title: 'Hardware',
    groups: [
      { picker: 'gpu', paths: ['hardware.memory_gib'] },
      {
        title: 'Speed (for step time)',
        paths: [
          'hardware.bf16_tflops',
          'hardware.fp8_tflops',
          'hardware.intra_node_gb_per_s',
          'hardware.inter_node_gb_per_s',
          'runtime.compute_efficiency',
        ],
      },
      {
        title: 'Runtime and formula',
        paths: [
          'runtime.cuda_context_mib',
          'runtime.cublas_workspace_mib',
          'runtime.nccl_buffer_mib',
          'runtime.allocator_reserve',
          'runtime.expandable_segments',
          'runtime.max_split_size_mib',
          'runtime.gc_threshold',
          'runtime.empty_cache_after_init',
          'runtime.torch_compile',
          'formula',
        ],
      },
    ],
  },
];

/** Every path placed in a section, in order. */
export const PLACED: string[] = SECTIONS.flatMap((s) => s.groups.flatMap((g) => g.paths));

/** A label for a key the table does not know yet (a key the core added later). */
export function labelOf(path: string): string {
  return UI[path]?.label ?? path.split('.').pop()!.replace(/_/g, ' ');
}

/** Whether a field is shown: only when it matters for the current values (config/relevance.ts). */
export function visible(path: string, get: Get): boolean {
  return matters(path, get);
}
