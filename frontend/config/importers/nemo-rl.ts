// NeMo-RL YAML configs (NVIDIA-NeMo/RL @7ea279ab examples/configs/{grpo_math_1B,grpo_math_1B_megatron,sft,dpo}.yaml)
// -> config v1 and its rl section. The policy trains under DTensor (FSDP2, dtensor_cfg) or Megatron-Core (megatron_cfg);
// GRPO generates with vLLM, on the training GPUs (colocated) or its own. What each key means for memory, with the
// NeMo-RL file that shows it, is next to where it is read. A config that inherits (`defaults: base.yaml`) is read with
// its base given as the second file.
import type { Config, Json } from '../../../wasm/llmem.js';
import { getPath } from '../json.js';
import { merge } from '../resolve.js';
import {
  applyLoraTargets,
  applyModelId,
  bool,
  dtypeName,
  Draft,
  guard,
  ImportError,
  type ImportResult,
  int,
  isObject,
  num,
  type Obj,
  parseYamlText,
  str,
  torchDtype,
} from './common.js';

type Algorithm = 'grpo' | 'sft' | 'dpo';
// Top-level sections of other NeMo-RL programs: named when refused
const OTHER_PROGRAMS: Record<string, string> = {
  distillation: 'on-policy distillation (a teacher model beside the student)',
  rm: 'reward-model training',
  ppo: 'PPO (a value model)',
};

/** Import a NeMo-RL config; `also` is the base a `defaults:` key names. */
export function importNemoRl(
  text: string,
  options: { worldSize?: number; also?: string; bases?: string[] } = {},
): ImportResult {
  return guard(() => {
    const own = parseYamlText(text, 'NeMo-RL config');
    const y = resolveInterpolations(withBase(own, [options.also, ...(options.bases ?? [])]));
    const d = new Draft();
    d.stack('nemo');
    const algorithm = algorithmOf(y);
    d.note(
      `NeMo-RL ${algorithm.toUpperCase()} (the ${algorithm}: section; NVIDIA-NeMo/RL @7ea279ab): the nemo profile (Megatron-Core's rows under megatron_cfg)`,
    );
    const policy = section(y, 'policy', true)!;
    if (policy.model_name === undefined) throw new ImportError('policy.model_name', 'policy.model_name: absent');
    applyModelId(d, 'policy.model_name', policy.model_name);
    const overrides = policy.hf_config_overrides;
    if (isObject(overrides) && Object.keys(overrides).length > 0)
      d.skip('policy.hf_config_overrides', `${Object.keys(overrides).join(', ')}: model config overrides not applied`);
    precision(d, policy);
    const gen = algorithm === 'grpo' ? generation(policy) : undefined;
    const world = trainingGpus(d, y, gen, options.worldSize);
    const degrees = policyEngine(d, policy, algorithm === 'sft');
    const dp = world / (degrees.tp * degrees.pp * degrees.cp);
    if (!Number.isInteger(dp) || dp < 1)
      throw new ImportError(
        'cluster.gpus_per_node',
        `cluster: ${world} training GPUs is not a multiple of TP ${degrees.tp} x PP ${degrees.pp} x CP ${degrees.cp}`,
      );
    batches(d, y, policy, algorithm, dp);
    if (gen) rollout(d, y, gen);
    if (algorithm === 'dpo') d.set('rl.reference.swapped', true);
    reportSections(d, y, algorithm);
    reportPolicyKeys(d, policy);
    return d.result();
  });
}

/** A section of the config (an object); `required`: absent is an error naming it. */
function section(y: Obj, key: string, required = false): Obj | undefined {
  const v = y[key];
  if (isObject(v)) return v;
  if (required) throw new ImportError(key, `${key}: ${v === undefined ? 'absent' : 'must be a mapping'}`);
  return undefined;
}

/** `defaults: base.yaml` (nemo_rl/utils/config.py load_config_with_inheritance): the base's keys, the file's over them;
 * a base that inherits in turn takes the next file given (`files`: the second file, then the bases after it). */
function withBase(own: Obj, files: (string | undefined)[], depth = 0): Obj {
  const [base, ...rest] = files;
  if (own.defaults === undefined || own.defaults === null) {
    if (base !== undefined)
      throw new ImportError(
        depth === 0 ? 'second file' : 'bases',
        depth === 0
          ? 'the config names no base (defaults:), so the file given with it was not read'
          : `the base chain ends before the ${depth + 1}${depth === 1 ? 'nd' : 'th'} base given; drop the files after it`,
      );
    return own;
  }
  if (Array.isArray(own.defaults) && own.defaults.length > 1)
    throw new ImportError(
      'defaults',
      `defaults: ${own.defaults.map(String).join(', ')}: one base each is read; give the merged config`,
    );
  const name = Array.isArray(own.defaults) ? own.defaults.map(String).join(', ') : String(own.defaults);
  if (base === undefined)
    throw new ImportError(
      'defaults',
      depth === 0
        ? `defaults: the config inherits ${name}; give that file too (llmem import nemo_rl <file> <base> [its base ...], or drop both on the page)`
        : `defaults: the base given inherits ${name} in turn; give that file too, after it (llmem import nemo_rl <file> <base> <its base> ...)`,
    );
  if (depth > 8) throw new ImportError('defaults', 'defaults: a chain of more than 8 bases');
  const parent = withBase(parseYamlText(base, `the base config (${name})`), rest, depth + 1);
  const { defaults: _, ...ownKeys } = own;
  return merge(parent as Config, ownKeys as Config) as Obj;
}

/** OmegaConf interpolations the configs use: `${a.b}` (a value elsewhere) and `${mul:x, y}` (nemo_rl/utils/config.py
 * resolvers); one left unresolved stays a string, which the key reading it refuses by name. */
function resolveInterpolations(root: Obj): Obj {
  const resolve = (v: Json, depth: number): Json => {
    if (typeof v === 'string' && v.includes('${') && depth < 8) {
      let s = v;
      for (let i = 0; i < 16 && /\$\{[^${}]*\}/.test(s); i++)
        s = s.replace(/\$\{([^${}]*)\}/, (_, inner: string) => {
          const mul = /^mul:\s*([^,]+),\s*(.+)$/.exec(inner);
          if (mul) return String(Number(mul[1]) * Number(mul[2]));
          const got = getPath(root as Json, inner.trim());
          const r = got === undefined ? undefined : resolve(got, depth + 1);
          return r === undefined || r === null || typeof r === 'object' ? `?${inner}` : String(r);
        });
      if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
      if (s === 'true' || s === 'false') return s === 'true';
      return s;
    }
    if (Array.isArray(v)) return v.map((x) => resolve(x, depth));
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x as Json, depth)]));
    return v;
  };
  return resolve(root as Json, 0) as Obj;
}

/** The program the config drives: its grpo:, sft: or dpo: section (examples/run_{grpo_math,sft,dpo}.py). */
function algorithmOf(y: Obj): Algorithm {
  const found = (['grpo', 'sft', 'dpo'] as const).filter((k) => isObject(y[k]));
  for (const [k, what] of Object.entries(OTHER_PROGRAMS))
    if (isObject(y[k]) && !found.length)
      throw new ImportError(k, `${k}: NeMo-RL's ${what} is not modelled (grpo, sft and dpo configs are read)`);
  if (found.length > 1) throw new ImportError(found[1], `${found.join(' and ')}: one program's section is expected`);
  if (!found.length) throw new ImportError('', 'NeMo-RL config: no grpo:, sft: or dpo: section');
  return found[0];
}

/** policy.precision: the compute dtype. DTensor loads the weights in fp32 and casts them for compute (FSDP2
 * MixedPrecisionPolicy param_dtype = precision, reduce_dtype fp32: nemo_rl/models/automodel/setup.py): fp32 master
 * weights, gradients and AdamW states, as counted by default. */
function precision(d: Draft, policy: Obj): void {
  d.set('training.dtype', torchDtype(policy.precision ?? 'bfloat16', 'policy.precision'));
}

/** The policy's engine and its parallel degrees: dtensor_cfg (FSDP2) or megatron_cfg (Megatron-Core). */
function policyEngine(d: Draft, policy: Obj, rlFree: boolean): { tp: number; pp: number; cp: number } {
  const mega = section(policy, 'megatron_cfg');
  const dt = section(policy, 'dtensor_cfg');
  const on = (o: Obj | undefined, key: string) => o !== undefined && o.enabled !== undefined && bool(o.enabled, key);
  if (on(mega, 'policy.megatron_cfg.enabled')) return megatron(d, mega!, rlFree);
  if (on(dt, 'policy.dtensor_cfg.enabled')) return dtensor(d, dt!, policy);
  throw new ImportError(
    'policy.dtensor_cfg.enabled',
    'policy: neither dtensor_cfg.enabled nor megatron_cfg.enabled is true (one of them trains the policy)',
  );
}

const deg = (o: Obj, key: string, path: string) => (o[key] === undefined || o[key] === null ? 1 : int(o[key], path));

function dtensor(d: Draft, c: Obj, policy: Obj): { tp: number; pp: number; cp: number } {
  const P = 'policy.dtensor_cfg';
  d.set('parallel.engine', 'fsdp2');
  const tp = deg(c, 'tensor_parallel_size', `${P}.tensor_parallel_size`);
  const cp = deg(c, 'context_parallel_size', `${P}.context_parallel_size`);
  d.set('parallel.tp', tp);
  d.set('parallel.cp', cp);
  if (tp > 1) {
    d.set('parallel.sequence_parallel', c.sequence_parallel === true);
    // models/dtensor/parallelize.py: lm_head ColwiseParallel(output_layouts=Shard(-1)); the log-probs are taken over
    // the vocabulary shards (automodel/train.py, loss/utils.py): no gathered logits
    d.set('training.loss', 'loss_parallel');
  }
  // automodel/setup.py: expert_parallel_size shards the experts (MoE models)
  if (c.expert_parallel_size !== undefined && c.expert_parallel_size !== null)
    d.set('parallel.ep', int(c.expert_parallel_size, `${P}.expert_parallel_size`));
  // nemo_rl/models/policy/lm_policy.py: _v2 absent means the v1 worker, whose log-prob pass gathers the whole model
  // (dtensor_policy_worker.py unshard_fsdp2_model)
  if (c._v2 !== true)
    d.skip(
      `${P}._v2`,
      'absent or false: the v1 DTensor worker, whose log-prob passes gather the whole model onto each GPU; that copy is not counted',
    );
  if (c.cpu_offload !== undefined && bool(c.cpu_offload, `${P}.cpu_offload`)) {
    // automodel/setup.py: FSDP2 CPUOffloadPolicy: sharded parameters, gradients and optimizer states on the host
    d.set('parallel.offload_params', 'cpu');
    d.set('parallel.offload_optimizer', 'cpu');
  }
  if (c.activation_checkpointing !== undefined && bool(c.activation_checkpointing, `${P}.activation_checkpointing`)) {
    // parallelize.py: checkpoint wrappers on each layer's self_attn, mlp and both layer norms (each keeps its input)
    d.set('training.recompute', 'selective');
    d.set('training.recompute_modules', ['core_attn', 'mlp', 'layernorm']);
    d.note(
      `${P}.activation_checkpointing: self_attn, mlp and both layer norms of each layer are checkpointed, counted as selective recompute of the attention core, the MLP and the norms (it keeps the q, k, v inputs the whole-module checkpoint drops: an over-estimate)`,
    );
  }
  const replicate = c.dp_replicate_size;
  if (replicate !== undefined && replicate !== null && int(replicate, `${P}.dp_replicate_size`) > 1)
    d.skip(`${P}.dp_replicate_size`, 'HSDP (sharding within each replica) is not applied: counted as full sharding');
  const lora = section(c, 'lora_cfg');
  if (lora && lora.enabled === true) {
    // automodel/setup.py: the model loads in fp32, LoRA or not: a frozen fp32 base beside the adapters
    d.set('training.finetune.method', 'lora');
    d.set('training.finetune.base_dtype', 'fp32');
    if (lora.dim !== undefined) d.set('training.finetune.lora_rank', int(lora.dim, `${P}.lora_cfg.dim`));
    if (lora.dropout !== undefined && lora.dropout !== null)
      d.set('training.finetune.lora_dropout', num(lora.dropout, `${P}.lora_cfg.dropout`));
    if (lora.match_all_linear === false) {
      const targets = Array.isArray(lora.target_modules) ? lora.target_modules.map(String) : [];
      if (targets.length) applyLoraTargets(d, `${P}.lora_cfg.target_modules`, targets);
    }
    d.note(`${P}.lora_cfg: LoRA over an fp32 base (the policy loads in fp32)`);
  }
  optimizer(d, policy);
  return { tp, pp: 1, cp };
}

/** policy.optimizer (DTensor): torch AdamW over the trainable parameters (automodel/setup.py); kwargs foreach / fused
 * pick the kernel (SFT's and DPO's configs turn both off). */
function optimizer(d: Draft, policy: Obj): void {
  const o = section(policy, 'optimizer');
  if (!o) return;
  const name = o.name === undefined ? 'torch.optim.AdamW' : str(o.name, 'policy.optimizer.name');
  if (!/^torch\.optim\.AdamW?$/.test(name)) {
    d.skip('policy.optimizer.name', `${name}: counted as AdamW with fp32 states`);
    return;
  }
  const kw = section(o, 'kwargs') ?? {};
  const fused = kw.fused !== undefined && kw.fused !== null && bool(kw.fused, 'policy.optimizer.kwargs.fused');
  const foreach =
    kw.foreach === undefined || kw.foreach === null || bool(kw.foreach, 'policy.optimizer.kwargs.foreach');
  d.set('training.optimizer_impl', fused ? 'fused' : foreach ? 'foreach' : 'for_loop');
}

function megatron(d: Draft, c: Obj, rlFree: boolean): { tp: number; pp: number; cp: number } {
  const P = 'policy.megatron_cfg';
  d.set('parallel.engine', 'megatron');
  const tp = deg(c, 'tensor_model_parallel_size', `${P}.tensor_model_parallel_size`);
  const pp = deg(c, 'pipeline_model_parallel_size', `${P}.pipeline_model_parallel_size`);
  const cp = deg(c, 'context_parallel_size', `${P}.context_parallel_size`);
  d.set('parallel.tp', tp);
  d.set('parallel.pp', pp);
  if (pp > 1 && !rlFree)
    throw new ImportError(
      `${P}.pipeline_model_parallel_size`,
      `${P}.pipeline_model_parallel_size: ${pp}: llmem's RL phases are walked without pipeline stages (SFT configs are read with them)`,
    );
  d.set('parallel.cp', cp);
  d.set('parallel.ep', deg(c, 'expert_model_parallel_size', `${P}.expert_model_parallel_size`));
  d.set('parallel.etp', deg(c, 'expert_tensor_parallel_size', `${P}.expert_tensor_parallel_size`));
  if (tp > 1) d.set('parallel.sequence_parallel', c.sequence_parallel === true);
  for (const [key, to] of [
    ['num_layers_in_first_pipeline_stage', 'parallel.pp_first_stage_layers'],
    ['num_layers_in_last_pipeline_stage', 'parallel.pp_last_stage_layers'],
  ] as const)
    if (c[key] !== undefined && c[key] !== null) d.set(to, int(c[key], `${P}.${key}`));
  // nemo_rl/models/megatron/setup.py: the optimizer dict is Megatron-Core's OptimizerConfig, the DDP dict its
  // DistributedDataParallelConfig (the gradient buffer in fp32 only with grad_reduce_in_fp32)
  const o = section(c, 'optimizer') ?? {};
  d.set(
    'parallel.distributed_optimizer',
    o.use_distributed_optimizer === undefined ||
      bool(o.use_distributed_optimizer, `${P}.optimizer.use_distributed_optimizer`),
  );
  if (o.optimizer_cpu_offload === true) {
    const fraction =
      o.optimizer_offload_fraction === undefined
        ? 0
        : num(o.optimizer_offload_fraction, `${P}.optimizer.optimizer_offload_fraction`);
    if (fraction >= 1) d.set('parallel.offload_optimizer', 'cpu');
    else
      d.skip(
        `${P}.optimizer.optimizer_cpu_offload`,
        `a fraction of ${fraction} of the states on the host is not modelled`,
      );
  }
  const ddp = section(c, 'distributed_data_parallel_config') ?? {};
  const fp32Grads = ddp.grad_reduce_in_fp32 === true;
  if (d.get('training.dtype') !== 'fp32')
    d.set('training.grad_dtype', fp32Grads ? 'fp32' : (d.get('training.dtype') as Json));
  if (ddp.use_custom_fsdp === true)
    d.skip(
      `${P}.distributed_data_parallel_config.use_custom_fsdp`,
      'Megatron-FSDP is not modelled: counted as the distributed optimizer',
    );
  if (c.activation_checkpointing === true) {
    const g =
      c.recompute_granularity === undefined || c.recompute_granularity === null
        ? 'full'
        : str(c.recompute_granularity, `${P}.recompute_granularity`);
    d.set('training.recompute', g === 'selective' ? 'selective' : 'full');
    if (g === 'selective' && Array.isArray(c.recompute_modules) && c.recompute_modules.length)
      d.set('training.recompute_modules', c.recompute_modules.map(String));
  }
  if (isObject(c.peft) && (c.peft as Obj).enabled === true)
    d.skip(`${P}.peft`, 'Megatron PEFT is not modelled: counted as full fine-tuning');
  if (c.fine_grained_activation_offloading === true)
    d.skip(`${P}.fine_grained_activation_offloading`, "offloading named modules' activations is not modelled");
  if (c.mtp_num_layers !== undefined && c.mtp_num_layers !== null && c.mtp_num_layers !== 0)
    d.skip(`${P}.mtp_num_layers`, "the MTP modules are the model's (set model.mtp_layers)");
  return { tp, pp, cp };
}

type Generation = { colocated: boolean; vllm: Obj; kwargs: Obj; gpus?: number };

/** policy.generation: vLLM, on the training GPUs unless colocated.enabled is false (then on resources of its own). */
function generation(policy: Obj): Generation {
  const g = section(policy, 'generation', false) ?? {};
  const backend = g.backend === undefined ? 'vllm' : str(g.backend, 'policy.generation.backend');
  if (backend !== 'vllm')
    throw new ImportError('policy.generation.backend', `policy.generation.backend: ${backend} (llmem models vllm)`);
  const co = section(g, 'colocated') ?? {};
  const colocated = co.enabled === undefined || bool(co.enabled, 'policy.generation.colocated.enabled');
  let gpus: number | undefined;
  if (!colocated) {
    const r = section(co, 'resources') ?? {};
    const perNode =
      r.gpus_per_node === undefined || r.gpus_per_node === null
        ? undefined
        : int(r.gpus_per_node, 'policy.generation.colocated.resources.gpus_per_node');
    const nodes =
      r.num_nodes === undefined || r.num_nodes === null
        ? undefined
        : int(r.num_nodes, 'policy.generation.colocated.resources.num_nodes');
    gpus = nodes !== undefined ? nodes * (perNode ?? 0) : perNode;
  }
  return { colocated, vllm: section(g, 'vllm_cfg') ?? {}, kwargs: section(g, 'vllm_kwargs') ?? {}, gpus };
}

/** cluster.gpus_per_node x num_nodes; non-colocated generation takes its GPUs first (nemo_rl/algorithms/grpo.py). */
function trainingGpus(d: Draft, y: Obj, gen: Generation | undefined, given: number | undefined): number {
  const c = section(y, 'cluster') ?? {};
  const perNode = c.gpus_per_node === undefined ? 1 : int(c.gpus_per_node, 'cluster.gpus_per_node');
  const nodes = c.num_nodes === undefined ? 1 : int(c.num_nodes, 'cluster.num_nodes');
  let total = perNode * nodes;
  if (given !== undefined && given !== total) {
    d.note(`cluster: ${perNode} x ${nodes} GPUs overridden by the world size given, ${given}`);
    total = given;
  }
  let training = total;
  if (gen && !gen.colocated) {
    if (gen.gpus === undefined)
      throw new ImportError(
        'policy.generation.colocated.resources',
        'policy.generation.colocated.resources: non-colocated generation needs its GPUs (gpus_per_node, num_nodes)',
      );
    training = total - gen.gpus;
    if (training < 1)
      throw new ImportError(
        'policy.generation.colocated.resources',
        `generation takes ${gen.gpus} of the ${total} GPUs`,
      );
    d.note(`generation on ${gen.gpus} GPUs of its own: ${training} of the ${total} train`);
  }
  d.set('parallel.gpus', training);
  d.set('parallel.gpus_per_node', Math.min(perNode, training));
  return training;
}

/** The batches: train_global_batch_size samples an optimizer step, each data-parallel rank running
 * (global / DP) / train_micro_batch_size micro-batches (dtensor_policy_worker_v2.py train); GRPO's samples are
 * num_prompts_per_step x num_generations_per_prompt; DPO doubles both batches for chosen and rejected (dpo.py). */
function batches(d: Draft, y: Obj, policy: Obj, algorithm: Algorithm, dp: number): void {
  const P = 'policy';
  const gbs = int(policy.train_global_batch_size, `${P}.train_global_batch_size`);
  const micro = int(policy.train_micro_batch_size, `${P}.train_micro_batch_size`);
  const total = int(policy.max_total_sequence_length, `${P}.max_total_sequence_length`, 2);
  d.set('training.micro_batch', micro);
  const packing = section(policy, 'sequence_packing');
  const dynamic = section(policy, 'dynamic_batching');
  const packed = packing?.enabled === true;
  const byTokens = packed || dynamic?.enabled === true;
  const tokens = (o: Obj | undefined, key: string) =>
    o && o[key] !== undefined && o[key] !== null
      ? int(o[key], `${P}.${o === packing ? 'sequence_packing' : 'dynamic_batching'}.${key}`)
      : undefined;
  if (algorithm === 'sft') {
    const steps = gbs / (micro * dp);
    if (!Number.isInteger(steps))
      throw new ImportError(
        `${P}.train_global_batch_size`,
        `${P}.train_global_batch_size: ${gbs} is not micro ${micro} x DP ${dp} x a whole number`,
      );
    d.set('training.grad_accum', steps);
    const mb = byTokens ? tokens(packed ? packing : dynamic, 'train_mb_tokens') : undefined;
    if (mb !== undefined) {
      // a packed micro-batch is one row of train_mb_tokens (nemo_rl/models/automodel/data.py pads it to that)
      d.set('training.micro_batch', 1);
      d.set('training.seq_len', mb);
      d.note(
        `${packed ? 'sequence_packing' : 'dynamic_batching'}: micro-batches of ${mb} tokens (train_mb_tokens), counted as one sequence of that length`,
      );
    } else {
      d.set('training.seq_len', total);
      d.note(`max_total_sequence_length ${total}: each batch padded to its longest sample; the worst case`);
    }
    return;
  }
  d.set('rl.algorithm', algorithm);
  d.set('rl.logits_response_only', false); // nemo_rl/distributed/model_utils.py: log-probs of every position
  if (algorithm === 'dpo') {
    // dpo.py: chosen and rejected in one micro-batch; llmem's DPO counts pairs and runs both
    const pairs = gbs;
    d.set('rl.rollout_batch', pairs);
    d.set('rl.mini_batch', pairs);
    d.set('rl.prompt_len', Math.floor(total / 2));
    d.set('rl.response_len', total - Math.floor(total / 2));
    d.set('rl.reference.enabled', true);
    d.note(
      `dpo: ${gbs} pairs a step, ${micro} a micro-batch (chosen and rejected in one); max_total_sequence_length ${total} the pair's longest (prompt + response)`,
    );
    return;
  }
  const grpo = section(y, 'grpo', true)!;
  const prompts = int(grpo.num_prompts_per_step, 'grpo.num_prompts_per_step');
  const G = int(grpo.num_generations_per_prompt, 'grpo.num_generations_per_prompt');
  d.set('rl.rollout_batch', prompts);
  d.set('rl.group_size', G);
  if (gbs % G !== 0)
    throw new ImportError(
      `${P}.train_global_batch_size`,
      `${P}.train_global_batch_size: ${gbs} is not a whole number of groups of ${G}`,
    );
  d.set('rl.mini_batch', gbs / G);
  if (policy.logprob_batch_size !== undefined && policy.logprob_batch_size !== null)
    d.set('rl.logprob_micro_batch', int(policy.logprob_batch_size, `${P}.logprob_batch_size`));
  const prompt = Math.min(512, Math.floor(total / 2));
  d.set('rl.prompt_len', prompt);
  d.set('rl.response_len', total - prompt);
  d.note(
    `max_total_sequence_length ${total}: prompt and response together (the vLLM max_model_len); split as rl.prompt_len ${prompt} + rl.response_len ${total - prompt} (the sum is what the passes and the cache follow)`,
  );
  if (byTokens) {
    const o = packed ? packing : dynamic;
    d.set('rl.remove_padding', packed);
    const train = tokens(o, 'train_mb_tokens');
    const lp = tokens(o, 'logprob_mb_tokens');
    if (train !== undefined) d.set('rl.max_tokens_per_gpu', train);
    if (lp !== undefined) d.set('rl.logprob_max_tokens_per_gpu', lp);
  }
  // loss_fn.reference_policy_kl_penalty > 0 keeps a reference policy (grpo.py): DTensor holds it as a host copy of
  // the sharded state swapped into the model for its pass (automodel/setup.py, dtensor_policy_worker_v2.py)
  const loss = section(y, 'loss_fn') ?? {};
  const kl =
    loss.reference_policy_kl_penalty === undefined
      ? 0
      : num(loss.reference_policy_kl_penalty, 'loss_fn.reference_policy_kl_penalty');
  d.set('rl.reference.enabled', kl > 0);
  if (kl > 0) {
    d.set('rl.reference.swapped', true);
    d.note(
      'loss_fn.reference_policy_kl_penalty > 0: a reference policy, its sharded weights a host copy swapped into the policy for its pass (rl.reference.swapped)',
    );
  }
}

// vllm_cfg keys init_fp8 reads beside precision fp8 (quantization/fp8.py @7ea279ab)
const FP8_SIDE_KEYS = [
  'num_first_layers_in_bf16',
  'num_last_layers_in_bf16',
  'quantization_ignored_layer_kws',
  'is_mx',
];

/** vLLM (policy.generation.vllm_cfg) and what colocation parks between phases: the policy's optimizer before the weight
 * refit, its parameters after, the engine asleep (level 1) after generating (grpo.py refit_policy_generation;
 * vllm_worker.py sleep(level=1)). */
function rollout(d: Draft, y: Obj, gen: Generation): void {
  const V = 'policy.generation.vllm_cfg';
  d.set('rl.rollout.engine', 'vllm');
  d.set('rl.rollout.placement', gen.colocated ? 'colocated' : 'separate');
  const v = gen.vllm;
  if (v.tensor_parallel_size !== undefined)
    d.set('rl.rollout.tp', int(v.tensor_parallel_size, `${V}.tensor_parallel_size`));
  if (v.gpu_memory_utilization !== undefined)
    d.set('rl.rollout.gpu_memory_utilization', num(v.gpu_memory_utilization, `${V}.gpu_memory_utilization`));
  if (v.max_model_len !== undefined && v.max_model_len !== null)
    d.set('rl.rollout.max_model_len', int(v.max_model_len, `${V}.max_model_len`));
  if (v.enforce_eager !== undefined) d.set('rl.rollout.cuda_graphs', !bool(v.enforce_eager, `${V}.enforce_eager`));
  // "fp8": vLLM loads the linears in fp8 (nemo_rl/models/generation/vllm/vllm_worker.py init_fp8 @7ea279ab), its
  // activations in bf16 (core/rl.c engine_size)
  if (v.precision === 'fp8') {
    d.set('rl.rollout.dtype', 'fp8');
    // quantization/fp8.py init_fp8 @7ea279ab: these layers stay in bf16 (ignored_layers); is_mx: MXFP8 blocks
    for (const k of FP8_SIDE_KEYS) {
      const x = v[k];
      if (x === undefined) continue;
      if (x === null || x === false || x === 0 || (Array.isArray(x) && x.length === 0)) d.ignore(`${V}.${k}`);
      else
        d.skip(
          `${V}.${k}`,
          k === 'is_mx'
            ? "MXFP8's scales (one per 32 values) are not modelled; the weights counted in fp8"
            : 'the layers fp8 leaves in bf16 are not modelled: counted in fp8 (under by their second byte)',
        );
    }
  } else {
    if (v.precision !== undefined && v.precision !== null && v.precision !== 'auto')
      d.set('rl.rollout.dtype', torchDtype(v.precision, `${V}.precision`));
    for (const k of FP8_SIDE_KEYS) if (v[k] !== undefined) d.ignore(`${V}.${k}`); // read by init_fp8 only
  }
  if (typeof v.kv_cache_dtype === 'string' && v.kv_cache_dtype !== 'auto') {
    const kv = v.kv_cache_dtype.startsWith('fp8') ? 'fp8' : dtypeName(v.kv_cache_dtype);
    if (kv) d.set('rl.rollout.kv_cache_dtype', kv);
    else d.skip(`${V}.kv_cache_dtype`, `${v.kv_cache_dtype}: not a cache dtype llmem counts; the model dtype's`);
  }
  const kw = gen.kwargs;
  const K = 'policy.generation.vllm_kwargs';
  if (kw.max_num_seqs !== undefined) d.set('rl.rollout.max_num_seqs', int(kw.max_num_seqs, `${K}.max_num_seqs`));
  if (kw.max_num_batched_tokens !== undefined)
    d.set('rl.rollout.max_num_batched_tokens', int(kw.max_num_batched_tokens, `${K}.max_num_batched_tokens`));
  if (kw.kv_cache_memory_bytes !== undefined && kw.kv_cache_memory_bytes !== null)
    d.skip(
      `${K}.kv_cache_memory_bytes`,
      'a fixed KV cache size is not modelled: the cache counted from gpu_memory_utilization',
    );
  if (
    v.pipeline_parallel_size !== undefined &&
    v.pipeline_parallel_size !== null &&
    int(v.pipeline_parallel_size, `${V}.pipeline_parallel_size`) > 1
  )
    d.skip(`${V}.pipeline_parallel_size`, 'vLLM pipeline parallelism is not modelled (tensor parallelism is)');
  if (gen.colocated) {
    d.set('rl.actor.param_offload', true);
    d.set('rl.actor.optimizer_offload', true);
    d.set('rl.rollout.sleep', 'level1');
    d.note(
      'colocated generation: the policy offloads its optimizer before the weight refit and its parameters after, vLLM sleeps (level 1) after generating (grpo.py, vllm_worker.py)',
    );
  }
  const asyncGrpo = section(section(y, 'grpo') ?? {}, 'async_grpo');
  if (asyncGrpo?.enabled === true)
    d.skip('grpo.async_grpo.enabled', 'asynchronous GRPO (generation beside training) is not modelled');
}

// Sections and keys read for no effect on per-GPU memory (schedules, data, logging, evaluation, sampling, rewards)
const NO_EFFECT_SECTIONS = /^(checkpointing|data|env|logger|data_plane|reward_penalties|loss_fn|grpo|sft|dpo)$/;

/** Keys the importer did not read, where they would matter: on_policy_distillation switched on. */
function reportSections(d: Draft, y: Obj, algorithm: Algorithm): void {
  const opd = section(y, 'on_policy_distillation');
  if (opd && opd.enabled === true)
    d.skip('on_policy_distillation.enabled', 'a teacher model beside the policy is not modelled');
  const read = Object.keys(y).filter(
    (k) => NO_EFFECT_SECTIONS.test(k) && k !== algorithm && !(k === 'loss_fn' && algorithm === 'grpo'),
  );
  if (read.length) d.ignore(read.join(', '));
}

// policy keys read above, by dotted path under policy
const READ =
  /^(model_name|hf_config_overrides\..*|precision|train_global_batch_size|train_micro_batch_size|logprob_batch_size|max_total_sequence_length|optimizer\.(name|kwargs\.(foreach|fused))|sequence_packing\.(enabled|train_mb_tokens|logprob_mb_tokens)|dynamic_batching\.(enabled|train_mb_tokens|logprob_mb_tokens)|dtensor_cfg\.(enabled|_v2|tensor_parallel_size|context_parallel_size|expert_parallel_size|sequence_parallel|cpu_offload|activation_checkpointing|dp_replicate_size|lora_cfg\.(enabled|dim|dropout|match_all_linear|target_modules))|megatron_cfg\.(enabled|tensor_model_parallel_size|pipeline_model_parallel_size|context_parallel_size|expert_model_parallel_size|expert_tensor_parallel_size|sequence_parallel|num_layers_in_(first|last)_pipeline_stage|optimizer\.(use_distributed_optimizer|optimizer_cpu_offload|optimizer_offload_fraction)|distributed_data_parallel_config\.(grad_reduce_in_fp32|use_custom_fsdp)|activation_checkpointing|recompute_granularity|recompute_modules|peft\..*|fine_grained_activation_offloading|mtp_num_layers)|generation\.(backend|colocated\..*|vllm_cfg\.(tensor_parallel_size|gpu_memory_utilization|max_model_len|enforce_eager|pipeline_parallel_size|precision|kv_cache_dtype|num_first_layers_in_bf16|num_last_layers_in_bf16|quantization_ignored_layer_kws|is_mx)|vllm_kwargs\.(max_num_seqs|max_num_batched_tokens|kv_cache_memory_bytes)))$/;
// policy keys with no effect on per-GPU memory: tokenizer, schedules, sampling, logging, fusions, checkpoint conversion,
// MoE router numerics, the refit transport, the optimizer's hyper-parameters
const NO_EFFECT =
  /^(tokenizer\..*|tokenizer|generation_batch_size|make_sequence_length_divisible_by|max_grad_norm|scheduler(\..*)?|offload_optimizer_for_logprob|optimizer\.kwargs\.(lr|weight_decay|betas|eps|.*)|sequence_packing\.(algorithm|microbatch_order|sequence_length_round)|dynamic_batching\.sequence_length_round|dtensor_cfg\.(env_vars(\..*)?|custom_parallel_plan|automodel_kwargs\.(?!use_liger_kernel$).*|clear_cache_every_n_steps|lora_cfg\..*)|megatron_cfg\.(converter_type|checkpoint(\..*)?|force_reconvert_from_hf|empty_unused_memory_level|pipeline_dtype|freeze_moe_router|moe_router_.*|moe_permute_fusion|apply_rope_fusion|bias_activation_fusion|moe_per_layer_logging|moe_enable_deepep|moe_token_dispatcher_type|moe_shared_expert_overlap|use_gloo_process_groups|gradient_accumulation_fusion|use_fused_weighted_squared_relu|env_vars(\..*)?|scheduler\..*|optimizer\..*|distributed_data_parallel_config\..*|offload_modules|cuda_graph_warmup_steps|cuda_graph_modules|mtp_(loss_scaling_factor|use_repeated_layer|detach_heads)|fused_linear_logprobs_chunk_size)|generation\.(port_range_.*|max_new_tokens|temperature|top_p|top_k|val_.*|stop_.*|refit_.*|real_quant_export_cpu_offload|mcore_generation_config(\..*)?|vllm_kwargs(\..*)?|vllm_cfg\..*)|draft(\..*)?)$/;

/** Every policy key: read above, of no effect (one line), unset (null, false, empty), or reported as not applied. */
function reportPolicyKeys(d: Draft, policy: Obj): void {
  const leaves: [string, Json][] = [];
  const walk = (o: Obj, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (isObject(v) && Object.keys(v).length > 0) walk(v as Obj, path);
      else leaves.push([path, v as Json]);
    }
  };
  walk(policy, '');
  const quiet: string[] = [];
  // the engine not enabled: its whole section is read for nothing
  const off = (cfg: string) => !(isObject(policy[cfg]) && (policy[cfg] as Obj).enabled === true);
  for (const [path, v] of leaves) {
    if (READ.test(path)) continue;
    if (
      (path.startsWith('megatron_cfg.') && off('megatron_cfg')) ||
      (path.startsWith('dtensor_cfg.') && off('dtensor_cfg'))
    ) {
      quiet.push(`policy.${path}`);
      continue;
    }
    // Transformer Engine fp8 (megatron_cfg.fp8_cfg, read by nemo_rl/models/megatron/setup.py) only when enabled
    if (path.startsWith('megatron_cfg.fp8_cfg.')) {
      const fp8 = (policy.megatron_cfg as Obj).fp8_cfg as Obj;
      if (fp8.enabled !== true) quiet.push(`policy.${path}`);
      else if (path === 'megatron_cfg.fp8_cfg.enabled') d.set('training.fp8_linear', true);
      else if (path === 'megatron_cfg.fp8_cfg.fp8_param' && v === true)
        d.skip(`policy.${path}`, 'fp8 parameters (no bf16 copy) are not modelled: counted with fp8 linears');
      else quiet.push(`policy.${path}`);
      continue;
    }
    if (
      /^(dtensor_cfg|megatron_cfg)\.env_vars\.PYTORCH_CUDA_ALLOC_CONF$/.test(path) &&
      /expandable_segments:\s*True/.test(String(v))
    ) {
      d.set('runtime.expandable_segments', true);
      d.note(`policy.${path}: ${String(v)}: runtime.expandable_segments true`);
      continue;
    }
    const unset = v === null || v === false || v === '' || (Array.isArray(v) && v.length === 0) || isObject(v);
    if (NO_EFFECT.test(path) || unset) quiet.push(`policy.${path}`);
    else if (path === 'megatron_cfg.defer_fp32_logits' || path === 'megatron_cfg.use_fused_linear_logprobs')
      d.skip(
        `policy.${path}`,
        'changes how the log-prob logits are kept; counted as fp32 logits of the whole vocabulary',
      );
    else if (path === 'megatron_cfg.cuda_graph_impl' && v === 'none') quiet.push(`policy.${path}`);
    else if (path === 'logprob_chunk_size')
      d.skip(
        `policy.${path}`,
        `${String(v)}: log-probs over sequence chunks are not modelled (the whole micro-batch's logits counted: an over-estimate)`,
      );
    else if (path === 'dtensor_cfg.automodel_kwargs.use_liger_kernel' && v === true)
      d.skip(`policy.${path}`, "Liger's kernels in the policy are not modelled");
    else d.skip(`policy.${path}`, 'not a NeMo-RL policy key llmem maps; not applied');
  }
  if (quiet.length)
    d.ignore(
      quiet.length > 12 ? `${quiet.length} policy keys (${quiet.slice(0, 6).join(', ')}, ...)` : quiet.join(', '),
    );
}
