// The app state without a DOM: defaults, edits, bad input, presets, GPUs, links, import.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { createAppState } from '../../frontend/state.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const cliEstimate = (config: object) => {
  const r = resolveConfig(config as never);
  if (!r.ok) throw new Error(r.error.message);
  return core.estimate(r.config);
};

describe('app state', () => {
  it('opens on Llama 3.1 8B, 8x H100, FSDP2 with a result and no hash', () => {
    const s = createAppState(core, '');
    expect(s.get('model.preset')).toBe('llama-3.1-8b');
    expect(s.get('hardware.gpu')).toBe('h100-sxm-80gb');
    expect(s.get('parallel.engine')).toBe('fsdp2');
    expect(s.get('parallel.gpus')).toBe(8);
    expect(s.get('model.layers')).toBe(32);
    expect(s.hashText.value).toBe('');
    const r = s.result.value!;
    expect(r.params.total).toBeGreaterThan(8e9);
    expect(r.timeline!.total_bytes.length).toBeGreaterThan(10);
    expect(s.error.value).toBeNull();
  });

  it('shows the numbers the CLI computes for the exported config', () => {
    const s = createAppState(
      core,
      '#v1/model.preset=llama-3.1-70b&parallel.gpus=64&parallel.tp=8&training.seq_len=8192',
    );
    const cli = cliEstimate(JSON.parse(s.exportText.value));
    expect(cli.ok && cli.per_gpu).toEqual(s.result.value!.per_gpu);
  });

  it('an edit changes the numbers and the hash; setting it back clears the hash', () => {
    const s = createAppState(core, '');
    const before = s.result.value!.per_gpu.peak_allocated_bytes;
    s.setField('parallel.tp', 2);
    expect(s.result.value!.per_gpu.peak_allocated_bytes).toBeLessThan(before);
    expect(s.hashText.value).toBe('#v1/parallel.tp=2');
    s.setField('parallel.tp', 1);
    expect(s.hashText.value).toBe('');
  });

  it('bad input names the field and keeps the last good result', () => {
    const s = createAppState(core, '');
    const good = s.result.value;
    s.setField('parallel.tp', 3);
    expect(s.error.value?.path).toBe('parallel.tp');
    expect(s.stale.value).toBe(true);
    expect(s.result.value).toBe(good);
    s.setField('parallel.tp', 2);
    expect(s.error.value).toBeNull();
    expect(s.result.value).not.toBe(good);
  });

  it('an unparsable field is an error at that field until fixed', () => {
    const s = createAppState(core, '');
    s.setDraft('training.seq_len', '', 'enter a value');
    expect(s.error.value).toEqual({ path: 'training.seq_len', message: 'enter a value' });
    s.setField('training.seq_len', 2048);
    expect(s.error.value).toBeNull();
  });

  it('a garbage link shows a message and the default view', () => {
    const s = createAppState(core, '#v1/parallel.tp=banana');
    expect(s.linkMessage.value).toMatch(/not a number/);
    expect(s.hashText.value).toBe('');
    expect(s.result.value).not.toBeNull();
  });

  it('a link whose config cannot run opens with the error at the field and no result', () => {
    const s = createAppState(core, '#v1/parallel.tp=3');
    expect(s.linkMessage.value).toBeNull();
    expect(s.error.value?.path).toBe('parallel.tp');
    expect(s.result.value).toBeNull();
  });

  it('a preset replaces the model; custom keeps the current values', () => {
    const s = createAppState(core, '#v1/model.layers=16');
    s.setPreset('mixtral-8x7b');
    expect(s.get('model.moe.experts')).toBe(8);
    expect(s.hashText.value).toBe('#v1/model.preset=mixtral-8x7b');
    s.setPreset(null);
    expect(s.get('model.moe.experts')).toBe(8);
    expect(s.get('model.layers')).toBe(32);
    const custom = s.result.value!.per_gpu.peak_allocated_bytes;
    s.setPreset('mixtral-8x7b');
    expect(s.result.value!.per_gpu.peak_allocated_bytes).toBe(custom);
  });

  it('making a MoE model dense', () => {
    const s = createAppState(core, '#v1/model.preset=mixtral-8x7b');
    s.clearGroup('model.moe');
    expect(s.get('model.moe.experts')).toBe(0);
    expect(s.error.value).toBeNull();
  });

  it('a GPU sets the memory; custom memory is typed in GiB', () => {
    const s = createAppState(core, '');
    expect(s.result.value!.capacity_bytes).toBe(85520809984);
    s.setGpu('a100-sxm-40gb');
    expect(s.result.value!.capacity_bytes).toBe(40 * 2 ** 30);
    s.setGpu(null);
    expect(s.get('hardware.memory_gib')).toBe(40);
    s.setField('hardware.memory_gib', 24);
    expect(s.result.value!.capacity_bytes).toBe(24 * 2 ** 30);
    expect(s.hashText.value).toMatch(/^#v1\/hardware\.gpu=null&hardware\.memory_gib=24(&|$)/);
    // the custom GPU keeps the A100's speeds
    expect(s.get('hardware.bf16_tflops')).toBe(312);
  });

  it('hiding a field drops its override', () => {
    const s = createAppState(core, '#v1/parallel.engine=deepspeed&parallel.zero_stage=3');
    s.setField('parallel.engine', 'fsdp2');
    expect(s.hashText.value).toBe('');
  });

  it('import: good JSON loads, broken JSON leaves the config alone with a message', () => {
    const s = createAppState(core, '');
    expect(s.importText('{"parallel": {"tp": 2}')).toBe(false);
    expect(s.importMessage.value).toMatch(/not valid JSON/);
    expect(s.importText('{"parallel": {"tensor": 2}}')).toBe(false);
    expect(s.importMessage.value).toMatch(/parallel.tensor/);
    expect(s.importText('{"model": {"preset": "gpt-5"}}')).toBe(false);
    expect(s.importMessage.value).toMatch(/unknown model/);
    expect(s.hashText.value).toBe('');
    expect(
      s.importText(
        '{"version": 1, "model": {"preset": "qwen2.5-7b"}, "parallel": {"tp": 2}, "hardware": {"gpu": "h100-sxm-80gb"}}',
      ),
    ).toBe(true);
    expect(s.hashText.value).toBe('#v1/model.preset=qwen2.5-7b&parallel.tp=2');
    expect(s.importMessage.value).toBeNull();
  });

  it('import of a config without a GPU means custom memory (as the CLI reads it)', () => {
    const s = createAppState(core, '');
    s.importText('{"model": {"preset": "llama-3.1-8b"}}');
    expect(s.get('hardware.gpu')).toBeNull();
    expect(s.result.value!.capacity_bytes).toBe(80 * 2 ** 30);
  });

  it('openHash follows links pasted into the address bar', () => {
    const s = createAppState(core, '');
    s.openHash('#v1/parallel.tp=4');
    expect(s.get('parallel.tp')).toBe(4);
    s.openHash('#junk');
    expect(s.linkMessage.value).toMatch(/not an llmem link/);
    expect(s.get('parallel.tp')).toBe(1);
  });
});

describe('Reset and links that cannot run (issue 13)', () => {
  it('Reset can be undone until the next change', () => {
    const s = createAppState(core, '#v1/parallel.tp=2&training.seq_len=8192');
    s.reset();
    expect(s.hashText.value).toBe('');
    expect(s.undoable.value).not.toBeNull();
    s.undoReset();
    expect(s.hashText.value).toBe('#v1/training.seq_len=8192&parallel.tp=2');
    expect(s.undoable.value).toBeNull();
    s.reset();
    s.setField('parallel.tp', 4);
    expect(s.undoable.value, 'an edit after Reset ends the undo').toBeNull();
    // nothing to undo when the setup was the default already
    const t = createAppState(core, '');
    t.reset();
    expect(t.undoable.value).toBeNull();
  });

  it('names the field of a link whose value is unreadable, or whose setup cannot run', () => {
    const bad = createAppState(core, '#v1/parallel.tp=banana');
    expect(bad.linkMessage.value).toMatch(
      /parallel\.tp: "banana" is not a number\. Showing the default setup instead\./,
    );
    expect(bad.linkPath.value).toBe('parallel.tp');
    const invalid = createAppState(core, '#v1/parallel.tp=3');
    expect(invalid.linkMessage.value).toBeNull();
    expect(invalid.linkErrorPath.value).toBe('parallel.tp');
    invalid.openHash('#v1/parallel.tp=2');
    expect(invalid.linkErrorPath.value).toBeNull();
  });
});
