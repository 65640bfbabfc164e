// Hugging Face config.json of PhiForCausalLM (phi-1, phi-1.5, phi-2): read generically before, as a sequential llama-like
// decoder without biases (phi-2: 2,779,059,200 parameters, two norms a layer); PhiDecoderLayer runs attention and the
// MLP in parallel on one input_layernorm, every linear and lm_head is biased, and qk_layernorm adds a LayerNorm over
// head_dim on q and k (transformers modeling_phi.py and configuration_phi.py at 008e574). The configs below are the
// checkpoints' published config.json fields (microsoft/phi-2, microsoft/phi-1_5); no network here.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig } from '../../frontend/config/importers/hf.js';
import { MODELS } from '../../frontend/config/catalog.js';
import { hfOk, paramsOf } from './hf-fixtures.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const phi2 = {
  architectures: ['PhiForCausalLM'],
  model_type: 'phi',
  hidden_act: 'gelu_new',
  hidden_size: 2560,
  intermediate_size: 10240,
  max_position_embeddings: 2048,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 32,
  partial_rotary_factor: 0.4,
  qk_layernorm: false,
  resid_pdrop: 0.1,
  embd_pdrop: 0.0,
  tie_word_embeddings: false,
  vocab_size: 51200,
};

describe('PhiForCausalLM config.json', () => {
  it('phi-2: the parallel block on one LayerNorm, biased linears and lm_head: the preset, parameter for parameter', () => {
    const r = hfOk(importHfConfig(phi2));
    const m = r.config.model as Config;
    expect(m).toMatchObject({ parallel_block: true, norms_per_layer: 1, bias: true, lm_head_bias: true });
    expect(m.norm).toBe('layernorm');
    expect(m.mlp).toBe('plain');
    expect([r.warnings, r.unknown]).toEqual([[], []]);
    const preset = MODELS.find((e) => e.id === 'phi-2');
    expect(paramsOf(core, m).total).toBe(preset?.params_total);
  });
  it('phi-1.5 from the class defaults (24 layers of 2048, 8192 wide); qk_layernorm adds 2 x 2 x head_dim a layer', () => {
    const phi15 = { architectures: ['PhiForCausalLM'], model_type: 'phi', partial_rotary_factor: 0.5 };
    const m = hfOk(importHfConfig(phi15)).config.model as Config;
    expect(paramsOf(core, m).total).toBe(1418270720);
    const qk = hfOk(importHfConfig({ ...phi15, qk_layernorm: true })).config.model as Config;
    expect(qk.qk_norm).toBe('head');
    expect(paramsOf(core, qk).total - paramsOf(core, m).total).toBe(24 * 2 * 2 * 64);
  });
});
