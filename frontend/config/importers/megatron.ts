// Megatron-LM command-line arguments (an argument line, or a launch script with
// variables and bash arrays) -> config v1. Flags, defaults and derived values are
// those of megatron/training/arguments.py (add_*_args and validate_args):
// https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py
import { applyAllocConf } from './alloc-conf.js';
import { Draft, guard, ImportError, int, num, oneOf, type ImportResult } from './common.js';
import { importDeepSpeed } from './deepspeed.js';
import { hybridSymbol, MAX_PATTERN as MAX_LAYER_TYPES, shortestPattern } from './hf-layers.js';
import { runShell } from './shell.js';

export interface MegatronOptions {
  /** world size when the text does not give it (--world-size, torchrun --nproc-per-node x --nnodes, WORLD_SIZE=) */
  worldSize?: number;
}

type Args = Map<string, string[]>;

// Flags with no effect on per-GPU memory (schedules, data, logging, checkpoints, kernels, launchers).
const IGNORED =
  /^(lr|min-lr|lr-.*|weight-decay.*|start-weight-decay|end-weight-decay|clip-grad|adam-.*|sgd-momentum|init-method-std|init-method-xavier-uniform|seed|train-iters|train-samples|eval-.*|log-.*|logging-level|tensorboard-.*|wandb-.*|save|load|pretrained-checkpoint|save-interval|data-path|train-data-path|valid-data-path|test-data-path|split|tokenizer-type|tokenizer-model|vocab-file|merge-file|data-cache-path|num-workers|dataloader-type|distributed-backend|distributed-timeout-minutes|exit-.*|ckpt-.*|async-save|use-checkpoint-args|use-dist-ckpt|dist-ckpt-.*|no-load-.*|no-save-.*|finetune|mock-data|rotary-base|rotary-percent|rotary-seq-len-interpolation-factor|rope-scaling.*|use-rope-scaling|norm-epsilon|layernorm-epsilon|apply-layernorm-1p|no-masked-softmax-fusion|no-bias-.*-fusion|no-rope-fusion|attention-softmax-in-fp32|transformer-impl|use-mcore-models|use-legacy-models|overlap-grad-reduce|overlap-param-gather|overlap-param-gather-with-optimizer-step|align-grad-reduce|align-param-gather|no-async-tensor-model-parallel-allreduce|async-tensor-model-parallel-allreduce|no-gradient-accumulation-fusion|tp-comm-(?!overlap$).*|moe-grouped-gemm|moe-permute-fusion|moe-shared-expert-overlap|moe-token-drop-policy|moe-input-jitter-eps|moe-per-layer-logging|manual-gc.*|node_rank|node-rank|master_addr|master-addr|master_port|master-port|rdzv_.*|rdzv-.*|rotary-interleaved|no-query-key-layer-scaling|apply-query-key-layer-scaling|use-cpu-initialization|data-parallel-random-init|timing-log-.*|use-pytorch-profiler|profile.*|check-for-nan-in-loss-and-grad|no-check-for-nan-in-loss-and-grad|bias-swiglu-fusion|no-bias-swiglu-fusion|cross-entropy-fusion-impl|qk-layernorm-weight-decay|dist-ckpt-strictness|no-create-attention-mask-in-dataloader|num-dataset-builder-threads|object-storage-cache-path|legacy-tokenizer|calculate-per-token-loss|deterministic-mode|no-persist-layer-norm|num-distributed-optimizer-instances|te-rng-tracker|inference-.*|decoupled-lr|decoupled-min-lr|fp8-amax-.*|tiktoken-pattern|tokenizer-.*|no-use-tokenizer-model-from-checkpoint-args|hysteresis|loss-scale|initial-loss-scale|min-loss-scale|loss-scale-window|override-opt_param-scheduler|train-tokens|rotary-scaling-factor|mscale|mscale-all-dim|rope-type|activation-func-clamp-value|glu-linear-offset|disable-bf16-reduced-precision-matmul|export-.*|mtp-loss-scaling-factor|auto-detect-ckpt-format|enable-experimental|init-model-with-meta-device|moe-flex-dispatcher-backend|use-te|squared-relu|trust-remote-code|disable-gloo-process-groups|disable-straggler-on-startup|straggler-.*|check-weight-hash-across-dp-replicas-interval|rerun-mode|enable-cuda-graph|cuda-graph-.*|no-mmap-bin-files|reset-position-ids|reset-attention-mask|eod-mask-loss)$/;
// Router flags with no per-GPU memory effect beyond what docs/memory-model.md §7.10 counts for
// every router (fp32 logits and probabilities, s·b·E values each; the top-k indices):
// megatron/core/transformer/moe/router.py and moe_utils.py (NVIDIA/Megatron-LM d98e8a6).
const ROUTER_IGNORED = new Set([
  'moe-router-load-balancing-type', // aux / seq / global aux losses and sinkhorn reduce the saved probabilities to a scalar
  'moe-aux-loss-coeff', // a loss weight
  'moe-z-loss-coeff', // a loss weight (the z-loss reads the saved logits)
  'moe-router-score-function', // softmax, sigmoid or sqrtsoftplus: the same s·b·E scores
  'moe-router-pre-softmax', // softmax before or after the top-k: the same tensors
  'moe-router-topk-scaling-factor', // a scalar on the chosen probabilities
  'moe-router-bias-update-rate', // the update step of the expert bias (the bias itself: --moe-router-enable-expert-bias)
  'moe-router-num-groups', // group-limited routing changes which experts are chosen, not how many
  'moe-router-group-topk',
  'moe-router-topk-limited-devices',
  'moe-router-fusion', // a fused kernel of the same routing
  'moe-router-force-load-balancing', // benchmark routing with random logits: balanced, the load_imbalance default
  'moe-router-padding-for-fp8', // pads each expert's tokens to a multiple of 16/32: under 32 tokens per local expert
  'moe-router-padding-for-quantization',
]);
// Mamba / hybrid models (megatron/core/models/mamba, --hybrid-layer-pattern): a pattern of M * - E is placed as
// config v1 layer types (hybridLayers); every other such flag is read and reported, never dropped.
const HYBRID = /^(is-hybrid-model|hybrid-.*|mtp-hybrid-override-pattern|mamba-.*|spec)$/;
// ...of which these are read once the pattern is placed (--spec names the Mamba stack the pattern builds)
const HYBRID_PLACED =
  /^(is-hybrid-model|hybrid-layer-pattern|hybrid-override-pattern|hybrid-attention-ratio|hybrid-mlp-ratio|mamba-(state-dim|head-dim|num-groups|num-heads)|spec)$/;
// Megatron-DeepSpeed flags (microsoft/Megatron-DeepSpeed megatron/arguments.py) with no memory effect.
const DEEPSPEED_IGNORED = new Set([
  'data-impl',
  'no-pipeline-parallel',
  'deepspeed_config', // read with --deepspeed
  'deepspeed-config',
  'deepspeed-activation-checkpointing', // DeepSpeed's implementation of --checkpoint-activations
  'moe-loss-coeff', // a loss weight
  'moe-eval-capacity-factor', // evaluation only
  'create-moe-param-group', // optimizer parameter groups
  'use-flash-attn-v1', // read with --deepspeed (the attention kernel)
  'use-flash-attn-v2',
  'use-flash-attn-triton',
  'use-flash-attn-builder',
]);
// Flags read and reported with a reason of their own.
const NOT_MODELLED: Record<string, string> = {
  'empty-unused-memory-level':
    "torch.cuda.empty_cache() between steps is not modelled (the allocator's reserve is counted as if kept)",
  'ds-sequence-parallel-size': 'DeepSpeed-Ulysses sequence parallelism is not modelled',
  'cpu-optimizer':
    "Megatron-DeepSpeed's optimizer on the CPU is not mapped (set parallel.offload_optimizer cpu with ZeRO)",
  'mlp-type': 'the residual MoE of Megatron-DeepSpeed (a dense MLP beside the experts) is not modelled',
  'moe-min-capacity': 'the minimum expert capacity is not modelled (the capacity factor is)',
  'rampup-batch-size': 'batch-size ramp-up: the final global batch is counted',
  // examples/multimodal (pretrain_vlm / train.py): the frozen modules keep no gradients and no optimizer states
  'freeze-LM':
    'the language model is frozen (no gradients or optimizer states for its weights); config v1 trains the whole language model (or LoRA adapters on it), so its gradients and states are counted: an over-estimate',
  'freeze-ViT':
    'the vision tower is frozen; the multimodal tower is not imported (set model.vision and model.vision.train "projector")',
};
// Megatron-DeepSpeed flags read only with --deepspeed (Megatron-LM has no such flag).
const DEEPSPEED_ONLY = new Set([
  'zero-stage',
  'topk',
  'expert-interval',
  'moe-expert-parallel-size',
  'moe-train-capacity-factor',
  'disable-moe-token-dropping',
  'enable-expert-tensor-parallelism',
]);
// Commands whose words are not the training's arguments.
const NOT_LAUNCH = new Set([
  'echo',
  'printf',
  'mkdir',
  'rm',
  'cp',
  'mv',
  'ls',
  'touch',
  'cat',
  'tee',
  'sleep',
  'wait',
  'chmod',
  'ln',
  'date',
  'hostname',
  'nvidia-smi',
  'git',
  'pip',
  'tar',
  'wget',
  'curl',
]);
// Flags that are handled below (read through the Args map).
const HANDLED = new Set([
  'tp-comm-overlap',
  'num-layers',
  'hidden-size',
  'ffn-hidden-size',
  'num-attention-heads',
  'num-query-groups',
  'kv-channels',
  'swiglu',
  'normalization',
  'disable-bias-linear',
  'add-qkv-bias',
  'add-bias-linear',
  'untie-embeddings-and-output-weights',
  'position-embedding-type',
  'enable-gpt-oss',
  'window-size',
  'window-attn-skip-freq',
  'use-rotary-position-embeddings',
  'no-position-embedding',
  'max-position-embeddings',
  'qk-layernorm',
  'vocab-size',
  'make-vocab-size-divisible-by',
  'padded-vocab-size',
  'num-experts',
  'moe-router-topk',
  'moe-ffn-hidden-size',
  'moe-shared-expert-intermediate-size',
  'moe-layer-freq',
  'moe-expert-capacity-factor',
  'moe-router-enable-expert-bias',
  'multi-latent-attention',
  'q-lora-rank',
  'kv-lora-rank',
  'qk-head-dim',
  'qk-pos-emb-head-dim',
  'v-head-dim',
  'mtp-num-layers',
  'seq-length',
  'encoder-seq-length',
  'decoder-seq-length',
  'encoder-num-layers',
  'decoder-num-layers',
  'relative-attention-num-buckets',
  'micro-batch-size',
  'global-batch-size',
  'bf16',
  'fp16',
  'fp8-format',
  'fp8',
  'accumulate-allreduce-grads-in-fp32',
  'tensor-model-parallel-size',
  'pipeline-model-parallel-size',
  'num-layers-per-virtual-pipeline-stage',
  'microbatch-group-size-per-virtual-pipeline-stage',
  'virtual-pipeline-model-parallel-size',
  'context-parallel-size',
  'cp-comm-type',
  'hierarchical-context-parallel-sizes',
  'expert-model-parallel-size',
  'expert-tensor-parallel-size',
  'sequence-parallel',
  'decoder-first-pipeline-num-layers',
  'decoder-last-pipeline-num-layers',
  'recompute-granularity',
  'recompute-method',
  'recompute-num-layers',
  'recompute-modules',
  'recompute-activations',
  'use-distributed-optimizer',
  'optimizer',
  'optimizer-cpu-offload',
  'optimizer-offload-fraction',
  'use-flash-attn',
  'attention-backend',
  'hidden-dropout',
  'attention-dropout',
  'world-size',
  'nproc_per_node',
  'nproc-per-node',
  'nnodes',
  'use-torch-fsdp2',
  'cpu-offloading',
  'fp8-param-gather',
  'fp8-recipe',
  'fp4-format',
  'fp4-recipe',
  'fp4-param-gather',
  'use-precision-aware-optimizer',
  'main-params-dtype',
  'exp-avg-dtype',
  'exp-avg-sq-dtype',
  'cross-entropy-loss-fusion',
  'group-query-attention',
  'moe-layer-recompute',
  'distribute-saved-activations',
  'grad-reduce-in-bf16',
  'use-megatron-fsdp',
  'data-parallel-sharding-strategy',
  'moe-router-dtype',
  'moe-token-dispatcher-type',
  'deepspeed',
  'zero-stage',
  'num-key-value-heads',
  'checkpoint-activations',
  'quick-geglu',
  'softmax-type',
  'num_gpus',
  'num_nodes',
  ...DEEPSPEED_ONLY,
]);
const RECOMPUTE_MODULES = ['core_attn', 'mlp', 'layernorm', 'moe', 'moe_act', 'mla_up_proj'];

/** Import Megatron-LM arguments. */
export function importMegatron(text: string, options: MegatronOptions = {}): ImportResult {
  return guard(() => {
    const run = runShell(text);
    let { args, launches, scripts } = launchArgs(run.commands);
    let fromVariables: string[] = [];
    if (!launches) ({ args, launches, names: fromVariables } = variableArgs(run.vars));
    if (!launches)
      throw new ImportError(
        '',
        'Megatron arguments: no Megatron-LM flag found (expected e.g. --num-layers, --tensor-model-parallel-size)',
      );
    const d = new Draft();
    d.stack('megatron');
    for (const note of run.notes) d.note(note);
    if (fromVariables.length)
      d.note(
        `no command of the script runs with Megatron flags (they go to sbatch / srun, or to a script that sources this one): the flags in ${fromVariables.join(', ')} were read`,
      );
    else if (launches > 1) d.note(`Megatron flags found in ${launches} commands: read together, a later flag winning`);
    for (const file of run.sourced)
      d.skip(
        `source ${file}`,
        'the sourced file is not given: the variables and flags it sets are not read; not applied',
      );
    try {
      apply(d, args, run.vars, options, modelKind(args, scripts), sbatchWorld(text));
      applyAllocConf(d, run.vars);
    } catch (e) {
      // a refusal for a missing or inconsistent flag the sourced files may have set (Megatron-LM's sc21 scripts set
      // variables and source CONFIG.sh, which turns them into flags)
      if (e instanceof ImportError && run.sourced.length)
        throw new ImportError(
          e.path,
          `${e.message} (the script sources ${run.sourced.join(', ')}, which llmem is not given: the flags may be set there; import a script that spells them out)`,
        );
      throw e;
    }
    if (args.has('deepspeed')) deepspeed(d, args, run.written);
    const placed = d.get('model.layer_types') !== undefined; // the pattern's layers and Mamba sizes were read
    for (const [flag] of args)
      if (placed && HYBRID_PLACED.test(flag)) continue;
      else if (HYBRID.test(flag))
        d.skip(
          `--${flag}`,
          `Mamba / hybrid layers${flag.includes('pattern') ? ` (pattern ${(args.get(flag) ?? []).join(' ')})` : ''} are not placed (a pattern llmem cannot read, or no layer count): every layer is counted as an attention + MLP transformer layer; not applied`,
        );
      else if (flag in NOT_MODELLED) d.skip(`--${flag}`, `${NOT_MODELLED[flag]}; not applied`);
      else if (DEEPSPEED_ONLY.has(flag) && !args.has('deepspeed'))
        d.skip(`--${flag}`, 'a Megatron-DeepSpeed flag, read only with --deepspeed; not applied');
      else if (!HANDLED.has(flag) && !IGNORED.test(flag) && !ROUTER_IGNORED.has(flag) && !DEEPSPEED_IGNORED.has(flag))
        d.skip(`--${flag}`, 'not a Megatron-LM flag llmem maps; not applied');
    const ignored = [...args.keys()].filter(
      (f) => (IGNORED.test(f) || ROUTER_IGNORED.has(f) || DEEPSPEED_IGNORED.has(f)) && !HANDLED.has(f),
    );
    for (const f of ignored) d.ignore(`--${f}`);
    return d.result();
  });
}

/** The flags of the commands that launch training (each command parsed on its own, later ones winning). */
function launchArgs(commands: string[][]): { args: Args; launches: number; scripts: string[] } {
  const args: Args = new Map();
  const scripts: string[] = [];
  let launches = 0;
  for (const argv of commands) {
    if (!argv.length || NOT_LAUNCH.has(argv[0].split('/').pop() ?? '')) continue;
    const words = argv.flatMap((w) => w.split(/\s+/)).filter(Boolean);
    const own = parseArgs(words);
    if (![...own.keys()].some((k) => HANDLED.has(k))) continue;
    launches++;
    for (const [k, v] of own) args.set(k, v);
    for (const w of words) if (/\.py$/.test(w)) scripts.push(w.split('/').pop() ?? w);
  }
  return { args, launches, scripts };
}

/** Which Megatron model the flags build: a GPT-style decoder (pretrain_gpt.py and the like), T5
 * (examples/t5/pretrain_t5.py) or the language model of a LLaVA-style multimodal model (examples/multimodal). */
type ModelKind = 'gpt' | 't5' | 'multimodal';

function modelKind(args: Args, scripts: string[]): ModelKind {
  // --encoder-num-layers / --decoder-num-layers are read only by the T5 model (examples/t5/pretrain_t5.py
  // model_provider, arguments.py validate_args L1304-1311, NVIDIA/Megatron-LM d98e8a6)
  if (scripts.includes('pretrain_t5.py') || args.has('encoder-num-layers') || args.has('decoder-num-layers'))
    return 't5';
  // --language-model-type is required=True in examples/multimodal/multimodal_args.py (d98e8a6)
  if (args.has('language-model-type')) return 'multimodal';
  return 'gpt';
}

/** For a file that launches nothing (a model config to be sourced, an sbatch wrapper): the flags its variables hold. */
function variableArgs(vars: Map<string, string>): { args: Args; launches: number; names: string[] } {
  const args: Args = new Map();
  const names: string[] = [];
  for (const [name, value] of vars) {
    const own = parseArgs(value.split(/\s+/).filter(Boolean));
    if (![...own.keys()].some((k) => HANDLED.has(k))) continue;
    names.push(name);
    for (const [k, v] of own) args.set(k, v);
  }
  return { args, launches: names.length, names };
}

/** The flags as apply reads them: present, a single value (one whose value the script leaves unset is
 * reported once and not applied), a whole number (at least min). */
interface Flags {
  d: Draft;
  args: Args;
  has: (f: string) => boolean;
  one: (f: string) => string | undefined;
  n: (f: string, min?: number) => number | undefined;
}

function readFlags(d: Draft, args: Args): Flags {
  const has = (f: string) => args.has(f);
  const unset = new Set<string>();
  const one = (f: string): string | undefined => {
    const v = args.get(f);
    if (!v) return undefined;
    if (!v.length) throw new ImportError(`--${f}`, `--${f}: needs a value`);
    // a value the script leaves to its environment, its arguments or a sourced file: reported, not guessed
    if (/\$/.test(v[0])) {
      if (!unset.has(f))
        d.skip(
          `--${f}`,
          `its value ${v[0]} is not set in the file (an environment variable, a script argument, a sourced file or a command's output); not applied`,
        );
      unset.add(f);
      return undefined;
    }
    return v[0];
  };
  const n = (f: string, min = 1): number | undefined => {
    const v = one(f);
    return v === undefined ? undefined : int(v, `--${f}`, min);
  };
  return { d, args, has, one, n };
}

function apply(
  d: Draft,
  args: Args,
  vars: Map<string, string>,
  options: MegatronOptions,
  kind: ModelKind,
  sbatch?: SlurmWorld,
): void {
  const f = readFlags(d, args);
  const ds = f.has('deepspeed');
  d.set('parallel.engine', f.has('use-torch-fsdp2') ? 'fsdp2' : 'megatron');
  if (f.has('use-torch-fsdp2')) d.note('--use-torch-fsdp2: data parallelism with PyTorch FSDP2 (engine fsdp2)');
  const { layers, ffn } = modelShape(f, kind);
  modelOptions(f, kind);
  const experts = moe(f, ds, layers, ffn);
  attentionVariants(f);
  slidingWindows(f);
  const { tp, pp, cp } = parallelSizes(f, ds, experts);
  // examples/t5/pretrain_t5.py model_provider (d98e8a6): "Pipeline parallelism is not supported for T5."
  if (kind === 't5' && pp > 1)
    throw new ImportError(
      '--pipeline-model-parallel-size',
      `--pipeline-model-parallel-size ${pp}: Megatron's T5 (pretrain_t5.py) supports only 1`,
    );
  pipeline(f, layers, pp);
  sharding(f);
  const world = worldSize(f, vars, options, sbatch);
  batch(f, world, tp, pp, cp, kind);
  dtypes(f);
  lowPrecision(f);
  optimizer(f);
  attention(f, ds);
  recompute(f);
  requireShape(f, kind); // after the flags are read, so a malformed value is the error that names its flag
}

// A hybrid pattern's symbols (megatron/training/arguments.py --hybrid-layer-pattern, d98e8a6; each symbol a layer of
// megatron/core/models/mamba MambaStack) are Nemotron-H's: hf-layers.ts hybridSymbol reads both.

/**
 * A hybrid Mamba pattern as config v1 layers: model.layer_types and model.mlp_types per symbol, and the Mamba-2
 * sizes (transformer_config.py d98e8a6: mamba_state_dim 128, mamba_head_dim 64, mamba_num_groups 8, mamba_num_heads
 * or else 2 x hidden / head dim: core/ssm/mamba_mixer.py expand 2, d_conv 4, chunk 128, no projection bias). False:
 * a symbol config v1 cannot place (G Gated DeltaProduct, D sparse attention), left to the caller's fallback.
 */
function hybridLayers(d: Draft, symbols: string, n: Flags['n'], hidden: number | undefined): boolean {
  const layers = [...symbols].map(hybridSymbol);
  if (!layers.length || layers.some((l) => l === undefined)) return false;
  const mixers = shortestPattern(layers.map((l) => l![0])),
    mlps = shortestPattern(layers.map((l) => l![1]));
  if (mixers.length > MAX_LAYER_TYPES || mlps.length > MAX_LAYER_TYPES) return false;
  d.set('model.layer_types', mixers);
  d.set('model.mlp_types', mlps);
  if (mixers.includes('ssm')) {
    const headDim = n('mamba-head-dim') ?? 64;
    const heads = n('mamba-num-heads') ?? (hidden ? Math.floor((2 * hidden) / headDim) : undefined);
    d.set('model.ssm.state_size', n('mamba-state-dim') ?? 128);
    d.set('model.ssm.head_dim', headDim);
    d.set('model.ssm.groups', n('mamba-num-groups') ?? 8);
    if (heads) d.set('model.ssm.heads', heads);
    d.set('model.ssm.conv_kernel', 4);
    d.set('model.ssm.chunk_size', 128);
    d.set('model.ssm.bias', false);
    d.set('model.ssm.conv_bias', true);
  }
  d.note(
    `hybrid layer pattern: ${symbols.length} layers (M Mamba-2, * attention, - MLP, E MoE) -> model.layer_types and model.mlp_types`,
  );
  return true;
}

/** A MambaStack's layer spec (--spec megatron.core.models.mamba.mamba_layer_specs mamba_stack_spec): pretrain_mamba.py. */
const mambaSpec = (args: Map<string, string[]>): boolean => (args.get('spec') ?? []).some((s) => /mamba/.test(s));

/** Python's round(): halves to the even neighbour. */
const pyRound = (x: number): number => (Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x));

/**
 * The layer pattern Megatron derives from the deprecated ratios (hybrid_layer_allocation.py pattern_from_ratios
 * @d98e8a6, the same as mamba_hybrid_layer_allocation.py _allocate_auto @df61e60b): attention layers evenly spaced,
 * starting and ending with Mamba; then MLP layers evenly among the Mamba ones, right-justified; the rest Mamba.
 */
export function patternFromRatios(layers: number, attention: number, mlp: number): string {
  const types = new Array<string>(layers).fill('M');
  const attn = pyRound(layers * attention);
  let mamba = layers - attn;
  const section = mamba / (attn + 1);
  let x = section;
  for (let i = 0; i < layers; i++)
    if (x < 0.5) {
      types[i] = '*';
      x += section;
    } else x -= 1;
  const mlps = pyRound(layers * mlp);
  if (mlps > 0) {
    mamba -= mlps;
    const ratio = mamba / mlps;
    x = ratio;
    for (let i = 0; i < layers; i++)
      if (types[i] === 'M') {
        if (x < 0.5) {
          types[i] = '-';
          x += ratio;
        } else x -= 1;
      }
  }
  return types.join('');
}

/** The model shape (add_network_size_args): layers, widths, heads; the FFN width it derives when not given. */
function modelShape({ d, args, has, one, n }: Flags, kind: ModelKind): { layers?: number; ffn?: number } {
  // validate_args L1304-1311 (NVIDIA/Megatron-LM d98e8a6): --num-layers, else --encoder-num-layers (not both)
  if (has('num-layers') && has('encoder-num-layers'))
    throw new ImportError(
      '--encoder-num-layers',
      '--num-layers and --encoder-num-layers: Megatron refuses both (validate_args: "cannot have both num-layers and encoder-num-layers specified")',
    );
  const layers = n('num-layers') ?? n('encoder-num-layers');
  const hidden = n('hidden-size');
  const heads = n('num-attention-heads');
  if (layers) d.set('model.layers', layers);
  if (kind === 't5') t5Layers(d, n, layers);
  else if (has('decoder-num-layers')) d.ignore('--decoder-num-layers');
  // a hybrid model's layers are the symbols of its pattern (M Mamba, * attention, - MLP, E MoE; | splits stages,
  // / starts the MTP part); --num-layers is then ignored by Megatron (validate_args)
  let pattern = args.get('hybrid-layer-pattern')?.[0] ?? args.get('hybrid-override-pattern')?.[0];
  const ratios = has('hybrid-attention-ratio') || has('hybrid-mlp-ratio');
  if (!pattern && layers && (ratios || mambaSpec(args))) {
    const ratio = (f: string): number => {
      const v = one(f);
      const r = v === undefined ? 0 : num(v, `--${f}`, 0);
      if (r > 1) throw new ImportError(`--${f}`, `--${f}: a ratio of the layers, at most 1, not ${r}`);
      return r;
    };
    const attention = ratio('hybrid-attention-ratio'),
      mlp = ratio('hybrid-mlp-ratio');
    if (attention + mlp > 1)
      throw new ImportError(
        '--hybrid-mlp-ratio',
        `--hybrid-attention-ratio ${attention} + --hybrid-mlp-ratio ${mlp}: more than every layer (Megatron asserts their sum is at most 1)`,
      );
    pattern = patternFromRatios(layers, attention, mlp);
    d.note(
      `${ratios ? `--hybrid-attention-ratio ${attention} / --hybrid-mlp-ratio ${mlp}` : 'a Mamba --spec with no pattern and no ratios (0 each)'} over ${layers} layers: the pattern ${pattern} (megatron/core/models/hybrid/hybrid_layer_allocation.py pattern_from_ratios @d98e8a6; ssm/mamba_hybrid_layer_allocation.py _allocate_auto before)`,
    );
  }
  if (pattern && !pattern.includes('$')) {
    const count = pattern.split('/')[0].replace(/\|/g, '').length;
    d.set('model.layers', count);
    if (!hybridLayers(d, pattern.split('/')[0].replace(/\|/g, ''), n, hidden))
      d.note(`hybrid layer pattern: model.layers ${count}, one per symbol, each counted as an attention + MLP layer`);
  }
  if (hidden) d.set('model.hidden', hidden);
  if (heads) d.set('model.heads', heads);
  const gqa = has('group-query-attention');
  const kvHeads = gqa ? (n('num-query-groups') ?? 1) : n('num-key-value-heads'); // the latter: Megatron-DeepSpeed
  if (heads) d.set('model.kv_heads', kvHeads ?? heads);
  const kvc = n('kv-channels');
  if (kvc) d.set('model.head_dim', kvc);
  else if (hidden && heads) d.set('model.head_dim', hidden / heads);
  const swiglu = has('swiglu');
  // --quick-geglu is gated too (megatron/training/argument_utils.py: gated_linear_unit), with the 4h default size
  d.set('model.mlp', swiglu || has('quick-geglu') ? 'gated' : 'plain');
  let ffn = n('ffn-hidden-size');
  if (ffn === undefined && hidden) {
    // validate_args: 4h, or for SwiGLU int(4h * 2/3 / 64) * 64
    ffn = swiglu ? Math.floor((4 * hidden * 2) / 3 / 64) * 64 : 4 * hidden;
    d.note(`no --ffn-hidden-size: ${ffn} (Megatron default for ${swiglu ? 'SwiGLU' : 'GeLU'})`);
  }
  if (ffn) d.set('model.ffn_hidden', ffn);
  return { layers, ffn };
}

/** Validate_args's required model flags (arguments.py L1304-1317, NVIDIA/Megatron-LM d98e8a6: num_layers
 * (or encoder_num_layers, or a hybrid layer pattern, L797), hidden_size, num_attention_heads): without them
 * there is no model to count, and llmem does not read one from a checkpoint or a YAML config. */
function requireShape({ has }: Flags, kind: ModelKind): void {
  const layers =
    has('num-layers') || has('encoder-num-layers') || has('hybrid-layer-pattern') || has('hybrid-override-pattern');
  const missing = [
    ...(layers ? [] : [kind === 't5' ? '--encoder-num-layers' : '--num-layers']),
    ...['hidden-size', 'num-attention-heads'].filter((f) => !has(f)).map((f) => `--${f}`),
  ];
  if (!missing.length) return;
  const elsewhere = ['use-checkpoint-args', 'yaml-cfg', 'load', 'pretrained-checkpoint'].filter(has);
  throw new ImportError(
    missing[0],
    `Megatron arguments: ${missing.join(', ')} not given; Megatron requires --num-layers (or --encoder-num-layers / --hybrid-layer-pattern), --hidden-size and --num-attention-heads (megatron/training/arguments.py validate_args)${
      elsewhere.length ? `, and llmem does not read a model from ${elsewhere.map((f) => `--${f}`).join(' / ')}` : ''
    }: add the flags (or the file that sets them, e.g. a sourced model config), or import the model another way (llmem import hf <model id>)`,
  );
}

/** T5 (examples/t5/pretrain_t5.py model_provider, NVIDIA/Megatron-LM d98e8a6): the encoder has
 * --encoder-num-layers (= --num-layers) layers, and the decoder is built from config.num_layers, which
 * validate_args sets to the same count; --decoder-num-layers enters only the virtual-pipeline arithmetic. */
function t5Layers(d: Draft, n: Flags['n'], layers: number | undefined): void {
  if (layers) {
    d.set('model.encoder_layers', layers);
    d.note(
      `T5 (encoder-decoder): ${layers} encoder layers (model.encoder_layers) and ${layers} decoder layers (model.layers): pretrain_t5.py builds both stacks with --encoder-num-layers`,
    );
  }
  const dec = n('decoder-num-layers');
  if (dec !== undefined && dec !== layers)
    d.skip(
      '--decoder-num-layers',
      `${dec}: Megatron's pretrain_t5.py builds the decoder with config.num_layers (= --encoder-num-layers ${layers ?? '?'}), not this flag; counted as ${layers ?? '?'} decoder layers; not applied`,
    );
  else if (dec !== undefined) d.ignore('--decoder-num-layers');
}

// Megatron's own tokenizers and their vocabularies (megatron/core/tokenizers/text/libraries/megatron_hf_tokenizer.py
// MEGATRON_CONFIG_MAP d98e8a6: GPT-2's BPE files and BERT-large's word pieces; utils/build_tokenizer.py adds 100
// <extra_id_i> sentinel tokens to BertWordPieceCase, T5's tokenizer)
const TOKENIZER_VOCAB: Record<string, [number, string]> = {
  GPT2BPETokenizer: [50257, 'GPT-2 BPE'],
  BertWordPieceLowerCase: [30522, 'bert-large-uncased'],
  BertWordPieceCase: [28996 + 100, 'bert-large-cased (with 100 sentinel tokens)'],
};

/** The rest of the model (add_network_size_args): norm, biases, embeddings, softmax, positions, vocabulary. */
function modelOptions({ d, has, one, n }: Flags, kind: ModelKind): void {
  d.set(
    'model.norm',
    oneOf(one('normalization') ?? 'LayerNorm', '--normalization', ['LayerNorm', 'RMSNorm'] as const) === 'RMSNorm'
      ? 'rmsnorm'
      : 'layernorm',
  );
  d.set('model.bias', !has('disable-bias-linear'));
  if (has('add-qkv-bias') && has('disable-bias-linear')) d.set('model.qkv_bias', true);
  d.set('model.tied_embeddings', !has('untie-embeddings-and-output-weights'));
  if (has('qk-layernorm')) d.set('model.qk_norm', 'head');
  // --softmax-type learnable: one learned sink logit per head (transformer_config.py softmax_type)
  const softmax = one('softmax-type');
  if (
    softmax !== undefined &&
    oneOf(softmax, '--softmax-type', ['vanilla', 'off-by-one', 'learnable'] as const) === 'learnable'
  )
    d.set('model.attn_sinks', true);
  else if (softmax !== undefined) d.ignore('--softmax-type'); // vanilla, or off-by-one: a constant in the softmax
  // --enable-gpt-oss (megatron/post_training/model_builder.py d98e8a6): YaRN rotary positions, no position table
  if (has('enable-gpt-oss') && !has('position-embedding-type'))
    d.note('--enable-gpt-oss: YaRN rotary positions (the post-training model builder sets them)');
  const pos =
    one('position-embedding-type') ??
    (has('enable-gpt-oss') || has('use-rotary-position-embeddings')
      ? 'rope'
      : has('no-position-embedding')
        ? 'none'
        : 'learned_absolute');
  const p = oneOf(pos, '--position-embedding-type', [
    'learned_absolute',
    'rope',
    'mrope',
    'relative',
    'none',
    'yarn',
  ] as const);
  d.set('model.position', p === 'learned_absolute' ? 'learned' : 'rope');
  if (p === 'relative' && kind === 't5') {
    // T5Model's RelativePositionEmbedding, one per stack (megatron/core/models/T5/t5_model.py L220-231, d98e8a6);
    // --relative-attention-num-buckets defaults to 32 (arguments.py L2411)
    d.set('model.relative_attention_buckets', n('relative-attention-num-buckets') ?? 32);
    d.note('--position-embedding-type relative: T5 relative position bias (model.relative_attention_buckets)');
  } else if (p === 'none' || p === 'relative')
    d.note(`--position-embedding-type ${p}: no position parameters (counted as rope)`);
  if (has('relative-attention-num-buckets') && !(p === 'relative' && kind === 't5'))
    d.note('--relative-attention-num-buckets without a T5 relative position embedding: no effect');
  let maxPos = n('max-position-embeddings') ?? n('seq-length');
  // examples/multimodal/model.py L86-87 (d98e8a6): raised to --decoder-seq-length when that is longer
  const dec = kind === 'multimodal' ? n('decoder-seq-length') : undefined;
  if (dec && maxPos && dec > maxPos) maxPos = dec;
  if (maxPos) d.set('model.max_positions', maxPos);
  const vocab = n('vocab-size') ?? n('padded-vocab-size');
  const tokenizer = one('tokenizer-type');
  const known = tokenizer === undefined ? undefined : TOKENIZER_VOCAB[tokenizer];
  if (vocab) d.set('model.vocab', vocab);
  else if (known) {
    d.set('model.vocab', known[0]);
    d.note(`--tokenizer-type ${tokenizer}: the ${known[1]} vocabulary, ${known[0]} tokens (before Megatron's padding)`);
  } else
    d.note(
      'no --vocab-size: the vocabulary comes from the tokenizer; model.vocab left at llmem default (or set model.preset)',
    );
  d.set('model.vocab_multiple', has('padded-vocab-size') ? 1 : (n('make-vocab-size-divisible-by') ?? 128));
}

/** MoE (add_moe_args): the expert count, undefined for a dense model. Megatron-DeepSpeed (--deepspeed): DeepSpeed-MoE,
 * one expert = dense, its own top-k, layer interval and token dropping (microsoft/Megatron-DeepSpeed
 * megatron/arguments.py, model/transformer.py). */
function moe(flags: Flags, ds: boolean, layers: number | undefined, ffn: number | undefined): number | undefined {
  const { d, args, has, one, n } = flags;
  const expertCounts = args.get('num-experts') ?? [];
  const experts = ds && n('num-experts') === 1 ? undefined : n('num-experts');
  if (ds && experts && expertCounts.length > 1)
    d.skip(
      '--num-experts',
      `one expert count per MoE layer (${expertCounts.join(' ')}: a pyramid MoE) is not expressible; ${experts} counted for every MoE layer`,
    );
  if (experts && ds) d.set('model.moe', deepspeedMoe(args, experts, ffn, n, one));
  else if (experts) megatronMoe(flags, experts, ffn, layers);
  else {
    d.set('model.moe', null);
    for (const f of ['moe-layer-freq', 'moe-router-dtype', 'moe-token-dispatcher-type'])
      if (has(f)) d.note(`--${f} without --num-experts: a dense model, no effect`);
  }
  return experts;
}

/** Megatron-LM's MoE: routed and shared experts, layer frequency, capacity, router bias and dtype, dispatcher. */
function megatronMoe(
  { d, args, has, one, n }: Flags,
  experts: number,
  ffn: number | undefined,
  layers: number | undefined,
): void {
  const moe: Record<string, number | boolean | null> = {
    experts,
    top_k: n('moe-router-topk') ?? 2,
    expert_ffn_hidden: n('moe-ffn-hidden-size') ?? ffn ?? null,
    shared_experts: 0,
    shared_expert_ffn_hidden: 0,
    dense_layers: 0,
    layer_freq: 1,
    capacity_factor: null,
  };
  const shared = n('moe-shared-expert-intermediate-size');
  if (shared) Object.assign(moe, { shared_experts: 1, shared_expert_ffn_hidden: shared });
  const freq = args.get('moe-layer-freq');
  if (freq !== undefined) layerFreq(d, moe, freq.join(''), layers);
  const cf = one('moe-expert-capacity-factor');
  if (cf !== undefined) moe.capacity_factor = num(cf, '--moe-expert-capacity-factor', 0.01);
  if (has('moe-router-enable-expert-bias')) moe.router_bias = true;
  d.set('model.moe', moe);
  // router.py: fp32 / fp64 router logits and probabilities; llmem counts them in fp32 (memory-model.md §7.10)
  const routerDtype = one('moe-router-dtype');
  if (routerDtype !== undefined && oneOf(routerDtype, '--moe-router-dtype', ['fp32', 'fp64'] as const) === 'fp64')
    d.skip(
      '--moe-router-dtype',
      'fp64 router logits and probabilities are not modelled (counted in fp32); not applied',
    );
  else if (routerDtype !== undefined) d.ignore('--moe-router-dtype');
  const dispatcher = one('moe-token-dispatcher-type');
  if (dispatcher !== undefined && dispatcher !== 'alltoall')
    d.skip(
      '--moe-token-dispatcher-type',
      `the ${dispatcher} dispatcher's buffers are not modelled (counted as the all-to-all dispatcher's); not applied`,
    );
  else if (dispatcher !== undefined) d.ignore('--moe-token-dispatcher-type');
}

/** Multi-latent attention, and MTP layers (reported, not applied). */
/**
 * --window-size L,R with --window-attn-skip-freq (transformer_config.py d98e8a6): sliding-window attention over the
 * L tokens before each one and itself, on every layer, or (N) N - 1 sliding layers then a full one, or (a list) 1
 * sliding and 0 full per layer. -1 is an unlimited side (full attention).
 */
function slidingWindows({ d, one }: Flags): void {
  const size = one('window-size');
  if (size === undefined) return;
  const [left, right] = size.split(',').map((v) => int(v.trim(), '--window-size', -1));
  if (left < 0 || right !== 0) {
    d.note(`--window-size ${size}: an unlimited or two-sided window, counted as full attention`);
    return;
  }
  const skip = one('window-attn-skip-freq');
  let types = ['sliding'];
  if (skip !== undefined && /^\[/.test(skip.trim()))
    types = skip
      .replace(/[[\]\s]/g, '')
      .split(',')
      .map((v) => (int(v, '--window-attn-skip-freq', 0) ? 'sliding' : 'full'));
  else if (skip !== undefined) {
    const every = int(skip, '--window-attn-skip-freq');
    types = [...Array(every - 1).fill('sliding'), 'full'];
  }
  if (d.get('model.layer_types') !== undefined) {
    d.skip('--window-size', 'sliding windows on a hybrid pattern are not placed; not applied');
    return;
  }
  types = shortestPattern(types);
  if (types.length > MAX_LAYER_TYPES) {
    d.skip(
      '--window-attn-skip-freq',
      `the sliding layers do not repeat within ${MAX_LAYER_TYPES} entries; not applied`,
    );
    return;
  }
  d.set('model.sliding_window', left + 1);
  d.set('model.layer_types', types);
  d.note(`--window-size ${size}: sliding windows of ${left + 1} tokens on layers ${types.join(', ')} (repeating)`);
}

function attentionVariants({ d, has, n }: Flags): void {
  if (has('multi-latent-attention')) {
    d.set('model.mla', {
      q_lora_rank: n('q-lora-rank') ?? null,
      kv_lora_rank: n('kv-lora-rank') ?? 32,
      qk_nope_head_dim: n('qk-head-dim') ?? 128,
      qk_rope_head_dim: n('qk-pos-emb-head-dim') ?? 64,
      v_head_dim: n('v-head-dim') ?? 128,
    });
  } else d.set('model.mla', null);
  // model.mtp_layers feeds only the megatron / megatron_bridge formulas; the simulated step refuses it
  const mtp = n('mtp-num-layers', 0);
  if (mtp)
    d.skip(
      '--mtp-num-layers',
      `${mtp} multi-token prediction layer(s): counted only by the megatron and megatron_bridge formulas (set model.mtp_layers with formula megatron); not applied`,
    );
}

/**
 * --cp-comm-type (megatron/training/arguments.py; Transformer Engine's attention): p2p (the default) and all_gather
 * pass K/V round the ranks; a2a trades heads for the sequence (Ulysses) over all of them; a2a+p2p does both,
 * all-to-all within the first of --hierarchical-context-parallel-sizes, a ring over the second.
 */
function contextParallelComm(d: Draft, args: Args, one: Flags['one'], cp: number): void {
  const kind = one('cp-comm-type');
  if (cp <= 1 || kind === undefined) return;
  if (kind === 'a2a') d.set('parallel.cp_all_to_all', cp);
  else if (kind === 'a2a+p2p') {
    const sizes = (args.get('hierarchical-context-parallel-sizes') ?? []).map(Number);
    if (sizes.length !== 2 || sizes[0] * sizes[1] !== cp || !Number.isInteger(sizes[0]) || sizes[0] < 1)
      throw new ImportError(
        '--hierarchical-context-parallel-sizes',
        `--hierarchical-context-parallel-sizes: a2a+p2p needs two sizes whose product is --context-parallel-size ${cp}`,
      );
    d.set('parallel.cp_all_to_all', sizes[0]);
  } else if (kind !== 'p2p' && kind !== 'all_gather')
    throw new ImportError('--cp-comm-type', `--cp-comm-type: ${kind} (allowed: p2p, all_gather, a2a, a2a+p2p)`);
}

/** The parallel sizes (add_distributed_args), expert parallelism by the MoE that was read. */
function parallelSizes(
  { d, has, n, one, args }: Flags,
  ds: boolean,
  experts: number | undefined,
): { tp: number; pp: number; cp: number } {
  const tp = n('tensor-model-parallel-size') ?? 1,
    pp = n('pipeline-model-parallel-size') ?? 1,
    cp = n('context-parallel-size') ?? 1;
  d.set('parallel.tp', tp);
  d.set('parallel.pp', pp);
  d.set('parallel.cp', cp);
  contextParallelComm(d, args, one, cp);
  if (experts && ds) {
    d.set('parallel.ep', n('moe-expert-parallel-size') ?? 1);
    d.set('parallel.etp', has('enable-expert-tensor-parallelism') ? tp : 1);
  } else if (experts) {
    d.set('parallel.ep', n('expert-model-parallel-size') ?? 1);
    d.set('parallel.etp', n('expert-tensor-parallel-size') ?? tp); // default: the tensor-parallel size
  } else if (has('expert-model-parallel-size') || has('expert-tensor-parallel-size'))
    d.note('expert parallel sizes given for a dense model: ignored');
  d.set('parallel.sequence_parallel', has('sequence-parallel'));
  return { tp, pp, cp };
}

/** Pipeline stages: uneven first and last stages, virtual stages and their schedule. */
function pipeline({ d, args, n }: Flags, layers: number | undefined, pp: number): void {
  const first = n('decoder-first-pipeline-num-layers', 0),
    last = n('decoder-last-pipeline-num-layers', 0);
  // validate_args: an even split needs the layers divisible by the stages
  if (
    layers &&
    pp > 1 &&
    first === undefined &&
    last === undefined &&
    layers % pp !== 0 &&
    ![...args.keys()].some((f) => f.startsWith('account-for-') || HYBRID.test(f))
  )
    throw new ImportError(
      '--pipeline-model-parallel-size',
      `--pipeline-model-parallel-size ${pp} does not divide --num-layers ${layers} (Megatron needs an even split unless --decoder-first/last-pipeline-num-layers are given)`,
    );
  if (first !== undefined) d.set('parallel.pp_first_stage_layers', first);
  if (last !== undefined) d.set('parallel.pp_last_stage_layers', last);
  const perVirtual = n('num-layers-per-virtual-pipeline-stage');
  let vpp = n('virtual-pipeline-model-parallel-size');
  if (perVirtual && vpp === undefined) {
    if (!layers)
      throw new ImportError(
        '--num-layers-per-virtual-pipeline-stage',
        '--num-layers-per-virtual-pipeline-stage: needs --num-layers',
      );
    vpp = layers / pp / perVirtual;
    if (!Number.isInteger(vpp))
      throw new ImportError(
        '--num-layers-per-virtual-pipeline-stage',
        `--num-layers-per-virtual-pipeline-stage ${perVirtual} does not divide the ${layers / pp} layers per stage`,
      );
  }
  if (vpp && vpp > 1) {
    d.set('parallel.vpp', vpp);
    d.set('parallel.pp_schedule', 'interleaved');
    // megatron/core/model_parallel_config.py microbatch_group_size_per_vp_stage (default: pp)
    const group = n('microbatch-group-size-per-virtual-pipeline-stage');
    if (group !== undefined) d.set('parallel.vpp_group', group);
  } else if (pp > 1) d.set('parallel.pp_schedule', '1f1b');
}

/** Communication overlap, the distributed optimizer, Megatron-FSDP, optimizer offload. */
function sharding({ d, has, one }: Flags): void {
  // --tp-comm-overlap: Transformer Engine userbuffers overlap TP collectives with the GEMMs (step time only)
  if (has('tp-comm-overlap')) d.set('parallel.tp_comm_overlap', true);
  const dist = has('use-distributed-optimizer');
  if (!has('use-torch-fsdp2') && !has('deepspeed')) d.set('parallel.distributed_optimizer', dist);
  if (has('use-megatron-fsdp'))
    d.skip(
      '--use-megatron-fsdp',
      `Megatron-FSDP (${one('data-parallel-sharding-strategy') ?? 'optim_grads_params'} sharding) has no engine in config v1: counted as the Megatron engine${dist ? ' with the distributed optimizer' : ''}; not applied`,
    );
  else if (has('data-parallel-sharding-strategy')) d.ignore('--data-parallel-sharding-strategy');
  if (has('optimizer-cpu-offload')) {
    d.set('parallel.offload_optimizer', 'cpu');
    const frac = one('optimizer-offload-fraction');
    if (frac !== undefined && Number(frac) !== 1)
      d.skip('--optimizer-offload-fraction', `${frac}: partial offload is not modelled; counted as full`);
  }
}

interface SlurmWorld {
  nodes: number;
  perNode: number;
}

/** The processes a Slurm batch script asks for (#SBATCH --nodes / -N times --ntasks-per-node, else --gpus-per-node
 * or --gres=gpu:N: srun starts one task a GPU, as Megatron-LM's examples/pretrain_gpt3_175B.sh does); numbers only. */
function sbatchWorld(text: string): SlurmWorld | undefined {
  const directive = (re: RegExp): number | undefined => {
    for (const line of text.split('\n')) {
      if (!/^#SBATCH\s/.test(line)) continue;
      const m = re.exec(line);
      if (m) return Number(m[1]);
    }
    return undefined;
  };
  const nodes = directive(/(?:--nodes[= ]|\s-N\s*)(\d+)\b/);
  const perNode =
    directive(/--ntasks-per-node[= ](\d+)\b/) ??
    directive(/--gpus-per-node[= ](?:\w+:)?(\d+)\b/) ??
    directive(/--gres[= ]gpu(?::\w+)?:(\d+)\b/);
  return nodes !== undefined && perNode !== undefined ? { nodes, perNode } : undefined;
}

/** World size: --world-size, the option, torchrun's --nproc-per-node x --nnodes, WORLD_SIZE= in the script, or the
 * Slurm directives' nodes x tasks per node. */
function worldSize(
  { d, one, n }: Flags,
  vars: Map<string, string>,
  options: MegatronOptions,
  sbatch?: SlurmWorld,
): number | undefined {
  const perNode = n('nproc_per_node') ?? n('nproc-per-node') ?? n('num_gpus'); // torchrun; the deepspeed launcher
  const nodes = one('nnodes') ?? one('num_nodes');
  const launched = perNode ? perNode * (nodes && /^\d+$/.test(nodes) ? Number(nodes) : 1) : undefined;
  const fromVar = vars.get('WORLD_SIZE');
  const slurm = sbatch ? sbatch.nodes * sbatch.perNode : undefined;
  if (options.worldSize !== undefined && launched !== undefined && options.worldSize !== launched)
    d.note(
      `world size ${options.worldSize} given: it replaces the script's torchrun ${perNode} x ${nodes ?? 1} = ${launched} processes`,
    );
  const world =
    n('world-size') ??
    options.worldSize ??
    launched ??
    (fromVar && /^\d+$/.test(fromVar) ? Number(fromVar) : undefined) ??
    slurm;
  if (world) {
    d.set('parallel.gpus', world);
    if (perNode) d.set('parallel.gpus_per_node', perNode);
    else if (sbatch && world === slurm) {
      d.set('parallel.gpus_per_node', sbatch.perNode);
      d.note(`#SBATCH: ${sbatch.nodes} nodes x ${sbatch.perNode} tasks = ${world} processes (parallel.gpus)`);
    }
  }
  return world;
}

/** Sequence length, micro-batch and the accumulation a global batch sets (add_training_args). */
function batch(
  { d, has, n }: Flags,
  world: number | undefined,
  tp: number,
  pp: number,
  cp: number,
  kind: ModelKind,
): void {
  if (has('seq-length') && has('encoder-seq-length'))
    throw new ImportError(
      '--encoder-seq-length',
      '--seq-length and --encoder-seq-length: Megatron refuses both (validate_args asserts encoder_seq_length is None when --seq-length is given)',
    );
  // validate_args L1346-1351 (d98e8a6): seq_length = encoder_seq_length when only the latter is given
  const seq = n('seq-length') ?? n('encoder-seq-length');
  const dec = n('decoder-seq-length');
  if (kind === 't5') {
    // examples/t5/pretrain_t5.py (d98e8a6): the encoder reads sequence_length=args.encoder_seq_length, the
    // decoder sequence_length_decoder=args.decoder_seq_length
    if (dec === undefined)
      throw new ImportError(
        '--decoder-seq-length',
        "--decoder-seq-length: not given, and a T5 model needs it (the decoder's length; pretrain_t5.py sequence_length_decoder)",
      );
    d.set('training.seq_len', dec);
    if (seq) d.set('training.source_len', seq);
    d.note(
      `T5: training.seq_len ${dec} from --decoder-seq-length (the decoder's tokens), training.source_len ${seq ?? 'null'} from --encoder-seq-length (the encoder's)`,
    );
  } else if (kind === 'multimodal') {
    // examples/multimodal/model.py L70-87, L234 (d98e8a6): --seq-length is replaced by the image-token count
    // (the vision encoder's sequence); the language model is built with language_max_sequence_length=decoder_seq_length
    if (dec === undefined)
      throw new ImportError(
        '--decoder-seq-length',
        '--decoder-seq-length: not given, and the multimodal language model needs it (examples/multimodal/model.py asserts it)',
      );
    d.set('training.seq_len', dec);
    d.note(
      `multimodal (--language-model-type): training.seq_len ${dec} from --decoder-seq-length, the language model's sequence; --seq-length${seq ? ` ${seq}` : ''} is the vision encoder's (model.py sets it to the image-token count); the vision tower is not imported`,
    );
    if (has('seq-length')) d.ignore('--seq-length');
  } else {
    if (seq) d.set('training.seq_len', seq);
    // pretrain_gpt.py and the other decoder-only models do not read --decoder-seq-length
    if (has('decoder-seq-length')) d.ignore('--decoder-seq-length');
  }
  const micro = n('micro-batch-size') ?? 1;
  d.set('training.micro_batch', micro);
  const global = n('global-batch-size');
  if (global !== undefined) {
    if (world) {
      const dp = world / (tp * pp * cp);
      const accum = global / (micro * dp);
      if (!Number.isInteger(dp) || !Number.isInteger(accum))
        throw new ImportError(
          '--global-batch-size',
          `--global-batch-size ${global} is not a multiple of micro-batch ${micro} x data-parallel size ${dp} (world ${world} / (tp ${tp} * pp ${pp} * cp ${cp}))`,
        );
      d.set('training.grad_accum', accum);
      d.note(`grad_accum ${accum} = global batch ${global} / (micro-batch ${micro} * data-parallel ${dp})`);
    } else
      d.skip(
        '--global-batch-size',
        'grad_accum = global / (micro * dp) needs the world size: pass --world-size N (llmem import megatron file --world-size N)',
      );
  }
}

/** Parameter and gradient dtypes. */
function dtypes({ d, has }: Flags): void {
  if (has('fp16') && has('bf16')) throw new ImportError('--bf16', '--bf16 and --fp16 are exclusive');
  d.set('training.dtype', has('bf16') ? 'bf16' : has('fp16') ? 'fp16' : 'fp32');
  if (!has('bf16') && !has('fp16')) d.note('neither --bf16 nor --fp16: fp32 parameters (Megatron default)');
  // validate_args: bf16 accumulates and all-reduces gradients in fp32 unless --grad-reduce-in-bf16; fp16
  // keeps fp16 main grads unless asked. The grad buffer is fp32 when reducing in fp32, else the parameter
  // dtype (megatron/core/distributed/param_and_grad_buffer.py group_params_for_buffers).
  const bf16Grads = has('bf16') && has('grad-reduce-in-bf16');
  d.set(
    'training.grad_dtype',
    has('fp16') && !has('accumulate-allreduce-grads-in-fp32') ? 'fp16' : bf16Grads ? 'bf16' : 'fp32',
  );
  if (bf16Grads)
    d.note('--grad-reduce-in-bf16: gradient buffers and their reduction in bf16 (training.grad_dtype bf16)');
  else if (has('grad-reduce-in-bf16')) d.note('--grad-reduce-in-bf16 without --bf16: no effect');
}

/** FP8 / FP4 linear layers, their recipes and quantised parameter gathers. */
function lowPrecision({ d, has, one }: Flags): void {
  // Transformer Engine recipes: TransformerConfig fp8_recipe (default 'delayed'; 'tensorwise' is
  // Float8CurrentScaling) and fp4_recipe (default 'nvfp4'), Megatron-LM d98e8a6
  // megatron/core/transformer/transformer_config.py L587-690, megatron/core/enums.py Fp8Recipe / Fp4Recipe
  const fp8 = has('fp8-format') || has('fp8'),
    fp4 = has('fp4-format');
  if (fp8 && fp4) throw new ImportError('--fp4-format', '--fp4-format and --fp8-format cannot be used together');
  if (fp8 || fp4) d.set('training.fp8_linear', true);
  if (fp8) {
    const given = one('fp8-recipe');
    const recipe = oneOf(given ?? 'delayed', '--fp8-recipe', [
      'delayed',
      'tensorwise',
      'mxfp8',
      'blockwise',
      'custom',
    ] as const);
    if (recipe === 'custom')
      d.skip(
        '--fp8-recipe',
        'custom: a quantizer factory; fp8 counted as 1-byte linear inputs (training.fp8_recipe null)',
      );
    else d.set('training.fp8_recipe', recipe === 'tensorwise' ? 'current' : recipe);
    if (!has('fp8-recipe')) d.note("no --fp8-recipe: Megatron-LM's default, delayed scaling");
  } else if (has('fp8-recipe')) d.note('--fp8-recipe without --fp8-format: no effect');
  if (fp4) {
    oneOf(one('fp4-format') ?? 'e2m1', '--fp4-format', ['e2m1'] as const);
    const recipe = oneOf(one('fp4-recipe') ?? 'nvfp4', '--fp4-recipe', ['nvfp4', 'custom'] as const);
    if (recipe === 'custom')
      d.skip('--fp4-recipe', 'custom: a quantizer factory; counted as 1-byte linear inputs (training.fp8_recipe null)');
    else d.set('training.fp8_recipe', 'nvfp4');
  } else if (has('fp4-recipe')) d.note('--fp4-recipe without --fp4-format: no effect');
  // --fp8-param-gather / --fp4-param-gather: "keep the compute param in fp8 ... and perform the param
  // all-gather in fp8" (arguments.py L2012-2018): quantised parameters, no bf16 copy, the fp32 main
  // params in the distributed optimizer
  const paramGather = (fp8 && has('fp8-param-gather')) || (fp4 && has('fp4-param-gather'));
  if (paramGather) {
    d.set('training.dtype', 'fp8');
    d.set('parallel.fp8_all_gather', true);
    d.note(
      `--${fp4 ? 'fp4' : 'fp8'}-param-gather: parameters stored quantised (training.dtype fp8) and gathered in fp8`,
    );
  } else
    for (const f of ['fp8-param-gather', 'fp4-param-gather'])
      if (has(f)) d.note(`--${f} without --${f.slice(0, 3)}-format: no effect`);
}

/** The optimizer, its precision-aware dtypes, dropout. */
function optimizer({ d, has, one }: Flags): void {
  // --use-precision-aware-optimizer (arguments.py L3667-3684): main params fp32/fp16, Adam moments
  // fp32/fp16/bf16/fp8 (TE FusedAdam)
  const precisionAware = has('use-precision-aware-optimizer');
  const mainParams = one('main-params-dtype'),
    expAvg = one('exp-avg-dtype'),
    expAvgSq = one('exp-avg-sq-dtype');
  if (precisionAware) {
    const dt = ['fp32', 'fp16', 'bf16', 'fp8'] as const;
    if (mainParams !== undefined)
      d.set('training.master_dtype', oneOf(mainParams, '--main-params-dtype', ['fp32', 'fp16'] as const));
    const m = oneOf(expAvg ?? 'fp32', '--exp-avg-dtype', dt),
      v = oneOf(expAvgSq ?? 'fp32', '--exp-avg-sq-dtype', dt);
    // one dtype for both moments: the wider when they differ
    const wide = dt.indexOf(m) <= dt.indexOf(v) ? m : v;
    if (expAvg !== undefined || expAvgSq !== undefined) d.set('training.optimizer_dtype', wide);
    if (m !== v)
      d.note(
        `--exp-avg-dtype ${m} and --exp-avg-sq-dtype ${v}: both moments counted in ${wide} (training.optimizer_dtype is one dtype)`,
      );
  } else
    for (const f of ['main-params-dtype', 'exp-avg-dtype', 'exp-avg-sq-dtype'])
      if (has(f)) d.note(`--${f} without --use-precision-aware-optimizer: no effect`);
  const opt = one('optimizer') ?? 'adam';
  const o = oneOf(opt, '--optimizer', ['adam', 'sgd', 'muon', 'dist_muon', 'hybridadam', 'cpuadam'] as const);
  d.set('training.optimizer', o === 'sgd' ? 'sgd_momentum' : o.endsWith('muon') ? 'muon' : 'adamw');
  const drop = Math.max(
    num(one('hidden-dropout') ?? 0.1, '--hidden-dropout'),
    num(one('attention-dropout') ?? 0.1, '--attention-dropout'),
  );
  d.set('training.dropout', drop);
  if (!has('hidden-dropout') || !has('attention-dropout'))
    d.note('dropout defaults to 0.1 in Megatron when --hidden-dropout / --attention-dropout are not given');
}

/** The attention kernel, loss fusion, activation offload. */
function attention({ d, has, one }: Flags, ds: boolean): void {
  const backend = one('attention-backend');
  if (backend !== undefined)
    d.set(
      'training.attention',
      ['unfused', 'local'].includes(
        oneOf(backend, '--attention-backend', ['auto', 'flash', 'fused', 'unfused', 'local'] as const),
      )
        ? 'eager'
        : 'flash',
    );
  else if (ds) {
    // Megatron-DeepSpeed runs its unfused softmax attention unless a FlashAttention flag is given
    const flash = [
      'use-flash-attn',
      'use-flash-attn-v1',
      'use-flash-attn-v2',
      'use-flash-attn-triton',
      'use-flash-attn-builder',
    ].some(has);
    d.set('training.attention', flash ? 'flash' : 'eager');
    if (!flash)
      d.note(
        'Megatron-DeepSpeed without --use-flash-attn*: the unfused attention keeps its s×s scores (training.attention eager)',
      );
  } else d.set('training.attention', 'flash');
  if (has('cross-entropy-loss-fusion'))
    d.note("--cross-entropy-loss-fusion: fused vocab-parallel cross-entropy counted as Megatron's standard loss");
  if (has('cpu-offloading')) {
    d.set('training.activation_offload', true);
    d.note('--cpu-offloading: activations offloaded to the host');
  }
}

/** Recompute (add_training_args: --recompute-granularity/-method/-num-layers/-modules). */
function recompute({ d, args, has, one, n }: Flags): void {
  const gran = one('recompute-granularity');
  if (gran !== undefined) {
    const g = oneOf(gran, '--recompute-granularity', ['full', 'selective'] as const);
    d.set('training.recompute', g);
    if (g === 'full') {
      const method = one('recompute-method');
      const count = n('recompute-num-layers');
      if (method === 'block' && count !== undefined) d.set('training.recompute_layers', count);
      else if (method === 'uniform' && count !== undefined && count > 1)
        d.note(
          `--recompute-method uniform --recompute-num-layers ${count}: every layer recomputed (checkpoints every ${count} layers not modelled)`,
        );
    } else {
      const mods = args.get('recompute-modules') ?? ['core_attn'];
      for (const m of mods)
        if (!RECOMPUTE_MODULES.includes(m))
          throw new ImportError(
            '--recompute-modules',
            `--recompute-modules: "${m}" is not allowed (allowed: ${RECOMPUTE_MODULES.join(' | ')})`,
          );
      d.set('training.recompute_modules', mods);
    }
  } else if (has('recompute-activations')) d.set('training.recompute', 'selective');
  else if (has('checkpoint-activations')) {
    // Megatron-DeepSpeed keeps the old flag for DeepSpeed's activation checkpointing: every layer
    d.set('training.recompute', 'full');
    d.note('--checkpoint-activations: every layer recomputed (training.recompute full)');
  }
  if (has('distribute-saved-activations'))
    d.skip('--distribute-saved-activations', 'checkpoints split over the tensor-parallel group are not modelled');
  if (has('moe-layer-recompute')) d.skip('--moe-layer-recompute', 'use training.recompute selective with moe');
}

/**
 * --moe-layer-freq: N (an MoE layer every N-th, from the first) or a Python list expression such as
 * ([0]*3+[1]*58) (megatron/training/arguments.py moe_freq_type; a 1 marks an MoE layer). Set as
 * llmem's dense_layers + layer_freq when the pattern is a leading dense block then every n-th layer.
 */
function layerFreq(d: Draft, moe: Record<string, number | boolean | null>, text: string, layers?: number): void {
  const value = text.replace(/^(["'])(.*)\1$/s, '$2');
  if (/^\d+$/.test(value)) {
    moe.layer_freq = int(value, '--moe-layer-freq');
    return;
  }
  const pattern = pythonList(value);
  if (layers !== undefined && pattern.length !== layers)
    throw new ImportError(
      '--moe-layer-freq',
      `--moe-layer-freq ${value}: ${pattern.length} entries for --num-layers ${layers} (Megatron needs one per layer)`,
    );
  const moeAt = pattern.flatMap((x, i) => (x ? [i] : []));
  const dense = moeAt[0];
  const every = moeAt.length > 1 ? moeAt[1] - moeAt[0] : pattern.length - (dense ?? 0);
  const fits = dense !== undefined && pattern.every((x, i) => x === (i >= dense && (i - dense) % every === 0 ? 1 : 0));
  if (!fits) {
    d.skip(
      '--moe-layer-freq',
      `pattern ${value} is not a leading dense block then every n-th layer; every layer counted as MoE`,
    );
    return;
  }
  moe.dense_layers = dense;
  moe.layer_freq = every;
  d.note(`--moe-layer-freq ${value}: ${dense} leading dense layers, then an MoE layer every ${every}`);
}

const MAX_PATTERN = 100000;

/** A list of 0/1 written as Python: [1,0], [0]*3+[1]*58, ([1]*1+[0]*1)*24. */
function pythonList(text: string): number[] {
  const bad = (why: string) =>
    new ImportError(
      '--moe-layer-freq',
      `--moe-layer-freq: "${text}" is not a whole number or a list of 0 and 1 (${why})`,
    );
  const t = text.match(/\d+|[[\](),*+]|\S/g) ?? [];
  let i = 0,
    depth = 0;
  const number = (): number => {
    const x = t[i++];
    if (x === undefined || !/^\d+$/.test(x)) throw bad(`expected a number at "${x ?? 'the end'}"`);
    return Number(x);
  };
  const repeat = (list: number[], times: number): number[] => {
    if (list.length * times > MAX_PATTERN) throw bad(`more than ${MAX_PATTERN} layers`);
    return Array.from({ length: list.length * times }, (_, k) => list[k % list.length]);
  };
  const atom = (): number[] => {
    const x = t[i];
    if (x === '(') {
      i++;
      if (++depth > 100) throw bad('nested too deeply');
      const v = sum();
      if (t[i++] !== ')') throw bad('a ( without its )');
      depth--;
      return v;
    }
    if (x === '[') {
      i++;
      const v: number[] = [];
      while (t[i] !== ']') {
        const n = number();
        if (n > 1) throw bad(`${n} is not 0 or 1`);
        v.push(n);
        if (t[i] === ',') i++;
        else if (t[i] !== ']') throw bad('a [ without its ]');
      }
      i++;
      return v;
    }
    return repeat([], number()); // a bare number in a list expression: only as a repeat count
  };
  const product = (): number[] => {
    let v: number[];
    if (/^\d+$/.test(t[i] ?? '') && t[i + 1] === '*') {
      const times = Number(t[i]); // 3*[1]
      i += 2;
      v = repeat(atom(), times);
    } else v = atom();
    while (t[i] === '*') {
      i++;
      v = repeat(v, number());
    }
    return v;
  };
  const sum = (): number[] => {
    let v = product();
    while (t[i] === '+') {
      i++;
      v = [...v, ...product()];
      if (v.length > MAX_PATTERN) throw bad(`more than ${MAX_PATTERN} layers`);
    }
    return v;
  };
  const v = sum();
  if (i !== t.length) throw bad(`unexpected "${t[i]}"`);
  if (!v.length) throw bad('an empty list');
  return v;
}

/** DeepSpeed-MoE of Megatron-DeepSpeed: every --expert-interval-th layer (layer numbers from 1) is MoE. */
function deepspeedMoe(
  args: Args,
  experts: number,
  ffn: number | undefined,
  n: (f: string, min?: number) => number | undefined,
  one: (f: string) => string | undefined,
): Record<string, number | boolean | null> {
  const interval = n('expert-interval') ?? 2;
  const capacity = one('moe-train-capacity-factor');
  return {
    experts,
    top_k: n('topk') ?? 1,
    expert_ffn_hidden: ffn ?? null,
    shared_experts: 0,
    shared_expert_ffn_hidden: 0,
    dense_layers: interval - 1,
    layer_freq: interval,
    capacity_factor: args.has('disable-moe-token-dropping')
      ? null
      : num(capacity ?? 1, '--moe-train-capacity-factor', 0.01),
  };
}

/**
 * Megatron-DeepSpeed (--deepspeed): the megatron_deepspeed engine, its ZeRO stage and offload read from
 * the DeepSpeed JSON the script writes with a here-document (cat <<EOT > $DS_CONFIG), else --zero-stage.
 */
function deepspeed(d: Draft, args: Args, written: Map<string, string>): void {
  d.set('parallel.engine', 'megatron_deepspeed');
  const flag = args.has('deepspeed_config') ? 'deepspeed_config' : 'deepspeed-config';
  const path = args.get(flag)?.[0];
  const stageFlag = args.get('zero-stage')?.[0];
  const stage = stageFlag === undefined ? undefined : int(stageFlag.replace(/\.0$/, ''), '--zero-stage', 0);
  const text = path === undefined ? undefined : written.get(path);
  const ds = text === undefined ? undefined : importDeepSpeed(text);
  if (ds && !('error' in ds)) {
    const from = ds.config.parallel as Record<string, unknown>;
    for (const [k, v] of Object.entries(from))
      if (k !== 'engine' && k !== 'gpus' && v !== undefined) d.set(`parallel.${k}`, v as never);
    // the batch keys restate the Megatron flags (which decide); the rest is reported as the DeepSpeed importer words it
    for (const line of ds.unsupported.filter(
      (l) => !/^(train_batch_size|train_micro_batch_size_per_gpu|gradient_accumulation_steps)\b/.test(l),
    ))
      d.skip(`${path} ${line.split(':')[0]}`, `${line.slice(line.indexOf(':') + 2)}`);
    d.note(
      `the DeepSpeed config the script writes (${path}) was read for ZeRO and offload (zero_stage ${String(from.zero_stage)}); batch sizes and precision come from the Megatron flags`,
    );
    if (stage !== undefined && stage !== from.zero_stage)
      d.note(
        `--zero-stage ${stage} differs from the DeepSpeed config's stage ${String(from.zero_stage)}: DeepSpeed uses its config`,
      );
    return;
  }
  const why =
    path === undefined
      ? 'no --deepspeed_config given'
      : text === undefined
        ? `the DeepSpeed config ${path} is not written by the script (a file not given)`
        : `the DeepSpeed config ${path} the script writes is not JSON once expanded (${(ds as { error: { message: string } }).error.message})`;
  d.set('parallel.zero_stage', stage ?? 0);
  d.skip(
    `--${path === undefined ? 'deepspeed' : flag}`,
    `${why}: its ZeRO and offload settings were not read; parallel.zero_stage ${stage ?? 0} from ${stage === undefined ? "llmem's default" : '--zero-stage'}; not applied`,
  );
}

/** Flags and their values ("--flag v1 v2", "--flag=v"); a later flag wins. */
function parseArgs(tokens: string[], args: Args = new Map()): Args {
  let current: string[] | undefined;
  for (const t of tokens) {
    const m = /^--([A-Za-z][\w-]*)(?:=(.*))?$/s.exec(t);
    if (m) {
      current = m[2] !== undefined ? [m[2]] : [];
      args.set(m[1], current);
      if (m[2] !== undefined) current = undefined;
    } else if (current) current.push(t);
  }
  return args;
}
