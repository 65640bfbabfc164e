// The DOM-free layer (frontend/config/, frontend/planner.ts, wasm/) is shared by the page, the
// Worker and the CLI, so it may import only itself and packages, never the page's UI modules.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';

const root = repoRoot();
const LAYER_DIRS = ['frontend/config', 'wasm'];
const LAYER_FILES = ['frontend/planner.ts'];
const SOURCE = /\.(ts|mts|tsx)$/;
// Packages the page brings and the layer must not (a UI framework, its state library).
const PAGE_PACKAGES = /^(preact|@preact\/|uplot|virtual:pwa|vite-plugin-pwa)/;

function walk(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    return e.isDirectory() ? walk(path) : SOURCE.test(e.name) ? [path] : [];
  });
}

const layerFiles = [...LAYER_DIRS.flatMap(walk), ...LAYER_FILES];

/** The module specifiers of a source text: static imports and re-exports, side-effect imports, dynamic and type imports. */
function importSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, // import x from 'm', export { x } from 'm'
    /\bimport\s*['"]([^'"]+)['"]/g, // import 'm'
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, // import('m'), typeof import('m')
  ];
  return patterns.flatMap((re) => [...code.matchAll(re)].map((m) => m[1]));
}

/** The repository path a relative specifier names (a `.js` import of a `.ts` / `.tsx` source resolved to it). */
function target(file: string, spec: string): string {
  const abs = resolve(root, dirname(file), spec);
  const candidates = [abs, abs.replace(/\.js$/, '.ts'), abs.replace(/\.js$/, '.tsx'), abs.replace(/\.mjs$/, '.mts')];
  return relative(root, candidates.find((c) => existsSync(c)) ?? abs)
    .split(sep)
    .join('/');
}

const inLayer = (path: string) => LAYER_FILES.includes(path) || LAYER_DIRS.some((d) => path.startsWith(`${d}/`));

/** Why an import breaks the layer, or undefined when it is fine. */
function violation(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return PAGE_PACKAGES.test(spec) ? 'a page-only package' : undefined;
  const path = target(file, spec);
  if (path.endsWith('.tsx')) return `${path}: a .tsx component`;
  if (path.startsWith('frontend/app/')) return `${path}: a page component`;
  if (path === 'frontend/fields.ts') return `${path}: the form's labels and units`;
  if (!inLayer(path)) return `${path}: outside frontend/config/, frontend/planner.ts and wasm/`;
  return undefined;
}

describe('the DOM-free layer', () => {
  it('finds the files to check', () => {
    expect(layerFiles).toContain('frontend/config/formats.ts');
    expect(layerFiles).toContain('wasm/llmem.ts');
    expect(layerFiles.length).toBeGreaterThan(20);
  });

  it('reads every kind of import statement', () => {
    const text = [
      "import { a } from '../fields.js';",
      "import type {\n  B,\n  C,\n} from '../app/App.js';",
      "export { d } from './d.js';",
      "import './side.js';",
      "const m = await import('../state.js');",
      "type F = typeof import('./f.js');",
      "// import { no } from './comment.js';",
      "/* import { no } from './block.js'; */",
      "const s = 'from nowhere';",
    ].join('\n');
    expect(importSpecifiers(text).sort()).toEqual([
      '../app/App.js',
      '../fields.js',
      '../state.js',
      './d.js',
      './f.js',
      './side.js',
    ]);
  });

  it('flags the page modules', () => {
    expect(violation('frontend/config/formats.ts', '../fields.js')).toMatch(/labels/);
    expect(violation('frontend/config/formats.ts', '../app/App.js')).toMatch(/\.tsx|page component/);
    expect(violation('frontend/config/formats.ts', '../state.js')).toMatch(/outside/);
    expect(violation('frontend/planner.ts', 'preact/hooks')).toMatch(/page-only package/);
    expect(violation('frontend/config/formats.ts', './doc.js')).toBeUndefined();
    expect(violation('frontend/planner.ts', '../wasm/llmem.js')).toBeUndefined();
  });

  it('imports nothing from the page (frontend/app/, frontend/fields.ts, .tsx, state) or its packages', () => {
    const problems: string[] = [];
    for (const file of layerFiles) {
      for (const spec of importSpecifiers(readFileSync(join(root, file), 'utf8'))) {
        const why = violation(file, spec);
        if (why) problems.push(`${file} imports '${spec}' (${why})`);
      }
    }
    expect(problems).toEqual([]);
  });
});
