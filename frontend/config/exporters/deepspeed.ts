// config v1 -> DeepSpeed JSON (https://www.deepspeed.ai/docs/config-json/): batch sizes,
// precision, ZeRO stage, offload, buckets and the optimizer type. The model, tensor /
// pipeline / context parallelism and activation recompute live outside this file.
import type { Config, Json } from '../../../wasm/llmem.js';
import { accumulation, dataParallel, View, type Exported } from './common.js';

const OPTIMIZERS: Record<string, string> = { adamw: 'AdamW', adam: 'Adam', lion: 'Lion' };

export function exportDeepSpeed(config: Config, defaults: Config): Exported {
  const v = new View(config, defaults);
  const micro = v.take<number>('training.micro_batch'),
    accum = accumulation(v, micro);
  v.cover('parallel.gpus');
  const dp = dataParallel(v);
  const ds: Config = {
    train_batch_size: micro * accum * dp,
    train_micro_batch_size_per_gpu: micro,
    gradient_accumulation_steps: accum,
  };
  for (const k of ['tp', 'pp'])
    if (v.get<number>(`parallel.${k}`) > 1)
      v.skip(
        `parallel.${k}`,
        'DeepSpeed JSON has no tensor / pipeline parallelism; train_batch_size uses the data-parallel size',
      );
  // DeepSpeed-Ulysses: all-to-all over the whole context-parallel group (config.py sequence_parallel_size)
  const cp = v.get<number>('parallel.cp');
  if (cp > 1 && v.get<number>('parallel.cp_all_to_all') === cp) {
    v.take('parallel.cp');
    v.take('parallel.cp_all_to_all');
    ds.sequence_parallel_size = cp;
  } else if (cp > 1)
    v.skip(
      'parallel.cp',
      "DeepSpeed JSON's sequence parallelism is Ulysses all-to-all over all of it (parallel.cp_all_to_all = parallel.cp); train_batch_size uses the data-parallel size",
    );

  const dtype = v.take<string>('training.dtype');
  if (dtype === 'bf16' || dtype === 'fp8') ds.bf16 = { enabled: true };
  if (dtype === 'fp16') ds.fp16 = { enabled: true };
  if (dtype === 'fp8') v.skip('training.dtype', 'fp8 written as bf16 (DeepSpeed JSON has no fp8 training switch)');
  if (v.get('training.fp8_linear'))
    v.skip('training.fp8_linear', 'Transformer Engine fp8 is set in the model code, not in DeepSpeed JSON');
  if (config.training && (config.training as Config).grad_dtype !== undefined)
    ds.data_types = { grad_accum_dtype: v.take<string>('training.grad_dtype') };

  // ZeRO stage: the engine's own, or the closest equivalent of another engine.
  const engine = v.take<string>('parallel.engine');
  let stage = v.take<number>('parallel.zero_stage');
  if (engine !== 'deepspeed' && engine !== 'megatron_deepspeed') {
    const strategy = v.take<string>('parallel.fsdp_strategy');
    const fsdp = engine === 'fsdp1' || engine === 'fsdp2';
    stage = fsdp
      ? strategy === 'no_shard'
        ? 0
        : strategy === 'shard_grad_op' || (engine === 'fsdp2' && !v.take<boolean>('parallel.reshard_after_forward'))
          ? 2
          : 3
      : engine === 'megatron' && v.take<boolean>('parallel.distributed_optimizer')
        ? 1
        : 0;
    v.skip(
      'parallel.engine',
      `${engine} written as ZeRO stage ${stage}, its closest DeepSpeed equivalent${strategy === 'hybrid_shard' && fsdp ? ' (hybrid sharding not expressed)' : ''}`,
    );
  }
  const zero: Config = { stage };
  const off = (path: string, key: string) => {
    const dev = v.take<string>(path);
    if (dev !== 'none') zero[key] = { device: dev, pin_memory: true };
  };
  off('parallel.offload_optimizer', 'offload_optimizer');
  off('parallel.offload_params', 'offload_param');
  const overlap = v.take<Json>('parallel.overlap_comm');
  if (overlap !== null) zero.overlap_comm = overlap;
  zero.contiguous_gradients = true;
  zero.reduce_bucket_size = v.take<number>('parallel.reduce_bucket_size');
  if (stage <= 2) zero.allgather_bucket_size = v.take<number>('parallel.allgather_bucket_size');
  if (stage === 3) {
    zero.stage3_prefetch_bucket_size = v.take<number>('parallel.stage3_prefetch_bucket_size');
    zero.stage3_max_live_parameters = v.take<number>('parallel.stage3_max_live_parameters');
    zero.stage3_param_persistence_threshold = v.take<number>('parallel.stage3_param_persistence_threshold');
  }
  ds.zero_optimization = zero;

  const opt = v.take<string>('training.optimizer');
  if (OPTIMIZERS[opt]) ds.optimizer = { type: OPTIMIZERS[opt] };
  else
    v.skip(
      'training.optimizer',
      `${opt} has no DeepSpeed optimizer type; pass it from the training code (client optimizer)`,
    );
  v.cover('model.', 'training.seq_len');
  return {
    text: `${JSON.stringify(ds, null, 2)}\n`,
    unexpressed: [
      'model*: a DeepSpeed JSON carries no model (use the config or its HF config.json)',
      `training.seq_len = ${JSON.stringify(v.get('training.seq_len'))}: set by the data pipeline, not DeepSpeed JSON`,
      ...v.unexpressed({
        'training.finetune.': 'LoRA / QLoRA is set up in the training code (PEFT), not in DeepSpeed JSON',
        'training.recompute': 'activation checkpointing is enabled in the model code (gradient_checkpointing_enable)',
      }),
    ],
  };
}
