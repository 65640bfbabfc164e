// Sharing: the copied link and the copied CLI command reproduce what the page shows.
import {
  cli,
  cliLine,
  editToPipeline,
  expect,
  open,
  openIn,
  origin,
  readCopied,
  readings,
  test,
  text,
} from './helpers.js';

test('a copied link reproduces the view in a fresh page', async ({ page, newContext }) => {
  await open(page, '/');
  await editToPipeline(page);
  const link = await readCopied(page, 'copy-link');
  expect(link.startsWith(`${origin}/#v1/`), `link ${link}`).toBe(true);
  const want = {
    r: await readings(page),
    peakAt: await text(page, '.peak-at'),
    tp: await page.inputValue('#f-parallel-tp'),
  };
  const p2 = await openIn(await newContext(), link);
  const got = { r: await readings(p2), peakAt: await text(p2, '.peak-at'), tp: await p2.inputValue('#f-parallel-tp') };
  expect(got, 'the fresh page').toEqual(want);
});

test('the copied CLI command prints the numbers the page shows', async ({ page }) => {
  await open(page, '/');
  await editToPipeline(page);
  const command = await readCopied(page, 'copy-cli');
  expect(command.startsWith(`echo '{"version":1}' | npx llmem estimate -`), command).toBe(true);
  const r = await readings(page);
  expect(cli(command), "the CLI prints the page's numbers").toContain(cliLine(r));
});
