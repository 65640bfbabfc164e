// Offline: after one visit the service worker serves the page, the planner's Worker and
// core, and the lazily loaded importers with the network off.
import { expect, fixture, jobDone, open, openImport, openTab, PROBE_OUTPUT, readings, test, text } from './helpers.js';

test('offline: after one visit the page reloads with the network off', async ({ page, context }) => {
  await open(page, '/#v1/parallel.tp=2');
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  const online = await readings(page);
  await context.setOffline(true);
  await page.reload();
  await page.waitForSelector('[data-testid=peak]', { timeout: 15000 });
  expect(await page.evaluate(() => !!navigator.serviceWorker.controller), 'page controlled by the service worker').toBe(
    true,
  );
  expect(await readings(page), 'offline numbers').toEqual(online);
  const p2 = await open(await context.newPage(), '/#v1/parallel.tp=4');
  // the planner's Worker and the core it imports come from the cache too
  await p2.waitForSelector('[data-testid=fit-seq] dd button', { timeout: 15000 });
  expect(await text(p2, '[data-testid=fit-seq] dd'), 'largest fit offline').toMatch(/\d/);
  await openTab(p2, 'search');
  await p2.fill('#search-gpus', '16');
  await p2.waitForSelector('[data-testid=layout-row]', { timeout: 15000 });
  expect(await p2.getAttribute('[data-testid=search-status]', 'data-where'), 'offline search in the worker').toBe(
    'worker',
  );
  await openTab(p2, 'sweep');
  await jobDone(p2, 'sweep');
  await p2.waitForSelector('[data-testid=sweep-chart] canvas');
  await openTab(p2, 'measured');
  await p2.setInputFiles('[data-testid=measure-file]', PROBE_OUTPUT);
  await p2.waitForSelector('[data-testid=measured-table]');
  // the importers' lazy chunk comes from the cache too: import and export offline
  await openImport(p2);
  await p2.fill('[data-testid=import-text]', fixture('hf/qwen2.5-7b.json'));
  await p2.waitForSelector('[data-testid=import-preview]');
  await p2.click('[data-testid=import-apply]');
  await p2.waitForFunction(
    () => (document.querySelector('#f-model-layers') as HTMLInputElement | null)?.value === '28',
  );
  await p2.click('[data-testid=export]');
  await p2.click('[data-testid=export-torchtitan]');
  await p2.waitForFunction(() =>
    /\[parallelism\]/.test(
      (document.querySelector('[data-testid=export-text]') as HTMLTextAreaElement | null)?.value ?? '',
    ),
  );
});
