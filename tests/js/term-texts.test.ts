// wasm/term-texts.ts: the "why this number" terms' labels and formulas, which the wasm build leaves out of the
// binary (the page's Why panel and the CLI import them). It must be what the generator writes now, every term the
// core reports must have its texts, and a result carries the id and inputs the panel fills a formula from.
import { describe, expect, it } from 'vitest';
import { loadCore } from '../../wasm/node.js';
import { TERM_FORMULAS, TERM_LABELS } from '../../wasm/term-texts.js';
import { termFormula, termLabel } from '../../wasm/term-registry.js';
import { fillFormula } from '../../frontend/config/numbers.js';
import { expectFresh } from './generated-files.js';

describe('wasm/term-texts.ts', () => {
  it('matches what scripts/gen-term-texts.mjs writes from core/llmem.h', () => {
    expectFresh('scripts/gen-term-texts.mjs', 'wasm/term-texts.ts');
  });

  it("labels and formulas for every term the core reports, the same through the Node loader's registry", async () => {
    expect(TERM_LABELS.length).toBe(TERM_FORMULAS.length);
    expect(TERM_LABELS.every((l) => l.length > 0) && TERM_FORMULAS.every((f) => f.length > 0)).toBe(true);
    const core = await loadCore();
    const r = core.estimate({ model: { preset: 'llama-3.1-8b' }, parallel: { gpus: 8, engine: 'fsdp2' } });
    if (!r.ok) throw new Error(r.error.message);
    expect(r.terms.length).toBeGreaterThan(3);
    for (const t of r.terms) {
      expect(t.label).toBe(TERM_LABELS[t.id]);
      expect(termLabel(t.id)).toBe(t.label);
      // what the Why panel rebuilds from a result read without the texts (in the Worker, before they load)
      expect(fillFormula(termFormula(t.id), t.inputs)).toBe(t.formula);
    }
  });
});
