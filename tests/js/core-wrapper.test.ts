// The wasm wrapper: flattening by the core's field table, errors that name the key, result shape.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core, EstimateResult } from '../../wasm/llmem.js';
import { CATEGORIES } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { MODELS, GPUS } from '../../frontend/config/catalog.js';
import { resolveConfig } from '../../frontend/config/resolve.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const ok = (r: ReturnType<Core['estimate']>): EstimateResult => {
  if (!r.ok) throw new Error(r.error.message);
  return r;
};

describe('config flattening', () => {
  it('defaults round-trip to the core defaults', () => {
    const flat = core.flatten(core.defaults());
    expect(flat).toBeInstanceOf(Float64Array);
    const f = flat as Float64Array;
    for (const field of core.fields) {
      const slots = field.kind === 'list' ? field.max : 1; // a list key: its default in every slot
      for (let k = 0; k < slots; k++)
        if (Number.isNaN(field.default)) expect(Number.isNaN(f[field.slot + k])).toBe(true);
        else expect(f[field.slot + k]).toBe(field.default);
    }
  });
  it('an empty config is valid', () => expect(core.estimate({}).ok).toBe(true));
  it('unknown keys name the path and the allowed keys', () => {
    const r = core.estimate({ parallel: { tensor_parallel: 2 } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.path).toBe('parallel.tensor_parallel');
    expect(r.error.message).toContain('allowed here: ');
    expect(r.error.message).toContain('tp');
  });
  it('wrong types and enum values name the allowed values', () => {
    const cases: [unknown, string, string][] = [
      [{ parallel: { tp: '2' } }, 'parallel.tp', 'whole number'],
      [{ parallel: { engine: 'fsdp3' } }, 'parallel.engine', 'fsdp2'],
      [{ training: { recompute_modules: ['attn'] } }, 'training.recompute_modules', 'core_attn'],
      [{ model: { tied_embeddings: 1 } }, 'model.tied_embeddings', 'true or false'],
      [{ model: { layers: null } }, 'model.layers', 'whole number'],
      [{ model: 3 }, 'model', 'object'],
      [[1, 2], '', 'JSON object'],
    ];
    for (const [config, path, needle] of cases) {
      const r = core.estimate(config);
      expect(r.ok, JSON.stringify(config)).toBe(false);
      if (r.ok) continue;
      expect(r.error.path).toBe(path);
      expect(r.error.message).toContain(needle);
    }
  });
  it('core range and combination errors come back with their path', () => {
    const cases: [unknown, string][] = [
      [{ model: { layers: 0 } }, 'model.layers'],
      [{ parallel: { engine: 'megatron', tp: 3, gpus: 3 } }, 'parallel.tp'],
      [{ parallel: { gpus: 6, engine: 'megatron', tp: 4 } }, 'parallel.gpus'],
      [{ training: { micro_batch: 1.5 } }, 'training.micro_batch'],
    ];
    for (const [config, path] of cases) {
      const r = core.estimate(config);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.path).toBe(path);
        expect(r.error.message.startsWith(path)).toBe(true);
      }
    }
  });
  it('null groups reset to dense / no MLA', () => {
    const dense = ok(core.estimate({ model: { moe: null, mla: null } }));
    const plain = ok(core.estimate({}));
    expect(dense.params.total).toBe(plain.params.total);
  });
});

describe('results', () => {
  it('follow the config-v1 result format', () => {
    const r = ok(core.estimate({}, { timeline: true }));
    expect(Object.keys(r.per_gpu.breakdown_bytes)).toEqual([...CATEGORIES]);
    const sum = CATEGORIES.reduce((s, c) => s + r.per_gpu.breakdown_bytes[c], 0);
    expect(Math.abs(sum - r.per_gpu.peak_allocated_bytes)).toBeLessThan(1e-6 * sum);
    expect(r.per_gpu.peak_reserved_bytes).toBeGreaterThanOrEqual(r.per_gpu.peak_allocated_bytes);
    expect(r.per_gpu.device_used_bytes).toBeGreaterThan(r.per_gpu.peak_reserved_bytes);
    expect(r.ranks.length).toBe(1);
    expect(r.per_gpu.peak_at).toMatch(/^(forward|loss|backward|optimizer)/);
    expect(r.timeline!.total_bytes.length).toBeGreaterThan(50);
    expect(Math.max(...r.timeline!.total_bytes)).toBe(r.per_gpu.peak_allocated_bytes);
  });
  it('report one rank per pipeline stage', () => {
    const r = ok(core.estimate({ parallel: { engine: 'megatron', pp: 4, gpus: 8 }, training: { grad_accum: 8 } }));
    expect(r.ranks.map((x) => x.stage)).toEqual([0, 1, 2, 3]);
  });
  it('more sharding lowers per-GPU memory, a longer sequence raises it', () => {
    const at = (gpus: number, seq: number) =>
      ok(core.estimate({ parallel: { gpus }, training: { seq_len: seq } })).per_gpu.peak_allocated_bytes;
    expect(at(64, 4096)).toBeLessThan(at(8, 4096));
    expect(at(8, 8192)).toBeGreaterThan(at(8, 4096));
  });
});

describe('catalog', () => {
  it('every preset resolves, runs, and matches its published parameter count', () => {
    for (const m of MODELS) {
      const resolved = resolveConfig({
        model: { preset: m.id },
        parallel: { gpus: 1, engine: 'single' },
        training: { seq_len: 256 },
      });
      expect(resolved.ok, m.id).toBe(true);
      if (!resolved.ok) continue;
      const r = core.estimate(resolved.config);
      if (!r.ok) throw new Error(`${m.id}: ${r.error.message}`);
      if (m.params_total !== null) expect(r.params.total, m.id).toBe(m.params_total);
    }
  });
  it('unknown presets and GPUs are errors naming the key', () => {
    const a = resolveConfig({ model: { preset: 'llama-9' } });
    expect(a.ok).toBe(false);
    if (!a.ok) expect(a.error.path).toBe('model.preset');
    const b = resolveConfig({ hardware: { gpu: 'h900' } });
    expect(b.ok).toBe(false);
    if (!b.ok) expect(b.error.path).toBe('hardware.gpu');
  });
  it('a GPU id sets the capacity unless memory_gib is given', () => {
    const h100 = GPUS.find((g) => g.id === 'h100-sxm-80gb')!;
    const a = resolveConfig({ hardware: { gpu: 'h100-sxm-80gb' } });
    expect(a.ok && (a.config.hardware as { memory_gib: number }).memory_gib).toBe((h100.memory_bytes ?? 0) / 2 ** 30);
    const b = resolveConfig({ hardware: { gpu: 'h100-sxm-80gb', memory_gib: 64 } });
    expect(b.ok && (b.config.hardware as { memory_gib: number }).memory_gib).toBe(64);
  });
  it("a GPU id sets the step time's memory bandwidth unless given (an L4's 0.3 TB/s, not a guess from its peak)", () => {
    const l4 = (extra: object) =>
      resolveConfig({ hardware: { gpu: 'l4', ...extra }, parallel: { gpus: 1, engine: 'single' } });
    const a = l4({});
    expect(a.ok && (a.config.hardware as { hbm_tb_per_s: number }).hbm_tb_per_s).toBe(0.3);
    const given = l4({ hbm_tb_per_s: 0.6 });
    expect(given.ok && (given.config.hardware as { hbm_tb_per_s: number }).hbm_tb_per_s).toBe(0.6);
    const memoryBound = (r: typeof a) => {
      const st = r.ok ? core.stepTime(r.config) : null;
      return st && 'parts' in st ? st.parts.memory_bound : Number.NaN;
    };
    expect(memoryBound(a) / memoryBound(given)).toBeCloseTo(2, 12);
    expect(memoryBound(l4({ hbm_tb_per_s: null })) / memoryBound(a)).toBeCloseTo(0.3 / 1.555, 12);
  });
});

// views.ts and core.ts read the structs by generated readers (READ, VIEWS); a member added to a C struct
// must not change these shapes (the CLI's --json and the page read them) without a change here.
describe('result shapes', () => {
  const keys = (o: object) => Object.keys(o).join(' ');
  const rl = (c: unknown) => ok(core.estimate((resolveConfig(c) as { config: unknown }).config, { timeline: true }));

  it('estimate: the result, a rank, a term, an RL phase, the timeline', () => {
    const r = rl({ model: { preset: 'qwen2.5-0.5b' }, rl: { algorithm: 'grpo' } });
    expect(keys(r)).toBe(
      'ok per_gpu peak_allocated ranks params host fits utilization capacity_bytes warnings terms rl timeline',
    );
    const rank =
      'stage peak_allocated_bytes peak_reserved_bytes device_used_bytes breakdown_bytes persistent_bytes ' +
      'fragmentation_bytes largest_free_block_bytes reserved_simulated params layers mixer_layers moe_layers peak_phase peak_micro_batch peak_layer ' +
      'peak_bound bound_stage';
    expect(keys(r.per_gpu)).toBe(`${rank} peak_at`);
    expect(keys(r.ranks[0])).toBe(rank);
    expect(keys(r.terms[0])).toBe('category label formula value_bytes id inputs');
    expect(keys(r.rl!)).toBe('phases kv_cache_bytes kv_cache_tokens engine_bytes');
    expect(keys(r.rl!.phases[0])).toBe('phase peak_allocated_bytes device_used_bytes breakdown_bytes model_bytes');
    expect(keys(r.timeline!)).toBe('stride total_bytes reserved_bytes category_bytes phase micro_batch layer');
  });

  it('sweep, search and suggest', () => {
    const sweep = core.sweep({}, 'parallel.tp', [1, 3]);
    if (!Array.isArray(sweep)) throw new Error(sweep.message);
    const readings = 'peak_allocated_bytes peak_reserved_bytes device_used_bytes capacity_bytes fits';
    expect(sweep.map(keys)).toEqual([`value ok ${readings}`, `value ok error ${readings}`]);
    const search = core.search({}, { gpus: 8 });
    if ('message' in search) throw new Error(search.message);
    expect(keys(search)).toBe('candidates valid fitting global_batch rejected layouts');
    expect(keys(search.layouts[0])).toBe(
      'dp tp pp vpp cp ep micro_batch grad_accum rollout_tp device_used_bytes step_seconds tokens_per_second_per_gpu pareto patch',
    );
    const suggest = core.suggest({ model: { preset: 'llama-3.1-70b' }, hardware: { memory_gib: 80 } });
    if ('message' in suggest) throw new Error(suggest.message);
    expect(keys(suggest)).toBe(
      'base_fits base_device_used_bytes capacity_bytes base_step_seconds candidates suggestions fewest_gpus fewest',
    );
    expect(keys(suggest.suggestions[0])).toBe(
      'kind changes patch peak_allocated_bytes peak_reserved_bytes device_used_bytes host_cpu_bytes ' +
        'host_cpu_bytes_per_node host_nvme_bytes step_seconds time_ratio gpus',
    );
  });
});
