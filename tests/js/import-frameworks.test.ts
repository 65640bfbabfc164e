// Framework configs into config v1: published example files of DeepSpeed, Megatron-LM,
// torchtitan, accelerate, TrainingArguments, LLaMA-Factory and axolotl
// (tests/fixtures/import/<kind>/), malformed input for each importer, and kind detection.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import {
  detectKind,
  importConfig,
  type ImportKind,
  type Imported,
  unreadFormat,
} from '../../frontend/config/importers/index.js';

const fixture = (path: string) => readFileSync(join(repoRoot(), 'tests/fixtures/import', path), 'utf8');
const ok = (kind: ImportKind, text: string, worldSize?: number): Imported => {
  const r = importConfig(kind, text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return r;
};
const fail = (kind: ImportKind, text: string) => {
  const r = importConfig(kind, text);
  if (!('error' in r)) throw new Error(`expected an error, got ${JSON.stringify(r.config)}`);
  return r.error;
};

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
/** Every imported config must be one the core accepts (after presets resolve). */
const runs = (config: Config) => {
  const resolved = resolveConfig(config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
  return res;
};

describe('DeepSpeed JSON', () => {
  it('HF docs ZeRO-3 offload example: stage, offload, overlap, explicit stage3 keys; "auto" keys noted', () => {
    const r = ok('deepspeed', fixture('deepspeed/hf-zero3-offload.json'));
    expect(r.config).toEqual({
      runtime: { framework: 'deepspeed' },
      parallel: {
        engine: 'deepspeed',
        zero_stage: 3,
        offload_optimizer: 'cpu',
        offload_params: 'cpu',
        overlap_comm: true,
        stage3_max_live_parameters: 1e9,
      },
      training: { optimizer: 'adamw', optimizer_impl: 'fused' }, // DeepSpeed's FusedAdam
    });
    const notes = r.notes.join('\n');
    for (const k of [
      'fp16.enabled',
      'bf16.enabled',
      'zero_optimization.reduce_bucket_size',
      'train_micro_batch_size_per_gpu',
      'gradient_accumulation_steps',
    ])
      expect(notes).toContain(`${k} is "auto"`);
    expect(r.unsupported.map((u) => u.split(':')[0])).toEqual([
      'zero_optimization.sub_group_size',
      'zero_optimization.stage3_max_reuse_distance',
    ]);
    runs({ ...r.config, model: { preset: 'llama-3.1-8b' } });
  });
  it('explicit ZeRO-2 config: batch sizes, buckets, bf16, and the data-parallel size from train_batch_size', () => {
    const r = ok('deepspeed', fixture('deepspeed/zero2-bf16.json'));
    expect(r.config).toEqual({
      runtime: { framework: 'deepspeed' },
      parallel: {
        engine: 'deepspeed',
        zero_stage: 2,
        allgather_bucket_size: 2e8,
        overlap_comm: true,
        reduce_bucket_size: 2e8,
        gpus: 8,
      },
      training: { micro_batch: 4, grad_accum: 8, dtype: 'bf16', optimizer: 'adamw', optimizer_impl: 'fused' },
    });
    runs(r.config);
  });
  it('fp32 when no precision section, stage 0 by default, unknown keys listed', () => {
    const r = ok('deepspeed', '{"train_micro_batch_size_per_gpu": 2, "flux_capacitor": 1}');
    expect(r.config).toMatchObject({ training: { micro_batch: 2, dtype: 'fp32' }, parallel: { zero_stage: 0 } });
    expect(r.unsupported).toEqual(['flux_capacitor: not a known DeepSpeed key; not applied']);
  });
  it('bf16 master weights, gradients and optimizer states (DeepSpeed #7700), and offload_param outside ZeRO-3', () => {
    const r = ok(
      'deepspeed',
      '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true, "bf16_master_weights_and_grads": true, ' +
        '"bf16_optimizer_states": true}, "zero_optimization": {"stage": 3}}',
    );
    expect(r.config.training).toMatchObject({ master_dtype: 'bf16', grad_dtype: 'bf16', optimizer_dtype: 'bf16' });
    const fp32 = runs({ ...r.config, model: { preset: 'llama-3.1-8b' }, training: { micro_batch: 4 } });
    const bf16 = runs({ ...r.config, model: { preset: 'llama-3.1-8b' } });
    expect(bf16.per_gpu.breakdown_bytes.optimizer_states).toBeCloseTo(
      fp32.per_gpu.breakdown_bytes.optimizer_states / 2,
    );
    const stage0 = ok('deepspeed', '{"zero_optimization": {"stage": 0, "offload_param": {"device": "cpu"}}}');
    expect(stage0.config.parallel).toMatchObject({ offload_params: 'none' });
    expect(stage0.notes.join('\n')).toContain('offload_param needs ZeRO-3 (stage is 0)');
    runs({ ...stage0.config, model: { preset: 'llama-3.1-8b' } });
  });
  it('"auto" ZeRO buckets are sized from the model as transformers fills them, once the model is known', () => {
    const ds =
      '{"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto", ' +
      '"stage3_param_persistence_threshold": "auto", "allgather_bucket_size": "auto"}}';
    const yaml = 'model_name_or_path: meta-llama/Llama-3.1-8B\nfinetuning_type: full\ndeepspeed: ds_z3.json\n';
    const r = importConfig('llamafactory', yaml, { also: ds });
    if ('error' in r) throw new Error(r.error.message);
    expect(r.config.parallel).toMatchObject({
      reduce_bucket_size: 4096 * 4096,
      stage3_prefetch_bucket_size: Math.trunc(0.9 * 4096 * 4096),
      stage3_param_persistence_threshold: 40960,
    });
    expect((r.config.parallel as Config).allgather_bucket_size).toBeUndefined(); // not one transformers fills
    // a DeepSpeed JSON alone names no model: the defaults stand, and the notes say why
    const alone = ok('deepspeed', ds);
    expect((alone.config.parallel as Config).reduce_bucket_size).toBeUndefined();
    expect(alone.notes.join('\n')).toContain("the model's hidden size is not known here");
    runs(r.config);
  });
  it('malformed files are errors that name the key', () => {
    expect(fail('deepspeed', '{"zero_optimization": {"stage": 4}}').path).toBe('zero_optimization.stage');
    expect(fail('deepspeed', '{"zero_optimization": {"offload_optimizer": {"device": "gpu"}}}').message).toContain(
      'allowed: none | cpu | nvme',
    );
    expect(fail('deepspeed', '{"train_micro_batch_size_per_gpu": "two"}').path).toBe('train_micro_batch_size_per_gpu');
    expect(fail('deepspeed', '{"bf16": true}').path).toBe('bf16');
    expect(fail('deepspeed', '{"zero_optimization": ').message).toContain('not valid JSON');
    expect(fail('deepspeed', '[1]').message).toContain('mapping of keys');
  });
});

describe('Megatron-LM arguments', () => {
  it('Llama-2 70B pretrain script: variables, bash arrays, torchrun world size, derived grad_accum and vpp', () => {
    const r = ok('megatron', fixture('megatron/llama2-70b-pretrain.sh'));
    expect(r.config.model).toEqual({
      layers: 80,
      hidden: 8192,
      heads: 64,
      kv_heads: 8,
      head_dim: 128,
      mlp: 'gated',
      ffn_hidden: 28672,
      norm: 'rmsnorm',
      bias: false,
      tied_embeddings: false,
      position: 'rope',
      max_positions: 4096,
      vocab_multiple: 128,
      moe: null,
      mla: null,
    });
    expect(r.config.parallel).toEqual({
      engine: 'megatron',
      tp: 8,
      pp: 4,
      cp: 1,
      sequence_parallel: true,
      vpp: 4,
      pp_schedule: 'interleaved',
      distributed_optimizer: true,
      gpus: 128,
      gpus_per_node: 8,
    });
    expect(r.config.training).toEqual({
      seq_len: 4096,
      micro_batch: 1,
      grad_accum: 256,
      dtype: 'bf16',
      grad_dtype: 'fp32',
      optimizer: 'adamw',
      dropout: 0,
      attention: 'flash',
      recompute: 'selective',
      recompute_modules: ['core_attn'],
    });
    expect(r.notes.join('\n')).toMatch(/no --vocab-size/);
    expect(r.unsupported).toEqual([]);
    const res = runs({ ...r.config, model: { ...(r.config.model as Config), vocab: 32000 } });
    expect(res.params.total).toBe(68976648192); // the catalog's Llama-2 70B; Megatron's vocabulary padding is memory, not parameters
  });
  it('an argument line: MoE, MLA, recompute block, fp16 gradients, --world-size option', () => {
    const line =
      '--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 --swiglu --normalization RMSNorm --disable-bias-linear --untie-embeddings-and-output-weights --position-embedding-type rope --vocab-size 129280 --make-vocab-size-divisible-by 1 --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) --moe-router-enable-expert-bias --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 8 --decoder-first-pipeline-num-layers 5 --expert-model-parallel-size 64 --seq-length 4096 --micro-batch-size 1 --global-batch-size 2048 --fp16 --recompute-granularity full --recompute-method block --recompute-num-layers 2 --frobnicate 3';
    const r = ok('megatron', line, 1024);
    expect(r.config.model).toMatchObject({
      moe: {
        experts: 256,
        top_k: 8,
        expert_ffn_hidden: 2048,
        shared_experts: 1,
        shared_expert_ffn_hidden: 2048,
        dense_layers: 3,
        router_bias: true,
      },
      mla: { q_lora_rank: 1536, kv_lora_rank: 512 },
      vocab_multiple: 1,
    });
    expect(r.config.parallel).toMatchObject({
      tp: 2,
      pp: 8,
      ep: 64,
      etp: 2,
      pp_first_stage_layers: 5,
      gpus: 1024,
      sequence_parallel: false,
    });
    expect(r.config.training).toMatchObject({
      grad_accum: 32,
      dtype: 'fp16',
      grad_dtype: 'fp16',
      recompute: 'full',
      recompute_layers: 2,
      dropout: 0.1,
    });
    expect(r.unsupported).toEqual(['--frobnicate: not a Megatron-LM flag llmem maps; not applied']);
    expect(r.notes.join('\n')).toMatch(/dropout defaults to 0.1/);
  });
  it('without a world size the global batch is listed, not guessed', () => {
    const r = ok(
      'megatron',
      '--num-layers 2 --hidden-size 64 --num-attention-heads 4 --global-batch-size 64 --micro-batch-size 2',
    );
    expect(r.config.training).not.toHaveProperty('grad_accum');
    expect(r.unsupported[0]).toMatch(/^--global-batch-size: .*--world-size/);
  });
  it('malformed arguments are errors that name the flag', () => {
    expect(fail('megatron', '--num-layers eighty --hidden-size 64').path).toBe('--num-layers');
    // a value left to the environment is reported, not guessed (the script may source it)
    expect(
      ok('megatron', '--tensor-model-parallel-size $TP --num-layers 4 --hidden-size 64 --num-attention-heads 4')
        .unsupported[0],
    ).toMatch(/^--tensor-model-parallel-size: its value \$TP is not set in the file/);
    expect(fail('megatron', '--normalization BatchNorm --num-layers 2').message).toContain(
      'allowed: LayerNorm | RMSNorm',
    );
    expect(
      fail('megatron', '--num-layers 32 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 3')
        .path,
    ).toBe('--num-layers-per-virtual-pipeline-stage');
    expect(
      fail(
        'megatron',
        '--num-layers 2 --hidden-size 64 --num-attention-heads 4 --micro-batch-size 3 --global-batch-size 64 --world-size 8',
      ).path,
    ).toBe('--global-batch-size');
    expect(fail('megatron', 'echo "hello').message).toContain('unterminated');
    expect(fail('megatron', 'python train.py --epochs 3').message).toContain('no Megatron-LM flag');
  });
});

describe('torchtitan TOML', () => {
  it('llama3_8b.toml: preset from name/flavor, op-level SAC, bf16, world size from the option', () => {
    const text = fixture('torchtitan/llama3_8b.toml');
    const r = ok('torchtitan', text);
    expect(r.config).toEqual({
      runtime: { framework: 'torchtitan' },
      parallel: { engine: 'fsdp2', tp: 1, pp: 1, cp: 1, reshard_after_forward: true, fp8_all_gather: false },
      model: { preset: 'llama-3.1-8b' },
      training: { micro_batch: 1, seq_len: 8192, dtype: 'bf16', recompute: 'per_op', optimizer: 'adamw' },
    });
    expect(r.notes.join('\n')).toMatch(/data_parallel_shard_degree -1/);
    expect(ok('torchtitan', text, 64).config.parallel).toMatchObject({ gpus: 64 });
    runs(ok('torchtitan', text, 64).config);
  });
  it("a pipeline whose layers do not split evenly: torchtitan's weighted split (embedding and output count a layer)", () => {
    // pytorch/torchtitan#1616: deepseek_v3_16b.toml (27 layers) with pipeline_parallel_degree 4, Interleaved1F1B
    const toml = `[model]\nname = "deepseek_v3"\nflavor = "16B"\n[training]\nlocal_batch_size = 8\nseq_len = 4096\n[parallelism]\ndata_parallel_shard_degree = -1\npipeline_parallel_degree = 4\npipeline_parallel_schedule = "Interleaved1F1B"\n[activation_checkpoint]\nmode = "full"\n`;
    const r = ok('torchtitan', toml, 8);
    expect(r.config.parallel).toMatchObject({ pp: 4, vpp: 2, pp_schedule: 'interleaved' });
    const res = runs(r.config);
    // the torchtitan profile's split: the ranks hold 7, 7, 7 and 6 layers (29 effective over 8 model chunks)
    expect(res.ranks.map((rank) => rank.stage)).toEqual([0, 1, 2, 3]);
    // layers_per_stage: ceil((27 + 2) / 4) = 8 model chunks, 2 a rank; 3 a stage makes 10 chunks, not a multiple of 4
    const per = (n: number) =>
      toml.replace('[activation_checkpoint]', `pipeline_parallel_layers_per_stage = ${n}\n[activation_checkpoint]`);
    expect(ok('torchtitan', per(4), 8).config.parallel).toMatchObject({ vpp: 2 });
    expect(fail('torchtitan', per(3)).message).toContain('not a multiple of pipeline_parallel_degree 4');
    // a stage weight other than 1 is said not applied
    const weighted = toml.replace(
      '[activation_checkpoint]',
      'pipeline_parallel_first_stage_less_layers = 2\n[activation_checkpoint]',
    );
    expect(ok('torchtitan', weighted, 8).unsupported.join('\n')).toContain('pipeline_parallel_first_stage_less_layers');
  });
  it('newer layout: local_batch_size, PP microbatches, every-2nd-layer AC, compile with loss, float8 converter', () => {
    const r = ok(
      'torchtitan',
      `[model]\nname = "llama3"\nflavor = "70B"\nconverters = ["float8"]\n[training]\nlocal_batch_size = 8\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 4\ntensor_parallel_degree = 8\npipeline_parallel_degree = 4\npipeline_parallel_schedule = "Interleaved1F1B"\npipeline_parallel_microbatch_size = 1\n[activation_checkpoint]\nmode = "selective"\nselective_ac_option = "2"\n[compile]\nenable = true\ncomponents = ["model", "loss"]\n[float8]\nenable_fsdp_float8_all_gather = true\n`,
    );
    expect(r.config.parallel).toMatchObject({
      gpus: 128,
      tp: 8,
      pp: 4,
      vpp: 2,
      pp_schedule: 'interleaved',
      reshard_after_forward: false,
      sequence_parallel: true,
      fp8_all_gather: true,
    });
    expect(r.config.training).toMatchObject({
      micro_batch: 1,
      grad_accum: 8,
      fp8_linear: true,
      recompute: 'full',
      recompute_layers: 10,
      loss: 'compiled',
    });
    expect(r.config.runtime).toEqual({ framework: 'torchtitan', torch_compile: true });
    runs(r.config);
  });
  it('malformed TOML and values are errors', () => {
    expect(fail('torchtitan', '[training\nseq_len = 4').message).toContain('not valid TOML');
    expect(fail('torchtitan', '[training]\nseq_len = "long"').path).toBe('seq_len');
    expect(
      fail('torchtitan', '[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "Zigzag"').path,
    ).toBe('pipeline_parallel_schedule');
    expect(fail('torchtitan', '[activation_checkpoint]\nmode = "sometimes"').path).toBe('mode');
    // found by npm run fuzz: a components value that is not a list threw a TypeError
    expect(fail('torchtitan', '[compile]\nenable = true\ncomponents = 5').path).toBe('[compile] components');
  });
});

describe('accelerate YAML', () => {
  it('FSDP example of the accelerate docs', () => {
    const r = ok('accelerate', fixture('accelerate/fsdp-bert.yaml'));
    expect(r.config).toEqual({
      runtime: { framework: 'accelerate' },
      parallel: { engine: 'fsdp1', fsdp_strategy: 'full_shard', gpus: 2, gpus_per_node: 2 },
      training: { dtype: 'bf16' },
    });
    expect(r.unsupported).toEqual([]);
  });
  it('FSDP2 with reshard_after_forward and CPU offload; DeepSpeed plugin', () => {
    const r = ok(
      'accelerate',
      'distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: false\n  fsdp_offload_params: true\n  fsdp_activation_checkpointing: true\nmixed_precision: bf16\nnum_machines: 2\nnum_processes: 16\n',
    );
    expect(r.config).toEqual({
      runtime: { framework: 'accelerate' },
      parallel: {
        engine: 'fsdp2',
        reshard_after_forward: false,
        offload_params: 'cpu',
        offload_optimizer: 'cpu',
        gpus: 16,
        gpus_per_node: 8,
      },
      training: { recompute: 'full', dtype: 'bf16' },
    });
    runs({ ...r.config, model: { preset: 'llama-3.1-8b' } });
    const ds = ok(
      'accelerate',
      'distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: cpu\n  gradient_accumulation_steps: 4\nmixed_precision: fp16\nnum_processes: 8\n',
    );
    expect(ds.config).toEqual({
      runtime: { framework: 'accelerate' },
      parallel: { engine: 'deepspeed', zero_stage: 2, offload_optimizer: 'cpu', gpus: 8 },
      training: { grad_accum: 4, dtype: 'fp16' },
    });
  });
  it('malformed YAML and values are errors', () => {
    expect(fail('accelerate', 'distributed_type: FSDP\nfsdp_config: [unclosed').message).toContain('not valid YAML');
    expect(
      fail('accelerate', 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HALF_SHARD\n').path,
    ).toBe('fsdp_config.fsdp_sharding_strategy');
    expect(fail('accelerate', 'distributed_type: QUANTUM\n').path).toBe('distributed_type');
    expect(fail('accelerate', '').message).toContain('empty');
  });
});

describe('HF TrainingArguments JSON', () => {
  it('an SFT run with FSDP, fused AdamW, gradient checkpointing and Liger', () => {
    const r = ok('training_args', fixture('training_args/sft-fsdp.json'));
    expect(r.config).toEqual({
      training: {
        dtype: 'bf16',
        micro_batch: 2,
        grad_accum: 8,
        optimizer: 'adamw',
        optimizer_impl: 'fused',
        recompute: 'full',
        loss: 'fused',
        seq_len: 4096,
      },
      parallel: { engine: 'fsdp1', fsdp_strategy: 'full_shard' },
      runtime: { framework: 'hf_trainer', torch_compile: false },
    });
    expect(r.unsupported).toEqual([expect.stringMatching(/^use_liger_kernel: Liger's rms_norm, rope, swiglu kernels/)]);
    runs({ ...r.config, model: { preset: 'llama-3.1-8b' } });
  });
  it("accelerator_config: sync_each_batch decides accelerate's no_sync under FSDP1; the rest and a file name", () => {
    const sync = (v: boolean) =>
      ok(
        'training_args',
        JSON.stringify({ accelerator_config: { gradient_accumulation_kwargs: { sync_each_batch: v } } }),
      ).config.parallel;
    expect(sync(true)).toMatchObject({ accumulate_no_sync: false });
    expect(sync(false)).toMatchObject({ accumulate_no_sync: true });
    const loading = ok('training_args', '{"accelerator_config": {"split_batches": true, "even_batches": false}}');
    expect([loading.config.parallel, loading.unsupported]).toEqual([{ engine: 'ddp' }, []]);
    const inline = JSON.stringify({
      accelerator_config: '{"gradient_accumulation_kwargs": {"sync_each_batch": true}}',
    });
    expect(ok('training_args', inline).config.parallel).toMatchObject({ accumulate_no_sync: false });
    expect(ok('training_args', '{"accelerator_config": "accel.json"}').unsupported[0]).toMatch(
      /^accelerator_config: accel\.json: a file llmem cannot read/,
    );
    const axolotl = ok(
      'axolotl',
      'base_model: meta-llama/Llama-3.1-8B\naccelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: true\n',
    );
    expect(axolotl.config.parallel).toMatchObject({ accumulate_no_sync: false });
  });
  it("ddp_find_unused_parameters and ddp_bucket_cap_mb reach DDP (TrainingArguments, axolotl, LLaMA-Factory); null keeps the stack's", () => {
    const args = ok('training_args', '{"ddp_find_unused_parameters": false, "ddp_bucket_cap_mb": 50}');
    expect(args.config.parallel).toMatchObject({ ddp_find_unused_parameters: false, ddp_bucket_cap_mib: 50 });
    const unset = ok('training_args', '{"ddp_find_unused_parameters": null, "ddp_bucket_cap_mb": null}');
    expect(unset.config.parallel).toEqual({ engine: 'ddp' });
    expect(unset.unsupported).toEqual([]);
    const axolotl = ok('axolotl', 'base_model: meta-llama/Llama-3.1-8B\nddp_find_unused_parameters: true\n');
    expect(axolotl.config.parallel).toMatchObject({ ddp_find_unused_parameters: true });
    const lf = ok(
      'llamafactory',
      'model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nfinetuning_type: lora\nddp_find_unused_parameters: true\nddp_bucket_cap_mb: 10\n',
    );
    expect(lf.config.parallel).toMatchObject({ ddp_find_unused_parameters: true, ddp_bucket_cap_mib: 10 });
    expect(fail('training_args', '{"ddp_bucket_cap_mb": 0}').message).toMatch(
      /^ddp_bucket_cap_mb: must be a number >= 0.001/,
    );
  });
  it('optimizer names: 8-bit, paged, adafactor; deepspeed paths and inline objects', () => {
    const opt = (o: string) => ok('training_args', JSON.stringify({ optim: o })).config.training;
    expect(opt('paged_adamw_8bit')).toMatchObject({ optimizer: 'adamw_8bit', paged_optimizer: true });
    expect(opt('adafactor')).toMatchObject({ optimizer: 'adafactor' });
    expect(ok('training_args', '{"optim": "galore_adamw"}').unsupported[0]).toMatch(/^optim: optimizer "galore_adamw"/);
    expect(ok('training_args', '{"deepspeed": "configs/ds_z3_offload_config.json"}').config.parallel).toEqual({
      engine: 'deepspeed',
      zero_stage: 3,
      offload_optimizer: 'cpu',
      offload_params: 'cpu',
    });
    expect(
      ok('training_args', '{"deepspeed": "deepspeed_configs/zero3_bf16_cpuoffload_params.json"}').config.parallel,
    ).toEqual({ engine: 'deepspeed', zero_stage: 3, offload_params: 'cpu' });
    expect(ok('training_args', '{"deepspeed": "zero2_offload.json"}').config.parallel).toEqual({
      engine: 'deepspeed',
      zero_stage: 2,
      offload_optimizer: 'cpu',
    });
    expect(ok('training_args', '{"deepspeed": {"zero_optimization": {"stage": 1}}}').config.parallel).toMatchObject({
      engine: 'deepspeed',
      zero_stage: 1,
    });
  });
  it('malformed values are errors', () => {
    expect(fail('training_args', '{"per_device_train_batch_size": 0}').path).toBe('per_device_train_batch_size');
    expect(fail('training_args', '{"bf16": "sometimes"}').path).toBe('bf16');
    expect(fail('training_args', '{"gradient_checkpointing": 1}').path).toBe('gradient_checkpointing');
  });
});

describe('LLaMA-Factory YAML', () => {
  it('examples/train_lora/llama3_lora_sft.yaml', () => {
    const r = ok('llamafactory', fixture('llamafactory/llama3_lora_sft.yaml'));
    expect(r.config).toEqual({
      runtime: { framework: 'llamafactory' },
      training: {
        dtype: 'bf16',
        finetune: { method: 'lora', lora_rank: 8, lora_targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] },
        recompute: 'full',
        seq_len: 2048,
        micro_batch: 1,
        grad_accum: 8,
        attention: 'flash',
      },
      model: { preset: 'llama-3-8b' },
      parallel: { engine: 'ddp' },
    });
    expect(r.notes.join('\n')).toMatch(/gradient checkpointing on/);
    expect(r.unsupported).toEqual([]);
    runs(r.config);
  });
  it('no bf16 / fp16: LoRA keeps its frozen base in the checkpoint dtype, BAdam trains 16-bit weights, full casts to fp32', () => {
    const base = 'model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n';
    expect(ok('llamafactory', `${base}finetuning_type: lora\n`).config.training).toMatchObject({ dtype: 'bf16' });
    expect(ok('llamafactory', `${base}finetuning_type: full\nuse_badam: true\n`).config.training).toMatchObject({
      dtype: 'bf16',
      master_weights: false,
      grad_dtype: 'bf16',
      optimizer_dtype: 'bf16',
    });
    expect(ok('llamafactory', `${base}finetuning_type: full\n`).config.training).toMatchObject({ dtype: 'fp32' });
    expect(ok('llamafactory', `${base}finetuning_type: lora\nfp16: true\n`).config.training).toMatchObject({
      dtype: 'fp16',
    });
    const lora = runs(ok('llamafactory', `${base}finetuning_type: lora\n`).config);
    expect(lora.per_gpu.breakdown_bytes.weights).toBeLessThan(17e9); // 8 B parameters in 16 bits, not 32 GB
  });
  it('a full fine-tune of a vision-language model freezes the tower and the projector unless told (freeze_* defaults)', () => {
    const vl = 'model_name_or_path: Qwen/Qwen2.5-VL-7B-Instruct\nfinetuning_type: full\n';
    const train = (extra: string) => ((ok('llamafactory', vl + extra).config.model as Config).vision as Config).train;
    expect(train('')).toBe('none');
    expect(train('freeze_multi_modal_projector: false\n')).toBe('projector');
    expect(train('freeze_vision_tower: false\nfreeze_multi_modal_projector: false\n')).toBe('full');
    const none = runs(ok('llamafactory', vl).config),
      full = runs(ok('llamafactory', `${vl}freeze_vision_tower: false\nfreeze_multi_modal_projector: false\n`).config);
    expect(none.params.trainable).toBeLessThan(full.params.trainable - 5e8); // the ~0.67 B tower and merger
    // LoRA: the tower is part of the frozen base (only the image size LLaMA-Factory resizes to); a text model: nothing
    expect(
      (ok('llamafactory', 'model_name_or_path: Qwen/Qwen2.5-VL-7B-Instruct\n').config.model as Config).vision,
    ).toEqual({ image_size: 756 });
    expect(
      (ok('llamafactory', 'model_name_or_path: Qwen/Qwen2.5-7B\nfinetuning_type: full\n').config.model as Config)
        .vision,
    ).toBe(undefined);
    expect(ok('llamafactory', `${vl}freeze_language_model: true\n`).unsupported.join('\n')).toContain(
      'freeze_language_model',
    );
  });
  it("image_max_pixels sizes a Qwen-VL tower's input (default 768 x 768), a whole number of merged patches", () => {
    const vl = 'model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nfinetuning_type: lora\n';
    const size = (extra: string) =>
      ((ok('llamafactory', vl + extra).config.model as Config).vision as Config).image_size;
    expect(size('')).toBe(756); // floor(768 / 28) x 28
    expect(size('image_max_pixels: 262144\n')).toBe(504); // 512 px a side
    expect(ok('llamafactory', `${vl}image_max_pixels: 262144\n`).notes.join('\n')).toContain(
      'image_max_pixels 262144: the largest square image the tower takes, 504 px',
    );
    // a tower of one fixed size (LLaVA's CLIP) resizes every image to it: read, no effect
    const llava = ok('llamafactory', 'model_name_or_path: llava-hf/llava-1.5-7b-hf\nimage_max_pixels: 262144\n');
    expect(llava.notes.join('\n')).toMatch(/no effect on per-GPU memory: .*image_max_pixels/);
  });
  it('QLoRA, DeepSpeed by file name, Liger in DPO (logits kept), DPO with full fine-tuning listed', () => {
    const r = ok(
      'llamafactory',
      'model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: dpo\nfinetuning_type: full\nquantization_bit: 4\ndeepspeed: examples/deepspeed/ds_z3_config.json\nenable_liger_kernel: true\ndisable_gradient_checkpointing: true\n',
    );
    expect(r.config).toMatchObject({
      model: { preset: 'qwen2.5-7b' },
      parallel: { engine: 'deepspeed', zero_stage: 3 },
      training: { finetune: { method: 'full' } },
    });
    expect((r.config.training as Config).recompute).toBeUndefined();
    expect((r.config.training as Config).loss).toBeUndefined(); // DPO: Liger's cross-entropy, not the fused loss
    expect(r.unsupported.map((u) => u.split(':')[0])).toEqual([
      'quantization_bit',
      'stage',
      'deepspeed',
      'enable_liger_kernel',
    ]);
    const q = ok('llamafactory', 'quantization_bit: 4\nlora_target: q_proj,v_proj\n');
    expect(q.config.training).toMatchObject({
      finetune: { method: 'qlora', quant: 'nf4', double_quant: true, lora_targets: ['q', 'v'] },
    });
    const unknown = fail('llamafactory', 'model_name_or_path: /data/my-model\nquantization_bit: 4\n');
    expect(unknown.path).toBe('model_name_or_path');
    expect(unknown.message).toMatch(/^model_name_or_path: "\/data\/my-model" is not in the model catalog/);
  });
  it('malformed values are errors', () => {
    expect(fail('llamafactory', 'finetuning_type: prefix\n').path).toBe('finetuning_type');
    expect(fail('llamafactory', 'quantization_bit: 3\n').path).toBe('quantization_bit');
    expect(fail('llamafactory', 'cutoff_len: -1\n').path).toBe('cutoff_len');
    expect(fail('llamafactory', 'lora_target: embed_tokens\n').path).toBe('lora_target');
    expect(fail('llamafactory', '- a\n- b\n').message).toContain('mapping of keys');
  });
});

describe('axolotl YAML', () => {
  it('examples/llama-3/qlora.yml', () => {
    const r = ok('axolotl', fixture('axolotl/llama-3-qlora.yml'));
    expect(r.config).toEqual({
      runtime: { framework: 'axolotl' },
      training: {
        dtype: 'bf16',
        finetune: {
          method: 'qlora',
          quant: 'nf4',
          double_quant: true,
          lora_rank: 32,
          lora_targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'],
          lora_dropout: 0.05,
        },
        seq_len: 4096,
        grad_accum: 4,
        micro_batch: 2,
        optimizer: 'adamw',
        paged_optimizer: true,
        recompute: 'full',
        attention: 'flash',
      },
      model: { preset: 'llama-3-8b' },
      parallel: { engine: 'ddp' },
    });
    expect(r.unsupported).toEqual([]);
    runs(r.config);
  });
  it('full fine-tuning with FSDP2, offloaded checkpoints and cut cross-entropy', () => {
    const r = ok(
      'axolotl',
      'base_model: Qwen/Qwen3-8B\nsequence_len: 8192\nmicro_batch_size: 1\ngradient_accumulation_steps: 2\nbf16: true\ngradient_checkpointing: offload\nplugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\ncut_cross_entropy: true\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n  reshard_after_forward: true\n  state_dict_type: FULL_STATE_DICT\n',
    );
    expect(r.config).toEqual({
      runtime: { framework: 'axolotl' },
      training: {
        dtype: 'bf16',
        finetune: { method: 'full' },
        seq_len: 8192,
        micro_batch: 1,
        grad_accum: 2,
        recompute: 'full',
        activation_offload: true,
        loss: 'cce',
        // axolotl's FSDP2 keeps the bf16-loaded weights (no fp32 upcast): bf16 grads and torch AdamW states
        master_weights: false,
        grad_dtype: 'bf16',
        optimizer_dtype: 'bf16',
      },
      model: { preset: 'qwen3-8b' },
      parallel: { engine: 'fsdp2', reshard_after_forward: true },
    });
    runs(r.config);
  });
  it('malformed values are errors', () => {
    expect(fail('axolotl', 'adapter: prefix-tuning\n').path).toBe('adapter');
    expect(fail('axolotl', 'adapter: lora\nlora_r: eight\n').path).toBe('lora_r');
    expect(fail('axolotl', 'gradient_checkpointing: sometimes\n').path).toBe('gradient_checkpointing');
    expect(fail('axolotl', 'sequence_len: [1, 2]\n').path).toBe('sequence_len');
  });
});

describe('HF config.json through importConfig', () => {
  it('warnings and unknown keys become the unsupported list', () => {
    const r = ok('hf', fixture('hf/deepseek-v3.json'));
    expect(r.unsupported[0]).toMatch(/^num_nextn_predict_layers 1/);
    expect(fail('hf', '{"model_type": "llama"').message).toContain('not valid JSON');
  });
});

describe('detectKind', () => {
  const cases: [string, string, ImportKind | undefined][] = [
    ['hf/llama-3.1-8b.json', 'config.json', 'hf'],
    ['deepspeed/hf-zero3-offload.json', 'ds_config.json', 'deepspeed'],
    ['megatron/llama2-70b-pretrain.sh', 'train.sh', 'megatron'],
    ['torchtitan/llama3_8b.toml', 'llama3_8b.toml', 'torchtitan'],
    ['accelerate/fsdp-bert.yaml', 'fsdp.yaml', 'accelerate'],
    ['training_args/sft-fsdp.json', 'training_args.json', 'training_args'],
    ['llamafactory/llama3_lora_sft.yaml', 'sft.yaml', 'llamafactory'],
    ['axolotl/llama-3-qlora.yml', 'qlora.yml', 'axolotl'],
  ];
  for (const [path, name, kind] of cases)
    it(`${name} -> ${kind}`, () => expect(detectKind(name, fixture(path))).toBe(kind));
  it('unsure -> undefined', () => expect(detectKind('notes.txt', 'hello')).toBeUndefined());
  it('a DeepSpeed JSON with a nested "model_type" is DeepSpeed (DeepSpeedExamples data_efficiency random_ltd)', () =>
    expect(
      detectKind(
        'ds_config_gpt_base_random_ltd.json',
        '{"train_batch_size": 64, "data_efficiency": {"data_routing": {"random_ltd": {"model_type": "decoder"}}}}',
      ),
    ).toBe('deepspeed'));
  it("a long model: block that is not torchtune's is read once (NeMo's megatron_gpt_config.yaml hung the detection)", () => {
    // NVIDIA/NeMo examples/nlp/language_modeling/conf/megatron_gpt_config.yaml: a model: section of ~200 lines
    const keys = Array.from({ length: 200 }, (_, i) => `    key_${i}: ${i}   # a comment`).join('\n');
    const nemo = `name: megatron_gpt\ntrainer:\n  devices: 1\nmodel:\n${keys}\n  optim:\n    name: fused_adam\nexp_manager:\n  name: x\n`;
    expect(detectKind('megatron_gpt_config.yaml', nemo)).toBeUndefined();
    const tune = `model:\n${keys}\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n`;
    expect(detectKind('8B_lora.yaml', tune)).toBe('torchtune');
    expect(detectKind('x.yaml', `model:\n  a: 1\nother:\n  _component_: torchtune.models.x\n`)).toBeUndefined();
  });
});

describe('values of the wrong shape are reported, never dropped', () => {
  it('fsdp as a mapping (an Oumi-style file forced through the HF importers): not applied, said so', () => {
    for (const kind of ['training_args', 'axolotl'] as const) {
      const r = ok(kind, 'fsdp:\n  enable_fsdp: true\nper_device_train_batch_size: 2\n');
      expect(r.unsupported.join('\n'), kind).toMatch(/^fsdp: .*not an FSDP option string or list/m);
    }
    expect(ok('axolotl', 'fused_attn_kernel: true\n').unsupported.join('\n')).toMatch(
      /fused attention kernel is not modelled/,
    );
  });
  it("a file none of whose keys the format knows is refused, not imported as that format's defaults", () => {
    // NVIDIA-NeMo/RL examples/configs/grpo_math_1B.yaml (its top-level sections)
    const nemoRl =
      'grpo:\n  num_prompts_per_step: 32\nloss_fn:\n  reference_policy_kl_penalty: 0.01\npolicy:\n  model_name: Qwen/Qwen2.5-1.5B\ncluster:\n  gpus_per_node: 8\n';
    for (const kind of ['llamafactory', 'axolotl', 'training_args'] as const)
      expect(fail(kind, nemoRl).message, kind).toMatch(
        /none of the file's keys \(grpo, loss_fn, policy, cluster\) is a /,
      );
  });
});

describe('training tools llmem does not read are named, not mistaken for another format', () => {
  const cases: [string, string, RegExp][] = [
    // ms-swift's Megatron-SWIFT (megatron sft); swift sft / pt / rlhf are read as kind swift (import-swift.test.ts)
    [
      'train_megatron.sh',
      'NPROC_PER_NODE=2 \\\nmegatron sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    --tuner_type full \\\n    --tensor_model_parallel_size 2\n',
      /ms-swift/,
    ],
    // deepspeedai/DeepSpeedExamples applications/DeepSpeed-Chat/training/step1_supervised_finetuning/training_scripts
    [
      'run_1.3b.sh',
      'deepspeed main.py \\\n   --model_name_or_path facebook/opt-1.3b \\\n   --per_device_train_batch_size 8 \\\n   --zero_stage 2\n',
      /DeepSpeed-Chat/,
    ],
    [
      'step3.sh',
      'deepspeed --master_port 12346 main.py --actor_model_name_or_path x --critic_model_name_or_path y\n',
      /DeepSpeed-Chat/,
    ],
    [
      'megatron_gpt_config.yaml',
      'name: megatron_gpt\ntrainer:\n  devices: 1\nexp_manager:\n  name: x\nmodel:\n  hidden_size: 768\n',
      /NeMo 1\.x/,
    ],
    [
      'config_tiny_llama.yaml',
      'general:\n  project: x\nparallelism:\n  dp: 2\ntokens:\n  sequence_length: 256\n',
      /nanotron/,
    ],
  ];
  for (const [name, text, what] of cases)
    it(name, () => {
      expect(detectKind(name, text), 'not read as another format').toBeUndefined();
      expect(unreadFormat(name, text)).toMatch(what);
    });
  it('formats llmem reads are not taken for one it does not', () => {
    for (const [path] of [
      ['megatron/llama2-70b-pretrain.sh'],
      ['axolotl/llama-3-qlora.yml'],
      ['llamafactory/llama3_lora_sft.yaml'],
    ])
      expect(unreadFormat(path, fixture(path)), path).toBeUndefined();
  });
});

describe('importer messages', () => {
  // a template literal whose placeholder lost its braces prints "$type" to the user (seen in llamafactory.ts)
  it('every template placeholder in the importers keeps its braces', () => {
    const dir = join(repoRoot(), 'frontend/config/importers');
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts') && n !== 'shell.ts')) {
      const text = readFileSync(join(dir, f), 'utf8');
      const bare = text.match(/`[^`\n]*\$(?![{(])[A-Za-z][^`\n]*`/g) ?? [];
      expect(bare, f).toEqual([]);
    }
  });
});

describe('framework keys each format has (issue 14)', () => {
  const lines = (r: Imported) => r.unsupported.join('\n');
  const withAlso = (kind: ImportKind, text: string, also: string): Imported => {
    const r = importConfig(kind, text, { also });
    if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
    return r;
  };
  it('torchtitan transformers backend: the Hub model for the full flavor only (debugmodel is a test shape)', () => {
    const full = readFileSync(
      join(repoRoot(), 'tests/fixtures/real/torchtitan/transformers-backend-full.toml'),
      'utf8',
    );
    expect((ok('torchtitan', full).config.model as Config).preset).toBe('qwen3-4b');
    const debug = importConfig('torchtitan', full.replace('flavor = "full"', 'flavor = "debugmodel"'));
    expect('error' in debug && debug.error.message).toMatch(/"debugmodel" lays its own shape over Qwen\/Qwen3-4B/);
  });
  it("axolotl flash_attn_fuse_mlp: xformers' fused SwiGLU named as not modelled (axolotl llama-2/fft_optimized.yml)", () => {
    const r = ok('axolotl', 'base_model: meta-llama/Llama-2-7b-hf\nflash_attention: true\nflash_attn_fuse_mlp: true\n');
    expect(lines(r)).toMatch(/^flash_attn_fuse_mlp: xformers' fused SwiGLU replaces the MLP/m);
    expect(r.notes.join('\n')).not.toMatch(/no effect on per-GPU memory: .*flash_attn_fuse_mlp/);
  });
  it('axolotl plugins: CutCrossEntropy defaults on, Liger per kernel, their keys need their plugin', () => {
    const cce = 'plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\nbf16: true\n';
    expect((ok('axolotl', cce).config.training as Config).loss).toBe('cce');
    expect((ok('axolotl', `${cce}cut_cross_entropy: false\n`).config.training as Config).loss).toBeUndefined();
    const noPlugin = ok('axolotl', 'cut_cross_entropy: true\nliger_fused_linear_cross_entropy: true\n');
    expect((noPlugin.config.training as Config).loss).toBeUndefined();
    expect(lines(noPlugin)).toMatch(/cut_cross_entropy: read only by the CutCrossEntropyPlugin/);
    expect(lines(noPlugin)).toMatch(/liger_fused_linear_cross_entropy: read only by the LigerPlugin/);
    const liger = ok(
      'axolotl',
      'plugins: [axolotl.integrations.liger.LigerPlugin, axolotl.integrations.spectrum.SpectrumPlugin]\nliger_fused_linear_cross_entropy: true\nliger_rms_norm: true\nliger_rope: false\n',
    );
    expect((liger.config.training as Config).loss).toBe('fused');
    expect(liger.unsupported.map((u) => u.split(':')[0])).toEqual([
      'plugins axolotl.integrations.spectrum.SpectrumPlugin',
      'liger_rms_norm',
    ]);
    expect(fail('axolotl', 'plugins: axolotl.integrations.liger.LigerPlugin\n').path).toBe('plugins');
  });
  it('axolotl parallel sizes: tp and cp with FSDP2, the shard group over dp_shard x cp, EP reported', () => {
    const r = ok(
      'axolotl',
      'fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\ntensor_parallel_size: 2\ncontext_parallel_size: 2\ndp_shard_size: 2\ndp_replicate_size: 2\n',
    );
    expect(r.config.parallel).toEqual({
      engine: 'fsdp2',
      reshard_after_forward: true,
      tp: 2,
      sequence_parallel: false,
      cp: 2,
      fsdp_strategy: 'hybrid_shard',
      fsdp_shard_size: 4,
      gpus: 16,
    });
    runs(r.config);
    const ds = ok('axolotl', 'deepspeed: zero2.json\ntensor_parallel_size: 2\nsequence_parallel_degree: 4\n');
    expect((ds.config.parallel as Config).tp).toBeUndefined();
    expect(lines(ds)).toMatch(/tensor_parallel_size: 2: llmem models tensor parallelism .* not with deepspeed/);
    // axolotl's ring-flash-attn context parallelism runs beside DeepSpeed too (a K/V ring: no all-to-all)
    expect(ds.config.parallel).toMatchObject({ cp: 4 });
    expect(ds.config.parallel).not.toHaveProperty('cp_all_to_all');
    // dp_shard_size alone, no world size given: the smallest world it runs on (axolotl examples/gpt-oss
    // gpt-oss-120b-fft-fsdp2-offload.yaml sets dp_shard_size 16 for two 8-GPU nodes)
    const shard = ok('axolotl', 'fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\ndp_shard_size: 16\n');
    expect(shard.config.parallel).toMatchObject({ fsdp_shard_size: 16, gpus: 16 });
    runs(shard.config);
    expect(
      (ok('axolotl', 'fsdp_version: 2\nfsdp_config: {}\ndp_shard_size: 16\n', 32).config.parallel as Config).gpus,
    ).toBe(32);
    const ep = ok('axolotl', 'fsdp_config:\n  fsdp_version: 2\nexpert_parallel_size: 2\n');
    expect(lines(ep)).toMatch(/expert_parallel_size: 2: axolotl's expert parallelism is a mesh axis/);
    expect((ep.config.parallel as Config).engine).toBe('fsdp2'); // fsdp_config alone turns FSDP on
  });
  it('modules trained in full beside the adapters: axolotl, LLaMA-Factory (v0 and v1)', () => {
    const r = ok('axolotl', 'adapter: lora\nlora_modules_to_save: [embed_tokens, lm_head, model.norm]\n');
    expect((r.config.training as Config).finetune).toMatchObject({ full_modules: ['embedding', 'head'] });
    expect(lines(r)).toMatch(
      /lora_modules_to_save model.norm: trained in full beside the adapters: only the embedding/,
    );
    const f = ok('llamafactory', 'finetuning_type: lora\nadditional_target: lm_head\n');
    expect((f.config.training as Config).finetune).toMatchObject({ full_modules: ['head'] });
    runs(r.config);
  });
  it('DeepSpeed tensor_parallel.autotp_size and sub_group_size: reported with the reason', () => {
    const r = ok(
      'deepspeed',
      '{"tensor_parallel": {"autotp_size": 4}, "zero_optimization": {"stage": 3, "sub_group_size": 1e9}}',
    );
    expect(lines(r)).toMatch(/tensor_parallel.autotp_size: 4: AutoTP splits/);
    expect(lines(r)).toMatch(/zero_optimization.sub_group_size: ZeRO-3 steps the optimizer one sub-group/);
    expect(ok('deepspeed', '{"tensor_parallel": {"autotp_size": 1}}').unsupported).toEqual([]);
  });
  it('LLaMA-Factory: fsdp, fp8, Liger by stage, Unsloth checkpointing; the v1 schema recognised', () => {
    const r = ok(
      'llamafactory',
      'finetuning_type: full\nbf16: true\nfp8: true\nfsdp: full_shard auto_wrap offload\nenable_liger_kernel: true\nuse_unsloth_gc: true\n',
    );
    expect(r.config.parallel).toMatchObject({ engine: 'fsdp1', offload_params: 'cpu' });
    expect(r.config.training).toMatchObject({
      fp8_linear: true,
      loss: 'fused',
      recompute: 'full',
      activation_offload: true,
    });
    expect(lines(r)).toMatch(/enable_liger_kernel: Liger's RMSNorm, RoPE and SwiGLU kernels/);
    const v1 = 'model: Qwen/Qwen3-4B\nmodel_class: llm\ndist_config:\n  name: fsdp2\ncp_size: 2\n';
    expect(detectKind('train.yaml', v1)).toBe('llamafactory');
    const r1 = ok('llamafactory', v1);
    expect(r1.notes[1]).toMatch(/LLaMA-Factory v1 config schema/);
    expect(r1.config.parallel).toEqual({ engine: 'fsdp2', cp: 2, cp_all_to_all: 2 }); // cp_mode ulysses, the default
    // a full tuning: model_engine.py moves the model to fp32 (ea0b4e24): fp32 master weights and gradients
    expect(r1.config.training).toMatchObject({ seq_len: 2048, micro_batch: 1 });
    expect(r1.config.training).not.toHaveProperty('master_weights');
    expect(r1.notes.join('\n')).toContain('moves the model to fp32');
    expect(fail('llamafactory', 'model: meta-llama/Llama-3.1-8B\ndist_config:\n  name: deepspeed\n').path).toBe(
      'dist_config.config_file',
    );
  });
  it('accelerate: mixed_precision absent is "no", or fp16 with the older fp16 key', () => {
    expect((ok('accelerate', 'distributed_type: MULTI_GPU\n').config.training as Config).dtype).toBe('fp32');
    expect((ok('accelerate', 'distributed_type: MULTI_GPU\nfp16: true\n').config.training as Config).dtype).toBe(
      'fp16',
    );
  });
  it('the referenced DeepSpeed file: read when given (TrainingArguments, axolotl), else named as not read', () => {
    const ds = '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}, "bf16": {"enabled": true}}';
    const args = '{"per_device_train_batch_size": 2, "deepspeed": "configs/ds.json"}';
    const read = withAlso('training_args', args, ds);
    expect(read.config.parallel).toMatchObject({ engine: 'deepspeed', zero_stage: 2, offload_optimizer: 'cpu' });
    expect(read.notes.join('\n')).toMatch(/deepspeed "configs\/ds.json": read from the file given with this one/);
    expect(read.unsupported).toEqual([]);
    const unread = ok('training_args', args);
    expect(lines(unread)).toMatch(/deepspeed: "configs\/ds.json" was not read/);
    const ax = withAlso(
      'axolotl',
      'deepspeed: deepspeed_configs/zero2.json\n',
      '{"zero_optimization": {"stage": 2, "sub_group_size": 5}}',
    );
    expect(lines(ax)).toMatch(/^deepspeed_configs\/zero2.json#zero_optimization.sub_group_size: /m);
    const bad = importConfig('axolotl', 'deepspeed: z.json\n', { also: '{"zero_optimization": ' });
    expect('error' in bad && bad.error.path).toBe('deepspeed');
    const none = withAlso('axolotl', 'fsdp_config: {}\n', ds);
    expect(lines(none)).toMatch(/second file: the config names no DeepSpeed JSON file/);
  });
});

describe('DeepSpeed batch identity under sequence parallelism: messages name the data-parallel size', () => {
  const ds = (o: object) => JSON.stringify({ bf16: { enabled: true }, sequence_parallel_size: 2, ...o });
  it('with the world size: the note names both sizes', () => {
    const r = ok('deepspeed', ds({ train_batch_size: 8, train_micro_batch_size_per_gpu: 2 }), 4);
    expect((r.config.training as Record<string, unknown>).grad_accum).toBe(2);
    expect(r.notes.join('\n')).toContain('data-parallel size 2 (world size 4 / sequence_parallel_size 2)');
  });
  it('an identity that does not hold names the data-parallel size, not the world size', () => {
    const r = importConfig(
      'deepspeed',
      ds({ train_batch_size: 8, train_micro_batch_size_per_gpu: 2, gradient_accumulation_steps: 1 }),
      { worldSize: 4 },
    );
    expect('error' in r && r.error.message).toContain('x data-parallel size 2 (world size 4');
  });
  it('a train_batch_size whose GPU count overflows is a named error, not an infinite world (found by npm run fuzz)', () => {
    const r = importConfig(
      'deepspeed',
      ds({ train_batch_size: 1e308, train_micro_batch_size_per_gpu: 1, gradient_accumulation_steps: 1 }),
      {},
    );
    expect('error' in r && r.error.path).toBe('train_batch_size');
    expect('error' in r && r.error.message).toContain('is not a finite number of GPUs');
  });
  it('without the world size, a batch equal to the micro-batch runs on one data-parallel rank of sp GPUs', () => {
    const r = ok('deepspeed', ds({ train_batch_size: 4, train_micro_batch_size_per_gpu: 4 }));
    expect((r.config.parallel as Record<string, unknown>).gpus).toBe(2);
    expect(r.notes.join('\n')).toContain('parallel.gpus 2 and grad_accum 1');
  });
});
