// What the form adds to the core's field table: a label, a unit, a hint and
// where it sits. Keys, kinds, enum values, ranges and defaults come from the
// core (Core.fields), and when a field matters (dependent fields are hidden
// otherwise) from config/relevance.ts; none is repeated here.
import {
  LAYERS_ON,
  LINEAR_ON,
  LORA,
  matters,
  MLA_ON,
  MOE_ON,
  RL_ON,
  SSM_ON,
  VISION_ON,
  type Get,
} from './config/relevance.js';

import { signal } from '@preact/signals';
import type { FieldPath } from '../wasm/generated.js';

export type { Get } from './config/relevance.js';

export interface FieldUi {
  label: string;
  /** Shown beside the input; every number has one. */
  unit?: string;
  /** What null ("automatic") means, shown as the placeholder of a nullable field. */
  auto?: string;
  /** Arrow keys double / halve instead of adding one (parallel degrees). */
  pow2?: boolean;
  /** What each enum or set value is called in the form (the value itself stays in links and exports). */
  options?: Record<string, string>;
}

const DTYPES = { fp32: 'FP32', fp16: 'FP16', bf16: 'BF16', fp8: 'FP8' };
const OFFLOAD = { none: 'None', cpu: 'CPU RAM', nvme: 'NVMe' };

/** By key path: a misspelt or removed key does not compile. */
export const UI: Partial<Record<FieldPath, FieldUi>> = {
  formula: {
    label: 'Formula',
    options: {
      llmem: 'llmem (simulated step)',
      megatron: 'Megatron-LM',
      megatron_bridge: 'Megatron-Bridge',
      deepspeed: 'DeepSpeed ZeRO estimator',
      deepspeed_legacy: 'DeepSpeed estimator (older)',
      zero_paper: 'ZeRO paper, Table 1',
      korthikanti: 'Korthikanti et al., Table 2',
    },
  },
  'model.name': { label: 'Name', unit: 'text' },
  'model.layers': { label: 'Layers', unit: 'layers' },
  'model.hidden': { label: 'Hidden size', unit: 'dim' },
  'model.heads': { label: 'Attention heads', unit: 'heads' },
  'model.kv_heads': { label: 'KV heads', unit: 'heads', auto: '= heads (MHA)' },
  'model.head_dim': {
    label: 'Head dim',
    unit: 'dim',
    auto: 'hidden / heads',
  },
  'model.ffn_hidden': { label: 'FFN hidden size', unit: 'dim' },
  'model.mlp': {
    label: 'MLP',
    options: { gated: 'Gated (SwiGLU)', plain: 'Plain (GELU)' },
  },
  'model.vocab': { label: 'Vocabulary', unit: 'tokens' },
  'model.vocab_multiple': {
    label: 'Pad vocab to multiple of',
    unit: '× tp',
  },
  'model.tied_embeddings': {
    label: 'Tied input/output embeddings',
  },
  'model.head': {
    label: 'Output head',
    options: { lm: 'Language model', classification: 'Classifier', none: 'None' },
  },
  'model.num_labels': { label: 'Classes', unit: 'labels' },
  'model.norm': {
    label: 'Norm',
    options: { rmsnorm: 'RMSNorm', layernorm: 'LayerNorm' },
  },
  'model.norms_per_layer': { label: 'Norms per layer', unit: 'norms' },
  'model.bias': { label: 'Biases on linears' },
  'model.qkv_bias': { label: 'QKV bias' },
  'model.qk_norm': {
    label: 'QK norm',
    options: { none: 'None', head: 'Per head', full: 'All channels' },
  },
  'model.attn_sinks': { label: 'Attention sinks' },
  'model.position': {
    label: 'Positions',
    options: { rope: 'Rotary (RoPE)', learned: 'Learned table' },
  },
  'model.max_positions': { label: 'Max positions', unit: 'tokens' },
  'model.type_vocab': { label: 'Token types', unit: 'types' },
  'model.embedding_norm': { label: 'Embedding norm' },
  'model.final_norm': { label: 'Final norm' },
  'model.o_bias': { label: 'Attention output bias', auto: 'as Biases on linears' },
  'model.mlp_bias': { label: 'MLP biases', auto: 'as Biases on linears' },
  'model.lm_head_bias': { label: 'LM head bias' },
  'model.parallel_block': { label: 'Parallel attention + MLP' },
  'model.mtp_layers': { label: 'MTP layers', unit: 'layers' },
  'model.attn_logit_softcap': {
    label: 'Attention soft-cap',
    unit: 'logit',
    auto: 'none',
  },
  'model.final_logit_softcap': {
    label: 'Logit soft-cap',
    unit: 'logit',
    auto: 'none',
  },

  'model.layer_types': {
    label: 'Layer mixers',
    auto: 'every layer full attention',
    options: {
      full: 'Full attention',
      sliding: 'Sliding-window attention',
      chunked: 'Chunked attention',
      linear: 'Linear attention (Gated DeltaNet)',
      ssm: 'Mamba-2',
      none: 'None (MLP-only layer)',
      encoder: 'Encoder layer (set by Encoder layers)',
    },
  },
  'model.encoder_layers': {
    label: 'Encoder layers',
    unit: 'layers',
  },
  'model.relative_attention_buckets': {
    label: 'Relative position buckets',
    unit: 'buckets',
  },
  'model.mlp_types': {
    label: 'Layer MLPs',
    auto: 'by the MoE rule',
    options: { dense: 'Dense MLP', moe: 'MoE', none: 'None (mixer-only layer)' },
  },
  'model.sliding_window': {
    label: 'Sliding window',
    unit: 'tokens',
    auto: 'none',
  },
  'model.attention_chunk': {
    label: 'Attention chunk',
    unit: 'tokens',
    auto: 'none',
  },
  'model.attn_output_gate': { label: 'Attention output gate' },
  'model.linear.key_heads': { label: 'Key heads', unit: 'heads' },
  'model.linear.value_heads': { label: 'Value heads', unit: 'heads' },
  'model.linear.key_head_dim': { label: 'Key head dim', unit: 'dim' },
  'model.linear.value_head_dim': { label: 'Value head dim', unit: 'dim' },
  'model.linear.conv_kernel': { label: 'Conv kernel', unit: 'taps' },
  'model.ssm.heads': { label: 'Mamba heads', unit: 'heads' },
  'model.ssm.head_dim': { label: 'Mamba head dim', unit: 'dim' },
  'model.ssm.groups': { label: 'Groups', unit: 'groups' },
  'model.ssm.state_size': { label: 'State size', unit: 'dim' },
  'model.ssm.conv_kernel': { label: 'Conv kernel', unit: 'taps' },
  'model.ssm.chunk_size': { label: 'Scan chunk', unit: 'tokens' },
  'model.ssm.bias': { label: 'Projection biases' },
  'model.ssm.conv_bias': { label: 'Conv bias' },

  'model.vision.kind': {
    label: 'Vision tower',
    options: {
      siglip: 'SigLIP (Gemma 3)',
      clip: 'CLIP (LLaVA)',
      qwen2_5_vl: 'Qwen2.5-VL',
      llama4: 'Llama 4',
      pixtral: 'Pixtral (Mistral 3)',
      internvit: 'InternViT (InternVL)',
      qwen3_vl: 'Qwen3-VL / Qwen3.5',
      qwen2_vl: 'Qwen2-VL',
      idefics3: 'Idefics3 / SmolVLM',
      paligemma: 'PaliGemma (SigLIP)',
      llava_onevision: 'LLaVA-OneVision (SigLIP)',
    },
  },
  'model.vision.positions': {
    label: 'Position table',
    unit: 'rows',
    auto: 'one per patch',
  },
  'model.vision.deepstack': {
    label: 'Deepstack mergers',
    unit: 'mergers',
  },
  'model.vision.layers': { label: 'Vision layers', unit: 'layers' },
  'model.vision.hidden': { label: 'Vision hidden size', unit: 'dim' },
  'model.vision.heads': { label: 'Vision heads', unit: 'heads' },
  'model.vision.ffn_hidden': { label: 'Vision FFN size', unit: 'dim' },
  'model.vision.patch_size': { label: 'Patch size', unit: 'px' },
  'model.vision.image_size': { label: 'Image size', unit: 'px' },
  'model.vision.merge': {
    label: 'Patch merge',
    unit: '× per side',
    auto: "the tower's",
  },
  'model.vision.projector_hidden': {
    label: 'Projector width',
    unit: 'dim',
    auto: '4096',
  },
  'model.vision.images_per_sample': {
    label: 'Images per sample',
    unit: 'images',
  },
  'model.vision.train': {
    label: 'Vision training',
    options: { full: 'Tower and projector', projector: 'Projector only', none: 'Frozen' },
  },

  'model.moe.experts': { label: 'Experts', unit: 'experts' },
  'model.moe.top_k': { label: 'Experts per token', unit: 'top-k' },
  'model.moe.expert_ffn_hidden': {
    label: 'Expert FFN size',
    unit: 'dim',
    auto: '= FFN hidden',
  },
  'model.moe.shared_experts': { label: 'Shared experts', unit: 'experts' },
  'model.moe.shared_expert_ffn_hidden': {
    label: 'Shared expert FFN',
    unit: 'dim',
    auto: '= expert FFN',
  },
  'model.moe.shared_expert_gate': { label: 'Shared expert gate' },
  'model.moe.router_bias': { label: 'Router bias' },
  'model.moe.score_before_experts': {
    label: 'Scores before experts',
  },
  'model.moe.dense_layers': { label: 'Leading dense layers', unit: 'layers' },
  'model.moe.layer_freq': { label: 'MoE every n-th layer', unit: 'layers' },
  'model.moe.capacity_factor': {
    label: 'Capacity factor',
    unit: '×',
    auto: 'dropless',
  },
  'model.moe.latent_size': { label: 'Latent size', unit: 'dim', auto: 'none' },
  'model.moe.load_imbalance': { label: 'Load imbalance', unit: '× mean' },

  'model.mla.kv_lora_rank': { label: 'KV LoRA rank', unit: 'rank' },
  'model.mla.q_lora_rank': {
    label: 'Q LoRA rank',
    unit: 'rank',
    auto: 'none (full Q)',
  },
  'model.mla.qk_nope_head_dim': { label: 'QK no-PE head dim', unit: 'dim' },
  'model.mla.qk_rope_head_dim': { label: 'QK RoPE head dim', unit: 'dim' },
  'model.mla.v_head_dim': { label: 'V head dim', unit: 'dim' },

  'training.micro_batch': { label: 'Micro-batch', unit: 'samples', pow2: true },
  'training.seq_len': { label: 'Sequence length', unit: 'tokens', pow2: true },
  'training.source_len': {
    label: 'Source length',
    unit: 'tokens',
    auto: '= sequence length',
    pow2: true,
  },
  'training.grad_accum': {
    label: 'Grad. accumulation',
    unit: 'micro-batches',
    auto: 'auto',
  },
  'training.global_batch': {
    label: 'Global batch',
    unit: 'samples',
    auto: 'auto',
  },
  'training.dtype': { label: 'Compute dtype', options: DTYPES },
  'training.fp8_linear': { label: 'FP8 linears' },
  'training.master_weights': { label: 'FP32 master weights' },
  'training.fp8_recipe': {
    label: 'FP8 recipe',
    auto: '1-byte approximation',
    options: {
      delayed: 'Delayed scaling (per tensor)',
      current: 'Current scaling (per tensor)',
      blockwise: 'Blockwise (DeepSeek 128×128)',
      mxfp8: 'MXFP8 (Blackwell)',
      nvfp4: 'NVFP4 (Blackwell)',
    },
  },
  'training.master_dtype': {
    label: 'Master weight dtype',
    auto: 'FP32',
    options: DTYPES,
  },
  'parallel.accumulate_no_sync': {
    label: 'Accumulate under no_sync',
    auto: 'from the training stack',
  },
  'training.autocast': {
    label: 'Autocast over FP32 weights',
    auto: 'by engine and training stack',
  },
  'training.grad_dtype': { label: 'Gradient dtype', options: DTYPES },
  'training.optimizer': {
    label: 'Optimizer',
    options: {
      adamw: 'AdamW',
      adam: 'Adam',
      sgd: 'SGD',
      sgd_momentum: 'SGD with momentum',
      adafactor: 'Adafactor',
      lion: 'Lion',
      adamw_8bit: 'AdamW 8-bit',
      muon: 'Muon',
    },
  },
  'training.optimizer_dtype': {
    label: 'Optimizer state dtype',
    options: DTYPES,
  },
  'training.optimizer_impl': {
    label: 'Optimizer kernel',
    auto: 'from the training stack',
    options: { foreach: 'foreach (multi-tensor)', fused: 'Fused', for_loop: 'For-loop' },
  },
  'training.optimizer_in_backward': { label: 'Optimizer step in backward' },
  'training.paged_optimizer': { label: 'Paged optimizer' },
  'training.recompute': {
    label: 'Recompute',
    options: {
      none: 'None',
      selective: 'Selective, by module (Megatron)',
      per_op: 'Selective, per op (torchtitan)',
      full: 'Full layers',
    },
  },
  'training.recompute_modules': {
    label: 'Recompute modules',
    options: {
      core_attn: 'Core attention',
      mlp: 'MLP',
      layernorm: 'Norms',
      moe: 'MoE layer',
      moe_act: 'MoE activation',
      mla_up_proj: 'MLA up-projection',
    },
  },
  'training.recompute_layers': {
    label: 'Recompute layers',
    unit: 'layers/stage',
    auto: 'all',
  },
  'training.dropout': { label: 'Dropout', unit: 'prob.' },
  'training.attention': {
    label: 'Attention kernel',
    options: { flash: 'FlashAttention', sdpa_math: 'SDPA math', eager: 'Eager' },
  },
  'training.loss': {
    label: 'Loss',
    auto: 'from the training stack',
    options: {
      standard: 'Standard (fp32 logits)',
      chunked: 'Chunked (torchtune)',
      fused: 'Fused linear CE (Liger)',
      compiled: 'Compiled CE (torch.compile)',
      hf_upcast: 'fp32 logits kept (transformers < 4.45)',
      loss_parallel: 'Loss parallel (torchtitan)',
      flash_ce: 'flash-attn CE, in-place backward (verl)',
      cce: 'Cut Cross-Entropy (Apple; axolotl plugin)',
      selective_logps: 'Row-wise log-softmax (TRL RL trainers)',
      bf16_ce: '16-bit CE (ms-swift SP)',
      chunked_inplace: 'Chunked CE in place (ms-swift SP)',
    },
  },
  'training.repeat_kv': {
    label: 'K/V repeated to all heads',
    auto: 'from the training stack',
  },
  'training.v_view_keeps_qkv': {
    label: 'v keeps the fused qkv',
    auto: 'from the training stack',
  },
  'training.sac_saves_all_to_all': {
    label: 'Per-op SAC keeps the EP all-to-alls',
    auto: 'from the training stack',
  },
  'training.norm_upcast': {
    label: 'RMSNorm in fp32',
    auto: 'from the training stack',
  },
  'training.mean_keeps_input': {
    label: 'Norm keeps its square',
    auto: 'from the training stack',
  },
  'training.zero_grad_in_place': {
    label: 'Gradients zeroed, not freed',
    auto: 'from the training stack',
  },
  'training.loss_chunks': { label: 'Loss chunks', unit: 'chunks' },
  'training.logits_fp32_kept': {
    label: 'fp32 logits kept',
    auto: 'from the training stack',
  },
  'training.activation_offload': { label: 'Offload activations to CPU' },
  'training.finetune.quant_keeps_input': {
    label: '4-bit linears keep their input',
    auto: 'from the training stack',
  },
  'training.finetune.quant_head': {
    label: 'Output projection in 4 bits',
    auto: 'from the training stack',
  },
  'training.finetune.quant_from_fp16': {
    label: '4-bit state from fp16',
    auto: 'from the training stack',
  },
  'training.finetune.quant_inputs_held': {
    label: '4-bit inputs held to the next forward',
    auto: 'from the training stack',
  },
  'training.finetune.quant_dequant_temp': {
    label: '4-bit weights dequantised per matmul',
    auto: 'from the training stack',
  },
  'training.finetune.quant_experts': {
    label: 'MoE experts quantized too',
    auto: 'from the training stack',
  },
  'training.finetune.lora_fused_qkv': {
    label: 'One LoRA dropout for q/k/v',
    auto: 'from the training stack',
  },
  'training.finetune.method': {
    label: 'Fine-tuning',
    options: { full: 'Full', lora: 'LoRA', qlora: 'QLoRA' },
  },
  'training.finetune.lora_rank': { label: 'LoRA rank', unit: 'rank', pow2: true },
  'training.finetune.lora_targets': {
    label: 'LoRA targets',
    options: { q: 'Query', k: 'Key', v: 'Value', o: 'Output', gate: 'Gate', up: 'Up', down: 'Down' },
  },
  'training.finetune.lora_dropout': { label: 'LoRA dropout', unit: 'prob.' },
  'training.finetune.full_modules': {
    label: 'Trained in full',
    options: { embedding: 'Embedding', head: 'Output head' },
  },
  'training.finetune.adapter_dtype': { label: 'Adapter dtype', options: DTYPES },
  'training.finetune.base_dtype': {
    label: 'Frozen base dtype',
    auto: 'auto: compute dtype',
    options: DTYPES,
  },
  'training.finetune.quant': {
    label: 'Base quantisation',
    options: { nf4: 'NF4', fp4: 'FP4', int8: 'INT8 (LLM.int8)' },
  },
  'training.finetune.double_quant': { label: 'Double quantisation' },

  'parallel.gpus': { label: 'GPUs', unit: 'GPUs', pow2: true },
  'parallel.gpus_per_node': { label: 'GPUs per node', unit: 'GPUs', pow2: true },
  'parallel.tp': { label: 'Tensor parallel', unit: 'TP', pow2: true },
  'parallel.pp': { label: 'Pipeline parallel', unit: 'PP', pow2: true },
  'parallel.vpp': { label: 'Virtual stages', unit: 'VPP' },
  'parallel.tp_comm_overlap': {
    label: 'TP comm overlap',
  },
  'parallel.vpp_group': {
    label: 'Micro-batch group',
    unit: 'micro-batches',
    auto: '= PP',
  },
  'parallel.cp': { label: 'Context parallel', unit: 'CP', pow2: true },
  'parallel.cp_all_to_all': { label: 'CP all-to-all (Ulysses)', unit: 'ranks', pow2: true },
  'parallel.ep': { label: 'Expert parallel', unit: 'EP', pow2: true },
  'parallel.etp': {
    label: 'Expert tensor parallel',
    unit: 'ETP',
    pow2: true,
  },
  'parallel.sequence_parallel': { label: 'Sequence parallel' },
  'parallel.pp_schedule': {
    label: 'Pipeline schedule',
    options: {
      gpipe: 'GPipe',
      '1f1b': '1F1B',
      interleaved: 'Interleaved 1F1B',
      zero_bubble: 'Zero bubble',
      zb_v: 'ZB-V (V-shape)',
      dualpipe_v: 'DualPipeV (V-shape)',
      dualpipe: 'DualPipe (two directions)',
    },
  },
  'parallel.pp_first_stage_layers': {
    label: 'First stage layers',
    unit: 'layers',
    auto: 'even split',
  },
  'parallel.pp_last_stage_layers': {
    label: 'Last stage layers',
    unit: 'layers',
    auto: 'even split',
  },
  'parallel.engine': {
    label: 'Engine',
    options: {
      single: 'Single device',
      ddp: 'PyTorch DDP',
      deepspeed: 'DeepSpeed',
      fsdp1: 'PyTorch FSDP1',
      fsdp2: 'PyTorch FSDP2',
      megatron: 'Megatron-LM',
      megatron_deepspeed: 'Megatron-DeepSpeed',
    },
  },
  'parallel.zero_stage': { label: 'ZeRO stage', unit: 'stage' },
  'parallel.fsdp_strategy': {
    label: 'FSDP strategy',
    options: {
      full_shard: 'Full shard',
      shard_grad_op: 'Shard grads and optimizer',
      hybrid_shard: 'Hybrid shard',
      no_shard: 'No shard (DDP)',
    },
  },
  'parallel.fsdp_shard_size': {
    label: 'Shard group',
    unit: 'GPUs',
    auto: 'GPUs per node',
  },
  'parallel.reshard_after_forward': { label: 'Reshard after forward' },
  'parallel.shard_root_modules': {
    label: 'Embedding and output as own FSDP units',
    auto: 'from the training stack',
  },
  'parallel.distributed_optimizer': { label: 'Distributed optimizer' },
  'parallel.shard_with_cp': { label: 'Shard over DP × CP' },
  'parallel.offload_optimizer': {
    label: 'Offload optimizer',
    options: OFFLOAD,
  },
  'parallel.offload_params': { label: 'Offload parameters', options: OFFLOAD },
  'parallel.fp8_all_gather': { label: 'FP8 all-gather' },
  'parallel.zero_init': { label: 'zero.Init' },
  'parallel.grad_as_bucket_view': { label: 'Gradients as bucket view' },
  'parallel.ddp_find_unused_parameters': { label: 'DDP find_unused_parameters', auto: 'from the training stack' },
  'parallel.ddp_bucket_cap_mib': { label: 'DDP bucket cap', unit: 'MiB', auto: '25 (first 1)' },
  'parallel.reduce_bucket_size': { label: 'Reduce bucket', unit: 'elements' },
  'parallel.allgather_bucket_size': {
    label: 'All-gather bucket',
    unit: 'elements',
  },
  'parallel.overlap_comm': {
    label: 'Overlap comm',
    auto: 'auto: on for ZeRO-3',
  },
  'parallel.stage3_prefetch_bucket_size': {
    label: 'Stage-3 prefetch bucket',
    unit: 'elements',
  },
  'parallel.stage3_max_live_parameters': {
    label: 'Stage-3 max live params',
    unit: 'params',
  },
  'parallel.stage3_param_persistence_threshold': {
    label: 'Stage-3 persistence threshold',
    unit: 'params',
  },

  'hardware.memory_gib': { label: 'GPU memory', unit: 'GiB' },
  'hardware.bf16_tflops': { label: 'BF16 dense compute', unit: 'TFLOPS' },
  'hardware.fp8_tflops': {
    label: 'FP8 dense compute',
    unit: 'TFLOPS',
    auto: '2 × BF16',
  },
  'hardware.hbm_tb_per_s': {
    label: 'Memory bandwidth',
    unit: 'TB/s',
    auto: 'by GPU generation',
  },
  'hardware.intra_node_gb_per_s': {
    label: 'Intra-node bandwidth',
    unit: 'GB/s',
  },
  'hardware.inter_node_gb_per_s': {
    label: 'Inter-node bandwidth',
    unit: 'GB/s',
  },
  'runtime.compute_efficiency': {
    label: 'GEMM efficiency',
    unit: 'of peak',
    auto: 'measured',
  },
  'runtime.cuda_context_mib': {
    label: 'CUDA context',
    unit: 'MiB',
    auto: 'auto',
  },
  'runtime.cublas_workspace_mib': {
    label: 'cuBLAS workspaces',
    unit: 'MiB',
    auto: 'auto',
  },
  'runtime.nccl_buffer_mib': { label: 'NCCL buffers', unit: 'MiB', auto: 'auto' },
  'runtime.allocator_reserve': {
    label: 'Allocator reserve',
    unit: '× alloc.',
    auto: 'modelled',
  },
  'runtime.expandable_segments': { label: 'Expandable segments' },
  'runtime.max_split_size_mib': {
    label: 'Max split size',
    unit: 'MiB',
    auto: 'unset: any block splits',
  },
  'runtime.gc_threshold': { label: 'Allocator GC threshold', unit: '× memory' },
  'runtime.empty_cache_after_init': {
    label: 'Empty the cache after set-up',
    auto: 'from the training stack',
  },
  'runtime.torch_compile': { label: 'torch.compile' },
  'parallel.reduce_input_on_compute_stream': {
    label: 'Reduce-scatter input on the compute stream',
    auto: 'from the training stack',
  },
  'parallel.pp_stage_buffers': {
    label: 'Pipeline stage buffers per micro-batch',
    unit: 'level',
    auto: 'from the training stack',
  },
  'parallel.pp_split': {
    label: 'Layers over the pipeline',
    options: { even: 'Evenly', weighted: 'Weighted (torchtitan)' },
    auto: 'from the training stack',
  },
  'parallel.pp_returns_outputs': {
    label: "Pipeline step keeps the last stage's outputs",
    auto: 'from the training stack',
  },
  'runtime.framework': {
    label: 'Training stack',
    options: {
      generic: 'Generic PyTorch',
      torchtitan: 'torchtitan',
      torchtune: 'torchtune',
      hf_trainer: 'HF Trainer',
      accelerate: 'Accelerate',
      litgpt: 'LitGPT',
      megatron: 'Megatron-LM',
      deepspeed: 'DeepSpeed',
      axolotl: 'Axolotl',
      llamafactory: 'LLaMA-Factory',
      nemo: 'NeMo',
      verl: 'verl',
    },
  },
  'rl.algorithm': {
    label: 'RL algorithm',
    options: {
      none: 'None (plain training)',
      grpo: 'GRPO',
      ppo: 'PPO (with a critic)',
      dpo: 'DPO (offline pairs)',
      rloo: 'RLOO',
      reinforce_pp: 'REINFORCE++',
    },
  },
  'rl.group_size': { label: 'Responses per prompt', unit: 'responses' },
  'rl.prompt_len': { label: 'Max prompt length', unit: 'tokens' },
  'rl.response_len': {
    label: 'Max response length',
    unit: 'tokens',
  },
  'rl.prompt_len_mean': {
    label: 'Typical prompt length',
    unit: 'tokens',
    auto: '= max',
  },
  'rl.response_len_mean': {
    label: 'Typical response length',
    unit: 'tokens',
    auto: '= max',
  },
  'rl.remove_padding': {
    label: 'Remove padding',
  },
  'rl.rollout_batch': { label: 'Prompts per step', unit: 'prompts' },
  'rl.mini_batch': {
    label: 'Prompts per optimizer step',
    unit: 'prompts',
    auto: '= prompts per step',
  },
  'rl.logprob_micro_batch': {
    label: 'Log-prob micro-batch',
    unit: 'sequences',
    auto: '= micro-batch',
  },
  'rl.max_tokens_per_gpu': {
    label: 'Tokens per micro-batch',
    unit: 'tokens',
    auto: 'no dynamic batching',
  },
  'rl.logprob_max_tokens_per_gpu': {
    label: 'Log-prob tokens per micro-batch',
    unit: 'tokens',
    auto: '= tokens per micro-batch',
  },
  'rl.logits_response_only': {
    label: 'Logits of the response only',
  },
  'rl.entropy': { label: 'Entropy over the vocabulary' },
  'rl.entropy_kernel': {
    label: 'Entropy kernel',
    auto: 'from the training stack',
    options: {
      eager: 'Eager (softmax kept)',
      compiled: 'Compiled (verl, fused)',
      chunked: 'Chunked, no gradient (TRL)',
    },
  },
  'rl.actor.param_offload': {
    label: 'Actor parameters offloaded between phases',
  },
  'rl.actor.optimizer_offload': {
    label: 'Actor optimizer offloaded between phases',
  },
  'rl.reference.enabled': { label: 'Reference model' },
  'rl.reference.param_offload': {
    label: 'Reference offloaded between phases',
  },
  'rl.reference.precomputed': {
    label: 'Reference log-probs precomputed',
  },
  'rl.reference.swapped': {
    label: 'Reference swapped into the actor',
  },
  'rl.reward.enabled': { label: 'Reward model' },
  'rl.reward.layers': {
    label: 'Reward model layers',
    unit: 'layers',
    auto: "= the actor's",
  },
  'rl.reward.hidden': { label: 'Reward model hidden size', unit: 'dim', auto: "= the actor's" },
  'rl.reward.heads': { label: 'Reward model heads', unit: 'heads', auto: "= the actor's" },
  'rl.reward.kv_heads': { label: 'Reward model KV heads', unit: 'heads', auto: '= heads' },
  'rl.reward.ffn_hidden': { label: 'Reward model FFN size', unit: 'dim', auto: "= the actor's" },
  'rl.reward.param_offload': {
    label: 'Reward model offloaded between phases',
  },
  'rl.critic.layers': { label: 'Critic layers', unit: 'layers', auto: "= the actor's" },
  'rl.critic.hidden': { label: 'Critic hidden size', unit: 'dim', auto: "= the actor's" },
  'rl.critic.heads': { label: 'Critic heads', unit: 'heads', auto: "= the actor's" },
  'rl.critic.kv_heads': { label: 'Critic KV heads', unit: 'heads', auto: '= heads' },
  'rl.critic.ffn_hidden': { label: 'Critic FFN size', unit: 'dim', auto: "= the actor's" },
  'rl.critic.param_offload': { label: 'Critic parameters offloaded between phases' },
  'rl.critic.optimizer_offload': {
    label: 'Critic optimizer offloaded between phases',
  },
  'rl.critic.max_tokens_per_gpu': {
    label: 'Critic tokens per micro-batch',
    unit: 'tokens',
    auto: '= tokens per micro-batch',
  },
  'rl.rollout.engine': {
    label: 'Rollout engine',
    options: { vllm: 'vLLM', sglang: 'SGLang' },
  },
  'rl.rollout.placement': {
    label: 'Engine placement',
    options: { colocated: 'Colocated', separate: 'Own GPUs (server)' },
  },
  'rl.rollout.tp': {
    label: 'Engine tensor parallel',
    unit: 'GPUs',
    pow2: true,
  },
  'rl.rollout.gpu_memory_utilization': {
    label: 'Engine memory share',
    unit: '× GPU memory',
  },
  'rl.rollout.max_num_seqs': { label: 'Engine max sequences', unit: 'sequences' },
  'rl.rollout.max_num_batched_tokens': {
    label: 'Engine batched tokens',
    unit: 'tokens',
  },
  'rl.rollout.max_model_len': {
    label: 'Engine max model length',
    unit: 'tokens',
    auto: 'prompt + response',
  },
  'rl.rollout.dtype': { label: 'Engine weights dtype', options: DTYPES },
  'rl.rollout.kv_cache_dtype': {
    label: 'KV cache dtype',
    options: DTYPES,
  },
  'rl.rollout.block_size': { label: 'KV block size', unit: 'tokens' },
  'rl.rollout.cuda_graphs': { label: 'CUDA graphs' },
  'rl.rollout.sleep': {
    label: 'Engine sleep',
    options: {
      none: 'None (stays awake)',
      level1: 'Level 1 (weights to CPU, KV freed)',
      level2: 'Level 2 (weights and KV freed)',
      free_cache: 'Free the KV cache only',
    },
  },
  'rl.rollout.own_process': { label: 'Engine in its own process' },
  'rl.weight_sync': {
    label: 'Weight sync',
    options: { bucketed: 'Per bucket', full: 'Whole model gathered' },
  },
  'rl.weight_sync_bucket_mib': {
    label: 'Weight-sync bucket',
    unit: 'MiB',
  },
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
        title: 'Layer kinds',
        used: LAYERS_ON,
        clear: 'Uniform layers',
        paths: [
          'model.layer_types',
          'model.mlp_types',
          'model.sliding_window',
          'model.attention_chunk',
          'model.attn_output_gate',
        ],
      },
      {
        title: 'Linear attention (Gated DeltaNet)',
        used: LINEAR_ON,
        paths: [
          'model.linear.key_heads',
          'model.linear.value_heads',
          'model.linear.key_head_dim',
          'model.linear.value_head_dim',
          'model.linear.conv_kernel',
        ],
      },
      {
        title: 'Mamba-2',
        used: SSM_ON,
        paths: [
          'model.ssm.heads',
          'model.ssm.head_dim',
          'model.ssm.groups',
          'model.ssm.state_size',
          'model.ssm.conv_kernel',
          'model.ssm.chunk_size',
          'model.ssm.bias',
          'model.ssm.conv_bias',
        ],
      },
      {
        title: 'Vision tower',
        used: VISION_ON,
        clear: 'Text only',
        paths: [
          'model.vision.kind',
          'model.vision.layers',
          'model.vision.hidden',
          'model.vision.heads',
          'model.vision.ffn_hidden',
          'model.vision.patch_size',
          'model.vision.image_size',
          'model.vision.merge',
          'model.vision.projector_hidden',
          'model.vision.images_per_sample',
          'model.vision.positions',
          'model.vision.deepstack',
          'model.vision.train',
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
          'model.moe.score_before_experts',
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
          'model.o_bias',
          'model.mlp_bias',
          'model.lm_head_bias',
          'model.attn_sinks',
          'model.position',
          'model.max_positions',
          'model.vocab_multiple',
          'model.type_vocab',
          'model.embedding_norm',
          'model.parallel_block',
          'model.mtp_layers',
          'model.encoder_layers',
          'model.relative_attention_buckets',
          'model.attn_logit_softcap',
          'model.final_logit_softcap',
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
          'training.source_len',
          'training.grad_accum',
          'training.global_batch',
          'training.dtype',
          'training.master_weights',
          'training.master_dtype',
          'training.autocast',
          'training.grad_dtype',
          'training.optimizer',
          'training.optimizer_dtype',
          'training.recompute',
          'training.recompute_modules',
          'training.recompute_layers',
          'training.attention',
          'training.loss',
          'training.loss_chunks',
          'training.logits_fp32_kept',
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
          'training.finetune.full_modules',
          'training.finetune.adapter_dtype',
          'training.finetune.base_dtype',
          'training.finetune.quant',
          'training.finetune.double_quant',
          'training.finetune.quant_keeps_input',
          'training.finetune.quant_head',
          'training.finetune.quant_from_fp16',
          'training.finetune.quant_inputs_held',
          'training.finetune.quant_dequant_temp',
          'training.finetune.quant_experts',
          'training.finetune.lora_fused_qkv',
        ],
      },
      {
        title: 'More training',
        paths: [
          'training.fp8_linear',
          'training.fp8_recipe',
          'training.optimizer_impl',
          'training.optimizer_in_backward',
          'training.paged_optimizer',
          'training.zero_grad_in_place',
          'training.dropout',
          'training.activation_offload',
          'training.repeat_kv',
          'training.v_view_keeps_qkv',
          'training.sac_saves_all_to_all',
          'training.norm_upcast',
          'training.mean_keeps_input',
        ],
      },
      {
        title: 'RL post-training',
        used: RL_ON,
        paths: [
          'rl.algorithm',
          'rl.group_size',
          'rl.prompt_len',
          'rl.response_len',
          'rl.prompt_len_mean',
          'rl.response_len_mean',
          'rl.remove_padding',
          'rl.rollout_batch',
          'rl.mini_batch',
          'rl.logprob_micro_batch',
          'rl.max_tokens_per_gpu',
          'rl.logprob_max_tokens_per_gpu',
          'rl.logits_response_only',
          'rl.entropy',
          'rl.entropy_kernel',
        ],
      },
      {
        title: 'RL models and offload',
        used: RL_ON,
        paths: [
          'rl.actor.param_offload',
          'rl.actor.optimizer_offload',
          'rl.reference.enabled',
          'rl.reference.param_offload',
          'rl.reference.precomputed',
          'rl.reference.swapped',
          'rl.reward.enabled',
          'rl.reward.layers',
          'rl.reward.hidden',
          'rl.reward.heads',
          'rl.reward.kv_heads',
          'rl.reward.ffn_hidden',
          'rl.reward.param_offload',
          'rl.critic.layers',
          'rl.critic.hidden',
          'rl.critic.heads',
          'rl.critic.kv_heads',
          'rl.critic.ffn_hidden',
          'rl.critic.param_offload',
          'rl.critic.optimizer_offload',
          'rl.critic.max_tokens_per_gpu',
        ],
      },
      {
        title: 'RL rollout engine',
        used: RL_ON,
        paths: [
          'rl.rollout.engine',
          'rl.rollout.placement',
          'rl.rollout.tp',
          'rl.rollout.gpu_memory_utilization',
          'rl.rollout.max_num_seqs',
          'rl.rollout.max_num_batched_tokens',
          'rl.rollout.max_model_len',
          'rl.rollout.dtype',
          'rl.rollout.kv_cache_dtype',
          'rl.rollout.block_size',
          'rl.rollout.cuda_graphs',
          'rl.rollout.sleep',
          'rl.rollout.own_process',
          'rl.weight_sync',
          'rl.weight_sync_bucket_mib',
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
          'parallel.vpp_group',
          'parallel.pp_first_stage_layers',
          'parallel.pp_last_stage_layers',
          'parallel.cp',
          'parallel.cp_all_to_all',
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
          'parallel.accumulate_no_sync',
          'parallel.pp_stage_buffers',
          'parallel.pp_split',
          'parallel.pp_returns_outputs',
          'parallel.distributed_optimizer',
          'parallel.offload_optimizer',
          'parallel.offload_params',
          'parallel.fp8_all_gather',
          'parallel.zero_init',
          'parallel.grad_as_bucket_view',
          'parallel.ddp_find_unused_parameters',
          'parallel.ddp_bucket_cap_mib',
        ],
      },
      {
        title: 'DeepSpeed buckets',
        used: () => false,
        paths: [
          'parallel.overlap_comm',
          'parallel.tp_comm_overlap',
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
          'hardware.hbm_tb_per_s',
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

/** A key's form entry, if it has one (a path read from a link or a file is a string). */
export const uiOf = (path: string): FieldUi | undefined => UI[path as FieldPath];

/** The fields' hints (field-hints.ts), once their chunk has loaded: the form shows each when it comes. */
export const hints = signal<Partial<Record<FieldPath, string>>>({});
export const loadHints = (): Promise<void> =>
  import('./field-hints.js').then((m) => {
    hints.value = m.HINTS;
  });
export const hintOf = (path: string): string | undefined => hints.value[path as FieldPath];

/** A label for a key the table does not know yet (a key the core added later). */
export function labelOf(path: string): string {
  return uiOf(path)?.label ?? path.split('.').pop()!.replace(/_/g, ' ');
}

/** A value's name in the form: its label, else the value as the core spells it. */
export function optionLabel(path: string, value: string): string {
  return uiOf(path)?.options?.[value] ?? value;
}

/** Whether a field is shown: only when it matters for the current values (config/relevance.ts). */
export function visible(path: string, get: Get): boolean {
  return matters(path, get);
}
