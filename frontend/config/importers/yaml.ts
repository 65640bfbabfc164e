// YAML for the training configs (accelerate, LLaMA-Factory, axolotl): the
// `yaml` package (YAML 1.2, core schema: yes / no / on / off stay strings;
// anchors, aliases and `<<` merge keys as PyYAML reads them), with every error
// as a YamlError that names its line. What the importers cannot use is refused
// as unsupported: several documents, tags other than the core schema's, and
// collections as mapping keys.
import { isCollection, LineCounter, parseDocument, visit, type YAMLError } from 'yaml';
import type { Json } from '../../../wasm/llmem.js';

export class YamlError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
    readonly unsupported = false,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

// The library's codes for what a config never needs (rather than what is malformed).
const UNSUPPORTED_CODES = new Set(['MULTIPLE_DOCS', 'TAG_RESOLVE_FAILED']);

/** The library's message without its "at line L, column C:" suffix and source excerpt. */
const reasonOf = (e: YAMLError) => e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');

/** Parse one YAML document; throws YamlError (with the line) for malformed or unsupported YAML. */
export function parseYaml(text: string): Json {
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lines,
    schema: 'core',
    merge: true,
    uniqueKeys: false, // PyYAML keeps the last value of a repeated key
    prettyErrors: false,
  });
  // an error at the end of the text (an unclosed "[") names the last line that has content
  const end = text.trimEnd().length;
  const lineAt = (offset: number) => lines.linePos(Math.min(offset, Math.max(end - 1, 0))).line;
  const problem = doc.errors[0] ?? doc.warnings.find((w) => UNSUPPORTED_CODES.has(w.code));
  if (problem) {
    const reason =
      problem.code === 'MULTIPLE_DOCS'
        ? 'more than one document is not supported'
        : problem.code === 'RESOURCE_EXHAUSTION'
          ? `nested too deeply or expands too far (${reasonOf(problem)})`
          : reasonOf(problem);
    throw new YamlError(lineAt(problem.pos[0]), reason, UNSUPPORTED_CODES.has(problem.code));
  }
  visit(doc, {
    Alias(_, alias) {
      if (!alias.resolve(doc))
        throw new YamlError(
          lineAt(alias.range?.[0] ?? 0),
          `alias *${alias.source} has no anchor &${alias.source} above it`,
        );
    },
    Pair(_, pair) {
      if (isCollection(pair.key))
        throw new YamlError(lineAt(pair.key.range?.[0] ?? 0), 'collections as mapping keys are not supported', true);
    },
  });
  try {
    return doc.toJS() as Json;
  } catch (e) {
    if (e instanceof RangeError) throw e; // nested too deeply: the importers say so
    // aliases expanding past the library's maxAliasCount (a "billion laughs")
    throw new YamlError(1, `nested too deeply or expands too far (${(e as Error).message})`);
  }
}
