// scripts/flat-input.mjs: a config (or a measured case) as the core's input struct, for llmem_trace_replay --model.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { loadCore, repoRoot } from '../../wasm/node.js';

const root = repoRoot();
const dir = mkdtempSync(join(tmpdir(), 'llmem-flat-'));
const run = (args: string[]) =>
  spawnSync('node', [join(root, 'scripts/flat-input.mjs'), ...args], { cwd: root, encoding: 'utf8' });

describe('flat-input', () => {
  it('writes a measured case resolved as the CLI resolves it, the core input bytes', async () => {
    const file = 'tests/measured/probe-h200-qwen2.5-0.5b-pure-adamw-s4096-b2.json';
    const out = join(dir, 'case.f64');
    const r = run([file, '-o', out]);
    expect(r.status).toBe(0);
    const resolved = resolveConfig(JSON.parse(readFileSync(join(root, file), 'utf8')).config);
    expect(resolved.ok).toBe(true);
    const flat = (await loadCore()).flatten(resolved.ok ? resolved.config : {});
    expect(flat).toBeInstanceOf(Float64Array);
    expect(new Float64Array(readFileSync(out).buffer.slice(0))).toEqual(flat);
  });
  it("reads the probe's result file too ({ok, config, measured})", () => {
    const file = join(dir, 'probe-result.json');
    const c = JSON.parse(
      readFileSync(join(root, 'tests/measured/probe-h200-qwen2.5-0.5b-pure-adamw-s4096-b2.json'), 'utf8'),
    );
    writeFileSync(file, JSON.stringify({ ok: true, config: c.config, measured: c.measured }));
    const out = join(dir, 'probe.f64');
    expect(run([file, '-o', out]).status).toBe(0);
    expect(readFileSync(out)).toEqual(readFileSync(join(dir, 'case.f64')));
  });
  it('names the key of an invalid config (exit 1) and refuses what it cannot read (exit 2)', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ training: { micro_batch: 0 } }));
    const r = run([bad, '-o', join(dir, 'bad.f64')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('training.micro_batch');
    expect(run([join(dir, 'missing.json'), '-o', join(dir, 'x.f64')]).status).toBe(2);
    expect(run([bad]).status).toBe(2);
  });
});
