// Decoder families that the generic (llama-like) reading of a config.json counted wrongly, read as their modeling
// code builds them. Each rule cites the file it was read from:
//   glm        modeling_glm.py (transformers 00d4b3d) GlmAttention: q/k/v Linear(bias=attention_bias), o_proj bias=False;
//              GlmMLP gate_up_proj (2 x intermediate_size, chunked) and down_proj without bias; two GlmRMSNorm a layer
//   glm4       modular_glm4.py (transformers 08c5327) Glm4DecoderLayer: GlmAttention and Phi3MLP, plus post_self_attn_layernorm
//              and post_mlp_layernorm on the sublayer outputs (four RMSNorms a layer)
//   olmo       modular_olmo.py (transformers 00a98e7) OlmoLayerNorm: F.layer_norm of x.float() without weight or bias;
//              OlmoAttention (LlamaAttention, attention_bias on q/k/v/o) clamps q, k and v in place when clip_qkv is set;
//              OlmoMLP builds gate/up/down with bias=False
//   exaone     EXAONE 3.0 / 3.5 remote code as vLLM ports it (exaone.py a853eff/0531c22, configs/exaone.py 0d8caed):
//              num_layers, activation_function, layer_norm_epsilon keys; RMSNorm ln_1 / ln_2 / ln_f, gated MLP
//              (c_fc_0, c_fc_1, c_proj), q/k/v/out_proj without bias
//   internlm2  InternLM2 remote modeling_internlm2.py (code-search corpus file id 19072962427): wqkv and wo
//              Linear(bias=config.bias), feed_forward w1/w3/w2 bias=False, attention_norm / ffn_norm RMSNorm
//   minicpm    modular_minicpm.py (transformers 346cd6f): LlamaAttention / LlamaMLP, embeddings scaled by scale_emb,
//              residual branches by scale_depth / sqrt(layers), the last hidden state divided by hidden / dim_model_base;
//              MiniCPM-MoE (remote code, vLLM minicpm.py 74fb5d5 MiniCPMMoE): num_experts experts of intermediate_size
//   phimoe     modular_phimoe.py (transformers 0233e50): MixtralDecoderLayer with nn.LayerNorm (weight and bias),
//              LlamaAttention, a router without bias, lm_head bias=lm_head_bias
//   apertus    modular_apertus.py (transformers 008e574): ApertusMLP up_proj / down_proj (bias=False) with XIELUActivation,
//              q_norm / k_norm RMSNorm(head_dim) in every attention
//   baichuan   Baichuan / Baichuan 2 remote code: W_pack (q/k/v fused, no bias), gated MLP, RMSNorm; vLLM baichuan.py
//              6b06599 tells RoPE (hidden_size 4096) from ALiBi (the 13B models) and Baichuan 2 (vocab 125696, NormHead);
//              NormHead as in Baichuan 2's modeling_baichuan.py (code-search corpus file id 11964670224), the 13B
//              attention's SDPA-with-mask / eager branches as in its 13B copy (file id 42512848256)
import type { Config } from '../../../wasm/llmem.js';
import type { Flag, Int, LayerContext } from './hf-layers.js';

const fmt = (n: number) => n.toLocaleString('en-US');

/** [bias, qkv_bias] of the families whose linears differ from LlamaAttention / LlamaMLP (model.o_bias set where only
 * the attention is biased); undefined for any other family. */
export function familyBiases(
  family: string,
  flag: Flag,
  model: Config,
  notes: string[],
): [boolean, boolean] | undefined {
  switch (family) {
    case 'glm':
    case 'glm4':
      // q/k/v biased, o_proj and the MLP never (GlmConfig / Glm4Config attention_bias default True)
      return [false, flag('attention_bias') ?? true];
    case 'internlm2': {
      // wqkv and wo follow config.bias (InternLM2Config default True), the MLP has none
      const b = flag('bias') ?? true;
      if (b) model.o_bias = true;
      return [false, b];
    }
    case 'olmo':
    case 'apertus': {
      // LlamaAttention's q/k/v/o follow attention_bias; OlmoMLP / ApertusMLP pass bias=False whatever mlp_bias says
      const b = flag('attention_bias') ?? false;
      if (b) model.o_bias = true;
      if (flag('mlp_bias'))
        notes.push(`mlp_bias true: the ${family} MLP builds its linears with bias=False (no MLP biases counted)`);
      return [false, b];
    }
    default:
      return undefined;
  }
}

/** Norms, q/k norms and the memory-relevant keys of these families that config v1 cannot express. */
export function familyExtras(c: LayerContext): void {
  const { family, get, flag, model, warnings, notes } = c;
  const layers = model.layers as number;
  const hidden = model.hidden as number;
  switch (family) {
    case 'glm4':
      model.norms_per_layer = 4;
      break;
    case 'olmo': {
      // no per-layer norm parameters; the saved input of each norm is still counted (activations do not depend on
      // norms_per_layer), as an eager RMSNorm's, which also upcasts x to fp32
      model.norms_per_layer = 0;
      warnings.push(
        `OlmoLayerNorm has neither weight nor bias (F.layer_norm of x.float()): counted with model.norms_per_layer 0 (no per-layer norm parameters) and model.norm "rmsnorm", whose saved fp32 input is what this norm keeps (plus the normalised x an RMSNorm weight would need, which it does not); the final norm is counted with a weight of hidden_size (${fmt(hidden)} parameters the model does not have)`,
      );
      const clip = get('clip_qkv');
      if (typeof clip === 'number') {
        const heads = model.heads as number,
          kv = model.kv_heads as number,
          d = model.head_dim as number;
        warnings.push(
          `clip_qkv ${clip}: OlmoAttention clamps the q, k and v projections' outputs in place, and each clamp keeps its tensor for the backward (seq x (${heads} + 2 x ${kv}) x ${d} per layer), which llmem does not add`,
        );
      }
      break;
    }
    case 'apertus': {
      // ApertusAttention builds q_norm / k_norm regardless of the config's qk_norm key (transformers reads none)
      model.qk_norm = 'head';
      if (flag('qk_norm') === false)
        notes.push('qk_norm false: transformers ApertusAttention builds q_norm and k_norm regardless (counted)');
      if (flag('post_norm')) notes.push('post_norm true: transformers ApertusDecoderLayer has no post-norm (ignored)');
      const act = get('hidden_act');
      if (act === 'xielu')
        warnings.push(
          `hidden_act "xielu": each layer's XIELUActivation holds two trainable scalars (alpha_p, alpha_n), ${fmt(2 * layers)} parameters not counted; its activation memory is counted as a plain MLP's (the eager form, without the xIELU CUDA kernel, keeps more intermediate tensors)`,
        );
      break;
    }
    case 'phimoe': {
      const jitter = get('input_jitter_noise');
      if (typeof jitter === 'number' && jitter > 0)
        warnings.push(
          `input_jitter_noise ${jitter}: in training PhimoeSparseMoeBlock and PhimoeTopKRouter each multiply the MLP input in place by uniform noise, and each multiplication keeps its noise (tokens x ${fmt(hidden)} per layer) for the backward, which llmem does not add`,
        );
      break;
    }
    case 'minicpm': {
      // scalar multipliers of the embedding, the residual branches and the last hidden state: no parameters
      for (const k of ['scale_emb', 'scale_depth', 'dim_model_base', 'mup_denominator']) get(k);
      const sparse = get('sparse_config');
      if (sparse !== undefined && sparse !== null)
        warnings.push(
          "sparse_config: the InfLLM-v2 sparse attention of OpenBMB's remote code is not modelled (transformers MiniCPMModel refuses it); attention is counted dense",
        );
      break;
    }
    case 'internlm2': {
      const impl = get('attn_implementation');
      if (impl !== undefined && impl !== null)
        notes.push(`attn_implementation ${JSON.stringify(impl)}: the attention kernel is set by training.attention`);
      break;
    }
    case 'baichuan': {
      get('z_loss_weight'); // a scalar loss term on the logits' maxima (tokens values)
      get('model_max_length'); // the 13B configs' context (read as max_positions when max_position_embeddings is absent)
      const vocab = model.vocab as number;
      if (vocab === 125696)
        warnings.push(
          `vocab_size 125696 (Baichuan 2): NormHead normalises lm_head's weight out of place in every training forward and multiplies by the copy, a ${fmt(vocab)} x ${fmt(hidden)} tensor (${fmt(vocab * hidden)} elements, kept for the backward while lm_head trains) that llmem does not add`,
        );
      if (hidden !== 4096)
        warnings.push(
          `hidden_size ${hidden}: Baichuan 13B models use ALiBi (no parameters): their heads x seq x seq bias, added to the attention scores of every layer, is not modelled; the remote code runs SDPA with that mask when xformers is installed, else eager attention (set training.attention "eager")`,
        );
      break;
    }
  }
}

/** MiniCPM-MoE (remote code; vLLM minicpm.py 74fb5d5 MiniCPMMoE): num_experts gated experts of intermediate_size and a
 * router without bias in every layer, num_experts_per_tok per token; num_experts 0 or absent: the dense MiniCPMMLP. */
export function minicpmMoe(base: Config, int: Int, model: Config): Config | null {
  const experts = int(['num_experts'], false) ?? 0;
  if (experts === 0) return null;
  return {
    ...base,
    experts,
    top_k: int(['num_experts_per_tok'], true)!,
    expert_ffn_hidden: model.ffn_hidden as number,
  };
}
