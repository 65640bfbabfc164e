// Hugging Face config.json of GPT-J, CodeGen, StableLM, Persimmon and Nemotron (frontend/config/importers/hf-parallel.ts).
// Each was read generically before ("no dedicated mapping: read as a llama-like decoder"): a sequential block of two
// norms without biases, and their own keys (rotary_dim, use_qkv_bias, qk_layernorm, use_parallel_residual, kv_channels)
// left in `unknown`. The totals below are the modules' parameters counted by hand from transformers' modeling files
// (modeling_gptj.py 00b676f, modeling_codegen.py 2b6c089, modeling_stablelm.py bf112ca, modeling_persimmon.py 93a5d5f,
// modeling_nemotron.py 694aaa7) and the configuration classes (hf-defaults.ts cites their commits). The configs are the
// checkpoints' published config.json fields (keys that size nothing, like task_specific_params, kept where the file has
// them); no network here.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig } from '../../frontend/config/importers/hf.js';
import { hfOk, hfRefused, paramsOf } from './hf-fixtures.js';

type Obj = Record<string, unknown>;
let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const imp = (json: Obj) => hfOk(importHfConfig(json));
const total = (json: Obj) => paramsOf(core, imp(json).config.model as Config).total;

// EleutherAI/gpt-j-6b
const gptj6b = {
  activation_function: 'gelu_new',
  architectures: ['GPTJForCausalLM'],
  attn_pdrop: 0.0,
  bos_token_id: 50256,
  embd_pdrop: 0.0,
  eos_token_id: 50256,
  gradient_checkpointing: false,
  initializer_range: 0.02,
  layer_norm_epsilon: 1e-5,
  model_type: 'gptj',
  n_embd: 4096,
  n_head: 16,
  n_inner: null,
  n_layer: 28,
  n_positions: 2048,
  resid_pdrop: 0.0,
  rotary: true,
  rotary_dim: 64,
  scale_attn_weights: true,
  summary_activation: null,
  summary_first_dropout: 0.1,
  summary_proj_to_labels: true,
  summary_type: 'cls_index',
  summary_use_proj: true,
  task_specific_params: { 'text-generation': { do_sample: true, max_length: 50, temperature: 1.0 } },
  tie_word_embeddings: false,
  tokenizer_class: 'GPT2Tokenizer',
  transformers_version: '4.18.0.dev0',
  use_cache: true,
  vocab_size: 50400,
};

// Salesforce/codegen-350M-mono
const codegen350m = {
  activation_function: 'gelu_new',
  architectures: ['CodeGenForCausalLM'],
  attn_pdrop: 0.0,
  bos_token_id: 1,
  embd_pdrop: 0.0,
  eos_token_id: 50256,
  gradient_checkpointing: false,
  initializer_range: 0.02,
  layer_norm_epsilon: 1e-5,
  model_type: 'codegen',
  n_ctx: 2048,
  n_embd: 1024,
  n_head: 16,
  n_inner: null,
  n_layer: 20,
  n_positions: 2048,
  resid_pdrop: 0.0,
  rotary_dim: 32,
  scale_attn_weights: true,
  summary_activation: null,
  summary_first_dropout: 0.1,
  summary_proj_to_labels: true,
  summary_type: 'cls_index',
  summary_use_proj: true,
  tie_word_embeddings: false,
  tokenizer_class: 'GPT2Tokenizer',
  torch_dtype: 'float16',
  transformers_version: '4.21.0.dev0',
  use_cache: true,
  vocab_size: 51200,
};

// stabilityai/stablelm-2-1_6b
const stablelm2 = {
  architectures: ['StableLmForCausalLM'],
  attention_dropout: 0.0,
  bos_token_id: 100257,
  eos_token_id: 100257,
  hidden_act: 'silu',
  hidden_dropout: 0.0,
  hidden_size: 2048,
  initializer_range: 0.02,
  intermediate_size: 5632,
  layer_norm_eps: 1e-5,
  max_position_embeddings: 4096,
  model_type: 'stablelm',
  num_attention_heads: 32,
  num_hidden_layers: 24,
  num_key_value_heads: 32,
  partial_rotary_factor: 0.25,
  qk_layernorm: false,
  rope_scaling: null,
  rope_theta: 10000,
  tie_word_embeddings: false,
  torch_dtype: 'float16',
  transformers_version: '4.38.0',
  use_cache: true,
  use_parallel_residual: false,
  use_qkv_bias: true,
  vocab_size: 100352,
};

// stabilityai/stablelm-3b-4e1t
const stablelm3b = {
  architectures: ['StableLmForCausalLM'],
  bos_token_id: 0,
  eos_token_id: 0,
  hidden_act: 'silu',
  hidden_size: 2560,
  initializer_range: 0.02,
  intermediate_size: 6912,
  layer_norm_eps: 1e-5,
  max_position_embeddings: 4096,
  model_type: 'stablelm',
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 32,
  partial_rotary_factor: 0.25,
  rope_scaling: null,
  rope_theta: 10000,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  transformers_version: '4.38.0',
  use_cache: true,
  use_qkv_bias: false,
  vocab_size: 50304,
};

// adept/persimmon-8b-base
const persimmon8b = {
  architectures: ['PersimmonForCausalLM'],
  attention_dropout: 0.0,
  bos_token_id: 71013,
  eos_token_id: 71013,
  hidden_act: 'relu2',
  hidden_dropout: 0.0,
  hidden_size: 4096,
  initializer_range: 0.02,
  intermediate_size: 16384,
  layer_norm_eps: 1e-5,
  max_position_embeddings: 16384,
  model_type: 'persimmon',
  num_attention_heads: 64,
  num_hidden_layers: 36,
  partial_rotary_factor: 0.5,
  qk_layernorm: true,
  rope_scaling: null,
  rope_theta: 25000.0,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  transformers_version: '4.34.0.dev0',
  use_cache: true,
  vocab_size: 262144,
};

// nvidia/Minitron-4B-Base / Nemotron-Mini-4B-Instruct (Nemotron-4 4B), as TensorRT-LLM's test_modeling_nemotron.py
// copies it (with kv_channels, a NeMo export key NemotronConfig does not read)
const nemotron4b = {
  architectures: ['NemotronForCausalLM'],
  bos_token_id: 2,
  eos_token_id: 3,
  hidden_act: 'relu2',
  hidden_size: 3072,
  initializer_range: 0.0134,
  intermediate_size: 9216,
  max_position_embeddings: 4096,
  model_type: 'nemotron',
  num_attention_heads: 24,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  norm_eps: 1e-5,
  rope_theta: 10000,
  partial_rotary_factor: 0.5,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  transformers_version: '4.48.0',
  use_cache: true,
  vocab_size: 256000,
  kv_channels: 128,
};

describe('GPT-J and CodeGen: attention and MLP in parallel on one LayerNorm', () => {
  it('gpt-j-6b: 6,050,882,784 parameters (generic reading: 6,050,488,320, two norms, no fc / lm_head biases)', () => {
    // wte 50400 x 4096 = 206,438,400; per GPTJBlock: ln_1 2 x 4096 = 8,192, q/k/v/out_proj 4 x 4096^2 = 67,108,864
    // (no bias), fc_in 4096 x 16384 + 16384 = 67,125,248, fc_out 16384 x 4096 + 4096 = 67,112,960: 201,355,264 x 28 =
    // 5,637,947,392; ln_f 8,192; lm_head 4096 x 50400 + 50400 = 206,488,800. The model card's n_parameters,
    // 6,053,381,344, is 2,498,560 more than these modules hold.
    const r = imp(gptj6b);
    const m = r.config.model as Config;
    expect(m).toMatchObject({
      layers: 28,
      hidden: 4096,
      heads: 16,
      kv_heads: 16,
      head_dim: 256,
      ffn_hidden: 16384,
      mlp: 'plain',
      norm: 'layernorm',
      parallel_block: true,
      norms_per_layer: 1,
      bias: false,
      mlp_bias: true,
      lm_head_bias: true,
      tied_embeddings: false,
      max_positions: 2048,
    });
    expect(paramsOf(core, m).total).toBe(6050882784);
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/GPT-J has no SDPA attention .* set training\.attention "eager"/);
    expect(r.notes.join('\n')).not.toMatch(/no dedicated mapping/);
    // GPTJConfig's defaults are gpt-j-6b's shape
    expect(total({ model_type: 'gptj' })).toBe(6050882784);
  });
  it('codegen-350M-mono: 356,712,448 parameters (generic reading: 356,599,808)', () => {
    // wte 51200 x 1024 = 52,428,800; per CodeGenBlock: ln_1 2,048, qkv_proj 3 x 1024^2 = 3,145,728 and out_proj
    // 1,048,576 (no bias), fc_in 1024 x 4096 + 4096 = 4,198,400, fc_out 4096 x 1024 + 1024 = 4,195,328: 12,590,080 x 20
    // = 251,801,600; ln_f 2,048; lm_head 1024 x 51200 + 51200 = 52,480,000
    const r = imp(codegen350m);
    const m = r.config.model as Config;
    expect(m).toMatchObject({ parallel_block: true, norms_per_layer: 1, bias: false, mlp_bias: true });
    expect(m).toMatchObject({ lm_head_bias: true, norm: 'layernorm', mlp: 'plain', ffn_hidden: 4096, head_dim: 64 });
    expect(paramsOf(core, m).total).toBe(356712448);
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toEqual([expect.stringMatching(/eager CodeGenAttention \(no SDPA, no flash-attention\)/)]);
  });
  it('n_inner absent is 4 x n_embd, the GPTJBlock rule; given, it is the width', () => {
    const { n_inner: _, ...rest } = gptj6b;
    const r = imp(rest);
    expect((r.config.model as Config).ffn_hidden).toBe(16384);
    expect(r.notes.join('\n')).toMatch(
      /no MLP width \(n_inner\): ffn_hidden = 4 \* hidden = 16384 \(the gptj class rule\)/,
    );
    expect((imp({ ...gptj6b, n_inner: 8192 }).config.model as Config).ffn_hidden).toBe(8192);
  });
});

describe('StableLM: LayerNorm, gated MLP, q/k/v biases, parallel residual and per-head q/k norms', () => {
  it('stablelm-2-1_6b: use_qkv_bias, sequential: 1,644,515,328 parameters (generic reading: 1,644,367,872)', () => {
    // embed_tokens and lm_head 100352 x 2048 = 205,520,896 each; per StableLmDecoderLayer: q/k/v/o 4 x 2048^2 =
    // 16,777,216, q/k/v biases 3 x 2048 = 6,144, gate/up/down 3 x 2048 x 5632 = 34,603,008, input_ and
    // post_attention_layernorm 4 x 2048 = 8,192: 51,394,560 x 24 = 1,233,469,440; norm 4,096. (The model card lists
    // 1,644,417,024, 98,304 = 24 x 2 x 2048 fewer than the modules hold.)
    const r = imp(stablelm2);
    const m = r.config.model as Config;
    expect(m).toMatchObject({ norm: 'layernorm', mlp: 'gated', bias: false, qkv_bias: true });
    expect(m.qk_norm).toBeUndefined();
    expect(m.parallel_block).toBeUndefined();
    expect(m.norms_per_layer).toBeUndefined();
    expect(paramsOf(core, m).total).toBe(1644515328);
    expect([r.warnings, r.unknown]).toEqual([[], []]);
  });
  it('stablelm-3b-4e1t: 2,795,443,200 parameters, the model card figure; its flags take StableLmConfig defaults', () => {
    // 50304 x 2560 = 128,778,240 twice (untied); per layer 4 x 2560^2 = 26,214,400 + 3 x 2560 x 6912 = 53,084,160 +
    // 4 x 2560 = 10,240: 79,308,800 x 32 = 2,537,881,600; norm 5,120
    const r = imp(stablelm3b);
    const m = r.config.model as Config;
    expect(m).toMatchObject({ norm: 'layernorm', mlp: 'gated', bias: false, tied_embeddings: false });
    expect(m.qkv_bias).toBeUndefined();
    expect(paramsOf(core, m).total).toBe(2795443200);
    expect([r.warnings, r.unknown]).toEqual([[], []]);
    expect(r.notes).toContain('use_parallel_residual: not in config.json; stablelm default false');
    expect(total({ model_type: 'stablelm' })).toBe(2795443200);
  });
  it('stablelm-2-12b shape: one LayerNorm for the parallel block, per-head q/k norms counted with a warned bias', () => {
    // embed_tokens and lm_head 100352 x 5120 = 513,802,240 each; per layer q 5120^2 = 26,214,400, k/v 2 x 5120 x 1280
    // = 13,107,200, o 26,214,400, gate/up/down 3 x 5120 x 13824 = 212,336,640, input_layernorm 10,240 (no
    // post_attention_layernorm), q/k StableLmLayerNormPerHead (32 + 8) x 160 = 6,400: 277,889,280 x 40 =
    // 11,115,571,200; norm 10,240: 12,143,185,920. config v1's "full" q/k norm under LayerNorm adds a bias of the same
    // 6,400 a layer: 256,000 more, named in the warning.
    const r = imp({
      ...stablelm2,
      hidden_size: 5120,
      intermediate_size: 13824,
      num_hidden_layers: 40,
      num_key_value_heads: 8,
      qk_layernorm: true,
      use_parallel_residual: true,
      use_qkv_bias: false,
    });
    const m = r.config.model as Config;
    expect(m).toMatchObject({ parallel_block: true, norms_per_layer: 1, qk_norm: 'full', kv_heads: 8, head_dim: 160 });
    expect(m.qkv_bias).toBeUndefined();
    expect(paramsOf(core, m).total).toBe(12143185920 + 256000);
    expect(r.warnings).toEqual([expect.stringMatching(/6400 weights a layer\).*256,000 parameters the checkpoint/)]);
    expect(r.unknown).toEqual([]);
  });
});

describe('Persimmon: squared-ReLU plain MLP, biased linears, q/k LayerNorms', () => {
  it('persimmon-8b-base: 9,397,175,296 parameters (generic reading: 9,395,838,976, no biases nor q/k norms)', () => {
    // embed_tokens and lm_head (no bias) 262144 x 4096 = 1,073,741,824 each; per PersimmonDecoderLayer:
    // query_key_value 4096 x 12288 + 12288 = 50,343,936, dense 4096^2 + 4096 = 16,781,312, q_layernorm and k_layernorm
    // 2 x 2 x 64 = 256, dense_h_to_4h 4096 x 16384 + 16384 = 67,125,248, dense_4h_to_h 16384 x 4096 + 4096 = 67,112,960,
    // two LayerNorms 4 x 4096 = 16,384: 201,380,096 x 36 = 7,249,683,456; final_layernorm 8,192
    const r = imp(persimmon8b);
    const m = r.config.model as Config;
    expect(m).toMatchObject({ norm: 'layernorm', mlp: 'plain', bias: true, qk_norm: 'head', kv_heads: 64 });
    expect(m.lm_head_bias).toBeUndefined();
    expect(m.parallel_block).toBeUndefined();
    expect(paramsOf(core, m).total).toBe(9397175296);
    expect([r.warnings, r.unknown]).toEqual([[], []]);
    // PersimmonConfig's defaults are persimmon-8b's shape; qk_layernorm false drops the 2 x 2 x 64 a layer
    expect(total({ model_type: 'persimmon' })).toBe(9397175296);
    expect(total({ ...persimmon8b, qk_layernorm: false })).toBe(9397175296 - 36 * 256);
  });
});

describe('Nemotron: LayerNorm1P, squared-ReLU up/down MLP, untied', () => {
  it('Nemotron-4 4B (Minitron-4B): 4,190,509,056 parameters (generic reading: 4,190,309,376 with RMSNorms)', () => {
    // embed_tokens and lm_head 256000 x 3072 = 786,432,000 each; per NemotronDecoderLayer: q 3072 x 3072 = 9,437,184,
    // k/v 2 x 3072 x 1024 = 6,291,456, o 9,437,184, up/down 2 x 3072 x 9216 = 56,623,104, two LayerNorm1P
    // 4 x 3072 = 12,288: 81,801,216 x 32 = 2,617,638,912; norm 6,144
    const r = imp(nemotron4b);
    const m = r.config.model as Config;
    expect(m).toMatchObject({ norm: 'layernorm', mlp: 'plain', bias: false, kv_heads: 8, head_dim: 128 });
    expect(m).toMatchObject({ ffn_hidden: 9216, tied_embeddings: false });
    expect(paramsOf(core, m).total).toBe(4190509056);
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toEqual([expect.stringMatching(/NemotronLayerNorm1P normalises in the autocast dtype/)]);
    expect(r.notes.join('\n')).toMatch(/weight \+ 1 adds no parameters/);
  });
  it('attention_bias / mlp_bias bias q, k, v, o and up / down as in Llama', () => {
    // q/k/v biases 3072 + 2 x 1024, o 3072, up 9216, down 3072: 20,480 a layer
    const m = imp({ ...nemotron4b, attention_bias: true, mlp_bias: true }).config.model as Config;
    expect(m.bias).toBe(true);
    expect(paramsOf(core, m).total).toBe(4190509056 + 32 * 20480);
  });
  it('a kv_channels other than head_dim is refused: NemotronConfig reads head_dim only', () => {
    const e = hfRefused(importHfConfig({ ...nemotron4b, kv_channels: 96 }));
    expect(e.path).toBe('kv_channels');
    expect(e.message).toMatch(/NemotronConfig reads head_dim \(128 here\)/);
  });
});
