// The page's side of a Hub fetch (config/hub.ts), a chunk of its own loaded on
// the first click of "Fetch config from the Hub": the request, and the cache
// that lets an id fetched once import again offline.
import { fetchHubConfigCached, parseHubId, type HubCache } from './config/hub.js';

const CACHE = 'llmem-hub-configs';
// Cache Storage keys are URLs: a made-up one per org/name@revision (.invalid: never requested)
const cacheUrl = (key: string) => `https://hub-cache.llmem.invalid/${encodeURIComponent(key)}`;

/**
 * Fetched configs kept in Cache Storage: it survives a reload offline, it is a
 * few lines (IndexedDB would be many), and unlike localStorage it does not
 * share the page's small synchronous quota. A Map where it is unavailable
 * (an insecure origin): then the copy lasts as long as the tab.
 */
function browserCache(): HubCache {
  if (typeof caches === 'undefined') {
    const memory = new Map<string, { text: string; at: string }>();
    return {
      get: async (key) => memory.get(key),
      put: async (key, text) => void memory.set(key, { text, at: new Date().toISOString() }),
    };
  }
  return {
    async get(key) {
      const hit = await (await caches.open(CACHE)).match(cacheUrl(key));
      return hit ? { text: await hit.text(), at: hit.headers.get('x-fetched') ?? '' } : undefined;
    },
    async put(key, text) {
      const headers = { 'content-type': 'application/json', 'x-fetched': new Date().toISOString() };
      await (await caches.open(CACHE)).put(cacheUrl(key), new Response(text, { headers }));
    },
  };
}

export type PageFetch = { ok: true; file: File; note?: string } | { ok: false; message: string; auth?: boolean };

/** Fetch the config.json of `id` as a file for the Import dialog (the path a dropped file takes). */
export async function fetchForPage(id: string, token: string): Promise<PageFetch> {
  const ref = parseHubId(id);
  if ('error' in ref) return { ok: false, message: `Hugging Face id: ${ref.error}` };
  const r = await fetchHubConfigCached(ref, {
    fetch: (...a) => fetch(...a),
    token,
    audience: 'page',
    cache: browserCache(),
  });
  if (!r.ok) return { ok: false, message: r.message, auth: r.failure === 'auth' };
  const repo = ref.revision === 'main' ? `${ref.org}/${ref.name}` : ref.key;
  return {
    ok: true,
    file: new File([r.text], `${repo}/config.json`, { type: 'application/json' }),
    note:
      r.cached &&
      `The Hub could not be reached: opened the copy fetched ${r.cached.at.slice(0, 16).replace('T', ' ')} UTC.`,
  };
}
