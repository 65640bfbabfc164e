// The URL-hash codec. A link holds the keys that differ from the page's
// default view, readable and versioned:
//
//   #v1/model.preset=llama-3.1-70b&parallel.tp=8&training.recompute_modules=core_attn,mlp
//
// Format v1 (frozen: tests/js/fixtures/hash-v1.json must keep decoding):
// - prefix "#v1/", then key=value pairs joined by "&", keys in field-table order;
// - key: a config-v1 leaf path; value by the field's kind: numbers as JS
//   writes them, true/false, enum values as is, sets as comma-joined values
//   ("" = empty set), text percent-encoded; "null" is null (the text "null"
//   is written %6Eull);
// - the keys a hash-less URL stands for are PAGE_DEFAULT: model.preset and
//   hardware.gpu appear only when they differ (null = custom);
// - the page drops keys equal to the core defaults + preset, so the same
//   view always gives the same link.
// - optional view.* keys after the config's (issue 13; a link without them opens
//   the planner closed, as before): view.tab=sweep|search|compare|measured (the
//   planner tab), view.free=0.2 (the headroom kept free, a fraction, 0 to 0.9),
//   view.sweep=parallel.tp (the sweep's setting), view.range=1,64,7,pow2 (its
//   from,to,points,spacing), view.a=<the pinned A's own key=value list,
//   percent-encoded> ("" is the default view).
// Pure: takes the core's field table, touches no DOM.
import type { FieldInfo, Json } from '../../wasm/llmem.js';
import { axisOf, MAX_SWEEP_POINTS, type Spacing, SWEEP_AXES } from '../planner.js';
import { leafFields, PAGE_DEFAULT, type Doc } from './doc.js';
import { compactList, parseList } from './encode.js';

export const HASH_VERSION = 1;
const PREFIX = `v${HASH_VERSION}/`;

/** A value as its hash text (the URL layer; the input-slot encoding is encode.ts's encodeValue). */
function writeValue(f: FieldInfo, v: Json): string {
  if (v === null) return 'null';
  switch (f.kind) {
    case 'bool':
      return v ? 'true' : 'false';
    case 'set':
      return (v as Json[]).map((x) => encodeURIComponent(String(x))).join(',');
    case 'list': {
      const names = parseList(f, v);
      return Array.isArray(names)
        ? encodeURIComponent(compactList(names)).replace(/%2C/g, ',')
        : encodeURIComponent(String(v));
    }
    case 'int':
    case 'num':
      return String(v);
    default: {
      const s = encodeURIComponent(String(v));
      return s === 'null' ? '%6Eull' : s;
    }
  }
}

export const VIEW_TABS = ['sweep', 'search', 'compare', 'measured'] as const;
export type ViewTab = (typeof VIEW_TABS)[number];
const SPACINGS: readonly Spacing[] = ['linear', 'log', 'pow2'];

/** What the page shows beside the config; an absent key is the page's default. */
export interface View {
  tab?: ViewTab;
  free?: number;
  sweep?: string;
  range?: { from: number; to: number; points: number; spacing: Spacing };
  a?: Doc;
}

function viewParts(v: View, fields: readonly FieldInfo[]): string[] {
  const parts: string[] = [];
  if (v.tab) parts.push(`view.tab=${v.tab}`);
  if (v.free !== undefined) parts.push(`view.free=${v.free}`);
  if (v.sweep) parts.push(`view.sweep=${v.sweep}`);
  const r = v.range;
  if (r) parts.push(`view.range=${r.from},${r.to},${r.points},${r.spacing}`);
  if (v.a) parts.push(`view.a=${encodeURIComponent(encodeHash(v.a, fields).slice(PREFIX.length + 1))}`);
  return parts;
}

/** The hash for a doc and the view around it ("" for the default view). */
export function encodeHash(doc: Doc, fields: readonly FieldInfo[], view: View = {}): string {
  const parts: string[] = [];
  for (const f of leafFields(fields)) {
    const inDefault = f.path in PAGE_DEFAULT;
    const v = f.path in doc ? doc[f.path] : inDefault ? PAGE_DEFAULT[f.path] : undefined;
    if (v === undefined) continue;
    if (inDefault && JSON.stringify(v) === JSON.stringify(PAGE_DEFAULT[f.path])) continue;
    parts.push(`${f.path}=${writeValue(f, v)}`);
  }
  parts.push(...viewParts(view, fields));
  return parts.length ? `#${PREFIX}${parts.join('&')}` : '';
}

/** On failure, `path` names the setting to fix when one value is at fault. */
export type HashOutcome = { ok: true; doc: Doc; view: View } | { ok: false; message: string; path?: string };

function decodeText(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** Longest hash the page reads: a full config is under 6,000 characters. */
export const MAX_HASH_CHARS = 16384;

const isDigit = (c: number) => c >= 48 && c <= 57;

/** -?(digits[.digits]|.digits)(e[-+]?digits)? in one pass (a regex for it backtracks quadratically). */
export function isNumberText(s: string): boolean {
  let i = 0;
  const n = s.length;
  if (s.charCodeAt(i) === 45) i++; // -
  let mantissa = 0;
  for (; i < n && isDigit(s.charCodeAt(i)); i++) mantissa++;
  if (s.charCodeAt(i) === 46) {
    i++;
    for (; i < n && isDigit(s.charCodeAt(i)); i++) mantissa++;
  }
  if (mantissa === 0) return false;
  if (i < n && (s[i] === 'e' || s[i] === 'E')) {
    i++;
    if (s[i] === '+' || s[i] === '-') i++;
    let exponent = 0;
    for (; i < n && isDigit(s.charCodeAt(i)); i++) exponent++;
    if (exponent === 0) return false;
  }
  return i === n;
}

/** Text the page can write back into a link (no lone surrogates). */
function decodeWritableText(raw: string): string | null {
  const s = decodeText(raw);
  if (s === null) return null;
  try {
    encodeURIComponent(s);
    return s;
  } catch {
    return null;
  }
}

/** A value from its hash text, or why it is not one (the inverse of writeValue). */
function readValue(f: FieldInfo, raw: string): { v: Json } | string {
  if (raw === 'null') return f.nullable ? { v: null } : `${f.path} cannot be null`;
  switch (f.kind) {
    case 'int':
    case 'num': {
      if (!isNumberText(raw)) return `${f.path}: "${(decodeText(raw) ?? raw).slice(0, 40)}" is not a number`;
      const v = Number(raw);
      if (!Number.isFinite(v)) return `${f.path}: ${raw.slice(0, 40)} is not a finite number`;
      return { v };
    }
    case 'bool':
      if (raw === 'true' || raw === 'false') return { v: raw === 'true' };
      return `${f.path}: "${decodeText(raw) ?? raw}" is not true or false`;
    case 'enum': {
      const s = decodeText(raw);
      if (s === null || !f.values.includes(s)) return `${f.path}: "${s ?? raw}" is not one of ${f.values.join(' | ')}`;
      return { v: s };
    }
    case 'list': {
      const s = decodeText(raw);
      if (s === null) return `${f.path}: badly encoded text`;
      const names = parseList(f, s);
      return Array.isArray(names) ? { v: names } : names.message;
    }
    case 'set': {
      if (raw === '') return { v: [] };
      const items = raw.split(',').map(decodeText);
      const bad = items.find((x) => x === null || !f.values.includes(x));
      if (bad !== undefined) return `${f.path}: "${bad ?? raw}" is not one of ${f.values.join(' | ')}`;
      return { v: items as string[] };
    }
    default: {
      const s = decodeWritableText(raw);
      return s === null ? `${f.path}: badly encoded text` : { v: s };
    }
  }
}

/**
 * A location.hash -> doc (not yet normalized against the preset). An empty
 * hash is the default view; anything unreadable is an error with a message
 * for the page, which then shows the default view.
 */
export function decodeHash(hash: string, fields: readonly FieldInfo[]): HashOutcome {
  const h = hash.startsWith('#') ? hash.slice(1) : hash;
  if (h === '' || h === `v${HASH_VERSION}` || h === PREFIX) return { ok: true, doc: { ...PAGE_DEFAULT }, view: {} };
  if (h.length > MAX_HASH_CHARS)
    return {
      ok: false,
      message: `The link is too long (${h.length} characters; a link holds at most ${MAX_HASH_CHARS}).`,
    };
  const version = /^v(\d+)[/:]/.exec(h);
  if (!version) return { ok: false, message: 'The link is not an llmem link (it should start with #v1/).' };
  if (Number(version[1]) !== HASH_VERSION)
    return {
      ok: false,
      message: `The link uses format v${version[1]}, which this version of the page cannot read (it reads v${HASH_VERSION}).`,
    };
  if (!h.startsWith(PREFIX)) return { ok: false, message: `The link should start with #${PREFIX}.` };
  return decodePairs(h.slice(PREFIX.length), fields, true);
}

function decodePairs(body: string, fields: readonly FieldInfo[], withView: boolean): HashOutcome {
  const doc: Doc = { ...PAGE_DEFAULT };
  const view: View = {};
  const byPath = new Map(leafFields(fields).map((f) => [f.path, f]));
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) return { ok: false, message: `The link is damaged near "${pair.slice(0, 40)}" (expected key=value).` };
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    if (withView && key.startsWith('view.')) {
      const bad = decodeView(view, key, raw, fields);
      if (bad) return { ok: false, message: `The link has a bad value: ${bad.slice(0, 200)}.` };
      continue;
    }
    const f = byPath.get(key);
    if (!f)
      return { ok: false, message: `The link names an unknown setting "${(decodeText(key) ?? key).slice(0, 60)}".` };
    const r = readValue(f, raw);
    if (typeof r === 'string')
      return { ok: false, message: `The link has a bad value: ${r.slice(0, 200)}.`, path: key };
    doc[key] = r.v;
  }
  if (view.range && axisOf(view.sweep ?? SWEEP_AXES[0].path).categorical) delete view.range;
  return { ok: true, doc, view };
}

const wholeIn = (s: string, min: number, max: number) =>
  isNumberText(s) && Number.isInteger(Number(s)) && Number(s) >= min && Number(s) <= max;

/** Reads one view.* key into `view`; a message naming the key when its value is bad. */
function decodeView(view: View, key: string, raw: string, fields: readonly FieldInfo[]): string | null {
  const text = (decodeText(raw) ?? raw).slice(0, 60);
  switch (key) {
    case 'view.tab':
      if (!(VIEW_TABS as readonly string[]).includes(raw))
        return `${key}: "${text}" is not one of ${VIEW_TABS.join(' | ')}`;
      view.tab = raw as ViewTab;
      return null;
    case 'view.free': {
      const v = Number(raw);
      if (!isNumberText(raw) || v < 0 || v > 0.9) return `${key}: "${text}" is not a fraction from 0 to 0.9`;
      view.free = v;
      return null;
    }
    case 'view.sweep':
      if (!SWEEP_AXES.some((a) => a.path === raw))
        return `${key}: "${text}" is not one of ${SWEEP_AXES.map((a) => a.path).join(' | ')}`;
      view.sweep = raw;
      return null;
    case 'view.range': {
      const [from, to, points, spacing, ...rest] = raw.split(',');
      if (
        rest.length ||
        !wholeIn(from ?? '', 1, Number.MAX_SAFE_INTEGER) ||
        !wholeIn(to ?? '', 1, Number.MAX_SAFE_INTEGER) ||
        !wholeIn(points ?? '', 1, MAX_SWEEP_POINTS) ||
        !SPACINGS.includes(spacing as Spacing)
      )
        return `${key}: "${text}" is not from,to,points,spacing (whole numbers; ${SPACINGS.join(' | ')})`;
      view.range = { from: Number(from), to: Number(to), points: Number(points), spacing: spacing as Spacing };
      return null;
    }
    case 'view.a': {
      const inner = decodeText(raw);
      const a = inner === null ? null : decodePairs(inner, fields, false);
      if (!a?.ok)
        return `${key} (the pinned A): ${a ? a.message.replace(/^The link (has a bad value: )?/, '') : 'badly encoded'}`;
      view.a = a.doc;
      return null;
    }
    default:
      return `unknown view key "${key.slice(0, 60)}" (known: view.tab, view.free, view.sweep, view.range, view.a)`;
  }
}
