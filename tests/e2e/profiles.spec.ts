// Training-stack profiles on the page: choosing a stack lists what it sets
// (with the framework file), changes the numbers as the CLI does, names the
// stack in "why this number", and a key set by hand wins over it.
import { cliJson, expect, gib, open, PAGE_CONFIG, readings, test, waitHash } from './helpers.js';

test("a training stack lists the mechanisms it sets; the numbers are the CLI's; a field set by hand wins", async ({
  page,
}) => {
  await open(page, '/');
  await page.selectOption('#f-runtime-framework', 'torchtitan');
  await page.fill('#f-runtime-framework_version', '2024-12');
  await page.locator('#f-runtime-framework_version').blur();
  await waitHash(page, '#v1/runtime.framework=torchtitan&runtime.framework_version=2024-12');
  const implied = page.locator('[data-testid=profile-implied] li');
  await expect(implied.filter({ hasText: 'K/V repeated' })).toContainText('true');
  await expect(implied.filter({ hasText: 'K/V repeated' })).toContainText('ff0829c10');
  await expect(implied.filter({ hasText: 'Optimizer kernel' })).toContainText('foreach');
  const cli = cliJson('estimate -', {
    ...PAGE_CONFIG,
    runtime: { framework: 'torchtitan', framework_version: '2024-12' },
  });
  expect((await readings(page)).allocated).toBe(gib(cli.per_gpu.peak_allocated_bytes));
  await expect(page.locator('[data-testid=why]')).toContainText('from the torchtitan profile');
  // the key set by hand (here by a link): it wins and leaves the list
  await open(page, '/#v1/runtime.framework=torchtitan&runtime.framework_version=2024-12&training.repeat_kv=false');
  await expect(implied.filter({ hasText: 'Optimizer kernel' })).toHaveCount(1);
  await expect(implied.filter({ hasText: 'K/V repeated' })).toHaveCount(0);
  // a release name that is not a month: refused at the field, with the releases listed
  await page.selectOption('#f-runtime-framework', 'hf_trainer');
  await page.fill('#f-runtime-framework_version', 'banana');
  await page.locator('#f-runtime-framework_version').blur();
  await expect(page.locator('#f-runtime-framework_version-err')).toContainText(
    'is not a YYYY-MM date or a hf_trainer release',
  );
});
