// wasm/profile-sources.json: the training-stack profile rows' source texts, which the wasm build leaves out of
// the binary (the page loads them when it shows them). It must be what the generator writes now, and a row the
// core reports must name the text of that row of core/profiles.def.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { expectFresh } from './generated-files.js';
import { profileSources, withSources } from '../../frontend/config/profile.js';

const root = repoRoot();
const FILE = 'wasm/profile-sources.json';

describe(FILE, () => {
  it('matches what scripts/gen-profile-sources.mjs writes from core/profiles.def', () => {
    expectFresh('scripts/gen-profile-sources.mjs', FILE);
  });

  it("has one text a row, and each value the core reports comes with its own row's text", async () => {
    const def = readFileSync(join(root, 'core/profiles.def'), 'utf8');
    const sources = await profileSources();
    expect(sources.length).toBe((def.match(/^\{LLMEM_FW_/gm) ?? []).length);
    const core = await loadCore();
    const at = (config: object, path: string) => {
      const p = core.profile(config);
      if (!p.ok) throw new Error(p.error.message);
      return p.implied.find((v) => v.path === path);
    };
    const fabric = at(
      { runtime: { framework: 'litgpt' }, parallel: { engine: 'fsdp1', gpus: 8 } },
      'training.autocast',
    );
    expect(fabric?.value).toBe(true);
    const [line] = await withSources(fabric ? [fabric] : []);
    expect(line?.source).toMatch(/^Lightning Fabric FSDPPrecision/);
    const trainer = at(
      { runtime: { framework: 'hf_trainer' }, parallel: { engine: 'fsdp1', gpus: 8 } },
      'parallel.accumulate_no_sync',
    );
    expect(sources[trainer?.row ?? -1]).toMatch(
      /^HF Trainer runs every micro-batch but the last under accelerator.no_sync/,
    );
    // set by hand: no row
    expect(
      at({ runtime: { framework: 'litgpt' }, training: { autocast: false } }, 'training.autocast'),
    ).toBeUndefined();
  });
});
