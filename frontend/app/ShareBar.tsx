// Copy link, copy the CLI command, the Export and Import dialogs (config v1 JSON
// and the training frameworks' formats), reset.
import { useEffect, useState } from 'preact/hooks';
import { useApp } from './context.js';
import { copyText as copy } from '../clipboard.js';

export function ShareBar() {
  const s = useApp();
  const [status, setStatus] = useState('');
  const notice = s.io.notice.value;
  // the last import's line, shown for a while
  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => (s.io.notice.value = ''), 4000);
    return () => clearTimeout(t);
  }, [notice]);
  // shown when the clipboard is not available, for copying by hand
  const [manual, setManual] = useState<string | null>(null);

  const share = async (what: 'link' | 'cli') => {
    const text = what === 'link' ? location.href.replace(/#.*$/, '') + s.hashText.value : s.cli.value;
    const ok = await copy(text);
    setManual(ok ? null : text);
    setStatus(ok ? (what === 'link' ? 'Link copied' : 'Command copied') : 'Copy it from the box below');
    setTimeout(() => setStatus(''), 2500);
  };

  // Reset adds a history entry: Back returns to this setup's link (main.tsx opens it on hashchange)
  const reset = () => {
    const here = location.pathname + location.search;
    const before = s.hashText.peek();
    s.reset();
    if (before) {
      history.replaceState(history.state, '', here + before);
      history.pushState(null, '', here);
    }
  };

  return (
    <div class="share">
      {/* biome-ignore lint/a11y/useSemanticElements: a row of buttons, not form fields: a fieldset would bring a border and legend */}
      <div class="share-buttons" role="group" aria-label="Share and files">
        <button
          type="button"
          onClick={() => share('link')}
          data-testid="copy-link"
          title="Copy a link to this exact setup"
        >
          Copy link
        </button>
        {/* the command as its tooltip, written when pointed at or focused: kept up to date, it was a CLI command built
            and a bar re-rendered at every edit */}
        <button
          type="button"
          onClick={() => share('cli')}
          data-testid="copy-cli"
          onPointerEnter={(e) => (e.currentTarget.title = s.cli.peek())}
          onFocus={(e) => (e.currentTarget.title = s.cli.peek())}
        >
          Copy CLI
        </button>
        <button
          type="button"
          onClick={() => s.io.openExport()}
          data-testid="export"
          aria-haspopup="dialog"
          title="config v1 JSON, DeepSpeed JSON, Megatron-LM arguments, torchtitan TOML"
        >
          Export…
        </button>
        <button
          type="button"
          onClick={() => s.io.openImport()}
          data-testid="import"
          aria-haspopup="dialog"
          title="A Hugging Face config.json, a training framework's config, or config v1 JSON (or drop the file on the page)"
        >
          Import…
        </button>
        <button
          type="button"
          class="link"
          data-testid="reset"
          onClick={reset}
          title="Back to Llama 3.1 8B on 8x H100 with FSDP2 (Undo, or the browser's Back, brings this setup back)"
        >
          Reset
        </button>
        <span class="share-status" role="status" data-testid="share-status">
          {status || notice}
        </span>
      </div>
      {s.importMessage.value && (
        <p class="field-error" role="alert" data-testid="import-message">
          {s.importMessage.value}
        </p>
      )}
      {manual && (
        <label class="manual-copy">
          <span class="sr-only">Text to copy</span>
          <input readOnly value={manual} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        </label>
      )}
    </div>
  );
}
