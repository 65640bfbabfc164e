// RL post-training on the page (issue 18): a link with rl.algorithm opens the
// RL step, its numbers are the CLI's, the RL keys show only in RL mode, the
// largest fit bisects the response length, and the step time is not claimed.
import { cli, cliLine, expect, open, readings, test, text } from './helpers.js';

const LINK =
  '/#v1/model.preset=qwen2.5-7b&parallel.gpus=8&rl.algorithm=grpo&rl.rollout.gpu_memory_utilization=0.4&rl.rollout.sleep=level1';
const CONFIG = {
  version: 1,
  model: { preset: 'qwen2.5-7b' },
  hardware: { gpu: 'h100-sxm-80gb' },
  parallel: { gpus: 8 },
  rl: { algorithm: 'grpo', rollout: { gpu_memory_utilization: 0.4, sleep: 'level1' } },
};

test('a GRPO link: the RL step, the CLI numbers, the RL fields, the response-length fit', async ({ page }) => {
  await open(page, LINK);
  expect(await text(page, '.peak-at'), 'the peak names its phase').toMatch(/Peak during\s+rollout/);
  const r = await readings(page);
  const out = cli(`echo '${JSON.stringify(CONFIG)}' | npx llmem estimate -`);
  expect(out, "the CLI prints the page's numbers").toContain(cliLine(r));
  expect(out).toContain('peak at      rollout');
  expect(await text(page, '[data-testid=breakdown]'), 'the KV cache in the breakdown').toMatch(/KV cache/);
  expect(await page.isVisible('#f-rl-group_size'), 'RL keys shown in RL mode').toBe(true);
  expect(await text(page, '[data-testid=timeline] h3'), 'the timeline is an RL step').toMatch(/one RL step/);
  expect(await text(page, '[data-testid=timeline-rl-phases]'), 'the RL phases named under the timeline').toMatch(
    /rollout.*engine sleep.*old log-probs/,
  );
  expect(await text(page, '[data-testid=fit-seq]'), 'largest fit: the response length').toMatch(/Response/);
  expect(await text(page, '[data-testid=step-time]'), 'no step time claimed').toMatch(/Not estimated for an RL step/);
  // back to plain training: the RL keys hide, the sequence fit returns
  await page.selectOption('#f-rl-algorithm', 'none');
  await page.waitForFunction(() => !/rollout/.test(document.querySelector('.peak-at')?.textContent ?? ''));
  expect(await page.isVisible('#f-rl-group_size'), 'RL keys hidden without RL').toBe(false);
  // the largest fits run in the Worker once the new estimate is on screen
  await page.waitForFunction(() => /Sequence/.test(document.querySelector('[data-testid=fit-seq]')?.textContent ?? ''));
});
