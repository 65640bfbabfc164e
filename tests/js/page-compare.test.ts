// A/B and measured truth on the page: the difference per reading and per
// category, which settings differ, the measured overlay lines, and loading a
// measurement (probe output, accuracy case, bad files) with the numbers of
// `llmem compare`.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core, EstimateResult } from '../../wasm/llmem.js';
import { CATEGORIES } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { readMeasurement, seriesPhasePeaks, type Measurement } from '../../frontend/config/compare.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { changedKeys, diffResults, measuredOnTimeline, measuredPhaseLines } from '../../frontend/planner.js';
import { createAppState } from '../../frontend/state.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const root = repoRoot();
const GIB_ = 2 ** 30;
const probeFile = join(root, 'tests/fixtures/probe-output.json');
const probeText = readFileSync(probeFile, 'utf8');

const estimate = (c: object): EstimateResult => {
  const r = resolveConfig(c);
  if (!r.ok) throw new Error(r.error.message);
  const e = core.estimate(r.config, { timeline: true });
  if (!e.ok) throw new Error(e.error.message);
  return e;
};

describe('A/B difference', () => {
  it('per reading and per category; categories and overheads add up to the nvidia-smi difference', () => {
    const a = estimate({ model: { preset: 'llama-3.1-8b' } });
    const b = estimate({ model: { preset: 'llama-3.1-8b' }, training: { seq_len: 8192 } });
    const rows = diffResults(a, b);
    expect(rows.slice(0, 3).map((r) => r.key)).toEqual([
      'peak_allocated_bytes',
      'peak_reserved_bytes',
      'device_used_bytes',
    ]);
    expect(rows.filter((r) => r.kind === 'category').map((r) => r.key)).toEqual([...CATEGORIES, 'reserved', 'runtime']);
    for (const r of rows) expect(r.diff).toBe(r.b - r.a);
    const sum = rows.filter((r) => r.kind === 'category').reduce((s, r) => s + r.diff, 0);
    const dev = rows.find((r) => r.key === 'device_used_bytes')!.diff;
    expect(Math.abs(sum - dev)).toBeLessThan(1024);
    expect(rows.find((r) => r.key === 'activations')!.diff).toBeGreaterThan(0);
    expect(rows.find((r) => r.key === 'weights')!.diff).toBe(0);
    expect(diffResults(a, a).every((r) => r.diff === 0)).toBe(true);
  });
  it('lists the settings that differ', () => {
    expect(changedKeys({ x: 1, y: 'a', z: [1] }, { x: 1, y: 'b', z: [1, 2], w: null })).toEqual([
      { path: 'y', a: 'a', b: 'b' },
      { path: 'z', a: [1], b: [1, 2] },
    ]);
  });
  it('pin A, change, and the state shows both', () => {
    const s = createAppState(core, '');
    s.planner.pin();
    expect(s.planner.diff.value!.every((r) => r.diff === 0)).toBe(true);
    s.setField('parallel.tp', 2);
    const d = s.planner.diff.value!;
    expect(d.find((r) => r.key === 'weights')!.diff).toBeLessThan(0);
    expect(changedKeys(s.planner.pinned.value!.values, s.values.value).map((c) => c.path)).toEqual(['parallel.tp']);
    s.load(s.planner.pinned.value!.doc);
    expect(s.get('parallel.tp')).toBe(1);
    s.planner.dispose();
  });
});

describe('measured overlay', () => {
  it('puts each measured phase peak over the events of that phase', () => {
    const doc = JSON.parse(probeText);
    const m = readMeasurement(doc) as Measurement;
    const res = estimate(doc.config);
    const lines = measuredPhaseLines(res, m);
    expect(lines.map((l) => l.phase)).toEqual(['forward', 'backward', 'optimizer']);
    expect(lines.map((l) => l.value)).toEqual([
      m.phases!.forward!.peak_allocated_bytes,
      m.phases!.backward!.peak_allocated_bytes,
      m.phases!.optimizer!.peak_allocated_bytes,
    ]);
    const t = res.timeline!;
    for (const l of lines) {
      expect(l.from).toBeLessThanOrEqual(l.to);
      expect(t.phase[l.from]).toMatch(l.phase === 'forward' ? /forward|loss/ : l.phase);
    }
    expect(lines[0].to).toBeLessThan(lines[1].from);
    // a measurement without phases: one line over the whole step
    const whole = measuredPhaseLines(res, { peak_allocated_bytes: 5e9 });
    expect(whole).toEqual([{ phase: 'step', value: 5e9, from: 0, to: t.total_bytes.length - 1 }]);
  });

  it("loading the probe output loads its config and shows `llmem compare`'s rows", () => {
    const s = createAppState(core, '');
    expect(s.planner.loadMeasurement('probe-output.json', probeText)).toBe(true);
    expect(s.get('model.preset')).toBe('llama-3.2-1b');
    expect(s.get('training.recompute')).toBe('full');
    const r = spawnSync('node', [join(root, 'bin/llmem.mjs'), 'compare', probeFile, '--json'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(s.planner.measured.value).toEqual(JSON.parse(r.stdout).rows);
    expect(s.planner.measureMessage.value).toBeNull();
    s.planner.dispose();
  });

  it('an accuracy case and a bare measurement are read too', () => {
    const s = createAppState(core, '');
    const acc = {
      id: 'x',
      config: { version: 1, model: { preset: 'llama-3.1-8b' }, training: { micro_batch: 2 } },
      expect: { metric: 'peak_reserved_bytes', bytes: 50 * 2 ** 30 },
    };
    expect(s.planner.loadMeasurement('case.json', JSON.stringify(acc))).toBe(true);
    expect(s.get('training.micro_batch')).toBe(2);
    const rows = s.planner.measured.value!;
    expect(rows.find((r) => r.name === 'peak_reserved_bytes')!.measured).toBe(50 * 2 ** 30);
    expect(rows.find((r) => r.name === 'peak_allocated_bytes')!.measured).toBeNull();
    expect(s.planner.loadMeasurement('bare.json', JSON.stringify({ device_used_bytes: 3e10 }))).toBe(true);
    expect(s.get('training.micro_batch')).toBe(2); // no config in the file: the config stays
    s.planner.dispose();
  });

  it('bad files leave a message and change nothing', () => {
    const s = createAppState(core, '');
    const hash = s.hashText.value;
    expect(s.planner.loadMeasurement('a.json', '{"measured": ')).toBe(false);
    expect(s.planner.measureMessage.value).toMatch(/^a\.json: not valid JSON/);
    expect(s.planner.loadMeasurement('b.json', '{"ok": false, "error": "out of memory"}')).toBe(false);
    expect(s.planner.measureMessage.value).toMatch(/refused.*out of memory/);
    expect(s.planner.loadMeasurement('c.json', '{"hello": 1}')).toBe(false);
    expect(s.planner.measureMessage.value).toMatch(/no measurement found/);
    expect(s.planner.measurement.value).toBeNull();
    expect(s.hashText.value).toBe(hash);
    // a measurement whose config does not load: kept, compared with the config on screen
    expect(
      s.planner.loadMeasurement(
        'd.json',
        JSON.stringify({ config: { parallel: { tp: 'two' } }, measured: { device_used_bytes: 1e10 } }),
      ),
    ).toBe(true);
    expect(s.planner.measureMessage.value).toMatch(/config was not loaded/);
    expect(s.hashText.value).toBe(hash);
    s.planner.dispose();
  });
});

describe('a measured memory series (probe/snapshot_to_json.py) on the timeline', () => {
  const seriesDoc = JSON.parse(readFileSync(join(root, 'tests/fixtures/snapshot-series.json'), 'utf8'));
  it('reads as a measurement whose phase peaks come from the marks', () => {
    const m = readMeasurement(seriesDoc);
    if ('error' in m) throw new Error(m.error);
    expect(m.peak_allocated_bytes).toBe(20 * GIB_);
    expect(seriesPhasePeaks(m.timeline!)).toEqual({
      forward: { peak_allocated_bytes: 16 * GIB_, peak_reserved_bytes: 18 * GIB_ },
      backward: { peak_allocated_bytes: 20 * GIB_, peak_reserved_bytes: 22 * GIB_ },
      optimizer: { peak_allocated_bytes: 19 * GIB_, peak_reserved_bytes: 21 * GIB_ },
    });
  });
  it('is aligned by phase on a one-micro-batch step and keeps its peak', () => {
    const m = readMeasurement(seriesDoc);
    if ('error' in m) throw new Error(m.error);
    const res = core.estimate(
      (resolveConfig({ version: 1, model: { preset: 'llama-3.2-1b' } }) as { config: object }).config,
      { timeline: true },
    );
    if (!res.ok) throw new Error(res.error.message);
    const on = measuredOnTimeline(res, m.timeline!)!;
    expect(on.aligned).toBe(true);
    expect(on.allocated.length).toBe(res.timeline!.total_bytes.length);
    expect(Math.max(...on.allocated.map((v) => v ?? 0))).toBe(20 * GIB_);
    // the backward peak lands on a backward event of the simulated step
    const at = on.allocated.indexOf(20 * GIB_);
    expect(res.timeline!.phase[at]).toBe('backward');
  });
  it('a series without marks is stretched over the step; a broken one is refused', () => {
    const { phases: _p, ...bare } = seriesDoc;
    const m = readMeasurement(bare);
    if ('error' in m) throw new Error(m.error);
    const res = core.estimate((resolveConfig({ version: 1 }) as { config: object }).config, { timeline: true });
    if (!res.ok) throw new Error(res.error.message);
    expect(measuredOnTimeline(res, m.timeline!)!.aligned).toBe(false);
    const bad = readMeasurement({ ...seriesDoc, reserved_bytes: [1] });
    expect('error' in bad && bad.error).toMatch(/same, non-zero length/);
  });

  it('says where a measurement comes from: a committed probe row (fake process group) or a probe result', () => {
    const row = JSON.parse(
      readFileSync(join(root, 'tests/measured/probe-h200-fake-llama-3.1-8b-tp4sp-s4096-b1.json'), 'utf8'),
    );
    const m = readMeasurement(row) as Measurement;
    expect(m.origin).toMatch(/^llmem probe \(fake process group, rank 0 of 4\) on NVIDIA H200 2026-/);
    expect(m.fake_process_group).toBe(true);
    expect(m.timeline!.allocated_bytes.length).toBeGreaterThan(10);
    const result = { ok: true, config: row.config, measured: row.measured, environment: { gpu: 'NVIDIA H200' } };
    const r = readMeasurement({ ...result, probe: { layout: { world: 4 } } }) as Measurement;
    expect([r.origin, r.fake_process_group]).toEqual([
      'llmem probe (fake process group, rank 0 of 4) on NVIDIA H200',
      true,
    ]);
    const single = readMeasurement({ ...result, probe: { layout: null } }) as Measurement;
    expect([single.origin, single.fake_process_group]).toEqual(['llmem probe on NVIDIA H200', undefined]);
  });
});
