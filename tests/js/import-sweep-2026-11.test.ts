// What a sweep over the frameworks' official example files found (2026-11-28): each case its file's own keys, cut
// down; the verbatim files are fixtures in tests/fixtures/real/ where they are short enough to keep.
import { describe, expect, it } from 'vitest';
import { patternFromRatios } from '../../frontend/config/importers/megatron.js';
import { importError, imported } from './import-helpers.js';

const swift = (flags: string) =>
  imported('swift', `NPROC_PER_NODE=2 \\\nswift sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    ${flags}\n`);

describe("ms-swift: Liger's fused cross-entropy where ms-swift computes the loss itself", () => {
  // swift/trainers/seq2seq_trainer.py compute_loss @3602360a pops the labels, so the model's Liger loss never runs
  it.each([
    ['--loss_scale hermes', 'loss_scale hermes'],
    ['--loss_scale last_round+react', 'loss_scale last_round+react'],
    ['--enable_dft_loss true', 'enable_dft_loss'],
    ['--label_smoothing_factor 0.1', 'label_smoothing_factor 0.1'],
  ])('%s: the loss is not counted as fused', (flags, why) => {
    const r = swift(`--use_liger_kernel true ${flags}`);
    expect(r.flat['training.loss']).toBeUndefined();
    expect(r.unsupported.join('\n')).toContain(`--use_liger_kernel: --${why}`);
  });
  it('a base strategy alone (0 / 1 weights) keeps Liger; --is_binary_loss_scale true too', () => {
    expect(swift('--use_liger_kernel true --loss_scale last_round').flat['training.loss']).toBe('fused');
    expect(swift('--use_liger_kernel true --loss_scale react --is_binary_loss_scale true').flat['training.loss']).toBe(
      'fused',
    );
  });
  it("sequence parallelism keeps ms-swift's own loss over the 16-bit logits", () => {
    expect(swift('--use_liger_kernel true --sequence_parallel_size 2').flat['training.loss']).toBe('bf16_ce');
  });
});

describe('LLaMA-Factory', () => {
  const yaml = `# accelerate launch --config_file examples/accelerate/fsdp_config.yaml src/train.py this.yaml
model_name_or_path: Qwen/Qwen3-8B
stage: sft
finetuning_type: full
per_device_train_batch_size: 1
bf16: true
`;
  const accelerate =
    'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_version: 1\nmixed_precision: bf16\nnum_processes: 2\n';
  it("the header's accelerate launch is reported only when its config is not given", () => {
    expect(imported('llamafactory', yaml, { worldSize: 2 }).unsupported.join('\n')).toContain('accelerate launch');
    const r = imported('llamafactory', yaml, { also: accelerate });
    expect(r.flat['parallel.engine']).toBe('fsdp1');
    expect(r.unsupported.join('\n')).not.toContain('accelerate launch');
  });
});

describe('axolotl', () => {
  const base = 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: true\n';
  it('sequence_len absent: the schema default, 512', () => {
    const r = imported('axolotl', base);
    expect(r.flat['training.seq_len']).toBe(512);
    expect(r.notes.join('\n')).toContain('sequence_len absent: 512 (axolotl schema default)');
  });
  it('a world size the dp_shard group does not divide is refused, naming the key', () => {
    const fsdp = `${base}sequence_len: 2048\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\ndp_shard_size: 16\n`;
    expect(importError('axolotl', fsdp, { worldSize: 8 }).message).toContain(
      'dp_shard_size: tensor x context x dp_shard sizes = 16 processes',
    );
    expect(imported('axolotl', fsdp, { worldSize: 32 }).flat['parallel.gpus']).toBe(32);
  });
});

describe('Megatron: the deprecated hybrid ratios as a layer pattern', () => {
  it("Megatron's own allocation, Python's rounding included", () => {
    // examples/mamba/train.sh @df61e60b, and the pattern its successor @d98e8a6 spells out
    expect(patternFromRatios(48, 0.08, 0.5)).toBe('M-M-M--M-*M-M-M-M--*M-M-M-M-*M--M-M-M-*M-M--M-M-');
    expect(patternFromRatios(4, 0, 0)).toBe('MMMM');
    expect(patternFromRatios(5, 0.5, 0)).toBe('M*M*M'); // round(2.5) = 2 in Python
    expect(patternFromRatios(3, 0.5, 0)).toBe('*M*'); // round(1.5) = 2
    expect(patternFromRatios(10, 0.25, 0.25)).toBe('MMM*-M*MM-'); // round(2.5) = 2 each (the reference in Python)
  });
  it('a sum of ratios above 1 is refused', () => {
    const sh =
      'torchrun pretrain_mamba.py --num-layers 8 --hidden-size 256 --num-attention-heads 4 --hybrid-attention-ratio 0.6 --hybrid-mlp-ratio 0.6 --spec megatron.core.models.mamba.mamba_layer_specs mamba_stack_spec';
    expect(importError('megatron', sh, { worldSize: 1 }).message).toContain('more than every layer');
  });
});
