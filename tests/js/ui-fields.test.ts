// The form metadata against the core's field table: every key placed once, labelled, with a unit for numbers.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { leafFields } from '../../frontend/config/doc.js';
import { MATTERS_WHEN } from '../../frontend/config/relevance.js';
import { optionLabel, PLACED, SECTIONS, UI, uiOf, visible } from '../../frontend/fields.js';
import { HINTS } from '../../frontend/field-hints.js';
import type { FieldPath } from '../../wasm/generated.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe('form metadata', () => {
  it('names only keys the core has', () => {
    for (const path of Object.keys(UI)) expect(core.field(path), path).toBeDefined();
    for (const path of PLACED) expect(core.field(path), path).toBeDefined();
    for (const path of Object.keys(MATTERS_WHEN))
      expect(PLACED, `${path}: a dependent key the form places`).toContain(path);
  });
  it('places every key once (model.preset and hardware.gpu have their own pickers)', () => {
    const leaves = leafFields(core.fields)
      .map((f) => f.path)
      .filter((p) => p !== 'model.preset' && p !== 'hardware.gpu');
    expect(new Set(PLACED).size).toBe(PLACED.length);
    expect(leaves.filter((p) => !PLACED.includes(p))).toEqual([]);
  });
  it('labels every key and gives every number a unit', () => {
    for (const path of PLACED) {
      const f = core.field(path)!;
      expect(uiOf(path)?.label, path).toBeTruthy();
      if (f.kind === 'int' || f.kind === 'num') expect(uiOf(path)?.unit, path).toBeTruthy();
      if (f.nullable && (f.kind === 'int' || f.kind === 'num'))
        expect(uiOf(path)?.auto, `${path}: what null means`).toBeTruthy();
    }
  });
  it('names every enum and set value, and gives every field a hint (issue 13)', () => {
    const unnamed: string[] = [];
    const noHint: string[] = [];
    for (const f of leafFields(core.fields)) {
      if (!PLACED.includes(f.path)) continue;
      if (!HINTS[f.path as FieldPath]) noHint.push(f.path);
      if (f.kind === 'enum' || f.kind === 'set' || f.kind === 'list')
        for (const v of f.values) if (!uiOf(f.path)?.options?.[v]) unnamed.push(`${f.path}=${v}`);
      // no label for a value the core does not have
      for (const v of Object.keys(uiOf(f.path)?.options ?? {})) expect(f.values, `${f.path}: ${v}`).toContain(v);
    }
    expect(unnamed, 'values without a label').toEqual([]);
    expect(noHint, 'fields without a hint').toEqual([]);
    // a hint for a key the form does not place is a typo or a leftover
    for (const k of Object.keys(HINTS)) expect(PLACED, k).toContain(k);
    expect(optionLabel('training.recompute', 'per_op')).toBe('Selective, per op (torchtitan)');
    expect(optionLabel('model.layers', 'x')).toBe('x');
  });
  it('hides dependent fields', () => {
    const values: Record<string, unknown> = {
      'parallel.engine': 'fsdp2',
      'parallel.pp_schedule': '1f1b',
      'training.finetune.method': 'full',
      'parallel.tp': 1,
    };
    const get = (p: string) => (values[p] ?? null) as never;
    expect(visible('parallel.zero_stage', get)).toBe(false);
    expect(visible('parallel.fsdp_strategy', get)).toBe(true);
    expect(visible('parallel.vpp', get)).toBe(false);
    expect(visible('training.finetune.lora_rank', get)).toBe(false);
    expect(visible('parallel.sequence_parallel', get)).toBe(false);
    values['parallel.engine'] = 'deepspeed';
    values['parallel.pp_schedule'] = 'interleaved';
    values['training.finetune.method'] = 'qlora';
    values['parallel.tp'] = 2;
    expect(visible('parallel.zero_stage', get)).toBe(true);
    expect(visible('parallel.fsdp_strategy', get)).toBe(false);
    expect(visible('parallel.vpp', get)).toBe(true);
    expect(visible('training.finetune.lora_rank', get)).toBe(true);
    expect(visible('training.finetune.quant', get)).toBe(true);
    expect(visible('parallel.sequence_parallel', get)).toBe(true);
    // context parallelism: its all-to-all part, and the sharding over DP x CP where something shards
    expect(visible('parallel.cp_all_to_all', get)).toBe(false);
    values['parallel.cp'] = 4;
    expect(visible('parallel.cp_all_to_all', get)).toBe(true);
    expect(visible('parallel.shard_with_cp', get)).toBe(true);
    values['parallel.engine'] = 'ddp';
    expect(visible('parallel.shard_with_cp', get)).toBe(false);
  });
  it('has the four panels in order', () => {
    expect(SECTIONS.map((s) => s.title)).toEqual(['Model', 'Training', 'Parallelism', 'Hardware']);
  });
});

describe('dependent keys', () => {
  it('a reference swapped into the actor has no offload of its own to set; one not swapped shows it', () => {
    const get = (swapped: boolean) => (path: string) =>
      ({ 'rl.algorithm': 'grpo', 'rl.reference.enabled': true, 'rl.reference.swapped': swapped })[path] ?? null;
    expect(MATTERS_WHEN['rl.reference.param_offload'](get(false))).toBe(true);
    expect(MATTERS_WHEN['rl.reference.param_offload'](get(true))).toBe(false);
  });
});
