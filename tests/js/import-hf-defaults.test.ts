// A key absent from a config.json takes the default of the framework's config class
// for that model_type (frontend/config/importers/hf-defaults.ts cites each class and
// commit). The expected shapes below are read off those classes by hand: a config.json
// naming only its model_type gives the class-default model.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig, type HfImport } from '../../frontend/config/importers/hf.js';

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
