// The Import dialog (config v1, a Hugging Face config.json by picker and by drop, a config with
// the DeepSpeed JSON it names, malformed input, torchtitan) and the Export dialog (Megatron
// arguments, DeepSpeed, config v1 download).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  dropOnPage,
  expect,
  fixture,
  importTorchtitan,
  numberOf,
  open,
  openImport,
  readings,
  reset,
  root,
  selectedText,
  test,
  text,
  unlabelled,
  waitHash,
} from './helpers.js';

test('import config v1: a broken file changes nothing, a good one replaces the config', async ({ page }) => {
  await open(page, '/');
  const good = await readings(page);
  await openImport(page);
  await page.setInputFiles('[data-testid=import-file]', {
    name: 'broken.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"parallel": {"tp": 2}'),
  });
  await page.waitForSelector('[data-testid=import-error]');
  expect(await text(page, '[data-testid=import-error]'), 'import message').toMatch(/not valid JSON/);
  expect(await page.isDisabled('[data-testid=import-apply]'), 'Apply enabled on broken input').toBe(true);
  await page.click('[data-testid=import-dialog-close]');
  await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
  expect(await readings(page), 'import kept the result').toEqual(good);
  await openImport(page);
  await page.setInputFiles('[data-testid=import-file]', {
    name: 'ok.json',
    mimeType: 'application/json',
    buffer: Buffer.from(
      '{"version":1,"model":{"preset":"qwen2.5-7b"},"parallel":{"tp":2},"hardware":{"gpu":"h100-sxm-80gb"}}',
    ),
  });
  await page.waitForSelector('[data-testid=import-preview]');
  expect(await selectedText(page, '[data-testid=import-kind]'), 'config v1 detected').toMatch(/config v1/);
  await page.click('[data-testid=import-apply]');
  await waitHash(page, '#v1/model.preset=qwen2.5-7b&parallel.tp=2');
});

test('import: a Hugging Face config.json by file picker and by drop; malformed JSON changes nothing; torchtitan', async ({
  page,
}) => {
  await open(page, '/');
  const peak0 = await text(page, '[data-testid=peak]');
  // file picker
  await openImport(page);
  await page.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/hf/qwen2.5-7b.json'));
  await page.waitForSelector('[data-testid=import-preview]');
  expect(await selectedText(page, '[data-testid=import-kind]'), 'kind detected').toMatch(
    /Detected: Hugging Face config\.json/,
  );
  expect(await text(page, '[data-testid=import-notes]'), 'notes list').toMatch(/sliding_window/);
  expect(await page.locator('[data-testid=import-unsupported]').count(), 'unsupported list').toBe(1);
  expect(await text(page, '[data-testid=import-model]'), 'model name in the preview').toMatch(/qwen2\.5-7b/);
  expect(await text(page, '[data-testid=import-changes]'), 'changes list').toMatch(/model\.layers/);
  expect(
    await unlabelled(page, 'dialog input:not([hidden]), dialog select, dialog textarea'),
    'unlabelled in the dialog',
  ).toEqual([]);
  expect(await text(page, '[data-testid=peak]'), 'the preview changed the page').toBe(peak0);
  await page.click('[data-testid=import-apply]');
  await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
  // the hint first says "your own architecture" with the old count, then the Worker's estimate brings the new one
  await page.waitForFunction(
    () => /7\.6\d B parameters/.test(document.querySelector('.picker .hint')?.textContent ?? ''),
    null,
    {
      timeout: 10000,
    },
  );
  expect(await page.inputValue('#f-model-preset'), 'custom model expected').toBe('');
  expect(await page.inputValue('#f-model-layers'), 'Qwen2.5 7B layers').toBe('28');
  expect(await numberOf(page, '#f-model-hidden'), 'Qwen2.5 7B width').toBe(3584);
  expect(await text(page, '.picker .hint'), 'parameter count').toMatch(/7\.6\d B parameters/);
  expect(await text(page, '[data-testid=peak]'), 'peak unchanged').not.toBe(peak0);
  expect(await text(page, '[data-testid=share-status]'), 'status line').toMatch(/Imported qwen2\.5-7b\.json/);
  // drop on the page: the dialog opens with the file
  await reset(page);
  await dropOnPage(page, 'qwen2.5-7b.json', fixture('hf/qwen2.5-7b.json'));
  await page.waitForSelector('[data-testid=import-dialog][open] [data-testid=import-preview]');
  await page.click('[data-testid=import-apply]');
  await page.waitForFunction(
    () => (document.querySelector('#f-model-layers') as HTMLInputElement | null)?.value === '28',
  );
  // malformed JSON pasted: an inline message, Apply off, nothing changes
  await reset(page);
  const good = await readings(page);
  await openImport(page);
  await page.fill('[data-testid=import-text]', '{"model_type": "llama", "hidden_size": 4096,');
  await page.waitForSelector('[data-testid=import-error]');
  expect(await text(page, '[data-testid=import-error]'), 'message').toMatch(/not valid JSON/);
  expect(await page.isDisabled('[data-testid=import-apply]'), 'Apply enabled').toBe(true);
  await page.keyboard.press('Escape');
  await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
  await page.waitForTimeout(200);
  expect(await readings(page), 'malformed input changed the numbers').toEqual(good);
  expect(await page.evaluate(() => location.hash), 'malformed input changed the link').toBe('');
  // torchtitan: world size asked, training and parallel keys replaced
  await importTorchtitan(page);
  expect(await numberOf(page, '#f-training-seq_len'), 'seq_len').toBe(8192);
  expect(await page.inputValue('#f-training-recompute'), 'recompute').toBe('per_op');
  expect(await page.inputValue('#f-parallel-gpus'), 'gpus').toBe('16');
});

test("import on the built page matches a model id by the Hugging Face id of the preset's source (the build drops the rest of the citation)", async ({
  page,
}) => {
  await open(page, '/');
  await openImport(page);
  // Lightning-AI/litgpt config_hub/finetune/tiny-llama/lora.yaml: checkpoint_dir TinyLlama/TinyLlama-1.1B-...
  await page.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/real/litgpt/tiny-llama-lora.yaml'));
  await page.waitForSelector('[data-testid=import-preview]');
  expect(await page.locator('[data-testid=import-error]').count(), 'refused: "not in the model catalog"').toBe(0);
  expect(await text(page, '[data-testid=import-model]'), 'the preset of its HF id').toMatch(/TinyLlama 1\.1B/);
});

test('import a training tool llmem does not read: named inline, nothing to apply', async ({ page }) => {
  await open(page, '/');
  await openImport(page);
  await page.setInputFiles('[data-testid=import-file]', {
    name: 'megatron_gpt_config.yaml', // NVIDIA/NeMo examples/nlp/language_modeling/conf (its sections)
    mimeType: 'text/yaml',
    buffer: Buffer.from(
      'name: megatron_gpt\ntrainer:\n  devices: 1\nexp_manager:\n  name: x\nmodel:\n  hidden_size: 768\n',
    ),
  });
  await page.waitForSelector('[data-testid=import-error]');
  expect(await text(page, '[data-testid=import-error]'), 'the tool named').toMatch(/NeMo 1\.x config.*does not import/);
  expect(await page.isDisabled('[data-testid=import-apply]'), 'Apply enabled').toBe(true);
});

test('import: a config and the DeepSpeed JSON it names, chosen together and dropped together', async ({ page }) => {
  const dir = join(root, 'tests/fixtures/real/accelerate');
  const yaml = readFileSync(join(dir, 'deepspeed.yaml'), 'utf8');
  const ds = readFileSync(join(dir, 'zero_stage1_config.json'), 'utf8');
  await open(page, '/');
  await openImport(page);
  await page.setInputFiles('[data-testid=import-file]', [
    join(dir, 'zero_stage1_config.json'),
    join(dir, 'deepspeed.yaml'),
  ]);
  await page.waitForSelector('[data-testid=import-preview]');
  expect(await text(page, '[data-testid=import-also]'), 'the second file named').toMatch(/zero_stage1_config\.json/);
  expect(await text(page, '[data-testid=import-unsupported]'), 'nothing left unread').toMatch(/Nothing left out/);
  await page.click('[data-testid=import-apply]');
  await page.waitForFunction(() => location.hash.includes('parallel.zero_stage=1'));
  await reset(page);
  // dropped anywhere on the page, both at once
  await page.evaluate(
    ([y, j]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([y], 'deepspeed.yaml', { type: 'text/yaml' }));
      dt.items.add(new File([j], 'zero_stage1_config.json', { type: 'application/json' }));
      const target = document.querySelector('.layout')!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [yaml, ds] as const,
  );
  await page.waitForSelector('[data-testid=import-also]');
  await page.click('[data-testid=import-also-remove]');
  await page.waitForSelector('[data-testid=import-also]', { state: 'detached' });
  expect(await text(page, '[data-testid=import-unsupported]'), 'alone: the file is not read').toMatch(/was not read/);
});

test('export: Megatron arguments with what they cannot express; DeepSpeed; config v1 download', async ({ page }) => {
  await open(page, '/');
  await importTorchtitan(page);
  await page.click('[data-testid=export]');
  await page.waitForSelector('[data-testid=export-dialog][open]');
  await page.click('[data-testid=export-megatron]');
  await page.waitForFunction(
    () =>
      /--tensor-model-parallel-size/.test(
        (document.querySelector('[data-testid=export-text]') as HTMLTextAreaElement | null)?.value ?? '',
      ),
    null,
    { timeout: 10000 },
  );
  const line = await page.inputValue('[data-testid=export-text]');
  expect(line, 'megatron line').toMatch(/--seq-length 8192/);
  const cannot = await page.$$eval('[data-testid=export-unexpressed] li', (li) => li.map((l) => l.textContent ?? ''));
  expect(
    cannot.some((c) => /training\.recompute/.test(c)),
    `cannot express: ${cannot}`,
  ).toBe(true);
  await page.click('[data-testid=export-copy]');
  expect(await page.evaluate(() => navigator.clipboard.readText()), 'copied text').toBe(line);
  await page.click('[data-testid=export-deepspeed]');
  await page.waitForFunction(() =>
    /zero_optimization/.test(
      (document.querySelector('[data-testid=export-text]') as HTMLTextAreaElement | null)?.value ?? '',
    ),
  );
  await page.click('[data-testid=export-config]');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-download]')]);
  const saved = JSON.parse(readFileSync(await download.path(), 'utf8'));
  expect(download.suggestedFilename(), 'download name').toBe('llmem-config.json');
  expect(saved.training?.seq_len, `downloaded ${JSON.stringify(saved)}`).toBe(8192);
  await page.click('[data-testid=export-dialog-close]');
  await page.waitForSelector('[data-testid=export-dialog]', { state: 'detached' });
});

test('import a TRL config whose keys do not tell its trainer: refused until the Trainer is chosen', async ({
  page,
}) => {
  await open(page, '/');
  await openImport(page);
  // huggingface/trl@f2cd5771 examples/cli_configs/example_config.yaml (run as `trl sft --config`)
  await page.setInputFiles('[data-testid=import-file]', {
    name: 'example_config.yaml',
    mimeType: 'text/yaml',
    buffer: Buffer.from(
      'model_name_or_path:\n  Qwen/Qwen2.5-0.5B\ndataset_name:\n  stanfordnlp/imdb\nreport_to:\n  none\nlearning_rate:\n  0.0001\nlr_scheduler_type:\n  cosine\n',
    ),
  });
  await page.waitForSelector('[data-testid=import-error]');
  expect(await selectedText(page, '[data-testid=import-kind]'), 'detected as TRL').toMatch(/TRL/);
  expect(await text(page, '[data-testid=import-error]'), 'asks for the trainer').toMatch(/give the trainer/);
  expect(await page.isDisabled('[data-testid=import-apply]'), 'Apply off while the trainer is unknown').toBe(true);
  await page.selectOption('[data-testid=import-trainer]', 'sft');
  await page.waitForSelector('[data-testid=import-preview]');
  expect(await text(page, '[data-testid=import-model]'), 'SFT of Qwen2.5 0.5B').toMatch(/Qwen2\.5 0\.5B/);
  expect(
    await unlabelled(page, 'dialog input:not([hidden]), dialog select, dialog textarea'),
    'unlabelled in the dialog',
  ).toEqual([]);
  await page.click('[data-testid=import-apply]');
  await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
});

test('import a file whose model id the catalog lacks: refused, or the rest with the current model kept', async ({
  page,
}) => {
  await open(page, '/');
  await openImport(page);
  await page.fill(
    '[data-testid=import-text]',
    'base_model: org/Foo-7B\nadapter: lora\nlora_r: 16\nmicro_batch_size: 2\nsequence_len: 4096\n',
  );
  await page.waitForSelector('[data-testid=import-error]');
  expect(await text(page, '[data-testid=import-error]'), 'names the key').toMatch(/base_model: "org\/Foo-7B"/);
  expect(await page.isDisabled('[data-testid=import-apply]'), 'Apply off').toBe(true);
  await page.check('[data-testid=import-keep-model] input');
  await page.waitForSelector('[data-testid=import-preview]');
  expect(await text(page, '[data-testid=import-model]'), 'the page model kept').toMatch(/Llama 3\.1 8B/);
  expect(await page.isChecked('[data-testid=import-keep-model] input'), 'the choice stays visible').toBe(true);
  await page.click('[data-testid=import-apply]');
  await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
  await page.waitForFunction(() => location.hash.includes('training.micro_batch=2'));
});
