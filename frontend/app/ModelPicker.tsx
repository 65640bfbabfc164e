// The model preset (catalog), grouped by family; "Custom" keeps the current values editable on their own.
import { useComputed } from '@preact/signals';
import { findModel, MODELS, presetRef } from '../config/catalog.js';
import { formatCount } from '../format.js';
import { useApp } from './context.js';

const FAMILIES = [...new Set(MODELS.map((m) => m.family))];

/** The parameter counts under the select: the only part that changes with each estimate. */
function ParamsHint({ preset }: { preset: string | null }) {
  const r = useApp().result.value;
  return (
    <small class="hint">
      {preset !== null ? `${preset} · ` : 'your own architecture · '}
      {r ? `${formatCount(r.params.total)} parameters` : null}
      {r && r.params.active < r.params.total ? ` (${formatCount(r.params.active)} active)` : null}
    </small>
  );
}

export function ModelPicker() {
  const s = useApp();
  // read through computeds: an edit of another key re-renders neither the select nor its hundred options
  const preset = useComputed(() => s.get('model.preset') as string | null).value;
  const entry = preset === null ? undefined : findModel(preset);
  // a model key that differs from the preset (normalize keeps only those)
  const modified = useComputed(() =>
    Object.keys(s.doc.value).some((k) => k.startsWith('model.') && k !== 'model.preset'),
  ).value;
  /** One text per option (Preact rewrites empty text nodes on each render, and each rewrite updates the select). */
  const name = (m: (typeof MODELS)[number]) =>
    entry?.id !== m.id
      ? m.name
      : `${m.name}${presetRef(m) !== preset ? ` (revision ${entry.revision ?? '1'})` : ''}${modified ? ' (modified)' : ''}`;
  return (
    <div class="field wide picker">
      <label for="f-model-preset">Model preset</label>
      <select
        id="f-model-preset"
        onChange={(e) => {
          const v = (e.currentTarget as HTMLSelectElement).value;
          s.setPreset(v === '' ? null : v);
        }}
      >
        <option value="" selected={preset === null}>
          Custom model
        </option>
        {FAMILIES.map((fam) => (
          <optgroup key={fam} label={fam}>
            {MODELS.filter((m) => m.family === fam).map((m) => (
              <option key={m.id} value={presetRef(m)} selected={m.id === entry?.id}>
                {name(m)}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
      <ParamsHint preset={entry ? preset : null} />
    </div>
  );
}
