// A model's config.json from the Hugging Face Hub, by its id (org/name or
// org/name@revision): the one request llmem makes to another origin, made only
// when asked (the page's "Fetch config from the Hub" button, `llmem estimate
// --hf org/name`). Shared by the page and the CLI: no DOM, and the caller gives
// `fetch` (tests intercept it) and, on the page, a cache for offline use.

/** The Hub's origin: the page's one request to another origin goes there. */
export const HUB_ORIGIN = 'https://huggingface.co';
/** config.json files are a few KB; anything this large is not one. */
export const MAX_HUB_BYTES = 4 * 2 ** 20;

export interface HubRef {
  org: string;
  name: string;
  revision: string;
  /** org/name@revision: the cache key */
  key: string;
}

/** The allowed form, for error messages. */
export const HUB_ID_FORM =
  'org/name or org/name@revision (letters, digits, "-", "_" and "."; e.g. Qwen/Qwen2.5-7B or meta-llama/Llama-3.1-8B@main)';

const PART = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?$/;
const REVISION = /^[A-Za-z0-9._-][A-Za-z0-9._/-]{0,199}$/;

/** Whether `text` is a Hub id (the CLI's --hf: a path that is not a file but is an id goes to the Hub). */
export function looksLikeHubId(text: string): boolean {
  return !('error' in parseHubId(text));
}

/** Read a Hub id; an error names the form allowed. No request is made for an id that fails here. */
export function parseHubId(text: string): HubRef | { error: string } {
  const id = text.trim();
  const at = id.indexOf('@');
  const repo = at < 0 ? id : id.slice(0, at);
  const revision = at < 0 ? 'main' : id.slice(at + 1);
  const parts = repo.split('/');
  const ok =
    parts.length === 2 &&
    parts.every((p) => PART.test(p) && !p.includes('..')) &&
    REVISION.test(revision) &&
    !revision.includes('..') &&
    !revision.endsWith('/');
  if (!ok) return { error: `"${id}" is not a Hugging Face model id: the allowed form is ${HUB_ID_FORM}` };
  return { org: parts[0], name: parts[1], revision, key: `${repo}@${revision}` };
}

/** https://huggingface.co/<org>/<name>/resolve/<revision>/config.json (a revision such as refs/pr/1 is escaped). */
export function hubConfigUrl(ref: HubRef, base = HUB_ORIGIN): string {
  return `${base.replace(/\/+$/, '')}/${ref.org}/${ref.name}/resolve/${encodeURIComponent(ref.revision)}/config.json`;
}

export type HubFailure = 'auth' | 'missing' | 'network' | 'status' | 'too-large';

export type HubResult =
  | { ok: true; text: string; url: string; cached?: { at: string } }
  | { ok: false; failure: HubFailure; message: string };

/** Who asks: the page (a token field) or the CLI (HF_TOKEN). The messages say what to do there. */
export type HubAudience = 'page' | 'cli';

export interface HubOptions {
  fetch: typeof globalThis.fetch;
  /** an access token for gated or private models: sent as Authorization: Bearer, never in the URL */
  token?: string;
  /** the Hub's base URL (tests point it at a local server) */
  base?: string;
  audience?: HubAudience;
}

/** The message for a failed request: what it means and what to do. */
export function hubMessage(ref: HubRef, failure: HubFailure, audience: HubAudience, detail = ''): string {
  const id = `${ref.org}/${ref.name}`;
  switch (failure) {
    case 'auth':
      return audience === 'page'
        ? `${id} is gated or private (the Hub answered ${detail}; without a token it answers so for a misspelt id too): give an access token below, after accepting the model's licence on huggingface.co, or import its config.json file`
        : `${id} is gated or private (the Hub answered ${detail}; without a token it answers so for a misspelt id too): set HF_TOKEN to an access token, after accepting the model's licence on huggingface.co, or give the path of its config.json`;
    case 'missing':
      return `${id}: no such model on the Hub, or it has no config.json at revision ${ref.revision} (the Hub answered 404)`;
    case 'network':
      return audience === 'page'
        ? `The Hub could not be reached${detail ? ` (${detail})` : ''}: the page works offline, but fetching a config from the Hub needs the network. Import the config.json file instead.`
        : `cannot reach the Hub${detail ? ` (${detail})` : ''}: fetching ${id} needs the network; or give the path of its config.json`;
    case 'too-large':
      return `${id}: the Hub's config.json is larger than ${MAX_HUB_BYTES / 2 ** 20} MiB: that is not a model config`;
    default:
      return `${id}: the Hub answered ${detail} for config.json`;
  }
}

/** GET the config.json of `ref`; every failure is a result with a message, never a throw. */
export async function fetchHubConfig(ref: HubRef, options: HubOptions): Promise<HubResult> {
  const audience = options.audience ?? 'page';
  const url = hubConfigUrl(ref, options.base);
  const fail = (failure: HubFailure, detail?: string): HubResult => ({
    ok: false,
    failure,
    message: hubMessage(ref, failure, audience, detail),
  });
  const headers: Record<string, string> = {};
  if (options.token?.trim()) headers.Authorization = `Bearer ${options.token.trim()}`;
  let response: Response;
  try {
    // no cookies: the token, when given, is the only credential sent
    response = await options.fetch(url, { headers, credentials: 'omit' });
  } catch (e) {
    return fail('network', (e as Error)?.message);
  }
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  if (response.status === 401 || response.status === 403) return fail('auth', status);
  if (response.status === 404) return fail('missing');
  if (!response.ok) return fail('status', status);
  if (Number(response.headers.get('content-length') ?? 0) > MAX_HUB_BYTES) return fail('too-large');
  let text: string;
  try {
    text = await response.text();
  } catch (e) {
    return fail('network', (e as Error)?.message);
  }
  return text.length > MAX_HUB_BYTES ? fail('too-large') : { ok: true, text, url };
}

/** Where the page keeps fetched configs (keyed by org/name@revision), so that they import again offline. */
export interface HubCache {
  get(key: string): Promise<{ text: string; at: string } | undefined>;
  put(key: string, text: string): Promise<void>;
}

/**
 * Network first (the Hub's main moves; the click asks for its current file),
 * then the cached copy when the Hub cannot be reached. A 401/404 is the Hub's
 * answer and is not papered over by an old copy.
 */
export async function fetchHubConfigCached(ref: HubRef, options: HubOptions & { cache: HubCache }): Promise<HubResult> {
  const r = await fetchHubConfig(ref, options);
  if (r.ok) {
    await options.cache.put(ref.key, r.text).catch(() => undefined); // a full or refused cache only loses the offline copy
    return r;
  }
  if (r.failure !== 'network') return r;
  const hit = await options.cache.get(ref.key).catch(() => undefined);
  return hit ? { ok: true, text: hit.text, url: hubConfigUrl(ref, options.base), cached: { at: hit.at } } : r;
}
