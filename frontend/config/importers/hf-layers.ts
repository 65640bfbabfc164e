// Per-layer kinds from a transformers config.json: model.layer_types (each layer's mixer) and
// model.mlp_types (its MLP), as the shortest list that repeats over the layers, with the windows
// and the recurrent mixers' dimensions. Each family's rule is its modeling/configuration file's:
//   gemma2 Gemma2DecoderLayer (is_sliding = not layer_idx % 2), gemma3 Gemma3TextConfig
//   (sliding_window_pattern: sliding iff (i + 1) % pattern != 0), qwen2 / qwen3 (use_sliding_window,
//   max_window_layers), any other class with sliding_window (Mistral, Phi-3: every layer), qwen3_next Qwen3NextConfig (full_attention_interval,
//   linear_*; transformers 008e574), qwen3_5_text Qwen3_5TextConfig (the same rule; 008e574), nemotron_h NemotronHConfig (hybrid_override_pattern / layers_block_type:
//   M Mamba-2, * attention, - MLP, E MoE; transformers 13923c6), llama4 Llama4TextConfig
//   (no_rope_layers: 1 = RoPE + chunked attention, 0 = NoPE global; interleave_moe_layer_step).
// A config's own layer_types list wins over the family's rule.
import { LAYER_MIXERS } from '../../../wasm/generated.js';
import type { Config, Json } from '../../../wasm/llmem.js';
import { ImportError } from './common.js';

type Get = (...keys: string[]) => Json | undefined;
type Int = (keys: string[], required: boolean) => number | undefined;
type Flag = (key: string) => boolean | undefined;

export interface LayerContext {
  family: string;
  layers: number;
  get: Get;
  int: Int;
  flag: Flag;
  model: Config;
  warnings: string[];
  notes: string[];
}

/** The core's cap on a list's entries (core/llmem.h LLMEM_MAX_PATTERN; the field table's max, which
 * tests/js/import-hf.test.ts checks it against: the generated table stays out of the page's first load). */
export const MAX_PATTERN = 256;

/** The shortest prefix p of `list` with list[i] === p[i % p.length] for every i (the core repeats it). */
export function shortestPattern<T>(list: readonly T[]): T[] {
  for (let n = 1; n < list.length; n++) if (list.every((v, i) => v === list[i % n])) return list.slice(0, n);
  return [...list];
}

// transformers layer type names -> [mixer, mlp] (null: the family's MLP rule)
const HF_TYPES: Record<string, [string, string | null]> = {
  full_attention: ['full', null],
  sliding_attention: ['sliding', null],
  chunked_attention: ['chunked', null],
  linear_attention: ['linear', null],
};
// Nemotron-H: one mixer or one MLP per block; its "linear_attention" is the Mamba-2 mixer
const NEMOTRON_TYPES: Record<string, [string, string | null]> = {
  linear_attention: ['ssm', 'none'],
  mamba: ['ssm', 'none'],
  full_attention: ['full', 'none'],
  attention: ['full', 'none'],
  mlp: ['none', 'dense'],
  moe: ['none', 'moe'],
};
const NEMOTRON_CHARS: Record<string, string> = { M: 'linear_attention', '*': 'full_attention', '-': 'mlp', E: 'moe' };

/** Sets model.layer_types / mlp_types (as short as they repeat) and the keys the kinds need. */
export function layerKinds(c: LayerContext): void {
  const types = typesOf(c);
  if (types) setLists(c, types);
  const window = c.get('sliding_window');
  const mixers = (c.model.layer_types as string[] | undefined) ?? [];
  if (mixers.includes('sliding')) {
    if (typeof window !== 'number')
      throw new ImportError('sliding_window', 'sliding_window: missing for sliding layers');
    c.model.sliding_window = window;
  } else if (typeof window === 'number' && c.get('use_sliding_window') === false)
    c.notes.push(`sliding_window ${window} is disabled (use_sliding_window false): full attention`);
  if (mixers.includes('chunked')) c.model.attention_chunk = c.int(['attention_chunk_size'], true)!;
  if (mixers.includes('linear')) linearDims(c);
  if (mixers.includes('ssm')) ssmDims(c);
}

/** Each layer's [mixer, mlp] from the family's keys; null: every layer full attention (no lists). */
function typesOf(c: LayerContext): [string, string | null][] | null {
  const { family, layers, get } = c;
  const listed = family === 'nemotron_h' ? get('layers_block_type') : get('layer_types');
  if (Array.isArray(listed)) {
    // the interval is what the class builds a missing list from; a listed config gives both, the list wins
    if (family === 'qwen3_next' || family === 'qwen3_5_text') get('full_attention_interval');
    return mapNames(c, listed, family === 'nemotron_h' ? NEMOTRON_TYPES : HF_TYPES);
  }
  const range = Array.from({ length: layers }, (_, i) => i);
  const window = get('sliding_window');
  switch (family) {
    case 'gemma2':
      return range.map((i) => [i % 2 === 0 ? 'sliding' : 'full', null]);
    case 'gemma3_text': {
      const every = c.int(['sliding_window_pattern'], false) ?? 6;
      return range.map((i) => [(i + 1) % every !== 0 ? 'sliding' : 'full', null]);
    }
    case 'olmo3': // Olmo3Config: sliding iff (i + 1) % 4 != 0
      return typeof window === 'number' ? range.map((i) => [(i + 1) % 4 !== 0 ? 'sliding' : 'full', null]) : null;
    case 'qwen3_next':
    case 'qwen3_5_text': {
      const every = c.int(['full_attention_interval'], false) ?? 4;
      return range.map((i) => [(i + 1) % every !== 0 ? 'linear' : 'full', null]);
    }
    case 'nemotron_h': {
      const pattern = get('hybrid_override_pattern');
      if (typeof pattern !== 'string')
        throw new ImportError(
          'hybrid_override_pattern',
          'hybrid_override_pattern: missing (the layers of a Nemotron-H model)',
        );
      const names = [...pattern].map((ch) => {
        const name = NEMOTRON_CHARS[ch];
        if (!name)
          throw new ImportError('hybrid_override_pattern', `hybrid_override_pattern: "${ch}" is not one of M, *, -, E`);
        return name;
      });
      return mapNames(c, names, NEMOTRON_TYPES);
    }
    case 'llama4_text': {
      const rope = get('no_rope_layers');
      const ropeAt = (i: number) => (Array.isArray(rope) ? rope[i] !== 0 : (i + 1) % 4 !== 0);
      const chunked = typeof get('attention_chunk_size') === 'number';
      return range.map((i) => [ropeAt(i) && chunked ? 'chunked' : 'full', null]);
    }
    case 'qwen2':
    case 'qwen2_moe':
    case 'qwen3':
    case 'qwen3_moe': {
      if (typeof window !== 'number' || c.flag('use_sliding_window') !== true) return null;
      const from = c.int(['max_window_layers'], false) ?? layers;
      return range.map((i) => [i >= from ? 'sliding' : 'full', null]);
    }
    default: // a window on every layer unless switched off (Mistral, Phi-3, Starcoder2 attention classes)
      return typeof window === 'number' && c.flag('use_sliding_window') !== false
        ? range.map(() => ['sliding', null])
        : null;
  }
}

function mapNames(c: LayerContext, names: Json[], table: Record<string, [string, string | null]>) {
  const key = c.family === 'nemotron_h' ? 'layers_block_type' : 'layer_types';
  if (names.length !== c.layers)
    throw new ImportError(key, `${key}: ${names.length} entries for ${c.layers} layers (num_hidden_layers)`);
  return names.map((n) => {
    const kind = typeof n === 'string' ? table[n] : undefined;
    if (!kind)
      throw new ImportError(
        key,
        `${key}: ${JSON.stringify(n)} is not modelled (known: ${Object.keys(table).join(', ')})`,
      );
    return kind;
  });
}

function setLists(c: LayerContext, types: [string, string | null][]): void {
  const mixers = shortestPattern(types.map((t) => t[0]));
  if (mixers.length > MAX_PATTERN)
    throw new ImportError('layer_types', `layer_types: the layers do not repeat within ${MAX_PATTERN} entries`);
  if (!(mixers.length === 1 && mixers[0] === 'full')) c.model.layer_types = mixers;
  if (types.some((t) => t[1] !== null)) {
    const mlps = shortestPattern(types.map((t) => t[1] ?? 'dense'));
    if (mlps.length > MAX_PATTERN)
      throw new ImportError('layer_types', `layer_types: the MLPs do not repeat within ${MAX_PATTERN} entries`);
    c.model.mlp_types = mlps;
  }
  const count = (k: string) => types.filter((t) => t[0] === k).length;
  const parts = LAYER_MIXERS.filter((k) => count(k) > 0);
  if (parts.length > 1 || parts[0] !== 'full')
    c.notes.push(`layer kinds: ${parts.map((k) => `${count(k)} ${k}`).join(', ')} of ${types.length} layers`);
}

/** Gated DeltaNet (Qwen3NextGatedDeltaNet): heads and dims of the linear-attention layers. */
function linearDims(c: LayerContext): void {
  c.model.linear = {
    key_heads: c.int(['linear_num_key_heads'], true)!,
    value_heads: c.int(['linear_num_value_heads'], true)!,
    key_head_dim: c.int(['linear_key_head_dim'], true)!,
    value_head_dim: c.int(['linear_value_head_dim'], true)!,
    conv_kernel: c.int(['linear_conv_kernel_dim'], true)!,
  };
}

/** Mamba-2 (NemotronHMamba2Mixer): heads, head dim, groups, state, conv, chunk, biases. */
function ssmDims(c: LayerContext): void {
  const heads = c.int(['mamba_num_heads'], true)!;
  const expand = c.int(['expand', 'mamba_expand'], false);
  const headDim = c.int(['mamba_head_dim'], true)!;
  if (expand !== undefined && heads * headDim !== expand * (c.model.hidden as number))
    c.notes.push(`mamba_num_heads x mamba_head_dim = ${heads * headDim} (expand ${expand} is not used by the mixer)`);
  c.get('mamba_hidden_act'); // the mixer's SiLU
  c.get('rescale_prenorm_residual'); // an initialisation rule
  const projBias = c.flag('mamba_proj_bias');
  if (projBias && !c.flag('use_bias'))
    c.notes.push(
      'mamba_proj_bias true: transformers NemotronHMamba2Mixer biases in_proj / out_proj by use_bias (false)',
    );
  if (c.flag('use_mamba_kernels') === false)
    c.warnings.push(
      'use_mamba_kernels false: the torch scan keeps more for the backward than the fused kernels llmem models (mamba_split_conv1d_scan_combined)',
    );
  if (c.flag('residual_in_fp32'))
    c.warnings.push(
      'residual_in_fp32 true: the fp32 residual stream is not modelled (llmem keeps it in the activation dtype)',
    );
  c.model.ssm = {
    heads,
    head_dim: headDim,
    groups: c.int(['n_groups', 'mamba_n_groups'], true)!,
    state_size: c.int(['ssm_state_size'], true)!,
    conv_kernel: c.int(['conv_kernel', 'mamba_d_conv'], true)!,
    chunk_size: c.int(['chunk_size', 'mamba_chunk_size'], false) ?? 128,
    bias: c.flag('use_bias') ?? false,
    conv_bias: c.flag('use_conv_bias') ?? true,
  };
}
