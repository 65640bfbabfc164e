// Writes wasm/generated.ts, the typed side of the wasm boundary, from the freshly built
// core (build/wasm/llmem_core.mjs): the field table (core/fields.def) as the FieldPath
// union, the ConfigV1 type and a metadata table; the core's lists (categories, phases,
// warnings, terms, field kinds); the offsets of the result structs' members (wasm/layout.c,
// built as build/wasm-cmake/llmem_layout.mjs) and those that hold numbers, with their C types (core/llmem.h); the wrapper's readers of the
// core: its field table and texts, each struct's numbers (READ) and the members a public result
// shape (frontend/config/results.ts) takes from its struct (VIEWS).
// Run by `npm run build:core`; tests/js/boundary.test.ts fails when the committed file is stale.
//   node scripts/gen-boundary.mjs          rewrite wasm/generated.ts
//   node scripts/gen-boundary.mjs --print  print it instead
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runGenerator } from './generated-file.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${root}wasm/generated.ts`;

const q = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const num = (v) => (Number.isNaN(v) ? 'NaN' : String(v));
const list = (xs, indent = '  ') => `[\n${xs.map((x) => `${indent}${q(x)},`).join('\n')}\n]`;

/** A NUL-terminated string at ptr in the core's memory (the heap looked up on each read, as growing memory
 * replaces it). The generator reads the core with it, and wasm/generated.ts holds its source for the wrapper. */
const heapText = (heap) => {
  const decoder = new TextDecoder();
  return (ptr) => {
    let end = ptr;
    while (ptr && heap.HEAPU8[end] !== 0) end++;
    return decoder.decode(heap.HEAPU8.subarray(ptr, end));
  };
};

/** The core's field table (llmem_field_*), as the generator reads it; wasm/generated.ts holds its source. */
const readFieldTable = (m, text) =>
  Array.from({ length: m._llmem_field_count() }, (_, i) => ({
    index: i,
    slot: m._llmem_field_slot(i),
    path: text(m._llmem_field_path(i)),
    kind: FIELD_KINDS[m._llmem_field_kind(i)],
    nullable: (m._llmem_field_flags(i) & 1) !== 0,
    months: (m._llmem_field_flags(i) & 2) !== 0,
    default: m._llmem_field_default(i),
    min: m._llmem_field_min(i),
    max: m._llmem_field_max(i),
    values: Array.from({ length: m._llmem_field_value_count(i) }, (_, j) => text(m._llmem_field_value(i, j))),
  }));

/** The field kinds in the order of core/llmem.h's LLMEM_KIND_* enum. */
const FIELD_KINDS = kinds();
function kinds() {
  const h = readFileSync(`${root}core/llmem.h`, 'utf8');
  const m = /enum\s*\{([^}]*LLMEM_KIND_INT[^}]*)\}/.exec(h);
  if (!m) throw new Error('core/llmem.h: the LLMEM_KIND_* enum is missing');
  return m[1].split(',').map((s) =>
    s
      .trim()
      .replace(/^LLMEM_KIND_/, '')
      .toLowerCase(),
  );
}

/** The members that hold numbers of each struct of the layout (core/llmem.h), in struct order: type 'f64' (double)
 * or 'i32' (int or enum), n the length of an array (a number, or a generated LIST: one entry per item), and the
 * name list an int is an id of where its comment names it (`int phase;` commented llmem_phase: llmem_phase_text). */
function structNumbers(layout, textLists) {
  const raw = readFileSync(`${root}core/llmem.h`, 'utf8');
  const ids = {};
  for (const [, body, name] of raw.matchAll(/typedef struct \{([^}]*)\} (\w+);/g))
    for (const [, member, list] of body.matchAll(/^\s*int (\w+)(?:\[\w+\])?;\s*\/\*\s*llmem_(\w+)/gm))
      if (textLists.includes(list)) (ids[name] ??= {})[member] = list;
  const h = raw.replace(/\/\*[\s\S]*?\*\//g, '');
  const sizes = Object.fromEntries([...h.matchAll(/#define (\w+) (\d+)\b/g)].map((m) => [m[1], m[2]]));
  const dims = {
    ...sizes,
    LLMEM_CAT_COUNT: 'CATEGORIES',
    LLMEM_RL_MODEL_COUNT: 'RL_MODELS',
    LLMEM_LAYER_MIXER_COUNT_: 'LAYER_MIXERS',
    LLMEM_STATUS_COUNT: String(layout.search.status_count),
  };
  const types = { double: 'f64', int: 'i32', llmem_status: 'i32' };
  const structs = {};
  for (const [, body, name] of h.matchAll(/typedef struct \{([^}]*)\} (\w+);/g)) {
    structs[name] = {};
    for (const [, type, names] of body.matchAll(/^\s*(\w+)\s+([^;]+);/gm))
      for (const [, member, dim] of names.matchAll(/(\w+)\s*(?:\[(\w+)\])?/g))
        if (types[type] && (!dim || dims[dim] || /^\d+$/.test(dim)))
          structs[name][member] = { type: types[type], n: dim && (dims[dim] ?? dim), ids: ids[name]?.[member] };
  }
  // wasm/layout.c names each struct of the layout: "rank":{ then K(...), with #define K(m) ... offsetof(llmem_rank_result, m)
  const c = readFileSync(`${root}wasm/layout.c`, 'utf8');
  const macros = Object.fromEntries(
    [...c.matchAll(/#define (\w)\(m\) .*offsetof\((\w+), m\)/g)].map((m) => [m[1], m[2]]),
  );
  const out = {},
    layoutOf = {};
  for (const [, name, macro] of c.matchAll(/\\"(\w+)\\":\{"\);\s*(\w)\(/g)) {
    const members = structs[macros[macro]];
    if (!members || !layout[name]) throw new Error(`wasm/layout.c: cannot find the C struct of layout.${name}`);
    out[name] = Object.entries(members).filter(([k]) => k in layout[name]);
    layoutOf[macros[macro]] = name;
  }
  // the members that are structs of the layout (`llmem_rank_result ranks[N];`, `llmem_rank_result per_gpu;`): their struct
  const nested = {};
  for (const [, body, name] of h.matchAll(/typedef struct \{([^}]*)\} (\w+);/g))
    for (const [, type, member, dim] of body.matchAll(/^\s*(\w+)\s+(\w+)\s*(\[\w+\])?;/gm))
      if (layoutOf[name] && layoutOf[type])
        (nested[layoutOf[name]] ??= {})[member] = { struct: layoutOf[type], array: !!dim };
  return { numbers: out, nested };
}

/** The result structs' offsets and sizes, and their check number (wasm/layout.c, built with the core). */
async function readLayout() {
  const file = `${root}build/wasm-cmake/llmem_layout.mjs`;
  if (!existsSync(file)) throw new Error(`${file} is missing; run \`npm run build:core\``);
  const wasmBinary = readFileSync(file.replace(/\.mjs$/, '.wasm'));
  const m = await (await import(pathToFileURL(file).href)).default({ wasmBinary });
  const layout = JSON.parse(heapText(m)(m._llmem_result_layout()));
  for (const s of Object.values(layout)) delete s.end;
  return { layout, layoutCheck: m._llmem_layout_check() };
}

/** What the core reports: fields, lists, layout and hash. */
async function readCore() {
  const coreFile = `${root}build/wasm/llmem_core.mjs`;
  if (!existsSync(coreFile)) throw new Error(`${coreFile} is missing; run \`npm run build:core\``);
  const wasmBinary = readFileSync(coreFile.replace(/\.mjs$/, '.wasm'));
  const m = await (await import(pathToFileURL(coreFile).href)).default({ wasmBinary });
  const text = heapText(m);
  const names = (count, read) => Array.from({ length: count }, (_, i) => text(read(i)));
  // a list without a count export: up to the name the core gives past its end
  const upTo = (end, read) => {
    const out = [];
    while (out.length < 1000 && text(read(out.length)) !== end) out.push(text(read(out.length)));
    return out;
  };
  const fields = readFieldTable(m, text);
  const { layout, layoutCheck } = await readLayout();
  const exports = readFileSync(`${root}wasm/exports.txt`, 'utf8').match(/_llmem_\w+/g);
  // the texts the core names by an id: wasm/boundary.c's const char *llmem_X_text(int)
  const boundary = readFileSync(`${root}wasm/boundary.c`, 'utf8');
  const textLists = [...boundary.matchAll(/const char \*llmem_(\w+)_text\(int \w+\)/g)].map((m) => m[1]);
  const structs = structNumbers(layout, textLists);
  // the planner's options as the core's defaults set them (llmem_*_options_ptr resets the block)
  const optionDefaults = Object.fromEntries(
    Object.entries(structs.numbers)
      .filter(([name]) => name.endsWith('_options'))
      .map(([name, ms]) => {
        const a = m[`_llmem_${name}_ptr`]();
        const read = ([k, { type }]) =>
          type === 'f64' ? m.HEAPF64[(a + layout[name][k]) / 8] : m.HEAP32[(a + layout[name][k]) / 4] !== 0;
        return [name, Object.fromEntries(ms.map((x) => [x[0], read(x)]))];
      }),
  );
  return {
    exports,
    optionDefaults,
    abi: m._llmem_abi_version(),
    layoutCheck,
    maxSweep: m._llmem_sweep_capacity(),
    kinds: FIELD_KINDS,
    fields,
    categories: names(m._llmem_category_count(), (i) => m._llmem_category_text(i)),
    phases: upTo('', (i) => m._llmem_phase_text(i)),
    rl_models: upTo('', (i) => m._llmem_rl_model_text(i)),
    warnings: upTo('unknown warning', (i) => m._llmem_warning_text(i)),
    stepParts: upTo('', (i) => m._llmem_step_part_text(i)),
    layout,
    textLists,
    ...structs,
  };
}

/** The TypeScript type of a leaf's value in a config. */
function leafType(f) {
  if (f.kind === 'int' || f.kind === 'num') return f.min === f.max ? num(f.min) : 'number';
  if (f.kind === 'bool') return 'boolean';
  if (f.kind === 'text') return 'string';
  const union = f.values.map(q).join(' | ');
  if (f.kind === 'list') return `(${union})[] | string`; // a list, or its compact form "3*a,b"
  return f.kind === 'enum' ? union : `(${union})[]`;
}

/** The nested config type: every key optional, nullable keys `| null`. */
function configType(fields, prefix, indent) {
  const depth = prefix ? prefix.split('.').length : 0;
  const lines = [];
  for (const f of fields) {
    const parts = f.path.split('.');
    if (parts.length !== depth + 1 || (prefix && !f.path.startsWith(`${prefix}.`))) continue;
    const type = f.kind === 'group' ? configType(fields, f.path, `${indent}  `) : leafType(f);
    lines.push(`${indent}  ${parts[depth]}?: ${type}${f.nullable ? ' | null' : ''};`);
  }
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/** The members of each interface of frontend/config/results.ts (the public result shapes), in order: [key, type, optional]. */
function shapes() {
  const src = readFileSync(`${root}frontend/config/results.ts`, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const out = {};
  for (const [, name, body] of src.matchAll(/export interface (\w+)(?: extends \w+)? \{\n([\s\S]*?)\n\}/g))
    out[name] = [...body.matchAll(/^ {2}(\w+)(\??): (.+);$/gm)].map((m) => [m[1], m[3], m[2] === '?']);
  return out;
}

/** The public shapes read from a struct (frontend/config/results.ts), by the name of their view:
 * [struct, interface, prefix: the start of the members the shape's keys name (RlResult's kv_cache_bytes is rl_kv_cache_bytes)]. */
const VIEWED = {
  rank: ['rank', 'RankResult'],
  rl_phase: ['rl_phase', 'RlPhase'],
  readings: ['readings', 'Readings'],
  search: ['search', 'SearchResult'],
  layout: ['layout', 'Layout'],
  suggest: ['suggest', 'SuggestResult'],
  suggestion: ['suggestion', 'Suggestion'],
  result: ['result', 'EstimateResult'],
  rl: ['result', 'RlResult', 'rl_'],
};

/** READ: each struct's numbers at a, in struct order (heap indices at the offsets the core reports). */
function readers(numbers, listType) {
  const member = ([k, { type, n }]) => {
    const [read, size] = type === 'f64' ? ['f64At', 8] : ['i32At', 4];
    const at = (i) => `${read}(v, a + o.${k}${i ? ` + ${size} * i` : ''})`;
    if (!n) return `${k}: ${at(false)}`;
    if (/^\d+$/.test(n)) return `${k}: Array.from({ length: ${n} }, (_, i) => ${at(true)})`;
    return `${k}: Object.fromEntries(${n}.map((x, i) => [x, ${at(true)}])) as Record<${listType[n]}, number>`;
  };
  const reader = ([name, ms]) =>
    `  ${name}: (v, a) => {\n    const o = v.layout.${name};\n` +
    `    return {\n${ms.map((m) => `      ${member(m)},`).join('\n')}\n    };\n  },`;
  return Object.entries(numbers).map(reader).join('\n');
}

/** WRITE: each options struct's members the caller gives, a switch (int) as 0 or 1. */
function writers(numbers) {
  const member = ([k, { type }]) => `    ${type === 'f64' ? 'f64To' : 'i32To'}(v, a + L.${k}, o.${k});`;
  const writer = ([name, ms]) =>
    `  ${name}: (v, a, o) => {\n    const L = v.layout.${name};\n${ms.map(member).join('\n')}\n  },`;
  return Object.entries(numbers)
    .filter(([name]) => name.endsWith('_options'))
    .map(writer)
    .join('\n');
}

/** VIEWS: the members of a public shape that its struct holds (the key, or key_count, after the view's prefix), in the
 * shape's order: a number or a record of numbers as it is, an int as a boolean, a name by its id (llmem_*_text), -1 as
 * null, an object of numbers from key_* members, names from an array of ids, an array of structs by their complete view
 * (the count in singular_count, else count), as the shape's type says; the shape's other members are the hand-written
 * reader's. */
function views(numbers, nested) {
  const ifaces = shapes();
  const complete = {};
  const countOf = (ms, key) => (key.replace(/s$/, '_count') in ms ? key.replace(/s$/, '_count') : 'count');
  const value = (struct, ms, key, type, cast) => {
    const m = key in ms ? key : `${key}_count` in ms ? `${key}_count` : undefined;
    const x = `r.${m}`;
    const group = /^\{ (.*) \}$/.exec(type)?.[1].split('; ');
    const element = /^(\w+)\[\]$/.exec(type)?.[1];
    const inner = nested[struct]?.[key];
    if (group?.every((g) => /^\w+: number$/.test(g) && `${key}_${g.split(':')[0]}` in ms))
      return `{ ${group
        .map((g) => g.split(':')[0])
        .map((k) => `${k}: r.${key}_${k}`)
        .join(', ')} }`;
    if (element && inner?.array) {
      const [name] =
        Object.entries(VIEWED).find(([n, [s, i, p]]) => s === inner.struct && i === element && !p && complete[n]) ?? [];
      const size = `v.layout.${inner.struct}.size`;
      return name && `each(a + v.layout.${struct}.${key}, r.${countOf(ms, key)}, ${size}, (e) => VIEWS.${name}(v, e))`;
    }
    if (type === 'string[]' && ms[key]?.ids && ms[key].n)
      return `r.${key}.slice(0, r.${countOf(ms, key)}).map((id) => v.texts.${ms[key].ids}(id))`;
    if (!m) return undefined;
    if (type === 'boolean') return `${x} !== 0`;
    if (type === 'number | null' && ms[m].type === 'i32') return `${x} < 0 ? null : ${x}`;
    if (ms[m].ids) return `v.texts.${ms[m].ids}(${x})${type === 'string' ? '' : ` as ${cast}`}`;
    return type === 'number' || /^(Breakdown|Record<\w+, number>)$/.test(type) ? x : undefined;
  };
  const view = ([name, [struct, iface, prefix = '']]) => {
    const ms = Object.fromEntries(numbers[struct]);
    const required = ifaces[iface].filter(([, , optional]) => !optional);
    const keys = required.flatMap(([k, type]) => {
      const e = value(struct, ms, `${prefix}${k}`, type, `${iface}['${k}']`);
      return e ? [[k, e]] : [];
    });
    complete[name] = keys.length === required.length;
    return (
      `  ${name}: (v: View, a: number, r = READ.${struct}(v, a)): Pick<${iface}, ${keys.map(([k]) => q(k)).join(' | ')}> => ({\n` +
      `${keys.map(([k, e]) => `    ${k}: ${e},`).join('\n')}\n  }),`
    );
  };
  return Object.entries(VIEWED).map(view).join('\n');
}

/** COLUMNS: the members of a shape of columns (Timeline) that an array of structs (events) holds, each read in one
 * pass into a typed array: a double as Float64Array, an int as Int32Array, a record over a list as a record of
 * columns, ids as their names. */
function columns(numbers, struct, iface, listType) {
  const ms = Object.fromEntries(numbers[struct]);
  const column = (k, type) => {
    const m = ms[k];
    if (!m) return undefined;
    const read = (offset) => `${m.type}(o.${k}${offset})`;
    if (type === 'Float64Array' || type === 'Int32Array') return !m.n && read('');
    if (type === 'string[]') return m.ids && `Array.from(${read('')}, (id) => v.texts.${m.ids}(id))`;
    const record = /^Record<(\w+), Float64Array>$/.exec(type);
    const list = record && Object.keys(listType).find((n) => listType[n] === record[1]);
    return list && m.n === list && `Object.fromEntries(${list}.map((x, i) => [x, ${read(' + 8 * i')}])) as ${type}`;
  };
  const keys = shapes()[iface].flatMap(([k, type]) => (column(k, type) ? [[k, column(k, type)]] : []));
  return (
    `  ${struct}: (v: View, a: number, count: number): Pick<${iface}, ${keys.map(([k]) => q(k)).join(' | ')}> => {\n` +
    `    const o = v.layout.${struct},\n` +
    `      f64 = (offset: number) => column(new Float64Array(count), v.heap.HEAPF64, a + offset, o.size),\n` +
    `      i32 = (offset: number) => column(new Int32Array(count), v.heap.HEAP32, a + offset, o.size);\n` +
    `    return {\n${keys.map(([k, e]) => `      ${k}: ${e},`).join('\n')}\n    };\n  },`
  );
}

function render(c) {
  // READ reads the structs read one at a time: not the options (written) nor the events (read as columns)
  const read = Object.fromEntries(Object.entries(c.numbers).filter(([n]) => !n.endsWith('_options') && n !== 'event'));
  const field = (f) =>
    `  { index: ${f.index}, slot: ${f.slot}, path: ${q(f.path)}, kind: ${q(f.kind)}, nullable: ${f.nullable}, months: ${f.months}, ` +
    `default: ${num(f.default)}, min: ${num(f.min)}, max: ${num(f.max)}, values: [${f.values.map(q).join(', ')}] },`;
  const listType = { CATEGORIES: 'Category', RL_MODELS: 'RlModel', LAYER_MIXERS: 'LayerMixer' };
  const numberType = ({ n }) => (listType[n] ? `Record<${listType[n]}, number>` : n ? 'number[]' : 'number');
  const members =
    (line, end) =>
    ([name, ms]) =>
      `  ${name}: {\n${ms.map(line).join('\n')}\n  }${end}`;
  const struct = ([name, members]) =>
    `  ${name}: {\n${Object.keys(members)
      .map((k) => `    ${k}: number;`)
      .join('\n')}\n  };`;
  return `// Generated by scripts/gen-boundary.mjs from the built wasm core (core/fields.def, the
// lists of core/llmem.h, the struct offsets of wasm/layout.c) and the result shapes of
// frontend/config/results.ts: do not edit. \`npm run build:core\` (and so \`npm run build\`)
// rewrites it; tests/js/boundary.test.ts fails when it is stale.

import type { EstimateResult, Layout, RankResult, Readings, RlPhase, RlResult, Timeline } from '../frontend/config/results.js';
import type { SearchResult, Suggestion, SuggestResult } from '../frontend/config/results.js';
import { termFormula, termLabel } from './term-registry.js';

export const ABI_VERSION = ${c.abi};
/** The result structs' sizes folded into one number (wasm/layout.h): LAYOUT's, checked against the core's at load. */
export const LAYOUT_CHECK = ${c.layoutCheck};
/** The most points one sweep takes (LLMEM_MAX_SWEEP: the core's sweep buffers). */
export const MAX_SWEEP = ${c.maxSweep};

export const FIELD_KINDS = ${list(c.kinds)} as const;
export type FieldKind = (typeof FIELD_KINDS)[number];

/** A key of the config: a row of the core's field table (llmem_field). */
export interface FieldInfo {
  index: number;
  /** its first slot in the core's input block (a list key has max of them) */
  slot: number;
  /** a FieldPath */
  path: string;
  kind: FieldKind;
  nullable: boolean;
  /** a text key the core reads as a month: "YYYY-MM" stored as year * 12 + month - 1 */
  months: boolean;
  default: number;
  min: number;
  max: number;
  values: string[];
}

/** Memory categories, by the core's category id (the breakdown's keys). */
export const CATEGORIES = ${list(c.categories)} as const;
export type Category = (typeof CATEGORIES)[number];

/** Phases of the simulated step, by the core's phase id. */
export const PHASES = ${list(c.phases)} as const;
export type Phase = (typeof PHASES)[number];

/** The models of an RL step, by the core's model id (an RL phase's model_bytes). */
export const RL_MODELS = ${list(c.rl_models)} as const;
export type RlModel = (typeof RL_MODELS)[number];

/** Layer mixers (model.layer_types), by the core's mixer id (a rank's mixer_layers keys). */
export const LAYER_MIXERS = ${list(c.fields.find((f) => f.path === 'model.layer_types').values)} as const;
export type LayerMixer = (typeof LAYER_MIXERS)[number];

/** Warning messages, by the core's warning id. */
export const WARNINGS = ${list(c.warnings)} as const;
export type Warning = (typeof WARNINGS)[number];

/** Where a step's time goes in the step-time model, by the core's llmem_step_part. */
export const STEP_PARTS = ${list(c.stepParts)} as const;
export type StepPart = (typeof STEP_PARTS)[number];

/** The functions wasm/boundary.c exports (wasm/exports.txt): each takes and returns numbers. */
export type CoreExport =
${c.exports.map((e) => `  | ${q(e)}`).join('\n')};

/** The byte offsets of the members of the core's result structs (and their sizes), named, so a misspelt
 * member does not compile. */
export type StructLayout = {
${Object.entries(c.layout).map(struct).join('\n')}
};

/** Their values, as the core's compiler laid the structs out (wasm/layout.c). */
export const LAYOUT: StructLayout = ${JSON.stringify(c.layout, null, 2).replace(/"(\w+)":/g, '$1:')};

/** A result struct's numbers (core/llmem.h: double and int members, arrays of them), in struct order:
 * an array over a list (the categories, the RL models, the layer mixers) as a record by its items. */
export type StructNumbers = {
${Object.entries(c.numbers)
  .map(members(([k, spec]) => `    ${k}: ${numberType(spec)};`, ';'))
  .join('\n')}
};

/** The planner's options (core/llmem.h llmem_search_options, llmem_suggest_options): an int member is a switch. */
export type Options = {
${Object.entries(c.optionDefaults)
  .map(
    ([name, o]) =>
      `  ${name}: {\n${Object.entries(o)
        .map(([k, x]) => `    ${k}: ${typeof x};`)
        .join('\n')}\n  };`,
  )
  .join('\n')}
};

/** Their defaults (llmem_search_defaults, llmem_suggest_defaults) as the core set them when this file was written. */
export const OPTION_DEFAULTS: Options = ${JSON.stringify(c.optionDefaults, null, 2).replace(/"(\w+)":/g, '$1:')};

/** The layout search's switches (the int members of llmem_search_options) and their defaults, the core's. */
export const SEARCH_SWITCHES = ${JSON.stringify(
    Object.fromEntries(Object.entries(c.optionDefaults.search_options).filter(([, x]) => typeof x === 'boolean')),
    null,
    2,
  ).replace(/"(\w+)":/g, '$1:')} as const;
export type SearchSwitch = keyof typeof SEARCH_SWITCHES;

/** The core's heaps: the module, looked up on each read, as growing memory replaces them. */
export type CoreHeap = { HEAPU8: Uint8Array; HEAPF64: Float64Array; HEAP32: Int32Array };
export type CoreCalls = Record<CoreExport, (...args: number[]) => number>;
/** The module's factory (emcc -sMODULARIZE): given the binary's bytes, or where to fetch it from. */
export type CoreFactory = (options?: {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string) => string;
}) => Promise<CoreHeap & CoreCalls>;

/** A NUL-terminated string at ptr in the core's memory (the reader this file was generated with). */
export const heapText: (heap: CoreHeap) => (ptr: number) => string = ${heapText};

/** The core's field table (the reader this file was generated with; FIELDS is what it read). */
export const readFieldTable: (m: CoreCalls, text: (ptr: number) => string) => FieldInfo[] = ${readFieldTable};

/** The texts the core names by an id (wasm/boundary.c's llmem_*_text(int)), each read from the core once. */
export function coreTexts(m: CoreCalls, text: (ptr: number) => string) {
  const cached = (read: (id: number) => number) => {
    const seen = new Map<number, string>();
    return (id: number) => {
      let s = seen.get(id);
      if (s === undefined) seen.set(id, (s = text(read(id))));
      return s;
    };
  };
  return {
${c.textLists
  .map((t) =>
    t === 'term_label' || t === 'term_formula'
      ? `    ${t}: ${t === 'term_label' ? 'termLabel' : 'termFormula'}, // not in the wasm build's binary (wasm/term-registry.ts)`
      : `    ${t}: cached(m._llmem_${t}_text),`,
  )
  .join('\n')}
  };
}

/** What the struct readers read: the core's heaps, the offsets (LAYOUT) and its texts. */
export interface View {
  heap: CoreHeap;
  layout: StructLayout;
  text: (ptr: number) => string;
  texts: ReturnType<typeof coreTexts>;
}

/** A view of a core built from the sources this file was generated from (its ABI and struct sizes match), else throws. */
export function openView(m: CoreHeap & CoreCalls): View {
  const [abi, check] = [m._llmem_abi_version(), m._llmem_layout_check()];
  if (abi !== ABI_VERSION || check !== LAYOUT_CHECK)
    throw new Error(\`llmem core (ABI \${abi}, layout \${check}) does not match the wrapper (\${ABI_VERSION}, \${LAYOUT_CHECK})\`);
  const text = heapText(m);
  return { heap: m, layout: LAYOUT, text, texts: coreTexts(m, text) };
}

/** count structs of size bytes from a, each read by read. */
export const each = <T>(a: number, count: number, size: number, read: (a: number) => T): T[] =>
  Array.from({ length: count }, (_, i) => read(a + i * size));

/** The double or the int at byte address at of the core's memory. */
const f64At = (v: View, at: number) => v.heap.HEAPF64[at / 8];
const i32At = (v: View, at: number) => v.heap.HEAP32[at / 4];

/** The structs read one at a time. */
type Read = ${Object.keys(read).map(q).join(' | ')};

/** Each result struct's numbers at a, in struct order. */
export const READ: { [S in Read]: (v: View, a: number) => StructNumbers[S] } = {
${readers(read, listType)}
};

/** Writes x, when given, as the double or the int (a switch as 0 or 1) at byte address at. */
const f64To = (v: View, at: number, x: number | undefined) => {
  if (x !== undefined) v.heap.HEAPF64[at / 8] = x;
};
const i32To = (v: View, at: number, x: boolean | undefined) => {
  if (x !== undefined) v.heap.HEAP32[at / 4] = Number(x);
};

/** Writes the options a caller sets into an options block (the core's defaults stand for the rest). */
export const WRITE: { [S in keyof Options]: (v: View, a: number, o: Partial<Options[S]>) => void } = {
${writers(c.numbers)}
};

/** The members of a public result shape (frontend/config/results.ts) that its struct holds (the key, or
 * key_count), in the shape's order: an int as a boolean, a name by its id (llmem_*_text), or -1 as null. */
export const VIEWS = {
${views(c.numbers, c.nested)}
};

/** Fills col with the numbers at from, from + stride, ... of heap (from and stride in bytes). */
const column = <T extends Float64Array | Int32Array>(col: T, heap: T, from: number, stride: number) => {
  for (let i = 0; i < col.length; i++) col[i] = heap[(from + i * stride) / col.BYTES_PER_ELEMENT];
  return col;
};

/** The members of a shape of columns (frontend/config/results.ts Timeline) that its structs hold: count structs from a. */
export const COLUMNS = {
${columns(c.numbers, 'event', 'Timeline', listType)}
};

/** Every key path of config v1, in the core's order. */
export type FieldPath =
${c.fields.map((f) => `  | ${q(f.path)}`).join('\n')};

/** A config v1 object: every key optional (omitted: the default), nullable keys \`| null\`. */
export type ConfigV1 = ${configType(c.fields, '', '')};

/** The field table (core/fields.def); the wrapper reads the same table from the core at run time. */
export const FIELDS: readonly FieldInfo[] = [
${c.fields.map(field).join('\n')}
];
`;
}

export async function generate() {
  return render(await readCore());
}

await runGenerator(import.meta.url, generate, OUT, 'wasm/generated.ts');
