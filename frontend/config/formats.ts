// Configs in and out of the page, loaded on demand (its own chunk: the page
// imports it when the Import or Export dialog opens; the service worker
// precaches it). Import: guess the kind of a file, run the importer, merge
// the result into the page's config (a Hugging Face config.json replaces the
// model; a framework config replaces the keys it sets; config v1 replaces
// everything) and say what would change. Export: the framework formats.
import type { Core, EstimateResult, FieldInfo } from '../../wasm/llmem.js';
import { type Config, isObject, type Json } from './json.js';
import { baseValue, computeBase, configToDoc, docToConfig, leafFields, normalize, sameValue, type Doc } from './doc.js';
import { detectKind, importConfig, type ImportKind, type Trainer } from './importers/index.js';
import { matters } from './relevance.js';
import { merge, resolveConfig } from './resolve.js';
import { importJson } from './share.js';

export { exportConfig, EXPORT_KINDS, type ExportKind, type Exported } from './exporters/index.js';
export { importConfig, IMPORT_KINDS, unreadFormat } from './importers/index.js';

/** What the Import dialog reads: llmem's own config v1 JSON, or one of the importers' formats. */
export type SourceKind = 'config' | ImportKind;

/**
 * The kind a file most likely is, or undefined: config v1 first (a JSON object
 * of config-v1 sections), then the importers' guess; other JSON is read as
 * config v1, whose message names the syntax error or the unknown key.
 */
export function detectSource(fields: readonly FieldInfo[], filename: string, text: string): SourceKind | undefined {
  const json = /^\s*\{/.test(text);
  if (json) {
    try {
      const v: unknown = JSON.parse(text);
      const sections = new Set(fields.filter((f) => !f.path.includes('.')).map((f) => f.path));
      if (isObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => sections.has(k))) return 'config';
    } catch {
      // not valid JSON: the importers' guess, else config v1 (which says what is wrong)
    }
  }
  return detectKind(filename, text) ?? (json ? 'config' : undefined);
}

export interface Change {
  path: string;
  from: Json;
  to: Json;
}

export type Prepared =
  | { ok: false; path: string; message: string }
  | {
      ok: true;
      /** the page's config after Apply */
      doc: Doc;
      notes: string[];
      unsupported: string[];
      /** every key whose value Apply changes */
      changes: Change[];
      /** the core's estimate of the result, or its objection */
      estimate: EstimateResult | { error: string };
    };

/** Every key's value under a doc (its own entry, else the preset / GPU / core default). */
function effective(core: Core, doc: Doc): Record<string, Json> {
  const base = computeBase(core, doc['model.preset'] ?? null, doc['hardware.gpu'] ?? null);
  const out: Record<string, Json> = {};
  for (const f of leafFields(core.fields)) out[f.path] = f.path in doc ? doc[f.path] : baseValue(base, f);
  return out;
}

/** Drop entries of fields the doc's own values hide (what editing on the page does). */
function prune(core: Core, doc: Doc): Doc {
  const vals = effective(core, doc);
  const out: Doc = {};
  for (const [k, v] of Object.entries(doc)) if (matters(k, (p) => vals[p] ?? null)) out[k] = v;
  return normalize(core, out);
}

/** Keys whose value differs between two docs. */
export function changes(core: Core, before: Doc, after: Doc): Change[] {
  const a = effective(core, before),
    b = effective(core, after);
  const out: Change[] = [];
  for (const f of leafFields(core.fields))
    if (!sameValue(f, a[f.path], b[f.path])) out.push({ path: f.path, from: a[f.path], to: b[f.path] });
  return out;
}

/** The model a framework config's architecture keys go on top of: the current one, as a custom model. */
function currentModel(current: Config): Config {
  const r = resolveConfig(current);
  const model = r.ok && isObject(r.config.model) ? { ...r.config.model } : {};
  delete model.preset;
  delete model.name;
  return model;
}

/**
 * Merge an imported config into the page's config: `hf` replaces the model (a
 * custom model named after the file when config.json has no name); a config
 * naming a model preset replaces the model with it; architecture keys without
 * a preset go on top of the current model (made custom); every other key the
 * import sets replaces the page's value, and keys of settings the result hides
 * are dropped.
 */
export function mergeImported(core: Core, doc: Doc, kind: ImportKind, imported: Config, filename = ''): Config {
  const current = docToConfig(doc, core.fields);
  const { model, ...rest } = imported;
  const next = merge(current, rest as Config);
  if (kind === 'hf' && isObject(model)) {
    const m: Config = { ...model };
    const stem = filename.replace(/^.*[\\/]/, '').replace(/\.json$/i, '');
    if (m.name === undefined && stem && stem.toLowerCase() !== 'config') m.name = stem;
    next.model = m;
  } else if (isObject(model)) {
    next.model =
      model.preset !== undefined && model.preset !== null ? { ...model } : merge(currentModel(current), model);
  }
  return next;
}

/** Read `text` as `kind` and work out what Apply would do to the page's config `doc`. */
export function prepareImport(
  core: Core,
  doc: Doc,
  kind: SourceKind,
  text: string,
  options: { filename?: string; worldSize?: number; also?: string; trainer?: Trainer; keepModel?: boolean } = {},
): Prepared {
  let next: Doc;
  let notes: string[] = [];
  let unsupported: string[] = [];
  if (kind === 'config') {
    const r = importJson(core, text);
    if (!r.ok)
      return {
        ok: false,
        path: r.path,
        message: r.path && !r.message.startsWith(r.path) ? `${r.path}: ${r.message}` : r.message,
      };
    next = r.doc;
    notes = ['config v1 replaces the whole setup'];
    if (options.also !== undefined)
      unsupported = ['second file: config v1 names no DeepSpeed JSON, so the file given with it was not read'];
  } else {
    const r = importConfig(kind, text, {
      worldSize: options.worldSize,
      also: options.also,
      trainer: options.trainer,
      modelFromHf: options.keepModel,
    });
    if ('error' in r) return { ok: false, path: r.error.path, message: r.error.message };
    const d = configToDoc(core, mergeImported(core, doc, kind, r.config, options.filename));
    if (!d.ok) return { ok: false, path: d.path, message: `the imported settings do not fit config v1: ${d.message}` };
    next = prune(core, d.doc);
    notes = r.notes;
    unsupported = r.unsupported;
  }
  const resolved = resolveConfig(docToConfig(next, core.fields));
  let estimate: EstimateResult | { error: string };
  if (!resolved.ok) estimate = { error: resolved.error.message };
  else {
    const o = core.estimate(resolved.config);
    estimate = o.ok ? o : { error: o.error.message };
  }
  return { ok: true, doc: next, notes, unsupported, changes: changes(core, doc, next), estimate };
}
