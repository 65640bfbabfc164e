import { chromium } from 'playwright-core';
const link = process.argv[2],
  out = process.argv[3],
  w = Number(process.argv[4] ?? 1280),
  dark = process.argv[5] === 'dark';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const p = await b.newPage({ viewport: { width: w, height: 2400 }, colorScheme: dark ? 'dark' : 'light' });
await p.goto(`http://127.0.0.1:4179/${link}`);
await p.waitForTimeout(2500);
await p.screenshot({ path: `${out}-model.png`, clip: { x: 0, y: 0, width: Math.min(w, 480), height: 1150 } });
const r = await p.$('[data-testid=ranks]');
if (r) await r.screenshot({ path: `${out}-ranks.png` });
await b.close();
