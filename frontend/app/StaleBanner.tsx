// "This input cannot run": the message, the field it names, and a way to jump there.
import { labelOf } from '../fields.js';
import { focusField, useApp } from './context.js';

export function StaleBanner() {
  const s = useApp();
  const e = s.error.value;
  if (!e) return null;
  return (
    <div class="banner bad" role="alert" data-testid="error-banner">
      <p>
        <strong>{e.path ? labelOf(e.path) : 'Config'}:</strong>{' '}
        {e.path && e.message.startsWith(`${e.path}: `) ? e.message.slice(e.path.length + 2) : e.message}
      </p>
      <p class="muted">
        {s.result.value ? 'The numbers below are from the last input that worked. ' : ''}
        {e.path && (
          <button type="button" class="link" onClick={() => focusField(e.path)}>
            Go to {labelOf(e.path)}
          </button>
        )}
      </p>
    </div>
  );
}
