// What every exporter shares: reading a config over its defaults, and listing
// what the target format cannot express (every explicit non-default key it did not write).
import { type Config, getPath, isObject, type Json } from '../json.js';

export interface Exported {
  /** the file or argument line */
  text: string;
  /** config keys (with their values) the format cannot express */
  unexpressed: string[];
}

function leaves(obj: Config, prefix = ''): [string, Json][] {
  const out: [string, Json][] = [];
  for (const [k, v] of Object.entries(obj)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (isObject(v)) out.push(...leaves(v, path));
    else out.push([path, v]);
  }
  return out;
}

/**
 * A view of a (resolved) config over the core defaults (Core.defaults()): `get`
 * reads a value, `take` reads it and records it as expressed, `skip` records why a
 * value is not written, `unexpressed` lists the rest.
 */
export class View {
  private readonly expressed = new Set<string>();
  private readonly reasons: string[] = [];

  constructor(
    readonly config: Config,
    readonly defaults: Config,
  ) {}

  get<T extends Json>(path: string): T {
    const v = getPath(this.config, path);
    // null is "automatic": the default stands, or the training-stack profile's value (Core.defaults(config))
    if (v === undefined) return getPath(this.defaults, path) as T;
    return (v === null ? (getPath(this.defaults, path) ?? null) : v) as T;
  }

  /** The value given in the config itself (undefined when absent). */
  own(path: string): Json | undefined {
    return getPath(this.config, path);
  }

  /** The default of a key. */
  def(path: string): Json {
    return getPath(this.defaults, path) ?? null;
  }

  take<T extends Json>(path: string): T {
    this.expressed.add(path);
    return this.get<T>(path);
  }

  /** Mark paths (or a prefix ending in ".") as expressed without reading them. */
  cover(...paths: string[]): void {
    for (const p of paths) this.expressed.add(p);
  }

  /** A value written only approximately, or not at all, with the reason. */
  skip(path: string, why: string): void {
    this.expressed.add(path);
    this.reasons.push(`${path} = ${JSON.stringify(this.get(path))}: ${why}`);
  }

  unexpressed(groups: Record<string, string> = {}): string[] {
    const out = [...this.reasons];
    const grouped = new Set<string>();
    for (const [path, v] of leaves(this.config)) {
      if (this.expressed.has(path) || [...this.expressed].some((e) => e.endsWith('.') && path.startsWith(e))) continue;
      if (JSON.stringify(v) === JSON.stringify(getPath(this.defaults, path) ?? null)) continue;
      // not training-framework settings: the GPU, llmem's own formula choice and runtime calibration
      if (
        ['version', 'formula', 'model.name'].includes(path) ||
        path.startsWith('hardware.') ||
        (path.startsWith('runtime.') && path !== 'runtime.torch_compile')
      )
        continue;
      const group = Object.keys(groups).find((g) => path.startsWith(g));
      if (group) {
        if (!grouped.has(group)) out.push(`${group}*: ${groups[group]}`);
        grouped.add(group);
      } else out.push(`${path} = ${JSON.stringify(v)}: not expressible in this format`);
    }
    return out;
  }
}

/** The data-parallel size: gpus / (tp * pp * cp). */
/** The micro-batches per step as the core resolves them: stated, from training.global_batch, or 1. */
export function accumulation(v: View, micro: number): number {
  const accum = v.take<number | null>('training.grad_accum'),
    global = v.take<number | null>('training.global_batch');
  return accum ?? (global !== null ? global / (micro * dataParallel(v)) : 1);
}

export function dataParallel(v: View): number {
  return (
    v.get<number>('parallel.gpus') /
    (v.get<number>('parallel.tp') * v.get<number>('parallel.pp') * v.get<number>('parallel.cp'))
  );
}
