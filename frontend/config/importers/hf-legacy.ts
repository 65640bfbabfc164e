// Decoders that predate the llama layout, read as their transformers classes build them (hf.ts reads their heads, hidden
// size, layers and vocabulary with the other families' keys; this file sets the rest and consumes their own keys):
//   opt      modeling_opt.py (transformers 0184d20) OPTDecoder / OPTDecoderLayer / OPTForCausalLM, configuration_opt.py
//            (1f3ae2b): OPTLearnedPositionalEmbedding of max_position_embeddings + 2 rows, q/k/v/out_proj and fc1/fc2
//            Linear(bias=enable_bias), self_attn_layer_norm and final_layer_norm (nn.LayerNorm) in every layer, a final
//            LayerNorm when do_layer_norm_before and not _remove_final_layer_norm, embed_tokens of word_embed_proj_dim
//            with project_in / project_out (Linear, no bias) when it is not hidden_size, lm_head tied to embed_tokens.
//   bloom    modeling_bloom.py (9d97831) BloomModel / BloomBlock / BloomAttention / BloomMLP, configuration_bloom.py
//            (d94ee40; n_embed is hidden_size's old name): word_embeddings and word_embeddings_layernorm, fused
//            query_key_value and dense with biases, dense_h_to_4h / dense_4h_to_h of 4 x hidden_size with biases
//            (n_inner is not read), ALiBi added to the scores in baddbmm (no SDPA or flash path), ln_f, tied lm_head.
//   mpt      modeling_mpt.py (4352620) MptModel / MptBlock / MptAttention / MptMLP, configuration_mpt.py (79f1fc7,
//            MptAttentionConfig as attn_config, read as "attn_config.<key>"): Wqkv and out_proj without bias,
//            up_proj / down_proj of 4 x d_model without bias, norm_1 / norm_2 / norm_f LayerNorms whose bias is set to
//            None, ALiBi added to eager scores (no SDPA or flash path), no position table, tied lm_head.
//   gpt_neo  modeling_gpt_neo.py (d3b7c99) GPTNeoModel / GPTNeoBlock / GPTNeoSelfAttention / GPTNeoMLP,
//            configuration_gpt_neo.py (77c2fe6): wte and wpe (max_position_embeddings rows), q/k/v_proj without bias and
//            out_proj with bias, c_fc / c_proj with biases (intermediate_size, None: 4 x hidden_size), ln_1 / ln_2 /
//            ln_f LayerNorms, attention_layers (expanded from attention_types) of "global" and "local" layers, the local
//            ones masked to the last window_size keys, tied lm_head.
import type { Json } from '../../../wasm/llmem.js';
import { ImportError } from './common.js';
import { type LayerContext, MAX_PATTERN, shortestPattern } from './hf-layers.js';

/** The model_types read here; hf.ts leaves their MLP width, biases and positions to legacyDecoder. */
export const LEGACY_FAMILIES = new Set(['opt', 'bloom', 'mpt', 'gpt_neo']);

/** Sets the MLP width, biases, norms, positions and layer kinds of an opt / bloom / mpt / gpt_neo model. */
export function legacyDecoder(c: LayerContext): void {
  if (c.family === 'opt') opt(c);
  else if (c.family === 'bloom') bloom(c);
  else if (c.family === 'mpt') mpt(c);
  else if (c.family === 'gpt_neo') gptNeo(c);
}

const fmt = (n: number) => n.toLocaleString('en-US');

function opt(c: LayerContext): void {
  const { model, int, flag, get, notes, warnings } = c;
  const h = model.hidden as number;
  const layers = model.layers as number;
  model.ffn_hidden = int(['ffn_dim'], true)!;
  model.bias = flag('enable_bias') ?? true;
  // OPTLearnedPositionalEmbedding: an nn.Embedding of max_position_embeddings + 2 rows (ids offset by 2)
  const maxPos = int(['max_position_embeddings'], true)!;
  model.position = 'learned';
  model.max_positions = maxPos + 2;
  notes.push(
    `opt: learned positions of max_position_embeddings + 2 = ${maxPos + 2} rows (OPTLearnedPositionalEmbedding offsets the ids by 2)`,
  );
  const before = flag('do_layer_norm_before') ?? true;
  const removed = flag('_remove_final_layer_norm') ?? false;
  if (!before)
    notes.push(
      'do_layer_norm_before false: each LayerNorm follows its residual add (post-LN, as opt-350m); the same two norms a layer, no final norm',
    );
  if (!before || removed) model.final_norm = false;
  if (removed && before) notes.push('_remove_final_layer_norm true: OPTDecoder builds no final_layer_norm');
  const tied = model.tied_embeddings === true;
  const proj = int(['word_embed_proj_dim'], false) ?? h;
  if (proj !== h) {
    const vocab = model.vocab as number;
    const heads = tied ? 1 : 2;
    const counted = heads * vocab * h;
    const real = heads * vocab * proj + 2 * h * proj;
    warnings.push(
      `word_embed_proj_dim ${proj}: OPT embeds tokens at ${proj} and projects them to hidden_size ${h} (project_in), and back before the ${tied ? 'tied ' : ''}lm_head (project_out), which config v1 does not express: the embedding${tied ? '' : ' and lm_head'} are counted at hidden_size, ${counted > real ? 'over' : 'under'}counting the model by ${fmt(Math.abs(counted - real))} parameters`,
    );
  }
  if (flag('layer_norm_elementwise_affine') === false) {
    const norms = 2 * layers + (model.final_norm === false ? 0 : 1);
    warnings.push(
      `layer_norm_elementwise_affine false: OPT's LayerNorms have no weight or bias; config v1's layernorm counts both (${fmt(2 * h * norms)} parameters over the model's)`,
    );
  }
  const layerdrop = get('layerdrop');
  if (typeof layerdrop === 'number' && layerdrop > 0)
    notes.push(
      `layerdrop ${layerdrop}: OPTDecoder skips each layer with this probability in training; every layer is counted (the step that runs them all)`,
    );
  const act = get('activation_dropout');
  if (typeof act === 'number' && act > 0)
    notes.push(`activation_dropout ${act}: OPTDecoderLayer applies no dropout between fc1 and fc2 (not read)`);
  get('init_std');
  get('prefix'); // PretrainedConfig.prefix: a prompt prefix for generation
}

function bloom(c: LayerContext): void {
  const { model, get, notes, warnings } = c;
  const h = model.hidden as number;
  // BloomMLP: dense_h_to_4h / dense_4h_to_h of 4 x hidden_size; BloomConfig has no width key (n_inner is not read)
  model.ffn_hidden = 4 * h;
  const inner = get('n_inner');
  if (inner !== undefined && inner !== null && inner !== 4 * h)
    notes.push(`n_inner ${JSON.stringify(inner)}: BloomMLP is 4 x hidden_size = ${4 * h} wide whatever it says`);
  model.bias = true; // query_key_value, dense, dense_h_to_4h, dense_4h_to_h: nn.Linear with bias
  model.embedding_norm = true; // word_embeddings_layernorm
  notes.push('bloom: ALiBi positions have no parameters (model.position "rope" counts none)');
  warnings.push(
    'ALiBi: BloomAttention adds the ALiBi bias to the scores in baddbmm and runs softmax in fp32, with no SDPA or flash path in transformers: it keeps the s x s probabilities of every head (set training.attention "eager")',
  );
  // Megatron-DeepSpeed training switches the checkpoints carry, which BloomConfig does not read (slow_but_exact and
  // pretraining_tp only split the dense matmuls into slices)
  for (const k of [
    'masked_softmax_fusion',
    'offset_alibi',
    'skip_bias_add',
    'skip_bias_add_qkv',
    'slow_but_exact',
    'unk_token_id',
  ])
    get(k);
}

/** A key whose value gives a checkpoint transformers' MPT classes do not build: refused, not counted as their model. */
function mptRefuse(key: string, value: Json | undefined, why: string): never {
  throw new ImportError(
    key,
    `${key} ${JSON.stringify(value)}: ${why}; such a checkpoint is the remote code's (llm-foundry), whose modules are not read here: not imported rather than counted as another model`,
  );
}

function mpt(c: LayerContext): void {
  const { model, get, flag, notes, warnings } = c;
  const h = model.hidden as number;
  const layers = model.layers as number;
  const ratio = get('expansion_ratio');
  if (ratio !== 4)
    mptRefuse('expansion_ratio', ratio, `MptMLP (transformers) is 4 x d_model wide whatever expansion_ratio says`);
  const attnType = get('attn_config.attn_type');
  if (attnType !== 'multihead_attention')
    mptRefuse('attn_config.attn_type', attnType, 'MptAttention (transformers) has a key and value per head (Wqkv)');
  if (flag('no_bias') === false)
    mptRefuse('no_bias', false, 'MptAttention and MptMLP (transformers) build their linears without bias');
  if (flag('attn_config.qk_ln'))
    mptRefuse('attn_config.qk_ln', true, 'MptAttention (transformers) has no LayerNorm on q and k');
  const alibi = flag('attn_config.alibi') ?? true;
  const learned = flag('learned_pos_emb') ?? true;
  if (!alibi && learned)
    mptRefuse(
      'attn_config.alibi',
      false,
      'MptModel (transformers) always adds ALiBi and builds no position table (learned_pos_emb)',
    );
  model.ffn_hidden = 4 * h;
  model.bias = false;
  notes.push(
    `mpt: norm_1, norm_2 and norm_f are LayerNorms without bias (transformers sets it to None), counted as config v1's layernorm (a native layer_norm that keeps its input) with a bias vector each: ${fmt((2 * layers + 1) * h)} parameters over the model's`,
  );
  notes.push('mpt: ALiBi positions have no parameters (model.position "rope" counts none)');
  const impl = get('attn_config.attn_impl');
  warnings.push(
    `ALiBi: MptAttention adds the ALiBi bias to eager scores and runs softmax in fp32, with no SDPA or flash path in transformers (attn_config.attn_impl ${JSON.stringify(impl ?? null)} is the remote code's): it keeps the s x s probabilities of every head (set training.attention "eager")`,
  );
  const clip = get('attn_config.clip_qkv');
  if (typeof clip === 'number')
    warnings.push(
      `attn_config.clip_qkv ${clip}: MptAttention clamps the Wqkv output, and the clamp keeps that output for the backward (seq x 3 x d_model per layer), which llmem does not add`,
    );
  if (flag('attn_config.prefix_lm'))
    notes.push('attn_config.prefix_lm true: MptModel (transformers) masks causally whatever it says');
  if (flag('attn_config.attn_uses_sequence_id'))
    notes.push('attn_config.attn_uses_sequence_id true: MptModel (transformers) does not mask by sequence id');
  const scale = get('logit_scale');
  if (scale !== undefined && scale !== null)
    notes.push(`logit_scale ${JSON.stringify(scale)}: MptForCausalLM (transformers) does not scale the logits`);
  const fraction = get('embedding_fraction');
  if (typeof fraction === 'number' && fraction !== 1)
    notes.push(`embedding_fraction ${fraction}: the remote code's embedding-gradient scaling; transformers ignores it`);
  // kept for the remote code: the ALiBi slope cap, the softmax scale, init and logging switches, the tokenizer's name
  // (max_seq_len, read by hf.ts as max_positions, only sizes the ALiBi tensor: heads x max_seq_len)
  for (const k of [
    'attn_config.alibi_bias_max',
    'attn_config.softmax_scale',
    'init_device',
    'init_config',
    'verbose',
    'norm_type',
    'tokenizer_name',
  ])
    get(k);
}

function gptNeo(c: LayerContext): void {
  const { model, int, notes, warnings } = c;
  const h = model.hidden as number;
  const inner = int(['intermediate_size'], false);
  model.ffn_hidden = inner ?? 4 * h;
  if (inner === undefined)
    notes.push(`intermediate_size null: ffn_hidden = 4 * hidden = ${4 * h} (GPTNeoBlock's rule for None)`);
  // GPTNeoSelfAttention: q/k/v_proj bias=False, out_proj bias=True; GPTNeoMLP c_fc / c_proj: nn.Linear with bias
  model.bias = false;
  model.o_bias = true;
  model.mlp_bias = true;
  const maxPos = int(['max_position_embeddings'], true)!;
  model.position = 'learned';
  model.max_positions = maxPos;
  const kinds = gptNeoLayers(c);
  const window = int(['window_size'], kinds.includes('local'))!;
  let mixers = kinds.map((k) => (k === 'local' ? 'sliding' : 'full'));
  if (mixers.includes('sliding') && window >= maxPos) {
    notes.push(
      `window_size ${window} is at least max_position_embeddings ${maxPos}: the local layers are full attention`,
    );
    mixers = mixers.map(() => 'full');
  }
  if (mixers.includes('sliding')) {
    const pattern = shortestPattern(mixers);
    if (pattern.length > MAX_PATTERN)
      throw new ImportError(
        'attention_layers',
        `attention_layers: the layers do not repeat within ${MAX_PATTERN} entries`,
      );
    model.layer_types = pattern;
    model.sliding_window = window;
    const local = mixers.filter((m) => m === 'sliding').length;
    notes.push(
      `layer kinds: ${mixers.length - local} full, ${local} sliding (window_size ${window}) of ${mixers.length} layers`,
    );
  }
  warnings.push(
    'GPTNeoSelfAttention has no SDPA path in transformers: eager (the default) upcasts q and k to fp32 and keeps fp32 s x s scores for every layer, local ones included (their window is a mask on the full matrix); set training.attention "eager". Its flash_attention_2 path ignores window_size (every layer attends to the whole prefix)',
  );
}

/** GPTNeoConfig.attention_layers: attention_types ([[kinds, repeat], ...]) expanded, one "global" / "local" a layer;
 * an attention_layers list in the file is what PretrainedConfig leaves set, so the model builds it. */
function gptNeoLayers(c: LayerContext): string[] {
  const layers = c.model.layers as number;
  const types = c.get('attention_types');
  if (!Array.isArray(types))
    throw new ImportError(
      'attention_types',
      `attention_types: must be a list of [[kinds], repeat] pairs, not ${JSON.stringify(types ?? null)}`,
    );
  const expanded: string[] = [];
  for (const item of types) {
    const ok =
      Array.isArray(item) &&
      item.length === 2 &&
      Array.isArray(item[0]) &&
      typeof item[1] === 'number' &&
      Number.isInteger(item[1]) &&
      item[1] >= 0 &&
      item[1] * item[0].length <= layers;
    if (!ok)
      throw new ImportError(
        'attention_types',
        `attention_types: ${JSON.stringify(item)} is not a [[kinds], repeat] pair within ${layers} layers`,
      );
    for (let i = 0; i < (item[1] as number); i++) expanded.push(...((item[0] as Json[]).map(String) as string[]));
    if (expanded.length > layers) break;
  }
  if (expanded.length !== layers)
    throw new ImportError(
      'attention_types',
      `attention_types: expands to ${expanded.length} layers for ${layers} (num_layers); GPTNeoConfig requires them equal`,
    );
  const listed = c.get('attention_layers');
  let kinds = expanded;
  if (listed !== undefined && listed !== null) {
    if (!Array.isArray(listed) || listed.length !== layers)
      throw new ImportError(
        'attention_layers',
        `attention_layers: must list one kind for each of the ${layers} layers (num_layers)`,
      );
    kinds = listed.map(String);
    if (kinds.some((k, i) => k !== expanded[i]))
      c.notes.push('attention_layers differs from attention_types: GPTNeoAttention builds attention_layers');
  }
  const bad = kinds.find((k) => k !== 'global' && k !== 'local');
  if (bad !== undefined)
    throw new ImportError(
      listed !== undefined && listed !== null ? 'attention_layers' : 'attention_types',
      `${listed !== undefined && listed !== null ? 'attention_layers' : 'attention_types'}: ${JSON.stringify(bad)} is not "global" or "local" (GPTNeoAttention builds no other)`,
    );
  return kinds;
}
