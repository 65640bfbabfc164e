// What the importer tests share: a config as dotted leaf paths, and an import that must succeed or fail.
import type { Json } from '../../wasm/llmem.js';
import {
  importConfig,
  type Imported,
  type ImportKind,
  type ImportOptions,
} from '../../frontend/config/importers/index.js';

/** A nested config as dotted leaf paths; arrays are leaves. */
export function flatten(value: Json, prefix = '', out: Record<string, Json> = {}): Record<string, Json> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    for (const [k, v] of Object.entries(value)) flatten(v as Json, prefix ? `${prefix}.${k}` : k, out);
  else out[prefix] = value;
  return out;
}

/** The import, which must succeed, with its config flattened. */
export function imported(
  kind: ImportKind,
  text: string,
  options: ImportOptions = {},
): Imported & { flat: Record<string, Json> } {
  const r = importConfig(kind, text, options);
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return { ...r, flat: flatten(r.config as Json) };
}

/** The import's error, which it must give. */
export function importError(
  kind: ImportKind,
  text: string,
  options: ImportOptions = {},
): { path: string; message: string } {
  const r = importConfig(kind, text, options);
  if (!('error' in r)) throw new Error(`imported without an error: ${JSON.stringify(r.config)}`);
  return r.error;
}
