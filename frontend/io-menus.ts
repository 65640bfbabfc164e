// The Import and Export dialogs' menus: only the dialogs read them, so they load with the dialogs'
// chunks rather than with the page's state (io-state.ts; first load, scripts/first-load.mjs).
import type { Trainer } from './config/importers/index.js';
import type { ExportChoice } from './io-state.js';

/** The TRL trainers a file may be read as, when its keys do not tell (importers/trl.ts). */
export const TRAINERS: { id: Trainer | ''; label: string }[] = [
  { id: '', label: 'From the file' },
  { id: 'sft', label: 'SFT (SFTConfig)' },
  { id: 'dpo', label: 'DPO (DPOConfig)' },
  { id: 'orpo', label: 'ORPO (ORPOConfig)' },
  { id: 'grpo', label: 'GRPO (GRPOConfig)' },
  { id: 'reward', label: 'Reward model (RewardConfig)' },
];

/** The Export dialog's formats. */
export const EXPORTS: { id: ExportChoice; label: string; file: string; type: string; about: string }[] = [
  {
    id: 'config',
    label: 'config v1 JSON',
    file: 'llmem-config.json',
    type: 'application/json',
    about: "llmem's own format: what `npx llmem estimate` and the Import dialog read.",
  },
  {
    id: 'deepspeed',
    label: 'DeepSpeed JSON',
    file: 'ds_config.json',
    type: 'application/json',
    about: 'A DeepSpeed config (ds_config.json): batch sizes, precision, ZeRO stage and offload, optimizer.',
  },
  {
    id: 'megatron',
    label: 'Megatron-LM arguments',
    file: 'megatron-args.sh',
    type: 'text/x-shellscript',
    about: 'A torchrun … pretrain_gpt.py command line: model, parallel layout, batch, precision, recompute.',
  },
  {
    id: 'torchtitan',
    label: 'torchtitan TOML',
    file: 'torchtitan.toml',
    type: 'application/toml',
    about:
      'A torchtitan job-config fragment: [model], [training], [parallelism], [activation_checkpoint], [optimizer].',
  },
  {
    id: 'verl',
    label: 'verl launch line',
    file: 'verl-main-ppo.sh',
    type: 'text/x-shellscript',
    about:
      'A python3 -m verl.trainer.main_ppo command line (Hydra overrides): the rl section, batches, FSDP, offload, rollout engine.',
  },
];
