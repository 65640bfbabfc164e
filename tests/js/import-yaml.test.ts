// The importers' YAML reader (frontend/config/importers/yaml.ts, on the `yaml` package):
// the constructs training configs use, the YAML 1.2 core-schema typing, and an error
// with its line number for malformed YAML and for what the importers refuse.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';
import { parseYaml, YamlError } from '../../frontend/config/importers/yaml.js';
import { importConfig } from '../../frontend/config/importers/index.js';

const y = (lines: string[] | string) => parseYaml(Array.isArray(lines) ? `${lines.join('\n')}\n` : lines);
/** The YamlError `text` raises. */
const err = (lines: string[] | string): YamlError => {
  try {
    y(lines);
  } catch (e) {
    if (e instanceof YamlError) return e;
    throw e;
  }
  throw new Error('expected a YamlError');
};

describe('block structure', () => {
  it('mappings, nested by indentation', () => {
    expect(y(['a: 1', 'b:', '  c: x', '  d:', '    e: true', 'f: last'])).toEqual({
      a: 1,
      b: { c: 'x', d: { e: true } },
      f: 'last',
    });
  });
  it("sequences, indented or at the key's indentation, nested", () => {
    expect(y(['l:', '  - 1', '  - two', 'm:', '- a', '- b', 'n: 0'])).toEqual({ l: [1, 'two'], m: ['a', 'b'], n: 0 });
    expect(y(['- - 1', '  - 2', '- - 3'])).toEqual([[1, 2], [3]]);
    expect(y(['-', '  - x', '-'])).toEqual([['x'], null]);
  });
  it('lists of mappings (axolotl datasets)', () => {
    expect(
      y([
        'datasets:',
        '  - path: tatsu-lab/alpaca',
        '    type: alpaca',
        '  - path: b',
        '    split:',
        '      - train',
        'x: 1',
      ]),
    ).toEqual({
      datasets: [
        { path: 'tatsu-lab/alpaca', type: 'alpaca' },
        { path: 'b', split: ['train'] },
      ],
      x: 1,
    });
  });
  it('empty values are null; an empty document is null', () => {
    expect(y(['a:', 'b: ~', 'c: null', 'd: # nothing'])).toEqual({ a: null, b: null, c: null, d: null });
    expect(y('')).toBeNull();
    expect(y(['# only a comment', '', '---'])).toBeNull();
  });
  it('comments, blank lines, --- at the start, ... at the end, CRLF', () => {
    expect(
      y(['# head', '---', 'a: 1 # trailing', '', '   # indented comment', 'b: x#y', '...', '# after the end']),
    ).toEqual({ a: 1, b: 'x#y' });
    expect(parseYaml('a: 1\r\nb:\r\n  - 2\r\n')).toEqual({ a: 1, b: [2] });
  });
  it('plain scalars with colons, hashes and spaces; multi-line plain scalars fold', () => {
    expect(y(['url: http://host:8080/x', 'path: C:\\data', 'key with spaces: v a l', 'tag: a#b'])).toEqual({
      url: 'http://host:8080/x',
      path: 'C:\\data',
      'key with spaces': 'v a l',
      tag: 'a#b',
    });
    expect(y(['d: this is', '  one line', '', '  and a paragraph', 'e: 2'])).toEqual({
      d: 'this is one line\nand a paragraph',
      e: 2,
    });
  });
  it('keys stay strings', () => {
    expect(y(['1: a', 'true: b', 'null: c'])).toEqual({ '1': 'a', true: 'b', '': 'c' });
  });
});

describe('scalars: YAML 1.2 core schema', () => {
  it('booleans and nulls (yes/no/on/off stay strings)', () => {
    expect(y(['- true', '- True', '- FALSE', '- ~', '- Null', '- yes', '- no', '- on', '- off'])).toEqual([
      true,
      true,
      false,
      null,
      null,
      'yes',
      'no',
      'on',
      'off',
    ]);
  });
  it('ints: decimal, signed, octal 0o, hex 0x', () => {
    expect(y(['- 42', '- -7', '- +3', '- 0o17', '- 0x1F', '- 0123', '- 1_000'])).toEqual([
      42,
      -7,
      3,
      15,
      31,
      123,
      '1_000',
    ]);
  });
  it('floats: fractions, exponents, .inf, .nan', () => {
    const v = y([
      '- 1.5',
      '- .5',
      '- 1.',
      '- 1.0e-4',
      '- 2e9',
      '- -3E+2',
      '- .inf',
      '- -.Inf',
      '- .nan',
      '- 1.2.3',
    ]) as number[];
    expect(v.slice(0, 8)).toEqual([1.5, 0.5, 1, 1e-4, 2e9, -300, Infinity, -Infinity]);
    expect(Number.isNaN(v[8])).toBe(true);
    expect(v[9]).toBe('1.2.3');
  });
  it("quoted scalars are strings: single ('' escape) and double (backslash escapes)", () => {
    expect(
      y([
        `- 'no'`,
        `- '1'`,
        `- 'it''s'`,
        '- "true"',
        '- "tab\\there\\n\\u00e9\\x41\\\\ \\""',
        `- ''`,
        '- "a # not a comment"',
      ]),
    ).toEqual(['no', '1', "it's", 'true', 'tab\there\n\u00e9A\\ "', '', 'a # not a comment']);
  });
  it('quoted keys and quoted multi-line scalars (folded)', () => {
    expect(y(['"a: b": 1', "'c': 2", 'd: "one', '  two', '', '  three"', "e: 'x", "  y'"])).toEqual({
      'a: b': 1,
      c: 2,
      d: 'one two\nthree',
      e: 'x y',
    });
    expect(y(['f: "join\\', '  ed"'])).toEqual({ f: 'joined' });
  });
});

describe('flow collections', () => {
  it('sequences and mappings, nested, typed, with trailing commas', () => {
    expect(
      y(['a: [1, two, "3", 4.5, true, null]', 'b: {x: 1, y: [a, b], "z w": {}}', 'c: []', 'd: {k}', 'e: [a, b,]']),
    ).toEqual({
      a: [1, 'two', '3', 4.5, true, null],
      b: { x: 1, y: ['a', 'b'], 'z w': {} },
      c: [],
      d: { k: null },
      e: ['a', 'b'],
    });
  });
  it('over several lines, with comments; as list items; urls inside', () => {
    expect(y(['a: [', '  1, # one', '  2', ']'])).toEqual({ a: [1, 2] });
    expect(y(['- [1, 2]', '- {k: http://x:1/y}'])).toEqual([[1, 2], { k: 'http://x:1/y' }]);
    expect(y(['m: {a: 1,', '    b: 2}'])).toEqual({ m: { a: 1, b: 2 } });
  });
});

describe('block scalars | and > (kept as strings)', () => {
  it('literal keeps line breaks; clip, strip (-) and keep (+) chomping', () => {
    expect(y(['a: |', '  line 1', '    indented', '  line 3', '', 'b: 1'])).toEqual({
      a: 'line 1\n  indented\nline 3\n',
      b: 1,
    });
    expect(y(['a: |-', '  x', '  y', '', 'b: |+', '  z', '', '', 'c: 2'])).toEqual({ a: 'x\ny', b: 'z\n\n\n', c: 2 });
  });
  it('folded joins lines with spaces, keeps paragraphs and more-indented lines', () => {
    expect(y(['a: >', '  one', '  two', '', '  three', '    code', '  four', 'b: >-', '  x', '  y'])).toEqual({
      a: 'one two\nthree\n  code\nfour\n',
      b: 'x y',
    });
  });
  it('explicit indentation, comments in the content, list items, empty scalars', () => {
    expect(y(['a: |2', '    two more', '  base', '# a comment line after the scalar', 'b: 1'])).toEqual({
      a: '  two more\nbase\n',
      b: 1,
    });
    expect(y(['a: | # header comment', '  # not a comment', 'b: 1'])).toEqual({ a: '# not a comment\n', b: 1 });
    expect(y(['- |', '  item', '- >', '  folded', '  item'])).toEqual(['item\n', 'folded item\n']);
    expect(y(['a: |', 'b: 1'])).toEqual({ a: '', b: 1 });
  });
});

describe('anchors, aliases, merge keys, standard tags (as PyYAML reads them)', () => {
  it('an alias repeats its anchor; << merges a mapping under the keys written beside it', () => {
    expect(y(['base: &b', '  a: 1', '  c: 2', 'copy: *b', 'x:', '  <<: *b', '  c: 3', 'l: [&one 1, *one]'])).toEqual({
      base: { a: 1, c: 2 },
      copy: { a: 1, c: 2 },
      x: { a: 1, c: 3 },
      l: [1, 1],
    });
  });
  it('core-schema tags, explicit keys, a %YAML directive', () => {
    expect(y(['a: !!str 1', 'b: [1, !!int "2"]', '? c', ': d'])).toEqual({ a: '1', b: [1, 2], c: 'd' });
    expect(y(['%YAML 1.2', '---', 'a: 1'])).toEqual({ a: 1 });
  });
});

describe('errors name the line', () => {
  const cases: [string, string[] | string, RegExp, boolean][] = [
    ['alias without an anchor', ['a: 1', 'b: *base'], /^line 2: alias \*base has no anchor &base above it/, false],
    [
      'aliases expanding without end',
      [
        'a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]',
        'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
        'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
        'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      ],
      /^line 1: nested too deeply or expands too far/,
      false,
    ],
    ['a Python tag', ['a: !!python/tuple [1, 2]'], /^line 1: Unresolved tag: tag:yaml.org,2002:python\/tuple/, true],
    ['a local tag', ['a: 1', 'b: !foo 2'], /^line 2: Unresolved tag: !foo/, true],
    [
      'a collection as a key',
      ['a: 1', '? [x, y]', ': 2'],
      /^line 2: collections as mapping keys are not supported/,
      true,
    ],
    ['two documents', ['a: 1', '---', 'b: 2'], /^line 2: more than one document/, true],
    ['content after ...', ['a: 1', '...', 'b: 2'], /^line 3: more than one document/, true],
    ['unclosed flow sequence', ['a: 1', 'b: [1, 2'], /^line 2: Flow sequence .* end with a \]/, false],
    ['unclosed flow mapping', ['b: {a: 1'], /^line 1: Flow map .* end with a \}/, false],
    ['unclosed quote', ['a: "open', 'b: 1'], /^line 2: Missing closing "quote/, false],
    ['text after a quoted value', ["a: 'x' y"], /^line 1: Unexpected scalar at node end/, false],
    ['text after a flow collection', ['a: [1] 2'], /^line 1: Unexpected scalar at node end/, false],
    ['missing flow value', ['a: [1,,2]'], /^line 1: Unexpected , in flow sequence/, false],
    [
      'bad indentation',
      ['a:', '    b: 1', '  c: 2'],
      /^line 3: All mapping items must start at the same column/,
      false,
    ],
    [
      'more-indented key under a value',
      ['a: 1', '  b: 2'],
      /^line 1: Nested mappings are not allowed in compact mappings/,
      false,
    ],
    ['mapping on the key line', ['a: b: c'], /^line 1: Nested mappings are not allowed in compact mappings/, false],
    ['list on the key line', ['a: - 1'], /^line 1: Unexpected block-seq-ind on same line with key/, false],
    [
      'not key: value in a mapping',
      ['a: 1', 'just text'],
      /^line 2: Implicit map keys need to be followed by map values/,
      false,
    ],
    ['list item after a mapping', ['a: 1', '- b'], /^line 2: Implicit keys need to be on a single line/, false],
    ['tab indentation', 'a:\n\tb: 1\n', /^line 2: Tabs are not allowed as indentation/, false],
    ['bad escape', ['a: "\\q"'], /^line 1: Invalid escape sequence \\q/, false],
    ['bad block scalar header', ['a: |x', '  text'], /^line 1: Block scalar header includes extra characters/, false],
    ['reserved indicator', ['a: @x'], /^line 1: Plain value cannot start with reserved character @/, false],
  ];
  for (const [name, text, re, unsupported] of cases)
    it(name, () => {
      const e = err(text);
      expect(e.message).toMatch(re);
      expect(e.unsupported).toBe(unsupported);
      expect(e.line).toBe(Number(/^line (\d+)/.exec(e.message)![1]));
    });
});

describe('duplicate keys', () => {
  // PyYAML (which accelerate, axolotl and LLaMA-Factory load with) keeps the last value of a repeated key:
  // huggingface/accelerate tests/test_configs/0_30_0_sagemaker.yaml repeats debug
  it('the last value wins, as in PyYAML', () => {
    expect(y('a: 1\nb: 2\na: 3\n')).toEqual({ a: 3, b: 2 });
    expect(y('m: {a: 1, a: 2}\n')).toEqual({ m: { a: 2 } });
  });
});

describe('through the importers', () => {
  const fixture = (p: string) => readFileSync(join(repoRoot(), 'tests/fixtures/import', p), 'utf8');
  it('reads the published example files the importers are tested on', () => {
    const ax = y(fixture('axolotl/llama-3-qlora.yml')) as Record<string, unknown>;
    expect(ax.datasets).toEqual([{ path: 'tatsu-lab/alpaca', type: 'alpaca' }]);
    expect(ax).toMatchObject({
      learning_rate: 0.0002,
      lora_dropout: 0.05,
      bf16: 'auto',
      fp16: null,
      special_tokens: { pad_token: '<|end_of_text|>' },
    });
    const lf = y(fixture('llamafactory/llama3_lora_sft.yaml')) as Record<string, unknown>;
    expect(lf).toMatchObject({
      learning_rate: 1e-4,
      num_train_epochs: 3,
      ddp_timeout: 180000000,
      dataset: 'identity,alpaca_en_demo',
    });
    const acc = y(fixture('accelerate/fsdp-bert.yaml')) as Record<string, unknown>;
    expect(acc).toMatchObject({
      downcast_bf16: 'no',
      tpu_env: [],
      fsdp_config: { fsdp_transformer_layer_cls_to_wrap: 'BertLayer' },
    });
  });
  it('invalid YAML and unsupported YAML are importer errors with the line', () => {
    const bad = importConfig('axolotl', 'base_model: x\nsequence_len: [4096\n');
    expect('error' in bad && bad.error.message).toBe(
      'axolotl YAML: not valid YAML (line 2: Flow sequence in block collection must be sufficiently indented and end with a ])',
    );
    const tagged = importConfig('llamafactory', 'defaults: !!python/object:argparse.Namespace\n  cutoff_len: 1024\n');
    expect('error' in tagged && tagged.error.message).toMatch(
      /^LLaMA-Factory YAML: unsupported YAML \(line 1: Unresolved tag: tag:yaml.org,2002:python\/object:argparse.Namespace\)/,
    );
  });
});
