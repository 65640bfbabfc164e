// SigLIP towers under the wrappers that give them their projector: PaliGemma (paligemma/modeling_paligemma.py, one
// biased Linear, every patch a token) and LLaVA-OneVision (llava_onevision/modeling_llava_onevision.py, LLaVA's
// two-layer projector, the image_newline parameter, AnyRes tiles); a SigLIP tower under any other wrapper is named as
// not modelled rather than counted with Gemma 3's projector. The configs below are google/paligemma-3b-pt-224's and
// llava-hf/llava-onevision-qwen2-0.5b-ov-hf's config.json, their memory keys (OneVision's pinpoints abridged to their
// smallest and largest).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { hfImport, paramsOf } from './hf-fixtures.js';

const PALIGEMMA_3B = {
  architectures: ['PaliGemmaForConditionalGeneration'],
  bos_token_id: 2,
  eos_token_id: 1,
  hidden_size: 2048,
  ignore_index: -100,
  image_token_index: 257152,
  model_type: 'paligemma',
  pad_token_id: 0,
  projection_dim: 2048,
  text_config: {
    hidden_size: 2048,
    intermediate_size: 16384,
    model_type: 'gemma',
    num_attention_heads: 8,
    num_hidden_layers: 18,
    num_image_tokens: 256,
    num_key_value_heads: 1,
    torch_dtype: 'float32',
    vocab_size: 257216,
  },
  torch_dtype: 'float32',
  vision_config: {
    hidden_size: 1152,
    intermediate_size: 4304,
    model_type: 'siglip_vision_model',
    num_attention_heads: 16,
    num_hidden_layers: 27,
    num_image_tokens: 256,
    patch_size: 14,
    projection_dim: 2048,
    projector_hidden_act: 'gelu_fast',
    vision_use_head: false,
  },
};

const ONEVISION_05B = {
  architectures: ['LlavaOnevisionForConditionalGeneration'],
  image_grid_pinpoints: [
    [384, 384],
    [384, 768],
    [2304, 2304],
  ],
  image_token_index: 151646,
  model_type: 'llava_onevision',
  projector_hidden_act: 'gelu',
  text_config: {
    architectures: ['Qwen2ForCausalLM'],
    hidden_size: 896,
    intermediate_size: 4864,
    max_position_embeddings: 32768,
    model_type: 'qwen2',
    num_attention_heads: 14,
    num_hidden_layers: 24,
    num_key_value_heads: 2,
    rope_theta: 1000000.0,
    tie_word_embeddings: true,
    vocab_size: 152000,
  },
  tie_word_embeddings: true,
  vision_aspect_ratio: 'anyres_max_9',
  vision_config: {
    hidden_size: 1152,
    image_size: 384,
    intermediate_size: 4304,
    model_type: 'siglip_vision_model',
    num_attention_heads: 16,
    num_hidden_layers: 26,
    patch_size: 14,
    vision_use_head: false,
  },
  vision_feature_layer: -1,
  vision_feature_select_strategy: 'full',
};

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const vision = (json: Record<string, unknown>) => (hfImport(json).config.model as Config).vision as Config | undefined;

describe('PaliGemma', () => {
  it("its SigLIP tower (image_size from SiglipVisionConfig's default, 224: 256 tokens) and one Linear", () => {
    const r = hfImport(PALIGEMMA_3B);
    expect(vision(PALIGEMMA_3B)).toMatchObject({ kind: 'paligemma', layers: 27, hidden: 1152, image_size: 224 });
    expect(r.notes.join('\n')).toContain('image_size 224 (its configuration class');
    expect(r.unknown).toEqual([]);
  });
  it('2,923,466,480 parameters: Gemma 2B 2,508,662,784, tower 412,442,352, projector 2,361,344', () => {
    expect(paramsOf(core, hfImport(PALIGEMMA_3B).config.model as Config).total).toBe(2923466480);
  });
});

describe('LLaVA-OneVision', () => {
  it('AnyRes: the largest pinpoint, 2304 px, is 36 tiles of 384 px, and the whole image: 37 tower inputs', () => {
    const r = hfImport(ONEVISION_05B);
    expect(vision(ONEVISION_05B)).toMatchObject({ kind: 'llava_onevision', layers: 26, images_per_sample: 37 });
    expect(r.notes.join('\n')).toContain('2304 x 2304 px, is 36 tiles of 384 px');
    expect(r.unknown).toEqual([]);
  });
  it('893,675,552 parameters: Qwen2-0.5B (vocabulary 152,000) 494,090,112, tower 397,747,744, projector 1,837,696', () => {
    expect(paramsOf(core, hfImport(ONEVISION_05B).config.model as Config).total).toBe(893675552);
  });
});

describe('SigLIP towers under other wrappers', () => {
  it("LLaVA and LLaVA-NeXT around SigLIP count as LLaVA-OneVision's kind; ShieldGemma 2 as Gemma 3's", () => {
    for (const model_type of ['llava', 'llava_next']) {
      const json = { ...ONEVISION_05B, model_type, architectures: [] };
      expect(vision(json)?.kind).toBe('llava_onevision');
      expect(hfImport(json).notes.join('\n')).toContain(`a SigLIP tower under ${model_type}`);
    }
    const shield = { ...PALIGEMMA_3B, model_type: 'shieldgemma2', architectures: [], mm_tokens_per_image: 256 };
    expect(vision(shield)?.kind).toBe('siglip');
  });
  it('Aya Vision (a pixel-shuffle SwiGLU projector): named as not modelled, the text decoder counted', () => {
    const json = { ...ONEVISION_05B, model_type: 'aya_vision', architectures: [] };
    expect(vision(json)).toBeUndefined();
    expect(hfImport(json).warnings.join('\n')).toMatch(
      /vision_config \(siglip_vision_model\): Aya Vision's projector .*llmem counts the text decoder only/,
    );
  });
  it("SigLIP's attention-pooling head, built unless vision_use_head is false, is said not counted", () => {
    const { vision_use_head: _, ...vc } = PALIGEMMA_3B.vision_config;
    const r = hfImport({ ...PALIGEMMA_3B, vision_config: vc });
    expect(r.notes.join('\n')).toContain('vision_use_head is not false');
  });
});
