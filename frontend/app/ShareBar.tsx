// Copy link, copy the CLI command, export / import config-v1 JSON, reset.
import { useRef, useState } from 'preact/hooks';
import { useApp } from './context.js';

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function ShareBar() {
  const s = useApp();
  const file = useRef<HTMLInputElement>(null);
  const [status, setStatus] = useState('');
  // shown when the clipboard is not available, for copying by hand
  const [manual, setManual] = useState<string | null>(null);

  const share = async (what: 'link' | 'cli') => {
    const text = what === 'link' ? location.href.replace(/#.*$/, '') + s.hashText.value : s.cli.value;
    const ok = await copy(text);
    setManual(ok ? null : text);
    setStatus(ok ? (what === 'link' ? 'Link copied' : 'Command copied') : 'Copy it from the box below');
    setTimeout(() => setStatus(''), 2500);
  };

  const exportFile = () => {
    const url = URL.createObjectURL(new Blob([s.exportText.value], { type: 'application/json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'llmem-config.json';
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };

  const importFile = async (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const f = input.files?.[0];
    input.value = '';
    if (!f) return;
    if (s.importText(await f.text())) setStatus(`Loaded ${f.name}`);
  };

  return (
    <div class="share">
      <div class="share-buttons" role="group" aria-label="Share and files">
        <button type="button" onClick={() => share('link')} data-testid="copy-link" title="Copy a link to this exact setup">
          Copy link
        </button>
        <button type="button" onClick={() => share('cli')} data-testid="copy-cli" title={s.cli.value}>
          Copy CLI
        </button>
        <button type="button" onClick={exportFile} data-testid="export" title="Download the config (config v1 JSON)">
          Export
        </button>
        <button type="button" onClick={() => file.current?.click()} data-testid="import" title="Load a config v1 JSON file">
          Import
        </button>
        <input ref={file} type="file" accept=".json,application/json" hidden onChange={importFile} data-testid="import-file" aria-label="Import a config file" />
        <button type="button" class="link" onClick={() => s.reset()} title="Back to Llama 3.1 8B on 8x H100 with FSDP2">
          Reset
        </button>
        <span class="share-status" role="status">
          {status}
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
