// `npx llmem`: the wasm core from the command line.
import { impliedByStack, type ProfileLine, withSources } from '../frontend/config/profile.js';
import type {
  Category,
  Config,
  Core,
  EstimateResult,
  Json,
  RankResult,
  RlModel,
  RlPhase,
  RlResult,
  StepTime,
  Suggestion,
} from '../wasm/llmem.js';
import { CATEGORIES, MAX_SWEEP, SEARCH_SWITCHES } from '../wasm/llmem.js';
import { formatGiB as gib, groupDigits, plainArrays } from '../frontend/config/numbers.js';
import { parsePythonJson, setPath } from '../frontend/config/json.js';
import { stepBreakdown } from '../frontend/config/labels.js';
import { layerKinds } from '../frontend/config/layer-kinds.js';

import { loadCore, repoRoot } from '../wasm/node.js';
import { GPUS, MODELS } from '../frontend/config/catalog.js';
import { merge, resolveConfig } from '../frontend/config/resolve.js';
import { compare, readMeasurement } from '../frontend/config/compare.js';
import { type OptionSpec, parseCommandArgs, type Range, wantsHelp } from './args.js';
import {
  type CommandSpec,
  commandHelp,
  findCommand,
  optionOf,
  overview,
  SWITCH_FLAGS,
  unknownCommandMessage,
  usageHint,
} from './commands.js';
import { defaultSpacing, fitAxes, sweepValues, verdictOf } from '../frontend/planner.js';
import { KIND_NOTE, kindsOf, suggestFor } from '../frontend/config/suggest.js';
import { gpuAlternatives } from '../frontend/config/gpu-alternatives.js';
import { jsonDepth, MAX_JSON_DEPTH, readHubConfig, readText, UnreadableError } from './input.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseHubId, type HubRef } from '../frontend/config/hub.js';
import { exportCommand, hfOption, importCommand, ImportInputError, mergeHfConfig } from './import-commands.js';

/** --hf: a file that exists (or a *.json path) is read as config.json; else an org/name[@revision] is fetched from the Hub. */
async function hfFileOrHub(hf: string, base: Config): Promise<Config> {
  if (hf === '-' || existsSync(hf) || /\.json$/i.test(hf)) return hfOption(hf, base);
  const ref = parseHubId(hf);
  if ('error' in ref) throw new UnreadableError(`--hf ${hf}: no such file, and ${ref.error}`);
  return hubOption(hf, ref, base);
}

/** hfOption's import and merge, on the text the Hub sent (a malformed config.json is exit 1, like a file's). */
async function hubOption(id: string, ref: HubRef, base: Config): Promise<Config> {
  const text = await readHubConfig(ref);
  let json: unknown;
  try {
    json = parsePythonJson(text);
  } catch (e) {
    throw new InputError('', `--hf ${id}: the Hub's config.json is not valid JSON (${(e as Error).message})`);
  }
  return mergeHfConfig(checkDepth(json, id, "the Hub's config.json"), id, base);
}

class UsageError extends Error {}
function parseJson(arg: string, what: string): unknown {
  const text = readText(arg);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(
      '',
      `${arg === '-' ? 'standard input' : arg}: ${what} is not valid JSON (${(e as Error).message})`,
    );
  }
}

function checkDepth(value: unknown, arg: string, what: string): unknown {
  if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    throw new InputError(
      '',
      `${arg === '-' ? 'standard input' : arg}: ${what} nests deeper than ${MAX_JSON_DEPTH} levels (config v1 nests 3)`,
    );
  return value;
}

function readJson(arg: string, what: string): unknown {
  return checkDepth(parseJson(arg, what), arg, what);
}

/**
 * The first key of a config file that is not config v1, before any other work. The wrapper's flatten
 * finds unknown keys too, but only in the resolved config, which may no longer hold them: --hf replaces
 * the file's whole model section, and a preset's merge turns a "__proto__" key under model into the
 * object's prototype. The message is flatten's own (it lists the keys allowed there).
 */
function checkKeys(core: Core, value: unknown, prefix = ''): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  for (const key in value) {
    const path = prefix ? `${prefix}.${key}` : key;
    const f = core.field(path);
    if (!f) {
      // the key alone, inside its (known) groups, as an own property even when it is "__proto__"
      let alone: Config = { [key]: null };
      for (const group of prefix ? prefix.split('.').reverse() : []) alone = { [group]: alone };
      const err = core.flatten(alone);
      throw new InputError(path, 'message' in err ? err.message : `${path}: unknown key (see llmem defaults)`);
    }
    if (f.kind === 'group') checkKeys(core, (value as Record<string, unknown>)[key], path);
  }
}

/** A config file: parsed, its keys checked against the core's table, its depth bounded. */
function readConfig(arg: string | undefined, core: Core): unknown {
  if (!arg) throw new UsageError('this command needs a config file, or - for standard input');
  const value = parseJson(arg, 'the config');
  checkKeys(core, value);
  return checkDepth(value, arg, 'the config');
}

class InputError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** "a.b.c=value" -> its path and value; the value is JSON when it parses, else a string. */
function setOption(spec: string): { path: string; value: Json } {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set needs key.path=value, got "${spec}"`);
  const raw = spec.slice(eq + 1);
  try {
    return { path: spec.slice(0, eq), value: JSON.parse(raw) as Json };
  } catch {
    return { path: spec.slice(0, eq), value: raw };
  }
}

/** The --set overrides as one config, a later one merged into the earlier (as into the file). Each path
 * is checked against the core's keys first, so setPath never sees one that is not config v1
 * ("__proto__.x" is refused here, not followed). */
function setOverrides(core: Core, sets: { path: string; value: Json }[]): Config {
  let overrides: Config = {};
  for (const { path, value } of sets) {
    if (!core.field(path)) throw new InputError(path, `--set ${path}: unknown key (see llmem defaults)`);
    const one: Config = {};
    setPath(one, path, value);
    overrides = merge(overrides, one);
  }
  return overrides;
}

/** One stage; `~` marks a reserve from the caching allocator's bound where the headline's is simulated, `≤` a stage not walked (its bound). */
function rankRow(r: RankResult, simulated: boolean, last: number): string {
  const bounded = simulated && !r.reserved_simulated && r.stage > 0 && r.stage < last;
  const atMost = r.peak_bound ? '≤' : '';
  const reserved = `${atMost || (bounded ? '~' : '')}${gib(r.peak_reserved_bytes)}`;
  return `  stage ${String(r.stage).padStart(3)}  ${(atMost + gib(r.peak_allocated_bytes)).padStart(12)}  ${reserved.padStart(12)}  ${(atMost + gib(r.device_used_bytes)).padStart(12)}  ${String(r.layers).padStart(4)} layers${layerKinds(r)}  peak in ${r.peak_phase}`;
}

/** What the training-stack profile set (keys left automatic), one line each, with the framework file. */
function stackLines(config: Config, implied: ProfileLine[]): string[] {
  const rt = (config.runtime ?? {}) as Config;
  const stack = `${String(rt.framework ?? 'generic')}${rt.framework_version ? ` ${String(rt.framework_version)}` : ''}`;
  return implied.map(
    (p, i) => `${i === 0 ? 'stack        ' : '             '}${stack}: ${p.path} = ${String(p.value)} (${p.source})`,
  );
}

const RL_MODEL_LABEL: Record<RlModel, string> = {
  actor: 'actor',
  reference: 'reference',
  reward: 'reward model',
  critic: 'critic',
  rollout_engine: 'rollout engine',
};

/** What dominates an RL phase's peak: its largest model, and that model's largest category. */
function dominant(ph: RlPhase): string {
  const [model, bytes] = (Object.entries(ph.model_bytes) as [RlModel, number][]).reduce((a, b) =>
    b[1] > a[1] ? b : a,
  );
  const [cat] = (Object.entries(ph.breakdown_bytes) as [Category, number][]).reduce((a, b) => (b[1] > a[1] ? b : a));
  return `${RL_MODEL_LABEL[model]} ${gib(bytes)} (largest category: ${cat})`;
}

/** The RL step's phases, one line each: peak allocated, nvidia-smi, what dominates. */
function rlLines(rl: RlResult): string[] {
  const lines = ['RL phases:            allocated    nvidia-smi  dominated by'];
  for (const ph of rl.phases)
    lines.push(
      `  ${ph.phase.padEnd(20)} ${gib(ph.peak_allocated_bytes).padStart(10)} ${gib(ph.device_used_bytes).padStart(12)}  ${dominant(ph)}`,
    );
  if (rl.engine_bytes > 0)
    lines.push(
      `rollout      engine ${gib(rl.engine_bytes)} per GPU while awake; KV cache ${gib(rl.kv_cache_bytes)} (${groupDigits(rl.kv_cache_tokens)} tokens)`,
    );
  return lines;
}

/** The step-time model's answer: the step, tokens/s per GPU, and where the time goes (a ranking aid). */
function stepLines(t: StepTime): string[] {
  const parts = stepBreakdown(t.parts).map((p) => `${p.label} ${Math.round(p.share * 100)} %`);
  return [
    `step time    ${t.step_seconds.toPrecision(3)} s, ${groupDigits(Math.round(t.tokens_per_second_per_gpu))} tokens/s per GPU (a ranking model, not a benchmark)`,
    `             ${parts.join(' · ')}`,
  ];
}

/** What the host line holds, from the keys that put bytes there (core/estimate.c: offload, activations, paged). */
function hostCauses(config: Config, res: EstimateResult): string[] {
  const group = (g: string) => (config[g] ?? {}) as Record<string, Json>;
  const cpu = (v: Json | undefined) => v === 'cpu';
  const rl = JSON.stringify(config.rl ?? {});
  const rlOn = (group('rl').algorithm ?? 'none') !== 'none'; // the RL phases (core/rl.c) offload no activations
  const sleep = ((group('rl').rollout ?? {}) as Record<string, Json>).sleep;
  const causes = [
    cpu(group('parallel').offload_params) && 'offloaded parameters',
    cpu(group('parallel').offload_optimizer) && 'offloaded optimizer states',
    group('training').activation_offload === true && !rlOn && 'offloaded activations',
    /"(param|optimizer)_offload":true/.test(rl) && 'offloaded RL models',
    // vLLM's sleep level 1 backs the engine's weights up to the host (core/rl.c engine_asleep)
    rlOn && sleep === 'level1' && "the sleeping rollout engine's weights",
    // the paged optimizer's warning: its states past what the GPU has left count here too
    res.warnings.some((w) => w.startsWith('paged optimizer')) && 'paged optimizer states',
  ].filter((c): c is string => typeof c === 'string');
  return causes.length > 0 ? causes : ['offload'];
}

export function formatText(
  config: Config,
  res: EstimateResult,
  implied: ProfileLine[] = [],
  step: StepTime | null = null,
): string {
  const model =
    (config.model as Config | undefined)?.name ?? (config.model as Config | undefined)?.preset ?? 'custom model';
  const p = res.per_gpu;
  const lines = [
    `model        ${model}: ${(res.params.total / 1e9).toFixed(3)} B parameters (${(res.params.trainable / 1e9).toFixed(3)} B trainable, ${(res.params.per_gpu / 1e9).toFixed(3)} B on the most-loaded GPU)`,
    `per GPU      peak allocated ${gib(res.peak_allocated.bytes)} | reserved ${gib(p.peak_reserved_bytes)} | nvidia-smi ${gib(p.device_used_bytes)} of ${gib(res.capacity_bytes)}`,
    ...(res.peak_allocated.stage !== p.stage
      ? [
          `             allocated peaks on stage ${res.peak_allocated.stage}; stage ${p.stage} uses the most device memory (the figures below)`,
        ]
      : []),
    p.reserved_simulated
      ? `allocator    ${gib(p.fragmentation_bytes)} cached beside the live tensors when reserved peaks (largest free block ${gib(p.largest_free_block_bytes)}; simulated caching allocator)`
      : `allocator    reserved from the caching allocator's bound (not simulated)`,
    ...stackLines(config, implied),
    `fits         ${res.fits ? 'yes' : 'NO'} (${(res.utilization * 100).toFixed(1)} % of GPU memory)`,
    `peak at      ${p.peak_at}`,
    `breakdown at the peak:`,
    ...CATEGORIES.filter((c) => c !== 'kv_cache' || p.breakdown_bytes[c] > 0).map(
      (c) => `  ${c.padEnd(18)} ${gib(p.breakdown_bytes[c]).padStart(12)}`,
    ),
    ...(res.rl ? rlLines(res.rl) : []),
  ];
  if (res.ranks.length > 1) {
    lines.push('pipeline stages:   allocated      reserved    nvidia-smi');
    const last = res.ranks.length - 1;
    for (const r of res.ranks) lines.push(rankRow(r, p.reserved_simulated, last));
    if (p.reserved_simulated && res.ranks.some((r) => !r.reserved_simulated && r.stage > 0 && r.stage < last))
      lines.push(
        '  ~ reserved from the allocator bound: the same layers as an earlier stage, which holds at least as much',
      );
    const copied = res.ranks.find((r) => r.peak_bound);
    if (copied)
      lines.push(
        `  ≤ not walked (a pipeline this deep): the same layers as stage ${copied.bound_stage} with fewer micro-batches in flight, at most its memory`,
      );
  }
  if (step) lines.push(...stepLines(step));
  if (res.host.cpu_bytes > 0)
    lines.push(`host memory  ${gib(res.host.cpu_bytes)} per GPU process (${hostCauses(config, res).join(', ')})`);
  if (res.host.nvme_bytes > 0) lines.push(`NVMe         ${gib(res.host.nvme_bytes)} per GPU process (offload)`);
  for (const w of res.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n');
}

/** A command's arguments, parsed by its options in the command table (commands.ts). */
function parseFor(command: CommandSpec, args: string[]) {
  return parseCommandArgs(args, command.options, (m) => new UsageError(m));
}

/** The options of a planner command: their values, --json, the flags, and one positional config. */
function parseOptions(
  command: CommandSpec,
  args: string[],
): { file?: string; opts: Record<string, string>; json: boolean; flags: Set<string> } {
  const p = parseFor(command, args);
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument ${p.positionals[1]}`);
  return { file: p.positionals[0], opts: p.values, json: p.flags.has('json'), flags: p.flags };
}

/** A numeric option, with its default and range from the command table (or, where they depend on the
 * run, `over`'s); a usage error names the option and the range. */
function numberOption(
  opts: Record<string, string>,
  option: OptionSpec,
  over: { fallback?: number; range?: Range } = {},
): number {
  const key = option.name;
  const fallback = over.fallback ?? option.default;
  const range = over.range ?? option.range;
  const raw = opts[key];
  if (raw === undefined) {
    if (fallback === undefined) throw new UsageError(`--${key} is required`);
    return fallback;
  }
  const v = raw.trim() === '' ? NaN : Number(raw);
  const allowed = range
    ? `${range.whole ? 'a whole number' : 'a number'} from ${range.min} to ${range.below ? `below ${range.max}` : range.max}`
    : 'a finite number';
  const ok =
    Number.isFinite(v) &&
    (!range ||
      (v >= range.min && (range.below ? v < range.max : v <= range.max) && (!range.whole || Number.isInteger(v))));
  if (!ok) throw new UsageError(`--${key} must be ${allowed}, not "${raw}"`);
  return v;
}

async function plannerCommand(spec: CommandSpec, args: string[]): Promise<number> {
  const command = spec.name;
  const { file, opts, json, flags } = parseOptions(spec, args);
  const option = (name: string) => optionOf(spec, name);
  const core = await loadCore();
  const raw = readConfig(file, core);
  const resolved = resolveConfig(raw);
  if (!resolved.ok) throw new InputError(resolved.error.path, resolved.error.message);
  const config = resolved.config;
  const base = core.estimate(config);
  if (!base.ok) throw new InputError(base.error.path, base.error.message);
  const fail = (e: { path: string; message: string }) => {
    throw new InputError(e.path, e.message);
  };
  if (command === 'sweep') {
    const axis = opts.axis;
    if (!axis) throw new UsageError('sweep needs --axis key.path');
    const from = numberOption(opts, option('from')),
      to = numberOption(opts, option('to'));
    if (!(to >= from)) throw new UsageError(`--to must be at least --from`);
    const field = core.field(axis);
    const integer = field?.kind === 'int';
    let values: number[] = [];
    if (opts.step !== undefined) {
      const step = numberOption(opts, option('step'));
      if (!(step > 0)) throw new UsageError('--step must be positive');
      if ((to - from) / step + 1 > MAX_SWEEP)
        throw new UsageError(
          `--from, --to and --step give more than ${MAX_SWEEP} points (a sweep takes at most ${MAX_SWEEP})`,
        );
      for (let v = from; v <= to; v += step) values.push(v);
    } else {
      const n = numberOption(opts, option('points'));
      const v = sweepValues(from, to, n, defaultSpacing(from, to), integer);
      if (typeof v === 'string') throw new UsageError(`sweep: ${v}`);
      values = v;
    }
    const free = numberOption(opts, option('free'));
    const swept = core.sweep(config, axis, values);
    if (!Array.isArray(swept)) return fail(swept);
    // the page's notion of fitting: the headroom ("Keep free") decides 'fits' from 'tight'
    const points = swept.map((p) =>
      p.ok ? { ...p, verdict: verdictOf(p.fits, p.device_used_bytes, p.capacity_bytes, free) } : p,
    );
    if (json) {
      console.log(JSON.stringify({ ok: true, axis, free_fraction: free, points }, null, 2));
      return 0;
    }
    const VERDICT = { fits: 'yes', tight: 'tight (under the headroom)', no: 'no' };
    console.log(
      `${axis.padEnd(26)} ${'allocated'.padStart(12)} ${'reserved'.padStart(12)} ${'nvidia-smi'.padStart(12)}  fits (of ${gib(base.capacity_bytes)}, keeping ${(free * 100).toFixed(0)} % free)`,
    );
    for (const p of points)
      console.log(
        'verdict' in p
          ? `${String(p.value).padEnd(26)} ${gib(p.peak_allocated_bytes).padStart(12)} ${gib(p.peak_reserved_bytes).padStart(12)} ${gib(p.device_used_bytes).padStart(12)}  ${VERDICT[p.verdict]}`
          : `${String(p.value).padEnd(26)} invalid: ${p.error}`,
      );
    return 0;
  }
  if (command === 'suggest') return suggestCommand(spec, core, config, opts, json, fail);
  if (command === 'fit') {
    const free = numberOption(opts, option('free'));
    const known = fitAxes(config);
    const axes = opts.axis
      ? [known.find((a) => a.path === opts.axis) ?? { path: opts.axis, step: 1, hi: 4096 }]
      : known;
    const out: Record<string, number> = {};
    for (const axis of axes) {
      const hi = numberOption(opts, option('max'), {
        fallback: axis.hi,
        range: { min: axis.step, max: 1e9, whole: true },
      });
      const best = core.largestFit(config, axis.path, { lo: axis.step, hi, step: axis.step, free_fraction: free });
      if (typeof best !== 'number') return fail(best);
      out[axis.path] = best;
    }
    if (json) console.log(JSON.stringify({ ok: true, free_fraction: free, largest: out }, null, 2));
    else
      for (const [axis, v] of Object.entries(out))
        console.log(
          `largest ${axis} that leaves ${(free * 100).toFixed(0)} % free: ${v === 0 ? 'none (even the smallest does not fit)' : v}`,
        );
    return 0;
  }
  const gpus = numberOption(opts, option('gpus'));
  const top = numberOption(opts, option('top'));
  const res = core.search(config, {
    gpus,
    global_batch: numberOption(opts, option('global-batch')),
    free_fraction: numberOption(opts, option('free')),
    max_micro_batch: numberOption(opts, option('max-micro-batch')),
    ...Object.fromEntries(SWITCH_FLAGS.map((s) => [s.key, flags.has(s.flag) !== SEARCH_SWITCHES[s.key]])),
  });
  if (!('layouts' in res)) return fail(res);
  if (res.global_batch > 0 && res.global_batch < gpus && !json)
    console.log(
      `note: a global batch of ${res.global_batch} samples allows data parallelism over at most ${res.global_batch} of ${gpus} GPUs: every layout needs tp x pp x cp >= ${Math.ceil(gpus / res.global_batch)} (set training.global_batch or --global-batch to the run's batch)`,
    );
  const shown = res.layouts.slice(0, top);
  if (json) {
    console.log(JSON.stringify({ ok: true, ...res, layouts: shown }, null, 2));
    return 0;
  }
  if (res.layouts.length === 0) {
    console.log(
      `${res.candidates} layouts enumerated, ${res.valid} valid, ${res.fitting} fit: ${res.empty_reason ?? 'no layout'}`,
    );
    console.log('left out, by reason:');
    for (const r of res.rejected) console.log(`  ${String(r.count).padStart(8)}  ${r.reason}`);
    return 0;
  }
  console.log(
    `${res.candidates} layouts enumerated, ${res.valid} valid, ${res.fitting} fit; the fastest by the step-time model (a ranking aid, not a promise):`,
  );
  // an RL run: the rollout engine's TP is the layout's other choice (its step time is the actor update's)
  const rl = shown.some((l) => l.rollout_tp > 0);
  const rolloutTp = (v: string | number) => (rl ? ` ${String(v).padStart(10)}` : '');
  console.log(
    `  ${'dp'.padStart(5)} ${'tp'.padStart(3)} ${'pp'.padStart(3)} ${'vpp'.padStart(3)} ${'cp'.padStart(3)} ${'ep'.padStart(3)} ${'mb'.padStart(3)} ${'ga'.padStart(4)}${rolloutTp('rollout tp')}  ${'recompute'.padEnd(10)} ${'sharding'.padEnd(30)} ${'nvidia-smi'.padStart(11)} ${'step s'.padStart(8)} ${'tok/s/GPU'.padStart(10)}`,
  );
  for (const l of shown) {
    const p = l.patch.parallel as Record<string, string | number | boolean>;
    const t = l.patch.training as Record<string, string | number>;
    const engine = String(p.engine ?? (config.parallel as Record<string, unknown> | undefined)?.engine ?? '');
    const sharding =
      (p.engine ? `${engine} ` : '') +
      (engine.startsWith('fsdp')
        ? String(p.fsdp_strategy)
        : p.zero_stage
          ? `zero-${p.zero_stage}`
          : p.distributed_optimizer
            ? 'distributed optimizer'
            : '') +
      (p.offload_optimizer && p.offload_optimizer !== 'none' ? ' +offload' : '');
    console.log(
      `${l.pareto ? '*' : ' '} ${String(l.dp).padStart(5)} ${String(l.tp).padStart(3)} ${String(l.pp).padStart(3)} ${String(l.vpp).padStart(3)} ${String(l.cp).padStart(3)} ${String(l.ep).padStart(3)} ${String(l.micro_batch).padStart(3)} ${String(l.grad_accum).padStart(4)}${rolloutTp(l.rollout_tp)}  ${String(t.recompute).padEnd(10)} ${sharding.padEnd(30)} ${gib(l.device_used_bytes).padStart(11)} ${l.step_seconds.toFixed(2).padStart(8)} ${Math.round(l.tokens_per_second_per_gpu).toString().padStart(10)}`,
    );
  }
  console.log('* on the Pareto front (no layout is both faster and smaller)');
  if (rl)
    console.log(
      "RL run: the rollout engine's TP varies; step time is the actor update's (rollout time is not modelled)",
    );
  return 0;
}

const MARK: Record<string, string> = { numerics: '°', method: '*', workload: '†', gpus: '' };

function suggestCommand(
  spec: CommandSpec,
  core: Core,
  config: Config,
  opts: Record<string, string>,
  json: boolean,
  fail: (e: { path: string; message: string }) => never,
): number {
  const option = (name: string) => optionOf(spec, name);
  const free = numberOption(opts, option('free'));
  const top = numberOption(opts, option('top'));
  const base = core.estimate(config);
  const res = suggestFor(core, config, free, base.ok ? gpuAlternatives(config, base.capacity_bytes) : []);
  if (!('suggestions' in res)) return fail(res);
  const others = res.suggestions.filter((s) => s.kind !== 'gpus').slice(0, top);
  if (json) {
    console.log(JSON.stringify({ ok: true, free_fraction: free, ...res, suggestions: others }, null, 2));
    return 0;
  }
  const pct = (free * 100).toFixed(0);
  const mark = (s: Suggestion) => {
    const m = kindsOf(s)
      .map((k) => MARK[k])
      .join('');
    return m ? `${m} ` : '';
  };
  console.log(
    `${res.base_fits ? 'fits' : 'does not fit'}: ${gib(res.base_device_used_bytes)} of ${gib(res.capacity_bytes)} (nvidia-smi); ` +
      `${res.base_fits ? 'other setups' : 'changes'} that leave ${pct} % free, each verified by its full estimate,\n` +
      `the training kept first, then ranked by step time per token (the step-time model: a ranking aid, not a promise):`,
  );
  if (others.length) {
    console.log(
      `  ${'nvidia-smi'.padStart(11)} ${'host RAM/GPU'.padStart(12)} ${'/node'.padStart(12)} ${'time'.padStart(6)}  change`,
    );
    for (const s of others)
      console.log(
        `  ${gib(s.device_used_bytes).padStart(11)} ${(s.host_cpu_bytes ? gib(s.host_cpu_bytes) : '-').padStart(12)} ${(s.host_cpu_bytes ? gib(s.host_cpu_bytes_per_node) : '-').padStart(12)} ${`x${s.time_ratio.toFixed(2)}`.padStart(6)}  ${mark(s)}${s.words}${s.host_nvme_bytes ? ` (NVMe ${gib(s.host_nvme_bytes)}/GPU)` : ''}`,
      );
  } else console.log('  none found');
  const f = res.fewest;
  console.log(
    f
      ? `fewest GPUs at the same global batch: ${res.fewest_gpus} (${f.words}): ${gib(f.device_used_bytes)}, step time x${(f.step_seconds / res.base_step_seconds).toFixed(2)}`
      : `fewest GPUs at the same global batch: ${res.base_fits ? 'no fewer fit' : 'none found up to 4096'}`,
  );
  const g = res.next_gpu;
  if (g)
    console.log(
      `next GPU model that fits: ${g.id} (${g.name}): ${gib(g.device_used_bytes)} of ${gib(g.capacity_bytes)}, step time x${g.time_ratio.toFixed(2)}`,
    );
  else if (!res.base_fits) console.log('next GPU model that fits: none in the catalog');
  const marks = new Set(others.flatMap(kindsOf));
  const notes = (['numerics', 'method', 'workload'] as const).filter((k) => marks.has(k));
  if (notes.length) console.log(notes.map((k) => `${MARK[k]} ${KIND_NOTE[k]}`).join('; '));
  return 0;
}

/** `llmem <command>` for a name that is none: exit 2, naming the commands there are (no usage follows). */
class UnknownCommand extends UsageError {
  constructor(name: string) {
    super(unknownCommandMessage(name));
  }
}

/** A command that takes no arguments besides --help (defaults, models, gpus). */
function noArguments(spec: CommandSpec, args: string[]): void {
  const p = parseFor(spec, args);
  if (p.positionals.length) throw new UsageError(`unexpected argument ${p.positionals[0]}`);
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // the command the arguments are for, once it is known (a usage error then shows its usage)
  let spec: CommandSpec | undefined;
  try {
    if (command === undefined) {
      console.error(overview());
      return 2;
    }
    if (command === '--help' || command === '-h') {
      console.log(overview());
      return 0;
    }
    if (command === '--version' || command === '-V') {
      console.log((JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string }).version);
      return 0;
    }
    if (command.startsWith('-'))
      throw new UsageError(
        `unknown option ${command} (before a command: --help or --version; llmem --help lists the commands)`,
      );
    spec = findCommand(command);
    if (!spec) throw new UnknownCommand(command);
    if (wantsHelp(rest)) {
      console.log(commandHelp(spec));
      return 0;
    }
    switch (spec.name) {
      case 'help': {
        const p = parseFor(spec, rest);
        if (p.positionals.length > 1) throw new UsageError(`unexpected argument ${p.positionals[1]}`);
        const about = p.positionals[0];
        if (about === undefined) console.log(overview());
        else {
          const other = findCommand(about);
          if (!other) throw new UnknownCommand(about);
          console.log(commandHelp(other));
        }
        return 0;
      }
      case 'models':
        noArguments(spec, rest);
        for (const m of MODELS) {
          console.log(`${m.id.padEnd(24)} ${m.name}`);
          // checkpoints an import matches to this preset by their tensors (models.json same_tensors)
          for (const alias of m.same_tensors ?? []) console.log(`${''.padEnd(24)}   also ${alias.id}`);
        }
        return 0;
      case 'gpus':
        noArguments(spec, rest);
        for (const g of GPUS) console.log(`${g.id.padEnd(22)} ${String(g.memory_gib).padStart(5)} GiB  ${g.name}`);
        return 0;
      case 'defaults': {
        noArguments(spec, rest);
        const core = await loadCore();
        console.log(JSON.stringify(core.defaults(), null, 2));
        return 0;
      }
      case 'estimate': {
        const p = parseFor(spec, rest);
        if (p.positionals.length > 1) throw new UsageError(`unexpected argument ${p.positionals[1]}`);
        const json = p.flags.has('json'),
          timeline = p.flags.has('timeline');
        const hf = p.values.hf;
        // with --hf alone the run is the defaults: the model comes from config.json
        const file = p.positionals[0];
        const sets = (p.repeated.set ?? []).map(setOption);
        const core = await loadCore();
        let raw = file === undefined && hf !== undefined ? { version: 1 } : readConfig(file, core);
        if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
          throw new InputError('', 'the config must be a JSON object');
        const overrides = setOverrides(core, sets);
        if (hf !== undefined) raw = await hfFileOrHub(hf, raw as Config);
        const resolved = resolveConfig(merge(raw as Config, overrides));
        if (!resolved.ok) throw new InputError(resolved.error.path, resolved.error.message);
        const res = core.estimate(resolved.config, { timeline });
        if (!res.ok) {
          if (json) console.log(JSON.stringify(res, null, 2));
          throw new InputError(res.error.path, res.error.message);
        }
        const implied = await withSources(impliedByStack(core, resolved.config));
        // the step time of a training step; an RL step's rollout and log-prob passes are not timed (as on the page)
        const st = res.rl ? null : core.stepTime(resolved.config);
        const step = st && 'step_seconds' in st ? st : null;
        console.log(
          json
            ? JSON.stringify(step ? { ...res, step_time: step } : res, plainArrays, 2)
            : formatText(resolved.config, res, implied, step),
        );
        return 0;
      }
      case 'import':
        return await importCommand(rest, hfFileOrHub);
      case 'export':
        return await exportCommand(rest);
      case 'sweep':
      case 'fit':
      case 'search':
      case 'suggest':
        return await plannerCommand(spec, rest);
      case 'compare': {
        const p = parseFor(spec, rest);
        const json = p.flags.has('json');
        const files = p.positionals;
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
          console.log(
            JSON.stringify({ ok: true, origin: m.origin, fake_process_group: m.fake_process_group, rows }, null, 2),
          );
          return 0;
        }
        if (m.origin) console.log(`measured by ${m.origin}`);
        if (m.fake_process_group)
          console.log('(fake process group: collectives moved no data; no NCCL buffers; step time compute-only)');
        console.log(`${'reading'.padEnd(34)} ${'estimated'.padStart(12)} ${'measured'.padStart(12)}   error`);
        for (const r of rows)
          console.log(
            `${r.name.padEnd(34)} ${gib(r.estimated).padStart(12)} ${(r.measured === null ? 'n/a' : gib(r.measured)).padStart(12)}   ${r.error === null ? '' : `${r.error >= 0 ? '+' : ''}${(r.error * 100).toFixed(1)} %`}`,
          );
        return 0;
      }
      default:
        throw new Error(`llmem ${spec.name}: in the command table but not run`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`llmem: ${e.message}${spec && !(e instanceof UnknownCommand) ? `\n${usageHint(spec)}` : ''}`);
      return 2;
    }
    if (e instanceof InputError || e instanceof ImportInputError) {
      console.error(`llmem: ${e.message}`);
      return 1;
    }
    if (e instanceof UnreadableError) {
      console.error(`llmem: ${e.message}`);
      return 2;
    }
    const err = e as NodeJS.ErrnoException;
    if (err.code) {
      console.error(`llmem: cannot read ${err.path ?? 'the input'}: ${err.message}`);
      return 2;
    }
    // never a stack trace: a failure we did not foresee is still one line
    console.error(
      `llmem: ${err instanceof RangeError ? 'the input is too large or too deeply nested' : 'internal error'}: ${err.message ?? String(e)}`,
    );
    return 2;
  }
}
