// The planner: largest fit and step time, sweeps and layout searches in the Web Worker,
// A/B comparison, and the measured overlay; every number as the CLI prints it.
import { join } from 'node:path';
import {
  cliJson,
  expect,
  GIB,
  gib,
  grouped,
  jobDone,
  open,
  openTab,
  PAGE_CONFIG,
  PROBE_OUTPUT,
  readings,
  root,
  setField,
  shots,
  test,
  text,
  waitHash,
} from './helpers.js';

test('headline: largest micro-batch and sequence that fit (as `llmem fit`), margin input, step time', async ({
  page,
}) => {
  await open(page, '/');
  const want = cliJson('fit -', PAGE_CONFIG).largest;
  // the bisections run in the Worker: the headline shows '—' until they answer
  await page.waitForSelector('[data-testid=fit-mb] dd button', { timeout: 5000 });
  await page.waitForSelector('[data-testid=fit-seq] dd button', { timeout: 5000 });
  const mb = (await text(page, '[data-testid=fit-mb] dd')).trim(),
    seq = (await text(page, '[data-testid=fit-seq] dd')).trim();
  expect(
    mb.startsWith(grouped(want['training.micro_batch'])),
    `micro-batch ${mb}, CLI ${want['training.micro_batch']}`,
  ).toBe(true);
  expect(seq.startsWith(grouped(want['training.seq_len'])), `sequence ${seq}, CLI ${want['training.seq_len']}`).toBe(
    true,
  );
  await page.fill('[data-testid=free-margin]', '25');
  const want25 = cliJson('fit - --free 0.25', PAGE_CONFIG).largest;
  await page.waitForFunction(
    (v) => document.querySelector('[data-testid=fit-seq] dd')!.textContent!.startsWith(v),
    grouped(want25['training.seq_len']),
    { timeout: 3000 },
  );
  await page.fill('[data-testid=free-margin]', '10');
  await page.waitForFunction(
    (v) => document.querySelector('[data-testid=fit-seq] dd')!.textContent!.startsWith(v),
    grouped(want['training.seq_len']),
    { timeout: 3000 },
  );
  const step = await text(page, '[data-testid=step-time]');
  expect(step, 'step time').toMatch(/estimate/i);
  expect(step, 'step time').toMatch(/\d+(\.\d+)?\s*(s|ms) per step/);
  expect(step, 'step time').toMatch(/tokens\/s per GPU/);
  // where the time goes: the largest parts first (FSDP over 8 GPUs: matmuls, then the rest)
  expect(await text(page, '[data-testid=step-parts]'), 'step parts').toMatch(/^matmuls \d+ %( · [a-zA-Z -]+ \d+ %)+$/);
  // clicking the sequence applies it
  await page.click('[data-testid=fit-seq] button');
  await waitHash(page, `#v1/training.seq_len=${want['training.seq_len']}`, 3000);
});

test('planner: a sweep runs in the Worker and draws (numbers as `llmem sweep`)', async ({ page }) => {
  await open(page, '/');
  await openTab(page, 'sweep');
  const st = await jobDone(page, 'sweep');
  expect(st.where, 'where the sweep ran').toBe('worker');
  expect(
    page.workers().some((w) => /worker/.test(w.url())),
    `no planner worker among ${page.workers().map((w) => w.url())}`,
  ).toBe(true);
  await page.waitForSelector('[data-testid=sweep-chart] canvas');
  expect(Number(st.count), 'points').toBe(64);
  // the readout names where it stops fitting; the CLI agrees
  const cliPts = cliJson('sweep - --axis training.seq_len --from 1024 --to 131072 --points 64', PAGE_CONFIG).points;
  const stop = cliPts.find((p: { ok: boolean; fits: boolean }) => p.ok && !p.fits);
  expect(await text(page, '[data-testid=sweep-readout]'), `CLI stops at ${stop.value}`).toContain(
    `stops fitting at ${grouped(stop.value)}`,
  );
  // hover a point: its numbers are the CLI's
  const box = (await page.locator('[data-testid=sweep-chart] .u-over').boundingBox())!;
  await page.mouse.move(box.x + 2, box.y + box.height / 2);
  const first = await text(page, '[data-testid=sweep-readout]');
  expect(first, 'hovered point').toContain(`allocated ${gib(cliPts[0].peak_allocated_bytes)}`);
  expect(first, 'hovered point').toContain(`nvidia-smi ${gib(cliPts[0].device_used_bytes)}`);
  await page.mouse.move(0, 0);
  // categorical axis
  await page.selectOption('#sweep-axis', 'training.recompute');
  await page.waitForFunction(
    () =>
      (document.querySelector('[data-testid=sweep-status]') as HTMLElement).dataset.count === '4' &&
      (document.querySelector('[data-testid=sweep-status]') as HTMLElement).dataset.status === 'done',
  );
  // invalid points listed with their reason
  await page.selectOption('#sweep-axis', 'parallel.tp');
  await page.selectOption('#sweep-spacing', 'linear');
  await page.fill('#sweep-to', '8');
  await page.fill('#sweep-points', '8');
  await page.waitForFunction(
    () =>
      (document.querySelector('[data-testid=sweep-status]') as HTMLElement).dataset.count === '8' &&
      (document.querySelector('[data-testid=sweep-status]') as HTMLElement).dataset.status === 'done',
  );
  await page.click('[data-testid=sweep-invalid] summary');
  const inv = await text(page, '[data-testid=sweep-invalid]');
  expect(inv, 'invalid list').toMatch(/3, 5, 6, 7/);
  expect(inv, 'invalid list').toMatch(/divisible|divide/);
});

test('planner: a search for 64 GPUs runs in the Worker, lists layouts (as `llmem search`), a click loads one', async ({
  page,
}) => {
  await open(page, '/');
  await openTab(page, 'search');
  await page.fill('#search-gpus', '64');
  await page.waitForFunction(
    () => {
      const d = (document.querySelector('[data-testid=search-status]') as HTMLElement).dataset;
      return (
        d.status === 'done' &&
        d.count !== '0' &&
        /64 GPUs|\b64\b/.test((document.querySelector('#search-gpus') as HTMLInputElement).value)
      );
    },
    null,
    { timeout: 20000 },
  );
  const st = await page.evaluate(() => ({
    ...(document.querySelector('[data-testid=search-status]') as HTMLElement).dataset,
  }));
  expect(st.where, 'where the search ran').toBe('worker');
  const want = cliJson('search - --gpus 64 --top 5', PAGE_CONFIG).layouts;
  const rows = await page.$$eval('[data-testid=layout-row]', (trs) =>
    trs.slice(0, 5).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())),
  );
  const headers = await page.$$eval('.layout-table thead th', (ths) =>
    ths.map((th) => th.textContent!.replace(/[▲▼]/g, '').trim()),
  );
  const col = (name: string) => headers.indexOf(name);
  for (let i = 0; i < 5; i++) {
    const r = rows[i],
      w = want[i];
    expect(
      [r[col('DP')], r[col('TP')], r[col('PP')], r[col('GiB')], r[col('Step s')]],
      `row ${i}: page ${r.join(' ')}`,
    ).toEqual([
      String(w.dp),
      String(w.tp),
      String(w.pp),
      (w.device_used_bytes / GIB).toFixed(2),
      w.step_seconds.toFixed(3),
    ]);
  }
  expect(await page.locator('[data-testid=layout-scatter] canvas').count(), 'scatter drawn').toBeGreaterThan(0);
  // sort by memory, then load the smallest
  await page.click('[data-testid=sort-device_used_bytes]');
  const before = await readings(page);
  await page.locator('[data-testid=layout-row]').nth(0).click();
  await page.waitForFunction(() => /parallel\.gpus=64/.test(location.hash), null, { timeout: 3000 });
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText() (the rendered text), not the DOM property
  const memCell = await page.locator('[data-testid=layout-row]').nth(0).locator('td').nth(col('GiB')).innerText();
  // the loaded config's estimate may still be running in the Worker: wait for its reading
  await expect
    .poll(async () => (await readings(page)).device, { message: 'the loaded layout is the row', timeout: 10000 })
    .toBe(`${memCell.trim()} GiB`);
  expect((await readings(page)).device, 'loading a layout changed nothing').not.toBe(before.device);
  await page.waitForSelector('[data-testid=layout-row][aria-current=true]');
  // the list did not re-run (same search)
  expect(
    await page.getAttribute('[data-testid=search-status]', 'data-status'),
    'search re-ran after loading a layout',
  ).toBe('done');
});

test('planner: pin A, change, A/B shows both and the difference', async ({ page }) => {
  await open(page, '/');
  await page.click('[data-testid=pin-a]');
  await page.waitForSelector('[data-testid=ab-table]');
  await setField(page, 'training.seq_len', 8192);
  // B's numbers are the new config's once the panel is no longer busy: the changes list follows the edit at once,
  // and where the estimate runs in the Worker (after a slow one here), B stays the previous result until it answers
  await page.waitForFunction(
    () =>
      /Sequence length/.test(document.querySelector('[data-testid=ab-changes]')!.textContent!) &&
      !document.querySelector('[data-testid=compare-panel][aria-busy]'),
    null,
    { timeout: 5000 },
  );
  const dev = await page.locator('[data-testid=ab-row-device_used_bytes] td').allInnerTexts();
  const a = cliJson('estimate -', PAGE_CONFIG).per_gpu.device_used_bytes,
    b = cliJson('estimate -', { ...PAGE_CONFIG, training: { seq_len: 8192 } }).per_gpu.device_used_bytes;
  expect(dev.slice(0, 2), `A/B vs CLI ${gib(a)} ${gib(b)}`).toEqual([(a / GIB).toFixed(2), (b / GIB).toFixed(2)]);
  expect(dev[2], 'difference').toMatch(/^\+/);
  const act = await page.locator('[data-testid=ab-row-activations] td').allInnerTexts();
  expect(act[2], 'activations difference').toMatch(/^\+/);
  expect(await page.locator('[data-testid=ab-A] .stackbar .seg').count(), 'breakdown bar A').toBeGreaterThanOrEqual(4);
  expect(await page.locator('[data-testid=ab-B] .stackbar .seg').count(), 'breakdown bar B').toBeGreaterThanOrEqual(4);
  await page.click("text=Load A's config");
  // the default config again; the link keeps the open tab and the pinned A (issue 13)
  await waitHash(page, '#v1/view.tab=compare&view.a=');
  await page.click('text=Clear A');
});

/** The page's Worker answers to estimates, held while `window.heldEstimates` is a list, until `releaseEstimates()`. */
function holdEstimates() {
  const w = window as unknown as { heldEstimates: (() => void)[] | null; releaseEstimates(): void };
  w.heldEstimates = null;
  w.releaseEstimates = () => {
    const held = w.heldEstimates ?? [];
    w.heldEstimates = null;
    for (const f of held) f();
  };
  const onmessage = Object.getOwnPropertyDescriptor(Worker.prototype, 'onmessage')!;
  Object.defineProperty(Worker.prototype, 'onmessage', {
    ...onmessage,
    set(this: Worker, fn: ((e: MessageEvent) => void) | null) {
      onmessage.set!.call(this, (e: MessageEvent) => {
        if (w.heldEstimates && e.data?.kind === 'estimate') w.heldEstimates.push(() => fn?.call(this, e));
        else fn?.call(this, e);
      });
    },
  });
}

test("planner: A/B while the Worker computes B: B is marked as updating, then shows B's own numbers", async ({
  page,
}) => {
  await page.addInitScript(holdEstimates);
  // a pipeline of 8 stages: its estimates run in the Worker
  const deep = { model: { preset: 'llama-3.1-70b' }, parallel: { gpus: 64, pp: 8, engine: 'megatron' } };
  await open(page, '/#v1/model.preset=llama-3.1-70b&parallel.gpus=64&parallel.pp=8&parallel.engine=megatron');
  await page.click('[data-testid=pin-a]');
  await page.waitForSelector('[data-testid=ab-table]');
  await page.evaluate(() => ((window as unknown as { heldEstimates: unknown[] }).heldEstimates = []));
  await setField(page, 'training.seq_len', 8192);
  await page.waitForFunction(() =>
    /Sequence length/.test(document.querySelector('[data-testid=ab-changes]')!.textContent!),
  );
  // the Worker's answer is held: the settings changed, B is still the previous result, and says so
  expect(await page.getAttribute('[data-testid=compare-panel]', 'aria-busy'), 'B updating').toBe('true');
  expect(await page.getAttribute('[data-testid=ab-B]', 'class')).toContain('stale');
  const dev = () => page.locator('[data-testid=ab-row-device_used_bytes] td').allInnerTexts();
  const held = await dev();
  expect(held[1], 'B is the previous result until the answer').toBe(held[0]);
  await page.evaluate(() => (window as unknown as { releaseEstimates(): void }).releaseEstimates());
  await page.waitForSelector('[data-testid=compare-panel]:not([aria-busy])');
  const a = cliJson('estimate -', deep).per_gpu.device_used_bytes,
    b = cliJson('estimate -', { ...deep, training: { seq_len: 8192 } }).per_gpu.device_used_bytes;
  expect((await dev()).slice(0, 2), `A/B vs CLI ${gib(a)} ${gib(b)}`).toEqual([
    (a / GIB).toFixed(2),
    (b / GIB).toFixed(2),
  ]);
  expect(await page.getAttribute('[data-testid=ab-B]', 'class')).not.toContain('stale');
});

test('measured: loading the probe output shows the measured table (as `llmem compare`) and overlays', async ({
  page,
}) => {
  await open(page, '/');
  await openTab(page, 'measured');
  await page.setInputFiles('[data-testid=measure-file]', {
    name: 'broken.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"measured": {'),
  });
  await page.waitForFunction(
    () =>
      /broken\.json: not valid JSON/.test(document.querySelector('[data-testid=measure-message]')?.textContent ?? ''),
    null,
    { timeout: 3000 },
  );
  await page.setInputFiles('[data-testid=measure-file]', {
    name: 'nothing.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"hello": 1}'),
  });
  await page.waitForFunction(
    () =>
      /nothing\.json: no measurement found/.test(
        document.querySelector('[data-testid=measure-message]')?.textContent ?? '',
      ),
    null,
    { timeout: 3000 },
  );
  await page.setInputFiles('[data-testid=measure-file]', PROBE_OUTPUT);
  await page.waitForSelector('[data-testid=measured-table]');
  // the loaded config's estimate may run in the Worker: its numbers are there once the panel is no longer busy
  await page.waitForSelector('[data-testid=measured-panel]:not([aria-busy])');
  expect(await page.locator('[data-testid=measure-message]').count(), 'message left after a good file').toBe(0);
  const rows = await page.$$eval('[data-testid=measured-table] tbody tr', (trs) =>
    trs.map((tr) => [...tr.children].map((c) => c.textContent!.trim())),
  );
  const want = cliJson(`compare ${JSON.stringify(PROBE_OUTPUT)}`, {}).rows;
  expect(rows.length, 'rows as the CLI').toBe(want.length);
  rows.forEach((r, i) => {
    const w = want[i];
    const err = w.error === null ? '' : `${w.error > 0 ? '+' : '−'}${Math.abs(w.error * 100).toFixed(1)} %`;
    expect(r.slice(1, 4), `row ${w.name}`).toEqual([
      (w.estimated / GIB).toFixed(2),
      w.measured === null ? 'n/a' : (w.measured / GIB).toFixed(2),
      err,
    ]);
  });
  const loaded =
    /model\.preset=llama-3\.2-1b/.test(await page.evaluate(() => location.hash)) ||
    (await page.inputValue('#f-model-preset')) === 'llama-3.2-1b';
  expect(loaded, 'the probe config was loaded').toBe(true);
  expect(
    await page.locator('[data-testid=breakdown] [data-testid=measured-mark]').count(),
    'measured marks on the breakdown',
  ).toBe(3);
  expect(await text(page, '[data-testid=timeline-measured-key]'), 'timeline measured key').toMatch(
    /forward 16\.00 GiB · backward 20\.00 GiB · optimizer 19\.00 GiB/,
  );
  await page.locator('[data-testid=timeline]').screenshot({ path: join(shots, 'desktop-light-measured-timeline.png') });
  // drop works too
  await page.evaluate(async () => {
    const dt = new DataTransfer();
    dt.items.add(new File(['{"device_used_bytes": 26843545600}'], 'dropped.json', { type: 'application/json' }));
    document
      .querySelector('[data-testid=measure-drop]')!
      .dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction(
    () => /dropped\.json/.test(document.querySelector('[data-testid=measured-panel]')!.textContent!),
    null,
    { timeout: 3000 },
  );
  await page.click('[data-testid=measured-panel] .measured-head button');
});

test('measured: a memory series (probe/snapshot_to_json.py) is drawn over the simulated step, aligned by phase', async ({
  page,
}) => {
  await open(page, '/#v1/model.preset=llama-3.2-1b');
  await openTab(page, 'measured');
  await page.setInputFiles('[data-testid=measure-file]', join(root, 'tests/fixtures/snapshot-series.json'));
  await page.waitForSelector('[data-testid=timeline-measured-curve]');
  expect(await text(page, '[data-testid=timeline-measured-curve]')).toMatch(/aligned by phase/);
  await page.locator('[data-testid=timeline]').screenshot({ path: join(shots, 'desktop-light-measured-series.png') });
});

test('measured: a row the probe measured on a GPU (fake process group) loads with its config, its origin and its curves', async ({
  page,
}) => {
  // a committed probe row: rank 0 of 8-way FSDP2 measured on an H200 through the fake process group
  const row = join(root, 'tests/measured/probe-h200-fake-llama-3.1-8b-fsdp2-dp8-full-s4096-b1.json');
  await open(page, '/');
  await openTab(page, 'measured');
  await page.setInputFiles('[data-testid=measure-file]', row);
  await page.waitForSelector('[data-testid=measured-table]');
  await page.waitForSelector('[data-testid=measured-panel]:not([aria-busy])');
  expect(await text(page, '[data-testid=measured-origin]')).toMatch(
    /llmem probe \(fake process group, rank 0 of 8\) on NVIDIA H200 .*no NCCL buffers/,
  );
  const cells = await page.$$eval('[data-testid=measured-table] tbody tr', (trs) =>
    trs.map((tr) => [...tr.children].map((c) => c.textContent!.trim())),
  );
  const want = cliJson(`compare ${JSON.stringify(row)}`, {}).rows;
  expect(cells.length, 'rows as the CLI').toBe(want.length);
  want.forEach((w: { name: string; estimated: number; measured: number | null }, i: number) => {
    expect(cells[i].slice(1, 3), `row ${w.name}`).toEqual([
      (w.estimated / GIB).toFixed(2),
      w.measured === null ? 'n/a' : (w.measured / GIB).toFixed(2),
    ]);
  });
  // the measured allocated and reserved series over the simulated timeline
  await page.waitForSelector('[data-testid=timeline-measured-curve]');
  expect(await text(page, '[data-testid=timeline-measured-curve]')).toMatch(/aligned by phase/);
  await page
    .locator('[data-testid=timeline]')
    .screenshot({ path: join(shots, 'desktop-light-measured-probe-row.png') });
});
