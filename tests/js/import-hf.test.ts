// Hugging Face config.json import: every catalog model with a published
// config.json (tests/fixtures/import/hf/<id>.json, values as published) gives the
// catalog's model keys and, through the core, the catalog's parameter count.
import { decodeKey } from '../../frontend/config/encode.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { MODELS } from '../../frontend/config/catalog.js';
import { importHfConfig, type HfImport } from '../../frontend/config/importers/hf.js';
import { importConfig } from '../../frontend/config/importers/index.js';
import { parsePythonJson } from '../../frontend/config/json.js';
import { MAX_PATTERN } from '../../frontend/config/importers/hf-layers.js';

const dir = join(repoRoot(), 'tests/fixtures/import/hf');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -5))
  .sort();
const read = (id: string): unknown => JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8'));
const ok = (r: ReturnType<typeof importHfConfig>): HfImport => {
  if ('error' in r) throw new Error(r.error.message);
  return r;
};

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

/** The core's value of every model.* key (defaults filled), for an exact comparison. */
function modelSlots(model: Config): Record<string, unknown> {
  const flat = core.flatten({ model });
  if (!(flat instanceof Float64Array)) throw new Error(flat.message);
  const out: Record<string, unknown> = {};
  for (const f of core.fields)
    if (f.path.startsWith('model.') && f.kind !== 'text' && f.kind !== 'group') out[f.path] = decodeKey(f, flat);
  return out;
}

describe('HF config.json -> catalog model', () => {
  it('has a fixture for at least 12 catalog models', () => expect(fixtures.length).toBeGreaterThanOrEqual(12));
  for (const id of fixtures) {
    it(`${id}: same model keys and parameter count as the catalog`, () => {
      const r = ok(importHfConfig(read(id)));
      const model = r.config.model as Config;
      // a multimodal config with its vision tower: the "-vision" preset where the text decoder has its own
      const entry =
        (model.vision ? MODELS.find((m) => m.id === `${id}-vision`) : undefined) ?? MODELS.find((m) => m.id === id);
      expect(entry, `catalog entry ${id}`).toBeDefined();
      expect(modelSlots(model)).toEqual(modelSlots(entry!.model));
      const res = core.estimate({ model });
      if (!res.ok) throw new Error(res.error.message);
      expect(res.params.total).toBe(entry!.params_total);
      expect(r.unknown).toEqual([]);
    });
  }
});

describe('HF per-layer lists', () => {
  it("cap a list at the core's capacity", () => expect(MAX_PATTERN).toBe(core.field('model.layer_types')!.max));
});

describe('Qwen3.5 (qwen3_5 wrapper, qwen3_5_text decoder)', () => {
  it('the decoder and its Qwen3-VL-style tower are read; with the MTP module, the published total', () => {
    const r = ok(importHfConfig(read('qwen3.5-27b')));
    const model = r.config.model as Config;
    expect(model).toMatchObject({
      attn_output_gate: true,
      qk_norm: 'head',
      layer_types: ['linear', 'linear', 'linear', 'full'],
      vision: { kind: 'qwen3_vl', layers: 27, hidden: 1152, positions: 2304, merge: 2 },
    });
    expect(r.warnings.join('\n')).toMatch(/mtp_num_hidden_layers 1: the multi-token-prediction module is not counted/);
    // the HF safetensors total (27,781,427,952) holds the MTP module too, as Megatron-LM builds it: the
    // last (full-attention) layer, eh_proj and three norms
    const withMtp = core.estimate({ model: { ...model, mtp_layers: 1 }, parallel: { engine: 'megatron' } });
    if (!withMtp.ok) throw new Error(withMtp.error.message);
    expect(withMtp.params.total).toBe(27_781_427_952);
    expect(withMtp.params.total - MODELS.find((m) => m.id === 'qwen3.5-27b-vision')!.params_total!).toBe(424_699_392);
  });
});

describe('HF biases per projection', () => {
  it('attention_bias without mlp_bias: q, k, v and o biased, the MLP not (Llama classes)', () => {
    const base = read('llama-3.1-8b') as Record<string, unknown>;
    const r = ok(importHfConfig({ ...base, attention_bias: true, mlp_bias: false }));
    expect(r.config.model).toMatchObject({ bias: false, qkv_bias: true, o_bias: true });
    expect(r.warnings).toEqual([]);
    const m = ok(importHfConfig({ ...base, attention_bias: false, mlp_bias: true }));
    expect(m.config.model).toMatchObject({ bias: false, mlp_bias: true });
    const plain = core.estimate({ model: ok(importHfConfig(base)).config.model as Config });
    const biased = core.estimate({ model: r.config.model as Config });
    expect(plain.ok && biased.ok && biased.params.total - plain.params.total).toBe(32 * (4096 + 2 * 1024 + 4096));
  });
});

describe('HF import warnings', () => {
  const warnings = (id: string) => ok(importHfConfig(read(id))).warnings.join('\n');
  it('reads sliding windows and layer types; warns about vision towers, MTP and quantized weights', () => {
    const model = (id: string) => ok(importHfConfig(read(id))).config.model;
    expect(model('mistral-7b-v0.1')).toMatchObject({ layer_types: ['sliding'], sliding_window: 4096 });
    expect(model('gemma-2-9b')).toMatchObject({ layer_types: ['sliding', 'full'], sliding_window: 4096 });
    expect(model('gemma-3-4b')).toMatchObject({
      layer_types: [...Array(5).fill('sliding'), 'full'],
      sliding_window: 1024,
    });
    expect(model('gpt-oss-20b')).toMatchObject({ layer_types: ['sliding', 'full'], sliding_window: 128 });
    expect(model('phi-3-mini')).toMatchObject({ layer_types: ['sliding'], sliding_window: 2047 });
    expect(ok(importHfConfig(read('gpt-oss-20b'))).notes.join('\n')).toMatch(
      /layer kinds: 12 full, 12 sliding of 24 layers/,
    );
    const g2 = ok(importHfConfig(read('gemma-2-9b')));
    expect(g2.config.model).toMatchObject({ attn_logit_softcap: 50, final_logit_softcap: 30 });
    expect(g2.notes.join('\n')).toMatch(/attn_logit_softcapping 50: kept by eager attention/);
    expect(model('gemma-3-4b')).toMatchObject({ vision: { kind: 'siglip', layers: 27, hidden: 1152, merge: 4 } });
    expect(warnings('gpt-oss-20b')).toMatch(/quantization_config \(mxfp4\)/);
    expect(warnings('deepseek-v3')).toMatch(/num_nextn_predict_layers 1/);
    expect(warnings('bert-large')).toMatch(/architectures says BertForMaskedLM/);
    expect(warnings('llama-3.1-8b')).toBe('');
  });
  it('notes the defaults it relied on and a disabled window', () => {
    const g = ok(importHfConfig(read('gemma-3-4b')));
    expect(g.notes.join('\n')).toMatch(/num_attention_heads: not in config.json; gemma3_text default 8/);
    expect(ok(importHfConfig(read('qwen2.5-7b'))).notes.join('\n')).toMatch(/use_sliding_window false/);
  });
  it('carries config dropout into training.dropout', () => {
    expect(ok(importHfConfig(read('gpt2'))).config.training).toEqual({ dropout: 0.1 });
    expect(ok(importHfConfig(read('llama-3.1-8b'))).config.training).toBeUndefined();
  });
  it('maps gemma, gpt_neox and qwen2_moe, and reads unknown llama-like types generically', () => {
    const gemma = ok(
      importHfConfig({
        model_type: 'gemma',
        hidden_size: 3072,
        intermediate_size: 24576,
        num_hidden_layers: 28,
        num_attention_heads: 16,
        num_key_value_heads: 16,
        head_dim: 256,
        vocab_size: 256000,
      }),
    );
    expect(gemma.config.model).toMatchObject({ mlp: 'gated', tied_embeddings: true, head_dim: 256, norm: 'rmsnorm' });
    const neox = ok(
      importHfConfig({
        model_type: 'gpt_neox',
        hidden_size: 2560,
        intermediate_size: 10240,
        num_hidden_layers: 32,
        num_attention_heads: 32,
        vocab_size: 50432,
        tie_word_embeddings: false,
      }),
    );
    expect(neox.config.model).toMatchObject({ mlp: 'plain', norm: 'layernorm', bias: true, position: 'rope' });
    const qmoe = ok(
      importHfConfig({
        model_type: 'qwen2_moe',
        hidden_size: 2048,
        intermediate_size: 5632,
        num_hidden_layers: 24,
        num_attention_heads: 16,
        num_key_value_heads: 16,
        vocab_size: 151936,
        num_experts: 60,
        num_experts_per_tok: 4,
        moe_intermediate_size: 1408,
        shared_expert_intermediate_size: 5632,
      }),
    );
    expect(qmoe.config.model).toMatchObject({
      qkv_bias: true,
      moe: {
        experts: 60,
        top_k: 4,
        expert_ffn_hidden: 1408,
        shared_experts: 1,
        shared_expert_ffn_hidden: 5632,
        shared_expert_gate: true,
      },
    });
    const generic = ok(
      importHfConfig({
        model_type: 'granite',
        hidden_size: 2048,
        intermediate_size: 8192,
        num_hidden_layers: 40,
        num_attention_heads: 32,
        num_key_value_heads: 8,
        vocab_size: 49155,
        tie_word_embeddings: true,
        rms_norm_eps: 1e-5,
        hidden_act: 'silu',
        residual_multiplier: 0.22,
      }),
    );
    expect(generic.config.model).toMatchObject({ mlp: 'gated', kv_heads: 8, tied_embeddings: true });
    expect(generic.unknown).toEqual(['residual_multiplier']);
    expect(generic.notes.join('\n')).toMatch(/no dedicated mapping/);
  });
  it("reads the bare NaN and Infinity Python's json writes (Mamba-2 style time_step_limit), and nothing else", () => {
    const text = readFileSync(join(dir, 'nemotron-h-8b.json'), 'utf8').replace(
      /^\{/,
      '{"time_step_limit": [0.0, Infinity], "floor": -Infinity, "odd": NaN, "name": "not Infinity",',
    );
    const r = importConfig('hf', text);
    if ('error' in r) throw new Error(r.error.message);
    expect(r.config).toEqual(ok(importHfConfig(read('nemotron-h-8b'))).config);
    expect(parsePythonJson('{"a": [Infinity, -Infinity, NaN], "b": "NaN"}')).toEqual({
      a: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null],
      b: 'NaN',
    });
    expect(() => parsePythonJson('{"a": Infinity,}')).toThrow(SyntaxError);
    expect(() => parsePythonJson('{"a": Inf}')).toThrow(SyntaxError);
  });
  it('rejects malformed configs with the key path', () => {
    const e = (v: unknown) => {
      const r = importHfConfig(v);
      if (!('error' in r)) throw new Error('expected an error');
      return r.error;
    };
    expect(e([1, 2]).message).toMatch(/JSON object/);
    expect(e({ hidden_size: 1 }).path).toBe('model_type');
    // found by npm run fuzz: a hidden size past 2^53 made the default 4 x hidden infinite
    expect(e({ model_type: 'gpt2', n_embd: 1e300, n_layer: 2, n_head: 4, vocab_size: 100 }).path).toBe('n_embd');
    expect(
      e({ model_type: 'llama', hidden_size: '4096', num_hidden_layers: 2, num_attention_heads: 2, vocab_size: 10 })
        .path,
    ).toBe('hidden_size');
    expect(
      e({
        model_type: 'llama',
        hidden_size: 64,
        num_hidden_layers: 2,
        num_attention_heads: 2,
        vocab_size: 10,
        tie_word_embeddings: 'yes',
      }).path,
    ).toBe('tie_word_embeddings');
    expect(e({ model_type: 'granite', hidden_size: 64, num_attention_heads: 2, vocab_size: 10 }).path).toBe(
      'num_hidden_layers',
    );
  });
});
