// "Make it fit": the core's suggestions (core/suggest.c) and the next GPU
// model of the catalog that fits, in words for the page and the CLI. Run in
// the planner Worker on the page, in-process by `llmem suggest`.
import type { Config, ConfigError, Core, Json, Suggestion, SuggestResult } from '../wasm/llmem.js';
import { GPUS } from './config/catalog.js';
import { resolveConfig } from './config/resolve.js';

export interface NextGpu {
  id: string;
  name: string;
  device_used_bytes: number;
  capacity_bytes: number;
  step_seconds: number;
  /** step time over the config's now (the same workload) */
  time_ratio: number;
}

export type SuggestReport = SuggestResult & { next_gpu: NextGpu | null };

/** The config on another GPU of the catalog: its memory and speeds from the catalog entry. */
function onGpu(config: Config, id: string): Config {
  const { memory_gib, bf16_tflops, fp8_tflops, intra_node_gb_per_s, inter_node_gb_per_s, ...hw } = (config.hardware ??
    {}) as Config;
  const { cublas_workspace_mib, ...rt } = (config.runtime ?? {}) as Config;
  return { ...config, hardware: { ...hw, gpu: id }, runtime: rt };
}

/** The catalog GPU with the least memory above this one's on which the config fits leaving `free` free. */
export function nextGpu(core: Core, config: Config, free: number, baseStep: number, capacity: number): NextGpu | null {
  const bigger = GPUS.filter((g) => (g.memory_bytes ?? g.memory_gib * 2 ** 30) > capacity).sort(
    (a, b) => (a.memory_bytes ?? a.memory_gib * 2 ** 30) - (b.memory_bytes ?? b.memory_gib * 2 ** 30),
  );
  for (const g of bigger) {
    const resolved = resolveConfig(onGpu(config, g.id));
    if (!resolved.ok) continue;
    const r = core.estimate(resolved.config);
    if (!r.ok || r.per_gpu.device_used_bytes > r.capacity_bytes * (1 - free)) continue;
    const s = core.stepTime(resolved.config);
    const step = 'step_seconds' in s ? s.step_seconds : Number.NaN;
    return {
      id: g.id,
      name: g.name,
      device_used_bytes: r.per_gpu.device_used_bytes,
      capacity_bytes: r.capacity_bytes,
      step_seconds: step,
      time_ratio: step / baseStep,
    };
  }
  return null;
}

/** The suggestions for a resolved config, and the next GPU model when it does not fit. */
export function suggestFor(core: Core, config: Config, free: number): SuggestReport | ConfigError {
  const r = core.suggest(config, { free_fraction: free });
  if (!('suggestions' in r)) return r;
  const next_gpu = r.base_fits ? null : nextGpu(core, config, free, r.base_step_seconds, r.capacity_bytes);
  return { ...r, next_gpu };
}

const ON = (v: Json) => v === true;
const WORDS: Record<string, (v: Json) => string> = {
  'training.recompute': (v) => (v === 'none' ? 'no recompute' : `${String(v).replace('_', '-')} recompute`),
  'training.recompute_layers': (v) => `of ${v} layers`,
  'training.micro_batch': (v) => `micro-batch ${v}`,
  'training.grad_accum': (v) => `accumulation ${v}`,
  'training.seq_len': (v) => `sequence ${v} tokens`,
  'training.optimizer': (v) => (v === 'adamw_8bit' ? '8-bit AdamW' : `optimizer ${v}`),
  'training.optimizer_dtype': (v) => `${v} optimizer states`,
  'training.loss': (v) => `${v} loss`,
  'training.activation_offload': (v) => (ON(v) ? 'activation offload' : 'no activation offload'),
  'training.finetune.method': (v) => (v === 'full' ? 'full fine-tuning' : v === 'lora' ? 'LoRA' : 'QLoRA'),
  'parallel.gpus': (v) => `${v} GPUs`,
  'parallel.engine': (v) => `engine ${v}`,
  'parallel.tp': (v) => `TP ${v}`,
  'parallel.pp': (v) => `PP ${v}`,
  'parallel.vpp': (v) => `VPP ${v}`,
  'parallel.cp': (v) => `CP ${v}`,
  'parallel.ep': (v) => `EP ${v}`,
  'parallel.zero_stage': (v) => `ZeRO-${v}`,
  'parallel.fsdp_strategy': (v) => String(v).replace(/_/g, ' '),
  'parallel.reshard_after_forward': (v) => (ON(v) ? 'reshard after forward' : 'no reshard after forward'),
  'parallel.distributed_optimizer': (v) => (ON(v) ? 'distributed optimizer' : 'no distributed optimizer'),
  'parallel.offload_optimizer': (v) => `optimizer offload to ${v === 'nvme' ? 'NVMe' : 'CPU'}`,
  'parallel.offload_params': (v) => `parameter offload to ${v === 'nvme' ? 'NVMe' : 'CPU'}`,
  'parallel.sequence_parallel': (v) => (ON(v) ? 'sequence parallel' : 'no sequence parallel'),
};

/** A suggestion's changes in words: "full recompute, accumulation 32, CP 8". Keys without words are "path = value". */
export function describe(s: Suggestion): string {
  const shown = s.changes.filter((c) => !(c.path === 'parallel.pp_schedule' || c.path.endsWith('_stage_layers')));
  return shown
    .map((c) => WORDS[c.path]?.(c.value) ?? `${c.path} = ${JSON.stringify(c.value)}`)
    .join(', ')
    .replace(/, of (\d+) layers/, ' of $1 layers')
    .replace(/optimizer offload to (CPU|NVMe), parameter offload to \1/, 'optimizer and parameter offload to $1');
}

/** What a kind changes besides memory and time, for a note beside the change ('' for the same training). */
export const KIND_NOTE: Record<Suggestion['kind'], string> = {
  same: '',
  numerics: 'optimizer numerics change',
  method: 'a different training method',
  workload: 'a different workload (shorter sequences)',
  gpus: 'another GPU count, same global batch',
};
