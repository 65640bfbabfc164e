// End-to-end tests of the built page (dist/, from `npm run build`) in Debian's
// headless Chromium (`npx playwright install` is not available here):
//   npm run build && npx playwright test
//   CHROMIUM=/path/to/chrome npx playwright test
// Two servers: `vite preview` at the root, and a plain static server that
// publishes dist/ under a sub-path (GitHub Pages project-site style).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';

const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync('dist/index.html')) throw new Error('dist/index.html is missing: run `npm run build` first');
if (!existsSync(executablePath))
  throw new Error(`Chromium not found at ${executablePath} (apt-get install -y chromium, or set CHROMIUM)`);

/** A free port, chosen once by the runner; its workers inherit it through the environment. */
function freePort(name: string): number {
  if (!process.env[name]) {
    const script =
      "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})";
    process.env[name] = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim();
  }
  return Number(process.env[name]);
}
const port = freePort('LLMEM_E2E_PORT');
const subPort = freePort('LLMEM_E2E_SUB_PORT');
/** Where the second server publishes dist/ (tests/e2e/helpers.ts reads it back). */
const subPrefix = (process.env.LLMEM_E2E_SUB_PREFIX ??= '/llmem/deep/sub-path/');

export default defineConfig({
  testDir: 'tests/e2e',
  testMatch: '*.spec.ts',
  outputDir: 'tests/out/playwright',
  workers: 2,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    viewport: { width: 1280, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
    launchOptions: {
      executablePath,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: [
    {
      command: `node node_modules/vite/bin/vite.js preview --host 127.0.0.1 --port ${port} --strictPort`,
      url: `http://127.0.0.1:${port}/`,
      reuseExistingServer: false,
      timeout: 20_000,
    },
    {
      command: `node tests/e2e/serve-dist.mjs ${subPort} ${subPrefix}`,
      url: `http://127.0.0.1:${subPort}${subPrefix}`,
      reuseExistingServer: false,
      timeout: 20_000,
    },
  ],
});
