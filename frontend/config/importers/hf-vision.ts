// The vision tower of a multimodal transformers config.json -> config v1 model.vision. Each
// family's keys are its configuration class's (transformers): gemma3 SiglipVisionConfig with
// mm_tokens_per_image, llava CLIPVisionConfig, qwen2_vl Qwen2VLVisionConfig (depth, embed_dim, mlp_ratio),
// qwen2_5_vl Qwen2_5_VLVisionConfig (depth,
// spatial_merge_size), llama4 Llama4VisionConfig (pixel_shuffle_ratio, projector_input_dim),
// mistral3 PixtralVisionConfig (spatial_merge_size on the wrapper), internvl InternVLVisionConfig
// (downsample_ratio), qwen3_vl Qwen3VLVisionConfig (num_position_embeddings,
// deepstack_visual_indexes). The parameter formulas are the core's (core/vision.c).
import type { Config, Json } from '../../../wasm/llmem.js';
import { ImportError, isObject, type Obj } from './common.js';

// wrapper model_type (or vision model_type) -> model.vision.kind
const KIND_OF: Record<string, string> = {
  gemma3: 'siglip',
  siglip_vision_model: 'siglip',
  llava: 'clip',
  clip_vision_model: 'clip',
  qwen2_5_vl: 'qwen2_5_vl',
  // qwen2_vl/modeling_qwen2_vl.py Qwen2VisionTransformerPretrainedModel: its vision_config names the tower's width
  // embed_dim and its MLP mlp_ratio x embed_dim; its hidden_size is the language model's (the merger's output)
  qwen2_vl: 'qwen2_vl',
  llama4: 'llama4',
  mistral3: 'pixtral',
  pixtral: 'pixtral',
  internvl: 'internvit',
  // InternVL 2.5 / 3 remote code (OpenGVLab modeling_intern_vit.py InternVisionModel, the weights transformers' internvl
  // conversion reads): the same tower with LayerNorms and biased qkv; the 6B tower (RMSNorm, q/k norms) is not this kind
  internvl_chat: 'internvit',
  // qwen3_vl/modeling_qwen3_vl.py Qwen3VLVisionModel (its deepstack mergers: model.vision.deepstack);
  // qwen3_vl_moe's Qwen3VLMoeVisionModel is the same tower
  qwen3_vl: 'qwen3_vl',
  qwen3_vl_moe: 'qwen3_vl',
  // qwen3_5/modeling_qwen3_5.py Qwen3_5VisionModel (Qwen3VLVisionModel without deepstack mergers)
  qwen3_5: 'qwen3_vl',
  qwen3_5_moe: 'qwen3_vl',
  // idefics3/modeling_idefics3.py, smolvlm/modeling_smolvlm.py: a SigLIP tower, then a pixel shuffle of scale_factor and
  // one Linear to the text width (Idefics3Connector, SmolVLMConnector)
  // paligemma/modeling_paligemma.py: SiglipVisionModel and one Linear; llava_onevision/modeling_llava_onevision.py:
  // SiglipVisionModel and LLaVA's two-layer projector, with AnyRes tiles
  paligemma: 'paligemma',
  llava_onevision: 'llava_onevision',
  idefics3: 'idefics3',
  smolvlm: 'idefics3',
  idefics3_vision: 'idefics3',
  smolvlm_vision: 'idefics3',
};

/** Vision configs whose class fills keys config.json may leave out: configuration_siglip.py SiglipVisionConfig,
 * configuration_smolvlm.py SmolVLMVisionConfig and configuration_idefics3.py Idefics3VisionConfig (transformers 008e574). */
const SIGLIP_DEFAULTS = {
  hidden_size: 768,
  intermediate_size: 3072,
  num_hidden_layers: 12,
  num_attention_heads: 12,
  image_size: 224,
  patch_size: 16,
};
const VISION_DEFAULTS: Record<string, Record<string, number>> = {
  // configuration_siglip.py SiglipVisionConfig (PaliGemma's config.json leaves out image_size: 224, its 256 tokens)
  siglip: SIGLIP_DEFAULTS,
  paligemma: SIGLIP_DEFAULTS,
  llava_onevision: SIGLIP_DEFAULTS,
  idefics3: {
    hidden_size: 1152,
    intermediate_size: 3072,
    num_hidden_layers: 12,
    num_attention_heads: 16,
    image_size: 224,
    patch_size: 32,
  },
};
/** The wrapper's scale_factor when config.json leaves it out (SmolVLMConfig, Idefics3Config: 2). */
const SCALE_FACTOR_DEFAULT = 2;

// Towers read but with no model.vision kind: why they are not counted.
const NOT_A_KIND: Record<string, string> = {
  // aya_vision/modeling_aya_vision.py AyaVisionMultiModalProjector
  aya_vision: "Aya Vision's projector (a pixel shuffle, a LayerNorm and a SwiGLU MLP) is not modelled",
};
// The wrappers whose projector the siglip kind counts (Gemma 3's average pooling and one matrix)
const SIGLIP_KIND_WRAPPERS = new Set(['gemma3', 'shieldgemma2']); // ShieldGemma 2 is Gemma 3's configuration
// LLaVA wrappers around a SigLIP tower: LLaVA-OneVision's kind (the same tower, two-layer projector and image_newline;
// llava_next/modeling_llava_next.py has the image_newline too, llava/modeling_llava.py not: T parameters over)
const LLAVA_SIGLIP = new Set(['llava', 'llava_next', 'llava_next_video']);

// Towers that build one deepstack merger per vision_config.deepstack_visual_indexes entry (Qwen3.5's
// configs carry the key, empty, and its model builds none)
const DEEPSTACK = new Set(['qwen3_vl', 'qwen3_vl_moe']);

/** Qwen2.5-VL resizes each image (multiples of 28 px): without a size in the config, 448 px is assumed. */
const QWEN_IMAGE_SIZE = 448;

const side = (v: Json | undefined): number | undefined =>
  typeof v === 'number' ? v : Array.isArray(v) && typeof v[0] === 'number' ? v[0] : undefined;

/** model.vision from the wrapper json (null: no tower; a string: why it is not read). */
export function visionTower(json: Obj, wrapperType: string | undefined, notes: string[]): Config | string | null {
  const vc = json.vision_config;
  if (!isObject(vc)) return null;
  const vtype = typeof vc.model_type === 'string' ? vc.model_type : undefined;
  let kind: string | undefined = KIND_OF[wrapperType ?? ''] ?? KIND_OF[vtype ?? ''];
  // InternViT-6B (InternVL 2.5 / 3 38B and 78B) uses RMSNorm and q/k normalisation: not the InternViT-300M layers
  if (wrapperType === 'internvl_chat' && (vc.norm_type !== 'layer_norm' || vc.qk_normalization === true))
    kind = undefined;
  const siglipTower = vtype === 'siglip_vision_model';
  if (siglipTower && LLAVA_SIGLIP.has(wrapperType ?? '')) {
    kind = 'llava_onevision';
    notes.push(
      `vision: a SigLIP tower under ${wrapperType}: counted as LLaVA-OneVision's (the same tower and two-layer projector${wrapperType === 'llava' ? "; its image_newline's hidden-size parameters are one row too many here" : ''})`,
    );
  }
  // a SigLIP tower under a wrapper whose projector is not Gemma 3's (and a LLaVA wrapper read as CLIP's) is not that kind
  const mismatched =
    (kind === 'siglip' && !SIGLIP_KIND_WRAPPERS.has(wrapperType ?? '')) || (kind === 'clip' && siglipTower);
  const why =
    NOT_A_KIND[wrapperType ?? ''] ??
    (mismatched
      ? `a SigLIP tower under the ${wrapperType ?? 'unnamed'} wrapper, whose projector no model.vision kind describes`
      : 'this vision encoder is not modelled');
  if (!kind || mismatched || NOT_A_KIND[wrapperType ?? ''])
    return `vision_config (${vtype ?? 'no model_type'}): ${why}; llmem counts the text decoder only`;
  // SiglipVisionTransformer builds its attention-pooling head unless the config says vision_use_head false
  // (siglip/modeling_siglip.py: `self.use_head = True if not hasattr(config, "vision_use_head") else ...`)
  if (siglipTower && vc.vision_use_head !== false)
    notes.push(
      'vision_config.vision_use_head is not false: SigLIP builds its attention-pooling head, whose parameters (4 to 8 % of the tower) are not counted',
    );
  const defaults = VISION_DEFAULTS[kind] ?? {};
  const defaulted: string[] = [];
  const num = (...keys: string[]) => {
    for (const k of keys) if (typeof vc[k] === 'number') return vc[k] as number;
    const k = keys.find((key) => defaults[key] !== undefined);
    if (k !== undefined) defaulted.push(`${k} ${defaults[k]}`);
    return k === undefined ? undefined : defaults[k];
  };
  const layers = num('num_hidden_layers', 'depth');
  const qwen2 = kind === 'qwen2_vl';
  const hidden = qwen2 ? num('embed_dim') : num('hidden_size', 'embed_dim');
  const heads = num('num_attention_heads', 'num_heads');
  // Qwen2VLVisionConfig: mlp_ratio 4 when absent (configuration_qwen2_vl.py)
  const ffn = qwen2 && hidden ? hidden * (num('mlp_ratio') ?? 4) : num('intermediate_size');
  const patch = side(vc.patch_size) ?? num('patch_size');
  if (!layers || !hidden || !heads || !ffn || !patch)
    return `vision_config: missing its layers, hidden size, heads, intermediate size or patch size; not modelled`;
  let image = side(vc.image_size) ?? defaults.image_size;
  if (vc.image_size === undefined && defaults.image_size !== undefined)
    defaulted.push(`image_size ${defaults.image_size}`);
  if (defaulted.length > 0)
    notes.push(`vision_config: ${defaulted.join(', ')} (its configuration class's defaults, absent from config.json)`);
  if ((kind === 'qwen2_vl' || kind === 'qwen2_5_vl' || kind === 'qwen3_vl') && image === undefined) {
    image = QWEN_IMAGE_SIZE;
    notes.push(
      `vision: Qwen-VL towers resize each image; ${QWEN_IMAGE_SIZE} px assumed (${(QWEN_IMAGE_SIZE / patch) ** 2} patches); set model.vision.image_size`,
    );
  }
  if (image === undefined) return 'vision_config: no image_size; not modelled';
  const tileSize = image; // the processor's tiles are the configured size, whatever the convolution covers
  if (image % patch !== 0) {
    // a Conv2d of stride patch_size drops the last pixels: (image_size // patch_size)^2 patches (SigLIP-so400m 384 px)
    const whole = Math.floor(image / patch) * patch;
    notes.push(
      `vision: image_size ${image} is not a multiple of patch_size ${patch}; the patch convolution covers ${whole} px (${whole / patch} patches a side), read as model.vision.image_size ${whole}`,
    );
    image = whole;
  }
  const tower: Config = { kind, layers, hidden, heads, ffn_hidden: ffn, patch_size: patch, image_size: image };
  const merge = mergeOf(kind, json, vc, image / patch);
  if (merge !== undefined) tower.merge = merge;
  if (kind === 'llama4' && typeof vc.projector_input_dim === 'number') tower.projector_hidden = vc.projector_input_dim;
  if (kind === 'qwen3_vl' && typeof vc.num_position_embeddings === 'number')
    tower.positions = vc.num_position_embeddings;
  const deepstack = vc.deepstack_visual_indexes;
  if (DEEPSTACK.has(wrapperType ?? vtype ?? '') && Array.isArray(deepstack) && deepstack.length > 0) {
    tower.deepstack = deepstack.length;
    notes.push(
      `vision: ${deepstack.length} deepstack mergers (vision_config.deepstack_visual_indexes) beside the patch merger, read as model.vision.deepstack`,
    );
  }
  const tiles =
    kind === 'idefics3'
      ? tilesPerImage(vc, tileSize)
      : kind === 'llava_onevision' || wrapperType === 'llava_next' || wrapperType === 'llava_next_video'
        ? anyresTiles(json, tileSize)
        : undefined;
  if (kind === 'idefics3' && tiles === undefined && vc.size === undefined)
    notes.push(
      'vision: image splitting is not stated in config.json; the Idefics3 / SmolVLM processors split by default (the longest edge over tiles of the tower size, plus the whole image: up to 17 tower inputs an image), counted as one: set model.vision.images_per_sample',
    );
  if (tiles !== undefined) {
    tower.images_per_sample = tiles.count;
    notes.push(tiles.why);
  }
  notes.push(
    `vision: ${vtype ?? kind} tower (${layers} layers, hidden ${hidden}) and its projector read as model.vision; ${tiles ? `${tiles.count} tower inputs` : 'one image'} per sample (model.vision.images_per_sample), trained with the model (model.vision.train)`,
  );
  return tower;
}

/**
 * Idefics3 / SmolVLM image splitting (the processor's do_image_splitting, on by default): an image resized to
 * size.longest_edge is cut into tiles of max_image_size.longest_edge a side, and the whole image is added at that
 * size, each a tower input (image_processing_smolvlm.py split_image; the config.json of SmolVLM carries both sizes).
 * The largest image: ceil(size / tile)^2 tiles and the whole one.
 */
function tilesPerImage(vc: Obj, image: number): { count: number; why: string } | undefined {
  const edge = (v: Json | undefined) =>
    isObject(v) && typeof v.longest_edge === 'number' ? v.longest_edge : undefined;
  const size = edge(vc.size);
  const tile = edge(vc.max_image_size) ?? image;
  if (size === undefined || size <= tile) return undefined;
  const perSide = Math.ceil(size / tile);
  const count = perSide * perSide + 1;
  return {
    count,
    why: `vision: image splitting cuts an image of longest edge vision_config.size ${size} into ${perSide} x ${perSide} tiles of ${tile} px and adds the whole image: ${count} tower inputs for the largest image, read as model.vision.images_per_sample ${count} (set the tiles your images make; 1 without splitting)`,
  };
}

/**
 * LLaVA-NeXT / LLaVA-OneVision AnyRes (image_processing_llava_next.py / _llava_onevision.py): an image is resized to the
 * best of image_grid_pinpoints and cut into tiles of the tower's image size, and the whole image is added, each a tower
 * input (OneVision's anyres_max_9 pools the features afterwards, not the tower's inputs). The largest pinpoint's tiles.
 */
function anyresTiles(json: Obj, image: number): { count: number; why: string } | undefined {
  const pins = json.image_grid_pinpoints;
  if (!Array.isArray(pins)) return undefined;
  let most = 0;
  let pin = '';
  for (const p of pins)
    if (Array.isArray(p) && typeof p[0] === 'number' && typeof p[1] === 'number') {
      const t = Math.ceil(p[0] / image) * Math.ceil(p[1] / image);
      if (t > most) [most, pin] = [t, `${p[0]} x ${p[1]}`];
    }
  if (most === 0) return undefined;
  return {
    count: most + 1,
    why: `vision: AnyRes (image_grid_pinpoints): the largest grid, ${pin} px, is ${most} tiles of ${image} px, and the whole image is added: ${most + 1} tower inputs for the largest image of a one-image sample, read as model.vision.images_per_sample ${most + 1} (set the tiles your images make; a sample of several images gives one input each)`,
  };
}

/** Patches per side merged into one language-model token, when the config states it (a whole number). */
function mergeOf(kind: string, json: Obj, vc: Obj, patchesPerSide: number): number | undefined {
  let key: string | undefined, merge: number | undefined;
  if (kind === 'siglip' && typeof json.mm_tokens_per_image === 'number') {
    key = 'mm_tokens_per_image'; // Gemma 3: 4 x 4 average pooling to 256
    merge = patchesPerSide / Math.sqrt(json.mm_tokens_per_image);
  } else if (kind === 'idefics3') {
    key = 'scale_factor'; // the connector's pixel shuffle: scale_factor x scale_factor patches a token
    merge = typeof json.scale_factor === 'number' ? json.scale_factor : SCALE_FACTOR_DEFAULT;
  } else if (typeof vc.spatial_merge_size === 'number')
    [key, merge] = ['vision_config.spatial_merge_size', vc.spatial_merge_size];
  else if (typeof json.spatial_merge_size === 'number') [key, merge] = ['spatial_merge_size', json.spatial_merge_size];
  else {
    const ratio = typeof vc.pixel_shuffle_ratio === 'number' ? vc.pixel_shuffle_ratio : json.downsample_ratio;
    key = typeof vc.pixel_shuffle_ratio === 'number' ? 'vision_config.pixel_shuffle_ratio' : 'downsample_ratio';
    if (typeof ratio === 'number') merge = 1 / ratio; // pixel shuffle 0.5: 2 x 2 patches per token
  }
  if (merge !== undefined && !(Number.isInteger(merge) && merge >= 1 && merge <= 64))
    throw new ImportError(
      key!,
      `${key}: gives ${merge} patches per side to a token; a whole number from 1 to 64 is needed`,
    );
  return merge;
}
