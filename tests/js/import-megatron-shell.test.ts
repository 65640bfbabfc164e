// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are shell scripts, where ${NAME} is a variable
// Megatron scripts that do not give the model's shape (an error naming the flags, not llmem's default model),
// T5 (encoder and decoder layers, source and target lengths) and multimodal language models
// (--decoder-seq-length), and the shell evaluator's quoting rules.
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
const GiB = 2 ** 30;
const model = (r: Imported) => r.config.model as Record<string, unknown>;
const training = (r: Imported) => r.config.training as Record<string, unknown>;
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
