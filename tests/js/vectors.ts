// Reads tests/vectors/core.txt, the vector file the C tests read too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, EstimateResult, Json } from '../../wasm/llmem.js';
import { CATEGORIES } from '../../wasm/llmem.js';

export interface Vector {
  name: string;
  metric: string;
  expected: number;
  tolerance: number;
  config: Config;
}

/** "a.b=value" pairs to a nested config; "q,v" lists for set keys (the caller's field tells). */
export function configFromKeys(spec: string, isSet: (path: string) => boolean): Config {
  const root: Config = {};
  for (const pair of spec.trim().split(/\s+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    const path = pair.slice(0, eq),
      raw = pair.slice(eq + 1);
    let value: Json;
    if (isSet(path)) value = raw === '' ? [] : raw.split(',');
    else if (raw === 'true' || raw === 'false') value = raw === 'true';
    else if (raw === 'null') value = null;
    else if (raw !== '' && !Number.isNaN(Number(raw))) value = Number(raw);
    else value = raw;
    const parts = path.split('.');
    let node = root;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Config;
    node[parts[parts.length - 1]] = value;
  }
  return root;
}

export function readVectors(root: string, isSet: (path: string) => boolean): Vector[] {
  const text = readFileSync(join(root, 'tests/vectors/core.txt'), 'utf8');
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [name, metric, expected, tolerance, keys] = l.split(' | ');
      return {
        name,
        metric,
        expected: Number(expected),
        tolerance: Number(tolerance),
        config: configFromKeys(keys, isSet),
      };
    });
}

export function metricOf(r: EstimateResult, metric: string): number {
  const b = r.per_gpu.breakdown_bytes;
  switch (metric) {
    case 'params.total':
      return r.params.total;
    case 'params.active':
      return r.params.active;
    case 'params.trainable':
      return r.params.trainable;
    case 'peak_allocated':
      return r.per_gpu.peak_allocated_bytes;
    case 'host_cpu':
      return r.host.cpu_bytes;
    case 'model_states':
      return b.weights + b.gradients + b.master_weights + b.optimizer_states;
  }
  if ((CATEGORIES as readonly string[]).includes(metric)) return b[metric as keyof typeof b];
  throw new Error(`unknown metric ${metric}`);
}
