// Issue 13, item 5: the details a newcomer found. Links keep the planner state,
// Reset can be undone, links that cannot run point to the field, a preset's
// edits show, option values read as words, the phone's "Charts ↓" and the
// breakdown scale at 320 px.
import type { Page } from '@playwright/test';
import { expect, open, selectedText, setField, test, text, waitHash } from './helpers.js';

const activeId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

test('a link opens the planner tab and the headroom it was copied with, and keeps them', async ({ page }) => {
  await open(page, '/#v1/parallel.tp=2&view.tab=sweep&view.free=0.2');
  await expect(page.locator('[data-testid=tab-sweep]')).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('[data-testid=sweep-panel]')).toBeVisible();
  expect(await page.inputValue('#plan-free')).toBe('20');
  await expect(page.locator('#f-parallel-tp')).toHaveValue('2');
  // the address follows the planner: another tab, another headroom
  await page.click('[data-testid=tab-search]');
  await page.fill('#plan-free', '15');
  await waitHash(page, '#v1/parallel.tp=2&view.tab=search&view.free=0.15');
});

test('Reset can be undone: the toast, and the browser Back', async ({ page }) => {
  await open(page, '/');
  await setField(page, 'parallel.tp', 2);
  await waitHash(page, '#v1/parallel.tp=2');
  await page.click('[data-testid=reset]');
  await waitHash(page, '');
  const toast = page.locator('[data-testid=reset-toast]');
  await expect(toast).toHaveAttribute('role', 'status');
  await expect(toast).toContainText('Reset to the default setup');
  // by keyboard
  await page.focus('[data-testid=undo-reset]');
  await page.keyboard.press('Enter');
  await waitHash(page, '#v1/parallel.tp=2');
  await expect(page.locator('#f-parallel-tp')).toHaveValue('2');
  await expect(toast).toHaveCount(0);
  // Back after Reset returns to the setup before it
  await page.click('[data-testid=reset]');
  await waitHash(page, '');
  await expect(page.locator('#f-parallel-tp')).toHaveValue('1');
  await page.goBack();
  await waitHash(page, '#v1/parallel.tp=2');
  await expect(page.locator('#f-parallel-tp')).toHaveValue('2');
});

test('a link whose setup cannot run names the field and goes to it', async ({ page }) => {
  await page.goto('/#v1/parallel.tp=3'); // no result to wait for: nothing has run yet
  const notice = page.locator('[data-testid=link-invalid]');
  await expect(notice).toContainText('Tensor parallel');
  await notice.locator('[data-testid=go-to-field]').click();
  expect(await activeId(page)).toBe('f-parallel-tp');
  // fixing it removes the notice
  await setField(page, 'parallel.tp', 2);
  await expect(notice).toHaveCount(0);
});

test('a link with an unreadable value names the field and goes to it', async ({ page }) => {
  await open(page, '/#v1/training.seq_len=long&parallel.tp=banana');
  const notice = page.locator('[data-testid=link-message]');
  await expect(notice).toContainText('Showing the default setup instead');
  await notice.locator('[data-testid=go-to-field]').click();
  expect(await activeId(page)).toBe('f-training-seq_len');
  // a field the default setup hides (a dense model's experts per token) gets no button to nowhere
  await page.goto('/#v1/model.moe.top_k=two');
  await expect(notice).toContainText('model.moe.top_k');
  await expect(notice.locator('[data-testid=go-to-field]')).toHaveCount(0);
});

test('editing a field the preset sets marks the model "(modified)"; setting it back clears the mark', async ({
  page,
}) => {
  await open(page, '/');
  expect(await selectedText(page, '#f-model-preset')).toBe('Llama 3.1 8B');
  await setField(page, 'model.layers', 40);
  await expect.poll(() => selectedText(page, '#f-model-preset')).toBe('Llama 3.1 8B (modified)');
  await setField(page, 'model.layers', 32);
  await expect.poll(() => selectedText(page, '#f-model-preset')).toBe('Llama 3.1 8B');
});

test('option values read as words', async ({ page }) => {
  await open(page, '/#v1/training.recompute=per_op');
  expect(await selectedText(page, '#f-training-recompute')).toBe('Selective, per op (torchtitan)');
  expect(await selectedText(page, '#f-parallel-engine')).toBe('PyTorch FSDP2');
});

test('on a phone, "Charts ↓" puts the results below the sticky bar', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, '/');
  await page.click('[data-testid=jump-charts]');
  await page.waitForTimeout(200);
  const bar = await page.locator('[data-testid=summary]').boundingBox();
  const results = await page.locator('[data-testid=results]').boundingBox();
  expect(bar && results).toBeTruthy();
  expect(results!.y, 'the results start below the bar').toBeGreaterThanOrEqual(bar!.y + bar!.height);
  expect(results!.y - (bar!.y + bar!.height), 'and right below it').toBeLessThan(40);
});

for (const [why, hash] of [
  ['within the GPU', ''],
  ['far over the GPU', '#v1/training.seq_len=65536&hardware.gpu=l4'],
])
  test(`at 320 px the breakdown scale labels do not collide (${why})`, async ({ page }) => {
    await page.setViewportSize({ width: 320, height: 700 });
    await open(page, `/${hash}`);
    const zero = (await page.locator('[data-testid=scale-zero]').boundingBox())!;
    const cap = (await page.locator('[data-testid=cap-label]').boundingBox())!;
    const card = (await page.locator('[data-testid=breakdown]').boundingBox())!;
    expect(cap.x, `"0" ends at ${zero.x + zero.width}, the capacity label starts at ${cap.x}`).toBeGreaterThan(
      zero.x + zero.width,
    );
    expect(cap.x + cap.width).toBeLessThanOrEqual(card.x + card.width);
    expect(await text(page, '[data-testid=cap-label]')).toMatch(/GiB$/);
  });
