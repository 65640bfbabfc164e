#!/usr/bin/env node
// The long fuzz run: `npm run fuzz -- --minutes N` (the test command runs it
// briefly with `--seconds 10 --no-js`). Builds the libFuzzer targets
// (ASan + UBSan, clang-14), seeds their corpora deterministically, splits the
// time over them (fork mode: a finding is written and the run goes on), runs
// the seeded Vitest fuzzers with LLMEM_FUZZ_SCALE times their iterations, and
// prints per target: execs, execs/s, coverage, findings. Exit 1 on a finding.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TARGETS = ['fuzz_estimate', 'fuzz_planner'];
// libFuzzer's per-input time limit, seconds (also its slow-unit report). One
// estimate is bounded (issue 12: under 5 ms native, ~10x that under ASan). A
// search runs a full estimate on each of its up to LLMEM_MAX_LAYOUTS (256) kept
// layouts and the oracle estimates them again: 2 x 256 x 5 ms ~ 2.6 s native,
// ~25 s under ASan + UBSan, so its limit is 60 s; a slower input is a finding.
const TIMEOUT_S = { fuzz_estimate: 10, fuzz_planner: 60 };
const BUILD = 'build/fuzz';
const FINDINGS = join(BUILD, 'findings');
// A run shorter than this per target starts from the seed corpus alone, in a
// scratch folder: the long runs' corpus can take longer to replay than a short
// run has (a run with no executions), and the test command's stage should do
// the same work on every machine as on CI's clean clone.
const SHORT_RUN_S = 60;

function usage(message) {
  if (message) console.error(`fuzz: ${message}`);
  console.error('usage: npm run fuzz -- [--minutes N | --seconds S] [--no-js] [--no-c] [--no-coverage]');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { seconds: 600, js: true, c: true, coverage: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--minutes' || a === '--seconds') {
      const n = Number(argv[++i]);
      if (!(n > 0)) usage(`${a} needs a positive number`);
      opts.seconds = a === '--minutes' ? n * 60 : n;
    } else if (a === '--no-js') opts.js = false;
    else if (a === '--no-c') opts.c = false;
    else if (a === '--no-coverage') opts.coverage = false;
    else usage(`unknown argument ${a}`);
  }
  return opts;
}

function run(cmd, args, extra = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...extra });
}

function build(withCoverage) {
  const env = { ...process.env, CC: 'clang-14' };
  const conf = run('cmake', ['-S', '.', '-B', BUILD, '-DLLMEM_FUZZ=ON', '-DCMAKE_BUILD_TYPE=RelWithDebInfo'], { env });
  const all = TARGETS.flatMap((t) => (withCoverage ? [t, `${t}_cov`] : [t]));
  const make = conf.status === 0 && run('cmake', ['--build', BUILD, '--target', ...all, '-j2'], { env });
  if (make?.status !== 0) {
    console.error((make || conf).stdout + (make || conf).stderr);
    console.error('fuzz: building the libFuzzer targets failed (needs clang-14 with libFuzzer)');
    process.exit(1);
  }
}

// xorshift32: the seed corpus is the same on every machine
function rng(seed) {
  return () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
}

function seedCorpus(target, dir) {
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0) return;
  const next = rng(0x11e7 + target.length);
  for (let i = 0; i < 64; i++) {
    const bytes = Buffer.alloc(48 + (next() % 160));
    for (let k = 0; k < bytes.length; k++) bytes[k] = next() & 0xff;
    writeFileSync(join(dir, `seed-${String(i).padStart(2, '0')}`), bytes);
  }
}

// libFuzzer's own counters: "#N: cov: C ft: F corp: K exec/s E ..." (fork
// mode) and "INFO: Loaded 1 modules (M inline 8-bit counters)"
function figures(log) {
  const lines = log.split('\n');
  let execs = 0,
    cov = 0,
    ft = 0,
    corp = 0,
    counters = 0,
    crashes = 0,
    timeouts = 0,
    ooms = 0;
  for (const line of lines) {
    const m = /^#(\d+):\s+cov: (\d+) ft: (\d+) corp: (\d+).*oom\/timeout\/crash: (\d+)\/(\d+)\/(\d+)/.exec(line);
    if (m) [execs, cov, ft, corp, ooms, timeouts, crashes] = m.slice(1).map(Number);
    const c = /Loaded \d+ modules\s+\((\d+) inline 8-bit counters\)/.exec(line);
    if (c) counters = Math.max(counters, Number(c[1]));
  }
  return { execs, cov, ft, corp, counters, crashes, timeouts, ooms };
}

// the oracle's message and reproducer config of one finding (a timeout:
// the input the target printed last under LLMEM_FUZZ_TRACE)
function describeFinding(target, file) {
  const scratch = join(BUILD, 'replay');
  mkdirSync(scratch, { recursive: true });
  const args = [`-timeout=${2 * TIMEOUT_S[target]}`, `-artifact_prefix=${scratch}/`, file];
  const r = run(join(BUILD, target), args, {
    timeout: 6000 * TIMEOUT_S[target],
    env: { ...process.env, LLMEM_FUZZ_TRACE: '1' },
  });
  const out = r.stdout + r.stderr;
  const oracle = /==llmem-oracle== \S+: (.*)\nreproducer config: (.*)/.exec(out);
  if (oracle) return { what: `oracle: ${oracle[1]}`, config: oracle[2] };
  const traced = [...out.matchAll(/==llmem-input== \S+ (\S+): (.*)/g)].pop();
  const san = /(runtime error: .*|ERROR: AddressSanitizer: \S+|ERROR: libFuzzer: \S+)/.exec(out);
  const what = san ? san[1] : `exit ${r.status ?? r.signal}`;
  return { what: traced ? `${what} in ${traced[1]}` : what, config: traced ? traced[2] : null };
}

// line coverage of core/*.c: replay the corpus through the coverage build, then llvm-cov
function coverage(targets) {
  const dir = join(BUILD, 'coverage');
  mkdirSync(dir, { recursive: true });
  const raws = [];
  let edges = 0,
    counters = 0;
  for (const t of targets) {
    const raw = join(dir, `${t}.profraw`);
    const r = run(join(BUILD, `${t}_cov`), ['-runs=0', '-timeout=10', corpusOf(t)], {
      env: { ...process.env, LLVM_PROFILE_FILE: raw },
      timeout: 300000,
    });
    const log = r.stdout + r.stderr;
    const inited = /INITED cov: (\d+)/.exec(log);
    const loaded = /\((\d+) inline 8-bit counters\)/.exec(log);
    if (inited) edges += Number(inited[1]);
    if (loaded) counters += Number(loaded[1]);
    if (existsSync(raw)) raws.push(raw);
  }
  const profdata = join(dir, 'merged.profdata');
  const merged = raws.length && run('llvm-profdata-14', ['merge', '-sparse', ...raws, '-o', profdata]);
  if (merged?.status !== 0) return { edges, counters, lines: null };
  const objects = targets.flatMap((t, i) => (i ? ['-object', join(BUILD, `${t}_cov`)] : [join(BUILD, `${t}_cov`)]));
  const rep = run('llvm-cov-14', [
    'report',
    ...objects,
    `-instr-profile=${profdata}`,
    ...readdirSync('core')
      .filter((f) => f.endsWith('.c'))
      .map((f) => join('core', f)),
  ]);
  const lines = {};
  for (const line of rep.stdout.split('\n')) {
    const p = line.trim().split(/\s+/);
    // llvm-cov names the files relative to their common folder (core/)
    if (p.length >= 10 && /%$/.test(p[9])) lines[p[0] === 'TOTAL' ? 'TOTAL' : `core/${p[0].split('/').pop()}`] = p[9];
  }
  return { edges, counters, lines };
}

function fuzzTarget(target, seconds, withCoverage) {
  const corpus = corpusOf(target);
  if (shortRun) rmSync(corpus, { recursive: true, force: true });
  seedCorpus(target, corpus);
  mkdirSync(FINDINGS, { recursive: true });
  const before = new Set(readdirSync(FINDINGS));
  const args = [
    '-fork=1',
    '-ignore_crashes=1',
    '-ignore_timeouts=1',
    '-ignore_ooms=1',
    `-max_total_time=${Math.max(1, Math.round(seconds))}`,
    `-timeout=${TIMEOUT_S[target]}`,
    `-report_slow_units=${TIMEOUT_S[target]}`,
    '-rss_limit_mb=2048',
    '-print_final_stats=1',
    `-artifact_prefix=${FINDINGS}/${target}-`,
    corpus,
  ];
  const started = Date.now();
  const r = run(join(BUILD, target), args, { timeout: (seconds + 120) * 1000 });
  const wall = (Date.now() - started) / 1000;
  const log = r.stdout + r.stderr;
  const f = figures(log);
  const found = readdirSync(FINDINGS).filter((n) => !before.has(n) && n.startsWith(`${target}-`));
  const kinds = new Map();
  for (const name of found) {
    const d = describeFinding(target, join(FINDINGS, name));
    if (d.config) writeFileSync(join(FINDINGS, `${name}.json`), `${d.config}\n`);
    const k = kinds.get(d.what) ?? { count: 0, example: name, config: d.config };
    k.count++;
    kinds.set(d.what, k);
  }
  const c = withCoverage ? coverage([target]) : { lines: null, counters: 0 };
  const edges = c.counters ? `${c.edges} of ${c.counters} edges` : `libFuzzer cov ${f.cov}, ft ${f.ft}`;
  const cov = c.lines ? `core lines ${c.lines.TOTAL} (planner.c ${c.lines['core/planner.c'] ?? '-'}), ${edges}` : edges;
  console.log(
    `${target.padEnd(14)} ${String(f.execs).padStart(10)} execs  ${(f.execs / wall).toFixed(0).padStart(6)} execs/s` +
      `  cov: ${cov}; corpus ${f.corp}  findings ${found.length}` +
      ` (crash ${f.crashes}, timeout ${f.timeouts}, oom ${f.ooms})`,
  );
  for (const [what, k] of kinds) {
    console.log(`  ${k.count} x ${what}\n    e.g. ${join(FINDINGS, k.example)}`);
    if (k.config) console.log(`    config: ${k.config}`);
  }
  if (r.status !== 0 && found.length === 0 && f.execs === 0) {
    console.log(log.split('\n').slice(-20).join('\n'));
    return 1;
  }
  return found.length;
}

function fuzzJs(scale) {
  const started = Date.now();
  const r = run('npx', ['vitest', 'run', 'tests/js/fuzz-url.test.ts', 'tests/js/fuzz-importers.test.ts'], {
    env: { ...process.env, LLMEM_FUZZ_SCALE: String(scale) },
    timeout: 3600 * 1000,
  });
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour codes (ESC [ ... m)
  const out = (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, '');
  const wall = (Date.now() - started) / 1000;
  const tests = /Tests\s+(.*)/.exec(out);
  const execs = [...out.matchAll(/fuzz-execs (\S+) (\d+)/g)];
  for (const [, name, n] of execs)
    console.log(`js ${name.padEnd(26)} ${String(n).padStart(8)} inputs (seeded, scale ${scale})`);
  console.log(
    `js fuzzers: ${tests ? tests[1].trim() : 'no summary'} in ${wall.toFixed(0)} s  findings ${r.status === 0 ? 0 : 'see below'}`,
  );
  if (r.status !== 0) console.log(out.split('\n').slice(-60).join('\n'));
  return r.status === 0 ? 0 : 1;
}

const opts = parseArgs(process.argv.slice(2));
let findings = 0;
// the JS fuzzers take a tenth of the time, at least their normal size
const jsScale = Math.max(1, Math.floor((opts.seconds * 0.1) / 10));
const cSeconds = opts.js ? opts.seconds * 0.9 : opts.seconds;
const shortRun = cSeconds / TARGETS.length < SHORT_RUN_S;
function corpusOf(target) {
  return join(BUILD, shortRun ? 'corpus-short' : 'corpus', target);
}
if (opts.c) {
  if (!existsSync('core/llmem.h')) usage('run from the repository root');
  build(opts.coverage);
  console.log(
    `libFuzzer (ASan + UBSan), ${(cSeconds / TARGETS.length).toFixed(0)} s per target; findings in ${FINDINGS}/`,
  );
  for (const t of TARGETS) findings += fuzzTarget(t, cSeconds / TARGETS.length, opts.coverage);
  const both = opts.coverage ? coverage(TARGETS) : { lines: null };
  if (both.lines) console.log(`core line coverage, both targets: ${both.lines.TOTAL} (llvm-cov over the corpora)`);
}
if (opts.js) findings += fuzzJs(jsScale);
console.log(`fuzz: ${findings === 0 ? 'clean' : `${findings} finding(s)`}`);
process.exit(findings === 0 ? 0 : 1);
