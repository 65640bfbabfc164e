// The Import / Export dialogs' state (frontend/io-state.ts, with the lazily
// loaded frontend/config/formats.ts): detection, the preview, how Apply merges
// each kind into the page's config, malformed input, and the exports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { createAppState } from '../../frontend/state.js';
import { createIo, MAX_IMPORT_BYTES, pairFiles } from '../../frontend/io-state.js';
import { detectSource } from '../../frontend/config/formats.js';

const fixture = (p: string) => readFileSync(join(repoRoot(), 'tests/fixtures/import', p), 'utf8');
const real = (p: string) => readFileSync(join(repoRoot(), 'tests/fixtures/real', p), 'utf8');
const file = (text: string, name: string) => new File([text], name, { type: 'text/plain' });
let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

/** A page state with its dialog open and the formats loaded. */
async function opened(hash = '') {
  const s = createAppState(core, hash);
  s.io.openImport();
  await s.io.load();
  return s;
}

describe('detecting the kind', () => {
  it('config v1 before the importers; config.json by name; unknown text', () => {
    expect(detectSource(core.fields, 'x.json', '{"version": 1, "parallel": {"tp": 2}}')).toBe('config');
    expect(detectSource(core.fields, 'config.json', '{"model": {"preset": "llama-3.1-8b"}}')).toBe('config');
    expect(detectSource(core.fields, 'config.json', fixture('hf/qwen2.5-7b.json'))).toBe('hf');
    expect(detectSource(core.fields, '', fixture('torchtitan/llama3_8b.toml'))).toBe('torchtitan');
    expect(detectSource(core.fields, '', fixture('deepspeed/zero2-bf16.json'))).toBe('deepspeed');
    expect(detectSource(core.fields, '', 'hello')).toBeUndefined();
    expect(detectSource(core.fields, 'broken.json', '{"parallel": {"tp": 2}')).toBe('config'); // says where the JSON breaks
    expect(detectSource(core.fields, 'x.json', '{"flux": 1}')).toBe('config'); // says which key is unknown
  });
});

describe('import', () => {
  it('a Hugging Face config.json replaces the model (custom, named after the file); notes shown before Apply', async () => {
    const s = await opened('#v1/parallel.tp=2');
    const before = s.result.value!.params.total;
    await s.io.readFile(new File([fixture('hf/qwen2.5-7b.json')], 'qwen2.5-7b.json', { type: 'application/json' }));
    expect(s.io.kind.value).toBe('hf');
    const p = s.io.preview.value!;
    if (!p.ok) throw new Error(p.message);
    expect(p.notes.join('\n')).toMatch(/sliding_window/);
    expect(p.changes.map((c) => c.path)).toEqual(
      expect.arrayContaining(['model.preset', 'model.layers', 'model.hidden', 'model.vocab']),
    );
    expect(p.changes.map((c) => c.path)).not.toContain('parallel.tp');
    expect('error' in p.estimate).toBe(false);
    expect(s.doc.value['model.preset']).toBe('llama-3.1-8b'); // nothing applied yet
    expect(s.io.apply()).toBe(true);
    expect(s.doc.value).toMatchObject({
      'model.preset': null,
      'model.name': 'qwen2.5-7b',
      'model.layers': 28,
      'model.hidden': 3584,
      'parallel.tp': 2,
    });
    expect(s.result.value!.params.total).not.toBe(before);
    expect(s.io.dialog.value).toBeNull();
    expect(s.io.notice.value).toBe('Imported qwen2.5-7b.json (Hugging Face config.json)');
    expect(s.io.source.value.text).toBe('');
  });

  it('malformed input: an inline message, Apply does nothing', async () => {
    const s = await opened();
    const doc = s.doc.value;
    s.io.setText('{"model_type": "llama", "hidden_size": 4096');
    expect(s.io.kind.value).toBe('hf');
    const p = s.io.preview.value!;
    expect(p.ok).toBe(false);
    expect(!p.ok && p.message).toMatch(/not valid JSON/);
    expect(s.io.apply()).toBe(false);
    expect(s.doc.value).toBe(doc);
    s.io.setText('{"version": 1, "parallel": {"tp": "two"}}');
    expect(s.io.kind.value).toBe('config');
    expect(s.io.preview.value!.ok).toBe(false);
    s.io.setText('just words');
    expect(s.io.kind.value).toBeUndefined();
    expect(s.io.preview.value).toBeNull();
  });

  it("torchtitan: its model preset, training and parallel keys replace the page's; the world size sets the GPU count", async () => {
    const s = await opened('#v1/model.preset=qwen2.5-7b&training.micro_batch=4&hardware.gpu=a100-sxm-80gb');
    s.io.setText(fixture('torchtitan/llama3_8b.toml'));
    expect(s.io.kind.value).toBe('torchtitan');
    expect(s.io.needsWorld.value).toBe(true);
    s.io.worldText.value = 'many';
    expect(s.io.worldSize.value.message).toMatch(/whole number/);
    expect(s.io.preview.value).toBeNull();
    s.io.worldText.value = '64';
    expect(s.io.apply()).toBe(true);
    expect(s.doc.value).toMatchObject({
      'model.preset': 'llama-3.1-8b',
      'hardware.gpu': 'a100-sxm-80gb',
      'training.seq_len': 8192,
      'training.recompute': 'per_op',
      'parallel.gpus': 64,
    });
    expect(s.doc.value['training.micro_batch']).toBeUndefined(); // 1 from the file = the default
  });

  it('Megatron architecture keys without a preset go on top of the current model, made custom', async () => {
    const s = await opened('#v1/model.preset=qwen2.5-7b');
    s.io.setText(fixture('megatron/llama2-70b-pretrain.sh'));
    expect(s.io.kind.value).toBe('megatron');
    expect(s.io.apply()).toBe(true);
    expect(s.doc.value).toMatchObject({
      'model.preset': null,
      'model.layers': 80,
      'parallel.engine': 'megatron',
      'parallel.tp': 8,
      'parallel.gpus': 128,
    });
    expect(s.get('model.vocab')).toBe(152064); // Qwen2.5 7B's, kept: the script has no --vocab-size
  });

  it('settings the result hides are dropped (ZeRO stage after an FSDP import)', async () => {
    const s = await opened('#v1/parallel.engine=deepspeed&parallel.zero_stage=2');
    s.io.setText(fixture('accelerate/fsdp-bert.yaml'));
    expect(s.io.kind.value).toBe('accelerate');
    expect(s.io.apply()).toBe(true);
    expect(s.doc.value['parallel.engine']).toBe('fsdp1');
    expect('parallel.zero_stage' in s.doc.value).toBe(false);
  });

  it('config v1 through the same dialog replaces everything; a kind chosen by hand wins', async () => {
    const s = await opened('#v1/parallel.tp=2&training.seq_len=8192');
    s.io.setText('{"version":1,"model":{"preset":"qwen2.5-7b"},"hardware":{"gpu":"h100-sxm-80gb"}}');
    s.io.kindChoice.value = 'hf';
    expect(s.io.preview.value!.ok).toBe(false);
    s.io.kindChoice.value = 'auto';
    expect(s.io.kind.value).toBe('config');
    expect(s.io.apply()).toBe(true);
    expect(s.hashText.value).toBe('#v1/model.preset=qwen2.5-7b');
  });

  it('LoRA from axolotl: unsupported keys listed, never dropped', async () => {
    const s = await opened();
    s.io.setText(
      'base_model: meta-llama/Meta-Llama-3-8B\nadapter: lora\nlora_target_modules:\n  - q_proj\n  - embed_tokens\n',
    );
    const p = s.io.preview.value!;
    if (!p.ok) throw new Error(p.message);
    expect(p.unsupported.join('\n')).toMatch(/embed_tokens/);
  });

  it('a training tool llmem does not read is named under Format, with nothing to apply', async () => {
    const s = await opened();
    s.io.setText('name: megatron_gpt\ntrainer:\n  devices: 1\nexp_manager:\n  name: x\nmodel:\n  hidden_size: 768\n');
    expect(s.io.detected.value).toBeUndefined();
    expect(s.io.unread.value).toMatch(/NeMo 1\.x/);
    expect(s.io.apply()).toBe(false);
    s.io.setText(fixture('torchtitan/llama3_8b.toml'));
    expect(s.io.unread.value).toBeUndefined();
  });

  it('a world size typed for one file does not carry over to the next file, even after a cancelled import', async () => {
    const s = await opened();
    await s.io.readFiles([file(real('megatron/mixtral_8x7b.sh'), 'mixtral_8x7b.sh')]);
    s.io.worldText.value = '32';
    s.io.close(); // cancelled
    await s.io.readFiles([file(real('megatron/mamba_train.sh'), 'mamba_train.sh')]);
    expect(s.io.worldText.value).toBe('');
    const p = s.io.preview.value!;
    if (!p.ok) throw new Error(p.message); // with the stale 32: "--global-batch-size 32 is not a multiple of ..."
  });

  it('a config and the DeepSpeed JSON it names, dropped together, import together (either order)', async () => {
    const yaml = real('accelerate/deepspeed.yaml');
    const ds = real('accelerate/zero_stage1_config.json');
    for (const files of [
      [file(yaml, 'deepspeed.yaml'), file(ds, 'zero_stage1_config.json')],
      [file(ds, 'zero_stage1_config.json'), file(yaml, 'deepspeed.yaml')],
    ]) {
      const s = await opened();
      await s.io.readFiles(files);
      expect(s.io.source.value.name).toBe('deepspeed.yaml');
      expect(s.io.also.value?.name).toBe('zero_stage1_config.json');
      expect(s.io.kind.value).toBe('accelerate');
      const p = s.io.preview.value!;
      if (!p.ok) throw new Error(p.message);
      expect(p.unsupported).toEqual([]);
      expect(p.notes.join('\n')).toMatch(/read from the file given with this one/);
      expect(s.io.apply()).toBe(true);
      expect(s.doc.value).toMatchObject({ 'parallel.zero_stage': 1, 'training.dtype': 'fp16', 'parallel.gpus': 2 });
      expect(s.io.notice.value).toBe('Imported deepspeed.yaml with zero_stage1_config.json (accelerate YAML)');
      expect(s.io.also.value).toBeNull();
    }
  });

  it('one file alone says the DeepSpeed file was not read; Leave it out drops the second file', async () => {
    const s = await opened();
    await s.io.readFile(file(real('accelerate/deepspeed.yaml'), 'deepspeed.yaml'));
    const alone = s.io.preview.value!;
    if (!alone.ok) throw new Error(alone.message);
    expect(alone.unsupported.join('\n')).toMatch(/zero_stage1_config.json" was not read/);
    await s.io.readFiles([
      file(real('accelerate/deepspeed.yaml'), 'deepspeed.yaml'),
      file(real('accelerate/zero_stage1_config.json'), 'zero_stage1_config.json'),
    ]);
    s.io.dropAlso();
    const p = s.io.preview.value!;
    if (!p.ok) throw new Error(p.message);
    expect(p.unsupported.join('\n')).toMatch(/was not read/);
  });

  it('two files that are not a config and its DeepSpeed JSON, or more than two, are refused', async () => {
    const s = await opened();
    await s.io.readFiles([file('a: 1\n', 'a.yaml'), file('b: 2\n', 'b.yaml')]);
    expect(s.io.fileMessage.value).toMatch(/neither names the other/);
    await s.io.readFiles([file('a', 'a'), file('b', 'b'), file('c', 'c')]);
    expect(s.io.fileMessage.value).toMatch(/3 files/);
    expect(s.io.source.value.text).toBe('');
    // without names in the text, the DeepSpeed JSON is the one with DeepSpeed keys
    const ds = { text: '{"zero_optimization": {"stage": 2}}', name: 'x.json' };
    const cfg = { text: 'deepspeed: elsewhere.json\n', name: 'run.yaml' };
    expect(pairFiles(ds, cfg)).toEqual({ config: cfg, also: ds });
    // nor an accelerate config: it is the launch of the other (open-r1: accelerate launch --config_file zero3.yaml)
    const launch = { text: 'compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n', name: 'zero3.yaml' };
    const recipe = { text: 'model_name_or_path: Qwen/Qwen2.5-7B\nmax_length: 4096\n', name: 'config.yaml' };
    expect(pairFiles(launch, recipe)).toEqual({ config: recipe, also: launch });
  });

  it('files too large or not text are refused before reading', async () => {
    const s = await opened();
    const big = new File([new Uint8Array(MAX_IMPORT_BYTES + 1)], 'model.safetensors');
    await s.io.readFile(big);
    expect(s.io.fileMessage.value).toMatch(/not a config file/);
    await s.io.readFile(new File([new Uint8Array([0, 1, 2])], 'blob.bin'));
    expect(s.io.fileMessage.value).toMatch(/not a text file/);
    expect(s.io.source.value.text).toBe('');
  });

  it('a chunk that cannot load is a message, and the next open retries', async () => {
    const s = createAppState(core);
    let fail = true;
    const io = createIo(s, () =>
      fail ? Promise.reject(new Error('offline')) : import('../../frontend/config/formats.js'),
    );
    expect(await io.load()).toBeNull();
    expect(io.loadError.value).toMatch(/could not load \(offline\)/);
    fail = false;
    expect(await io.load()).not.toBeNull();
    expect(io.loadError.value).toBeNull();
  });
});

describe('export', () => {
  it("config v1 is the page's JSON; the framework formats list what they cannot express", async () => {
    const s = createAppState(core, '#v1/training.recompute=per_op&parallel.tp=2');
    s.io.openExport();
    expect(s.io.exported.value!.text).toBe(s.exportText.value);
    s.io.exportKind.value = 'megatron';
    await s.io.load();
    const m = s.io.exported.value!;
    expect(m.text).toContain('--tensor-model-parallel-size 2');
    expect(
      m.text
        .split('\n')
        .slice(1, -1)
        .every((l) => /^ {4}--\S+( \S+)* \\$|^ {4}--\S+( \S+)*$/.test(l)),
    ).toBe(true); // one argument per line
    expect(m.unexpressed.join('\n')).toMatch(/training.recompute/);
    const back = s.io.formats.value!.importConfig('megatron', m.text); // the page's form reads back
    expect('error' in back ? back.error.message : back.config.parallel).toMatchObject({ tp: 2 });
    s.io.exportKind.value = 'torchtitan';
    expect(s.io.exported.value!.text).toContain('tensor_parallel_degree = 2');
    s.io.exportKind.value = 'deepspeed';
    expect(JSON.parse(s.io.exported.value!.text)).toHaveProperty('zero_optimization');
  });
});
