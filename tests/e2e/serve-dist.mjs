#!/usr/bin/env node
// dist/ served under a sub-path by a plain static server (GitHub Pages project-site style),
// as the end-to-end tests' second web server and the perf report's server.
//   node tests/e2e/serve-dist.mjs PORT PREFIX
// `POST /__sw-suffix` with a text body appends it to sw.js (publishes a "new version");
// an empty body restores the built sw.js.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const dist = join(dirname(fileURLToPath(import.meta.url)), '../../dist');
const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

/** An http.Server publishing dist/ under `prefix`; unknown paths under it get index.html. */
export function serveDist(prefix) {
  let swSuffix = '';
  return createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === '/__sw-suffix' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        swSuffix = body;
        res.writeHead(204).end();
      });
      return;
    }
    if (!path.startsWith(prefix)) return res.writeHead(404).end();
    let file = join(dist, path.slice(prefix.length) || 'index.html');
    if (!file.startsWith(dist) || !existsSync(file) || statSync(file).isDirectory()) file = join(dist, 'index.html');
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
    });
    if (file.endsWith('sw.js') && swSuffix) return res.end(readFileSync(file, 'utf8') + swSuffix);
    createReadStream(file).pipe(res);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [port, prefix] = process.argv.slice(2);
  if (!port || !prefix?.startsWith('/') || !prefix.endsWith('/')) {
    console.error('usage: node tests/e2e/serve-dist.mjs PORT /PREFIX/');
    process.exit(2);
  }
  serveDist(prefix).listen(Number(port), '127.0.0.1', () => console.log(`dist/ at http://127.0.0.1:${port}${prefix}`));
}
