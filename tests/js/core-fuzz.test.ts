// Random configs through the wrapper and the core: nothing throws, every
// failure names a key, every success is finite and consistent (a seeded
// fuzz of the config decoder; libFuzzer covers the C entry point).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core, Json } from '../../wasm/llmem.js';
import { CATEGORIES } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

function rng(seed: number) {
  return () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
}

describe('config decoder fuzz', () => {
  it('survives 3,000 random configs', () => {
    const rand = rng(20261121);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const fields = core.fields.filter((f) => f.kind !== 'group');
    const junk: Json[] = [
      null,
      true,
      false,
      0,
      -1,
      1.5,
      1e300,
      -1e-9,
      'x',
      '',
      [],
      ['q', 'nope'],
      {},
      { a: 1 },
      Number.MAX_SAFE_INTEGER,
    ];
    let ok = 0,
      failed = 0;
    for (let i = 0; i < 3000; i++) {
      const config: Config = {};
      const n = 1 + Math.floor(rand() * 6);
      for (let k = 0; k < n; k++) {
        const f = pick(fields);
        let value: Json;
        const r = rand();
        if (r < 0.5 && f.kind === 'enum') value = pick(f.values);
        else if (r < 0.5 && f.kind === 'set') value = f.values.filter(() => rand() < 0.5);
        else if (r < 0.5 && f.kind === 'list')
          value = rand() < 0.5 ? [pick(f.values), pick(f.values)] : `3*${pick(f.values)}`;
        else if (r < 0.5 && (f.kind === 'int' || f.kind === 'num')) value = pick([1, 2, 4, 8, 64, 1024, 4096]);
        else if (r < 0.5 && f.kind === 'bool') value = rand() < 0.5;
        else value = pick(junk);
        const parts = (rand() < 0.05 ? 'model.nonexistent_key' : f.path).split('.');
        let node = config;
        for (const p of parts.slice(0, -1)) {
          if (typeof node[p] !== 'object' || node[p] === null || Array.isArray(node[p])) node[p] = {};
          node = node[p] as Config;
        }
        node[parts[parts.length - 1]] = value;
      }
      const res = core.estimate(config, { timeline: rand() < 0.2 });
      if (!res.ok) {
        failed++;
        expect(res.error.message.length).toBeGreaterThan(5);
        expect(typeof res.error.path).toBe('string');
        continue;
      }
      ok++;
      const p = res.per_gpu;
      const sum = CATEGORIES.reduce((s, c) => s + p.breakdown_bytes[c], 0);
      for (const c of CATEGORIES) expect(Number.isFinite(p.breakdown_bytes[c])).toBe(true);
      expect(Math.abs(sum - p.peak_allocated_bytes)).toBeLessThanOrEqual(1e-9 * p.peak_allocated_bytes + 1);
      expect(p.peak_reserved_bytes).toBeGreaterThanOrEqual(p.peak_allocated_bytes);
      expect(p.device_used_bytes).toBeGreaterThanOrEqual(p.peak_reserved_bytes);
    }
    expect(ok).toBeGreaterThan(250); // about a tenth: most random values of most keys are out of range
    expect(failed).toBeGreaterThan(300);
  });
});
