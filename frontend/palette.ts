// One colour per memory category, the same in every chart (breakdown bar,
// per-stage bars, timeline, "why" table). Tableau-10 hues: distinct in light
// and dark themes and for the common colour-vision deficiencies.
import type { Category } from '../wasm/llmem.js';

export const CATEGORY_COLOR: Record<Category, string> = {
  weights: '#4e79a7',
  gradients: '#f28e2b',
  master_weights: '#76b7b2',
  optimizer_states: '#e15759',
  activations: '#59a14f',
  logits: '#edc948',
  comm_buffers: '#b07aa1',
  temporaries: '#9c755f',
  kv_cache: '#ff9da7',
};

export { CATEGORY_LABEL, OVERHEAD_LABEL } from './config/labels.js';

/** The memory above the allocated peak: allocator cache, then CUDA context / libraries. */
export const OVERHEAD_COLOR = { reserved: '#bab0ac', runtime: '#79706e' } as const;

/** Phase tints of the timeline (behind the areas). */
export const PHASE_TINT: Record<string, string> = {
  setup: 'rgba(128,128,128,0.06)',
  forward: 'rgba(78,121,167,0.10)',
  backward: 'rgba(242,142,43,0.10)',
  optimizer: 'rgba(176,122,161,0.14)',
  // the phases of an RL step (core/rl.c) around the actor update's own
  'weight sync': 'rgba(73,152,148,0.12)',
  rollout: 'rgba(225,87,89,0.10)',
  'engine sleep': 'rgba(128,128,128,0.10)',
  'reward scoring': 'rgba(237,201,72,0.14)',
  'old log-probs': 'rgba(89,161,79,0.12)',
  'reference log-probs': 'rgba(156,117,95,0.12)',
  'critic values': 'rgba(255,157,167,0.14)',
  'critic update': 'rgba(186,176,172,0.16)',
};

/** The three readings as lines (planner sweep): hues outside the category set. */
export const READING_COLOR = { allocated: '#4e79a7', reserved: '#499894', device: '#d37295' } as const;
export const READING_LABEL = { allocated: 'Allocated', reserved: 'Reserved', device: 'nvidia-smi' } as const;

/** The simulated allocator's reserved line on the timeline: the sweep's reserved hue. */
export const RESERVED = READING_COLOR.reserved;

/** Measured values (probe output) wherever they are drawn: a CSS custom property, light and dark. */
export const MEASURED = '--measured';

/** Layout scatter: every layout, and the Pareto front over it. */
export const LAYOUT_COLOR = { all: '--scatter', pareto: '--accent' } as const;
