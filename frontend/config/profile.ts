// What a config's training-stack profile sets, among the keys it leaves
// automatic and that matter for it (relevance.ts): the CLI's "stack" lines.
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
