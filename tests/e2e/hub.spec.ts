// "Fetch config from the Hub": a Hugging Face id in the model panel fetches its
// config.json (the page's one request to another origin, only on the click) and opens
// it in the Import dialog. The Hub is intercepted (page.route): 200, 401 then a token,
// 404, an aborted request, and the cached copy after a reload. Screenshots of the
// control, desktop and phone, light and dark.
import { join } from 'node:path';
import type { Page, Route } from '@playwright/test';
import { expect, fixture, numberOf, open, shots, type Traffic, test, text } from './helpers.js';

const HUB = 'https://huggingface.co/';
const QWEN = fixture('hf/qwen2.5-7b.json');
const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization' };

type Answer = number | 'abort' | ((route: Route) => Promise<void>);
/** Intercept the Hub: each request answered by `answer(path)`; the requests made, with their token. */
async function hub(page: Page, answer: (path: string, auth: string | undefined) => Answer) {
  const made: { path: string; auth?: string }[] = [];
  await page.route(`${HUB}**`, async (route) => {
    const r = route.request();
    if (r.method() === 'OPTIONS') return route.fulfill({ status: 204, headers: CORS }); // the token's preflight
    const path = r.url().slice(HUB.length - 1);
    const auth = (await r.allHeaders()).authorization;
    made.push(auth ? { path, auth } : { path });
    const a = answer(path, auth);
    if (a === 'abort') return route.abort('internetdisconnected');
    if (typeof a === 'function') return a(route);
    return route.fulfill({ status: a, headers: CORS, body: a === 200 ? QWEN : 'no' });
  });
  return made;
}
/** The fixture checks that no request left the origin: the Hub's, checked here, are the expected exception. */
function forgetHub(traffic: Traffic) {
  const rest = traffic.requests.filter((u) => !u.startsWith(HUB));
  traffic.requests.splice(0, traffic.requests.length, ...rest);
}
async function fetchId(page: Page, id: string) {
  await page.fill('[data-testid=hub-id]', id);
  await page.click('[data-testid=hub-fetch]');
}
const message = (page: Page) => text(page, '[data-testid=hub-message]');

test('a Hub id: nothing is requested until the click; 200 opens the Import dialog; Apply imports the model', async ({
  page,
  traffic,
}) => {
  const made = await hub(page, (p) => (p === '/Qwen/Qwen2.5-7B/resolve/main/config.json' ? 200 : 404));
  await open(page, '/');
  expect(await text(page, '[data-testid=hub] #hub-hint'), 'the UI says so').toMatch(
    /one request this page makes to another origin: huggingface\.co, only when you click/,
  );
  // a malformed id: the button stays off and the field says the allowed form
  await page.fill('[data-testid=hub-id]', 'qwen2.5');
  expect(await page.isDisabled('[data-testid=hub-fetch]'), 'button for a non-id').toBe(true);
  expect(await message(page)).toMatch(/Hugging Face id: the allowed form is org\/name or org\/name@revision/);
  await page.fill('[data-testid=hub-id]', '');
  expect(await page.isDisabled('[data-testid=hub-fetch]'), 'button for an empty field').toBe(true);
  expect(made, 'requests to the Hub before the click').toEqual([]);
  expect(
    traffic.requests.filter((u) => !u.startsWith('http://127.0.0.1')),
    'other origins on load',
  ).toEqual([]);

  await fetchId(page, 'Qwen/Qwen2.5-7B');
  await page.waitForSelector('[data-testid=import-preview]');
  expect(made, 'the one request').toEqual([{ path: '/Qwen/Qwen2.5-7B/resolve/main/config.json' }]);
  expect(await page.inputValue('[data-testid=import-text]'), 'the fetched text in the dialog').toBe(QWEN);
  expect(await text(page, 'label[for=import-text]')).toContain('from Qwen/Qwen2.5-7B/config.json');
  expect(await page.inputValue('[data-testid=import-kind]'), 'read as a Hugging Face config.json').toBe('hf');
  await page.click('[data-testid=import-apply]');
  await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
  await page.waitForFunction(() => (document.querySelector('#f-model-layers') as HTMLInputElement)?.value === '28');
  expect(await numberOf(page, '#f-model-hidden'), 'Qwen2.5 7B width').toBe(3584);
  forgetHub(traffic);
});

test('401 asks for a token (session storage only, sent as a header); 404 and an aborted request say so inline', async ({
  page,
  traffic,
}) => {
  const made = await hub(page, (p, auth) => {
    if (p.startsWith('/org/gated/')) return auth === 'Bearer hf_test' ? 200 : 401;
    if (p.startsWith('/org/offline/')) return 'abort';
    if (p.startsWith('/org/teapot/')) return 503;
    return 404;
  });
  await open(page, '/');
  const peak = await text(page, '[data-testid=peak]');
  await fetchId(page, 'org/gated');
  await page.waitForSelector('[data-testid=hub-message]');
  expect(await message(page)).toMatch(
    /org\/gated is gated or private \(the Hub answered 401.*give an access token below/,
  );
  expect(await page.getAttribute('.hub-token', 'open'), 'the token field opens').not.toBeNull();
  await page.fill('[data-testid=hub-token]', 'hf_test');
  await page.click('[data-testid=hub-fetch]');
  await page.waitForSelector('[data-testid=import-preview]');
  expect(made).toEqual([
    { path: '/org/gated/resolve/main/config.json' },
    { path: '/org/gated/resolve/main/config.json', auth: 'Bearer hf_test' },
  ]);
  const stores = await page.evaluate(() => ({
    session: sessionStorage.getItem('llmem-hf-token'),
    local: JSON.stringify({ ...localStorage }),
    url: location.href,
  }));
  expect(stores.session, 'token in session storage').toBe('hf_test');
  expect(stores.local, 'token in localStorage').not.toContain('hf_test');
  expect(stores.url, 'token in the URL').not.toContain('hf_test');
  await page.click('[data-testid=import-dialog-close]');

  await fetchId(page, 'org/missing@v2');
  await expect(page.locator('[data-testid=hub-message]')).toContainText(
    'org/missing: no such model on the Hub, or it has no config.json at revision v2',
  );
  await fetchId(page, 'org/offline');
  await expect(page.locator('[data-testid=hub-message]')).toContainText(
    'the page works offline, but fetching a config from the Hub needs the network',
  );
  await fetchId(page, 'org/teapot');
  await expect(page.locator('[data-testid=hub-message]')).toContainText('the Hub answered 503');
  expect(await page.locator('[data-testid=import-dialog]').count(), 'no dialog after a failure').toBe(0);
  expect(await text(page, '[data-testid=peak]'), 'nothing else changed').toBe(peak);
  forgetHub(traffic);
});

test('a fetched config is cached: after a reload, with the Hub unreachable, the copy opens', async ({
  page,
  traffic,
}) => {
  let online = true;
  await hub(page, () => (online ? 200 : 'abort'));
  await open(page, '/');
  await fetchId(page, 'Qwen/Qwen2.5-7B@abc123');
  await page.waitForSelector('[data-testid=import-preview]');
  await page.reload();
  await page.waitForSelector('[data-testid=peak]');
  online = false;
  await fetchId(page, 'Qwen/Qwen2.5-7B@abc123');
  await page.waitForSelector('[data-testid=import-preview]');
  expect(await page.inputValue('[data-testid=import-text]')).toBe(QWEN);
  expect(await text(page, 'label[for=import-text]')).toContain('from Qwen/Qwen2.5-7B@abc123/config.json');
  await page.click('[data-testid=import-dialog-close]');
  expect(await message(page)).toMatch(
    /The Hub could not be reached: opened the copy fetched \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
  );
  // another revision was never fetched: no copy
  await fetchId(page, 'Qwen/Qwen2.5-7B');
  await expect(page.locator('[data-testid=hub-message]')).toContainText('needs the network');
  forgetHub(traffic);
});

const DEVICES = [
  ['desktop', { width: 1280, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const;
for (const [device, viewport] of DEVICES)
  for (const colorScheme of ['light', 'dark'] as const)
    test(`screenshot: the Hub control, ${device}, ${colorScheme}`, async ({ newContext, traffic }) => {
      const phone = device === 'phone';
      const c = await newContext({ viewport, colorScheme, deviceScaleFactor: phone ? 2 : 1, isMobile: phone });
      const page = await c.newPage();
      await hub(page, () => 401);
      await open(page, '/');
      await page.addStyleTag({ content: '.toast{display:none!important}.header,.summary{position:static!important}' });
      await fetchId(page, 'meta-llama/Llama-3.1-8B');
      await page.waitForSelector('[data-testid=hub-message]');
      const panel = page.locator('section.panel', { has: page.locator('[data-testid=hub]') });
      await panel.screenshot({ path: join(shots, `hub-${device}-${colorScheme}.png`) });
      forgetHub(traffic);
    });
