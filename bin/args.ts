// Command-line options of every llmem command, on Node's built-in util.parseArgs
// (strict: an unknown option or a missing value is a usage error naming it).
import { parseArgs } from 'node:util';

export interface ArgSpec {
  /** options that take a value (--gpus 8, --gpus=8) */
  values?: string[];
  /** options that may repeat (--set a=1 --set b=2) */
  repeated?: string[];
  /** flags (--json) */
  flags?: string[];
}

export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string>;
  repeated: Record<string, string[]>;
  flags: Set<string>;
}

/** Parse `args`; `usage(message)` makes the error thrown for bad arguments. */
export function parseCommandArgs(args: string[], spec: ArgSpec, usage: (message: string) => Error): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const v of spec.values ?? []) options[v] = { type: 'string' };
  for (const v of spec.repeated ?? []) options[v] = { type: 'string', multiple: true };
  for (const f of spec.flags ?? []) options[f] = { type: 'boolean' };
  const allowed =
    Object.keys(options)
      .map((k) => `--${k}`)
      .join(', ') || 'none';
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
