// Issue 12: every bad input ends in one named error with the right exit status
// (2: usage or unreadable input, 1: an invalid config), never a stack trace,
// never exit 0 with a wrong answer.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';

const root = repoRoot();
const cli = (args: string[], input?: string) =>
  spawnSync('node', [join(root, 'bin/llmem.mjs'), ...args], { cwd: root, input, encoding: 'utf8', timeout: 30_000 });
const dir = mkdtempSync(join(tmpdir(), 'llmem-cli-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const oneLine = (r: ReturnType<typeof cli>) => {
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(r.stderr.trim().split('\n')[0]).toMatch(/^llmem: /);
};

describe('CLI: unreadable and oversized input (exit 2)', () => {
  it('a directory given as the config', () => {
    const r = cli(['estimate', dir]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('is a directory');
    oneLine(r);
  });
  it('a missing file', () => {
    const r = cli(['estimate', join(dir, 'missing.json')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no such file');
  });
  it('a file larger than any config', () => {
    const r = cli(['estimate', '-'], `{"version":1,"model":{"name":"${'x'.repeat(9 * 2 ** 20)}"}}`);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('larger than any config');
  });
  it('import of a directory', () => {
    const r = cli(['import', 'deepspeed', dir]);
    expect(r.status).toBe(2);
    oneLine(r);
  });
});

describe('CLI: invalid configs (exit 1, the key named)', () => {
  it('a config nested thousands of levels deep', () => {
    const r = cli(['estimate', '-'], `{"model":{"name":${'['.repeat(3000)}${']'.repeat(3000)}}}`);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('nests deeper than 64 levels');
    oneLine(r);
  });
  it('a file of unknown keys stops at the first, at once', () => {
    const keys = Array.from({ length: 200_000 }, (_, i) => `"x${i}":${i}`).join(',');
    const t0 = Date.now();
    const r = cli(['estimate', '-'], `{${keys}}`);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('x0: unknown key');
    console.log(`200,000 unknown keys: first error after ${Date.now() - t0} ms`);
    const ds = cli(['import', 'deepspeed', '-'], `{${keys}}`);
    expect(ds.status).toBe(1);
    expect(ds.stderr).toContain('not DeepSpeed settings');
  });
  it('a DeepSpeed import with no DeepSpeed key is an error, not an empty import', () => {
    const r = cli(['import', 'deepspeed', '-'], '{"hello": 1}');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('none of its keys is a DeepSpeed setting');
  });
  it('--set __proto__.x is an unknown key', () => {
    const r = cli(['estimate', '-', '--set', '__proto__.x=1'], '{}');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('__proto__.x: unknown key');
    const c = cli(['estimate', '-', '--set', 'constructor.prototype.x=1'], '{}');
    expect(c.status).toBe(1);
    expect(c.stderr).toContain('--set constructor.prototype.x: unknown key');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
  it('a later --set of a group merges into an earlier one, as into the file', () => {
    const run = (args: string[], input = '{}') => JSON.parse(cli(['estimate', '-', '--json', ...args], input).stdout);
    const both = run([], '{"training":{"seq_len":2048,"micro_batch":2}}');
    const set = run(['--set', 'training.seq_len=2048', '--set', 'training={"micro_batch":2}']);
    expect(set.per_gpu.device_used_bytes).toBe(both.per_gpu.device_used_bytes);
  });
  it('unknown keys the resolved config no longer holds are still refused', () => {
    // --hf replaces the file's model section; a preset's merge makes "__proto__" the prototype
    const hf = cli(['estimate', '-', '--hf', 'tests/fixtures/import/hf/llama-3.1-8b.json'], '{"model":{"bogus":1}}');
    expect(hf.status).toBe(1);
    expect(hf.stderr).toMatch(/^llmem: model\.bogus: unknown key \(allowed here: preset, name, /);
    const proto = cli(['fit', '-'], '{"model":{"preset":"llama-3.2-1b","__proto__":{"layers":1}}}');
    expect(proto.status).toBe(1);
    expect(proto.stderr).toContain('model.__proto__: unknown key (allowed here: ');
  });
  it('YAML nested thousands of levels', () => {
    const r = cli(['import', 'axolotl', file('deep.yaml', `a: ${'['.repeat(5000)}${']'.repeat(5000)}\n`)]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('nested too deeply');
    oneLine(r);
  });
  it('Megatron $(( )) nested thousands of levels', () => {
    const r = cli([
      'import',
      'megatron',
      file('m.sh', `torchrun pretrain_gpt.py --num-layers $((${'('.repeat(4000)}1${')'.repeat(4000)}))\n`),
    ]);
    expect(r.status).toBe(1);
    oneLine(r);
  });
  it('Megatron variables doubling on every line stop at a bound, quickly', () => {
    const lines = [
      'A=x',
      ...Array.from({ length: 40 }, () => 'A="$A$A"'),
      'torchrun pretrain_gpt.py --num-layers 2 $A',
    ];
    const t0 = Date.now();
    const r = cli(['import', 'megatron', file('m2.sh', lines.join('\n'))]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('variable A expands to more than');
    console.log(`doubling variables: refused after ${Date.now() - t0} ms`);
  });
});

describe('CLI: planner options are named with their range (exit 2)', () => {
  const cfg = file('c.json', '{"version":1}');
  const cases: [string[], RegExp][] = [
    [['fit', cfg, '--free', '1.5'], /--free must be a number from 0 to below 1/],
    [['search', cfg, '--gpus', '0'], /--gpus must be a whole number from 1 to 10000000/],
    [['search', cfg, '--gpus', '8', '--top=-1'], /--top must be a whole number from 1 to 256/],
    [
      ['search', cfg, '--gpus', '8', '--top', '-1'],
      /--top needs a value \(one that starts with "-" is written --top=-1\)/,
    ],
    [
      ['search', cfg, '--gpus', '8', '--bogus', '1'],
      /unknown option --bogus \(allowed: --gpus, --global-batch, --top, --free, --max-micro-batch, --json, --no-vary-sharding, /,
    ],
    [
      ['sweep', cfg, '--axis', 'training.seq_len', '--from', '1', '--to', '100000', '--step', '1'],
      /more than 4096 points/,
    ],
  ];
  for (const [args, message] of cases)
    it(args.slice(2).join(' '), () => {
      const r = cli(args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.split('\n')[0]).not.toContain('training.micro_batch'); // the usage text follows
    });
  it('a search with no valid layout says why', () => {
    const r = cli(['search', cfg, '--gpus', '1000000']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/0 fit: no layout: /);
  });
});

describe('CLI help', () => {
  it('llmem <command> --help prints that command first and exits 0 (more in cli-help.test.ts)', () => {
    const r = cli(['search', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^usage: llmem search /);
    expect(r.stdout).not.toContain('llmem estimate');
  });
});

describe('llmem compare with a memory series', () => {
  it('prints per-phase peaks from the series marks', () => {
    const cfg = file('c1.json', '{"version":1,"model":{"preset":"llama-3.2-1b"}}');
    const r = cli(['compare', cfg, 'tests/fixtures/snapshot-series.json', '--json']);
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout).rows as { name: string; measured: number | null }[];
    expect(rows.find((x) => x.name === 'backward peak_allocated_bytes')!.measured).toBe(20 * 2 ** 30);
    expect(rows.find((x) => x.name === 'optimizer peak_allocated_bytes')!.measured).toBe(19 * 2 ** 30);
  });
});

describe('estimate --hf without a run config', () => {
  it('takes the defaults and the model from config.json', () => {
    const r = cli(['estimate', '--hf', 'tests/fixtures/import/hf/llama-3.1-8b.json', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).params.total).toBe(8030261248);
  });
});
