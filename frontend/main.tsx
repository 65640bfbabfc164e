// Entry: load the wasm core, build the state from the URL hash, keep the hash in step, render.
// The core (its glue module and its binary) is what this page and the planner
// Worker both load by URL, so a first visit transfers it once; the binary
// compiles while it streams in (WebAssembly.instantiateStreaming).
import { effect } from '@preact/signals';
import { render } from 'preact';
import { type CoreUrls, loadCoreFrom } from './core-urls.js';
import { App } from './app/App.js';
import { loadHints } from './fields.js';
import { registerServiceWorker } from './pwa.js';
import { createAppState, linkPredictedHeavy } from './state.js';
import { workerBackend } from './worker-client.js';
import './styles.css';

const root = document.getElementById('app')!;
/** The address bar is rewritten this long after the last edit (ms). */
const HASH_DELAY_MS = 400;
const coreUrls: CoreUrls = {
  module: new URL('../build/wasm/llmem_core.mjs', import.meta.url).href,
  wasm: new URL('../build/wasm/llmem_core.wasm', import.meta.url).href,
};

const backend = typeof Worker === 'function' ? workerBackend(coreUrls) : undefined;
// a deep pipeline's link is estimated in the Worker: it loads its core while this page loads its own
if (backend && linkPredictedHeavy(location.hash)) backend.prepare?.('estimate');

loadCoreFrom(coreUrls)
  .then((core) => {
    const state = createAppState(core, location.hash, backend);
    // the address bar follows the config, a moment after the last edit: replaceState costs the page and the
    // browser a few milliseconds, so a run of edits (typing, 200 ms apart) writes it once
    let timer: ReturnType<typeof setTimeout> | undefined;
    const writeHash = () => {
      timer = undefined;
      const hash = state.hashText.peek();
      if (location.hash !== hash) history.replaceState(history.state, '', location.pathname + location.search + hash);
    };
    effect(() => {
      // what the link is made of, not the link: it is written once per run of edits, not encoded at each
      void state.doc.value;
      void state.planner.view.value;
      clearTimeout(timer);
      timer = setTimeout(writeHash, HASH_DELAY_MS);
    });
    addEventListener('pagehide', () => timer && writeHash());
    addEventListener('hashchange', () => state.openHash(location.hash));
    root.textContent = '';
    render(<App state={state} />, root);
    // the fields' hints are a chunk of their own (fields.ts loadHints), asked for once the page is up, as the
    // planner's tabs and dialogs are: the first load does not wait for them, and each shows under its field as it comes
    setTimeout(() => void loadHints(), 0);
    registerWhenQuiet(state);
  })
  .catch((e: unknown) => {
    root.innerHTML = '';
    const p = document.createElement('p');
    p.className = 'fatal';
    p.textContent = `The llmem core could not start: ${(e as Error).message ?? e}`;
    root.append(p);
    void registerServiceWorker();
  });

/** The service worker starts once the page has a result and no edit came for this long (ms)... */
const SW_QUIET_MS = 1000;
/** ...or this long after the page started, whatever happens (a link that opens in an invalid state has no result). */
const SW_WAIT_MS = 10000;
/** The service worker precaches every asset: it waits for the first result and a pause in the edits, so that a cold
 * visit's first answer (a heavy link's comes from the planner Worker) and the first edits do not share the network
 * and the cores with it. */
function registerWhenQuiet(state: { doc: { value: unknown }; result: { value: unknown } }) {
  let started = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const start = () => {
    if (started) return;
    started = true;
    clearTimeout(timer);
    stop();
    void registerServiceWorker();
  };
  const stop = effect(() => {
    void state.doc.value;
    const shown = state.result.value !== null;
    clearTimeout(timer);
    if (shown) timer = setTimeout(start, SW_QUIET_MS);
  });
  setTimeout(start, SW_WAIT_MS);
}
