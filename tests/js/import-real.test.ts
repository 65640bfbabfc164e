// Real framework files, verbatim from their repositories (tests/fixtures/real/README.md):
// each imports to exactly the settings its manifest lists, and reports as not
// applied exactly the lines its manifest lists.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core, Json } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { IMPORT_KINDS, importConfig, type ImportKind } from '../../frontend/config/importers/index.js';
import { flatten } from './import-helpers.js';

interface Entry {
  file: string;
  repository: string;
  path: string;
  commit: string;
  world_size?: number;
  also?: string;
  expect?: Record<string, Json>;
  not_applied?: string[];
  error?: string;
}

const root = join(repoRoot(), 'tests/fixtures/real');
const kinds = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, 'manifest.json'))) : [];

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe('real framework files', () => {
  it('every folder is an importer kind', () => {
    for (const kind of kinds) expect(IMPORT_KINDS).toContain(kind);
  });
  for (const kind of kinds) {
    const manifest = JSON.parse(readFileSync(join(root, kind, 'manifest.json'), 'utf8')) as { files: Entry[] };
    describe(kind, () => {
      it('every file in the folder is in the manifest', () => {
        const listed = new Set(manifest.files.flatMap((e) => (e.also ? [e.file, e.also] : [e.file])));
        const present = readdirSync(join(root, kind)).filter((f) => f !== 'manifest.json');
        expect(present.filter((f) => !listed.has(f))).toEqual([]);
      });
      for (const entry of manifest.files) {
        it(`${entry.file} (${entry.repository} ${entry.path})`, () => {
          expect(entry.commit).toMatch(/^[0-9a-f]{40}$/);
          const text = readFileSync(join(root, kind, entry.file), 'utf8');
          const also = entry.also ? readFileSync(join(root, kind, entry.also), 'utf8') : undefined;
          const r = importConfig(kind as ImportKind, text, { worldSize: entry.world_size, also });
          if (entry.error !== undefined) {
            expect('error' in r ? r.error.message : 'imported without an error').toContain(entry.error);
            return;
          }
          if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
          expect(flatten(r.config as Json)).toEqual(entry.expect ?? {});
          const listed = entry.not_applied ?? [];
          const unmatched = r.unsupported.filter((line) => !listed.some((s) => line.includes(s)));
          expect(unmatched, 'reported as not applied but not in the manifest').toEqual([]);
          const unseen = listed.filter((s) => !r.unsupported.some((line) => line.includes(s)));
          expect(unseen, 'in the manifest but not reported').toEqual([]);
          const resolved = resolveConfig(r.config);
          if (!resolved.ok) throw new Error(resolved.error.message);
          const res = core.estimate(resolved.config);
          if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
        });
      }
    });
  }
});
