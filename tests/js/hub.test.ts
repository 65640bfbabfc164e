// A config.json from the Hugging Face Hub by its id (frontend/config/hub.ts) and
// `llmem estimate --hf org/name`: ids checked before any request, the URL, the token
// header, the messages for 401/403/404/offline/other statuses, the page's offline
// cache, and the CLI against a local server (LLMEM_HUB_URL; no network in the tests).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../bin/cli.js';
import {
  fetchHubConfig,
  fetchHubConfigCached,
  type HubCache,
  hubConfigUrl,
  type HubRef,
  looksLikeHubId,
  parseHubId,
} from '../../frontend/config/hub.js';
import { importConfig } from '../../frontend/config/importers/index.js';
import { repoRoot } from '../../wasm/node.js';

const root = repoRoot();
const LLAMA = readFileSync(join(root, 'tests/fixtures/import/hf/llama-3.1-8b.json'), 'utf8');
const ref = (id: string) => parseHubId(id) as HubRef;

/** A fetch that answers `status` with `body` (or rejects when status is 0) and records each call. */
function fakeFetch(status: number, body = '') {
  const calls: { url: string; headers: Record<string, string> }[] = [];
  const fetch = (async (url: string, init?: RequestInit) => {
    calls.push({ url, headers: { ...(init?.headers as Record<string, string>) } });
    if (status === 0) throw new TypeError('Failed to fetch');
    return new Response(body, { status });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

describe('Hub ids', () => {
  it('reads org/name and org/name@revision', () => {
    expect(parseHubId('Qwen/Qwen2.5-7B')).toEqual({
      org: 'Qwen',
      name: 'Qwen2.5-7B',
      revision: 'main',
      key: 'Qwen/Qwen2.5-7B@main',
    });
    expect(parseHubId(' meta-llama/Llama-3.1-8B@v1.0 ')).toMatchObject({
      revision: 'v1.0',
      key: 'meta-llama/Llama-3.1-8B@v1.0',
    });
    expect(looksLikeHubId('gpt2/x')).toBe(true);
  });
  it('refuses anything else before a request, naming the allowed form', () => {
    for (const bad of [
      '',
      'gpt2',
      'a/b/c',
      '../etc/passwd',
      'org/..',
      'a b/c',
      'org/name@',
      'org/name@a..b',
      '/name',
      'org/-x',
    ])
      expect((parseHubId(bad) as { error: string }).error, bad).toMatch(
        /not a Hugging Face model id: the allowed form is org\/name or org\/name@revision/,
      );
  });
  it('builds the resolve URL, main by default, a revision escaped', () => {
    expect(hubConfigUrl(ref('Qwen/Qwen2.5-7B'))).toBe(
      'https://huggingface.co/Qwen/Qwen2.5-7B/resolve/main/config.json',
    );
    expect(hubConfigUrl(ref('org/name@refs/pr/1'), 'http://127.0.0.1:9/')).toBe(
      'http://127.0.0.1:9/org/name/resolve/refs%2Fpr%2F1/config.json',
    );
  });
});

describe('fetchHubConfig', () => {
  it('returns the text; the token goes in an Authorization header only when given', async () => {
    const a = fakeFetch(200, LLAMA);
    const r = await fetchHubConfig(ref('meta-llama/Llama-3.1-8B'), { fetch: a.fetch });
    expect(r).toMatchObject({ ok: true, text: LLAMA });
    expect(a.calls).toEqual([
      { url: 'https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json', headers: {} },
    ]);
    const b = fakeFetch(200, LLAMA);
    await fetchHubConfig(ref('meta-llama/Llama-3.1-8B'), { fetch: b.fetch, token: ' hf_secret ' });
    expect(b.calls[0].headers).toEqual({ Authorization: 'Bearer hf_secret' });
    expect(b.calls[0].url).not.toContain('hf_secret');
    // the text imports with the same code as a dropped file
    if (r.ok) expect(importConfig('hf', r.text)).toMatchObject({ config: { model: { hidden: 4096 } } });
  });
  it('says what a 401/403, a 404, a failed request or another status means', async () => {
    const page = async (status: number) =>
      fetchHubConfig(ref('org/gated'), { fetch: fakeFetch(status).fetch, audience: 'page' });
    const cli = async (status: number) =>
      fetchHubConfig(ref('org/gated'), { fetch: fakeFetch(status).fetch, audience: 'cli' });
    expect(await page(401)).toMatchObject({
      ok: false,
      failure: 'auth',
      message: expect.stringMatching(/gated or private.*401.*access token below/),
    });
    expect(await page(403)).toMatchObject({ failure: 'auth', message: expect.stringContaining('403') });
    expect(await cli(401)).toMatchObject({ failure: 'auth', message: expect.stringContaining('set HF_TOKEN') });
    expect(await page(404)).toMatchObject({
      failure: 'missing',
      message: expect.stringMatching(/no such model on the Hub, or it has no config\.json/),
    });
    expect(await page(0)).toMatchObject({
      failure: 'network',
      message: expect.stringMatching(/page works offline, but fetching a config from the Hub needs the network/),
    });
    expect(await cli(0)).toMatchObject({
      failure: 'network',
      message: expect.stringMatching(/cannot reach the Hub.*needs the network/),
    });
    expect(await page(502)).toMatchObject({
      failure: 'status',
      message: 'org/gated: the Hub answered 502 for config.json',
    });
  });
});

describe('the page cache (network first, the cached copy when the Hub cannot be reached)', () => {
  const memory = (): HubCache & { map: Map<string, { text: string; at: string }> } => {
    const map = new Map<string, { text: string; at: string }>();
    return {
      map,
      get: async (k) => map.get(k),
      put: async (k, text) => void map.set(k, { text, at: '2026-01-02T03:04:05Z' }),
    };
  };
  it('keeps what it fetched, by org/name@revision, and serves it offline', async () => {
    const cache = memory();
    await fetchHubConfigCached(ref('org/m@v2'), { fetch: fakeFetch(200, LLAMA).fetch, cache });
    expect([...cache.map.keys()]).toEqual(['org/m@v2']);
    expect(await fetchHubConfigCached(ref('org/m@v2'), { fetch: fakeFetch(0).fetch, cache })).toMatchObject({
      ok: true,
      text: LLAMA,
      cached: { at: '2026-01-02T03:04:05Z' },
    });
    expect(await fetchHubConfigCached(ref('org/m'), { fetch: fakeFetch(0).fetch, cache })).toMatchObject({
      ok: false,
      failure: 'network',
    });
  });
  it('does not hide a 401 or a 404 behind an old copy', async () => {
    const cache = memory();
    await cache.put('org/m@main', LLAMA);
    expect(await fetchHubConfigCached(ref('org/m'), { fetch: fakeFetch(404).fetch, cache })).toMatchObject({
      ok: false,
      failure: 'missing',
    });
  });
});

// ---- the CLI against a local server ------------------------------------------------
type Seen = { url: string; auth: string | undefined };
let server: Server;
let base = '';
const seen: Seen[] = [];
/** What the server answers, by the path's org/name. */
const ROUTES: Record<string, [number, string]> = {
  'meta-llama/Llama-3.1-8B': [200, LLAMA],
  'org/gated': [401, '{"error":"Access to model org/gated is restricted."}'],
  'org/missing': [404, 'Entry not found'],
  'org/broken': [200, '{"model_type": "llama", '],
  'org/invalid': [200, '{"model_type": "llama", "hidden_size": -4, "num_hidden_layers": 2}'],
  'org/down': [503, 'maintenance'],
};

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    const m = /^\/([^/]+\/[^/]+)\/resolve\/[^/]+\/config\.json$/.exec(req.url ?? '');
    const [status, body] = (m && ROUTES[m[1]]) || [404, 'Repository not found'];
    if (m?.[1] === 'org/gated' && req.headers.authorization === 'Bearer hf_ok') {
      res.writeHead(200).end(LLAMA);
      return;
    }
    res.writeHead(status).end(body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));
afterEach(() => {
  vi.restoreAllMocks();
  delete process.env.HF_TOKEN;
  delete process.env.LLMEM_HUB_URL;
  seen.length = 0;
});

/** `llmem <args>` in this process against the local Hub: status, stdout, stderr. */
async function llmem(args: string[], env: Record<string, string> = {}) {
  Object.assign(process.env, { LLMEM_HUB_URL: base, ...env });
  const out: string[] = [],
    err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  const status = await main(args);
  vi.restoreAllMocks();
  return { status, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('llmem estimate --hf org/name', () => {
  it('fetches config.json and estimates its model, as --hf config.json does', async () => {
    const hub = await llmem(['estimate', '--hf', 'meta-llama/Llama-3.1-8B', '--json']);
    expect(hub.stderr).toBe('');
    expect(hub.status).toBe(0);
    expect(JSON.parse(hub.stdout).params.total).toBe(8030261248);
    expect(seen).toEqual([{ url: '/meta-llama/Llama-3.1-8B/resolve/main/config.json', auth: undefined }]);
    const file = await llmem(['estimate', '--hf', 'tests/fixtures/import/hf/llama-3.1-8b.json', '--json']);
    expect(JSON.parse(file.stdout)).toEqual(JSON.parse(hub.stdout));
    expect(seen).toHaveLength(1); // a path that exists is a file: no request
  });
  it('sends HF_TOKEN as the bearer token; a revision goes in the URL', async () => {
    const r = await llmem(['estimate', '--hf', 'org/gated@v1', '--json'], { HF_TOKEN: 'hf_ok' });
    expect(r.status).toBe(0);
    expect(seen).toEqual([{ url: '/org/gated/resolve/v1/config.json', auth: 'Bearer hf_ok' }]);
  });
  it('exit 2 with a message for 401, 404, another status, no server and a malformed id', async () => {
    const gated = await llmem(['estimate', '--hf', 'org/gated']);
    expect(gated).toMatchObject({ status: 2, stdout: '' });
    expect(gated.stderr).toMatch(
      /^llmem: --hf org\/gated: org\/gated is gated or private \(the Hub answered 401.*set HF_TOKEN/,
    );
    expect((await llmem(['estimate', '--hf', 'org/missing'])).stderr).toContain(
      'no such model on the Hub, or it has no config.json',
    );
    const down = await llmem(['estimate', '--hf', 'org/down']);
    expect(down).toMatchObject({ status: 2, stderr: expect.stringContaining('the Hub answered 503') });
    const off = await llmem(['estimate', '--hf', 'org/any'], { LLMEM_HUB_URL: 'http://127.0.0.1:9' });
    expect(off).toMatchObject({ status: 2, stderr: expect.stringMatching(/cannot reach the Hub.*needs the network/) });
    const bad = await llmem(['estimate', '--hf', 'org/na me']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(
      'no such file, and "org/na me" is not a Hugging Face model id: the allowed form is org/name',
    );
    expect(seen.map((s) => s.url)).toEqual([
      '/org/gated/resolve/main/config.json',
      '/org/missing/resolve/main/config.json',
      '/org/down/resolve/main/config.json',
    ]);
    for (const r of [gated, down, off, bad]) expect(r.stderr).not.toMatch(/\n\s+at /); // never a stack trace
  });
  it('exit 1 when the fetched config.json is not valid JSON or not a valid model', async () => {
    const broken = await llmem(['estimate', '--hf', 'org/broken']);
    expect(broken).toMatchObject({
      status: 1,
      stderr: expect.stringContaining("--hf org/broken: the Hub's config.json is not valid JSON"),
    });
    const invalid = await llmem(['estimate', '--hf', 'org/invalid']);
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toMatch(/^llmem: --hf org\/invalid: .*hidden_size/);
  });
  it('the installed command does the same (exit status, one line) and --help names HF_TOKEN', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          'node',
          [join(root, 'bin/llmem.mjs'), ...args],
          { cwd: root, env: { ...process.env, LLMEM_HUB_URL: base } },
          (e, stdout, stderr) => done({ code: e ? (e.code as number) : 0, stdout, stderr }),
        ),
      );
    const ok = await run(['estimate', '--hf', 'meta-llama/Llama-3.1-8B']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('peak allocated');
    const gated = await run(['estimate', '--hf', 'org/gated']);
    expect(gated.code).toBe(2);
    expect(gated.stderr.trim().split('\n')).toHaveLength(1);
    expect((await run(['estimate', '--help'])).stdout).toMatch(/--hf <config\.json \| org\/name>[\s\S]*HF_TOKEN/);
  });
});
