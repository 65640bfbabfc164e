// Page-level messages: an unreadable link, an import problem, the service worker's notices.
import { applyUpdate, offlineReady, updateReady } from '../pwa.js';
import { useApp } from './context.js';

export function Notices() {
  const s = useApp();
  const link = s.linkMessage.value;
  return (
    <div class="notices" aria-live="polite">
      {link && (
        <p class="notice warn" role="alert" data-testid="link-message">
          <span>{link} Showing the default setup instead.</span>
          <button type="button" class="link" onClick={() => (s.linkMessage.value = null)}>
            Dismiss
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
  );
}
