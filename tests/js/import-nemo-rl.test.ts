// NeMo-RL configs (NVIDIA-NeMo/RL @7ea279ab): the cases the verbatim example files (tests/fixtures/real/nemo_rl/) do not
// reach: inheritance without its base, interpolations, generation on GPUs of its own, Megatron fp8, other programs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';
import { detectKind } from '../../frontend/config/importers/index.js';
import { importError, imported } from './import-helpers.js';

const dir = join(repoRoot(), 'tests/fixtures/real/nemo_rl');
const read = (f: string) => readFileSync(join(dir, f), 'utf8');
const BASE = read('grpo_math_1B.yaml');
const ok = (text: string, also?: string, worldSize?: number) => imported('nemo_rl', text, { also, worldSize });
const fail = (text: string, also?: string) => importError('nemo_rl', text, { also });
// a recipe inheriting the GRPO example, as examples/configs/recipes/llm/*.yaml do
const recipe = (body: string) => `defaults: grpo_math_1B.yaml\n${body}`;

describe('NeMo-RL configs', () => {
  it('are told by policy: beside cluster:, or a recipe inheriting one', () => {
    expect(detectKind('grpo_math_1B.yaml', BASE)).toBe('nemo_rl');
    expect(detectKind('r.yaml', recipe('grpo:\n  num_prompts_per_step: 64\npolicy:\n  model_name: x\n'))).toBe(
      'nemo_rl',
    );
    // a recipe that only overrides its base's cluster or checkpointing (recipes/llm/grpo-deepscaler-1.5b-1n4g-8K.yaml)
    const overrides =
      'defaults: ./grpo-deepscaler-1.5b-8K.yaml\ncheckpointing:\n  checkpoint_dir: x\ncluster:\n  gpus_per_node: 4\n';
    expect(detectKind('r.yaml', overrides)).toBe('nemo_rl');
    // Hydra's defaults list (verl) is not a NeMo-RL base
    expect(detectKind('r.yaml', 'defaults:\n  - ppo_trainer\n  - _self_\nlogger:\n  x: 1\n')).not.toBe('nemo_rl');
  });
  it('a recipe without its base is refused naming defaults and the file; with it, its keys over the base', () => {
    const r = recipe('grpo:\n  num_prompts_per_step: 64\npolicy:\n  train_global_batch_size: 1024\n');
    expect(fail(r).message).toMatch(/defaults: the config inherits grpo_math_1B\.yaml; give that file too/);
    const flat = ok(r, BASE).flat;
    expect(flat['rl.rollout_batch']).toBe(64);
    expect(flat['rl.mini_batch']).toBe(64); // 1024 samples an optimizer step / 16 generations a prompt
    expect(flat['model.preset']).toBe('qwen2.5-1.5b'); // the base's
  });
  it('a chain of bases: each file given in order, the nearest keys winning; a missing link named', () => {
    const mid = recipe('grpo:\n  num_prompts_per_step: 64\npolicy:\n  train_global_batch_size: 2048\n');
    const top = 'defaults: mid.yaml\ngrpo:\n  num_prompts_per_step: 128\n';
    const r = imported('nemo_rl', top, { also: mid, bases: [BASE] }).flat;
    expect(r['rl.rollout_batch']).toBe(128); // the recipe's
    expect(r['rl.mini_batch']).toBe(128); // the middle file's 2048 samples / 16
    expect(importError('nemo_rl', top, { also: mid }).message).toMatch(
      /the base given inherits grpo_math_1B\.yaml in turn/,
    );
    expect(importError('nemo_rl', BASE.replace(/^/, ''), { also: BASE }).message).toContain('names no base');
  });
  it('interpolations (a value elsewhere, the mul resolver) resolve after the merge', () => {
    const r = recipe('policy:\n  max_total_sequence_length: 4096\n  train_micro_batch_size: 2\n');
    const flat = ok(r, BASE).flat;
    expect(flat['rl.rollout.max_model_len']).toBe(4096); // vllm_cfg.max_model_len: ${policy.max_total_sequence_length}
    expect(flat['rl.max_tokens_per_gpu']).toBe(8192); // train_mb_tokens: ${mul:${policy.max_total_sequence_length}, ${policy.train_micro_batch_size}}
  });
  it('generation on GPUs of its own: the training GPUs are the rest, nothing offloaded between phases', () => {
    const r = recipe(
      'cluster:\n  gpus_per_node: 8\npolicy:\n  generation:\n    colocated:\n      enabled: false\n      resources:\n        gpus_per_node: 2\n',
    );
    const flat = ok(r, BASE).flat;
    expect(flat['parallel.gpus']).toBe(6);
    expect(flat['rl.rollout.placement']).toBe('separate');
    expect(flat['rl.actor.param_offload']).toBeUndefined();
    expect(flat['rl.rollout.sleep']).toBeUndefined();
  });
  it('Megatron with fp8 enabled: fp8 linears; a batch that is not whole groups is refused', () => {
    const fp8 = recipe(
      'policy:\n  dtensor_cfg:\n    enabled: false\n  megatron_cfg:\n    enabled: true\n    fp8_cfg:\n      enabled: true\n',
    );
    const flat = ok(fp8, BASE).flat;
    expect(flat['parallel.engine']).toBe('megatron');
    expect(flat['training.fp8_linear']).toBe(true);
    const odd = recipe('policy:\n  train_global_batch_size: 100\n');
    expect(fail(odd, BASE).message).toMatch(/train_global_batch_size: 100 is not a whole number of groups of 16/);
  });
  it('DTensor TP keeps the logits vocabulary-sharded; LoRA trains over an fp32 base; the reference is swapped in', () => {
    const tp = ok(
      recipe('policy:\n  dtensor_cfg:\n    tensor_parallel_size: 2\ncluster:\n  gpus_per_node: 2\n'),
      BASE,
    ).flat;
    expect(tp['training.loss']).toBe('loss_parallel');
    expect(tp['rl.reference.swapped']).toBe(true);
    const lora = ok(
      recipe('policy:\n  dtensor_cfg:\n    lora_cfg:\n      enabled: true\n      dim: 16\n      dropout: 0.05\n'),
      BASE,
    ).flat;
    expect(lora['training.finetune.method']).toBe('lora');
    expect(lora['training.finetune.base_dtype']).toBe('fp32');
    expect(lora['training.finetune.lora_rank']).toBe(16);
    expect(lora['training.finetune.lora_dropout']).toBe(0.05);
  });
  it('Megatron pipeline stages under GRPO are refused naming the key (the RL phases have none)', () => {
    const pp = recipe(
      'policy:\n  dtensor_cfg:\n    enabled: false\n  megatron_cfg:\n    enabled: true\n    pipeline_model_parallel_size: 2\ncluster:\n  gpus_per_node: 2\n',
    );
    expect(fail(pp, BASE).message).toMatch(/pipeline_model_parallel_size: 2: llmem's RL phases/);
  });
  it("other programs' sections and other generation backends are refused naming the key", () => {
    expect(
      fail('distillation:\n  num_prompts_per_step: 8\npolicy:\n  model_name: x\ncluster:\n  gpus_per_node: 1\n').path,
    ).toBe('distillation');
    const megatronGen = recipe('policy:\n  generation:\n    backend: megatron\n');
    expect(fail(megatronGen, BASE).message).toContain('policy.generation.backend: megatron (llmem models vllm)');
  });
  it('precisions: a torch dtype name each, else refused naming the key and the names', () => {
    expect(ok(recipe('policy:\n  precision: float16\n'), BASE).flat['rl.rollout.dtype']).toBe('fp16'); // vllm_cfg.precision: ${policy.precision}
    const bad = fail(recipe('policy:\n  generation:\n    vllm_cfg:\n      precision: int4\n'), BASE);
    expect(bad.path).toBe('policy.generation.vllm_cfg.precision');
    expect(bad.message).toContain('allowed: bfloat16 | float16 | float32');
    expect(fail(recipe('policy:\n  precision: fp64\n'), BASE).path).toBe('policy.precision');
  });
});
