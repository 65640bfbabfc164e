// The page: Preact + the wasm core (build/wasm/llmem_core.mjs, one file with
// the wasm inlined), a precaching service worker, relative asset URLs so that
// dist/ works from any sub-path (GitHub Pages project sites, HF static Spaces).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import preact from '@preact/preset-vite';
import { VitePWA } from 'vite-plugin-pwa';
import type { Plugin } from 'vite';

const core = fileURLToPath(new URL('./build/wasm/llmem_core.mjs', import.meta.url));
const plannerWorker = fileURLToPath(new URL('./frontend/worker.ts', import.meta.url));

/** The page never shows the catalogs' citations and checked totals, nor what an old preset revision changed or a
 * GPU's fp16 peak (the CLI and the tests read the full files): leave them out of dist/. */
const CITATIONS = new Set([
  'source',
  'params_total_source',
  'notes',
  'params_total',
  'params_active',
  'why',
  'changed',
  'fp16_tflops',
]);
const dropCitations: Plugin = {
  name: 'llmem-drop-catalog-citations',
  enforce: 'pre',
  apply: 'build',
  transform(code, id) {
    if (!/frontend\/config\/catalog\/(models|gpus)\.json$/.test(id)) return null;
    return JSON.stringify(JSON.parse(code), (k, v) => (CITATIONS.has(k) ? citedId(k, v) : v));
  },
};

/** Of a model's source, the Hugging Face id it names ("HF org/name"): the importers match model ids by it
 * (frontend/config/importers/common.ts); the rest of the citation is left out. */
function citedId(key: string, value: unknown): string | undefined {
  const hf = key === 'source' && typeof value === 'string' ? /\bHF [\w.-]+\/[\w.-]+/.exec(value)?.[0] : undefined;
  return hf;
}

/**
 * The planner Worker (frontend/worker.ts) as a second entry of the page's own build, not a bundle of its own:
 * the code both run (the typed core wrapper, the planner, the config layer) is one shared chunk, so a first
 * visit downloads it once. The page's `new Worker(new URL('./worker.ts', import.meta.url))` (which the dev
 * server serves as it is) points at the emitted entry instead of Vite's separately bundled worker.
 */
const WORKER_SPAWN = "new URL('./worker.ts', import.meta.url)";
const workerEntry = (): Plugin => {
  let ref = '';
  return {
    name: 'llmem-worker-entry',
    enforce: 'pre',
    apply: 'build',
    buildStart() {
      ref = this.emitFile({ type: 'chunk', id: plannerWorker, name: 'worker' });
    },
    transform(code, id) {
      if (!/frontend\/worker-client\.ts$/.test(id)) return null;
      if (!code.includes(WORKER_SPAWN)) this.error(`worker-client.ts no longer spawns its Worker with ${WORKER_SPAWN}`);
      return code.replace(WORKER_SPAWN, `new URL(import.meta.ROLLUP_FILE_URL_${ref})`);
    },
  };
};

export default defineConfig({
  base: './',
  resolve: {
    // frontend imports '../wasm/llmem_core.mjs' (typed by wasm/llmem_core.d.mts); the file is built by `npm run build:core`
    alias: [{ find: /^(\.\.\/)+wasm\/llmem_core\.mjs$/, replacement: core }],
  },
  plugins: [
    dropCitations,
    workerEntry(),
    preact(),
    VitePWA({
      registerType: 'prompt',
      injectRegister: false,
      manifestFilename: 'manifest.webmanifest',
      manifest: {
        name: 'llmem: LLM training memory per GPU',
        short_name: 'llmem',
        description: 'Per-GPU memory of LLM training, simulated step by step in your browser.',
        start_url: './',
        scope: './',
        display: 'standalone',
        background_color: '#ffffff',
        theme_color: '#2f5d8a',
        icons: [
          { src: 'icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: 'icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: 'icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
          { src: 'favicon.svg', sizes: 'any', type: 'image/svg+xml' },
        ],
      },
      workbox: {
        // every asset, the wasm included (inlined in the core's .mjs, or a separate .wasm if the build changes)
        globPatterns: ['**/*.{js,mjs,css,html,wasm,svg,png,webmanifest,json}'],
        globIgnores: ['.vite/**'],
        navigateFallback: 'index.html',
        cleanupOutdatedCaches: true,
        maximumFileSizeToCacheInBytes: 8 * 1024 * 1024,
      },
    }),
  ],
  build: {
    // dist/.vite/manifest.json: the chunk graph scripts/first-load.mjs reads (what a first visit loads, what is lazy)
    manifest: true,
    rolldownOptions: {
      output: {
        // the core module is an asset that the page and the Worker import by URL: published as .js (every host serves it as JavaScript)
        assetFileNames: (a) =>
          (a.names?.[0] ?? a.name ?? '').endsWith('.mjs') ? 'assets/[name]-[hash].js' : 'assets/[name]-[hash][extname]',
        // what the page and the planner Worker both run (the core's loader, the planner and what they import: the
        // typed core wrapper, the config layer, the catalog; Vite's helper for lazy chunks) in one chunk, with the
        // fields' relevance the page's first render and the lazy panels share (a chunk of its own cost ~0.2 KB gzip)
        codeSplitting: {
          groups: [
            {
              name: 'planner',
              test: /frontend[\\/](planner|core-urls|config[\\/]relevance)\.ts$|vite[\\/]preload-helper/,
            },
          ],
        },
      },
    },
    // Vite preloads a lazy chunk's imports by adding <link> elements: none in the Worker (no document there).
    // No polyfill: a browser without <link rel=modulepreload> (Safari < 17) loads the same modules on import.
    modulePreload: {
      polyfill: false,
      resolveDependencies: (_file, deps, { hostId }) => (/^assets\/worker-/.test(hostId) ? [] : deps),
    },
    target: 'es2022',
    // terser (two compress passes, ES modules) over Vite's default minifier: 0.4 KB gzip less on the first
    // load, which is held to its 150 KB budget (tests/e2e/hosting.spec.ts); the build takes a few seconds more
    minify: 'terser',
    terserOptions: { module: true, compress: { passes: 2 } },
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 400,
  },
  preview: { host: '127.0.0.1', port: 4173 },
  test: {
    include: ['tests/js/**/*.test.ts'],
    environment: 'node',
    // searches and CLI processes take seconds on a loaded 2-core machine; no test asserts a time
    testTimeout: 60_000,
  },
});
