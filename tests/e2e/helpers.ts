// Shared fixtures and page helpers of the end-to-end specs (playwright.config.ts runs them).
// Every test checks, when it ends, that no request left the two test origins and that
// no page threw.
import { execSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as base, expect, type BrowserContext, type BrowserContextOptions, type Page } from '@playwright/test';

export { expect };
export const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const shots = join(root, 'tests/out/screenshots');
mkdirSync(shots, { recursive: true });
export const origin = `http://127.0.0.1:${process.env.LLMEM_E2E_PORT}`;
export const SUB_PREFIX = process.env.LLMEM_E2E_SUB_PREFIX!;
export const subOrigin = `http://127.0.0.1:${process.env.LLMEM_E2E_SUB_PORT}`;

/** What the browser did during one test: every request URL and every uncaught page error. */
export type Traffic = { requests: string[]; pageErrors: string[]; watch(ctx: BrowserContext): BrowserContext };

export const test = base.extend<{
  traffic: Traffic;
  newContext: (options?: BrowserContextOptions) => Promise<BrowserContext>;
}>({
  traffic: [
    async ({ context }, use) => {
      const traffic: Traffic = {
        requests: [],
        pageErrors: [],
        watch(ctx) {
          ctx.on('request', (r) => traffic.requests.push(r.url()));
          const onPage = (p: Page) => p.on('pageerror', (e) => traffic.pageErrors.push(`${p.url()}: ${e.message}`));
          ctx.pages().forEach(onPage);
          ctx.on('page', onPage);
          return ctx;
        },
      };
      traffic.watch(context);
      await use(traffic);
      const foreign = traffic.requests.filter(
        (u) => !u.startsWith(`${origin}/`) && !u.startsWith(`${subOrigin}/`) && !/^(data|blob):/.test(u),
      );
      expect.soft([...new Set(foreign)], 'requests that left the origin').toEqual([]);
      expect.soft(traffic.pageErrors, 'page errors').toEqual([]);
    },
    { auto: true },
  ],
  /** A further browser context (a fresh visitor), watched like the test's own, closed at the end. */
  newContext: async ({ browser, traffic }, use) => {
    const made: BrowserContext[] = [];
    await use(async (options = {}) => {
      const ctx = traffic.watch(
        await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 900 }, ...options }),
      );
      made.push(ctx);
      return ctx;
    });
    for (const c of made) await c.close();
  },
});

/** Go to `url` and wait for the headline. */
export async function open(page: Page, url: string): Promise<Page> {
  await page.goto(url);
  await page.waitForSelector('[data-testid=peak]', { timeout: 15000 });
  return page;
}
/** A new page of `ctx` at `url`. */
export async function openIn(ctx: BrowserContext, url: string): Promise<Page> {
  return open(await ctx.newPage(), url);
}
// biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText() (the rendered text), not the DOM property
export const text = (page: Page, sel: string) => page.locator(sel).first().innerText();
export const readings = async (page: Page) => ({
  allocated: (await text(page, '[data-testid=reading-allocated] dd')).trim(),
  reserved: (await text(page, '[data-testid=reading-reserved] dd')).trim(),
  device: (await text(page, '[data-testid=reading-device] dd')).trim(),
});
export async function waitChange(page: Page, sel: string, before: string) {
  await page.waitForFunction(([s, b]) => document.querySelector(s)?.textContent !== b, [sel, before] as const, {
    timeout: 5000,
  });
}
export async function waitHash(page: Page, hash: string, timeout = 5000) {
  await page.waitForFunction((h) => location.hash === h, hash, { timeout });
}
export async function setField(page: Page, path: string, value: string | number) {
  await page.fill(`#f-${path.replace(/\./g, '-')}`, String(value));
}
/** Click a copy button; the copied text (clipboard, or the manual-copy field where the clipboard is refused). */
export async function readCopied(page: Page, testid: string): Promise<string> {
  await page.click(`[data-testid=${testid}]`);
  await page.waitForTimeout(100);
  try {
    const t = await page.evaluate(() => navigator.clipboard.readText());
    if (t) return t;
  } catch {}
  return page.inputValue('.manual-copy input');
}
export async function reset(page: Page) {
  await page.click('[data-testid=reset]');
  await waitHash(page, '');
}

const llmem = `node ${JSON.stringify(join(root, 'bin/llmem.mjs'))}`;
/** Run a shell command line that calls `npx llmem`, with this checkout's CLI. */
export const cli = (command: string): string =>
  execSync(command.replace('npx llmem', llmem), { cwd: root, encoding: 'utf8', shell: '/bin/bash' });
/** `llmem <args> --json` on a config object. */
// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, each spec reads the fields it checks
export const cliJson = (args: string, config: object): any =>
  JSON.parse(execSync(`${llmem} ${args} --json`, { cwd: root, encoding: 'utf8', input: JSON.stringify(config) }));
/** The CLI's summary line for the page's three readings. */
export const cliLine = (r: { allocated: string; reserved: string; device: string }) =>
  `peak allocated ${r.allocated} | reserved ${r.reserved} | nvidia-smi ${r.device}`;
export const PAGE_CONFIG = { version: 1, model: { preset: 'llama-3.1-8b' }, hardware: { gpu: 'h100-sxm-80gb' } };
export const GIB = 2 ** 30;
export const gib = (b: number) => `${(b / GIB).toFixed(2)} GiB`;
export const grouped = (n: number | string) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
export const fixturePath = (p: string) => join(root, 'tests/fixtures', p);
export const fixture = (p: string) => readFileSync(join(root, 'tests/fixtures/import', p), 'utf8');
export const PROBE_OUTPUT = join(root, 'tests/fixtures/probe-output.json');

/** Open a planner tab (a second click would close it). */
export async function openTab(page: Page, id: string) {
  if ((await page.getAttribute(`[data-testid=tab-${id}]`, 'aria-selected')) !== 'true')
    await page.click(`[data-testid=tab-${id}]`);
}
/** Wait for a planner job (sweep | search) to finish; returns its status element's data. */
export async function jobDone(page: Page, kind: string, timeout = 20000): Promise<Record<string, string | undefined>> {
  await page.waitForSelector(`[data-testid=${kind}-status][data-status=done]`, { timeout });
  return page.evaluate(
    (k) => ({ ...(document.querySelector(`[data-testid=${k}-status]`) as HTMLElement).dataset }),
    kind,
  );
}
/** Open the Import dialog (its importers load on the first open). */
export async function openImport(page: Page) {
  await page.click('[data-testid=import]');
  await page.waitForSelector('[data-testid=import-dialog][open]');
  await page.waitForSelector('[data-testid=import-loading]', { state: 'detached', timeout: 10000 });
}
/** Import tests/fixtures/import/torchtitan/llama3_8b.toml for 16 GPUs through the dialog. */
export async function importTorchtitan(page: Page) {
  await openImport(page);
  await page.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/torchtitan/llama3_8b.toml'));
  await page.waitForSelector('[data-testid=import-world]');
  await page.fill('[data-testid=import-world]', '16');
  await page.waitForFunction(() =>
    /parallel\.gpus/.test(document.querySelector('[data-testid=import-changes]')?.textContent ?? ''),
  );
  await page.click('[data-testid=import-apply]');
  await page.waitForFunction(() => /training\.seq_len=8192/.test(location.hash));
}
/** The edits that make a 4-stage pipeline: Llama 3.1 70B on 64 GPUs, TP 8, PP 4, full recompute. */
export async function editToPipeline(page: Page) {
  const before = await text(page, '[data-testid=reading-allocated] dd');
  await page.selectOption('#f-model-preset', 'llama-3.1-70b');
  await waitChange(page, '[data-testid=reading-allocated] dd', before);
  expect(await page.inputValue('#f-model-layers'), 'layers of 70B').toBe('80');
  await waitHash(page, '#v1/model.preset=llama-3.1-70b', 3000);
  await setField(page, 'parallel.gpus', 64);
  await setField(page, 'parallel.tp', 8);
  await setField(page, 'parallel.pp', 4);
  await page.selectOption('#f-training-recompute', 'full');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=ranks] li').length === 4);
}
export const selectedText = (page: Page, sel: string) =>
  page.$eval(sel, (el) => (el as HTMLSelectElement).selectedOptions[0]?.textContent ?? '');
export const numberOf = async (page: Page, sel: string) => Number((await page.inputValue(sel)).replace(/,/g, ''));
/** Drop a file on the page (not on a drop zone of its own), as a person dragging it from the desktop. */
export async function dropOnPage(page: Page, name: string, content: string, type = 'application/json') {
  await page.evaluate(
    ([n, c, t]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([c], n, { type: t }));
      const target = document.querySelector('.layout')!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [name, content, type] as const,
  );
}
/** Labels missing among the inputs under `scope` (ids, or the element's opening HTML). */
export const unlabelled = (page: Page, selector: string) =>
  page.evaluate(
    (s) =>
      [...document.querySelectorAll(s)]
        .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label'))
        .map((el) => el.id || el.outerHTML.slice(0, 60)),
    selector,
  );
