// The names of the result's categories and of the memory above the allocated
// peak: one list for the page's charts and the A/B comparison the CLI shares.
import type { Category, StepPart } from '../../wasm/llmem.js';

export const CATEGORY_LABEL: Record<Category, string> = {
  weights: 'Weights',
  gradients: 'Gradients',
  master_weights: 'Master weights',
  optimizer_states: 'Optimizer states',
  activations: 'Activations',
  logits: 'Logits & loss',
  comm_buffers: 'Comm. buffers',
  temporaries: 'Temporaries',
  kv_cache: 'KV cache (rollout)',
};

export const OVERHEAD_LABEL = { reserved: 'Allocator cache', runtime: 'CUDA context, NCCL' } as const;

/** Where a step's time goes (the step-time model's parts, core/llmem.h LLMEM_STEP_PARTS). */
export const STEP_PART_LABEL: Record<StepPart, string> = {
  matmuls: 'matmuls',
  attention: 'attention',
  memory_bound: 'memory-bound ops',
  recompute: 'recompute',
  tp_comm: 'TP communication',
  cp_comm: 'CP exchange',
  ep_comm: 'EP all-to-all',
  pipeline_bubble: 'pipeline bubble',
  pipeline_sends: 'pipeline sends',
  dp_comm: 'DP communication',
  fsdp_copies: 'FSDP copies',
  optimizer: 'optimizer step',
  offload: 'offload transfers',
};

/** The parts of a step that take at least `min` of it, the largest first, with their share. */
export function stepBreakdown(
  parts: Record<StepPart, number>,
  min = 0.005,
): { part: StepPart; label: string; seconds: number; share: number }[] {
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  return (Object.entries(parts) as [StepPart, number][])
    .map(([part, seconds]) => ({ part, label: STEP_PART_LABEL[part], seconds, share: total > 0 ? seconds / total : 0 }))
    .filter((p) => p.share >= min)
    .sort((a, b) => b.seconds - a.seconds);
}
