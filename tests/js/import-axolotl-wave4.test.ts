// axolotl importer, wave 4: every example YAML of axolotl-ai-cloud/axolotl@067b021c imported. Each case fails
// without its fix: a regex lora_target_modules (PEFT fullmatches a str against module names) was refused; a
// quantized base of a MoE model counted its experts quantized although transformers v5 leaves them in bf16 unless
// quantize_moe_experts; axolotl's own keys were reported as "not a known axolotl key".
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';
import { importConfig, type Imported } from '../../frontend/config/importers/index.js';
import { flatten } from './import-helpers.js';
import type { Json } from '../../wasm/llmem.js';

const real = (file: string) => readFileSync(join(repoRoot(), 'tests/fixtures/real/axolotl', file), 'utf8');
const ok = (text: string, worldSize = 8): Imported & { flat: Record<string, Json> } => {
  const r = importConfig('axolotl', text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return { ...r, flat: flatten(r.config as Json) };
};
const lines = (r: Imported) => r.unsupported.join('\n');

const LORA = `adapter: lora
sequence_len: 2048
micro_batch_size: 1
bf16: true
`;

describe('lora_target_modules as a regex (examples/*-vl/*.yaml)', () => {
  it('imports the VL examples, whose one-string regex names the language model linears', () => {
    const r = ok(real('qwen2.5-vl-7b-lora-regex-targets.yaml'));
    expect(r.flat['training.finetune.lora_targets']).toEqual(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
    expect(r.flat['model.preset']).toBe('qwen2.5-vl-7b');
    expect(r.notes.join('\n')).toContain('lora_target_modules is a regex');
  });

  it('reads which linears an alternation picks, with the checkpoint wrapper FSDP inserts', () => {
    const r = ok(
      `base_model: Qwen/Qwen3-8B\n${LORA}lora_target_modules: 'model.layers.[\\d]+.(_checkpoint_wrapped_module.)?(self_attn).(q|v)_proj'\n`,
    );
    expect(r.flat['training.finetune.lora_targets']).toEqual(['q', 'v']);
  });

  it('says when the regex adapts only some layers (examples/ebft/qwen35-*-structured.yaml)', () => {
    const r = ok(
      `base_model: Qwen/Qwen3-8B\n${LORA}lora_target_modules: ".*\\\\.layers\\\\.(3|7)\\\\.self_attn\\\\.(q|k|v|o)_proj|.*\\\\.mlp\\\\.(gate|up|down)_proj"\n`,
    );
    expect(r.flat['training.finetune.lora_targets']).toEqual(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
    expect(r.notes.join('\n')).toContain('self_attn.q_proj matched in layers 3, 7 only');
  });

  it('refuses a regex that matches no decoder linear, naming it', () => {
    const r = importConfig(
      'axolotl',
      `base_model: Qwen/Qwen3-8B\n${LORA}lora_target_modules: 'model.visual.blocks.[\\d]+.attn.qkv'\n`,
      {
        worldSize: 8,
      },
    );
    expect('error' in r && r.error.message).toContain('matches no decoder layer');
  });
});

describe('MoE experts under load_in_4bit (docs/expert_quantization.qmd)', () => {
  it('keeps the experts in bf16 when quantize_moe_experts is absent', () => {
    const r = ok(real('mixtral-qlora-fsdp-bf16-experts.yml'));
    expect(r.flat['training.finetune.method']).toBe('qlora');
    expect(r.flat['training.finetune.quant_experts']).toBe(false);
    expect(r.notes.join('\n')).toMatch(/no quantize_moe_experts: .*stay in bf16/);
  });

  it('counts them quantized with quantize_moe_experts', () => {
    const r = ok(real('glm-4.5-air-qlora-quantize-moe-experts.yaml'));
    expect(r.flat['training.finetune.quant_experts']).toBe(true);
    expect(lines(r)).not.toContain('quantize_moe_experts');
    expect(r.notes.join('\n')).toContain('quantize_moe_experts: the expert weights are quantized on load');
  });

  it('sets nothing for a dense model', () => {
    const r = ok(`base_model: meta-llama/Llama-3.1-8B\nadapter: qlora\nload_in_4bit: true\nlora_target_linear: true\n`);
    expect(lines(r)).not.toContain('quantize_moe_experts');
    expect(r.flat['training.finetune.quant_experts']).toBeUndefined();
  });

  it('reports LoRA on the experts (lora_target_parameters) as not counted', () => {
    const r = ok(
      `base_model: Qwen/Qwen3-30B-A3B\nadapter: qlora\nload_in_4bit: true\nquantize_moe_experts: true\nlora_target_modules: [q_proj, v_proj]\nlora_target_parameters: [mlp.experts.gate_up_proj]\n`,
    );
    expect(lines(r)).toContain("lora_target_parameters: mlp.experts.gate_up_proj: LoRA on the experts' 3D parameters");
  });
});

describe("axolotl's own keys, read against its schema", () => {
  it('names what gptq, qat, lisa, relora, use_eaft and the KernelsPlugin change', () => {
    const r = ok(
      `base_model: meta-llama/Llama-3.1-8B\n${LORA}lora_target_linear: true\ngptq: true\nqat:\n  weight_dtype: int4\nlisa_n_layers: 4\nlisa_step_interval: 20\nrelora: true\nrelora_cpu_offload: true\nuse_eaft: true\neaft_alpha: 1.0\nplugins:\n  - axolotl.integrations.kernels.KernelsPlugin\nuse_scattermoe: true\n`,
    );
    const u = lines(r);
    expect(u).not.toContain('not a known axolotl key');
    for (const k of [
      'gptq: a GPTQ',
      'qat: quantization-aware',
      'lisa_n_layers: LISA',
      'relora: ReLoRA',
      'use_eaft: EAFT',
    ])
      expect(u).toContain(k);
    expect(u).toContain("use_scattermoe: the KernelsPlugin's MoE expert kernel");
    expect(u).not.toContain('KernelsPlugin: not a plugin');
  });

  it('reads keys with no effect on memory without a not-applied line', () => {
    const r = ok(
      `base_model: meta-llama/Llama-3.1-8B\n${LORA}processor_type: AutoProcessor\ntokenizer_use_mistral_common: true\nuse_tensorboard: true\nresize_token_embeddings_to_32x: true\npeft:\n  loftq_config:\n    loftq_bits: 4\nswanlab_project: x\nsample_packing_sequentially: true\n`,
    );
    expect(r.unsupported).toEqual([]);
  });
});
