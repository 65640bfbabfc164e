// PYTORCH_CUDA_ALLOC_CONF (PYTORCH_ALLOC_CONF from torch 2.9) set by a launch script: the caching allocator's options
// (c10/cuda/CUDAAllocatorConfig.cpp parseArgs: comma-separated key:value) as the runtime keys the simulated allocator
// reads; the others are reported.
import { type Draft, ImportError } from './common.js';

const NAMES = ['PYTORCH_CUDA_ALLOC_CONF', 'PYTORCH_ALLOC_CONF'];

export function applyAllocConf(d: Draft, vars: Map<string, string>): void {
  for (const name of NAMES) {
    const conf = vars.get(name);
    if (conf === undefined || conf === '' || conf.includes('$')) continue;
    for (const item of conf.split(',')) {
      const [key, value = ''] = item.split(':').map((s) => s.trim());
      const at = `${name} ${key}`;
      if (key === 'expandable_segments') d.set('runtime.expandable_segments', /^true$/i.test(value));
      else if (key === 'max_split_size_mb') {
        const mib = Number(value);
        if (!(mib > 0)) throw new ImportError(name, `${at}: ${value} is not a size in MiB`);
        d.set('runtime.max_split_size_mib', mib);
      } else if (key === 'garbage_collection_threshold') {
        const t = Number(value);
        if (!(t > 0 && t < 1)) throw new ImportError(name, `${at}: ${value} is not a fraction between 0 and 1`);
        d.set('runtime.gc_threshold', t);
      } else if (key !== '') d.skip(at, `${value}: not an allocator option llmem simulates; not applied`);
    }
    d.note(`${name}=${conf}: the caching allocator's options (runtime.*)`);
  }
}
