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
