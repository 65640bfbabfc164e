// config v1 -> a Megatron-LM launch line (torchrun + pretrain_gpt.py arguments).
// Flag names and semantics: megatron/training/arguments.py
// (https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py).
import type { Config } from '../../../wasm/llmem.js';
import { accumulation, dataParallel, View, type Exported } from './common.js';

export function exportMegatron(config: Config, defaults: Config): Exported {
  const v = new View(config, defaults);
  const args: (string | number)[] = [];
  const flag = (name: string, ...values: (string | number)[]) => args.push(`--${name}`, ...values);
  const engine = v.take<string>('parallel.engine');
  if (engine === 'fsdp2') flag('use-torch-fsdp2');
  else if (engine !== 'megatron')
    v.skip('parallel.engine', `${engine} has no Megatron-LM equivalent; written as Megatron's own data parallelism`);

  // model (add_network_size_args)
  const layers = v.take<number>('model.layers'),
    hidden = v.take<number>('model.hidden'),
    heads = v.take<number>('model.heads');
  flag('num-layers', layers);
  flag('hidden-size', hidden);
  flag('ffn-hidden-size', v.take<number>('model.ffn_hidden'));
  flag('num-attention-heads', heads);
  const kv = v.take<number | null>('model.kv_heads') ?? heads;
  if (kv !== heads) flag('group-query-attention', '--num-query-groups', kv);
  const headDim = v.take<number | null>('model.head_dim');
  if (headDim !== null && headDim !== hidden / heads) flag('kv-channels', headDim);
  if (v.take('model.mlp') === 'gated') flag('swiglu');
  flag('normalization', v.take('model.norm') === 'rmsnorm' ? 'RMSNorm' : 'LayerNorm');
  if (!v.take<boolean>('model.bias')) {
    flag('disable-bias-linear');
    if (v.take<boolean>('model.qkv_bias')) flag('add-qkv-bias');
  } else if (v.get<boolean>('model.qkv_bias')) v.cover('model.qkv_bias');
  if (!v.take<boolean>('model.tied_embeddings')) flag('untie-embeddings-and-output-weights');
  flag('position-embedding-type', v.take('model.position') === 'rope' ? 'rope' : 'learned_absolute');
  flag('max-position-embeddings', v.take<number>('model.max_positions'));
  flag('vocab-size', v.take<number>('model.vocab'));
  flag('make-vocab-size-divisible-by', v.take<number>('model.vocab_multiple'));
  const qk = v.take<string>('model.qk_norm');
  if (qk === 'head') flag('qk-layernorm');
  else if (qk === 'full') v.skip('model.qk_norm', 'Megatron normalises q and k per head only');
  const moe = (v.own('model.moe') ?? null) as Config | null; // a group counts only when the config sets it
  v.cover('model.moe', 'model.moe.');
  if (moe && (moe.experts as number) > 0) {
    const m = (k: string) => v.get(`model.moe.${k}`);
    flag('num-experts', m('experts') as number);
    flag('moe-router-topk', m('top_k') as number);
    if (m('expert_ffn_hidden') !== null) flag('moe-ffn-hidden-size', m('expert_ffn_hidden') as number);
    const shared = m('shared_experts') as number;
    if (shared > 0) {
      flag('moe-shared-expert-intermediate-size', shared * (m('shared_expert_ffn_hidden') as number));
      if (shared > 1)
        v.skip(
          'model.moe.shared_experts',
          `${shared} shared experts written as one of ${shared}x the width (same parameters)`,
        );
    }
    const dense = m('dense_layers') as number,
      freq = m('layer_freq') as number;
    if (dense > 0 && freq > 1)
      v.skip('model.moe.layer_freq', 'a leading dense block and a layer frequency together are not written');
    if (dense > 0) flag('moe-layer-freq', `([0]*${dense}+[1]*${layers - dense})`);
    else if (freq > 1) flag('moe-layer-freq', freq);
    if (m('capacity_factor') !== null) flag('moe-expert-capacity-factor', m('capacity_factor') as number);
    if (m('router_bias')) flag('moe-router-enable-expert-bias');
    for (const k of ['shared_expert_gate', 'latent_size', 'load_imbalance'])
      if (m(k) !== v.def(`model.moe.${k}`)) v.skip(`model.moe.${k}`, 'no Megatron-LM flag');
  }
  const mla = (v.own('model.mla') ?? null) as Config | null;
  v.cover('model.mla', 'model.mla.');
  if (mla) {
    const a = (k: string) => v.get<number | null>(`model.mla.${k}`);
    flag('multi-latent-attention');
    if (a('q_lora_rank')) flag('q-lora-rank', a('q_lora_rank')!);
    flag(
      'kv-lora-rank',
      a('kv_lora_rank')!,
      '--qk-head-dim',
      a('qk_nope_head_dim')!,
      '--qk-pos-emb-head-dim',
      a('qk_rope_head_dim')!,
      '--v-head-dim',
      a('v_head_dim')!,
    );
  }
  const mtp = v.take<number>('model.mtp_layers');
  if (mtp > 0) flag('mtp-num-layers', mtp);
  v.cover('model.preset');

  // parallelism (add_distributed_args)
  const tp = v.take<number>('parallel.tp'),
    pp = v.take<number>('parallel.pp'),
    vpp = v.take<number>('parallel.vpp');
  flag('tensor-model-parallel-size', tp);
  if (v.take<boolean>('parallel.tp_comm_overlap') && tp > 1) flag('tp-comm-overlap');
  flag('pipeline-model-parallel-size', pp);
  if (vpp > 1) flag('num-layers-per-virtual-pipeline-stage', layers / pp / vpp);
  const group = v.take<number | null>('parallel.vpp_group');
  if (vpp > 1 && group !== null) flag('microbatch-group-size-per-virtual-pipeline-stage', group);
  const sched = v.take<string>('parallel.pp_schedule');
  if (
    pp > 1 &&
    (sched === 'gpipe' || sched === 'zero_bubble' || sched === 'zb_v' || sched === 'dualpipe_v' || sched === 'dualpipe')
  )
    v.skip('parallel.pp_schedule', `Megatron-LM runs 1F1B (interleaved with virtual stages), not ${sched}`);
  const first = v.take<number | null>('parallel.pp_first_stage_layers'),
    last = v.take<number | null>('parallel.pp_last_stage_layers');
  if (first !== null) flag('decoder-first-pipeline-num-layers', first);
  if (last !== null) flag('decoder-last-pipeline-num-layers', last);
  const cp = v.take<number>('parallel.cp'),
    a2a = v.take<number>('parallel.cp_all_to_all');
  flag('context-parallel-size', cp);
  // Transformer Engine's CP: all-to-all over all of it (a2a), or within the first of two levels (a2a+p2p)
  if (cp > 1 && a2a === cp) flag('cp-comm-type', 'a2a');
  else if (cp > 1 && a2a > 1) {
    flag('cp-comm-type', 'a2a+p2p');
    flag('hierarchical-context-parallel-sizes', a2a, cp / a2a);
  }
  if (moe && (moe.experts as number) > 0) {
    flag('expert-model-parallel-size', v.take<number>('parallel.ep'));
    flag('expert-tensor-parallel-size', v.take<number>('parallel.etp'));
  }
  if (v.take<boolean>('parallel.sequence_parallel') && tp > 1) flag('sequence-parallel');
  if (engine !== 'fsdp2' && v.take<boolean>('parallel.distributed_optimizer')) flag('use-distributed-optimizer');
  if (v.take('parallel.offload_optimizer') === 'cpu') flag('optimizer-cpu-offload');

  // training (add_training_args, add_mixed_precision_args)
  const micro = v.take<number>('training.micro_batch'),
    accum = accumulation(v, micro);
  v.cover('parallel.gpus', 'parallel.gpus_per_node');
  flag('seq-length', v.take<number>('training.seq_len'));
  flag('micro-batch-size', micro);
  flag('global-batch-size', micro * accum * dataParallel(v));
  const dtype = v.take<string>('training.dtype');
  if (dtype === 'bf16' || dtype === 'fp8') flag('bf16');
  if (dtype === 'fp16') flag('fp16');
  const recipe = v.take<string | null>('training.fp8_recipe');
  const quantised = v.take<boolean>('training.fp8_linear') || dtype === 'fp8';
  // Transformer Engine recipes (TransformerConfig fp8_recipe / fp4_recipe); fp8 parameters are
  // --fp8-param-gather (kept in fp8, gathered in fp8)
  const fp4 = quantised && recipe === 'nvfp4';
  if (fp4) flag('fp4-format', 'e2m1');
  else if (quantised) flag('fp8-format', 'hybrid');
  if (quantised && recipe !== null && !fp4) flag('fp8-recipe', recipe === 'current' ? 'tensorwise' : recipe);
  if (quantised && recipe === null)
    v.skip(
      'training.fp8_recipe',
      'null (1-byte approximation) written without --fp8-recipe: Megatron-LM runs delayed scaling',
    );
  if (dtype === 'fp8') {
    if (recipe === null) v.skip('training.dtype', 'fp8 written as --bf16 --fp8-format hybrid');
    else flag(fp4 ? 'fp4-param-gather' : 'fp8-param-gather');
  }
  if (dtype === 'fp8' && recipe !== null) v.cover('parallel.fp8_all_gather');
  // --use-precision-aware-optimizer (arguments.py L3667-3684): main params fp32/fp16, moments fp32/fp16/bf16/fp8
  const master = v.take<string | null>('training.master_dtype'),
    moments = v.take<string>('training.optimizer_dtype');
  const mainParams = master === 'fp16' && v.get<boolean>('training.master_weights');
  if (master !== null && master !== 'fp32' && !mainParams)
    v.skip('training.master_dtype', `${master}: Megatron-LM keeps main params in fp32 or fp16 (--main-params-dtype)`);
  if (mainParams || moments !== 'fp32') flag('use-precision-aware-optimizer');
  if (mainParams) flag('main-params-dtype', 'fp16');
  if (moments !== 'fp32') flag('exp-avg-dtype', moments, '--exp-avg-sq-dtype', moments);
  const grad = v.take<string>('training.grad_dtype');
  if (dtype === 'fp16' && grad === 'fp32') flag('accumulate-allreduce-grads-in-fp32');
  // bf16 gradient buffers: --grad-reduce-in-bf16 (megatron/core/distributed/param_and_grad_buffer.py grad_dtype)
  else if (grad === 'bf16' && dtype !== 'fp16') flag('grad-reduce-in-bf16');
  else if (grad !== 'fp32' && !(dtype === 'fp16' && grad === 'fp16'))
    v.skip(
      'training.grad_dtype',
      'Megatron keeps gradients in fp32, bf16 (--grad-reduce-in-bf16) or the fp16 parameter dtype',
    );
  const drop = v.take<number>('training.dropout');
  flag('attention-dropout', drop, '--hidden-dropout', drop);
  const opt = v.take<string>('training.optimizer');
  if (opt === 'adamw' || opt === 'adam') flag('optimizer', 'adam');
  else if (opt === 'sgd_momentum' || opt === 'sgd') flag('optimizer', 'sgd');
  else if (opt === 'muon') flag('optimizer', 'muon');
  else v.skip('training.optimizer', `${opt} is not a Megatron-LM optimizer`);
  if (opt === 'adam' || opt === 'sgd')
    v.skip(
      'training.optimizer',
      `written as --optimizer ${opt === 'adam' ? 'adam (decoupled weight decay, AdamW)' : 'sgd (with momentum)'}`,
    );
  const attn = v.take<string>('training.attention');
  if (attn !== 'flash') flag('attention-backend', 'unfused');
  if (v.take<boolean>('training.activation_offload')) flag('cpu-offloading');
  const recompute = v.take<string>('training.recompute');
  if (recompute === 'full') {
    const n = v.take<number | null>('training.recompute_layers');
    if (n === null) flag('recompute-granularity', 'full', '--recompute-method', 'uniform', '--recompute-num-layers', 1);
    else flag('recompute-granularity', 'full', '--recompute-method', 'block', '--recompute-num-layers', n);
  } else if (recompute === 'selective')
    flag(
      'recompute-granularity',
      'selective',
      '--recompute-modules',
      ...v.take<string[]>('training.recompute_modules'),
    );
  else if (recompute === 'per_op')
    v.skip('training.recompute', 'op-level selective checkpointing (torchtitan) has no Megatron-LM flag');
  v.cover('training.recompute_modules', 'training.recompute_layers');

  const gpus = v.get<number>('parallel.gpus'),
    perNode = v.get<number>('parallel.gpus_per_node');
  const nodes = gpus % perNode === 0 ? gpus / perNode : 1;
  const launch = `torchrun --nnodes ${nodes} --nproc-per-node ${nodes === 1 ? gpus : perNode} pretrain_gpt.py`;
  return {
    text: `${launch} ${args.map(String).join(' ')}\n`,
    unexpressed: v.unexpressed({
      'training.finetune.': 'Megatron-LM pretrain_gpt.py has no LoRA / QLoRA',
      'parallel.fsdp_': 'FSDP settings are not Megatron-LM arguments',
      'parallel.zero': 'ZeRO is DeepSpeed (Megatron-DeepSpeed --zero-stage), not Megatron-LM',
    }),
  };
}
