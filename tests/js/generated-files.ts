// The committed generated files (wasm/generated.ts, wasm/profile-sources.json, docs/config.md,
// probe/llmem_probe/fields.json): each must be what its scripts/gen-*.mjs writes now (`--print`).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { repoRoot } from '../../wasm/node.js';

/** Fails, naming the refresh, unless `file` (from the repository root) is what `script --print` writes. */
export function expectFresh(script: string, file: string, what = 'it rewrites the file'): void {
  const root = repoRoot();
  const generated = execFileSync(process.execPath, [join(root, script), '--print'], { encoding: 'utf8' });
  const committed = readFileSync(join(root, file), 'utf8');
  expect(committed === generated, `${file} is out of date: run \`npm run build:core\` (${what}) and commit it`).toBe(
    true,
  );
}
