// Config JSON <-> the core's input block (one double per key of core/fields.def, a list key's
// entries in its own run of slots): the
// one value encoding, used by the wrapper (Core.flatten) and by the page's documents (doc.ts).
import type { FieldInfo } from '../../wasm/generated.js';
import { type Config, type ConfigError, describe, getPath, isObject, type Json, setPath } from './json.js';

/** "YYYY-MM" as year * 12 + month - 1 (the core's months), or null. */
export function monthIndex(text: string): number | null {
  const m = /^(\d{4})-(\d{2})$/.exec(text);
  if (!m) return null;
  const month = Number(m[2]);
  return month >= 1 && month <= 12 ? Number(m[1]) * 12 + month - 1 : null;
}

export function monthText(index: number): string {
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
}

function expected(f: FieldInfo): string {
  if (f.kind === 'int') return `a whole number from ${f.min} to ${f.max}`;
  if (f.kind === 'num') return `a number from ${f.min} to ${f.max}`;
  if (f.kind === 'enum') return `one of ${f.values.join(' | ')}`;
  if (f.kind === 'set') return `a list of ${f.values.join(' | ')}`;
  if (f.kind === 'list')
    return `a list of ${f.min} to ${f.max} of ${f.values.join(' | ')} (or its compact form "3*${f.values[0]},${f.values[1] ?? f.values[0]}")`;
  if (f.kind === 'bool') return 'true or false';
  return f.kind === 'group' ? 'an object' : 'a string';
}

/** The compact form "3*linear,full" as its names (at most `max` of them), or why it is not one. */
export function listNames(text: string, max: number): string[] | string {
  const names: string[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*(?:(\d{1,3})\s*\*\s*)?([a-z_]+)\s*$/.exec(part);
    if (!m) return `"${part.slice(0, 40)}" is not an entry or count*entry`;
    const count = m[1] === undefined ? 1 : Number(m[1]);
    if (count < 1) return `"${part.slice(0, 40)}": a count is at least 1`;
    if (names.length + count > max) return `has more than ${max} entries`;
    for (let k = 0; k < count; k++) names.push(m[2]);
  }
  return names;
}

/** A list key's value as names: a JSON list, or the compact form "3*linear,full" (links, the CLI's --set). */
export function parseList(f: FieldInfo, value: Json): string[] | ConfigError {
  const fail = (message: string) => ({ path: f.path, message: `${f.path}: ${message}` });
  let names: Json[];
  if (Array.isArray(value)) names = value;
  else if (typeof value === 'string') {
    const read = listNames(value, f.max);
    if (typeof read === 'string') return fail(read);
    names = read;
  } else return fail(`must be ${expected(f)}${f.nullable ? ' or null' : ''}, not ${describe(value)}`);
  if (names.length < f.min || names.length > f.max)
    return fail(
      `has ${names.length} entries; a list holds ${f.min} to ${f.max} (a shorter list repeats over the layers)`,
    );
  const bad = names.find((n) => typeof n !== 'string' || !f.values.includes(n));
  if (bad !== undefined) return fail(`${describe(bad)} is not allowed (allowed: ${f.values.join(' | ')})`);
  return names as string[];
}

/** Names in the compact form: runs of one name as count*name ("3*linear,full"). */
export function compactList(names: readonly string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < names.length; ) {
    let j = i;
    while (j < names.length && names[j] === names[i]) j++;
    parts.push(j - i > 1 ? `${j - i}*${names[i]}` : names[i]);
    i = j;
  }
  return parts.join(',');
}

/** A list key's slots (entries, then NaN) as its names, or null. */
export function decodeList(f: FieldInfo, slots: ArrayLike<number>): Json {
  const names: string[] = [];
  for (let k = 0; k < f.max && !Number.isNaN(slots[f.slot + k]); k++) names.push(f.values[slots[f.slot + k]]);
  return names.length ? names : null;
}

/** A value as its input slot (NaN: null; a group or a plain text key: its default; a list: its first
 * entry, flatten writes the rest), or why it cannot be one. */
export function encodeValue(f: FieldInfo, value: Json): number | ConfigError {
  const fail = (message = `must be ${expected(f)}${f.nullable ? ' or null' : ''}, not ${describe(value)}`) => ({
    path: f.path,
    message: `${f.path}: ${message}`,
  });
  const item = (v: Json) => (typeof v === 'string' ? f.values.indexOf(v) : -1);
  const notAllowed = (v: Json) => fail(`${describe(v)} is not allowed (allowed: ${f.values.join(' | ')})`);
  if (value === null) return f.nullable ? NaN : fail();
  switch (f.kind) {
    case 'group':
      return isObject(value) ? f.default : fail();
    case 'text': {
      if (typeof value !== 'string') return fail();
      if (!f.months) return f.default;
      const month = monthIndex(value);
      if (month === null || month < f.min || month > f.max)
        return fail(
          `${describe(value)} is not a date from ${monthText(f.min)} to ${monthText(f.max)} (YYYY-MM) or a known release`,
        );
      return month;
    }
    case 'int':
    case 'num':
      return typeof value === 'number' && Number.isFinite(value) ? value : fail();
    case 'bool':
      return typeof value === 'boolean' ? Number(value) : fail();
    case 'enum':
      return item(value) >= 0 ? item(value) : notAllowed(value);
    case 'set': {
      if (!Array.isArray(value)) return fail();
      let mask = 0;
      for (const v of value) {
        if (item(v) < 0) return notAllowed(v);
        mask |= 1 << item(v);
      }
      return mask;
    }
    case 'list': {
      const names = parseList(f, value);
      return Array.isArray(names) ? item(names[0]) : names;
    }
  }
}

const templates = new WeakMap<readonly FieldInfo[], Float64Array>();

/** Every key at its default, in the core's input layout (a list key: its default in all its slots). */
function defaultSlots(fields: readonly FieldInfo[]): Float64Array {
  let t = templates.get(fields);
  if (!t) {
    const width = (f: FieldInfo) => (f.kind === 'list' ? f.max : 1);
    t = new Float64Array(Math.max(0, ...fields.map((f) => f.slot + width(f))));
    for (const f of fields) t.fill(f.default, f.slot, f.slot + width(f));
    templates.set(fields, t);
  }
  return t.slice();
}

/** Writes a key's value (already checked by encodeValue) into the block. */
function writeSlots(f: FieldInfo, value: Json, first: number, slots: Float64Array): void {
  if (f.kind !== 'list') {
    slots[f.slot] = first;
    return;
  }
  slots.fill(f.default, f.slot, f.slot + f.max);
  const names = value === null ? [] : (parseList(f, value) as string[]);
  names.forEach((n, k) => {
    slots[f.slot + k] = f.values.indexOf(n);
  });
}

/** A key's value in a flat input block (flatten's) as config JSON. */
export function decodeKey(f: FieldInfo, slots: ArrayLike<number>): Json {
  return f.kind === 'list' ? decodeList(f, slots) : decodeValue(f, slots[f.slot]);
}

/** An input slot as config JSON (the inverse of encodeValue). */
export function decodeValue(f: FieldInfo, v: number): Json {
  if (Number.isNaN(v)) return null;
  if (f.kind === 'bool') return v !== 0;
  if (f.kind === 'enum') return f.values[v] ?? null;
  if (f.kind === 'set') return f.values.filter((_, i) => (v & (1 << i)) !== 0);
  return v;
}

/** Config JSON to the flat input block; the first problem is returned as an error. */
export function flatten(
  fields: readonly FieldInfo[],
  byPath: ReadonlyMap<string, FieldInfo>,
  config: unknown,
): Float64Array | ConfigError {
  const slots = defaultSlots(fields);
  const walk = (obj: Config, prefix: string): ConfigError | null => {
    for (const [key, value] of Object.entries(obj)) {
      const path = prefix ? `${prefix}.${key}` : key;
      const f = byPath.get(path);
      if (!f) {
        const depth = prefix ? prefix.split('.').length : 0;
        const here = fields.filter(
          (g) => g.path.startsWith(prefix ? `${prefix}.` : '') && !g.path.split('.')[depth + 1],
        );
        return {
          path,
          message: `${path}: unknown key (allowed here: ${here.map((g) => g.path.split('.')[depth]).join(', ')})`,
        };
      }
      const v = encodeValue(f, value);
      if (typeof v !== 'number') return v;
      if (f.kind !== 'group') writeSlots(f, value, v, slots);
      else if (isObject(value)) {
        const err = walk(value, path);
        if (err) return err;
      } else for (const g of fields) if (g.path.startsWith(`${path}.`)) writeSlots(g, null, g.default, slots); // a null group
    }
    return null;
  };
  if (!isObject(config)) return { path: '', message: `the config must be a JSON object, not ${describe(config)}` };
  return walk(config, '') ?? slots;
}

/** The config every omitted key stands for: the core defaults (null = automatic), no text keys. */
export function defaultConfig(fields: readonly FieldInfo[]): Config {
  const root: Config = {};
  for (const f of fields)
    if (f.kind === 'group') {
      if (getPath(root, f.path) === undefined) setPath(root, f.path, f.nullable && f.path !== 'model' ? null : {});
    } else if (f.kind !== 'text') setPath(root, f.path, decodeValue(f, f.default));
  return root;
}

/** A suggestion's changes (field indices and input values, as the core gives them) as keys and config values,
 * and the patch that applies them. */
export function suggestionChanges(fields: readonly FieldInfo[], indices: number[], values: number[], count: number) {
  const changes = indices
    .slice(0, count)
    .map((i, j) => ({ path: fields[i].path, value: decodeValue(fields[i], values[j]) }));
  const patch: Config = {};
  for (const c of changes) setPath(patch, c.path, c.value);
  return { changes, patch };
}
