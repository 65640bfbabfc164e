#!/usr/bin/env node
// The `llmem` command: runs the compiled CLI (build/js/bin/cli.js) on the wasm core
// (build/wasm/llmem_core.mjs). The npm package ships both, built by `prepack`, and never
// builds anything; in a source checkout (core/ present) the first run builds them.
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'build/js/bin/cli.js');
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  console.log(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  process.exit(0);
}
const needed = ['build/wasm/llmem_core.mjs', 'build/wasm/llmem_core.wasm', 'build/js/bin/cli.js'];
const missing = needed.find((f) => !existsSync(join(root, f)));
if (missing) {
  if (!existsSync(join(root, 'core'))) {
    console.error(`llmem: this install lacks ${missing} (the package is incomplete: reinstall it)`);
    process.exit(2);
  }
  console.error(
    'llmem: first run in a source checkout, building the core (npm run build:core && npm run build:js) ...',
  );
  execFileSync('npm', ['run', '--silent', 'build:core'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('npm', ['run', '--silent', 'build:js'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
const { main } = await import(pathToFileURL(cli).href);
process.exitCode = await main(args);
