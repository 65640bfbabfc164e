// The shared vectors through the wasm build: the same numbers as the C tests.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { metricOf, readVectors } from './vectors.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe('shared vectors (tests/vectors/core.txt)', async () => {
  const c = await loadCore();
  const vectors = readVectors(repoRoot(), (p) => c.field(p)?.kind === 'set');
  it('has the upstream vectors', () => expect(vectors.length).toBeGreaterThanOrEqual(40));
  for (const v of vectors) {
    it(v.name, () => {
      const r = core.estimate(v.config);
      if (!r.ok) throw new Error(r.error.message);
      const got = metricOf(r, v.metric);
      if (v.tolerance === 0) expect(got).toBe(v.expected);
      else expect(Math.abs(got - v.expected)).toBeLessThanOrEqual(v.tolerance * Math.abs(v.expected));
    });
  }
});
