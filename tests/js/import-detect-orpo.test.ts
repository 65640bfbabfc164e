// Detection and trainer choice on real files: verl's SFT trainer scripts go to verl, which refuses them by name;
// alignment-handbook's TRL recipes go to trl, not axolotl; ORPO recipes (whose keys DPOConfig, ORPOConfig, CPOConfig
// and KTOConfig share) are no longer read as DPO with a reference model, and --trainer orpo reads them.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore, repoRoot } from '../../wasm/node.js';
import { resolveConfig } from '../../frontend/config/resolve.js';
import { detectKind } from '../../frontend/config/importers/index.js';
import { importError, imported } from './import-helpers.js';

const REAL = join(repoRoot(), 'tests/fixtures/real');
const real = (p: string) => readFileSync(join(REAL, p), 'utf8');

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const ok = imported;
const error = importError;

function peak(config: Config): number {
  const resolved = resolveConfig(config);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const res = core.estimate(resolved.config);
  if (!res.ok) throw new Error(`${res.error.path}: ${res.error.message}`);
  return (res as unknown as { peak_allocated: { bytes: number } }).peak_allocated.bytes;
}

describe('every real fixture is detected as its folder', () => {
  const kinds = readdirSync(REAL).filter((d) => existsSync(join(REAL, d, 'manifest.json')));
  for (const kind of kinds) {
    const manifest = JSON.parse(real(`${kind}/manifest.json`)) as {
      files: { file: string; also?: string; detected?: string | null }[];
    };
    it(kind, () => {
      // `detected`: a file kept to test a forced import that refuses it (another tool's file: what auto detects)
      const wrong = manifest.files
        .map((e) => [e.file, detectKind(e.file, real(`${kind}/${e.file}`)), e.detected] as const)
        .filter(([, got, detected]) => got !== (detected === undefined ? kind : (detected ?? undefined)));
      expect(wrong).toEqual([]);
    });
  }
});

describe('verl SFT trainer scripts (volcengine/verl@b178a3cd examples/sft/gsm8k/)', () => {
  const sp2 = real('verl/run_qwen_05_sp2.sh');
  it('are detected as verl, not Megatron', () => {
    expect(detectKind('run_qwen_05_sp2.sh', sp2)).toBe('verl');
    const gemma = sp2.replace('data.micro_batch_size=4', 'data.micro_batch_size_per_gpu=4');
    expect(detectKind('run_gemma_2b.sh', gemma)).toBe('verl');
    expect(detectKind('x.sh', 'torchrun -m verl.trainer.sft_trainer model.path=Qwen/Qwen2.5-0.5B\n')).toBe('verl');
  });
  it('are refused, naming the SFT trainer and what the importer reads', () => {
    const e = error('verl', sp2, { worldSize: 2 });
    expect(e.path).toBe('verl.trainer.fsdp_sft_trainer');
    expect(e.message).toContain("verl's SFT trainer (verl.trainer.fsdp_sft_trainer, config sft_trainer.yaml)");
    expect(e.message).toContain('llmem does not read');
    expect(e.message).toContain('verl.trainer.main_ppo');
    expect(error('verl', 'torchrun -m verl.trainer.sft_trainer a=1\n').message).toContain('sft_trainer_engine.yaml');
  });
});

describe('alignment-handbook TRL recipes (huggingface/alignment-handbook@925acdfe)', () => {
  const qlora = real('trl/zephyr-7b-beta-sft-qlora.yaml');
  it('are detected as trl, not axolotl (lora_r is ModelConfig key too)', () => {
    expect(detectKind('config_qlora.yaml', qlora)).toBe('trl');
    const r = ok('trl', qlora);
    expect(r.flat).toMatchObject({
      'training.finetune.method': 'qlora',
      'training.finetune.lora_rank': 16,
      'training.micro_batch': 4,
      'training.seq_len': 2048,
    });
    expect(String(r.flat['model.preset'])).toMatch(/^mistral-7b-v0\.1/);
  });
  it('axolotl files still go to axolotl', () => {
    expect(detectKind('a.yml', 'base_model: NousResearch/Llama-2-7b-hf\nlora_r: 32\n')).toBe('axolotl');
    expect(detectKind('a.yml', 'lora_r: 32\nlora_alpha: 16\n')).toBe('axolotl');
    expect(detectKind('a.yml', 'model_name_or_path: x/y\nadapter: qlora\nlora_r: 8\n')).toBe('axolotl');
    expect(detectKind('a.yml', 'model_name_or_path: x/y\nuse_peft: true\nlora_r: 8\n')).toBe('trl');
  });
});

describe('ORPO (trl/experimental/orpo/orpo_config.py, orpo_trainer.py @f2cd5771)', () => {
  const orpo = real('trl/zephyr-141b-orpo-full.yaml');
  it('a recipe whose keys several preference trainers share is refused, asking for the trainer', () => {
    expect(detectKind('config_full.yaml', orpo)).toBe('trl');
    const e = error('trl', orpo, { worldSize: 32 });
    expect(e.path).toBe('beta');
    expect(e.message).toContain('beta, max_prompt_length are keys of several preference trainers');
    expect(e.message).toContain('give the trainer: sft, dpo, orpo, grpo or reward');
    // the DPO recipe beside it has the same keys
    expect(error('trl', real('trl/zephyr-7b-beta-dpo-full.yaml')).message).toContain('no key only one of them');
  });
  it('--trainer orpo: no reference model, chosen and rejected in one batch', () => {
    const r = ok('trl', orpo, { worldSize: 32, trainer: 'orpo' });
    expect(r.flat).toMatchObject({
      'rl.algorithm': 'dpo',
      'rl.reference.enabled': false,
      'rl.prompt_len': 1792,
      'rl.response_len': 256,
      'rl.rollout_batch': 32,
      'rl.logits_response_only': false,
      'training.micro_batch': 1,
      'model.preset': 'mixtral-8x22b',
    });
    expect(r.notes.join('\n')).toContain('ORPOConfig (the trainer given)');
    expect(r.notes.join('\n')).toMatch(/no effect on per-GPU memory: .*\bbeta\b/);
    expect(r.unsupported).toEqual([]);
    const dpo = ok('trl', orpo, { worldSize: 32, trainer: 'dpo' });
    expect(dpo.flat['rl.reference.enabled']).toBe(true);
    expect(peak(r.config)).toBeLessThan(peak(dpo.config)); // no reference weights
  });
  it('keys DPOConfig shares with KTOConfig or ORPOConfig tell no trainer; DPO-only keys still do', () => {
    expect(error('trl', 'beta: 0.1\nprecompute_ref_log_probs: true\n').message).toContain('several preference');
    expect(error('trl', 'beta: 0.1\nmax_completion_length: 256\n').message).toContain('several preference');
    expect(ok('trl', 'beta: 0.1\nreference_free: true\n', { worldSize: 1 }).flat['rl.reference.enabled']).toBe(false);
    expect(ok('trl', 'loss_weights: [1.0]\n', { worldSize: 1 }).flat['rl.algorithm']).toBe('dpo');
  });
  it('CPOConfig and KTOConfig keys are refused by name', () => {
    const kto = error('trl', 'beta: 0.1\ndesirable_weight: 1.0\n');
    expect(kto.path).toBe('desirable_weight');
    expect(kto.message).toContain('a KTOConfig key; KTO is not a trainer llmem imports (sft, dpo, orpo, grpo)');
    expect(error('trl', 'simpo_gamma: 0.5\n').message).toContain('a CPOConfig key');
    const given = ok('trl', 'beta: 0.1\ndesirable_weight: 1.0\n', { worldSize: 1, trainer: 'dpo' });
    expect(given.unsupported).toContain('desirable_weight: a KTOConfig key in a DPO file; not applied');
  });
});

describe('CLI', () => {
  const cli = join(repoRoot(), 'build/js/bin/cli.js');
  const run = (args: string[]) => {
    try {
      return {
        rc: 0,
        out: execFileSync('node', [join(repoRoot(), 'bin/llmem.mjs'), ...args], {
          encoding: 'utf8',
          stdio: ['pipe', 'pipe', 'pipe'],
        }),
      };
    } catch (e) {
      const err = e as { status: number; stderr: string };
      return { rc: err.status, out: err.stderr };
    }
  };
  it.skipIf(!existsSync(cli))('--trainer orpo is accepted; another value is refused with the allowed ones', () => {
    const file = join(REAL, 'trl/zephyr-141b-orpo-full.yaml');
    const r = run(['import', 'auto', file, '--world-size', '32', '--trainer', 'orpo']);
    expect(r.rc).toBe(0);
    expect(JSON.parse(r.out).rl.reference.enabled).toBe(false);
    const bad = run(['import', 'auto', file, '--trainer', 'kto']);
    expect(bad.rc).not.toBe(0);
    expect(bad.out).toContain('--trainer must be sft, dpo, orpo, grpo or reward, not "kto"');
    const sft = run(['import', 'auto', join(REAL, 'verl/run_qwen_05_sp2.sh'), '--world-size', '2']);
    expect(sft.rc).not.toBe(0);
    expect(sft.out).toContain("verl's SFT trainer");
  });
});

describe('scripts of no format llmem reads', () => {
  // DeepSpeedExamples applications/DeepSpeed-Chat training scripts (45b4b71): HF-style underscored flags, not Megatron's
  it('a DeepSpeed-Chat launch script is not taken for Megatron arguments', () => {
    const chat =
      'deepspeed main.py \\\n   --data_path Dahoas/rm-static \\\n   --model_name_or_path meta-llama/Llama-2-7b-hf \\\n   --per_device_train_batch_size 4 \\\n   --max_seq_len 512 \\\n   --zero_stage 3 \\\n   --deepspeed\n';
    expect(detectKind('run_llama2_7b.sh', chat)).toBeUndefined();
    expect(
      detectKind('pretrain.sh', 'torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4\n'),
    ).toBe('megatron');
  });
});
