// node scripts/flat-input.mjs <config.json | case.json> -o <input.f64>: the core's input for a config (or the
// "config" of a measured case or of the probe's result), resolved as the CLI resolves it (preset, GPU) and written as the llmem_input
// struct's doubles, for `llmem_trace_replay --model` (tools/llmem_trace_replay.c). Needs `npm run build:js`.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [file, flag, out] = process.argv.slice(2);
if (!file || flag !== '-o' || !out) {
  console.error('usage: node scripts/flat-input.mjs <config.json | case.json> -o <input.f64>');
  process.exit(2);
}
let raw;
try {
  raw = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  console.error(`flat-input: cannot read ${file}: ${e.message}`);
  process.exit(2);
}
const { resolveConfig } = await import(join(root, 'build/js/frontend/config/resolve.js'));
const { loadCore } = await import(join(root, 'build/js/wasm/node.js'));
// a measured case ({config, expect}) or the probe's result ({ok, config, measured}) carries its config
const wrapped = raw && typeof raw.config === 'object' && (raw.expect !== undefined || raw.measured !== undefined);
const resolved = resolveConfig(wrapped ? raw.config : raw);
const core = await loadCore();
// the core's own checks first (a value out of range flattens, then fails the estimate)
const checked = resolved.ok ? core.estimate(resolved.config) : resolved;
const flat = checked.ok ? core.flatten(resolved.config) : checked.error;
if (!(flat instanceof Float64Array)) {
  console.error(`flat-input: ${flat.message}`);
  process.exit(1);
}
writeFileSync(out, new Uint8Array(flat.buffer, flat.byteOffset, flat.byteLength));
