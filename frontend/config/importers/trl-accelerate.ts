// TRL's packaged accelerate configs (huggingface/trl trl/accelerate_configs/*.yaml @f2cd5771), which a TRL file names
// with `accelerate_config: <name>` (trl/cli/accelerate_config.py resolve_accelerate_config_argument: a path, or one of
// these names, becomes `accelerate launch --config_file`). Only the keys the accelerate importer reads for memory are
// kept; each runs 8 processes in bf16.
import type { Json } from '../../../wasm/llmem.js';

const common = { compute_environment: 'LOCAL_MACHINE', mixed_precision: 'bf16', num_machines: 1, num_processes: 8 };
const deepspeed = (stage: number): Json => ({
  ...common,
  distributed_type: 'DEEPSPEED',
  deepspeed_config: {
    zero_stage: stage,
    ...(stage > 1 ? { offload_optimizer_device: 'none', offload_param_device: 'none' } : {}),
    zero3_init_flag: stage === 3,
  },
});

export const TRL_ACCELERATE_CONFIGS: Record<string, Json> = {
  single_gpu: { ...common, distributed_type: 'NO' },
  multi_gpu: { ...common, distributed_type: 'MULTI_GPU' },
  zero1: deepspeed(1),
  zero2: deepspeed(2),
  zero3: deepspeed(3),
  fsdp1: {
    ...common,
    distributed_type: 'FSDP',
    fsdp_config: {
      fsdp_version: 1,
      fsdp_activation_checkpointing: false,
      fsdp_auto_wrap_policy: 'TRANSFORMER_BASED_WRAP',
      fsdp_backward_prefetch: 'BACKWARD_PRE',
      fsdp_forward_prefetch: true,
      fsdp_offload_params: false,
      fsdp_reshard_after_forward: 'FULL_SHARD',
      fsdp_use_orig_params: true,
    },
  },
  fsdp2: {
    ...common,
    distributed_type: 'FSDP',
    fsdp_config: {
      fsdp_version: 2,
      fsdp_activation_checkpointing: false,
      fsdp_auto_wrap_policy: 'TRANSFORMER_BASED_WRAP',
      fsdp_offload_params: false,
      fsdp_reshard_after_forward: true,
    },
  },
};

/** The packaged accelerate config a TRL file names (`accelerate_config: zero2`), as JSON text; undefined: none. */
export function trlAccelerateConfig(text: string): { name: string; json: string } | undefined {
  const m = /^accelerate_config:[ \t]*["']?([\w.-]+)["']?[ \t]*(?:#.*)?$/m.exec(text);
  if (!m || !(m[1] in TRL_ACCELERATE_CONFIGS)) return undefined;
  return { name: m[1], json: JSON.stringify(TRL_ACCELERATE_CONFIGS[m[1]]) };
}
