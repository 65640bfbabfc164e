// The wrapper's public types: what Core takes and returns. The core's own lists and
// the config-v1 type come from wasm/generated.ts (scripts/gen-boundary.mjs).
import type { Category, FieldKind } from './generated.js';

export interface FieldInfo {
  index: number;
  /** a FieldPath (wasm/generated.ts) */
  path: string;
  kind: FieldKind;
  nullable: boolean;
  /** a text key the core reads as a month: "YYYY-MM" stored as year * 12 + month - 1 */
  months: boolean;
  default: number;
  min: number;
  max: number;
  values: string[];
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Config = { [key: string]: Json };

export interface ConfigError {
  path: string;
  message: string;
}

export interface ProfileValue {
  path: string;
  value: Json;
  term: string | null;
  source: string;
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
  peak_phase: string;
  peak_micro_batch: number | null;
  peak_layer: number | null;
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
  label: string;
  formula: string;
  value_bytes: number;
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

export interface SearchOptions {
  gpus: number;
  global_batch?: number; // samples per step; 0 or absent: the config's micro_batch x grad_accum x dp
  free_fraction?: number; // HBM a fitting layout leaves free (0.10)
  max_micro_batch?: number;
  vary_sharding?: boolean;
  vary_recompute?: boolean;
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
  device_used_bytes: number;
  step_seconds: number;
  tokens_per_second_per_gpu: number;
  pareto: boolean;
  /** merge into the config to load this layout */
  patch: Config;
}

export interface SearchResult {
  candidates: number;
  valid: number;
  fitting: number;
  layouts: Layout[];
  /** with no layout kept: why (the core's reason, with the key it names) */
  empty_reason?: string;
}
