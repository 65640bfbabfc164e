// The planner's Web Worker: its own Core instance, for sweeps and layout
// searches, so the page stays responsive. The core module is the page's
// own file (its URL comes in the first message), fetched once and cached by
// the service worker, not a second copy bundled here; so is the code it
// imports (the build makes this file a second entry of the page's own
// bundle: vite.config.ts). Cancelling a search is terminating this worker
// (a search is one call into the core).
import type { Core } from '../wasm/llmem.js';
import { type CoreUrls, loadCoreFrom } from './core-urls.js';
import { handleRequest, type PlannerRequest, registerSuggest } from './planner.js';

type Message = { type: 'init'; core: CoreUrls } | PlannerRequest;

let core: Promise<Core> | null = null;
// (typed by hand: the project's lib is the DOM one)
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<Message>) => void) | null;
  postMessage(m: unknown): void;
};

scope.onmessage = async (e: MessageEvent<Message>) => {
  const msg = e.data;
  if ('type' in msg) {
    core = loadCoreFrom(msg.core);
    core.catch((err: unknown) =>
      scope.postMessage({ type: 'failed', message: String((err as Error)?.message ?? err) }),
    );
    return;
  }
  if (!core) return;
  // the suggestions (words, next GPU) load with the first suggestion request: a lazy chunk, not the first load
  if (msg.kind === 'suggest') registerSuggest((await import('./config/suggest.js')).suggestFor);
  const c = await core;
  scope.postMessage(handleRequest(c, msg));
};
