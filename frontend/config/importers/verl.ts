// verl PPO-trainer configs -> config v1 with the rl section: a whole config YAML
// (verl/trainer/config/_generated_ppo_trainer.yaml, or a YAML with `defaults: [ppo_trainer, _self_]`
// over it) or a launch script (`python3 -m verl.trainer.main_ppo key=value ...`, Hydra overrides,
// examples/{grpo,ppo}_trainer/*.sh). Keys and defaults: verl/trainer/config/_generated_ppo_trainer.yaml
// (volcengine/verl at b178a3cd56f58b2d502255daba591e92833930a7); Hydra interpolations
// (${a.b}, ${oc.select:a.b,default}, ${.sibling}) are resolved, others reported. The stack is
// runtime.framework verl (core/profiles.def: flash-attn's cross-entropy for the log-probabilities).
// A script launched with --config-name=ppo_megatron_trainer (or a YAML over it) trains with verl's
// Megatron workers: defaults from verl/trainer/config/_generated_ppo_megatron_trainer.yaml and
// verl/workers/megatron_workers.py at b178a3cd.
import type { Json } from '../../../wasm/llmem.js';
import { applyAllocConf } from './alloc-conf.js';
import {
  applyLoraTargets,
  draftHasVision,
  draftModel,
  applyModelId,
  Draft,
  guard,
  ImportError,
  int,
  isObject,
  num,
  oneOf,
  parseYamlText,
  str,
  torchDtype,
  type ImportResult,
  type Obj,
} from './common.js';
import { applyUlysses } from './parallel-degrees.js';
import { applySecondModel, launchCommand, seqLenFromRl } from './rl-common.js';
import { parseYaml, YamlError } from './yaml.js';

const A = 'actor_rollout_ref.actor';
const R = 'actor_rollout_ref.rollout';
const M = 'actor_rollout_ref.model';
const REF = 'actor_rollout_ref.ref';

/** A Hydra interpolation as the YAML writes it: ${...}. */
const I = (body: string) => `\${${body}}`;

// The defaults of the keys read (_generated_ppo_trainer.yaml at b178a3cd), interpolations as written.
const DEFAULTS: Record<string, Json> = {
  'algorithm.adv_estimator': 'gae',
  'algorithm.use_kl_in_reward': false,
  'trainer.n_gpus_per_node': 8,
  'trainer.nnodes': 1,
  'data.train_batch_size': 1024,
  'data.max_prompt_length': 512,
  'data.max_response_length': 512,
  'actor_rollout_ref.hybrid_engine': true,
  [`${A}.strategy`]: 'fsdp',
  [`${A}.ppo_mini_batch_size`]: 256,
  [`${A}.ppo_micro_batch_size`]: null,
  [`${A}.ppo_micro_batch_size_per_gpu`]: null,
  [`${A}.use_dynamic_bsz`]: false,
  [`${A}.ppo_max_token_len_per_gpu`]: 16384,
  [`${A}.entropy_coeff`]: 0,
  [`${A}.calculate_entropy`]: false,
  [`${A}.use_kl_loss`]: false,
  [`${A}.ulysses_sequence_parallel_size`]: 1,
  [`${A}.fsdp_config.param_offload`]: false,
  [`${A}.fsdp_config.optimizer_offload`]: false,
  [`${A}.fsdp_config.offload_policy`]: false,
  [`${A}.fsdp_config.reshard_after_forward`]: true,
  [`${A}.fsdp_config.fsdp_size`]: -1,
  [`${A}.fsdp_config.model_dtype`]: 'fp32',
  [`${A}.fsdp_config.dtype`]: 'bfloat16',
  [`${REF}.log_prob_micro_batch_size`]: null,
  [`${REF}.log_prob_micro_batch_size_per_gpu`]: null,
  [`${REF}.log_prob_use_dynamic_bsz`]: I('oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false'),
  [`${REF}.log_prob_max_token_len_per_gpu`]: I('oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384'),
  [`${REF}.fsdp_config.param_offload`]: false,
  [`${R}.name`]: '???',
  [`${R}.mode`]: 'async',
  [`${R}.n`]: 1,
  [`${R}.dtype`]: 'bfloat16',
  [`${R}.gpu_memory_utilization`]: 0.5,
  [`${R}.enforce_eager`]: false,
  [`${R}.free_cache_engine`]: true,
  [`${R}.tensor_model_parallel_size`]: 2,
  [`${R}.max_num_batched_tokens`]: 8192,
  [`${R}.max_model_len`]: null,
  [`${R}.max_num_seqs`]: 256,
  [`${R}.log_prob_micro_batch_size`]: null,
  [`${R}.log_prob_micro_batch_size_per_gpu`]: null,
  [`${R}.log_prob_use_dynamic_bsz`]: I('oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false'),
  [`${R}.log_prob_max_token_len_per_gpu`]: I('oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384'),
  [`${R}.checkpoint_engine.update_weights_bucket_megabytes`]: 2048,
  [`${M}.path`]: '~/models/deepseek-llm-7b-chat',
  [`${M}.enable_gradient_checkpointing`]: true,
  [`${M}.enable_activation_offload`]: false,
  [`${M}.use_remove_padding`]: true,
  [`${M}.lora_rank`]: 0,
  [`${M}.target_modules`]: 'all-linear',
  [`${M}.lora.rank`]: 0,
  [`${M}.lora.type`]: 'lora',
  [`${M}.lora.dropout`]: 0,
  [`${M}.lora.alpha`]: 32,
  [`${M}.lora.target_modules`]: ['linear_qkv', 'linear_proj', 'linear_fc1', 'linear_fc2'],
  [`${M}.use_liger`]: false,
  [`${M}.use_fused_kernels`]: false,
  'critic.enable': null,
  'critic.ppo_micro_batch_size_per_gpu': I('oc.select:.ppo_micro_batch_size,null'),
  'critic.ppo_micro_batch_size': null,
  'critic.use_dynamic_bsz': I('oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false'),
  'critic.ppo_max_token_len_per_gpu': 32768,
  'critic.model.path': '~/models/deepseek-llm-7b-chat',
  'critic.model.enable_gradient_checkpointing': true,
  'critic.model.use_remove_padding': false,
  'critic.model.fsdp_config.param_offload': false,
  'critic.model.fsdp_config.optimizer_offload': false,
  'reward_model.enable': false,
  'reward_model.use_reward_loop': true,
  'reward_model.model.path': '~/models/FsfairX-LLaMA3-RM-v0.1',
  'reward_model.model.fsdp_config.param_offload': false,
};

const AM = `${A}.megatron`;
const REFM = `${REF}.megatron`;
const OTC = `${AM}.override_transformer_config`;
const OOC = `${A}.optim.override_optimizer_config`;
const LAYOUT = [
  'tensor_model_parallel_size',
  'pipeline_model_parallel_size',
  'virtual_pipeline_model_parallel_size',
  'context_parallel_size',
  'expert_model_parallel_size',
  'expert_tensor_parallel_size',
];
// Under ppo_megatron_trainer (_generated_ppo_megatron_trainer.yaml at b178a3cd): the keys that differ.
const MEGATRON_DEFAULTS: Record<string, Json> = {
  [`${A}.strategy`]: 'megatron',
  [`${AM}.param_offload`]: false,
  [`${AM}.grad_offload`]: false,
  [`${AM}.optimizer_offload`]: false,
  [`${AM}.tensor_model_parallel_size`]: 1,
  [`${AM}.expert_model_parallel_size`]: 1,
  [`${AM}.expert_tensor_parallel_size`]: null,
  [`${AM}.pipeline_model_parallel_size`]: 1,
  [`${AM}.virtual_pipeline_model_parallel_size`]: null,
  [`${AM}.context_parallel_size`]: 1,
  [`${AM}.sequence_parallel`]: true,
  [`${AM}.use_distributed_optimizer`]: true,
  [`${AM}.use_remove_padding`]: true,
  [`${AM}.dtype`]: 'bfloat16',
  [`${OTC}.recompute_granularity`]: null,
  [`${OTC}.recompute_modules`]: ['core_attn'],
  [`${OTC}.recompute_method`]: null,
  [`${OTC}.recompute_num_layers`]: null,
  [`${OTC}.attention_backend`]: 'flash',
  [`${OTC}.num_layers_in_first_pipeline_stage`]: null,
  [`${OTC}.num_layers_in_last_pipeline_stage`]: null,
  [`${OOC}.optimizer_cpu_offload`]: false,
  [`${OOC}.optimizer_offload_fraction`]: 1,
  [`${REFM}.param_offload`]: I(`oc.select:${AM}.param_offload,False`),
  ...Object.fromEntries(LAYOUT.map((k) => [`${REFM}.${k}`, I(`oc.select:${AM}.${k},null`)])),
  'critic.megatron.param_offload': false,
  'critic.megatron.optimizer_offload': false,
};

// --recompute-modules choices (megatron/training/arguments.py), as training.recompute_modules names them
const RECOMPUTE_MODULES = ['core_attn', 'mlp', 'layernorm', 'moe', 'moe_act', 'mla_up_proj'] as const;

// algorithm.adv_estimator (verl/trainer/ppo/core_algos.py AdvantageEstimator) -> rl.algorithm:
// only gae trains a critic; the others differ in how advantages are formed, not in what is held.
const ESTIMATORS: Record<string, string> = {
  gae: 'ppo',
  grpo: 'grpo',
  grpo_vectorized: 'grpo',
  grpo_passk: 'grpo',
  rloo: 'rloo',
  rloo_vectorized: 'rloo',
  reinforce_plus_plus: 'reinforce_pp',
  reinforce_plus_plus_baseline: 'reinforce_pp',
  remax: 'grpo',
  opo: 'grpo',
  gpg: 'grpo',
  optimal_token_baseline: 'grpo',
  tir_optimal_token_baseline: 'grpo',
};
const APPROXIMATE = new Set([
  'remax',
  'opo',
  'gpg',
  'optimal_token_baseline',
  'tir_optimal_token_baseline',
  'grpo_passk',
]);

/** The mapping: each verl key read and what it sets (apply runs in table order). */
// fsdp: read by the FSDP workers only; under the megatron strategy the keys, if given, are reported.
const MAPPING: { keys: string[]; to: string; fsdp?: true; apply: (c: Ctx) => void }[] = [
  { keys: [`${M}.path`], to: 'model.preset', apply: modelPath },
  {
    keys: ['algorithm.adv_estimator', 'critic.enable'],
    to: 'rl.algorithm (gae ppo; grpo; rloo; reinforce_plus_plus(_baseline) reinforce_pp; other critic-free estimators grpo)',
    apply: ({ d, get }) => {
      const est = oneOf(get('algorithm.adv_estimator'), 'algorithm.adv_estimator', Object.keys(ESTIMATORS));
      d.set('rl.algorithm', ESTIMATORS[est]);
      if (APPROXIMATE.has(est))
        d.skip(
          'algorithm.adv_estimator',
          `${est}: no critic; counted as grpo (its extra passes, if any, are not modelled)`,
        );
      const critic = get('critic.enable');
      if (critic !== null && critic !== undefined && bool(critic, 'critic.enable') !== (est === 'gae'))
        d.skip(
          'critic.enable',
          `${String(critic)} against adv_estimator ${est}: the critic follows the estimator here (gae only)`,
        );
    },
  },
  {
    keys: ['trainer.n_gpus_per_node', 'trainer.nnodes'],
    to: 'parallel.gpus (nodes x GPUs per node), parallel.gpus_per_node',
    apply: ({ d, get, options }) => {
      const perNode = int(get('trainer.n_gpus_per_node'), 'trainer.n_gpus_per_node');
      d.set('parallel.gpus', options.worldSize ?? perNode * int(get('trainer.nnodes'), 'trainer.nnodes'));
      d.set('parallel.gpus_per_node', perNode);
    },
  },
  {
    keys: [`${A}.strategy`],
    to: 'parallel.engine (fsdp fsdp1, fsdp2 fsdp2; megatron megatron, with --config-name=ppo_megatron_trainer)',
    apply: ({ d, get, megatron }) => {
      const s = oneOf(get(`${A}.strategy`), `${A}.strategy`, ['fsdp', 'fsdp2', 'megatron'] as const);
      if (megatron && s !== 'megatron')
        throw new ImportError(
          `${A}.strategy`,
          `${A}.strategy: ${s} under --config-name=ppo_megatron_trainer (its actor has megatron.*, no fsdp_config) (allowed: megatron)`,
        );
      if (!megatron && s === 'megatron')
        throw new ImportError(
          `${A}.strategy`,
          `${A}.strategy: megatron needs --config-name=ppo_megatron_trainer (verl's Megatron workers read actor.megatron.*, which ppo_trainer lacks) (allowed with ppo_trainer: fsdp | fsdp2)`,
        );
      d.set('parallel.engine', s === 'fsdp' ? 'fsdp1' : s === 'fsdp2' ? 'fsdp2' : 'megatron');
    },
  },
  {
    keys: ['data.train_batch_size'],
    to: 'rl.rollout_batch (prompts per step)',
    apply: ({ d, get }) => d.set('rl.rollout_batch', int(get('data.train_batch_size'), 'data.train_batch_size')),
  },
  {
    keys: [`${A}.ppo_mini_batch_size`],
    to: 'rl.mini_batch (prompts per optimizer step)',
    apply: ({ d, get }) => d.set('rl.mini_batch', int(get(`${A}.ppo_mini_batch_size`), `${A}.ppo_mini_batch_size`)),
  },
  {
    keys: [`${A}.ppo_micro_batch_size_per_gpu`, `${A}.ppo_micro_batch_size`],
    to: 'training.micro_batch (sequences per GPU; the global spelling over the data-parallel ranks)',
    apply: (c) => {
      const micro = perGpu(c, `${A}.ppo_micro_batch_size`);
      if (micro !== undefined) c.d.set('training.micro_batch', micro);
      else if (!c.bool(`${A}.use_dynamic_bsz`))
        throw new ImportError(
          `${A}.ppo_micro_batch_size_per_gpu`,
          `${A}.ppo_micro_batch_size_per_gpu: must be set (or ppo_micro_batch_size, or use_dynamic_bsz) (verl asserts it)`,
        );
    },
  },
  {
    keys: [`${A}.use_dynamic_bsz`, `${A}.ppo_max_token_len_per_gpu`],
    to: 'rl.max_tokens_per_gpu (with use_dynamic_bsz; times the sequence-parallel size)',
    apply: (c) => {
      if (c.bool(`${A}.use_dynamic_bsz`))
        c.d.set(
          'rl.max_tokens_per_gpu',
          int(c.get(`${A}.ppo_max_token_len_per_gpu`), `${A}.ppo_max_token_len_per_gpu`) * tokenSplit(c, 'actor'),
        );
    },
  },
  {
    keys: [`${R}.log_prob_micro_batch_size_per_gpu`, `${R}.log_prob_micro_batch_size`],
    to: 'rl.logprob_micro_batch',
    apply: (c) => {
      const lp = perGpu(c, `${R}.log_prob_micro_batch_size`);
      if (lp !== undefined) c.d.set('rl.logprob_micro_batch', lp);
    },
  },
  {
    keys: [`${R}.log_prob_use_dynamic_bsz`, `${R}.log_prob_max_token_len_per_gpu`],
    to: 'rl.logprob_max_tokens_per_gpu (with log_prob_use_dynamic_bsz)',
    apply: (c) => {
      if (c.bool(`${R}.log_prob_use_dynamic_bsz`))
        c.d.set(
          'rl.logprob_max_tokens_per_gpu',
          int(c.get(`${R}.log_prob_max_token_len_per_gpu`), `${R}.log_prob_max_token_len_per_gpu`) *
            tokenSplit(c, 'actor'),
        );
    },
  },
  {
    keys: [
      `${REF}.log_prob_micro_batch_size_per_gpu`,
      `${REF}.log_prob_micro_batch_size`,
      `${REF}.log_prob_use_dynamic_bsz`,
      `${REF}.log_prob_max_token_len_per_gpu`,
    ],
    to: "the reference's log-prob batches: counted with the rollout's (rl.logprob_*), reported when they differ",
    apply: (c) => {
      const ref = perGpu(c, `${REF}.log_prob_micro_batch_size`);
      const roll = c.d.get('rl.logprob_micro_batch');
      if (ref !== undefined && roll !== undefined && ref !== roll)
        c.d.skip(
          `${REF}.log_prob_micro_batch_size_per_gpu`,
          `${ref}: llmem counts the reference's log-probs with the rollout's micro-batch (${String(roll)})`,
        );
      else if (ref !== undefined && roll === undefined) c.d.set('rl.logprob_micro_batch', ref);
    },
  },
  {
    keys: ['data.max_prompt_length', 'data.max_response_length'],
    to: 'rl.prompt_len, rl.response_len',
    apply: ({ d, get }) => {
      d.set('rl.prompt_len', int(get('data.max_prompt_length'), 'data.max_prompt_length'));
      d.set('rl.response_len', int(get('data.max_response_length'), 'data.max_response_length'));
    },
  },
  {
    keys: [`${M}.use_remove_padding`, `${AM}.use_remove_padding`],
    to: 'rl.remove_padding (megatron: actor.megatron.use_remove_padding, the thd format of megatron_actor.py)',
    apply: (c) => {
      if (!c.megatron) return c.d.set('rl.remove_padding', c.bool(`${M}.use_remove_padding`));
      c.d.set('rl.remove_padding', c.bool(`${AM}.use_remove_padding`));
      if (c.given(`${M}.use_remove_padding`))
        c.d.skip(`${M}.use_remove_padding`, 'the megatron actor reads actor.megatron.use_remove_padding; not applied');
    },
  },
  {
    keys: [
      ...LAYOUT.map((k) => `${AM}.${k}`),
      `${AM}.sequence_parallel`,
      `${AM}.use_distributed_optimizer`,
      `${OTC}.num_layers_in_first_pipeline_stage`,
      `${OTC}.num_layers_in_last_pipeline_stage`,
    ],
    to: 'parallel.{tp,pp,vpp,cp,ep,etp,sequence_parallel,distributed_optimizer,pp_first_stage_layers,pp_last_stage_layers} (megatron)',
    apply: (c) => {
      if (!c.megatron) return;
      const size = (k: string, to: string) => {
        const v = c.get(`${AM}.${k}`);
        if (v !== null && v !== undefined) c.d.set(to, int(v, `${AM}.${k}`));
      };
      size('tensor_model_parallel_size', 'parallel.tp');
      size('pipeline_model_parallel_size', 'parallel.pp');
      if (((c.d.get('parallel.pp') as number | undefined) ?? 1) > 1)
        c.d.note(
          `${AM}.pipeline_model_parallel_size ${String(c.d.get('parallel.pp'))}: llmem models RL post-training without pipeline stages, so the estimate refuses this layout (parallel.pp)`,
        );
      size('virtual_pipeline_model_parallel_size', 'parallel.vpp');
      size('context_parallel_size', 'parallel.cp');
      size('expert_model_parallel_size', 'parallel.ep');
      // null: Megatron-Core takes the TP size (megatron/core/parallel_state.py initialize_model_parallel); a dense
      // model has no experts to split (the Megatron importer sets none either)
      size('expert_tensor_parallel_size', 'parallel.etp');
      if (c.get(`${AM}.expert_tensor_parallel_size`) == null && !denseModel(c.d))
        c.d.set('parallel.etp', c.d.get('parallel.tp') as number);
      if ((c.d.get('parallel.vpp') as number) > 1) c.d.set('parallel.pp_schedule', 'interleaved');
      c.d.set('parallel.sequence_parallel', c.bool(`${AM}.sequence_parallel`));
      c.d.set('parallel.distributed_optimizer', c.bool(`${AM}.use_distributed_optimizer`));
      const first = c.get(`${OTC}.num_layers_in_first_pipeline_stage`);
      const last = c.get(`${OTC}.num_layers_in_last_pipeline_stage`);
      if (first != null)
        c.d.set('parallel.pp_first_stage_layers', int(first, `${OTC}.num_layers_in_first_pipeline_stage`, 0));
      if (last != null)
        c.d.set('parallel.pp_last_stage_layers', int(last, `${OTC}.num_layers_in_last_pipeline_stage`, 0));
    },
  },
  {
    keys: [`${AM}.param_offload`, `${AM}.optimizer_offload`, `${AM}.grad_offload`],
    to: 'rl.actor.param_offload, rl.actor.optimizer_offload (megatron; grad_offload: the grad buffers go with param_offload)',
    apply: (c) => {
      if (!c.megatron) return;
      c.d.set('rl.actor.param_offload', c.bool(`${AM}.param_offload`));
      c.d.set('rl.actor.optimizer_offload', c.bool(`${AM}.optimizer_offload`));
      // megatron_workers.py sets _is_offload_grad and never reads it; offload_megatron_model_to_cpu
      // (verl/utils/megatron_utils.py) frees the grad buffers with the parameters
      if (c.bool(`${AM}.grad_offload`) && !c.bool(`${AM}.param_offload`))
        c.d.skip(
          `${AM}.grad_offload`,
          'without param_offload verl offloads no gradients (the flag is not read); not applied',
        );
    },
  },
  {
    keys: [`${AM}.dtype`],
    to: 'training.dtype, training.master_weights true (megatron: bf16/fp16 params, fp32 main params in the optimizer)',
    apply: (c) => {
      if (!c.megatron) return;
      c.d.set('training.dtype', verlDtype(c.get(`${AM}.dtype`), `${AM}.dtype`));
      // megatron_workers.py: tf_config.bf16/fp16 from the dtype; Megatron's mixed-precision optimizer keeps fp32 main params
      c.d.set('training.master_weights', true);
    },
  },
  {
    keys: [
      `${OTC}.recompute_granularity`,
      `${OTC}.recompute_method`,
      `${OTC}.recompute_num_layers`,
      `${OTC}.recompute_modules`,
    ],
    to: 'training.recompute, recompute_layers, recompute_modules (megatron; null granularity: none)',
    apply: (c) => {
      if (!c.megatron) return;
      const gran = c.get(`${OTC}.recompute_granularity`);
      if (gran === null || gran === undefined) return c.d.set('training.recompute', 'none');
      const g = oneOf(gran, `${OTC}.recompute_granularity`, ['full', 'selective'] as const);
      c.d.set('training.recompute', g);
      if (g === 'selective') {
        const mods = c.get(`${OTC}.recompute_modules`);
        const list = Array.isArray(mods) ? mods : [mods];
        c.d.set(
          'training.recompute_modules',
          list.map((m) => oneOf(m, `${OTC}.recompute_modules`, RECOMPUTE_MODULES)),
        );
        return;
      }
      const method = c.get(`${OTC}.recompute_method`);
      const count = c.get(`${OTC}.recompute_num_layers`);
      if (method === null || method === undefined || count === null || count === undefined) return;
      const m = oneOf(method, `${OTC}.recompute_method`, ['uniform', 'block'] as const);
      const n = int(count, `${OTC}.recompute_num_layers`, 0);
      if (m === 'block') c.d.set('training.recompute_layers', n);
      else if (n > 1)
        c.d.skip(
          `${OTC}.recompute_method`,
          `uniform, recompute_num_layers ${n}: every layer recomputed (checkpoints every ${n} layers not modelled)`,
        );
    },
  },
  {
    keys: [`${OTC}.attention_backend`],
    to: '(flash, fused, auto: the fused attention llmem counts; others reported)',
    apply: (c) => {
      if (!c.megatron) return;
      const b = oneOf(c.get(`${OTC}.attention_backend`), `${OTC}.attention_backend`, [
        'flash',
        'fused',
        'unfused',
        'local',
        'auto',
      ] as const);
      if (b === 'unfused' || b === 'local')
        c.d.skip(`${OTC}.attention_backend`, `${b}: the attention scores it materialises are not modelled`);
    },
  },
  {
    keys: [`${OOC}.optimizer_cpu_offload`, `${OOC}.optimizer_offload_fraction`],
    to: 'parallel.offload_optimizer cpu (Megatron HybridDeviceOptimizer, fraction 1)',
    apply: (c) => {
      if (!c.megatron || !c.bool(`${OOC}.optimizer_cpu_offload`)) return;
      const fraction = num(c.get(`${OOC}.optimizer_offload_fraction`), `${OOC}.optimizer_offload_fraction`, 0);
      if (fraction === 1) c.d.set('parallel.offload_optimizer', 'cpu');
      else
        c.d.skip(
          `${OOC}.optimizer_offload_fraction`,
          `${fraction}: a part of the optimizer on the CPU is not modelled; not applied`,
        );
    },
  },
  {
    keys: [`${REFM}.param_offload`, ...LAYOUT.map((k) => `${REFM}.${k}`)],
    to: "rl.reference.param_offload (megatron); the reference's layout: the actor's, reported when it differs",
    apply: (c) => {
      if (!c.megatron) return;
      c.d.set('rl.reference.param_offload', c.bool(`${REFM}.param_offload`));
      for (const k of LAYOUT)
        if (c.get(`${REFM}.${k}`) !== c.get(`${AM}.${k}`))
          c.d.skip(
            `${REFM}.${k}`,
            `${String(c.get(`${REFM}.${k}`))}: llmem counts the reference with the actor's layout`,
          );
    },
  },
  {
    keys: [`${R}.n`],
    to: 'rl.group_size',
    apply: ({ d, get }) => d.set('rl.group_size', int(get(`${R}.n`), `${R}.n`)),
  },
  { keys: [`${R}.name`], to: 'rl.rollout.engine (vllm | sglang)', apply: engineName },
  {
    keys: ['actor_rollout_ref.hybrid_engine', `${R}.mode`],
    to: 'rl.rollout.placement colocated; rl.rollout.own_process (mode async: the engine is a server process)',
    apply: (c) => {
      if (!c.bool('actor_rollout_ref.hybrid_engine'))
        throw new ImportError(
          'actor_rollout_ref.hybrid_engine',
          'actor_rollout_ref.hybrid_engine: only true is supported (verl)',
        );
      c.d.set('rl.rollout.placement', 'colocated');
      const mode = oneOf(c.get(`${R}.mode`), `${R}.mode`, ['async', 'sync'] as const);
      c.d.set('rl.rollout.own_process', mode === 'async');
    },
  },
  {
    keys: [`${R}.tensor_model_parallel_size`],
    to: 'rl.rollout.tp',
    apply: ({ d, get }) =>
      d.set('rl.rollout.tp', int(get(`${R}.tensor_model_parallel_size`), `${R}.tensor_model_parallel_size`)),
  },
  {
    keys: [`${R}.gpu_memory_utilization`],
    to: 'rl.rollout.gpu_memory_utilization',
    apply: ({ d, get }) => {
      const u = num(get(`${R}.gpu_memory_utilization`), `${R}.gpu_memory_utilization`, 0.01);
      if (u > 1) throw new ImportError(`${R}.gpu_memory_utilization`, `${R}.gpu_memory_utilization: must be at most 1`);
      d.set('rl.rollout.gpu_memory_utilization', u);
    },
  },
  {
    keys: [`${R}.max_num_seqs`, `${R}.max_num_batched_tokens`, `${R}.max_model_len`],
    to: 'rl.rollout.max_num_seqs, max_num_batched_tokens, max_model_len',
    apply: ({ d, get }) => {
      d.set('rl.rollout.max_num_seqs', int(get(`${R}.max_num_seqs`), `${R}.max_num_seqs`));
      d.set(
        'rl.rollout.max_num_batched_tokens',
        int(get(`${R}.max_num_batched_tokens`), `${R}.max_num_batched_tokens`),
      );
      const len = get(`${R}.max_model_len`);
      if (len !== null && len !== undefined) d.set('rl.rollout.max_model_len', int(len, `${R}.max_model_len`));
    },
  },
  {
    keys: [`${R}.dtype`],
    to: 'rl.rollout.dtype',
    apply: ({ d, get }) => d.set('rl.rollout.dtype', verlDtype(get(`${R}.dtype`), `${R}.dtype`)),
  },
  {
    keys: [`${R}.enforce_eager`],
    to: 'rl.rollout.cuda_graphs (not enforce_eager)',
    apply: (c) => c.d.set('rl.rollout.cuda_graphs', !c.bool(`${R}.enforce_eager`)),
  },
  {
    keys: [`${R}.free_cache_engine`],
    to: 'rl.rollout.sleep (level2: vllm_async_server.py sleeps the hybrid engine at level 2; none)',
    apply: (c) => c.d.set('rl.rollout.sleep', c.bool(`${R}.free_cache_engine`) ? 'level2' : 'none'),
  },
  {
    keys: [`${R}.checkpoint_engine.update_weights_bucket_megabytes`],
    to: 'rl.weight_sync bucketed, rl.weight_sync_bucket_mib',
    apply: ({ d, get }) => {
      d.set('rl.weight_sync', 'bucketed');
      d.set(
        'rl.weight_sync_bucket_mib',
        num(
          get(`${R}.checkpoint_engine.update_weights_bucket_megabytes`),
          `${R}.checkpoint_engine.update_weights_bucket_megabytes`,
          1,
        ),
      );
    },
  },
  {
    keys: [`${A}.fsdp_config.param_offload`, `${A}.fsdp_config.optimizer_offload`],
    to: 'rl.actor.param_offload, rl.actor.optimizer_offload',
    fsdp: true,
    apply: (c) => {
      c.d.set('rl.actor.param_offload', c.bool(`${A}.fsdp_config.param_offload`));
      c.d.set('rl.actor.optimizer_offload', c.bool(`${A}.fsdp_config.optimizer_offload`));
    },
  },
  {
    keys: [`${A}.fsdp_config.offload_policy`],
    to: 'parallel.offload_params cpu, parallel.offload_optimizer cpu (FSDP2 CPUOffloadPolicy)',
    fsdp: true,
    apply: (c) => {
      if (!c.bool(`${A}.fsdp_config.offload_policy`)) return;
      if (c.d.get('parallel.engine') !== 'fsdp2') {
        c.d.skip(`${A}.fsdp_config.offload_policy`, 'read by the fsdp2 strategy only; not applied');
        return;
      }
      c.d.set('parallel.offload_params', 'cpu');
      c.d.set('parallel.offload_optimizer', 'cpu');
    },
  },
  {
    keys: [`${A}.fsdp_config.reshard_after_forward`],
    fsdp: true,
    to: 'parallel.reshard_after_forward',
    apply: (c) => c.d.set('parallel.reshard_after_forward', c.bool(`${A}.fsdp_config.reshard_after_forward`)),
  },
  {
    keys: [`${A}.fsdp_config.fsdp_size`],
    fsdp: true,
    to: 'parallel.fsdp_strategy hybrid_shard, parallel.fsdp_shard_size (0 < fsdp_size < GPUs)',
    apply: ({ d, get }) => {
      const size = int(get(`${A}.fsdp_config.fsdp_size`), `${A}.fsdp_config.fsdp_size`, -1);
      const gpus = d.get('parallel.gpus') as number;
      if (size === 0)
        throw new ImportError(`${A}.fsdp_config.fsdp_size`, `${A}.fsdp_config.fsdp_size: must be -1 or >= 1`);
      if (size > 0 && size < gpus) {
        d.set('parallel.fsdp_strategy', 'hybrid_shard');
        d.set('parallel.fsdp_shard_size', size);
      }
    },
  },
  {
    keys: [`${A}.fsdp_config.model_dtype`, `${A}.fsdp_config.dtype`],
    fsdp: true,
    to: 'training.master_weights (model_dtype fp32), training.dtype (the compute dtype); a 16-bit model_dtype: its gradients and AdamW states',
    apply: ({ d, get }) => {
      d.set('training.dtype', verlDtype(get(`${A}.fsdp_config.dtype`), `${A}.fsdp_config.dtype`));
      const model = verlDtype(get(`${A}.fsdp_config.model_dtype`), `${A}.fsdp_config.model_dtype`);
      d.set('training.master_weights', model === 'fp32');
      // the actor loads in model_dtype (verl workers/fsdp_workers.py _build_model_optimizer: torch_dtype); FSDP's flat
      // parameters are then 16-bit, their sharded gradients are cast back to the parameter dtype after the fp32
      // reduce-scatter, and torch.optim.AdamW makes its moments like the parameters (zeros_like)
      if (model !== 'fp32') {
        d.set('training.grad_dtype', model);
        d.set('training.optimizer_dtype', model);
      }
    },
  },
  {
    keys: [`${A}.ulysses_sequence_parallel_size`],
    to: 'parallel.cp (Ulysses: the sequence split over the group)',
    fsdp: true,
    apply: ({ d, get }) => {
      const sp = int(get(`${A}.ulysses_sequence_parallel_size`), `${A}.ulysses_sequence_parallel_size`);
      if (sp > 1) applyUlysses(d, `${A}.ulysses_sequence_parallel_size`, sp);
    },
  },
  {
    keys: [`${A}.entropy_coeff`, `${A}.calculate_entropy`],
    to: 'rl.entropy (entropy_coeff != 0 or calculate_entropy)',
    apply: (c) =>
      c.d.set(
        'rl.entropy',
        num(c.get(`${A}.entropy_coeff`), `${A}.entropy_coeff`, -Infinity) !== 0 || c.bool(`${A}.calculate_entropy`),
      ),
  },
  {
    // workers/actor/dp_actor.py @b178a3cd: entropy_from_logits_with_chunking picks the chunked kernel, and
    // use_torch_compile (default True) compiles it; unset, the verl profile's kernel stands
    keys: [`${A}.entropy_from_logits_with_chunking`, `${A}.use_torch_compile`],
    to: 'rl.entropy_kernel (compiled, or eager without torch.compile or without remove-padding)',
    fsdp: true,
    apply: (c) => {
      const chunked = `${A}.entropy_from_logits_with_chunking`,
        compile = `${A}.use_torch_compile`;
      if (!c.bool(`${M}.use_remove_padding`)) {
        // dp_actor.py _forward_micro_batch: without remove-padding the entropy is verl_F.entropy_from_logits, eager
        c.d.set('rl.entropy_kernel', 'eager');
        if (c.given(chunked) || c.given(compile))
          c.d.note(`${M}.use_remove_padding false: the entropy kernel is eager`);
        return;
      }
      if (c.given(compile)) c.d.set('rl.entropy_kernel', c.bool(compile) ? 'compiled' : 'eager');
      // utils/torch_functional.py entropy_from_logits_with_chunking: 2048 rows at a time in fp32, kept for the
      // update's backward; config v1's chunked kernel is TRL's (128 rows, no gradient)
      if (c.given(chunked) && c.bool(chunked))
        c.d.skip(
          chunked,
          "verl's chunked entropy (2048 rows at a time in fp32) is not modelled; counted as the whole-logits kernel",
        );
    },
  },
  {
    // vllm_async_server.py @b178a3cd: expert_parallel_size > 1 passes enable_expert_parallel (the experts split
    // over the engine's data-parallel ranks); pipeline_model_parallel_size splits its layers
    keys: [`${R}.expert_parallel_size`, `${R}.pipeline_model_parallel_size`],
    to: '(reported when above 1: the engine weights are counted whole on each of its TP ranks)',
    apply: ({ d, get }) => {
      for (const [k, what] of [
        [`${R}.expert_parallel_size`, 'the experts split over'],
        [`${R}.pipeline_model_parallel_size`, 'the layers split over'],
      ] as const) {
        const v = get(k);
        const n = v === null || v === undefined ? 1 : int(v, k);
        if (n > 1)
          d.skip(
            k,
            `${n}: ${what} ${n} engine ranks is not modelled; the engine's weights are counted whole on each of its TP ranks (above)`,
          );
        else d.ignore(k);
      }
    },
  },
  {
    keys: [`${A}.use_kl_loss`, 'algorithm.use_kl_in_reward'],
    to: 'rl.reference.enabled (a reference model with either)',
    apply: (c) => c.d.set('rl.reference.enabled', c.bool(`${A}.use_kl_loss`) || c.bool('algorithm.use_kl_in_reward')),
  },
  {
    keys: [`${REF}.fsdp_config.param_offload`],
    to: 'rl.reference.param_offload',
    fsdp: true,
    apply: (c) => c.d.set('rl.reference.param_offload', c.bool(`${REF}.fsdp_config.param_offload`)),
  },
  {
    keys: [`${M}.enable_gradient_checkpointing`, `${M}.enable_activation_offload`],
    to: 'training.recompute full | none; training.activation_offload',
    fsdp: true,
    apply: (c) => {
      c.d.set('training.recompute', c.bool(`${M}.enable_gradient_checkpointing`) ? 'full' : 'none');
      if (c.bool(`${M}.enable_activation_offload`)) c.d.set('training.activation_offload', true);
    },
  },
  {
    keys: [`${M}.lora_rank`, `${M}.target_modules`],
    to: 'training.finetune.{method,lora_rank,lora_targets}',
    apply: ({ d, get }) => {
      const rank = int(get(`${M}.lora_rank`), `${M}.lora_rank`, 0);
      if (rank === 0) {
        d.set('training.finetune.method', 'full');
        return;
      }
      d.set('training.finetune.method', 'lora');
      d.set('training.finetune.lora_rank', rank);
      applyLoraTargets(d, `${M}.target_modules`, get(`${M}.target_modules`) ?? 'all-linear');
    },
  },
  {
    // ppo_megatron_trainer.yaml @b178a3cd actor_rollout_ref.model.lora: Megatron-Bridge's LoRA (rank 0: none)
    keys: [`${M}.lora.rank`, `${M}.lora.target_modules`, `${M}.lora.type`, `${M}.lora.dropout`, `${M}.lora.alpha`],
    to: 'training.finetune.{method,lora_rank,lora_targets,lora_dropout} (megatron)',
    apply: (c) => {
      const { d, get } = c;
      if (!c.megatron) {
        if (c.given(`${M}.lora.rank`))
          d.skip(`${M}.lora.rank`, 'a Megatron worker key: the FSDP strategy reads model.lora_rank; not applied');
        return;
      }
      const rank = int(get(`${M}.lora.rank`), `${M}.lora.rank`, 0);
      if (rank === 0) return; // model.lora_rank (0 by default) decides
      const type = str(get(`${M}.lora.type`), `${M}.lora.type`);
      if (type === 'dora')
        d.skip(`${M}.lora.type`, 'DoRA (a magnitude vector and its norm per adapted linear) is counted as LoRA');
      d.set('training.finetune.method', 'lora');
      d.set('training.finetune.lora_rank', rank);
      applyLoraTargets(d, `${M}.lora.target_modules`, get(`${M}.lora.target_modules`) ?? 'all-linear');
      const dropout = get(`${M}.lora.dropout`);
      if (dropout !== null && dropout !== undefined)
        d.set('training.finetune.lora_dropout', num(dropout, `${M}.lora.dropout`));
    },
  },
  {
    // fsdp_workers.py @b178a3cd: freeze_vision_tower sets the whole visual module (tower and merger) not trainable
    keys: [`${A}.freeze_vision_tower`],
    to: 'model.vision.train none',
    apply: (c) => {
      if (!c.given(`${A}.freeze_vision_tower`) || !c.bool(`${A}.freeze_vision_tower`)) return;
      if (draftHasVision(c.d) === false)
        c.d.ignore(`${A}.freeze_vision_tower`); // "No vision tower found."
      else c.d.set('model.vision.train', 'none');
    },
  },
  {
    keys: [`${M}.use_liger`, `${M}.use_fused_kernels`],
    to: '(reported: not modelled)',
    apply: (c) => {
      if (c.bool(`${M}.use_liger`))
        c.d.skip(`${M}.use_liger`, "Liger's kernels (fewer saved activations) are not modelled; not applied");
      if (c.bool(`${M}.use_fused_kernels`))
        c.d.skip(
          `${M}.use_fused_kernels`,
          "verl's fused log-prob kernels (no full logits) are not modelled; the logits are counted; not applied",
        );
    },
  },
  {
    keys: [
      'critic.model.path',
      'critic.model.fsdp_config.param_offload',
      'critic.model.fsdp_config.optimizer_offload',
      'critic.megatron.param_offload',
      'critic.megatron.optimizer_offload',
      'critic.use_dynamic_bsz',
      'critic.ppo_max_token_len_per_gpu',
      'critic.ppo_micro_batch_size_per_gpu',
      'critic.ppo_micro_batch_size',
      'critic.model.enable_gradient_checkpointing',
      'critic.model.use_remove_padding',
    ],
    to: 'rl.critic.* (gae): its shape from critic.model.path, offloads, token budget',
    apply: critic,
  },
  {
    keys: [
      'reward_model.enable',
      'reward_model.model.path',
      'reward_model.model.fsdp_config.param_offload',
      'reward_model.use_reward_loop',
    ],
    to: 'rl.reward.enabled, rl.reward.{layers,hidden,heads,kv_heads,ffn_hidden}, rl.reward.param_offload',
    apply: (c) => {
      const on = c.bool('reward_model.enable');
      c.d.set('rl.reward.enabled', on);
      if (!on) return;
      if (c.given('reward_model.model.path'))
        applySecondModel(c.d, 'reward', 'reward_model.model.path', c.get('reward_model.model.path'));
      c.d.set('rl.reward.param_offload', c.bool('reward_model.model.fsdp_config.param_offload'));
      if (c.bool('reward_model.use_reward_loop'))
        c.d.skip(
          'reward_model.use_reward_loop',
          'the reward loop serves the reward model from an inference engine of its own (reward_model.rollout.*); counted as an FSDP forward on the actor GPUs',
        );
    },
  },
];

// verl keys with no effect on per-GPU memory (dotted paths): schedules, losses, sampling, data, logging, checkpoints.
const IGNORED = [
  /(^|\.)_target_$/,
  /(^|\.)profiler(\.|$)/,
  /^global_profiler\./,
  /\.optim\./,
  /\.checkpoint\./,
  /^hydra(\.|$)/,
  /^trainer\./,
  /^data\./,
  /^custom_reward_function\./,
  /^reward_manager\./,
  /^algorithm\./,
  /^ray_kwargs\./,
  /^transfer_queue\./,
  /^actor_rollout_ref\.nccl_timeout$/,
  // Megatron LoRA settings with no memory effect (ppo_megatron_trainer.yaml @b178a3cd model.lora)
  /^actor_rollout_ref\.model\.lora\.(merge|dropout_position|lora_A_init_method|lora_B_init_method|a2a_experimental|adapter_path)$/,
  /^actor_rollout_ref\.(actor|ref)\.(rollout_n|clip_ratio.*|tau_pos|tau_neg|policy_loss\..*|loss_agg_mode|loss_scale_factor|kl_loss_coef|kl_loss_type|ppo_epochs|shuffle|data_loader_seed|grad_clip|use_torch_compile|freeze_vision_tower|router_replay\..*|use_prefix_grouper|use_fused_kernels|use_remove_padding|strategy|entropy_from_logits_with_chunking|entropy_checkpointing|calculate_sum_pi_squared|sum_pi_squared_checkpointing|ulysses_sequence_parallel_size)$/,
  /^actor_rollout_ref\.(actor|ref)\.fsdp_config\.(wrap_policy\..*|forward_prefetch|use_orig_params|seed|full_determinism|entropy_from_logits_with_chunking|use_torch_compile|entropy_checkpointing|forward_only|strategy|ulysses_sequence_parallel_size)$/,
  /^actor_rollout_ref\.ref\.fsdp_config\.(optimizer_offload|offload_policy|reshard_after_forward|fsdp_size|model_dtype|dtype)$/,
  /^actor_rollout_ref\.rollout\.(temperature|top_k|top_p|do_sample|ignore_eos|cudagraph_capture_sizes|data_parallel_size|expert_parallel_size|pipeline_model_parallel_size|enable_chunked_prefill|enable_prefix_caching|logprobs_mode|scheduling_policy|load_format|disable_log_stats|over_sample_rate|multi_stage_wake_up|engine_kwargs\..*|val_kwargs\..*|multi_turn\..*|calculate_log_probs|agent\..*|trace\..*|skip_rollout|skip_dump_dir|skip_tokenizer_init|enable_rollout_routing_replay|prometheus\..*|quantization_config_file|mtp|layered_summon|prompt_length|response_length|checkpoint_engine\.(backend|engine_kwargs.*))$/,
  /^actor_rollout_ref\.model\.(hf_config_path|tokenizer_path|use_shm|trust_remote_code|custom_chat_template|external_lib|override_config.*|lora_alpha|exclude_modules|lora_adapter_path|fused_kernel_options\..*|mtp\..*)$/,
  /^critic\.(rollout_n|strategy|forward_max_token_len_per_gpu|forward_micro_batch_size.*|ppo_epochs|shuffle|data_loader_seed|cliprange_value|loss_agg_mode|grad_clip|ulysses_sequence_parallel_size|ppo_mini_batch_size)$/,
  /^critic\.model\.(tokenizer_path|override_config.*|external_lib|trust_remote_code|use_shm|lora_alpha|target_modules|enable_activation_offload|tiled_mlp\..*)$/,
  /^critic\.model\.fsdp_config\.(wrap_policy\..*|offload_policy|reshard_after_forward|fsdp_size|forward_prefetch|model_dtype|use_orig_params|seed|full_determinism|ulysses_sequence_parallel_size|entropy_from_logits_with_chunking|use_torch_compile|entropy_checkpointing|forward_only|strategy|dtype)$/,
  /^reward_model\.(enable_resource_pool|n_gpus_per_node|nnodes|strategy|micro_batch_size.*|max_length|use_dynamic_bsz|forward_max_token_len_per_gpu|reward_manager|reward_loop_.*|launch_reward_fn_async|sandbox_fusion\..*|ulysses_sequence_parallel_size|num_workers|rollout\..*)$/,
  /^(actor_rollout_ref\.(actor|ref)|critic|reward_model)\.megatron\.(use_mbridge|vanilla_mbridge|use_dist_checkpointing|dist_checkpointing_path|dist_checkpointing_prefix|seed|forward_only)$/,
  /^actor_rollout_ref\.ref\.megatron\.(grad_offload|optimizer_offload|sequence_parallel|use_distributed_optimizer|use_remove_padding|dtype|override_transformer_config\..*)$/,
  /^actor_rollout_ref\.actor\.optim\.override_optimizer_config\.overlap_cpu_optimizer_d2h_h2d$/,
  /^reward_model\.model\.(input_tokenizer|external_lib|trust_remote_code|override_config.*|use_shm|use_remove_padding|use_fused_kernels|fsdp_config\.(wrap_policy\..*|reshard_after_forward|fsdp_size|forward_prefetch))$/,
];

// Read and reported with a reason of their own.
const NOT_MODELLED: Record<string, string> = {
  [`${M}.tiled_mlp.enabled`]: 'the MLP computed in sequence tiles is not modelled',
  [`${M}.tiled_mlp.num_shards`]: 'the MLP computed in sequence tiles is not modelled',
  [`${R}.quantization`]: "the rollout engine's quantized weights are not modelled",
  'critic.model.lora_rank': 'a LoRA critic is not modelled: counted in full',
  // dp_actor.py: the entropy recomputed in the backward rather than its softmax kept
  [`${A}.entropy_checkpointing`]:
    "the entropy's recompute in the backward is not modelled (its tensors counted kept, above)",
  // FSDP1 forward_prefetch (fsdp_workers.py passes it to FSDP), as the accelerate importer reports it
  [`${A}.fsdp_config.forward_prefetch`]: 'forward prefetch (one more layer gathered in the forward) is not modelled',
  [`${REF}.fsdp_config.forward_prefetch`]: 'forward prefetch (one more layer gathered in the forward) is not modelled',
  'critic.model.fsdp_config.forward_prefetch':
    'forward prefetch (one more layer gathered in the forward) is not modelled',
};

// Megatron config overrides that may change memory and are not mapped: reported (checked before IGNORED).
const MEGATRON_NOT_MAPPED: [RegExp, string][] = [
  [/\.megatron\.override_transformer_config\./, 'a Megatron TransformerConfig override llmem does not map'],
  [/\.megatron\.override_ddp_config\./, 'a Megatron DDP config override (gradient buffers) llmem does not map'],
  [/\.megatron\.override_mcore_model_config\./, 'a Megatron model config override llmem does not map'],
  [
    /\.optim\.override_optimizer_config\.(?!overlap_cpu_optimizer_d2h_h2d$)/,
    'a Megatron optimizer config override llmem does not map',
  ],
  [/^critic\.megatron\./, "llmem counts the critic with the actor's layout"],
  [/^reward_model\.megatron\./, "llmem counts the reward model with the actor's layout and offload"],
];

interface Ctx {
  d: Draft;
  /** launched with --config-name=ppo_megatron_trainer (or a YAML over it): verl's Megatron workers */
  megatron: boolean;
  /** the value a key has: the file's (or an override's), else verl's default, interpolations resolved */
  get: (path: string) => Json | undefined;
  bool: (path: string) => boolean;
  /** whether the file (or an override) gives the key */
  given: (path: string) => boolean;
  /** keys whose value is a shell variable the script leaves unset, with the text */
  placeholders: Map<string, string>;
  options: { worldSize?: number };
}

function bool(v: Json | undefined, key: string): boolean {
  if (v === true || v === 'true' || v === 'True') return true;
  if (v === false || v === 'false' || v === 'False' || v === null) return false;
  throw new ImportError(key, `${key}: must be true or false, not ${JSON.stringify(v)}`);
}

const VERL_DTYPES = ['bfloat16', 'bf16', 'float16', 'fp16', 'half', 'float32', 'fp32', 'float'] as const;
const verlDtype = (v: Json | undefined, key: string) => torchDtype(v, key, VERL_DTYPES);

/**
 * A worker's data-parallel ranks: the GPUs over its Ulysses group under FSDP (fsdp_workers.py: "self.device_mesh.size()
 * // self.ulysses_sequence_parallel_size"), over TP x PP x CP under Megatron (megatron_workers.py:
 * mpu.get_data_parallel_world_size()) @b178a3cd.
 */
function dataRanks(c: Ctx, who: 'actor' | 'critic'): { ranks: number; group: number; what: string } {
  const degree = (key: string) => {
    const v = c.get(key);
    return v === null || v === undefined ? 1 : int(v, key);
  };
  const prefix = who === 'actor' ? AM : 'critic.megatron';
  const group = c.megatron
    ? degree(`${prefix}.tensor_model_parallel_size`) *
      degree(`${prefix}.pipeline_model_parallel_size`) *
      degree(`${prefix}.context_parallel_size`)
    : tokenSplit(c, who);
  const gpus = c.d.get('parallel.gpus') as number;
  const what = c.megatron ? 'TP x PP x CP' : 'Ulysses';
  return { ranks: Math.floor(gpus / group), group, what };
}

/** A per-GPU micro-batch: the _per_gpu key, else the global one floor-divided by the data-parallel ranks, as verl
 * normalises it (fsdp_workers.py and megatron_workers.py "//="). */
function perGpu(c: Ctx, globalKey: string): number | undefined {
  const own = c.get(`${globalKey}_per_gpu`);
  if (own !== null && own !== undefined) return int(own, `${globalKey}_per_gpu`);
  const global = c.get(globalKey);
  if (global === null || global === undefined) return undefined;
  const { ranks, group, what } = dataRanks(c, globalKey.startsWith('critic.') ? 'critic' : 'actor');
  const total = int(global, globalKey),
    micro = Math.floor(total / Math.max(ranks, 1));
  if (micro < 1)
    throw new ImportError(
      globalKey,
      `${globalKey}: ${total} over ${ranks} data-parallel ranks leaves no sequence a GPU (verl asserts it is above 0)`,
    );
  if (total % ranks !== 0)
    c.d.note(
      `${globalKey} ${total}: ${micro} a GPU, floor-divided by the ${ranks} data-parallel ranks${group > 1 ? ` (the GPUs over the ${what} group of ${group})` : ''}, as verl does`,
    );
  return micro;
}

function modelPath(c: Ctx): void {
  const raw = c.placeholders.get(`${M}.path`);
  if (raw !== undefined) {
    // "$HOME/models/Qwen2.5-3B-Instruct": the name part is the model; "${MODEL_PATH}" names none
    const name =
      raw
        .replace(/^["']|["']$/g, '')
        .split('/')
        .pop() ?? '';
    if (name.includes('$') || name === '')
      throw new ImportError(
        `${M}.path`,
        `${M}.path: ${raw} is a shell variable the script leaves unset; give the model id (a Hugging Face id the catalog matches) or choose model.preset`,
      );
    c.d.note(`${M}.path ${raw}: its directory is a shell variable; the model read from its name ${name}`);
    applyModelId(c.d, `${M}.path`, name);
    return;
  }
  if (c.given(`${M}.path`)) applyModelId(c.d, `${M}.path`, c.get(`${M}.path`));
  else c.d.note(`${M}.path not given: verl's placeholder default; the model preset is left as it is`);
}

/**
 * The ranks a micro-batch's tokens are split over: verl's token budgets are per GPU of a sequence-parallel group and
 * multiplied back by its size (workers/actor/dp_actor.py and critic/dp_critic.py: x ulysses_sequence_parallel_size;
 * actor/megatron_actor.py: x context_parallel_size @b178a3cd), so the budget a whole sequence must fit is that.
 */
function tokenSplit(c: Ctx, who: 'actor' | 'critic'): number {
  const key = c.megatron
    ? `${who === 'actor' ? AM : 'critic.megatron'}.context_parallel_size`
    : `${who === 'actor' ? A : 'critic'}.ulysses_sequence_parallel_size`;
  const v = c.get(key);
  return v === null || v === undefined ? 1 : int(v, key);
}

/** The model set so far is known to have no MoE layers (its preset's, or the config.json's model.moe). */
function denseModel(d: Draft): boolean {
  const m = draftModel(d);
  return m !== undefined && (m.moe === undefined || m.moe === null);
}

function engineName(c: Ctx): void {
  const name = c.get(`${R}.name`);
  if (name === '???' || name === undefined || name === null)
    throw new ImportError(`${R}.name`, `${R}.name: must be given (verl marks it mandatory: vllm or sglang)`);
  const e = oneOf(name, `${R}.name`, ['vllm', 'sglang', 'hf', 'trtllm'] as const);
  if (e === 'hf' || e === 'trtllm') {
    c.d.skip(
      `${R}.name`,
      `${e}: generation with ${e === 'hf' ? 'transformers' : 'TensorRT-LLM'} is not modelled; counted as vLLM`,
    );
    c.d.set('rl.rollout.engine', 'vllm');
  } else c.d.set('rl.rollout.engine', e);
}

function critic(c: Ctx): void {
  if (c.d.get('rl.algorithm') !== 'ppo') return;
  const { d } = c;
  if (c.given('critic.model.path')) applySecondModel(d, 'critic', 'critic.model.path', c.get('critic.model.path'));
  const offload = c.megatron ? 'critic.megatron' : 'critic.model.fsdp_config';
  d.set('rl.critic.param_offload', c.bool(`${offload}.param_offload`));
  d.set('rl.critic.optimizer_offload', c.bool(`${offload}.optimizer_offload`));
  if (c.bool('critic.use_dynamic_bsz'))
    d.set(
      'rl.critic.max_tokens_per_gpu',
      int(c.get('critic.ppo_max_token_len_per_gpu'), 'critic.ppo_max_token_len_per_gpu') * tokenSplit(c, 'critic'),
    );
  const micro = perGpu(c, 'critic.ppo_micro_batch_size');
  const actor = d.get('training.micro_batch');
  if (micro !== undefined && actor !== undefined && micro !== actor && !c.bool('critic.use_dynamic_bsz'))
    d.skip(
      'critic.ppo_micro_batch_size_per_gpu',
      `${micro}: llmem counts the critic with the actor's micro-batch (${String(actor)})`,
    );
  if (!c.megatron && c.bool('critic.model.enable_gradient_checkpointing') !== (d.get('training.recompute') === 'full'))
    d.skip('critic.model.enable_gradient_checkpointing', "llmem counts the critic with the actor's recompute setting");
  if (c.bool('critic.model.use_remove_padding') !== d.get('rl.remove_padding'))
    d.skip('critic.model.use_remove_padding', "llmem counts the critic with the actor's padding (rl.remove_padding)");
}

// ---------------------------------------------------------------- the source and its values

/** A YAML tree as dotted leaf paths (lists are leaves). */
function leaves(v: Json, prefix: string, out: Map<string, Json>): Map<string, Json> {
  if (isObject(v) && Object.keys(v).length)
    for (const [k, x] of Object.entries(v)) leaves(x, prefix ? `${prefix}.${k}` : k, out);
  else if (prefix) out.set(prefix, v);
  return out;
}

/** A Hydra override's value: YAML flow syntax (numbers, booleans, null, lists), else the text. */
function overrideValue(text: string, key: string): Json {
  if (text === '') return '';
  try {
    return parseYaml(text);
  } catch (e) {
    if (e instanceof YamlError)
      throw new ImportError(key, `${key}: ${JSON.stringify(text)} is not a value Hydra reads (${e.reason})`);
    throw e;
  }
}

const HYDRA_SECTIONS =
  /^(actor_rollout_ref|critic|reward_model|data|algorithm|trainer|custom_reward_function|reward_manager|global_profiler|ray_kwargs|transfer_queue)\./;

/** The key=value overrides of the script's verl.trainer.main_ppo command. */
function scriptSource(
  text: string,
  d: Draft,
): { src: Map<string, Json>; megatron: boolean; placeholders: Map<string, string> } {
  const isVerl = (w: string[]) => w.some((x) => /verl[./]trainer[./]main_\w+/.test(x));
  const { argv, run } = launchCommand(text, isVerl);
  // verl's SFT trainers (verl/trainer/fsdp_sft_trainer.py: config sft_trainer.yaml; sft_trainer.py, sft_trainer_ray.py:
  // sft_trainer_engine.yaml; volcengine/verl@b178a3cd) have a config of their own (model.partial_pretrain, data.*)
  const sft = /\bverl[./]trainer[./](fsdp_sft_trainer|sft_trainer(?:_ray)?)\b/.exec(text);
  if (!argv && sft)
    throw new ImportError(
      `verl.trainer.${sft[1]}`,
      `verl script: it runs verl's SFT trainer (verl.trainer.${sft[1]}, config ${sft[1] === 'fsdp_sft_trainer' ? 'sft_trainer.yaml' : 'sft_trainer_engine.yaml'}), which llmem does not read: the verl importer reads verl.trainer.main_ppo (python3 -m verl.trainer.main_ppo key=value ...) only; set the SFT run by hand (model.partial_pretrain: the model, data.micro_batch_size_per_gpu: training.micro_batch, data.max_length: training.seq_len)`,
    );
  if (!argv)
    throw new ImportError(
      '',
      'verl script: no command runs verl.trainer.main_ppo (python3 -m verl.trainer.main_ppo key=value ...)',
    );
  for (const n of run.notes) d.note(n);
  applyAllocConf(d, run.vars);
  const main = argv.find((x) => /verl[./]trainer[./]main_\w+/.test(x))!;
  if (!/main_ppo/.test(main))
    d.note(`${main}: read as main_ppo's config (the same actor_rollout_ref / critic / data keys)`);
  const src = new Map<string, Json>();
  const placeholders = new Map<string, string>();
  const args = argv.slice(argv.indexOf(main) + 1);
  let megatron = false;
  for (const [i, w] of args.entries()) {
    // Hydra's --config-name / -cn picks the trainer config (verl/trainer/main_ppo.py: config_name="ppo_trainer")
    const cn = /^(?:--config-name|-cn)(?:=(.*))?$/.exec(w);
    if (cn) {
      const name = (cn[1] ?? args[i + 1] ?? '').replace(/\.yaml$/, '');
      const allowed = ['ppo_trainer', 'ppo_megatron_trainer'];
      if (name === '') throw new ImportError('--config-name', '--config-name: needs a name');
      megatron = name === 'ppo_megatron_trainer' || (!allowed.includes(name) && /megatron/.test(name));
      // a config of the script's own --config-path (examples/sglang_multiturn/config/gsm8k_multiturn_grpo.yaml
      // @b178a3cd: defaults [ppo_trainer, _self_] and a few overrides): its keys are not in the script
      if (!allowed.includes(name))
        d.skip(
          '--config-name',
          `"${name}" is a config of the script's own folder, not given: read as the ${megatron ? 'ppo_megatron_trainer' : 'ppo_trainer'} it builds on, with the script's overrides (its own keys are not applied)`,
        );
      d.note(
        `--config-name ${name}: ${megatron ? "verl's Megatron workers (parallel.engine megatron)" : "verl's FSDP workers"}`,
      );
      continue;
    }
    if (/^(--config-path|--config-dir|-cp|-cd)(=|$)/.test(w)) {
      d.ignore(w);
      continue;
    }
    const m = /^(~|\+\+|\+)?([A-Za-z_][\w.@-]*)(?:=(.*))?$/s.exec(w);
    if (!m) continue;
    const key = m[2];
    if (m[1] === '~') {
      d.skip(w, 'a Hydra deletion: the key keeps its default here; not applied');
      continue;
    }
    if (m[3] === undefined) continue;
    if (!HYDRA_SECTIONS.test(key)) {
      if (key.startsWith('hydra.')) d.ignore(key);
      else d.skip(key, 'not a verl config key; not applied');
      continue;
    }
    if (m[3].includes('$')) {
      if (key === `${M}.path`) placeholders.set(key, m[3]);
      else if (IGNORED.some((re) => re.test(key))) d.ignore(key);
      else d.skip(key, `its value ${m[3]} is not set in the file; not applied`);
      continue;
    }
    src.set(key, overrideValue(m[3], key));
  }
  return { src, megatron, placeholders };
}

/** A YAML config: the whole tree (leaves); `defaults:` other than ppo_trainer and _self_ are reported. */
function yamlSource(y: Obj, d: Draft): { src: Map<string, Json>; megatron: boolean } {
  const src = leaves(y as Json, '', new Map());
  let megatron = false;
  if (Array.isArray(y.defaults)) {
    src.delete('defaults');
    for (const item of y.defaults) {
      if (item === 'ppo_megatron_trainer') megatron = true;
      if (item === '_self_' || item === 'ppo_trainer' || item === 'ppo_megatron_trainer') continue;
      d.skip(`defaults ${JSON.stringify(item)}`, 'another config group is not read: verl defaults stand for its keys');
    }
  } else if (src.get('actor_rollout_ref.actor.strategy') === 'megatron') {
    // a whole trainer config with no defaults list, as verl's own trainer/config/_generated_ppo_megatron_trainer.yaml
    // (ppo_megatron_trainer with its groups resolved): its actor is a Megatron one
    megatron = true;
  }
  return { src, megatron };
}

class Unresolved extends Error {}

/** The value a key takes: the source's, else the default; ${...} interpolations resolved. */
function resolver(src: Map<string, Json>, defaults: Record<string, Json>): (path: string) => Json | undefined {
  const raw = (path: string): Json | undefined => (src.has(path) ? src.get(path) : defaults[path]);
  const resolve = (path: string, depth: number): Json | undefined => {
    const v = raw(path);
    if (typeof v !== 'string' || !v.includes('${')) return v;
    if (depth > 16) throw new Unresolved(v);
    const m = /^\$\{(oc\.select:)?([^,}]+)(?:,(.*))?\}$/.exec(v.trim());
    if (!m) throw new Unresolved(v);
    let target = m[2].trim();
    if (target.startsWith('.')) target = `${path.slice(0, path.lastIndexOf('.'))}${target}`;
    if (/^[\w.]+$/.test(target) === false) throw new Unresolved(v);
    const got = resolve(target, depth + 1);
    if (got !== undefined) return got;
    if (m[1] && m[3] !== undefined) return overrideValue(m[3].trim(), path);
    throw new Unresolved(v);
  };
  return (path) => resolve(path, 0);
}

/** Import a verl config YAML or a main_ppo launch script. */
export function importVerl(text: string, options: { worldSize?: number } = {}): ImportResult {
  return guard(() => {
    const d = new Draft();
    d.stack('verl');
    d.note(
      "runtime.framework verl: its log-probabilities and the actor's loss use flash-attn's cross-entropy (the verl profile)",
    );
    const yaml = isYamlConfig(text);
    const source = yaml ? { ...yamlSource(yaml, d), placeholders: new Map<string, string>() } : scriptSource(text, d);
    const { src, megatron } = source;
    const defaults = megatron ? { ...DEFAULTS, ...MEGATRON_DEFAULTS } : DEFAULTS;
    const resolve = resolver(src, defaults);
    const unresolved = new Set<string>();
    const get = (path: string): Json | undefined => {
      try {
        return resolve(path);
      } catch (e) {
        if (!(e instanceof Unresolved)) throw e;
        if (!unresolved.has(path))
          d.skip(path, `the interpolation ${e.message} is not resolved here; verl's default used`);
        unresolved.add(path);
        const dflt = defaults[path];
        return typeof dflt === 'string' && dflt.includes('${') ? null : dflt;
      }
    };
    const c: Ctx = {
      d,
      megatron,
      placeholders: source.placeholders,
      get,
      bool: (path) => bool(get(path), path),
      given: (path) => src.has(path),
      options,
    };
    for (const m of MAPPING) {
      if (!(m.fsdp && megatron)) m.apply(c);
      else
        for (const k of m.keys.filter((k) => src.has(k)))
          d.skip(k, 'an FSDP worker key: the megatron strategy does not read it; not applied');
    }
    seqLenFromRl(d);
    d.set('rl.logits_response_only', false); // dp_actor.py: logits of every position, then the response slice
    const mapped = new Set(MAPPING.flatMap((m) => m.keys));
    for (const [path, v] of src) {
      if (mapped.has(path) || unresolved.has(path)) continue;
      if (path in NOT_MODELLED) {
        if (v !== false && v !== null && v !== 0) d.skip(path, `${NOT_MODELLED[path]}; not applied`);
        else d.ignore(path);
      } else if (MEGATRON_NOT_MAPPED.some(([re]) => re.test(path)))
        d.skip(path, `${MEGATRON_NOT_MAPPED.find(([re]) => re.test(path))![1]}; not applied`);
      else if (IGNORED.some((re) => re.test(path))) d.ignore(path);
      else d.skip(path, 'not a verl key llmem maps; not applied');
    }
    return d.result();
  });
}

/** The text as a verl YAML config (a mapping with actor_rollout_ref or Hydra defaults), else undefined (a script). */
function isYamlConfig(text: string): Obj | undefined {
  if (!/^(actor_rollout_ref|defaults|data|critic|algorithm|trainer|hydra|reward_model):/m.test(text)) return undefined;
  return parseYamlText(text, 'verl YAML');
}

/** The mapping table, for the documentation and the tests: verl key -> config v1 keys. */
export const VERL_MAPPING: readonly { keys: string[]; to: string }[] = MAPPING.map(({ keys, to }) => ({ keys, to }));
