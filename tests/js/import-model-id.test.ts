// Model ids in framework files (axolotl base_model, LLaMA-Factory model_name_or_path)
// -> catalog presets: matched through the name parts that leave the shape alone, the
// preset used is named in a note, and an id no preset matches is an error naming the key.
import { describe, expect, it } from 'vitest';
import { importConfig, presetForModelId } from '../../frontend/config/importers/index.js';
import { matchModelId } from '../../frontend/config/importers/common.js';

describe('model id -> catalog preset', () => {
  const cases: [string, string][] = [
    ['meta-llama/Llama-3.1-8B', 'llama-3.1-8b'],
    ['meta-llama/Llama-3.1-8B-Instruct', 'llama-3.1-8b'],
    ['meta-llama/Meta-Llama-3-8B-Instruct', 'llama-3-8b'],
    ['NousResearch/Meta-Llama-3-8B', 'llama-3-8b'],
    ['meta-llama/Llama-2-7b-chat-hf', 'llama-2-7b'],
    ['Qwen/Qwen3-8B-Base', 'qwen3-8b'],
    ['Qwen/Qwen3-30B-A3B-Instruct-2507', 'qwen3-30b-a3b'],
    ['Qwen/Qwen3-235B-A22B-Instruct-2507-FP8', 'qwen3-235b-a22b'],
    ['Qwen/Qwen3-8B-FP8', 'qwen3-8b'],
    ['RedHatAI/Qwen3-8B-FP8-dynamic', 'qwen3-8b'],
    ['Qwen/Qwen3-14B-AWQ', 'qwen3-14b'],
    ['unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit', 'llama-3.1-8b'],
    ['google/gemma-3-1b-it', 'gemma-3-1b@2026-11-26'],
    ['deepseek-ai/DeepSeek-V3-BF16', 'deepseek-v3'],
    ['allenai/OLMo-2-1124-7B-Instruct', 'olmo-2-7b'],
    ['/data/models/Qwen2.5-7B-Instruct/', 'qwen2.5-7b'],
    ['llama-3.1-70b', 'llama-3.1-70b'],
    ['meta-llama/Llama-3.3-70B-Instruct', 'llama-3.3-70b'],
    ['deepseek-ai/DeepSeek-R1-0528', 'deepseek-r1'],
    ['Qwen/Qwen3-4B-Instruct-2507', 'qwen3-4b'],
    ['Qwen/Qwen3-0.6B-Base', 'qwen3-0.6b'],
    ['HuggingFaceTB/SmolLM3-3B-checkpoints', 'smollm3-3b'],
    // post-training stages and re-stored weights of the same tensors (axolotl's examples name these)
    ['allenai/Olmo-3-7B-Instruct-SFT', 'olmo-3-7b@2026-11-26'],
    ['axolotl-ai-co/gpt-oss-120b-dequantized', 'gpt-oss-120b@2026-11-26'],
    ['hugging-quants/Meta-Llama-3.1-405B-BNB-NF4-BF16', 'llama-3.1-405b'],
    // checkpoints with exactly a preset's tensors (models.json same_tensors)
    ['meta-llama/Meta-Llama-3-70B-Instruct', 'llama-3.1-70b'],
    ['TinyLlama/TinyLlama-1.1B-Chat-v1.0', 'tinyllama-1.1b'],
    ['TinyLlama/TinyLlama_v1.1', 'tinyllama-1.1b'],
    ['Qwen/Qwen2-7B-Instruct', 'qwen2.5-7b'],
    ['Qwen/Qwen2-1.5B', 'qwen2.5-1.5b'],
    ['Qwen/Qwen2.5-Coder-32B-Instruct', 'qwen2.5-32b'],
    ['microsoft/Phi-3.5-mini-instruct', 'phi-3-mini@2026-11-26'],
    ['mistralai/Mistral-7B-Instruct-v0.2', 'mistral-7b-v0.1@2026-11-26'],
    ['moonshotai/Kimi-K2-Instruct-0905', 'kimi-k2'],
    ['deepseek-ai/DeepSeek-V2-Lite-Chat', 'deepseek-v2-lite'],
    ['allenai/Olmo-3-7B-Instruct', 'olmo-3-7b@2026-11-26'],
    ['mistralai/Mistral-Nemo-Instruct-2407', 'mistral-nemo-12b'],
    ['HuggingFaceTB/SmolLM3-3B-Base', 'smollm3-3b'],
    ['microsoft/Phi-4-mini-instruct', 'phi-4-mini'],
    ['zai-org/GLM-4.5-Air-FP8', 'glm-4.5-air'],
    ['zai-org/GLM-4.5-Base', 'glm-4.5'],
    ['mistralai/Mistral-Small-24B-Instruct-2501', 'mistral-small-24b'],
  ];
  for (const [id, preset] of cases) it(`${id} -> ${preset}`, () => expect(presetForModelId(id)).toBe(preset));

  it('names the current revision of a revised preset', () =>
    expect(presetForModelId('tiiuae/falcon-7b-instruct')).toMatch(/^falcon-7b@\d{4}-\d\d-\d\d$/));
  it('lists the name parts it ignored', () =>
    expect(matchModelId('Qwen/Qwen3-30B-A3B-Instruct-2507-FP8')?.ignored).toEqual(['-instruct', '-fp8', '-2507']));
  it('does not match a different size or version', () => {
    expect(presetForModelId('meta-llama/Llama-3.1-13B')).toBeUndefined();
    expect(presetForModelId('mistralai/Mistral-7B-v0.3')).toBeUndefined();
    expect(presetForModelId('org/Foo-13B')).toBeUndefined();
  });
});

describe('framework files name their model', () => {
  it('axolotl base_model: the preset used is named in a note', () => {
    const r = importConfig('axolotl', 'base_model: Qwen/Qwen3-8B-FP8\nsequence_len: 4096\n');
    if ('error' in r) throw new Error(r.error.message);
    expect(r.config.model).toEqual({ preset: 'qwen3-8b' });
    expect(r.notes.join('\n')).toContain('base_model "Qwen/Qwen3-8B-FP8" -> model.preset qwen3-8b');
  });
  it('an unknown model is an error naming the key, never a default model', () => {
    for (const [kind, key] of [
      ['axolotl', 'base_model'],
      ['llamafactory', 'model_name_or_path'],
    ] as const) {
      const r = importConfig(kind, `${key}: org/Foo-13B\n`);
      expect('error' in r, kind).toBe(true);
      if (!('error' in r)) continue;
      expect(r.error.path).toBe(key);
      expect(r.error.message).toBe(
        `${key}: "org/Foo-13B" is not in the model catalog; give its config.json (command line: llmem import ... --hf config.json or org/name; page: tick keep the current model and import the config.json as well) or choose model.preset`,
      );
    }
  });
  it('a text preset of a checkpoint with a vision tower says so, naming the preset that counts it', () => {
    const r = importConfig('axolotl', 'base_model: google/gemma-3-4b-it\nsequence_len: 2048\n');
    if ('error' in r) throw new Error(r.error.message);
    expect(r.config.model).toEqual({ preset: expect.stringMatching(/^gemma-3-4b(@|$)/) });
    expect(r.notes.join('\n')).toMatch(
      /holds a vision tower as well; gemma-3-4b counts the text model only .* gemma-3-4b-vision/,
    );
    const text = importConfig('axolotl', 'base_model: google/gemma-3-1b-it\nsequence_len: 2048\n');
    if ('error' in text) throw new Error(text.error.message);
    expect(text.notes.join('\n')).not.toContain('vision tower'); // Gemma 3 1B has none
  });
});
