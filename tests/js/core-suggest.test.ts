// "Make it fit" through the wasm and the CLI: every suggestion is verified by a full estimate of its patch.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core, SuggestResult } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { merge, resolveConfig } from '../../frontend/config/resolve.js';
import { gpuAlternatives } from '../../frontend/config/gpu-alternatives.js';
import { describe as words, suggestFor } from '../../frontend/config/suggest.js';

const root = repoRoot();
let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const config = (name: string): Config => {
  const r = resolveConfig(JSON.parse(readFileSync(join(root, 'tests/configs', name), 'utf8')));
  if (!r.ok) throw new Error(r.error.message);
  return r.config;
};
const cli = (args: string[], input?: string) =>
  spawnSync('node', [join(root, 'bin/llmem.mjs'), ...args], { cwd: root, input, encoding: 'utf8' });

/** Each suggestion's patch, merged into the config, fits leaving 10 % free, with the readings it reports. */
function expectVerified(c: Config, res: SuggestResult) {
  for (const s of res.suggestions) {
    const r = core.estimate(merge(c, s.patch));
    if (!r.ok) throw new Error(r.error.message);
    expect(r.per_gpu.device_used_bytes).toBe(s.device_used_bytes);
    expect(r.per_gpu.device_used_bytes).toBeLessThanOrEqual(0.9 * r.capacity_bytes);
    expect(r.host.cpu_bytes).toBe(s.host_cpu_bytes);
  }
}

describe('suggest', () => {
  it('Llama 3.1 70B on 8x H100 (FSDP2, 8192 tokens): three or more fitting changes and the fewest GPUs', () => {
    const c = config('llama-3.1-70b-fsdp-8xh100.json');
    const res = core.suggest(c, { free_fraction: 0.1 });
    if (!('suggestions' in res)) throw new Error(res.message);
    expect(res.base_fits).toBe(false);
    const distinct = new Set(res.suggestions.filter((s) => s.kind !== 'gpus').map((s) => JSON.stringify(s.patch)));
    expect(distinct.size).toBeGreaterThanOrEqual(3);
    expectVerified(c, res);
    expect(res.fewest_gpus).toBeGreaterThan(8);
    expect(res.fewest?.patch).toMatchObject({ parallel: { gpus: res.fewest_gpus } });
    // the same global batch: micro-batch x accumulation x data-parallel size
    const f = merge(c, res.fewest!.patch) as { training: Record<string, number>; parallel: Record<string, number> };
    const p = { tp: 1, pp: 1, cp: 1, ...f.parallel };
    expect((f.training.micro_batch * f.training.grad_accum * f.parallel.gpus) / (p.tp * p.pp * p.cp)).toBe(32);
    // a change that keeps full fine-tuning, and LoRA/QLoRA marked as another method
    expect(res.suggestions.some((s) => s.kind === 'same')).toBe(true);
    for (const s of res.suggestions)
      if (JSON.stringify(s.patch).includes('lora')) expect(s.kind === 'method' || s.kind === 'workload').toBe(true);
    // the training kept first (kinds in order), then the step time per token
    const order = ['same', 'numerics', 'method', 'workload', 'gpus'];
    const ranked = res.suggestions;
    for (let i = 1; i < ranked.length; i++) {
      const a = order.indexOf(ranked[i - 1].kind),
        b = order.indexOf(ranked[i].kind);
      expect(b).toBeGreaterThanOrEqual(a);
      if (a === b) expect(ranked[i].time_ratio).toBeGreaterThanOrEqual(ranked[i - 1].time_ratio);
    }
  });
  it('QLoRA 70B on one 48 GB GPU: recompute and the sequence that fits', () => {
    const c = config('llama-3.1-70b-qlora-1x48gb.json');
    const res = core.suggest(c);
    if (!('suggestions' in res)) throw new Error(res.message);
    expectVerified(c, res);
    const s = res.suggestions.find(
      (x) => (x.patch.training as Config | undefined)?.recompute === 'full' && x.kind === 'workload',
    );
    expect(s).toBeDefined();
    const seq = (s!.patch.training as Record<string, number>).seq_len;
    expect(seq).toBeLessThan(8192);
    expect(words(s!)).toContain(`sequence ${seq} tokens`);
    expect(words(s!)).toContain('full recompute');
  });
  it('names the next GPU model that fits', () => {
    const c = config('llama-3.1-8b-fsdp-8xh100.json');
    const small = resolveConfig(merge(c, { hardware: { gpu: 'a100-sxm-40gb' } }));
    if (!small.ok) throw new Error(small.error.message);
    const res = suggestFor(core, small.config, 0.1, gpuAlternatives(small.config, 40 * 2 ** 30));
    if (!('suggestions' in res)) throw new Error(res.message);
    expect(res.base_fits).toBe(false);
    // the 80 GB models do not fit this one (no recompute at 8192 tokens): the next is the H100 NVL or larger
    expect(['h100-nvl-94gb', 'h20-96gb', 'h200-141gb']).toContain(res.next_gpu?.id);
    expect(res.next_gpu?.device_used_bytes).toBeLessThanOrEqual(0.9 * (res.next_gpu?.capacity_bytes ?? 0));
  });
  it('refuses an invalid config with the key', () => {
    const r = core.suggest({ parallel: { engine: 'megatron', tp: 3, gpus: 8 } });
    expect('suggestions' in r).toBe(false);
  });
});

describe('llmem suggest', () => {
  it('prints the suggestions, the fewest GPUs and the next GPU model', () => {
    const r = cli(['suggest', 'tests/configs/llama-3.1-70b-fsdp-8xh100.json']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('does not fit');
    expect(r.stdout).toMatch(/fewest GPUs at the same global batch: \d+/);
    expect(r.stdout).toContain('next GPU model that fits');
  });
  it('--json carries each suggestion with its patch', () => {
    const r = cli(
      ['suggest', '-', '--json', '--free', '0.05'],
      readFileSync(join(root, 'tests/configs/llama-3.1-70b-qlora-1x48gb.json'), 'utf8'),
    );
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.ok).toBe(true);
    expect(j.free_fraction).toBe(0.05);
    expect(j.suggestions.length).toBeGreaterThan(0);
    expect(j.suggestions[0].patch).toBeTypeOf('object');
  });
  it('exit codes: 1 invalid config, 2 usage; --help', () => {
    expect(cli(['suggest', '-'], JSON.stringify({ parallel: { engine: 'megatron', tp: 3, gpus: 8 } })).status).toBe(1);
    expect(cli(['suggest']).status).toBe(2);
    expect(cli(['suggest', '-', '--free', '2'], '{}').status).toBe(2);
    const h = cli(['suggest', '--help']);
    expect(h.status).toBe(0);
    expect(h.stdout.split('\n')[0]).toContain('llmem suggest');
  });
});

describe('the planner request', () => {
  it('answers a suggest request once suggest.ts is plugged in (as the Worker does)', async () => {
    const { handleRequest, registerSuggest } = await import('../../frontend/planner.js');
    const c = config('llama-3.1-70b-qlora-1x48gb.json');
    registerSuggest(suggestFor);
    const r = handleRequest(core, { id: 1, kind: 'suggest', config: c, free: 0.1, gpus: [] });
    expect(r.kind === 'suggest' && r.ok && r.report.suggestions.every((s) => s.words.length > 0)).toBe(true);
  });
});
