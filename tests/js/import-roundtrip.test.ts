// Exporters: import -> export -> import gives the same config (every key the format
// expresses, compared as the core reads them), and what a format cannot express is listed.
import { decodeKey } from '../../frontend/config/encode.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { importConfig, type ImportKind } from '../../frontend/config/importers/index.js';
import { exportConfig, type ExportKind } from '../../frontend/config/exporters/index.js';

const fixture = (path: string) => readFileSync(join(repoRoot(), 'tests/fixtures/import', path), 'utf8');
let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const imported = (kind: ImportKind, text: string, worldSize?: number): Config => {
  const r = importConfig(kind, text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return r.config;
};
const resolved = (c: Config): Config => {
  const r = resolveConfig(c);
  if (!r.ok) throw new Error(r.error.message);
  return r.config;
};
/** The core's reading of a config: every key with its default, or its training-stack profile value, filled in. */
const slots = (c: Config): Record<string, unknown> => {
  const flat = core.flatten(resolved(c));
  if (!(flat instanceof Float64Array)) throw new Error(flat.message);
  const out: Record<string, unknown> = {};
  for (const f of core.fields) if (f.kind !== 'text' && f.kind !== 'group') out[f.path] = decodeKey(f, flat);
  const profile = core.profile(resolved(c));
  for (const p of profile.ok ? profile.implied : []) out[p.path] = p.value;
  // the stack is the file's kind, not a setting it carries; so are the FSDP units it wraps
  delete out['runtime.framework'];
  delete out['parallel.shard_root_modules'];
  delete out['parallel.pp_stage_buffers']; // torch.distributed.pipelining's buffers come with the stack too
  delete out['parallel.pp_returns_outputs']; // so do what its step keeps,
  delete out['parallel.pp_split']; // and how it places the layers
  // an automatic accumulation (null: one micro-batch when no global batch is set) reads as what it stands for
  if (out['training.grad_accum'] === null && out['training.global_batch'] === null) out['training.grad_accum'] = 1;
  return out;
};
const exported = (kind: ExportKind, c: Config) => exportConfig(kind, resolved(c), core.defaults(resolved(c)));

/** import(export(a)) reads the same as a on `paths` (prefixes allowed); the run is valid. */
function roundTrip(kind: ExportKind & ImportKind, a: Config, paths: string[], worldSize?: number) {
  const out = exported(kind, a);
  const b = imported(kind, out.text, worldSize);
  const pick = (s: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(s).filter(([k]) => paths.some((p) => k === p || k.startsWith(p))));
  expect(pick(slots(b)), out.text).toEqual(pick(slots(a)));
  const res = core.estimate(resolved(b));
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}\n${out.text}`);
  return { out, b };
}

const DS_KEYS = [
  'training.micro_batch',
  'training.grad_accum',
  'training.dtype',
  'training.grad_dtype',
  'training.optimizer',
  'parallel.engine',
  'parallel.zero_stage',
  'parallel.gpus',
  'parallel.offload_',
  'parallel.reduce_bucket_size',
  'parallel.overlap_comm',
  'parallel.stage3_',
];
const MEGATRON_KEYS = ['model.', 'training.', 'parallel.'];
const TITAN_KEYS = [
  'model.',
  'training.micro_batch',
  'training.grad_accum',
  'training.seq_len',
  'training.dtype',
  'training.grad_dtype',
  'training.recompute',
  'training.optimizer',
  'training.fp8_linear',
  'training.loss',
  'parallel.',
  'runtime.torch_compile',
];

describe('DeepSpeed JSON round trip', () => {
  it('HF ZeRO-3 offload example ("auto" values at defaults)', () => {
    const { out } = roundTrip('deepspeed', imported('deepspeed', fixture('deepspeed/hf-zero3-offload.json')), DS_KEYS);
    expect(JSON.parse(out.text)).toMatchObject({
      zero_optimization: {
        stage: 3,
        offload_optimizer: { device: 'cpu' },
        offload_param: { device: 'cpu' },
        stage3_max_live_parameters: 1e9,
      },
    });
  });
  it('explicit ZeRO-2 config', () => {
    const { out } = roundTrip('deepspeed', imported('deepspeed', fixture('deepspeed/zero2-bf16.json')), DS_KEYS);
    expect(JSON.parse(out.text)).toMatchObject({
      train_batch_size: 256,
      train_micro_batch_size_per_gpu: 4,
      gradient_accumulation_steps: 8,
      bf16: { enabled: true },
      zero_optimization: { stage: 2, reduce_bucket_size: 2e8, allgather_bucket_size: 2e8, overlap_comm: true },
    });
  });
  it('lists what a DeepSpeed JSON cannot carry', () => {
    const megatron = imported('megatron', fixture('megatron/llama2-70b-pretrain.sh'));
    const { unexpressed, text } = exported('deepspeed', megatron);
    const keys = unexpressed.map((u) => u.split(/[ :]/)[0]);
    expect(keys).toEqual(
      expect.arrayContaining([
        'model*',
        'training.seq_len',
        'parallel.tp',
        'parallel.pp',
        'parallel.engine',
        'training.recompute*',
      ]),
    );
    expect(JSON.parse(text).zero_optimization.stage).toBe(1); // distributed optimizer ~ ZeRO-1
  });
});

describe('DeepSpeed-Ulysses round trip', () => {
  it('sequence_parallel_size is context parallelism all by all-to-all; a K/V ring is listed as not carried', () => {
    const ulysses = {
      version: 1,
      runtime: { framework: 'deepspeed' },
      parallel: { engine: 'deepspeed', zero_stage: 3, gpus: 8, cp: 4, cp_all_to_all: 4 },
    };
    const { out } = roundTrip('deepspeed', ulysses, [...DS_KEYS, 'parallel.cp'], 8);
    expect(JSON.parse(out.text)).toMatchObject({ sequence_parallel_size: 4, train_batch_size: 2 });
    const ring = exported('deepspeed', { version: 1, parallel: { engine: 'deepspeed', gpus: 8, cp: 4 } });
    expect(ring.unexpressed.map((u) => u.split(/[ :]/)[0])).toContain('parallel.cp');
  });
});

describe('Megatron-LM arguments round trip', () => {
  it('Llama-2 70B pretrain script', () => {
    const { out } = roundTrip(
      'megatron',
      imported('megatron', fixture('megatron/llama2-70b-pretrain.sh')),
      MEGATRON_KEYS,
    );
    expect(out.text).toMatch(/^torchrun --nnodes 16 --nproc-per-node 8 pretrain_gpt.py --num-layers 80 /);
    expect(out.text).toContain('--num-layers-per-virtual-pipeline-stage 5');
    expect(out.unexpressed).toEqual([]);
  });
  it('MoE + MLA argument line', () => {
    const line =
      '--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 --swiglu --normalization RMSNorm --disable-bias-linear --untie-embeddings-and-output-weights --position-embedding-type rope --vocab-size 129280 --make-vocab-size-divisible-by 1 --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) --moe-router-enable-expert-bias --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 8 --decoder-first-pipeline-num-layers 5 --expert-model-parallel-size 64 --sequence-parallel --use-distributed-optimizer --seq-length 4096 --micro-batch-size 1 --global-batch-size 2048 --bf16 --recompute-granularity full --recompute-method block --recompute-num-layers 2 --attention-dropout 0 --hidden-dropout 0';
    roundTrip('megatron', imported('megatron', line, 1024), MEGATRON_KEYS);
  });
  it.each([
    [
      'blockwise fp8 parameters, fp16 main params, fp8 moments',
      '--fp8-format e4m3 --fp8-recipe blockwise --fp8-param-gather --use-precision-aware-optimizer --main-params-dtype fp16 --exp-avg-dtype fp8 --exp-avg-sq-dtype fp8',
    ],
    ['NVFP4 linears', '--fp4-format e2m1'],
    ['current scaling', '--fp8-format hybrid --fp8-recipe tensorwise'],
  ])('precision flags: %s', (_, flags) => {
    const line = `--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 --bf16 --use-distributed-optimizer ${flags}`;
    const { out } = roundTrip('megatron', imported('megatron', line, 8), MEGATRON_KEYS, 8);
    expect(out.unexpressed).toEqual([]);
  });
  it.each([
    ['a2a', 'Ulysses over all of CP'],
    ['a2a+p2p --hierarchical-context-parallel-sizes 2 2', 'all-to-all within pairs, a ring over them'],
  ])('context parallelism by --cp-comm-type %s (%s)', (kind) => {
    const line = `--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 --bf16 --context-parallel-size 4 --cp-comm-type ${kind}`;
    const { out } = roundTrip('megatron', imported('megatron', line, 8), MEGATRON_KEYS, 8);
    expect(out.text).toContain(`--cp-comm-type ${kind}`);
    expect(out.unexpressed).toEqual([]);
  });
  it('lists what Megatron-LM arguments cannot carry', () => {
    const lora = imported('llamafactory', fixture('llamafactory/llama3_lora_sft.yaml'));
    const { unexpressed } = exported('megatron', lora);
    expect(unexpressed.map((u) => u.split(/[ :]/)[0])).toEqual(
      expect.arrayContaining(['parallel.engine', 'training.finetune.*']),
    );
  });
});

describe('torchtitan TOML round trip', () => {
  it('llama3_8b.toml on 64 GPUs', () => {
    const { out } = roundTrip(
      'torchtitan',
      imported('torchtitan', fixture('torchtitan/llama3_8b.toml'), 64),
      TITAN_KEYS,
    );
    expect(out.text).toContain('[model]\nname = "llama3"\nflavor = "8B"');
    expect(out.text).toContain('selective_ac_option = "op"');
    expect(out.unexpressed).toEqual([]);
  });
  it('70B with TP, interleaved PP, every-2nd-layer AC, compile and float8', () => {
    const a = imported(
      'torchtitan',
      `[model]\nname = "llama3"\nflavor = "70B"\nconverters = ["float8"]\n[training]\nlocal_batch_size = 8\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 4\ntensor_parallel_degree = 8\npipeline_parallel_degree = 4\npipeline_parallel_schedule = "Interleaved1F1B"\n[activation_checkpoint]\nmode = "selective"\nselective_ac_option = "2"\n[compile]\nenable = true\n[float8]\nenable_fsdp_float8_all_gather = true\n`,
    );
    roundTrip('torchtitan', a, TITAN_KEYS);
  });
  it('flavors are written as torchtitan spells them (its lookup is case-sensitive): gpt_oss "20b"', () => {
    const toml = `[model]\nname = "gpt_oss"\nflavor = "20b"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\n[parallelism]\ndata_parallel_shard_degree = 8\n`;
    const { out } = roundTrip('torchtitan', imported('torchtitan', toml), TITAN_KEYS);
    expect(out.text).toContain('[model]\nname = "gpt_oss"\nflavor = "20b"');
  });
  it('TP without a compiled loss: loss_parallel, written as nothing and not listed', () => {
    const toml = `[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 2\ntensor_parallel_degree = 4\n`;
    const a = imported('torchtitan', toml);
    expect(a.training).toMatchObject({ loss: 'loss_parallel' });
    const { out } = roundTrip('torchtitan', a, TITAN_KEYS);
    expect(out.text).not.toContain('loss');
    expect(out.unexpressed).toEqual([]);
    const off = imported('torchtitan', `${toml}disable_loss_parallel = true\n`);
    expect((off.training as Config | undefined)?.loss).toBeUndefined();
  });
  it('an llmem config (tests/configs) exports and re-imports', () => {
    const a = JSON.parse(
      readFileSync(join(repoRoot(), 'tests/configs/llama-3.1-8b-fsdp-8xh100.json'), 'utf8'),
    ) as Config;
    roundTrip('torchtitan', a, TITAN_KEYS);
  });
  it('lists what torchtitan cannot carry', () => {
    const ax = imported('axolotl', fixture('axolotl/llama-3-qlora.yml'));
    const keys = exported('torchtitan', ax).unexpressed.map((u) => u.split(/[ :]/)[0]);
    expect(keys).toEqual(
      expect.arrayContaining(['parallel.engine', 'training.finetune.*', 'training.paged_optimizer']),
    );
  });
});
