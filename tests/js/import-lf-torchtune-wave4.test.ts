// LLaMA-Factory and torchtune importers over every example / recipe config of hiyouga/LLaMA-Factory@ff6d4d12 and
// pytorch/torchtune@bd2a0fc7: files that are not a training run are refused, not estimated as one, and a launcher
// the file only names in a comment is reported.
import { describe, expect, it } from 'vitest';
import { type Imported, importConfig } from '../../frontend/config/importers/index.js';

function ok(kind: 'llamafactory' | 'torchtune', text: string, worldSize?: number): Imported {
  const r = importConfig(kind, text, { worldSize });
  if ('error' in r) throw new Error(`${r.error.path}: ${r.error.message}`);
  return r;
}
function refused(
  kind: 'llamafactory' | 'torchtune',
  text: string,
  worldSize?: number,
): { path: string; message: string } {
  const r = importConfig(kind, text, { worldSize });
  if (!('error' in r)) throw new Error(`imported: ${JSON.stringify(r.config)}`);
  return r.error;
}

describe('LLaMA-Factory: files that do not train', () => {
  it('an accelerate launcher config (examples/accelerate/*.yaml) is refused, not read as a Megatron run', () => {
    // before: mixed_precision read as a Megatron Bridge key -> parallel.engine megatron, LoRA on the default model
    const e = refused(
      'llamafactory',
      "compute_environment: LOCAL_MACHINE\ndebug: false\ndistributed_type: FSDP\ndowncast_bf16: 'no'\nfsdp_config:\n  fsdp_version: 2\nmachine_rank: 0\nmain_training_function: main\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 2\nrdzv_backend: static\nsame_network: true\nuse_cpu: false\n",
      8,
    );
    expect(e.path).toBe('distributed_type');
    expect(e.message).toContain('llmem import accelerate');
  });

  it('chat, export and predict files are refused (the workflows train only under do_train)', () => {
    const model = 'model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\ntemplate: qwen3_nothink\n';
    expect(refused('llamafactory', `${model}infer_backend: huggingface\n`).path).toBe('infer_backend');
    expect(refused('llamafactory', `${model}export_dir: saves/x\nexport_size: 5\n`).path).toBe('export_dir');
    const predict = refused('llamafactory', `${model}stage: sft\ndo_predict: true\nfinetuning_type: lora\n`);
    expect(predict.path).toBe('do_predict');
    expect(predict.message).toContain('not training');
    // training with evaluation is still training
    const train = ok('llamafactory', `${model}stage: sft\ndo_train: true\ndo_eval: true\nfinetuning_type: lora\n`, 8);
    expect(train.config.training).toMatchObject({ finetune: { method: 'lora' } });
  });

  it('a v1 merge file (llamafactory-cli merge) is refused; a v1 run that resumes an adapter is not', () => {
    const e = refused(
      'llamafactory',
      'model: Qwen/Qwen3-4B\npeft_config:\n  name: lora\n  adapter_name_or_path: ./outputs/test_lora\n  export_dir: ./merge_lora_model\n  export_size: 5\n  infer_dtype: auto\n',
    );
    expect(e.path).toBe('peft_config.export_dir');
    const train = ok(
      'llamafactory',
      'model: Qwen/Qwen3-4B\npeft_config:\n  name: lora\n  adapter_name_or_path: ./outputs/test_lora\ntrain_dataset: data/v1_sft_demo.yaml\n',
    );
    expect(train.config.training).toMatchObject({ finetune: { method: 'lora' } });
  });

  it('an accelerate launch named in the header comment is reported (FSDP lives in that file; DDP is counted)', () => {
    const body = 'model_name_or_path: Qwen/Qwen3-8B\nstage: sft\ndo_train: true\nfinetuning_type: full\nbf16: true\n';
    const header =
      '# Start FSDP2 fine-tuning\n# accelerate launch \\\n#     --config_file examples/accelerate/fsdp2_config.yaml \\\n#     src/train.py examples/ascend/qwen3_full_sft_fsdp2.yaml\n';
    const r = ok('llamafactory', header + body, 8);
    expect(r.config.parallel).toMatchObject({ engine: 'ddp' });
    expect(r.unsupported.find((l) => l.startsWith('accelerate launch:'))).toContain(
      'examples/accelerate/fsdp2_config.yaml',
    );
    // no comment, or a deepspeed file in the YAML: nothing to report
    expect(ok('llamafactory', body, 8).unsupported).toEqual([]);
    const ds = ok('llamafactory', `${header + body}deepspeed: examples/deepspeed/ds_z3_config.json\n`, 8);
    expect(ds.unsupported.some((l) => l.startsWith('accelerate launch:'))).toBe(false);
    // a key after the comment block that mentions --config_file is not part of the launch command
    const later = ok(
      'llamafactory',
      `# accelerate launch src/train.py x.yaml\n${body}run_name: x  # --config_file y\n`,
      8,
    );
    expect(later.unsupported.some((l) => l.startsWith('accelerate launch:'))).toBe(false);
  });
});

describe('torchtune: configs of the recipes that do not train', () => {
  const model = 'model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: bf16\n';
  it('eleuther_eval, generate and quantize configs (no optimizer) are refused', () => {
    // before: a full fine-tune of the model, the evaluation batch_size 8 as training.micro_batch
    const ev = refused(
      'torchtune',
      `${model}tasks: ["truthfulqa_mc2"]\nlimit: null\nmax_seq_length: 4096\nbatch_size: 8\nquantizer: null\n`,
      1,
    );
    expect(ev.path).toBe('tasks');
    expect(ev.message).toContain('eleuther_eval');
    const gen = refused('torchtune', `${model}prompt:\n  user: Tell me a joke.\nmax_new_tokens: 200\n`, 8);
    expect(gen.path).toBe('prompt');
    const q = refused(
      'torchtune',
      `${model}quantizer:\n  _component_: torchtune.training.quantization.Int8DynActInt4WeightQuantizer\n  groupsize: 256\n`,
      1,
    );
    expect(q.path).toBe('quantizer');
  });

  it('a QAT config (quantizer with an optimizer) still imports, its quantizer reported', () => {
    const r = ok(
      'torchtune',
      `${model}quantizer:\n  _component_: torchtune.training.quantization.Int8DynActInt4WeightQATQuantizer\n  groupsize: 256\noptimizer:\n  _component_: torch.optim.AdamW\n  fused: True\nbatch_size: 2\ntokenizer:\n  max_seq_len: 2048\n`,
      4,
    );
    expect(r.config.training).toMatchObject({ finetune: { method: 'full' }, micro_batch: 2 });
    expect(r.unsupported.some((l) => l.startsWith('quantizer:'))).toBe(true);
  });
});

describe('torchtune: knowledge distillation', () => {
  it('enable_activation_offloading is not read by the knowledge_distillation recipes', () => {
    // recipes/knowledge_distillation_*.py @bd2a0fc7: only enable_activation_checkpointing is read
    const kd = `model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n  lora_attn_modules: ['q_proj', 'v_proj']\nteacher_model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\noptimizer:\n  _component_: torch.optim.AdamW\ndtype: bf16\ntokenizer:\n  max_seq_len: 2048\nenable_activation_checkpointing: True\nenable_activation_offloading: True\n`;
    const r = ok('torchtune', kd, 2);
    expect(r.config.training).toMatchObject({ recompute: 'full' });
    expect((r.config.training as Record<string, unknown>).activation_offload).toBeUndefined();
    expect(r.unsupported.some((l) => l.startsWith('enable_activation_offloading:'))).toBe(true);
    // the fine-tuning recipes read it
    const ft = ok('torchtune', kd.replace(/teacher_model:\n.*\n/, ''), 2);
    expect(ft.config.training).toMatchObject({ activation_offload: true });
  });
});

describe('LLaMA-Factory: a reference model of its own', () => {
  // train/trainer_utils.py create_ref_model: ref_model loads a second model; without it LoRA's reference is the base
  const dpo = 'model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: dpo\nfinetuning_type: lora\nlora_target: all\n';
  it('ref_model is named as a second frozen model, not read as having no effect', () => {
    const r = ok('llamafactory', `${dpo}ref_model: Qwen/Qwen2.5-7B\n`, 8);
    expect(r.unsupported).toContainEqual(
      'ref_model: Qwen/Qwen2.5-7B: a second, frozen model for the reference; its weights and forward are not counted',
    );
    expect(r.notes.join('\n')).not.toMatch(/no effect on per-GPU memory: .*\bref_model\b/);
    expect(r.unsupported.join('\n')).not.toContain('adapters disabled');
  });
  it('outside the DPO, KTO and PPO stages it has no effect', () => {
    const r = ok('llamafactory', 'model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: sft\nref_model: x\n', 8);
    expect(r.unsupported.join('\n')).not.toContain('ref_model');
  });
});
