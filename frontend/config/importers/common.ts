// What every importer shares: the result shape, a draft config that records
// what was assumed and what was left out, strict value readers, text parsers
// and the catalog look-up of Hugging Face model ids.
import { parse as parseToml } from 'smol-toml';
import type { Config, ConfigError, Json } from '../../../wasm/llmem.js';
import { findModel, MODELS, type ModelEntry, presetRef } from '../catalog.js';
import { parsePythonJson } from '../json.js';
import { parseYaml, YamlError } from './yaml.js';

export type ImportKind =
  | 'hf'
  | 'deepspeed'
  | 'megatron'
  | 'torchtitan'
  | 'accelerate'
  | 'training_args'
  | 'llamafactory'
  | 'axolotl'
  | 'trl'
  | 'verl'
  | 'openrlhf'
  | 'litgpt'
  | 'torchtune'
  | 'swift'
  | 'nemo_rl';

/** A config-v1 object, what the importer assumed, and every source key it did not apply. */
export interface Imported {
  config: Config;
  notes: string[];
  unsupported: string[];
}
export type ImportResult = Imported | { error: ConfigError };

/** Malformed input: the importer stops and applies nothing. `path` names the source key. */
export class ImportError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export type Obj = { [key: string]: Json };
export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isAuto = (v: unknown): boolean => v === 'auto';

/** Run an importer body; an ImportError becomes {error}, nothing half-applied escapes. */
export function guard<T>(body: () => T): T | { error: ConfigError } {
  try {
    return body();
  } catch (e) {
    if (e instanceof ImportError) return { error: { path: e.path, message: e.message } };
    // a nesting or expansion bomb (recursion or string limits): a named error, never a crash
    if (e instanceof RangeError)
      return {
        error: { path: '', message: `the file is nested too deeply or expands too far to import (${e.message})` },
      };
    throw e;
  }
}

/**
 * DeepSpeed "auto" values the HF integration sizes from the model (transformers integrations/deepspeed.py
 * HfTrainerDeepSpeedConfig.trainer_config_finalize; accelerate's _prepare_deepspeed the same): reduce_bucket_size
 * hidden², and for ZeRO-3 stage3_prefetch_bucket_size 0.9 hidden² and stage3_param_persistence_threshold 10 hidden.
 */
const MODEL_SIZED_AUTO: Record<string, (h: number) => [number, string]> = {
  'parallel.reduce_bucket_size': (h) => [h * h, 'hidden²'],
  'parallel.stage3_prefetch_bucket_size': (h) => [Math.trunc(0.9 * h * h), '0.9 hidden²'],
  'parallel.stage3_param_persistence_threshold': (h) => [10 * h, '10 hidden'],
};

/**
 * A file none of whose top-level keys the importer knows is not that format's config (a NeMo-RL or Oumi YAML forced
 * through the LLaMA-Factory importer would otherwise import as its defaults): an error naming the format.
 * `unknown`: the reason the importer gives an unknown key.
 */
export function refuseIfNoKeyKnown(d: Draft, keys: string[], unknown: string, format: string): void {
  const flagged = new Set(d.unsupported.filter((u) => u.endsWith(`: ${unknown}`)).map((u) => u.split(':')[0]));
  if (keys.length > 0 && keys.every((k) => flagged.has(k)))
    throw new ImportError(
      '',
      `none of the file's keys (${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', ...' : ''}) is a ${format} key: it is not a ${format} config`,
    );
}

/** The config being built, with the notes and the keys left out. */
export class Draft {
  readonly config: Config = {};
  readonly notes: string[] = [];
  readonly unsupported: string[] = [];
  private readonly ignored: string[] = [];

  set(path: string, value: Json): void {
    const parts = path.split('.');
    let node = this.config;
    for (const p of parts.slice(0, -1)) {
      if (!isObject(node[p])) node[p] = {};
      node = node[p] as Config;
    }
    node[parts[parts.length - 1]] = value;
  }

  get(path: string): Json | undefined {
    let node: Json | undefined = this.config;
    for (const p of path.split('.')) node = isObject(node) ? node[p] : undefined;
    return node;
  }

  note(text: string): void {
    this.notes.push(text);
  }

  /** The training stack the file belongs to: its profile decides the mechanisms no key sets (core/profiles.def). */
  stack(framework: string): void {
    this.set('runtime.framework', framework);
    this.note(
      `runtime.framework ${framework}: the ${framework} profile sets the loss, optimizer kernel and other mechanisms the file leaves open (version: current unless set)`,
    );
  }

  /** A source key that may change memory but is not applied. */
  skip(key: string, why: string): void {
    this.unsupported.push(`${key}: ${why}`);
  }

  /** A source key read and judged to have no effect on per-GPU memory. */
  ignore(key: string): void {
    this.ignored.push(key);
  }

  /** `"auto"` (HF/DeepSpeed integration): the value is decided elsewhere; llmem's default stands. */
  auto(key: string, path: string): void {
    if (path in MODEL_SIZED_AUTO) this.modelSizedAutos.push([key, path]);
    else this.note(`${key} is "auto": ${path} left at llmem's default`);
  }

  private readonly modelSizedAutos: [string, string][] = [];

  result(): Imported {
    // the ZeRO buckets transformers and accelerate size from the model's hidden size, once the model is known
    const hidden = draftModel(this)?.hidden;
    for (const [key, path] of this.modelSizedAutos) {
      if (typeof hidden === 'number' && this.get(path) === undefined) {
        const [value, formula] = MODEL_SIZED_AUTO[path](hidden);
        this.set(path, value);
        this.note(`${key} is "auto": ${formula} = ${value} for hidden ${hidden} (the trainer fills it from the model)`);
      } else this.note(`${key} is "auto": ${path} left at llmem's default (the model's hidden size is not known here)`);
    }
    const notes = [...this.notes];
    if (this.ignored.length) notes.push(`read, no effect on per-GPU memory: ${this.ignored.join(', ')}`);
    return { config: this.config, notes, unsupported: [...this.unsupported] };
  }
}

const describe = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

/** A whole number >= min; numeric strings (YAML, command lines) are accepted. */
export function int(v: unknown, key: string, min = 1): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min)
    throw new ImportError(key, `${key}: must be a whole number >= ${min}, not ${describe(v)}`);
  return n;
}

/** A finite number >= min. */
export function num(v: unknown, key: string, min = 0): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < min)
    throw new ImportError(key, `${key}: must be a number >= ${min}, not ${describe(v)}`);
  return n;
}

export function bool(v: unknown, key: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'True') return true;
  if (v === 'false' || v === 'False') return false;
  throw new ImportError(key, `${key}: must be true or false, not ${describe(v)}`);
}

export function obj(v: unknown, key: string): Obj {
  if (!isObject(v)) throw new ImportError(key, `${key}: must be a mapping of keys, not ${describe(v)}`);
  return v;
}

export function str(v: unknown, key: string): string {
  if (typeof v !== 'string') throw new ImportError(key, `${key}: must be a string, not ${describe(v)}`);
  return v;
}

/** A list of names: a TOML/YAML list, or one comma-separated string (torchtitan's command-line form). */
export function names(v: unknown, key: string): string[] {
  if (typeof v === 'string')
    return v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw new ImportError(key, `${key}: must be a list of names, not ${describe(v)}`);
}

/** One of the listed values (case-insensitive); the error lists them. */
export function oneOf<T extends string>(v: unknown, key: string, allowed: readonly T[]): T {
  const s = typeof v === 'string' ? v.toLowerCase() : undefined;
  const hit = allowed.find((a) => a.toLowerCase() === s);
  if (!hit) throw new ImportError(key, `${key}: ${describe(v)} is not allowed (allowed: ${allowed.join(' | ')})`);
  return hit;
}

/** torch dtypes as files spell them (torch.bfloat16 as "bfloat16", the short forms some frameworks take) -> config v1 */
const DTYPES: Record<string, 'bf16' | 'fp16' | 'fp32'> = {
  bfloat16: 'bf16',
  bf16: 'bf16',
  float16: 'fp16',
  fp16: 'fp16',
  half: 'fp16',
  float32: 'fp32',
  fp32: 'fp32',
  float: 'fp32',
};

/** A torch dtype name as config v1's dtype, or undefined (the caller says what else the key may hold). */
export const dtypeName = (s: string): 'bf16' | 'fp16' | 'fp32' | undefined => DTYPES[s.toLowerCase()];

/** A torch dtype among the spellings `names` a framework takes, as config v1's dtype; else a named error. */
export function torchDtype(
  v: unknown,
  key: string,
  names: readonly string[] = ['bfloat16', 'float16', 'float32'],
): 'bf16' | 'fp16' | 'fp32' {
  return DTYPES[oneOf(v, key, names)];
}

function top(value: unknown, what: string): Obj {
  if (value === null || value === undefined) throw new ImportError('', `${what}: the file is empty`);
  if (!isObject(value))
    throw new ImportError(
      '',
      `${what}: must hold a mapping of keys, not ${Array.isArray(value) ? 'a list' : describe(value)}`,
    );
  return value;
}

export function parseJsonText(text: string, what: string): Obj {
  let v: unknown;
  try {
    v = parsePythonJson(text);
  } catch (e) {
    throw new ImportError('', `${what}: not valid JSON (${(e as Error).message})`);
  }
  return top(v, what);
}

export function parseYamlText(text: string, what: string): Obj {
  let v: unknown;
  try {
    v = parseYaml(text);
  } catch (e) {
    if (!(e instanceof YamlError)) throw e;
    throw new ImportError(
      '',
      e.unsupported ? `${what}: unsupported YAML (${e.message})` : `${what}: not valid YAML (${e.message})`,
    );
  }
  return top(v, what);
}

export function parseTomlText(text: string, what: string): Obj {
  let v: unknown;
  try {
    v = parseToml(text);
  } catch (e) {
    throw new ImportError('', `${what}: not valid TOML (${(e as Error).message.split('\n')[0]})`);
  }
  return top(v, what);
}

// Name parts that do not change a model's shape: release tags, precisions and
// quantized-weight formats of the same architecture (the note names those ignored).
const SHAPE_NEUTRAL_SUFFIXES = [
  'instruct',
  'thinking', // Qwen3-*-Thinking-2507: the Instruct-2507 release's shape
  'chat',
  'it',
  'hf',
  'pt',
  'base',
  'checkpoints', // HuggingFaceTB/SmolLM3-3B-checkpoints: the training run's intermediate checkpoints
  'sft', // post-training stages of the same weights (allenai/Olmo-3-7B-Instruct-SFT, ...-DPO)
  'dpo',
  'dequantized', // axolotl-ai-co/gpt-oss-120b-dequantized: the MXFP4 experts stored in bf16, the same tensors
  'bf16',
  'fp16',
  'fp8',
  'fp8-dynamic',
  'fp8-block',
  'awq',
  'gptq',
  'gptq-int4',
  'gptq-int8',
  'int4',
  'int8',
  'bnb-4bit',
  'unsloth-bnb-4bit',
  'bnb-nf4', // hugging-quants/Meta-Llama-3.1-405B-BNB-NF4-BF16
  '4bit',
  '8bit',
  'mlx',
  'gguf',
];
// Of those, the ones naming a pre-quantized checkpoint (AWQ, GPTQ, bitsandbytes, integer
// weights): the shape matches, but the stored weights are not the compute dtype. FP8 releases
// are left out: LLaMA-Factory loads them dequantized (FineGrainedFP8Config(dequantize=True),
// src/llamafactory/model/model_utils/quantization.py, hiyouga/LLaMA-Factory@ff6d4d12).
const QUANTIZED_SUFFIXES = new Set([
  '-awq',
  '-gptq',
  '-gptq-int4',
  '-gptq-int8',
  '-int4',
  '-int8',
  '-bnb-4bit',
  '-unsloth-bnb-4bit',
  '-bnb-nf4',
  '-4bit',
  '-8bit',
]);
/** bitsandbytes 4-bit checkpoints (Unsloth's "-bnb-4bit"): NF4 with double quantization, what qlora models. */
export const BNB_4BIT_SUFFIXES = new Set(['-bnb-4bit', '-unsloth-bnb-4bit']);
// longest first, so that "-fp8-dynamic" is one part, not "-fp8" and a leftover "-dynamic"
const NEUTRAL = new RegExp(
  `-(${[...SHAPE_NEUTRAL_SUFFIXES].sort((a, b) => b.length - a.length).join('|')})(?=-|$)`,
  'g',
);
// Release dates at the end of a name: Qwen3 "-2507", Mistral "-2501", DeepSeek "-0324".
const DATE_SUFFIX = /-\d{4}$/;

/** The name part of an id or path, without organisation, "Meta-" and the neutral parts. */
function modelKey(id: string): { key: string; dropped: string[] } {
  const dropped: string[] = [];
  let key = (id.split('/').pop() ?? id).toLowerCase().replace(/^meta-(?=llama)/, '');
  for (let previous = ''; previous !== key; ) {
    previous = key;
    key = key.replace(NEUTRAL, (m) => {
      dropped.push(m);
      return '';
    });
    key = key.replace(DATE_SUFFIX, (m) => {
      dropped.push(m);
      return '';
    });
  }
  return { key, dropped };
}

// name key -> catalog entry: the Hugging Face id in each entry's source, and the id itself.
const BY_KEY = new Map<string, ModelEntry>();
for (const m of MODELS) {
  const hf = /\bHF ([\w.-]+\/[\w.-]+)/.exec(m.source)?.[1];
  const hfKey = hf ? modelKey(hf).key : undefined;
  if (hfKey && !BY_KEY.has(hfKey)) BY_KEY.set(hfKey, m);
  if (!BY_KEY.has(m.id)) BY_KEY.set(m.id, m);
}
// checkpoints with exactly a preset's tensors (same_tensors), after every preset's own name
const SAME_TENSORS = new Map<string, string>(); // key -> why
for (const m of MODELS)
  for (const alias of m.same_tensors ?? []) {
    const key = modelKey(alias.id).key;
    if (BY_KEY.has(key)) continue;
    BY_KEY.set(key, m);
    SAME_TENSORS.set(key, alias.why ?? alias.id); // the page's catalog leaves the why out (vite.config.ts)
  }

/** How a model id was matched: the preset reference (current revision) and the name parts ignored. */
export interface ModelMatch {
  preset: string;
  ignored: string[];
  /** the name part naming a pre-quantized checkpoint ("-awq", "-bnb-4bit", ...), if any */
  quantized?: string;
  /** matched as another checkpoint with exactly the preset's tensors: why (models.json same_tensors) */
  sameTensors?: string;
}

/** The catalog preset of a Hugging Face model id or local path, matched by name through the
 * suffixes that leave the shape alone (-Instruct, -Chat, -Base, -hf, -2507, -BF16, -FP8, ...)
 * and any organisation prefix; undefined when no preset matches. */
export function matchModelId(id: string): ModelMatch | undefined {
  const { key, dropped } = modelKey(id.trim().replace(/\/+$/, ''));
  const entry = BY_KEY.get(key);
  const quantized = dropped.find((p) => QUANTIZED_SUFFIXES.has(p));
  const same = SAME_TENSORS.get(key);
  return entry
    ? {
        preset: presetRef(entry),
        ignored: dropped,
        ...(quantized ? { quantized } : {}),
        ...(same ? { sameTensors: same } : {}),
      }
    : undefined;
}

/** The catalog entry a model id or local path names, if its name matches one. */
export function modelEntryForId(id: string): ModelEntry | undefined {
  return BY_KEY.get(modelKey(id.trim().replace(/\/+$/, '')).key);
}

/** The catalog preset (as model.preset names it) for a model id or local path, if its name matches one. */
export function presetForModelId(id: string): string | undefined {
  return matchModelId(id)?.preset;
}

/** Set model.preset from a model id; an id no preset matches is an error naming the key
 * (estimating with a default model instead would be silently wrong). */
/** The GPU count a file implies (`what` says how) against the world size given (--world-size, the Import
 * dialog's field): where both are known they must agree; the error names the file's key. */
export function agreeWorldSize(key: string, fromFile: number, given: number | undefined, what: string): void {
  if (given !== undefined && given !== fromFile)
    throw new ImportError(key, `${key}: ${what} = ${fromFile} processes, the world size given is ${given}`);
}

/** While set (importConfig's modelFromHf: `llmem import --hf`, the Import dialog's "keep the current model"),
 * the model is given apart from the file: a model id the catalog does not hold is noted instead of refused. */
let modelFromHf = false;
export function withModelFromHf<T>(f: () => T): T {
  modelFromHf = true;
  try {
    return f();
  } finally {
    modelFromHf = false;
  }
}

export function applyModelId(d: Draft, key: string, id: unknown): void {
  if (id === null || id === undefined) return;
  const name = str(id, key);
  const match = matchModelId(name);
  if (!match && modelFromHf) {
    d.note(`${key} "${name}": not in the model catalog; the model is given apart (--hf, or the page's)`);
    return;
  }
  if (!match)
    throw new ImportError(
      key,
      `${key}: "${name}" is not in the model catalog; give its config.json (command line: llmem import ... --hf config.json or org/name; page: tick keep the current model and import the config.json as well) or choose model.preset`,
    );
  d.set('model.preset', match.preset);
  const ignored = match.ignored.length ? ` (name matched without ${match.ignored.join(', ')})` : '';
  d.note(
    `${key} "${name}" -> model.preset ${match.preset}${ignored}${match.sameTensors ? `: the same tensors (${match.sameTensors})` : ''}`,
  );
  // a text preset of a checkpoint that holds a vision tower too (Gemma 3 4B-27B: Gemma3ForConditionalGeneration)
  const base = match.preset.split('@')[0];
  const vision = MODELS.find((m) => m.id === `${base}-vision`);
  if (vision && !/vision/i.test(name))
    d.note(
      `${key} "${name}": the checkpoint holds a vision tower as well; ${base} counts the text model only (a text-only load), ${vision.id} the whole checkpoint (a load of the full model, tower frozen: model.vision.train "none")`,
    );
  const q = match.quantized;
  if (q && !(BNB_4BIT_SUFFIXES.has(q) && d.get('training.finetune.method') === 'qlora'))
    d.skip(
      key,
      `"${q}" names a pre-quantized checkpoint: its quantized weights are not modelled (counted at the compute dtype); for a bitsandbytes 4-bit base set training.finetune.method qlora`,
    );
}

// Module names of LoRA target lists (PEFT target_modules) -> config v1 lora_targets.
const TARGETS: Record<string, string[]> = {
  q_proj: ['q'],
  k_proj: ['k'],
  v_proj: ['v'],
  o_proj: ['o'],
  gate_proj: ['gate'],
  up_proj: ['up'],
  down_proj: ['down'],
  wq: ['q'],
  wk: ['k'],
  wv: ['v'],
  wo: ['o'],
  w1: ['gate'],
  w3: ['up'],
  w2: ['down'],
  qkv_proj: ['q', 'k', 'v'],
  query_key_value: ['q', 'k', 'v'],
  c_attn: ['q', 'k', 'v'],
  gate_up_proj: ['gate', 'up'],
  query: ['q'],
  key: ['k'],
  value: ['v'],
  dense_h_to_4h: ['up'],
  dense_4h_to_h: ['down'],
  c_fc: ['up'],
  fc1: ['up'],
  fc2: ['down'],
  // Megatron-Core's fused and canonical linears (megatron/core/transformer: linear_qkv, linear_proj, linear_fc1 =
  // gate and up of a gated MLP, linear_fc2)
  linear_qkv: ['q', 'k', 'v'],
  linear_q: ['q'],
  linear_k: ['k'],
  linear_v: ['v'],
  linear_proj: ['o'],
  linear_fc1: ['gate', 'up'],
  linear_fc1_gate: ['gate'],
  linear_fc1_up: ['up'],
  linear_fc2: ['down'],
};
export const ALL_TARGETS = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'];

/** The model set so far: its config v1 `model` section as the preset and the draft's own keys give it, or undefined. */
export function draftModel(d: Draft): Config | undefined {
  const own = d.get('model');
  const preset = d.get('model.preset');
  const entry = typeof preset === 'string' ? findModel(preset) : undefined;
  if (!entry && !isObject(own)) return undefined;
  return { ...(entry?.model ?? {}), ...(isObject(own) ? own : {}) } as Config;
}

/** Whether the model set so far is known to have a vision tower (false: known not to; undefined: not known). */
export function draftHasVision(d: Draft): boolean | undefined {
  const m = draftModel(d);
  return m === undefined ? undefined : isObject(m.vision);
}

/** The Qwen-VL towers, which take an image at the size the processor resizes it to (not one fixed size). */
const RESIZED_TOWERS = new Set(['qwen2_vl', 'qwen2_5_vl', 'qwen3_vl']);

/**
 * A cap on an image's pixels as the input of a Qwen-VL tower (model.vision.image_size): the largest square image, its
 * side a whole number of merged patches (the processor's smart_resize rounds to patch x merge). false: the model has
 * no such tower (one of a fixed size resizes every image to it), nothing set.
 */
export function applyImagePixels(d: Draft, pixels: number, why: string): boolean {
  const vision = draftModel(d)?.vision;
  if (!isObject(vision) || !RESIZED_TOWERS.has(String(vision.kind))) return false;
  const unit = Number(vision.patch_size ?? 14) * Number(vision.merge ?? 2);
  const side = Math.max(unit, Math.floor(Math.sqrt(pixels) / unit) * unit);
  d.set('model.vision.image_size', side);
  d.note(
    `${why}: the largest square image the tower takes, ${side} px (a multiple of ${unit}), model.vision.image_size ${side}`,
  );
  return true;
}

/** Set training.finetune.lora_targets from module names ("all", "all-linear", or a list / comma string). */
export function applyLoraTargets(d: Draft, key: string, v: Json): void {
  const names = (Array.isArray(v) ? v.map(String) : str(v, key).split(',')).map((s) => s.trim()).filter(Boolean);
  if (names.some((n) => n === 'all' || n === 'all-linear' || n === 'all_linear')) {
    d.set('training.finetune.lora_targets', ALL_TARGETS);
    // PEFT's all-linear takes every nn.Linear: a MoE model's routed experts too where they are linears (transformers
    // before v5; Megatron's grouped linears), not where they are fused 3-D parameters (transformers v5)
    if (isObject(draftModel(d)?.moe))
      d.note(
        `${key} ${names.join(', ')}: adapters are counted on attention, shared experts and dense MLPs; where the routed experts are nn.Linear modules (transformers before v5) PEFT adapts them too, which llmem does not count`,
      );
    return;
  }
  const set = new Set<string>();
  for (const n of names) {
    const hit = TARGETS[n.split('.').pop()!];
    if (hit) for (const t of hit) set.add(t);
    else d.skip(`${key} ${n}`, 'not a linear of the attention or MLP blocks; no adapter counted for it');
  }
  if (!set.size) throw new ImportError(key, `${key}: no LoRA target llmem can count (${names.join(', ')})`);
  d.set(
    'training.finetune.lora_targets',
    ALL_TARGETS.filter((t) => set.has(t)),
  );
}

// Module names of the embedding and the output head in the transformers model classes.
const FULL_MODULE_NAMES: Record<string, 'embedding' | 'head'> = {
  embed_tokens: 'embedding',
  wte: 'embedding',
  word_embeddings: 'embedding',
  embed_in: 'embedding',
  tok_embeddings: 'embedding',
  lm_head: 'head',
  embed_out: 'head',
  output: 'head',
  score: 'head',
  classifier: 'head',
};

/** PEFT modules_to_save (a list / comma string): the embedding and the head set
 * training.finetune.full_modules (a trainable copy of each); other modules are listed. */
export function applyFullModules(d: Draft, key: string, v: Json): void {
  const names = (Array.isArray(v) ? v.map(String) : str(v, key).split(',')).map((s) => s.trim()).filter(Boolean);
  const set = new Set<string>();
  for (const n of names) {
    const hit = FULL_MODULE_NAMES[n.split('.').pop()!];
    if (hit) set.add(hit);
    else
      d.skip(`${key} ${n}`, 'trained in full beside the adapters: only the embedding and the head can be; not applied');
  }
  if (set.size)
    d.set(
      'training.finetune.full_modules',
      ['embedding', 'head'].filter((m) => set.has(m)),
    );
}

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, ... */
export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/**
 * Routed experts split over TP where there is no expert parallelism (torchtitan apply_moe_ep_tp @b5b7ffbd: "if
 * ep_mesh is None: experts_mesh = tp_mesh"; torchtune's llama4 decoder_only_tp_plan: ExpertTensorParallel on the TP
 * mesh): parallel.etp is the TP degree for a MoE model, nothing for a dense one; a model given apart (--hf) is not
 * known yet, so a note says what to set.
 */
export function expertsOverTp(d: Draft, tp: number, why: string): void {
  const model = draftModel(d);
  if (model === undefined)
    d.note(
      `${why}: if the model given apart is a MoE one, its routed experts split over TP ${tp} too (set parallel.etp ${tp})`,
    );
  else if (isObject(model.moe)) {
    d.set('parallel.etp', tp);
    d.note(`${why}: the routed experts split over TP ${tp} too (parallel.etp)`);
  }
}
