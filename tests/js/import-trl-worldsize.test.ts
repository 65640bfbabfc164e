// TRL SFT configs, the world size given to every importer that needs it, accelerate's sequence
// parallel size, torchao's 4-bit AdamW and DeepSpeed keys that DeepSpeed does not read.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../wasm/llmem.js';
import { detectKind } from '../../frontend/config/importers/index.js';
import { importError, imported } from './import-helpers.js';

const ok = imported;
const error = importError;
const get = (c: Json, path: string): Json | undefined =>
  path
    .split('.')
    .reduce<Json | undefined>((n, p) => (n && typeof n === 'object' && !Array.isArray(n) ? n[p] : undefined), c);

// huggingface/trl@f2cd5771 examples/cli_configs/example_config.yaml (its keys)
const TRL_CLI = `model_name_or_path:\n  Qwen/Qwen2.5-0.5B\ndataset_name:\n  stanfordnlp/imdb\nreport_to:\n  none\nlearning_rate:\n  0.0001\nlr_scheduler_type:\n  cosine\n`;
// huggingface/open-r1@1416fa0c recipes/OpenR1-Distill-7B/sft/config_distill.yaml (its memory keys; model swapped for a catalog one)
const DISTILL = `model_name_or_path: Qwen/Qwen2.5-7B
torch_dtype: bfloat16
attn_implementation: flash_attention_2
dataset_name: open-r1/Mixture-of-Thoughts
eos_token: <|im_end|>
bf16: true
gradient_accumulation_steps: 8
gradient_checkpointing: true
packing: false
max_length: 32768
per_device_train_batch_size: 2
use_liger_kernel: true
`;

describe('TRL SFT configs', () => {
  it('a TRL SFT YAML is detected as trl, not LLaMA-Factory', () => {
    expect(detectKind('example_config.yaml', TRL_CLI)).toBe('trl');
    expect(detectKind('config_distill.yaml', DISTILL)).toBe('trl');
    expect(detectKind('sft.yaml', 'model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\n')).toBe(
      'llamafactory',
    );
  });

  it('an SFTConfig imports as full-parameter SFT with max_length as the sequence length', () => {
    const r = ok('trl', DISTILL, { worldSize: 8 });
    expect(get(r.config, 'rl.algorithm')).toBeUndefined();
    expect(get(r.config, 'training.finetune.method')).toBe('full');
    expect(get(r.config, 'training.seq_len')).toBe(32768);
    expect(get(r.config, 'training.micro_batch')).toBe(2);
    expect(get(r.config, 'training.grad_accum')).toBe(8);
    expect(get(r.config, 'training.recompute')).toBe('full');
    expect(get(r.config, 'training.loss')).toBe('fused');
    expect(get(r.config, 'parallel.gpus')).toBe(8);
  });

  it('with the accelerate config it is launched with: its processes and engine (open-r1 accelerate_configs/zero3.yaml)', () => {
    // huggingface/open-r1@e450a6fb recipes/accelerate_configs/zero3.yaml (its keys)
    const zero3 =
      'compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  offload_optimizer_device: none\n  offload_param_device: none\n  zero3_init_flag: true\n  zero_stage: 3\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n';
    const r = ok('trl', DISTILL, { also: zero3 });
    expect(get(r.config, 'parallel.engine')).toBe('deepspeed');
    expect(get(r.config, 'parallel.zero_stage')).toBe(3);
    expect(get(r.config, 'parallel.gpus')).toBe(8);
    expect(get(r.config, 'training.seq_len')).toBe(32768); // the training keys stay the file's
    expect(r.notes.join('\n')).toContain('parallel: from the accelerate config it is launched with');
    expect(r.notes.join('\n')).not.toContain('no deepspeed or fsdp');
    // DeepSpeed keeps fp32 master weights and states although the recipe loads bf16 (torch_dtype bfloat16)
    expect(get(r.config, 'training.master_weights')).toBe(true);
    // a world size given overrides num_processes, as accelerate launch --num_processes does
    const seven = ok('trl', DISTILL, { also: zero3, worldSize: 16 });
    expect(get(seven.config, 'parallel.gpus')).toBe(16);
    expect(seven.notes.join('\n')).toContain('num_processes 8 overridden by the world size given, 16');
  });

  it('the launch also decides FSDP activation checkpointing where the file does not; LLaMA-Factory pairs too', () => {
    const fsdp =
      'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing: true\n  fsdp_sharding_strategy: FULL_SHARD\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n';
    const args = ok('training_args', '{"per_device_train_batch_size": 4, "bf16": true}', { also: fsdp });
    expect(get(args.config, 'parallel.engine')).toBe('fsdp1');
    expect(get(args.config, 'training.recompute')).toBe('full');
    // hiyouga/LLaMA-Factory examples/accelerate/fsdp_config.yaml launches src/train.py with a recipe
    const lf = ok(
      'llamafactory',
      'model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: full\nbf16: true\n',
      {
        also: fsdp,
      },
    );
    expect(get(lf.config, 'parallel.engine')).toBe('fsdp1');
    expect(get(lf.config, 'parallel.gpus')).toBe(8);
    // one process cannot take a world size of 4
    const single = "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nmixed_precision: bf16\n";
    expect(error('trl', DISTILL, { also: single, worldSize: 4 }).message).toContain(
      'distributed_type NO runs one process',
    );
  });

  it('zero3_init_flag false gives way to a DeepSpeed config the file hands TrainingArguments (zero.Init stays on)', () => {
    const z3 =
      'compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  offload_optimizer_device: none\n  offload_param_device: none\n  zero3_init_flag: false\n  zero_stage: 3\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n';
    // transformers training_args.py: TrainingArguments(deepspeed=...) makes HfTrainerDeepSpeedConfig, so
    // is_deepspeed_zero3_enabled() holds in from_pretrained whatever the launcher's flag
    const lf = ok(
      'llamafactory',
      'model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nfinetuning_type: full\ndeepspeed: ds_z3.json\nbf16: true\n',
      { also: z3 },
    );
    expect(get(lf.config, 'parallel.engine')).toBe('deepspeed');
    expect(get(lf.config, 'parallel.zero_stage')).toBe(3);
    expect(get(lf.config, 'parallel.zero_init')).toBeUndefined();
    const notes = lf.notes.join('\n');
    expect(notes).toContain('zero3_init_flag false does not apply');
    expect(notes).not.toMatch(/launched with \([^)]*zero_init/);
    // a file that leaves DeepSpeed to the launcher: accelerate's DeepSpeedPlugin decides, the flag holds
    const trl = ok('trl', DISTILL, { also: z3 });
    expect(get(trl.config, 'parallel.zero_init')).toBe(false);
    expect(trl.notes.join('\n')).not.toContain('zero3_init_flag false does not apply');
  });

  it("paired notes: the launcher's precision gives way to the file's; a DeepSpeed file it names is said unread", () => {
    const noPrecision = 'compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 4\n';
    const r = ok('trl', DISTILL, { also: noPrecision });
    const notes = r.notes.join('\n');
    expect(notes).not.toContain('fp32 training'); // the recipe is bf16
    expect(notes).toContain("its precision (fp32) gives way to the file's (bf16)");
    expect(get(r.config, 'training.dtype')).toBe('bf16');
    const dsFile =
      'compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  deepspeed_config_file: configs/ds_z2.json\ndistributed_type: DEEPSPEED\nnum_processes: 8\n';
    const u = ok('trl', DISTILL, { also: dsFile }).unsupported.join('\n');
    expect(u).toContain('"configs/ds_z2.json" was not read (a paired import takes two files)');
    expect(u).toContain('llmem import accelerate <accelerate config> ds_z2.json');
  });

  it("the file's own engine keeps over the launch's; the launcher's precision holds only where the file sets none", () => {
    const multi =
      'compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_processes: 4\n';
    // TrainingArguments' deepspeed forces DeepSpeed whatever the launch: the launch gives the processes only
    const ds = ok('training_args', '{"per_device_train_batch_size": 4, "bf16": true, "deepspeed": "ds_z3.json"}', {
      also: multi,
    });
    expect(get(ds.config, 'parallel.engine')).toBe('deepspeed');
    expect(get(ds.config, 'parallel.zero_stage')).toBe(3);
    expect(get(ds.config, 'parallel.gpus')).toBe(4);
    expect(ds.notes.join('\n')).toContain("the file's own engine, deepspeed, over the accelerate config's ddp");
    // no bf16 / fp16 in the file: the launcher's bf16 holds (transformers keeps ACCELERATE_MIXED_PRECISION)
    const plain = ok('training_args', '{"per_device_train_batch_size": 4}', { also: multi });
    expect(get(plain.config, 'training.dtype')).toBe('bf16');
    expect(plain.notes.join('\n')).toContain('the file sets neither bf16 nor fp16');
    const ax = ok('axolotl', 'base_model: Qwen/Qwen2.5-7B\nmicro_batch_size: 2\nsequence_len: 2048\n', { also: multi });
    expect(get(ax.config, 'training.dtype')).toBe('bf16');
    // the file's bf16 replaces the launcher's fp8: no fp8 linears copied
    const fp8 = multi.replace('mixed_precision: bf16', 'mixed_precision: fp8');
    const withBf16 = ok('training_args', '{"per_device_train_batch_size": 4, "bf16": true}', { also: fp8 });
    expect(get(withBf16.config, 'training.fp8_linear')).toBeUndefined();
    const without = ok('training_args', '{"per_device_train_batch_size": 4}', { also: fp8 });
    expect(get(without.config, 'training.fp8_linear')).toBe(true);
  });

  it('a file no key of which tells the trainer is refused, asking for it; --trainer sft imports it', () => {
    expect(error('trl', TRL_CLI).message).toContain('give the trainer: sft, dpo, orpo, grpo or reward');
    const r = ok('trl', TRL_CLI, { trainer: 'sft' });
    expect(get(r.config, 'training.finetune.method')).toBe('full');
    expect(get(r.config, 'training.seq_len')).toBe(1024); // SFTConfig default
    expect(get(r.config, 'training.dtype')).toBe('bf16'); // _BaseConfig: bf16 unless fp16
    expect(get(r.config, 'training.recompute')).toBe('full'); // _BaseConfig: gradient_checkpointing true
    expect(r.unsupported.some((u) => u.startsWith('loss_type: chunked_nll'))).toBe(true);
  });

  it('SFT keys beside DPO or GRPO keys are an error naming the key', () => {
    expect(error('trl', 'packing: true\nnum_generations: 4\n').path).toBe('packing');
  });

  it('a full fine-tune of bf16-loaded weights under DDP trains bf16 weights: bf16 gradients and AdamW states', () => {
    const r = ok('trl', DISTILL, { worldSize: 8 });
    expect(get(r.config, 'parallel.engine')).toBe('ddp');
    expect(get(r.config, 'training.master_weights')).toBe(false);
    expect(get(r.config, 'training.grad_dtype')).toBe('bf16');
    expect(get(r.config, 'training.optimizer_dtype')).toBe('bf16');
    // bitsandbytes' 32-bit AdamW keeps fp32 states; its 8-bit one decides its own
    expect(get(ok('trl', `${DISTILL}optim: paged_adamw_32bit\n`).config, 'training.optimizer_dtype')).toBe('fp32');
    // LoRA trains fp32 adapters (PEFT upcasts them): nothing of this applies
    expect(get(ok('trl', `${DISTILL}use_peft: true\n`).config, 'training.grad_dtype')).toBeUndefined();
  });

  it('a world size of 1 without DeepSpeed or FSDP is one GPU, not DDP (TRL, TrainingArguments, axolotl)', () => {
    expect(get(ok('trl', DISTILL, { worldSize: 1 }).config, 'parallel.engine')).toBe('single');
    expect(get(ok('training_args', 'bf16: true\n', { worldSize: 1 }).config, 'parallel.engine')).toBe('single');
    expect(get(ok('training_args', 'bf16: true\n', { worldSize: 2 }).config, 'parallel.engine')).toBe('ddp');
    const axolotl = 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nsequence_len: 2048\n';
    expect(get(ok('axolotl', axolotl, { worldSize: 1 }).config, 'parallel.engine')).toBe('single');
  });

  it('use_peft makes it LoRA', () => {
    const r = ok('trl', `${DISTILL}use_peft: true\nlora_r: 32\n`);
    expect(get(r.config, 'training.finetune.method')).toBe('lora');
    expect(get(r.config, 'training.finetune.lora_rank')).toBe(32);
  });

  it('training_args reads YAML too', () => {
    const r = ok('training_args', 'per_device_train_batch_size: 4\ngradient_checkpointing: true\nbf16: true\n');
    expect(get(r.config, 'training.micro_batch')).toBe(4);
    expect(get(r.config, 'training.recompute')).toBe('full');
  });
});

describe('--world-size', () => {
  // microsoft/DeepSpeedExamples@83757d9c training/pipeline_parallelism/ds_config.json (its batch keys)
  const DS = '{"train_batch_size": 256, "train_micro_batch_size_per_gpu": 8, "steps_per_print": 10}';

  it('deepspeed: train_batch_size with the world size gives the accumulation', () => {
    const r = ok('deepspeed', DS, { worldSize: 8 });
    expect(get(r.config, 'parallel.gpus')).toBe(8);
    expect(get(r.config, 'training.grad_accum')).toBe(4);
    expect(r.unsupported).toEqual([]);
  });

  it('deepspeed: a world size that does not divide train_batch_size is an error naming the key', () => {
    expect(error('deepspeed', DS, { worldSize: 3 }).path).toBe('train_batch_size');
  });

  it('training_args: the world size sets parallel.gpus', () => {
    expect(
      get(ok('training_args', '{"per_device_train_batch_size": 2}', { worldSize: 16 }).config, 'parallel.gpus'),
    ).toBe(16);
  });

  it('accelerate: the world size fills a missing num_processes; a different one is an error', () => {
    expect(get(ok('accelerate', 'distributed_type: MULTI_GPU\n', { worldSize: 4 }).config, 'parallel.gpus')).toBe(4);
    expect(error('accelerate', 'distributed_type: MULTI_GPU\nnum_processes: 4\n', { worldSize: 8 }).path).toBe(
      'num_processes',
    );
  });
});

describe('accelerate ParallelismConfig', () => {
  const cfg = (engine: string) =>
    `${engine}num_processes: 4\nparallelism_config:\n  parallelism_config_dp_shard_size: 2\n  parallelism_config_sp_size: 2\n  parallelism_config_sp_backend: deepspeed\n  parallelism_config_sp_seq_length_is_variable: true\n  parallelism_config_sp_attn_implementation: flash_attention_2\n`;

  it('sp_size is the sequence split by DeepSpeed-Ulysses (parallel.cp, all of it all-to-all), under any engine', () => {
    const ds = ok('accelerate', cfg('distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n'));
    expect(ds.unsupported).toEqual([]);
    expect(get(ds.config, 'parallel.cp')).toBe(2);
    expect(get(ds.config, 'parallel.cp_all_to_all')).toBe(2);
    const fsdp = ok('accelerate', cfg('distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n'));
    expect(get(fsdp.config, 'parallel.cp')).toBe(2);
    expect(get(fsdp.config, 'training.attention')).toBe('flash');
  });
});

describe('optimizers and DeepSpeed keys', () => {
  it('adamw_torch_4bit is not counted as fp32 AdamW, and is reported', () => {
    const r = ok('training_args', '{"optim": "adamw_torch_4bit"}');
    expect(get(r.config, 'training.optimizer')).toBe('adamw_8bit');
    expect(r.unsupported.some((u) => u.startsWith('optim adamw_torch_4bit: '))).toBe(true);
  });

  it('comms_config and cuda_visible_devices are read and have no memory effect', () => {
    const r = ok(
      'deepspeed',
      '{"train_micro_batch_size_per_gpu": 1, "comms_config": {"verbose": false}, "cuda_visible_devices": 0}',
    );
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('comms_config, cuda_visible_devices');
  });
});

describe('the world size for LLaMA-Factory and axolotl files', () => {
  // neither format carries the number of training processes: the launcher does
  const LF = 'model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\nper_device_train_batch_size: 2\n';
  const AX = 'base_model: Qwen/Qwen2.5-7B\nadapter: lora\nlora_r: 16\nmicro_batch_size: 2\nsequence_len: 4096\n';
  it('sets parallel.gpus from --world-size', () => {
    expect(get(ok('llamafactory', LF, { worldSize: 16 }).config, 'parallel.gpus')).toBe(16);
    expect(get(ok('axolotl', AX, { worldSize: 4 }).config, 'parallel.gpus')).toBe(4);
  });
  it('axolotl: a world size that the FSDP mesh sizes contradict is an error naming the key', () => {
    const mesh = `${AX}fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\ndp_shard_size: 2\ndp_replicate_size: 2\n`;
    expect(get(ok('axolotl', mesh, { worldSize: 4 }).config, 'parallel.gpus')).toBe(4);
    expect(error('axolotl', mesh, { worldSize: 8 }).path).toBe('dp_replicate_size');
  });
});

// accelerate fsdp2_prepare_model (src/accelerate/utils/fsdp_utils.py, v1.13.0): under bf16 / fp16 mixed precision the
// trainable bf16-loaded parameters are cast to fp32 before fully_shard: an fp32 master copy, fp32 gradients and states
describe('a TRL full fine-tune of bf16-loaded weights under FSDP2', () => {
  const fsdp2 = `${DISTILL}fsdp: full_shard auto_wrap\nfsdp_config:\n  fsdp_version: 2\n`;
  it('keeps fp32 sharded master weights, gradients and states', () => {
    const r = ok('trl', fsdp2, { worldSize: 8 });
    expect(get(r.config, 'parallel.engine')).toBe('fsdp2');
    expect(get(r.config, 'training.master_weights')).toBe(true);
    expect(get(r.config, 'training.grad_dtype')).toBeUndefined();
    expect(r.notes.join('\n')).toContain("accelerate's fsdp2_prepare_model upcasts the trained parameters to fp32");
  });
  it('while DDP trains the bf16 weights themselves', () => {
    const r = ok('trl', DISTILL, { worldSize: 8 });
    expect(get(r.config, 'parallel.engine')).toBe('ddp');
    expect(get(r.config, 'training.master_weights')).toBe(false);
    expect(get(r.config, 'training.grad_dtype')).toBe('bf16');
  });
});

// huggingface/trl@f2cd5771 trl/trainer/reward_config.py and reward_trainer.py: AutoModelForSequenceClassification with
// one label, DataCollatorForPreference stacks chosen then rejected, max_length 1024 by default
describe('TRL RewardConfig', () => {
  const RM =
    'model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/ultrafeedback_binarized\nper_device_train_batch_size: 8\ncenter_rewards_coefficient: 0.01\n';
  it('center_rewards_coefficient tells the trainer: a score head (none counted), 2 x the batch, max_length 1024', () => {
    expect(detectKind('reward.yaml', RM)).toBe('trl');
    const r = ok('trl', RM, { worldSize: 1 });
    expect(get(r.config, 'model.head')).toBe('none');
    expect(get(r.config, 'training.micro_batch')).toBe(16);
    expect(get(r.config, 'training.seq_len')).toBe(1024);
    expect(get(r.config, 'rl.algorithm')).toBeUndefined();
    expect(r.unsupported).toEqual([]);
    expect(r.notes.join('\n')).toContain('training.micro_batch 16 = 2 x per_device_train_batch_size 8');
  });
  it('--trainer reward reads a file no key of which tells it; with an SFT key it is an error', () => {
    const plain = 'model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\nmax_length: 2048\n';
    expect(get(ok('trl', plain, { trainer: 'reward', worldSize: 1 }).config, 'training.seq_len')).toBe(2048);
    expect(error('trl', `${RM}packing: true\n`).message).toContain('keys of two trainers (SFTConfig: packing');
  });
});
