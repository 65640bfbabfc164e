// Hugging Face config.json of the GPT-J lineage and its LayerNorm kin: GPT-J and CodeGen (attention and MLP in parallel
// on one LayerNorm), StableLM (StableLM-2 1.6B / 12B, stablelm-3b-4e1t: parallel or sequential, per-head q/k norms),
// Persimmon and Nemotron-4 / Minitron (sequential, squared-ReLU up/down MLPs). hf.ts reads the shape keys (n_embd,
// n_layer, n_head, n_inner, n_positions and the llama-style names) with their class defaults (hf-defaults.ts) and calls
// parallelFamily for the rest: biases, norms, the parallel block, q/k norms, what config v1 cannot express.
//
// Read from transformers (github.com/huggingface/transformers) src/transformers/models/<type>/modeling_<type>.py:
//   gptj      at 00b676f8f0489b88652a31d70751cc540dd06305  GPTJBlock, GPTJAttention, GPTJMLP, GPTJForCausalLM
//   codegen   at 2b6c089d5a0b18d59a08c36b91404ece60915cf3  CodeGenBlock, CodeGenAttention, CodeGenForCausalLM
//   stablelm  at bf112caa961ac7814ed21209d449ac06b2ab65cc  StableLmDecoderLayer, StableLmAttention, StableLmLayerNormPerHead
//   persimmon at 93a5d5f4e1b475c50133cf3d81e765425204ad99  PersimmonDecoderLayer, PersimmonAttention, PersimmonMLP
//   nemotron  at 694aaa7fbccb801de013a99cb558f5a20dfdc02a  NemotronDecoderLayer, NemotronLayerNorm1P, NemotronMLP
//
// config v1's "plain" MLP is two matrices, up then down, whatever the activation between them: GPTJMLP / CodeGenMLP
// (fc_in, gelu_new, fc_out), PersimmonMLP (dense_h_to_4h, relu2, dense_4h_to_h) and NemotronMLP (up_proj, relu2 =
// squared ReLU, down_proj) are all "plain"; StableLmMLP is MistralMLP's gate, up and down ("gated").
import { ImportError } from './common.js';
import type { LayerContext } from './hf-layers.js';

/** The model_types read here (each has its class defaults in hf-defaults.ts). */
export const PARALLEL_FAMILIES = new Set(['gptj', 'codegen', 'stablelm', 'persimmon', 'nemotron']);

/** Biases, norms, the parallel block and q/k norms of a PARALLEL_FAMILIES model (hf.ts has set the shape, norm
 * "layernorm", the MLP kind and the width). */
export function parallelFamily(ctx: LayerContext): void {
  if (ctx.family === 'gptj' || ctx.family === 'codegen') gptjBlock(ctx);
  else if (ctx.family === 'stablelm') stablelm(ctx);
  else if (ctx.family === 'persimmon') persimmon(ctx);
  else if (ctx.family === 'nemotron') nemotron(ctx);
}

/** GPTJBlock / CodeGenBlock: x + attn(ln_1(x)) + mlp(ln_1(x)), one nn.LayerNorm; q/k/v/out_proj (CodeGen: a fused
 * qkv_proj of 3 x n_embd) without bias, fc_in / fc_out and lm_head with bias (nn.Linear's default). rotary_dim rotates
 * the first rotary_dim channels of each head and n_ctx feeds a CodeGenModel attribute nothing reads: no parameters
 * (both in hf.ts's IRRELEVANT). */
function gptjBlock({ family, get, model, warnings, notes }: LayerContext): void {
  model.parallel_block = true;
  model.norms_per_layer = 1;
  model.bias = false;
  model.mlp_bias = true;
  model.lm_head_bias = true;
  // GPT-J's config.json carries "rotary": true from its conversion; GPTJConfig keeps no such key and GPTJAttention
  // always applies rotary positions
  const rotary = get('rotary');
  if (rotary === false) notes.push('rotary false: GPTJConfig has no such key; GPTJAttention applies rotary regardless');
  // GPTJ_ATTENTION_CLASSES has eager and flash_attention_2 only; CodeGen has CodeGenAttention alone. Their eager _attn
  // upcasts q and k to fp32 and keeps the fp32 softmax and its 16-bit copy of every s x s score per head.
  warnings.push(
    family === 'gptj'
      ? 'GPT-J has no SDPA attention in transformers (GPTJAttention eager, or flash_attention_2 when asked): eager keeps the s x s scores per head (fp32 softmax and its 16-bit copy); set training.attention "eager" unless the run loads it with attn_implementation "flash_attention_2"'
      : 'CodeGen has one attention in transformers, eager CodeGenAttention (no SDPA, no flash-attention): it keeps the s x s scores per head (fp32 softmax and its 16-bit copy); set training.attention "eager"',
  );
}

/** StableLmDecoderLayer: input_layernorm (nn.LayerNorm), then with use_parallel_residual x + attn(ln(x)) + mlp(ln(x))
 * and no post_attention_layernorm, else the sequential block; q/k/v Linear(bias=use_qkv_bias), o_proj and the MLP
 * without bias; qk_layernorm: StableLmLayerNormPerHead, one LayerNorm(head_dim, bias=False) per query head and per key
 * head; lm_head without bias. partial_rotary_factor rotates part of each head (no parameters). */
function stablelm({ layers, flag, model, warnings }: LayerContext): void {
  if (flag('use_parallel_residual')) {
    model.parallel_block = true;
    model.norms_per_layer = 1;
  }
  if (flag('use_qkv_bias')) model.qkv_bias = true;
  if (flag('qk_layernorm')) {
    // a weight per query channel and per key channel: config v1's "full" q/k norm (heads x head_dim + kv_heads x
    // head_dim), which with model.norm "layernorm" also counts a bias the per-head norms do not have
    model.qk_norm = 'full';
    const weights = ((model.heads as number) + (model.kv_heads as number)) * (model.head_dim as number);
    warnings.push(
      `qk_layernorm true: StableLmLayerNormPerHead holds one bias-free LayerNorm(head_dim) per query and per key head (${weights} weights a layer); counted as config v1's "full" q/k norm, which adds a LayerNorm bias of the same size: ${(weights * layers).toLocaleString('en-US')} parameters the checkpoint does not have`,
    );
  }
}

/** PersimmonDecoderLayer: input_layernorm and post_attention_layernorm (nn.LayerNorm), sequential; query_key_value and
 * dense Linear(bias=True), dense_h_to_4h / dense_4h_to_h with bias, lm_head without; qk_layernorm: q_layernorm and
 * k_layernorm, each nn.LayerNorm(head_dim) with weight and bias, shared by every head. */
function persimmon({ flag, model }: LayerContext): void {
  model.bias = true;
  if (flag('qk_layernorm')) model.qk_norm = 'head';
}

/** NemotronDecoderLayer: input_layernorm and post_attention_layernorm are NemotronLayerNorm1P (an nn.LayerNorm, weight
 * and bias, applied with weight + 1), sequential; q/k/v/o Linear(bias=attention_bias), up_proj / down_proj
 * Linear(bias=mlp_bias) (hf.ts reads both as it reads Llama's); lm_head without bias, untied by default.
 * NemotronConfig: head_dim None is hidden_size // num_attention_heads; it has no kv_channels key. */
function nemotron({ int, model, warnings, notes }: LayerContext): void {
  notes.push(
    'NemotronLayerNorm1P\'s weight + 1 adds no parameters: counted as a LayerNorm (model.norm "layernorm": weight and bias)',
  );
  // F.layer_norm under autocast disabled, on inputs cast to the autocast dtype: it keeps a 16-bit input where
  // nn.LayerNorm under autocast keeps the fp32 one
  warnings.push(
    'NemotronLayerNorm1P normalises in the autocast dtype with autocast off: under torch.autocast with fp32 weights it keeps a 16-bit copy of its input where llmem counts the fp32 one a native LayerNorm keeps (2 bytes an element less per norm, not modelled)',
  );
  const kvChannels = int(['kv_channels'], false);
  if (kvChannels !== undefined && kvChannels !== model.head_dim)
    throw new ImportError(
      'kv_channels',
      `kv_channels: ${kvChannels}, but NemotronConfig reads head_dim (${String(model.head_dim)} here) and has no kv_channels; not imported rather than sized by one of the two`,
    );
  if (kvChannels !== undefined) notes.push(`kv_channels ${kvChannels}: NemotronConfig does not read it (head_dim)`);
}
