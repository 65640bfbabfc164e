// "Make it fit": the core's suggestions (core/suggest.c) in words, and the
// next GPU model that fits among resolved alternatives (gpu-alternatives.ts).
// Run in the planner Worker on the page (kept out of the page's first load:
// no catalog here), in-process by `llmem suggest`.
import type { Config, ConfigError, Core, Json, Suggestion, SuggestResult } from '../../wasm/llmem.js';

export interface NextGpu {
  id: string;
  name: string;
  device_used_bytes: number;
  capacity_bytes: number;
  step_seconds: number;
  /** step time over the config's now (the same workload) */
  time_ratio: number;
}

/** A suggestion with its change in words and what it changes besides memory and time. */
export type WordedSuggestion = Suggestion & { words: string; note: string };
export type SuggestReport = Omit<SuggestResult, 'suggestions' | 'fewest'> & {
  suggestions: WordedSuggestion[];
  fewest: WordedSuggestion | null;
  next_gpu: NextGpu | null;
};
/** Another GPU model: its id, name and the config resolved on it. */
export type GpuAlternative = { id: string; name: string; config: Config };

/** The first alternative (least memory first) on which the config fits leaving `free` free. */
export function nextGpu(core: Core, alternatives: GpuAlternative[], free: number, baseStep: number): NextGpu | null {
  for (const g of alternatives) {
    const r = core.estimate(g.config);
    if (!r.ok || r.per_gpu.device_used_bytes > r.capacity_bytes * (1 - free)) continue;
    const s = core.stepTime(g.config);
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

/** Which marks apply: its kind, and a change of method or optimizer numerics under another kind. */
export function kindsOf(s: Suggestion): Suggestion['kind'][] {
  const has = (path: string) => s.changes.some((c) => c.path === path);
  const kinds = new Set<Suggestion['kind']>([s.kind]);
  if (has('training.finetune.method')) kinds.add('method');
  if (has('training.optimizer') || has('training.optimizer_dtype')) kinds.add('numerics');
  return [...kinds].filter((k) => k !== 'same');
}
const noteOf = (s: Suggestion) =>
  kindsOf(s)
    .map((k) => KIND_NOTE[k])
    .join('; ');

/** The suggestions for a resolved config, in words, and the next GPU model when it does not fit. */
export function suggestFor(
  core: Core,
  config: Config,
  free: number,
  alternatives: GpuAlternative[] = [],
): SuggestReport | ConfigError {
  const r = core.suggest(config, { free_fraction: free });
  if (!('suggestions' in r)) return r;
  const worded = (s: Suggestion): WordedSuggestion => ({ ...s, words: describe(s), note: noteOf(s) });
  return {
    ...r,
    suggestions: r.suggestions.map(worded),
    fewest: r.fewest ? worded(r.fewest) : null,
    next_gpu: r.base_fits ? null : nextGpu(core, alternatives, free, r.base_step_seconds),
  };
}

const ON = (v: Json) => v === true;
const WORDS: Record<string, (v: Json) => string> = {
  'training.recompute': (v) => (v === 'none' ? 'no recompute' : `${String(v).replace('_', '-')} recompute`),
  'training.recompute_layers': (v) => `of ${v} ${Number(v) === 1 ? 'layer' : 'layers'}`,
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
  'parallel.accumulate_no_sync': (v) =>
    ON(v) ? 'accumulate under no_sync' : 'reduce gradients every micro-batch (accelerate sync_each_batch)',
  'training.zero_grad_in_place': (v) =>
    ON(v) ? 'zero gradients in place' : 'free gradients at zero_grad (set_to_none=True, the PyTorch 2.0 default)',
  'runtime.expandable_segments': (v) =>
    ON(v) ? 'expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)' : 'no expandable segments',
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
