// Seeded fuzz of every importer (frontend/config/importers/): random and
// mutated versions of the fixtures in tests/fixtures/import/<kind>/ and
// tests/fixtures/real/<kind>/ (with, at times, a mutated DeepSpeed JSON as the
// second file a config names: ImportOptions.also) never
// throw; each gives a result ({config, notes, unsupported}) or a named error
// ({error: {path, message}}) with a message and no stack trace. A result's
// config is plain JSON (finite numbers, no undefined) and goes through preset
// resolution and the core without a throw. Deterministic (xorshift seed);
// LLMEM_FUZZ_SCALE multiplies the iterations (npm run fuzz).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core, Json } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { IMPORT_KINDS, importConfig, type ImportKind } from '../../frontend/config/importers/index.js';
import { fuzzScale, reportExecs, rng } from './fuzz-rng.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const FIXTURES = join(repoRoot(), 'tests/fixtures/import');
const REAL = join(repoRoot(), 'tests/fixtures/real');
const filesIn = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name !== 'manifest.json')
        .sort()
        .map((name) => readFileSync(join(dir, name), 'utf8'))
    : [];
// the real files too (tests/fixtures/real): arrays, branches, here-documents, plugins, referenced files
const fixtures = (kind: ImportKind): string[] => [...filesIn(join(FIXTURES, kind)), ...filesIn(join(REAL, kind))];

const JUNK_VALUES: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  3,
  1e308,
  -1e308,
  2 ** 53 + 1,
  'auto',
  '',
  'x',
  'none',
  'bf16',
  'cpu',
  '1e999',
  'NaN',
  '-0',
  [],
  [1, 'a'],
  {},
  { a: 1 },
  { __proto__: 1 } as Json,
  'a'.repeat(2000),
];
const JUNK_TOKENS = [
  '',
  'null',
  '~',
  'true',
  'no',
  '0',
  '-1',
  '1.5',
  '1e999',
  '.inf',
  'NaN',
  'auto',
  '"',
  "'",
  '[',
  ']',
  '{',
  '}',
  '[1, 2',
  '{a: 1}',
  ':',
  '- x',
  '&a',
  '*a',
  '!!str',
  '#',
  '\\',
  '$VAR',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, as Megatron scripts write it
  '${X}',
  '--',
  '\t',
  'x'.repeat(500),
  '0x1f',
  '1_000',
];

type Rand = () => number;
const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

/** Replace, delete or add a value somewhere in a parsed JSON document. */
function mutateJsonValue(v: Json, rand: Rand, depth = 0): Json {
  if (depth > 0 && rand() < 0.15) return pick(rand, JUNK_VALUES);
  if (Array.isArray(v)) {
    if (v.length && rand() < 0.7) {
      const copy = [...v];
      const i = Math.floor(rand() * copy.length);
      copy[i] = mutateJsonValue(copy[i], rand, depth + 1);
      return copy;
    }
    return [...v, pick(rand, JUNK_VALUES)];
  }
  if (v !== null && typeof v === 'object') {
    const copy: { [k: string]: Json } = { ...v };
    const keys = Object.keys(copy);
    const r = rand();
    if (keys.length && r < 0.6) {
      const k = pick(rand, keys);
      copy[k] = mutateJsonValue(copy[k], rand, depth + 1);
    } else if (keys.length && r < 0.8) delete copy[pick(rand, keys)];
    else copy[keys.length && rand() < 0.5 ? `${pick(rand, keys)}_x` : 'zero_optimization'] = pick(rand, JUNK_VALUES);
    return copy;
  }
  return pick(rand, JUNK_VALUES);
}

/** Line and character edits, for any text format. */
function mutateText(text: string, rand: Rand): string {
  let lines = text.split('\n');
  const ops = 1 + Math.floor(rand() * 4);
  for (let n = 0; n < ops; n++) {
    const i = Math.floor(rand() * lines.length);
    const line = lines[i] ?? '';
    switch (Math.floor(rand() * 9)) {
      case 0: // a value replaced by a junk token
        lines[i] = line.replace(
          /([:=]\s*|--[\w-]+\s+)(\S.*?)(\s*\\?)$/,
          (_, a, _b, c) => a + pick(rand, JUNK_TOKENS) + c,
        );
        break;
      case 1:
        lines.splice(i, 1);
        break;
      case 2:
        lines.splice(i, 0, line);
        break;
      case 3: // indentation changed
        lines[i] = rand() < 0.5 ? `  ${line}` : line.trimStart();
        break;
      case 4:
        lines.splice(i, 0, pick(rand, JUNK_TOKENS) + pick(rand, [': ', ' = ', ' ', '']) + pick(rand, JUNK_TOKENS));
        break;
      case 5: {
        // characters deleted or inserted
        const at = Math.floor(rand() * (line.length + 1));
        lines[i] =
          rand() < 0.5
            ? line.slice(0, at) + line.slice(at + 1 + Math.floor(rand() * 6))
            : line.slice(0, at) + pick(rand, JUNK_TOKENS) + line.slice(at);
        break;
      }
      case 6: // truncated
        lines = lines.slice(0, i);
        break;
      case 7:
        lines[i] = String.fromCharCode(
          ...Array.from({ length: Math.floor(rand() * 20) }, () => Math.floor(rand() * 0x800)),
        );
        break;
      default: // lines swapped
        [lines[i], lines[(i * 7 + 3) % lines.length]] = [lines[(i * 7 + 3) % lines.length], lines[i]];
    }
  }
  return lines.join('\n');
}

function mutate(text: string, rand: Rand): string {
  const isJson = /^\s*[{[]/.test(text);
  if (isJson && rand() < 0.6) {
    try {
      return JSON.stringify(mutateJsonValue(JSON.parse(text) as Json, rand), null, rand() < 0.5 ? 2 : undefined);
    } catch {
      return text;
    }
  }
  return mutateText(text, rand);
}

function randomText(rand: Rand): string {
  const n = Math.floor(rand() * 200);
  let s = '';
  for (let i = 0; i < n; i++)
    s +=
      rand() < 0.3
        ? pick(rand, JUNK_TOKENS) + pick(rand, [':', '=', ' ', '\n', ','])
        : String.fromCharCode(32 + Math.floor(rand() * 95));
  return s;
}

function plainJson(v: unknown, path: string): void {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`imported config ${path} is ${v}`);
    return;
  }
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) plainJson(x, `${path}[${i}]`);
    return;
  }
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, x] of Object.entries(v as object)) plainJson(x, path ? `${path}.${k}` : k);
    return;
  }
  throw new Error(`imported config ${path} is not JSON (${typeof v})`);
}

function check(kind: ImportKind, text: string, worldSize: number | undefined, also?: string): 'ok' | 'error' {
  let r: ReturnType<typeof importConfig>;
  try {
    r = importConfig(kind, text, { worldSize, also });
  } catch (e) {
    throw new Error(
      `importer ${kind} threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)} on:\n${text.slice(0, 600)}`,
    );
  }
  if ('error' in r) {
    expect(typeof r.error.path).toBe('string');
    expect(typeof r.error.message).toBe('string');
    expect(r.error.message.length).toBeGreaterThan(5);
    expect(r.error.message).not.toMatch(/\n\s+at |\bat .*\.(ts|js):\d+/);
    return 'error';
  }
  plainJson(r.config, '');
  for (const s of [...r.notes, ...r.unsupported]) expect(typeof s).toBe('string');
  const resolved = resolveConfig(r.config);
  if (resolved.ok) {
    const res = core.estimate(resolved.config);
    if (!res.ok) expect(res.error.message.length).toBeGreaterThan(5);
  } else expect(resolved.error.message.length).toBeGreaterThan(5);
  return 'ok';
}

describe('importer fuzz', () => {
  for (const [k, kind] of IMPORT_KINDS.entries()) {
    it(
      `${kind}: mutated fixtures and random text give a result or a named error`,
      () => {
        const rand = rng(0x1a9047 + k);
        const sources = fixtures(kind);
        const deepspeed = fixtures('deepspeed');
        const n = 1500 * fuzzScale();
        const counts = { ok: 0, error: 0 };
        for (let i = 0; i < n; i++) {
          const text = rand() < 0.05 ? randomText(rand) : mutate(pick(rand, sources), rand);
          const also = rand() < 0.2 ? mutate(pick(rand, deepspeed), rand) : undefined;
          counts[check(kind, text, pick(rand, [undefined, 1, 8, 64, 3]), also)]++;
        }
        // the mutations reach both outcomes
        expect(counts.ok).toBeGreaterThan(0);
        expect(counts.error).toBeGreaterThan(0);
        reportExecs(`import-${kind}`, n);
      },
      60_000 * fuzzScale(),
    );
  }
});
