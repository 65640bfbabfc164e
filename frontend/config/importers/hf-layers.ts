// Per-layer kinds from a transformers config.json: model.layer_types (each layer's mixer) and
// model.mlp_types (its MLP), as the shortest list that repeats over the layers, with the windows
// and the recurrent mixers' dimensions. Each family's rule is its modeling/configuration file's:
//   gemma2 Gemma2DecoderLayer (is_sliding = not layer_idx % 2), gemma3 Gemma3TextConfig
//   (sliding_window_pattern: sliding iff (i + 1) % pattern != 0), qwen2 / qwen3 (use_sliding_window,
//   max_window_layers), any other class with sliding_window (Mistral, Phi-3: every layer), qwen3_next Qwen3NextConfig (full_attention_interval,
//   linear_*; transformers 008e574), qwen3_5_text Qwen3_5TextConfig (the same rule; 008e574), nemotron_h NemotronHConfig (hybrid_override_pattern / layers_block_type:
//   M Mamba-2, * attention, - MLP, E MoE; transformers 13923c6), llama4 Llama4TextConfig
//   (no_rope_layers: 1 = RoPE + chunked attention, 0 = NoPE global; interleave_moe_layer_step),
//   granitemoehybrid GraniteMoeHybridConfig (layer_types "mamba" / "attention", each with the MoE MLP; None: every
//   layer "mamba"; transformers 008f5c8), mamba2 Mamba2Block (a Mamba-2 mixer and no MLP in every layer; f2a39d4),
//   cohere2 Cohere2Config (sliding iff (i + 1) % sliding_window_pattern != 0, pattern 4; transformers 008e574),
//   exaone4 Exaone4Config (sliding_window_pattern: a period, or a string of L / G; exaone4Layers; transformers 008e574).
// A config's own layer_types list wins over the family's rule.
import { LAYER_MIXERS } from '../../../wasm/generated.js';
import type { Config, Json } from '../../../wasm/llmem.js';
import { ImportError } from './common.js';

export type Get = (...keys: string[]) => Json | undefined;
export type Int = (keys: string[], required: boolean) => number | undefined;
export type Flag = (key: string) => boolean | undefined;

/** What a family's reader sees of the config.json being read (hf.ts), and writes to. */
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
/** A hybrid pattern's symbol (Nemotron-H's hybrid_override_pattern, Megatron's --hybrid-layer-pattern: the same
 * M Mamba-2, * attention, - MLP, E MoE) as its layer's [mixer, mlp]; undefined for a symbol config v1 cannot place. */
export function hybridSymbol(ch: string): [string, string] | undefined {
  const kind = NEMOTRON_CHARS[ch];
  return kind === undefined ? undefined : (NEMOTRON_TYPES[kind] as [string, string]);
}
// GraniteMoeHybridDecoderLayer (modular_granitemoehybrid.py, transformers 403a367): a Mamba-2 mixer (BambaMixer) or
// attention, then the MoE block beside the shared MLP in every layer (the family's MLP rule)
const GRANITE_TYPES: Record<string, [string, string | null]> = {
  mamba: ['ssm', null],
  attention: ['full', null],
};
// Layer kinds some config.json lists name that no config v1 mixer describes: refused with the reason, not miscounted
const UNMODELLED_KINDS: Record<string, string> = {
  conv: "LFM2's gated short convolution (Lfm2ShortConv: in_proj to B, C and x, a depthwise causal conv, out_proj), which no config v1 mixer describes",
  mamba:
    'a Mamba layer, which this model type does not place (config v1 reads Mamba-2 layers of nemotron_h, granitemoehybrid and mamba2 configs)',
};

/** The per-layer list a family's config.json names, and the transformers layer names it holds. */
function listOf(family: string): { keys: string[]; table: Record<string, [string, string | null]> } {
  if (family === 'nemotron_h') return { keys: ['layers_block_type'], table: NEMOTRON_TYPES };
  // GraniteMoeHybridConfig.attribute_map: layers_block_type -> layer_types
  if (family === 'granitemoehybrid') return { keys: ['layer_types', 'layers_block_type'], table: GRANITE_TYPES };
  return { keys: ['layer_types'], table: HF_TYPES };
}

/** Sets model.layer_types / mlp_types (as short as they repeat) and the keys the kinds need. */
export function layerKinds(c: LayerContext): void {
  let types = typesOf(c);
  const window = c.get('sliding_window');
  // A window of max_position_embeddings tokens or more never drops a key (Phi-3.5-mini: 262144 over 131072 positions;
  // Phi3Attention passes config.sliding_window as is): those layers are full attention
  const maxPos = c.model.max_positions;
  if (
    types?.some((t) => t[0] === 'sliding') &&
    typeof window === 'number' &&
    typeof maxPos === 'number' &&
    window >= maxPos
  ) {
    c.notes.push(
      `sliding_window ${window} is at least max_position_embeddings ${maxPos}: no key falls outside it; full attention`,
    );
    types = types.map(([m, mlp]) => [m === 'sliding' ? 'full' : m, mlp]);
  }
  if (types) setLists(c, types);
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
  const { keys, table } = listOf(family);
  const listed = get(...keys);
  if (Array.isArray(listed)) {
    // the interval is what the class builds a missing list from; a listed config gives both, the list wins
    if (family === 'qwen3_next' || family === 'qwen3_5_text') get('full_attention_interval');
    return mapNames(c, listed, table);
  }
  const range = Array.from({ length: layers }, (_, i) => i);
  const window = get('sliding_window');
  switch (family) {
    case 'granitemoehybrid': // GraniteMoeHybridConfig.layers_block_type: ["mamba"] * num_hidden_layers without a list
      c.notes.push('layer_types absent: every layer a Mamba-2 mixer (GraniteMoeHybridConfig.layers_block_type)');
      return range.map(() => ['ssm', null]);
    case 'mamba2': // Mamba2Block: RMSNorm, then the Mamba2Mixer; no attention, no MLP
      return range.map(() => ['ssm', 'none']);
    case 'gemma2':
      return range.map((i) => [i % 2 === 0 ? 'sliding' : 'full', null]);
    case 'gemma3_text': {
      const every = c.int(['sliding_window_pattern'], false) ?? 6;
      return range.map((i) => [(i + 1) % every !== 0 ? 'sliding' : 'full', null]);
    }
    case 'cohere2': {
      // Cohere2Config (transformers 008e574): without layer_types, sliding iff (i + 1) % sliding_window_pattern (4)
      const every = Math.max(1, c.int(['sliding_window_pattern'], false) ?? 4);
      return typeof window === 'number' ? range.map((i) => [(i + 1) % every !== 0 ? 'sliding' : 'full', null]) : null;
    }
    case 'exaone4':
      return exaone4Layers(c, window, range);
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
      // Llama4TextConfig (transformers configuration_llama4.py, code-search file id 46017308): no_rope_layers None or
      // [] ("invalid as we cannot have 0 layers") is the default, RoPE iff (i + 1) % no_rope_layer_interval != 0
      const rope = get('no_rope_layers');
      const every = c.int(['no_rope_layer_interval'], false) ?? 4;
      const ropeAt = (i: number) => (Array.isArray(rope) && rope.length > 0 ? rope[i] !== 0 : (i + 1) % every !== 0);
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

/** Exaone4Config (modular_exaone4.py, transformers 008e574) without layer_types: no sliding_window, every layer full
 * attention; an int sliding_window_pattern p, sliding iff (i + 1) % p != 0; a string of L (local) and G (global) repeated
 * from layer 0, the last layer always global (the class docstring's rule: EXAONE 4.0's "LLLG"). */
function exaone4Layers(c: LayerContext, window: Json | undefined, range: number[]): [string, string | null][] | null {
  const pattern = c.get('sliding_window_pattern');
  if (typeof window !== 'number') return null;
  if (typeof pattern === 'number' && Number.isInteger(pattern) && pattern > 0)
    return range.map((i) => [(i + 1) % pattern !== 0 ? 'sliding' : 'full', null]);
  if (typeof pattern === 'string' && /^[LG]+$/.test(pattern))
    return range.map((i) => [pattern[i % pattern.length] === 'L' && i !== range.length - 1 ? 'sliding' : 'full', null]);
  throw new ImportError(
    'sliding_window_pattern',
    `sliding_window_pattern: ${JSON.stringify(pattern ?? null)} is neither a positive whole number nor a string of L and G (and there is no layer_types list)`,
  );
}

function mapNames(c: LayerContext, names: Json[], table: Record<string, [string, string | null]>) {
  const key = c.family === 'nemotron_h' ? 'layers_block_type' : 'layer_types';
  if (names.length !== c.layers)
    throw new ImportError(key, `${key}: ${names.length} entries for ${c.layers} layers (num_hidden_layers)`);
  return names.map((n) => {
    const kind = typeof n === 'string' ? table[n] : undefined;
    if (!kind) {
      const why = typeof n === 'string' ? UNMODELLED_KINDS[n] : undefined;
      throw new ImportError(
        key,
        why
          ? `${key}: ${JSON.stringify(n)} is ${why}; not imported rather than counted as another layer kind`
          : `${key}: ${JSON.stringify(n)} is not modelled (known: ${Object.keys(table).join(', ')})`,
      );
    }
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

// The Mamba-2 keys of each family's config class, and the mixer's inner width (d_inner):
//   nemotron_h NemotronHMamba2Mixer (transformers 13923c6): mamba_num_heads * mamba_head_dim (expand unused);
//   granitemoehybrid BambaMixer via GraniteMoeHybridMambaLayer (modeling_granitemoehybrid.py 1c0ff25):
//     mamba_expand * hidden_size (the config class checks it is mamba_n_heads * mamba_d_head);
//   mamba2 Mamba2Mixer (modeling_mamba2.py 4711664): expand * hidden_size, reshaped into num_heads x head_dim.
// Each builds in_proj (+bias), conv1d over x, B, C (+bias), dt_bias, A_log, D, a gated RMSNorm, out_proj (+bias).
interface SsmKeys {
  heads: string;
  headDim: string;
  groups: string[];
  state: string;
  conv: string[];
  chunk: string[];
  bias: string;
  convBias: string;
  expand: string[];
  /** d_inner is expand * hidden_size (else heads * head_dim) */
  innerFromExpand: boolean;
}
const SSM_KEYS: Record<string, SsmKeys> = {
  nemotron_h: {
    heads: 'mamba_num_heads',
    headDim: 'mamba_head_dim',
    groups: ['n_groups', 'mamba_n_groups'],
    state: 'ssm_state_size',
    conv: ['conv_kernel', 'mamba_d_conv'],
    chunk: ['chunk_size', 'mamba_chunk_size'],
    bias: 'use_bias',
    convBias: 'use_conv_bias',
    expand: ['expand', 'mamba_expand'],
    innerFromExpand: false,
  },
  granitemoehybrid: {
    heads: 'mamba_n_heads',
    headDim: 'mamba_d_head',
    groups: ['mamba_n_groups'],
    state: 'mamba_d_state',
    conv: ['mamba_d_conv'],
    chunk: ['mamba_chunk_size'],
    bias: 'mamba_proj_bias',
    convBias: 'mamba_conv_bias',
    expand: ['mamba_expand'],
    innerFromExpand: true,
  },
  mamba2: {
    heads: 'num_heads',
    headDim: 'head_dim',
    groups: ['n_groups'],
    state: 'state_size',
    conv: ['conv_kernel'],
    chunk: ['chunk_size'],
    bias: 'use_bias',
    convBias: 'use_conv_bias',
    expand: ['expand'],
    innerFromExpand: true,
  },
};

/** Mamba-2 heads, head dim, groups, state, conv, chunk and biases (the family's keys, SSM_KEYS). */
function ssmDims(c: LayerContext): void {
  const k = SSM_KEYS[c.family] ?? SSM_KEYS.nemotron_h;
  const hidden = c.model.hidden as number;
  const heads = c.int([k.heads], true)!;
  const expand = c.int(k.expand, false);
  let headDim: number;
  if (k.innerFromExpand) {
    const inner = (expand ?? 2) * hidden;
    const given = c.get(k.headDim);
    // GraniteMoeHybridConfig: mamba_d_head "auto" = mamba_expand * hidden_size // mamba_n_heads
    headDim = given === 'auto' || given === undefined || given === null ? inner / heads : c.int([k.headDim], true)!;
    if (!Number.isInteger(headDim) || headDim * heads !== inner)
      throw new ImportError(
        k.headDim,
        `${k.headDim}: ${heads} heads x ${JSON.stringify(given ?? headDim)} do not make the mixer's ${k.expand[0]} x hidden_size = ${inner} channels`,
      );
  } else {
    headDim = c.int([k.headDim], true)!;
    if (expand !== undefined && heads * headDim !== expand * hidden)
      c.notes.push(`${k.heads} x ${k.headDim} = ${heads * headDim} (expand ${expand} is not used by the mixer)`);
  }
  c.get('mamba_hidden_act'); // the mixer's SiLU
  c.get('rescale_prenorm_residual'); // an initialisation rule
  const projBias = c.flag(k.bias);
  if (c.family === 'nemotron_h' && c.flag('mamba_proj_bias') && !projBias)
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
    groups: c.int(k.groups, true)!,
    state_size: c.int([k.state], true)!,
    conv_kernel: c.int(k.conv, true)!,
    chunk_size: c.int(k.chunk, false) ?? 128,
    bias: projBias ?? false,
    conv_bias: c.flag(k.convBias) ?? true,
  };
}
