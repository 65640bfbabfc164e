// The page's working copy of a config: a flat map from leaf key path to its
// config-v1 JSON value, holding only what differs from the base (core
// defaults, then the chosen model preset and GPU). model.preset and
// hardware.gpu are always present (null = custom). Groups are never keys:
// a nullable group (model.moe, model.mla) is "absent" when its leaves sit at
// the core defaults, which is how the core reads a null group too.
import type { Core, FieldInfo } from '../../wasm/llmem.js';
import { decodeKey, decodeValue, encodeValue, parseList } from './encode.js';
import { type Config, isObject, type Json, setPath } from './json.js';
import { resolveConfig } from './resolve.js';

export type Doc = Record<string, Json>;

/** The view a hash-less URL shows: Llama 3.1 8B on 8x H100 with FSDP2 (engine and GPU count are core defaults). */
export const PAGE_DEFAULT: Readonly<Doc> = Object.freeze({
  'model.preset': 'llama-3.1-8b',
  'hardware.gpu': 'h100-sxm-80gb',
});

export const PINNED = ['model.preset', 'hardware.gpu'] as const;

const leafCache = new WeakMap<readonly FieldInfo[], FieldInfo[]>();

/** Fields a doc may hold: every key but groups and the format version. */
export function leafFields(fields: readonly FieldInfo[]): FieldInfo[] {
  let out = leafCache.get(fields);
  if (!out) leafCache.set(fields, (out = fields.filter((f) => f.kind !== 'group' && f.path !== 'version')));
  return out;
}

/** Whether two values of a key are the same to the core: the same input slot by the wrapper's
 * encoding (encodeValue: null, enum names, sets in any order); values it refuses compare as JSON. */
export function sameValue(f: FieldInfo, a: Json, b: Json): boolean {
  if (f.kind === 'text') return a === b;
  if (f.kind === 'list') {
    const x = a === null ? null : parseList(f, a),
      y = b === null ? null : parseList(f, b);
    return JSON.stringify(x) === JSON.stringify(y); // the same entries, or the same refusal
  }
  const x = encodeValue(f, a),
    y = encodeValue(f, b);
  if (typeof x !== 'number' || typeof y !== 'number') return JSON.stringify(a) === JSON.stringify(b);
  return x === y || (Number.isNaN(x) && Number.isNaN(y));
}

/** Doc -> config-v1 object (what Export writes and the CLI reads). */
export function docToConfig(doc: Doc, fields: readonly FieldInfo[]): Config {
  const out: Config = { version: 1 };
  for (const f of leafFields(fields)) {
    if (!(f.path in doc)) continue;
    const v = doc[f.path];
    if (v !== null || !(PINNED as readonly string[]).includes(f.path)) setPath(out, f.path, v);
  }
  return out;
}

/** The values every key takes when the doc does not name it. */
export interface Base {
  slots: Float64Array;
  text: Record<string, Json>;
  /** false when the preset or GPU id is unknown (then the base is the core defaults). */
  ok: boolean;
}

const baseCache = new WeakMap<Core, Map<string, Base>>();

/** The base for a preset and GPU (memoised: it changes only when either does). */
export function computeBase(core: Core, preset: Json, gpu: Json): Base {
  let cache = baseCache.get(core);
  if (!cache) baseCache.set(core, (cache = new Map()));
  const key = JSON.stringify([preset ?? null, gpu ?? null]);
  let base = cache.get(key);
  if (!base) {
    if (cache.size > 64) cache.clear();
    cache.set(key, (base = buildBase(core, preset, gpu)));
  }
  return base;
}

function buildBase(core: Core, preset: Json, gpu: Json): Base {
  const seed: Config = {};
  if (preset !== null && preset !== undefined) seed.model = { preset };
  if (gpu !== null && gpu !== undefined) seed.hardware = { gpu };
  const r = resolveConfig(seed);
  const cfg = r.ok ? r.config : {};
  const slots = core.flatten(cfg);
  const model = isObject(cfg.model) ? cfg.model : {};
  return {
    slots: slots instanceof Float64Array ? slots : (core.flatten({}) as Float64Array),
    text: { 'model.preset': preset ?? null, 'model.name': (model.name as Json) ?? null, 'hardware.gpu': gpu ?? null },
    ok: r.ok && slots instanceof Float64Array,
  };
}

export function baseValue(base: Base, f: FieldInfo): Json {
  if (f.kind === 'text') return base.text[f.path] ?? null;
  return decodeKey(f, base.slots);
}

/** Drops entries equal to the base; pins model.preset and hardware.gpu. */
export function normalize(core: Core, doc: Doc): Doc {
  const out: Doc = {};
  const preset = doc['model.preset'] ?? null,
    gpu = doc['hardware.gpu'] ?? null;
  const base = computeBase(core, preset, gpu);
  out['model.preset'] = preset;
  out['hardware.gpu'] = gpu;
  for (const f of leafFields(core.fields)) {
    if ((PINNED as readonly string[]).includes(f.path) || !(f.path in doc)) continue;
    let v = doc[f.path];
    if (f.kind === 'set' && Array.isArray(v)) v = f.values.filter((x) => (v as Json[]).includes(x)); // canonical order
    if (!sameValue(f, v, baseValue(base, f))) out[f.path] = v;
  }
  return out;
}

export type DocOutcome = { ok: true; doc: Doc } | { ok: false; path: string; message: string };

/**
 * A config-v1 object -> doc. Keys and value types are checked by the core's
 * field table (unknown key, wrong type: error naming the key); a null group
 * becomes its leaves at the core defaults. Cross-field rules are left to the
 * estimate, which names the field on the page.
 */
export function configToDoc(core: Core, config: unknown): DocOutcome {
  if (!isObject(config)) return { ok: false, path: '', message: 'the config must be a JSON object' };
  if ('version' in config && config.version !== 1)
    return {
      ok: false,
      path: 'version',
      message: `version: this page reads config version 1, not ${JSON.stringify(config.version)}`,
    };
  const flat = core.flatten(config);
  if (!(flat instanceof Float64Array)) return { ok: false, ...flat };
  const doc: Doc = { 'model.preset': null, 'hardware.gpu': null };
  const walk = (obj: Config, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const path = prefix ? `${prefix}.${k}` : k;
      const f = core.field(path);
      if (!f || path === 'version') continue;
      if (f.kind === 'group') {
        if (v === null) {
          for (const g of leafFields(core.fields))
            if (g.path.startsWith(`${path}.`)) doc[g.path] = g.kind === 'text' ? null : decodeValue(g, g.default);
        } else if (isObject(v)) walk(v, path);
        continue;
      }
      doc[path] = v;
    }
  };
  walk(config, '');
  const r = resolveConfig(docToConfig(doc, core.fields));
  if (!r.ok) return { ok: false, ...r.error };
  return { ok: true, doc: normalize(core, doc) };
}

export function sameDoc(a: Doc, b: Doc): boolean {
  const ka = Object.keys(a),
    kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => k in b && JSON.stringify(a[k]) === JSON.stringify(b[k]));
}
