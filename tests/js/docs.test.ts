// The documents that are generated or computed: docs/config.md's key table from the core's
// field table, docs/worked-examples.txt from docs/formulas_check.py.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { expectFresh } from './generated-files.js';

const root = repoRoot();
const committed = () => readFileSync(join(root, 'docs/config.md'), 'utf8');

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe('docs/config.md', () => {
  it('matches what the generator writes from core/fields.def', () => {
    expectFresh('scripts/gen-config-doc.mjs', 'docs/config.md', 'it rewrites the key table');
  });

  it('has one table row per key of the core, in the core order', () => {
    const rows = committed()
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => /^\| `([^`]+)`/.exec(l)![1]);
    expect(rows).toEqual(core.fields.map((f) => f.path));
  });
});

describe('docs/worked-examples.txt', () => {
  it('is what docs/formulas_check.py prints (the numbers memory-model.md §12 quotes)', () => {
    const printed = execFileSync('python3', [join(root, 'docs/formulas_check.py')], { encoding: 'utf8' });
    expect(printed).toBe(readFileSync(join(root, 'docs/worked-examples.txt'), 'utf8'));
  });
});
