// config v1 with the rl section -> a verl launch line (`python3 -m verl.trainer.main_ppo key=value ...`,
// Hydra overrides over verl/trainer/config/ppo_trainer.yaml; keys as the verl importer reads them,
// volcengine/verl at b178a3cd56f58b2d502255daba591e92833930a7). What verl cannot say is listed.
import type { Config, Json } from '../../../wasm/llmem.js';
import { findModel } from '../catalog.js';
import { View, type Exported } from './common.js';

const A = 'actor_rollout_ref.actor';
const R = 'actor_rollout_ref.rollout';
const M = 'actor_rollout_ref.model';
const REF = 'actor_rollout_ref.ref';

// rl.algorithm -> algorithm.adv_estimator (verl/trainer/ppo/core_algos.py AdvantageEstimator)
const ESTIMATOR: Record<string, string> = {
  ppo: 'gae',
  grpo: 'grpo',
  rloo: 'rloo',
  reinforce_pp: 'reinforce_plus_plus',
};
const TORCH: Record<string, string> = { bf16: 'bfloat16', fp16: 'float16', fp32: 'float32', fp8: 'bfloat16' };
const MODULES: Record<string, string> = {
  q: 'q_proj',
  k: 'k_proj',
  v: 'v_proj',
  o: 'o_proj',
  gate: 'gate_proj',
  up: 'up_proj',
  down: 'down_proj',
};

/** A Hydra override value, quoted for the shell where it needs it. */
function hydra(v: Json): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `'[${v.map(String).join(',')}]'`;
  return String(v);
}

export function exportVerl(config: Config, defaults: Config): Exported {
  const v = new View(config, defaults);
  const out: [string, Json][] = [];
  const set = (key: string, value: Json) => out.push([key, value]);

  const algorithm = v.take<string>('rl.algorithm');
  if (ESTIMATOR[algorithm]) set('algorithm.adv_estimator', ESTIMATOR[algorithm]);
  else
    v.skip(
      'rl.algorithm',
      `${algorithm}: verl's main_ppo trains online RL only (gae, grpo, rloo, reinforce_plus_plus)`,
    );

  // the cluster
  const gpus = v.take<number>('parallel.gpus');
  const perNode = Math.min(v.take<number>('parallel.gpus_per_node'), gpus);
  set('trainer.n_gpus_per_node', perNode);
  set('trainer.nnodes', Math.ceil(gpus / perNode));
  if (gpus % perNode !== 0) v.skip('parallel.gpus', `${gpus} GPUs are not whole nodes of ${perNode}`);

  // the model
  const preset = v.own('model.preset');
  const entry = typeof preset === 'string' ? findModel(preset) : undefined;
  const hf = entry ? /\bHF ([\w.-]+\/[\w.-]+)/.exec(entry.source)?.[1] : undefined;
  if (hf) {
    set(`${M}.path`, hf);
    v.cover('model.');
  }

  // data and batches
  set('data.train_batch_size', v.take<number>('rl.rollout_batch'));
  const prompt = v.take<number>('rl.prompt_len'),
    response = v.take<number>('rl.response_len');
  set('data.max_prompt_length', prompt);
  set('data.max_response_length', response);
  v.cover('training.seq_len');
  set(`${A}.ppo_mini_batch_size`, v.take<number | null>('rl.mini_batch') ?? v.get<number>('rl.rollout_batch'));
  const micro = v.take<number>('training.micro_batch');
  v.cover('training.grad_accum', 'training.global_batch'); // the RL step derives its accumulation
  const maxTokens = v.take<number | null>('rl.max_tokens_per_gpu');
  if (maxTokens !== null) {
    set(`${A}.use_dynamic_bsz`, true);
    set(`${A}.ppo_max_token_len_per_gpu`, maxTokens);
  } else set(`${A}.ppo_micro_batch_size_per_gpu`, micro);
  const lpMicro = v.take<number | null>('rl.logprob_micro_batch') ?? micro;
  const lpTokens = v.take<number | null>('rl.logprob_max_tokens_per_gpu');
  if (lpTokens !== null || maxTokens !== null) {
    set(`${R}.log_prob_use_dynamic_bsz`, true);
    set(`${R}.log_prob_max_token_len_per_gpu`, lpTokens ?? maxTokens);
    set(`${REF}.log_prob_use_dynamic_bsz`, true);
    set(`${REF}.log_prob_max_token_len_per_gpu`, lpTokens ?? maxTokens);
  } else {
    set(`${R}.log_prob_micro_batch_size_per_gpu`, lpMicro);
    set(`${REF}.log_prob_micro_batch_size_per_gpu`, lpMicro);
  }
  set(`${M}.use_remove_padding`, v.take<boolean>('rl.remove_padding'));
  if (v.take<boolean>('rl.logits_response_only'))
    v.skip('rl.logits_response_only', "verl's actor computes the logits of every position, then slices the response");
  v.cover('rl.prompt_len_mean', 'rl.response_len_mean');

  // the actor's training
  const engine = v.take<string>('parallel.engine');
  if (engine === 'fsdp1' || engine === 'fsdp2') set(`${A}.strategy`, engine === 'fsdp1' ? 'fsdp' : 'fsdp2');
  else
    v.skip('parallel.engine', `${engine}: verl's FSDP workers shard with fsdp or fsdp2 (written as the default, fsdp)`);
  set(`${A}.fsdp_config.param_offload`, v.take<boolean>('rl.actor.param_offload'));
  set(`${A}.fsdp_config.optimizer_offload`, v.take<boolean>('rl.actor.optimizer_offload'));
  const offP = v.take<string>('parallel.offload_params'),
    offO = v.take<string>('parallel.offload_optimizer');
  if (offP === 'cpu' && offO === 'cpu' && engine === 'fsdp2') set(`${A}.fsdp_config.offload_policy`, true);
  else if (offP !== 'none' || offO !== 'none')
    v.skip(
      'parallel.offload_optimizer',
      'verl offloads parameters and optimizer together, with fsdp2 (offload_policy) only',
    );
  set(`${A}.fsdp_config.reshard_after_forward`, v.take<boolean>('parallel.reshard_after_forward'));
  const strategy = v.take<string>('parallel.fsdp_strategy');
  if (strategy === 'hybrid_shard')
    set(`${A}.fsdp_config.fsdp_size`, v.take<number | null>('parallel.fsdp_shard_size') ?? perNode);
  else if (strategy !== 'full_shard')
    v.skip('parallel.fsdp_strategy', `${strategy}: verl shards in full (or hybrid with fsdp_size)`);
  v.cover('parallel.fsdp_shard_size');
  set(`${A}.fsdp_config.dtype`, TORCH[v.take<string>('training.dtype')]);
  set(`${A}.fsdp_config.model_dtype`, v.take<boolean>('training.master_weights') ? 'fp32' : 'bf16');
  const cp = v.take<number>('parallel.cp');
  if (cp > 1) set(`${A}.ulysses_sequence_parallel_size`, cp);
  if (v.take<number>('parallel.cp_all_to_all') !== cp && cp > 1)
    v.skip('parallel.cp_all_to_all', `verl's sequence parallelism is Ulysses all-to-all over all ${cp} ranks`);
  if (v.take<number>('parallel.tp') > 1) v.skip('parallel.tp', "verl's FSDP actor has no tensor parallelism");
  const recompute = v.take<string>('training.recompute');
  set(`${M}.enable_gradient_checkpointing`, recompute !== 'none');
  if (recompute !== 'none' && recompute !== 'full')
    v.skip('training.recompute', `${recompute}: verl checkpoints whole layers (written as full)`);
  v.cover('training.recompute_layers', 'training.recompute_modules');
  if (v.take<boolean>('training.activation_offload')) set(`${M}.enable_activation_offload`, true);
  const method = v.take<string>('training.finetune.method');
  if (method === 'lora') {
    set(`${M}.lora_rank`, v.take<number>('training.finetune.lora_rank'));
    set(
      `${M}.target_modules`,
      v.take<string[]>('training.finetune.lora_targets').map((t) => MODULES[t]),
    );
  } else if (method !== 'full') v.skip('training.finetune.method', `${method}: verl trains in full or with LoRA`);
  v.cover('training.finetune.lora_dropout');
  set(`${A}.calculate_entropy`, v.take<boolean>('rl.entropy'));

  // the reference
  const reference = v.take<boolean>('rl.reference.enabled');
  set(`${A}.use_kl_loss`, reference);
  set('algorithm.use_kl_in_reward', false);
  if (reference) set(`${REF}.fsdp_config.param_offload`, v.take<boolean>('rl.reference.param_offload'));
  v.cover('rl.reference.param_offload', 'rl.reference.precomputed');

  // the rollout
  set(`${R}.name`, v.take<string>('rl.rollout.engine'));
  set(`${R}.n`, v.take<number>('rl.group_size'));
  if (v.take<string>('rl.rollout.placement') !== 'colocated')
    v.skip('rl.rollout.placement', "verl's hybrid engine colocates the rollout with the actor");
  set(`${R}.mode`, v.take<boolean>('rl.rollout.own_process') ? 'async' : 'sync');
  set(`${R}.tensor_model_parallel_size`, v.take<number>('rl.rollout.tp'));
  set(`${R}.gpu_memory_utilization`, v.take<number>('rl.rollout.gpu_memory_utilization'));
  set(`${R}.max_num_seqs`, v.take<number>('rl.rollout.max_num_seqs'));
  set(`${R}.max_num_batched_tokens`, v.take<number>('rl.rollout.max_num_batched_tokens'));
  const modelLen = v.take<number | null>('rl.rollout.max_model_len');
  if (modelLen !== null) set(`${R}.max_model_len`, modelLen);
  set(`${R}.dtype`, TORCH[v.take<string>('rl.rollout.dtype')]);
  if (v.take<string | null>('rl.rollout.kv_cache_dtype') !== null)
    v.skip('rl.rollout.kv_cache_dtype', 'passed to vLLM through engine_kwargs, not a rollout key');
  if (v.take<number>('rl.rollout.block_size') !== 16)
    v.skip('rl.rollout.block_size', 'vLLM engine_kwargs, not a rollout key');
  set(`${R}.enforce_eager`, !v.take<boolean>('rl.rollout.cuda_graphs'));
  const sleep = v.take<string>('rl.rollout.sleep');
  set(`${R}.free_cache_engine`, sleep !== 'none');
  if (sleep === 'level1' || sleep === 'free_cache')
    v.skip('rl.rollout.sleep', `${sleep}: verl's hybrid engine sleeps at level 2 (free_cache_engine True)`);
  if (v.take<string>('rl.weight_sync') === 'full')
    v.skip('rl.weight_sync', 'verl sends the weights through a bucket (written as bucketed)');
  set(`${R}.checkpoint_engine.update_weights_bucket_megabytes`, v.take<number>('rl.weight_sync_bucket_mib'));

  // the critic (gae) and the reward model
  if (algorithm === 'ppo') {
    if (hf && ['layers', 'hidden', 'heads', 'kv_heads', 'ffn_hidden'].every((k) => v.get(`rl.critic.${k}`) === null))
      set('critic.model.path', hf);
    else if (!hf) v.cover('rl.critic.');
    set('critic.model.fsdp_config.param_offload', v.take<boolean>('rl.critic.param_offload'));
    set('critic.model.fsdp_config.optimizer_offload', v.take<boolean>('rl.critic.optimizer_offload'));
    set('critic.model.enable_gradient_checkpointing', recompute !== 'none');
    set('critic.model.use_remove_padding', v.get<boolean>('rl.remove_padding'));
    const critTokens = v.take<number | null>('rl.critic.max_tokens_per_gpu') ?? maxTokens;
    if (critTokens !== null) {
      set('critic.use_dynamic_bsz', true);
      set('critic.ppo_max_token_len_per_gpu', critTokens);
    } else set('critic.ppo_micro_batch_size_per_gpu', micro);
  }
  const reward = v.take<boolean>('rl.reward.enabled');
  set('reward_model.enable', reward);
  if (reward) {
    set('reward_model.use_reward_loop', false);
    set('reward_model.model.fsdp_config.param_offload', v.take<boolean>('rl.reward.param_offload'));
    if (hf && ['layers', 'hidden', 'heads', 'kv_heads', 'ffn_hidden'].every((k) => v.get(`rl.reward.${k}`) === null))
      set('reward_model.model.path', hf);
  }

  const lines = out.map(([k, val]) => `    ${k}=${hydra(val)}`);
  const text = `python3 -m verl.trainer.main_ppo \\\n${lines.join(' \\\n')}\n`;
  return {
    text,
    unexpressed: v.unexpressed({
      'model.':
        'verl loads the model from actor_rollout_ref.model.path: give a Hugging Face id (this model is not a catalog preset)',
      'rl.critic.': "the critic's own shape needs a model path (critic.model.path) of that shape",
      'rl.reward.': "the reward model's own shape needs a model path (reward_model.model.path) of that shape",
      'parallel.zero': 'ZeRO is DeepSpeed',
    }),
  };
}
