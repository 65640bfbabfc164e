// When a key matters: a setting that only takes effect together with others
// (the LoRA rank without LoRA, the ZeRO stage without DeepSpeed). The page
// hides such fields and drops their values, and so does an import
// (formats.ts); a fact about the config, not about the form, so it lives here
// in the DOM-free layer the page, the Worker and the CLI share.
import type { Json } from '../../wasm/llmem.js';

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
  'model.moe.latent_size': MOE_ON,
  'model.moe.load_imbalance': MOE_ON,
  'model.mla.q_lora_rank': MLA_ON,
  'model.mla.qk_nope_head_dim': MLA_ON,
  'model.mla.qk_rope_head_dim': MLA_ON,
  'model.mla.v_head_dim': MLA_ON,
  'training.master_weights': (get) => get('training.dtype') !== 'fp32',
  'training.optimizer_dtype': (get) => get('training.optimizer') !== 'adamw_8bit',
  'training.recompute_modules': is('training.recompute', 'selective'),
  'training.recompute_layers': is('training.recompute', 'full'),
  // null: the training stack's loss, which may be chunked (torchtune, LitGPT)
  'training.loss_chunks': (get) => [null, 'chunked'].includes(get('training.loss') as string | null),
  'training.finetune.lora_rank': LORA,
  'training.finetune.full_modules': LORA,
  'training.finetune.lora_targets': LORA,
  'training.finetune.lora_dropout': LORA,
  'training.finetune.adapter_dtype': LORA,
  'training.finetune.base_dtype': is('training.finetune.method', 'lora'),
  'training.finetune.quant': is('training.finetune.method', 'qlora'),
  'training.finetune.quant_keeps_input': is('training.finetune.method', 'qlora'),
  'training.finetune.double_quant': is('training.finetune.method', 'qlora'),
  'parallel.vpp': is('parallel.pp_schedule', 'interleaved'),
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
  'parallel.shard_root_modules': all(FSDP, (get) => get('parallel.fsdp_strategy') !== 'no_shard'),
  'parallel.distributed_optimizer': is('parallel.engine', 'megatron'),
  'parallel.shard_with_cp': gt('parallel.cp', 1),
  'parallel.offload_optimizer': (get) => !['single', 'ddp'].includes(get('parallel.engine') as string),
  'parallel.offload_params': (get) => FSDP(get) || ZERO3(get),
  'parallel.fp8_all_gather': FSDP,
  'parallel.zero_init': ZERO3,
  'parallel.grad_as_bucket_view': is('parallel.engine', 'ddp'),
  'parallel.reduce_bucket_size': DEEPSPEED,
  'parallel.allgather_bucket_size': all(DEEPSPEED, (get) => (get('parallel.zero_stage') as number) < 3),
  'parallel.overlap_comm': DEEPSPEED,
  'parallel.stage3_prefetch_bucket_size': ZERO3,
  'parallel.stage3_max_live_parameters': ZERO3,
  'parallel.stage3_param_persistence_threshold': ZERO3,
  'hardware.memory_gib': (get) => get('hardware.gpu') === null,
};

/** Whether `path` takes effect under the values `get` reads. */
export function matters(path: string, get: Get): boolean {
  const cond = MATTERS_WHEN[path];
  return cond ? cond(get) : true;
}
