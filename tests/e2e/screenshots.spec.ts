// Screenshots into tests/out/screenshots/: desktop 1280x900 and phone 390x844, light and dark;
// the page, the planner's panels, the Import and Export dialogs, the drop target, a MoE pipeline.
import { join } from 'node:path';
import { jobDone, open, openImport, openTab, PROBE_OUTPUT, root, setField, shots, test } from './helpers.js';

const DEVICES = [
  ['desktop', { width: 1280, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const;

for (const [device, viewport] of DEVICES)
  for (const colorScheme of ['light', 'dark'] as const)
    test(`screenshots: ${device} ${viewport.width}x${viewport.height}, ${colorScheme}`, async ({ newContext }) => {
      test.setTimeout(120_000);
      const phone = device === 'phone';
      const c = await newContext({
        viewport,
        colorScheme,
        deviceScaleFactor: phone ? 2 : 1,
        isMobile: phone,
        hasTouch: phone,
      });
      const p = await open(await c.newPage(), '/');
      const shot = (name: string) => join(shots, `${device}-${colorScheme}${name}.png`);
      await p.waitForSelector('[data-testid=timeline] canvas');
      await p.addStyleTag({ content: '.toast{display:none!important}' }); // the transient "offline ready" toast
      await p.waitForTimeout(150);
      await p.screenshot({ path: shot('') });
      // full page: let the results column (its own scroll area on a desktop) run to its end
      await p.addStyleTag({
        content: '.results{position:static!important;max-height:none!important;overflow:visible!important}',
      });
      await p.screenshot({ path: shot('-full'), fullPage: true });
      if (phone) await p.locator('#results').screenshot({ path: shot('-results') });
      // the planner's panels
      await p.addStyleTag({ content: '.header,.summary{position:static!important}' });
      const card = p.locator('[data-testid=planner]');
      await openTab(p, 'sweep');
      await jobDone(p, 'sweep');
      await p.waitForTimeout(150);
      await card.screenshot({ path: shot('-planner-sweep') });
      await openTab(p, 'search');
      await p.fill('#search-gpus', '64');
      await p.waitForSelector('[data-testid=layout-row]', { timeout: 15000 });
      await p.waitForTimeout(150);
      await card.screenshot({ path: shot('-planner-search') });
      await p.click('[data-testid=pin-a]');
      await setField(p, 'parallel.tp', 2);
      await setField(p, 'training.seq_len', 8192);
      await p.waitForTimeout(150);
      await card.screenshot({ path: shot('-planner-compare') });
      await openTab(p, 'measured');
      await p.setInputFiles('[data-testid=measure-file]', PROBE_OUTPUT);
      await p.waitForSelector('[data-testid=measured-table]');
      await p.waitForTimeout(150);
      await p.locator('#results').screenshot({ path: shot('-planner-measured') });
      // the Import dialog (a Hugging Face config.json, then malformed input) and the Export dialog
      await openImport(p);
      await p.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/hf/qwen2.5-7b.json'));
      await p.waitForSelector('[data-testid=import-preview]');
      await p.waitForTimeout(150);
      await p.screenshot({ path: shot('-import') });
      await p.fill('[data-testid=import-text]', '{"model_type": "llama", "hidden_size": 4096,');
      await p.waitForSelector('[data-testid=import-error]');
      await p.screenshot({ path: shot('-import-error') });
      await p.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/torchtitan/llama3_8b.toml'));
      await p.waitForSelector('[data-testid=import-world]');
      await p.waitForTimeout(150);
      await p.screenshot({ path: shot('-import-torchtitan') });
      await p.click('[data-testid=import-dialog-close]');
      await p.click('[data-testid=export]');
      await p.click('[data-testid=export-megatron]');
      await p.waitForFunction(() =>
        /--tensor-model-parallel-size/.test(
          (document.querySelector('[data-testid=export-text]') as HTMLTextAreaElement | null)?.value ?? '',
        ),
      );
      await p.waitForTimeout(150);
      await p.screenshot({ path: shot('-export') });
      await p.click('[data-testid=export-dialog-close]');
      if (device === 'desktop' && colorScheme === 'light') {
        // the page-wide drop target while a file is dragged over
        await p.evaluate(() => {
          const dt = new DataTransfer();
          dt.items.add(new File(['{}'], 'config.json', { type: 'application/json' }));
          document
            .querySelector('.layout')!
            .dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        });
        await p.waitForSelector('[data-testid=page-drop]');
        await p.screenshot({ path: shot('-drop') });
        await p.evaluate(() => document.dispatchEvent(new DragEvent('dragleave', { bubbles: true })));
        await p.waitForSelector('[data-testid=page-drop]', { state: 'detached' });
      }
      if (device === 'desktop') {
        await p.goto(
          '/#v1/model.preset=mixtral-8x7b&parallel.gpus=32&parallel.tp=2&parallel.pp=4&parallel.ep=4&parallel.engine=megatron&training.grad_accum=8',
        );
        await p.waitForSelector('[data-testid=timeline] canvas');
        await p.addStyleTag({
          content: '.results{position:static!important;max-height:none!important;overflow:visible!important}',
        });
        await p.waitForTimeout(150);
        await p.screenshot({ path: shot('-moe-full'), fullPage: true });
      }
    });
