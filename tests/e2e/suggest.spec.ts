// "Make it fit": a run that does not fit gets suggestions computed in the planner Worker (as
// `llmem suggest`); Apply loads a suggestion's patch (the link changes) and the headline then fits.
import type { Page } from '@playwright/test';
import { expect, open, test, text } from './helpers.js';

const L70 =
  '/#v1/model.preset=llama-3.1-70b&training.seq_len=8192&training.grad_accum=4&parallel.gpus=8&parallel.engine=fsdp2&hardware.gpu=h100-sxm-80gb';

/** Whether each header text of the suggestions table ends at least 6 px before the next one starts. */
const headerGaps = (page: Page) =>
  page.$$eval('.suggest-table thead th', (ths) => {
    const boxes = ths
      .filter((th) => th.textContent)
      .map((th) => {
        const r = document.createRange();
        r.selectNodeContents(th);
        return r.getBoundingClientRect();
      });
    return boxes.slice(1).map((b, i) => b.left - boxes[i].right >= 6);
  });

test('suggest: Llama 3.1 70B on 8x H100 does not fit; the Worker suggests changes; Apply makes it fit', async ({
  page,
}) => {
  await open(page, L70);
  expect(await text(page, '[data-testid=verdict]')).toContain('Does not fit');
  await page.waitForSelector('[data-testid=suggest-summary]', { timeout: 30000 });
  expect(await text(page, '[data-testid=suggest-summary]')).toContain('worker');
  const rows = page.locator('[data-testid=suggestion]');
  expect(await rows.count()).toBeGreaterThanOrEqual(3);
  // the column headers stand apart (they ran together: "Host RAM/GPU (node)Step time"), on a desktop and a phone
  expect(await headerGaps(page), 'px between header texts, desktop').toEqual([true, true, true]);
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await headerGaps(page), 'px between header texts, phone').toEqual([true, true, true]);
  await page.setViewportSize({ width: 1280, height: 900 });
  // the first change that keeps the training method
  const same = page.locator('[data-testid=suggestion][data-kind=same]').first();
  const before = await page.evaluate(() => location.hash);
  await same.locator('[data-testid=apply-suggestion]').click();
  await page.waitForFunction((h) => location.hash !== h, before, { timeout: 5000 });
  await page.waitForFunction(() => /^Fits/.test(document.querySelector('[data-testid=verdict]')!.textContent!), null, {
    timeout: 5000,
  });
  // once it fits, the panel shows how much larger it could go
  await page.waitForSelector('.suggest-fits', { timeout: 15000 });
  expect(await text(page, '[data-testid=suggest-panel]')).toContain('could go larger');
});

test('one notion of fitting: a run inside the card but not the headroom is "tight" and gets suggestions', async ({
  page,
}) => {
  await open(page, '/');
  expect(await page.getAttribute('[data-testid=verdict]', 'data-verdict')).toBe('fits');
  await page.fill('[data-testid=free-margin]', '50');
  await page.waitForFunction(
    () => document.querySelector('[data-testid=verdict]')!.getAttribute('data-verdict') === 'tight',
    null,
    {
      timeout: 5000,
    },
  );
  expect(await text(page, '[data-testid=verdict]')).toContain('less than the 50 % kept free');
  expect(await text(page, '[data-testid=summary]')).toContain('fits, tight');
  await page.waitForSelector('[data-testid=suggest-summary]', { timeout: 30000 });
  expect(await text(page, '[data-testid=suggest-summary]')).toContain('leave 50 % free');
});
