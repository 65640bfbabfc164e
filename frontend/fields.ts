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
  /** What each enum or set value is called in the form (the value itself stays in links and exports). */
  options?: Record<string, string>;
}

const DTYPES = { fp32: 'FP32', fp16: 'FP16', bf16: 'BF16', fp8: 'FP8' };
const OFFLOAD = { none: 'None', cpu: 'CPU RAM', nvme: 'NVMe' };

export const UI: Record<string, FieldUi> = {
  formula: {
    label: 'Formula',
    hint: 'others reproduce a published formula',
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
  'model.name': { label: 'Name', unit: 'text', hint: 'free text; no effect on the numbers' },
  'model.layers': { label: 'Layers', unit: 'layers', hint: 'transformer blocks' },
  'model.hidden': { label: 'Hidden size', unit: 'dim', hint: 'model width (d_model)' },
  'model.heads': { label: 'Attention heads', unit: 'heads', hint: 'query heads per layer' },
  'model.kv_heads': { label: 'KV heads', unit: 'heads', auto: '= heads (MHA)', hint: '1 = MQA, < heads = GQA' },
  'model.head_dim': {
    label: 'Head dim',
    unit: 'dim',
    auto: 'hidden / heads',
    hint: 'per head; set when not hidden / heads',
  },
  'model.ffn_hidden': { label: 'FFN hidden size', unit: 'dim', hint: 'MLP inner width (intermediate_size)' },
  'model.mlp': {
    label: 'MLP',
    hint: 'gated: three matrices, plain: two',
    options: { gated: 'Gated (SwiGLU)', plain: 'Plain (GELU)' },
  },
  'model.vocab': { label: 'Vocabulary', unit: 'tokens', hint: 'tokenizer vocabulary size' },
  'model.vocab_multiple': {
    label: 'Pad vocab to multiple of',
    unit: '× tp',
    hint: 'embedding rows padded to this × tp',
  },
  'model.tied_embeddings': {
    label: 'Tied input/output embeddings',
    hint: 'the output head reuses the input embedding',
  },
  'model.head': {
    label: 'Output head',
    hint: 'what sits on the last layer',
    options: { lm: 'Language model', classification: 'Classifier', none: 'None' },
  },
  'model.num_labels': { label: 'Classes', unit: 'labels', hint: 'outputs of the classification head' },
  'model.norm': {
    label: 'Norm',
    hint: 'the normalisation layer',
    options: { rmsnorm: 'RMSNorm', layernorm: 'LayerNorm' },
  },
  'model.norms_per_layer': { label: 'Norms per layer', unit: 'norms', hint: 'norm layers in each block' },
  'model.bias': { label: 'Biases on linears', hint: 'bias vectors on every linear' },
  'model.qkv_bias': { label: 'QKV bias', hint: 'bias on Q, K, V only (Qwen2)' },
  'model.qk_norm': {
    label: 'QK norm',
    hint: 'norm on queries and keys (Qwen3, OLMo 2)',
    options: { none: 'None', head: 'Per head', full: 'All channels' },
  },
  'model.attn_sinks': { label: 'Attention sinks', hint: 'learned sink logit per head (gpt-oss)' },
  'model.position': {
    label: 'Positions',
    hint: 'rotary, or a learned position table',
    options: { rope: 'Rotary (RoPE)', learned: 'Learned table' },
  },
  'model.max_positions': { label: 'Max positions', unit: 'tokens', hint: 'rows of a learned position table' },
  'model.type_vocab': { label: 'Token types', unit: 'types', hint: 'token-type embeddings (BERT)' },
  'model.embedding_norm': { label: 'Embedding norm', hint: 'norm after the embeddings (BLOOM)' },
  'model.final_norm': { label: 'Final norm', hint: 'norm before the output head' },
  'model.o_bias': { label: 'Attention output bias', auto: 'as Biases on linears', hint: 'bias on o_proj' },
  'model.mlp_bias': { label: 'MLP biases', auto: 'as Biases on linears', hint: 'biases on the MLP linears' },
  'model.lm_head_bias': { label: 'LM head bias', hint: 'bias on the output projection' },
  'model.parallel_block': { label: 'Parallel attention + MLP', hint: 'GPT-J, Falcon, phi-2: one norm feeds both' },
  'model.mtp_layers': { label: 'MTP layers', unit: 'layers', hint: 'multi-token prediction' },
  'model.attn_logit_softcap': {
    label: 'Attention soft-cap',
    unit: 'logit',
    auto: 'none',
    hint: 'tanh cap on the scores (Gemma 2); eager keeps it',
  },
  'model.final_logit_softcap': {
    label: 'Logit soft-cap',
    unit: 'logit',
    auto: 'none',
    hint: 'tanh cap on the logits (Gemma 2)',
  },

  'model.layer_types': {
    label: 'Layer mixers',
    auto: 'every layer full attention',
    hint: 'per layer, repeating: e.g. 3*linear,full (Qwen3-Next) or 5*sliding,full (Gemma 3)',
    options: {
      full: 'Full attention',
      sliding: 'Sliding-window attention',
      chunked: 'Chunked attention',
      linear: 'Linear attention (Gated DeltaNet)',
      ssm: 'Mamba-2',
      none: 'None (MLP-only layer)',
    },
  },
  'model.mlp_types': {
    label: 'Layer MLPs',
    auto: 'by the MoE rule',
    hint: 'per layer, repeating: dense, moe or none (e.g. dense,moe)',
    options: { dense: 'Dense MLP', moe: 'MoE', none: 'None (mixer-only layer)' },
  },
  'model.sliding_window': {
    label: 'Sliding window',
    unit: 'tokens',
    auto: 'none',
    hint: 'keys a sliding layer attends back',
  },
  'model.attention_chunk': {
    label: 'Attention chunk',
    unit: 'tokens',
    auto: 'none',
    hint: 'tokens per chunk (Llama 4)',
  },
  'model.attn_output_gate': { label: 'Attention output gate', hint: 'q_proj also outputs a sigmoid gate (Qwen3-Next)' },
  'model.linear.key_heads': { label: 'Key heads', unit: 'heads', hint: 'linear_num_key_heads' },
  'model.linear.value_heads': { label: 'Value heads', unit: 'heads', hint: 'linear_num_value_heads' },
  'model.linear.key_head_dim': { label: 'Key head dim', unit: 'dim', hint: 'linear_key_head_dim' },
  'model.linear.value_head_dim': { label: 'Value head dim', unit: 'dim', hint: 'linear_value_head_dim' },
  'model.linear.conv_kernel': { label: 'Conv kernel', unit: 'taps', hint: 'short causal convolution over q, k, v' },
  'model.ssm.heads': { label: 'Mamba heads', unit: 'heads', hint: 'mamba_num_heads' },
  'model.ssm.head_dim': { label: 'Mamba head dim', unit: 'dim', hint: 'mamba_head_dim' },
  'model.ssm.groups': { label: 'Groups', unit: 'groups', hint: 'n_groups of B and C' },
  'model.ssm.state_size': { label: 'State size', unit: 'dim', hint: 'ssm_state_size' },
  'model.ssm.conv_kernel': { label: 'Conv kernel', unit: 'taps', hint: 'conv over x, B, C' },
  'model.ssm.chunk_size': { label: 'Scan chunk', unit: 'tokens', hint: 'chunk of the SSD scan' },
  'model.ssm.bias': { label: 'Projection biases', hint: 'in_proj / out_proj biases (use_bias)' },
  'model.ssm.conv_bias': { label: 'Conv bias', hint: 'use_conv_bias' },

  'model.vision.kind': {
    label: 'Vision tower',
    hint: 'the ViT family (its layer shape and projector)',
    options: {
      siglip: 'SigLIP (Gemma 3)',
      clip: 'CLIP (LLaVA)',
      qwen2_5_vl: 'Qwen2.5-VL',
      llama4: 'Llama 4',
      pixtral: 'Pixtral (Mistral 3)',
      internvit: 'InternViT (InternVL)',
    },
  },
  'model.vision.layers': { label: 'Vision layers', unit: 'layers', hint: '0 = no vision tower' },
  'model.vision.hidden': { label: 'Vision hidden size', unit: 'dim', hint: 'the tower width' },
  'model.vision.heads': { label: 'Vision heads', unit: 'heads', hint: 'attention heads of the tower' },
  'model.vision.ffn_hidden': { label: 'Vision FFN size', unit: 'dim', hint: 'MLP inner width of the tower' },
  'model.vision.patch_size': { label: 'Patch size', unit: 'px', hint: 'pixels per patch side' },
  'model.vision.image_size': { label: 'Image size', unit: 'px', hint: 'side of the (resized) image' },
  'model.vision.merge': {
    label: 'Patch merge',
    unit: '× per side',
    auto: "the tower's",
    hint: 'patches per side merged into one token',
  },
  'model.vision.projector_hidden': {
    label: 'Projector width',
    unit: 'dim',
    auto: '4096',
    hint: "Llama 4's adapter and projector width",
  },
  'model.vision.images_per_sample': {
    label: 'Images per sample',
    unit: 'images',
    hint: 'through the tower per sample',
  },
  'model.vision.train': {
    label: 'Vision training',
    hint: 'what of the tower trains (frozen: no gradients, no saved tensors)',
    options: { full: 'Tower and projector', projector: 'Projector only', none: 'Frozen' },
  },

  'model.moe.experts': { label: 'Experts', unit: 'experts', hint: '0 = dense' },
  'model.moe.top_k': { label: 'Experts per token', unit: 'top-k', hint: 'experts each token is routed to' },
  'model.moe.expert_ffn_hidden': {
    label: 'Expert FFN size',
    unit: 'dim',
    auto: '= FFN hidden',
    hint: 'inner width of each expert',
  },
  'model.moe.shared_experts': { label: 'Shared experts', unit: 'experts', hint: 'experts every token passes through' },
  'model.moe.shared_expert_ffn_hidden': {
    label: 'Shared expert FFN',
    unit: 'dim',
    auto: '= expert FFN',
    hint: 'inner width of the shared experts',
  },
  'model.moe.shared_expert_gate': { label: 'Shared expert gate', hint: 'sigmoid gate on the shared experts' },
  'model.moe.router_bias': { label: 'Router bias', hint: 'bias on the router linear' },
  'model.moe.dense_layers': { label: 'Leading dense layers', unit: 'layers', hint: 'first layers with a dense MLP' },
  'model.moe.layer_freq': { label: 'MoE every n-th layer', unit: 'layers', hint: '2 = every other layer is MoE' },
  'model.moe.capacity_factor': {
    label: 'Capacity factor',
    unit: '×',
    auto: 'dropless',
    hint: 'cap on tokens per expert',
  },
  'model.moe.latent_size': { label: 'Latent size', unit: 'dim', auto: 'none', hint: 'compat formulas only' },
  'model.moe.load_imbalance': { label: 'Load imbalance', unit: '× mean', hint: 'busiest expert over the mean' },

  'model.mla.kv_lora_rank': { label: 'KV LoRA rank', unit: 'rank', hint: '0 = standard attention' },
  'model.mla.q_lora_rank': {
    label: 'Q LoRA rank',
    unit: 'rank',
    auto: 'none (full Q)',
    hint: 'query compression rank',
  },
  'model.mla.qk_nope_head_dim': { label: 'QK no-PE head dim', unit: 'dim', hint: 'QK dims per head without RoPE' },
  'model.mla.qk_rope_head_dim': { label: 'QK RoPE head dim', unit: 'dim', hint: 'QK dims per head with RoPE' },
  'model.mla.v_head_dim': { label: 'V head dim', unit: 'dim', hint: 'value dims per head' },

  'training.micro_batch': { label: 'Micro-batch', unit: 'samples', pow2: true, hint: 'samples per GPU per forward' },
  'training.seq_len': { label: 'Sequence length', unit: 'tokens', pow2: true, hint: 'tokens per sample' },
  'training.grad_accum': {
    label: 'Grad. accumulation',
    unit: 'micro-batches',
    auto: 'auto',
    hint: 'per optimizer step; auto: from the global batch, else 1',
  },
  'training.global_batch': {
    label: 'Global batch',
    unit: 'samples',
    auto: 'auto',
    hint: 'samples per step; auto: micro-batch × accum. × DP',
  },
  'training.dtype': { label: 'Compute dtype', hint: 'parameters and compute', options: DTYPES },
  'training.fp8_linear': { label: 'FP8 linears', hint: 'linears in FP8 (Transformer Engine)' },
  'training.master_weights': { label: 'FP32 master weights', hint: 'an FP32 copy beside 16-bit weights' },
  'training.grad_dtype': { label: 'Gradient dtype', hint: 'gradient accumulation and reduction', options: DTYPES },
  'training.optimizer': {
    label: 'Optimizer',
    hint: 'sets the states kept per parameter',
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
    hint: 'dtype of the optimizer states',
    options: DTYPES,
  },
  'training.optimizer_impl': {
    label: 'Optimizer kernel',
    auto: 'from the training stack',
    hint: 'foreach needs a temporary copy',
    options: { foreach: 'foreach (multi-tensor)', fused: 'Fused', for_loop: 'For-loop' },
  },
  'training.optimizer_in_backward': { label: 'Optimizer step in backward', hint: 'each gradient freed after its step' },
  'training.paged_optimizer': { label: 'Paged optimizer', hint: 'bitsandbytes: states page to CPU' },
  'training.recompute': {
    label: 'Recompute',
    hint: 'trade compute for activation memory',
    options: {
      none: 'None',
      selective: 'Selective, by module (Megatron)',
      per_op: 'Selective, per op (torchtitan)',
      full: 'Full layers',
    },
  },
  'training.recompute_modules': {
    label: 'Recompute modules',
    hint: 'what selective recompute drops',
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
    hint: 'full recompute: layers per stage',
  },
  'training.dropout': { label: 'Dropout', unit: 'prob.', hint: 'dropout masks are kept for backward' },
  'training.attention': {
    label: 'Attention kernel',
    hint: 'flash keeps no s×s scores',
    options: { flash: 'FlashAttention', sdpa_math: 'SDPA math', eager: 'Eager' },
  },
  'training.loss': {
    label: 'Loss',
    auto: 'from the training stack',
    hint: 'how the logits and their loss are held',
    options: {
      standard: 'Standard (fp32 logits)',
      chunked: 'Chunked (torchtune)',
      fused: 'Fused linear CE (Liger)',
      compiled: 'Compiled CE (torch.compile)',
      hf_upcast: 'fp32 logits kept (transformers < 4.45)',
      loss_parallel: 'Loss parallel (torchtitan)',
      flash_ce: 'flash-attn CE, in-place backward (verl)',
    },
  },
  'training.repeat_kv': {
    label: 'K/V repeated to all heads',
    auto: 'from the training stack',
    hint: 'GQA keys/values expanded before the attention kernel',
  },
  'training.loss_chunks': { label: 'Loss chunks', unit: 'chunks', hint: 'chunked loss: pieces of the sequence' },
  'training.activation_offload': { label: 'Offload activations to CPU', hint: 'saved activations go to host RAM' },
  'training.finetune.quant_keeps_input': {
    label: '4-bit linears keep their input',
    auto: 'from the training stack',
    hint: 'bitsandbytes ≤ 0.43.1 MatMul4Bit',
  },
  'training.finetune.method': {
    label: 'Fine-tuning',
    hint: 'lora / qlora: adapters on a frozen base',
    options: { full: 'Full', lora: 'LoRA', qlora: 'QLoRA' },
  },
  'training.finetune.lora_rank': { label: 'LoRA rank', unit: 'rank', pow2: true, hint: 'adapter rank r' },
  'training.finetune.lora_targets': {
    label: 'LoRA targets',
    hint: 'linears that get adapters',
    options: { q: 'Query', k: 'Key', v: 'Value', o: 'Output', gate: 'Gate', up: 'Up', down: 'Down' },
  },
  'training.finetune.lora_dropout': { label: 'LoRA dropout', unit: 'prob.', hint: 'dropout on the adapter input' },
  'training.finetune.full_modules': {
    label: 'Trained in full',
    hint: 'beside the adapters (PEFT modules_to_save)',
    options: { embedding: 'Embedding', head: 'Output head' },
  },
  'training.finetune.adapter_dtype': { label: 'Adapter dtype', hint: 'dtype of the adapter weights', options: DTYPES },
  'training.finetune.base_dtype': {
    label: 'Frozen base dtype',
    auto: 'auto: compute dtype',
    hint: 'dtype of the frozen weights',
    options: DTYPES,
  },
  'training.finetune.quant': {
    label: 'Base quantisation',
    hint: 'QLoRA: format of the frozen base',
    options: { nf4: 'NF4', fp4: 'FP4', int8: 'INT8 (LLM.int8)' },
  },
  'training.finetune.double_quant': { label: 'Double quantisation', hint: 'quantise the quantisation constants' },

  'parallel.gpus': { label: 'GPUs', unit: 'GPUs', pow2: true, hint: 'world size' },
  'parallel.gpus_per_node': { label: 'GPUs per node', unit: 'GPUs', pow2: true, hint: 'GPUs on the fast interconnect' },
  'parallel.tp': { label: 'Tensor parallel', unit: 'TP', pow2: true, hint: "splits each layer's matrices" },
  'parallel.pp': { label: 'Pipeline parallel', unit: 'PP', pow2: true, hint: 'splits the layers into stages' },
  'parallel.vpp': { label: 'Virtual stages', unit: 'VPP', hint: 'model chunks per stage (interleaved)' },
  'parallel.tp_comm_overlap': {
    label: 'TP comm overlap',
    hint: 'TP collectives behind the GEMMs (step time only)',
  },
  'parallel.vpp_group': {
    label: 'Micro-batch group',
    unit: 'micro-batches',
    auto: '= PP',
    hint: 'per virtual stage in a row (Megatron)',
  },
  'parallel.cp': { label: 'Context parallel', unit: 'CP', pow2: true, hint: 'splits the sequence' },
  'parallel.ep': { label: 'Expert parallel', unit: 'EP', pow2: true, hint: 'splits the experts' },
  'parallel.etp': {
    label: 'Expert tensor parallel',
    unit: 'ETP',
    pow2: true,
    hint: 'tensor parallel inside the experts',
  },
  'parallel.sequence_parallel': { label: 'Sequence parallel', hint: 'with TP: norms and dropout split too' },
  'parallel.pp_schedule': {
    label: 'Pipeline schedule',
    hint: 'how micro-batches pass the stages',
    options: { gpipe: 'GPipe', '1f1b': '1F1B', interleaved: 'Interleaved 1F1B', zero_bubble: 'Zero bubble' },
  },
  'parallel.pp_first_stage_layers': {
    label: 'First stage layers',
    unit: 'layers',
    auto: 'even split',
    hint: 'uneven pipeline: layers on stage 0',
  },
  'parallel.pp_last_stage_layers': {
    label: 'Last stage layers',
    unit: 'layers',
    auto: 'even split',
    hint: 'uneven pipeline: layers on the last stage',
  },
  'parallel.engine': {
    label: 'Engine',
    hint: 'the data-parallel wrapper',
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
  'parallel.zero_stage': { label: 'ZeRO stage', unit: 'stage', hint: '1 optimizer, 2 + gradients, 3 + parameters' },
  'parallel.fsdp_strategy': {
    label: 'FSDP strategy',
    hint: 'what FSDP shards',
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
    hint: 'hybrid shard: GPUs per shard group',
  },
  'parallel.reshard_after_forward': { label: 'Reshard after forward', hint: 'free gathered parameters after forward' },
  'parallel.shard_root_modules': {
    label: 'Embedding and output as own FSDP units',
    auto: 'from the training stack',
    hint: 'torchtune custom_sharded_layers: gathered only around their forward and backward',
  },
  'parallel.distributed_optimizer': { label: 'Distributed optimizer', hint: 'optimizer states sharded over DP' },
  'parallel.shard_with_cp': { label: 'Shard over DP × CP', hint: 'sharding spans DP × CP' },
  'parallel.offload_optimizer': {
    label: 'Offload optimizer',
    hint: 'optimizer states on host or disk',
    options: OFFLOAD,
  },
  'parallel.offload_params': { label: 'Offload parameters', hint: 'parameters on host or disk', options: OFFLOAD },
  'parallel.fp8_all_gather': { label: 'FP8 all-gather', hint: 'parameters gathered in FP8' },
  'parallel.zero_init': { label: 'zero.Init', hint: 'parameters partitioned as they are created' },
  'parallel.grad_as_bucket_view': { label: 'Gradients as bucket view', hint: 'gradients live in the reduce buckets' },
  'parallel.reduce_bucket_size': { label: 'Reduce bucket', unit: 'elements', hint: 'elements per gradient reduce' },
  'parallel.allgather_bucket_size': {
    label: 'All-gather bucket',
    unit: 'elements',
    hint: 'elements per parameter all-gather',
  },
  'parallel.overlap_comm': {
    label: 'Overlap comm',
    auto: 'auto: on for ZeRO-3',
    hint: 'extra buffers to overlap communication',
  },
  'parallel.stage3_prefetch_bucket_size': {
    label: 'Stage-3 prefetch bucket',
    unit: 'elements',
    hint: 'parameters fetched ahead',
  },
  'parallel.stage3_max_live_parameters': {
    label: 'Stage-3 max live params',
    unit: 'params',
    hint: 'gathered parameters held at once',
  },
  'parallel.stage3_param_persistence_threshold': {
    label: 'Stage-3 persistence threshold',
    unit: 'params',
    hint: 'smaller parameters stay gathered',
  },

  'hardware.memory_gib': { label: 'GPU memory', unit: 'GiB', hint: 'the GPU memory size' },
  'hardware.bf16_tflops': { label: 'BF16 dense compute', unit: 'TFLOPS', hint: 'dense peak, for the step time' },
  'hardware.fp8_tflops': {
    label: 'FP8 dense compute',
    unit: 'TFLOPS',
    auto: '2 × BF16',
    hint: 'dense peak, for the step time',
  },
  'hardware.intra_node_gb_per_s': {
    label: 'Intra-node bandwidth',
    unit: 'GB/s',
    hint: 'per GPU and direction (NVLink)',
  },
  'hardware.inter_node_gb_per_s': {
    label: 'Inter-node bandwidth',
    unit: 'GB/s',
    hint: 'per GPU and direction (network)',
  },
  'runtime.compute_efficiency': {
    label: 'GEMM efficiency',
    unit: 'of peak',
    auto: 'measured',
    hint: 'large matmuls, step time only',
  },
  'runtime.cuda_context_mib': {
    label: 'CUDA context',
    unit: 'MiB',
    auto: 'auto',
    hint: 'driver context, outside the allocator',
  },
  'runtime.cublas_workspace_mib': {
    label: 'cuBLAS workspace',
    unit: 'MiB',
    auto: 'auto',
    hint: 'outside the allocator',
  },
  'runtime.nccl_buffer_mib': { label: 'NCCL buffers', unit: 'MiB', auto: 'auto', hint: 'communicator buffers' },
  'runtime.allocator_reserve': {
    label: 'Allocator reserve',
    unit: '× alloc.',
    auto: 'modelled',
    hint: 'reserved over allocated',
  },
  'runtime.expandable_segments': { label: 'Expandable segments', hint: 'PYTORCH_CUDA_ALLOC_CONF option' },
  'runtime.max_split_size_mib': {
    label: 'Max split size',
    unit: 'MiB',
    auto: 'unset: any block splits',
    hint: 'PYTORCH_CUDA_ALLOC_CONF option',
  },
  'runtime.gc_threshold': { label: 'Allocator GC threshold', unit: '× memory', hint: 'PYTORCH_CUDA_ALLOC_CONF option' },
  'runtime.empty_cache_after_init': {
    label: 'Empty the cache after set-up',
    auto: 'from the training stack',
    hint: 'torch.cuda.empty_cache() before the first step',
  },
  'runtime.torch_compile': { label: 'torch.compile', hint: 'fused ops save fewer tensors' },
  'parallel.reduce_input_on_compute_stream': {
    label: 'Reduce-scatter input on the compute stream',
    auto: 'from the training stack',
    hint: 'FSDP2 in PyTorch 2.5 on',
  },
  'runtime.framework': {
    label: 'Training stack',
    hint: 'sets the mechanisms listed below unless given',
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
    hint: 'none: one training step; else an RL step in phases (rollout, log-probs, update)',
    options: {
      none: 'None (plain training)',
      grpo: 'GRPO',
      ppo: 'PPO (with a critic)',
      dpo: 'DPO (offline pairs)',
      rloo: 'RLOO',
      reinforce_pp: 'REINFORCE++',
    },
  },
  'rl.group_size': { label: 'Responses per prompt', unit: 'responses', hint: 'verl rollout.n, TRL num_generations' },
  'rl.prompt_len': { label: 'Max prompt length', unit: 'tokens', hint: 'verl data.max_prompt_length' },
  'rl.response_len': {
    label: 'Max response length',
    unit: 'tokens',
    hint: 'verl data.max_response_length, TRL max_completion_length',
  },
  'rl.prompt_len_mean': {
    label: 'Typical prompt length',
    unit: 'tokens',
    auto: '= max',
    hint: 'packed micro-batches (remove padding) hold this many per sequence',
  },
  'rl.response_len_mean': {
    label: 'Typical response length',
    unit: 'tokens',
    auto: '= max',
    hint: 'packed micro-batches (remove padding) hold this many per sequence',
  },
  'rl.remove_padding': {
    label: 'Remove padding',
    hint: 'micro-batches packed to the real tokens (verl use_remove_padding); off: padded to the max',
  },
  'rl.rollout_batch': { label: 'Prompts per step', unit: 'prompts', hint: 'all GPUs; verl data.train_batch_size' },
  'rl.mini_batch': {
    label: 'Prompts per optimizer step',
    unit: 'prompts',
    auto: '= prompts per step',
    hint: 'verl ppo_mini_batch_size; sets the accumulation',
  },
  'rl.logprob_micro_batch': {
    label: 'Log-prob micro-batch',
    unit: 'sequences',
    auto: '= micro-batch',
    hint: 'per GPU; verl log_prob_micro_batch_size_per_gpu',
  },
  'rl.max_tokens_per_gpu': {
    label: 'Tokens per micro-batch',
    unit: 'tokens',
    auto: 'no dynamic batching',
    hint: 'dynamic batching by tokens: verl ppo_max_token_len_per_gpu',
  },
  'rl.logprob_max_tokens_per_gpu': {
    label: 'Log-prob tokens per micro-batch',
    unit: 'tokens',
    auto: '= tokens per micro-batch',
    hint: 'verl log_prob_max_token_len_per_gpu',
  },
  'rl.logits_response_only': {
    label: 'Logits of the response only',
    hint: 'TRL logits_to_keep; verl computes all tokens',
  },
  'rl.entropy': { label: 'Entropy over the vocabulary', hint: 'verl calculate_entropy / entropy_coeff > 0' },
  'rl.entropy_kernel': {
    label: 'Entropy kernel',
    auto: 'from the training stack',
    hint: 'how the entropy is computed: what it keeps beside the logits',
    options: {
      eager: 'Eager (softmax kept)',
      compiled: 'Compiled (verl, fused)',
      chunked: 'Chunked, no gradient (TRL)',
    },
  },
  'rl.actor.param_offload': {
    label: 'Actor parameters offloaded between phases',
    hint: 'verl actor.fsdp_config.param_offload',
  },
  'rl.actor.optimizer_offload': {
    label: 'Actor optimizer offloaded between phases',
    hint: 'verl actor.fsdp_config.optimizer_offload',
  },
  'rl.reference.enabled': { label: 'Reference model', hint: 'off: no KL term (TRL beta 0, verl use_kl_loss false)' },
  'rl.reference.param_offload': {
    label: 'Reference offloaded between phases',
    hint: 'verl ref.fsdp_config.param_offload',
  },
  'rl.reference.precomputed': {
    label: 'Reference log-probs precomputed',
    hint: 'DPO: TRL precompute_ref_log_probs; no reference during training',
  },
  'rl.reward.enabled': { label: 'Reward model', hint: 'off: rule-based rewards (verl reward_model.enable)' },
  'rl.reward.layers': {
    label: 'Reward model layers',
    unit: 'layers',
    auto: "= the actor's",
    hint: 'same family as the actor',
  },
  'rl.reward.hidden': { label: 'Reward model hidden size', unit: 'dim', auto: "= the actor's", hint: 'd_model' },
  'rl.reward.heads': { label: 'Reward model heads', unit: 'heads', auto: "= the actor's", hint: 'query heads' },
  'rl.reward.kv_heads': { label: 'Reward model KV heads', unit: 'heads', auto: '= heads', hint: 'GQA groups' },
  'rl.reward.ffn_hidden': { label: 'Reward model FFN size', unit: 'dim', auto: "= the actor's", hint: 'MLP width' },
  'rl.reward.param_offload': {
    label: 'Reward model offloaded between phases',
    hint: 'verl reward_model param_offload',
  },
  'rl.critic.layers': { label: 'Critic layers', unit: 'layers', auto: "= the actor's", hint: 'PPO value model' },
  'rl.critic.hidden': { label: 'Critic hidden size', unit: 'dim', auto: "= the actor's", hint: 'd_model' },
  'rl.critic.heads': { label: 'Critic heads', unit: 'heads', auto: "= the actor's", hint: 'query heads' },
  'rl.critic.kv_heads': { label: 'Critic KV heads', unit: 'heads', auto: '= heads', hint: 'GQA groups' },
  'rl.critic.ffn_hidden': { label: 'Critic FFN size', unit: 'dim', auto: "= the actor's", hint: 'MLP width' },
  'rl.critic.param_offload': { label: 'Critic parameters offloaded between phases', hint: 'verl critic param_offload' },
  'rl.critic.optimizer_offload': {
    label: 'Critic optimizer offloaded between phases',
    hint: 'verl critic optimizer_offload',
  },
  'rl.critic.max_tokens_per_gpu': {
    label: 'Critic tokens per micro-batch',
    unit: 'tokens',
    auto: '= tokens per micro-batch',
    hint: 'verl critic.ppo_max_token_len_per_gpu',
  },
  'rl.rollout.engine': {
    label: 'Rollout engine',
    hint: 'what the memory share covers differs',
    options: { vllm: 'vLLM', sglang: 'SGLang' },
  },
  'rl.rollout.placement': {
    label: 'Engine placement',
    hint: 'colocated: on the training GPUs (verl hybrid engine, TRL colocate)',
    options: { colocated: 'Colocated', separate: 'Own GPUs (server)' },
  },
  'rl.rollout.tp': {
    label: 'Engine tensor parallel',
    unit: 'GPUs',
    pow2: true,
    hint: 'verl rollout.tensor_model_parallel_size',
  },
  'rl.rollout.gpu_memory_utilization': {
    label: 'Engine memory share',
    unit: '× GPU memory',
    hint: 'vLLM gpu_memory_utilization, SGLang mem_fraction_static',
  },
  'rl.rollout.max_num_seqs': { label: 'Engine max sequences', unit: 'sequences', hint: 'vLLM max_num_seqs' },
  'rl.rollout.max_num_batched_tokens': {
    label: 'Engine batched tokens',
    unit: 'tokens',
    hint: 'vLLM max_num_batched_tokens: its profiled forward',
  },
  'rl.rollout.max_model_len': {
    label: 'Engine max model length',
    unit: 'tokens',
    auto: 'prompt + response',
    hint: 'one such sequence must fit the KV cache',
  },
  'rl.rollout.dtype': { label: 'Engine weights dtype', hint: 'verl rollout.dtype', options: DTYPES },
  'rl.rollout.kv_cache_dtype': {
    label: 'KV cache dtype',
    hint: 'vLLM kv_cache_dtype; automatic: the weights dtype',
    options: DTYPES,
  },
  'rl.rollout.block_size': { label: 'KV block size', unit: 'tokens', hint: 'vLLM block_size (16)' },
  'rl.rollout.cuda_graphs': { label: 'CUDA graphs', hint: 'off: enforce_eager; their pool is outside the share' },
  'rl.rollout.sleep': {
    label: 'Engine sleep',
    hint: 'what the engine frees after the rollout',
    options: {
      none: 'None (stays awake)',
      level1: 'Level 1 (weights to CPU, KV freed)',
      level2: 'Level 2 (weights and KV freed)',
      free_cache: 'Free the KV cache only',
    },
  },
  'rl.rollout.own_process': { label: 'Engine in its own process', hint: 'a second CUDA context (verl vLLM server)' },
  'rl.weight_sync': {
    label: 'Weight sync',
    hint: 'how the actor weights reach the engine',
    options: { bucketed: 'Per bucket', full: 'Whole model gathered' },
  },
  'rl.weight_sync_bucket_mib': {
    label: 'Weight-sync bucket',
    unit: 'MiB',
    hint: 'verl update_weights_bucket_megabytes',
  },
  'runtime.framework_version': {
    label: 'Stack version',
    unit: 'YYYY-MM or release',
    auto: 'current',
    hint: "the stack's defaults at that date",
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
          'training.finetune.full_modules',
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

/** A value's name in the form: its label, else the value as the core spells it. */
export function optionLabel(path: string, value: string): string {
  return UI[path]?.options?.[value] ?? value;
}

/** Whether a field is shown: only when it matters for the current values (config/relevance.ts). */
export function visible(path: string, get: Get): boolean {
  return matters(path, get);
}
