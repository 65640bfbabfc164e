// `llmem --help` and `llmem <command> --help` (issue 16, item 4): each command's help is its own,
// written from the command table that parseArgs reads too; an unknown command is exit 2, --help or not.
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';
import { HELP_OPTION, parseCommandArgs } from '../../bin/args.js';
import { COMMAND_NAMES, COMMANDS, commandHelp, overview, WIDTH } from '../../bin/commands.js';
import { formatGiB as pageGiB } from '../../frontend/format.js';
import { formatGiB } from '../../frontend/config/numbers.js';

const root = repoRoot();
const cli = (args: string[], input?: string) =>
  spawnSync('node', [join(root, 'bin/llmem.mjs'), ...args], { cwd: root, input, encoding: 'utf8', timeout: 30_000 });
/** The same, run side by side (the help of every command, with several spellings). */
const cliAsync = (args: string[]) =>
  new Promise<{ status: number; stdout: string; stderr: string }>((done) =>
    execFile('node', [join(root, 'bin/llmem.mjs'), ...args], { cwd: root, timeout: 30_000 }, (e, stdout, stderr) =>
      done({ status: e ? (e.code as number) : 0, stdout, stderr }),
    ),
  );
/** Text as the help wraps it: any run of spaces and line breaks as one space. */
const flat = (s: string) => s.replace(/\s+/g, ' ');
const allowed = (c: (typeof COMMANDS)[number]) => [...c.options, HELP_OPTION].map((o) => `--${o.name}`).join(', ');

describe('the command table', () => {
  it('holds every command once, each with a summary, usage, what it does and an example', () => {
    expect(new Set(COMMAND_NAMES).size).toBe(COMMANDS.length);
    expect(COMMAND_NAMES).toEqual(
      expect.arrayContaining(['estimate', 'compare', 'sweep', 'fit', 'search', 'suggest', 'import', 'export']),
    );
    for (const c of COMMANDS) {
      expect(c.summary.length, c.name).toBeGreaterThan(10);
      expect(c.usage[0].startsWith(`llmem ${c.name}`), c.name).toBe(true);
      expect(c.about.length, c.name).toBeGreaterThan(20);
      expect(c.examples.length, c.name).toBeGreaterThan(0);
      for (const e of c.examples) expect(e, c.name).toContain('llmem ');
    }
  });

  it('is what parseArgs reads: every option of a command is accepted, and only those', () => {
    for (const c of COMMANDS) {
      for (const o of c.options) {
        const p = parseCommandArgs(o.arg ? [`--${o.name}`, '1'] : [`--${o.name}`], c.options, (m) => new Error(m));
        if (!o.arg) expect(p.flags.has(o.name), `${c.name} --${o.name}`).toBe(true);
        else if (o.repeat) expect(p.repeated[o.name], `${c.name} --${o.name}`).toEqual(['1']);
        else expect(p.values[o.name], `${c.name} --${o.name}`).toBe('1');
      }
      expect(() => parseCommandArgs(['--no-such-option'], c.options, (m) => new Error(m))).toThrow(
        `unknown option --no-such-option (allowed: ${allowed(c)})`,
      );
    }
  });
});

describe('llmem <command> --help', () => {
  it('is written from the table: usage, what it does, each option with its default, examples', () => {
    for (const c of COMMANDS) {
      const help = commandHelp(c);
      const lines = help.split('\n');
      expect(lines[0], c.name).toBe(`usage: ${c.usage[0]}`);
      for (const u of c.usage) expect(help, c.name).toContain(u);
      expect(flat(help), c.name).toContain(flat(c.about));
      for (const o of [...c.options, HELP_OPTION]) {
        const line = lines.find((l) => l.startsWith(`  --${o.name}`) || l.startsWith(`  -h, --${o.name}`));
        expect(line, `${c.name} --${o.name}`).toBeDefined();
        if (o.arg) expect(line, `${c.name} --${o.name}`).toContain(`<${o.arg}>`);
        expect(flat(help), `${c.name} --${o.name}`).toContain(flat(o.help));
        if (o.default !== undefined || o.defaultText)
          expect(flat(help), `${c.name} --${o.name}`).toContain(`default: ${o.defaultText ?? String(o.default)}`);
      }
      for (const e of c.examples) expect(lines, c.name).toContain(`  ${e}`);
      // a terminal of 80 columns shows it unwrapped; and it is no longer the whole usage
      for (const l of lines) expect(l.length, `${c.name}: ${l}`).toBeLessThanOrEqual(WIDTH);
      for (const other of COMMANDS.filter((o) => o !== c && o.name !== 'help'))
        expect(help, `${c.name} shows ${other.name}`).not.toContain(other.usage[0]);
    }
  });

  it('every command prints its help and exits 0 (--help, -h, llmem help <command>)', async () => {
    const runs = COMMANDS.flatMap((c) =>
      [
        [c.name, '--help'],
        [c.name, '-h'],
        ['help', c.name],
        [c.name, 'x.json', '--top', '--help'], // --help wins over any other argument
      ].map(async (args) => ({ c, args, r: await cliAsync(args) })),
    );
    for (const { c, args, r } of await Promise.all(runs)) {
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toBe(`${commandHelp(c)}\n`);
      expect(r.stderr, args.join(' ')).toBe('');
    }
  });

  it('every command parses by its row of the table (an unknown option lists that row)', async () => {
    const runs = COMMANDS.map(async (c) => ({ c, r: await cliAsync([c.name, '--no-such-option']) }));
    for (const { c, r } of await Promise.all(runs)) {
      expect(r.status, c.name).toBe(2);
      expect(r.stderr.split('\n')[0], c.name).toBe(`llmem: unknown option --no-such-option (allowed: ${allowed(c)})`);
      expect(r.stderr, c.name).toContain(`usage: ${c.usage[0]}`);
      expect(r.stderr, c.name).toContain(`llmem ${c.name} --help`);
    }
  });
});

describe('llmem --help', () => {
  it('is a short overview: each command with its summary, and where the details are', () => {
    const text = overview();
    for (const c of COMMANDS)
      expect(text).toMatch(new RegExp(`^ {2}${c.name} +${c.summary.replace(/[.()]/g, '\\$&')}$`, 'm'));
    expect(text).toContain('llmem <command> --help');
    expect(text.split('\n').length).toBeLessThan(35);
    for (const l of text.split('\n')) expect(l.length, l).toBeLessThanOrEqual(WIDTH);
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = cli(args);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toBe(`${text}\n`);
    }
  });
  it('no command at all: the overview on stderr, exit 2', () => {
    const r = cli([]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${overview()}\n`);
  });
  it('--version prints the version', () => {
    expect(cli(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('an unknown command (exit 2, naming the commands)', () => {
  for (const args of [
    ['bogus'],
    ['bogus', '--help'],
    ['bogus', '-h'],
    ['help', 'bogus'],
    ['bogus', 'run.json', '--json'],
  ])
    it(`llmem ${args.join(' ')}`, () => {
      const r = cli(args);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toBe('llmem: unknown command "bogus"');
      expect(flat(r.stderr)).toContain(`commands: ${COMMAND_NAMES.join(', ')}`);
      expect(r.stderr).toContain('llmem --help');
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    });
  it('an option where the command goes', () => {
    const r = cli(['--bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(/^llmem: unknown option --bogus/);
  });
});

describe('one GiB formatter', () => {
  it('the page and the CLI print bytes with the same function', () => {
    expect(pageGiB).toBe(formatGiB);
    expect(formatGiB(47093649408)).toBe('43.86 GiB');
    expect(formatGiB(Number.NaN)).toBe('– GiB');
  });
});
