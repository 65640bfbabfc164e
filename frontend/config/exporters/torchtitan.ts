// config v1 -> a torchtitan job TOML fragment ([model], [training], [parallelism],
// [activation_checkpoint], [compile], [float8], [optimizer]); keys of
// torchtitan/config/job_config.py. Sections it does not touch ([job], [metrics], ...) are left out.
import type { Config } from '../../../wasm/llmem.js';
import { TORCHTITAN_FLAVORS } from '../importers/torchtitan.js';
import { accumulation, dataParallel, View, type Exported } from './common.js';

type Value = string | number | boolean | string[];
const toml = (v: Value): string =>
  Array.isArray(v)
    ? `[${v.map((s) => JSON.stringify(s)).join(', ')}]`
    : typeof v === 'string'
      ? JSON.stringify(v)
      : String(v);
const TORCH_DTYPE: Record<string, string> = { fp32: 'float32', bf16: 'bfloat16', fp16: 'float16', fp8: 'bfloat16' };
const SCHEDULE: Record<string, string> = {
  '1f1b': '1F1B',
  gpipe: 'GPipe',
  interleaved: 'Interleaved1F1B',
  zero_bubble: 'ZBVZeroBubble',
  zb_v: 'ZBVZeroBubble',
  dualpipe_v: 'DualPipeV',
};

export function exportTorchtitan(config: Config, defaults: Config): Exported {
  const v = new View(config, defaults);
  const sections: [string, [string, Value][]][] = [];
  const section = (name: string) => {
    const rows: [string, Value][] = [];
    sections.push([name, rows]);
    return (k: string, val: Value) => rows.push([k, val]);
  };

  const model = section('model');
  const preset = v.own('model.preset');
  const flavor =
    typeof preset === 'string'
      ? Object.entries(TORCHTITAN_FLAVORS)
          .flatMap(
            ([name, fl]) =>
              Object.entries(fl)
                .filter(([, id]) => id === preset)
                .map(([f]) => [name, f]), // spelt as torchtitan looks it up (case-sensitive)
          )
          .at(0)
      : undefined;
  if (flavor) {
    model('name', flavor[0]);
    model('flavor', flavor[1]);
    v.cover('model.');
  }
  if (v.take<boolean>('training.fp8_linear')) model('converters', ['float8']);

  const engine = v.take<string>('parallel.engine');
  if (engine !== 'fsdp2')
    v.skip('parallel.engine', `torchtitan trains with FSDP2 (+ TP/PP/CP); ${engine} is written as FSDP2`);
  const tp = v.take<number>('parallel.tp'),
    pp = v.take<number>('parallel.pp'),
    cp = v.take<number>('parallel.cp');
  const micro = v.take<number>('training.micro_batch'),
    accum = accumulation(v, micro);
  const dp = dataParallel(v);
  v.cover('parallel.gpus');

  const training = section('training');
  training('local_batch_size', pp > 1 ? micro * accum : micro);
  if (pp === 1 && accum > 1) training('global_batch_size', micro * accum * dp);
  training('seq_len', v.take<number>('training.seq_len'));
  const dtype = v.take<string>('training.dtype');
  training('mixed_precision_param', TORCH_DTYPE[dtype]);
  if (dtype === 'fp8')
    v.skip('training.dtype', 'written as bfloat16 (torchtitan enables fp8 through [model] converters)');
  training('mixed_precision_reduce', TORCH_DTYPE[v.take<string>('training.grad_dtype')]);
  if (!v.take<boolean>('training.master_weights'))
    v.skip('training.master_weights', 'FSDP2 keeps the fp32 sharded parameters as the master copy');
  const offP = v.take<string>('parallel.offload_params'),
    offO = v.take<string>('parallel.offload_optimizer');
  if (offP === 'cpu' && offO === 'cpu') training('enable_cpu_offload', true);
  else if (offP !== 'none' || offO !== 'none')
    v.skip(
      'parallel.offload_optimizer',
      'torchtitan offloads parameters, gradients and optimizer together to the CPU only',
    );

  const par = section('parallelism');
  const strategy = v.take<string>('parallel.fsdp_strategy');
  let shard = dp,
    replicate = 1;
  if (strategy === 'no_shard') [shard, replicate] = [1, dp];
  else if (strategy === 'hybrid_shard') {
    shard = v.take<number | null>('parallel.fsdp_shard_size') ?? Math.min(v.get<number>('parallel.gpus_per_node'), dp);
    replicate = dp / shard;
  } else if (strategy === 'shard_grad_op')
    v.skip('parallel.fsdp_strategy', 'written as fsdp_reshard_after_forward "never"');
  v.cover('parallel.fsdp_shard_size', 'parallel.gpus_per_node');
  par('data_parallel_replicate_degree', replicate);
  par('data_parallel_shard_degree', shard);
  const reshard = v.take<boolean>('parallel.reshard_after_forward') && strategy !== 'shard_grad_op';
  par('fsdp_reshard_after_forward', reshard ? 'always' : 'never');
  // torchtitan wraps the embedding and [norm, output] as units of their own (parallelize.py, 2025-07 on)
  if (v.get('parallel.shard_root_modules') !== true)
    v.skip(
      'parallel.shard_root_modules',
      'torchtitan always wraps the embedding and the output as FSDP units of their own',
    );
  v.cover('parallel.shard_root_modules');
  // torch.distributed.pipelining's buffers follow the PyTorch torchtitan runs (no torchtitan option)
  if (pp > 1) v.skip('parallel.pp_stage_buffers', "set by torch.distributed.pipelining's version, not by torchtitan");
  v.cover('parallel.pp_stage_buffers');
  if (pp > 1 && v.get('parallel.pp_returns_outputs') === true)
    v.skip(
      'parallel.pp_returns_outputs',
      "set by torchtitan's version (return_outputs=False from 2025-10), not an option",
    );
  v.cover('parallel.pp_returns_outputs');
  if (pp > 1 && v.get('parallel.pp_split') === 'even')
    v.skip(
      'parallel.pp_split',
      'torchtitan weighs the embedding and the output as a layer each (generate_llm_fqn_per_model_part)',
    );
  v.cover('parallel.pp_split');
  par('tensor_parallel_degree', tp);
  if (tp > 1 && !v.take<boolean>('parallel.sequence_parallel'))
    v.skip('parallel.sequence_parallel', 'torchtitan always shards the sequence with tensor parallelism');
  v.cover('parallel.sequence_parallel');
  par('pipeline_parallel_degree', pp);
  if (pp > 1) {
    const vpp = v.take<number>('parallel.vpp');
    const sched = v.take<string>('parallel.pp_schedule');
    if (SCHEDULE[sched]) par('pipeline_parallel_schedule', SCHEDULE[sched]);
    else v.skip('parallel.pp_schedule', `torchtitan has no ${sched} schedule (DualPipeV only)`);
    par('pipeline_parallel_microbatch_size', micro);
    // torchtitan makes ceil((layers + 2) / layers_per_stage) model chunks, 2 a rank when it is not given
    // (models/llama3/infra/pipeline.py): written only for another count, and only where it comes out exact
    const layers = v.get<number>('model.layers');
    const perStage = Math.ceil((layers + 2) / (pp * vpp));
    if (vpp > 2 && SCHEDULE[sched]) {
      if (Math.ceil((layers + 2) / perStage) === pp * vpp) par('pipeline_parallel_layers_per_stage', perStage);
      else
        v.skip(
          'parallel.vpp',
          `no pipeline_parallel_layers_per_stage makes ${pp * vpp} model chunks of ${layers} layers with the embedding and the output`,
        );
    }
  }
  par('context_parallel_degree', cp);
  if (v.own('model.moe') && (v.get<number>('model.moe.experts') ?? 0) > 0) {
    par('expert_parallel_degree', v.take<number>('parallel.ep'));
    par('expert_tensor_parallel_degree', v.take<number>('parallel.etp'));
  }

  const ac = section('activation_checkpoint');
  const recompute = v.take<string>('training.recompute');
  if (recompute === 'none') ac('mode', 'none');
  else if (recompute === 'per_op') {
    ac('mode', 'selective');
    ac('selective_ac_option', 'op');
  } else if (recompute === 'full') {
    const n = v.take<number | null>('training.recompute_layers');
    const perStage = v.get<number>('model.layers') / pp;
    if (n === null || n === perStage) ac('mode', 'full');
    else if (n > 0 && Number.isInteger(perStage / n)) {
      ac('mode', 'selective'); // checkpoint every k-th layer: n of the stage's layers
      ac('selective_ac_option', String(perStage / n));
    } else {
      ac('mode', 'full');
      v.skip(
        'training.recompute_layers',
        `torchtitan checkpoints every k-th layer; ${n} of ${perStage} layers per stage is not a whole k (written as full)`,
      );
    }
  } else {
    ac('mode', 'selective');
    ac('selective_ac_option', 'op');
    v.skip(
      'training.recompute',
      `module-selective recompute (${v.get<string[]>('training.recompute_modules').join(', ')}) written as torchtitan's op-level selective checkpointing`,
    );
  }
  v.cover('training.recompute_modules', 'training.recompute_layers');

  const compile = v.take<boolean>('runtime.torch_compile');
  const loss = v.take<string>('training.loss');
  if (compile) {
    const c = section('compile');
    c('enable', true);
    c('components', loss === 'compiled' ? ['model', 'loss'] : ['model']);
  }
  // loss_parallel: what torchtitan's train context does under TP (disable_loss_parallel unset); without TP, standard
  if (loss !== 'standard' && loss !== 'loss_parallel' && !(loss === 'compiled' && compile))
    v.skip(
      'training.loss',
      `torchtitan computes the loss in full (compiled with [compile] components "loss", loss_parallel under TP), not ${loss}`,
    );
  const fp8ag = v.take<boolean>('parallel.fp8_all_gather');
  if (fp8ag) section('float8')('enable_fsdp_float8_all_gather', true);
  const opt = section('optimizer');
  const o = v.take<string>('training.optimizer');
  if (o === 'adamw' || o === 'adam') opt('name', o === 'adamw' ? 'AdamW' : 'Adam');
  else v.skip('training.optimizer', `${o} is not a torchtitan [optimizer] name (AdamW, Adam)`);
  opt('implementation', v.take<string>('training.optimizer_impl').replace('_', '-'));
  if (v.take<boolean>('training.optimizer_in_backward')) opt('early_step_in_backward', true);

  const text = sections
    .filter(([, rows]) => rows.length)
    .map(([name, rows]) => `[${name}]\n${rows.map(([k, val]) => `${k} = ${toml(val)}`).join('\n')}\n`)
    .join('\n');
  return {
    text,
    unexpressed: v.unexpressed({
      'model.': 'torchtitan builds models from [model] name/flavor; this model is not a torchtitan flavor',
      'training.finetune.': 'torchtitan has no LoRA / QLoRA',
      'parallel.zero': 'ZeRO is DeepSpeed',
    }),
  };
}
