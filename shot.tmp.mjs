// usage: node /tmp/shot.mjs <name> <width> <height> <scheme> <hash> [action]
import { chromium } from 'playwright-core';
const [name, w, h, scheme, hash = '', action = ''] = process.argv.slice(2);
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const p = await b.newPage({ viewport: { width: +w, height: +h }, colorScheme: scheme });
p.on('pageerror', (e) => console.log('pageerror', e.message));
await p.goto('http://127.0.0.1:4181/' + hash);
await p.waitForSelector('[data-testid=results]');
await p.waitForTimeout(600);
if (action === 'charts') { await p.click('[data-testid=jump-charts]'); await p.waitForTimeout(300); }
if (action === 'breakdown') { await p.locator('[data-testid=breakdown]').scrollIntoViewIfNeeded(); await p.waitForTimeout(200);
  await p.locator('[data-testid=breakdown]').screenshot({ path: `/tmp/shots/${name}.png` }); await b.close(); process.exit(0); }
if (action === 'reset') { await p.click('[data-testid=reset]'); await p.waitForTimeout(300); }
await p.screenshot({ path: `/tmp/shots/${name}.png` });
await b.close();
