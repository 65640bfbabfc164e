// The URL-hash codec: round trips, every field kind, frozen old formats, garbage.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core, Json } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { configToDoc, docToConfig, normalize, PAGE_DEFAULT, type Doc } from '../../frontend/config/doc.js';
import { decodeHash, encodeHash, isNumberText, MAX_HASH_CHARS, type View } from '../../frontend/config/url.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { findModelRevision, type ModelEntry } from '../../frontend/config/catalog.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const decodeDoc = (hash: string): Doc => {
  const d = decodeHash(hash, core.fields);
  if (!d.ok) throw new Error(d.message);
  return normalize(core, d.doc);
};

describe('hash codec', () => {
  it('the default view has no hash, and no hash is the default view', () => {
    expect(encodeHash(normalize(core, { ...PAGE_DEFAULT }), core.fields)).toBe('');
    for (const h of ['', '#', '#v1', '#v1/']) expect(decodeDoc(h)).toEqual(normalize(core, { ...PAGE_DEFAULT }));
  });

  it('writes only what differs, readable, in field-table order', () => {
    const doc = normalize(core, { ...PAGE_DEFAULT, 'parallel.tp': 2, 'model.layers': 32, 'training.seq_len': 8192 });
    expect(encodeHash(doc, core.fields)).toBe('#v1/training.seq_len=8192&parallel.tp=2');
  });

  it('round-trips every kind of value', () => {
    const doc = normalize(core, {
      'model.preset': null,
      'model.name': 'My model & co / "null"',
      'model.layers': 48,
      'model.kv_heads': 4,
      'model.mlp': 'plain',
      'model.tied_embeddings': true,
      'training.dropout': 0.1,
      'training.recompute': 'selective',
      'training.recompute_modules': ['core_attn', 'mlp'],
      'training.finetune.method': 'lora',
      'training.finetune.lora_targets': [],
      'parallel.reduce_bucket_size': 2e8,
      'hardware.gpu': null,
      'hardware.memory_gib': 23.5,
      'runtime.allocator_reserve': 0.125,
    });
    const hash = encodeHash(doc, core.fields);
    expect(hash.startsWith('#v1/model.preset=null&model.name=')).toBe(true);
    expect(hash).toContain('training.recompute_modules=core_attn,mlp');
    expect(hash).toContain('training.finetune.lora_targets=&');
    expect(decodeDoc(hash)).toEqual(doc);
    expect(encodeHash(decodeDoc(hash), core.fields)).toBe(hash);
  });

  it('keeps the text "null" apart from null', () => {
    const doc = normalize(core, { ...PAGE_DEFAULT, 'model.preset': null, 'model.name': 'null' });
    const hash = encodeHash(doc, core.fields);
    expect(hash).toContain('model.name=%6Eull');
    expect(decodeDoc(hash)['model.name']).toBe('null');
  });

  it('drops model keys equal to the chosen preset', () => {
    const doc = decodeDoc('#v1/model.preset=llama-3.1-70b&model.layers=80&model.hidden=8192&parallel.tp=8');
    expect(encodeHash(doc, core.fields)).toBe('#v1/model.preset=llama-3.1-70b&parallel.tp=8');
  });

  it('the same config written in another key order gives the same link', () => {
    const a = decodeDoc('#v1/parallel.tp=2&training.seq_len=8192');
    const b = decodeDoc('#v1/training.seq_len=8192&parallel.tp=2');
    expect(encodeHash(a, core.fields)).toBe(encodeHash(b, core.fields));
  });

  it('round-trips random docs', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const leaves = core.fields.filter((f) => f.kind !== 'group' && f.kind !== 'text' && f.path !== 'version');
    for (let n = 0; n < 300; n++) {
      const doc: Doc = { ...PAGE_DEFAULT };
      for (let k = 0; k < 6; k++) {
        const f = leaves[Math.floor(rand() * leaves.length)];
        let v: Json;
        if (f.nullable && rand() < 0.2) v = null;
        else if (f.kind === 'bool') v = rand() < 0.5;
        else if (f.kind === 'enum') v = f.values[Math.floor(rand() * f.values.length)];
        else if (f.kind === 'set') v = f.values.filter(() => rand() < 0.5);
        else if (f.kind === 'list')
          v = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => f.values[Math.floor(rand() * f.values.length)]);
        else if (f.kind === 'int') v = Math.floor(f.min + rand() * Math.min(f.max - f.min, 1000));
        else v = f.min + rand() * Math.min(f.max - f.min, 10);
        doc[f.path] = v;
      }
      const norm = normalize(core, doc);
      const hash = encodeHash(norm, core.fields);
      expect(decodeDoc(hash)).toEqual(norm);
    }
  });
});

describe('garbage hashes give a message, never a throw', () => {
  const cases: [string, RegExp][] = [
    ['#hello', /not an llmem link/],
    ['#v2/parallel.tp=2', /format v2/],
    ['#v1/parallel.tpp=2', /unknown setting "parallel.tpp"/],
    ['#v1/parallel.tp=two', /not a number/],
    ['#v1/parallel.tp=null', /cannot be null/],
    ['#v1/parallel.engine=horovod', /not one of/],
    ['#v1/parallel.sequence_parallel=yes', /not true or false/],
    ['#v1/training.recompute_modules=core_attn,bogus', /not one of/],
    ['#v1/model.name=%E0%A4%A', /badly encoded/],
    ['#v1/parallel.tp', /expected key=value/],
    ['#v1/=3', /expected key=value/],
    ['#v1/version=1', /unknown setting/],
    ['#v1/model=null', /unknown setting/],
    ['#v1:eyJ2ZXJzaW9uIjoxfQ', /should start with #v1\//],
    ['#%%%', /not an llmem link/],
  ];
  for (const [hash, message] of cases)
    it(hash, () => {
      const d = decodeHash(hash, core.fields);
      expect(d.ok).toBe(false);
      if (!d.ok) expect(d.message).toMatch(message);
    });

  it('random bytes never throw', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = 'v1/=&.,%#abcdefghijklmnopqrstuvwxyz_0123456789-+eE';
    for (let n = 0; n < 2000; n++) {
      let s = n % 2 ? '#v1/' : '#';
      const len = Math.floor(rand() * 40);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
      expect(() => decodeHash(s, core.fields)).not.toThrow();
    }
  });
});

describe('links written by every released format keep their meaning', () => {
  const dir = join(repoRoot(), 'tests/js/fixtures');
  const files = readdirSync(dir).filter((f) => /^hash-v\d+\.json$/.test(f));
  it('has a fixture per format version', () => expect(files).toContain('hash-v1.json'));
  for (const file of files) {
    type Pinned = { peak_allocated_bytes: number; peak_reserved_bytes: number; device_used_bytes: number };
    const cases = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      why: string;
      hash: string;
      config: Config;
      estimate: Pinned;
    }[];
    for (const c of cases)
      it(`${file}: ${c.why}`, () => {
        const doc = decodeDoc(c.hash);
        expect(docToConfig(doc, core.fields)).toEqual(c.config);
        // the config decodes back to the same view, and the page writes the link unchanged
        const back = configToDoc(core, c.config);
        expect(back.ok && back.doc).toEqual(doc);
        expect(encodeHash(doc, core.fields)).toBe(c.hash);
        // ... and gives the same numbers: a change here is a formula fix, listed in CHANGELOG.md, then re-pinned
        const resolved = resolveConfig(docToConfig(doc, core.fields));
        if (!resolved.ok) throw new Error(resolved.error.message);
        const e = core.estimate(resolved.config);
        if (!e.ok) throw new Error(e.error.message);
        expect({
          peak_allocated_bytes: e.peak_allocated.bytes,
          peak_reserved_bytes: e.per_gpu.peak_reserved_bytes,
          device_used_bytes: e.per_gpu.device_used_bytes,
        }).toEqual(c.estimate);
      });
  }
});

describe('hash codec limits (issue 12)', () => {
  it('reads numbers in linear time: a 16k-digit bad number is refused at once', () => {
    const t0 = performance.now();
    const d = decodeHash(`#v1/training.seq_len=${'1'.repeat(16_000)}x`, core.fields);
    const ms = performance.now() - t0;
    expect(d.ok).toBe(false);
    console.log(`decode of a 16k-digit bad value: ${ms.toFixed(1)} ms`);
  });

  it('caps the length of a link with a message', () => {
    const d = decodeHash(`#v1/training.seq_len=${'1'.repeat(MAX_HASH_CHARS + 1)}`, core.fields);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.message).toMatch(/too long/);
  });

  it('numbers: the same grammar as before, without the regex', () => {
    for (const s of ['1', '-1', '1.', '1.5', '.5', '-.5', '1e3', '1E-3', '2.5e+10']) expect(isNumberText(s)).toBe(true);
    for (const s of ['', '-', '.', 'e3', '1e', '1e+', '1..2', '--1', '1x', ' 1', '0x10', 'Infinity', 'NaN'])
      expect(isNumberText(s)).toBe(false);
  });

  it('rejects a non-finite number with the key named, so a link never rewrites itself to Infinity', () => {
    const d = decodeHash('#v1/hardware.bf16_tflops=1e400', core.fields);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.message).toMatch(/hardware\.bf16_tflops: 1e400 is not a finite number/);
  });

  it('rejects a lone surrogate in text, which no link can hold', () => {
    const d = decodeHash('#v1/model.name=a\ud800b', core.fields);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.message).toMatch(/model\.name/);
  });
});

describe('preset revisions (issue 12: old links keep their numbers)', () => {
  const entry: ModelEntry = {
    id: 'toy',
    name: 'Toy',
    family: 'Toy',
    source: '',
    params_total: null,
    params_active: null,
    notes: [],
    model: { layers: 4 },
    revision: '2027-01-15',
    previous: [{ revision: '1', model: { layers: 2 }, changed: 'layers 2 -> 4' }],
  };
  it('a bare id is the first revision; id@revision names any revision; unknown revisions are refused', () => {
    expect(findModelRevision('toy', [entry])?.model).toEqual({ layers: 2 });
    expect(findModelRevision('toy@1', [entry])?.model).toEqual({ layers: 2 });
    expect(findModelRevision('toy@2027-01-15', [entry])?.model).toEqual({ layers: 4 });
    expect(findModelRevision('toy@2026-01-01', [entry])).toBeUndefined();
  });
  it('every catalog preset resolves by its bare id to its current model today (all are revision 1)', () => {
    const r = resolveConfig({ model: { preset: 'llama-3.1-8b@1' } });
    expect(r.ok).toBe(true);
    const bad = resolveConfig({ model: { preset: 'llama-3.1-8b@2099-01-01' } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.path).toBe('model.preset');
  });
});

describe('the planner state in a link (issue 13: view.* keys)', () => {
  const doc = () => normalize(core, { ...PAGE_DEFAULT, 'parallel.tp': 2 });
  const decodeView = (hash: string) => {
    const d = decodeHash(hash, core.fields);
    if (!d.ok) throw new Error(d.message);
    return d.view;
  };

  it('leaves a link without view keys as before: no view, the same hash', () => {
    expect(encodeHash(doc(), core.fields, {})).toBe('#v1/parallel.tp=2');
    expect(decodeView('#v1/parallel.tp=2')).toEqual({});
    expect(decodeView('')).toEqual({});
  });

  it('round-trips the tab, the headroom, the sweep axis and its range, after the config keys', () => {
    const view: View = {
      tab: 'sweep',
      free: 0.25,
      sweep: 'parallel.gpus',
      range: { from: 8, to: 512, points: 7, spacing: 'pow2' },
    };
    const hash = encodeHash(doc(), core.fields, view);
    expect(hash).toBe(
      '#v1/parallel.tp=2&view.tab=sweep&view.free=0.25&view.sweep=parallel.gpus&view.range=8,512,7,pow2',
    );
    expect(decodeView(hash)).toEqual(view);
    expect(decodeDoc(hash)).toEqual(doc());
    // the view alone, on the default config
    expect(encodeHash(normalize(core, { ...PAGE_DEFAULT }), core.fields, { tab: 'search' })).toBe(
      '#v1/view.tab=search',
    );
  });

  it('round-trips a pinned A (its own keys, percent-encoded), the default view included', () => {
    const a = normalize(core, {
      ...PAGE_DEFAULT,
      'model.preset': 'llama-3.1-70b',
      'training.recompute_modules': ['core_attn', 'mlp'],
    });
    const hash = encodeHash(doc(), core.fields, { tab: 'compare', a });
    expect(hash).toBe(
      '#v1/parallel.tp=2&view.tab=compare&view.a=model.preset%3Dllama-3.1-70b%26training.recompute_modules%3Dcore_attn%2Cmlp',
    );
    expect(normalize(core, decodeView(hash).a!)).toEqual(a);
    const home = normalize(core, { ...PAGE_DEFAULT });
    const h2 = encodeHash(doc(), core.fields, { a: home });
    expect(h2).toBe('#v1/parallel.tp=2&view.a=');
    expect(normalize(core, decodeView(h2).a!)).toEqual(home);
  });

  it('drops a range on a categorical axis', () => {
    expect(decodeView('#v1/view.sweep=training.recompute&view.range=1,2,2,linear')).toEqual({
      sweep: 'training.recompute',
    });
  });

  const bad: [string, RegExp][] = [
    ['#v1/view.tab=graphs', /view\.tab: "graphs" is not one of sweep \| search/],
    ['#v1/view.free=0.95', /view\.free: "0\.95" is not a fraction from 0 to 0\.9/],
    ['#v1/view.free=x', /view\.free/],
    ['#v1/view.sweep=model.layers', /view\.sweep: "model\.layers" is not one of/],
    ['#v1/view.range=1,2,3', /view\.range: "1,2,3" is not from,to,points,spacing/],
    ['#v1/view.range=1,2,0,log', /view\.range/],
    ['#v1/view.range=1.5,2,3,log', /view\.range/],
    ['#v1/view.a=parallel.tp%3Dtwo', /view\.a \(the pinned A\): parallel\.tp: "two" is not a number/],
    ['#v1/view.a=view.tab%3Dsweep', /view\.a \(the pinned A\): .*unknown setting "view\.tab"/],
    ['#v1/view.zoom=2', /unknown view key "view\.zoom"/],
  ];
  for (const [hash, message] of bad)
    it(`refuses ${hash} with the key named`, () => {
      const d = decodeHash(hash, core.fields);
      expect(d.ok).toBe(false);
      if (!d.ok) expect(d.message).toMatch(message);
    });

  it('a bad config value names its setting for "Go to" (issue 13)', () => {
    const d = decodeHash('#v1/parallel.tp=two', core.fields);
    expect(!d.ok && d.path).toBe('parallel.tp');
  });
});
