// The model and GPU catalogs (one file each, shared by the page, the CLI and the tests).
import modelsJson from './catalog/models.json' with { type: 'json' };
import gpusJson from './catalog/gpus.json' with { type: 'json' };
import type { Config } from '../../wasm/llmem.js';

export interface ModelEntry {
  id: string;
  name: string;
  family: string;
  source: string;
  params_total: number | null;
  params_total_source?: string;
  params_active: number | null;
  notes: string[];
  model: Config;
}

export interface GpuEntry {
  id: string;
  name: string;
  vendor: string;
  arch: string;
  memory_gib: number;
  memory_bytes: number | null;
  bf16_tflops: number | null;
  fp16_tflops: number | null;
  fp8_tflops: number | null;
  hbm_tb_per_s: number | null;
  intra_node_gb_per_s: number | null;
  inter_node_gb_per_s: number | null;
  source: string;
}

export const MODELS = modelsJson as unknown as ModelEntry[];
export const GPUS = gpusJson as unknown as GpuEntry[];

export const findModel = (id: string) => MODELS.find((m) => m.id === id);
export const findGpu = (id: string) => GPUS.find((g) => g.id === id);
