// LitGPT and DeepSpeed importers against their sources: a sweep of every LitGPT config_hub YAML
// (Lightning-AI/litgpt@26857050) and every DeepSpeed JSON of DeepSpeedExamples (@45b4b715),
// checked against deepspeedai/DeepSpeed@edaa7221.
import { describe, expect, it } from 'vitest';
import { imported, importError } from './import-helpers.js';

const ds = (o: object, worldSize?: number) => imported('deepspeed', JSON.stringify(o), { worldSize });
const dsError = (o: object, worldSize?: number) => importError('deepspeed', JSON.stringify(o), { worldSize });

describe('DeepSpeed: torch_autocast (engine.py get_data_types: the module dtype follows fp16 / bf16)', () => {
  const base = { train_micro_batch_size_per_gpu: 4, gradient_accumulation_steps: 1, zero_optimization: { stage: 3 } };
  it('switched off: read and ignored, not reported as not applied (bf16_master_weight/configs/baseline.json)', () => {
    const r = ds({ ...base, bf16: { enabled: true }, torch_autocast: { enabled: false } }, 4);
    expect(r.unsupported.join('\n')).not.toContain('torch_autocast');
    expect(r.flat['training.dtype']).toBe('bf16');
  });
  it('on beside bf16 (in either order): the model stays bf16, nothing else changes (bf16_full.json)', () => {
    for (const order of ['before', 'after']) {
      const autocast = { torch_autocast: { enabled: true, dtype: 'torch.bfloat16' } };
      const bf16 = { bf16: { enabled: true } };
      const r = ds(order === 'before' ? { ...base, ...autocast, ...bf16 } : { ...base, ...bf16, ...autocast }, 4);
      expect(r.unsupported.join('\n')).not.toContain('torch_autocast');
      expect(r.flat['training.dtype']).toBe('bf16');
    }
  });
  it('on alone (fp32 parameters under 16-bit compute): still reported, with what it does', () => {
    const r = ds({ ...base, torch_autocast: { enabled: true } }, 4);
    expect(r.unsupported.join('\n')).toMatch(/torch_autocast: torch autocast over fp32 parameters/);
  });
});

describe('DeepSpeed: optimizers as engine.py _configure_basic_optimizer builds them', () => {
  it('SGD keeps a momentum buffer only with momentum != 0 (torch.optim.SGD default 0)', () => {
    expect(ds({ optimizer: { type: 'SGD', params: { lr: 0.1 } } }).flat['training.optimizer']).toBe('sgd');
    expect(ds({ optimizer: { params: { momentum: 0.9 }, type: 'SGD' } }).flat['training.optimizer']).toBe(
      'sgd_momentum',
    );
  });
  it('MuAdamW, MuAdam and Muon are mapped, not left at the default', () => {
    expect(ds({ optimizer: { type: 'MuAdamW' } }).flat['training.optimizer']).toBe('adamw');
    expect(ds({ optimizer: { type: 'Muon' } }).flat['training.optimizer']).toBe('muon');
  });
  it('AdamW stays AdamW whatever adam_w_mode says (effective_adam_w_mode); Adam with adam_w_mode false is Adam', () => {
    expect(ds({ optimizer: { type: 'AdamW', params: { adam_w_mode: false } } }).flat['training.optimizer']).toBe(
      'adamw',
    );
    expect(ds({ optimizer: { params: { adam_w_mode: false }, type: 'Adam' } }).flat['training.optimizer']).toBe('adam');
  });
  it('1-bit Adam / 0/1 Adam / 1-bit LAMB: their error-feedback buffers are reported as not counted', () => {
    const r = ds({ train_batch_size: 4096, train_micro_batch_size_per_gpu: 16, optimizer: { type: 'OneBitAdam' } }, 8);
    expect(r.flat['training.optimizer']).toBe('adamw');
    expect(r.unsupported.join('\n')).toMatch(/optimizer\.type: OneBitAdam: .*worker_error/);
    expect(ds({ optimizer: { type: 'ZeroOneAdam' } }).unsupported.join('\n')).toContain('momentum_accumulator');
  });
  it('a 1-bit optimizer with ZeRO is refused, as DeepSpeed asserts', () => {
    expect(dsError({ zero_optimization: { stage: 1 }, optimizer: { type: 'OnebitAdam' } }).path).toBe('optimizer.type');
  });
});

describe('DeepSpeed: batch sizes and switched sections', () => {
  it('train_batch_size equal to the micro-batch: one rank, no accumulation (compression/bert ds_config.json)', () => {
    const r = ds({ train_batch_size: 32, train_micro_batch_size_per_gpu: 32, fp16: { enabled: true } });
    expect(r.flat).toMatchObject({ 'parallel.gpus': 1, 'training.grad_accum': 1, 'training.micro_batch': 32 });
    expect(r.unsupported.join('\n')).not.toContain('train_batch_size');
    // a larger train_batch_size still needs the world size
    expect(ds({ train_batch_size: 64, train_micro_batch_size_per_gpu: 32 }).unsupported.join('\n')).toContain(
      'train_batch_size',
    );
    // and the world size given must fit (DeepSpeed asserts grad_acc > 0)
    expect(dsError({ train_batch_size: 32, train_micro_batch_size_per_gpu: 32 }, 8).path).toBe('train_batch_size');
  });
  it('autotuning, compile, progressive_layer_drop, quantize_training are DeepSpeed keys, not unknown ones', () => {
    const on = ds({
      autotuning: { enabled: true },
      compile: { deepcompile: true },
      progressive_layer_drop: { enabled: true, theta: 0.5 },
      quantize_training: { enabled: true },
    }).unsupported.join('\n');
    expect(on).not.toContain('not a known DeepSpeed key');
    expect(on).toContain('autotuning: the autotuner');
    expect(on).toContain('compile: DeepCompile');
    expect(on).toContain('progressive_layer_drop: progressive layer drop');
    expect(on).not.toContain('quantize_training'); // MoQ writes the quantized values back into the same parameters
    const off = ds({ autotuning: { enabled: false }, compile: { deepcompile: false } }).unsupported;
    expect(off).toEqual([]);
  });
  it('zero_optimization.zenflow: reported with what ZenFlow keeps on the GPU', () => {
    const r = ds({
      zero_optimization: { stage: 2, offload_optimizer: { device: 'cpu' }, zenflow: { topk_ratio: 0.1 } },
    });
    expect(r.unsupported.join('\n')).toContain('zero_optimization.zenflow: ZenFlow keeps');
  });
});

describe('LitGPT pretrain: model_config is the whole model (pretrain.py: Config.from_name only without it)', () => {
  const pretrain = (cfg: string) =>
    `model_name: tiny-llama-1.1b\nmodel_config:\n${cfg}devices: 1\ntrain:\n  micro_batch_size: 2\n  global_batch_size: 2\n`;
  it('a catalog model_name beside model_config: no preset, Config defaults for what model_config leaves out', () => {
    const r = imported('litgpt', pretrain('  n_layer: 2\n  n_embd: 256\n  n_head: 4\n'));
    expect(r.flat['model.preset']).toBeUndefined();
    expect(r.flat).toMatchObject({
      'model.layers': 2,
      'model.hidden': 256,
      'model.heads': 4,
      'model.kv_heads': 4,
      'model.ffn_hidden': 1024,
      'model.vocab': 50688, // find_multiple(50254, 512)
      'model.max_positions': 4096,
      'model.mlp': 'plain',
      'training.seq_len': 4096,
    });
  });
  it('vocab_size is padded to padding_multiple; n_layer / n_embd / n_head default as Config does', () => {
    const r = imported('litgpt', pretrain('  vocab_size: 32000\n  padding_multiple: 64\n  block_size: 512\n'));
    expect(r.flat).toMatchObject({ 'model.vocab': 32000, 'model.layers': 16, 'model.hidden': 4096, 'model.heads': 32 });
    expect(imported('litgpt', pretrain('  vocab_size: 32001\n  n_layer: 2\n')).flat['model.vocab']).toBe(32256);
  });
  it('LLaMAMLP without intermediate_size is refused, as Config.__post_init__ raises', () => {
    expect(importError('litgpt', pretrain('  n_layer: 2\n  mlp_class_name: LLaMAMLP\n')).path).toBe(
      'model_config.intermediate_size',
    );
  });
});
