// Hugging Face config.json of OPT, BLOOM, MPT and GPT-Neo, read as their transformers classes build them
// (frontend/config/importers/hf-legacy.ts cites each modeling and configuration file and commit). They had no mapping
// before and were read as llama-like decoders (generic keys): rotary positions, no biases, untied embeddings, RMSNorm or
// a gated MLP, so facebook/opt-1.3b counted 1,413,974,016 parameters, bigscience/bloom-560m 916,555,776,
// mosaicml/mpt-7b 9,003,339,776, and EleutherAI/gpt-neo-1.3B was refused (intermediate_size null).
//
// No network here: the configs are inlined from the checkpoints' published config.json fields (copies in the code
// corpus: opt-125m's and opt-1.3b's keys, a bloom-560m BloomConfig dump, an mpt-7b config.json, gpt-neo-125M's keys with
// gpt-neo-1.3B's sizes); the totals are derived by hand from the modules and checked against the published counts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig } from '../../frontend/config/importers/hf.js';
import { hfRefused, paramsOf, hfImport as imp, hfModel as model } from './hf-fixtures.js';

type Obj = Record<string, unknown>;
let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const opt13b = (extra: Obj = {}): Obj => ({
  _name_or_path: 'facebook/opt-1.3b',
  activation_dropout: 0.0,
  activation_function: 'relu',
  architectures: ['OPTForCausalLM'],
  attention_dropout: 0.0,
  bos_token_id: 2,
  do_layer_norm_before: true,
  dropout: 0.1,
  eos_token_id: 2,
  ffn_dim: 8192,
  hidden_size: 2048,
  init_std: 0.02,
  layerdrop: 0.0,
  max_position_embeddings: 2048,
  model_type: 'opt',
  num_attention_heads: 32,
  num_hidden_layers: 24,
  pad_token_id: 1,
  prefix: '</s>',
  torch_dtype: 'float16',
  transformers_version: '4.21.0.dev0',
  use_cache: true,
  vocab_size: 50272,
  word_embed_proj_dim: 2048,
  ...extra,
});

describe('OPTForCausalLM (opt)', () => {
  it('opt-1.3b: learned positions (+2 rows), biased linears, LayerNorms, tied lm_head: the published 1,315,758,080', () => {
    const r = imp(opt13b());
    const m = r.config.model as Config;
    expect(m).toMatchObject({
      position: 'learned',
      max_positions: 2050,
      bias: true,
      tied_embeddings: true,
      norm: 'layernorm',
      mlp: 'plain',
      ffn_hidden: 8192,
      heads: 32,
      kv_heads: 32,
    });
    expect(m.final_norm).toBeUndefined(); // the final LayerNorm is built (do_layer_norm_before)
    expect([r.warnings, r.unknown]).toEqual([[], []]);
    // embed_tokens 50272 x 2048 = 102,957,056; embed_positions 2050 x 2048 = 4,198,400; per layer q/k/v/out_proj
    // 4 x (2048^2 + 2048) = 16,785,408, fc1 2048 x 8192 + 8192 = 16,785,408, fc2 8192 x 2048 + 2048 = 16,779,264, two
    // LayerNorms 8,192: 50,358,272 x 24 = 1,208,598,528; final LayerNorm 4,096; lm_head tied
    expect(paramsOf(core, m).total).toBe(1315758080);
  });
  it('opt-350m: post-LN without a final norm; word_embed_proj_dim 512 is warned with its exact over-count', () => {
    const r = imp(
      opt13b({
        _name_or_path: 'facebook/opt-350m',
        do_layer_norm_before: false,
        ffn_dim: 4096,
        hidden_size: 1024,
        num_attention_heads: 16,
        word_embed_proj_dim: 512,
      }),
    );
    const m = r.config.model as Config;
    expect(m).toMatchObject({ final_norm: false, max_positions: 2050, bias: true });
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toHaveLength(1);
    // counted: embedding 50272 x 1024 (tied head); built: 50272 x 512 + project_in and project_out 2 x 1024 x 512
    const over = 50272 * 1024 - (50272 * 512 + 2 * 1024 * 512);
    expect(over).toBe(24690688);
    expect(r.warnings[0]).toMatch(/word_embed_proj_dim 512/);
    expect(r.warnings[0]).toContain('overcounting the model by 24,690,688 parameters');
    // 24 x (4 x (1024^2 + 1024) + 2 x 1024 x 4096 + 4096 + 1024 + 4 x 1024) + 2050 x 1024 + 50272 x 1024; less the
    // over-count it is OPTForCausalLM's 331,196,416 (facebook/opt-350m)
    expect(paramsOf(core, m).total).toBe(355887104);
    expect(paramsOf(core, m).total - over).toBe(331196416);
  });
  it('enable_bias false drops the biases; elementwise_affine false is warned (the norms have no parameters)', () => {
    const noBias = model(opt13b({ enable_bias: false }));
    expect(noBias.bias).toBe(false);
    // q/k/v/out_proj, fc1 and fc2 biases: 24 x (4 x 2048 + 8192 + 2048)
    expect(paramsOf(core, model(opt13b())).total - paramsOf(core, noBias).total).toBe(24 * (4 * 2048 + 8192 + 2048));
    const r = imp(opt13b({ layer_norm_elementwise_affine: false, _remove_final_layer_norm: true }));
    expect((r.config.model as Config).final_norm).toBe(false);
    expect(r.warnings).toEqual([expect.stringContaining(`${(2 * 2048 * 48).toLocaleString('en-US')} parameters`)]);
  });
  it('class defaults (OPTConfig: the opt-125m shape)', () => {
    const m = model({ model_type: 'opt' });
    expect(m).toMatchObject({
      layers: 12,
      hidden: 768,
      heads: 12,
      ffn_hidden: 3072,
      vocab: 50272,
      max_positions: 2050,
    });
    expect(m).toMatchObject({ tied_embeddings: true, bias: true, position: 'learned' });
    // facebook/opt-125m: 125,239,296
    expect(paramsOf(core, m).total).toBe(125239296);
  });
});

const bloom560m = (extra: Obj = {}): Obj => ({
  apply_residual_connection_post_layernorm: false,
  architectures: ['BloomForCausalLM'],
  attention_dropout: 0.0,
  attention_softmax_in_fp32: true,
  bias_dropout_fusion: true,
  bos_token_id: 1,
  eos_token_id: 2,
  hidden_dropout: 0.0,
  hidden_size: 1024,
  initializer_range: 0.02,
  layer_norm_epsilon: 1e-5,
  masked_softmax_fusion: true,
  model_type: 'bloom',
  n_head: 16,
  n_inner: null,
  n_layer: 24,
  offset_alibi: 100,
  pad_token_id: 3,
  pretraining_tp: 1,
  skip_bias_add: true,
  skip_bias_add_qkv: false,
  slow_but_exact: false,
  transformers_version: '4.21.0.dev0',
  unk_token_id: 0,
  use_cache: true,
  vocab_size: 250880,
  ...extra,
});

describe('BloomForCausalLM (bloom)', () => {
  it('bloom-560m: embedding LayerNorm, biased fused QKV and 4x MLP, tied lm_head: the published 559,214,592', () => {
    const r = imp(bloom560m());
    const m = r.config.model as Config;
    expect(m).toMatchObject({
      embedding_norm: true,
      bias: true,
      tied_embeddings: true,
      norm: 'layernorm',
      mlp: 'plain',
      ffn_hidden: 4096,
      position: 'rope', // ALiBi: no parameters
    });
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toEqual([expect.stringMatching(/^ALiBi: BloomAttention .* training\.attention "eager"/)]);
    // word_embeddings 250880 x 1024 = 256,901,120 and its LayerNorm 2,048; per layer query_key_value
    // 1024 x 3072 + 3072 = 3,148,800, dense 1024^2 + 1024 = 1,049,600, dense_h_to_4h 1024 x 4096 + 4096 = 4,198,400,
    // dense_4h_to_h 4096 x 1024 + 1024 = 4,195,328, two LayerNorms 4,096: 12,596,224 x 24 = 302,309,376; ln_f 2,048
    expect(paramsOf(core, m).total).toBe(559214592);
  });
  it('n_embed is hidden_size (BloomConfig pops it); n_inner does not size BloomMLP', () => {
    const { hidden_size: _h, ...rest } = bloom560m();
    const m = model({ ...rest, n_embed: 1024, n_inner: 8192 });
    expect(m).toMatchObject({ hidden: 1024, ffn_hidden: 4096 });
    expect(paramsOf(core, m).total).toBe(559214592);
  });
  it('class defaults (BloomConfig: 2 layers of 64)', () => {
    const m = model({ model_type: 'bloom' });
    expect(m).toMatchObject({ layers: 2, hidden: 64, heads: 8, ffn_hidden: 256, vocab: 250880, tied_embeddings: true });
  });
});

const mpt7b = (attn: Obj = {}, extra: Obj = {}): Obj => ({
  architectures: ['MPTForCausalLM'],
  attn_config: {
    alibi: true,
    alibi_bias_max: 8,
    attn_impl: 'torch',
    attn_pdrop: 0,
    attn_type: 'multihead_attention',
    attn_uses_sequence_id: false,
    clip_qkv: null,
    prefix_lm: false,
    qk_ln: false,
    softmax_scale: null,
    ...attn,
  },
  auto_map: {
    AutoConfig: 'configuration_mpt.MPTConfig',
    AutoModelForCausalLM: 'modeling_mpt.MPTForCausalLM',
  },
  d_model: 4096,
  emb_pdrop: 0,
  embedding_fraction: 1.0,
  expansion_ratio: 4,
  init_config: {
    emb_init_std: null,
    emb_init_uniform_lim: null,
    fan_mode: 'fan_in',
    init_div_is_residual: true,
    init_gain: 0,
    init_nonlinearity: 'relu',
    init_std: 0.02,
    name: 'kaiming_normal_',
    verbose: 0,
  },
  init_device: 'cpu',
  learned_pos_emb: true,
  logit_scale: null,
  max_seq_len: 2048,
  model_type: 'mpt',
  n_heads: 32,
  n_layers: 32,
  no_bias: true,
  norm_type: 'low_precision_layernorm',
  resid_pdrop: 0,
  tokenizer_name: 'EleutherAI/gpt-neox-20b',
  torch_dtype: 'bfloat16',
  transformers_version: '4.28.1',
  use_cache: false,
  verbose: 0,
  vocab_size: 50432,
  ...extra,
});

describe('MptForCausalLM (mpt)', () => {
  it('mpt-7b: no biases, 4 x d_model GELU MLP, bias-less LayerNorms, tied lm_head, ALiBi', () => {
    const r = imp(mpt7b());
    const m = r.config.model as Config;
    expect(m).toMatchObject({
      layers: 32,
      hidden: 4096,
      heads: 32,
      kv_heads: 32,
      bias: false,
      tied_embeddings: true,
      norm: 'layernorm',
      mlp: 'plain',
      ffn_hidden: 16384,
      position: 'rope',
    });
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toEqual([expect.stringMatching(/^ALiBi: MptAttention .* training\.attention "eager"/)]);
    // wte 50432 x 4096 = 206,569,472; per layer Wqkv 4096 x 12288 = 50,331,648, out_proj 4096^2 = 16,777,216, up_proj and
    // down_proj 2 x 4096 x 16384 = 134,217,728, norm_1 / norm_2 weights 8,192: 201,334,784 x 32 = 6,442,713,088; norm_f
    // 4,096; lm_head tied: 6,649,286,656, MptForCausalLM's (the published 6.7 B). config v1's layernorm adds a bias
    // vector to each of the 65 norms (65 x 4096 = 266,240), as the note says
    const modelling = 6649286656;
    expect(paramsOf(core, m).total).toBe(modelling + 65 * 4096);
    expect(r.notes.join('\n')).toContain('266,240 parameters over the model');
  });
  it('refuses what transformers does not build (the remote code only): other widths, multi-query, biases, q/k norms', () => {
    expect(hfRefused(importHfConfig(mpt7b({}, { expansion_ratio: 2 })))).toMatchObject({ path: 'expansion_ratio' });
    expect(hfRefused(importHfConfig(mpt7b({ attn_type: 'multiquery_attention' })))).toMatchObject({
      path: 'attn_config.attn_type',
    });
    expect(hfRefused(importHfConfig(mpt7b({}, { no_bias: false })))).toMatchObject({ path: 'no_bias' });
    expect(hfRefused(importHfConfig(mpt7b({ qk_ln: true })))).toMatchObject({ path: 'attn_config.qk_ln' });
    expect(hfRefused(importHfConfig(mpt7b({ alibi: false })))).toMatchObject({ path: 'attn_config.alibi' });
  });
  it('attn_config.clip_qkv is warned (the clamp keeps the Wqkv output); the class defaults read', () => {
    const r = imp(mpt7b({ clip_qkv: 6 }));
    expect(r.warnings).toHaveLength(2);
    expect(r.warnings[1]).toMatch(/^attn_config\.clip_qkv 6: MptAttention clamps/);
    const m = model({ model_type: 'mpt' });
    expect(m).toMatchObject({ layers: 24, hidden: 2048, heads: 16, ffn_hidden: 8192, vocab: 50368, bias: false });
  });
});

const gptNeo13b = (extra: Obj = {}): Obj => ({
  activation_function: 'gelu_new',
  architectures: ['GPTNeoForCausalLM'],
  attention_dropout: 0,
  attention_layers: Array.from({ length: 24 }, (_, i) => (i % 2 ? 'local' : 'global')),
  attention_types: [[['global', 'local'], 12]],
  bos_token_id: 50256,
  embed_dropout: 0,
  eos_token_id: 50256,
  gradient_checkpointing: false,
  hidden_size: 2048,
  initializer_range: 0.02,
  intermediate_size: null,
  layer_norm_epsilon: 1e-5,
  max_position_embeddings: 2048,
  model_type: 'gpt_neo',
  num_heads: 16,
  num_layers: 24,
  resid_dropout: 0,
  summary_activation: null,
  summary_first_dropout: 0.1,
  summary_proj_to_labels: true,
  summary_type: 'cls_index',
  summary_use_proj: true,
  task_specific_params: { 'text-generation': { do_sample: true, max_length: 50, temperature: 0.9 } },
  tokenizer_class: 'GPT2Tokenizer',
  transformers_version: '4.4.0.dev0',
  use_cache: true,
  vocab_size: 50257,
  window_size: 256,
  ...extra,
});

describe('GPTNeoForCausalLM (gpt_neo)', () => {
  it('gpt-neo-1.3B: learned positions, global / local layers of window 256, out_proj and MLP biases only', () => {
    const r = imp(gptNeo13b());
    const m = r.config.model as Config;
    expect(m).toMatchObject({
      layers: 24,
      hidden: 2048,
      heads: 16,
      head_dim: 128,
      ffn_hidden: 8192,
      position: 'learned',
      max_positions: 2048,
      bias: false,
      o_bias: true,
      mlp_bias: true,
      tied_embeddings: true,
      norm: 'layernorm',
      mlp: 'plain',
      layer_types: ['full', 'sliding'],
      sliding_window: 256,
    });
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toEqual([expect.stringMatching(/^GPTNeoSelfAttention has no SDPA path/)]);
    // wte 50257 x 2048 = 102,926,336; wpe 2048 x 2048 = 4,194,304; per layer q/k/v_proj 3 x 2048^2 = 12,582,912,
    // out_proj 2048^2 + 2048 = 4,196,352, c_fc 2048 x 8192 + 8192 = 16,785,408, c_proj 8192 x 2048 + 2048 = 16,779,264,
    // ln_1 / ln_2 8,192: 50,352,128 x 24 = 1,208,451,072; ln_f 4,096; lm_head tied: the published 1,315,575,808
    expect(paramsOf(core, m).total).toBe(1315575808);
  });
  it('attention_types alone gives the layers; all-global has no sliding layers; a wrong length is refused', () => {
    const { attention_layers: _l, ...types } = gptNeo13b();
    expect(model(types).layer_types).toEqual(['full', 'sliding']);
    const global = model({ ...types, attention_types: [[['global'], 24]] });
    expect(global.layer_types).toBeUndefined();
    expect(global.sliding_window).toBeUndefined();
    expect(hfRefused(importHfConfig({ ...types, attention_types: [[['global', 'local'], 6]] }))).toMatchObject({
      path: 'attention_types',
    });
    expect(hfRefused(importHfConfig(gptNeo13b({ attention_layers: ['global'] })))).toMatchObject({
      path: 'attention_layers',
    });
  });
  it('class defaults (GPTNeoConfig: the gpt-neo-1.3B shape)', () => {
    const m = model({ model_type: 'gpt_neo' });
    expect(paramsOf(core, m).total).toBe(1315575808);
  });
});
