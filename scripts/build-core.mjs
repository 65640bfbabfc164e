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
mkdirSync(join(root, 'build/wasm'), { recursive: true });
for (const f of ['llmem_core.mjs', 'llmem_core.wasm'])
  copyFileSync(join(root, 'build/wasm-cmake', f), join(root, 'build/wasm', f));
console.log('built build/wasm/llmem_core.mjs and llmem_core.wasm');
