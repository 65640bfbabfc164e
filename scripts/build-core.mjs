// Builds the wasm core with Debian's Emscripten into build/wasm/llmem_core.mjs (the glue) and llmem_core.wasm.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' };
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
try {
  execFileSync('emcc', ['--version'], { env, stdio: 'ignore' });
} catch {
  console.error('emcc not found: install Emscripten with `apt-get install -y emscripten` (README: set-up)');
  process.exit(1);
}
run('emcmake', ['cmake', '-S', '.', '-B', 'build/wasm-cmake', '-DCMAKE_BUILD_TYPE=Release']);
run('cmake', ['--build', 'build/wasm-cmake', '-j2']);
// emcc's link runs wasm-opt -Oz once; iterated to a fixed point (--converge) it takes ~0.4 KB gzip more off the
// page's first load (scripts/first-load.mjs). Binaryen comes with Debian's emscripten; without it the binary
// stays as emcc left it.
const hasWasmOpt = (() => {
  try {
    execFileSync('wasm-opt', ['--version'], { env, stdio: 'ignore' });
    return true;
  } catch {
    console.error('wasm-opt not found: the core is left as emcc linked it');
    return false;
  }
})();
mkdirSync(join(root, 'build/wasm'), { recursive: true });
copyFileSync(join(root, 'build/wasm-cmake/llmem_core.mjs'), join(root, 'build/wasm/llmem_core.mjs'));
const linked = 'build/wasm-cmake/llmem_core.wasm';
if (hasWasmOpt) {
  // from the linker's output into build/wasm (not in place: a rebuild that links nothing anew optimises the same
  // input again, so every build ships the same binary). The module defines its memory (zero-filled) and its static
  // data starts at GLOBAL_BASE 1024 (emscripten src/settings.js), so the first 1 KiB is never addressed: constant
  // offsets fold into loads and stores
  run('wasm-opt', [
    // the most called functions first (their calls' indices take fewer LEB128 bytes), then -Oz to a fixed point
    '--reorder-functions',
    '-Oz',
    '--converge',
    '--zero-filled-memory',
    '--low-memory-unused',
    '--enable-bulk-memory',
    '--enable-nontrapping-float-to-int',
    linked,
    '-o',
    'build/wasm/llmem_core.wasm',
  ]);
} else copyFileSync(join(root, linked), join(root, 'build/wasm/llmem_core.wasm'));
console.log('built build/wasm/llmem_core.mjs and llmem_core.wasm');
