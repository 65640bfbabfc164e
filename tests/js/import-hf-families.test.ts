// Hugging Face config.json of model_types the importer read generically (as a llama-like decoder) and got wrong, now
// read as their modeling code builds them (frontend/config/importers/hf-families.ts cites each file and commit):
//   glm        GLM-4-9B: o_proj has no bias (the generic reading biased q, k, v and o): 9,400,115,200 -> 9,399,951,360
//   glm4       GLM-4-9B-0414: also two post-sublayer norms (four a layer): 9,400,115,200 -> 9,400,279,040
//   olmo       OLMo-1: LayerNorm without parameters (counted as RMSNorm weights before), clip_qkv
//   exaone     EXAONE 3.5: RMSNorm (read as LayerNorm for its layer_norm_epsilon key): 7,818,715,136 -> 7,818,448,896
//   internlm2  InternLM2: config.bias biases wqkv and wo (InternLM2Config default True; the key was ignored)
//   minicpm    MiniCPM: tied embeddings by the class default (untied before: 3,007,703,808 -> 2,724,880,896), MoE
//   phimoe     Phi-3.5-MoE: LayerNorm with bias (RMSNorm before): 41,872,887,104 -> 41,873,153,344, the published total
//   apertus    Apertus: q/k norms (none before), xIELU's two scalars a layer warned about
//   baichuan   Baichuan 2: NormHead's normalised weight copy and the 13B models' ALiBi warned about, model_max_length
//   qwen2_vl   Qwen2-VL: Qwen2's q/k/v biases (none before): 7,615,487,488 -> 7,615,616,512
// The configs are the checkpoints' published config.json fields (no network here; token ids and rope details that size
// nothing are left out). Each expected total is the modeling code's count, by hand in the comments.
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
const total = (json: Obj) => paramsOf(core, model(json)).total;

// THUDM/glm-4-9b-hf
const glm = (): Obj => ({
  architectures: ['GlmForCausalLM'],
  model_type: 'glm',
  attention_bias: true,
  attention_dropout: 0.0,
  head_dim: 128,
  hidden_act: 'silu',
  hidden_size: 4096,
  intermediate_size: 13696,
  max_position_embeddings: 8192,
  num_attention_heads: 32,
  num_hidden_layers: 40,
  num_key_value_heads: 2,
  partial_rotary_factor: 0.5,
  rms_norm_eps: 1.5625e-7,
  rope_theta: 10000.0,
  tie_word_embeddings: false,
  vocab_size: 151552,
});

describe('GLM-4 (glm, glm4)', () => {
  it('glm-4-9b-hf: q/k/v biased, o_proj not (GlmAttention), fused gate_up as a gated MLP', () => {
    const r = imp(glm());
    const m = r.config.model as Config;
    expect(m).toMatchObject({ mlp: 'gated', norm: 'rmsnorm', bias: false, qkv_bias: true, tied_embeddings: false });
    expect(m.o_bias).toBeUndefined();
    expect([r.warnings, r.unknown]).toEqual([[], []]);
    // 40 x (q 4096^2 + k, v 4096 x 256 + o 4096^2 + biases 4608 + 3 x 4096 x 13696 + 2 x 4096) + 2 x 151552 x 4096 + 4096
    expect(paramsOf(core, m).total).toBe(9_399_951_360);
  });
  it('GLM-4-9B-0414 (glm4): post_self_attn_layernorm and post_mlp_layernorm make four norms a layer', () => {
    const m = model({ ...glm(), architectures: ['Glm4ForCausalLM'], model_type: 'glm4', rms_norm_eps: 1e-5 });
    expect(m).toMatchObject({ norms_per_layer: 4, qkv_bias: true, bias: false });
    expect(m.o_bias).toBeUndefined();
    // glm-4-9b's count + 40 x 2 x 4096
    expect(paramsOf(core, m).total).toBe(9_400_279_040);
  });
  it('attention_bias false drops the q/k/v biases; absent, the class default (True) keeps them', () => {
    const { attention_bias: _b, ...noKey } = glm();
    expect(total(noKey)).toBe(9_399_951_360);
    expect(total({ ...glm(), attention_bias: false })).toBe(9_399_951_360 - 40 * 4608);
  });
});

// allenai/OLMo-1B-hf; OLMo-7B-0724-hf has the OLMo-7B shape and clip_qkv 8
const olmo1b = (): Obj => ({
  architectures: ['OlmoForCausalLM'],
  model_type: 'olmo',
  attention_bias: false,
  attention_dropout: 0.0,
  clip_qkv: null,
  hidden_act: 'silu',
  hidden_size: 2048,
  intermediate_size: 8192,
  max_position_embeddings: 2048,
  num_attention_heads: 16,
  num_hidden_layers: 16,
  num_key_value_heads: 16,
  rope_scaling: null,
  rope_theta: 10000.0,
  tie_word_embeddings: true,
  vocab_size: 50304,
});
const olmo7b = (): Obj => ({
  ...olmo1b(),
  clip_qkv: 8.0,
  hidden_size: 4096,
  intermediate_size: 11008,
  max_position_embeddings: 4096,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 32,
  tie_word_embeddings: false,
});

describe('OLMo-1 (olmo)', () => {
  it('OLMo-1B: no norm parameters in the layers; the final norm is counted with hidden_size weights (warned)', () => {
    const r = imp(olmo1b());
    const m = r.config.model as Config;
    expect(m).toMatchObject({ norms_per_layer: 0, norm: 'rmsnorm', mlp: 'gated', bias: false, tied_embeddings: true });
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(
      /OlmoLayerNorm has neither weight nor bias.*2,048 parameters the model does not have/,
    );
    // modeling: 16 x (4 x 2048^2 + 3 x 2048 x 8192) + 50304 x 2048 = 1,176,764,416 (OLMo-1B's published total);
    // the generic reading added 33 x 2048 norm weights (1,176,832,000)
    expect(paramsOf(core, m).total).toBe(1_176_764_416 + 2048);
  });
  it('OLMo-7B (0724): clip_qkv is warned about (the in-place clamps keep q, k and v)', () => {
    const r = imp(olmo7b());
    expect(r.warnings.join('\n')).toMatch(/clip_qkv 8: OlmoAttention clamps .*\(32 \+ 2 x 32\) x 128 per layer/);
    // modeling: 32 x (4 x 4096^2 + 3 x 4096 x 11008) + 2 x 50304 x 4096 = 6,888,095,744, + the final norm's 4096
    expect(paramsOf(core, r.config.model as Config).total).toBe(6_888_095_744 + 4096);
  });
  it('attention_bias biases q, k, v and o (LlamaAttention); OlmoMLP never', () => {
    const m = model({ ...olmo1b(), attention_bias: true, mlp_bias: true });
    expect(m).toMatchObject({ qkv_bias: true, o_bias: true, bias: false });
    expect(m.mlp_bias).toBeUndefined();
  });
});

// LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct and EXAONE-3.5-2.4B-Instruct
const exaone = (): Obj => ({
  architectures: ['ExaoneForCausalLM'],
  model_type: 'exaone',
  activation_function: 'silu',
  attention_dropout: 0.0,
  embed_dropout: 0.0,
  head_dim: 128,
  hidden_size: 4096,
  intermediate_size: 14336,
  layer_norm_epsilon: 1e-5,
  max_position_embeddings: 32768,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  num_layers: 32,
  rope_theta: 1000000.0,
  tie_word_embeddings: false,
  vocab_size: 102400,
});

describe('EXAONE 3.0 / 3.5 (exaone)', () => {
  it('7.8B: num_layers, activation_function, RMSNorm despite the layer_norm_epsilon key, a gated MLP', () => {
    const r = imp(exaone());
    const m = r.config.model as Config;
    expect(m).toMatchObject({ layers: 32, norm: 'rmsnorm', mlp: 'gated', bias: false, kv_heads: 8 });
    expect([r.warnings, r.unknown]).toEqual([[], []]);
    // 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 2 x 4096) + 2 x 102400 x 4096 + 4096: the card's 7.82 B
    // (6.98 B without embeddings); the generic LayerNorm added 65 x 4096
    expect(paramsOf(core, m).total).toBe(7_818_448_896);
  });
  it('2.4B: tied embeddings; an intermediate_size of None is 4 x hidden_size (ExaoneConfig)', () => {
    const small = {
      ...exaone(),
      head_dim: 80,
      hidden_size: 2560,
      intermediate_size: 7168,
      num_layers: 30,
      tie_word_embeddings: true,
    };
    // 30 x (2 x 2560^2 + 2 x 2560 x 640 + 3 x 2560 x 7168 + 2 x 2560) + 102400 x 2560 + 2560 (the card's 2.14 B
    // without embeddings)
    expect(total(small)).toBe(2_405_327_360);
    expect(model({ ...small, intermediate_size: null }).ffn_hidden).toBe(4 * 2560);
  });
});

// internlm/internlm2_5-7b
const internlm2 = (): Obj => ({
  architectures: ['InternLM2ForCausalLM'],
  model_type: 'internlm2',
  attn_implementation: 'eager',
  bias: false,
  hidden_act: 'silu',
  hidden_size: 4096,
  intermediate_size: 14336,
  max_position_embeddings: 32768,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-5,
  rope_scaling: { type: 'dynamic', factor: 2.0 },
  rope_theta: 1000000,
  tie_word_embeddings: false,
  vocab_size: 92544,
});

describe('InternLM2 (internlm2, remote code)', () => {
  it('internlm2_5-7b: wqkv and wo without bias (bias false), every key read', () => {
    const r = imp(internlm2());
    expect(r.unknown).toEqual([]);
    expect(r.notes.join('\n')).toMatch(/attn_implementation "eager"/);
    // 32 x (4096 x 6144 wqkv + 4096^2 wo + 3 x 4096 x 14336 + 2 x 4096) + 2 x 92544 x 4096 + 4096: the published 7.74 B
    expect(paramsOf(core, r.config.model as Config).total).toBe(7_737_708_544);
  });
  it('bias true, or no bias key (InternLM2Config default True), biases wqkv and wo, not the MLP', () => {
    const { bias: _b, ...noKey } = internlm2();
    for (const json of [{ ...internlm2(), bias: true }, noKey]) {
      const m = model(json);
      expect(m).toMatchObject({ qkv_bias: true, o_bias: true, bias: false });
      // + 32 x (6144 + 4096)
      expect(paramsOf(core, m).total).toBe(7_737_708_544 + 32 * 10_240);
    }
  });
});

// openbmb/MiniCPM-2B-sft-bf16 (its config.json has no tie_word_embeddings: MiniCPMConfig's True applies)
const minicpm = (): Obj => ({
  architectures: ['MiniCPMForCausalLM'],
  model_type: 'minicpm',
  dim_model_base: 256,
  hidden_act: 'silu',
  hidden_size: 2304,
  intermediate_size: 5760,
  max_position_embeddings: 4096,
  num_attention_heads: 36,
  num_hidden_layers: 40,
  num_key_value_heads: 36,
  rms_norm_eps: 1e-5,
  rope_scaling: null,
  scale_depth: 1.4,
  scale_emb: 12,
  vocab_size: 122753,
});

describe('MiniCPM (minicpm)', () => {
  it('MiniCPM-2B: the embeddings are tied by the class default; the muP multipliers size nothing', () => {
    const r = imp(minicpm());
    const m = r.config.model as Config;
    expect(m).toMatchObject({ tied_embeddings: true, mlp: 'gated', head_dim: 64 });
    expect([r.warnings, r.unknown]).toEqual([[], []]);
    // 40 x (4 x 2304^2 + 3 x 2304 x 5760 + 2 x 2304) + 122753 x 2304 + 2304: 2.72 B (2.44 B without the embedding)
    expect(paramsOf(core, m).total).toBe(2_724_880_896);
  });
  it('MiniCPM-MoE-8x2B: num_experts experts of intermediate_size in every layer (MiniCPMMoE)', () => {
    const r = imp({ ...minicpm(), num_experts: 8, num_experts_per_tok: 2 });
    expect((r.config.model as Config).moe).toMatchObject({ experts: 8, top_k: 2, expert_ffn_hidden: 5760 });
    expect(r.warnings).toEqual([]);
  });
});

// microsoft/Phi-3.5-MoE-instruct
const phimoe = (): Obj => ({
  architectures: ['PhiMoEForCausalLM'],
  model_type: 'phimoe',
  attention_bias: true,
  attention_dropout: 0.0,
  hidden_act: 'silu',
  hidden_dropout: 0.0,
  hidden_size: 4096,
  input_jitter_noise: 0.01,
  intermediate_size: 6400,
  lm_head_bias: true,
  max_position_embeddings: 131072,
  num_attention_heads: 32,
  num_experts_per_tok: 2,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  num_local_experts: 16,
  original_max_position_embeddings: 4096,
  rms_norm_eps: 1e-5,
  rope_theta: 10000.0,
  router_aux_loss_coef: 0.0,
  router_jitter_noise: 0.01,
  sliding_window: 131072,
  tie_word_embeddings: false,
  vocab_size: 32064,
});

describe('Phi-3.5-MoE (phimoe)', () => {
  it('LayerNorm with bias, biased q/k/v/o and lm_head, 16 experts top-2: the published 41.87 B', () => {
    const r = imp(phimoe());
    const m = r.config.model as Config;
    expect(m).toMatchObject({ norm: 'layernorm', qkv_bias: true, o_bias: true, lm_head_bias: true });
    expect(m.moe).toMatchObject({ experts: 16, top_k: 2, expert_ffn_hidden: 6400, shared_experts: 0 });
    expect(r.unknown).toEqual([]);
    // the jitter is the only warning (no "MoE keys read generically")
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^input_jitter_noise 0.01: .*tokens x 4,096 per layer/);
    // 32 x (attention 41,943,040 + biases 10,240 + router 65,536 + 16 x 3 x 4096 x 6400 + 2 x 2 x 4096)
    // + 2 x 4096 + 2 x 32064 x 4096 + 32064
    expect(paramsOf(core, m).total).toBe(41_873_153_344);
  });
});

// swiss-ai/Apertus-8B-2509
const apertus = (): Obj => ({
  architectures: ['ApertusForCausalLM'],
  model_type: 'apertus',
  attention_bias: false,
  attention_dropout: 0.0,
  hidden_act: 'xielu',
  hidden_dropout: 0.0,
  hidden_size: 4096,
  intermediate_size: 21504,
  max_position_embeddings: 65536,
  mlp_bias: false,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  post_norm: false,
  qk_norm: true,
  rms_norm_eps: 1e-5,
  rope_theta: 12000000,
  tie_word_embeddings: false,
  vocab_size: 131072,
});

describe('Apertus (apertus)', () => {
  it('Apertus-8B: up/down MLP, q/k norms over head_dim; the xIELU scalars are warned about', () => {
    const r = imp(apertus());
    const m = r.config.model as Config;
    expect(m).toMatchObject({ mlp: 'plain', qk_norm: 'head', bias: false });
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^hidden_act "xielu": .*64 parameters not counted/);
    // modeling: 32 x (attention 41,943,040 + q/k norms 256 + 2 x 4096 x 21504 + xIELU 2 + 2 x 4096)
    // + 2 x 131072 x 4096 + 4096 = 8,053,338,176 (the published 8.05 B), less the 64 xIELU scalars
    expect(paramsOf(core, m).total).toBe(8_053_338_176 - 64);
  });
});

// baichuan-inc/Baichuan2-7B-Base and Baichuan2-13B-Base
const baichuan7b = (): Obj => ({
  architectures: ['BaichuanForCausalLM'],
  model_type: 'baichuan',
  hidden_act: 'silu',
  hidden_size: 4096,
  intermediate_size: 11008,
  max_position_embeddings: 4096,
  model_max_length: 4096,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  rms_norm_eps: 1e-6,
  _from_model_config: true,
  tie_word_embeddings: false,
  vocab_size: 125696,
  z_loss_weight: 0,
});
const baichuan13b = (): Obj => {
  const { max_position_embeddings: _m, _from_model_config: _f, ...rest } = baichuan7b();
  return { ...rest, hidden_size: 5120, intermediate_size: 13696, num_attention_heads: 40, num_hidden_layers: 40 };
};

describe('Baichuan 2 (baichuan, remote code)', () => {
  it('7B: W_pack as q/k/v, RoPE; the NormHead weight copy is warned about', () => {
    const r = imp(baichuan7b());
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/NormHead normalises lm_head's weight .*514,850,816 elements/);
    // 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 2 x 125696 x 4096 + 4096: the published 7.51 B
    expect(paramsOf(core, r.config.model as Config).total).toBe(7_505_973_248);
  });
  it('13B: ALiBi warned about, model_max_length as the context', () => {
    const r = imp(baichuan13b());
    const m = r.config.model as Config;
    expect(m.max_positions).toBe(4096);
    expect(r.warnings.join('\n')).toMatch(/hidden_size 5120: Baichuan 13B models use ALiBi/);
    expect(r.unknown).toEqual([]);
    // 40 x (4 x 5120^2 + 3 x 5120 x 13696 + 2 x 5120) + 2 x 125696 x 5120 + 5120: the published 13.9 B
    expect(paramsOf(core, m).total).toBe(13_896_668_160);
    // the 7B and 13B classes default every shape key differently: a config.json without its shape is refused
    expect(hfRefused(importHfConfig({ model_type: 'baichuan' })).path).toBe('hidden_size');
  });
});

describe('Qwen2-VL (qwen2_vl)', () => {
  it("Qwen2-VL-7B-Instruct's language model is Qwen2's: q, k and v biased", () => {
    const r = imp({
      architectures: ['Qwen2VLForConditionalGeneration'],
      model_type: 'qwen2_vl',
      hidden_act: 'silu',
      hidden_size: 3584,
      intermediate_size: 18944,
      max_position_embeddings: 32768,
      max_window_layers: 28,
      num_attention_heads: 28,
      num_hidden_layers: 28,
      num_key_value_heads: 4,
      rms_norm_eps: 1e-6,
      rope_theta: 1000000.0,
      sliding_window: 32768,
      tie_word_embeddings: false,
      use_sliding_window: false,
      vocab_size: 152064,
      rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] },
    });
    const m = r.config.model as Config;
    expect(m).toMatchObject({ qkv_bias: true, bias: false });
    expect(m.o_bias).toBeUndefined();
    expect(r.notes.join('\n')).toMatch(/read as qwen2 \(architectures: Qwen2VLForConditionalGeneration\)/);
    // 28 x (2 x 3584^2 + 2 x 3584 x 512 + biases 4608 + 3 x 3584 x 18944 + 2 x 3584) + 2 x 152064 x 3584 + 3584
    expect(paramsOf(core, m).total).toBe(7_615_616_512);
  });
});
