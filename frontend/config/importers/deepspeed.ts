// DeepSpeed JSON -> config v1. Keys and defaults: https://www.deepspeed.ai/docs/config-json/
// (deepspeed/runtime/config.py, deepspeed/runtime/zero/config.py, offload_config.py).
import { applyUlysses } from './parallel-degrees.js';
import type { Json } from '../../../wasm/llmem.js';
import {
  bool,
  Draft,
  guard,
  ImportError,
  int,
  isAuto,
  isObject,
  num,
  obj,
  oneOf,
  parseJsonText,
  str,
  type ImportResult,
  type Obj,
  torchDtype,
} from './common.js';

const OFFLOAD = ['none', 'cpu', 'nvme'] as const;
// the spellings data_types.grad_accum_dtype is read in
const GRAD_DTYPES = ['fp32', 'float32', 'fp16', 'float16', 'bf16', 'bfloat16'];

// zero_optimization keys mapped one to one (DeepSpeedZeroConfig; the stage3_* keys also go without the prefix).
const ZERO_KEYS: [string[], string][] = [
  [['reduce_bucket_size'], 'parallel.reduce_bucket_size'],
  [['allgather_bucket_size'], 'parallel.allgather_bucket_size'],
  [['stage3_prefetch_bucket_size', 'prefetch_bucket_size'], 'parallel.stage3_prefetch_bucket_size'],
  [['stage3_max_live_parameters', 'max_live_parameters'], 'parallel.stage3_max_live_parameters'],
  [
    ['stage3_param_persistence_threshold', 'param_persistence_threshold'],
    'parallel.stage3_param_persistence_threshold',
  ],
];
const ZERO_IGNORED = new Set([
  'contiguous_gradients',
  'reduce_scatter',
  'allgather_partitions',
  'stage3_gather_16bit_weights_on_model_save',
  'stage3_gather_fp16_weights_on_model_save',
  'gather_16bit_weights_on_model_save',
  'round_robin_gradients',
  'elastic_checkpoint',
  'load_from_fp32_weights',
  'ignore_unused_parameters',
  'legacy_stage1',
  'use_multi_rank_bucket_allreduce',
  'memory_efficient_linear',
  'log_trace_cache_warnings',
  'cpu_offload_use_pin_memory',
]);
// A file with more unknown keys than this is not a DeepSpeed config: stop at once rather than list them all.
const MAX_UNKNOWN_KEYS = 1000;
// Top-level keys with no effect on per-GPU memory (logging, schedules, clipping, I/O tuning).
const IGNORED = new Set([
  // a top-level section nothing reads: runtime/config.py get_eigenvalue_config @edaa7221 reads quantize_training's
  'eigenvalue',
  'scheduler',
  'gradient_clipping',
  'steps_per_print',
  'wall_clock_breakdown',
  'prescale_gradients',
  'gradient_predivide_factor',
  'zero_allow_untested_optimizer',
  'zero_force_ds_cpu_optimizer',
  'flops_profiler',
  'tensorboard',
  'wandb',
  'csv_monitor',
  'comet',
  'comms_logger',
  'checkpoint',
  'aio',
  'elasticity',
  'dump_state',
  'memory_breakdown',
  'seed',
  'dataloader_drop_last',
  'disable_allgather',
  'timers',
  'monitor_config',
  'nebula',
  'seq_parallel_communication_data_type', // the dtype of Ulysses' all-to-all (deepspeed/runtime/config.py)
  // Found in real files (DeepSpeedExamples, LLaMA-Factory) but read by no DeepSpeed code (deepspeedai/DeepSpeed@edaa7221:
  // DeepSpeedConfig reads named keys only; its comms_config attribute is built from "comms_logger" in
  // deepspeed/comm/config.py; the GPUs are chosen by the launcher's --include or CUDA_VISIBLE_DEVICES).
  'comms_config',
  'cuda_visible_devices',
]);
// Top-level keys that change memory but have no config v1 key.
const NOT_EXPRESSIBLE: Record<string, string> = {
  activation_checkpointing:
    'DeepSpeed activation checkpointing applies only to models that call deepspeed.checkpointing (Megatron-DeepSpeed); set training.recompute yourself',
  communication_data_type: 'the reduction dtype of gradients is not modelled separately',
  amp: 'apex AMP is not modelled; set training.dtype',

  torch_autocast:
    'torch autocast over fp32 parameters (no fp16/bf16 section on) is not mapped: fp32 parameters, gradients and optimizer states with 16-bit compute; set training.dtype (and master_weights) yourself',
  sparse_attention: 'sparse attention is not modelled',
  pipeline: 'DeepSpeed pipeline-engine settings are not mapped; set parallel.pp',
  compression_training: 'compression training is not modelled',
  data_efficiency: 'curriculum / data routing is not modelled',
  curriculum_learning: 'curriculum learning (shorter sequences early) is not modelled; training.seq_len is the longest',
  sparse_gradients: 'sparse embedding gradients are not modelled',
  fp8: 'DeepSpeed fp8 settings are not mapped; set training.fp8_linear',
};

// Sections DeepSpeed reads with an "enabled" switch (deepspeedai/DeepSpeed@edaa7221) and what each does when on.
// Off (or, for compile, deepcompile false) they change nothing: read and ignored.
const SWITCHED: Record<string, { on: (v: Obj) => boolean; effect: string | null }> = {
  // deepspeed/autotuning/config.py DeepSpeedAutotuningConfig: the launcher's `--autotuning` runs trials over
  // micro-batch sizes and ZeRO stages and writes ds_config_optimal.json; a training run reads nothing from it
  autotuning: {
    on: (v) => v.enabled === true,
    effect:
      'the autotuner (deepspeed --autotuning) picks the micro-batch size and ZeRO stage by trial runs; import the ds_config_optimal.json it writes; not applied',
  },
  // deepspeed/compile/config.py CompileConfig: deepcompile (default false) rewrites the graph once engine.compile()
  // is called: ZeRO-1/3 prefetch and reshard passes, autosp / autotp, activation freeing or offload
  compile: {
    on: (v) => v.deepcompile === true,
    effect:
      'DeepCompile (compile.deepcompile) schedules the gathers, frees or offloads activations by its own passes once engine.compile() is called; not modelled; not applied',
  },
  // deepspeed/runtime/config.py get_pld_enabled / runtime/progressive_layer_drop.py: layers are skipped at random
  // with a keep probability falling to theta; the model code decides (BingBert), the full depth is counted
  progressive_layer_drop: {
    on: (v) => v.enabled === true,
    effect:
      'progressive layer drop skips layers at random (keep probability falling to theta); activations are counted for every layer; not applied',
  },
  // deepspeed/runtime/quantize.py Quantizer.quantize (MoQ): p.data = compute_quantization(p.data, ...), the
  // quantized values written back into the same 16-bit parameters: no change in what is held
  quantize_training: { on: () => false, effect: null },
};

/** One of SWITCHED: ignored when off or without memory effect, else reported with what it does. */
function switchedSection(d: Draft, key: keyof typeof SWITCHED | string, v: Json, at: string): void {
  const s = SWITCHED[key];
  if (v === null || !isObject(v) || !s.on(v) || s.effect === null) d.ignore(at);
  else d.skip(at, s.effect);
}

/**
 * torch_autocast (deepspeed/runtime/config.py get_torch_autocast_enabled, default false; engine.py @edaa7221).
 * The module keeps the dtype fp16 / bf16 give it (engine.py get_data_types, _mixed_precision_dtypes); autocast
 * only casts the inputs of the linears. With fp16 or bf16 on, nothing changes in what is held; alone, the
 * parameters, gradients and optimizer stay fp32 under 16-bit compute, which config v1 does not express for ZeRO
 * (stage 3 then uses the fp32 partition as the master, stage3.py _create_fp32_partitions).
 */
function torchAutocast(d: Draft, v: Json, at: string, dtypeSeen: boolean): void {
  if (v === null) return;
  const on = obj(v, at).enabled;
  if (on === undefined || on === null || on === false) {
    d.ignore(at);
    return;
  }
  if (bool(on, `${at}.enabled`) && dtypeSeen && d.get('training.dtype') !== undefined) {
    d.ignore(at);
    d.note(
      `${at}: the model stays ${String(d.get('training.dtype'))} as fp16/bf16 set it; autocast only casts the linears' inputs`,
    );
    return;
  }
  d.skip(at, NOT_EXPRESSIBLE.torch_autocast);
}

/** Import a DeepSpeed config file; `worldSize` is the data-parallel size train_batch_size is divided by. */
export function importDeepSpeed(text: string, worldSize?: number): ImportResult {
  return guard(() => {
    const d = new Draft();
    d.stack('deepspeed');
    if (worldSize !== undefined) d.set('parallel.gpus', worldSize);
    applyDeepSpeed(d, parseJsonText(text, 'DeepSpeed config'), '', worldSize);
    return d.result();
  });
}

/** Apply a DeepSpeed config object to a draft; `prefix` names where it sits in the source (e.g. "deepspeed.");
 * `world`, the data-parallel size, derives what train_batch_size leaves out. */
export function applyDeepSpeed(d: Draft, ds: Obj, prefix: string, world?: number): void {
  const k = (key: string) => prefix + key;
  d.set('parallel.engine', 'deepspeed');
  let micro: number | undefined, accum: number | undefined, total: number | undefined;
  let dtypeSeen = false;
  let autocast: Json | undefined; // torch_autocast, read once fp16 / bf16 are known (the keys come in any order)
  let known = 0,
    unknown = 0;
  let firstUnknown: string | undefined;
  for (const key in ds) {
    const v = ds[key];
    switch (key) {
      case 'train_micro_batch_size_per_gpu':
        if (isAuto(v)) d.auto(k(key), 'training.micro_batch');
        else d.set('training.micro_batch', (micro = int(v, k(key))));
        break;
      case 'gradient_accumulation_steps':
        if (isAuto(v)) d.auto(k(key), 'training.grad_accum');
        else d.set('training.grad_accum', (accum = int(v, k(key))));
        break;
      case 'train_batch_size':
        // "auto": the launcher's; the world size, when given, already set parallel.gpus
        if (isAuto(v)) {
          if (world === undefined) d.auto(k(key), 'parallel.gpus');
          else d.note(`${k(key)} is "auto": the launcher's batch; parallel.gpus is the world size given, ${world}`);
        } else total = int(v, k(key));
        break;
      case 'fp16':
      case 'bf16':
      case 'bfloat16':
        if (precision(d, key === 'fp16' ? 'fp16' : 'bf16', v, k(key))) dtypeSeen = true;
        break;
      case 'zero_optimization':
        zero(d, v, k(key));
        break;
      case 'optimizer':
        optimizer(d, v, k(key));
        break;
      case 'data_types': {
        for (const [dk, dv] of Object.entries(obj(v, k(key)))) {
          if (dk === 'grad_accum_dtype' && dv !== null)
            d.set('training.grad_dtype', torchDtype(dv, k(`${key}.${dk}`), GRAD_DTYPES));
          else d.skip(k(`${key}.${dk}`), 'not mapped');
        }
        break;
      }
      case 'tensor_parallel':
        tensorParallel(d, v, k(key));
        break;
      case 'sequence_parallel_size': // read with the batch sizes below (sequenceParallel)
        break;
      case 'zero_optimization_stage': // legacy spelling
        d.set('parallel.zero_stage', int(v, k(key), 0));
        break;
      case 'torch_autocast':
        autocast = v;
        break;
      case 'autotuning':
      case 'compile':
      case 'progressive_layer_drop':
      case 'quantize_training':
        switchedSection(d, key, v, k(key));
        break;
      default:
        if (IGNORED.has(key) || key.startsWith('_comment')) d.ignore(k(key));
        else {
          if (!(key in NOT_EXPRESSIBLE) && ++unknown > MAX_UNKNOWN_KEYS)
            throw new ImportError(
              k(key),
              `DeepSpeed config: more than ${MAX_UNKNOWN_KEYS} keys that are not DeepSpeed settings (the first: "${firstUnknown}"); is this a DeepSpeed config?`,
            );
          if (!(key in NOT_EXPRESSIBLE)) firstUnknown ??= k(key);
          d.skip(k(key), NOT_EXPRESSIBLE[key] ?? 'not a known DeepSpeed key; not applied');
          continue;
        }
    }
    known++;
  }
  if (!prefix && known === 0 && firstUnknown !== undefined)
    throw new ImportError(
      firstUnknown,
      `DeepSpeed config: none of its keys is a DeepSpeed setting (the first: "${firstUnknown}")`,
    );
  if (autocast !== undefined) torchAutocast(d, autocast, k('torch_autocast'), dtypeSeen);
  if (!dtypeSeen && d.get('training.dtype') === undefined && !prefix) {
    d.set('training.dtype', 'fp32');
    d.note('no fp16/bf16 section enabled: DeepSpeed trains in fp32 (training.dtype fp32)');
  }
  if (d.get('parallel.zero_stage') === undefined) {
    d.set('parallel.zero_stage', 0);
    d.note('no zero_optimization.stage: ZeRO stage 0 (DeepSpeed default)');
  }
  const onebit = isObject(ds.optimizer) && typeof ds.optimizer.type === 'string' ? ds.optimizer.type : undefined;
  if (onebit && ONEBIT[onebit.toLowerCase()] && Number(d.get('parallel.zero_stage')) > 0)
    // engine.py _configure_basic_optimizer (deepspeedai/DeepSpeed@edaa7221): assert not self.zero_optimization()
    throw new ImportError(
      k('optimizer.type'),
      `${k('optimizer.type')}: ${onebit} with ZeRO stage ${String(d.get('parallel.zero_stage'))}: DeepSpeed asserts the 1-bit optimizers (1-bit Adam, 0/1 Adam, 1-bit LAMB) are not used with ZeRO`,
    );
  // train_batch_size = micro * grad_accum * data-parallel size (DeepSpeed checks this identity), the data-parallel size
  // being the world size over sequence_parallel_size (deepspeed/runtime/config.py @edaa7221 DeepSpeedConfig.__init__:
  // self.world_size = dist.get_world_size() / config["sequence_parallel_size"])
  const sp = sequenceParallel(ds, k('sequence_parallel_size'));
  if (sp > 1) {
    // DeepSpeed-Ulysses (deepspeed/sequence/layer.py DistributedAttention); ZeRO partitions over every rank, the
    // sequence-data-parallel group (runtime/engine.py seq_data_parallel_group): parallel.shard_with_cp
    applyUlysses(d, k('sequence_parallel_size'), sp);
    d.note(
      `${k('sequence_parallel_size')} ${sp}: DeepSpeed-Ulysses, the sequence split over ${sp} ranks and the heads traded by all-to-all (parallel.cp, parallel.cp_all_to_all)`,
    );
  }
  if (sp > 1 && world !== undefined && world % sp !== 0)
    throw new ImportError(
      k('sequence_parallel_size'),
      `${k('sequence_parallel_size')}: ${sp} does not divide the world size ${world} (DeepSpeed's data-parallel size is their quotient)`,
    );
  if (total !== undefined && world !== undefined)
    batchFromWorld(d, k('train_batch_size'), total, world / sp, micro, accum, sp);
  else if (total !== undefined) {
    if (micro !== undefined && accum !== undefined && total % (micro * accum) === 0) {
      const gpus = (total / (micro * accum)) * sp;
      if (!Number.isFinite(gpus))
        throw new ImportError(
          k('train_batch_size'),
          `${k('train_batch_size')}: ${total} / (micro ${micro} * grad_accum ${accum}) x sequence_parallel_size ${sp} is not a finite number of GPUs`,
        );
      d.set('parallel.gpus', gpus);
      d.note(
        `parallel.gpus ${gpus} = train_batch_size ${total} / (micro ${micro} * grad_accum ${accum}) (data-parallel size)${sp > 1 ? ` x sequence_parallel_size ${sp}` : ''}`,
      );
    } else if ((micro === undefined) !== (accum === undefined) && total === (micro ?? accum)) {
      // train_batch_size = micro x grad_accum x world size with each factor >= 1 (_batch_assertion,
      // deepspeed/runtime/config.py @edaa7221): equal to the one given, the other two are 1
      d.set('parallel.gpus', sp);
      d.set(micro === undefined ? 'training.micro_batch' : 'training.grad_accum', 1);
      d.note(
        `parallel.gpus ${sp} and ${micro === undefined ? 'micro-batch' : 'grad_accum'} 1: train_batch_size ${total} equals the ${micro === undefined ? 'gradient_accumulation_steps' : 'train_micro_batch_size_per_gpu'}, so DeepSpeed runs it on one data-parallel rank`,
      );
    } else if (micro !== undefined && accum === undefined) {
      d.skip(
        k('train_batch_size'),
        `grad_accum = ${total} / (${micro} * ${sp > 1 ? `data-parallel size (world size / sequence_parallel_size ${sp})` : 'world size'}) needs the world size; set training.grad_accum`,
      );
    } else if (micro === undefined && accum !== undefined) {
      d.skip(
        k('train_batch_size'),
        `micro-batch = ${total} / (${accum} * ${sp > 1 ? `data-parallel size (world size / sequence_parallel_size ${sp})` : 'world size'}) needs the world size; set training.micro_batch`,
      );
    } else if (micro === undefined)
      d.skip(
        k('train_batch_size'),
        `micro-batch * grad_accum = ${total} / ${sp > 1 ? `data-parallel size (world size / sequence_parallel_size ${sp})` : 'world size'} needs the world size; set training.micro_batch and grad_accum`,
      );
    else d.skip(k('train_batch_size'), 'not consistent with the micro-batch and accumulation given; not applied');
  } else if ((micro !== undefined || accum !== undefined) && d.get('parallel.gpus') === undefined)
    d.note('no train_batch_size: parallel.gpus left at llmem default (the world size is not in the file)');
}

/** sequence_parallel_size (DeepSpeed-Ulysses; 1 when absent): a whole number >= 1. */
function sequenceParallel(ds: Obj, key: string): number {
  const v = ds.sequence_parallel_size;
  if (v === undefined || v === null) return 1;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new ImportError(key, `${key}: must be a whole number >= 1, not ${JSON.stringify(v)}`);
  return v;
}

/**
 * train_batch_size with the world size known (llmem import deepspeed --world-size): the
 * missing micro-batch or accumulation as DeepSpeed derives it (deepspeed/runtime/config.py _set_batch_related_parameters
 * @edaa7221; only train_batch_size: accumulation 1), else the identity DeepSpeed asserts (_batch_assertion).
 */
function batchFromWorld(
  d: Draft,
  key: string,
  total: number,
  dp: number,
  micro?: number,
  accum?: number,
  sp = 1,
): void {
  const size =
    sp > 1
      ? `data-parallel size ${dp} (world size ${dp * sp} / sequence_parallel_size ${sp})`
      : `data-parallel size ${dp} (the world size)`;
  const need = (what: string, of: number) => {
    if (of <= 0 || total % of !== 0)
      throw new ImportError(
        key,
        `${key}: ${total} is not a multiple of ${what} (${of})${sp > 1 ? `; the world size ${dp * sp} over sequence_parallel_size ${sp}` : ''}`,
      );
    return total / of;
  };
  if (micro === undefined && accum === undefined) {
    d.set('training.grad_accum', 1);
    d.set('training.micro_batch', need('the data-parallel size', dp));
  } else if (micro === undefined) d.set('training.micro_batch', need('grad_accum x data-parallel size', accum! * dp));
  else if (accum === undefined) d.set('training.grad_accum', need('micro-batch x data-parallel size', micro * dp));
  else if (micro * accum * dp !== total)
    throw new ImportError(
      key,
      `${key}: ${total} != micro ${micro} x grad_accum ${accum} x ${size} (DeepSpeed asserts they are equal)`,
    );
  d.note(`${key} ${total} with ${size}: micro-batch x grad_accum x ${dp}`);
}

function precision(d: Draft, dtype: 'fp16' | 'bf16', v: Json, key: string): boolean {
  let on = false;
  for (const [pk, pv] of Object.entries(obj(v, key))) {
    if (pk === 'enabled') {
      if (isAuto(pv)) {
        d.auto(`${key}.enabled`, 'training.dtype');
        continue;
      }
      on = bool(pv, `${key}.enabled`);
      if (on) d.set('training.dtype', dtype);
    } else if (dtype === 'bf16' && pk === 'bf16_master_weights_and_grads') {
      // DeepSpeed PR #7700 (2025-12): the partitioned master copy and the gradients in bf16 instead of fp32
      if (bool(pv, `${key}.${pk}`)) {
        d.set('training.master_dtype', 'bf16');
        d.set('training.grad_dtype', 'bf16');
      }
    } else if (dtype === 'bf16' && pk === 'bf16_optimizer_states') {
      if (bool(pv, `${key}.${pk}`)) d.set('training.optimizer_dtype', 'bf16'); // Adam's moments in bf16 (#7700)
    } else if (pk === 'fp16_master_weights_and_grads' && pv === true)
      d.skip(`${key}.${pk}`, 'fp16 master weights and gradients are not modelled (master copy counted in fp32)');
    else d.ignore(`${key}.${pk}`); // loss scaling, hysteresis, immediate_grad_update: no memory effect
  }
  return on || (isObject(v) && v.enabled === 'auto');
}

function offload(d: Draft, v: Json, key: string, path: string): void {
  if (v === null) return;
  for (const [ok, ov] of Object.entries(obj(v, key))) {
    if (ok === 'device') d.set(path, oneOf(ov ?? 'none', `${key}.device`, OFFLOAD));
    else if (ok === 'ratio' && ov !== 1 && ov !== 1.0)
      d.skip(`${key}.ratio`, `partial offload (${String(ov)}) is not modelled; counted as full offload`);
    else d.ignore(`${key}.${ok}`); // pin_memory, nvme_path, buffer_count, buffer_size, fast_init, max_in_cpu, pipeline_*
  }
}

function zero(d: Draft, v: Json, key: string): void {
  for (const [zk, zv] of Object.entries(obj(v, key))) {
    const at = `${key}.${zk}`;
    const mapped = ZERO_KEYS.find(([names]) => names.includes(zk));
    if (zk === 'stage') {
      const stage = int(zv, at, 0);
      if (stage > 3) throw new ImportError(at, `${at}: must be 0, 1, 2 or 3, not ${stage}`);
      d.set('parallel.zero_stage', stage);
    } else if (zk === 'offload_optimizer') offload(d, zv, at, 'parallel.offload_optimizer');
    else if (zk === 'offload_param') offload(d, zv, at, 'parallel.offload_params');
    else if (zk === 'cpu_offload') {
      if (bool(zv, at)) d.set('parallel.offload_optimizer', 'cpu'); // legacy spelling of offload_optimizer.device cpu
    } else if (zk === 'cpu_offload_params' || zk === 'cpu_offload_param') {
      if (bool(zv, at)) d.set('parallel.offload_params', 'cpu');
    } else if (zk === 'overlap_comm') {
      if (isAuto(zv)) d.auto(at, 'parallel.overlap_comm');
      else d.set('parallel.overlap_comm', bool(zv, at));
    } else if (mapped) {
      if (isAuto(zv)) d.auto(at, mapped[1]);
      else
        d.set(
          mapped[1],
          num(zv, at, zk.includes('persistence') || zk.includes('prefetch') || zk.includes('live') ? 0 : 1),
        );
    } else if (zk === 'zenflow' && zv === null) {
      d.ignore(at);
    } else if ((zk === 'stage3_max_reuse_distance' || zk === 'max_reuse_distance') && Number(zv) === 0) {
      d.ignore(at); // 0: no gathered parameter is kept for re-use
    } else if (ZERO_IGNORED.has(zk)) {
      if (zk === 'contiguous_gradients' && zv === false)
        d.skip(at, 'non-contiguous gradients are not modelled (the contiguous buffer is)');
      else d.ignore(at);
    } else
      d.skip(
        at,
        zk === 'sub_group_size'
          ? 'ZeRO-3 steps the optimizer one sub-group of this many elements at a time; the per-sub-group buffers are not modelled; not applied'
          : zk === 'zenflow'
            ? // deepspeed/runtime/zenflow/zenflow_config.py ZenFlowConfig @edaa7221: the top-k gradient columns
              // (topk_ratio) are stepped on the GPU, with their optimizer states there, the rest on the CPU
              'ZenFlow keeps the optimizer states of the top-k gradient columns (topk_ratio) on the GPU and steps the rest on the CPU; those GPU states and buffers are not modelled (counted as plain offload_optimizer); not applied'
            : zk === 'stage3_max_reuse_distance' || zk === 'max_reuse_distance'
              ? 'keeping gathered parameters for re-use is not modelled; not applied'
              : zk.startsWith('zero_') || zk.startsWith('mics')
                ? 'ZeRO++ / MiCS partitioning is not modelled; not applied'
                : 'not mapped; not applied',
      );
  }
  const stage = d.get('parallel.zero_stage');
  if (d.get('parallel.offload_params') !== undefined && d.get('parallel.offload_params') !== 'none' && stage !== 3) {
    d.note(`offload_param needs ZeRO-3 (stage is ${String(stage ?? 0)}); DeepSpeed ignores it otherwise`);
    d.set('parallel.offload_params', 'none');
  }
}

/**
 * tensor_parallel (AutoTP training, deepspeed/runtime/tensor_parallel/config.py TPTrainingConfig,
 * deepspeedai/DeepSpeed@edaa7221): autotp_size splits the attention and MLP linears over that
 * many ranks (no sequence parallelism), which the core does not model with the deepspeed engine.
 */
function tensorParallel(d: Draft, v: Json, key: string): void {
  for (const [tk, tv] of Object.entries(obj(v, key))) {
    const at = `${key}.${tk}`;
    if (tk === 'autotp_size') {
      const size = int(tv, at, 0);
      if (size > 1)
        d.skip(
          at,
          `${size}: AutoTP splits the attention and MLP linears over ${size} ranks; llmem models tensor parallelism with the fsdp2 and Megatron engines, not with deepspeed; not applied`,
        );
    } else if (tk === 'partition_config' && tv !== null)
      d.skip(
        at,
        'custom AutoTP partition rules are not modelled (llmem splits every attention and MLP linear); not applied',
      );
    else if (tk === 'keep_module_on_host' && tv === true)
      d.skip(at, 'checkpoints kept on the host while loading: a load-time effect, not modelled; not applied');
    else if (tk === 'tensor_parallel' || tk === 'tp')
      d.skip(at, 'not mapped (autotp_size sets the degree); not applied');
    else d.ignore(at); // dtype, tp_overlap_comm, preset_model, injection_policy_tuple: the split or its kernels, not its size
  }
}

// The 1-bit optimizers (deepspeed/runtime/fp16/onebit/{adam,zoadam,lamb}.py @edaa7221) keep, beside Adam's
// exp_avg and exp_avg_sq, fp32 error-feedback buffers for the compressed all-reduce: worker_error (one element per
// parameter) and server_error (1 / world size of it); 0/1 Adam adds momentum_accumulator, 1-bit LAMB exp_avg_sq_fresh.
const ONEBIT: Record<string, { name: string; extra: string }> = {
  onebitadam: { name: '1-bit Adam', extra: 'worker_error (1 per parameter) and server_error (1 / world size)' },
  zerooneadam: {
    name: '0/1 Adam',
    extra: 'momentum_accumulator and worker_error (1 each per parameter) and server_error (1 / world size)',
  },
  onebitlamb: {
    name: '1-bit LAMB',
    extra: 'exp_avg_sq_fresh and worker_error (1 each per parameter) and server_error (1 / world size)',
  },
};

// DeepSpeed optimizer "type" names (deepspeed/runtime/config.py *_OPTIMIZER, engine.py _configure_basic_optimizer
// @edaa7221): Adam, AdamW, Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Lion, Adagrad, MuAdam, MuAdamW, MuSGD, Muon;
// any other name is getattr(torch.optim, type) (SGD, ...).
function optimizer(d: Draft, v: Json, key: string): void {
  const o = obj(v, key);
  const params = isObject(o.params) ? o.params : {};
  for (const okey of Object.keys(o))
    if (okey === 'params') d.ignore(`${key}.params`);
    else if (okey !== 'type') d.skip(`${key}.${okey}`, 'not mapped');
  if (o.type === undefined || o.type === null) return;
  const type = str(o.type, `${key}.type`).toLowerCase();
  // torch.optim.SGD / mup MuSGD keep a momentum buffer only with momentum != 0 (torch default 0)
  const momentum = typeof params.momentum === 'number' && params.momentum !== 0;
  if (type === 'adamw' || type === 'adam' || type === 'fusedadam' || type === 'cpuadam') {
    // effective_adam_w_mode = type is AdamW or params.adam_w_mode (default true)
    d.set('training.optimizer', type === 'adam' && params.adam_w_mode === false ? 'adam' : 'adamw');
    // params.torch_adam: torch.optim.Adam / AdamW instead of FusedAdam (runtime/engine.py _configure_basic_optimizer
    // @edaa7221), its default implementation on CUDA the foreach one
    // DeepSpeed's own FusedAdam otherwise (a multi-tensor kernel, no temporaries; on the host, DeepSpeedCPUAdam)
    if (params.torch_adam !== true) d.set('training.optimizer_impl', 'fused');
    else if (type === 'adam' || type === 'adamw') {
      d.set('training.optimizer_impl', 'foreach');
      d.note(
        `${key}.params.torch_adam: torch.optim's ${type === 'adam' && params.adam_w_mode === false ? 'Adam' : 'AdamW'} (foreach), not FusedAdam`,
      );
    }
  } else if (type === 'muadam' || type === 'muadamw') d.set('training.optimizer', type === 'muadam' ? 'adam' : 'adamw');
  else if (type === 'lion') d.set('training.optimizer', 'lion');
  else if (type === 'muon')
    d.set('training.optimizer', 'muon'); // MuonWithAuxAdam: Adam for the use_muon=False ones
  else if (type === 'lamb') {
    d.set('training.optimizer', 'adamw'); // FusedLamb: exp_avg, exp_avg_sq
    d.note(`${key}.type ${String(o.type)}: FusedLamb's two fp32 states per parameter, counted as AdamW`);
  } else if (ONEBIT[type]) {
    d.set('training.optimizer', 'adamw');
    d.skip(
      `${key}.type`,
      `${String(o.type)}: Adam's two fp32 states are counted (AdamW); ${ONEBIT[type].name}'s fp32 ${ONEBIT[type].extra} are not`,
    );
  } else if (type === 'adagrad') {
    d.set('training.optimizer', 'sgd_momentum');
    d.note(`${key}.type Adagrad: counted as one fp32 state per parameter (sgd_momentum)`);
  } else if (type === 'sgd' || type === 'musgd') {
    d.set('training.optimizer', momentum ? 'sgd_momentum' : 'sgd');
    if (!momentum) d.note(`${key}.type ${String(o.type)} without momentum: no optimizer state (torch.optim.SGD)`);
  } else d.skip(`${key}.type`, `optimizer ${String(o.type)} is not mapped; training.optimizer left at llmem default`);
}
