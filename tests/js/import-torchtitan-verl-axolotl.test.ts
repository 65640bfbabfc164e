// torchtitan flavors and unknown models, verl's Megatron workers (ppo_megatron_trainer) and unset
// model paths, axolotl's LoRA kernels and model_config: small inputs shaped like the official examples.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../wasm/llmem.js';
import { type ImportKind, unreadFormat } from '../../frontend/config/importers/index.js';
import { importError, imported } from './import-helpers.js';

const ok = (kind: ImportKind, text: string, worldSize?: number) => imported(kind, text, { worldSize });
const error = (kind: ImportKind, text: string) => importError(kind, text);
const at = (c: Json, path: string): Json | undefined =>
  path
    .split('.')
    .reduce<Json | undefined>((n, k) => (n && typeof n === 'object' && !Array.isArray(n) ? n[k] : undefined), c);

describe('torchtitan flavors', () => {
  const toml = (name: string, flavor: string) =>
    `[model]\nname = "${name}"\nflavor = "${flavor}"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\n[parallelism]\ndata_parallel_shard_degree = 8\n`;

  it('qwen3 1.7B (qwen3_1.7b.toml) maps to qwen3-1.7b, and the other catalog flavors to theirs', () => {
    expect(at(ok('torchtitan', toml('qwen3', '1.7B')).config, 'model.preset')).toBe('qwen3-1.7b');
    const cases: [string, string, string][] = [
      ['qwen3', '0.6B', 'qwen3-0.6b'],
      ['qwen3', '4B', 'qwen3-4b'],
      ['qwen3', '14B', 'qwen3-14b'],
      ['qwen3', '32B', 'qwen3-32b'],
      ['deepseek_v3', '16B', 'deepseek-v2-lite'],
      ['deepseek_v3', '236B', 'deepseek-v2'],
      ['llama3', '8B_flex', 'llama-3.1-8b'],
    ];
    for (const [name, flavor, preset] of cases)
      expect(at(ok('torchtitan', toml(name, flavor)).config, 'model.preset')).toBe(preset);
  });

  it('llama4 17bx16e: the Scout preset, text decoder only, full attention', () => {
    const c = ok('torchtitan', toml('llama4', '17bx16e')).config;
    expect(at(c, 'model.preset')).toBe('llama-4-scout-17b-16e');
    expect(at(c, 'model.vision')).toBe(null);
    expect(at(c, 'model.layer_types')).toBe(null);
    const irope = ok('torchtitan', toml('llama4', '17bx16e_irope')).config;
    expect(at(irope, 'model.layer_types')).toEqual(['chunked', 'chunked', 'chunked', 'full']);
    expect(at(irope, 'model.attention_chunk')).toBe(8192);
  });

  it('an unknown flavor or model, or none, is an error naming the key and the known flavors', () => {
    const e = error('torchtitan', toml('llama4', '17bx128e'));
    expect(e.path).toBe('[model] flavor');
    expect(e.message).toContain('17bx16e');
    const m = error('torchtitan', toml('flux', 'flux-dev'));
    expect(m.path).toBe('[model] name');
    expect(m.message).toContain('qwen3');
    expect(error('torchtitan', '[training]\nseq_len = 2048\n').path).toBe('[model] flavor');
  });

  it('float8 under its 2025-09 name and section ([model] converters quantize.linear.float8, [quantize.linear.float8])', () => {
    const c = ok(
      'torchtitan',
      toml('llama3', '8B').replace('[model]\n', '[model]\nconverters = ["quantize.linear.float8"]\n') +
        '[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\nfilter_fqns = ["output"]\n' +
        '[quantize.grouped_mm.float8]\nfqns = ["experts"]\n',
    ).config;
    expect(at(c, 'training.fp8_linear')).toBe(true);
    expect(at(c, 'parallel.fp8_all_gather')).toBe(true);
    const mx = ok(
      'torchtitan',
      toml('llama3', '8B').replace('[model]\n', '[model]\nconverters = ["quantize.linear.mx"]\n'),
    );
    expect(at(mx.config, 'training.fp8_linear')).toBe(undefined);
    expect(mx.unsupported.join('\n')).toContain('quantize.linear.mx is not modelled');
  });

  it("a config registry (torchtitan's Python configs since 9810191b) is named, not parsed as TOML", () => {
    const registry =
      'from torchtitan.config import JobConfig\n\n\ndef llama3_8b() -> JobConfig:\n    return JobConfig(model=...)\n';
    expect(error('torchtitan', registry).message).toMatch(/config registry \(Python\).*9810191b/);
    expect(unreadFormat('config_registry.py', registry)).toMatch(/torchtitan config registry/);
  });

  it('[compile] components: the model is compiled only when listed; the loss alone compiles the loss', () => {
    const compiled = (components: string) =>
      ok('torchtitan', `${toml('llama3', '8B')}[compile]\nenable = true\ncomponents = ${components}\n`).config;
    expect(at(compiled('["loss"]'), 'runtime.torch_compile')).toBe(undefined);
    expect(at(compiled('["loss"]'), 'training.loss')).toBe('compiled');
    expect(at(compiled('["model", "loss"]'), 'runtime.torch_compile')).toBe(true);
    expect(at(compiled('["model"]'), 'training.loss')).toBe(undefined);
  });
});

describe('verl Megatron workers', () => {
  const megatron = (extra: string) =>
    `python3 -m verl.trainer.main_ppo --config-path=./config --config-name='ppo_megatron_trainer' \\
    algorithm.adv_estimator=grpo actor_rollout_ref.model.path=Qwen/Qwen3-30B-A3B-Base \\
    actor_rollout_ref.rollout.name=vllm actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\
    actor_rollout_ref.actor.megatron.param_offload=True actor_rollout_ref.actor.megatron.grad_offload=True \\
    actor_rollout_ref.actor.megatron.optimizer_offload=True \\
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2 \\
    actor_rollout_ref.actor.megatron.expert_model_parallel_size=4 \\
    actor_rollout_ref.ref.megatron.param_offload=True ${extra}\n`;

  it('--config-name ppo_megatron_trainer: engine megatron, the layout, offloads, distributed optimizer', () => {
    const r = ok('verl', megatron(''));
    const c = r.config;
    expect(at(c, 'parallel.engine')).toBe('megatron');
    expect(at(c, 'parallel.tp')).toBe(2);
    expect(at(c, 'parallel.pp')).toBe(2);
    expect(at(c, 'parallel.ep')).toBe(4);
    expect(at(c, 'parallel.etp')).toBe(2); // null: Megatron takes the TP size
    expect(at(c, 'parallel.sequence_parallel')).toBe(true);
    expect(at(c, 'parallel.distributed_optimizer')).toBe(true);
    expect(at(c, 'rl.actor.param_offload')).toBe(true);
    expect(at(c, 'rl.actor.optimizer_offload')).toBe(true);
    expect(at(c, 'rl.reference.param_offload')).toBe(true);
    expect(at(c, 'training.recompute')).toBe('none');
    expect(r.unsupported.filter((u) => u.includes('.megatron.'))).toEqual([]);
  });

  it('a dense model under TP: no expert tensor parallelism (verl examples/tuning/32b qwen2_32B_grpo_8_h20_megatron_vllm.sh)', () => {
    const dense = megatron('')
      .replace('Qwen/Qwen3-30B-A3B-Base', 'Qwen/Qwen2.5-32B')
      .replace('actor_rollout_ref.actor.megatron.expert_model_parallel_size=4 \\\n', '');
    const c = ok('verl', dense).config;
    expect(at(c, 'model.preset')).toBe('qwen2.5-32b');
    expect(at(c, 'parallel.tp')).toBe(2);
    expect(at(c, 'parallel.etp')).toBeUndefined();
  });

  it('Megatron LoRA (model.lora.*; examples/grpo_trainer/run_qwen3moe-30b_megatron_lora.sh) and its module names', () => {
    const c = ok(
      'verl',
      megatron(
        'actor_rollout_ref.model.lora.rank=32 actor_rollout_ref.model.lora.target_modules=[linear_qkv,linear_proj]',
      ),
    ).config;
    expect(at(c, 'training.finetune.method')).toBe('lora');
    expect(at(c, 'training.finetune.lora_rank')).toBe(32);
    expect(at(c, 'training.finetune.lora_targets')).toEqual(['q', 'k', 'v', 'o']);
    const all = ok('verl', megatron('actor_rollout_ref.model.lora.rank=16')).config;
    expect(at(all, 'training.finetune.lora_targets')).toEqual(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
    expect(at(ok('verl', megatron('')).config, 'training.finetune.method')).toBe('full');
  });

  it('token budgets are per GPU of a sequence-parallel group: x its size (examples/gspo_trainer/run_qwen3_32b_gspo_npu.sh)', () => {
    const sp = (n: number) =>
      `python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.model.path=Qwen/Qwen3-32B actor_rollout_ref.rollout.name=vllm data.max_prompt_length=16384 data.max_response_length=16384 actor_rollout_ref.actor.use_dynamic_bsz=True actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${32768 / n} actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=True actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=${32768 / n} actor_rollout_ref.actor.ulysses_sequence_parallel_size=${n} actor_rollout_ref.actor.strategy=fsdp2 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1\n`;
    const c = ok('verl', sp(4)).config;
    expect(at(c, 'parallel.cp')).toBe(4);
    expect(at(c, 'rl.max_tokens_per_gpu')).toBe(32768); // 8192 x 4: one whole 16384 + 16384 sequence
    expect(at(c, 'rl.logprob_max_tokens_per_gpu')).toBe(32768);
    expect(at(ok('verl', sp(1)).config, 'rl.max_tokens_per_gpu')).toBe(32768);
  });

  it('actor.freeze_vision_tower freezes the whole visual module of a VL model (fsdp_workers.py)', () => {
    const vl = (flag: string) =>
      `python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.model.path=Qwen/Qwen2.5-VL-7B-Instruct actor_rollout_ref.rollout.name=vllm actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 ${flag}\n`;
    expect(at(ok('verl', vl('actor_rollout_ref.actor.freeze_vision_tower=True')).config, 'model.vision.train')).toBe(
      'none',
    );
    expect(at(ok('verl', vl('')).config, 'model.vision.train')).toBeUndefined();
  });

  it("a config of the script's own folder (examples/sglang_multiturn: gsm8k_multiturn_grpo) is read as the trainer config it builds on", () => {
    const run = (name: string) =>
      `python3 -m verl.trainer.main_ppo --config-path=./config --config-name='${name}' algorithm.adv_estimator=grpo actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct actor_rollout_ref.rollout.name=sglang actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2\n`;
    const r = ok('verl', run('gsm8k_multiturn_grpo'));
    expect(at(r.config, 'parallel.engine')).not.toBe('megatron');
    expect(r.unsupported.join('\n')).toMatch(
      /--config-name: "gsm8k_multiturn_grpo" is a config of the script's own folder/,
    );
    expect(at(ok('verl', run('gsm8k_multiturn_megatron_grpo')).config, 'parallel.engine')).toBe('megatron');
  });

  it('Megatron recompute and optimizer CPU offload overrides; unmapped overrides are reported', () => {
    const r = ok(
      'verl',
      megatron(
        '+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full ' +
          '+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=block ' +
          '+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers=3 ' +
          '+actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_cpu_offload=True ' +
          '+actor_rollout_ref.actor.megatron.override_transformer_config.moe_enable_deepep=True',
      ),
    );
    expect(at(r.config, 'training.recompute')).toBe('full');
    expect(at(r.config, 'training.recompute_layers')).toBe(3);
    expect(at(r.config, 'parallel.offload_optimizer')).toBe('cpu');
    expect(
      r.unsupported.some((u) =>
        u.startsWith('actor_rollout_ref.actor.megatron.override_transformer_config.moe_enable_deepep'),
      ),
    ).toBe(true);
  });

  it('a YAML over ppo_megatron_trainer is read as Megatron; a strategy that contradicts the config name is an error', () => {
    const yaml = `defaults:\n  - ppo_megatron_trainer\n  - _self_\nactor_rollout_ref:\n  model:\n    path: Qwen/Qwen3-8B\n  actor:\n    ppo_micro_batch_size_per_gpu: 1\n  rollout:\n    name: sglang\n`;
    expect(at(ok('verl', yaml).config, 'parallel.engine')).toBe('megatron');
    expect(error('verl', megatron('actor_rollout_ref.actor.strategy=fsdp')).path).toBe(
      'actor_rollout_ref.actor.strategy',
    );
  });

  it('a model path under an unset shell variable: read from its name, or an error naming the key', () => {
    const run = (path: string) =>
      `MODEL_PATH=${path}\npython3 -m verl.trainer.main_ppo actor_rollout_ref.model.path="\${MODEL_PATH}" actor_rollout_ref.rollout.name=vllm actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2\n`;
    expect(at(ok('verl', run('$HDFS_ROOT/model/Qwen3-30B-A3B-Base')).config, 'model.preset')).toBe('qwen3-30b-a3b');
    const e = error('verl', run('$HDFS_ROOT/$MODEL_NAME'));
    expect(e.path).toBe('actor_rollout_ref.model.path');
    expect(e.message).toContain('shell variable');
  });
});

describe('axolotl LoRA kernels and model_config', () => {
  const base =
    'base_model: Qwen/Qwen3-8B\nadapter: lora\nlora_r: 16\nlora_target_linear: true\nmicro_batch_size: 1\nsequence_len: 2048\n';

  it('lora_*_kernel: known keys, reported as not modelled (not as unknown)', () => {
    const r = ok('axolotl', `${base}lora_mlp_kernel: true\nlora_qkv_kernel: true\nlora_o_kernel: true\n`);
    for (const k of ['lora_mlp_kernel', 'lora_qkv_kernel', 'lora_o_kernel']) {
      const u = r.unsupported.find((x) => x.startsWith(`${k}:`));
      expect(u).toContain('LoRA autograd kernels');
    }
    expect(r.unsupported.some((u) => u.includes('not a known axolotl key'))).toBe(false);
    expect(ok('axolotl', `${base}lora_mlp_kernel: false\n`).unsupported).toEqual([]);
  });

  it('model_config overrides are reported per key, not as unknown', () => {
    const r = ok('axolotl', `${base}model_config:\n  output_router_logits: true\n`);
    expect(r.unsupported.find((u) => u.startsWith('model_config.output_router_logits:'))).toContain(
      "base model's config.json",
    );
    expect(r.unsupported.some((u) => u.includes('not a known axolotl key'))).toBe(false);
  });
});
