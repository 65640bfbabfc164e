// wasm/generated.ts (the typed boundary: config-v1 type, field paths, the core's lists, the
// members of the result structs) is what scripts/gen-boundary.mjs writes from the built core.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ABI_VERSION, CATEGORIES, type ConfigV1, FIELDS, type FieldPath, LAYOUT_CHECK } from '../../wasm/llmem.js';
import { openView, type StructLayout } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { expectFresh } from './generated-files.js';

const root = repoRoot();

describe('wasm/generated.ts', () => {
  it('matches what the generator writes from the built core', () => {
    expectFresh('scripts/gen-boundary.mjs', 'wasm/generated.ts');
  });

  it('holds the field table the wrapper reads from the core', async () => {
    const core = await loadCore();
    expect(core.fields).toEqual(FIELDS);
    const r = core.estimate({});
    expect(r.ok && Object.keys(r.per_gpu.breakdown_bytes)).toEqual([...CATEGORIES]);
  });

  it('refuses a core built from other structs than the offsets (LAYOUT) or of another ABI', () => {
    const core = (abi: number, check: number) =>
      ({ _llmem_abi_version: () => abi, _llmem_layout_check: () => check }) as unknown as Parameters<
        typeof openView
      >[0];
    expect(() => openView(core(ABI_VERSION, LAYOUT_CHECK + 1))).toThrow(/does not match the wrapper/);
    expect(() => openView(core(ABI_VERSION + 1, LAYOUT_CHECK))).toThrow(/does not match the wrapper/);
  });

  it('types keys and offsets at compile time', () => {
    const path: FieldPath = 'training.micro_batch';
    const config: ConfigV1 = { version: 1, training: { micro_batch: 2, recompute: 'full' }, model: { moe: null } };
    // @ts-expect-error: a misspelt key is a compile error
    const bad: ConfigV1 = { training: { micro_batchh: 2 } };
    // @ts-expect-error: so is a value outside an enum
    const worse: ConfigV1 = { training: { recompute: 'sometimes' } };
    // @ts-expect-error: and a struct member the core does not report
    const offset: StructLayout['result']['peak_bytes'] = 0;
    expect([path, config, bad, worse, offset]).toHaveLength(5);
  });

  // The target: the hand-written wrapper (everything in wasm/*.ts but generated.ts and term-texts.ts) under 250 lines of
  // code, counted as cloc does: comments and blank lines excluded.
  it('leaves under 250 lines of code to write by hand', () => {
    const code = (text: string) =>
      text
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .split('\n')
        .filter((l) => l.trim() && !l.trim().startsWith('//')).length;
    const files = ['core.ts', 'views.ts', 'node.ts', 'llmem.ts', 'term-registry.ts'];
    const lines = files.reduce((n, f) => n + code(readFileSync(join(root, 'wasm', f), 'utf8')), 0);
    expect(
      readdirSync(join(root, 'wasm'))
        .filter((f) => f.endsWith('.ts') && f !== 'generated.ts' && f !== 'term-texts.ts')
        .sort(),
    ).toEqual([...files].sort());
    expect(lines).toBeLessThan(250);
  });
});
