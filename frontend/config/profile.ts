// What a config's training-stack profile sets, among the keys it leaves
// automatic and that matter for it (relevance.ts): the CLI's "stack" lines,
// and the framework file each row follows: the wasm binary leaves those texts
// out (CMakeLists.txt, LLMEM_PROFILE_TEXT_IN_JS), so they load here, once,
// when something shows them (wasm/profile-sources.json, generated from
// core/profiles.def).
import type { Core, ProfileValue } from '../../wasm/llmem.js';
import { type Config, getPath, type Json } from './json.js';
import { matters } from './relevance.js';

const DEFAULTS = new WeakMap<Core, Config>(); // the core's defaults, read once per core

export function impliedByStack(core: Core, config: Config): ProfileValue[] {
  const profile = core.profile(config);
  if (!profile.ok) return [];
  let defaults = DEFAULTS.get(core);
  if (!defaults) DEFAULTS.set(core, (defaults = core.defaults()));
  const get = (path: string): Json => getPath(config, path) ?? getPath(defaults, path) ?? null;
  return profile.implied.filter((p) => matters(p.path, get));
}

/** A profile value with the framework file its row follows. */
export interface ProfileLine extends ProfileValue {
  source: string;
}

let loaded: Promise<readonly string[]> | undefined;

/** The rows' source texts, by row. */
export function profileSources(): Promise<readonly string[]> {
  loaded ??= import('../../wasm/profile-sources.json', { with: { type: 'json' } }).then((m) => m.default.sources);
  return loaded;
}

/** A row's text in the loaded texts ('' for none). */
export const sourceOf = (sources: readonly string[], row: number): string => (row >= 0 ? (sources[row] ?? '') : '');

/** Each value with its row's source text. */
export async function withSources(values: readonly ProfileValue[]): Promise<ProfileLine[]> {
  if (!values.length) return [];
  const sources = await profileSources();
  return values.map((v) => ({ ...v, source: sourceOf(sources, v.row) }));
}
