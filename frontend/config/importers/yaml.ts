// A small YAML reader for training configs (accelerate, LLaMA-Factory, axolotl):
// block mappings and sequences by indentation ("- " items, lists of mappings,
// `key:` followed by a list at the same indentation), flow sequences [a, b] and
// flow mappings {a: 1}, plain / 'single' / "double" quoted scalars (also over
// several lines), `|` and `>` block scalars (kept as strings, with the - / +
// chomping and indentation indicators), comments, a leading `---` and a
// trailing `...`. Scalars are typed by the YAML 1.2 core schema: null / ~ /
// empty, true / false, ints (decimal, 0o, 0x), floats (exponents, .inf, .nan);
// anything else is a string. Anchors, aliases, tags, complex keys, directives
// and multiple documents are reported as unsupported (a YamlError with
// `unsupported` set) rather than read wrongly; every error names its line.
import type { Json } from '../../../wasm/llmem.js';

export class YamlError extends Error {
  constructor(readonly line: number, readonly reason: string, readonly unsupported = false) {
    super(`line ${line}: ${reason}`);
  }
}

interface Line {
  /** 1-based line number */
  no: number;
  /** leading spaces */
  indent: number;
  /** the line after its indentation, trailing whitespace removed */
  text: string;
  /** the line as written (block scalars read it) */
  raw: string;
}

type Obj = { [key: string]: Json };

const NULL = /^(?:~|null|Null|NULL)?$/;
const TRUE = /^(?:true|True|TRUE)$/;
const FALSE = /^(?:false|False|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
const OCT = /^0o[0-7]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const INF = /^[-+]?\.(?:inf|Inf|INF)$/;
const NAN = /^\.(?:nan|NaN|NAN)$/;

/** A plain scalar by the YAML 1.2 core schema. */
export function resolveScalar(s: string): Json {
  if (NULL.test(s)) return null;
  if (TRUE.test(s)) return true;
  if (FALSE.test(s)) return false;
  if (INT.test(s) || FLOAT.test(s)) return Number(s);
  if (OCT.test(s)) return parseInt(s.slice(2), 8);
  if (HEX.test(s)) return parseInt(s.slice(2), 16);
  if (INF.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (NAN.test(s)) return NaN;
  return s;
}

const isSeqItem = (t: string) => t === '-' || t.startsWith('- ') || t.startsWith('-\t');
const isBlank = (t: string) => t === '' || t.startsWith('#');

/** What a node may not start with, and why (checked before reading a value or key). */
function unsupportedStart(t: string, line: number): void {
  const c = t[0];
  if (c === '&') throw new YamlError(line, `anchors (${t.split(/[\s,\]}]/)[0]}) are not supported: write the values out`, true);
  if (c === '*') throw new YamlError(line, `aliases (${t.split(/[\s,\]}]/)[0]}) are not supported: write the values out`, true);
  if (c === '!') throw new YamlError(line, `tags (${t.split(/[\s,\]}]/)[0]}) are not supported`, true);
  if (c === '?' && (t.length === 1 || t[1] === ' ' || t[1] === '\t')) throw new YamlError(line, 'complex keys ("? ") are not supported', true);
  if (c === '@' || c === '`') throw new YamlError(line, `"${c}" is reserved and cannot start a value; quote it`);
}

/** Index of a comment ("#" at the start or after whitespace) in block-context text, or -1. */
function commentAt(t: string, from = 0): number {
  for (let i = from; i < t.length; i++) if (t[i] === '#' && (i === 0 || t[i - 1] === ' ' || t[i - 1] === '\t')) return i;
  return -1;
}

// --- quoted scalars (shared by the block and flow readers) -------------------

const ESCAPES: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b', ' ': ' ', '"': '"',
  '/': '/', '\\': '\\', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029',
};

/**
 * Read a quoted scalar starting at s[p] (the quote). Line breaks inside fold as
 * YAML says: one break -> a space, n empty lines -> n newlines. `lineOf` maps an
 * offset to its line number for errors. Returns the value and the offset after
 * the closing quote.
 */
function readQuoted(s: string, p: number, lineOf: (at: number) => number): { value: string; end: number } {
  const q = s[p];
  const start = p;
  let out = '';
  p++;
  for (;;) {
    if (p >= s.length) throw new YamlError(lineOf(start), `unclosed ${q === '"' ? 'double' : 'single'}-quoted string`);
    const c = s[p];
    if (c === q) {
      if (q === "'" && s[p + 1] === "'") {
        out += "'";
        p += 2;
        continue;
      }
      return { value: out, end: p + 1 };
    }
    if (c === '\n') {
      // fold: drop trailing spaces on this line and leading spaces of the next ones
      out = out.replace(/[ \t]+$/, '');
      let breaks = 0;
      while (s[p] === '\n') {
        breaks++;
        p++;
        while (s[p] === ' ' || s[p] === '\t') p++;
      }
      out += breaks === 1 ? ' ' : '\n'.repeat(breaks - 1);
      continue;
    }
    if (q === '"' && c === '\\') {
      const e = s[p + 1];
      if (e === '\n') {
        // escaped line break: joined without a space
        p += 2;
        while (s[p] === ' ' || s[p] === '\t') p++;
        continue;
      }
      if (e === 'x' || e === 'u' || e === 'U') {
        const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = s.slice(p + 2, p + 2 + n);
        if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw new YamlError(lineOf(p), `bad escape \\${e}${hex} in a double-quoted string`);
        out += String.fromCodePoint(parseInt(hex, 16));
        p += 2 + n;
        continue;
      }
      if (e === undefined || !(e in ESCAPES)) throw new YamlError(lineOf(p), `unknown escape \\${e ?? ''} in a double-quoted string`);
      out += ESCAPES[e];
      p += 2;
      continue;
    }
    out += c;
    p++;
  }
}

// --- flow collections: [a, b] and {a: 1} ---------------------------------------

class Flow {
  p = 0;
  constructor(readonly s: string, readonly lineOf: (at: number) => number) {}

  err(reason: string, at = this.p): YamlError {
    return new YamlError(this.lineOf(at), reason);
  }

  /** Skip whitespace, line breaks and comments. */
  ws(): void {
    while (this.p < this.s.length) {
      const c = this.s[this.p];
      if (c === '#' && (this.p === 0 || /\s/.test(this.s[this.p - 1]))) {
        const nl = this.s.indexOf('\n', this.p);
        this.p = nl < 0 ? this.s.length : nl;
      } else if (/\s/.test(c)) this.p++;
      else return;
    }
  }

  node(): Json {
    this.ws();
    const c = this.s[this.p];
    if (c === '[') return this.seq();
    if (c === '{') return this.map();
    if (c === '"' || c === "'") {
      const r = readQuoted(this.s, this.p, this.lineOf);
      this.p = r.end;
      return r.value;
    }
    unsupportedStart(this.s.slice(this.p), this.lineOf(this.p));
    if (c === undefined || c === ',' || c === ']' || c === '}') throw this.err(c === undefined ? 'the value is missing at the end' : `a value is missing before "${c}"`);
    return resolveScalar(this.plain());
  }

  /** A plain scalar: up to , [ ] { } or ": " (line breaks fold to spaces). */
  plain(): string {
    const from = this.p;
    while (this.p < this.s.length) {
      const c = this.s[this.p];
      if (c === ',' || c === '[' || c === ']' || c === '{' || c === '}') break;
      if (c === '#' && /\s/.test(this.s[this.p - 1] ?? ' ')) break;
      if (c === ':' && (this.p + 1 >= this.s.length || /[\s,[\]{}]/.test(this.s[this.p + 1]))) break;
      this.p++;
    }
    return this.s.slice(from, this.p).trim().replace(/\s*\n\s*/g, ' ');
  }

  seq(): Json[] {
    const open = this.p++;
    const out: Json[] = [];
    for (;;) {
      this.ws();
      if (this.p >= this.s.length) throw this.err('unclosed "["', open);
      if (this.s[this.p] === ']') {
        this.p++;
        return out;
      }
      out.push(this.node());
      this.ws();
      const c = this.s[this.p];
      if (c === ':') throw this.err('"key: value" inside [ ] is not supported; use { } for a mapping', this.p);
      if (c === ',') this.p++;
      else if (c !== ']') throw this.err(c === undefined ? 'unclosed "["' : `expected "," or "]", found "${c}"`, c === undefined ? open : this.p);
    }
  }

  map(): Obj {
    const open = this.p++;
    const out: Obj = {};
    for (;;) {
      this.ws();
      if (this.p >= this.s.length) throw this.err('unclosed "{"', open);
      if (this.s[this.p] === '}') {
        this.p++;
        return out;
      }
      const at = this.p;
      const c = this.s[this.p];
      let key: string;
      if (c === '"' || c === "'") {
        const r = readQuoted(this.s, this.p, this.lineOf);
        this.p = r.end;
        key = r.value;
      } else {
        if (c === '[' || c === '{') throw new YamlError(this.lineOf(at), 'collections as mapping keys are not supported', true);
        unsupportedStart(this.s.slice(this.p), this.lineOf(this.p));
        key = this.plain();
        if (key === '') throw this.err(c === ':' ? 'a key is missing before ":"' : `a key is missing before "${c}"`);
      }
      if (Object.prototype.hasOwnProperty.call(out, key)) throw this.err(`duplicate key "${key}"`, at);
      this.ws();
      let value: Json = null;
      if (this.s[this.p] === ':') {
        this.p++;
        this.ws();
        if (this.s[this.p] !== ',' && this.s[this.p] !== '}') value = this.node();
      }
      out[key] = value;
      this.ws();
      const d = this.s[this.p];
      if (d === ',') this.p++;
      else if (d !== '}') throw this.err(d === undefined ? 'unclosed "{"' : `expected "," or "}", found "${d}"`, d === undefined ? open : this.p);
    }
  }
}

// --- the block structure ------------------------------------------------------

class Parser {
  i = 0;
  constructor(readonly lines: Line[]) {}

  /** The next line that carries content (blank and comment lines skipped), not consumed. */
  peek(): Line | undefined {
    while (this.i < this.lines.length) {
      const l = this.lines[this.i];
      if (!/^[ \t]*(#|$)/.test(l.text)) {
        if (l.text[0] === '\t') throw new YamlError(l.no, 'a tab in the indentation; YAML indents with spaces only');
        return l;
      }
      this.i++;
    }
    return undefined;
  }

  document(): Json {
    const first = this.peek();
    if (!first) return null;
    const v = this.nodeAt(first, -1);
    const rest = this.peek();
    if (rest) throw new YamlError(rest.no, isSeqItem(rest.text) ? 'a list item where the structure above does not continue (check its indentation)' : 'unexpected content: check its indentation');
    return v;
  }

  /** The node whose first line is `l` (the current line); `parent` is the indentation of the enclosing collection. */
  nodeAt(l: Line, parent: number): Json {
    if (isSeqItem(l.text)) return this.seq(l.indent);
    if (this.splitKey(l)) return this.map(l.indent);
    this.i++;
    return this.value(l.text, l, parent, '');
  }

  /**
   * A key line: `key: value` / `key:` (plain or quoted key). Returns the key and
   * the text after the colon ('' when there is none or only a comment).
   */
  splitKey(l: Line): { key: string; rest: string } | null {
    const t = l.text;
    const c = t[0];
    if (isSeqItem(t) || c === '[' || c === '{' || c === '|' || c === '>') return null;
    let end: number;
    let key: string;
    if (c === '"' || c === "'") {
      let r;
      try {
        r = readQuoted(t, 0, () => l.no);
      } catch {
        return null; // an unclosed quote: a multi-line quoted value, read as a value
      }
      end = r.end;
      while (t[end] === ' ' || t[end] === '\t') end++;
      if (t[end] !== ':' || (end + 1 < t.length && t[end + 1] !== ' ' && t[end + 1] !== '\t')) return null;
      key = r.value;
    } else {
      unsupportedStart(t, l.no);
      const stop = commentAt(t);
      const limit = stop < 0 ? t.length : stop;
      end = -1;
      for (let i = 0; i < limit; i++)
        if (t[i] === ':' && (i + 1 === t.length || t[i + 1] === ' ' || t[i + 1] === '\t')) {
          end = i;
          break;
        }
      if (end < 0) return null;
      key = t.slice(0, end).trim();
      if (key === '') throw new YamlError(l.no, 'a key is missing before ":"');
    }
    let rest = t.slice(end + 1).trim();
    if (rest.startsWith('#')) rest = '';
    return { key, rest };
  }

  map(n: number): Obj {
    const out: Obj = {};
    for (;;) {
      const l = this.peek();
      if (!l || l.indent < n) return out;
      if (l.indent > n) throw new YamlError(l.no, 'unexpected indentation');
      if (isSeqItem(l.text)) return out; // `key:` then its list at the same indentation ends here; the caller decides
      const kv = this.splitKey(l);
      if (!kv) throw new YamlError(l.no, `expected "key: value" in the mapping that starts above`);
      if (Object.prototype.hasOwnProperty.call(out, kv.key)) throw new YamlError(l.no, `duplicate key "${kv.key}"`);
      this.i++;
      let v: Json;
      if (kv.rest === '') {
        const next = this.peek();
        if (next && next.indent > n) v = this.nodeAt(next, n);
        else if (next && next.indent === n && isSeqItem(next.text)) v = this.seq(n);
        else v = null;
      } else v = this.value(kv.rest, l, n, kv.key);
      out[kv.key] = v;
    }
  }

  seq(n: number): Json[] {
    const out: Json[] = [];
    for (;;) {
      const l = this.peek();
      if (!l || l.indent < n) return out;
      if (l.indent > n) throw new YamlError(l.no, 'unexpected indentation');
      if (!isSeqItem(l.text)) {
        // a key at the list's indentation ends a `key:` list; anything else is out of place
        if (this.splitKey(l)) return out;
        throw new YamlError(l.no, 'expected a list item ("- ")');
      }
      const m = /^-[ \t]*/.exec(l.text)![0];
      const rest = l.text.slice(m.length);
      if (rest === '' || rest.startsWith('#')) {
        this.i++;
        const next = this.peek();
        out.push(next && next.indent > n ? this.nodeAt(next, n) : null);
      } else {
        // the item's content as a line of its own, at its column (so `- a: 1` continues with `  b: 2`)
        const v: Line = { no: l.no, indent: n + m.length, text: rest, raw: l.raw };
        this.lines[this.i] = v;
        out.push(this.nodeAt(v, n));
      }
    }
  }

  /** An inline value (after `key:` or a line of its own): scalar, flow collection or block scalar header. */
  value(t: string, l: Line, parent: number, key: string): Json {
    unsupportedStart(t, l.no);
    const c = t[0];
    if (c === '|' || c === '>') return this.blockScalar(t, l, parent);
    if (c === '[' || c === '{' || c === '"' || c === "'") return this.gathered(t, l);
    if (isSeqItem(t)) throw new YamlError(l.no, `a list cannot start on the line of its key${key ? ` "${key}"` : ''}: put the items on the lines below`);
    if (c === ',' || c === ']' || c === '}') throw new YamlError(l.no, `unexpected "${c}"`);
    if (c === '%') throw new YamlError(l.no, '"%" cannot start a plain value; quote it');
    const cut = commentAt(t);
    let s = (cut < 0 ? t : t.slice(0, cut)).trim();
    if (/:(\s|$)/.test(s)) throw new YamlError(l.no, key ? `a mapping cannot start on the line of its key "${key}": put it on the lines below` : 'unexpected ":" in a value (quote the value)');
    // a plain scalar may continue on more-indented lines (folded with spaces)
    let breaks = 0;
    for (let j = this.i; j < this.lines.length; j++) {
      const n = this.lines[j];
      if (n.text === '') {
        breaks++;
        continue;
      }
      if (n.text.startsWith('#') || n.indent <= parent) break;
      if (isSeqItem(n.text) || this.splitKey(n)) throw new YamlError(n.no, key ? `unexpected indentation: "${key}" already has a value on line ${l.no}` : 'unexpected indentation');
      const c2 = commentAt(n.text);
      s += (breaks ? '\n'.repeat(breaks) : ' ') + (c2 < 0 ? n.text : n.text.slice(0, c2)).trim();
      breaks = 0;
      this.i = j + 1;
      if (c2 >= 0) break;
    }
    return resolveScalar(s);
  }

  /** A flow collection or quoted scalar, read over as many lines as it takes. */
  gathered(t: string, l: Line): Json {
    let text = t;
    const starts = [0];
    const nos = [l.no];
    const lineOf = (at: number) => {
      let k = 0;
      while (k + 1 < starts.length && starts[k + 1] <= at) k++;
      return nos[k];
    };
    for (;;) {
      const end = closingOf(text);
      if (end >= 0) {
        const tail = text.slice(end).trim();
        if (tail !== '' && !tail.startsWith('#')) throw new YamlError(lineOf(end), `unexpected text after the ${t[0] === '"' || t[0] === "'" ? 'quoted string' : `"${t[0]}" … "${t[0] === '[' ? ']' : '}'}"`}: ${tail}`);
        const body = text.slice(0, end);
        if (t[0] === '"' || t[0] === "'") return readQuoted(body, 0, lineOf).value;
        const f = new Flow(body, lineOf);
        return f.node();
      }
      const next = this.lines[this.i];
      if (!next) {
        const what = t[0] === '"' ? 'double-quoted string' : t[0] === "'" ? 'single-quoted string' : `"${t[0]}"`;
        throw new YamlError(l.no, `unclosed ${what} (opened here, never closed)`);
      }
      this.i++;
      starts.push(text.length + 1);
      nos.push(next.no);
      text += '\n' + next.raw.trim();
    }
  }

  /** `|` (literal) or `>` (folded) block scalar; `parent` is the enclosing collection's indentation. */
  blockScalar(header: string, l: Line, parent: number): string {
    const m = /^([|>])([1-9]?)([-+]?)([1-9]?)(?:[ \t]+#.*|[ \t]*)$/.exec(header);
    if (!m || (m[2] && m[4])) throw new YamlError(l.no, `bad block scalar header "${header}" (expected | or > with optional - / + and an indentation digit)`);
    const folded = m[1] === '>';
    const digit = m[2] || m[4];
    const chomp = m[3];
    const rows: string[] = [];
    let indent = digit ? Math.max(parent, 0) + Number(digit) : -1;
    for (; this.i < this.lines.length; this.i++) {
      const raw = this.lines[this.i].raw;
      if (raw.trim() === '') {
        rows.push(raw);
        continue;
      }
      const lead = /^ */.exec(raw)![0].length;
      if (indent < 0) {
        if (lead <= parent) break;
        indent = lead;
      }
      if (lead < indent) break;
      rows.push(raw);
    }
    if (indent < 0) indent = parent + 1;
    // trailing blank rows belong to the chomping, and blank rows after the scalar to the document
    const body = rows.map((r) => r.slice(indent));
    let trailing = 0;
    while (body.length && body[body.length - 1].trim() === '') {
      body.pop();
      trailing++;
    }
    let text: string;
    if (!folded) text = body.join('\n');
    else {
      text = '';
      let empty = 0, prevMore = false, first = true;
      for (const row of body) {
        if (row.trim() === '') {
          empty++;
          continue;
        }
        const more = row[0] === ' ' || row[0] === '\t';
        if (first) text = '\n'.repeat(empty) + row;
        else if (more || prevMore) text += '\n'.repeat(empty + 1) + row;
        else text += empty ? '\n'.repeat(empty) + row : ' ' + row;
        empty = 0;
        prevMore = more;
        first = false;
      }
      if (first) text = '';
    }
    if (text === '' && chomp !== '+') return '';
    if (chomp === '-') return text;
    if (chomp === '+') return text + '\n'.repeat(trailing + 1);
    return text + '\n';
  }
}

/** Offset just after the construct opened at text[0] ([, {, " or '), or -1 when not closed yet. */
function closingOf(text: string): number {
  let depth = 0;
  for (let p = 0; p < text.length; p++) {
    const c = text[p];
    if (c === '"' || c === "'") {
      // skip the quoted string
      p++;
      while (p < text.length) {
        if (c === '"' && text[p] === '\\') p += 2;
        else if (text[p] === c) {
          if (c === "'" && text[p + 1] === "'") p += 2;
          else break;
        } else p++;
      }
      if (p >= text.length) return -1;
      if (depth === 0) return p + 1;
    } else if (c === '#' && (p === 0 || /\s/.test(text[p - 1]))) {
      // a comment inside a flow collection runs to the end of its line
      const nl = text.indexOf('\n', p);
      if (nl < 0) return -1;
      p = nl;
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) return p + 1;
    }
  }
  return -1;
}

/** Parse one YAML document of the subset above; throws YamlError (with the line) otherwise. */
export function parseYaml(text: string): Json {
  const raws = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const lines: Line[] = [];
  let started = false;
  for (let k = 0; k < raws.length; k++) {
    const raw = raws[k];
    const no = k + 1;
    if (/^---(?:[ \t]|$)/.test(raw)) {
      if (started || lines.some((l) => !isBlank(l.text))) throw new YamlError(no, 'more than one document ("---") is not supported', true);
      const after = raw.slice(3).trim();
      if (after !== '' && !after.startsWith('#')) throw new YamlError(no, 'content on the "---" line is not supported: start it on the next line', true);
      started = true;
      lines.push({ no, indent: 0, text: '', raw: '' });
      continue;
    }
    if (/^\.\.\.(?:[ \t]|$)/.test(raw)) {
      const after = raws.slice(k + 1).findIndex((r) => !isBlank(r.trim()));
      if (after >= 0) throw new YamlError(k + 2 + after, 'content after the document end ("...") is not supported', true);
      break;
    }
    if (/^%/.test(raw)) throw new YamlError(no, 'directives (%YAML, %TAG) are not supported', true);
    const indent = /^ */.exec(raw)![0].length;
    lines.push({ no, indent, text: raw.slice(indent).trimEnd(), raw });
  }
  return new Parser(lines).document();
}
