// `llmem import`, `llmem export` and `llmem estimate --hf`: other tools' configs in,
// config v1 out, and back (frontend/config/importers, frontend/config/exporters).
import { parseCommandArgs } from './args.js';
import { type CommandSpec, findCommand, usageHint } from './commands.js';
import { readText, UnreadableError } from './input.js';
import type { Config } from '../wasm/llmem.js';
import { loadCore } from '../wasm/node.js';
import { resolveConfig } from '../frontend/config/resolve.js';
import {
  detectKind,
  importConfig,
  importHfConfig,
  unreadFormat,
  IMPORT_KINDS,
  type ImportKind,
  type Trainer,
  TRAINER_IDS,
} from '../frontend/config/importers/index.js';
import { exportConfig, EXPORT_KINDS, type ExportKind } from '../frontend/config/exporters/index.js';
import { parsePythonJson } from '../frontend/config/json.js';

const IMPORT = findCommand('import')!;
const EXPORT = findCommand('export')!;

/** Bad input (exit 1); `path` names the key, as the CLI's other errors do. */
export class ImportInputError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

class Usage extends Error {}

function readInput(file: string): string {
  return readText(file);
}

async function run(command: CommandSpec, body: () => Promise<number> | number): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof Usage) {
      console.error(`llmem: ${e.message}\n${usageHint(command)}`);
      return 2;
    }
    if (e instanceof ImportInputError) {
      console.error(`llmem: ${e.message}`);
      return 1;
    }
    if (e instanceof UnreadableError) {
      console.error(`llmem: ${e.message}`);
      return 2;
    }
    throw e;
  }
}

/** The model from --hf (a config.json file or a Hub id) laid over a config (cli.ts hfFileOrHub). */
export type HfModel = (hf: string, base: Config) => Promise<Config>;

/** llmem import <kind|auto> <file|-> [deepspeed.json] [--json] [--world-size N] [--trainer sft|dpo|orpo|grpo|reward] [--hf ...] */
export function importCommand(args: string[], hfModel?: HfModel): Promise<number> {
  return run(IMPORT, async () => {
    const p = parseCommandArgs(args, IMPORT.options, (m) => new Usage(m));
    const [kindArg, file, alsoFile, ...bases] = p.positionals;
    if (!kindArg || !file)
      throw new Usage(
        'import needs a kind (or auto), a file (or - for standard input) and at most one second file (its DeepSpeed JSON or accelerate config)',
      );
    if (alsoFile === '-') throw new Usage('the second file must be a file (standard input is the config)');
    const text = readInput(file);
    const also = alsoFile === undefined ? undefined : readInput(alsoFile);
    let kind: ImportKind | undefined;
    if (kindArg === 'auto') {
      kind = detectKind(file === '-' ? '' : file, text);
      if (!kind) {
        const unread = unreadFormat(file === '-' ? '' : file, text);
        throw new ImportInputError(
          '',
          unread
            ? `${file}: this looks like ${unread}, which llmem does not import (it reads: ${IMPORT_KINDS.join(' | ')}); set the config's keys yourself (llmem defaults prints them all)`
            : `${file}: cannot tell which format this is; name the kind (${IMPORT_KINDS.join(' | ')})`,
        );
      }
    } else if ((IMPORT_KINDS as string[]).includes(kindArg)) kind = kindArg as ImportKind;
    else throw new Usage(`unknown import kind "${kindArg}" (allowed: auto | ${IMPORT_KINDS.join(' | ')})`);
    const ws = p.values['world-size'];
    const worldSize = ws === undefined ? undefined : Number(ws);
    if (worldSize !== undefined && !(Number.isInteger(worldSize) && worldSize >= 1))
      throw new Usage(`--world-size must be a whole number >= 1, not "${String(ws)}"`);
    // NeMo-RL's defaults: chains take their bases in order (recipe, its base, that base's base, ...)
    if (bases.length > 0 && kind !== 'nemo_rl')
      throw new Usage(
        'import needs a kind (or auto), a file (or - for standard input) and at most one second file (its DeepSpeed JSON or accelerate config); more files only for a NeMo-RL defaults: chain',
      );
    if (bases.includes('-')) throw new Usage('the base files must be files (standard input is the config)');
    const trainer = p.values.trainer;
    if (trainer !== undefined && !(TRAINER_IDS as readonly string[]).includes(trainer))
      throw new Usage(
        `--trainer must be ${TRAINER_IDS.slice(0, -1).join(', ')} or ${TRAINER_IDS.at(-1)}, not "${trainer}"`,
      );
    if (trainer !== undefined && kind !== 'trl') throw new Usage(`--trainer is for TRL configs, not ${kind}`);
    const hf = p.values.hf;
    if (hf !== undefined && (kind === 'hf' || !hfModel))
      throw new Usage("--hf gives the model of another format's file");
    const r = importConfig(kind, text, {
      worldSize,
      also,
      bases: bases.map((b) => readInput(b)),
      trainer: trainer as Trainer | undefined,
      modelFromHf: hf !== undefined,
    });
    const where = file === '-' ? 'standard input' : file;
    if ('error' in r) {
      const message = `${where} (${kind}): ${r.error.message}`;
      // --json: the refusal as an object on standard output too, as estimate --json prints its errors
      if (p.flags.has('json'))
        console.log(JSON.stringify({ ok: false, kind, error: { path: r.error.path, message } }, null, 2));
      throw new ImportInputError(r.error.path, message);
    }
    if (hf !== undefined && hfModel) {
      r.config = await hfModel(hf, r.config as Config);
      r.notes.push(`model: from --hf ${hf} (it replaces the model the file names)`);
    }
    if (p.flags.has('json')) console.log(JSON.stringify({ kind, ...r }, null, 2));
    else {
      console.log(JSON.stringify(r.config, null, 2));
      console.error(`llmem: imported ${where}${alsoFile ? ` with ${[alsoFile, ...bases].join(', ')}` : ''} as ${kind}`);
      for (const n of r.notes) console.error(`  note: ${n}`);
      for (const u of r.unsupported) console.error(`  not applied: ${u}`);
    }
    return 0;
  });
}

/** llmem export <deepspeed|megatron|torchtitan|verl> <config.json|-> [--json] */
export function exportCommand(args: string[]): Promise<number> {
  return run(EXPORT, async () => {
    const p = parseCommandArgs(args, EXPORT.options, (m) => new Usage(m));
    const [kind, file, extra] = p.positionals;
    if (!kind || !file || extra) throw new Usage('export needs a format and a config file (or - for standard input)');
    if (!(EXPORT_KINDS as string[]).includes(kind))
      throw new Usage(`unknown export format "${kind}" (allowed: ${EXPORT_KINDS.join(' | ')})`);
    const where = file === '-' ? 'standard input' : file;
    let raw: unknown;
    try {
      raw = JSON.parse(readInput(file));
    } catch (e) {
      if (e instanceof ImportInputError) throw e;
      throw new ImportInputError('', `${where}: not valid JSON (${(e as Error).message})`);
    }
    const resolved = resolveConfig(raw);
    if (!resolved.ok) throw new ImportInputError(resolved.error.path, resolved.error.message);
    const core = await loadCore();
    const check = core.estimate(resolved.config);
    if (!check.ok) throw new ImportInputError(check.error.path, check.error.message);
    const out = exportConfig(kind as ExportKind, resolved.config, core.defaults(resolved.config));
    if (p.flags.has('json')) console.log(JSON.stringify(out, null, 2));
    else {
      process.stdout.write(out.text);
      for (const u of out.unexpressed) console.error(`  cannot express: ${u}`);
    }
    return 0;
  });
}

/**
 * `llmem estimate --hf config.json`: the model of a Hugging Face config.json put into
 * `base` (it replaces base.model, so no key of an earlier model or preset survives;
 * config.json dropout fills training.dropout unless base sets it). Warnings and
 * notes go to stderr; a malformed file throws ImportInputError.
 */
export function hfOption(path: string, base: Config = {}): Config {
  let json: unknown;
  try {
    json = parsePythonJson(readInput(path));
  } catch (e) {
    if (e instanceof ImportInputError) throw e;
    throw new ImportInputError('', `${path}: not valid JSON (${(e as Error).message})`);
  }
  return mergeHfConfig(json, path, base);
}

/** A parsed config.json (a file's or the Hub's, named by `source`) imported and put into `base` as hfOption says. */
export function mergeHfConfig(json: unknown, source: string, base: Config): Config {
  const r = importHfConfig(json);
  if ('error' in r) throw new ImportInputError(r.error.path, `--hf ${source}: ${r.error.message}`);
  for (const w of r.warnings) console.error(`llmem: --hf ${source}: warning: ${w}`);
  for (const u of r.unknown) console.error(`llmem: --hf ${source}: not applied: ${u}`);
  const out: Config = { ...base, model: r.config.model };
  const training = (base.training ?? {}) as Config;
  const dropout = (r.config.training as Config | undefined)?.dropout;
  if (dropout !== undefined && training.dropout === undefined) out.training = { ...training, dropout };
  return out;
}
