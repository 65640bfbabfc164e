// The "why this number" terms' labels and formulas, by the core's term id. The wasm build leaves their texts out
// (CMakeLists.txt LLMEM_TERM_TEXT_IN_JS): wasm/term-texts.ts (generated from core/llmem.h) brings them, imported by
// the Why panel's chunk and by the Node loader (the CLI, the tests), not by the page's first load.
let labels: readonly string[] = [];
let formulas: readonly string[] = [];

export function setTermTexts(l: readonly string[], f: readonly string[]): void {
  labels = l;
  formulas = f;
}

/** A term's label ('' until wasm/term-texts.ts has loaded). */
export const termLabel = (id: number): string => labels[id] ?? '';
/** A term's formula template, its placeholders unfilled ('' until wasm/term-texts.ts has loaded). */
export const termFormula = (id: number): string => formulas[id] ?? '';
