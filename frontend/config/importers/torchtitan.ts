// torchtitan job TOML (train_configs/*.toml) -> config v1. Sections and keys:
// torchtitan/config/job_config.py (older releases: torchtitan/config_manager.py, with
// parallelism under [training] and [experimental]); docs/float8.md, docs/composability.md.
import type { Json } from '../../../wasm/llmem.js';
import { findModel } from '../catalog.js';
import {
  bool,
  Draft,
  guard,
  ImportError,
  int,
  expertsOverTp,
  isObject,
  names,
  obj,
  oneOf,
  ordinal,
  applyModelId,
  parseTomlText,
  str,
  torchDtype,
  type ImportResult,
  type Obj,
} from './common.js';

/** torchtitan [model] name/flavor -> catalog preset, keys spelt as torchtitan spells them: the flavor
 * dicts of torchtitan/models/<name>/__init__.py (pytorch/torchtitan 238fa9953e4aec2a62582121564273d7cbb1e9f1);
 * llama2: llama2_configs of torchtitan/models/llama/__init__.py (48713581, 2024-08). Flavors whose shape
 * the catalog lacks (debugmodel*, llama4 17bx128e, ...) are left out: importing them is an error. */
export const TORCHTITAN_FLAVORS: Record<string, Record<string, string>> = {
  llama3: {
    '8B': 'llama-3.1-8b',
    '8B_flex': 'llama-3.1-8b',
    '8B_varlen': 'llama-3.1-8b',
    '70B': 'llama-3.1-70b',
    '405B': 'llama-3.1-405b',
  },
  llama2: { '7B': 'llama-2-7b', '13B': 'llama-2-13b', '70B': 'llama-2-70b' },
  llama4: { '17bx16e': 'llama-4-scout-17b-16e', '17bx16e_irope': 'llama-4-scout-17b-16e' },
  // 16B and 236B: the DeepSeek-V2-Lite and DeepSeek-V2 shapes (MLA, 64/160 experts, 2 shared, 1 dense layer)
  deepseek_v3: { '16B': 'deepseek-v2-lite', '236B': 'deepseek-v2', '671B': 'deepseek-v3' },
  qwen3: {
    '0.6B': 'qwen3-0.6b',
    '1.7B': 'qwen3-1.7b',
    '4B': 'qwen3-4b',
    '8B': 'qwen3-8b',
    '14B': 'qwen3-14b',
    '32B': 'qwen3-32b',
    '30B-A3B': 'qwen3-30b-a3b',
    '235B-A22B': 'qwen3-235b-a22b',
  },
  gpt_oss: { '20b': 'gpt-oss-20b', '120b': 'gpt-oss-120b' },
};
// torchtitan's Llama 4 is the text decoder alone, every layer full causal attention; the _irope flavors
// make every 4th layer NoPE full attention and the others chunked over 8192 tokens
// (torchtitan/models/llama4/model/model.py, args.py every_n_layers_nope, fixed_attn_block_size @238fa995)
const FLAVOR_MODEL_KEYS: Record<string, Record<string, Json>> = {
  'llama4 17bx16e': { 'model.vision': null, 'model.layer_types': null, 'model.attention_chunk': null },
  'llama4 17bx16e_irope': {
    'model.vision': null,
    'model.layer_types': ['chunked', 'chunked', 'chunked', 'full'],
    'model.attention_chunk': 8192,
  },
};
const SCHEDULES: Record<string, [string, number]> = {
  '1f1b': ['1f1b', 1],
  gpipe: ['gpipe', 1],
  interleaved1f1b: ['interleaved', 2],
  loopedbfs: ['interleaved', 2],
  interleavedzerobubble: ['zero_bubble', 2],
  zbvzerobubble: ['zb_v', 2],
  dualpipev: ['dualpipe_v', 2],
};
const IGNORED_SECTIONS = new Set([
  'job',
  'profiling',
  'metrics',
  'lr_scheduler',
  'checkpoint',
  'comm',
  'validation',
  'memory_estimation',
  'fault_tolerance',
  'ft',
]);
const PARALLEL_KEYS = [
  'data_parallel_replicate_degree',
  'data_parallel_shard_degree',
  'tensor_parallel_degree',
  'pipeline_parallel_degree',
  'context_parallel_degree',
  'expert_parallel_degree',
  'expert_tensor_parallel_degree',
  'fsdp_reshard_after_forward',
  'pipeline_parallel_schedule',
  'pipeline_parallel_microbatch_size',
  'pipeline_parallel_microbatches',
  'pipeline_parallel_layers_per_stage',
  'disable_loss_parallel',
];
const PARALLEL_IGNORED = new Set([
  'enable_compiled_autograd',
  'pipeline_parallel_split_points',
  'module_fqns_per_model_part',
  'pipeline_parallel_schedule_csv',
  'context_parallel_rotate_method',
  'custom_model_path',
  'custom_import',
  'expert_parallel_comm_backend',
]);

export interface TorchtitanOptions {
  /** world size, needed when data_parallel_shard_degree is -1 */
  worldSize?: number;
  /** the model comes from a config.json given beside the file (llmem import --hf): a name or flavor the
   * catalog lacks is noted, not refused */
  modelFromHf?: boolean;
}

/** Import a torchtitan TOML job config. */
export function importTorchtitan(text: string, options: TorchtitanOptions = {}): ImportResult {
  return guard(() => {
    // torchtitan 9810191b (#2386, 2026-02-23) replaced the TOML job configs with Python config registries
    // (torchtitan/models/*/config_registry.py): those are code, not a config this importer reads
    if (/^\s*(from|import)\s+torchtitan\b/m.test(text) && /^\s*def\s+\w+\(/m.test(text))
      throw new ImportError(
        '',
        "a torchtitan config registry (Python): torchtitan replaced its TOML job configs with these in 9810191b (2026-02); llmem reads the TOML configs (train_configs/*.toml up to 238fa995) — give a run's settings as a TOML or as config v1",
      );
    const t = parseTomlText(text, 'torchtitan TOML');
    const d = new Draft();
    d.stack('torchtitan');
    d.set('parallel.engine', 'fsdp2');
    const section = (name: string): Obj => (t[name] === undefined ? {} : obj(t[name], `[${name}]`));
    const model = section('model'),
      training = section('training'),
      par = section('parallelism');
    const experimental = section('experimental');
    // Parallelism lived in [training] and [experimental] before [parallelism] existed.
    const p: Obj = {};
    for (const src of [training, experimental, par])
      for (const k of PARALLEL_KEYS) if (src[k] !== undefined) p[k] = src[k];
    // the first releases' name for it (torchtitan/config_manager.py @df2dcc74: -1 = the leftover ranks)
    if (p.data_parallel_shard_degree === undefined && training.data_parallel_degree !== undefined)
      p.data_parallel_shard_degree = training.data_parallel_degree;

    // [model]
    for (const [k, v] of Object.entries(model)) {
      if (k === 'name' || k === 'flavor') continue;
      if (k === 'converters') {
        for (const c of names(v, '[model] converters')) {
          // "quantize.linear.float8" since torchtitan 8a2686c4 (2025-09, components/quantization/float8.py)
          if (c === 'float8' || c === 'quantize.linear.float8') d.set('training.fp8_linear', true);
          else d.skip('[model] converters', `${c} is not modelled`);
        }
      } else d.ignore(`[model] ${k}`);
    }
    // job_config.py's defaults: name "llama3", flavor "debugmodel" (a test model no preset describes);
    // an unknown model is an error, raised after the other keys are checked
    const name = model.name === undefined ? 'llama3' : str(model.name, '[model] name');
    const flavor = model.flavor === undefined ? 'debugmodel' : str(model.flavor, '[model] flavor');
    const flavors = TORCHTITAN_FLAVORS[name] ?? {};
    const known = Object.keys(flavors).find((f) => f.toLowerCase() === flavor.toLowerCase());
    const giveHf = 'give its config.json (llmem import torchtitan <file> --hf config.json) or choose model.preset';
    let unknownModel = !TORCHTITAN_FLAVORS[name]
      ? new ImportError(
          '[model] name',
          `[model] name: "${name}" is not a torchtitan model llmem knows (known: ${Object.keys(TORCHTITAN_FLAVORS).join(' | ')}); ${giveHf}`,
        )
      : !known
        ? new ImportError(
            '[model] flavor',
            `[model] flavor: ${name} "${flavor}" is not in the model catalog (known ${name} flavors: ${Object.keys(flavors).join(' | ')}); ${giveHf}`,
          )
        : undefined;
    // experiments/transformers_modeling_backend: torchtitan trains a transformers model class, the Hub id
    // [hf_transformers] model names (its configs/full.toml: "Qwen/Qwen3-4B-Instruct-2507")
    // (its other flavors, debugmodel, lay their own small shape over the Hub config: refused below, as unknown)
    const hfModel = section('hf_transformers').model;
    // (named transformers_backend before its rename: experiments/__init__.py @e1f7f318)
    const hfBackend = name === 'transformers_modeling_backend' || name === 'transformers_backend';
    if (hfBackend && hfModel !== undefined && hfModel !== null) {
      if (flavor === 'full') {
        unknownModel = undefined;
        applyModelId(d, '[hf_transformers] model', hfModel);
      } else
        unknownModel = new ImportError(
          '[model] flavor',
          `[model] flavor: ${name} "${flavor}" lays its own shape over ${String(hfModel)} (a test model); only "full" trains the Hub model as published`,
        );
    }
    if (unknownModel && options.modelFromHf) {
      unknownModel = undefined;
      // models/llama4/model/model.py @238fa995: the text decoder alone; full attention unless the _irope flavors
      const llama4 =
        name === 'llama4'
          ? `; torchtitan's Llama 4 is the text decoder alone: a config.json with a vision tower counts it too (set model.vision.layers 0)${flavor.endsWith('_irope') ? '' : ', and this flavor attends in full on every layer (set model.layer_types null)'}`
          : '';
      d.note(
        `[model] ${name} ${flavor}: not a ${TORCHTITAN_FLAVORS[name] ? 'flavor' : 'model'} llmem knows; the model is the config.json given apart (--hf, or the page's)${llama4}`,
      );
    }
    const preset = known ? flavors[known] : undefined;
    const modelKeys = FLAVOR_MODEL_KEYS[`${name} ${known}`];
    if (preset) {
      d.set('model.preset', preset);
      for (const [k, v] of Object.entries(modelKeys ?? {})) d.set(k, v);
      d.note(
        `[model] ${name} ${flavor} -> model.preset ${preset}${modelKeys ? ' (text decoder only, its attention as the flavor sets it)' : ''}`,
      );
    }
    const presetId = preset ?? (d.get('model.preset') as string | undefined);
    const layers = presetId ? (findModel(presetId)?.model.layers as number | undefined) : undefined;

    // [parallelism]
    const deg = (k: string, min = 1) => (p[k] === undefined ? 1 : int(p[k], k, min));
    const replicate = deg('data_parallel_replicate_degree');
    const shardRaw =
      p.data_parallel_shard_degree === undefined
        ? -1
        : int(p.data_parallel_shard_degree, 'data_parallel_shard_degree', -1);
    const tp = deg('tensor_parallel_degree'),
      pp = deg('pipeline_parallel_degree'),
      cp = deg('context_parallel_degree');
    if (shardRaw === 0)
      throw new ImportError(
        'data_parallel_shard_degree',
        'data_parallel_shard_degree: must be -1 or a whole number >= 1, not 0',
      );
    let shard = shardRaw;
    if (shard === -1) {
      if (options.worldSize) {
        shard = options.worldSize / (replicate * tp * pp * cp);
        if (!Number.isInteger(shard))
          throw new ImportError(
            'data_parallel_shard_degree',
            `world size ${options.worldSize} is not a multiple of replicate ${replicate} * tp ${tp} * pp ${pp} * cp ${cp}`,
          );
      } else
        d.note(
          'data_parallel_shard_degree -1 (all remaining GPUs): parallel.gpus left at llmem default; pass --world-size N to set it',
        );
    }
    if (shard > 0) d.set('parallel.gpus', replicate * shard * tp * pp * cp);
    d.set('parallel.tp', tp);
    d.set('parallel.pp', pp);
    d.set('parallel.cp', cp);
    if (tp > 1) d.set('parallel.sequence_parallel', true); // torchtitan's TP plan shards norms and dropout over the sequence
    const ep = p.expert_parallel_degree === undefined ? 1 : deg('expert_parallel_degree');
    if (p.expert_parallel_degree !== undefined) d.set('parallel.ep', ep);
    const etpGiven = p.expert_tensor_parallel_degree === undefined ? undefined : deg('expert_tensor_parallel_degree');
    if (ep === 1) {
      // ETP has no effect without EP (config/job_config.py expert_tensor_parallel_degree @b5b7ffbd); the experts take
      // the TP plan
      if (etpGiven !== undefined && etpGiven > 1)
        d.note(
          `expert_tensor_parallel_degree ${etpGiven}: no effect without expert parallelism (torchtitan's job_config)`,
        );
      if (tp > 1) expertsOverTp(d, tp, `tensor_parallel_degree ${tp} without expert parallelism`);
    } else if (etpGiven !== undefined) {
      // distributed/parallel_dims.py _validate @b5b7ffbd: "Currently we only support ETP=TP or ETP=1"
      if (etpGiven !== 1 && etpGiven !== tp)
        throw new ImportError(
          'expert_tensor_parallel_degree',
          `expert_tensor_parallel_degree: ${etpGiven} with expert parallelism; torchtitan takes 1 or the TP degree (${tp})`,
        );
      d.set('parallel.etp', etpGiven);
    }
    if (replicate > 1 && shard === 1) {
      d.set('parallel.fsdp_strategy', 'no_shard');
      d.note('data_parallel_replicate_degree without sharding (DDP): counted as FSDP no_shard');
    } else if (replicate > 1) {
      d.set('parallel.fsdp_strategy', 'hybrid_shard');
      if (shard > 0) d.set('parallel.fsdp_shard_size', shard);
    }
    const reshard =
      p.fsdp_reshard_after_forward === undefined
        ? 'default'
        : oneOf(p.fsdp_reshard_after_forward, 'fsdp_reshard_after_forward', ['default', 'always', 'never'] as const);
    // "default": reshard after forward except when pipeline parallel (parallelize_fn in torchtitan/models/llama3/infra/parallelize.py)
    d.set('parallel.reshard_after_forward', reshard === 'always' || (reshard === 'default' && pp === 1));
    let micro: number | undefined, accum: number | undefined;
    const local = training.local_batch_size ?? training.batch_size;
    const localBatch =
      local === undefined
        ? undefined
        : int(local, training.local_batch_size !== undefined ? 'local_batch_size' : 'batch_size');
    if (pp > 1) {
      const sched =
        p.pipeline_parallel_schedule === undefined
          ? '1F1B'
          : str(p.pipeline_parallel_schedule, 'pipeline_parallel_schedule');
      const s = SCHEDULES[sched.toLowerCase()];
      if (!s)
        throw new ImportError(
          'pipeline_parallel_schedule',
          `pipeline_parallel_schedule: "${sched}" is not allowed (allowed: 1F1B | GPipe | Interleaved1F1B | LoopedBFS | InterleavedZeroBubble | ZBVZeroBubble | DualPipeV)`,
        );
      d.set('parallel.pp_schedule', s[0]);
      if (s[1] > 1) {
        const perStage =
          p.pipeline_parallel_layers_per_stage === undefined
            ? undefined
            : int(p.pipeline_parallel_layers_per_stage, 'pipeline_parallel_layers_per_stage');
        // the model's pipeline fn (models/llama3/infra/pipeline.py @8a749c618): ceil((layers + 2) / layers_per_stage)
        // model chunks, the embedding and the output weighing a layer each (parallel.pp_split weighted)
        const chunks = perStage && layers ? Math.ceil((layers + 2) / perStage) : s[1] * pp;
        const vpp = chunks / pp;
        if (!Number.isInteger(vpp))
          throw new ImportError(
            'pipeline_parallel_layers_per_stage',
            `${String(layers)} layers with the embedding and the output at ${String(perStage)} a stage make ${chunks} stages, not a multiple of pipeline_parallel_degree ${pp}`,
          );
        d.set('parallel.vpp', vpp);
        if (!perStage) d.note(`${sched}: ${s[1]} virtual stages per rank assumed`);
      }
      if (p.pipeline_parallel_microbatches !== undefined) {
        accum = int(p.pipeline_parallel_microbatches, 'pipeline_parallel_microbatches');
        if (localBatch !== undefined) micro = localBatch / accum;
      } else {
        micro =
          p.pipeline_parallel_microbatch_size === undefined
            ? 1
            : int(p.pipeline_parallel_microbatch_size, 'pipeline_parallel_microbatch_size');
        if (localBatch !== undefined) accum = localBatch / micro;
      }
      if (micro !== undefined && !Number.isInteger(micro))
        throw new ImportError(
          'pipeline_parallel_microbatch_size',
          `the local batch ${localBatch} does not split into pipeline micro-batches of this size`,
        );
      if (accum !== undefined && !Number.isInteger(accum))
        throw new ImportError(
          'pipeline_parallel_microbatch_size',
          `the local batch ${localBatch} is not a multiple of the pipeline micro-batch size ${micro}`,
        );
    } else micro = localBatch;
    if (
      training.global_batch_size !== undefined &&
      int(training.global_batch_size, 'global_batch_size', -1) > 0 &&
      localBatch !== undefined
    ) {
      const dp = replicate * shard;
      if (shard > 0) {
        const steps = int(training.global_batch_size, 'global_batch_size') / (localBatch * dp);
        if (!Number.isInteger(steps))
          throw new ImportError(
            'global_batch_size',
            `global_batch_size is not a multiple of local_batch_size ${localBatch} x data-parallel ${dp}`,
          );
        accum = (accum ?? 1) * steps;
      } else
        d.skip(
          'global_batch_size',
          'gradient accumulation needs the data-parallel size (data_parallel_shard_degree -1); pass --world-size N',
        );
    }
    if (micro !== undefined) d.set('training.micro_batch', micro);
    if (accum !== undefined) d.set('training.grad_accum', accum);
    // async TP (torchtitan parallelize: micro-pipelined all-gather / reduce-scatter matmuls): step time only
    if (par.enable_async_tensor_parallel === true) d.set('parallel.tp_comm_overlap', true);
    for (const k of Object.keys(par)) {
      if (PARALLEL_KEYS.includes(k) || k === 'enable_async_tensor_parallel') continue;
      if (k === 'pipeline_parallel_first_stage_less_layers' || k === 'pipeline_parallel_last_stage_less_layers') {
        // the weights of the embedding and the output in torchtitan's split: 1 is parallel.pp_split weighted's
        if (int(par[k], k) === 1) d.ignore(`[parallelism] ${k}`);
        else d.skip(`[parallelism] ${k}`, `a weight of ${String(par[k])} is not modelled (the split weighs them 1)`);
        continue;
      }
      if (PARALLEL_IGNORED.has(k)) d.ignore(`[parallelism] ${k}`);
      else d.skip(`[parallelism] ${k}`, 'not mapped');
    }

    // [training]
    for (const [k, v] of Object.entries(training)) {
      if (PARALLEL_KEYS.includes(k) || k === 'local_batch_size' || k === 'batch_size' || k === 'global_batch_size')
        continue;
      if (k === 'seq_len') d.set('training.seq_len', int(v, k));
      else if (k === 'mixed_precision_param') d.set('training.dtype', torchDtype(v, k));
      else if (k === 'mixed_precision_reduce') d.set('training.grad_dtype', torchDtype(v, k));
      else if (k === 'compile') {
        if (bool(v, k)) d.set('runtime.torch_compile', true);
      } else if (k === 'enable_cpu_offload') {
        if (bool(v, k)) {
          d.set('parallel.offload_params', 'cpu');
          d.set('parallel.offload_optimizer', 'cpu');
        }
      } else if (k === 'enable_float8_linear') {
        if (bool(v, k)) d.set('training.fp8_linear', true);
      } else if (k === 'data_parallel_degree') {
        // read with [parallelism] above
      } else if (k === 'fp8_linear') {
        // the first releases: "" (off) or "dynamic" (torchtitan/config_manager.py @df2dcc74)
        if (v === true || (typeof v === 'string' && v !== '')) d.set('training.fp8_linear', true);
        else if (v !== false && v !== '')
          throw new ImportError(k, `fp8_linear: must be "" or "dynamic", not ${JSON.stringify(v)}`);
      } else if (
        PARALLEL_IGNORED.has(k) ||
        /^(max_norm|steps|warmup_steps|lr|dataset|dataset_path|data_parallel_type|gc_freq|gc_debug|seed|deterministic|debug_moe_force_load_balance|enable_cpu_offload|mixed_precision_.*)$/.test(
          k,
        )
      )
        d.ignore(`[training] ${k}`);
      else d.skip(`[training] ${k}`, 'not mapped');
    }
    if (training.mixed_precision_param === undefined) d.set('training.dtype', 'bf16'); // job_config default "bfloat16"

    // [activation_checkpoint]
    const ac = section('activation_checkpoint');
    if (t.activation_checkpoint === undefined)
      d.note('no [activation_checkpoint]: torchtitan default mode "selective", selective_ac_option "2"');
    const mode =
      ac.mode === undefined
        ? 'selective'
        : oneOf(ac.mode, 'mode', ['none', 'full', 'selective', 'memory_budget'] as const);
    if (mode === 'selective') {
      const opt = ac.selective_ac_option === undefined ? '2' : String(ac.selective_ac_option);
      if (opt === 'op') d.set('training.recompute', 'per_op');
      else {
        const every = int(opt, 'selective_ac_option');
        d.set('training.recompute', 'full');
        if (every > 1 && layers) {
          d.set('training.recompute_layers', Math.floor(layers / pp / every));
          d.note(
            `selective_ac_option ${every}: every ${ordinal(every)} layer checkpointed = ${Math.floor(layers / pp / every)} of ${layers / pp} layers per stage recomputed`,
          );
        } else if (every > 1)
          d.skip(
            'selective_ac_option',
            `every ${ordinal(every)} layer: needs the model's layer count (set model.preset); counted as full recompute`,
          );
      }
    } else if (mode === 'memory_budget')
      d.skip('[activation_checkpoint] mode', 'memory_budget (automatic) is not modelled; set training.recompute');
    else d.set('training.recompute', mode);
    for (const k of Object.keys(ac))
      if (k !== 'mode' && k !== 'selective_ac_option') d.ignore(`[activation_checkpoint] ${k}`);

    // [compile], [float8], [optimizer]
    const compile = section('compile');
    if (compile.enable !== undefined && bool(compile.enable, '[compile] enable')) {
      const comps =
        compile.components === undefined ? ['model', 'loss'] : names(compile.components, '[compile] components');
      // the model is compiled only when listed (models/llama3/parallelize.py: "model" in compile_config.components)
      if (comps.includes('model')) d.set('runtime.torch_compile', true);
      if (comps.includes('loss')) d.set('training.loss', 'compiled');
    }
    // under TP the train context enters PyTorch loss_parallel() unless disabled (train.py, torchtitan 0cb74355)
    const lossParallel =
      p.disable_loss_parallel === undefined || !bool(p.disable_loss_parallel, 'disable_loss_parallel');
    if (tp > 1 && lossParallel && d.get('training.loss') !== 'compiled') d.set('training.loss', 'loss_parallel');
    if (tp > 1 && !lossParallel)
      d.skip(
        'disable_loss_parallel',
        'the full-vocabulary logits replicated on every TP rank are not modelled (counted over the vocabulary shard)',
      );
    for (const k of Object.keys(compile)) if (k !== 'enable' && k !== 'components') d.ignore(`[compile] ${k}`);
    const f8 = section('float8');
    for (const [k, v] of Object.entries(f8)) {
      if (k === 'enable_fsdp_float8_all_gather') d.set('parallel.fp8_all_gather', bool(v, k));
      else if (k === 'enable_float8_linear') {
        if (bool(v, k)) d.set('training.fp8_linear', true);
      } else d.ignore(`[float8] ${k}`);
    }
    // [quantize.linear.float8] since 8a2686c4 (2025-09; config/job_config.py Quantize): [float8]'s keys moved there
    const quantize = section('quantize');
    for (const [group, kinds] of Object.entries(quantize)) {
      for (const [kind, keys] of Object.entries(obj(kinds, `[quantize.${group}]`))) {
        const where = `[quantize.${group}.${kind}]`;
        for (const [k, v] of Object.entries(obj(keys, where))) {
          if (group === 'linear' && kind === 'float8' && k === 'enable_fsdp_float8_all_gather')
            d.set('parallel.fp8_all_gather', bool(v, k));
          else d.ignore(`${where} ${k}`);
        }
      }
    }
    const opt = section('optimizer');
    for (const [k, v] of Object.entries(opt)) {
      if (k === 'name')
        d.set('training.optimizer', oneOf(v, '[optimizer] name', ['AdamW', 'Adam'] as const).toLowerCase());
      else if (k === 'implementation')
        d.set(
          'training.optimizer_impl',
          oneOf(v, '[optimizer] implementation', ['fused', 'foreach', 'for-loop'] as const).replace('-', '_'),
        );
      else if (k === 'early_step_in_backward') d.set('training.optimizer_in_backward', bool(v, k));
      else d.ignore(`[optimizer] ${k}`);
    }

    for (const [name, v] of Object.entries(t)) {
      if (
        [
          'model',
          'training',
          'parallelism',
          'activation_checkpoint',
          'compile',
          'float8',
          'quantize',
          'optimizer',
          'hf_transformers',
        ].includes(name)
      )
        continue;
      if (name === 'experimental') {
        for (const k of Object.keys(experimental)) if (!PARALLEL_KEYS.includes(k)) d.ignore(`[experimental] ${k}`);
      } else if (IGNORED_SECTIONS.has(name)) d.ignore(`[${name}]`);
      else if (name === 'mx') d.skip('[mx]', 'MXFP8 training is not modelled');
      else d.skip(isObject(v) ? `[${name}]` : name, 'not a known torchtitan section; not applied');
    }
    if (unknownModel) throw unknownModel;
    return d.result();
  });
}
