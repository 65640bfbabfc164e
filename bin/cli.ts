// `npx llmem`: the wasm core from the command line.
import { readFileSync } from 'node:fs';
import type { Config, EstimateResult, Json, RankResult } from '../wasm/llmem.js';
import { CATEGORIES } from '../wasm/llmem.js';
import { loadCore } from '../wasm/node.js';
import { GPUS, MODELS } from '../frontend/config/catalog.js';
import { merge, resolveConfig } from '../frontend/config/resolve.js';
import { compare, readMeasurement } from '../frontend/config/compare.js';

const USAGE = `llmem — per-GPU training memory, simulated step by step

usage:
  llmem estimate <config.json | -> [--json] [--timeline] [--set key.path=value ...]
  llmem compare <config.json> <measured.json> [--json]
                                 estimate next to a measurement (probe output or an accuracy case);
                                 the config may be left out when measured.json carries it
  llmem defaults                 print the config every omitted key stands for
  llmem models                   list the model presets (model.preset)
  llmem gpus                     list the GPU catalog (hardware.gpu)
  llmem help

The config is config v1 (README: "Config format"). --set overrides one key,
e.g. --set parallel.tp=2 --set training.recompute=full --set model.preset=llama-3.1-70b.
Exit status: 0 ok, 1 bad input (the message names the key), 2 usage error.`;

export const GIB = 2 ** 30;
const gib = (b: number) => `${(b / GIB).toFixed(2)} GiB`;

class UsageError extends Error {}

function readJson(arg: string, what: string): unknown {
  const text = arg === '-' ? readFileSync(0, 'utf8') : readFileSync(arg, 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError('', `${arg === '-' ? 'standard input' : arg}: ${what} is not valid JSON (${(e as Error).message})`);
  }
}

function readConfig(arg: string | undefined): unknown {
  if (!arg) throw new UsageError('estimate needs a config file, or - for standard input');
  const text = arg === '-' ? readFileSync(0, 'utf8') : readFileSync(arg, 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError('', `${arg === '-' ? 'standard input' : arg}: not valid JSON (${(e as Error).message})`);
  }
}

class InputError extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

/** "a.b.c=value" -> {a:{b:{c:value}}}; the value is JSON when it parses, else a string. */
export function setOption(spec: string): Config {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set needs key.path=value, got "${spec}"`);
  const path = spec.slice(0, eq).split('.');
  const raw = spec.slice(eq + 1);
  let value: Json;
  try {
    value = JSON.parse(raw) as Json;
  } catch {
    value = raw;
  }
  let node: Json = value;
  for (let i = path.length - 1; i >= 0; i--) node = { [path[i]]: node };
  return node as Config;
}

function rankRow(r: RankResult): string {
  return `  stage ${String(r.stage).padStart(3)}  ${gib(r.peak_allocated_bytes).padStart(12)}  ${gib(r.peak_reserved_bytes).padStart(12)}  ${gib(r.device_used_bytes).padStart(12)}  ${String(r.layers).padStart(4)} layers  peak in ${r.peak_phase}`;
}

export function formatText(config: Config, res: EstimateResult): string {
  const model = (config.model as Config | undefined)?.name ?? (config.model as Config | undefined)?.preset ?? 'custom model';
  const p = res.per_gpu;
  const lines = [
    `model        ${model}: ${(res.params.total / 1e9).toFixed(3)} B parameters (${(res.params.trainable / 1e9).toFixed(3)} B trainable, ${(res.params.per_gpu / 1e9).toFixed(3)} B on the most-loaded GPU)`,
    `per GPU      peak allocated ${gib(p.peak_allocated_bytes)} | reserved ${gib(p.peak_reserved_bytes)} | nvidia-smi ${gib(p.device_used_bytes)} of ${gib(res.capacity_bytes)}`,
    `fits         ${res.fits ? 'yes' : 'NO'} (${(res.utilization * 100).toFixed(1)} % of GPU memory)`,
    `peak at      ${p.peak_at}`,
    `breakdown at the peak:`,
    ...CATEGORIES.map((c) => `  ${c.padEnd(18)} ${gib(p.breakdown_bytes[c]).padStart(12)}`),
  ];
  if (res.ranks.length > 1) {
    lines.push('pipeline stages:   allocated      reserved    nvidia-smi');
    for (const r of res.ranks) lines.push(rankRow(r));
  }
  if (res.host.cpu_bytes > 0) lines.push(`host memory  ${gib(res.host.cpu_bytes)} per GPU process (offload)`);
  if (res.host.nvme_bytes > 0) lines.push(`NVMe         ${gib(res.host.nvme_bytes)} per GPU process (offload)`);
  for (const w of res.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      case 'models':
        for (const m of MODELS) console.log(`${m.id.padEnd(24)} ${m.name}`);
        return 0;
      case 'gpus':
        for (const g of GPUS) console.log(`${g.id.padEnd(22)} ${String(g.memory_gib).padStart(5)} GiB  ${g.name}`);
        return 0;
      case 'defaults': {
        const core = await loadCore();
        console.log(JSON.stringify(core.defaults(), null, 2));
        return 0;
      }
      case 'estimate': {
        let file: string | undefined;
        let json = false, timeline = false;
        let overrides: Config = {};
        for (let i = 0; i < rest.length; i++) {
          const a = rest[i];
          if (a === '--json') json = true;
          else if (a === '--timeline') timeline = true;
          else if (a === '--set') overrides = merge(overrides, setOption(rest[++i] ?? ''));
          else if (a.startsWith('--set=')) overrides = merge(overrides, setOption(a.slice(6)));
          else if (a.startsWith('--')) throw new UsageError(`unknown option ${a}`);
          else if (file === undefined) file = a;
          else throw new UsageError(`unexpected argument ${a}`);
        }
        const raw = readConfig(file);
        if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
          throw new InputError('', 'the config must be a JSON object');
        const resolved = resolveConfig(merge(raw as Config, overrides));
        if (!resolved.ok) throw new InputError(resolved.error.path, resolved.error.message);
        const core = await loadCore();
        const res = core.estimate(resolved.config, { timeline });
        if (!res.ok) {
          if (json) console.log(JSON.stringify(res, null, 2));
          throw new InputError(res.error.path, res.error.message);
        }
        console.log(json ? JSON.stringify(res, null, 2) : formatText(resolved.config, res));
        return 0;
      }
      case 'compare': {
        const json = rest.includes('--json');
        const files = rest.filter((a) => a !== '--json');
        if (files.length < 1 || files.length > 2) throw new UsageError('compare needs [config.json] measured.json');
        const measuredDoc = readJson(files[files.length - 1], 'the measurement');
        const m = readMeasurement(measuredDoc);
        if ('error' in m) throw new InputError('', `llmem compare: ${m.error}`);
        const embedded = (measuredDoc as { config?: unknown }).config;
        const rawConfig = files.length === 2 ? readJson(files[0], 'the config') : embedded;
        if (rawConfig === undefined) throw new UsageError('compare needs the config: give config.json first');
        const resolved = resolveConfig(rawConfig);
        if (!resolved.ok) throw new InputError(resolved.error.path, resolved.error.message);
        const core = await loadCore();
        const res = core.estimate(resolved.config, { timeline: true });
        if (!res.ok) throw new InputError(res.error.path, res.error.message);
        const rows = compare(res, m);
        if (json) {
          console.log(JSON.stringify({ ok: true, rows }, null, 2));
          return 0;
        }
        console.log(`${'reading'.padEnd(34)} ${'estimated'.padStart(12)} ${'measured'.padStart(12)}   error`);
        for (const r of rows)
          console.log(`${r.name.padEnd(34)} ${gib(r.estimated).padStart(12)} ${(r.measured === null ? 'n/a' : gib(r.measured)).padStart(12)}   ${r.error === null ? '' : `${r.error >= 0 ? '+' : ''}${(r.error * 100).toFixed(1)} %`}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`llmem: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (e instanceof InputError) {
      console.error(`llmem: ${e.message}`);
      return 1;
    }
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') {
      console.error(`llmem: cannot read ${err.path}`);
      return 1;
    }
    throw e;
  }
}
