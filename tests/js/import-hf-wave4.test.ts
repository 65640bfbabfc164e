// Hugging Face config.json import of recent (2025-2026) models the importer had not seen: Qwen3.5's MoE text model
// (read generically before: no shared expert, no output gate, no q/k norms), EXAONE 4.0 (every layer sliding before),
// InternVL 3 remote-code configs (refused for a missing hidden_size before), and the models refused by name for what
// config v1 cannot express (Step-3, LongCat-Flash, Phi-4-mini-flash), where the generic reading gave 55 B for Step-3's
// 321 B, a misleading "num_experts_per_tok missing" for LongCat-Flash and a Mamba-less count for Phi-4-mini-flash.
//
// No network here: the configs are inlined, written from each model's published config.json fields (the shapes below
// are the checkpoints' published values; keys that size nothing are left out) and checked against the transformers
// classes cited in hf.ts / hf-layers.ts / hf-defaults.ts:
//   Qwen/Qwen3.5-35B-A3B                the qwen3_5_moe wrapper (Qwen3_5MoeTextConfig defaults are this shape, transformers 008e574)
//   LGAI-EXAONE/EXAONE-4.0-32B          Exaone4ForCausalLM, sliding_window_pattern "LLLG" (a TensorRT-LLM test copy: code-search
//                                       file id 336080770)
//   OpenGVLab/InternVL3-8B              internvl_chat with llm_config (Qwen2.5-7B shape) and an InternViT-300M vision_config
//   stepfun-ai/step3                    step3_vl with a step3_text text_config (vLLM step3_text.py, code-search file id 314833975)
//   meituan-longcat/LongCat-Flash-Chat  longcat_flash (transformers modeling_longcat_flash.py b1e784f)
//   microsoft/Phi-4-mini-flash-reasoning phi4flash (vLLM phi4flash.py 03356f8)
import { beforeAll, describe, expect, it } from 'vitest';
import { hfRefused, paramsOf, hfImport as imp, hfModel as model } from './hf-fixtures.js';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig } from '../../frontend/config/importers/hf.js';

type Obj = Record<string, unknown>;
let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const qwen35Moe = (): Obj => ({
  architectures: ['Qwen3_5MoeForConditionalGeneration'],
  model_type: 'qwen3_5_moe',
  tie_word_embeddings: false,
  text_config: {
    model_type: 'qwen3_5_moe_text',
    attn_output_gate: true,
    full_attention_interval: 4,
    head_dim: 256,
    hidden_act: 'silu',
    hidden_size: 2048,
    layer_types: Array.from({ length: 40 }, (_, i) => ((i + 1) % 4 ? 'linear_attention' : 'full_attention')),
    linear_conv_kernel_dim: 4,
    linear_key_head_dim: 128,
    linear_num_key_heads: 16,
    linear_num_value_heads: 32,
    linear_value_head_dim: 128,
    max_position_embeddings: 262144,
    moe_intermediate_size: 512,
    shared_expert_intermediate_size: 512,
    num_experts: 256,
    num_experts_per_tok: 8,
    mtp_num_hidden_layers: 1,
    num_attention_heads: 16,
    num_hidden_layers: 40,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
    vocab_size: 248320,
  },
});

describe('Qwen3.5 MoE (qwen3_5_moe_text)', () => {
  it('is read as the Qwen3-Next decoder: a gated shared expert in every layer, a gated q_proj, q/k norms', () => {
    const m = model(qwen35Moe());
    expect(m.moe).toMatchObject({
      experts: 256,
      top_k: 8,
      expert_ffn_hidden: 512,
      shared_experts: 1,
      shared_expert_ffn_hidden: 512,
      shared_expert_gate: true,
      dense_layers: 0,
    });
    expect(m.attn_output_gate).toBe(true);
    expect(m.qk_norm).toBe('head');
    expect(m.layer_types).toEqual(['linear', 'linear', 'linear', 'full']);
    expect(m.mlp_types).toBeUndefined();
    expect(m.ffn_hidden).toBe(512); // nominal: no dense layer
  });
  it('counts the text model by hand (34.66 B) and 3.46 B active', () => {
    const { vision: _tower, ...text } = model(qwen35Moe());
    const p = paramsOf(core, text);
    // by hand (modular_qwen3_5_moe.py): 40 x (norms 4096 + 256 x 3 x 2048 x 512 routed + 3 x 2048 x 512 shared + 2048
    // shared gate + 256 x 2048 router) = 32.36 B, + 10 gated attentions (27.3 M each) + 30 Gated DeltaNets (33.6 M each)
    // + 2 x 248320 x 2048 embeddings; the generic reading gave 34.45 B and 3.25 B active (no shared expert, no gate)
    expect(p.total / 1e9).toBeCloseTo(34.66, 2);
    // active: 40 x (8 routed + the shared expert + router) = 1.15 B, attention and DeltaNets 1.28 B, embeddings 1.02 B
    expect(p.active / 1e9).toBeCloseTo(3.455, 2);
  });
});

const exaone4 = (extra: Obj = {}): Obj => ({
  architectures: ['Exaone4ForCausalLM'],
  model_type: 'exaone4',
  vocab_size: 102400,
  hidden_size: 5120,
  intermediate_size: 27392,
  num_hidden_layers: 64,
  num_attention_heads: 40,
  num_key_value_heads: 8,
  head_dim: 128,
  hidden_act: 'silu',
  max_position_embeddings: 131072,
  rms_norm_eps: 1e-5,
  sliding_window: 4096,
  sliding_window_pattern: 'LLLG',
  tie_word_embeddings: false,
  ...extra,
});

describe('EXAONE 4.0 (exaone4)', () => {
  it('places the LLLG pattern: three sliding layers to one global, not 64 sliding ones', () => {
    const r = imp(exaone4());
    const m = r.config.model as Config;
    expect(m.layer_types).toEqual(['sliding', 'sliding', 'sliding', 'full']);
    expect(m.sliding_window).toBe(4096);
    expect(m.qk_norm).toBe('head');
    expect(m.mlp).toBe('gated');
    expect(r.unknown).not.toContain('sliding_window_pattern');
    // 64 x (q, k, v, o + SwiGLU + 2 norms + q/k norms) + untied embeddings: the published 32.0 B
    expect(paramsOf(core, m).total / 1e9).toBeCloseTo(32.0, 1);
  });
  it('reads an integer period, a layer_types list, and no window as full attention', () => {
    expect(model(exaone4({ sliding_window_pattern: 2 })).layer_types).toEqual(['sliding', 'full']);
    const listed = Array.from({ length: 64 }, (_, i) => (i < 32 ? 'sliding_attention' : 'full_attention'));
    expect(model(exaone4({ layer_types: listed })).layer_types).toHaveLength(64);
    expect(model(exaone4({ sliding_window: null, sliding_window_pattern: null })).layer_types).toBeUndefined();
  });
  it('refuses a pattern that is neither a period nor L / G', () => {
    expect(hfRefused(importHfConfig(exaone4({ sliding_window_pattern: 'LXG' }))).message).toMatch(
      /sliding_window_pattern/,
    );
  });
});

const internvl3 = (vision: Obj = {}): Obj => ({
  architectures: ['InternVLChatModel'],
  model_type: 'internvl_chat',
  downsample_ratio: 0.5,
  force_image_size: 448,
  template: 'internvl2_5',
  ps_version: 'v2',
  select_layer: -1,
  llm_config: {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    hidden_size: 3584,
    intermediate_size: 18944,
    num_hidden_layers: 28,
    num_attention_heads: 28,
    num_key_value_heads: 4,
    vocab_size: 151674,
    max_position_embeddings: 32768,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
    use_sliding_window: false,
  },
  vision_config: {
    model_type: 'intern_vit_6b',
    hidden_size: 1024,
    intermediate_size: 4096,
    num_attention_heads: 16,
    num_hidden_layers: 24,
    image_size: 448,
    patch_size: 14,
    qkv_bias: true,
    qk_normalization: false,
    norm_type: 'layer_norm',
    ...vision,
  },
});

describe('InternVL 3 remote-code configs (internvl_chat)', () => {
  it('imports llm_config as the language model and the InternViT-300M tower', () => {
    const m = model(internvl3());
    expect(m).toMatchObject({ layers: 28, hidden: 3584, kv_heads: 4, qkv_bias: true, vocab: 151674 });
    expect(m.vision).toMatchObject({ kind: 'internvit', layers: 24, hidden: 1024, merge: 2, image_size: 448 });
    // Qwen2.5-7B's 7.62 B + InternViT-300M + the pixel-shuffle MLP projector: InternVL3-8B's published 7.94 B
    expect(paramsOf(core, m).total / 1e9).toBeCloseTo(7.94, 1);
  });
  it('leaves InternViT-6B (RMSNorm, q/k normalisation) out with a warning rather than as the 300M kind', () => {
    const r = imp(internvl3({ norm_type: 'rms_norm', qk_normalization: true, hidden_size: 3200 }));
    expect((r.config.model as Config).vision).toBeUndefined();
    expect(r.warnings.join('\n')).toMatch(/vision_config \(intern_vit_6b\)/);
  });
});

describe('refused by name: what config v1 cannot express', () => {
  it('Step-3: factorised query over one K/V head, experts in listed layers (was counted as 55 B of 321 B)', () => {
    const e = hfRefused(
      importHfConfig({
        architectures: ['Step3VLForConditionalGeneration'],
        model_type: 'step3_vl',
        text_config: {
          model_type: 'step3_text',
          hidden_size: 7168,
          intermediate_size: 18432,
          num_attention_heads: 64,
          num_attention_groups: 1,
          num_hidden_layers: 61,
          vocab_size: 128815,
          head_dim: 256,
          share_q_dim: 2048,
          moe_num_experts: 48,
          moe_top_k: 3,
          moe_intermediate_size: 5120,
          share_expert_dim: 5120,
          moe_layers_enum: '4,5,6',
        },
      }),
    );
    expect(e.message).toMatch(/share_q_dim.*not imported/);
  });
  it('LongCat-Flash: zero-computation experts and two attentions a layer (was "num_experts_per_tok missing")', () => {
    const e = hfRefused(
      importHfConfig({
        architectures: ['LongcatFlashForCausalLM'],
        model_type: 'longcat_flash',
        hidden_size: 6144,
        num_layers: 28,
        num_attention_heads: 64,
        kv_lora_rank: 512,
        q_lora_rank: 1536,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
        n_routed_experts: 512,
        zero_expert_num: 256,
        moe_topk: 12,
        expert_ffn_hidden_size: 2048,
        ffn_hidden_size: 12288,
        vocab_size: 131072,
      }),
    );
    expect(e.path).toBe('model_type');
    expect(e.message).toMatch(/256 identity \("zero-computation"\) experts/);
  });
  it('Phi-4-mini-flash (SambaY): Mamba-1 mixers and a YOCO cross-decoder (was counted as 32 sliding layers)', () => {
    const e = hfRefused(
      importHfConfig({
        architectures: ['Phi4FlashForCausalLM'],
        model_type: 'phi4flash',
        hidden_size: 2560,
        intermediate_size: 10240,
        num_hidden_layers: 32,
        num_attention_heads: 40,
        num_key_value_heads: 20,
        mb_per_layer: 2,
        sliding_window: 512,
        vocab_size: 200064,
        tie_word_embeddings: true,
      }),
    );
    expect(e.message).toMatch(/Mamba-1.*YOCO/);
  });
});
