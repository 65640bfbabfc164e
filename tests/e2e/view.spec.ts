// The default view, edits through the form, and bad input (at the field, in the link).
import { join } from 'node:path';
import {
  cli,
  cliLine,
  editToPipeline,
  expect,
  open,
  readings,
  setField,
  shots,
  test,
  text,
  waitChange,
  waitHash,
} from './helpers.js';

test('default view: Llama 3.1 8B on 8x H100 with FSDP2, numbers and charts', async ({ page }) => {
  await open(page, '/');
  expect(new URL(page.url()).hash, 'hash-less URL').toBe('');
  expect(await page.inputValue('#f-model-preset'), 'preset').toBe('llama-3.1-8b');
  expect(await page.inputValue('#f-hardware-gpu'), 'gpu').toBe('h100-sxm-80gb');
  expect(await page.inputValue('#f-parallel-engine'), 'engine').toBe('fsdp2');
  expect(await page.inputValue('#f-parallel-gpus'), 'gpus').toBe('8');
  expect(await text(page, '[data-testid=peak]'), 'headline').toMatch(/\d+\.\d\d\s*GiB\s+of\s+79\.65 GiB/);
  expect(await text(page, '[data-testid=verdict]'), 'verdict').toMatch(/Fits|Does not fit/);
  await page.waitForSelector('[data-testid=timeline] canvas');
  expect(
    await page.locator('[data-testid=breakdown] .stackbar .seg').count(),
    'breakdown segments',
  ).toBeGreaterThanOrEqual(4);
  // the cards below the timeline follow the result a frame later, "why this number" after its chunk loads
  await expect(page.locator('[data-testid=ranks] li'), 'one stage').toHaveCount(1);
  await expect
    .poll(() => page.locator('[data-testid=why] .why-row').count(), { message: 'why rows' })
    .toBeGreaterThanOrEqual(4);
  const r = await readings(page);
  const out = cli(
    `echo '{"model":{"preset":"llama-3.1-8b"},"hardware":{"gpu":"h100-sxm-80gb"}}' | npx llmem estimate -`,
  );
  expect(out, "the CLI prints the page's numbers").toContain(cliLine(r));
});

test('changing TP changes the numbers and the link; arrow keys step it', async ({ page }) => {
  await open(page, '/');
  const before = await text(page, '[data-testid=reading-allocated] dd');
  await setField(page, 'parallel.tp', 2);
  await waitChange(page, '[data-testid=reading-allocated] dd', before);
  await waitHash(page, '#v1/parallel.tp=2', 3000);
  await page.focus('#f-parallel-tp');
  await page.keyboard.press('ArrowUp');
  await waitHash(page, '#v1/parallel.tp=4');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await waitHash(page, '');
});

test('changing the preset changes the numbers and the model fields; a pipeline shows its stages', async ({ page }) => {
  await open(page, '/');
  await editToPipeline(page);
  await page.screenshot({ path: join(shots, 'desktop-light-pipeline.png') });
});

test('invalid input: message at the field, last good result stays', async ({ page }) => {
  await open(page, '/');
  const good = await readings(page);
  await setField(page, 'parallel.tp', 3);
  await page.waitForSelector('[data-testid=error-banner]');
  expect(await text(page, '.field.has-error .field-error'), 'field message').toMatch(/divisible/);
  expect(await page.getAttribute('#f-parallel-tp', 'aria-invalid'), 'aria-invalid').toBe('true');
  expect(await readings(page), 'last good result kept').toEqual(good);
  await page.screenshot({ path: join(shots, 'desktop-light-error.png') });
  await setField(page, 'parallel.tp', 1);
  await page.waitForSelector('[data-testid=error-banner]', { state: 'detached' });
  await setField(page, 'training.seq_len', '');
  expect(await text(page, '.field.has-error .field-error'), 'empty field message').toMatch(/enter a value/);
  await setField(page, 'training.seq_len', '4096');
  await page.waitForSelector('[data-testid=error-banner]', { state: 'detached' });
});

test('a bad link: a message, and the default view', async ({ page, context }) => {
  const good = await readings(await open(await context.newPage(), '/'));
  await open(page, '/#v1/parallel.tp=banana');
  expect(await text(page, '[data-testid=link-message]'), 'link message').toMatch(/not a number/);
  expect(await readings(page), 'default view under a bad link').toEqual(good);
});
