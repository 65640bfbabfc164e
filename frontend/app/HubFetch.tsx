// A Hugging Face id in place of a file: "Fetch config from the Hub" gets its
// config.json (the page's one request to another origin, made only on this
// click) and opens it in the Import dialog, as a dropped file. The request
// code loads with the first click (frontend/hub-page.ts).
import { useState } from 'preact/hooks';
import { useApp } from './context.js';
import './hub.css';

// the token lives in this tab's session storage only: never in the URL, a link or localStorage
const TOKEN = 'llmem-hf-token';
function session(value?: string): string {
  try {
    if (value === undefined) return sessionStorage.getItem(TOKEN) ?? '';
    if (value) sessionStorage.setItem(TOKEN, value);
    else sessionStorage.removeItem(TOKEN);
  } catch {
    // storage refused (private mode): the token lasts as long as the field
  }
  return value ?? '';
}

export function HubFetch() {
  const s = useApp();
  const [id, setId] = useState('');
  const [token, setToken] = useState(session);
  const [busy, setBusy] = useState(false);
  const [out, setOut] = useState<{ text: string; bad?: boolean; auth?: boolean } | null>(null);
  // the shape only: the click checks the id in full (config/hub.ts) before any request
  const invalid = id.trim() && !/^[\w.-]+\/[\w.-]+(@[\w./-]+)?$/.test(id.trim());
  async function go() {
    setBusy(true);
    setOut(null);
    try {
      const r = await (await import('../hub-page.js')).fetchForPage(id, token);
      if (!r.ok) return setOut({ text: r.message, bad: true, auth: r.auth });
      await s.io.readFile(r.file);
      s.io.kindChoice.value = 'hf';
      if (r.note) setOut({ text: r.note });
    } catch {
      setOut({ text: 'The Hub code could not load: reload the page once online.', bad: true });
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class={`field wide hub${invalid ? ' has-error' : ''}`} data-testid="hub">
      <label for="hub-id">Or a Hugging Face model id</label>
      <div class="hub-row">
        <input
          id="hub-id"
          type="text"
          placeholder="org/name, e.g. Qwen/Qwen2.5-7B"
          spellcheck={false}
          autocomplete="off"
          value={id}
          aria-invalid={invalid ? 'true' : undefined}
          aria-describedby="hub-hint"
          onInput={(e) => setId((e.currentTarget as HTMLInputElement).value)}
          onKeyDown={(e) => e.key === 'Enter' && id.trim() && !invalid && !busy && void go()}
          data-testid="hub-id"
        />
        <button
          type="button"
          disabled={!id.trim() || !!invalid || busy}
          onClick={() => void go()}
          data-testid="hub-fetch"
        >
          {busy ? 'Fetching…' : 'Fetch config from the Hub'}
        </button>
      </div>
      {(invalid || out) && (
        <p class={invalid || out?.bad ? 'field-error' : 'hint'} role="alert" data-testid="hub-message">
          {invalid ? 'Hugging Face id: the allowed form is org/name or org/name@revision' : out?.text}
        </p>
      )}
      <small class="hint" id="hub-hint">
        The one request this page makes to another origin: huggingface.co, only when you click.
      </small>
      <details class="hub-token" open={!!out?.auth || undefined}>
        <summary>Access token for gated models</summary>
        <input
          type="password"
          aria-label="Hugging Face access token"
          placeholder="hf_…"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken(session((e.currentTarget as HTMLInputElement).value.trim()))}
          data-testid="hub-token"
        />
        <small class="hint">Kept in this tab's session storage only.</small>
      </details>
    </div>
  );
}
