// Qwen2-VL's vision tower (model.vision.kind qwen2_vl): transformers qwen2_vl/modeling_qwen2_vl.py
// Qwen2VisionTransformerPretrainedModel. Its vision_config names the tower's width embed_dim and its MLP mlp_ratio x
// embed_dim, while vision_config.hidden_size is the language model's (the patch merger's output); QuickGELU blocks.
// The config below is Qwen/Qwen2-VL-7B-Instruct's config.json, its keys (the Hub file, transformers 4.41.2).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { hfImport, paramsOf } from './hf-fixtures.js';

const QWEN2_VL_7B = {
  architectures: ['Qwen2VLForConditionalGeneration'],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  vision_start_token_id: 151652,
  vision_end_token_id: 151653,
  vision_token_id: 151654,
  image_token_id: 151655,
  video_token_id: 151656,
  hidden_act: 'silu',
  hidden_size: 3584,
  initializer_range: 0.02,
  intermediate_size: 18944,
  max_position_embeddings: 32768,
  max_window_layers: 28,
  model_type: 'qwen2_vl',
  num_attention_heads: 28,
  num_hidden_layers: 28,
  num_key_value_heads: 4,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  transformers_version: '4.41.2',
  use_cache: true,
  use_sliding_window: false,
  vision_config: {
    depth: 32,
    embed_dim: 1280,
    mlp_ratio: 4,
    num_heads: 16,
    in_chans: 3,
    hidden_size: 3584,
    patch_size: 14,
    spatial_merge_size: 2,
    spatial_patch_size: 14,
    temporal_patch_size: 2,
  },
  rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] },
  vocab_size: 152064,
};

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe('Qwen2-VL: its vision tower', () => {
  it('reads embed_dim as the width and mlp_ratio x embed_dim as the MLP, not the language hidden_size', () => {
    const r = hfImport(QWEN2_VL_7B);
    const vision = (r.config.model as Config).vision as Config;
    expect(vision).toMatchObject({ kind: 'qwen2_vl', layers: 32, hidden: 1280, heads: 16, ffn_hidden: 5120, merge: 2 });
    expect(r.notes.join('\n')).toContain('448 px assumed');
  });
  it("counts the Hub checkpoint's 8,291,375,616 parameters (Qwen2-7B's 7,615,616,512 and a 675,759,104 tower)", () => {
    // tower: Conv3d 3 x 2 x 14 x 14 x 1280 (no bias) + 32 x (4d² + 2dI + I + 9d); merger: LayerNorm(1280),
    // Linear(5120, 5120), Linear(5120, 3584), biased
    const model = (hfImport(QWEN2_VL_7B).config.model as Config) ?? {};
    expect(paramsOf(core, model).total).toBe(8291375616);
  });
  it('a trained QuickGELU tower keeps the sigmoid output beside fc1 and fc2 inputs: 2 x I bytes a token and layer more', () => {
    const model = hfImport(QWEN2_VL_7B).config.model as Config;
    const act = (kind: string) => {
      const r = core.estimate({
        model: { ...model, vision: { ...(model.vision as Config), kind, train: 'full' } },
        training: { micro_batch: 1, seq_len: 1024, recompute: 'none' },
      });
      if (!r.ok) throw new Error(r.error.message);
      return r.per_gpu.breakdown_bytes.activations;
    };
    // the same shapes as Qwen3-VL's SigLIP-shaped blocks (GELU), whose peak keeps no sigmoid output: 1,024 patches of
    // a 448 px image through 32 layers, 2 x 5120 bytes each
    expect(act('qwen2_vl') - act('qwen3_vl')).toBe(1024 * 32 * 2 * 5120);
  });
});
