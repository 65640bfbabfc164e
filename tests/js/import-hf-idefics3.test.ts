// Idefics3 / SmolVLM's vision tower (model.vision.kind idefics3): a SigLIP tower (idefics3/modeling_idefics3.py,
// smolvlm/modeling_smolvlm.py), a pixel shuffle of the wrapper's scale_factor and one Linear without bias to the text
// width (Idefics3Connector / SmolVLMConnector); the vision keys config.json leaves out come from SmolVLMVisionConfig's
// defaults, and image splitting makes several tower inputs an image. The config below is
// HuggingFaceTB/SmolVLM-256M-Instruct's config.json, its memory keys.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { hfImport, paramsOf } from './hf-fixtures.js';

const SMOLVLM_256M = {
  architectures: ['SmolVLMForConditionalGeneration'],
  image_token_id: 49190,
  model_type: 'smolvlm',
  scale_factor: 4,
  text_config: {
    architectures: ['VLlama3ForCausalLM'],
    head_dim: 64,
    hidden_size: 576,
    intermediate_size: 1536,
    max_position_embeddings: 8192,
    model_type: 'llama',
    num_attention_heads: 9,
    num_hidden_layers: 30,
    num_key_value_heads: 3,
    rms_norm_eps: 1e-5,
    rope_theta: 100000,
    vocab_size: 49280,
  },
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  vision_config: {
    hidden_size: 768,
    image_size: 512,
    max_image_size: { longest_edge: 512 },
    model_type: 'smolvlm_vision',
    num_attention_heads: 12,
    patch_size: 16,
    size: { longest_edge: 2048 },
    tie_word_embeddings: false,
    use_base_siglip: false,
  },
  vocab_size: 49280,
};

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe('SmolVLM / Idefics3: the vision tower and connector', () => {
  it("reads the tower, its class's defaults for the keys left out, scale_factor and the tiles of an image", () => {
    const r = hfImport(SMOLVLM_256M);
    const vision = (r.config.model as Config).vision as Config;
    expect(vision).toMatchObject({
      kind: 'idefics3',
      layers: 12,
      hidden: 768,
      heads: 12,
      ffn_hidden: 3072,
      patch_size: 16,
      image_size: 512,
      merge: 4,
      images_per_sample: 17,
    });
    const notes = r.notes.join('\n');
    expect(notes).toContain('num_hidden_layers 12, intermediate_size 3072 (its configuration class');
    expect(notes).toContain('4 x 4 tiles of 512 px and adds the whole image: 17 tower inputs');
    expect(r.unknown).toEqual([]);
  });
  it('counts 256,484,928 parameters: text 162,974,016, SigLIP tower 86,433,024, connector 7,077,888', () => {
    expect(paramsOf(core, hfImport(SMOLVLM_256M).config.model as Config).total).toBe(256484928);
  });
  it('without scale_factor the class default 2; without the processor sizes one tower input an image', () => {
    const { scale_factor: _, ...noScale } = SMOLVLM_256M;
    const vc = { ...SMOLVLM_256M.vision_config, size: undefined, max_image_size: undefined };
    const vision = (hfImport({ ...noScale, vision_config: vc }).config.model as Config).vision as Config;
    expect(vision.merge).toBe(2);
    expect(vision.images_per_sample).toBeUndefined();
  });
});
