// One entry point for every importer, and a guess of the kind from a file name and its text.
import { isAccelerateConfig } from '../accelerate-signature.js';
import { importAccelerate } from './accelerate.js';
import { importAxolotl } from './axolotl.js';
import { guard, parseJsonText, type ImportKind, type ImportResult, withModelFromHf } from './common.js';
import type { Config, Json } from '../../../wasm/llmem.js';
import { importDeepSpeed } from './deepspeed.js';
import { importHfConfig } from './hf.js';
import { importLitgpt } from './litgpt.js';
import { importLlamaFactory } from './llamafactory.js';
import { importMegatron } from './megatron.js';
import { importNemoRl } from './nemo-rl.js';
import { importOpenRlhf } from './openrlhf.js';
import { importSwift } from './swift.js';
import { importTorchtitan } from './torchtitan.js';
import { importTorchtune } from './torchtune.js';
import { importTrainingArgs } from './training-args.js';
import { importTrl, type Trainer } from './trl.js';
import { trlAccelerateConfig } from './trl-accelerate.js';
import { importVerl } from './verl.js';

export type { ImportKind, ImportResult, Imported } from './common.js';
export { type Trainer, TRAINER_IDS } from './trl.js';
export { presetForModelId } from './common.js';
export { importHfConfig } from './hf.js';

export const IMPORT_KINDS: ImportKind[] = [
  'hf',
  'deepspeed',
  'megatron',
  'torchtitan',
  'accelerate',
  'training_args',
  'llamafactory',
  'axolotl',
  'trl',
  'verl',
  'openrlhf',
  'litgpt',
  'torchtune',
  'swift',
  'nemo_rl',
];

export interface ImportOptions {
  /** world size for formats that do not carry it (Megatron --global-batch-size, torchtitan shard degree -1,
   * DeepSpeed train_batch_size (the data-parallel size), TrainingArguments', TRL's and OpenRLHF DPO's training
   * processes; verl's and OpenRLHF's override the file's; one that differs from accelerate num_processes is an error) */
  worldSize?: number;
  /** the model comes from a config.json given beside the file (llmem import --hf): an id the catalog does not
   * hold is noted, not refused */
  modelFromHf?: boolean;
  /** the TRL trainer (sft | dpo | orpo | grpo) where no key of the file tells it */
  trainer?: Trainer;
  /**
   * the text of the DeepSpeed JSON the imported file names by path (accelerate
   * deepspeed_config_file; TrainingArguments, LLaMA-Factory and axolotl `deepspeed`; ms-swift --deepspeed):
   * read as the DeepSpeed importer reads it; without it the path is reported as not read. For a TRL or
   * TrainingArguments file it may instead be the accelerate config the run is launched with (withAccelerate)
   */
  also?: string;
  /** NeMo-RL: the bases further up a `defaults:` chain, in order (the second file's base, then its base, ...) */
  bases?: string[];
  /** withAccelerate: the parallel keys of the accelerate config the run is launched with, set before the file's
   * (its engine decides what the file's load dtype means for the master copy) */
  launch?: Record<string, Json>;
}

/** The kinds whose files may name a second file (ImportOptions.also): a DeepSpeed JSON, or NeMo-RL's base config. */
const READS_ALSO: readonly ImportKind[] = [
  'accelerate',
  'training_args',
  'llamafactory',
  'axolotl',
  'trl',
  'swift',
  'nemo_rl',
];

/** Import `text` as `kind` into config v1: {config, notes, unsupported} or {error} (nothing applied). */
export function importConfig(kind: ImportKind, text: string, options: ImportOptions = {}): ImportResult {
  // a TRL file naming one of TRL's packaged accelerate configs is launched with it, unless one is given
  const packaged = kind === 'trl' && options.also === undefined ? trlAccelerateConfig(text) : undefined;
  if (packaged) options = { ...options, also: packaged.json };
  const read = () => withAccelerate(kind, text, options) ?? importKind(kind, text, options);
  const r = options.modelFromHf ? withModelFromHf(read) : read();
  if (options.also !== undefined && !READS_ALSO.includes(kind) && !('error' in r))
    r.unsupported.push(`second file: a ${kind} file names no DeepSpeed JSON, so the file given with it was not read`);
  return r;
}

/** The kinds a script reads, launched by an accelerate config (accelerate launch --config_file a.yaml script.py;
 * LLaMA-Factory's examples/accelerate/fsdp_config.yaml launches src/train.py so). */
const LAUNCHED_BY_ACCELERATE: readonly ImportKind[] = ['trl', 'training_args', 'llamafactory', 'axolotl', 'swift'];
/** What an accelerate config decides besides the processes and the engine, taken where the file leaves it unset:
 * FSDP activation checkpointing, dynamo (torch.compile), fp8 mixed precision. */
const LAUNCH_TRAINING_KEYS = [
  ['training', 'recompute'],
  ['training', 'recompute_layers'],
  ['training', 'fp8_linear'],
  ['runtime', 'torch_compile'],
] as const;

/**
 * A TRL or TrainingArguments file with the accelerate config its run is launched with (open-r1's recipes:
 * `accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py --config config.yaml`):
 * the accelerate config sets the processes (the world size the file's batches are divided by) and the engine, the
 * file the training. undefined: not such a pair.
 */
function withAccelerate(kind: ImportKind, text: string, options: ImportOptions): ImportResult | undefined {
  if (!LAUNCHED_BY_ACCELERATE.includes(kind) || options.also === undefined) return undefined;
  if (!isAccelerateConfig(options.also)) return undefined;
  const acc = importAccelerate(options.also);
  if ('error' in acc)
    return { error: { path: acc.error.path, message: `the accelerate config: ${acc.error.message}` } };
  const launch = { ...((acc.config.parallel ?? {}) as Record<string, Json>) };
  // accelerate launch --num_processes N overrides the config's num_processes (open-r1's GRPO recipes launch 7 of a
  // node's 8 GPUs, one left to vllm-serve): the world size given is that flag
  if (options.worldSize !== undefined && options.worldSize !== launch.gpus) {
    acc.notes.push(
      `num_processes ${String(launch.gpus ?? 1)} overridden by the world size given, ${options.worldSize} (accelerate launch --num_processes)`,
    );
    launch.gpus = options.worldSize;
  }
  if (launch.engine === 'single' && typeof launch.gpus === 'number' && launch.gpus > 1)
    return {
      error: {
        path: 'distributed_type',
        message: `the accelerate config: distributed_type NO runs one process; the world size given is ${launch.gpus} (give a multi-GPU accelerate config)`,
      },
    };
  const world = typeof launch.gpus === 'number' ? launch.gpus : options.worldSize;
  let r = importKind(kind, text, { ...options, also: undefined, worldSize: world, launch });
  if ('error' in r) return r;
  let own = (r.config.parallel ?? {}) as Record<string, Json>;
  // A file that names its own engine keeps it (TrainingArguments' deepspeed forces DeepSpeed, axolotl's
  // setup_fsdp_envs / prepare_optim_env set ACCELERATE_USE_FSDP / _DEEPSPEED in its process): the launch then gives
  // the processes only, none of its engine's keys
  const fileEngine = own.engine !== launch.engine;
  if (fileEngine) {
    const processes = Object.fromEntries(
      Object.entries(launch).filter(([k]) => k === 'gpus' || k === 'gpus_per_node'),
    ) as Record<string, Json>;
    r = importKind(kind, text, { ...options, also: undefined, worldSize: world, launch: processes });
    if ('error' in r) return r;
    own = (r.config.parallel ?? {}) as Record<string, Json>;
  }
  // A file that hands TrainingArguments its own DeepSpeed config gets HfTrainerDeepSpeedConfig, whose weak reference
  // turns zero.Init on in from_pretrained whatever the launcher's zero3_init_flag (transformers training_args.py
  // __post_init__; integrations/deepspeed.py is_deepspeed_zero3_enabled): the flag only decides whether accelerate's
  // DeepSpeedPlugin makes one itself (set_deepspeed_weakref)
  const zeroInit: string[] = [];
  if (own.zero_init === false && fileNamesDeepSpeed(kind, text, options, world)) {
    own = { ...own };
    delete own.zero_init;
    zeroInit.push(
      'zero3_init_flag false does not apply: the file gives TrainingArguments its DeepSpeed config, whose HfTrainerDeepSpeedConfig partitions the model as from_pretrained loads it (zero.Init; parallel.zero_init stays true)',
    );
  }
  const config: Record<string, Json> = { ...r.config, parallel: own };
  // the launcher's precision holds when the file sets neither bf16 nor fp16 (transformers training_args.py
  // __post_init__ writes ACCELERATE_MIXED_PRECISION only for them), and with it its fp8
  const launcherPrecision = !setsPrecision(kind, text);
  const accTraining = (acc.config.training ?? {}) as Record<string, Json>;
  const training = { ...((config.training ?? {}) as Record<string, Json>) };
  const precision: string[] = [];
  if (launcherPrecision && accTraining.dtype !== undefined && accTraining.dtype !== training.dtype) {
    precision.push(
      `training.dtype ${String(accTraining.dtype)}: the file sets neither bf16 nor fp16, so the accelerate config's mixed precision holds (transformers training_args.py keeps ACCELERATE_MIXED_PRECISION)`,
    );
    training.dtype = accTraining.dtype;
    config.training = training;
  } else if (!launcherPrecision && accTraining.dtype !== undefined && accTraining.dtype !== training.dtype)
    precision.push(
      `its precision (${String(accTraining.dtype)}) gives way to the file's (${String(training.dtype)}): the trainer sets ACCELERATE_MIXED_PRECISION from bf16 / fp16`,
    );
  for (const [group, key] of LAUNCH_TRAINING_KEYS) {
    if (key === 'fp8_linear' && !launcherPrecision) continue; // the file's bf16 / fp16 replaces the launcher's fp8
    const from = (acc.config[group] ?? {}) as Record<string, Json>;
    const into = { ...((config[group] ?? {}) as Record<string, Json>) };
    if (from[key] !== undefined && into[key] === undefined) {
      into[key] = from[key];
      config[group] = into;
    }
  }
  const launched = (fileEngine ? ['gpus', 'gpus_per_node'].filter((k) => k in launch) : Object.keys(launch)).filter(
    (k) => zeroInit.length === 0 || k !== 'zero_init',
  );
  return {
    config: config as Config,
    notes: [
      // the file's own guess of the engine, and the accelerate profile, give way to the launch
      ...r.notes.filter((n) => !n.startsWith('no deepspeed or fsdp')),
      `parallel: from the accelerate config it is launched with (${launched.join(', ')})${fileEngine ? `; the file's own engine, ${String(own.engine)}, over the accelerate config's ${String(launch.engine)}` : ''}`,
      ...acc.notes
        .filter((n) => !/^(runtime\.framework|mixed_precision)/.test(n))
        .map((n) => `accelerate config: ${n}`),
      ...precision.map((n) => `accelerate config: ${n}`),
      ...zeroInit.map((n) => `accelerate config: ${n}`),
    ],
    unsupported: [...r.unsupported, ...acc.unsupported.map(pairedSkip)],
  };
}

/** Whether the launched file, read without the launch, names a DeepSpeed config of its own (TrainingArguments.deepspeed). */
function fileNamesDeepSpeed(
  kind: ImportKind,
  text: string,
  options: ImportOptions,
  world: number | undefined,
): boolean {
  const alone = importKind(kind, text, { ...options, also: undefined, worldSize: world });
  return !('error' in alone) && (alone.config.parallel as Record<string, Json> | undefined)?.engine === 'deepspeed';
}

/**
 * Whether the launched file sets the trainer's precision: TrainingArguments' bf16 / fp16 (LLaMA-Factory's and axolotl's
 * keys are passed on as them, pure_bf16 loads bf16 without autocast), and TRL's configs, whose bf16 defaults to true
 * unless fp16 is set (trl sft_config.py / grpo_config.py __post_init__: `self.bf16 = not self.fp16 if self.bf16 is None`).
 */
function setsPrecision(kind: ImportKind, text: string): boolean {
  // a YAML line or a JSON member: `bf16: true`, `"bf16": true`
  const on = (key: string) => new RegExp(`(^|[{,])\\s*"?${key}"?\\s*:\\s*"?(true|True|auto)\\b`, 'm').test(text);
  if (kind === 'trl') return !/^\s*bf16\s*:\s*(false|False)\b/m.test(text) || on('fp16');
  if (kind === 'swift') return true; // ms-swift always sets the Trainer's bf16 / fp16 (model_args.py _init_mixed_precision)
  return on('bf16') || on('fp16') || on('pure_bf16');
}

/** The DeepSpeed file an accelerate config names is a third file, which a paired import does not take: say so. */
function pairedSkip(u: string): string {
  const m = /^(deepspeed_config\.deepspeed_config_file): "([^"]+)" was not read/.exec(u);
  if (m === null) return `accelerate config: ${u}`;
  return `accelerate config: ${m[1]}: "${m[2]}" was not read (a paired import takes two files): its ZeRO stage, offload, buckets and precision are not applied; set parallel.* by hand, or see them with \`llmem import accelerate <accelerate config> ${m[2].split('/').pop()}\``;
}

function importKind(kind: ImportKind, text: string, options: ImportOptions): ImportResult {
  switch (kind) {
    case 'hf':
      return guard(() => {
        const r = importHfConfig(parseJsonText(text, 'config.json'));
        if ('error' in r) return r;
        return {
          config: r.config,
          notes: r.notes,
          unsupported: [...r.warnings, ...r.unknown.map((k) => `${k}: not a config.json key llmem knows; not applied`)],
        };
      }) as ImportResult;
    case 'deepspeed':
      return importDeepSpeed(text, options.worldSize);
    case 'megatron':
      return importMegatron(text, options);
    case 'torchtitan':
      return importTorchtitan(text, options);
    case 'accelerate':
      return importAccelerate(text, options.also, options.worldSize);
    case 'training_args':
      return importTrainingArgs(text, options.also, options.worldSize, options.launch);
    case 'llamafactory':
      return importLlamaFactory(text, options.also, options.worldSize, options.launch);
    case 'axolotl':
      return importAxolotl(text, options.also, options.worldSize, options.launch);
    case 'trl':
      return importTrl(text, options);
    case 'verl':
      return importVerl(text, options);
    case 'openrlhf':
      return importOpenRlhf(text, options);
    case 'litgpt':
      return importLitgpt(text, options);
    case 'torchtune':
      return importTorchtune(text, options);
    case 'swift':
      return importSwift(text, options);
    case 'nemo_rl':
      return importNemoRl(text, options);
  }
}

/**
 * Training tools whose configs llmem does not read, told by a signature of their files: named in the refusal
 * instead of "cannot tell", and kept from being read as a format they resemble (a `swift sft` or DeepSpeed-Chat
 * script is not Megatron's).
 */
const UNREAD_FORMATS: [string, (name: string, has: (re: RegExp) => boolean) => boolean][] = [
  [
    // swift sft | pt | rlhf are read (kind swift, detectKind); Megatron-SWIFT and the commands that do not train are not
    'an ms-swift Megatron-SWIFT command line (megatron sft | pt | rlhf) or an ms-swift command that does not train (swift infer | export | deploy | rollout)',
    (_, has) =>
      has(
        /(^|[\s;&|(])(megatron\s+(sft|pt|rlhf|export)|swift\s+(infer|export|deploy|rollout|merge-lora|eval|sample|app|web-ui))\b/m,
      ),
  ],
  ['a DeepSpeed-Chat training script', (_, has) => has(/\bmain\.py\b[\s\S]*--(zero_stage|actor_model_name_or_path)\b/)],
  ['a NeMo 1.x config (trainer: and exp_manager:)', (_, has) => has(/^trainer:/m) && has(/^exp_manager:/m)],
  ['a nanotron config (parallelism: and tokens:)', (_, has) => has(/^parallelism:/m) && has(/^tokens:/m)],
  ['an Oumi config (training: trainer_type)', (_, has) => has(/^training:/m) && has(/^\s+trainer_type:/m)],
  [
    "a torchtitan config registry (Python; torchtitan's TOML configs gave way to these in 2026-02)",
    (name, has) => name.endsWith('.py') && has(/^\s*(from|import)\s+torchtitan\b/m),
  ],
  [
    'a Megatron-Bridge recipe (run_recipe / recipe overrides)',
    (_, has) => has(/\brun_recipe\.py\b|megatron\.bridge\.recipes/),
  ],
];

/** What a file is when it is one of the training tools llmem does not read; undefined otherwise. */
export function unreadFormat(filename: string, text: string): string | undefined {
  const head = text.slice(0, 65536);
  const has = (re: RegExp) => re.test(head);
  return UNREAD_FORMATS.find(([, is]) => is(filename.toLowerCase(), has))?.[0];
}

/**
 * A top-level `model:` (or PPO's `policy_model:`) block whose `_component_` is a torchtune builder, found by one
 * pass over the lines (a regex over the block backtracked exponentially on long blocks without one: NeMo's and
 * nanotron's `model:` sections froze the page).
 */
function torchtuneModel(text: string): boolean {
  let inBlock = false;
  for (const line of text.split('\n')) {
    if (/^(model|policy_model):\s*$/.test(line)) inBlock = true;
    else if (!inBlock || line.trim() === '') continue;
    else if (!/^[ \t]/.test(line)) inBlock = false;
    else if (/^[ \t]+_component_:\s*['"]?torchtune\./.test(line)) return true;
  }
  return false;
}

/** The importer kind a file most likely is, from its name and content; undefined when unsure. */
export function detectKind(filename: string, text: string): ImportKind | undefined {
  const name = filename.toLowerCase().split(/[\\/]/).pop() ?? '';
  const has = (re: RegExp) => re.test(text);
  if (name.endsWith('.toml')) return 'torchtitan';
  // NeMo-RL (NVIDIA-NeMo/RL examples/configs): a policy: section beside cluster:, or a recipe inheriting one with the
  // program's section (grpo:, sft:, dpo:)
  if (has(/^policy:/m) && (has(/^cluster:/m) || (has(/^defaults:/m) && has(/^(grpo|sft|dpo):/m)))) return 'nemo_rl';
  // a recipe that only overrides its base (examples/configs/recipes/llm/*.yaml: `defaults: ./grpo-....yaml`, then
  // cluster: or checkpointing: alone): a file name, not Hydra's list, beside NeMo-RL's sections; the importer asks
  // for the base
  if (
    has(/^defaults:[ \t]*["']?[^\s"'[{-][^\s"']*\.ya?ml["']?[ \t]*$/m) &&
    has(/^(policy|cluster|checkpointing|logger|loss_fn|grpo|sft|dpo|distillation|value):/m)
  )
    return 'nemo_rl';
  // verl's trainers: main_ppo and its kin, and the SFT trainers (verl/trainer/{fsdp_sft_trainer,sft_trainer}.py @b178a3cd),
  // which the verl importer names and refuses
  if (
    has(
      /\bverl[./]trainer[./](main_\w+|fsdp_sft_trainer|sft_trainer(_ray)?)\b|^\s*actor_rollout_ref\.\w|^actor_rollout_ref:/m,
    )
  )
    return 'verl';
  // ms-swift: swift sft | pt | rlhf, or a launcher running swift/cli/{sft,pt,rlhf}.py (swift/cli/main.py @3602360a)
  if (has(/(^|[\s;&|(])swift\s+(sft|pt|rlhf)\b|(^|[\s/])swift\/cli\/(sft|pt|rlhf)\.py\b/m)) return 'swift';
  // OpenRLHF: openrlhf.cli.train_*, or before the package (OpenRLHF@b9517c56 examples/scripts: deepspeed ../train_dpo.py)
  // its own --micro_train_batch_size
  if (has(/\bopenrlhf[./]cli[./]train_|--micro_train_batch_size\b/)) return 'openrlhf';
  if (unreadFormat(filename, text)) return undefined; // a tool llmem does not read, whatever it resembles
  // Megatron's dashed arguments; a script of underscored HF-style flags (DeepSpeed-Chat's `deepspeed main.py
  // --model_name_or_path ...`) is none of the formats llmem reads
  if (has(/--(tensor-model-parallel-size|num-layers|hidden-size|micro-batch-size)\b/)) return 'megatron';
  if (name.endsWith('.sh') && !has(/--model_name_or_path\b/)) return 'megatron';
  if (name.endsWith('.json') || /^\s*\{/.test(text)) {
    // DeepSpeed first: its JSON may nest a "model_type" (data_efficiency.data_routing.random_ltd), a config.json has
    // none of its keys
    if (has(/"(zero_optimization|train_micro_batch_size_per_gpu|train_batch_size)"\s*:/)) return 'deepspeed';
    if (has(/"model_type"\s*:/) || has(/"architectures"\s*:/)) return 'hf';
    if (has(/"(num_generations|max_completion_length|use_vllm|precompute_ref_log_probs)"\s*:/)) return 'trl';
    if (has(/"per_device_train_batch_size"\s*:/)) return 'training_args';
    if (isAccelerateConfig(text)) return 'accelerate'; // a JSON accelerate config (ms-swift's fsdp2.json)
    return name === 'config.json' ? 'hf' : undefined;
  }
  if (name.endsWith('.yaml') || name.endsWith('.yml') || has(/^\w[\w.-]*:\s/m)) {
    // torchtune recipe configs: model: {_component_: torchtune.models...} (recipes/configs/**/*.yaml); the PPO
    // recipe's policy_model (recipes/configs/mistral/7B_full_ppo_low_memory.yaml @bd2a0fc7)
    if (torchtuneModel(text)) return 'torchtune';
    // LitGPT setup() arguments (litgpt/finetune/*.py, pretrain.py): checkpoint_dir or model_name with train / precision / lora_r
    if (
      has(/^(checkpoint_dir|model_name):/m) &&
      has(/^(train|precision|lora_r|devices|num_nodes):/m) &&
      !has(/^(base_model|model_name_or_path|stage|finetuning_type):/m)
    )
      return 'litgpt';
    if (isAccelerateConfig(text)) return 'accelerate';
    if (has(/^(num_generations|max_completion_length|use_vllm|vllm_mode|precompute_ref_log_probs|reward_funcs|beta):/m))
      return 'trl'; // GRPOConfig / DPOConfig keys (LLaMA-Factory spells them pref_beta, ...)
    // LLaMA-Factory's own arguments (hparams/{finetuning,data,model}_args.py; model_class, dist_config: the v1 schema)
    if (has(/^(stage|finetuning_type|template|cutoff_len|lora_target|lora_rank|dataset_dir|model_class|dist_config):/m))
      return 'llamafactory';
    // TRL's parser: ModelConfig, ScriptArguments, SFTConfig and TrainingArguments keys (trl/scripts/sft.py); axolotl
    // spells them base_model, sequence_len, micro_batch_size, adapter (alignment-handbook recipes have lora_r too:
    // ModelConfig's, so lora_r is axolotl's only in a file without these)
    const trlKeys =
      /^(model_name_or_path|dataset_name|max_length|max_seq_length|packing|use_peft|gradient_checkpointing|per_device_train_batch_size):/m;
    if (has(/^(base_model|micro_batch_size|sequence_len|adapter):/m) || (has(/^lora_r:/m) && !has(trlKeys)))
      return 'axolotl';
    if (has(trlKeys)) return 'trl';
  }
  if (has(/^\s*\[(model|training|parallelism|job)\]/m)) return 'torchtitan';
  return undefined;
}
