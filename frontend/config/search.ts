// The layout search's and the suggestions' options, and the patch that loads a found layout into a config.
import type { ConfigV1, FieldPath, Options, StructNumbers } from '../../wasm/generated.js';
import type { Config } from './json.js';

/** The layout search's options (core/llmem.h llmem_search_options): the GPU count, and any other to change. */
export type SearchOptions = Partial<Options['search_options']> & { gpus: number };
/** The suggestions' options (llmem_suggest_options). */
export type SuggestOptions = Partial<Options['suggest_options']>;

/** The patch that loads a found layout: everything the search set, so that loading it reproduces the
 * layout's memory (even stages, every layer recomputed, expert TP 1, no hybrid group unless chosen;
 * the engine only when the search changed it: a 1-GPU config laid out over many).
 * name: the value of an enum key by its index. */
export function layoutPatch(
  l: StructNumbers['layout'],
  o: SearchOptions,
  name: (path: FieldPath, i: number) => string,
  newEngine: boolean,
  byGlobalBatch: boolean,
): Config {
  const named = (path: FieldPath, i: number) => name(path, i) as never;
  const { tp, pp, vpp, cp, ep, zero_stage, micro_batch, grad_accum } = l;
  // a config that states its global batch keeps stating it; the accumulation follows from it
  const batch = byGlobalBatch ? { global_batch: l.dp * micro_batch * grad_accum, grad_accum: null } : { grad_accum };
  const offload = named('parallel.offload_optimizer', l.offload_optimizer);
  const fsdp_strategy = named('parallel.fsdp_strategy', l.fsdp_strategy);
  const patch: ConfigV1 = {
    parallel: {
      gpus: o.gpus,
      ...(newEngine ? { engine: named('parallel.engine', l.engine) } : {}),
      ...{ tp, pp, vpp, cp, ep, etp: 1 },
      sequence_parallel: l.sequence_parallel !== 0,
      pp_schedule: named('parallel.pp_schedule', l.pp_schedule),
      ...{ pp_first_stage_layers: null, pp_last_stage_layers: null, zero_stage, fsdp_strategy },
      distributed_optimizer: l.distributed_optimizer !== 0,
      ...(fsdp_strategy !== 'hybrid_shard' ? { fsdp_shard_size: null } : {}),
      ...(o.vary_offload
        ? { offload_optimizer: offload, offload_params: named('parallel.offload_params', l.offload_params) }
        : {}),
    },
    training: {
      micro_batch,
      ...batch,
      recompute: named('training.recompute', l.recompute),
      recompute_layers: null,
      ...(o.vary_optimizer_dtype ? { optimizer_dtype: named('training.optimizer_dtype', l.optimizer_dtype) } : {}),
    },
    // an RL run: the rollout engine's TP (the batches follow rl.* and stay)
    ...(l.rollout_tp > 0 ? { rl: { rollout: { tp: l.rollout_tp } } } : {}),
  };
  return patch as Config;
}

/** The candidates a search rejected, by reason (the core's status text), the commonest first. */
export const rejectedByReason = (counts: number[], reason: (status: number) => string) =>
  counts
    .map((count, status) => ({ reason: reason(status), count }))
    .filter((r) => r.count > 0)
    .sort((a, b) => b.count - a.count);
