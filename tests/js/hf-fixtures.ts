// What the config.json importer tests of newer models share: their fixtures (tests/fixtures/import/hf/<id>.json5,
// read as Python's json writes them), an import that must succeed or be refused, and parameter counts through the core.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, Core } from '../../wasm/llmem.js';
import { repoRoot } from '../../wasm/node.js';
import { MODELS } from '../../frontend/config/catalog.js';
import { type HfImport, importHfConfig } from '../../frontend/config/importers/hf.js';
import { parsePythonJson } from '../../frontend/config/json.js';

type Obj = Record<string, unknown>;
/** The folder of the HF config.json fixtures. */
export const hfFixtureDir = join(repoRoot(), 'tests/fixtures/import/hf');
const dir = hfFixtureDir;

/** A .json5 fixture of tests/fixtures/import/hf. */
export const readHf = (id: string): Obj => parsePythonJson(readFileSync(join(dir, `${id}.json5`), 'utf8')) as Obj;

/** The import, which must succeed. */
export const hfOk = (r: ReturnType<typeof importHfConfig>): HfImport => {
  if ('error' in r) throw new Error(r.error.message);
  return r;
};

/** A config.json's import, which must succeed, and its model section. */
export const hfImport = (json: Obj): HfImport => hfOk(importHfConfig(json));
export const hfModel = (json: Obj) => hfImport(json).config.model as Config;

/** The import's error, which it must give. */
export const hfRefused = (r: ReturnType<typeof importHfConfig>) => {
  if (!('error' in r)) throw new Error('expected the import to be refused');
  return r.error;
};

/** The core's parameter counts of a model (and any other config sections). */
export const paramsOf = (core: Core, model: Config, extra: Config = {}) => {
  const r = core.estimate({ model, ...extra });
  if (!r.ok) throw new Error(r.error.message);
  return r.params;
};

/** A catalog preset's published parameter total. */
export const catalogTotal = (id: string) => MODELS.find((m) => m.id === id)!.params_total!;
