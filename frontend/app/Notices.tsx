// Page-level messages: an unreadable link or one whose setup cannot run (with the
// field to fix), Reset's Undo, the service worker's notices.
import { labelOf, PLACED, visible } from '../fields.js';
import { applyUpdate, offlineReady, updateReady } from '../pwa.js';
import { focusField, useApp } from './context.js';

/** "Go to <label>": opens the field's section, focuses and scrolls to it (none for a field the form hides now). */
function GoTo({ path }: { path: string }) {
  const s = useApp();
  const shown = path === 'model.preset' || path === 'hardware.gpu' || (PLACED.includes(path) && visible(path, s.get));
  if (!shown) return null;
  return (
    <button type="button" data-testid="go-to-field" onClick={() => focusField(path)}>
      Go to {labelOf(path)}
    </button>
  );
}

export function Notices() {
  const s = useApp();
  const link = s.linkMessage.value;
  const err = s.error.value;
  // the link opened a setup the core refuses: name the field while that error lasts
  const invalid = err?.path && err.path === s.linkErrorPath.value ? err : null;
  return (
    <div class="notices" aria-live="polite">
      {link && (
        <p class="notice warn" role="alert" data-testid="link-message">
          <span>{link}</span>
          {s.linkPath.value && <GoTo path={s.linkPath.value} />}
          <button type="button" class="link" onClick={() => (s.linkMessage.value = null)}>
            Dismiss
          </button>
        </p>
      )}
      {invalid && (
        <p class="notice warn" role="alert" data-testid="link-invalid">
          <span>
            This link's setup cannot run: <strong>{labelOf(invalid.path)}</strong> ({invalid.path}):{' '}
            {invalid.message.replace(`${invalid.path}: `, '')}
          </span>
          <GoTo path={invalid.path} />
          <button type="button" class="link" onClick={() => (s.linkErrorPath.value = null)}>
            Dismiss
          </button>
        </p>
      )}
      {/* toasts stack in one corner */}
      <div class="toasts">
        {s.undoable.value && (
          <p class="notice info toast" role="status" data-testid="reset-toast">
            <span>Reset to the default setup.</span>
            <button type="button" data-testid="undo-reset" onClick={s.undoReset}>
              Undo
            </button>
          </p>
        )}
        {updateReady.value && (
          <p class="notice info toast" data-testid="update-notice">
            <span>A new version of llmem is ready.</span>
            <button type="button" onClick={applyUpdate}>
              Reload
            </button>
            <button type="button" class="link" onClick={() => (updateReady.value = false)}>
              Later
            </button>
          </p>
        )}
        {offlineReady.value && !updateReady.value && (
          <p class="notice ok toast" data-testid="offline-notice">
            Ready to work offline.
          </p>
        )}
      </div>
    </div>
  );
}
