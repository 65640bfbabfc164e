// What the wrapper's Core returns (the CLI's --json writes these shapes). The core's own lists
// and the config-v1 type come from wasm/generated.ts (scripts/gen-boundary.mjs).
import type { Category, LayerMixer, RlModel, StepPart } from '../../wasm/generated.js';
import type { Config, ConfigError, Json } from './json.js';

export interface ProfileValue {
  path: string;
  value: Json;
  term: string | null;
  /** the core's id of that term (EstimateResult terms' `id`) */
  term_id: number | null;
  /** its row of core/profiles.def; the framework file it follows: frontend/config/profile.ts */
  row: number;
}

export type Breakdown = Record<Category, number>;

export interface RankResult {
  stage: number;
  peak_allocated_bytes: number;
  peak_reserved_bytes: number;
  device_used_bytes: number;
  breakdown_bytes: Breakdown;
  persistent_bytes: number;
  /** reserved - allocated when reserved peaks (simulated caching allocator) */
  fragmentation_bytes: number;
  largest_free_block_bytes: number;
  /** true: reserved comes from the simulated allocator; false: from its bound */
  reserved_simulated: boolean;
  params: number;
  layers: number;
  /** of those layers, how many have each mixer (model.layer_types) and an MoE MLP */
  mixer_layers: Record<LayerMixer, number>;
  moe_layers: number;
  peak_phase: string;
  peak_micro_batch: number | null;
  peak_layer: number | null;
  /** true: not walked (a deep pipeline): at most these numbers, those of bound_stage, a lower stage with the same layers */
  peak_bound: boolean;
  bound_stage: number;
}

/** The step's events as columns, one value per event, read once from the core's memory
 * (the chart draws them as they are; JSON.stringify(x, plainArrays) writes them as lists). */
export interface Timeline {
  stride: number;
  total_bytes: Float64Array;
  /** segments the simulated allocator holds at each event (empty when not simulated) */
  reserved_bytes: Float64Array;
  category_bytes: Record<Category, Float64Array>;
  phase: string[];
  micro_batch: Int32Array;
  layer: Int32Array;
}

/** One term of "why this number": its formula with the inputs filled in. */
export interface Term {
  category: Category | 'runtime';
  /** label and formula ('' where wasm/term-texts.ts has not loaded: the page until its Why panel opens) */
  label: string;
  formula: string;
  value_bytes: number;
  /** the core's term id, and the numbers its formula's placeholders stand for */
  id: number;
  inputs: number[];
}

/** One phase of an RL step (rl.algorithm not "none"): its highest point on the most-loaded GPU. */
export interface RlPhase {
  phase: string;
  peak_allocated_bytes: number;
  /** reserved (the update's simulated allocator, else its bound) + CUDA context, workspaces, NCCL */
  device_used_bytes: number;
  breakdown_bytes: Breakdown;
  /** the same bytes by model: actor, reference, reward, critic, rollout engine */
  model_bytes: Record<RlModel, number>;
}

export interface RlResult {
  phases: RlPhase[];
  /** the rollout engine's KV cache per GPU and the tokens it holds; its memory while awake */
  kv_cache_bytes: number;
  kv_cache_tokens: number;
  engine_bytes: number;
}

export interface EstimateResult {
  ok: true;
  per_gpu: RankResult & { peak_at: string };
  /** the highest allocated peak over the ranks (the headline "allocated") and its rank: may differ from per_gpu.stage */
  peak_allocated: { bytes: number; stage: number };
  ranks: RankResult[];
  params: { total: number; active: number; trainable: number; per_gpu: number };
  host: { cpu_bytes: number; nvme_bytes: number };
  fits: boolean;
  utilization: number;
  capacity_bytes: number;
  warnings: string[];
  terms: Term[];
  /** RL post-training only (rl.algorithm not "none") */
  rl?: RlResult;
  timeline?: Timeline;
}

export type EstimateOutcome = EstimateResult | { ok: false; error: ConfigError };
export type EstimateFailure = Extract<EstimateOutcome, { ok: false }>;

export interface Readings {
  ok: boolean;
  error?: string;
  peak_allocated_bytes: number;
  peak_reserved_bytes: number;
  device_used_bytes: number;
  capacity_bytes: number;
  fits: boolean;
}

export interface SweepPoint extends Readings {
  value: number;
}

export interface Layout {
  dp: number;
  tp: number;
  pp: number;
  vpp: number;
  cp: number;
  ep: number;
  micro_batch: number;
  grad_accum: number;
  /** RL runs: the rollout engine's tensor parallelism; 0 otherwise */
  rollout_tp: number;
  device_used_bytes: number;
  step_seconds: number;
  tokens_per_second_per_gpu: number;
  pareto: boolean;
  /** merge into the config to load this layout */
  patch: Config;
}

/** The step-time model's answer (a ranking aid): the step, tokens/s per GPU, and where the time goes. */
export interface StepTime {
  step_seconds: number;
  tokens_per_second_per_gpu: number;
  /** seconds by part (llmem_step_part), adding up to step_seconds */
  parts: Record<StepPart, number>;
}

export interface SearchResult {
  candidates: number;
  valid: number;
  fitting: number;
  /** the samples per step every layout keeps */
  global_batch: number;
  /** candidates rejected, by reason (the core's status text), the commonest first */
  rejected: { reason: string; count: number }[];
  layouts: Layout[];
  /** with no layout kept: why (the core's reason, with the key it names) */
  empty_reason?: string;
}

/** What a suggestion changes besides memory and time (core/llmem.h LLMEM_SUGGEST_KINDS):
 * same training, optimizer numerics, a different method (LoRA / QLoRA), a different workload
 * (shorter sequences), another GPU count. */
export type SuggestionKind = 'same' | 'numerics' | 'method' | 'workload' | 'gpus';

export interface Suggestion {
  kind: SuggestionKind;
  /** the keys it changes, in field order, with their new values */
  changes: { path: string; value: Json }[];
  /** merge into the config to apply it */
  patch: Config;
  peak_allocated_bytes: number;
  peak_reserved_bytes: number;
  device_used_bytes: number;
  /** host memory per GPU process (offload), and per node (times the GPUs of a node) */
  host_cpu_bytes: number;
  host_cpu_bytes_per_node: number;
  host_nvme_bytes: number;
  step_seconds: number;
  /** step time per token of the global batch over the config's now: the ranking */
  time_ratio: number;
  gpus: number;
}

export interface SuggestResult {
  base_fits: boolean;
  base_device_used_bytes: number;
  capacity_bytes: number;
  base_step_seconds: number;
  candidates: number;
  /** fitting, each verified by its own full estimate; by time_ratio, other GPU counts last */
  suggestions: Suggestion[];
  /** the fewest GPUs that fit at the same global batch (null: none found), and its suggestion */
  fewest_gpus: number | null;
  fewest: Suggestion | null;
}
