import { chromium } from 'playwright-core';
const link = process.argv[2],
  out = process.argv[3],
  w = Number(process.argv[4] ?? 1280),
  dark = process.argv[5] === 'dark';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const p = await b.newPage({ viewport: { width: w, height: 2400 }, colorScheme: dark ? 'dark' : 'light' });
await p.goto(`http://127.0.0.1:4179/${link}`);
await p.waitForTimeout(2500);
const open = await p.$('text=Layer kinds');
if (open) await open.click().catch(() => {});
await p.waitForTimeout(500);
await p.screenshot({ path: out, fullPage: true });
await b.close();
