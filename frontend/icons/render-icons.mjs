// Renders public/favicon.svg to the PNG icons of the web manifest with headless
// Chromium (run once after changing the SVG: node frontend/icons/render-icons.mjs).
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const root = new URL('../../', import.meta.url).pathname;
const svg = readFileSync(join(root, 'public/favicon.svg'), 'utf8');
const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'llmem-icons-')), {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const page = await browser.newPage();
const shots = [
  ['icon-192.png', 192, 0, 'transparent'],
  ['icon-512.png', 512, 0, 'transparent'],
  // maskable: the whole square filled, the mark inside the 80 % safe zone
  ['icon-maskable-512.png', 512, 0.12, '#1d2330'],
];
for (const [name, size, pad, bg] of shots) {
  await page.setViewportSize({ width: size, height: size });
  const inner = Math.round(size * (1 - 2 * pad));
  await page.setContent(
    `<body style="margin:0;background:${bg};display:grid;place-items:center;width:${size}px;height:${size}px">` +
      `<div style="width:${inner}px;height:${inner}px">${svg.replace('<svg ', `<svg width="${inner}" height="${inner}" `)}</div></body>`,
  );
  await page.screenshot({ path: join(root, 'public', name), omitBackground: bg === 'transparent' });
}
await browser.close();
console.log('wrote public/icon-192.png, icon-512.png, icon-maskable-512.png');
