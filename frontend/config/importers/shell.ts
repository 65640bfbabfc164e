// The bash subset of training launch scripts, evaluated without running anything:
// variables and arrays (NAME=..., NAME=(...), NAME+=(...), declare/export/local),
// quoting, ${NAME:-default} and the other parameter forms, $(( arithmetic )),
// if/elif/else, case, for, while, functions, && / ||, here-documents and `source`.
// Nothing outside the text is known: a test on a variable the script does not set
// (an environment variable, a positional argument, $(command) output, a file test)
// is undecided, and the else / default branch is taken with a note. Every kind of
// work is bounded (nesting, loop turns, calls, commands, value sizes), so a bomb
// ends as an ImportError, never a hang.
import { ImportError } from './common.js';

/** What running the script would hand to its commands. */
export interface ShellRun {
  /** every simple command reached, after expansion (assignments and builtins excluded) */
  commands: string[][];
  /** the scalar value of each variable set by the script (arrays joined by spaces) */
  vars: Map<string, string>;
  /** which branches were taken for lack of a value, `source`d files, exits */
  notes: string[];
  /** files the script sources (not given, so not read) */
  sourced: string[];
  /** files the script writes from a here-document (`cat <<EOT > file`), by expanded name */
  written: Map<string, string>;
}

const MAX_VALUE_CHARS = 65536; // no launch script needs 64 KiB in one variable
const MAX_ARRAY_ITEMS = 16384;
const MAX_NESTING = 200; // compound commands and $(( )) inside each other
const MAX_DEFAULT_NESTING = 32; // ${A:-${B:-...}}: each level re-reads the text inside it
const MAX_LOOP_TURNS = 10000; // all loops together
const MAX_COMMANDS = 200000; // simple commands evaluated, all calls and turns together
const MAX_CALL_DEPTH = 64;
const MAX_EXPANDED_CHARS = 4_000_000; // all expansions together

// ---------------------------------------------------------------- lexer

type Part =
  | { t: 'lit'; s: string } // unquoted text
  | { t: 'sq'; s: string } // '...' (and \x escapes outside quotes)
  | { t: 'dq'; parts: Part[] }
  | { t: 'param'; body: string } // ${...} or $NAME
  | { t: 'arith'; expr: string } // $(( ... ))
  | { t: 'cmd'; text: string }; // $( ... ) or `...`
interface Word {
  parts: Part[];
}
type Tok =
  | { k: 'word'; w: Word; raw: string }
  | { k: 'op'; op: string }
  | { k: 'array'; name: string; append: boolean; items: Word[] }
  | { k: 'redir'; op: string; target?: Word; heredoc?: { body: string; expand: boolean } };

const isName = (s: string) => /^[A-Za-z_]\w*$/.test(s);

class Lexer {
  i = 0;
  toks: Tok[] = [];
  private pending: { delim: string; strip: boolean; tok: Tok & { k: 'redir' }; expand: boolean }[] = [];
  constructor(private readonly s: string) {}

  run(): Tok[] {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === '\\' && s[this.i + 1] === '\n') this.i += 2;
      else if (c === '\\' && s[this.i + 1] === '\r' && s[this.i + 2] === '\n') this.i += 3;
      else if (c === ' ' || c === '\t' || c === '\r') this.i++;
      else if (c === '#') while (this.i < s.length && s[this.i] !== '\n') this.i++;
      else if (c === '\n') {
        this.i++;
        this.toks.push({ k: 'op', op: '\n' });
        this.heredocs();
      } else if (this.operator()) {
      } else this.word();
    }
    this.heredocs();
    return this.toks;
  }

  private operator(): boolean {
    const s = this.s,
      i = this.i;
    for (const op of [';;', ';&', '&&', '||', '&>>', '&>', '<<<', '<<-', '<<', '>>', '>&', '<&', '>|', '<>'])
      if (s.startsWith(op, i)) {
        this.i += op.length;
        if (op.startsWith('<<') && op !== '<<<') this.heredocStart(op === '<<-');
        else if (/[<>]/.test(op)) this.redirect(op);
        else this.toks.push({ k: 'op', op });
        return true;
      }
    const c = s[i];
    if (c === '>' || c === '<') {
      this.i++;
      this.redirect(c);
      return true;
    }
    // --moe-layer-freq ([0]*3+[1]*58): a flag's value written unquoted, as in argument lines
    const prev = this.toks.at(-1);
    if (c === '(' && prev?.k === 'word' && prev.raw.startsWith('--')) {
      const w = this.balanced();
      this.toks.push({ k: 'word', w: { parts: [{ t: 'lit', s: w }] }, raw: w });
      return true;
    }
    if (';&|()'.includes(c)) {
      this.i++;
      this.toks.push({ k: 'op', op: c });
      return true;
    }
    return false;
  }

  /** ( ... ) on one line, as text. */
  private balanced(): string {
    let depth = 0;
    for (let k = this.i; k < this.s.length && this.s[k] !== '\n'; k++) {
      if (this.s[k] === '(') depth++;
      else if (this.s[k] === ')' && --depth === 0) {
        const w = this.s.slice(this.i, k + 1);
        this.i = k + 1;
        return w;
      }
    }
    throw new ImportError('', 'shell script: ( without its ) on the same line');
  }

  private redirect(op: string) {
    const tok: Tok = { k: 'redir', op };
    if ((op === '>&' || op === '<&') && /[\d-]/.test(this.s[this.i] ?? '')) {
      while (/[\d-]/.test(this.s[this.i] ?? '')) this.i++;
    } else {
      this.blank();
      if (this.i < this.s.length && !'\n;&|()<>'.includes(this.s[this.i])) tok.target = this.readWord();
    }
    this.toks.push(tok);
  }

  private blank() {
    while (this.s[this.i] === ' ' || this.s[this.i] === '\t') this.i++;
  }

  private heredocStart(strip: boolean) {
    this.blank();
    const start = this.i;
    this.readWord();
    const raw = this.s.slice(start, this.i);
    const delim = raw.replace(/['"\\]/g, '');
    const tok: Tok & { k: 'redir' } = { k: 'redir', op: '<<' };
    this.toks.push(tok);
    this.pending.push({ delim, strip, tok, expand: !/['"\\]/.test(raw) });
  }

  /** Here-document bodies start on the line after their `<<WORD`. */
  private heredocs() {
    for (const h of this.pending) {
      const lines: string[] = [];
      while (this.i < this.s.length) {
        let end = this.s.indexOf('\n', this.i);
        if (end < 0) end = this.s.length;
        let line = this.s.slice(this.i, end).replace(/\r$/, '');
        this.i = end + 1;
        if (h.strip) line = line.replace(/^\t+/, '');
        if (line === h.delim) break;
        lines.push(line);
      }
      h.tok.heredoc = { body: lines.length ? `${lines.join('\n')}\n` : '', expand: h.expand };
    }
    this.pending = [];
  }

  private word() {
    const start = this.i;
    const w = this.readWord();
    const raw = this.s.slice(start, this.i);
    // NAME=( ... ) and NAME+=( ... ): an array assignment
    const m = /^([A-Za-z_]\w*)(\+?)=$/.exec(raw);
    if (m && this.s[this.i] === '(') {
      this.i++;
      const items: Word[] = [];
      for (;;) {
        const c = this.s[this.i];
        if (c === undefined) throw new ImportError(m[1], `shell script: array ${m[1]}=( is not closed`);
        if (c === ')') {
          this.i++;
          break;
        }
        if (c === ' ' || c === '\t' || c === '\r' || c === '\n') this.i++;
        else if (c === '\\' && this.s[this.i + 1] === '\n') this.i += 2;
        else if (c === '#') while (this.i < this.s.length && this.s[this.i] !== '\n') this.i++;
        else if (c === '(') items.push({ parts: [{ t: 'lit', s: this.balanced() }] });
        else {
          const at = this.i;
          items.push(this.readWord());
          if (this.i === at) throw new ImportError(m[1], `shell script: "${c}" inside the array ${m[1]}=( )`);
        }
      }
      this.toks.push({ k: 'array', name: m[1], append: m[2] === '+', items });
      return;
    }
    // 2>file, 2>&1: a file-descriptor number before a redirection
    if (/^\d+$/.test(raw) && (this.s[this.i] === '>' || this.s[this.i] === '<')) return;
    this.toks.push({ k: 'word', w, raw });
  }

  /** One word: quoted pieces, expansions and plain text up to a blank or an operator. */
  readWord(): Word {
    const s = this.s;
    const parts: Part[] = [];
    let lit = '';
    const flush = () => {
      if (lit) parts.push({ t: 'lit', s: lit });
      lit = '';
    };
    while (this.i < s.length) {
      const c = s[this.i];
      if (' \t\r\n;&|<>'.includes(c)) break;
      if (c === '(' || c === ')') break;
      if (c === '\\') {
        flush();
        if (s[this.i + 1] === '\n') this.i += 2;
        else {
          parts.push({ t: 'sq', s: s[this.i + 1] ?? '' });
          this.i += 2;
        }
      } else if (c === "'") {
        flush();
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) throw new ImportError('', 'shell script: unterminated single quote');
        parts.push({ t: 'sq', s: s.slice(this.i + 1, end) });
        this.i = end + 1;
      } else if (c === '"') {
        flush();
        this.i++;
        parts.push({ t: 'dq', parts: this.readQuoted() });
      } else if (c === '$' || c === '`') {
        flush();
        parts.push(this.dollar());
      } else {
        lit += c;
        this.i++;
      }
    }
    flush();
    return { parts };
  }

  /**
   * The inside of "..." up to the closing quote; or, to the end of the text, a
   * here-document body (quotes are text) or a ${NAME:-word} word (quotes removed).
   */
  readQuoted(until: '"' | 'heredoc' | 'word' = '"'): Part[] {
    const s = this.s;
    const parts: Part[] = [];
    let lit = '';
    for (;;) {
      if (this.i >= s.length) {
        if (until === '"') throw new ImportError('', 'shell script: unterminated double quote');
        break;
      }
      const c = s[this.i];
      if (c === '"' && until !== 'heredoc') {
        this.i++;
        if (until === '"') break;
        if (lit) parts.push({ t: 'lit', s: lit });
        lit = '';
        parts.push({ t: 'dq', parts: this.readQuoted() });
        continue;
      }
      if (c === "'" && until === 'word') {
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) throw new ImportError('', 'shell script: unterminated single quote');
        lit += s.slice(this.i + 1, end);
        this.i = end + 1;
        continue;
      }
      if (
        c === '\\' &&
        (until === 'word' || '$`\\\n'.includes(s[this.i + 1] ?? '') || (until === '"' && s[this.i + 1] === '"'))
      ) {
        if (s[this.i + 1] !== '\n') lit += s[this.i + 1];
        this.i += 2;
      } else if (c === '$' || c === '`') {
        if (lit) parts.push({ t: 'lit', s: lit });
        lit = '';
        parts.push(this.dollar());
      } else {
        lit += c;
        this.i++;
      }
    }
    if (lit) parts.push({ t: 'lit', s: lit });
    return parts;
  }

  /** $NAME, ${...}, $((...)), $(...), `...`; a lone $ is text. */
  private dollar(): Part {
    const s = this.s;
    if (s[this.i] === '`') {
      const end = s.indexOf('`', this.i + 1);
      if (end < 0) throw new ImportError('', 'shell script: unterminated backquote');
      const text = s.slice(this.i + 1, end);
      this.i = end + 1;
      return { t: 'cmd', text };
    }
    const j = this.i + 1;
    if (s[j] === '(' && s[j + 1] === '(') {
      const end = closing(s, j + 2, 2);
      const expr = s.slice(j + 2, end);
      this.i = end + 2;
      return { t: 'arith', expr };
    }
    if (s[j] === '(') {
      const end = closing(s, j + 1, 1);
      this.i = end + 1;
      return { t: 'cmd', text: s.slice(j + 1, end) };
    }
    if (s[j] === '{') {
      let depth = 1,
        k = j + 1;
      while (k < s.length && depth) {
        if (s[k] === '{') depth++;
        else if (s[k] === '}') depth--;
        k++;
      }
      if (depth) throw new ImportError('', 'shell script: a parameter expansion without its closing }');
      this.i = k;
      return { t: 'param', body: s.slice(j + 1, k - 1) };
    }
    const m = /^([A-Za-z_]\w*|[0-9#@*?$!-])/.exec(s.slice(j, j + 256));
    if (m) {
      this.i = j + m[1].length;
      return { t: 'param', body: m[1] };
    }
    this.i = j;
    return { t: 'lit', s: '$' };
  }
}

/** Where the `)` (count 1) or `))` (count 2) closing a $( / $(( opened before `from` is. */
function closing(s: string, from: number, count: number): number {
  let depth = 0;
  for (let k = from; k < s.length; k++) {
    const c = s[k];
    if (c === "'" && count === 1) {
      const end = s.indexOf("'", k + 1);
      if (end < 0) break;
      k = end;
    } else if (c === '(') depth++;
    else if (c === ')') {
      if (depth === 0 && (count === 1 || s[k + 1] === ')')) return k;
      if (depth > 0) depth--;
    }
  }
  throw new ImportError('', `shell script: ${count === 2 ? '$((' : '$('} without its closing ${')'.repeat(count)}`);
}

const text = (p: Part): string =>
  p.t === 'lit' || p.t === 'sq'
    ? p.s
    : p.t === 'dq'
      ? flat(p.parts)
      : p.t === 'param'
        ? `\${${p.body}}`
        : p.t === 'arith'
          ? `$((${p.expr}))`
          : `$(${p.text})`;
const flat = (parts: Part[]): string => parts.map(text).join('');
/** A word as written, when it is plain text (keywords, names, patterns). */
const plain = (w: Word): string | undefined =>
  w.parts.every((p) => p.t === 'lit' || p.t === 'sq') ? w.parts.map(text).join('') : undefined;

// ---------------------------------------------------------------- parser

type Node =
  | { n: 'simple'; words: Word[]; arrays: (Tok & { k: 'array' })[]; redirs: (Tok & { k: 'redir' })[] }
  | { n: 'list'; items: { node: Node; op: string }[] } // op joins an item to the one before: ';' '&&' '||'
  | { n: 'pipe'; cmds: Node[] }
  | { n: 'if'; arms: { cond: Node; body: Node }[]; otherwise?: Node; src: string[] }
  | { n: 'case'; word: Word; arms: { patterns: Word[]; body: Node }[]; src: string }
  | { n: 'for'; name: string; items?: Word[]; body: Node }
  | { n: 'while'; cond: Node; body: Node; until: boolean; src: string }
  | { n: 'func'; name: string; body: Node }
  | { n: 'test'; words: string[]; raw: Word[]; arith: boolean; src: string }
  | { n: 'group'; body: Node }
  | { n: 'not'; body: Node };

const RESERVED = new Set([
  'then',
  'elif',
  'else',
  'fi',
  'do',
  'done',
  'esac',
  '}',
  'in',
  'if',
  'case',
  'for',
  'while',
  'until',
  'function',
  '{',
]);

class Parser {
  private p = 0;
  private depth = 0;
  constructor(private readonly toks: Tok[]) {}

  script(): Node {
    const node = this.list([]);
    if (this.p < this.toks.length) {
      const t = this.toks[this.p];
      throw new ImportError(
        '',
        `shell script: unexpected ${t.k === 'op' ? `"${t.op === '\n' ? 'newline' : t.op}"` : t.k === 'word' ? `"${t.raw}"` : 'array'}`,
      );
    }
    return node;
  }

  private peek(): Tok | undefined {
    return this.toks[this.p];
  }
  private word(): string | undefined {
    const t = this.peek();
    return t?.k === 'word' ? plain(t.w) : undefined;
  }
  private isOp(op: string): boolean {
    const t = this.peek();
    return t?.k === 'op' && t.op === op;
  }
  private skipNewlines() {
    while (this.isOp('\n') || this.isOp(';')) this.p++;
  }
  private expect(keyword: string, what: string) {
    this.skipNewlines();
    if (this.word() !== keyword) throw new ImportError('', `shell script: ${what} without its "${keyword}"`);
    this.p++;
  }

  /** Commands up to one of the `stops` words (or `)` / `;;` / the end). */
  list(stops: string[]): Node {
    if (++this.depth > MAX_NESTING)
      throw new ImportError('', `shell script: commands nested more than ${MAX_NESTING} levels deep`);
    const items: { node: Node; op: string }[] = [];
    let op = ';';
    for (;;) {
      while (this.isOp('\n') || this.isOp(';') || this.isOp('&')) {
        this.p++;
        op = ';';
      }
      const t = this.peek();
      if (!t) break;
      const w = this.word();
      if (w !== undefined && stops.includes(w)) break;
      if (t.k === 'op' && (t.op === ')' || t.op === ';;' || t.op === ';&')) break;
      if (t.k === 'op' && (t.op === '&&' || t.op === '||'))
        throw new ImportError('', `shell script: "${t.op}" with no command before it`);
      items.push({ node: this.pipeline(), op });
      if (this.isOp('&&') || this.isOp('||')) {
        op = (this.peek() as { op: string }).op;
        this.p++;
        while (this.isOp('\n')) this.p++;
      } else op = ';';
    }
    this.depth--;
    return { n: 'list', items };
  }

  private pipeline(): Node {
    const cmds = [this.command()];
    while (this.isOp('|')) {
      this.p++;
      while (this.isOp('\n')) this.p++;
      cmds.push(this.command());
    }
    return cmds.length === 1 ? cmds[0] : { n: 'pipe', cmds };
  }

  private command(): Node {
    const w = this.word();
    const t = this.peek();
    if (w === '!') {
      this.p++;
      return { n: 'not', body: this.command() };
    }
    if (w === 'if') return this.ifNode();
    if (w === 'case') return this.caseNode();
    if (w === 'for') return this.forNode();
    if (w === 'while' || w === 'until') return this.whileNode(w === 'until');
    if (w === '{') {
      this.p++;
      const body = this.list(['}']);
      this.expect('}', '{');
      return this.redirects({ n: 'group', body });
    }
    if (w === 'function') {
      this.p++;
      const name = this.word();
      if (name === undefined) throw new ImportError('', 'shell script: function without a name');
      this.p++;
      if (this.isOp('(')) this.p += 2;
      while (this.isOp('\n')) this.p++;
      return { n: 'func', name, body: this.command() };
    }
    if (t?.k === 'op' && t.op === '(') {
      this.p++;
      if (this.isOp('(')) return this.arithCommand();
      const body = this.list([]);
      if (!this.isOp(')')) throw new ImportError('', 'shell script: ( without its )');
      this.p++;
      return this.redirects({ n: 'group', body });
    }
    if (w === '[[' || w === '[' || w === 'test') return this.testNode(w);
    // name() { ... }
    if (w !== undefined && isName(w) && this.toks[this.p + 1]?.k === 'op') {
      const a = this.toks[this.p + 1] as { op: string },
        b = this.toks[this.p + 2] as { op?: string } | undefined;
      if (a.op === '(' && b?.op === ')') {
        this.p += 3;
        while (this.isOp('\n')) this.p++;
        return { n: 'func', name: w, body: this.command() };
      }
    }
    return this.simple();
  }

  private arithCommand(): Node {
    // (( expr )): the lexer gave "(" "(" words... ")" ")"
    this.p++;
    const words: string[] = [];
    const raw: Word[] = [];
    while (this.peek() && !(this.isOp(')') && (this.toks[this.p + 1] as { op?: string })?.op === ')')) {
      const t = this.peek()!;
      if (t.k === 'word') {
        words.push(t.raw);
        raw.push(t.w);
      } else if (t.k === 'op') words.push(t.op);
      else if (t.k === 'redir') words.push(t.op, t.target ? flat(t.target.parts) : '');
      this.p++;
    }
    if (!this.peek()) throw new ImportError('', 'shell script: (( without its ))');
    this.p += 2;
    return { n: 'test', words, raw, arith: true, src: `(( ${words.join(' ')} ))` };
  }

  private testNode(open: string): Node {
    this.p++;
    const close = open === '[[' ? ']]' : open === '[' ? ']' : undefined;
    const words: string[] = [];
    const raw: Word[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) {
        if (close) throw new ImportError('', `shell script: ${open} without its ${close}`);
        break;
      }
      if (t.k === 'word') {
        if (close && plain(t.w) === close) {
          this.p++;
          break;
        }
        words.push(`\u0000${raw.length}`);
        raw.push(t.w);
      } else if (t.k === 'op' && (t.op === '\n' || (!close && [';', '&&', '||', '|', '&', ')'].includes(t.op)))) {
        if (close) throw new ImportError('', `shell script: ${open} without its ${close}`);
        break;
      } else if (t.k === 'op') words.push(t.op);
      else if (t.k === 'redir' && close === ']]') {
        words.push(t.op);
        if (t.target) {
          words.push(`\u0000${raw.length}`);
          raw.push(t.target);
        }
      }
      this.p++;
    }
    const src = [open, ...words.map((w) => (w.startsWith('\u0000') ? flat(raw[Number(w.slice(1))].parts) : w)), close]
      .filter(Boolean)
      .join(' ');
    return this.redirects({ n: 'test', words, raw, arith: false, src });
  }

  private redirects(node: Node): Node {
    while (this.peek()?.k === 'redir') this.p++;
    return node;
  }

  private simple(): Node {
    const node: Node & { n: 'simple' } = { n: 'simple', words: [], arrays: [], redirs: [] };
    for (;;) {
      const t = this.peek();
      if (!t || t.k === 'op') break;
      if (t.k === 'word') {
        if (!node.words.length && !node.arrays.length) {
          const w = plain(t.w);
          if (w !== undefined && RESERVED.has(w) && w !== '{' && w !== 'in')
            throw new ImportError('', `shell script: unexpected "${w}"`);
        }
        node.words.push(t.w);
      } else if (t.k === 'array') node.arrays.push(t);
      else node.redirs.push(t);
      this.p++;
    }
    return node;
  }

  private ifNode(): Node {
    this.p++;
    const arms: { cond: Node; body: Node }[] = [];
    const src: string[] = [];
    let otherwise: Node | undefined;
    for (;;) {
      const cond = this.list(['then']);
      this.expect('then', 'if');
      const body = this.list(['elif', 'else', 'fi']);
      arms.push({ cond, body });
      src.push(describe(cond));
      const w = this.word();
      this.p++;
      if (w === 'elif') continue;
      if (w === 'else') {
        otherwise = this.list(['fi']);
        this.expect('fi', 'if');
      } else if (w !== 'fi') throw new ImportError('', 'shell script: if without its "fi"');
      break;
    }
    return this.redirects({ n: 'if', arms, otherwise, src });
  }

  private caseNode(): Node {
    this.p++;
    const t = this.peek();
    if (t?.k !== 'word') throw new ImportError('', 'shell script: case without a word');
    this.p++;
    this.expect('in', 'case');
    const arms: { patterns: Word[]; body: Node }[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.word() === 'esac') {
        this.p++;
        break;
      }
      if (!this.peek()) throw new ImportError('', 'shell script: case without its "esac"');
      if (this.isOp('(')) this.p++;
      const patterns: Word[] = [];
      for (;;) {
        const pt = this.peek();
        if (pt?.k !== 'word') throw new ImportError('', 'shell script: a case pattern must end with ")"');
        patterns.push(pt.w);
        this.p++;
        if (this.isOp('|')) this.p++;
        else if (this.isOp(')')) {
          this.p++;
          break;
        } else throw new ImportError('', 'shell script: a case pattern must end with ")"');
      }
      const body = this.list(['esac']);
      arms.push({ patterns, body });
      if (this.isOp(';;') || this.isOp(';&')) this.p++;
    }
    return this.redirects({ n: 'case', word: t.w, arms, src: flat(t.w.parts) });
  }

  private forNode(): Node {
    this.p++;
    if (this.isOp('(')) {
      // for (( ...; ...; ... )): not evaluated; the body is skipped with a note
      let depth = 0;
      while (this.peek()) {
        if (this.isOp('(')) depth++;
        if (this.isOp(')') && --depth === 0) break;
        this.p++;
      }
      this.p++;
      this.expect('do', 'for');
      this.list(['done']);
      this.expect('done', 'for');
      return { n: 'for', name: '', body: { n: 'list', items: [] } };
    }
    const name = this.word();
    if (name === undefined || !isName(name)) throw new ImportError('', 'shell script: for without a variable name');
    this.p++;
    let items: Word[] | undefined;
    while (this.isOp('\n')) this.p++;
    if (this.word() === 'in') {
      this.p++;
      items = [];
      while (this.peek()?.k === 'word') {
        items.push((this.peek() as { w: Word }).w);
        this.p++;
      }
    }
    this.expect('do', 'for');
    const body = this.list(['done']);
    this.expect('done', 'for');
    return this.redirects({ n: 'for', name, items, body });
  }

  private whileNode(until: boolean): Node {
    this.p++;
    const cond = this.list(['do']);
    this.expect('do', until ? 'until' : 'while');
    const body = this.list(['done']);
    this.expect('done', until ? 'until' : 'while');
    return this.redirects({ n: 'while', cond, body, until, src: describe(cond) });
  }
}

/** A condition as a reader would write it in a note. */
function describe(node: Node): string {
  if (node.n === 'test') return node.src;
  if (node.n === 'list')
    return node.items.map((i, k) => (k ? `${i.op === ';' ? ';' : ` ${i.op}`} ` : '') + describe(i.node)).join('');
  if (node.n === 'simple') return node.words.map((w) => flat(w.parts)).join(' ');
  if (node.n === 'pipe') return node.cmds.map(describe).join(' | ');
  return node.n;
}

// ---------------------------------------------------------------- evaluator

/** true, false, or undecided (the script does not say). */
type Status = boolean | undefined;
class Exit {}
class Return {}

class Shell {
  readonly vars = new Map<string, string[]>();
  readonly funcs = new Map<string, Node>();
  readonly run: ShellRun = { commands: [], vars: new Map(), notes: [], sourced: [], written: new Map() };
  private unknown = false; // set when an expansion met a value the script does not give
  // in a test or a case word, a variable the file never sets reads as empty, as bash reads it when the
  // environment leaves it unset; its names are collected for the note
  private asEmpty = false;
  private textDepth = 0;
  private unsetNames = new Set<string>();
  private positional: string[][] = []; // function-call arguments; empty at the top: the script's own are not given
  private undecided = 0; // > 0 inside a branch taken for lack of a value
  private turns = 0;
  private steps = 0;
  private expanded = 0;
  private readonly noted = new Set<string>();

  note(s: string) {
    if (!this.noted.has(s)) {
      this.noted.add(s);
      this.run.notes.push(s);
    }
  }

  exec(node: Node): Status {
    if (++this.steps > MAX_COMMANDS)
      throw new ImportError('', `shell script: more than ${MAX_COMMANDS} commands to evaluate`);
    switch (node.n) {
      case 'list':
        return this.list(node);
      case 'pipe': {
        let s: Status = true;
        for (const c of node.cmds) s = this.exec(c);
        return s;
      }
      case 'simple':
        return this.simple(node);
      case 'test':
        return this.test(node);
      case 'group':
        return this.exec(node.body);
      case 'not': {
        const s = this.exec(node.body);
        return s === undefined ? undefined : !s;
      }
      case 'func':
        this.funcs.set(node.name, node.body);
        return true;
      case 'if':
        return this.ifNode(node);
      case 'case':
        return this.caseNode(node);
      case 'for':
        return this.forNode(node);
      case 'while':
        return this.whileNode(node);
    }
  }

  private list(node: Node & { n: 'list' }): Status {
    let s: Status = true;
    let unset: string[] = [];
    for (const { node: item, op } of node.items) {
      if (op === '&&' || op === '||') {
        if (s === undefined) {
          this.note(`\`… ${op} ${describe(item)}\`: the condition before it is undecided at import time; not run`);
          continue;
        }
        if (op === '&&' ? !s : s) continue;
        if (unset.length) {
          this.note(`\`… ${op} ${describe(item)}\`: run, with ${unset.join(', ')} read as unset`);
          s = this.inUndecided(() => this.exec(item));
          continue;
        }
      }
      this.unsetNames = new Set();
      s = this.exec(item);
      unset = [...this.unsetNames];
    }
    return s;
  }

  private inUndecided(body: () => Status): Status {
    this.undecided++;
    try {
      return body();
    } finally {
      this.undecided--;
    }
  }

  private ifNode(node: Node & { n: 'if' }): Status {
    let guessed = false;
    for (const [k, arm] of node.arms.entries()) {
      this.unsetNames = new Set();
      const s = this.exec(arm.cond);
      const unset = [...this.unsetNames];
      if (s !== undefined && unset.length) {
        this.note(
          `\`if ${node.src[k]}\`: ${unset.join(', ')} not set in the file, read as unset (empty); ${s ? 'took its then branch' : k + 1 < node.arms.length ? 'went on to the next elif' : node.otherwise ? 'took the else branch' : 'no branch taken (there is no else)'}`,
        );
        guessed = true;
      }
      if (s === true) {
        if (guessed) {
          if (!unset.length) this.note(`\`if ${node.src[k]}\`: taken (an earlier condition was undecided)`);
          return this.inUndecided(() => this.exec(arm.body));
        }
        return this.exec(arm.body);
      }
      if (s === undefined) {
        guessed = true;
        this.note(
          `\`if ${node.src[k]}\`: depends on a value the script does not set (environment, argument, command output or file); ${k + 1 < node.arms.length ? 'went on to the next elif' : node.otherwise ? 'took the else branch' : 'no branch taken (there is no else)'}`,
        );
      }
    }
    if (!node.otherwise) return true;
    return guessed ? this.inUndecided(() => this.exec(node.otherwise!)) : this.exec(node.otherwise);
  }

  private caseNode(node: Node & { n: 'case' }): Status {
    this.unknown = false;
    this.unsetNames = new Set();
    this.asEmpty = true;
    const value = this.expand(node.word).join(' ');
    this.asEmpty = false;
    const undecided = this.unknown;
    const unset = [...this.unsetNames];
    for (const arm of node.arms) {
      const pats = arm.patterns.map((p) => this.expand(p).join(' '));
      if (!undecided && unset.length && pats.some((p) => glob(p).test(value))) {
        this.note(
          `\`case ${node.src}\`: ${unset.join(', ')} not set in the file, read as unset (empty); took ${pats.join('|')})`,
        );
        return this.inUndecided(() => this.exec(arm.body));
      }
      if (undecided) {
        if (pats.includes('*')) {
          this.note(`\`case ${node.src}\`: the value is not set by the script; took the default branch *)`);
          return this.inUndecided(() => this.exec(arm.body));
        }
      } else if (pats.some((p) => glob(p).test(value))) return this.exec(arm.body);
    }
    if (undecided)
      this.note(`\`case ${node.src}\`: the value is not set by the script and there is no *) branch; none taken`);
    else if (unset.length)
      this.note(
        `\`case ${node.src}\`: ${unset.join(', ')} not set in the file, read as unset (empty); no pattern matches`,
      );
    return true;
  }

  private forNode(node: Node & { n: 'for' }): Status {
    if (!node.name) {
      this.note('`for (( … ))`: arithmetic loops are not evaluated; body not run');
      return true;
    }
    const items = node.items ? node.items.flatMap((w) => this.expand(w)) : (this.positional.at(-1) ?? []);
    for (const item of items) {
      this.turn();
      this.setVar(node.name, [item]);
      this.exec(node.body);
    }
    return true;
  }

  private whileNode(node: Node & { n: 'while' }): Status {
    for (;;) {
      const s = this.exec(node.cond);
      if (s === undefined) {
        this.note(
          `\`${node.until ? 'until' : 'while'} ${node.src}\`: the condition is undecided at import time; body not run`,
        );
        return true;
      }
      if (s === node.until) return true;
      this.turn();
      this.exec(node.body);
    }
  }

  private turn() {
    if (++this.turns > MAX_LOOP_TURNS)
      throw new ImportError('', `shell script: loops run more than ${MAX_LOOP_TURNS} times in all`);
  }

  // ---- simple commands

  private simple(node: Node & { n: 'simple' }): Status {
    const assigns: [string, Word][] = [];
    let k = 0;
    for (; k < node.words.length; k++) {
      const lead = leadingAssignment(node.words[k]);
      if (!lead) break;
      assigns.push([lead, node.words[k]]);
    }
    const words = node.words.slice(k);
    if (!words.length) {
      for (const [lead, w] of assigns) this.assign(lead, w);
      for (const a of node.arrays) this.assignArray(a);
      this.heredoc(node, undefined);
      return true;
    }
    for (const [lead, w] of assigns) this.assign(lead, w); // VAR=x cmd: kept (the command sees it; so does the rest here)
    const name = plain(words[0]);
    if (name && ['export', 'declare', 'typeset', 'local', 'readonly'].includes(name)) {
      for (const w of words.slice(1)) {
        const lead = leadingAssignment(w);
        if (lead) this.assign(lead, w);
        else {
          const v = plain(w);
          if (v && isName(v) && !this.vars.has(v) && words.some((x) => /^-\w*[aA]/.test(plain(x) ?? '')))
            this.setVar(v, []);
        }
      }
      for (const a of node.arrays) this.assignArray(a);
      return true;
    }
    if (name === 'read') {
      this.read(node, words.slice(1));
      return true;
    }
    if (name === 'unset') {
      for (const w of words.slice(1)) this.vars.delete(plain(w) ?? '');
      return true;
    }
    if (name === 'source' || name === '.') {
      const file = words[1] ? this.expand(words[1]).join(' ') : '';
      this.run.sourced.push(file);
      return true;
    }
    if (name === 'exit' || name === 'return') {
      if (name === 'return' && this.positional.length) throw new Return();
      if (this.undecided) {
        this.note(`\`${name}\` in a branch taken by default: not followed; the rest of the script read`);
        return true;
      }
      this.note(`\`${name}\`: the script stops here; what follows was not read`);
      throw new Exit();
    }
    if (name === 'false') return false;
    if (name === 'shift') {
      this.positional.at(-1)?.shift();
      return true;
    }
    const fn = name ? this.funcs.get(name) : undefined;
    const argv = words.flatMap((w) => this.expand(w)); // expanded first: `: ${X:=default}` assigns
    if (name === 'true' || name === ':') return true;
    if (fn) return this.call(fn, argv.slice(1));
    if (name === 'set' || name === 'cd' || name === 'pushd' || name === 'popd' || name === 'ulimit') return true;
    this.heredoc(node, argv);
    this.run.commands.push(argv);
    return true;
  }

  private call(fn: Node, args: string[]): Status {
    if (this.positional.length >= MAX_CALL_DEPTH)
      throw new ImportError('', `shell script: functions call each other more than ${MAX_CALL_DEPTH} deep`);
    this.positional.push(args);
    try {
      return this.exec(fn);
    } catch (e) {
      if (e instanceof Return) return true;
      throw e;
    } finally {
      this.positional.pop();
    }
  }

  /** read [-r] [-d ''] NAME <<EOF: the here-document into NAME (OpenRLHF's scripts hold their
   * arguments so); the first line unless -d '' reads to the end; from anywhere else, unknown. */
  private read(node: Node & { n: 'simple' }, args: Word[]) {
    const words = args.map((w) => this.expand(w).join(' '));
    let name: string | undefined;
    let whole = false;
    for (let i = 0; i < words.length; i++) {
      if (words[i] === '-d') whole = words[++i] === '';
      else if (['-p', '-t', '-n', '-N', '-u'].includes(words[i])) i++;
      else if (!words[i].startsWith('-')) name = words[i];
    }
    if (!name || !isName(name)) return;
    const doc = node.redirs.find((r) => r.heredoc)?.heredoc;
    if (!doc) {
      this.note(`\`read ${name}\`: its input is not in the file; ${name} read as unset`);
      return;
    }
    const body = doc.expand ? this.expandText(doc.body) : doc.body;
    this.setVar(name, [(whole ? body : body.split('\n')[0]).trim()]);
  }

  /** cat <<EOT > file: the file's text, for a reader of the file later on. */
  private heredoc(node: Node & { n: 'simple' }, argv: string[] | undefined) {
    const doc = node.redirs.find((r) => r.heredoc)?.heredoc;
    const out = node.redirs.find((r) => (r.op === '>' || r.op === '>|') && r.target);
    if (!doc || !out?.target || (argv && argv[0] !== 'cat')) return;
    const body = doc.expand ? this.expandText(doc.body) : doc.body;
    this.run.written.set(this.expand(out.target).join(' '), body);
  }

  private assign(lead: string, w: Word) {
    const m = /^([A-Za-z_]\w*)(\[[^\]]*\])?(\+?)=$/.exec(lead)!;
    // the word without its NAME= prefix
    const rest: Part[] = [];
    let cut = lead.length;
    for (const p of w.parts) {
      if (cut > 0 && p.t === 'lit') {
        const s = p.s.slice(cut);
        cut -= p.s.length;
        if (s) rest.push({ t: 'lit', s });
      } else rest.push(p);
    }
    const value = this.expand({ parts: rest }, false).join('');
    const name = m[1];
    const old = this.vars.get(name);
    if (m[2]) {
      const idx = Number(this.arithValue(m[2].slice(1, -1)) ?? Number.NaN);
      if (!Number.isInteger(idx) || idx < 0 || idx >= MAX_ARRAY_ITEMS) return;
      const arr = [...(old ?? [])];
      while (arr.length < idx) arr.push('');
      arr[idx] = m[3] ? (arr[idx] ?? '') + value : value;
      this.setVar(name, arr);
    } else if (m[3]) this.setVar(name, [(old?.[0] ?? '') + value, ...(old?.slice(1) ?? [])]);
    else this.setVar(name, [value, ...(old?.slice(1) ?? [])]);
  }

  private assignArray(a: Tok & { k: 'array' }) {
    const items = a.items.flatMap((w) => this.expand(w));
    this.setVar(a.name, a.append ? [...(this.vars.get(a.name) ?? []), ...items] : items);
  }

  setVar(name: string, value: string[]) {
    if (value.length > MAX_ARRAY_ITEMS)
      throw new ImportError(name, `shell script: array ${name} holds more than ${MAX_ARRAY_ITEMS} items`);
    let chars = 0;
    for (const v of value) chars += v.length + 1;
    if (chars > MAX_VALUE_CHARS)
      throw new ImportError(name, `shell script: variable ${name} expands to more than ${MAX_VALUE_CHARS} characters`);
    this.vars.set(name, value);
  }

  // ---- tests

  private test(node: Node & { n: 'test' }): Status {
    this.unknown = false;
    if (node.arith) {
      const v = this.arithValue(node.words.join(' '));
      return v === undefined ? undefined : v !== 0;
    }
    this.asEmpty = true;
    const words = node.words.map((w) =>
      w.startsWith('\u0000') ? this.expand(node.raw[Number(w.slice(1))], false).join(' ') : w,
    );
    this.asEmpty = false;
    const quoted = node.words.map(
      (w) => w.startsWith('\u0000') && node.raw[Number(w.slice(1))].parts.some((p) => p.t !== 'lit'),
    );
    if (this.unknown) return undefined;
    try {
      return evalTest(
        words,
        quoted,
        (s) => this.arithValue(s),
        (name) => {
          if (this.vars.has(name)) return true;
          this.unsetNames.add(name);
          return false;
        },
      );
    } catch (e) {
      if (e instanceof Undecided) return undefined;
      throw e;
    }
  }

  // ---- expansion

  /** The fields a word expands to (split: unquoted expansions split on blanks, "${A[@]}" gives one field per item). */
  expand(w: Word, split = true): string[] {
    const fields: string[] = [];
    let cur = '';
    let started = false;
    const add = (values: string[], quoted: boolean) => {
      if (!quoted && split) {
        // an unquoted expansion splits on blanks (POSIX field splitting), and blanks at its ends end the word
        // before or start a new one: x="a "; $x"b" is two words, a and b. A quoted expansion stays one word.
        values
          .join(' ')
          .split(/\s+/)
          .forEach((v, k) => {
            if (k > 0 && started) {
              fields.push(cur);
              cur = '';
              started = false;
            }
            if (v) {
              cur += v;
              started = true;
            }
          });
        return;
      }
      values.forEach((v, k) => {
        if (k > 0) {
          fields.push(cur);
          cur = '';
        }
        cur += v;
        started = true;
      });
    };
    for (const p of w.parts) {
      if (p.t === 'lit' || p.t === 'sq') {
        cur += p.s;
        started = true;
      } else if (p.t === 'dq') {
        started = true;
        for (const q of p.parts) {
          if (q.t === 'lit' || q.t === 'sq') cur += q.s;
          else add(this.part(q, true), true);
        }
      } else add(this.part(p, false), false);
    }
    if (started || cur) fields.push(cur);
    for (const f of fields) this.expanded += f.length + 1;
    if (this.expanded > MAX_EXPANDED_CHARS)
      throw new ImportError('', `shell script: its expansions come to more than ${MAX_EXPANDED_CHARS} characters`);
    if (fields.length > MAX_ARRAY_ITEMS)
      throw new ImportError('', `shell script: a word expands to more than ${MAX_ARRAY_ITEMS} words`);
    return split ? fields : [fields.join(' ')];
  }

  /** A here-document body ($ expansions and \ escapes; quotes are text) or a ${NAME:-word} word. */
  private expandText(body: string, as: 'heredoc' | 'word' = 'heredoc'): string {
    // ${A:-${B:-...}} re-reads its inner text at every level: bounded, so the work stays linear
    if (++this.textDepth > MAX_DEFAULT_NESTING)
      throw new ImportError('', `shell script: \${…:-…} defaults nested more than ${MAX_DEFAULT_NESTING} levels deep`);
    try {
      const parts = new Lexer(body).readQuoted(as);
      return this.expand({ parts: [{ t: 'dq', parts }] }, false).join('');
    } finally {
      this.textDepth--;
    }
  }

  private part(p: Part, quoted: boolean): string[] {
    if (p.t === 'arith') {
      const v = this.arithValue(p.expr);
      if (v === undefined) {
        this.unknown = true;
        return [`$((${p.expr.replace(/\s+/g, '')}))`];
      }
      return [String(v)];
    }
    if (p.t === 'cmd') {
      // `$(expr 16 / $n)` (ms-swift's examples/train): integer arithmetic, as $(( )) evaluates it
      const e = /^expr\s([\w$\s*/%+\\-]+)$/.exec(p.text.trim()); // one split only: linear in the text
      const v = e ? this.arithValue(e[1].replace(/\\\*/g, '*')) : undefined;
      if (v !== undefined) return [String(v)];
      // not run: a value with no blanks, so its words (e.g. nvidia-smi --query-gpu) are not taken for flags
      this.unknown = true;
      return [`$(${p.text.trim().split(/\s+/)[0]}…)`];
    }
    if (p.t === 'param') return this.param(p.body, quoted);
    return [text(p)];
  }

  /** ${...} forms: NAME, NAME[@], NAME[n], #NAME, NAME:-word, :=, :+, :?, #/%, ,, ^^. */
  private param(body: string, quoted: boolean): string[] {
    const raw = `\${${body}}`;
    const m = /^(#?)([A-Za-z_]\w*|[0-9]+|[#@*?$!-])(\[([^\]]*)\])?(.*)$/s.exec(body);
    if (!m) {
      this.unknown = true;
      return [raw];
    }
    const [, count, name, , index, op] = m;
    let value = this.lookup(name);
    if (value && index !== undefined && index !== '@' && index !== '*') {
      const k = this.arithValue(index);
      value = k === undefined ? undefined : value[k] === undefined ? [] : [value[k]];
    } else if (value && index === undefined && name !== '@' && name !== '*') value = value.slice(0, 1);
    if (count) {
      if (!value) {
        this.unknown = true;
        return [raw];
      }
      return [String(index === '@' || index === '*' ? value.length : (value[0] ?? '').length)];
    }
    const joined = value?.join(' ');
    const o = /^(:?)([-=+?])(.*)$/s.exec(op);
    if (o) {
      const unsetOrEmpty = value === undefined || (o[1] === ':' && !joined);
      const word = () => this.expandText(o[3], 'word');
      if (o[2] === '-') return unsetOrEmpty ? [word()] : this.items(value!, index, quoted);
      if (o[2] === '=') {
        if (!unsetOrEmpty) return this.items(value!, index, quoted);
        const v = word();
        if (isName(name)) this.setVar(name, [v]);
        return [v];
      }
      if (o[2] === '+') return unsetOrEmpty ? [''] : [word()];
      if (!unsetOrEmpty) return this.items(value!, index, quoted);
      this.unknown = true;
      return [raw];
    }
    if (value === undefined && this.asEmpty && (isName(name) || /^[1-9]$/.test(name))) {
      this.unsetNames.add(isName(name) ? name : `$${name}`);
      return [''];
    }
    if (value === undefined) {
      this.unknown = true;
      return [name.length === 1 && !isName(name) ? `$${name}` : /^\w+$/.test(body) ? `$${body}` : raw];
    }
    if (!op) return this.items(value, index, quoted);
    const v = value[0] ?? '';
    if (op === ',,') return [v.toLowerCase()];
    if (op === '^^') return [v.toUpperCase()];
    const cut = /^(##?|%%?)([^*?[]*)(\*?)$/.exec(op);
    if (cut && !cut[3]) {
      const pat = this.expandText(cut[2]);
      if (cut[1][0] === '#') return [v.startsWith(pat) ? v.slice(pat.length) : v];
      return [v.endsWith(pat) ? v.slice(0, v.length - pat.length) : v];
    }
    this.unknown = true;
    return [raw];
  }

  private items(value: string[], index: string | undefined, quoted: boolean): string[] {
    return index === '*' && quoted ? [value.join(' ')] : value;
  }

  private lookup(name: string): string[] | undefined {
    const args = this.positional.at(-1);
    if (/^[0-9]+$/.test(name)) {
      const k = Number(name);
      if (k === 0) return ['script'];
      return args ? (args[k - 1] === undefined ? undefined : [args[k - 1]]) : undefined;
    }
    if (name === '@' || name === '*') return args;
    if (name === '#') return args ? [String(args.length)] : undefined;
    if (name.length === 1 && !isName(name)) return undefined;
    return this.vars.get(name);
  }

  /** $(( )) after expansion of the names in it; undefined when a name has no number. */
  arithValue(expr: string): number | undefined {
    let missing = false;
    const names = expr
      .replace(/\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)/g, '$1$2')
      .replace(/\$(\(\(|\()/g, () => {
        missing = true;
        return '(';
      })
      .replace(/\b[A-Za-z_]\w*\b/g, (n) => {
        const v = this.vars.get(n)?.[0];
        if (v === undefined || !/^\s*-?\d+\s*$/.test(v)) missing = true;
        return v?.trim() ?? '0';
      });
    if (missing) {
      this.unknown = true;
      return undefined;
    }
    const v = arithmetic(names);
    if (v === undefined) this.unknown = true;
    return v;
  }
}

/** The NAME=, NAME+= or NAME[i]= a word starts with (unquoted), if any. */
function leadingAssignment(w: Word): string | undefined {
  const first = w.parts[0];
  if (first?.t !== 'lit') return undefined;
  return /^[A-Za-z_]\w*(\[[^\]]*\])?\+?=/.exec(first.s)?.[0];
}

/** A glob pattern of case / [[ == ]] as a regular expression. */
function glob(p: string): RegExp {
  let re = '';
  for (let k = 0; k < p.length; k++) {
    const c = p[k];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = p.indexOf(']', k + 2);
      if (end < 0) re += '\\[';
      else {
        re += `[${p
          .slice(k + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        k = end;
      }
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

class Undecided {}

/** [ ] / [[ ]] / test: string and integer comparisons, -z / -n, !, &&, ||, -a, -o; file tests are undecided. */
function evalTest(
  words: string[],
  quoted: boolean[],
  arith: (s: string) => number | undefined,
  isSet: (name: string) => boolean,
): boolean {
  let k = 0;
  const or = (): boolean => {
    let v = and();
    while (words[k] === '||' || words[k] === '-o') {
      k++;
      const r = and();
      v = v || r;
    }
    return v;
  };
  const and = (): boolean => {
    let v = not();
    while (words[k] === '&&' || words[k] === '-a') {
      k++;
      const r = not();
      v = v && r;
    }
    return v;
  };
  const not = (): boolean => {
    if (words[k] === '!') {
      k++;
      return !not();
    }
    return primary();
  };
  const int = (s: string): number => {
    const v = /^\s*-?\d+\s*$/.test(s) ? Number(s) : arith(s);
    if (v === undefined) throw new Undecided();
    return v;
  };
  const primary = (): boolean => {
    const w = words[k];
    if (w === '(' && !quoted[k]) {
      k++;
      const v = or();
      if (words[k] === ')') k++;
      return v;
    }
    if (w === '-v' && isName(words[k + 1] ?? '')) {
      k += 2;
      return isSet(words[k - 1]);
    }
    if (w === '-z' || w === '-n') {
      const s = words[k + 1] ?? '';
      k += 2;
      return w === '-z' ? s === '' : s !== '';
    }
    if (/^-[a-zA-Z]$/.test(w ?? '') && words.length > k + 1 && !/^(==?|!=|-eq|-ne|-lt|-le|-gt|-ge)$/.test(words[k + 1]))
      throw new Undecided(); // -f, -d, -e, -x, -v ...: the file system and options are not known
    const a = w ?? '';
    const op = words[k + 1];
    const b = words[k + 2] ?? '';
    if (op === '=' || op === '==' || op === '!=' || op === '=~') {
      k += 3;
      const hit = op === '=~' ? safeRegExp(b).test(a) : quoted[k - 1] ? a === b : glob(b).test(a);
      return op === '!=' ? !hit : hit;
    }
    if (op === '<' || op === '>') {
      k += 3;
      return op === '<' ? a < b : a > b;
    }
    const cmp = /^-(eq|ne|lt|le|gt|ge)$/.exec(op ?? '');
    if (cmp) {
      k += 3;
      const x = int(a),
        y = int(b);
      return { eq: x === y, ne: x !== y, lt: x < y, le: x <= y, gt: x > y, ge: x >= y }[
        cmp[1] as 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'
      ];
    }
    k++;
    return a !== '';
  };
  const v = or();
  if (k < words.length) throw new Undecided();
  return v;
}

function safeRegExp(s: string): RegExp {
  try {
    return new RegExp(s);
  } catch {
    throw new Undecided();
  }
}

/** Integer arithmetic: + - * / % ** and comparisons, parentheses; undefined if anything else remains. */
export function arithmetic(expr: string): number | undefined {
  const t = expr.match(/\d+|\*\*|<=|>=|==|!=|&&|\|\||[-+*/%()<>!]/g);
  if (!t || t.join('') !== expr.replace(/\s/g, '')) return undefined;
  let i = 0,
    depth = 0;
  const atom = (): number => {
    const x = t[i++];
    if (x === '(') {
      if (++depth > MAX_NESTING)
        throw new ImportError('', `shell script: $(( )) nested more than ${MAX_NESTING} levels deep`);
      const v = logic();
      if (t[i++] !== ')') throw new Undecided();
      depth--;
      return v;
    }
    if (x === '-') return -atom();
    if (x === '+') return atom();
    if (x === '!') return atom() ? 0 : 1;
    if (x === undefined || !/^\d+$/.test(x)) throw new Undecided();
    return Number(x);
  };
  const power = (): number => {
    const b = atom();
    if (t[i] !== '**') return b;
    i++;
    return b ** power();
  };
  const prod = (): number => {
    let v = power();
    while (t[i] === '*' || t[i] === '/' || t[i] === '%') {
      const op = t[i++],
        r = power();
      if (op !== '*' && r === 0) throw new Undecided();
      v = op === '*' ? v * r : op === '/' ? Math.trunc(v / r) : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = prod();
    while (t[i] === '+' || t[i] === '-') v = t[i++] === '+' ? v + prod() : v - prod();
    return v;
  };
  const compare = (): number => {
    let v = sum();
    while (['<', '>', '<=', '>=', '==', '!='].includes(t[i])) {
      const op = t[i++],
        r = sum();
      v = Number(
        op === '<'
          ? v < r
          : op === '>'
            ? v > r
            : op === '<='
              ? v <= r
              : op === '>='
                ? v >= r
                : op === '=='
                  ? v === r
                  : v !== r,
      );
    }
    return v;
  };
  const logic = (): number => {
    let v = compare();
    while (t[i] === '&&' || t[i] === '||') {
      const op = t[i++],
        r = compare();
      v = Number(op === '&&' ? v && r : v || r);
    }
    return v;
  };
  try {
    const v = logic();
    return i === t.length && Number.isSafeInteger(v) ? v : undefined;
  } catch (e) {
    if (e instanceof Undecided) return undefined;
    throw e;
  }
}

/** Evaluate a launch script (or an argument line): the commands it would run, its variables, what was assumed. */
export function runShell(script: string): ShellRun {
  const tree = new Parser(new Lexer(script).run()).script();
  const sh = new Shell();
  try {
    sh.exec(tree);
  } catch (e) {
    if (!(e instanceof Exit)) throw e;
  }
  for (const [name, value] of sh.vars) sh.run.vars.set(name, value.join(' '));
  return sh.run;
}
