#!/usr/bin/env node
// npx llmem: builds the wasm core and the compiled CLI on first use, then runs it.
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'build/js/bin/cli.js');
if (!existsSync(join(root, 'build/wasm/llmem_core.mjs')) || !existsSync(cli)) {
  console.error('llmem: first run, building the core (npm run build:core && npm run build:js) ...');
  execFileSync('npm', ['run', '--silent', 'build:core'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('npm', ['run', '--silent', 'build:js'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
const { main } = await import(pathToFileURL(cli).href);
process.exitCode = await main(process.argv.slice(2));
