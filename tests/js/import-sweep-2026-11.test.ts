// What a sweep over the frameworks' official example files found (2026-11-28): each case its file's own keys, cut
// down; the verbatim files are fixtures in tests/fixtures/real/ where they are short enough to keep.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../wasm/node.js';
import { patternFromRatios } from '../../frontend/config/importers/megatron.js';
import { importError, imported } from './import-helpers.js';

const swift = (flags: string) =>
  imported('swift', `NPROC_PER_NODE=2 \\\nswift sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    ${flags}\n`);

describe("ms-swift: Liger's fused cross-entropy where ms-swift computes the loss itself", () => {
  // swift/trainers/seq2seq_trainer.py compute_loss @3602360a pops the labels, so the model's Liger loss never runs
  it.each([
    ['--loss_scale hermes', 'loss_scale hermes'],
    ['--loss_scale last_round+react', 'loss_scale last_round+react'],
    ['--enable_dft_loss true', 'enable_dft_loss'],
    ['--label_smoothing_factor 0.1', 'label_smoothing_factor 0.1'],
  ])('%s: the loss is not counted as fused', (flags, why) => {
    const r = swift(`--use_liger_kernel true ${flags}`);
    expect(r.flat['training.loss']).toBeUndefined();
    expect(r.unsupported.join('\n')).toContain(`--use_liger_kernel: --${why}`);
  });
  it('a base strategy alone (0 / 1 weights) keeps Liger; --is_binary_loss_scale true too', () => {
    expect(swift('--use_liger_kernel true --loss_scale last_round').flat['training.loss']).toBe('fused');
    expect(swift('--use_liger_kernel true --loss_scale react --is_binary_loss_scale true').flat['training.loss']).toBe(
      'fused',
    );
  });
  it("sequence parallelism keeps ms-swift's own loss over the 16-bit logits", () => {
    expect(swift('--use_liger_kernel true --sequence_parallel_size 2').flat['training.loss']).toBe('bf16_ce');
  });
});

describe('LLaMA-Factory', () => {
  const yaml = `# accelerate launch --config_file examples/accelerate/fsdp_config.yaml src/train.py this.yaml
model_name_or_path: Qwen/Qwen3-8B
stage: sft
finetuning_type: full
per_device_train_batch_size: 1
bf16: true
`;
  const accelerate =
    'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_version: 1\nmixed_precision: bf16\nnum_processes: 2\n';
  it("the header's accelerate launch is reported only when its config is not given", () => {
    expect(imported('llamafactory', yaml, { worldSize: 2 }).unsupported.join('\n')).toContain('accelerate launch');
    const r = imported('llamafactory', yaml, { also: accelerate });
    expect(r.flat['parallel.engine']).toBe('fsdp1');
    expect(r.unsupported.join('\n')).not.toContain('accelerate launch');
  });
});

describe('axolotl', () => {
  const base = 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: true\n';
  it('sequence_len absent: the schema default, 512', () => {
    const r = imported('axolotl', base);
    expect(r.flat['training.seq_len']).toBe(512);
    expect(r.notes.join('\n')).toContain('sequence_len absent: 512 (axolotl schema default)');
  });
  it('a world size the dp_shard group does not divide is refused, naming the key', () => {
    const fsdp = `${base}sequence_len: 2048\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\ndp_shard_size: 16\n`;
    expect(importError('axolotl', fsdp, { worldSize: 8 }).message).toContain(
      'dp_shard_size: tensor x context x dp_shard sizes = 16 processes',
    );
    expect(imported('axolotl', fsdp, { worldSize: 32 }).flat['parallel.gpus']).toBe(32);
  });
});

describe('Megatron: the deprecated hybrid ratios as a layer pattern', () => {
  it("Megatron's own allocation, Python's rounding included", () => {
    // examples/mamba/train.sh @df61e60b, and the pattern its successor @d98e8a6 spells out
    expect(patternFromRatios(48, 0.08, 0.5)).toBe('M-M-M--M-*M-M-M-M--*M-M-M-M-*M--M-M-M-*M-M--M-M-');
    expect(patternFromRatios(4, 0, 0)).toBe('MMMM');
    expect(patternFromRatios(5, 0.5, 0)).toBe('M*M*M'); // round(2.5) = 2 in Python
    expect(patternFromRatios(3, 0.5, 0)).toBe('*M*'); // round(1.5) = 2
    expect(patternFromRatios(10, 0.25, 0.25)).toBe('MMM*-M*MM-'); // round(2.5) = 2 each (the reference in Python)
  });
  it('a sum of ratios above 1 is refused', () => {
    const sh =
      'torchrun pretrain_mamba.py --num-layers 8 --hidden-size 256 --num-attention-heads 4 --hybrid-attention-ratio 0.6 --hybrid-mlp-ratio 0.6 --spec megatron.core.models.mamba.mamba_layer_specs mamba_stack_spec';
    expect(importError('megatron', sh, { worldSize: 1 }).message).toContain('more than every layer');
  });
});

describe('verl', () => {
  // verl/trainer/config/_generated_ppo_megatron_trainer.yaml @b178a3cd (a fixture): ppo_megatron_trainer resolved,
  // with no defaults list; its model and micro-batches filled in as a run would
  const generated = readFileSync(
    join(repoRoot(), 'tests/fixtures/real/verl/_generated_ppo_megatron_trainer.yaml'),
    'utf8',
  )
    .replace(/~\/models\/deepseek-llm-7b-chat/g, 'Qwen/Qwen2.5-7B-Instruct')
    .replace(/(ppo|log_prob)_micro_batch_size_per_gpu: null/g, '$1_micro_batch_size_per_gpu: 2')
    .replace(/name: \?\?\?/, 'name: vllm');
  it('a whole Megatron trainer config with no defaults list is a Megatron run (it was refused)', () => {
    const r = imported('verl', generated);
    expect(r.flat['parallel.engine']).toBe('megatron');
  });
  const script = (extra: string) =>
    `python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_batch_size=8 data.max_prompt_length=512 data.max_response_length=512 actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct actor_rollout_ref.actor.ppo_mini_batch_size=8 actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.n=4 trainer.n_gpus_per_node=4 trainer.nnodes=1 ${extra}\n`;
  it('a global micro-batch is divided by the data-parallel ranks: the GPUs over the Ulysses group', () => {
    const r = imported(
      'verl',
      script(
        'actor_rollout_ref.actor.ppo_micro_batch_size=8 actor_rollout_ref.rollout.log_prob_micro_batch_size=8 actor_rollout_ref.actor.ulysses_sequence_parallel_size=2',
      ),
    );
    expect([r.flat['training.micro_batch'], r.flat['rl.logprob_micro_batch']]).toEqual([4, 4]); // 8 / (4 / 2)
  });
  it("the entropy kernel follows use_torch_compile and entropy_from_logits_with_chunking; the engine's EP is reported", () => {
    const micro =
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2';
    const eager = imported('verl', script(`${micro} actor_rollout_ref.actor.use_torch_compile=False`));
    expect(eager.flat['rl.entropy_kernel']).toBe('eager');
    // verl's chunks (2048 rows in fp32, kept for the update) are not config v1's chunked kernel (TRL's): reported
    const chunked = imported('verl', script(`${micro} actor_rollout_ref.actor.entropy_from_logits_with_chunking=True`));
    expect(chunked.flat['rl.entropy_kernel']).toBeUndefined();
    expect(chunked.unsupported.join('\n')).toContain("verl's chunked entropy");
    const padded = imported('verl', script(`${micro} actor_rollout_ref.model.use_remove_padding=False`));
    expect(padded.flat['rl.entropy_kernel']).toBe('eager');
    expect(imported('verl', script(`${micro} `)).flat['rl.entropy_kernel']).toBeUndefined(); // the profile's
    const ep = imported('verl', script(`${micro} actor_rollout_ref.rollout.expert_parallel_size=4`));
    expect(ep.unsupported.join('\n')).toContain('actor_rollout_ref.rollout.expert_parallel_size: 4');
  });
});

describe('DeepSpeed and NeMo-RL', () => {
  it('optimizer.params.torch_adam: torch.optim AdamW (foreach), not FusedAdam', () => {
    const ds = '{"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "AdamW", "params": {"torch_adam": true}}}';
    expect(imported('deepspeed', ds, { worldSize: 8 }).flat['training.optimizer_impl']).toBe('foreach');
  });
  it('vllm_cfg.precision fp8 is the engine in fp8 (it was refused)', () => {
    const base = readFileSync(join(repoRoot(), 'tests/fixtures/real/nemo_rl/grpo_math_1B.yaml'), 'utf8');
    const r = imported('nemo_rl', base.replace(/precision: \$\{policy\.precision\}/, 'precision: "fp8"'));
    expect(r.flat['rl.rollout.dtype']).toBe('fp8');
  });
});

describe("TRL: accelerate_config names one of TRL's packaged accelerate configs", () => {
  // huggingface/trl docs/source/clis.md @f2cd5771 ("accelerate_config: zero2  # or path/to/my/accelerate/config.yaml")
  const yaml = (v: string) =>
    `model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: stanfordnlp/imdb\naccelerate_config: ${v}\n`;
  it('a packaged name launches the run with it: its engine and processes', () => {
    const r = imported('trl', yaml('zero3  # or a path'), { trainer: 'sft' });
    expect(r.flat).toMatchObject({ 'parallel.engine': 'deepspeed', 'parallel.zero_stage': 3, 'parallel.gpus': 8 });
    expect(imported('trl', yaml('fsdp2'), { trainer: 'sft', worldSize: 4 }).flat).toMatchObject({
      'parallel.engine': 'fsdp2',
      'parallel.gpus': 4,
    });
  });
  it('a path is reported, to be given with the file', () => {
    const r = imported('trl', yaml('configs/my_accelerate.yaml'), { trainer: 'sft' });
    expect(r.unsupported.join('\n')).toContain('accelerate_config: "configs/my_accelerate.yaml" was not read');
  });
});

describe('after review', () => {
  it("ms-swift: the binary loss scales keep Liger's loss; --is_binary_loss_scale false drops it", () => {
    // swift/loss_scale/config/ignore_empty_think.json: weights 0.0 only (binary)
    expect(swift('--use_liger_kernel true --loss_scale ignore_empty_think').flat['training.loss']).toBe('fused');
    const forced = swift('--use_liger_kernel true --is_binary_loss_scale false');
    expect(forced.unsupported.join('\n')).toContain('--use_liger_kernel: --is_binary_loss_scale false');
  });
  it('ms-swift GRPO: a completion cap at the vLLM cap is not refused; the row is the cap', () => {
    const r = imported(
      'swift',
      'NPROC_PER_NODE=4 swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct --use_vllm true --vllm_mode colocate --max_length 2048 --vllm_max_model_len 2048 --max_completion_length 4096 --num_generations 4 --per_device_train_batch_size 4\n',
    );
    expect([r.flat['rl.prompt_len'], r.flat['rl.response_len']]).toEqual([1, 2047]);
  });
  it('axolotl: a world of tp x cp x ep leaves no data-parallel ranks, so dp_shard_size is not applied', () => {
    const y =
      'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nsequence_len: 2048\nbf16: true\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\ntensor_parallel_size: 2\ndp_shard_size: 4\n';
    const r = imported('axolotl', y, { worldSize: 2 });
    expect(r.flat['parallel.fsdp_shard_size']).toBeUndefined();
    expect(r.unsupported.join('\n')).toContain('leaves no data-parallel ranks');
  });
  it('torchtitan: expert_tensor_parallel_degree takes 1 or the TP degree under EP, and means nothing without it', () => {
    const toml = (par: string) =>
      `[model]\nname = "deepseek_v3"\nflavor = "671B"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\n[parallelism]\ndata_parallel_shard_degree = -1\n${par}\n`;
    const bad = importError(
      'torchtitan',
      toml('tensor_parallel_degree = 4\nexpert_parallel_degree = 8\nexpert_tensor_parallel_degree = 2'),
      {
        worldSize: 256,
      },
    );
    expect(bad.message).toContain('torchtitan takes 1 or the TP degree (4)');
    const none = imported('torchtitan', toml('expert_tensor_parallel_degree = 2'), { worldSize: 256 });
    expect(none.flat['parallel.etp']).toBeUndefined();
  });
  it('torchtune: every k-th layer with k above the layer count checkpoints none', () => {
    const y = `model:\n  _component_: torchtune.models.llama3.llama3_8b\ntokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  path: /tmp/t.model\n  max_seq_len: 2048\nbatch_size: 1\noptimizer:\n  _component_: torch.optim.AdamW\nloss:\n  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\nenable_activation_checkpointing: False\nac_mode: selective\nac_option: 64\ndtype: bf16\n`;
    const r = imported('torchtune', y, { worldSize: 8 });
    expect(r.flat['training.recompute_layers']).toBeUndefined();
    expect(r.notes.join('\n')).toContain('none is checkpointed');
  });
  it('verl under Megatron: a global micro-batch over the data-parallel ranks (the GPUs over TP x PP x CP), floored', () => {
    const sh = (micro: number) =>
      `python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer algorithm.adv_estimator=grpo data.train_batch_size=8 data.max_prompt_length=512 data.max_response_length=512 actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct actor_rollout_ref.actor.ppo_mini_batch_size=8 actor_rollout_ref.actor.ppo_micro_batch_size=${micro} actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.n=4 trainer.n_gpus_per_node=4 trainer.nnodes=1\n`;
    expect(imported('verl', sh(8)).flat['training.micro_batch']).toBe(4); // 8 // (4 / 2)
    const odd = imported('verl', sh(9));
    expect(odd.flat['training.micro_batch']).toBe(4);
    expect(odd.notes.join('\n')).toContain('floor-divided by the 2 data-parallel ranks');
  });
  it('NeMo-RL fp8: the layers it leaves in bf16 are reported', () => {
    const base = readFileSync(join(repoRoot(), 'tests/fixtures/real/nemo_rl/grpo_math_1B.yaml'), 'utf8');
    const y = base
      .replace(/precision: \$\{policy\.precision\}/, 'precision: "fp8"')
      .replace('num_last_layers_in_bf16: 0', 'num_last_layers_in_bf16: 2');
    expect(imported('nemo_rl', y).unsupported.join('\n')).toContain('vllm_cfg.num_last_layers_in_bf16');
  });
});

describe('launch scripts: Slurm directives and the allocator options', () => {
  it('Megatron: #SBATCH --nodes x --ntasks-per-node is the world when no launcher says it (pretrain_gpt3_175B.sh)', () => {
    const sh = `#!/bin/bash\n#SBATCH <SLURM OPTIONS> --nodes=128 --exclusive --ntasks-per-node=8 --job-name=megatron_gpt3_175b\nsrun python pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 1536 --bf16\n`;
    const r = imported('megatron', sh);
    expect([r.flat['parallel.gpus'], r.flat['parallel.gpus_per_node']]).toEqual([1024, 8]);
    expect(imported('megatron', sh, { worldSize: 512 }).flat['parallel.gpus']).toBe(512); // the option wins
  });
  it('PYTORCH_CUDA_ALLOC_CONF in an ms-swift or verl script sets the runtime keys; other options are reported', () => {
    const r = swift('--tuner_type lora').flat;
    expect(r['runtime.expandable_segments']).toBeUndefined();
    const env = imported(
      'swift',
      "PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True,max_split_size_mb:512,roundup_power2_divisions:4' NPROC_PER_NODE=2 swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_type lora\n",
    );
    expect([env.flat['runtime.expandable_segments'], env.flat['runtime.max_split_size_mib']]).toEqual([true, 512]);
    expect(env.unsupported.join('\n')).toContain('PYTORCH_CUDA_ALLOC_CONF roundup_power2_divisions');
  });
});
