// Seeded fuzz of the URL-hash codec (frontend/config/url.ts): random and
// mutated hashes never throw (an unreadable link is {ok: false, message}),
// messages stay short whatever the input's length, and every valid doc
// round-trips: decode(encode(doc)) == doc. Deterministic (xorshift seed);
// LLMEM_FUZZ_SCALE multiplies the iterations (npm run fuzz).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core, FieldInfo, Json } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { leafFields, normalize, PAGE_DEFAULT, type Doc } from '../../frontend/config/doc.js';
import { decodeHash, encodeHash } from '../../frontend/config/url.js';
import { fuzzScale, reportExecs, rng } from './fuzz-rng.js';

let core: Core;
let leaves: FieldInfo[];
beforeAll(async () => {
  core = await loadCore();
  leaves = leafFields(core.fields).filter((f) => f.path !== 'version');
});

const MESSAGE_MAX = 400; // the page shows it inline: bounded whatever the link's length

function randomValue(f: FieldInfo, rand: () => number): Json {
  const r = rand();
  if (f.nullable && r < 0.15) return null;
  switch (f.kind) {
    case 'bool':
      return r < 0.5;
    case 'enum':
      return f.values[Math.floor(rand() * f.values.length)];
    case 'set':
      return f.values.filter(() => rand() < 0.5);
    case 'list':
      return Array.from({ length: 1 + Math.floor(rand() * 6) }, () => f.values[Math.floor(rand() * f.values.length)]);
    case 'int':
      return Math.floor(f.min + rand() * Math.min(f.max - f.min, r < 0.5 ? 64 : 1e6));
    case 'num':
      return f.min + rand() * Math.min(f.max - f.min, r < 0.5 ? 1 : 1e4);
    default: {
      // whole code points: a lone surrogate cannot be percent-encoded (reported, issue 12)
      const chars = [...'aZ09 -_./&=#%?,"\'\u00e9\u4e2d\u{1f600}null'];
      let s = '';
      const n = Math.floor(rand() * 12);
      for (let i = 0; i < n; i++) s += chars[Math.floor(rand() * chars.length)];
      return rand() < 0.1 ? 'null' : s;
    }
  }
}

function randomDoc(rand: () => number): Doc {
  const doc: Doc = { ...PAGE_DEFAULT };
  const n = Math.floor(rand() * 10);
  for (let k = 0; k < n; k++) {
    const f = leaves[Math.floor(rand() * leaves.length)];
    doc[f.path] = randomValue(f, rand);
  }
  return doc;
}

const JUNK = [
  '',
  '=',
  '&',
  '&&',
  '#',
  '%',
  '%E0%A4%A',
  '%ZZ',
  'null',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
  '0x10',
  ' 1',
  '\u0000',
  'v1/',
  'v2/',
  'v1:',
  ',',
  ',,',
  'true',
  'a'.repeat(300),
  '__proto__',
  'constructor',
  'toString',
];

function mutate(hash: string, rand: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  let s = hash;
  const ops = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < ops; i++) {
    const at = Math.floor(rand() * (s.length + 1));
    const op = Math.floor(rand() * 7);
    if (op === 0)
      s = s.slice(0, at) + s.slice(at + 1 + Math.floor(rand() * 8)); // delete
    else if (op === 1)
      s = s.slice(0, at) + pick(JUNK) + s.slice(at); // insert junk
    else if (op === 2) s = s.slice(0, at) + String.fromCharCode(Math.floor(rand() * 0x3000)) + s.slice(at + 1);
    else if (op === 3)
      s = s.slice(0, at); // truncate
    else if (op === 4)
      s = `${s}&${pick(leaves).path}=${pick(JUNK)}`; // a key with a junk value
    else if (op === 5)
      s = s.replace(/=[^&]*/, `=${pick(JUNK)}`); // the first value replaced
    else s = s.slice(at) + s.slice(0, at); // rotate
  }
  return s;
}

function expectOutcome(hash: string) {
  let d: ReturnType<typeof decodeHash>;
  try {
    d = decodeHash(hash, core.fields);
  } catch (e) {
    throw new Error(`decodeHash threw on ${JSON.stringify(hash.slice(0, 200))}: ${e}`);
  }
  if (d.ok) {
    expect(typeof d.doc).toBe('object');
    // a decoded doc normalizes and re-encodes without a throw
    encodeHash(normalize(core, d.doc), core.fields);
  } else {
    expect(typeof d.message).toBe('string');
    expect(d.message.length).toBeGreaterThan(10);
    expect(d.message.length).toBeLessThanOrEqual(MESSAGE_MAX);
    expect(d.message).not.toMatch(/\n\s+at /);
  }
  return d.ok;
}

describe('URL hash decoder fuzz', () => {
  const timeout = 60_000 * fuzzScale();

  // Finding (issue 12): decodeHash accepted a raw lone surrogate in a text
  // value, and the page's encodeHash then threw URIError on that doc.
  it('a link with a raw lone surrogate in a text value decodes to a doc that re-encodes', () => {
    expectOutcome('#v1/model.name=a\ud800b');
  });

  it(
    'round-trips random valid docs',
    () => {
      const rand = rng(0x5eed0001);
      const n = 2000 * fuzzScale();
      for (let i = 0; i < n; i++) {
        const norm = normalize(core, randomDoc(rand));
        const hash = encodeHash(norm, core.fields);
        const d = decodeHash(hash, core.fields);
        if (!d.ok) throw new Error(`own link refused: ${hash}: ${d.message}`);
        expect(normalize(core, d.doc)).toEqual(norm);
        expect(encodeHash(normalize(core, d.doc), core.fields)).toBe(hash);
      }
      reportExecs('url-roundtrip', n);
    },
    timeout,
  );

  it(
    'mutated links give a doc or a short message, never a throw',
    () => {
      const rand = rng(0x5eed0002);
      const n = 3000 * fuzzScale();
      let ok = 0;
      for (let i = 0; i < n; i++) {
        const hash = encodeHash(normalize(core, randomDoc(rand)), core.fields) || '#v1/parallel.tp=2';
        if (expectOutcome(mutate(hash, rand))) ok++;
      }
      expect(ok).toBeGreaterThan(0); // the mutations leave some links readable
      expect(ok).toBeLessThan(n);
      reportExecs('url-mutated', n);
    },
    timeout,
  );

  it(
    'random and very long strings give a short message, never a throw',
    () => {
      const rand = rng(0x5eed0003);
      const n = 1000 * fuzzScale();
      for (let i = 0; i < n; i++) {
        const len = rand() < 0.1 ? 100000 + Math.floor(rand() * 100000) : Math.floor(rand() * 80);
        let s = rand() < 0.5 ? '#v1/' : '';
        if (len > 1000)
          s += `${leaves[i % leaves.length].path}=${'x'.repeat(Math.floor(len / 2))}&${'k'.repeat(len / 2)}`;
        else for (let k = 0; k < len; k++) s += String.fromCharCode(Math.floor(rand() * 128));
        expectOutcome(s);
      }
      reportExecs('url-random', n);
    },
    timeout,
  );
});
