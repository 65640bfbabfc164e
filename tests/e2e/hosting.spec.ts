// Static hosting: dist/ from a sub-path, the service worker's update notice, no request
// leaving the origin, and the shape of the build (one core module, one lazy importers
// chunk precached by the service worker, the first load within its size budget, the
// planner's tabs and the dialogs in lazy chunks).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundleParts, FIRST_LOAD_BUDGET_KB } from '../../scripts/first-load.mjs';
import { expect, open, openImport, openTab, root, SUB_PREFIX, subOrigin, test } from './helpers.js';

const dist = join(root, 'dist');
/** Publish a "new version" of sw.js on the sub-path server ('' restores the built one). */
const setSwSuffix = (suffix: string) => fetch(`${subOrigin}/__sw-suffix`, { method: 'POST', body: suffix });

test('works from a sub-path (static hosting)', async ({ page }) => {
  await open(page, `${subOrigin}${SUB_PREFIX}#v1/parallel.tp=2`);
  expect(await page.inputValue('#f-parallel-tp'), 'tp from the hash').toBe('2');
  const manifest = await page.evaluate(() =>
    fetch((document.querySelector('link[rel=manifest]') as HTMLLinkElement).href).then((r) => r.json()),
  );
  expect(manifest.icons.length, 'manifest icons').toBeGreaterThanOrEqual(3);
  await page.evaluate(async () => navigator.serviceWorker.ready);
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.scope);
  expect(scope, 'service worker scope').toBe(`${subOrigin}${SUB_PREFIX}`);
});

test('a new version shows a notice; Reload switches to it', async ({ page }) => {
  await open(page, `${subOrigin}${SUB_PREFIX}`);
  await page.evaluate(async () => navigator.serviceWorker.ready);
  await page.reload();
  await page.waitForSelector('[data-testid=peak]');
  expect(await page.evaluate(() => !!navigator.serviceWorker.controller), 'controlled by the service worker').toBe(
    true,
  );
  await setSwSuffix(`\n// new version ${Date.now()}\n`);
  try {
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.update());
    await page.waitForSelector('[data-testid=update-notice]', { timeout: 10000 });
    await Promise.all([
      page.waitForEvent('load', { timeout: 10000 }),
      page.click('[data-testid=update-notice] button:has-text("Reload")'),
    ]);
    await page.waitForSelector('[data-testid=peak]');
  } finally {
    await setSwSuffix('');
  }
});

test('a visit (page, planner, import dialog) makes its requests to the origin only', async ({ page, traffic }) => {
  await open(page, '/');
  await openTab(page, 'search');
  await page.fill('#search-gpus', '64');
  await page.waitForSelector('[data-testid=layout-row]', { timeout: 15000 });
  await openImport(page);
  // the fixture checks, when the test ends, that none of them left the origin
  expect(traffic.requests.length, `requests recorded: ${traffic.requests.join(', ')}`).toBeGreaterThan(10);
});

test.describe('the built dist/', () => {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(js|mjs|css|wasm)$/.test(f)) files.push(relative(dist, p));
    }
  };
  walk(dist);
  const LAZY = /^assets\/formats-[\w-]+\.js$/;
  // the Hub request (frontend/hub-page.ts, config/hub.ts), loaded with the first "Fetch config from the Hub" click
  const HUB = /^assets\/hub-page-[\w-]+\.js$/;

  test('the core is one glue module and one binary, shared by the page and the Worker', () => {
    const core = files.filter((f) => /llmem_core/.test(f));
    expect(
      core.filter((f) => f.endsWith('.js')),
      'core glue modules',
    ).toHaveLength(1);
    expect(
      core.filter((f) => f.endsWith('.wasm')),
      'core binaries',
    ).toHaveLength(1);
    const sw = existsSync(join(dist, 'sw.js')) ? readFileSync(join(dist, 'sw.js'), 'utf8') : '';
    for (const f of core) expect(sw.includes(f), `the service worker precaches ${f}`).toBe(true);
  });

  test("the planner Worker ships no second copy of the page's code: it imports the chunk the page loads", () => {
    const workers = files.filter((f) => /^assets\/worker-[\w-]+\.js$/.test(f));
    expect(workers, 'planner Worker entries (assets/worker-*.js)').toHaveLength(1);
    const worker = readFileSync(join(dist, workers[0]), 'utf8');
    const imported = (text: string) => [...text.matchAll(/from\s*["'`]\.\/([\w.-]+\.js)["'`]/g)].map((m) => m[1]);
    const page = files.filter((f) => /^assets\/index-[\w-]+\.js$/.test(f));
    expect(page, 'page entries (assets/index-*.js)').toHaveLength(1);
    const shared = imported(worker).filter((f) => imported(readFileSync(join(dist, page[0]), 'utf8')).includes(f));
    expect(shared, `chunks the Worker (${workers[0]}) shares with the page`).not.toEqual([]);
    // the core wrapper's code (its ABI check) is in the shared chunk only, not in the Worker's own file
    expect(worker, 'the Worker entry bundles the core wrapper').not.toMatch(/does not match the wrapper/);
    expect(worker.length, 'the Worker entry, bytes').toBeLessThan(2048);
  });

  test('the importers and exporters are one lazy chunk, precached by the service worker', () => {
    const lazy = files.filter((f) => LAZY.test(f));
    expect(lazy, 'lazy chunks (assets/formats-*.js)').toHaveLength(1);
    const sw = existsSync(join(dist, 'sw.js')) ? readFileSync(join(dist, 'sw.js'), 'utf8') : '';
    expect(
      sw.includes(lazy[0]),
      `the service worker precaches ${lazy[0]} (import would not work offline otherwise)`,
    ).toBe(true);
  });

  test('no importer code in the first load', () => {
    const eager = files.filter(
      (f) =>
        !LAZY.test(f) &&
        /\.js$/.test(f) &&
        /unsupported YAML|not a known DeepSpeed key/.test(readFileSync(join(dist, f), 'utf8')),
    );
    expect(eager, 'first-load files with importer code').toEqual([]);
  });

  test('the Hub code is a lazy chunk, precached; the service worker neither caches nor answers Hub requests', () => {
    const hub = files.filter((f) => HUB.test(f));
    expect(hub, 'lazy chunks (assets/hub-page-*.js)').toHaveLength(1);
    const sw = readFileSync(join(dist, 'sw.js'), 'utf8');
    expect(sw.includes(hub[0]), `the service worker precaches ${hub[0]}`).toBe(true);
    expect(sw, 'a runtime route for the Hub in sw.js').not.toMatch(/huggingface/);
    const eager = files.filter(
      (f) => !HUB.test(f) && /\.js$/.test(f) && readFileSync(join(dist, f), 'utf8').includes('https://huggingface.co'),
    );
    expect(eager, 'first-load files with the Hub request').toEqual([]);
  });

  test('the first load (app JS + wasm + CSS, gzip -9) is within its budget; the planner tabs and the dialogs are lazy', () => {
    const parts = bundleParts(dist);
    const first = parts.filter((p) => p.part === 'first').reduce((n, p) => n + p.gzip_bytes, 0);
    // scripts/perf-report.mjs prints each file's part and size
    expect(first / 1024, 'first load, KB gzip').toBeLessThanOrEqual(FIRST_LOAD_BUDGET_KB);
    const lazy = parts.filter((p) => p.part === 'lazy').map((p) => p.file);
    for (const chunk of ['SweepPanel', 'SearchPanel', 'ComparePanel', 'MeasuredPanel', 'ImportDialog', 'ExportDialog'])
      expect(
        lazy.some((f) => f.startsWith(`assets/${chunk}-`)),
        `${chunk} loads when opened`,
      ).toBe(true);
    const sw = readFileSync(join(dist, 'sw.js'), 'utf8');
    for (const f of lazy) expect(sw.includes(f), `the service worker precaches ${f} (offline)`).toBe(true);
  });
});
