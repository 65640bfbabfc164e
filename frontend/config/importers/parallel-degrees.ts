// Tensor and context parallel degrees read from a file: applied where the core models them
// (core/plan.c: tensor parallelism with the fsdp2 and Megatron engines; context parallelism with any), else
// reported with the engine that ruled them out.
import { draftModel, type Draft } from './common.js';

const ENGINES_WITH_TP = ['fsdp2', 'megatron', 'megatron_deepspeed'];

/** Set parallel.tp or parallel.cp to `n` (> 1), or say why not; true when applied. */
export function applyDegree(d: Draft, key: string, path: 'parallel.tp' | 'parallel.cp', n: number): boolean {
  const engine = String(d.get('parallel.engine') ?? 'ddp');
  if (path === 'parallel.cp' || ENGINES_WITH_TP.includes(engine)) {
    d.set(path, n);
    return true;
  }
  d.skip(
    key,
    `${n}: llmem models tensor parallelism with the fsdp2 and Megatron engines, not with ${engine}; not applied`,
  );
  return false;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * Ulysses sequence parallelism over `n` ranks (parallel.cp n, all of it by all-to-all: DeepSpeed-Ulysses, verl,
 * accelerate's sp_size); `kvLimited`: the all-to-all part is the greatest common divisor of the model's KV heads
 * and n and a ring takes the rest (ms-swift swift/sequence_parallel/sequence_parallel.py _init_device_mesh
 * @3602360a), where the model is known. Returns the all-to-all degree set.
 */
export function applyUlysses(d: Draft, key: string, n: number, kvLimited = false): number {
  applyDegree(d, key, 'parallel.cp', n);
  const m = draftModel(d);
  const kv = Number(m?.kv_heads ?? m?.heads);
  const a2a = kvLimited ? (Number.isInteger(kv) && kv > 0 ? gcd(kv, n) : n) : n;
  d.set('parallel.cp_all_to_all', a2a);
  return a2a;
}
