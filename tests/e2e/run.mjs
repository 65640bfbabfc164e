#!/usr/bin/env node
// End-to-end tests of the built page (dist/, from `npm run build`) in headless
// Chromium: default view, edits, share link, CLI parity, bad input, offline
// reload through the service worker, sub-path hosting, no foreign requests;
// the planner (largest fit, step time, sweeps and layout searches in the Web
// Worker, A/B, measured overlay); the Import dialog (HF config.json by picker
// and by drop, malformed input, torchtitan) and the Export dialog (Megatron
// arguments, config v1 download), lazily loaded and offline too. Saves
// screenshots to tests/out/screenshots/ and prints a size (first load and the
// lazy importer chunk), latency and planner benchmark report. Builds nothing. Last line: "N passed, N failed"; exit 1 on failure.
//
//   npm run build && node tests/e2e/run.mjs
//   CHROMIUM=/path/to/chrome node tests/e2e/run.mjs
import { execSync, spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const dist = join(root, 'dist');
const shots = join(root, 'tests/out/screenshots');
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let passed = 0, failed = 0;
const report = [];
async function test(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n     ${String(e?.stack ?? e).split('\n').slice(0, 4).join('\n     ')}`);
  }
}
function assert(cond, message) {
  if (!cond) throw new Error(message);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${url} did not answer within ${ms} ms`);
}

/** dist/ served under a sub-path by a plain static server (GitHub Pages project-site style). */
let swSuffix = ''; // appended to sw.js to publish a "new version"
function subPathServer(prefix) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.webmanifest': 'application/manifest+json', '.json': 'application/json', '.wasm': 'application/wasm' };
  return createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (!path.startsWith(prefix)) return res.writeHead(404).end();
    let file = join(dist, path.slice(prefix.length) || 'index.html');
    if (!file.startsWith(dist) || !existsSync(file) || statSync(file).isDirectory()) file = join(dist, 'index.html');
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
    if (file.endsWith('sw.js') && swSuffix) return res.end(readFileSync(file, 'utf8') + swSuffix);
    createReadStream(file).pipe(res);
  });
}

// ---------------------------------------------------------------------------

if (!existsSync(join(dist, 'index.html'))) {
  console.log('dist/index.html is missing: run `npm run build` first');
  console.log('0 passed, 1 failed');
  process.exit(1);
}
if (!existsSync(executablePath)) {
  console.log(`Chromium not found at ${executablePath} (apt-get install -y chromium, or set CHROMIUM)`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
mkdirSync(shots, { recursive: true });

const port = await freePort();
const vite = spawn(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'pipe'],
});
let viteLog = '';
vite.stdout.on('data', (d) => (viteLog += d));
vite.stderr.on('data', (d) => (viteLog += d));
const origin = `http://127.0.0.1:${port}`;
const subPort = await freePort();
const subPrefix = '/llmem/deep/sub-path/';
const sub = subPathServer(subPrefix);
await new Promise((r) => sub.listen(subPort, '127.0.0.1', r));
const subOrigin = `http://127.0.0.1:${subPort}`;

const browser = await chromium.launch({ executablePath, args: ARGS });
const requests = [];
const pageErrors = [];
async function newContext(options = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  ctx.on('request', (r) => requests.push(r.url()));
  ctx.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`)));
  return ctx;
}
async function open(ctx, url) {
  const page = await ctx.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${url}: ${e.message}`));
  await page.goto(url);
  await page.waitForSelector('[data-testid=peak]', { timeout: 15000 });
  return page;
}
const text = (page, sel) => page.locator(sel).first().innerText();
const readings = async (page) => ({
  allocated: (await text(page, '[data-testid=reading-allocated] dd')).trim(),
  reserved: (await text(page, '[data-testid=reading-reserved] dd')).trim(),
  device: (await text(page, '[data-testid=reading-device] dd')).trim(),
});
async function waitChange(page, sel, before) {
  await page.waitForFunction(([s, b]) => document.querySelector(s)?.textContent !== b, [sel, before], { timeout: 5000 });
}
async function setField(page, path, value) {
  const sel = `#f-${path.replace(/\./g, '-')}`;
  await page.fill(sel, String(value));
}
async function readCopied(page, testid) {
  await page.click(`[data-testid=${testid}]`);
  await page.waitForTimeout(100);
  try {
    const t = await page.evaluate(() => navigator.clipboard.readText());
    if (t) return t;
  } catch {}
  return page.inputValue('.manual-copy input');
}
const cli = (command) =>
  execSync(command.replace('npx llmem', `node ${JSON.stringify(join(root, 'bin/llmem.mjs'))}`), { cwd: root, encoding: 'utf8', shell: '/bin/bash' });
/** `llmem <args> --json` on a config object. */
const cliJson = (args, config) =>
  JSON.parse(execSync(`node ${JSON.stringify(join(root, 'bin/llmem.mjs'))} ${args} --json`, { cwd: root, encoding: 'utf8', input: JSON.stringify(config) }));
const PAGE_CONFIG = { version: 1, model: { preset: 'llama-3.1-8b' }, hardware: { gpu: 'h100-sxm-80gb' } };
const GIB = 2 ** 30;
const gib = (b) => `${(b / GIB).toFixed(2)} GiB`;
const grouped = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
/** Open a planner tab (a second click would close it). */
async function openTab(page, id) {
  if ((await page.getAttribute(`[data-testid=tab-${id}]`, 'aria-selected')) !== 'true') await page.click(`[data-testid=tab-${id}]`);
}
/** Wait for a planner job (sweep | search) to finish; returns its status element's data. */
async function jobDone(page, kind, timeout = 20000) {
  await page.waitForSelector(`[data-testid=${kind}-status][data-status=done]`, { timeout });
  return page.evaluate((k) => ({ ...document.querySelector(`[data-testid=${k}-status]`).dataset }), kind);
}
const fixture = (p) => readFileSync(join(root, 'tests/fixtures/import', p), 'utf8');
/** Open the Import dialog (its importers load on the first open). */
async function openImport(page) {
  await page.click('[data-testid=import]');
  await page.waitForSelector('[data-testid=import-dialog][open]');
  await page.waitForSelector('[data-testid=import-loading]', { state: 'detached', timeout: 10000 });
}
const selectedText = (page, sel) => page.$eval(sel, (el) => el.selectedOptions[0]?.textContent ?? '');
const numberOf = async (page, sel) => Number((await page.inputValue(sel)).replace(/,/g, ''));
/** Drop a file on the page (not on a drop zone of its own), as a person dragging it from the desktop. */
async function dropOnPage(page, name, content, type = 'application/json') {
  await page.evaluate(([n, c, t]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([c], n, { type: t }));
    const target = document.querySelector('.layout');
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [name, content, type]);
}

try {
  await waitForHttp(`${origin}/`);
  const ctx = await newContext();
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  let page;

  await test('default view: Llama 3.1 8B on 8x H100 with FSDP2, numbers and charts', async () => {
    page = await open(ctx, `${origin}/`);
    assert(new URL(page.url()).hash === '', `hash-less URL expected, got ${page.url()}`);
    assert((await page.inputValue('#f-model-preset')) === 'llama-3.1-8b', 'preset');
    assert((await page.inputValue('#f-hardware-gpu')) === 'h100-sxm-80gb', 'gpu');
    assert((await page.inputValue('#f-parallel-engine')) === 'fsdp2', 'engine');
    assert((await page.inputValue('#f-parallel-gpus')) === '8', 'gpus');
    const peak = await text(page, '[data-testid=peak]');
    assert(/\d+\.\d\d\s*GiB\s+of\s+79\.65 GiB/.test(peak), `headline: ${peak}`);
    assert(/Fits|Does not fit/.test(await text(page, '[data-testid=verdict]')), 'verdict');
    await page.waitForSelector('[data-testid=timeline] canvas');
    assert((await page.locator('[data-testid=breakdown] .stackbar .seg').count()) >= 4, 'breakdown segments');
    assert((await page.locator('[data-testid=ranks] li').count()) === 1, 'one stage');
    assert((await page.locator('[data-testid=why] .why-row').count()) >= 4, 'why rows');
    const r = await readings(page);
    const out = cli(`echo '{"model":{"preset":"llama-3.1-8b"},"hardware":{"gpu":"h100-sxm-80gb"}}' | npx llmem estimate -`);
    assert(out.includes(`peak allocated ${r.allocated} | reserved ${r.reserved} | nvidia-smi ${r.device}`), `CLI differs:\n${out}\npage: ${JSON.stringify(r)}`);
  });

  await test('changing TP changes the numbers and the link; arrow keys step it', async () => {
    const before = await text(page, '[data-testid=reading-allocated] dd');
    await setField(page, 'parallel.tp', 2);
    await waitChange(page, '[data-testid=reading-allocated] dd', before);
    await page.waitForFunction(() => location.hash === '#v1/parallel.tp=2', null, { timeout: 3000 });
    await page.focus('#f-parallel-tp');
    await page.keyboard.press('ArrowUp');
    await page.waitForFunction(() => location.hash === '#v1/parallel.tp=4');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => location.hash === '');
  });

  await test('changing the preset changes the numbers and the model fields', async () => {
    const before = await text(page, '[data-testid=reading-allocated] dd');
    await page.selectOption('#f-model-preset', 'llama-3.1-70b');
    await waitChange(page, '[data-testid=reading-allocated] dd', before);
    assert((await page.inputValue('#f-model-layers')) === '80', 'layers of 70B');
    await page.waitForFunction(() => location.hash === '#v1/model.preset=llama-3.1-70b', null, { timeout: 3000 });
    await setField(page, 'parallel.gpus', 64);
    await setField(page, 'parallel.tp', 8);
    await setField(page, 'parallel.pp', 4);
    await page.selectOption('#f-training-recompute', 'full');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=ranks] li').length === 4);
  });

  await test('a copied link reproduces the view in a fresh page', async () => {
    const link = await readCopied(page, 'copy-link');
    assert(link.startsWith(`${origin}/#v1/`), `link ${link}`);
    const want = { r: await readings(page), peakAt: await text(page, '.peak-at'), tp: await page.inputValue('#f-parallel-tp') };
    const fresh = await newContext();
    const p2 = await open(fresh, link);
    const got = { r: await readings(p2), peakAt: await text(p2, '.peak-at'), tp: await p2.inputValue('#f-parallel-tp') };
    assert(JSON.stringify(got) === JSON.stringify(want), `fresh page ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
    await fresh.close();
  });

  await test('the copied CLI command prints the numbers the page shows', async () => {
    const command = await readCopied(page, 'copy-cli');
    assert(command.startsWith(`echo '{"version":1}' | npx llmem estimate -`), command);
    const r = await readings(page);
    const out = cli(command);
    assert(out.includes(`peak allocated ${r.allocated} | reserved ${r.reserved} | nvidia-smi ${r.device}`), `CLI:\n${out}\npage: ${JSON.stringify(r)}`);
  });

  await page.screenshot({ path: join(shots, 'desktop-light-pipeline.png') });

  await test('invalid input: message at the field, last good result stays', async () => {
    await page.click('text=Reset');
    await page.waitForFunction(() => location.hash === '');
    const good = await readings(page);
    await setField(page, 'parallel.tp', 3);
    await page.waitForSelector('[data-testid=error-banner]');
    const msg = await text(page, '.field.has-error .field-error');
    assert(/divisible/.test(msg), `field message: ${msg}`);
    assert((await page.getAttribute('#f-parallel-tp', 'aria-invalid')) === 'true', 'aria-invalid');
    assert(JSON.stringify(await readings(page)) === JSON.stringify(good), 'last good result kept');
    await page.screenshot({ path: join(shots, 'desktop-light-error.png') });
    await setField(page, 'parallel.tp', 1);
    await page.waitForSelector('[data-testid=error-banner]', { state: 'detached' });
    await setField(page, 'training.seq_len', '');
    assert(/enter a value/.test(await text(page, '.field.has-error .field-error')), 'empty field message');
    await setField(page, 'training.seq_len', '4096');
    await page.waitForSelector('[data-testid=error-banner]', { state: 'detached' });
    // broken JSON import (config v1 through the Import dialog): a message, nothing applied
    await openImport(page);
    await page.setInputFiles('[data-testid=import-file]', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"parallel": {"tp": 2}') });
    await page.waitForSelector('[data-testid=import-error]');
    assert(/not valid JSON/.test(await text(page, '[data-testid=import-error]')), 'import message');
    assert(await page.isDisabled('[data-testid=import-apply]'), 'Apply enabled on broken input');
    await page.click('[data-testid=import-dialog-close]');
    await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
    assert(JSON.stringify(await readings(page)) === JSON.stringify(good), 'import kept the result');
    // a good config v1 import replaces the config
    await openImport(page);
    await page.setInputFiles('[data-testid=import-file]', { name: 'ok.json', mimeType: 'application/json', buffer: Buffer.from('{"version":1,"model":{"preset":"qwen2.5-7b"},"parallel":{"tp":2},"hardware":{"gpu":"h100-sxm-80gb"}}') });
    await page.waitForSelector('[data-testid=import-preview]');
    assert(/config v1/.test(await selectedText(page, '[data-testid=import-kind]')), 'config v1 detected');
    await page.click('[data-testid=import-apply]');
    await page.waitForFunction(() => location.hash === '#v1/model.preset=qwen2.5-7b&parallel.tp=2');
    // garbage hash
    const p3 = await open(ctx, `${origin}/#v1/parallel.tp=banana`);
    assert(/not a number/.test(await text(p3, '[data-testid=link-message]')), 'link message');
    assert(JSON.stringify(await readings(p3)) === JSON.stringify(good), 'default view under a bad link');
    await p3.close();
  });

  await test('keyboard: every input has a label, Tab reaches the form', async () => {
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input:not([type=hidden]):not([hidden]), select')].filter((el) => !el.labels?.length && !el.getAttribute('aria-label')).map((el) => el.id || el.outerHTML.slice(0, 60)),
    );
    assert(unlabelled.length === 0, `unlabelled: ${unlabelled.join(', ')}`);
    await page.goto(`${origin}/`);
    await page.waitForSelector('[data-testid=peak]');
    let reached = false;
    for (let i = 0; i < 12 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.id === 'f-model-preset');
    }
    assert(reached, 'Tab did not reach the model preset');
  });

  await test('latency: input change to redrawn chart', async () => {
    const times = await page.evaluate(async () => {
      const el = document.getElementById('f-training-seq_len');
      const out = [];
      for (let i = 0; i < 30; i++) {
        const drawn = new Promise((res) => document.addEventListener('llmem:drawn', res, { once: true }));
        const t0 = performance.now();
        el.value = String(i % 2 ? 4096 : 2048 + 64 * i);
        el.dispatchEvent(new Event('input', { bubbles: true }));
        await drawn;
        out.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 10));
      }
      return out;
    });
    times.sort((a, b) => a - b);
    const med = times[Math.floor(times.length / 2)], p90 = times[Math.floor(times.length * 0.9)];
    report.push(`latency  input change -> redrawn chart: median ${med.toFixed(2)} ms, p90 ${p90.toFixed(2)} ms, max ${times.at(-1).toFixed(2)} ms over ${times.length} edits (budget < 16 ms)`);
  });


  await test('import: a Hugging Face config.json by file picker and by drop; malformed JSON changes nothing; torchtitan', async () => {
    await page.goto(`${origin}/`);
    await page.waitForSelector('[data-testid=peak]');
    const hint0 = await text(page, '.picker .hint');
    const peak0 = await text(page, '[data-testid=peak]');
    // file picker
    await openImport(page);
    await page.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/hf/qwen2.5-7b.json'));
    await page.waitForSelector('[data-testid=import-preview]');
    assert(/Detected: Hugging Face config\.json/.test(await selectedText(page, '[data-testid=import-kind]')), 'kind not detected');
    assert(/sliding_window/.test(await text(page, '[data-testid=import-notes]')), 'notes list');
    assert((await page.locator('[data-testid=import-unsupported]').count()) === 1, 'unsupported list');
    assert(/qwen2\.5-7b/.test(await text(page, '[data-testid=import-model]')), 'model name in the preview');
    assert(/model\.layers/.test(await text(page, '[data-testid=import-changes]')), 'changes list');
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('dialog input:not([hidden]), dialog select, dialog textarea')].filter((el) => !el.labels?.length && !el.getAttribute('aria-label')).map((el) => el.id),
    );
    assert(unlabelled.length === 0, `unlabelled in the dialog: ${unlabelled}`);
    assert(peak0 === (await text(page, '[data-testid=peak]')), 'the preview changed the page');
    await page.click('[data-testid=import-apply]');
    await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
    await waitChange(page, '.picker .hint', hint0);
    assert((await page.inputValue('#f-model-preset')) === '', 'custom model expected');
    assert((await page.inputValue('#f-model-layers')) === '28' && (await numberOf(page, '#f-model-hidden')) === 3584, 'Qwen2.5 7B layers and width');
    assert(/7\.6\d B parameters/.test(await text(page, '.picker .hint')), `parameter count: ${await text(page, '.picker .hint')}`);
    assert(peak0 !== (await text(page, '[data-testid=peak]')), 'peak unchanged');
    assert(/Imported qwen2\.5-7b\.json/.test(await text(page, '[data-testid=share-status]')), 'status line');
    // drop on the page: the dialog opens with the file
    await page.click('text=Reset');
    await page.waitForFunction(() => location.hash === '');
    await dropOnPage(page, 'qwen2.5-7b.json', fixture('hf/qwen2.5-7b.json'));
    await page.waitForSelector('[data-testid=import-dialog][open] [data-testid=import-preview]');
    await page.click('[data-testid=import-apply]');
    await page.waitForFunction(() => document.querySelector('#f-model-layers')?.value === '28');
    // malformed JSON pasted: an inline message, Apply off, nothing changes
    await page.click('text=Reset');
    await page.waitForFunction(() => location.hash === '');
    const good = await readings(page);
    await openImport(page);
    await page.fill('[data-testid=import-text]', '{"model_type": "llama", "hidden_size": 4096,');
    await page.waitForSelector('[data-testid=import-error]');
    assert(/not valid JSON/.test(await text(page, '[data-testid=import-error]')), `message: ${await text(page, '[data-testid=import-error]')}`);
    assert(await page.isDisabled('[data-testid=import-apply]'), 'Apply enabled');
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid=import-dialog]', { state: 'detached' });
    await page.waitForTimeout(200);
    assert(JSON.stringify(await readings(page)) === JSON.stringify(good) && (await page.evaluate(() => location.hash)) === '', 'malformed input changed the page');
    // torchtitan: world size asked, training and parallel keys replaced
    await openImport(page);
    await page.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/torchtitan/llama3_8b.toml'));
    await page.waitForSelector('[data-testid=import-world]');
    await page.fill('[data-testid=import-world]', '16');
    await page.waitForFunction(() => /parallel\.gpus/.test(document.querySelector('[data-testid=import-changes]')?.textContent ?? ''));
    await page.click('[data-testid=import-apply]');
    await page.waitForFunction(() => /training\.seq_len=8192/.test(location.hash));
    assert((await numberOf(page, '#f-training-seq_len')) === 8192, 'seq_len');
    assert((await page.inputValue('#f-training-recompute')) === 'per_op', 'recompute');
    assert((await page.inputValue('#f-parallel-gpus')) === '16', 'gpus');
  });

  await test('export: Megatron arguments with what they cannot express; DeepSpeed; config v1 download', async () => {
    await page.click('[data-testid=export]');
    await page.waitForSelector('[data-testid=export-dialog][open]');
    await page.click('[data-testid=export-megatron]');
    await page.waitForFunction(() => /--tensor-model-parallel-size/.test(document.querySelector('[data-testid=export-text]')?.value ?? ''), null, { timeout: 10000 });
    const line = await page.inputValue('[data-testid=export-text]');
    assert(/--seq-length 8192/.test(line), `megatron line: ${line}`);
    const cannot = await page.$$eval('[data-testid=export-unexpressed] li', (li) => li.map((l) => l.textContent));
    assert(cannot.some((c) => /training\.recompute/.test(c)), `cannot express: ${cannot}`);
    await page.click('[data-testid=export-copy]');
    assert((await page.evaluate(() => navigator.clipboard.readText())) === line, 'copied text');
    await page.click('[data-testid=export-deepspeed]');
    await page.waitForFunction(() => /zero_optimization/.test(document.querySelector('[data-testid=export-text]')?.value ?? ''));
    await page.click('[data-testid=export-config]');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-download]')]);
    const saved = JSON.parse(readFileSync(await download.path(), 'utf8'));
    assert(download.suggestedFilename() === 'llmem-config.json' && saved.training?.seq_len === 8192, `download ${download.suggestedFilename()}: ${JSON.stringify(saved)}`);
    await page.click('[data-testid=export-dialog-close]');
    await page.click('text=Reset');
  });

  await test('headline: largest micro-batch and sequence that fit (as `llmem fit`), margin input, step time', async () => {
    await page.click('text=Reset');
    await page.waitForFunction(() => location.hash === '');
    const want = cliJson('fit -', PAGE_CONFIG).largest;
    const mb = (await text(page, '[data-testid=fit-mb] dd')).trim(), seq = (await text(page, '[data-testid=fit-seq] dd')).trim();
    assert(mb.startsWith(grouped(want['training.micro_batch'])), `micro-batch ${mb}, CLI ${want['training.micro_batch']}`);
    assert(seq.startsWith(grouped(want['training.seq_len'])), `sequence ${seq}, CLI ${want['training.seq_len']}`);
    await page.fill('[data-testid=free-margin]', '25');
    const want25 = cliJson('fit - --free 0.25', PAGE_CONFIG).largest;
    await page.waitForFunction((v) => document.querySelector('[data-testid=fit-seq] dd').textContent.startsWith(v), grouped(want25['training.seq_len']), { timeout: 3000 });
    await page.fill('[data-testid=free-margin]', '10');
    await page.waitForFunction((v) => document.querySelector('[data-testid=fit-seq] dd').textContent.startsWith(v), grouped(want['training.seq_len']), { timeout: 3000 });
    const step = await text(page, '[data-testid=step-time]');
    assert(/estimate/i.test(step) && /\d+(\.\d+)?\s*(s|ms) per step/.test(step) && /tokens\/s per GPU/.test(step), `step time: ${step}`);
    // clicking the sequence applies it
    await page.click('[data-testid=fit-seq] button');
    await page.waitForFunction((v) => location.hash === `#v1/training.seq_len=${v}`, want['training.seq_len'], { timeout: 3000 });
    await page.click('text=Reset');
  });

  await test('planner: a sweep runs in the Worker and draws (numbers as `llmem sweep`)', async () => {
    await page.waitForFunction(() => location.hash === '');
    await openTab(page, 'sweep');
    const st = await jobDone(page, 'sweep');
    assert(st.where === 'worker', `sweep ran on ${st.where}`);
    assert(page.workers().some((w) => /worker/.test(w.url())), `no planner worker among ${page.workers().map((w) => w.url())}`);
    await page.waitForSelector('[data-testid=sweep-chart] canvas');
    assert(Number(st.count) === 64, `points ${st.count}`);
    // the readout names where it stops fitting; the CLI agrees
    const cliPts = cliJson('sweep - --axis training.seq_len --from 1024 --to 131072 --points 64', PAGE_CONFIG).points;
    const stop = cliPts.find((p) => p.ok && !p.fits);
    const readout = await text(page, '[data-testid=sweep-readout]');
    assert(readout.includes(`stops fitting at ${grouped(stop.value)}`), `readout "${readout}", CLI stops at ${stop.value}`);
    // hover a point: its numbers are the CLI's
    const box = await page.locator('[data-testid=sweep-chart] .u-over').boundingBox();
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    const first = await text(page, '[data-testid=sweep-readout]');
    assert(first.includes(`allocated ${gib(cliPts[0].peak_allocated_bytes)}`) && first.includes(`nvidia-smi ${gib(cliPts[0].device_used_bytes)}`), `hover "${first}" vs CLI ${gib(cliPts[0].peak_allocated_bytes)}`);
    await page.mouse.move(0, 0);
    // categorical axis
    await page.selectOption('#sweep-axis', 'training.recompute');
    await page.waitForFunction(() => document.querySelector('[data-testid=sweep-status]').dataset.count === '4' && document.querySelector('[data-testid=sweep-status]').dataset.status === 'done');
    // invalid points listed with their reason
    await page.selectOption('#sweep-axis', 'parallel.tp');
    await page.selectOption('#sweep-spacing', 'linear');
    await page.fill('#sweep-to', '8');
    await page.fill('#sweep-points', '8');
    await page.waitForFunction(() => document.querySelector('[data-testid=sweep-status]').dataset.count === '8' && document.querySelector('[data-testid=sweep-status]').dataset.status === 'done');
    await page.click('[data-testid=sweep-invalid] summary');
    const inv = await text(page, '[data-testid=sweep-invalid]');
    assert(/3, 5, 6, 7/.test(inv) && /divisible|divide/.test(inv), `invalid list: ${inv}`);
    await page.selectOption('#sweep-axis', 'training.seq_len');
  });

  await test('planner: a search for 64 GPUs runs in the Worker, lists layouts (as `llmem search`), a click loads one', async () => {
    await openTab(page, 'search');
    await page.fill('#search-gpus', '64');
    await page.waitForFunction(() => {
      const d = document.querySelector('[data-testid=search-status]').dataset;
      return d.status === 'done' && d.count !== '0' && /64 GPUs|\b64\b/.test(document.querySelector('#search-gpus').value);
    }, null, { timeout: 20000 });
    const st = await page.evaluate(() => ({ ...document.querySelector('[data-testid=search-status]').dataset }));
    assert(st.where === 'worker', `search ran on ${st.where}`);
    const want = cliJson('search - --gpus 64 --top 5', PAGE_CONFIG).layouts;
    const rows = await page.$$eval('[data-testid=layout-row]', (trs) => trs.slice(0, 5).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
    const headers = await page.$$eval('.layout-table thead th', (ths) => ths.map((th) => th.textContent.replace(/[▲▼]/g, '').trim()));
    const col = (name) => headers.indexOf(name);
    for (let i = 0; i < 5; i++) {
      const r = rows[i], w = want[i];
      assert(r[col('DP')] === String(w.dp) && r[col('TP')] === String(w.tp) && r[col('PP')] === String(w.pp) && r[col('GiB')] === (w.device_used_bytes / GIB).toFixed(2) && r[col('Step s')] === w.step_seconds.toFixed(3),
        `row ${i}: page ${r.join(' ')} vs CLI ${JSON.stringify([w.dp, w.tp, w.pp, w.device_used_bytes, w.step_seconds])}`);
    }
    assert((await page.locator('[data-testid=layout-scatter] canvas').count()) > 0, 'scatter drawn');
    // sort by memory, then load the smallest
    await page.click('[data-testid=sort-device_used_bytes]');
    const before = await readings(page);
    await page.locator('[data-testid=layout-row]').nth(0).click();
    await page.waitForFunction(() => /parallel\.gpus=64/.test(location.hash), null, { timeout: 3000 });
    const after = await readings(page);
    assert(after.device !== before.device, 'loading a layout changed nothing');
    const memCell = await page.locator('[data-testid=layout-row]').nth(0).locator('td').nth(col('GiB')).innerText();
    assert(after.device === `${memCell.trim()} GiB`, `loaded ${after.device}, row says ${memCell}`);
    await page.waitForSelector('[data-testid=layout-row][aria-current=true]');
    // the list did not re-run (same search); a point of the scatter loads too
    assert((await page.getAttribute('[data-testid=search-status]', 'data-status')) === 'done', 'search re-ran after loading a layout');
  });

  await test('planner: pin A, change, A/B shows both and the difference', async () => {
    await page.click('text=Reset');
    await page.waitForFunction(() => location.hash === '');
    await page.click('[data-testid=pin-a]');
    await page.waitForSelector('[data-testid=ab-table]');
    await setField(page, 'training.seq_len', 8192);
    await page.waitForFunction(() => /Sequence length/.test(document.querySelector('[data-testid=ab-changes]').textContent), null, { timeout: 3000 });
    const dev = await page.locator('[data-testid=ab-row-device_used_bytes] td').allInnerTexts();
    const a = cliJson('estimate -', PAGE_CONFIG).per_gpu.device_used_bytes, b = cliJson('estimate -', { ...PAGE_CONFIG, training: { seq_len: 8192 } }).per_gpu.device_used_bytes;
    assert(dev[0] === (a / GIB).toFixed(2) && dev[1] === (b / GIB).toFixed(2), `A/B ${dev.join(' | ')} vs CLI ${gib(a)} ${gib(b)}`);
    assert(dev[2].startsWith('+'), `difference ${dev[2]}`);
    const act = await page.locator('[data-testid=ab-row-activations] td').allInnerTexts();
    assert(act[2].startsWith('+'), `activations difference ${act[2]}`);
    assert((await page.locator('[data-testid=ab-A] .stackbar .seg').count()) >= 4 && (await page.locator('[data-testid=ab-B] .stackbar .seg').count()) >= 4, 'two breakdown bars');
    await page.click('text=Load A\'s config');
    await page.waitForFunction(() => location.hash === '');
    await page.click('text=Clear A');
  });

  await test('measured: loading the probe output shows the measured table (as `llmem compare`) and overlays', async () => {
    await openTab(page, 'measured');
    await page.setInputFiles('[data-testid=measure-file]', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"measured": {') });
    await page.waitForFunction(() => /broken\.json: not valid JSON/.test(document.querySelector('[data-testid=measure-message]')?.textContent), null, { timeout: 3000 });
    await page.setInputFiles('[data-testid=measure-file]', { name: 'nothing.json', mimeType: 'application/json', buffer: Buffer.from('{"hello": 1}') });
    await page.waitForFunction(() => /nothing\.json: no measurement found/.test(document.querySelector('[data-testid=measure-message]')?.textContent), null, { timeout: 3000 });
    await page.setInputFiles('[data-testid=measure-file]', join(root, 'tests/fixtures/probe-output.json'));
    await page.waitForSelector('[data-testid=measured-table]');
    assert((await page.locator('[data-testid=measure-message]').count()) === 0, 'message left after a good file');
    const rows = await page.$$eval('[data-testid=measured-table] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));
    const want = cliJson(`compare ${JSON.stringify(join(root, 'tests/fixtures/probe-output.json'))}`, {}).rows;
    assert(rows.length === want.length, `rows ${rows.length} vs ${want.length}`);
    rows.forEach((r, i) => {
      const w = want[i];
      const err = w.error === null ? '' : `${w.error > 0 ? '+' : '−'}${Math.abs(w.error * 100).toFixed(1)} %`;
      assert(r[1] === (w.estimated / GIB).toFixed(2) && r[2] === (w.measured === null ? 'n/a' : (w.measured / GIB).toFixed(2)) && r[3] === err, `row ${w.name}: ${r.join(' | ')} vs ${gib(w.estimated)} ${w.measured} ${err}`);
    });
    assert(/model\.preset=llama-3\.2-1b/.test(await page.evaluate(() => location.hash)) || (await page.inputValue('#f-model-preset')) === 'llama-3.2-1b', 'the probe config was loaded');
    assert((await page.locator('[data-testid=breakdown] [data-testid=measured-mark]').count()) === 3, 'three measured marks on the breakdown');
    assert(/forward 16\.00 GiB · backward 20\.00 GiB · optimizer 19\.00 GiB/.test(await text(page, '[data-testid=timeline-measured-key]')), 'timeline measured key');
    await page.locator('[data-testid=timeline]').screenshot({ path: join(shots, 'desktop-light-measured-timeline.png') });
    // drop works too
    await page.evaluate(async () => {
      const dt = new DataTransfer();
      dt.items.add(new File(['{"device_used_bytes": 26843545600}'], 'dropped.json', { type: 'application/json' }));
      document.querySelector('[data-testid=measure-drop]').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await page.waitForFunction(() => /dropped\.json/.test(document.querySelector('[data-testid=measured-panel]').textContent), null, { timeout: 3000 });
    await page.click('[data-testid=measured-panel] .measured-head button');
    await page.click('text=Reset');
  });

  await test('benchmarks: search over 1024 GPUs and a 1,000-point sweep in the Worker, input latency while a search runs', async () => {
    const c = await newContext();
    const p = await open(c, `${origin}/`);
    // search over 1024 GPUs: the default model, then a heavier one
    for (const [name, hash, batch] of [['Llama 3.1 8B, FSDP2', '', ''], ['Llama 3.1 70B, Megatron, seq 8192', '#v1/model.preset=llama-3.1-70b&parallel.engine=megatron&training.seq_len=8192', '1024'], ['Mixtral 8x7B, Megatron', '#v1/model.preset=mixtral-8x7b&parallel.engine=megatron', '1024']]) {
      await p.evaluate((h) => (location.hash = h), hash);
      await p.waitForTimeout(100);
      await openTab(p, 'search');
      await p.fill('#search-batch', batch);
      await p.fill('#search-gpus', '1024');
      await p.waitForFunction(() => {
        const d = document.querySelector('[data-testid=search-status]').dataset;
        return d.status === 'done' && d.inflight === 'false' && document.querySelector('#search-gpus').value.replace(/,/g, '') === '1024';
      }, null, { timeout: 30000 });
      await p.waitForTimeout(150);
      const d = await p.evaluate(() => ({ ...document.querySelector('[data-testid=search-status]').dataset }));
      report.push(`planner  search over 1024 GPUs (${name}) in the Worker: ${Number(d.ms).toFixed(1)} ms in the core, ${Number(d.roundMs).toFixed(1)} ms request to answer, ${d.count} layouts kept (budget < 1 s)`);
    }
    // input latency while the Mixtral search (the slowest above) runs: each edit cancels it and the next starts 100 ms later
    const lat = await p.evaluate(async () => {
      const el = document.getElementById('f-training-seq_len');
      const status = document.querySelector('[data-testid=search-status]');
      const out = [];
      let during = 0, longTasks = 0;
      const po = new PerformanceObserver((l) => (longTasks += l.getEntries().length));
      try { po.observe({ type: 'longtask' }); } catch {}
      for (let i = 0; i < 16; i++) {
        // wait until a search is really under way in the Worker
        for (let w = 0; w < 100 && status.dataset.inflight !== 'true'; w++) await new Promise((r) => setTimeout(r, 5));
        if (status.dataset.inflight === 'true') during++;
        const drawn = new Promise((res) => document.addEventListener('llmem:drawn', function on(e) {
          if (!e.target.closest('[data-testid=timeline]')) return;
          document.removeEventListener('llmem:drawn', on);
          res();
        }));
        const t0 = performance.now();
        el.value = String(4096 + 256 * (i + 1));
        el.dispatchEvent(new Event('input', { bubbles: true }));
        await drawn;
        out.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 60));
      }
      po.disconnect();
      return { out, during, longTasks };
    });
    lat.out.sort((a, b) => a - b);
    report.push(`planner  input -> redrawn chart while a search runs in the Worker: median ${lat.out[lat.out.length >> 1].toFixed(2)} ms, max ${lat.out.at(-1).toFixed(2)} ms over ${lat.out.length} edits (${lat.during} landed on a running search, ${lat.longTasks} long tasks > 50 ms)`);
    // a 1,000-point sweep
    await p.evaluate(() => (location.hash = ''));
    await p.waitForTimeout(100);
    await openTab(p, 'sweep');
    await jobDone(p, 'sweep');
    await p.selectOption('#sweep-spacing', 'linear');
    await p.fill('#sweep-to', String(1024 + 999 * 128));
    await p.fill('#sweep-points', '1000');
    await p.waitForFunction(() => {
      const d = document.querySelector('[data-testid=sweep-status]').dataset;
      return d.status === 'done' && d.count === '1000';
    }, null, { timeout: 20000 });
    const sw = await p.evaluate(() => ({ ...document.querySelector('[data-testid=sweep-status]').dataset }));
    report.push(`planner  1,000-point sweep (training.seq_len) in the Worker: ${Number(sw.ms).toFixed(1)} ms in the core, ${Number(sw.roundMs).toFixed(1)} ms request to answer (budget < 50 ms)`);
    await p.waitForSelector('[data-testid=sweep-chart] canvas');
    await c.close();
  });

  await test('offline: after one visit the page reloads with the network off', async () => {
    const c = await newContext();
    const p = await open(c, `${origin}/#v1/parallel.tp=2`);
    await p.evaluate(async () => {
      await navigator.serviceWorker.ready;
    });
    const online = await readings(p);
    await c.setOffline(true);
    await p.reload();
    await p.waitForSelector('[data-testid=peak]', { timeout: 15000 });
    assert(await p.evaluate(() => !!navigator.serviceWorker.controller), 'page not controlled by the service worker');
    assert(JSON.stringify(await readings(p)) === JSON.stringify(online), 'offline numbers differ');
    const p2 = await c.newPage();
    await p2.goto(`${origin}/#v1/parallel.tp=4`);
    await p2.waitForSelector('[data-testid=peak]', { timeout: 15000 });
    // the planner's Worker and the core it imports come from the cache too
    assert(/\d/.test(await text(p2, '[data-testid=fit-seq] dd')), 'largest fit offline');
    await openTab(p2, 'search');
    await p2.fill('#search-gpus', '16');
    await p2.waitForSelector('[data-testid=layout-row]', { timeout: 15000 });
    assert((await p2.getAttribute('[data-testid=search-status]', 'data-where')) === 'worker', 'offline search not in the worker');
    await openTab(p2, 'sweep');
    await jobDone(p2, 'sweep');
    await p2.waitForSelector('[data-testid=sweep-chart] canvas');
    await openTab(p2, 'measured');
    await p2.setInputFiles('[data-testid=measure-file]', join(root, 'tests/fixtures/probe-output.json'));
    await p2.waitForSelector('[data-testid=measured-table]');
    // the importers' lazy chunk comes from the cache too: import and export offline
    await openImport(p2);
    await p2.fill('[data-testid=import-text]', fixture('hf/qwen2.5-7b.json'));
    await p2.waitForSelector('[data-testid=import-preview]');
    await p2.click('[data-testid=import-apply]');
    await p2.waitForFunction(() => document.querySelector('#f-model-layers')?.value === '28');
    await p2.click('[data-testid=export]');
    await p2.click('[data-testid=export-torchtitan]');
    await p2.waitForFunction(() => /\[parallelism\]/.test(document.querySelector('[data-testid=export-text]')?.value ?? ''));
    await c.close();
  });

  await test('works from a sub-path (static hosting)', async () => {
    const c = await newContext();
    const p = await open(c, `${subOrigin}${subPrefix}#v1/parallel.tp=2`);
    assert((await p.inputValue('#f-parallel-tp')) === '2', 'tp from the hash');
    const manifest = await p.evaluate(() => fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json()));
    assert(manifest.icons.length >= 3, 'manifest icons');
    await p.evaluate(async () => navigator.serviceWorker.ready);
    const scope = await p.evaluate(async () => (await navigator.serviceWorker.getRegistration()).scope);
    assert(scope === `${subOrigin}${subPrefix}`, `scope ${scope}`);
    await c.close();
  });

  await test('a new version shows a notice; Reload switches to it', async () => {
    const c = await newContext();
    const p = await open(c, `${subOrigin}${subPrefix}`);
    await p.evaluate(async () => navigator.serviceWorker.ready);
    await p.reload();
    await p.waitForSelector('[data-testid=peak]');
    assert(await p.evaluate(() => !!navigator.serviceWorker.controller), 'not controlled');
    swSuffix = `\n// new version ${Date.now()}\n`;
    await p.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
    await p.waitForSelector('[data-testid=update-notice]', { timeout: 10000 });
    await Promise.all([p.waitForEvent('load', { timeout: 10000 }), p.click('[data-testid=update-notice] button:has-text("Reload")')]);
    await p.waitForSelector('[data-testid=peak]');
    swSuffix = '';
    await c.close();
  });

  await test('screenshots: desktop 1280x900 and phone 390x844, light and dark', async () => {
    for (const [device, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]])
      for (const colorScheme of ['light', 'dark']) {
        const c = await newContext({ viewport, colorScheme, deviceScaleFactor: device === 'phone' ? 2 : 1, isMobile: device === 'phone', hasTouch: device === 'phone' });
        const p = await open(c, `${origin}/`);
        await p.waitForSelector('[data-testid=timeline] canvas');
        await p.addStyleTag({ content: '.toast{display:none!important}' }); // the transient "offline ready" toast
        await p.waitForTimeout(150);
        await p.screenshot({ path: join(shots, `${device}-${colorScheme}.png`) });
        // full page: let the results column (its own scroll area on a desktop) run to its end
        await p.addStyleTag({ content: '.results{position:static!important;max-height:none!important;overflow:visible!important}' });
        await p.screenshot({ path: join(shots, `${device}-${colorScheme}-full.png`), fullPage: true });
        if (device === 'phone') await p.locator('#results').screenshot({ path: join(shots, `${device}-${colorScheme}-results.png`) });
        // the planner's panels
        await p.addStyleTag({ content: '.header,.summary{position:static!important}' });
        const card = p.locator('[data-testid=planner]');
        await openTab(p, 'sweep');
        await jobDone(p, 'sweep');
        await p.waitForTimeout(150);
        await card.screenshot({ path: join(shots, `${device}-${colorScheme}-planner-sweep.png`) });
        await openTab(p, 'search');
        await p.fill('#search-gpus', '64');
        await p.waitForSelector('[data-testid=layout-row]', { timeout: 15000 });
        await p.waitForTimeout(150);
        await card.screenshot({ path: join(shots, `${device}-${colorScheme}-planner-search.png`) });
        await p.click('[data-testid=pin-a]');
        await setField(p, 'parallel.tp', 2);
        await setField(p, 'training.seq_len', 8192);
        await p.waitForTimeout(150);
        await card.screenshot({ path: join(shots, `${device}-${colorScheme}-planner-compare.png`) });
        await openTab(p, 'measured');
        await p.setInputFiles('[data-testid=measure-file]', join(root, 'tests/fixtures/probe-output.json'));
        await p.waitForSelector('[data-testid=measured-table]');
        await p.waitForTimeout(150);
        await p.locator('#results').screenshot({ path: join(shots, `${device}-${colorScheme}-planner-measured.png`) });
        // the Import dialog (a Hugging Face config.json, then malformed input) and the Export dialog
        await openImport(p);
        await p.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/hf/qwen2.5-7b.json'));
        await p.waitForSelector('[data-testid=import-preview]');
        await p.waitForTimeout(150);
        await p.screenshot({ path: join(shots, `${device}-${colorScheme}-import.png`) });
        await p.fill('[data-testid=import-text]', '{"model_type": "llama", "hidden_size": 4096,');
        await p.waitForSelector('[data-testid=import-error]');
        await p.screenshot({ path: join(shots, `${device}-${colorScheme}-import-error.png`) });
        await p.setInputFiles('[data-testid=import-file]', join(root, 'tests/fixtures/import/torchtitan/llama3_8b.toml'));
        await p.waitForSelector('[data-testid=import-world]');
        await p.waitForTimeout(150);
        await p.screenshot({ path: join(shots, `${device}-${colorScheme}-import-torchtitan.png`) });
        await p.click('[data-testid=import-dialog-close]');
        await p.click('[data-testid=export]');
        await p.click('[data-testid=export-megatron]');
        await p.waitForFunction(() => /--tensor-model-parallel-size/.test(document.querySelector('[data-testid=export-text]')?.value ?? ''));
        await p.waitForTimeout(150);
        await p.screenshot({ path: join(shots, `${device}-${colorScheme}-export.png`) });
        await p.click('[data-testid=export-dialog-close]');
        if (device === 'desktop' && colorScheme === 'light') {
          await p.evaluate(() => {
            const dt = new DataTransfer();
            dt.items.add(new File(['{}'], 'config.json', { type: 'application/json' }));
            document.querySelector('.layout').dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
          });
          await p.waitForSelector('[data-testid=page-drop]');
          await p.screenshot({ path: join(shots, `${device}-${colorScheme}-drop.png`) });
          await p.evaluate(() => document.dispatchEvent(new DragEvent('dragleave', { bubbles: true })));
          await p.waitForSelector('[data-testid=page-drop]', { state: 'detached' });
        }
        if (device === 'desktop') {
          await p.goto(`${origin}/#v1/model.preset=mixtral-8x7b&parallel.gpus=32&parallel.tp=2&parallel.pp=4&parallel.ep=4&parallel.engine=megatron&training.grad_accum=8`);
          await p.waitForSelector('[data-testid=timeline] canvas');
          await p.addStyleTag({ content: '.results{position:static!important;max-height:none!important;overflow:visible!important}' });
          await p.waitForTimeout(150);
          await p.screenshot({ path: join(shots, `${device}-${colorScheme}-moe-full.png`), fullPage: true });
        }
        await c.close();
      }
  });

  await test('no request leaves the origin, no page errors', async () => {
    const foreign = requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith(`${subOrigin}/`) && !/^(data|blob):/.test(u));
    assert(requests.length > 10, `only ${requests.length} requests recorded`);
    assert(foreign.length === 0, `foreign requests: ${[...new Set(foreign)].join(', ')}`);
    assert(pageErrors.length === 0, `page errors: ${pageErrors.join('; ')}`);
  });
} catch (e) {
  failed++;
  console.log(`FAIL setup: ${e?.stack ?? e}\n${viteLog}`);
} finally {
  await browser.close().catch(() => {});
  vite.kill();
  sub.close();
}

// size report: what a first visit transfers (gzip), wasm included (inlined in the core's JS), and
// the importers / exporters chunk that the page loads when the Import or Export dialog opens
const files = [];
const walk = (d) => {
  for (const f of readdirSync(d)) {
    const p = join(d, f);
    if (statSync(p).isDirectory()) walk(p);
    else if (/\.(js|mjs|css|wasm)$/.test(f)) files.push(p);
  }
};
walk(dist);
const LAZY = /^assets\/formats-[\w-]+\.js$/;
let first = 0, lazy = 0, sw = 0;
const rows = files.map((f) => {
  const gz = gzipSync(readFileSync(f), { level: 9 }).length;
  const rel = relative(dist, f);
  if (/^(sw\.js|workbox-)/.test(rel)) sw += gz;
  else if (LAZY.test(rel)) lazy += gz;
  else first += gz;
  return `  ${rel.padEnd(48)} ${String(statSync(f).size).padStart(8)} B  gzip ${String(gz).padStart(7)} B${LAZY.test(rel) ? '  (lazy)' : ''}`;
});
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
console.log(`\nscreenshots in ${shots}`);
console.log('size (dist/, gzip -9):');
console.log(rows.join('\n'));
console.log(`size     first load (app JS + wasm + CSS): ${kb(first)} gzip (budget <= 150 KB); importers + exporters chunk (lazy, on opening Import / Export): ${kb(lazy)}; total ${kb(first + lazy)}; service worker + workbox: ${kb(sw)}`);
const coreFiles = files.filter((f) => /llmem_core/.test(f));
if (coreFiles.length !== 1) {
  failed++;
  console.log(`FAIL the core module should be one file shared by the page and the Worker, found ${coreFiles.length}`);
}
const lazyFiles = files.map((f) => relative(dist, f)).filter((f) => LAZY.test(f));
const swText = existsSync(join(dist, 'sw.js')) ? readFileSync(join(dist, 'sw.js'), 'utf8') : '';
if (lazyFiles.length !== 1) {
  failed++;
  console.log(`FAIL the importers and exporters should be one lazy chunk (assets/formats-*.js), found ${lazyFiles.length}`);
} else if (!swText.includes(lazyFiles[0])) {
  failed++;
  console.log(`FAIL the service worker does not precache ${lazyFiles[0]} (import would not work offline)`);
}
const eager = files.filter((f) => !LAZY.test(relative(dist, f)) && /\.js$/.test(f) && /unsupported YAML|not a known DeepSpeed key/.test(readFileSync(f, 'utf8')));
if (eager.length) {
  failed++;
  console.log(`FAIL importer code in the first load: ${eager.map((f) => relative(dist, f)).join(', ')}`);
}
if (first / 1024 > 150) {
  failed++;
  console.log(`FAIL first load ${kb(first)} gzip is over the 150 KB budget`);
}
for (const line of report) console.log(line);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
