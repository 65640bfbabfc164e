// One input, built from the core's field table: number (with unit), choice,
// switch, or a set of checkboxes; its label, and its error when the core
// (or the number parser) names this field.
import { batch, useComputed } from '@preact/signals';
import type { FieldInfo, Json } from '../../wasm/llmem.js';
import { compactList, parseList } from '../config/encode.js';
import { hintOf, labelOf, optionLabel, uiOf } from '../fields.js';
import { formatNumber, parseNumber } from '../format.js';
import { fieldId, useApp } from './context.js';
import { dropWaiting, perFrame } from './per-frame.js';

const inputText = (v: Json) =>
  v === null || v === undefined ? '' : typeof v === 'number' ? formatNumber(v) : String(v);

function stepped(f: FieldInfo, v: number, up: boolean, pow2: boolean): number {
  const next = pow2 ? (up ? v * 2 : Math.floor(v / 2)) : up ? v + 1 : v - 1;
  return Math.min(f.max, Math.max(f.min, next));
}

export function FieldInput({ path }: { path: string }) {
  const s = useApp();
  // one computed per input: an edit re-renders only the inputs whose value, text, error or mark changed
  const value = useComputed(() => s.values.value[path]).value;
  const draft = useComputed(() => s.drafts.value[path]).value;
  const message = useComputed(() => {
    const err = s.error.value;
    return err && err.path === path
      ? err.message.startsWith(`${path}: `)
        ? err.message.slice(path.length + 2)
        : err.message
      : null;
  }).value;
  const changed = useComputed(() => path in s.doc.value).value;
  const f = s.core.field(path);
  if (!f) return null;
  const ui = uiOf(path) ?? { label: labelOf(path) };
  const id = fieldId(path);
  // the hint gives way to the error (foot below): reference only what is shown
  const hint = hintOf(path);
  const describedBy = message ? `${id}-err` : hint ? `${id}-hint` : undefined;
  const cls = `field kind-${f.kind}${message ? ' has-error' : ''}${changed ? ' changed' : ''}`;
  const tip = `${path}${changed ? ' (changed)' : ''}`;

  const foot = (
    <>
      {hint && !message && (
        <small class="hint" id={`${id}-hint`}>
          {hint}
        </small>
      )}
      {message && (
        <small class="field-error" id={`${id}-err`} role="alert">
          {message}
        </small>
      )}
    </>
  );

  if (f.kind === 'bool' && f.nullable) {
    // three states: automatic, on, off
    return (
      <div class={cls}>
        <label for={id} title={tip}>
          {ui.label}
        </label>
        <select
          id={id}
          aria-invalid={!!message}
          aria-describedby={describedBy}
          onChange={(e) => {
            const v = (e.currentTarget as HTMLSelectElement).value;
            s.setField(path, v === '' ? null : v === 'true');
          }}
        >
          <option value="" selected={value === null}>
            {ui.auto ?? 'auto'}
          </option>
          <option value="true" selected={value === true}>
            on
          </option>
          <option value="false" selected={value === false}>
            off
          </option>
        </select>
        {foot}
      </div>
    );
  }

  if (f.kind === 'bool') {
    return (
      <div class={cls}>
        <label class="check" title={tip}>
          <input
            id={id}
            type="checkbox"
            checked={value === true}
            aria-invalid={!!message}
            aria-describedby={describedBy}
            onChange={(e) => s.setField(path, (e.currentTarget as HTMLInputElement).checked)}
          />
          <span>{ui.label}</span>
        </label>
        {foot}
      </div>
    );
  }

  if (f.kind === 'enum') {
    // a long option name gets the full row, so the closed select shows it whole
    const wide = f.values.some((v) => optionLabel(path, v).length > 18);
    return (
      <div class={wide ? `${cls} wide` : cls}>
        <label for={id} title={tip}>
          {ui.label}
        </label>
        <select
          id={id}
          aria-invalid={!!message}
          aria-describedby={describedBy}
          onChange={(e) => {
            const v = (e.currentTarget as HTMLSelectElement).value;
            s.setField(path, v === '' ? null : v);
          }}
        >
          {f.nullable && (
            <option value="" selected={value === null}>
              {ui.auto ?? 'auto'}
            </option>
          )}
          {f.values.map((v) => (
            <option key={v} value={v} selected={value === v}>
              {optionLabel(path, v)}
            </option>
          ))}
        </select>
        {foot}
      </div>
    );
  }

  if (f.kind === 'set') {
    const chosen = Array.isArray(value) ? (value as string[]) : [];
    return (
      <fieldset class={`${cls} wide`} aria-describedby={describedBy}>
        <legend title={tip}>{ui.label}</legend>
        <div class="chips">
          {f.values.map((v) => (
            <label key={v} class="chip">
              <input
                id={v === f.values[0] ? id : undefined}
                type="checkbox"
                checked={chosen.includes(v)}
                onChange={(e) => {
                  const on = (e.currentTarget as HTMLInputElement).checked;
                  s.setField(
                    path,
                    f.values.filter((x) => (x === v ? on : chosen.includes(x))),
                  );
                }}
              />
              <span>{optionLabel(path, v)}</span>
            </label>
          ))}
        </div>
        {foot}
      </fieldset>
    );
  }

  if (f.kind === 'list') {
    // a per-layer list in its compact form ("3*linear,full"); the core names a bad entry inline
    const shown = Array.isArray(value) ? compactList(value as string[]) : value === null ? '' : String(value);
    return (
      <div class={`${cls} wide`}>
        <label for={id} title={tip}>
          {ui.label}
        </label>
        <input
          id={id}
          type="text"
          autoComplete="off"
          spellcheck={false}
          value={draft ? draft.text : shown}
          placeholder={ui.auto ?? 'auto'}
          aria-invalid={!!message}
          aria-describedby={describedBy}
          onInput={(e) => {
            const t = (e.currentTarget as HTMLInputElement).value;
            const names = t.trim() === '' ? null : parseList(f, t);
            // a readable list is stored as names; text the parser refuses goes to the core, which names it
            s.setField(path, names === null || Array.isArray(names) ? names : t);
            s.setDraft(path, t, null);
          }}
          onBlur={() => {
            if (draft && !draft.message) s.clearDraft(path);
          }}
        />
        {foot}
      </div>
    );
  }

  if (f.kind === 'text') {
    return (
      <div class={cls}>
        <label for={id} title={tip}>
          {ui.label}
        </label>
        <input
          id={id}
          type="text"
          value={value === null ? '' : String(value)}
          placeholder={ui.auto ?? 'optional'}
          onInput={(e) => {
            const t = (e.currentTarget as HTMLInputElement).value;
            s.setField(path, t === '' ? null : t);
          }}
        />
        {foot}
      </div>
    );
  }

  // int | num
  const integer = f.kind === 'int';
  // a number is committed once per frame (perFrame); the text typed is kept as the field's draft ("1.50" while focused)
  const onText = (text: string) => {
    const n = text.trim() === '' && f.nullable ? null : parseNumber(text, integer);
    if (typeof n === 'string') {
      dropWaiting(path); // an older valid value waiting for the frame would replace this text
      return s.setDraft(path, text, n);
    }
    const commit = () =>
      batch(() => {
        s.setField(path, n);
        s.setDraft(path, text, null);
      });
    // waiting for the next frame: the input keeps the text meanwhile
    if (!perFrame(path, commit)) s.setDraft(path, text, null);
  };
  return (
    <div class={cls}>
      <label for={id} title={tip}>
        {ui.label}
        {ui.unit && <span class="sr-only"> ({ui.unit})</span>}
      </label>
      <div class="numbox">
        <input
          id={id}
          type="text"
          inputMode={integer ? 'numeric' : 'decimal'}
          autoComplete="off"
          spellcheck={false}
          value={draft ? draft.text : inputText(value)}
          placeholder={f.nullable ? (ui.auto ?? 'auto') : ''}
          aria-invalid={!!message}
          aria-describedby={describedBy}
          onInput={(e) => onText((e.currentTarget as HTMLInputElement).value)}
          onBlur={() => {
            if (draft && !draft.message) s.clearDraft(path);
          }}
          onKeyDown={(e) => {
            if ((e.key !== 'ArrowUp' && e.key !== 'ArrowDown') || !integer || typeof value !== 'number') return;
            e.preventDefault();
            s.setField(path, stepped(f, value, e.key === 'ArrowUp', !!ui.pow2));
          }}
        />
        {ui.unit && (
          <span class="unit" aria-hidden="true">
            {ui.unit}
          </span>
        )}
      </div>
      {foot}
    </div>
  );
}
