// One entry point for the exporters. Give them a resolved config (presets expanded,
// resolveConfig) and the core defaults (Core.defaults()) for the keys it leaves out.
import type { Config } from '../../../wasm/llmem.js';
import type { Exported } from './common.js';
import { exportDeepSpeed } from './deepspeed.js';
import { exportMegatron } from './megatron.js';
import { exportTorchtitan } from './torchtitan.js';
import { exportVerl } from './verl.js';

export type { Exported } from './common.js';
export type ExportKind = 'deepspeed' | 'megatron' | 'torchtitan' | 'verl';
export const EXPORT_KINDS: ExportKind[] = ['deepspeed', 'megatron', 'torchtitan', 'verl'];

export function exportConfig(kind: ExportKind, config: Config, defaults: Config): Exported {
  switch (kind) {
    case 'deepspeed':
      return exportDeepSpeed(config, defaults);
    case 'megatron':
      return exportMegatron(config, defaults);
    case 'torchtitan':
      return exportTorchtitan(config, defaults);
    case 'verl':
      return exportVerl(config, defaults);
  }
}
