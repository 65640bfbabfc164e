// Export the config: config v1 JSON, DeepSpeed JSON, a Megatron-LM command
// line or a torchtitan TOML fragment. Each shows the text (copy, download) and
// the list of what that format cannot express.
import { useState } from 'preact/hooks';
import type { ExportChoice } from '../io-state.js';
import { EXPORTS } from '../io-menus.js';
import { useApp } from './context.js';
import { Dialog } from './Dialog.js';
import { TabList } from './TabList.js';
import { copyText as copy, downloadText as download } from '../clipboard.js';

export function ExportDialog() {
  const s = useApp();
  const io = s.io;
  const [status, setStatus] = useState('');
  const kind = io.exportKind.value;
  const fmt = EXPORTS.find((e) => e.id === kind)!;
  const out = io.exported.value;
  const choose = (k: ExportChoice) => {
    io.exportKind.value = k;
    setStatus('');
  };
  return (
    <Dialog id="export-dialog" title="Export the config" onClose={io.close}>
      <TabList label="Format" class="export-tabs" onSelect={(i) => choose(EXPORTS[i].id)}>
        {EXPORTS.map((e) => (
          <button
            key={e.id}
            type="button"
            role="tab"
            class="tab"
            id={`export-tab-${e.id}`}
            aria-selected={e.id === kind}
            tabIndex={e.id === kind ? 0 : -1}
            autofocus={e.id === kind}
            aria-controls="export-panel"
            data-testid={`export-${e.id}`}
            onClick={() => choose(e.id)}
          >
            {e.label}
          </button>
        ))}
      </TabList>
      <div id="export-panel" role="tabpanel" aria-labelledby={`export-tab-${kind}`} class="export-panel">
        <p class="hint">{fmt.about}</p>
        {io.loadError.value && kind !== 'config' ? (
          <p class="field-error" role="alert">
            {io.loadError.value}
          </p>
        ) : !out ? (
          <p class="muted">Loading the exporters…</p>
        ) : (
          <>
            {s.stale.value && (
              <p class="field-error" role="alert">
                The setup has an input error:{' '}
                {kind === 'config' ? 'the file holds the values as entered' : 'this is the last setup that was valid'}.
              </p>
            )}
            <div class="field">
              <label for="export-text">{fmt.label}</label>
              <textarea
                id="export-text"
                class="code"
                readOnly
                rows={12}
                spellcheck={false}
                value={out.text}
                data-testid="export-text"
                onFocus={(e) => (e.currentTarget as HTMLTextAreaElement).select()}
              />
            </div>
            <div class="export-actions">
              <button
                type="button"
                data-testid="export-copy"
                onClick={async () => {
                  const ok = await copy(out.text);
                  setStatus(ok ? 'Copied' : 'Select the text above and copy it');
                  if (!ok) (document.getElementById('export-text') as HTMLTextAreaElement | null)?.select();
                }}
              >
                Copy
              </button>
              <button
                type="button"
                data-testid="export-download"
                onClick={() => download(out.text, fmt.file, fmt.type)}
              >
                Download {fmt.file}
              </button>
              <span class="share-status" role="status">
                {status}
              </span>
            </div>
            <section class="import-list" data-testid="export-unexpressed">
              <h3>
                What {fmt.label} cannot express{' '}
                {out.unexpressed.length > 0 && <span class="pill warn">{out.unexpressed.length}</span>}
              </h3>
              {kind === 'config' ? (
                <p class="muted">Nothing: config v1 is llmem's own format and holds every setting.</p>
              ) : out.unexpressed.length ? (
                <ul class="warnings">
                  {out.unexpressed.map((u) => (
                    <li key={u}>{u}</li>
                  ))}
                </ul>
              ) : (
                <p class="muted">
                  Nothing: every setting that differs from the defaults is in the text (the GPU type is not a
                  training-framework setting).
                </p>
              )}
            </section>
          </>
        )}
      </div>
    </Dialog>
  );
}
