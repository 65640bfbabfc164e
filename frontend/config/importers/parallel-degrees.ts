// Tensor and context parallel degrees read from a file: applied where the core models them
// (core/plan.c: the fsdp2 and Megatron engines), else reported with the engine that ruled them out.
import type { Draft } from './common.js';

const ENGINES_WITH_TP_CP = ['fsdp2', 'megatron', 'megatron_deepspeed'];

/** Set parallel.tp or parallel.cp to `n` (> 1), or say why not; true when applied. */
export function applyDegree(d: Draft, key: string, path: 'parallel.tp' | 'parallel.cp', n: number): boolean {
  const engine = String(d.get('parallel.engine') ?? 'ddp');
  if (ENGINES_WITH_TP_CP.includes(engine)) {
    d.set(path, n);
    return true;
  }
  const what = path === 'parallel.tp' ? 'tensor' : 'context';
  d.skip(
    key,
    `${n}: llmem models ${what} parallelism with the fsdp2 and Megatron engines, not with ${engine}; not applied`,
  );
  return false;
}
