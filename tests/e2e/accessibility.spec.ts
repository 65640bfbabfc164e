// Accessibility: every input has a label, the keyboard reaches the form.
import { expect, open, test, unlabelled } from './helpers.js';

test('keyboard: every input has a label, Tab reaches the form', async ({ page }) => {
  await open(page, '/');
  expect(await unlabelled(page, 'input:not([type=hidden]):not([hidden]), select'), 'unlabelled inputs').toEqual([]);
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.id === 'f-model-preset');
  }
  expect(reached, 'Tab reaches the model preset').toBe(true);
});
