// LitGPT config YAML (config_hub/finetune/<model>/{lora,qlora,full}.yaml, config_hub/pretrain/*.yaml:
// the setup() arguments of litgpt/finetune/lora.py, full.py, adapter.py and litgpt/pretrain.py) -> config v1.
// Source read: Lightning-AI/litgpt@26857050fe3ff627cd714fe92f5838f51a3d5efa ("litgpt@2685705" below);
// Lightning Fabric's precision plugins: fabric/plugins/precision/{half,amp,bitsandbytes}.py.
import type { Json } from '../../../wasm/llmem.js';
import {
  agreeWorldSize,
  applyModelId,
  bool,
  Draft,
  guard,
  ImportError,
  type ImportResult,
  int,
  isObject,
  modelEntryForId,
  num,
  type Obj,
  obj,
  oneOf,
  parseYamlText,
  str,
} from './common.js';
import { applyOptimizerClass } from './optimizer-class.js';

type Script = 'lora' | 'full' | 'pretrain';
type Dtype = 'bf16' | 'fp16' | 'fp32';

// setup() keys with no effect on per-GPU memory (litgpt@2685705 finetune/*.py, pretrain.py setup()).
const IGNORED = new Set([
  'out_dir',
  'logger_name',
  'seed',
  'access_token',
  'data',
  'eval',
  'log',
  'resume',
  'initial_checkpoint_dir',
  'tokenizer_dir',
  'lora_alpha',
]);
// TrainArgs fields with no effect on per-GPU memory (litgpt/args.py TrainArgs, litgpt@2685705).
const TRAIN_IGNORED = new Set([
  'save_interval',
  'log_interval',
  'lr_warmup_steps',
  'lr_warmup_fraction',
  'epochs',
  'max_tokens',
  'max_steps',
  'max_time',
  'max_norm',
  'min_lr',
  // the optimizer's hyper-parameters, TrainArgs fields until OptimizerArgs (#1409, 141c8bfb, 2024-05-23)
  'learning_rate',
  'weight_decay',
  'beta1',
  'beta2',
]);
const LORA_FLAGS = ['lora_query', 'lora_key', 'lora_value', 'lora_projection', 'lora_mlp', 'lora_head'] as const;
// lora.py setup() defaults (litgpt@2685705): r 8, dropout 0.05, query and value only
const LORA_DEFAULTS: Record<(typeof LORA_FLAGS)[number], boolean> = {
  lora_query: true,
  lora_key: false,
  lora_value: true,
  lora_projection: false,
  lora_mlp: false,
  lora_head: false,
};
// LitGPT model names (litgpt/config.py name_to_config) whose Hugging Face name differs (hf_config org/name)
const LITGPT_NAMES: Record<string, string> = {
  'tiny-llama-1.1b': 'TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T',
};

/** Import a LitGPT finetune or pretrain YAML; `worldSize` stands in for devices "auto" (or a file that omits it);
 * `modelFromHf`: the model comes from a config.json given beside it (llmem import --hf). */
export function importLitgpt(text: string, options: { worldSize?: number; modelFromHf?: boolean } = {}): ImportResult {
  return guard(() => {
    const y = parseYamlText(text, 'LitGPT config');
    const d = new Draft();
    d.stack('litgpt');
    const given = (k: string) => y[k] !== undefined && y[k] !== null;
    const script = whichScript(d, y);
    const train = given('train') ? obj(y.train, 'train') : {};
    const tgiven = (k: string) => train[k] !== undefined && train[k] !== null;

    // the model: finetune checkpoint_dir, pretrain model_name / model_config
    const entry = script === 'pretrain' ? pretrainModel(d, y) : finetuneModel(d, y);
    if (options.modelFromHf) {
      // litgpt/model.py @2685705 has no nn.Dropout (scaled_dot_product_attention dropout_p=0.0): a config.json's
      // dropout (resid_pdrop, attention_dropout, ...) is not LitGPT's; set here so that --hf does not fill it
      d.set('training.dropout', 0);
      d.note(
        "training.dropout 0: LitGPT's model has no dropout (litgpt/model.py), whatever the config.json given says",
      );
    }

    // precision: Fabric's string; null -> get_default_supported_precision(training=True) (litgpt/utils.py @2685705)
    const quantize = given('quantize') ? quantMode(y.quantize) : undefined;
    if (quantize && script !== 'lora')
      throw new ImportError(
        'quantize',
        'quantize: only lora.py and adapter.py take --quantize (full.py and pretrain.py do not)',
      );
    const precision = precisionOf(d, y.precision, quantize !== undefined);

    // world size: devices x num_nodes (L.Fabric(devices, num_nodes), parse_devices in litgpt/utils.py @2685705)
    const nodes = given('num_nodes') ? int(y.num_nodes, 'num_nodes') : 1;
    const perNode = devicesOf(d, y.devices, script, nodes, options.worldSize);
    const gpus = perNode === undefined ? undefined : perNode * nodes;
    if (gpus !== undefined) d.set('parallel.gpus', gpus);
    if (quantize && gpus !== undefined && gpus > 1)
      // lora.py setup() @2685705: NotImplementedError for quantize with devices * num_nodes > 1
      throw new ImportError(
        'quantize',
        'quantize: LitGPT refuses quantization with more than one device (devices x num_nodes > 1)',
      );

    // dtypes as Fabric sets them: "-true" converts every parameter, "-mixed" keeps fp32 parameters under autocast
    d.set('training.dtype', precision.dtype);
    if (precision.fp8) d.set('training.fp8_linear', true);
    d.set('training.master_weights', precision.mixed);
    d.set('training.grad_dtype', precision.mixed ? 'fp32' : precision.dtype);
    d.set('training.optimizer_dtype', precision.mixed ? 'fp32' : precision.dtype);

    // method and adapters
    if (script === 'lora') lora(d, y, quantize, precision, entry?.model);
    else d.set('training.finetune.method', 'full');

    // engine: one device -> Fabric strategy "auto" (single); more -> each script's strategy
    engine(d, script, gpus, perNode, nodes);

    // batch: TrainArgs.micro_batch_size; gradient_accumulation_iters = global // (devices*num_nodes) // micro (litgpt/args.py @2685705)
    const micro = tgiven('micro_batch_size')
      ? int(train.micro_batch_size, 'train.micro_batch_size')
      : script === 'pretrain'
        ? 4
        : 1;
    const global = tgiven('global_batch_size')
      ? int(train.global_batch_size, 'train.global_batch_size')
      : script === 'pretrain'
        ? 512
        : 16;
    if (!tgiven('micro_batch_size') || !tgiven('global_batch_size'))
      d.note(
        `train batch sizes not all given: ${script === 'pretrain' ? 'pretrain.py' : 'finetune'} setup() defaults (global_batch_size ${global}, micro_batch_size ${micro})`,
      );
    d.set('training.micro_batch', micro);
    if (gpus === undefined)
      d.skip(
        'train.global_batch_size',
        'the gradient accumulation needs the world size (devices "auto"): give --world-size',
      );
    else {
      const perRank = Math.floor(global / gpus);
      if (perRank < 1)
        throw new ImportError(
          'train.global_batch_size',
          `train.global_batch_size: ${global} is less than one sample per device (${gpus} devices); LitGPT asserts batch_size > 0`,
        );
      const accum = Math.floor(perRank / micro);
      if (accum < 1)
        throw new ImportError(
          'train.micro_batch_size',
          `train.micro_batch_size: ${micro} exceeds global_batch_size / devices = ${perRank}; LitGPT asserts gradient_accumulation_iters > 0`,
        );
      d.set('training.grad_accum', accum);
      d.note(
        `training.grad_accum ${accum} = global_batch_size ${global} // (devices x num_nodes ${gpus}) // micro_batch_size ${micro} (LitGPT gradient_accumulation_iters)`,
      );
    }

    // sequence length
    const maxPos = d.get('model.max_positions') ?? entry?.model.max_positions;
    let seq: number | undefined;
    if (tgiven('max_seq_length')) {
      seq = int(train.max_seq_length, 'train.max_seq_length');
      d.set('training.seq_len', seq);
      if (script !== 'pretrain')
        d.note(
          `train.max_seq_length ${seq}: batches are padded to their longest sample and cut at ${seq}; the longest is assumed to reach it`,
        );
    } else if (script === 'pretrain' && typeof maxPos === 'number') {
      // pretrain.py @2685705: model.max_seq_length stays the config's block_size unless train.max_seq_length is set
      seq = maxPos;
      d.set('training.seq_len', seq);
      d.note(`train.max_seq_length null: pretrain.py trains on block_size ${seq} tokens (the model's max positions)`);
    } else if (typeof maxPos === 'number' && maxPos < 4096) {
      seq = maxPos;
      d.set('training.seq_len', seq);
      d.note(
        `train.max_seq_length null: LitGPT pads to the data's longest sample (get_longest_seq_length), unknown here; training.seq_len ${seq}, the model's max positions (the most GPT.max_seq_length allows)`,
      );
    } else
      d.note(
        `train.max_seq_length null: LitGPT pads to the data's longest sample (get_longest_seq_length), unknown here; training.seq_len left at llmem's default (4096); set it to the data's longest`,
      );

    // loss: lora.py / adapter.py model(input_ids, lm_head_chunk_size=128) then chunked_cross_entropy over the chunk list;
    // full.py / pretrain.py whole logits, chunked_cross_entropy in 128-row chunks (litgpt/utils.py @2685705)
    d.set('training.loss', 'chunked');
    if (seq !== undefined) {
      const chunks = Math.min(100000, Math.ceil((script === 'lora' ? seq : seq * micro) / 128));
      d.set('training.loss_chunks', chunks);
      d.note(
        `training.loss chunked, ${chunks} chunks of 128 ${script === 'lora' ? 'positions (lm_head_chunk_size=128)' : 'rows of the whole logits (chunked_cross_entropy chunk_size=128)'}`,
      );
    } else
      d.note(
        'training.loss chunked: 128-token chunks (lm_head_chunk_size=128); training.loss_chunks left at its default',
      );

    // tie_embeddings: LitGPT's GPT holds its own lm_head (litgpt/model.py @2685705); the HF converter copies a tied wte into it
    // (scripts/convert_hf_checkpoint.py); only pretrain.py ties them, with train.tie_embeddings
    const tie = tgiven('tie_embeddings') && bool(train.tie_embeddings, 'train.tie_embeddings');
    if (script === 'pretrain') d.set('model.tied_embeddings', tie);
    else {
      if (tie) d.skip('train.tie_embeddings', 'finetune scripts refuse it (validate_args); not applied');
      if (entry?.model.tied_embeddings === true) {
        d.set('model.tied_embeddings', false);
        d.note(
          "model.tied_embeddings false: LitGPT's GPT keeps a separate lm_head (convert_hf_checkpoint copies the tied embedding into it)",
        );
      }
    }
    for (const [k, v] of Object.entries(train)) {
      if (['micro_batch_size', 'global_batch_size', 'max_seq_length', 'tie_embeddings'].includes(k)) continue;
      if (TRAIN_IGNORED.has(k) || v === null) d.ignore(`train.${k}`);
      else d.skip(`train.${k}`, 'not a LitGPT TrainArgs field; not applied');
    }

    optimizer(d, y.optimizer, script, quantize !== undefined, d.get('training.optimizer_dtype') as string);
    if (script === 'pretrain') {
      d.set('runtime.torch_compile', true); // pretrain.py @2685705: model = torch.compile(model)
      d.note('pretrain.py compiles the model (torch.compile)');
    }

    // every other top-level key
    const handled = new Set([
      'checkpoint_dir',
      'model_name',
      'model_config',
      'precision',
      'quantize',
      'devices',
      'num_nodes',
      'train',
      'optimizer',
      'lora_r',
      'lora_dropout',
      ...LORA_FLAGS,
    ]);
    for (const [k, v] of Object.entries(y)) {
      if (handled.has(k)) continue;
      if (IGNORED.has(k) || v === null) d.ignore(k);
      else if (k === 'compiler' || k === 'compile')
        d.skip(k, 'not a setup() argument of the finetune scripts at litgpt@2685705; not applied');
      else d.skip(k, 'not a LitGPT setup() argument; not applied');
    }
    return d.result();
  });
}

/** Which script's setup() the file is for; the file name is not available, so the keys tell it. */
function whichScript(d: Draft, y: Obj): Script {
  if (y.checkpoint_dir === undefined && (y.model_name !== undefined || y.model_config !== undefined)) {
    d.note('model_name without checkpoint_dir: litgpt pretrain (litgpt/pretrain.py)');
    return 'pretrain';
  }
  if (y.checkpoint_dir === undefined || y.checkpoint_dir === null)
    throw new ImportError(
      'checkpoint_dir',
      'checkpoint_dir: the file names no model (checkpoint_dir for finetune, model_name for pretrain)',
    );
  const loraKeys = Object.keys(y).filter((k) => k.startsWith('lora_'));
  if (loraKeys.length) {
    d.note(`${loraKeys[0]}: litgpt finetune lora (litgpt/finetune/lora.py)`);
    return 'lora';
  }
  if (y.quantize !== undefined && y.quantize !== null) {
    d.note(
      'quantize without lora_* keys: read as litgpt finetune lora with lora.py defaults (r 8, query and value); adapter.py (LLaMA-Adapter) is not modelled',
    );
    return 'lora';
  }
  d.note(
    'no lora_* key: read as litgpt finetune full (litgpt/finetune/full.py); adapter.py (LLaMA-Adapter) is not modelled',
  );
  return 'full';
}

/** checkpoint_dir "checkpoints/<org>/<name>" (litgpt download layout) -> the catalog preset of <org>/<name>. */
function finetuneModel(d: Draft, y: Obj) {
  const dir = str(y.checkpoint_dir, 'checkpoint_dir').replace(/[\\/]+$/, '');
  const parts = dir.split(/[\\/]/).filter(Boolean);
  const id = parts.slice(-2).join('/');
  applyModelId(d, 'checkpoint_dir', id);
  return modelEntryForId(id);
}

/** pretrain model_name (litgpt/config.py name) and model_config (a litgpt Config, which overrides model_name). */
function pretrainModel(d: Draft, y: Obj) {
  const name = y.model_name === undefined || y.model_name === null ? undefined : str(y.model_name, 'model_name');
  const cfg = y.model_config === undefined || y.model_config === null ? undefined : obj(y.model_config, 'model_config');
  if (cfg) {
    // pretrain.py setup() @2685705: config = Config.from_name(model_name) if model_config is None else model_config;
    // a given model_config is a whole litgpt Config (its dataclass defaults for what it leaves out), model_name unused
    if (name) {
      d.ignore('model_name');
      d.note(
        `model_config given: pretrain.py builds the model from it alone (Config defaults fill the rest); model_name ${name} only names the run`,
      );
    }
    modelConfig(d, cfg);
    return undefined;
  }
  const id = name ? (LITGPT_NAMES[name] ?? name) : undefined;
  const entry = id ? modelEntryForId(id) : undefined;
  if (id !== name) d.note(`model_name ${name}: LitGPT's name of ${id} (litgpt/config.py hf_config)`);
  if (name) applyModelId(d, 'model_name', id);
  return entry;
}

// litgpt Config fields (litgpt/config.py @2685705) -> model keys
const CONFIG_KEYS: Record<string, string> = {
  n_layer: 'model.layers',
  n_embd: 'model.hidden',
  n_head: 'model.heads',
  n_query_groups: 'model.kv_heads',
  head_size: 'model.head_dim',
  intermediate_size: 'model.ffn_hidden',
  padded_vocab_size: 'model.vocab',
  block_size: 'model.max_positions',
};
const CONFIG_IGNORED = new Set([
  'name',
  'hf_config',
  'scale_embeddings',
  'rotary_percentage',
  'parallel_residual',
  'shared_attention_norm',
  'norm_eps',
  'rope_base',
  'rope_condense_ratio',
  'vocab_size',
  'padding_multiple',
  'gelu_approximate',
  'lm_head_bias',
  'attn_bias',
]);

function modelConfig(d: Draft, c: Obj): void {
  for (const [k, v] of Object.entries(c)) {
    const key = `model_config.${k}`;
    if (v === null) continue;
    if (CONFIG_KEYS[k]) d.set(CONFIG_KEYS[k], int(v, key));
    else if (k === 'bias') d.set('model.bias', bool(v, key));
    else if (k === 'norm_class_name')
      d.set('model.norm', oneOf(v, key, ['RMSNorm', 'LayerNorm'] as const) === 'RMSNorm' ? 'rmsnorm' : 'layernorm');
    else if (k === 'mlp_class_name') {
      const m = oneOf(v, key, ['LLaMAMLP', 'GemmaMLP', 'GptNeoxMLP', 'LLaMAMoE'] as const);
      if (m === 'LLaMAMoE')
        throw new ImportError(key, `${key}: LLaMAMoE: a LitGPT MoE config is not read; give the model's config.json`);
      d.set('model.mlp', m === 'GptNeoxMLP' ? 'plain' : 'gated');
    } else if (CONFIG_IGNORED.has(k)) d.ignore(key);
    else d.skip(key, 'a litgpt Config field llmem does not read; not applied');
  }
  // litgpt Config.__post_init__ defaults for what the file leaves out
  // (Config @2685705: n_layer 16, n_embd 4096, n_head 32)
  const unset = (['model.layers', 'model.hidden', 'model.heads'] as const).filter((k) => d.get(k) === undefined);
  if (unset.length) {
    if (d.get('model.layers') === undefined) d.set('model.layers', 16);
    if (d.get('model.hidden') === undefined) d.set('model.hidden', 4096);
    if (d.get('model.heads') === undefined) d.set('model.heads', 32);
    d.note(`model_config: ${unset.join(', ')} from the litgpt Config defaults (n_layer 16, n_embd 4096, n_head 32)`);
  }
  const hidden = d.get('model.hidden') as number;
  const heads = d.get('model.heads') as number;
  if (d.get('model.head_dim') === undefined && hidden % heads !== 0)
    throw new ImportError('model_config', `model_config: n_embd ${hidden} is not a multiple of n_head ${heads}`);
  if (d.get('model.kv_heads') === undefined) d.set('model.kv_heads', heads);
  if (d.get('model.head_dim') === undefined) d.set('model.head_dim', hidden / heads);
  if (d.get('model.ffn_hidden') === undefined) {
    if (c.mlp_class_name === 'LLaMAMLP')
      // Config.__post_init__: ValueError "needs to set the `intermediate_size`" for LLaMAMLP (GemmaMLP gets 4 x n_embd)
      throw new ImportError(
        'model_config.intermediate_size',
        'model_config.intermediate_size: LitGPT requires it with mlp_class_name LLaMAMLP (Config raises ValueError)',
      );
    d.set('model.ffn_hidden', 4 * hidden);
  }
  if (d.get('model.vocab') === undefined) {
    // Config @2685705: padded_vocab_size = find_multiple(vocab_size (50254), padding_multiple (512)) when not given
    const given = (k: string) => c[k] !== undefined && c[k] !== null;
    const vocab = given('vocab_size') ? int(c.vocab_size, 'model_config.vocab_size') : 50254;
    const multiple = given('padding_multiple') ? int(c.padding_multiple, 'model_config.padding_multiple') : 512;
    d.set('model.vocab', Math.ceil(vocab / multiple) * multiple);
  }
  if (d.get('model.max_positions') === undefined) d.set('model.max_positions', 4096); // Config block_size default
  if (d.get('model.norm') === undefined) d.set('model.norm', 'layernorm');
  if (d.get('model.mlp') === undefined) d.set('model.mlp', 'plain');
  if (d.get('model.bias') === undefined) d.set('model.bias', true);
  d.set('model.position', 'rope');
  d.set('model.head', 'lm');
  if (typeof c.name === 'string') d.set('model.name', c.name);
  d.note('model_config: the model is read from it (no catalog preset); litgpt Config defaults fill what it leaves out');
}

type Quant = 'bnb.nf4' | 'bnb.nf4-dq' | 'bnb.fp4' | 'bnb.fp4-dq' | 'bnb.int8-training';
function quantMode(v: Json): Quant {
  // lora.py setup() quantize Literal (litgpt@2685705)
  return oneOf(v, 'quantize', ['bnb.nf4', 'bnb.nf4-dq', 'bnb.fp4', 'bnb.fp4-dq', 'bnb.int8-training'] as const);
}

interface Precision {
  dtype: Dtype;
  mixed: boolean;
  fp8: boolean;
}

/** Fabric precision strings (lightning fabric/connector.py _PRECISION_INPUT; aliases "bf16" -> bf16-mixed, "16" -> 16-mixed, "32" -> 32-true). */
function precisionOf(d: Draft, v: Json | undefined, quantized: boolean): Precision {
  let p: string;
  if (v === undefined || v === null) {
    // litgpt/utils.py get_default_supported_precision(training=True) @2685705: bf16-mixed on a bf16 GPU
    p = 'bf16-mixed';
    d.note('precision null: LitGPT picks bf16-mixed (get_default_supported_precision, a bf16-capable GPU assumed)');
  } else {
    const raw = typeof v === 'number' ? String(v) : v;
    p = oneOf(raw, 'precision', [
      'bf16-true',
      'bf16-mixed',
      '16-true',
      '16-mixed',
      '32-true',
      'bf16',
      '16',
      '32',
      'transformer-engine',
      'transformer-engine-float16',
    ] as const);
    p = { bf16: 'bf16-mixed', '16': '16-mixed', '32': '32-true' }[p] ?? p;
  }
  if (quantized && p.endsWith('-mixed'))
    // lora.py setup() @2685705: ValueError("Quantization and mixed precision is not supported.")
    throw new ImportError(
      'precision',
      `precision: ${p} with quantize: LitGPT refuses quantization with mixed precision (use bf16-true, 16-true or 32-true)`,
    );
  if (quantized && p.startsWith('transformer-engine'))
    throw new ImportError(
      'precision',
      `precision: ${p} with quantize: BitsandbytesPrecision takes 16-true, bf16-true or 32-true`,
    );
  switch (p) {
    case 'bf16-true':
      return { dtype: 'bf16', mixed: false, fp8: false };
    case '16-true':
      return { dtype: 'fp16', mixed: false, fp8: false };
    case '32-true':
      return { dtype: 'fp32', mixed: false, fp8: false };
    case 'bf16-mixed':
      d.note('precision bf16-mixed: fp32 parameters, gradients and optimizer states under bf16 autocast');
      return { dtype: 'bf16', mixed: true, fp8: false };
    case '16-mixed':
      d.note('precision 16-mixed: fp32 parameters, gradients and optimizer states under fp16 autocast');
      return { dtype: 'fp16', mixed: true, fp8: false };
    default:
      // Fabric TransformerEnginePrecision: weights converted to bf16 (or fp16), TE fp8 linears
      d.note(`precision ${p}: Transformer Engine fp8 linears, ${p.endsWith('float16') ? 'fp16' : 'bf16'} weights`);
      return { dtype: p.endsWith('float16') ? 'fp16' : 'bf16', mixed: false, fp8: true };
  }
}

/** devices per node: an int, "auto" / -1 (all visible GPUs), or a list / "0,1" of device ids. */
function devicesOf(
  d: Draft,
  v: Json | undefined,
  script: Script,
  nodes: number,
  worldSize?: number,
): number | undefined {
  const def = script === 'pretrain' ? 'auto' : 1; // setup() defaults @2685705
  const raw = v === undefined || v === null ? def : v;
  let perNode: number | undefined;
  if (raw === 'auto' || raw === -1 || raw === '-1') perNode = undefined;
  else if (Array.isArray(raw)) {
    perNode = raw.length;
    d.note(`devices ${JSON.stringify(raw)}: ${perNode} devices (current LitGPT parse_devices takes a count or "auto")`);
  } else if (typeof raw === 'string' && raw.includes(',')) {
    perNode = raw.split(',').filter((s) => s.trim() !== '').length;
    d.note(`devices "${raw}": ${perNode} devices`);
  } else perNode = int(raw, 'devices');
  if (v === undefined || v === null)
    d.note(
      `devices not given: ${def === 'auto' ? '"auto" (pretrain.py default: all visible GPUs)' : "1 (the finetune scripts' default)"}`,
    );
  if (perNode === undefined) {
    if (worldSize === undefined) {
      d.note(
        'devices "auto": all visible GPUs, not in the file; parallel.gpus left at llmem\'s default (give --world-size)',
      );
      return undefined;
    }
    if (worldSize % nodes !== 0)
      throw new ImportError(
        'num_nodes',
        `num_nodes: the world size given, ${worldSize}, is not a multiple of num_nodes ${nodes}`,
      );
    d.note(`devices "auto": the world size given, ${worldSize} = ${worldSize / nodes} devices x ${nodes} nodes`);
    return worldSize / nodes;
  }
  agreeWorldSize('devices', perNode * nodes, worldSize, 'devices x num_nodes');
  return perNode;
}

function lora(d: Draft, y: Obj, quantize: Quant | undefined, p: Precision, model: Obj | undefined): void {
  const given = (k: string) => y[k] !== undefined && y[k] !== null;
  d.set('training.finetune.method', quantize ? 'qlora' : 'lora');
  d.set('training.finetune.lora_rank', given('lora_r') ? int(y.lora_r, 'lora_r') : 8);
  d.set('training.finetune.lora_dropout', given('lora_dropout') ? num(y.lora_dropout, 'lora_dropout') : 0.05);
  const on = (k: (typeof LORA_FLAGS)[number]) => (given(k) ? bool(y[k], k) : LORA_DEFAULTS[k]);
  const targets: string[] = [];
  if (on('lora_query')) targets.push('q');
  if (on('lora_key')) targets.push('k');
  if (on('lora_value')) targets.push('v');
  if (on('lora_projection')) targets.push('o');
  // lora.py LLaMAMLP fc_1, fc_2, proj (gate, up, down); GptNeoxMLP fc, proj (up, down)
  if (on('lora_mlp'))
    targets.push(...((d.get('model.mlp') ?? model?.mlp) === 'plain' ? ['up', 'down'] : ['gate', 'up', 'down']));
  if (on('lora_head')) d.skip('lora_head', 'LoRA on the output head is not modelled (no adapter counted for lm_head)');
  if (!targets.length)
    throw new ImportError(
      'lora_query',
      'lora_query: no LoRA target is on (lora_query, lora_key, lora_value, lora_projection, lora_mlp)',
    );
  d.set('training.finetune.lora_targets', targets);
  // adapters in the parameters' dtype: the precision's under "-true" and bitsandbytes, fp32 under "-mixed"
  d.set('training.finetune.adapter_dtype', p.mixed ? 'fp32' : p.dtype);
  if (p.mixed) {
    d.set('training.finetune.base_dtype', 'fp32');
    d.note('mixed precision: the frozen base stays fp32 (Fabric autocasts, it does not convert the weights)');
  }
  if (quantize) {
    // Fabric BitsandbytesPrecision modes: _NF4Linear / _FP4Linear compress_statistics False, the -dq ones True;
    // int8-training: _Linear8bitLt, weights quantized to int8 (lightning fabric/plugins/precision/bitsandbytes.py)
    const mode = quantize.slice(4);
    d.set('training.finetune.quant', mode.startsWith('nf4') ? 'nf4' : mode.startsWith('fp4') ? 'fp4' : 'int8');
    d.set('training.finetune.double_quant', mode.endsWith('-dq'));
    d.note(
      `quantize ${quantize}: every Linear quantized by Fabric from an fp16 copy; the litgpt profile sets quant_head and quant_from_fp16`,
    );
  }
}

function engine(d: Draft, script: Script, gpus: number | undefined, perNode: number | undefined, nodes: number): void {
  if (gpus === 1) {
    d.set('parallel.engine', 'single');
    return;
  }
  const multi = gpus === undefined ? 'if more than one device' : `${gpus} devices`;
  if (script === 'lora') {
    // lora.py @2685705: ModelParallelStrategy(parallelize_fn, data_parallel_size=devices*num_nodes); parallelize_fn
    // wraps every Block in checkpoint_wrapper (activation_checkpointing=True) and fully_shard()s them (FSDP2)
    d.set('parallel.engine', 'fsdp2');
    d.set('parallel.fsdp_strategy', 'full_shard');
    d.set('parallel.reshard_after_forward', true);
    d.set('training.recompute', 'full');
    d.note(
      `${multi}: lora.py ModelParallelStrategy, FSDP2 fully_shard over the data-parallel mesh with every Block checkpointed`,
    );
  } else if (script === 'full') {
    // full.py / adapter.py @2685705: FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}, state_dict_type="full")
    d.set('parallel.engine', 'fsdp1');
    d.set('parallel.fsdp_strategy', 'full_shard');
    d.set('training.recompute', 'full');
    d.note(`${multi}: full.py FSDPStrategy, FULL_SHARD per Block with every Block checkpointed`);
  } else {
    // pretrain.py @2685705: FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full", sharding_strategy="HYBRID_SHARD"), no checkpointing
    d.set('parallel.engine', 'fsdp1');
    d.set('parallel.fsdp_strategy', 'hybrid_shard');
    if (perNode !== undefined) d.set('parallel.fsdp_shard_size', perNode);
    d.note(
      `${multi}: pretrain.py FSDPStrategy HYBRID_SHARD: shards within a node${perNode !== undefined ? ` (${perNode} devices)` : ''}, replicates over ${nodes} node(s)`,
    );
  }
}

/** optimizer: a class name ("AdamW", "torch.optim.SGD") or {class_path, init_args} (litgpt/utils.py instantiate_*_optimizer @2685705). */
function optimizer(d: Draft, v: Json | undefined, script: Script, quantized: boolean, dtype: string): void {
  const spec = v === undefined || v === null ? 'AdamW' : v;
  const path = typeof spec === 'string' ? spec : str(obj(spec, 'optimizer').class_path, 'optimizer.class_path');
  const args = isObject(spec) && isObject(spec.init_args) ? spec.init_args : {};
  if (quantized) {
    // lora.py: instantiate_bnb_optimizer -> bnb.optim.PagedAdamW, "AdamW" required (litgpt/utils.py @2685705)
    if (!path.includes('AdamW'))
      throw new ImportError(
        'optimizer',
        `optimizer: ${path}: with quantize LitGPT takes only AdamW (instantiate_bnb_optimizer)`,
      );
    applyOptimizerClass(d, 'optimizer', 'bitsandbytes.optim.PagedAdamW', {}, dtype);
    d.note('quantize: LitGPT swaps the optimizer for bitsandbytes PagedAdamW (fp32 states in managed memory)');
  } else {
    const name = (path.split('.').pop() ?? path).toLowerCase();
    if (!applyOptimizerClass(d, 'optimizer', path, args, dtype))
      d.skip('optimizer', `${path}: no config v1 optimizer for it; training.optimizer left at llmem's default`);
    if (script === 'pretrain' && ['adamw', 'adam'].includes(name) && !path.includes('bitsandbytes')) {
      d.set('training.optimizer_impl', 'fused'); // pretrain.py @2685705: extra_kwargs {"fused": device is cuda}
      d.note('pretrain.py passes fused=True to the optimizer on CUDA');
    }
  }
  for (const [k, a] of Object.entries(args)) {
    const key = `optimizer.init_args.${k}`;
    if (k === 'fused' && a !== null && bool(a, key)) d.set('training.optimizer_impl', 'fused');
    else if (k === 'foreach' && a !== null && d.get('training.optimizer_impl') !== 'fused')
      d.set('training.optimizer_impl', bool(a, key) ? 'foreach' : 'for_loop');
    else if (k === 'amsgrad' && a === true)
      d.skip(key, "AMSGrad's max of the second moments (one more state) is not modelled");
    else d.ignore(key);
  }
  if (isObject(spec))
    for (const k of Object.keys(spec))
      if (k !== 'class_path' && k !== 'init_args') d.skip(`optimizer.${k}`, 'not read; not applied');
}
