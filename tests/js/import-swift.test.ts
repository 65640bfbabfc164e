// ms-swift command lines (swift sft | pt | rlhf; modelscope/ms-swift@3602360a562313afbf2ef6065fdf61f271a2c5b9):
// detection, the world-size sources, the defaults that differ from transformers' and TRL's, the --deepspeed
// shorthands, the RLHF trainers and the refusals. The verbatim example scripts are in tests/fixtures/real/swift/.
import { describe, expect, it } from 'vitest';
import { detectKind, unreadFormat } from '../../frontend/config/importers/index.js';
import { importError, imported } from './import-helpers.js';

const ok = (text: string, worldSize?: number) => imported('swift', text, { worldSize });
const fail = (text: string, worldSize?: number) => importError('swift', text, { worldSize });
const sft = (flags: string, env = 'CUDA_VISIBLE_DEVICES=0') =>
  `${env} \\\nswift sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    --dataset a#500 \\\n    ${flags}\n`;
const rlhf = (flags: string, env = 'NPROC_PER_NODE=8') =>
  `${env} \\\nswift rlhf \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    --dataset a \\\n    ${flags}\n`;

describe('DDP', () => {
  it('--ddp_find_unused_parameters and --ddp_bucket_cap_mb reach DDP', () => {
    const r = ok(sft('--ddp_find_unused_parameters false --ddp_bucket_cap_mb 100', 'NPROC_PER_NODE=2'));
    expect(r.config.parallel).toMatchObject({ ddp_find_unused_parameters: false, ddp_bucket_cap_mib: 100 });
  });
});

describe('detection', () => {
  it('swift sft / pt / rlhf scripts are kind swift; a launcher running swift/cli/sft.py too', () => {
    expect(detectKind('run.sh', sft('--tuner_type lora'))).toBe('swift');
    expect(detectKind('run.sh', 'swift pt --model Qwen/Qwen2.5-7B --dataset x')).toBe('swift');
    expect(detectKind('run.sh', rlhf('--rlhf_type dpo'))).toBe('swift');
    expect(detectKind('run.sh', 'torchrun --nproc_per_node=4 swift/cli/sft.py --model Qwen/Qwen2.5-7B')).toBe('swift');
  });
  it('megatron sft and swift infer are named as tools llmem does not read, not as swift or Megatron', () => {
    const mega = 'NPROC_PER_NODE=8 megatron sft --model Qwen/Qwen2.5-7B --tensor_model_parallel_size 2';
    expect(detectKind('run.sh', mega)).toBeUndefined();
    expect(unreadFormat('run.sh', mega)).toMatch(/Megatron-SWIFT/);
    expect(detectKind('infer.sh', 'swift infer --adapters output/x')).toBeUndefined();
    expect(unreadFormat('infer.sh', 'swift infer --adapters output/x')).toMatch(/does not train/);
  });
  it('forced on a Megatron-SWIFT script: refused with the reason', () => {
    expect(fail('megatron sft --model Qwen/Qwen2.5-7B').message).toMatch(/Megatron-SWIFT .* is not read/);
  });
});

describe('world size', () => {
  it('NPROC_PER_NODE x NNODES from the script', () => {
    const r = ok(sft('--tuner_type lora', 'NNODES=2 NPROC_PER_NODE=4'));
    expect(r.flat['parallel.gpus']).toBe(8);
    expect(r.flat['parallel.gpus_per_node']).toBe(4);
    expect(r.flat['parallel.engine']).toBe('ddp');
  });
  it('zero processes or nodes are an error naming the variable (the fuzzer found a world of 0 dividing the batch)', () => {
    expect(fail(sft('--tuner_type lora', 'NPROC_PER_NODE=0')).path).toBe('NPROC_PER_NODE');
    expect(fail(sft('--tuner_type lora', 'NNODES=0 NPROC_PER_NODE=8')).path).toBe('NNODES');
  });
  it('a script variable: nproc_per_node=2 ... NPROC_PER_NODE=$nproc_per_node; $(expr 16 / $n) evaluated', () => {
    const r = ok(
      'nproc_per_node=2\nNPROC_PER_NODE=$nproc_per_node \\\nswift sft --model Qwen/Qwen2.5-7B --gradient_accumulation_steps $(expr 16 / $nproc_per_node)\n',
    );
    expect(r.flat['parallel.gpus']).toBe(2);
    expect(r.flat['training.grad_accum']).toBe(8);
  });
  it('torchrun --nproc_per_node --nnodes before swift/cli/sft.py', () => {
    const r = ok('torchrun --nproc_per_node=4 --nnodes=2 swift/cli/sft.py --model Qwen/Qwen2.5-7B --max_length 1024');
    expect(r.flat['parallel.gpus']).toBe(8);
  });
  it('a world size given that differs from the script is an error', () => {
    expect(fail(sft('', 'NPROC_PER_NODE=4'), 8).message).toMatch(/NPROC_PER_NODE/);
  });
  it('NNODES not set in the file (a cluster variable): the world size given wins', () => {
    expect(ok(sft('', 'NNODES=$WORLD_SIZE NPROC_PER_NODE=8'), 32).flat['parallel.gpus']).toBe(32);
    expect(ok(sft('', 'NNODES=$WORLD_SIZE NPROC_PER_NODE=8')).flat['parallel.gpus']).toBe(8);
  });
  it('no NPROC_PER_NODE: one process (main.py runs python); the world size given otherwise', () => {
    const r = ok(sft('--max_length 1024'));
    expect(r.flat['parallel.gpus']).toBe(1);
    expect(r.flat['parallel.engine']).toBe('single');
    expect(ok(sft('--max_length 1024', ''), 4).flat['parallel.gpus']).toBe(4);
  });
  it('several visible GPUs for one process: the device_map split is reported, not counted as DDP', () => {
    const r = ok(sft('--max_length 1024', 'CUDA_VISIBLE_DEVICES=0,1'));
    expect(r.flat['parallel.gpus']).toBe(1);
    expect(r.unsupported.join('\n')).toMatch(/^CUDA_VISIBLE_DEVICES: 0,1: 2 GPUs for 1 process.*device_map/m);
  });
});

describe('ms-swift defaults', () => {
  it('tuner lora, rank 8, all-linear, dropout 0.05, micro-batch 1, checkpointing on, accumulation ceil(16 / (batch x world))', () => {
    const r = ok(sft('--max_length 2048', 'NPROC_PER_NODE=4'));
    expect(r.flat['training.finetune.method']).toBe('lora');
    expect(r.flat['training.finetune.lora_rank']).toBe(8);
    expect(r.flat['training.finetune.lora_targets']).toEqual(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
    expect(r.flat['training.finetune.lora_dropout']).toBe(0.05);
    expect(r.flat['training.micro_batch']).toBe(1);
    expect(r.flat['training.recompute']).toBe('full');
    expect(r.flat['training.grad_accum']).toBe(4);
  });
  it('--gradient_checkpointing false: no recompute', () => {
    expect(ok(sft('--gradient_checkpointing false')).flat['training.recompute']).toBeUndefined();
  });
  it('--train_type (ms-swift 3.x) is read as --tuner_type', () => {
    expect(ok(sft('--train_type full --max_length 512')).flat['training.finetune.method']).toBe('full');
  });
  it('torch_dtype bfloat16, full, one GPU: bf16 weights, gradients and torch AdamW states, no master copy', () => {
    const r = ok(sft('--tuner_type full --torch_dtype bfloat16 --max_length 512'));
    expect(r.flat['training.dtype']).toBe('bf16');
    expect(r.flat['training.master_weights']).toBe(false);
    expect(r.flat['training.grad_dtype']).toBe('bf16');
    expect(r.flat['training.optimizer_dtype']).toBe('bf16');
  });
  it('full under DeepSpeed: the fp32 master copy stays (DeepSpeed mixed-precision optimizer)', () => {
    const r = ok(sft('--tuner_type full --torch_dtype bfloat16 --deepspeed zero2', 'NPROC_PER_NODE=2'));
    expect(r.flat['training.master_weights']).toBeUndefined();
    expect(r.flat['parallel.zero_stage']).toBe(2);
  });
  it('torch_dtype float32: fp16 mixed precision (model_args.py _init_mixed_precision), fp32 weights kept', () => {
    const r = ok(sft('--torch_dtype float32 --max_length 512'));
    expect(r.flat['training.dtype']).toBe('fp16');
    expect(r.flat['training.master_weights']).toBeUndefined();
  });
  it('--max_length absent: reported (ms-swift cuts at the model max_model_len)', () => {
    expect(ok(sft('')).unsupported.join('\n')).toMatch(/^--max_length: absent/m);
  });
  it('--attn_impl eager: eager attention; padding_free with sdpa is an error', () => {
    expect(ok(sft('--attn_impl eager --max_length 512')).flat['training.attention']).toBe('eager');
    expect(fail(sft('--attn_impl sdpa --padding_free true')).message).toMatch(/flash attention/);
  });
  it('packing / padding_free without --attn_impl is an error too (_check_padding_free: None is not a flash kernel)', () => {
    expect(fail(sft('--packing true --max_length 4096')).message).toMatch(/^--packing: .*not absent \(None\)/);
    expect(fail(sft('--padding_free true --max_length 4096')).message).toMatch(/^--padding_free: requires a flash/);
    expect(ok(sft('--packing true --attn_impl flash_attn --max_length 4096')).flat['training.seq_len']).toBe(4096);
  });
});

describe('tuners and quantization', () => {
  it('quant_method bnb + quant_bits 4: qlora nf4 with double quantization', () => {
    const r = ok(sft('--quant_method bnb --quant_bits 4 --max_length 512'));
    expect(r.flat['training.finetune.method']).toBe('qlora');
    expect(r.flat['training.finetune.quant']).toBe('nf4');
    expect(r.flat['training.finetune.double_quant']).toBe(true);
  });
  it('quant_bits without quant_method: no quantization (get_quantization_config returns None), reported', () => {
    const r = ok(sft('--quant_bits 4 --max_length 512'));
    expect(r.flat['training.finetune.method']).toBe('lora');
    expect(r.unsupported.join('\n')).toMatch(/^--quant_bits: 4 without --quant_method/m);
  });
  it('lora_dtype float16: converted to fp32 (tuner.py); bfloat16 kept', () => {
    expect(ok(sft('--lora_dtype float16 --max_length 8')).flat['training.finetune.adapter_dtype']).toBe('fp32');
    expect(ok(sft('--lora_dtype bfloat16 --max_length 8')).flat['training.finetune.adapter_dtype']).toBe('bf16');
  });
  it('other tuners are refused by name; the built-in plugin tuners (tuners_map) by name, an unknown one as a plugin', () => {
    expect(fail(sft('--tuner_type vera')).message).toMatch(/--tuner_type vera: VeRA/);
    // swift/tuner_plugin/mapping.py: lora_llm, ia3 and dummy are built in, no --external_plugins
    expect(fail(sft('--tuner_type lora_llm')).message).toMatch(/LoRALLMTuner: LoRA on the language model/);
    expect(fail(sft('--tuner_type ia3')).message).toMatch(/--tuner_type ia3: IA3/);
    expect(fail(sft('--tuner_type my_tuner')).message).toMatch(/tuner plugin/);
  });
  it('freeze_vit false on a full fine-tune of a vision model: the tower trains', () => {
    const text =
      'NPROC_PER_NODE=2 swift sft --model Qwen/Qwen2.5-VL-7B-Instruct --tuner_type full --freeze_vit false --max_length 512';
    expect(ok(text).flat['model.vision.train']).toBe('full');
    const dflt = 'NPROC_PER_NODE=2 swift sft --model Qwen/Qwen2.5-VL-7B-Instruct --tuner_type full --max_length 512';
    expect(ok(dflt).flat['model.vision.train']).toBe('none');
  });
});

describe('--deepspeed and --fsdp shorthands', () => {
  it('zero3_offload: ZeRO-3 with parameters and optimizer on the CPU', () => {
    const r = ok(sft('--deepspeed zero3_offload --max_length 512', 'NPROC_PER_NODE=8'));
    expect(r.flat['parallel.zero_stage']).toBe(3);
    expect(r.flat['parallel.offload_params']).toBe('cpu');
    expect(r.flat['parallel.offload_optimizer']).toBe('cpu');
  });
  it('a DeepSpeed JSON path is read from the second file', () => {
    const r = imported('swift', sft('--deepspeed ds.json --max_length 512', 'NPROC_PER_NODE=2'), {
      also: '{"zero_optimization": {"stage": 1}}',
    });
    expect(r.flat['parallel.zero_stage']).toBe(1);
  });
  it('fsdp2: FSDP2 full shard', () => {
    expect(ok(sft('--fsdp fsdp2 --max_length 512', 'NPROC_PER_NODE=2')).flat['parallel.engine']).toBe('fsdp2');
  });
  it('fsdp2 full fine-tune under bf16 mixed precision: accelerate upcasts the trained weights, fp32 master', () => {
    // accelerate fsdp_utils.py fsdp2_prepare_model: mixed_precision != "no" -> requires_grad params cast to fp32
    const r = ok(sft('--tuner_type full --torch_dtype bfloat16 --fsdp fsdp2 --max_length 512', 'NPROC_PER_NODE=2'));
    expect(r.flat['training.dtype']).toBe('bf16');
    expect(r.flat['training.master_weights']).toBe(true);
    expect(r.flat['training.grad_dtype']).toBeUndefined();
    expect(r.flat['training.optimizer_dtype']).toBeUndefined();
    // --bf16 false --fp16 false: no mixed precision, no upcast: the bf16-loaded weights train as they are
    const pure = ok(
      sft(
        '--tuner_type full --torch_dtype bfloat16 --bf16 false --fp16 false --fsdp fsdp2 --max_length 512',
        'NPROC_PER_NODE=2',
      ),
    );
    expect(pure.flat['training.master_weights']).toBe(false);
    expect(pure.flat['training.grad_dtype']).toBe('bf16');
    // LoRA: the frozen base is not upcast (accelerate >= 1.13); --lora_dtype bfloat16 adapters are
    const lora = ok(sft('--lora_dtype bfloat16 --fsdp fsdp2 --max_length 512', 'NPROC_PER_NODE=2'));
    expect(lora.flat['training.master_weights']).toBe(false);
    expect(lora.flat['training.finetune.adapter_dtype']).toBe('fp32');
  });
});

describe('rlhf', () => {
  it('dpo (default): pairs, the reference, max_length is prompt + completion', () => {
    const r = ok(rlhf('--per_device_train_batch_size 2 --gradient_accumulation_steps 4 --max_length 2048'));
    expect(r.flat['rl.algorithm']).toBe('dpo');
    expect(r.flat['rl.mini_batch']).toBe(64);
    expect(r.flat['rl.reference.enabled']).toBe(true);
    expect(r.flat['training.seq_len']).toBe(2048);
  });
  it('simpo runs as CPO: no reference', () => {
    expect(ok(rlhf('--rlhf_type simpo --max_length 1024')).flat['rl.reference.enabled']).toBe(false);
  });
  it('--ref_model with LoRA is refused (rlhf_args.py raises)', () => {
    expect(fail(rlhf('--rlhf_type dpo --ref_model Qwen/Qwen2.5-7B')).message).toMatch(/--ref_model/);
  });
  it('grpo: beta 0.04 (a reference), vLLM memory 0.9 and sleep_level, max_length is the prompt', () => {
    const r = ok(
      rlhf(
        '--rlhf_type grpo --tuner_type full --use_vllm true --vllm_mode colocate --sleep_level 1 --max_length 1024 --max_completion_length 2048 --num_generations 8 --per_device_train_batch_size 4 --deepspeed zero3',
      ),
    );
    expect(r.flat['rl.algorithm']).toBe('grpo');
    expect(r.flat['rl.reference.enabled']).toBe(true);
    expect(r.flat['rl.rollout.gpu_memory_utilization']).toBe(0.9);
    expect(r.flat['rl.rollout.sleep']).toBe('level1');
    expect(r.flat['rl.prompt_len']).toBe(1024);
    expect(r.flat['rl.response_len']).toBe(2048);
    expect(r.flat['rl.mini_batch']).toBe(4); // 4 x accumulation 1 (GRPO default) x 8 / 8
    expect(r.flat['rl.weight_sync']).toBe('full');
  });
  it('grpo with --use_vllm true and no --vllm_mode is refused', () => {
    expect(fail(rlhf('--rlhf_type grpo --use_vllm true')).message).toMatch(/--vllm_mode: required/);
  });
  it('grpo --beta 0 drops a --ref_model before the LoRA check (rlhf_args.py __post_init__): no error, no reference', () => {
    const r = ok(rlhf('--rlhf_type grpo --beta 0 --ref_model Qwen/Qwen2.5-7B-Instruct --max_length 512'));
    expect(r.flat['rl.reference.enabled']).toBe(false);
    expect(fail(rlhf('--rlhf_type grpo --ref_model Qwen/Qwen2.5-7B-Instruct')).message).toMatch(/--ref_model/);
  });
  it('grpo --advantage_estimator rloo: rl.algorithm rloo', () => {
    expect(ok(rlhf('--rlhf_type grpo --advantage_estimator rloo --beta 0')).flat['rl.algorithm']).toBe('rloo');
  });
  it('kto, ppo, gkd are refused by name', () => {
    expect(fail(rlhf('--rlhf_type kto')).message).toMatch(/--rlhf_type kto: KTO/);
    expect(fail(rlhf('--rlhf_type ppo')).message).toMatch(/--rlhf_type ppo/);
    expect(fail(rlhf('--rlhf_type gkd')).message).toMatch(/teacher/);
  });
});

describe('image size of a Qwen-VL tower', () => {
  const vl = (flags: string, env = 'NPROC_PER_NODE=2') =>
    `${env} \\\nswift sft \\\n    --model Qwen/Qwen2-VL-7B-Instruct \\\n    --dataset a \\\n    ${flags}\n`;
  it('--max_pixels or MAX_PIXELS: the largest square image, a whole number of 28 px merged patches', () => {
    expect(ok(vl('--max_pixels 1003520 --max_length 2048')).flat['model.vision.image_size']).toBe(980); // 35 x 28
    expect(ok(vl('--max_length 2048', 'NPROC_PER_NODE=2 MAX_PIXELS=262144')).flat['model.vision.image_size']).toBe(504);
    expect(ok(vl('--max_length 2048')).flat['model.vision.image_size']).toBeUndefined(); // the preset's
    expect(fail(vl('--max_pixels lots')).message).toMatch(/--max_pixels: must be a whole number/);
  });
});

describe('refusals and reports', () => {
  it('an unknown model needs its config.json', () => {
    expect(fail(sft('', '').replace('Qwen/Qwen2.5-7B-Instruct', 'org/NotAModel-3B')).message).toMatch(/--hf/);
  });
  it('swift sft config.yaml: the arguments are in a file not given', () => {
    expect(fail('swift sft train.yaml').message).toMatch(/parse_yaml_args/);
  });
  it('task_type seq_cls: a classification head; embedding and reranker models are refused', () => {
    const r = ok(sft('--task_type seq_cls --num_labels 2 --max_length 1024'));
    expect(r.flat['model.head']).toBe('none');
    expect(r.notes.join('\n')).toContain('--task_type seq_cls: a sequence-classification model');
    expect(fail(sft('--task_type embedding')).message).toMatch(/--task_type embedding: .* causal_lm and seq_cls are/);
  });
  it('rlhf_type rm: a one-label classification model on chosen and rejected sequences in one batch', () => {
    const r = ok(rlhf('--rlhf_type rm --per_device_train_batch_size 2 --max_length 2048 --tuner_type lora'));
    expect(r.flat['model.head']).toBe('none');
    expect(r.flat['training.micro_batch']).toBe(4);
    expect(r.flat['training.seq_len']).toBe(2048);
    expect(r.flat['rl.algorithm']).toBeUndefined();
    expect(r.notes.join('\n')).toContain('training.micro_batch 4 = 2 x per_device_train_batch_size 2');
    // rm overrides --task_type (rlhf_args.py _init_rm)
    expect(ok(rlhf('--rlhf_type rm --task_type causal_lm')).flat['model.head']).toBe('none');
    // a preference trainer on a classification model is refused, naming the key
    expect(fail(rlhf('--rlhf_type dpo --task_type seq_cls')).message).toMatch(/--task_type seq_cls: --rlhf_type dpo/);
  });
  it('an unknown flag and a value the script does not set are reported', () => {
    const r = ok(sft('--max_length 512 --not_a_flag 1 --lora_rank $RANK'));
    expect(r.unsupported.join('\n')).toMatch(/^--not_a_flag: not an ms-swift/m);
    expect(r.unsupported.join('\n')).toMatch(/^--lora_rank: its value \$RANK/m);
  });
});

describe('--sequence_parallel_size: Ulysses up to the KV heads, a ring for the rest (sequence_parallel.py)', () => {
  it('the all-to-all part is the KV heads common divisor with the size (Qwen2.5-7B: 4 KV heads)', () => {
    const all = ok(sft('--sequence_parallel_size 4 --padding_free true --attn_impl flash_attn', 'NPROC_PER_NODE=8'));
    expect(all.config.parallel).toMatchObject({ engine: 'ddp', cp: 4, cp_all_to_all: 4 });
    const mixed = ok(sft('--sequence_parallel_size 8 --padding_free true --attn_impl flash_attn', 'NPROC_PER_NODE=8'));
    expect(mixed.config.parallel).toMatchObject({ cp: 8, cp_all_to_all: 4 });
    expect(mixed.notes.join('\n')).toMatch(/4 of them by Ulysses all-to-all .* a K\/V ring over the other 2/);
    // its own loss under sequence parallelism: over the 16-bit logits, chunked in place with CELOSS_PARALLEL_SIZE
    expect(mixed.config.training).toMatchObject({ loss: 'bf16_ce' });
    const chunked = ok(
      sft(
        '--sequence_parallel_size 8 --padding_free true --attn_impl flash_attn --max_length 32768',
        'NPROC_PER_NODE=8 CELOSS_PARALLEL_SIZE=1024',
      ),
    );
    // a rank's 32,768 / 8 = 4,096 tokens in chunks of 1,024
    expect(chunked.config.training).toMatchObject({ loss: 'chunked_inplace', loss_chunks: 4 });
    // a chunk size the script does not set to a number is reported, not dropped
    const unset = ok(
      sft(
        '--sequence_parallel_size 4 --padding_free true --attn_impl flash_attn',
        'NPROC_PER_NODE=8 CELOSS_PARALLEL_SIZE=$CE',
      ),
    );
    expect(unset.config.training).toMatchObject({ loss: 'bf16_ce' });
    expect(unset.unsupported.join('\n')).toMatch(/CELOSS_PARALLEL_SIZE: .*not a number/);
  });
});

describe('accelerate launch --config_file: the accelerate config as the second file', () => {
  const acc =
    '{\n  "distributed_type": "FSDP",\n  "fsdp_config": {"fsdp_version": 2, "fsdp_activation_checkpointing": true},\n  "mixed_precision": "bf16",\n  "num_processes": 2\n}\n';
  it('a JSON accelerate config is told apart and gives the processes and the engine', () => {
    expect(detectKind('fsdp2.json', acc)).toBe('accelerate');
    const script = `accelerate launch --config_file fsdp2.json swift/cli/sft.py --model Qwen/Qwen2.5-7B-Instruct --tuner_type lora --max_length 2048\n`;
    const r = imported('swift', script, { also: acc });
    expect(r.config.parallel).toMatchObject({ engine: 'fsdp2', gpus: 2 });
    expect(r.unsupported.join('\n')).not.toMatch(/second file/);
  });
});
