// Real config.json files from public repositories that a sweep found misread (2026-11-28), each with the parameter
// count its own checkpoint gives:
// - falcon-7b-rw.json: tenstorrent/tt-buda pybuda/test/falcon/models/falcon7b/config.json @97caab7 (tiiuae's
//   RefinedWebModel remote code); its pytorch_model.bin.index.json total_size 14,434,379,520 B in fp16, less the
//   tied head: 6,921,720,704
// - falcon-40b-rw.json: Decentralised-AI/falcon-40b config.json @e7950c4 (RefinedWeb, n_head_kv 8): 83,671,941,120 B
//   in fp16 less the tied head: 41,303,293,952
// - roberta-seqcls.json: ArrafMelon/Youtube-Video-Sentiment model/config.json @5c6a1dd (RobertaForSequenceClassification,
//   3 labels): embeddings (50265 + 514 + 1) x 768 + LayerNorm, 12 post-LN layers with biases, the classification
//   head: 124,647,939
// - phi-2-msft.json: mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py @79d603f, MODEL_PRESETS["phi-2"] (phi-2's
//   first remote-code config, model_type phi-msft): 2,779,683,840 (transformers' phi modules: biases, parallel block)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { importHfConfig } from '../../frontend/config/importers/hf.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

function params(file: string): { total: number; model: Config } {
  const r = importHfConfig(JSON.parse(readFileSync(join(repoRoot(), 'tests/fixtures/import/hf-sweep', file), 'utf8')));
  if ('error' in r) throw new Error(r.error.message);
  const model = r.config.model as Config;
  const res = core.estimate({ model });
  if (!res.ok) throw new Error(res.error.message);
  return { total: res.params.total, model };
}

describe('config.json files the generic reader got wrong', () => {
  it("Falcon's RefinedWebModel: multi-query, plain 4h MLP, tied head (transformers' conversion of the remote config)", () => {
    const r = params('falcon-7b-rw.json');
    expect(r.model).toMatchObject({ kv_heads: 1, mlp: 'plain', tied_embeddings: true, parallel_block: true });
    expect(r.total).toBe(6_921_720_704);
  });
  it("Falcon's RefinedWeb with n_head_kv: the new decoder architecture, 8 K/V heads", () => {
    const r = params('falcon-40b-rw.json');
    expect(r.model).toMatchObject({ kv_heads: 8 });
    expect(r.total).toBe(41_303_293_952);
  });
  it("phi-msft (phi-2's remote-code config): transformers' phi modules", () => {
    expect(params('phi-2-msft.json').total).toBe(2_779_683_840);
  });
  it("RoBERTa: BERT's modules (learned positions, token types, embedding LayerNorm, biases)", () => {
    expect(params('roberta-seqcls.json').total).toBe(124_647_939);
  });
});

it("a generic MoE config's Aria spellings (moe_num_experts, moe_topk, moe_num_shared_experts) are read", () => {
  // AriaTextConfig (transformers configuration_aria.py): the keys a llama-like reader had left unread (a dense 1.6 B)
  const r = importHfConfig({
    model_type: 'aria_text',
    hidden_size: 2560,
    intermediate_size: 1664,
    num_hidden_layers: 28,
    num_attention_heads: 20,
    num_key_value_heads: 20,
    vocab_size: 100352,
    moe_num_experts: 64,
    moe_topk: 6,
    moe_num_shared_experts: 2,
  });
  if ('error' in r) throw new Error(r.error.message);
  expect((r.config.model as Config).moe).toMatchObject({ experts: 64, top_k: 6, shared_experts: 2 });
});
