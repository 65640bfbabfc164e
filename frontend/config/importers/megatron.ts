// Megatron-LM command-line arguments (an argument line, or a launch script with
// variables and bash arrays) -> config v1. Flags, defaults and derived values are
// those of megatron/training/arguments.py (add_*_args and validate_args):
// https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py
import { Draft, guard, ImportError, int, num, oneOf, type ImportResult } from './common.js';

export interface MegatronOptions {
  /** world size when the text does not give it (--world-size, torchrun --nproc-per-node x --nnodes, WORLD_SIZE=) */
  worldSize?: number;
}

type Args = Map<string, string[]>;

// Flags with no effect on per-GPU memory (schedules, data, logging, checkpoints, kernels, launchers).
const IGNORED =
  /^(lr|min-lr|lr-.*|weight-decay.*|start-weight-decay|end-weight-decay|clip-grad|adam-.*|sgd-momentum|init-method-std|init-method-xavier-uniform|seed|train-iters|train-samples|eval-.*|log-.*|logging-level|tensorboard-.*|wandb-.*|save|load|pretrained-checkpoint|save-interval|data-path|train-data-path|valid-data-path|test-data-path|split|tokenizer-type|tokenizer-model|vocab-file|merge-file|data-cache-path|num-workers|dataloader-type|distributed-backend|distributed-timeout-minutes|exit-.*|ckpt-.*|async-save|use-checkpoint-args|use-dist-ckpt|dist-ckpt-.*|no-load-.*|no-save-.*|finetune|mock-data|rotary-base|rotary-percent|rotary-seq-len-interpolation-factor|rope-scaling.*|use-rope-scaling|norm-epsilon|layernorm-epsilon|apply-layernorm-1p|no-masked-softmax-fusion|no-bias-.*-fusion|no-rope-fusion|attention-softmax-in-fp32|transformer-impl|use-mcore-models|use-legacy-models|overlap-grad-reduce|overlap-param-gather|overlap-param-gather-with-optimizer-step|align-grad-reduce|align-param-gather|no-async-tensor-model-parallel-allreduce|async-tensor-model-parallel-allreduce|no-gradient-accumulation-fusion|tp-comm-.*|moe-grouped-gemm|moe-router-load-balancing-type|moe-aux-loss-coeff|moe-z-loss-coeff|moe-token-dispatcher-type|moe-router-score-function|moe-router-pre-softmax|moe-router-topk-scaling-factor|moe-router-num-groups|moe-router-group-topk|moe-router-dtype|moe-router-bias-update-rate|moe-permute-fusion|moe-shared-expert-overlap|moe-token-drop-policy|moe-input-jitter-eps|moe-per-layer-logging|manual-gc.*|node_rank|node-rank|master_addr|master-addr|master_port|master-port|rdzv_.*|rdzv-.*|rotary-interleaved|no-query-key-layer-scaling|apply-query-key-layer-scaling|use-cpu-initialization|data-parallel-random-init|timing-log-.*|use-pytorch-profiler|profile.*|check-for-nan-in-loss-and-grad|no-check-for-nan-in-loss-and-grad|bias-swiglu-fusion|no-bias-swiglu-fusion|cross-entropy-fusion-impl|qk-layernorm-weight-decay|dist-ckpt-strictness|no-create-attention-mask-in-dataloader|num-dataset-builder-threads|object-storage-cache-path|legacy-tokenizer|decoder-seq-length|calculate-per-token-loss|deterministic-mode|no-persist-layer-norm|num-distributed-optimizer-instances|te-rng-tracker|inference-.*|enable-cuda-graph|cuda-graph-.*|no-mmap-bin-files|reset-position-ids|reset-attention-mask|eod-mask-loss)$/;
// Flags that are handled below (read through the Args map).
const HANDLED = new Set([
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
  'virtual-pipeline-model-parallel-size',
  'context-parallel-size',
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
  'cross-entropy-loss-fusion',
  'group-query-attention',
  'moe-layer-recompute',
  'distribute-saved-activations',
]);
const RECOMPUTE_MODULES = ['core_attn', 'mlp', 'layernorm', 'moe', 'moe_act', 'mla_up_proj'];

/** Import Megatron-LM arguments. */
export function importMegatron(text: string, options: MegatronOptions = {}): ImportResult {
  return guard(() => {
    const { tokens, vars } = shellTokens(text);
    const args = parseArgs(tokens);
    if (![...args.keys()].some((k) => HANDLED.has(k)))
      throw new ImportError(
        '',
        'Megatron arguments: no Megatron-LM flag found (expected e.g. --num-layers, --tensor-model-parallel-size)',
      );
    const d = new Draft();
    d.stack('megatron');
    apply(d, args, vars, options);
    for (const [flag] of args)
      if (!HANDLED.has(flag) && !IGNORED.test(flag))
        d.skip(`--${flag}`, 'not a Megatron-LM flag llmem maps; not applied');
    const ignored = [...args.keys()].filter((f) => IGNORED.test(f) && !HANDLED.has(f));
    for (const f of ignored) d.ignore(`--${f}`);
    return d.result();
  });
}

function apply(d: Draft, args: Args, vars: Map<string, string>, options: MegatronOptions): void {
  const has = (f: string) => args.has(f);
  const one = (f: string): string | undefined => {
    const v = args.get(f);
    if (!v) return undefined;
    if (!v.length) throw new ImportError(`--${f}`, `--${f}: needs a value`);
    return v[0];
  };
  const n = (f: string, min = 1): number | undefined => {
    const v = one(f);
    return v === undefined ? undefined : int(v, `--${f}`, min);
  };
  d.set('parallel.engine', has('use-torch-fsdp2') ? 'fsdp2' : 'megatron');
  if (has('use-torch-fsdp2')) d.note('--use-torch-fsdp2: data parallelism with PyTorch FSDP2 (engine fsdp2)');

  // ---- model (add_network_size_args) ----
  const layers = n('num-layers');
  const hidden = n('hidden-size');
  const heads = n('num-attention-heads');
  if (layers) d.set('model.layers', layers);
  if (hidden) d.set('model.hidden', hidden);
  if (heads) d.set('model.heads', heads);
  const gqa = has('group-query-attention');
  if (heads) d.set('model.kv_heads', gqa ? (n('num-query-groups') ?? 1) : heads);
  const kvc = n('kv-channels');
  if (kvc) d.set('model.head_dim', kvc);
  else if (hidden && heads) d.set('model.head_dim', hidden / heads);
  const swiglu = has('swiglu');
  d.set('model.mlp', swiglu ? 'gated' : 'plain');
  let ffn = n('ffn-hidden-size');
  if (ffn === undefined && hidden) {
    // validate_args: 4h, or for SwiGLU int(4h * 2/3 / 64) * 64
    ffn = swiglu ? Math.floor((4 * hidden * 2) / 3 / 64) * 64 : 4 * hidden;
    d.note(`no --ffn-hidden-size: ${ffn} (Megatron default for ${swiglu ? 'SwiGLU' : 'GeLU'})`);
  }
  if (ffn) d.set('model.ffn_hidden', ffn);
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
  const pos =
    one('position-embedding-type') ??
    (has('use-rotary-position-embeddings') ? 'rope' : has('no-position-embedding') ? 'none' : 'learned_absolute');
  const p = oneOf(pos, '--position-embedding-type', [
    'learned_absolute',
    'rope',
    'mrope',
    'relative',
    'none',
    'yarn',
  ] as const);
  d.set('model.position', p === 'learned_absolute' ? 'learned' : 'rope');
  if (p === 'none' || p === 'relative')
    d.note(`--position-embedding-type ${p}: no position parameters (counted as rope)`);
  const maxPos = n('max-position-embeddings') ?? n('seq-length');
  if (maxPos) d.set('model.max_positions', maxPos);
  const vocab = n('vocab-size') ?? n('padded-vocab-size');
  if (vocab) d.set('model.vocab', vocab);
  else
    d.note(
      'no --vocab-size: the vocabulary comes from the tokenizer; model.vocab left at llmem default (or set model.preset)',
    );
  d.set('model.vocab_multiple', has('padded-vocab-size') ? 1 : (n('make-vocab-size-divisible-by') ?? 128));

  // MoE (add_moe_args)
  const experts = n('num-experts');
  if (experts) {
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
    const freq = one('moe-layer-freq');
    if (freq !== undefined) {
      const pattern = /^\(?\[0\]\s*\*\s*(\d+)\s*\+\s*\[1\]\s*\*\s*(\d+)\)?$/.exec(freq.replace(/\s/g, ''));
      if (/^\d+$/.test(freq)) moe.layer_freq = int(freq, '--moe-layer-freq');
      else if (pattern) moe.dense_layers = Number(pattern[1]);
      else d.skip('--moe-layer-freq', `pattern ${freq} is not a leading dense block; every layer counted as MoE`);
    }
    const cf = one('moe-expert-capacity-factor');
    if (cf !== undefined) moe.capacity_factor = num(cf, '--moe-expert-capacity-factor', 0.01);
    if (has('moe-router-enable-expert-bias')) moe.router_bias = true;
    d.set('model.moe', moe);
  } else d.set('model.moe', null);
  if (has('multi-latent-attention')) {
    d.set('model.mla', {
      q_lora_rank: n('q-lora-rank') ?? null,
      kv_lora_rank: n('kv-lora-rank') ?? 32,
      qk_nope_head_dim: n('qk-head-dim') ?? 128,
      qk_rope_head_dim: n('qk-pos-emb-head-dim') ?? 64,
      v_head_dim: n('v-head-dim') ?? 128,
    });
  } else d.set('model.mla', null);
  const mtp = n('mtp-num-layers', 0);
  if (mtp) d.set('model.mtp_layers', mtp);

  // ---- parallelism (add_distributed_args) ----
  const tp = n('tensor-model-parallel-size') ?? 1,
    pp = n('pipeline-model-parallel-size') ?? 1,
    cp = n('context-parallel-size') ?? 1;
  d.set('parallel.tp', tp);
  d.set('parallel.pp', pp);
  d.set('parallel.cp', cp);
  if (experts) {
    d.set('parallel.ep', n('expert-model-parallel-size') ?? 1);
    d.set('parallel.etp', n('expert-tensor-parallel-size') ?? tp); // default: the tensor-parallel size
  } else if (has('expert-model-parallel-size') || has('expert-tensor-parallel-size'))
    d.note('expert parallel sizes given for a dense model: ignored');
  d.set('parallel.sequence_parallel', has('sequence-parallel'));
  const first = n('decoder-first-pipeline-num-layers', 0),
    last = n('decoder-last-pipeline-num-layers', 0);
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
  } else if (pp > 1) d.set('parallel.pp_schedule', '1f1b');
  const dist = has('use-distributed-optimizer');
  if (!has('use-torch-fsdp2')) d.set('parallel.distributed_optimizer', dist);
  if (has('optimizer-cpu-offload')) {
    d.set('parallel.offload_optimizer', 'cpu');
    const frac = one('optimizer-offload-fraction');
    if (frac !== undefined && Number(frac) !== 1)
      d.skip('--optimizer-offload-fraction', `${frac}: partial offload is not modelled; counted as full`);
  }

  // World size: --world-size, the option, torchrun's --nproc-per-node x --nnodes, or WORLD_SIZE= in the script.
  const perNode = n('nproc_per_node') ?? n('nproc-per-node');
  const nodes = one('nnodes');
  const launched = perNode ? perNode * (nodes && /^\d+$/.test(nodes) ? Number(nodes) : 1) : undefined;
  const fromVar = vars.get('WORLD_SIZE');
  const world =
    n('world-size') ??
    options.worldSize ??
    launched ??
    (fromVar && /^\d+$/.test(fromVar) ? Number(fromVar) : undefined);
  if (world) {
    d.set('parallel.gpus', world);
    if (perNode) d.set('parallel.gpus_per_node', perNode);
  }

  // ---- training (add_training_args) ----
  const seq = n('seq-length');
  if (seq) d.set('training.seq_len', seq);
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
  if (has('fp16') && has('bf16')) throw new ImportError('--bf16', '--bf16 and --fp16 are exclusive');
  d.set('training.dtype', has('bf16') ? 'bf16' : has('fp16') ? 'fp16' : 'fp32');
  if (!has('bf16') && !has('fp16')) d.note('neither --bf16 nor --fp16: fp32 parameters (Megatron default)');
  // validate_args: bf16 forces fp32 gradient accumulation/all-reduce; fp16 keeps fp16 main grads unless asked.
  d.set('training.grad_dtype', has('fp16') && !has('accumulate-allreduce-grads-in-fp32') ? 'fp16' : 'fp32');
  if (has('fp8-format') || has('fp8')) d.set('training.fp8_linear', true);
  if (has('fp8-param-gather'))
    d.skip(
      '--fp8-param-gather',
      'fp8 parameter storage (no bf16 copy) is not modelled; fp8 linears counted with a high-precision weight',
    );
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
  else d.set('training.attention', 'flash');
  if (has('cross-entropy-loss-fusion'))
    d.note("--cross-entropy-loss-fusion: fused vocab-parallel cross-entropy counted as Megatron's standard loss");
  if (has('cpu-offloading')) {
    d.set('training.activation_offload', true);
    d.note('--cpu-offloading: activations offloaded to the host');
  }

  // Recompute (add_training_args: --recompute-granularity/-method/-num-layers/-modules).
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
  if (has('distribute-saved-activations'))
    d.skip('--distribute-saved-activations', 'checkpoints split over the tensor-parallel group are not modelled');
  if (has('moe-layer-recompute')) d.skip('--moe-layer-recompute', 'use training.recompute selective with moe');
}

/** Flags and their values ("--flag v1 v2", "--flag=v"); a later flag wins. */
function parseArgs(tokens: string[]): Args {
  const args: Args = new Map();
  let current: string[] | undefined;
  for (const t of tokens) {
    const m = /^--([A-Za-z][\w-]*)(?:=(.*))?$/.exec(t);
    if (m) {
      current = m[2] !== undefined ? [m[2]] : [];
      args.set(m[1], current);
      if (m[2] !== undefined) current = undefined;
    } else if (current) current.push(t);
  }
  return args;
}

/**
 * The words of a shell script after variable expansion: quotes, `\` line joins,
 * comments, NAME=value (also `export`), bash arrays NAME=( ... ), ${NAME[@]},
 * ${NAME:-default} and $(( integer arithmetic )). Assignments are not words.
 */
const MAX_VARIABLE_CHARS = 65536;

export function shellTokens(text: string): { tokens: string[]; vars: Map<string, string> } {
  const vars = new Map<string, string>();
  const tokens: string[] = [];
  const expand = (s: string): string =>
    s
      .replace(/\$\(\((.*?)\)\)/g, (all, e: string) => {
        const names = e.replace(/\$\{?([A-Za-z_]\w*)\}?/g, '$1');
        const v = arithmetic(names.replace(/\b([A-Za-z_]\w*)\b/g, (_, n: string) => vars.get(n) ?? n));
        return v === undefined ? all : String(v);
      })
      .replace(
        /\$\{([A-Za-z_]\w*)(\[@\]|\[\*\])?(?::?-([^}]*))?\}|\$([A-Za-z_]\w*)/g,
        (all, a?: string, _arr?: string, def?: string, b?: string) => vars.get(a ?? b!) ?? def ?? all,
      );
  // a value that doubles on every line would grow without bound: no launch script needs 64 KiB in one variable
  const setVar = (name: string, value: string) => {
    if (value.length > MAX_VARIABLE_CHARS)
      throw new ImportError(
        name,
        `Megatron arguments: variable ${name} expands to more than ${MAX_VARIABLE_CHARS} characters`,
      );
    vars.set(name, value);
  };
  let words: string[] = [];
  let word = '',
    inWord = false;
  let array: string | undefined; // NAME=( ... ) being collected
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (array) return; // arrays span lines
    let i = 0;
    if (words[0] === 'export' || words[0] === 'local' || words[0] === 'declare') i = 1;
    let assigned = false;
    for (; i < words.length; i++) {
      const m = /^([A-Za-z_]\w*)=(.*)$/s.exec(words[i]);
      if (!m) break;
      setVar(m[1], m[2]);
      assigned = true;
    }
    if (!assigned || i < words.length) for (const w of words.slice(i)) tokens.push(...w.split(/\s+/).filter(Boolean));
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && text[i + 1] === '\n') i++;
    else if (c === '\\' && text[i + 1] === '\r' && text[i + 2] === '\n') i += 2;
    else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new ImportError('', 'Megatron arguments: unterminated single quote');
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1,
        s = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        s += text[j++];
      }
      if (j >= text.length) throw new ImportError('', 'Megatron arguments: unterminated double quote');
      word += expand(s);
      inWord = true;
      i = j;
    } else if (c === '#' && !inWord) {
      while (i < text.length && text[i] !== '\n') i++;
      i--;
    } else if (c === '(' && /^[A-Za-z_]\w*=$/.test(word)) {
      array = word.slice(0, -1);
      word = '';
      inWord = false;
      words = [];
    } else if (c === ')' && array) {
      endWord();
      setVar(array, words.join(' '));
      array = undefined;
      words = [];
    } else if (c === '\n' || c === ';' || (c === '&' && text[i + 1] === '&') || (c === '|' && !inWord)) {
      if (c === '&') i++;
      endCommand();
    } else if (c === ' ' || c === '\t' || c === '\r') endWord();
    else if (c === '$') {
      // expand $NAME / ${...} / $((...)) at the end of the word
      let j = i + 1;
      if (text[j] === '(' && text[j + 1] === '(') {
        const end = text.indexOf('))', j);
        j = end < 0 ? text.length : end + 2;
      } else if (text[j] === '{') {
        const end = text.indexOf('}', j);
        j = end < 0 ? text.length : end + 1;
      } else while (j < text.length && /\w/.test(text[j])) j++;
      word += expand(text.slice(i, j));
      inWord = true;
      i = j - 1;
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return { tokens, vars };
}

/** Integer arithmetic of $(( )): + - * / % and parentheses; undefined if anything else remains. */
function arithmetic(expr: string): number | undefined {
  const t = expr.match(/\d+|[-+*/%()]/g);
  if (!t || t.join('') !== expr.replace(/\s/g, '')) return undefined;
  let i = 0;
  const atom = (): number => {
    const x = t[i++];
    if (x === '(') {
      const v = sum();
      i++;
      return v;
    }
    if (x === '-') return -atom();
    return Number(x);
  };
  const prod = (): number => {
    let v = atom();
    while (t[i] === '*' || t[i] === '/' || t[i] === '%') {
      const op = t[i++],
        r = atom();
      v = op === '*' ? v * r : op === '/' ? Math.trunc(v / r) : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = prod();
    while (t[i] === '+' || t[i] === '-') v = t[i++] === '+' ? v + prod() : v - prod();
    return v;
  };
  const v = sum();
  return i === t.length && Number.isFinite(v) ? v : undefined;
}
