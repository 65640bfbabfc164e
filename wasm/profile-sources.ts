// The source text of each training-stack profile row (core/profiles.def): the wasm binary leaves the texts out
// (CMakeLists.txt, LLMEM_PROFILE_TEXT_IN_JS) and they load here, once, when something shows them: the page's
// "set by the training stack" list and "why this number", the CLI's stack lines.
import type { ProfileValue } from '../frontend/config/results.js';

/** A profile value with the framework file its row follows. */
export interface ProfileLine extends ProfileValue {
  source: string;
}

let loaded: Promise<readonly string[]> | undefined;

/** The rows' source texts, by row (wasm/profile-sources.json, generated from core/profiles.def). */
export function profileSources(): Promise<readonly string[]> {
  loaded ??= import('./profile-sources.json', { with: { type: 'json' } }).then((m) => m.default.sources);
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
