// What a config's training-stack profile sets, among the keys it leaves
// automatic and that matter for it (relevance.ts): the CLI's "stack" lines.
import type { Config, Core, Json, ProfileValue } from '../../wasm/llmem.js';
import { matters } from './relevance.js';

const isObject = (v: unknown): v is Config => typeof v === 'object' && v !== null && !Array.isArray(v);

function at(config: Config, path: string): Json | undefined {
  let node: Json | undefined = config;
  for (const p of path.split('.')) node = isObject(node) ? node[p] : undefined;
  return node;
}

const DEFAULTS = new WeakMap<Core, Config>(); // the core's defaults, read once per core

export function impliedByStack(core: Core, config: Config): ProfileValue[] {
  const profile = core.profile(config);
  if (!profile.ok) return [];
  let defaults = DEFAULTS.get(core);
  if (!defaults) DEFAULTS.set(core, (defaults = core.defaults()));
  const get = (path: string): Json => at(config, path) ?? at(defaults, path) ?? null;
  return profile.implied.filter((p) => matters(p.path, get));
}
