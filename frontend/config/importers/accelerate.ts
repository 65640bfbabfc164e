// accelerate config YAML (`accelerate config` / default_config.yaml) -> config v1.
// Keys: https://huggingface.co/docs/accelerate/usage_guides/fsdp and
// https://huggingface.co/docs/accelerate/package_reference/utilities (FullyShardedDataParallelPlugin,
// DeepSpeedPlugin, MegatronLMPlugin); FSDP strategies: torch.distributed.fsdp.ShardingStrategy.
import {
  agreeWorldSize,
  bool,
  Draft,
  guard,
  ImportError,
  int,
  isAuto,
  obj,
  oneOf,
  parseYamlText,
  str,
  type ImportResult,
  type Obj,
} from './common.js';
import type { Json } from '../../../wasm/llmem.js';
import { applyDeepSpeedRef, type DeepSpeedFile, reportUnreadFile } from './deepspeed-ref.js';
import { applyDegree, applyUlysses } from './parallel-degrees.js';

const STRATEGIES = ['full_shard', 'shard_grad_op', 'no_shard', 'hybrid_shard', 'hybrid_shard_zero2'] as const;
// Read and judged to have no effect on per-GPU memory.
const FSDP_IGNORED = new Set([
  'auto_wrap_policy',
  'transformer_layer_cls_to_wrap',
  'state_dict_type',
  'sync_module_states',
  'use_orig_params',
  'cpu_ram_efficient_loading',
  'limit_all_gathers',
  'xla',
  'xla_fsdp_grad_ckpt',
  'xla_fsdp_v2',
  'xla_fsdp_settings',
  'activation_cpu_offload',
  'cpu_offload_pin_memory', // pinned or pageable host memory: the GPU side is the same
  'final_state_dict_type',
]);
const TOP_IGNORED = new Set([
  'compute_environment',
  'debug',
  'machine_rank',
  'main_training_function',
  'rdzv_backend',
  'same_network',
  'tpu_env',
  'tpu_use_cluster',
  'tpu_use_sudo',
  'tpu_name',
  'tpu_zone',
  'main_process_ip',
  'main_process_port',
  'gpu_ids',
  'enable_cpu_affinity',
  'downcast_bf16',
  'num_cpu_threads_per_process',
  'commands',
  'command_file',
  'ipex_config',
  'mpirun_config',
]);

/** Import an accelerate config file; `worldSize`, where given, must agree with num_processes. */
export function importAccelerate(text: string, also?: string, worldSize?: number): ImportResult {
  return guard(() => {
    const d = new Draft();
    d.stack('accelerate');
    const file: DeepSpeedFile = { text: also, read: false };
    let dsFile: string | undefined;
    const y = parseYamlText(text, 'accelerate config');
    const type =
      y.distributed_type === undefined
        ? 'NO'
        : oneOf(y.distributed_type, 'distributed_type', [
            'NO',
            'MULTI_GPU',
            'FSDP',
            'DEEPSPEED',
            'MEGATRON_LM',
            'MULTI_CPU',
            'XLA',
            'MULTI_XPU',
            'MULTI_NPU',
            'MULTI_MLU',
            'MULTI_MUSA',
            'MULTI_HPU',
            'MULTI_SDAA',
            'TPU',
          ] as const);
    const engine = { NO: 'single', MULTI_GPU: 'ddp', DEEPSPEED: 'deepspeed', MEGATRON_LM: 'megatron' }[type as string];
    if (engine) d.set('parallel.engine', engine);
    else if (type !== 'FSDP') d.skip('distributed_type', `${type} is not a GPU training engine llmem models`);
    for (const [key, v] of Object.entries(y)) {
      switch (key) {
        case 'distributed_type':
          break;
        case 'num_processes': {
          const n = int(v, key);
          agreeWorldSize(key, n, worldSize, 'the file says num_processes');
          d.set('parallel.gpus', n);
          break;
        }
        case 'num_machines':
          break; // with num_processes below
        case 'mixed_precision':
          mixedPrecision(d, v, key);
          break;
        case 'fsdp_config':
          if (type === 'FSDP') applyFsdpConfig(d, obj(v, key), `${key}.`);
          else d.ignore(key);
          break;
        case 'deepspeed_config':
          if (type === 'DEEPSPEED') dsFile = deepspeedPlugin(d, obj(v, key), `${key}.`);
          else d.ignore(key);
          break;
        case 'megatron_lm_config':
          if (type === 'MEGATRON_LM') megatronPlugin(d, obj(v, key), `${key}.`);
          else d.ignore(key);
          break;
        case 'parallelism_config':
          break; // below, once the engine is known
        case 'dynamo_config': {
          const backend = obj(v, key).dynamo_backend;
          if (typeof backend === 'string' && backend.toUpperCase() !== 'NO') d.set('runtime.torch_compile', true);
          d.ignore(key);
          break;
        }
        case 'fp16': // the older spelling of mixed_precision fp16: with it below
          if (y.mixed_precision !== undefined) d.ignore(key);
          break;
        case 'dynamo_backend': // the older spelling of dynamo_config.dynamo_backend
          if (typeof v === 'string' && v.toUpperCase() !== 'NO') d.set('runtime.torch_compile', true);
          else d.ignore(key);
          break;
        case 'use_cpu':
          if (bool(v, key)) d.skip(key, 'CPU training is not modelled');
          break;
        case 'fp8_config':
          d.skip(key, 'fp8 recipe options are not mapped (mixed_precision fp8 sets training.fp8_linear)');
          break;
        default:
          if (TOP_IGNORED.has(key)) d.ignore(key);
          else d.skip(key, 'not a known accelerate key; not applied');
      }
    }
    if (type === 'FSDP' && y.fsdp_config === undefined) applyFsdpConfig(d, {}, 'fsdp_config.');
    if (y.parallelism_config !== undefined && y.parallelism_config !== null)
      parallelism(d, obj(y.parallelism_config, 'parallelism_config'), 'parallelism_config.');
    const gpus = d.get('parallel.gpus');
    if (y.num_machines !== undefined) {
      const machines = int(y.num_machines, 'num_machines');
      if (typeof gpus === 'number' && gpus % machines === 0) d.set('parallel.gpus_per_node', gpus / machines);
      else d.skip('num_machines', 'num_processes is not a multiple of it; gpus_per_node not set');
    }
    if (type === 'NO') agreeWorldSize('distributed_type', 1, worldSize, 'NO runs one process');
    if (gpus === undefined && worldSize !== undefined) d.set('parallel.gpus', worldSize);
    else if (gpus === undefined) d.note('no num_processes: parallel.gpus left at llmem default (give the world size)');
    if (type === 'NO') d.set('parallel.gpus', 1);
    if (y.mixed_precision === undefined) {
      // absent: "fp16" when the old `fp16: true` key is set, else "no" (huggingface/accelerate@16cb6eb8
      // commands/config/config_args.py process_config, commands/launch.py)
      const fp16 = y.fp16 !== undefined && y.fp16 !== null && bool(y.fp16, 'fp16');
      d.set('training.dtype', fp16 ? 'fp16' : 'fp32');
      d.note(
        fp16
          ? 'mixed_precision absent, fp16 true (the older spelling): fp16 mixed precision'
          : dsFile !== undefined && also !== undefined
            ? 'mixed_precision absent: "no" (accelerate default): fp32 unless the DeepSpeed file enables fp16 or bf16'
            : 'mixed_precision absent: "no" (accelerate default): fp32 training',
      );
    }
    // the DeepSpeed file last: its fp16/bf16 sections and ZeRO settings take precedence (DeepSpeedPlugin hf_ds_config,
    // src/accelerate/utils/dataclasses.py @16cb6eb8: the accelerate-side ZeRO keys are refused beside a config file)
    if (dsFile !== undefined) applyDeepSpeedRef(d, 'deepspeed_config.deepspeed_config_file', dsFile, file);
    reportUnreadFile(d, file);
    return d.result();
  });
}

/** accelerate mixed_precision: no | fp16 | bf16 | fp8 (autocast over fp32 parameters). */
export function mixedPrecision(d: Draft, v: Json, key: string): void {
  const mp = oneOf(v === false ? 'no' : v, key, ['no', 'fp16', 'bf16', 'fp8'] as const); // YAML 1.1 readers turn an unquoted no into false
  d.set('training.dtype', mp === 'no' ? 'fp32' : mp === 'fp8' ? 'bf16' : mp);
  if (mp === 'fp8') {
    d.set('training.fp8_linear', true);
    d.note(`${key} fp8: bf16 compute with fp8 linears (Transformer Engine / torchao)`);
  }
  if (mp === 'no') d.note(`${key} ${String(v)}: fp32 training`);
}

/**
 * FSDP plugin keys, as accelerate writes them (fsdp_ prefix) or as
 * TrainingArguments.fsdp_config holds them (prefix stripped by transformers).
 * `version` comes from the caller when it is known from elsewhere (TrainingArguments.fsdp).
 */
export function applyFsdpConfig(d: Draft, cfg: Obj, prefix: string, strategyFromCaller?: string): void {
  const get = (name: string): [string, Json] | undefined => {
    for (const k of [`fsdp_${name}`, name]) if (cfg[k] !== undefined) return [k, cfg[k]];
    return undefined;
  };
  const version = get('version');
  const v2 = version ? int(version[1], prefix + version[0]) === 2 : false;
  d.set('parallel.engine', v2 ? 'fsdp2' : 'fsdp1');
  if (!version) d.note(`${prefix}fsdp_version absent: FSDP1 (the default)`);
  let strategy = strategyFromCaller;
  const s = get('sharding_strategy');
  const rf = get('reshard_after_forward');
  if (s) strategy = strategyName(s[1], prefix + s[0]);
  if (rf) {
    if (typeof rf[1] === 'boolean' || rf[1] === 'true' || rf[1] === 'false') {
      const on = bool(rf[1], prefix + rf[0]);
      if (v2) d.set('parallel.reshard_after_forward', on);
      else strategy = on ? 'full_shard' : 'shard_grad_op';
    } else strategy = strategyName(rf[1], prefix + rf[0]);
  }
  if (strategy) {
    if (v2 && strategy === 'shard_grad_op') d.set('parallel.reshard_after_forward', false);
    else if (v2 && strategy !== 'full_shard')
      d.skip(`${prefix}sharding strategy`, `${strategy} with FSDP2 is not mapped; full sharding assumed`);
    else if (strategy === 'hybrid_shard_zero2') {
      d.set('parallel.fsdp_strategy', 'hybrid_shard');
      d.note(
        `${prefix}sharding strategy hybrid_shard_zero2: counted as hybrid_shard (parameters kept gathered after forward not modelled)`,
      );
    } else if (!v2) d.set('parallel.fsdp_strategy', strategy);
  }
  for (const [k, v] of Object.entries(cfg)) {
    const name = k.replace(/^fsdp_/, '');
    const at = prefix + k;
    if (['version', 'sharding_strategy', 'reshard_after_forward'].includes(name)) continue;
    if (name === 'offload_params') {
      if (bool(v, at)) {
        d.set('parallel.offload_params', 'cpu');
        d.set('parallel.offload_optimizer', 'cpu');
        d.note(`${at}: FSDP CPU offload moves parameters, gradients and the optimizer step to the host`);
      }
    } else if (name === 'activation_checkpointing') {
      if (bool(v, at)) d.set('training.recompute', 'full');
    } else if (name === 'backward_prefetch' || name === 'backward_prefetch_policy') {
      if (v !== null && String(v).toUpperCase() !== 'BACKWARD_PRE')
        d.skip(at, `${String(v)}: llmem models the default BACKWARD_PRE prefetch`);
      else d.ignore(at);
    } else if (name === 'forward_prefetch') {
      if (v === true) d.skip(at, 'forward prefetch (one more layer gathered in the forward) is not modelled');
      else d.ignore(at);
    } else if (name === 'min_num_params') {
      if (Number(v) > 0) d.skip(at, 'size-based wrapping is not modelled (one FSDP unit per transformer layer)');
      else d.ignore(at);
    } else if (name === 'ignored_modules') {
      if (v !== null && v !== '')
        d.skip(at, 'modules left out of FSDP (whole on every GPU) are not modelled; not applied');
      else d.ignore(at);
    } else if (FSDP_IGNORED.has(name)) d.ignore(at);
    else d.skip(at, 'not mapped');
  }
}

function strategyName(v: Json, key: string): string {
  // accelerate also accepts the ShardingStrategy numbers 1..5.
  if (typeof v === 'number' || /^\d$/.test(String(v)))
    return STRATEGIES[int(v, key) - 1] ?? oneOf(String(v), key, STRATEGIES);
  return oneOf(str(v, key).toLowerCase().replace(/ /g, '_'), key, STRATEGIES);
}

/** The DeepSpeed plugin keys; returns the deepspeed_config_file path, read after the rest. */
function deepspeedPlugin(d: Draft, cfg: Obj, prefix: string): string | undefined {
  let path: string | undefined;
  for (const [k, v] of Object.entries(cfg)) {
    const at = prefix + k;
    if (k === 'zero_stage') d.set('parallel.zero_stage', int(v, at, 0));
    else if (k === 'offload_optimizer_device')
      d.set('parallel.offload_optimizer', oneOf(v, at, ['none', 'cpu', 'nvme'] as const));
    else if (k === 'offload_param_device')
      d.set('parallel.offload_params', oneOf(v, at, ['none', 'cpu', 'nvme'] as const));
    else if (k === 'gradient_accumulation_steps') {
      if (isAuto(v)) d.auto(at, 'training.grad_accum');
      else d.set('training.grad_accum', int(v, at));
    } else if (k === 'zero3_init_flag') d.set('parallel.zero_init', bool(v, at));
    else if (k === 'deepspeed_config_file') {
      if (v !== null && v !== '' && v !== 'none') path = str(v, at);
    } else d.ignore(at); // gradient_clipping, zero3_save_16bit_model, deepspeed_multinode_launcher, ...
  }
  return path;
}

function megatronPlugin(d: Draft, cfg: Obj, prefix: string): void {
  for (const [k, v] of Object.entries(cfg)) {
    const at = prefix + k;
    if (k === 'megatron_lm_tp_degree') d.set('parallel.tp', int(v, at));
    else if (k === 'megatron_lm_pp_degree') d.set('parallel.pp', int(v, at));
    else if (k === 'megatron_lm_num_micro_batches') d.set('training.grad_accum', int(v, at));
    else if (k === 'megatron_lm_sequence_parallelism') d.set('parallel.sequence_parallel', bool(v, at));
    else if (k === 'megatron_lm_recompute_activations') {
      if (bool(v, at)) d.set('training.recompute', 'selective');
    } else if (k === 'megatron_lm_use_distributed_optimizer') d.set('parallel.distributed_optimizer', bool(v, at));
    else d.ignore(at);
  }
}

// ParallelismConfig (src/accelerate/parallelism_config.py @16cb6eb8; the launcher's --parallelism_config_* flags in
// commands/launch.py): dp_replicate, dp_shard, tp, cp (torch: FSDP2's context parallel) and sp (deepspeed: ALST /
// Ulysses, which splits the sequence outside attention as cp does); cp and sp are mutually exclusive.
function parallelism(d: Draft, cfg: Obj, prefix: string): void {
  const n = (k: string) => {
    const v = cfg[`parallelism_config_${k}`];
    return v === undefined || v === null ? 1 : int(v, `${prefix}parallelism_config_${k}`);
  };
  const tpKey = `${prefix}parallelism_config_tp_size`;
  // transformers' tp_plan splits the attention and MLP linears; the activations between them stay whole
  if (n('tp_size') > 1 && applyDegree(d, tpKey, 'parallel.tp', n('tp_size'))) {
    d.set('parallel.sequence_parallel', false);
    d.note(`${tpKey} ${n('tp_size')}: parallel.tp without sequence parallelism (the model's tp_plan)`);
  }
  if (n('cp_size') > 1 && n('sp_size') > 1)
    throw new ImportError(
      `${prefix}parallelism_config_sp_size`,
      `${prefix}parallelism_config_sp_size: context parallelism (cp_size ${n('cp_size')}) and sequence parallelism (sp_size ${n('sp_size')}) are mutually exclusive; set one of them to 1`,
    );
  if (n('cp_size') > 1) applyDegree(d, `${prefix}parallelism_config_cp_size`, 'parallel.cp', n('cp_size'));
  // sp_size: DeepSpeed's Ulysses (ALST) sequence parallelism (src/accelerate/parallelism_config.py sp_backend)
  if (n('sp_size') > 1) applyUlysses(d, `${prefix}parallelism_config_sp_size`, n('sp_size'));
  if (n('dp_replicate_size') > 1 && n('dp_shard_size') > 1) {
    // FSDP shards over the dp_shard_cp mesh dimension (src/accelerate/parallelism_config.py fsdp_dim_names @16cb6eb8)
    d.set('parallel.fsdp_strategy', 'hybrid_shard');
    d.set('parallel.fsdp_shard_size', n('dp_shard_size') * n('cp_size'));
  }
  for (const [k, v] of Object.entries(cfg)) {
    const at = prefix + k;
    if (/^parallelism_config_(tp|cp|sp|dp_replicate|dp_shard)_size$/.test(k)) continue;
    if (k === 'parallelism_config_cp_backend') d.ignore(`${at} ${oneOf(v, at, ['torch'] as const)}`);
    else if (k === 'parallelism_config_sp_backend') d.ignore(`${at} ${oneOf(v, at, ['deepspeed'] as const)}`);
    else if (k === 'parallelism_config_sp_attn_implementation') {
      // DeepSpeedSequenceParallelConfig (utils/dataclasses.py) refuses eager and flex_attention: no kernel left keeps s x s scores
      if (n('sp_size') > 1) d.set('training.attention', 'flash');
      else d.ignore(at);
    } else if (k === 'parallelism_config_cp_comm_strategy' && n('cp_size') > 1)
      d.skip(at, `${String(v)}: the K/V exchange of context parallelism is not modelled separately; not applied`);
    else if (k === 'parallelism_config_sp_seq_length' && v !== null)
      d.skip(at, "the batches' fixed sequence length: set training.seq_len to it; not applied");
    else if (/^parallelism_config_(cp_comm_strategy|sp_seq_length|sp_seq_length_is_variable)$/.test(k)) d.ignore(at);
    else d.skip(at, 'not a ParallelismConfig key llmem knows; not applied');
  }
}
