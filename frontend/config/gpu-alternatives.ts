// The GPU models of the catalog with more memory than now, each with the config
// resolved on it (its memory and speeds from the catalog), least memory first:
// what suggest.ts's nextGpu estimates. Built on the page (which has the catalog)
// and sent to the Worker with the suggestion request; by `llmem suggest` in-process.
import type { Config } from '../../wasm/llmem.js';
import { GPUS } from './catalog.js';
import { resolveConfig } from './resolve.js';
import type { GpuAlternative } from './suggest.js';

const bytesOf = (g: (typeof GPUS)[number]) => g.memory_bytes ?? g.memory_gib * 2 ** 30;

/** The config on another GPU of the catalog: the catalog's memory and speeds replace the resolved ones. */
function onGpu(config: Config, id: string): Config {
  const { memory_gib, bf16_tflops, fp8_tflops, hbm_tb_per_s, intra_node_gb_per_s, inter_node_gb_per_s, ...hw } =
    (config.hardware ?? {}) as Config;
  const { cublas_workspace_mib, ...rt } = (config.runtime ?? {}) as Config;
  return { ...config, hardware: { ...hw, gpu: id }, runtime: rt };
}

export function gpuAlternatives(config: Config, capacityBytes: number): GpuAlternative[] {
  const out: GpuAlternative[] = [];
  for (const g of GPUS.filter((x) => bytesOf(x) > capacityBytes).sort((a, b) => bytesOf(a) - bytesOf(b))) {
    const r = resolveConfig(onGpu(config, g.id));
    if (r.ok) out.push({ id: g.id, name: g.name, config: r.config });
  }
  return out;
}
