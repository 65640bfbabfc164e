// Loads the wasm core under Node (CLI, tests, benchmarks).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Core, type CoreFactory } from './llmem.js';
import './term-texts.js'; // the terms' labels and formulas, which the wasm build leaves out

/** The repository root, or the installed package's folder: the first folder upwards holding package.json. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('llmem: cannot find the repository root');
    dir = up;
  }
}

let cached: Promise<Core> | undefined;

export function loadCore(): Promise<Core> {
  cached ??= (async () => {
    const file = join(repoRoot(), 'build/wasm/llmem_core.mjs'),
      wasm = join(repoRoot(), 'build/wasm/llmem_core.wasm');
    for (const f of [file, wasm])
      if (!existsSync(f)) throw new Error(`llmem: ${f} is missing; run \`npm run build:core\``);
    const mod = (await import(pathToFileURL(file).href)) as { default: CoreFactory };
    return Core.load(mod.default, { wasmBinary: readFileSync(wasm) });
  })();
  return cached;
}
