// Per-layer kinds, MTP and vision towers on the page (issue 15): a hybrid preset shows its layer
// mixers in the model panel and its layer kinds per pipeline stage, its numbers are the CLI's, a
// mistyped mixer is named inline, and a link writes the list in its compact form.
import { cli, cliLine, expect, open, readings, setField, test, text } from './helpers.js';

const LINK =
  '/#v1/model.preset=qwen3-next-80b-a3b&parallel.engine=megatron&parallel.gpus=64&parallel.pp=4&parallel.ep=8';
const CONFIG = {
  version: 1,
  model: { preset: 'qwen3-next-80b-a3b' },
  hardware: { gpu: 'h100-sxm-80gb' },
  parallel: { engine: 'megatron', gpus: 64, pp: 4, ep: 8 },
};

test('a hybrid model: layer mixers in the form, kinds per stage, the CLI numbers, a bad entry named', async ({
  page,
}) => {
  await open(page, LINK);
  expect(await page.inputValue('#f-model-layer_types'), 'the compact form').toBe('3*linear,full');
  expect(await page.isVisible('#f-model-linear-value_heads'), 'Gated DeltaNet keys shown').toBe(true);
  expect(await page.isVisible('#f-model-ssm-heads'), 'Mamba-2 keys hidden').toBe(false);
  expect(await text(page, '[data-testid=ranks]'), 'layer kinds per stage').toMatch(
    /12 layers \(3 attention, 9 linear attn\.\)/,
  );
  const r = await readings(page);
  const out = cli(`echo '${JSON.stringify(CONFIG)}' | npx llmem estimate -`);
  expect(out, "the CLI prints the page's numbers").toContain(cliLine(r));
  expect(out).toContain('12 layers (3 attention, 9 linear attn.)');
  // a mistyped mixer: the core names the key and the allowed values, inline
  await setField(page, 'model.layer_types', '3*linear,fulll');
  await expect.poll(() => text(page, '#f-model-layer_types-err')).toMatch(/not allowed \(allowed: full \| sliding/);
  // a valid change reaches the link in the compact form
  await setField(page, 'model.layer_types', 'linear,full');
  await page.waitForFunction(() => location.hash.includes('model.layer_types=linear,full'));
  expect(await text(page, '[data-testid=ranks]')).toMatch(/12 layers \(6 attention, 6 linear attn\.\)/);
});

test('a vision model: the tower in the form, frozen keeps less than trained', async ({ page }) => {
  await open(page, '/#v1/model.preset=gemma-3-4b-vision&training.micro_batch=2');
  expect(await page.isVisible('#f-model-vision-layers'), 'the tower group').toBe(true);
  const trained = (await readings(page)).allocated;
  await page.selectOption('#f-model-vision-train', 'none');
  await page.waitForFunction(
    (before) => document.querySelector('[data-testid=reading-allocated] dd')?.textContent?.trim() !== before,
    trained,
  );
  const frozen = (await readings(page)).allocated;
  expect(Number.parseFloat(frozen), 'a frozen tower keeps no activations, gradients or states').toBeLessThan(
    Number.parseFloat(trained),
  );
});
