// probe/llmem_probe/fields.json: the GPU probe's copy of the core's field table, committed so that
// the probe runs where there is Python and no Node. It must be what the generator writes now.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { expectFresh } from './generated-files.js';

const root = repoRoot();
const FILE = 'probe/llmem_probe/fields.json';

describe(FILE, () => {
  it('matches what scripts/gen-probe-fields.mjs writes from core/fields.def', () => {
    expectFresh('scripts/gen-probe-fields.mjs', FILE);
  });

  it('holds every key of the core with its default, in the core order', async () => {
    const core = await loadCore();
    const fields = JSON.parse(readFileSync(join(root, FILE), 'utf8')).fields as {
      path: string;
      kind: string;
      default?: unknown;
    }[];
    expect(fields.map((f) => f.path)).toEqual(core.fields.map((f) => f.path));
    const defaults = core.defaults() as Record<string, unknown>;
    for (const f of fields) {
      if (f.kind === 'group' || f.kind === 'text') continue;
      const value = f.path.split('.').reduce<unknown>((node, k) => (node as Record<string, unknown>)[k], defaults);
      expect(f.default, f.path).toEqual(value);
    }
  });
});
