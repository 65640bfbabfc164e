// What Apply would do: the result's headline numbers, every key that changes,
// what the importer assumed, and what it could not apply (never dropped
// silently); or why the input cannot be imported.
import { findModel } from '../config/catalog.js';
import { formatCount, formatGiB, formatValue } from '../format.js';
import { labelOf } from '../fields.js';
import { useApp } from './context.js';

export function ImportPreview() {
  const s = useApp();
  const io = s.io;
  if (io.loadError.value)
    return (
      <p class="field-error" role="alert" data-testid="import-error">
        {io.loadError.value}
      </p>
    );
  if (!io.formats.value)
    return (
      <p class="muted" data-testid="import-loading">
        Loading the importers…
      </p>
    );
  const src = io.source.value;
  if (!src.text.trim())
    return (
      <p class="muted import-empty">
        Paste a config, choose a file or drop one, and see what it changes before applying it.
      </p>
    );
  if (!io.kind.value)
    return io.unread.value ? (
      <p class="field-error" role="alert" data-testid="import-error">
        This looks like {io.unread.value}, which llmem does not import{src.name ? ` (${src.name})` : ''}: set its
        settings on the page.
      </p>
    ) : (
      <p class="field-error" role="alert" data-testid="import-error">
        Which format is this? It does not look like any llmem reads{src.name ? ` (${src.name})` : ''}: choose the format
        above.
      </p>
    );
  const p = io.preview.value;
  if (!p) return null;
  if (!p.ok)
    return (
      <>
        <p class="field-error import-error" role="alert" data-testid="import-error">
          Cannot import this {src.name ? `file` : 'text'}: {p.message}. Nothing was changed.
        </p>
        {/is not in the model catalog/.test(p.message) && <KeepModel />}
      </>
    );
  const e = p.estimate;
  const preset = p.doc['model.preset'];
  const name =
    typeof preset === 'string'
      ? (findModel(preset)?.name ?? preset)
      : ((p.doc['model.name'] as string | null) ?? 'Custom model');
  return (
    <div class="import-preview" data-testid="import-preview" aria-live="polite">
      {io.keepModel.value && <KeepModel />}
      {'error' in e ? (
        <p class="banner bad" data-testid="import-result">
          <strong>After Apply the core rejects the setup</strong>
          <span>{e.error} The field will be marked; the last good result stays on screen.</span>
        </p>
      ) : (
        <p class="import-result" data-testid="import-result">
          After Apply: <strong data-testid="import-model">{name}</strong> ·{' '}
          <strong>{formatCount(e.params.total)}</strong> parameters · peak{' '}
          <strong>{formatGiB(e.per_gpu.device_used_bytes)}</strong> of {formatGiB(e.capacity_bytes)} per GPU{' '}
          <span class={`badge ${e.fits ? 'ok' : 'bad'}`}>{e.fits ? 'fits' : 'does not fit'}</span>
        </p>
      )}
      <details class="import-list" open={p.changes.length <= 12} data-testid="import-changes">
        <summary>
          {p.changes.length
            ? `${p.changes.length} setting${p.changes.length === 1 ? '' : 's'} change`
            : 'No setting changes'}
        </summary>
        {p.changes.length > 0 && (
          <ul class="changes">
            {p.changes.map((c) => (
              <li key={c.path}>
                <span>{NAMES[c.path] ?? labelOf(c.path)}</span> <code class="muted">{c.path}</code>{' '}
                <span class="muted">{show(c.path, c.from)}</span> → <strong>{show(c.path, c.to)}</strong>
              </li>
            ))}
          </ul>
        )}
      </details>
      <section class="import-list" data-testid="import-notes">
        <h3>Assumed {p.notes.length > 0 && <span class="pill">{p.notes.length}</span>}</h3>
        {p.notes.length ? (
          <ul>
            {p.notes.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        ) : (
          <p class="muted">Nothing: every value came from the file.</p>
        )}
      </section>
      <section class="import-list" data-testid="import-unsupported">
        <h3>Not applied {p.unsupported.length > 0 && <span class="pill warn">{p.unsupported.length}</span>}</h3>
        {p.unsupported.length ? (
          <ul class="warnings">
            {p.unsupported.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        ) : (
          <p class="muted">Nothing left out: every key that matters for memory was applied.</p>
        )}
      </section>
    </div>
  );
}

const NAMES: Record<string, string> = { 'model.preset': 'Model preset', 'hardware.gpu': 'GPU' };

function show(path: string, v: unknown): string {
  if (v === null && (path === 'model.preset' || path === 'hardware.gpu')) return 'custom';
  if (v === null && path === 'model.name') return '—';
  return formatValue(v);
}

/** A file whose model id the catalog lacks: import the rest, keeping the page's model (a Hugging Face config.json,
 * imported before or after, sets it). */
function KeepModel() {
  const io = useApp().io;
  return (
    <label class="check" data-testid="import-keep-model">
      <input
        type="checkbox"
        checked={io.keepModel.value}
        onChange={(e) => (io.keepModel.value = (e.currentTarget as HTMLInputElement).checked)}
      />
      <span>
        Import the rest and keep the current model (import the model's <code>config.json</code> to set it)
      </span>
    </label>
  );
}
