// A key absent from a config.json takes the default of the framework's config class
// for that model_type (frontend/config/importers/hf-defaults.ts cites each class and
// commit). The expected shapes below are read off those classes by hand: a config.json
// naming only its model_type gives the class-default model.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig, type HfImport } from '../../frontend/config/importers/hf.js';
import { MODELS } from '../../frontend/config/catalog.js';

const ok = (r: ReturnType<typeof importHfConfig>): HfImport => {
  if ('error' in r) throw new Error(r.error.message);
  return r;
};
const modelOf = (json: object): Config => ok(importHfConfig(json)).config.model as Config;

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

// [model_type, layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab, tied, max_positions, extra]
type Row = [string, number, number, number, number, number, number, number, boolean, number, Config?];
const ROWS: Row[] = [
  ['llama', 32, 4096, 32, 32, 128, 11008, 32000, false, 2048, { mlp: 'gated', bias: false }],
  ['mistral', 32, 4096, 32, 8, 128, 14336, 32000, false, 131072],
  ['mixtral', 32, 4096, 32, 8, 128, 14336, 32000, false, 131072, { moe: { experts: 8, top_k: 2 } }],
  ['qwen2', 32, 4096, 32, 32, 128, 22016, 151936, false, 32768, { qkv_bias: true }],
  [
    'qwen2_moe',
    24,
    2048,
    16,
    16,
    128,
    5632,
    151936,
    false,
    32768,
    { qkv_bias: true, moe: { experts: 60, top_k: 4, expert_ffn_hidden: 1408, shared_expert_ffn_hidden: 5632 } },
  ],
  ['qwen3', 32, 4096, 32, 32, 128, 22016, 151936, false, 32768, { qk_norm: 'head' }],
  [
    'qwen3_moe',
    24,
    2048,
    32,
    4,
    64,
    6144,
    151936,
    false,
    32768,
    { moe: { experts: 128, top_k: 8, expert_ffn_hidden: 768 } },
  ],
  [
    'deepseek_v3',
    61,
    7168,
    128,
    128,
    128,
    18432,
    129280,
    false,
    4096,
    {
      moe: { experts: 256, top_k: 8, expert_ffn_hidden: 2048, shared_experts: 1, dense_layers: 3 },
      mla: { q_lora_rank: 1536, kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128 },
    },
  ],
  ['gemma', 28, 3072, 16, 16, 256, 24576, 256000, true, 8192],
  ['gemma2', 26, 2304, 8, 4, 256, 9216, 256000, true, 8192],
  ['gemma3_text', 26, 2304, 8, 4, 256, 9216, 262208, true, 131072],
  ['phi3', 32, 3072, 32, 32, 96, 8192, 32064, false, 4096],
  ['gpt2', 12, 768, 12, 12, 64, 3072, 50257, true, 1024, { mlp: 'plain', norm: 'layernorm', bias: true }],
  ['gpt_neox', 44, 6144, 64, 64, 96, 24576, 50432, false, 2048, { bias: true }],
  ['falcon', 32, 4544, 71, 1, 64, 18176, 65024, true, 2048, { bias: false }],
  ['olmo2', 32, 4096, 32, 32, 128, 11008, 50304, false, 2048, { qk_norm: 'full' }],
  ['bert', 12, 768, 12, 12, 64, 3072, 30522, false, 512, { type_vocab: 2 }],
  ['gpt_oss', 36, 2880, 64, 8, 64, 2880, 201088, false, 131072, { moe: { experts: 128, top_k: 4 } }],
  ['starcoder2', 30, 3072, 24, 2, 128, 12288, 49152, true, 4096, { mlp: 'plain', norm: 'layernorm', bias: true }],
  ['chatglm', 28, 4096, 32, 32, 128, 13696, 65024, false, 2048, { mlp: 'gated', norm: 'rmsnorm', bias: false }],
  ['olmo3', 32, 4096, 32, 32, 128, 11008, 50304, false, 2048, { qk_norm: 'full' }],
  [
    'qwen3_5_text',
    32,
    4096,
    16,
    4,
    256,
    12288,
    248320,
    false,
    32768,
    {
      qk_norm: 'head',
      attn_output_gate: true,
      moe: null,
      layer_types: ['linear', 'linear', 'linear', 'full'],
      linear: { key_heads: 16, value_heads: 32, key_head_dim: 128, value_head_dim: 128, conv_kernel: 4 },
    },
  ],
];

describe('an absent key takes the config class default', () => {
  for (const [type, layers, hidden, heads, kv, headDim, ffn, vocab, tied, maxPos, extra] of ROWS)
    it(type, () => {
      const model = modelOf({ model_type: type });
      expect(model).toMatchObject({
        layers,
        hidden,
        heads,
        kv_heads: kv,
        head_dim: headDim,
        ffn_hidden: ffn,
        vocab,
        tied_embeddings: tied,
        max_positions: maxPos,
        ...extra,
      });
      const r = core.estimate({ model });
      if (!r.ok) throw new Error(`${type}: ${r.error.message}`);
    });
});

describe('GLM-4.5 (glm4_moe)', () => {
  it('class defaults, with head_dim given (the class has none and 96 heads do not divide 4096)', () => {
    const r = ok(importHfConfig({ model_type: 'glm4_moe', head_dim: 128 }));
    expect(r.config.model).toMatchObject({
      layers: 46,
      hidden: 4096,
      heads: 96,
      kv_heads: 8,
      head_dim: 128,
      ffn_hidden: 10944,
      vocab: 151552,
      tied_embeddings: false,
      moe: {
        experts: 128,
        top_k: 8,
        expert_ffn_hidden: 1408,
        shared_experts: 1,
        shared_expert_ffn_hidden: 1408,
        dense_layers: 1,
        router_bias: true,
      },
    });
    expect(r.warnings.join('\n')).toMatch(/num_nextn_predict_layers 1/);
    expect(importHfConfig({ model_type: 'glm4_moe' })).toMatchObject({ error: { path: 'num_attention_heads' } });
  });
  it('the keys of a GLM-4.5 config give the glm-4.5 preset, q/k/v biases and per-head QK-norm included', () => {
    // GLM-4.5's shape in config.json keys (the numbers of the glm-4.5 preset's source)
    const r = ok(
      importHfConfig({
        model_type: 'glm4_moe',
        hidden_size: 5120,
        num_hidden_layers: 92,
        num_attention_heads: 96,
        num_key_value_heads: 8,
        head_dim: 128,
        intermediate_size: 12288,
        moe_intermediate_size: 1536,
        n_routed_experts: 160,
        n_shared_experts: 1,
        num_experts_per_tok: 8,
        first_k_dense_replace: 3,
        attention_bias: true,
        use_qk_norm: true,
        vocab_size: 151552,
        max_position_embeddings: 131072,
        tie_word_embeddings: false,
        partial_rotary_factor: 0.5,
        num_nextn_predict_layers: 1,
      }),
    );
    expect(r.unknown).toEqual([]);
    const model = r.config.model as Config;
    expect(model).toMatchObject({ qkv_bias: true, bias: false, qk_norm: 'head' });
    const est = core.estimate({ model });
    if (!est.ok) throw new Error(est.error.message);
    expect(est.params.total).toBe(MODELS.find((m) => m.id === 'glm-4.5')!.params_total);
  });
});

describe('OLMo 3 (olmo3)', () => {
  it('the keys of an OLMo 3 7B config give the olmo-3-7b preset; the window is on 3 of every 4 layers', () => {
    const r = ok(
      importHfConfig({
        model_type: 'olmo3',
        hidden_size: 4096,
        num_hidden_layers: 32,
        num_attention_heads: 32,
        num_key_value_heads: 32,
        intermediate_size: 11008,
        vocab_size: 100278,
        max_position_embeddings: 65536,
        sliding_window: 4096,
        tie_word_embeddings: false,
      }),
    );
    expect(r.config.model).toMatchObject({
      layer_types: ['sliding', 'sliding', 'sliding', 'full'],
      sliding_window: 4096,
    });
    const est = core.estimate({ model: r.config.model as Config });
    if (!est.ok) throw new Error(est.error.message);
    expect(est.params.total).toBe(MODELS.find((m) => m.id === 'olmo-3-7b')!.params_total);
  });
});

describe('a remote-code model_type', () => {
  it('is read with the mapping of the modeling class its architectures name (Kimi K2: DeepseekV3ForCausalLM)', () => {
    const r = ok(
      importHfConfig({
        model_type: 'kimi_k2',
        architectures: ['DeepseekV3ForCausalLM'],
        hidden_size: 7168,
        intermediate_size: 18432,
        moe_intermediate_size: 2048,
        num_hidden_layers: 61,
        num_attention_heads: 64,
        num_key_value_heads: 64,
        n_shared_experts: 1,
        n_routed_experts: 384,
        num_experts_per_tok: 8,
        first_k_dense_replace: 1,
        moe_layer_freq: 1,
        q_lora_rank: 1536,
        kv_lora_rank: 512,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
        vocab_size: 163840,
        max_position_embeddings: 131072,
        tie_word_embeddings: false,
      }),
    );
    expect(r.notes.join('\n')).toContain(
      'model_type "kimi_k2" read as deepseek_v3 (architectures: DeepseekV3ForCausalLM)',
    );
    const est = core.estimate({ model: r.config.model as Config });
    if (!est.ok) throw new Error(est.error.message);
    expect(est.params.total).toBe(MODELS.find((m) => m.id === 'kimi-k2')!.params_total);
  });
});

describe('ChatGLM and StarCoder2', () => {
  // ChatGLM3-6B's shape: multi_query_group_num 2 and kv_channels 128 are read, not 32 KV heads
  const chatglm3 = {
    model_type: 'chatglm',
    num_layers: 28,
    padded_vocab_size: 65024,
    hidden_size: 4096,
    ffn_hidden_size: 13696,
    kv_channels: 128,
    num_attention_heads: 32,
    seq_length: 8192,
    add_bias_linear: false,
    add_qkv_bias: true,
    multi_query_attention: true,
    multi_query_group_num: 2,
    rmsnorm: true,
    post_layer_norm: true,
    tie_word_embeddings: false,
  };
  it('ChatGLM: grouped K/V heads, q/k/v biases, untied output layer: 6,243,584,000 parameters', () => {
    const r = ok(importHfConfig(chatglm3));
    const model = r.config.model as Config;
    expect(model).toMatchObject({ kv_heads: 2, head_dim: 128, qkv_bias: true, bias: false, tied_embeddings: false });
    expect(r.unknown).toEqual([]);
    const est = core.estimate({ model });
    if (!est.ok) throw new Error(est.error.message);
    // embedding + output 2*V*h, per layer qkv h*(a+2g)*d + (a+2g)*d, dense h*h, MLP 3*h*F, 2 norms; final norm
    expect(est.params.total).toBe(6243584000);
  });
  it('ChatGLM: without multi_query_attention every head has its own K/V (the class default)', () => {
    const { multi_query_attention: _, ...mha } = chatglm3;
    expect(modelOf(mha).kv_heads).toBe(32);
  });
  it('StarCoder2: tie_word_embeddings and use_bias absent -> tied, biased (Starcoder2Config defaults)', () => {
    const model = modelOf({
      model_type: 'starcoder2',
      hidden_size: 3072,
      num_hidden_layers: 30,
      num_attention_heads: 24,
      num_key_value_heads: 2,
      intermediate_size: 12288,
      vocab_size: 49152,
    });
    expect(model).toMatchObject({ tied_embeddings: true, bias: true, norm: 'layernorm', mlp: 'plain' });
  });
  it('says which class defaults it took', () => {
    const notes = ok(importHfConfig({ model_type: 'starcoder2' })).notes.join('\n');
    expect(notes).toContain('tie_word_embeddings: not in config.json; starcoder2 default true');
    expect(notes).toContain('use_bias: not in config.json; starcoder2 default true');
    const { multi_query_attention: _, ...mha } = chatglm3;
    const r = ok(importHfConfig(mha));
    expect(r.notes.join('\n')).not.toContain('multi_query_group_num');
    expect(r.unknown).toEqual([]);
  });
});
