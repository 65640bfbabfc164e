// Command-line options of every llmem command, on Node's built-in util.parseArgs
// (strict: an unknown option or a missing value is a usage error naming it).
// The options come from the command table (commands.ts), which also writes the help.
import { parseArgs } from 'node:util';

/** A numeric option's allowed values (numberOption in cli.ts checks them). */
export type Range = { min: number; max: number; whole?: boolean; below?: boolean };

/** One option of a command: how parseArgs reads it and how the help describes it. */
export interface OptionSpec {
  /** the long name, without the dashes */
  name: string;
  /** what its value is called in the help (--gpus <N>); absent: a flag (--json) */
  arg?: string;
  /** may be given more than once (--set a=1 --set b=2) */
  repeat?: boolean;
  /** one line for the help */
  help: string;
  /** the value taken when the option is left out */
  default?: number;
  /** the default in words, where it is not one number ("the config's") */
  defaultText?: string;
  /** the command cannot run without it */
  required?: boolean;
  /** a numeric option's allowed values */
  range?: Range;
}

/** Every command takes -h / --help (main() answers it before parsing). */
export const HELP_OPTION: OptionSpec = { name: 'help', help: 'show this help' };

export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string>;
  repeated: Record<string, string[]>;
  flags: Set<string>;
}

/** Parse `args` against a command's options; `usage(message)` makes the error thrown for bad arguments. */
export function parseCommandArgs(
  args: string[],
  specs: readonly OptionSpec[],
  usage: (message: string) => Error,
): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const o of specs) options[o.name] = { type: o.arg ? 'string' : 'boolean', ...(o.repeat && { multiple: true }) };
  options.help = { type: 'boolean', short: 'h' };
  const allowed = Object.keys(options)
    .map((k) => `--${k}`)
    .join(', ');
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    const err = e as Error & { code?: string };
    const m = /'(-{1,2}[^' ]+)/.exec(err.message);
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      throw usage(`unknown option ${m?.[1] ?? ''} (allowed: ${allowed})`);
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const opt = (m?.[1] ?? '--option').replace(/ .*/, '');
      throw usage(`${opt} needs a value (one that starts with "-" is written ${opt}=-1)`);
    }
    throw usage(err.message);
  }
  const out: ParsedArgs = { positionals: parsed.positionals, values: {}, repeated: {}, flags: new Set() };
  for (const [k, v] of Object.entries(parsed.values)) {
    if (typeof v === 'boolean') {
      if (v) out.flags.add(k);
    } else if (Array.isArray(v)) out.repeated[k] = v.map(String);
    else if (v !== undefined) out.values[k] = String(v);
  }
  return out;
}

/** Whether the arguments ask for help (-h or --help before a `--`): it wins over any other argument. */
export function wantsHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}
