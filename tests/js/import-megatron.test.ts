// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are shell scripts, where ${NAME} is a variable
// Megatron-LM launch scripts as people write them: the bash subset of
// frontend/config/importers/shell.ts (arrays, quoted flag strings, defaults,
// arithmetic, branches on unset variables, sourced files, here-documents), the
// flags of issue 14 (--grad-reduce-in-bf16, Megatron-FSDP, --moe-layer-freq
// lists, router and hybrid flags), and the bounds on evaluation work.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { importConfig, type Imported } from '../../frontend/config/importers/index.js';
import { runShell } from '../../frontend/config/importers/shell.js';

const real = (file: string) => readFileSync(join(repoRoot(), 'tests/fixtures/real/megatron', file), 'utf8');
const ok = (text: string, worldSize?: number): Imported => {
  const r = importConfig('megatron', text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return r;
};
const fail = (text: string) => {
  const r = importConfig('megatron', text);
  if (!('error' in r)) throw new Error(`expected an error, got ${JSON.stringify(r.config)}`);
  return r.error;
};
const MODEL = '--num-layers 2 --hidden-size 64 --num-attention-heads 4';
const GiB = 2 ** 30;

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const peakGiB = (config: Config): number => {
  const resolved = resolveConfig(config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
  return res.per_gpu.peak_allocated_bytes / GiB;
};
const model = (r: Imported) => r.config.model as Record<string, unknown>;
const training = (r: Imported) => r.config.training as Record<string, unknown>;

describe('the Llama-3 8B FP8 launch script (NVIDIA/Megatron-LM examples/llama)', () => {
  it('keeps --use-distributed-optimizer, appended with TRAINING_ARGS+=("${DDP_ARGS[@]}")', () => {
    const r = ok(real('llama3_8b_h100_fp8.sh'));
    expect(r.config.parallel).toMatchObject({ distributed_optimizer: true, gpus: 8, tp: 1 });
    expect(r.config.training).toMatchObject({ grad_dtype: 'bf16', fp8_linear: true, grad_accum: 16 });
  });
  it('the estimate: the optimizer states sharded over 8 GPUs, not 78 GiB more per GPU', () => {
    const r = ok(real('llama3_8b_h100_fp8.sh'));
    const withFix = peakGiB(r.config);
    // what the reader gave before: the distributed optimizer lost with the appended array
    const parallel = { ...(r.config.parallel as Config), distributed_optimizer: false };
    const lost = peakGiB({ ...r.config, parallel });
    // Adam's fp32 master weights and two moments (12 bytes per parameter) of 8.03 B parameters, 7/8 of them sharded away
    const states = (8.03e9 * 12 * 7) / 8 / GiB;
    expect(lost - withFix).toBeGreaterThan(states * 0.95);
    expect(lost - withFix).toBeLessThan(states * 1.05);
  });
  it('reads the branches it can decide and says which it took for the others', () => {
    const r = ok(real('llama3_8b_h100_fp8.sh'));
    // DTYPE="fp8" is set in the script: the FP8 branch; TOKENIZER_ARG defaults to MOCK: the mock-data branch
    expect(r.config.model).toMatchObject({ vocab: 128256 });
    expect(r.notes.join('\n')).toContain('`if [ ! -f ${PRETRAIN_SCRIPT_PATH} ]`');
    expect(r.notes.join('\n')).toContain('no branch taken (there is no else)');
  });
});

describe('interleaved micro-batch groups', () => {
  it('--microbatch-group-size-per-virtual-pipeline-stage sets parallel.vpp_group; m need not be a multiple of pp', () => {
    const r = ok(
      '--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --micro-batch-size 1 ' +
        '--global-batch-size 10 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 4 ' +
        '--microbatch-group-size-per-virtual-pipeline-stage 6',
      4,
    );
    expect(r.config.parallel).toMatchObject({ pp: 4, vpp: 2, vpp_group: 6, pp_schedule: 'interleaved' });
    expect(r.unsupported).toEqual([]);
  });
});

describe('the bash subset', () => {
  it('arrays: declare -a, ARR+=( ), "${ARR[@]}", ${#ARR[@]}, ${ARR[1]}', () => {
    const run = runShell(
      [
        'declare -a A',
        'A+=(--one 1)',
        'B=("--two 2" --three)',
        'A+=("${B[@]}")',
        'N=${#A[@]}',
        'SECOND=${A[1]}',
        'cmd "${A[@]}"',
      ].join('\n'),
    );
    expect(run.commands).toEqual([['cmd', '--one', '1', '--two 2', '--three']]);
    expect(run.vars.get('N')).toBe('4');
    expect(run.vars.get('SECOND')).toBe('1');
  });
  it('flags inside quoted strings, ${VAR:-default}, ${VAR:=default}, $(( )), export', () => {
    const r = ok(
      [
        'export TP=${TP:-2}',
        ': ${PP:=2}',
        'LAYERS=$(( 4 * PP ))',
        'MODEL_ARGS="--num-layers $LAYERS --hidden-size 64 --num-attention-heads 4"',
        'torchrun --nproc-per-node 8 pretrain_gpt.py $MODEL_ARGS --tensor-model-parallel-size $TP --pipeline-model-parallel-size ${PP}',
      ].join('\n'),
    );
    expect(r.config.model).toMatchObject({ layers: 8, hidden: 64 });
    expect(r.config.parallel).toMatchObject({ tp: 2, pp: 2, gpus: 8 });
  });
  it('if/elif/else and case: decided when the script sets the value, else the default branch with a note', () => {
    const script = (first: string) =>
      [
        first,
        'if [[ "$SIZE" == "big" ]]; then L=8; elif [ "$SIZE" = small ]; then L=2; else L=4; fi',
        'case "$MODE" in',
        '  fast) TP=1 ;;',
        '  *) TP=2 ;;',
        'esac',
        `python pretrain_gpt.py --num-layers $L --hidden-size 64 --num-attention-heads 4 --tensor-model-parallel-size $TP`,
      ].join('\n');
    const known = ok(script('SIZE=small; MODE=fast'));
    expect(known.config.model).toMatchObject({ layers: 2 });
    expect(known.config.parallel).toMatchObject({ tp: 1 });
    const unset = ok(script('# SIZE and MODE come from the environment'));
    expect(unset.config.model).toMatchObject({ layers: 4 });
    expect(unset.config.parallel).toMatchObject({ tp: 2 });
    const notes = unset.notes.join('\n');
    expect(notes).toContain(
      '`if [[ ${SIZE} == big ]]`: SIZE not set in the file, read as unset (empty); went on to the next elif',
    );
    expect(notes).toContain(
      '`if [ ${SIZE} = small ]`: SIZE not set in the file, read as unset (empty); took the else branch',
    );
    expect(notes).toContain('`case ${MODE}`: MODE not set in the file, read as unset (empty); took *)');
  });
  it('[ -z "$X" ] && X=default: the default of a variable the file leaves unset', () => {
    const r = ok(
      [
        'if [ -z "$TP" ]; then TP=4; fi',
        '[[ -v PP ]] || PP=2',
        `torchrun pretrain_gpt.py ${MODEL} --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP`,
      ].join('\n'),
    );
    expect(r.config.parallel).toMatchObject({ tp: 4, pp: 2 });
    expect(r.notes.join('\n')).toContain(
      '`if [ -z ${TP} ]`: TP not set in the file, read as unset (empty); took its then branch',
    );
    expect(r.notes.join('\n')).toContain('`… || PP=2`: run, with PP read as unset');
  });
  it('a value the script cannot know ($(command), a file) leaves the branch undecided: the else branch', () => {
    const r = ok(
      [
        'if [ "$(hostname)" = "big" ]; then TP=8; else TP=2; fi',
        `torchrun pretrain_gpt.py ${MODEL} --tensor-model-parallel-size $TP`,
      ].join('\n'),
    );
    expect(r.config.parallel).toMatchObject({ tp: 2 });
    expect(r.notes.join('\n')).toContain('depends on a value the script does not set');
  });
  it('an exit in a branch taken by default is not followed; usage checks do not stop the reading', () => {
    const r = ok(
      ['if [ -n "$1" ]; then CKPT=$1; else echo usage; exit 1; fi', `torchrun pretrain_gpt.py ${MODEL}`].join('\n'),
    );
    expect(r.config.model).toMatchObject({ layers: 2 });
    expect(r.notes.join('\n')).toContain('`exit` in a branch taken by default: not followed');
  });
  it('source of a file that is not given, and values left to it, are reported', () => {
    const r = ok(
      ['source ./conf/model.sh', `torchrun pretrain_gpt.py ${MODEL} --tensor-model-parallel-size $TP`].join('\n'),
    );
    expect(r.unsupported).toEqual([
      'source ./conf/model.sh: the sourced file is not given: the variables and flags it sets are not read; not applied',
      "--tensor-model-parallel-size: its value $TP is not set in the file (an environment variable, a script argument, a sourced file or a command's output); not applied",
    ]);
  });
  it('a file that launches nothing (a model config to be sourced): the flags of its variables', () => {
    const r = ok(`MODEL_ARGS=" ${MODEL} --bf16 "`);
    expect(r.config.training).toMatchObject({ dtype: 'bf16' });
    expect(r.notes.join('\n')).toContain('the flags in MODEL_ARGS were read');
  });
  it('echo, mkdir and $(command) words are not flags', () => {
    const r = ok(
      [
        'N=$(nvidia-smi --query-gpu=name --format=csv | wc -l)',
        'echo "--num-layers 99"',
        `torchrun pretrain_gpt.py ${MODEL}`,
      ].join('\n'),
    );
    expect(r.config.model).toMatchObject({ layers: 2 });
    expect(r.unsupported).toEqual([]);
  });
});

describe('Megatron-DeepSpeed here-document DeepSpeed configs', () => {
  const script = (json: string) =>
    [
      'ZERO_STAGE=2',
      'DS_CONFIG=ds.json',
      `cat <<EOT > $DS_CONFIG\n${json}\nEOT`,
      `deepspeed pretrain_gpt.py ${MODEL} --deepspeed --deepspeed_config $DS_CONFIG --zero-stage $ZERO_STAGE --use-flash-attn-v2`,
    ].join('\n');
  it('reads ZeRO and offload from the JSON the script writes', () => {
    const r = ok(
      script(
        '{"train_batch_size": 8, "zero_optimization": {"stage": $ZERO_STAGE, "offload_optimizer": {"device": "cpu"}}}',
      ),
    );
    expect(r.config.parallel).toMatchObject({ engine: 'megatron_deepspeed', zero_stage: 2, offload_optimizer: 'cpu' });
    expect(r.config.training).toMatchObject({ attention: 'flash' });
    expect(r.notes.join('\n')).toContain('the DeepSpeed config the script writes (ds.json) was read');
  });
  it('a refusal of a script that sources files names them (Megatron-LM academic_paper_scripts/sc21 run_figure_18.sh)', () => {
    const script =
      'MEGATRON_EXTRA_PARAMS="--num-layers-per-virtual-pipeline-stage 2"\nsource CONFIG.sh\npython pretrain_gpt.py --pipeline-model-parallel-size 12 ${MEGATRON_EXTRA_PARAMS}\n';
    expect(fail(script).message).toMatch(
      /needs --num-layers \(the script sources CONFIG.sh, which llmem is not given: the flags may be set there/,
    );
  });
  it("examples/multimodal's freeze flags say what llmem counts instead (NVLM's pretraining stage freezes both)", () => {
    const r = ok(`${MODEL} --freeze-LM --freeze-ViT`);
    expect(r.unsupported).toEqual([
      expect.stringMatching(
        /^--freeze-LM: the language model is frozen .* its gradients and states are counted: an over-estimate/,
      ),
      expect.stringMatching(/^--freeze-ViT: the vision tower is frozen; the multimodal tower is not imported/),
    ]);
  });
  it('Megatron-DeepSpeed flags without --deepspeed are listed, not read', () => {
    expect(ok(`${MODEL} --topk 2 --zero-stage 3`).unsupported).toEqual([
      '--topk: a Megatron-DeepSpeed flag, read only with --deepspeed; not applied',
      '--zero-stage: a Megatron-DeepSpeed flag, read only with --deepspeed; not applied',
    ]);
  });
  it('says so when the JSON cannot be read', () => {
    const r = ok(script('{"zero_optimization": {"stage": $UNSET_STAGE}}'));
    expect(r.config.parallel).toMatchObject({ zero_stage: 2 });
    expect(r.unsupported.join('\n')).toMatch(
      /^--deepspeed_config: the DeepSpeed config ds.json the script writes is not JSON once expanded .*parallel.zero_stage 2 from --zero-stage; not applied$/,
    );
  });
});

describe('issue 14 flags', () => {
  it('--grad-reduce-in-bf16: bf16 gradient buffers (only with --bf16)', () => {
    expect(ok(`${MODEL} --bf16 --grad-reduce-in-bf16`).config.training).toMatchObject({ grad_dtype: 'bf16' });
    expect(ok(`${MODEL} --bf16`).config.training).toMatchObject({ grad_dtype: 'fp32' });
    expect(ok(`${MODEL} --grad-reduce-in-bf16`).config.training).toMatchObject({ grad_dtype: 'fp32' });
  });
  it('--use-megatron-fsdp is reported, never silently dropped', () => {
    const r = ok(`${MODEL} --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params`);
    expect(r.unsupported).toEqual([
      '--use-megatron-fsdp: Megatron-FSDP (optim_grads_params sharding) has no engine in config v1: counted as the Megatron engine; not applied',
    ]);
  });
  it('--moe-layer-freq: an int, or a Python list expression', () => {
    const moe = (freq: string, layers = 8) =>
      ok(`--num-layers ${layers} --hidden-size 64 --num-attention-heads 4 --num-experts 4 --moe-layer-freq ${freq}`);
    expect(moe('2').config.model).toMatchObject({ moe: { dense_layers: 0, layer_freq: 2 } });
    expect(moe('([0]*3+[1]*5)').config.model).toMatchObject({ moe: { dense_layers: 3, layer_freq: 1 } });
    expect(moe('"[0]*2+[1]*6"').config.model).toMatchObject({ moe: { dense_layers: 2, layer_freq: 1 } });
    expect(moe("'[0,1]*4'").config.model).toMatchObject({ moe: { dense_layers: 1, layer_freq: 2 } });
    expect(moe('([1]*1+[0]*1)*4').config.model).toMatchObject({ moe: { dense_layers: 0, layer_freq: 2 } });
    expect(moe('[1,1,0,0,1,1,0,0]').unsupported).toEqual([
      '--moe-layer-freq: pattern [1,1,0,0,1,1,0,0] is not a leading dense block then every n-th layer; every layer counted as MoE',
    ]);
    expect(fail(`${MODEL} --num-experts 4 --moe-layer-freq [0]*3+[1]*5`).message).toContain(
      '8 entries for --num-layers 2',
    );
    expect(fail(`${MODEL} --num-experts 4 --moe-layer-freq [2]*2`).path).toBe('--moe-layer-freq');
    expect(fail(`${MODEL} --num-experts 4 --moe-layer-freq [1]*999999999`).message).toContain(
      'more than 100000 layers',
    );
  });
  it('router flags: fp32 routing is what llmem counts; fp64 is reported; the rest is read with no memory effect', () => {
    const base = `${MODEL} --num-experts 4 --moe-router-score-function sigmoid --moe-router-load-balancing-type seq_aux_loss`;
    const fp32 = ok(`${base} --moe-router-dtype fp32`);
    expect(fp32.unsupported).toEqual([]);
    expect(fp32.notes.at(-1)).toContain('--moe-router-dtype');
    expect(ok(`${base} --moe-router-dtype fp64`).unsupported).toEqual([
      '--moe-router-dtype: fp64 router logits and probabilities are not modelled (counted in fp32); not applied',
    ]);
    expect(ok(`${base} --moe-token-dispatcher-type allgather`).unsupported[0]).toMatch(
      /^--moe-token-dispatcher-type: /,
    );
  });
  it('a hybrid (Mamba) pattern places its layers: M Mamba-2, * attention, - MLP, E MoE, with the Mamba sizes', () => {
    const r = ok(
      '--hidden-size 64 --num-attention-heads 4 --hybrid-override-pattern M-M*-M- --mamba-state-dim 64 --mamba-head-dim 16',
    );
    expect(r.config.model).toMatchObject({
      layers: 7,
      // M - M * - M -: the shortest head that repeats to the 7 layers (layer i takes entry i mod 5)
      layer_types: ['ssm', 'none', 'ssm', 'full', 'none'],
      mlp_types: ['none', 'dense', 'none', 'none', 'dense'],
      ssm: { state_size: 64, head_dim: 16, heads: 8, groups: 8 }, // heads: 2 x hidden / head dim (expand 2)
    });
    expect(r.unsupported).toEqual([]);
    // a repeating pattern is written once: layer i takes entry i mod its length
    expect(ok('--hidden-size 64 --num-attention-heads 4 --hybrid-layer-pattern M*M*M*').config.model).toMatchObject({
      layer_types: ['ssm', 'full'],
      mlp_types: ['none'],
    });
    // Nemotron-H 8B from its Megatron config places the same layers and Mamba sizes as from its HF config.json
    const meg = ok(real('modelopt_conf_nemotron_h_8b.sh'), 8).config.model as Config;
    const hf = importConfig(
      'hf',
      readFileSync(join(repoRoot(), 'tests/fixtures/import/hf/nemotron-h-8b.json'), 'utf8'),
    );
    if ('error' in hf) throw new Error(hf.error.message);
    const hfModel = hf.config.model as Config;
    for (const k of ['layers', 'layer_types', 'mlp_types', 'ssm', 'hidden', 'heads', 'kv_heads', 'ffn_hidden'])
      expect(meg[k], k).toEqual(hfModel[k]);
    // G (Gated DeltaProduct) has no config v1 layer: every layer counted as attention + MLP, and said so
    const g = ok('--hidden-size 64 --num-attention-heads 4 --hybrid-layer-pattern MG*-');
    expect(g.config.model).toMatchObject({ layers: 4 });
    expect((g.config.model as Record<string, unknown>).layer_types).toBeUndefined();
    expect(g.unsupported.map((u) => u.split(':')[0])).toEqual(['--hybrid-layer-pattern']);
  });
});

describe('precision flags: Transformer Engine recipes, fp8 parameters, the precision-aware optimizer', () => {
  const base = `${MODEL} --bf16 --use-distributed-optimizer`;
  it('--fp8-format sets the recipe: delayed by default, tensorwise is current scaling', () => {
    const d = ok(`${base} --fp8-format hybrid`);
    expect(d.config.training).toMatchObject({ fp8_linear: true, fp8_recipe: 'delayed', dtype: 'bf16' });
    expect(d.notes.join('\n')).toContain('no --fp8-recipe');
    expect(ok(`${base} --fp8-format e4m3 --fp8-recipe tensorwise`).config.training).toMatchObject({
      fp8_recipe: 'current',
    });
    expect(ok(`${base} --fp8-format e4m3 --fp8-recipe mxfp8`).config.training).toMatchObject({ fp8_recipe: 'mxfp8' });
    const custom = ok(`${base} --fp8-format e4m3 --fp8-recipe custom`);
    expect((custom.config.training as Config).fp8_recipe).toBeUndefined();
    expect(custom.unsupported[0]).toMatch(/^--fp8-recipe: custom/);
    expect(fail(`${base} --fp8-format e4m3 --fp8-recipe foo`).message).toContain('--fp8-recipe');
  });
  it('--fp4-format is NVFP4; it excludes --fp8-format', () => {
    expect(ok(`${base} --fp4-format e2m1`).config.training).toMatchObject({ fp8_linear: true, fp8_recipe: 'nvfp4' });
    expect(fail(`${base} --fp4-format e2m1 --fp8-format e4m3`).message).toContain('cannot be used together');
  });
  it('--fp8-param-gather stores the parameters in fp8 and gathers them in fp8', () => {
    const r = ok(`${base} --fp8-format e4m3 --fp8-recipe blockwise --fp8-param-gather`);
    expect(r.config.training).toMatchObject({ dtype: 'fp8', fp8_recipe: 'blockwise' });
    expect(r.config.parallel).toMatchObject({ fp8_all_gather: true });
    expect(ok(`${base} --fp4-format e2m1 --fp4-param-gather`).config.training).toMatchObject({ dtype: 'fp8' });
    expect(ok(`${base} --fp8-param-gather`).config.training).toMatchObject({ dtype: 'bf16' });
  });
  it('--use-precision-aware-optimizer: main params and moment dtypes', () => {
    const r = ok(
      `${base} --use-precision-aware-optimizer --main-params-dtype fp16 --exp-avg-dtype fp8 --exp-avg-sq-dtype fp8`,
    );
    expect(r.config.training).toMatchObject({ master_dtype: 'fp16', optimizer_dtype: 'fp8' });
    const mixed = ok(`${base} --use-precision-aware-optimizer --exp-avg-dtype fp8 --exp-avg-sq-dtype bf16`);
    expect(mixed.config.training).toMatchObject({ optimizer_dtype: 'bf16' });
    expect(mixed.notes.join('\n')).toContain('both moments counted in bf16');
    const without = ok(`${base} --exp-avg-dtype bf16`);
    expect((without.config.training as Config).optimizer_dtype).toBeUndefined();
    expect(without.notes.join('\n')).toContain('without --use-precision-aware-optimizer');
  });
});

describe('bounded evaluation: a bomb is a named error, never a hang', () => {
  it.each([
    ['an endless loop', 'while true; do X=1; done'],
    ['recursion', 'f() { f; f; }; f'],
    ['a doubling variable', `A=x\n${'A="$A$A"\n'.repeat(40)}`],
    ['a doubling array', `A=(x)\n${'A+=("${A[@]}")\n'.repeat(40)}`],
    ['nested $(( ))', `X=$((${'('.repeat(5000)}1${')'.repeat(5000)}))`],
    ['nested if', `${'if true; then '.repeat(5000)}X=1${'; fi'.repeat(5000)}`],
    ['nested defaults', `X=${'${A:-'.repeat(5000)}${'x'.repeat(100000)}${'}'.repeat(5000)}`],
  ])('%s', (_, script) => {
    const t0 = Date.now();
    const e = fail(`${script}\ntorchrun pretrain_gpt.py ${MODEL}`);
    expect(e.message).toMatch(/shell script: |nested too deeply/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

// Scripts without the model's shape (an error naming the flags, not llmem's default model), T5 (encoder and
// decoder layers, source and target lengths), multimodal language models (--decoder-seq-length), and the shell
// evaluator's quoting rules.
const T5 =
  '--encoder-num-layers 12 --decoder-num-layers 12 --hidden-size 768 --num-attention-heads 12 --kv-channels 64 --ffn-hidden-size 3072 --encoder-seq-length 512 --decoder-seq-length 128 --max-position-embeddings 512 --micro-batch-size 64 --bf16';

describe('Megatron: the model shape is required (validate_args)', () => {
  it('a script with no shape flags is an error naming them, not the default 32-layer model', () => {
    const e = fail(
      'torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --bf16 --tensor-model-parallel-size 2',
    );
    expect(e.path).toBe('--num-layers');
    expect(e.message).toContain('--num-layers, --hidden-size, --num-attention-heads not given');
  });
  it('names only the missing flags, and says a checkpoint or YAML model is not read', () => {
    const e = fail('pretrain_gpt.py --num-layers 2 --hidden-size 64 --load /ckpt --use-checkpoint-args');
    expect(e.path).toBe('--num-attention-heads');
    expect(e.message).toContain('--num-attention-heads not given');
    expect(e.message).toContain('does not read a model from --use-checkpoint-args / --load');
  });
  it('--window-size and --window-attn-skip-freq place sliding layers; --enable-gpt-oss has rotary positions', () => {
    const gptOss = `${MODEL} --window-size 127,0 --window-attn-skip-freq 2 --enable-gpt-oss`;
    expect(model(ok(gptOss))).toMatchObject({
      sliding_window: 128,
      layer_types: ['sliding', 'full'],
      position: 'rope',
    });
    expect(model(ok(`${MODEL} --window-size 4095,0`))).toMatchObject({
      sliding_window: 4096,
      layer_types: ['sliding'],
    });
    expect(model(ok(`${MODEL} --window-size 127,0 --window-attn-skip-freq [1,1,0]`)).layer_types).toEqual([
      'sliding',
      'sliding',
      'full',
    ]);
    expect(model(ok(`${MODEL} --window-size -1,-1`)).layer_types).toBeUndefined(); // unlimited: full attention
    expect(model(ok(MODEL)).position).toBe('learned'); // Megatron's default, learned_absolute
  });
  it("Megatron's own tokenizers give the vocabulary when --vocab-size does not", () => {
    expect(model(ok(`${MODEL} --tokenizer-type GPT2BPETokenizer --vocab-file gpt2-vocab.json`)).vocab).toBe(50257);
    expect(model(ok(`${MODEL} --tokenizer-type BertWordPieceCase`)).vocab).toBe(29096); // + 100 T5 sentinels
    expect(model(ok(`${MODEL} --tokenizer-type GPT2BPETokenizer --vocab-size 50304`)).vocab).toBe(50304);
    expect(model(ok(`${MODEL} --tokenizer-type HuggingFaceTokenizer`)).vocab).toBeUndefined();
  });
  it('a hybrid layer pattern stands for --num-layers', () => {
    const r = ok('--hybrid-layer-pattern M*M* --hidden-size 64 --num-attention-heads 4');
    expect(model(r).layers).toBe(4);
  });
  it('a model config sourced from a file not given is an error (the real modelopt finetune.sh)', () => {
    expect(fail(real('modelopt_finetune.sh')).message).toContain('not given; Megatron requires --num-layers');
  });
});

describe('Megatron T5 (examples/t5/pretrain_t5.py)', () => {
  it('the real 220M script: 12 + 12 layers, source 512, target 128, a few GiB, not 524', () => {
    const r = ok(real('t5_220m.sh'));
    expect(r.config.model).toMatchObject({ layers: 12, encoder_layers: 12, hidden: 768, max_positions: 512 });
    expect(r.config.training).toMatchObject({ seq_len: 128, source_len: 512, micro_batch: 64 });
    expect(r.unsupported.join('\n')).not.toContain('--encoder-num-layers');
    expect(peakGiB(r.config)).toBeLessThan(60);
  });
  it('--decoder-num-layers is not the decoder depth in pretrain_t5.py: reported when it differs', () => {
    const r = ok(T5.replace('--decoder-num-layers 12', '--decoder-num-layers 6'));
    expect(model(r).layers).toBe(12);
    expect(r.unsupported.some((l) => l.startsWith('--decoder-num-layers: 6'))).toBe(true);
  });
  it('refuses what Megatron refuses', () => {
    expect(fail(T5.replace('--decoder-seq-length 128', '')).path).toBe('--decoder-seq-length');
    expect(fail(`${T5} --pipeline-model-parallel-size 2`).path).toBe('--pipeline-model-parallel-size');
    expect(fail(`${T5} --num-layers 12`).path).toBe('--encoder-num-layers');
    expect(fail(`${T5} --seq-length 512`).path).toBe('--encoder-seq-length');
  });
  it('relative position embeddings: T5 buckets', () => {
    const r = ok(`${T5} --position-embedding-type relative --relative-attention-num-buckets 16`);
    expect(model(r).relative_attention_buckets).toBe(16);
  });
});

describe('Megatron --decoder-seq-length (D4)', () => {
  const MM =
    'examples/multimodal/train.py --language-model-type mistral_7b --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 576 --decoder-seq-length 1024 --max-position-embeddings 512';
  it('multimodal: the language model runs --decoder-seq-length tokens; max positions raised to it', () => {
    const r = ok(MM);
    expect(training(r).seq_len).toBe(1024);
    expect(model(r).max_positions).toBe(1024);
    expect(r.notes.some((n) => n.includes('from --decoder-seq-length'))).toBe(true);
  });
  it('multimodal without --decoder-seq-length is an error (model.py asserts it)', () => {
    expect(fail(MM.replace('--decoder-seq-length 1024', '')).path).toBe('--decoder-seq-length');
  });
  it('the real NVLM video SFT script: seq 16384, not the vision side 256', () => {
    expect(training(ok(real('multimodal_nvlm_sft_qwen2p5_7b_video.sh'), 8)).seq_len).toBe(16384);
  });
  it('a GPT model reads --seq-length (or --encoder-seq-length) and lists --decoder-seq-length as read', () => {
    const base = '--num-layers 2 --hidden-size 64 --num-attention-heads 4';
    const r = ok(`${base} --seq-length 256 --decoder-seq-length 1024`);
    expect(training(r).seq_len).toBe(256);
    expect(r.notes.find((n) => n.startsWith('read, no effect'))).toContain('--decoder-seq-length');
    expect(training(ok(`${base} --encoder-seq-length 300`)).seq_len).toBe(300);
  });
});

describe('shell quoting (POSIX word expansion)', () => {
  const words = (script: string) => runShell(script).commands.at(-1);
  it('single quotes are literal', () => {
    expect(words("x=1\ncmd '$x ${x}' '\"a b\"'")).toEqual(['cmd', '$x ${x}', '"a b"']);
  });
  it('a double-quoted expansion is one word, however many blanks it holds', () => {
    expect(words('x="[a, b]"\ncmd k="${x}" "$x" "pre $x post"')).toEqual([
      'cmd',
      'k=[a, b]',
      '[a, b]',
      'pre [a, b] post',
    ]);
    expect(words('save="[\'model\', \'optimizer\']"\ncmd a.save_contents="${save}"')).toEqual([
      'cmd',
      "a.save_contents=['model', 'optimizer']",
    ]);
  });
  it('${var:-default} inside double quotes is one word; unquoted, split', () => {
    expect(words('cmd "${u:-a b}" ${u:-c d} "${u:+x y}"')).toEqual(['cmd', 'a b', 'c', 'd', '']);
  });
  it('an unquoted expansion splits on whitespace; blanks at its ends end the word', () => {
    expect(words('x="a  b"\nt="c "\nl=" d"\ncmd $x $t"q" p$l')).toEqual(['cmd', 'a', 'b', 'c', 'q', 'p', 'd']);
  });
  it('assignments do not split, arrays keep their items', () => {
    expect(words('y="a  b"\nx=$y\nA=("1 2" 3)\ncmd "$x" "${A[@]}" "${A[*]}" ${A[@]}')).toEqual([
      'cmd',
      'a  b',
      '1 2',
      '3',
      '1 2 3',
      '1',
      '2',
      '3',
    ]);
  });
});

describe('launch lines keep the shell words', () => {
  // a double-quoted expansion is one word, blanks and all (POSIX 2.6.5: no field splitting inside double quotes);
  // verl overrides such as key="[a, b]" (volcengine/verl recipe/dapo/test_dapo_7b_math.sh) must reach Hydra whole
  it('verl: a quoted list override is one Hydra value', () => {
    const script = [
      'targets="[q_proj, v_proj]"',
      'python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-7B \\',
      '  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 actor_rollout_ref.rollout.name=vllm \\',
      '  actor_rollout_ref.model.lora_rank=8 \\',
      '  actor_rollout_ref.model.target_modules="${targets}"',
      '',
    ].join('\n');
    const r = importConfig('verl', script);
    if ('error' in r) throw new Error(r.error.message);
    expect(JSON.stringify(r.config)).toContain('"lora_targets":["q","v"]');
  });
});

describe('context parallelism: --cp-comm-type (Transformer Engine) as parallel.cp_all_to_all', () => {
  const cp = (flags: string) => ok(`${MODEL} --seq-length 4096 --context-parallel-size 4 ${flags}`, 8);
  it('p2p and all_gather pass K/V round a ring; a2a trades heads over all of CP; a2a+p2p within the first level', () => {
    expect(cp('').config.parallel).not.toHaveProperty('cp_all_to_all');
    expect(cp('--cp-comm-type all_gather').config.parallel).not.toHaveProperty('cp_all_to_all');
    expect(cp('--cp-comm-type a2a').config.parallel).toMatchObject({ cp: 4, cp_all_to_all: 4 });
    const both = cp('--cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 2');
    expect(both.config.parallel).toMatchObject({ cp: 4, cp_all_to_all: 2 });
    expect(peakGiB(both.config)).toBeGreaterThan(0);
  });
  it('a hierarchy that is not the CP size, or an unknown kind, is an error naming the flag', () => {
    expect(
      fail(`${MODEL} --context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 4`).path,
    ).toBe('--hierarchical-context-parallel-sizes');
    expect(fail(`${MODEL} --context-parallel-size 4 --cp-comm-type ring`).message).toMatch(
      /allowed: p2p, all_gather, a2a/,
    );
  });
});
