// A clone is the whole project: no tracked file may refer to a path outside the repository
// (the design notes and data it was built from now live in docs/ and tests/accuracy/).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';

const root = repoRoot();
const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);

// Built from parts so that this file does not match itself.
const up = '..' + '/';
const sh = 'sha' + 'red';
const FORBIDDEN: [RegExp, string][] = [
  [/\bshared(\/|['"], *['"])(design|reference)\b/, 'the old shared design / reference folder'],
  [/\.\.\/shared\b/, 'the shared folder beside the checkout'],
  [new RegExp('(^|[^\\w.])/' + 'work/'), 'an absolute path of the build machine'],
  [/(^|[^\w.~])\/(home|root|Users)\/\w/, 'an absolute home directory'],
];

/** Each `../` path in a document, resolved from the file's folder, that lands outside the repository
 * (in code, `../` paths are module imports that the build resolves). */
function escapingPaths(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(new RegExp(`(?:${up.replace(/\./g, '\\.')})+[^\\s'"\`)\\]<>,;]*`, 'g'))) {
    const target = relative(root, resolve(root, dirname(file), m[0]));
    if (target === '..' || target.startsWith(`..${sep}`)) out.push(m[0]);
  }
  return out;
}

describe('the repository is self-contained', () => {
  it('no tracked text file refers to a path outside it', () => {
    const problems: string[] = [];
    for (const file of files) {
      const buf = readFileSync(join(root, file));
      if (buf.includes(0)) continue; // binary
      const lines = buf.toString('utf8').split('\n');
      lines.forEach((raw, i) => {
        const line = raw.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, ''); // URLs are fine
        const where = `${file}:${i + 1}`;
        const hit = FORBIDDEN.find(([re]) => re.test(line));
        if (hit) problems.push(`${where}: ${hit[1]}: ${raw.trim()}`);
        if (line.includes(root)) problems.push(`${where}: the repository's absolute path: ${raw.trim()}`);
        if (file.endsWith('.md'))
          for (const p of escapingPaths(file, line)) problems.push(`${where}: ${p} leaves the repository`);
      });
    }
    expect(problems, 'point these at files in the repository (docs/, tests/accuracy/)').toEqual([]);
  });

  it('catches each kind of outside path', () => {
    const bad = (file: string, line: string) =>
      FORBIDDEN.some(([re]) => re.test(line)) || (file.endsWith('.md') && escapingPaths(file, line).length > 0);
    expect(bad('core/model.c', ` * (${up}${sh}/reference/memory-model.md §3) */`)).toBe(true);
    expect(bad('tests/x.ts', `join(root, '..', '${sh}', 'reference', 'm.json')`)).toBe(true);
    expect(bad('README.md', `see [the spec](${up}spec.md)`)).toBe(true);
    expect(bad('scripts/x.sh', 'cd /' + 'work/main')).toBe(true);
    expect(bad('probe/x.py', `# in the shape of ${up}${sh}/m.json`)).toBe(true);
    expect(bad('docs/a.md', `see [config](${up}docs/config.md) and ${up}README.md`)).toBe(false);
    expect(bad('tests/js/a.ts', `import { x } from '${up}${up}wasm/llmem.js';`)).toBe(false);
  });
});
