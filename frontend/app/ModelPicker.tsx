// The model preset (catalog), grouped by family; "Custom" keeps the current values editable on their own.
import { findModel, MODELS, presetRef } from '../config/catalog.js';
import { formatCount } from '../format.js';
import { useApp } from './context.js';

const FAMILIES = [...new Set(MODELS.map((m) => m.family))];

export function ModelPicker() {
  const s = useApp();
  const preset = s.get('model.preset') as string | null;
  const entry = preset === null ? undefined : findModel(preset);
  const r = s.result.value;
  // a model key that differs from the preset (normalize keeps only those)
  const modified = !!entry && Object.keys(s.doc.value).some((k) => k.startsWith('model.') && k !== 'model.preset');
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
                {m.name}
                {entry?.id === m.id && presetRef(m) !== preset ? ` (revision ${entry.revision ?? '1'})` : ''}
                {entry?.id === m.id && modified ? ' (modified)' : ''}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
      <small class="hint">
        {entry ? `${preset} · ` : 'your own architecture · '}
        {r ? `${formatCount(r.params.total)} parameters` : ''}
        {r && r.params.active < r.params.total ? ` (${formatCount(r.params.active)} active)` : ''}
      </small>
    </div>
  );
}
