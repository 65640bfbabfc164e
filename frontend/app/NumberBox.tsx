// A labelled number input with its unit, for the planner's own settings
// (safety margin, sweep range, GPU count): keeps what is typed while it does
// not parse, says why beside it, and hands on only valid numbers.
import { useEffect, useState } from 'preact/hooks';
import { formatNumber, parseNumber } from '../format.js';

export interface NumberBoxProps {
  id: string;
  label: string;
  unit: string;
  value: number | null;
  onValue: (v: number | null) => void;
  min?: number;
  max?: number;
  integer?: boolean;
  /** shown when empty; an empty box means null (then "auto") */
  placeholder?: string;
  nullable?: boolean;
  hint?: string;
  testid?: string;
  compact?: boolean;
  disabled?: boolean;
}

export function NumberBox(p: NumberBoxProps) {
  const shown = p.value === null ? '' : formatNumber(p.value);
  const [text, setText] = useState(shown);
  const [message, setMessage] = useState<string | null>(null);
  const [focused, setFocused] = useState(false);
  // follow the value when it changes elsewhere (not while typing)
  useEffect(() => {
    if (!focused) {
      setText(shown);
      setMessage(null);
    }
  }, [shown, focused]);

  const onInput = (t: string) => {
    setText(t);
    if (t.trim() === '' && p.nullable) {
      setMessage(null);
      return p.onValue(null);
    }
    const n = parseNumber(t, !!p.integer);
    const bad =
      typeof n === 'string'
        ? n
        : p.min !== undefined && n < p.min
          ? `at least ${formatNumber(p.min)}`
          : p.max !== undefined && n > p.max
            ? `at most ${formatNumber(p.max)}`
            : null;
    setMessage(bad);
    if (!bad) p.onValue(n as number);
  };
  const err = `${p.id}-err`;
  return (
    <div class={`field nbox${p.compact ? ' compact' : ''}${message ? ' has-error' : ''}`}>
      <label for={p.id}>
        {p.label}
        <span class="sr-only"> ({p.unit})</span>
      </label>
      <div class="numbox">
        <input
          id={p.id}
          type="text"
          inputMode={p.integer ? 'numeric' : 'decimal'}
          autoComplete="off"
          spellcheck={false}
          value={text}
          placeholder={p.placeholder}
          disabled={p.disabled}
          aria-invalid={!!message}
          aria-describedby={message ? err : undefined}
          data-testid={p.testid}
          onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)}
          onFocus={() => setFocused(true)}
          onBlur={() => setFocused(false)}
        />
        <span class="unit" aria-hidden="true">
          {p.unit}
        </span>
      </div>
      {message ? (
        <small class="field-error" id={err} role="alert">
          {message}
        </small>
      ) : (
        p.hint && <small class="hint">{p.hint}</small>
      )}
    </div>
  );
}
