// The names of the result's categories and of the memory above the allocated
// peak: one list for the page's charts and the A/B comparison the CLI shares.
import type { Category } from '../../wasm/llmem.js';

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
