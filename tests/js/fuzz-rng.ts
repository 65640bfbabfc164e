// Shared by the seeded fuzz tests (tests/js/fuzz-*.test.ts): a deterministic
// generator, the iteration scale (LLMEM_FUZZ_SCALE, set by scripts/fuzz.mjs)
// and a line scripts/fuzz.mjs counts inputs by.

/** xorshift32 in [0, 1): the same sequence on every machine. */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

export function fuzzScale(): number {
  const n = Number(process.env.LLMEM_FUZZ_SCALE ?? '1');
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

export function reportExecs(name: string, count: number): void {
  if (process.env.LLMEM_FUZZ_SCALE) console.log(`fuzz-execs ${name} ${count}`);
}
