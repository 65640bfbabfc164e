// npm run bench: microseconds per estimate, native and wasm (timeline included).
// Figures only; the budgets (< 50 us native with the simulated allocator, < 20 us wasm) are compared in the
// printout, never asserted.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });

run('cmake', ['-S', '.', '-B', 'build/native', '-DCMAKE_BUILD_TYPE=Release']);
run('cmake', ['--build', 'build/native', '--target', 'llmem_bench', '-j2']);
const native = execFileSync(join(root, 'build/native/llmem_bench'), { encoding: 'utf8' });
process.stdout.write(native);
// the allocator budget's figure: the default estimate (Llama-3.1-8B shape, FSDP2, 8 GPUs), the native runner's first line
const nativeDefault = /\(default\)\s+([\d.]+) us\/estimate/.exec(native)?.[1];

const { loadCore } = await import(join(root, 'build/js/wasm/node.js'));
const core = await loadCore();
const cases = [
  ['llama-3.1-8b fsdp2 8 gpus (default)', {}],
  ['  + full recompute, 8 micro-batches', { training: { recompute: 'full', grad_accum: 8 } }],
  [
    'llama-70b-shape megatron tp8 pp8 vpp5, 32 mb',
    {
      model: { layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn_hidden: 28672 },
      parallel: {
        engine: 'megatron',
        gpus: 512,
        tp: 8,
        pp: 8,
        vpp: 5,
        pp_schedule: 'interleaved',
        distributed_optimizer: true,
      },
      training: { grad_accum: 32 },
    },
  ],
  [
    'moe 64 experts ep8 pp4, 16 mb',
    {
      model: { moe: { experts: 64, top_k: 8, expert_ffn_hidden: 1408 } },
      parallel: { engine: 'megatron', gpus: 64, ep: 8, pp: 4 },
      training: { grad_accum: 16 },
    },
  ],
  // issue 12: the deepest valid pipelines (99,840 layers over 512 stages, about a million micro-batches)
  ...[
    ['gpipe', 1],
    ['1f1b', 1],
    ['interleaved', 5],
  ].map(([schedule, vpp]) => [
    `99840 layers pp512 ${vpp > 1 ? `vpp${vpp} ` : ''}${schedule}, 1e6 mb`,
    {
      model: { layers: 99840 },
      parallel: { engine: 'megatron', gpus: 512, pp: 512, vpp, pp_schedule: schedule },
      training: { grad_accum: schedule === 'interleaved' ? 999936 : 1000000 },
    },
  ]),
];
const time = (fn) => {
  let n = 0;
  const start = performance.now();
  let t = 0;
  do {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
    t = performance.now() - start;
  } while (t < 300);
  return (t * 1000) / n;
};
for (const [name, config] of cases) {
  const flat = core.flatten(config);
  const run = time(() => core.runOnly(flat));
  const raw = time(() => core.estimateFlat(flat));
  const full = time(() => core.estimate(config, { timeline: true }));
  console.log(
    `wasm    ${name.padEnd(44)} ${run.toFixed(2).padStart(8)} us/estimate (core)  ${raw.toFixed(2).padStart(8)} us with the result read out  ${full.toFixed(2).padStart(8)} us with config parsing and the timeline`,
  );
}
console.log(
  'budgets: native < 5 us without the allocator, < 50 us with it (issue: simulated allocator); wasm < 20 us (docs/ARCHITECTURE.md)',
);
console.log(`default estimate with the simulated allocator, native: ${nativeDefault ?? '?'} us (budget < 50 us)`);
