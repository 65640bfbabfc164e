// Export JSON, import, and the CLI command line: the CLI prints the page's numbers.
import { execSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { formatGiB } from '../../frontend/format.js';
import { createAppState } from '../../frontend/state.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe('share', () => {
  it('exports config-v1 JSON that imports back to the same view', () => {
    const s = createAppState(
      core,
      '#v1/model.preset=mixtral-8x7b&training.recompute=selective&training.recompute_modules=core_attn,mlp&parallel.gpus=16&parallel.ep=8',
    );
    const json = JSON.parse(s.exportText.value);
    expect(json).toEqual({
      version: 1,
      model: { preset: 'mixtral-8x7b' },
      training: { recompute: 'selective', recompute_modules: ['core_attn', 'mlp'] },
      parallel: { gpus: 16, ep: 8 },
      hardware: { gpu: 'h100-sxm-80gb' },
    });
    const t = createAppState(core, '');
    expect(t.importText(s.exportText.value)).toBe(true);
    expect(t.hashText.value).toBe(s.hashText.value);
  });

  it('writes a CLI command with shell-safe --set values', () => {
    const s = createAppState(
      core,
      '#v1/model.preset=null&model.name=It%27s%20%22true%22&training.recompute=selective&training.recompute_modules=core_attn,mlp&hardware.gpu=null&hardware.memory_gib=24',
    );
    const cmd = s.cli.value;
    expect(cmd.startsWith(`echo '{"version":1}' | npx llmem estimate -`)).toBe(true);
    expect(cmd).toContain(`--set 'model.name=It'\\''s "true"'`);
    expect(cmd).toContain(`--set 'training.recompute_modules=["core_attn","mlp"]'`);
    expect(cmd).toContain('--set hardware.memory_gib=24');
    expect(cmd).not.toContain('hardware.gpu');
  });

  it('the CLI command prints the numbers the page shows', () => {
    for (const hash of [
      '',
      '#v1/parallel.tp=2&training.recompute=full',
      '#v1/model.preset=qwen2.5-7b&training.finetune.method=lora&hardware.gpu=a100-sxm-40gb',
    ]) {
      const s = createAppState(core, hash);
      const out = execSync(s.cli.value.replace('npx llmem', 'node bin/llmem.mjs'), {
        cwd: repoRoot(),
        encoding: 'utf8',
        shell: '/bin/bash',
      });
      const p = s.result.value!.per_gpu;
      expect(out).toContain(
        `peak allocated ${formatGiB(p.peak_allocated_bytes)} | reserved ${formatGiB(p.peak_reserved_bytes)} | nvidia-smi ${formatGiB(p.device_used_bytes)}`,
      );
    }
  });
});

describe('a link keeps the planner state (issue 13)', () => {
  it('opens the tab, the headroom, the sweep axis and range, and the pinned A, and writes them back', () => {
    const s = createAppState(core, '');
    s.planner.tab.value = 'compare';
    s.planner.freeFraction.value = 0.2;
    s.planner.sweepAxis.value = 'parallel.gpus';
    s.planner.setRange({ from: 8, to: 256 });
    s.planner.pin();
    s.setField('parallel.tp', 2);
    const hash = s.hashText.value;
    expect(hash).toBe(
      '#v1/parallel.tp=2&view.tab=compare&view.free=0.2&view.sweep=parallel.gpus&view.range=8,256,13,pow2&view.a=',
    );
    const t = createAppState(core, hash);
    expect(t.linkMessage.value).toBeNull();
    expect(t.planner.tab.value).toBe('compare');
    expect(t.planner.freeFraction.value).toBe(0.2);
    expect(t.planner.sweepAxis.value).toBe('parallel.gpus');
    expect(t.planner.range.value).toEqual({ from: 8, to: 256, points: 13, spacing: 'pow2' });
    expect(t.planner.pinned.value?.result.per_gpu.device_used_bytes).toBe(
      s.planner.pinned.value?.result.per_gpu.device_used_bytes,
    );
    expect(t.planner.diff.value?.length).toBeGreaterThan(0);
    expect(t.hashText.value).toBe(hash);
    // a link without view keys closes the planner again
    t.openHash('#v1/parallel.tp=4');
    expect([t.planner.tab.value, t.planner.freeFraction.value, t.planner.pinned.value]).toEqual([null, 0.1, null]);
    expect(t.hashText.value).toBe('#v1/parallel.tp=4');
    for (const x of [s, t]) x.planner.dispose();
  });

  it('a pinned A that cannot run is left out with a message; the rest opens', () => {
    const t = createAppState(core, '#v1/view.tab=compare&view.a=parallel.tp%3D3');
    expect(t.planner.tab.value).toBe('compare');
    expect(t.planner.pinned.value).toBeNull();
    expect(t.linkMessage.value).toMatch(/pinned A cannot run/);
    t.planner.dispose();
  });
});
