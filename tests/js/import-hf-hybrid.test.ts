// Hugging Face config.json import of hybrid / state-space / newer MoE decoders: Granite 4.0-H
// (granitemoehybrid), Mamba-2 (mamba2), ERNIE 4.5 MoE, Seed-OSS, Qwen3-VL-MoE, DeepSeek-V3.2-Exp, and the
// refusals (LFM2's short convolutions, Falcon-H1's parallel attention + Mamba, Mamba-1). Each count is checked
// against the transformers modules' shapes (written out below) and against the model's published size.
//
// Fixtures (tests/fixtures/import/hf/<id>.json5: JSON5 so that the catalog test of <id>.json files, which
// needs a catalog entry per fixture, passes them by; Codestral's holds Python's bare Infinity). No network
// here, so none was downloaded; each is a copy from a source that can be cited:
//   deepseek-v3.2-exp   verbatim: deepseek-ai/DeepSeek-V3.2-Exp config.json as vendored in huggingface/transformers
//                       src/transformers/models/deepseek_v32/deepseek_files/config.json at a10b6fa874989cba1c451be928aa86ce59475d9c
//   mamba-codestral-7b  verbatim: mistralai/Mamba-Codestral-7B-v0.1 config.json as copied (a Python dict: True ->
//                       true, the (0.0, inf) tuple -> [0.0, Infinity]) in subho406/mlstm_kernels
//                       mlstm_kernels/utils/benchmark/benchmarks/huggingface_model_configs.py at fedbfa316d6c6758f68d54c9b95718e8f7d704aa
//                       (codestral_mamba_config); its shape is also Mamba2Config's defaults (transformers f2a39d4)
//   granite-4.0-h-tiny, granite-4.0-h-1b, lfm2-2.6b, falcon-h1-7b
//                       reconstructed: the keys a public importer's test suite copies from the published
//                       config.json files ("minus the fields the importer does not read"; code-search corpus file
//                       id 65865534003: GRANITE_H_TINY_HF, GRANITE_H_1B_HF, LFM2_2P6B_HF, FALCON_H1_7B_HF); the
//                       omitted keys (mamba_conv_bias, mamba_proj_bias, position_embedding_type, ...) take the
//                       GraniteMoeHybridConfig defaults (transformers 008f5c8)
//   qwen3-vl-30b-a3b    reconstructed: a public test's transcription of Qwen/Qwen3-VL-30B-A3B-Instruct config.json at
//                       its commit 1fc78ad, "only the fields from_hf reads" (code-search corpus file id 62478544309)
//   ernie-4.5-21b-a3b   reconstructed: Ernie4_5_MoeConfig's defaults (transformers 008e574, whose docstring checkpoint
//                       is baidu/ERNIE-4.5-21B-A3B-PT), keyed as public test copies of the published config list them
//                       (code-search corpus file ids 70957858900, 20156564511: moe_layer_end_index 27)
//   seed-oss-36b        reconstructed: a public test's copy of the Seed-OSS-36B config.json shape (hidden_size 5120 ...;
//                       code-search corpus file id 55089675296) with SeedOssConfig's defaults (transformers 008e574)
//                       for the biases and dropouts it omits
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { catalogTotal, hfFixtureDir, hfOk, hfRefused, paramsOf, readHf } from './hf-fixtures.js';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig } from '../../frontend/config/importers/hf.js';

type Obj = Record<string, unknown>;
const dir = hfFixtureDir;
const read = readHf;
const ok = hfOk;
const refused = hfRefused;

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const params = (model: Config, extra: Config = {}) => paramsOf(core, model, extra);
const catalog = catalogTotal;

// The transformers modules, counted by hand (weights + biases of each nn.Linear / nn.Conv1d / norm):
/** BambaMixer / Mamba2Mixer: in_proj h x (2 d_inner + 2 G N + H), conv1d over d_inner + 2 G N channels (k taps
 * + bias), dt_bias, A_log, D, the gated RMSNorm of d_inner, out_proj d_inner x h. */
const mamba2Mixer = (h: number, heads: number, headDim: number, groups: number, state: number, k: number) => {
  const inner = heads * headDim;
  const conv = inner + 2 * groups * state;
  return h * (inner + conv + heads) + conv * k + conv + 3 * heads + inner + inner * h;
};
/** q, k, v, o without biases */
const attention = (h: number, heads: number, kv: number, d: number) => 2 * h * heads * d + 2 * h * kv * d;
const gatedMlp = (h: number, f: number) => 3 * h * f;

describe('Granite 4.0-H (granitemoehybrid): Mamba-2 and attention layers, MoE beside a shared MLP', () => {
  it('H-Tiny: mamba layers -> ssm with their mamba_* dims, attention -> full, experts + shared MLP', () => {
    const r = ok(importHfConfig(read('granite-4.0-h-tiny')));
    const model = r.config.model as Config;
    expect(model).toMatchObject({
      layers: 40,
      hidden: 1536,
      heads: 12,
      kv_heads: 4,
      head_dim: 128,
      mlp: 'gated',
      ffn_hidden: 1024,
      tied_embeddings: true,
      // attention at layers 5, 15, 25, 35: a list of 10 that repeats
      layer_types: [...Array(5).fill('ssm'), 'full', ...Array(4).fill('ssm')],
      ssm: { heads: 48, head_dim: 64, groups: 1, state_size: 128, conv_kernel: 4, chunk_size: 256, bias: false },
      moe: { experts: 64, top_k: 6, expert_ffn_hidden: 512, shared_experts: 1, shared_expert_ffn_hidden: 1024 },
    });
    expect(model.mlp_types).toBeUndefined();
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toEqual([]);
    // GraniteMoeHybridDecoderLayer: input_layernorm, mamba or self_attn, post_attention_layernorm,
    // block_sparse_moe (64 experts of 2 x 512 in, 512 out; router 1536 x 64) + shared_mlp (2 x 1024 in, 1024 out)
    const h = 1536;
    const layer = 2 * h + 64 * gatedMlp(h, 512) + h * 64 + gatedMlp(h, 1024);
    const expected =
      36 * (layer + mamba2Mixer(h, 48, 64, 1, 128, 4)) + 4 * (layer + attention(h, 12, 4, 128)) + 100352 * h + h;
    const p = params(model);
    expect(p.total).toBe(expected);
    expect(p.total).toBe(6_939_037_248); // published: "7B total parameters"
    expect(Math.round(p.total / 1e9)).toBe(7);
  });
  it('H-1B: num_local_experts 0 builds no experts: the shared MLP is the dense MLP', () => {
    const r = ok(importHfConfig(read('granite-4.0-h-1b')));
    const model = r.config.model as Config;
    expect(model).toMatchObject({ moe: null, ffn_hidden: 4096, mlp: 'gated' });
    expect(r.unknown).toEqual([]);
    expect(r.notes.join('\n')).toMatch(/num_local_experts 0: no experts/);
    const h = 1536;
    const layer = 2 * h + gatedMlp(h, 4096);
    const expected =
      36 * (layer + mamba2Mixer(h, 48, 64, 1, 128, 4)) + 4 * (layer + attention(h, 12, 4, 128)) + 100352 * h + h;
    expect(params(model).total).toBe(expected);
    expect(expected).toBe(1_461_538_368); // IBM: "1.5B" (granite-4.0-h-1b)
  });
  it('without layer_types every layer is a Mamba-2 mixer; mamba_d_head "auto" is expand x hidden / heads', () => {
    const { layer_types: _, mamba_d_head: __, ...rest } = read('granite-4.0-h-tiny');
    const r = ok(importHfConfig(rest));
    expect(r.config.model).toMatchObject({ layer_types: ['ssm'], ssm: { heads: 48, head_dim: 64 } });
    expect(r.notes.join('\n')).toMatch(/layer_types absent: every layer a Mamba-2 mixer/);
    // no shared MLP (shared_intermediate_size 0): experts only, the dense width nominal
    const noShared = ok(importHfConfig({ ...read('granite-4.0-h-tiny'), shared_intermediate_size: 0 })).config
      .model as Config;
    expect(noShared).toMatchObject({ ffn_hidden: 512, moe: { shared_experts: 0, shared_expert_ffn_hidden: 0 } });
    expect(params(noShared).total).toBe(
      params(ok(importHfConfig(read('granite-4.0-h-tiny'))).config.model as Config).total - 40 * gatedMlp(1536, 1024),
    );
    const bad = refused(importHfConfig({ ...read('granite-4.0-h-tiny'), mamba_d_head: 32 }));
    expect(bad.path).toBe('mamba_d_head');
    expect(refused(importHfConfig({ ...read('granite-4.0-h-tiny'), layer_types: ['mamba'] })).path).toBe('layer_types');
  });
});

describe('Mamba-2 (mamba2): every layer a Mamba-2 mixer, no attention, no MLP', () => {
  it('Mamba-Codestral-7B: 7,285,403,648 parameters (was 21.7B as a transformer)', () => {
    const r = ok(importHfConfig(read('mamba-codestral-7b')));
    const model = r.config.model as Config;
    expect(model).toMatchObject({
      layers: 64,
      hidden: 4096,
      layer_types: ['ssm'],
      mlp_types: ['none'],
      tied_embeddings: false,
      norm: 'rmsnorm',
      ssm: { heads: 128, head_dim: 64, groups: 8, state_size: 128, conv_kernel: 4, chunk_size: 256, bias: false },
      moe: null,
    });
    expect(r.unknown).toEqual([]);
    expect(r.warnings.join('\n')).toMatch(/residual_in_fp32 true/);
    // Mamba2Block: norm + mixer; Mamba2Model: embeddings, norm_f; lm_head untied
    const h = 4096;
    const expected = 64 * (h + mamba2Mixer(h, 128, 64, 8, 128, 4)) + h + 2 * 32768 * h;
    const p = params(model);
    expect(p.total).toBe(expected);
    expect(p.total).toBe(7_285_403_648); // published: 7.3B (Mamba-Codestral-7B)
  });
  it('a head layout that does not make expand x hidden_size channels is refused', () => {
    const e = refused(importHfConfig({ ...read('mamba-codestral-7b'), num_heads: 100 }));
    expect(e.path).toBe('head_dim');
    expect(e.message).toMatch(/8192 channels/);
  });
});

describe('ERNIE 4.5 MoE (ernie4_5_moe)', () => {
  it('ERNIE-4.5-21B-A3B: 64 experts, top-6, 2 shared experts as one MLP, a dense first layer', () => {
    const r = ok(importHfConfig(read('ernie-4.5-21b-a3b')));
    const model = r.config.model as Config;
    expect(model).toMatchObject({
      mlp: 'gated',
      bias: false,
      tied_embeddings: true,
      head_dim: 128,
      moe: {
        experts: 64,
        top_k: 6,
        expert_ffn_hidden: 1536,
        shared_experts: 1,
        shared_expert_ffn_hidden: 3072,
        dense_layers: 1,
        router_bias: true,
      },
    });
    expect(r.unknown).toEqual([]);
    // Ernie4_5_MoeDecoderLayer: attention (20 x 128 q/o, 4 x 128 k/v), two norms; layer 0 a 12288 MLP,
    // layers 1-27 64 experts of 1536 + gate 2560 x 64 + e_score_correction_bias 64 + shared MLP of 2 x 1536
    const h = 2560;
    const base = 28 * (attention(h, 20, 4, 128) + 2 * h);
    const moeLayer = 64 * gatedMlp(h, 1536) + h * 64 + 64 + gatedMlp(h, 3072);
    const expected = base + gatedMlp(h, 12288) + 27 * moeLayer + 103424 * h + h;
    const p = params(model);
    expect(p.total).toBe(expected);
    expect(p.total).toBe(21_825_437_888); // published: 21B total, 3B activated
    expect(p.active).toBeGreaterThan(3e9);
    expect(p.active).toBeLessThan(3.5e9);
  });
  it('moe_layer_interval / start / end place the experts; use_bias biases every linear and lm_head', () => {
    const r = ok(importHfConfig({ ...read('ernie-4.5-21b-a3b'), moe_layer_interval: 2, moe_layer_end_index: -1 }));
    expect(r.config.model).toMatchObject({ mlp_types: ['dense', 'moe'], moe: { dense_layers: 0 } });
    const b = ok(importHfConfig({ ...read('ernie-4.5-21b-a3b'), use_bias: true })).config.model;
    expect(b).toMatchObject({ bias: true, lm_head_bias: true });
  });
});

describe('Seed-OSS (seed_oss): attention_out_bias', () => {
  it('Seed-OSS-36B: q/k/v biased (attention_bias), o_proj not (attention_out_bias false)', () => {
    const r = ok(importHfConfig(read('seed-oss-36b')));
    const model = r.config.model as Config;
    expect(model).toMatchObject({ bias: false, qkv_bias: true, mlp: 'gated' });
    expect(model.o_bias).toBeUndefined();
    expect(r.config.training).toEqual({ dropout: 0.1 });
    expect(r.unknown).toEqual([]);
    const h = 5120;
    const qkvBias = 80 * 128 + 2 * 8 * 128;
    const expected = 64 * (attention(h, 80, 8, 128) + qkvBias + gatedMlp(h, 27648) + 2 * h) + h + 2 * 155136 * h;
    const p = params(model);
    expect(p.total).toBe(expected);
    expect(p.total).toBe(36_151_104_512); // published: 36B
    const withOut = ok(importHfConfig({ ...read('seed-oss-36b'), attention_out_bias: true })).config.model as Config;
    expect(withOut.o_bias).toBe(true);
    expect(params(withOut).total - p.total).toBe(64 * h);
  });
});

describe('Qwen3-VL-MoE (qwen3_vl_moe wrapper, qwen3_vl_moe_text decoder)', () => {
  it('Qwen3-VL-30B-A3B: read as Qwen3-MoE with q/k norms; the decoder is Qwen3-30B-A3B', () => {
    const r = ok(importHfConfig(read('qwen3-vl-30b-a3b')));
    const model = r.config.model as Config;
    expect(model).toMatchObject({
      qk_norm: 'head',
      moe: { experts: 128, top_k: 8, expert_ffn_hidden: 768, dense_layers: 0 },
      vision: { kind: 'qwen3_vl', layers: 27, deepstack: 3 },
    });
    expect(r.unknown).toEqual([]);
    expect(r.notes.join('\n')).toContain('model_type "qwen3_vl_moe_text" read as qwen3_moe');
    const { vision: _, ...text } = model;
    expect(params(text).total).toBe(catalog('qwen3-30b-a3b'));
    expect(params(model).total).toBe(31_070_754_032); // published: 31.1B
  });
  it('decoder_sparse_step and mlp_only_layers are read', () => {
    const json = read('qwen3-vl-30b-a3b');
    const text = { ...(json.text_config as Obj), decoder_sparse_step: 2, mlp_only_layers: [] };
    expect(ok(importHfConfig({ ...json, text_config: text })).config.model).toMatchObject({
      mlp_types: ['dense', 'moe'],
    });
  });
});

describe('DeepSeek-V3.2-Exp (deepseek_v32)', () => {
  it("DeepSeek-V3's shape (MLA, router bias, 3 dense layers); the lightning indexer is named with its parameters", () => {
    const r = ok(importHfConfig(read('deepseek-v3.2-exp')));
    const model = r.config.model as Config;
    const v3 = ok(importHfConfig(JSON.parse(readFileSync(join(dir, 'deepseek-v3.json'), 'utf8')))).config
      .model as Config;
    expect({ ...model, max_positions: 0 }).toEqual({ ...v3, max_positions: 0 });
    expect(r.unknown).toEqual([]);
    // DeepseekV32Indexer per layer: wq_b 1536 x 64*128, wk 7168 x 128, k_norm 2 x 128, weights_proj 7168 x 64
    const indexer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64;
    expect(r.warnings.join('\n')).toContain(`its ${(61 * indexer).toLocaleString('en-US')} parameters`);
    const p = params(model);
    // the main model: DeepSeek-V3's 671B (671,026,419,200), the indexers (0.85B) beside it
    expect(p.total).toBe(catalog('deepseek-v3'));
    // the published 685B: + the MTP module (Megatron-LM's, as model.mtp_layers counts it), the 62 indexers and
    // the MTP module's own copies of the embedding and the output head in the checkpoint
    const withMtp = params({ ...model, mtp_layers: 1 }, { parallel: { engine: 'megatron' } }).total;
    const checkpoint = withMtp + 62 * indexer + 2 * 129280 * 7168;
    expect(Math.abs(checkpoint / 685e9 - 1)).toBeLessThan(0.001);
  });
});

describe('layers config v1 has no kind for: refused, never miscounted', () => {
  it('LFM2: the "conv" layers (Lfm2ShortConv) are named', () => {
    const e = refused(importHfConfig(read('lfm2-2.6b')));
    expect(e.path).toBe('layer_types');
    expect(e.message).toMatch(/22 "conv" layers are LFM2's gated short convolution \(Lfm2ShortConv/);
    // an older config: full_attn_idxs, no layer_types (Lfm2Config builds the list from it)
    const { layer_types: _, ...old } = read('lfm2-2.6b');
    const f = refused(importHfConfig({ ...old, full_attn_idxs: [2, 5, 9, 13, 17, 21, 24, 27] }));
    expect(f.message).toMatch(/22 "conv" layers/);
    // a "conv" entry in any other family's list
    const g = refused(importHfConfig({ ...read('seed-oss-36b'), layer_types: Array(64).fill('conv') }));
    expect(g.message).toMatch(/"conv" is LFM2's gated short convolution/);
  });
  it('Falcon-H1: attention and Mamba-2 in parallel in every layer', () => {
    const e = refused(importHfConfig(read('falcon-h1-7b')));
    expect(e.path).toBe('model_type');
    expect(e.message).toMatch(/attention and a Mamba-2 mixer in parallel/);
  });
  it('Mamba-1 (mamba, falcon_mamba): not the Mamba-2 mixer of model.ssm', () => {
    const mamba1 = { hidden_size: 4096, num_hidden_layers: 64, state_size: 16, expand: 16, vocab_size: 65024 };
    for (const model_type of ['mamba', 'falcon_mamba'])
      expect(refused(importHfConfig({ ...mamba1, model_type })).message).toMatch(/Mamba-1 mixers/);
  });
});

describe('a config.json naming only its model_type takes the class defaults (hf-defaults.ts)', () => {
  const rows: [string, Config][] = [
    ['granitemoehybrid', { layer_types: ['ssm'], ssm: { heads: 128, head_dim: 64, state_size: 256, groups: 1 } }],
    ['mamba2', { layer_types: ['ssm'], mlp_types: ['none'], ssm: { heads: 128, head_dim: 64, groups: 8 } }],
    ['ernie4_5_moe', { tied_embeddings: true, moe: { experts: 64, top_k: 6, dense_layers: 1 } }],
    ['seed_oss', { qkv_bias: true, heads: 80, kv_heads: 8, head_dim: 128 }],
    ['qwen3_vl_moe_text', { qk_norm: 'head', tied_embeddings: true, moe: { experts: 60, top_k: 4 } }],
    ['deepseek_v32', { max_positions: 163840, moe: { experts: 256, dense_layers: 3, router_bias: true } }],
  ];
  for (const [model_type, shape] of rows)
    it(model_type, () => {
      const model = ok(importHfConfig({ model_type })).config.model as Config;
      expect(model).toMatchObject(shape);
      expect(params(model).total).toBeGreaterThan(0);
    });
});
