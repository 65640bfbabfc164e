// LLaMA-Factory importer: pure_bf16, GaLore and other real hparams, Megatron recipes, pairwise stages and
// pre-quantized checkpoints (hiyouga/LLaMA-Factory@ff6d4d12 examples and src/llamafactory).
import { describe, expect, it } from 'vitest';
import { type Imported, importConfig } from '../../frontend/config/importers/index.js';

function ok(text: string): Imported {
  const r = importConfig('llamafactory', text);
  if ('error' in r) throw new Error(r.error.message);
  return r;
}
const model = 'model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n';
const base = `${model}stage: sft\n`;

describe('LLaMA-Factory importer', () => {
  it('pure_bf16: bf16 weights, gradients and Adam states, no master copy', () => {
    const r = ok(`${base}finetuning_type: full\npure_bf16: true\n`);
    expect(r.config.training).toMatchObject({
      dtype: 'bf16',
      master_weights: false,
      grad_dtype: 'bf16',
      optimizer_dtype: 'bf16',
    });
    expect((r.config.training as { finetune: object }).finetune).toEqual({ method: 'full' });
    expect(ok(`${base}finetuning_type: lora\npure_bf16: true\n`).config.training).toMatchObject({
      finetune: { adapter_dtype: 'bf16' },
    });
  });

  it('GaLore and other real hparams are known keys, reported as not modelled', () => {
    const r = ok(
      `${base}finetuning_type: full\nuse_galore: true\ngalore_layerwise: true\ngalore_target: all\ngalore_rank: 128\ngalore_scale: 2.0\nuse_adam_mini: true\nswanlab_project: x\nkto_chosen_weight: 1.0\n`,
    );
    expect(r.unsupported.filter((l) => l.includes('not a known'))).toEqual([]);
    expect(r.unsupported.find((l) => l.startsWith('use_galore:'))).toMatch(/low-rank/);
    for (const k of ['galore_rank', 'galore_target', 'galore_layerwise', 'galore_scale', 'use_adam_mini'])
      expect(r.unsupported.some((l) => l.startsWith(`${k}:`))).toBe(true);
    const off = ok(`${base}use_galore: false\ngalore_rank: 16\n`);
    expect(off.unsupported).toEqual([]);
  });

  it('examples/megatron recipes are Megatron runs, never DDP', () => {
    const r = ok(
      'model_name_or_path: Qwen/Qwen3-30B-A3B-Instruct-2507\nstage: sft\nfinetuning_type: full\ncutoff_len: 4096\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\nbf16: true\ntensor_model_parallel_size: 1\nsequence_parallel: false\npipeline_model_parallel_size: 4\nbias_activation_fusion: true\napply_rope_fusion: true\nuse_distributed_optimizer: true\noverlap_param_gather: true\noverlap_grad_reduce: true\nmoe_grouped_gemm: true\nmoe_token_dispatcher_type: alltoall\nexpert_model_parallel_size: 2\nrecompute_granularity: full\n',
    );
    expect(r.config.parallel).toEqual({
      engine: 'megatron',
      tp: 1,
      pp: 4,
      ep: 2,
      sequence_parallel: false,
      distributed_optimizer: true,
    });
    expect(r.config.training).toMatchObject({ recompute: 'full', micro_batch: 1, grad_accum: 8, grad_dtype: 'fp32' });
    expect(r.unsupported).toEqual([]);
    // no recompute_granularity: Megatron recomputes nothing (HF gradient checkpointing is not used)
    const none = ok(`${base}finetuning_type: full\ntensor_model_parallel_size: 2\n`);
    expect(none.config.training).toMatchObject({ recompute: 'none' });
    expect(none.config.parallel).toMatchObject({ engine: 'megatron', tp: 2, distributed_optimizer: false });
    const bad = importConfig('llamafactory', `${base}pipeline_model_parallel_size: 2\nrecompute_granularity: block\n`);
    expect('error' in bad && bad.error.message).toContain('recompute_granularity');
  });

  it('dpo and rm: chosen and rejected double the micro-batch; the reference forward is reported', () => {
    const dpo = ok(`${model}stage: dpo\nfinetuning_type: lora\nper_device_train_batch_size: 2\n`);
    expect(dpo.config.training).toMatchObject({ micro_batch: 4 });
    expect(dpo.unsupported.join('\n')).toContain('adapters disabled');
    const batchFirst = ok(`model_name_or_path: Qwen/Qwen3-4B\nper_device_train_batch_size: 3\nstage: rm\n`);
    expect(batchFirst.config.training).toMatchObject({ micro_batch: 6 });
    const orpo = ok(`${model}stage: dpo\npref_loss: orpo\n`);
    expect(orpo.config.training).toMatchObject({ micro_batch: 2 });
    expect(orpo.unsupported).toEqual([]);
    expect(ok(`${model}stage: kto\nper_device_train_batch_size: 2\n`).config.training).toMatchObject({
      micro_batch: 2,
    });
  });

  it('pre-quantized checkpoints are never silently bf16', () => {
    const awq = ok('model_name_or_path: TechxGenus/Meta-Llama-3-8B-Instruct-AWQ\nfinetuning_type: lora\n');
    expect(awq.config.model).toEqual({ preset: 'llama-3-8b' });
    expect(awq.unsupported.find((l) => l.startsWith('model_name_or_path:'))).toMatch(/-awq.*pre-quantized/);
    const bnb = ok('model_name_or_path: unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit\nfinetuning_type: lora\n');
    expect(bnb.config.training).toMatchObject({ finetune: { method: 'qlora', quant: 'nf4', double_quant: true } });
    expect(bnb.unsupported).toEqual([]);
    const full = importConfig('llamafactory', 'model_name_or_path: Qwen/Qwen3-14B-AWQ\nfinetuning_type: full\n');
    expect('error' in full && full.error.message).toContain('lora or oft');
    // other importers are told too (common applyModelId)
    const ax = importConfig('axolotl', 'base_model: Qwen/Qwen3-14B-GPTQ-Int4\nsequence_len: 4096\n');
    expect('error' in ax ? [] : ax.unsupported.join('\n')).toContain('pre-quantized');
  });
});
