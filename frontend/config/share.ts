// Export / import of config-v1 JSON, and the equivalent CLI command line.
import type { Core, FieldInfo, Json } from '../../wasm/llmem.js';
import { configToDoc, docToConfig, leafFields, type Doc, type DocOutcome } from './doc.js';

/** The config-v1 JSON that Export downloads (2-space indent, trailing newline). */
export function exportJson(doc: Doc, fields: readonly FieldInfo[]): string {
  return `${JSON.stringify(docToConfig(doc, fields), null, 2)}\n`;
}

/** Imported text -> doc, or a message saying what is wrong and where. */
export function importJson(core: Core, text: string): DocOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, path: '', message: `not valid JSON: ${(e as Error).message}` };
  }
  return configToDoc(core, parsed);
}

const SAFE = /^[A-Za-z0-9_.,=:/+@%-]+$/;
const shellQuote = (s: string) => (SAFE.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** How `llmem estimate --set key=value` reads a value: JSON when it parses, else the raw string. */
function setValue(v: Json): string {
  if (typeof v !== 'string') return JSON.stringify(v);
  try {
    JSON.parse(v);
    return JSON.stringify(v); // "true", "7", "null" as text must stay text
  } catch {
    return v;
  }
}

/** `echo '{"version":1}' | npx llmem estimate - --set k=v ...`: the CLI run that prints this view's numbers. */
export function cliCommand(doc: Doc, fields: readonly FieldInfo[]): string {
  const sets: string[] = [];
  for (const f of leafFields(fields)) {
    if (!(f.path in doc)) continue;
    const v = doc[f.path];
    if (v === null && (f.path === 'model.preset' || f.path === 'hardware.gpu')) continue;
    sets.push(`--set ${shellQuote(`${f.path}=${setValue(v)}`)}`);
  }
  return [`echo '{"version":1}' | npx llmem estimate -`, ...sets].join(' ');
}
