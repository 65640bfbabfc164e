// Config JSON: its types and the helpers its readers share (the wrapper, the page's documents, exporters).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Config = { [key: string]: Json };

export interface ConfigError {
  path: string;
  message: string;
}

export const isObject = (v: unknown): v is Config => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value as an error message names it: null, "text", a list, an object, 42. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `"${v}"`;
  return typeof v === 'object' ? 'an object' : String(v);
}

/** The value at a dotted path of a config tree, or undefined. */
export function getPath(node: Json | undefined, path: string): Json | undefined {
  for (const p of path.split('.')) node = isObject(node) ? node[p] : undefined;
  return node;
}

/** Sets a dotted path in a config tree, making the groups on the way. */
export function setPath(root: Config, path: string, value: Json): void {
  const parts = path.split('.');
  let node = root;
  for (const p of parts.slice(0, -1)) node = (isObject(node[p]) ? node[p] : (node[p] = {})) as Config;
  node[parts[parts.length - 1]] = value;
}

/**
 * JSON as Python's json.dump writes it: also the bare NaN, Infinity and -Infinity it emits outside strings
 * (transformers' config.json of Mamba-2 style models: "time_step_limit": [0.0, Infinity]), read as null,
 * 1e999 and -1e999 (JSON's own overflow to ±Infinity). Throws JSON.parse's error when the text is not that either.
 */
export function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (!/NaN|Infinity/.test(text)) throw e;
    const bare = text.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (m) =>
      m.startsWith('"') ? m : m === 'NaN' ? 'null' : m.startsWith('-') ? '-1e999' : '1e999',
    );
    try {
      return JSON.parse(bare);
    } catch {
      throw e; // the original message: the bare constants were not the problem
    }
  }
}
