// When a key matters: a setting that only takes effect together with others
// (the LoRA rank without LoRA, the ZeRO stage without DeepSpeed). The page
// hides such fields and drops their values, and so does an import
// (formats.ts); a fact about the config, not about the form, so it lives here
// in the DOM-free layer the page, the Worker and the CLI share.
import type { Json } from '../../wasm/llmem.js';
import { listNames } from './encode.js';

/** A key's current value (null when unset and automatic). */
export type Get = (path: string) => Json;
export type Condition = (get: Get) => boolean;

const is =
  (path: string, ...values: string[]): Condition =>
  (get) =>
    values.includes(get(path) as string);
const gt =
  (path: string, n: number): Condition =>
  (get) =>
    (get(path) as number) > n;
const all =
  (...conds: Condition[]): Condition =>
  (get) =>
    conds.every((c) => c(get));
const DEEPSPEED = is('parallel.engine', 'deepspeed', 'megatron_deepspeed');
const FSDP = is('parallel.engine', 'fsdp1', 'fsdp2');
const ZERO3 = all(DEEPSPEED, (get) => get('parallel.zero_stage') === 3);
export const LORA = is('training.finetune.method', 'lora', 'qlora');
export const MOE_ON = gt('model.moe.experts', 0);
export const MLA_ON = gt('model.mla.kv_lora_rank', 0);
/** A layer mixer in model.layer_types (a list of names; null: every layer full attention). */
const mixer =
  (kind: string): Condition =>
  (get) => {
    const types = get('model.layer_types'); // names, or the compact text "3*linear,full"
    const names = typeof types === 'string' ? listNames(types, Number.POSITIVE_INFINITY) : types;
    return Array.isArray(names) && names.includes(kind);
  };
export const LINEAR_ON = mixer('linear');
export const VISION_ON = gt('model.vision.layers', 0);
export const SSM_ON = mixer('ssm');
export const LAYERS_ON: Condition = (get) => get('model.layer_types') !== null || get('model.mlp_types') !== null;
/** RL post-training: its keys matter only with an algorithm; the step's own batch keys then give way to them. */
export const RL_ON: Condition = (get) => ![null, 'none'].includes(get('rl.algorithm') as string | null);
const RL_OFF: Condition = (get) => !RL_ON(get);
const ONLINE = all(RL_ON, (get) => get('rl.algorithm') !== 'dpo');
const COLOCATED = all(ONLINE, is('rl.rollout.placement', 'colocated'));
const RL_PACKED = all(RL_ON, (get) => get('rl.remove_padding') === true);
const REWARD = all(ONLINE, (get) => get('rl.reward.enabled') === true);
const CRITIC = all(RL_ON, is('rl.algorithm', 'ppo'));
const REFERENCE = all(RL_ON, (get) => get('rl.reference.enabled') !== false);

/** Keys that matter only when their condition holds; every other key always matters. */
export const MATTERS_WHEN: Readonly<Record<string, Condition>> = {
  'model.name': (get) => get('model.preset') === null,
  'model.num_labels': is('model.head', 'classification'),
  'model.max_positions': is('model.position', 'learned'),
  'model.lm_head_bias': (get) => get('model.head') !== 'none',
  'model.moe.top_k': MOE_ON,
  'model.moe.expert_ffn_hidden': MOE_ON,
  'model.moe.shared_experts': MOE_ON,
  'model.moe.shared_expert_ffn_hidden': all(MOE_ON, gt('model.moe.shared_experts', 0)),
  'model.moe.shared_expert_gate': all(MOE_ON, gt('model.moe.shared_experts', 0)),
  'model.moe.router_bias': MOE_ON,
  'model.moe.dense_layers': MOE_ON,
  'model.moe.layer_freq': MOE_ON,
  'model.moe.capacity_factor': MOE_ON,
  'training.sac_saves_all_to_all': all(MOE_ON, gt('parallel.ep', 1)),
  'model.moe.latent_size': MOE_ON,
  'model.moe.load_imbalance': MOE_ON,
  'model.sliding_window': mixer('sliding'),
  'model.attention_chunk': mixer('chunked'),
  'model.linear.key_heads': LINEAR_ON,
  'model.linear.value_heads': LINEAR_ON,
  'model.linear.key_head_dim': LINEAR_ON,
  'model.linear.value_head_dim': LINEAR_ON,
  'model.linear.conv_kernel': LINEAR_ON,
  'model.ssm.heads': SSM_ON,
  'model.ssm.head_dim': SSM_ON,
  'model.ssm.groups': SSM_ON,
  'model.ssm.state_size': SSM_ON,
  'model.ssm.conv_kernel': SSM_ON,
  'model.ssm.chunk_size': SSM_ON,
  'model.ssm.bias': SSM_ON,
  'model.ssm.conv_bias': SSM_ON,
  'training.source_len': gt('model.encoder_layers', 0),
  'model.vision.kind': VISION_ON,
  'model.vision.hidden': VISION_ON,
  'model.vision.heads': VISION_ON,
  'model.vision.ffn_hidden': VISION_ON,
  'model.vision.patch_size': VISION_ON,
  'model.vision.image_size': VISION_ON,
  'model.vision.merge': VISION_ON,
  'model.vision.projector_hidden': all(VISION_ON, is('model.vision.kind', 'llama4')),
  'model.vision.images_per_sample': VISION_ON,
  'model.vision.positions': all(VISION_ON, is('model.vision.kind', 'qwen3_vl')),
  'model.vision.deepstack': all(VISION_ON, is('model.vision.kind', 'qwen3_vl')),
  'model.vision.train': VISION_ON,
  'model.mla.q_lora_rank': MLA_ON,
  'model.mla.qk_nope_head_dim': MLA_ON,
  'model.mla.qk_rope_head_dim': MLA_ON,
  'model.mla.v_head_dim': MLA_ON,
  'training.master_weights': (get) => get('training.dtype') !== 'fp32',
  'training.master_dtype': (get) => get('training.dtype') !== 'fp32' && get('training.master_weights') !== false,
  // an RMSNorm's mean over its square (core/activations.c rmsnorm_square_bytes)
  'training.mean_keeps_input': is('model.norm', 'rmsnorm'),
  // torch's own .grad (core/states.c gradients_bytes): DeepSpeed and Megatron keep gradient buffers of their own
  'training.zero_grad_in_place': is('parallel.engine', 'single', 'ddp', 'fsdp1', 'fsdp2'),
  // FSDP's no_sync (DDP's costs nothing: its gradients are whole anyway)
  'parallel.accumulate_no_sync': FSDP,
  // plan.c autocast_of: a 16-bit dtype over fp32 master weights, a full fine-tune, an engine that hands the module them
  'training.autocast': all(
    is('training.dtype', 'bf16', 'fp16'),
    (get) => get('training.master_weights') !== false,
    (get) => !LORA(get),
    is('parallel.engine', 'single', 'ddp', 'fsdp1', 'fsdp2'),
  ),
  // the recipe matters only with fp8 linears (training.fp8_linear, or fp8 parameters)
  'training.fp8_recipe': (get) => get('training.fp8_linear') === true || get('training.dtype') === 'fp8',
  'training.optimizer_dtype': (get) => get('training.optimizer') !== 'adamw_8bit',
  'training.recompute_modules': is('training.recompute', 'selective'),
  'training.recompute_layers': is('training.recompute', 'full'),
  // the loss over the vocabulary needs the language-model head (a classification score or none has no logits)
  'training.loss': is('model.head', 'lm'),
  // null: the training stack's loss, which may be chunked (torchtune, LitGPT)
  'training.loss_chunks': (get) =>
    get('model.head') === 'lm' && [null, 'chunked'].includes(get('training.loss') as string | null),
  'training.finetune.lora_rank': LORA,
  'training.finetune.full_modules': LORA,
  'training.finetune.lora_targets': LORA,
  'training.finetune.lora_dropout': LORA,
  'training.finetune.adapter_dtype': LORA,
  'training.finetune.base_dtype': is('training.finetune.method', 'lora'),
  'training.finetune.quant': is('training.finetune.method', 'qlora'),
  'training.finetune.quant_keeps_input': is('training.finetune.method', 'qlora'),
  'training.finetune.quant_dequant_temp': is('training.finetune.method', 'qlora'),
  'training.finetune.double_quant': is('training.finetune.method', 'qlora'),
  // the quantized base's behaviours (core/loss.c, states.c, passes.c, model.c read them under QLoRA only)
  'training.finetune.quant_head': is('training.finetune.method', 'qlora'),
  'training.finetune.quant_from_fp16': is('training.finetune.method', 'qlora'),
  'training.finetune.quant_inputs_held': is('training.finetune.method', 'qlora'),
  'training.finetune.quant_experts': all(is('training.finetune.method', 'qlora'), MOE_ON),
  'training.finetune.lora_fused_qkv': LORA,
  'parallel.vpp': is('parallel.pp_schedule', 'interleaved', 'zb_v', 'dualpipe_v', 'dualpipe'),
  'parallel.vpp_group': is('parallel.pp_schedule', 'interleaved'),
  'parallel.ep': MOE_ON,
  'parallel.etp': MOE_ON,
  'parallel.sequence_parallel': gt('parallel.tp', 1),
  'parallel.pp_schedule': gt('parallel.pp', 1),
  'parallel.pp_first_stage_layers': gt('parallel.pp', 1),
  'parallel.pp_last_stage_layers': gt('parallel.pp', 1),
  'parallel.zero_stage': DEEPSPEED,
  'parallel.fsdp_strategy': FSDP,
  'parallel.fsdp_shard_size': all(FSDP, is('parallel.fsdp_strategy', 'hybrid_shard')),
  'parallel.reshard_after_forward': is('parallel.engine', 'fsdp2'),
  'parallel.reduce_input_on_compute_stream': is('parallel.engine', 'fsdp2'),
  'parallel.pp_stage_buffers': gt('parallel.pp', 1),
  'parallel.pp_returns_outputs': gt('parallel.pp', 1),
  'parallel.pp_split': gt('parallel.pp', 1),
  'parallel.shard_root_modules': all(FSDP, (get) => get('parallel.fsdp_strategy') !== 'no_shard'),
  'parallel.distributed_optimizer': is('parallel.engine', 'megatron'),
  'parallel.shard_with_cp': all(gt('parallel.cp', 1), (get) => get('parallel.engine') !== 'ddp'), // DDP shards nothing
  'parallel.cp_all_to_all': gt('parallel.cp', 1),
  'parallel.offload_optimizer': (get) => !['single', 'ddp'].includes(get('parallel.engine') as string),
  'parallel.offload_params': (get) => FSDP(get) || ZERO3(get),
  'parallel.fp8_all_gather': FSDP,
  'parallel.zero_init': ZERO3,
  'parallel.grad_as_bucket_view': is('parallel.engine', 'ddp'),
  'parallel.ddp_find_unused_parameters': is('parallel.engine', 'ddp'),
  'parallel.ddp_bucket_cap_mib': is('parallel.engine', 'ddp'),
  'parallel.reduce_bucket_size': DEEPSPEED,
  'parallel.allgather_bucket_size': all(DEEPSPEED, (get) => (get('parallel.zero_stage') as number) < 3),
  'parallel.overlap_comm': DEEPSPEED,
  'parallel.stage3_prefetch_bucket_size': ZERO3,
  'parallel.stage3_max_live_parameters': ZERO3,
  'parallel.stage3_param_persistence_threshold': ZERO3,
  'hardware.memory_gib': (get) => get('hardware.gpu') === null,
  // RL post-training (core/rl.c): the update's sequence length and accumulation come from rl.*
  'training.seq_len': RL_OFF,
  'training.grad_accum': RL_OFF,
  'training.global_batch': RL_OFF,
  'rl.group_size': ONLINE,
  'rl.prompt_len': RL_ON,
  'rl.response_len': RL_ON,
  'rl.prompt_len_mean': RL_PACKED,
  'rl.response_len_mean': RL_PACKED,
  'rl.remove_padding': RL_ON,
  'rl.rollout_batch': RL_ON,
  'rl.mini_batch': RL_ON,
  'rl.logprob_micro_batch': RL_ON,
  'rl.max_tokens_per_gpu': RL_ON,
  'rl.logprob_max_tokens_per_gpu': RL_ON,
  'rl.logits_response_only': RL_ON,
  'rl.entropy': RL_ON,
  'rl.entropy_kernel': all(RL_ON, (get) => get('rl.entropy') === true),
  'rl.actor.param_offload': ONLINE,
  'rl.actor.optimizer_offload': ONLINE,
  'rl.reference.enabled': RL_ON,
  // a reference swapped into the actor has no copy of its own to offload
  'rl.reference.param_offload': all(REFERENCE, (get) => get('rl.reference.swapped') !== true),
  'rl.reference.precomputed': all(REFERENCE, is('rl.algorithm', 'dpo')),
  'rl.reference.swapped': REFERENCE,
  'rl.reward.enabled': ONLINE,
  'rl.reward.layers': REWARD,
  'rl.reward.hidden': REWARD,
  'rl.reward.heads': REWARD,
  'rl.reward.kv_heads': REWARD,
  'rl.reward.ffn_hidden': REWARD,
  'rl.reward.param_offload': REWARD,
  'rl.critic.layers': CRITIC,
  'rl.critic.hidden': CRITIC,
  'rl.critic.heads': CRITIC,
  'rl.critic.kv_heads': CRITIC,
  'rl.critic.ffn_hidden': CRITIC,
  'rl.critic.param_offload': CRITIC,
  'rl.critic.optimizer_offload': CRITIC,
  'rl.critic.max_tokens_per_gpu': CRITIC,
  'rl.rollout.engine': ONLINE,
  'rl.rollout.placement': ONLINE,
  'rl.rollout.tp': ONLINE,
  'rl.rollout.gpu_memory_utilization': COLOCATED,
  'rl.rollout.max_num_seqs': COLOCATED,
  'rl.rollout.max_num_batched_tokens': COLOCATED,
  'rl.rollout.max_model_len': COLOCATED,
  'rl.rollout.dtype': COLOCATED,
  'rl.rollout.kv_cache_dtype': COLOCATED,
  'rl.rollout.block_size': COLOCATED,
  'rl.rollout.cuda_graphs': COLOCATED,
  'rl.rollout.sleep': COLOCATED,
  'rl.rollout.own_process': COLOCATED,
  'rl.weight_sync': ONLINE,
  'rl.weight_sync_bucket_mib': all(ONLINE, is('rl.weight_sync', 'bucketed')),
};

/** Whether `path` takes effect under the values `get` reads. */
export function matters(path: string, get: Get): boolean {
  const cond = MATTERS_WHEN[path];
  return cond ? cond(get) : true;
}
