// The llmem commands in one table: what each does, its usage, its options (the
// ones parseArgs reads, args.ts) and examples. `llmem --help` and
// `llmem <command> --help` are written from it, so help and parsing cannot drift.
import { HELP_OPTION, type OptionSpec, type Range } from './args.js';
import { OPTION_DEFAULTS, SEARCH_SWITCHES, type SearchSwitch } from '../wasm/llmem.js';
import { SEARCH_SWITCH_LABELS } from '../frontend/planner.js';
import { IMPORT_KINDS, TRAINER_IDS } from '../frontend/config/importers/index.js';
import { EXPORT_KINDS, type ExportKind } from '../frontend/config/exporters/index.js';

export interface CommandSpec {
  name: string;
  /** one line for `llmem --help` */
  summary: string;
  /** the usage lines, each starting with `llmem <name>` */
  usage: string[];
  /** what the command does: one or two sentences */
  about: string;
  options: OptionSpec[];
  examples: string[];
}

/** Help lines stay under this width (a terminal of 80 columns). */
export const WIDTH = 79;

/** A fraction of GPU memory kept free: the planner's headroom ("Keep free" on the page). */
const FREE: Range = { min: 0, max: 1, below: true };
const SEARCH_DEFAULTS = OPTION_DEFAULTS.search_options;
const JSON_FLAG = (what: string): OptionSpec => ({ name: 'json', help: `print ${what} as JSON` });
const free = (fallback: number): OptionSpec => ({
  name: 'free',
  arg: 'F',
  help: 'the fraction of GPU memory to keep free',
  default: fallback,
  range: FREE,
});
const HF_OPTION = (help: string): OptionSpec => ({ name: 'hf', arg: 'config.json | org/name', help });

/** What each of the search's switches does when given (the default-on ones as --no-<flag>). */
const SWITCH_HELP: Record<SearchSwitch, string> = {
  vary_sharding: 'keep the sharding as configured (ZeRO stage, FSDP strategy, distributed optimizer)',
  vary_recompute: 'keep the recompute as configured (none, selective, full)',
  vary_offload: 'also vary the offload of the optimizer (FSDP: and parameters) to CPU',
  vary_optimizer_dtype: 'also vary the optimizer states between fp32 and bf16',
  vary_engine: 'also try the other engines (fsdp2, megatron, deepspeed)',
  tp_across_nodes: 'allow tensor parallelism across nodes (else within a node)',
};

/** The search's switches as flags: --<flag> turns on one that is off by default, --no-<flag> turns off one that is on. */
export const SWITCH_FLAGS = (Object.keys(SEARCH_SWITCHES) as SearchSwitch[]).map((k) => ({
  key: k,
  flag: SEARCH_SWITCHES[k] ? `no-${SEARCH_SWITCH_LABELS[k].flag}` : SEARCH_SWITCH_LABELS[k].flag,
}));

const CONFIG_ARG = '<config.json | ->';

/** What each export format is, for the help (a new format must say). */
const EXPORT_WORDS: Record<ExportKind, string> = {
  deepspeed: 'a DeepSpeed JSON',
  megatron: 'a Megatron-LM launch line',
  torchtitan: 'a torchtitan TOML',
  verl: 'a verl main_ppo launch line, for a config with the rl section',
};

/** "a, b or c" */
const orList = (items: string[]) => `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'estimate',
    summary: 'the per-GPU memory of one training run, simulated step by step',
    usage: [`llmem estimate ${CONFIG_ARG} [options]`, 'llmem estimate --hf <config.json | org/name> [options]'],
    about:
      'Simulates one training step and prints the peak memory of the most-loaded GPU (allocated, reserved, ' +
      'nvidia-smi), what it is made of, and each pipeline stage. The config is a config v1 JSON file, or - for ' +
      'standard input; with --hf alone, the defaults with that model.',
    options: [
      JSON_FLAG('the result'),
      { name: 'timeline', help: 'with --json: add the memory-over-time series of one step' },
      {
        name: 'set',
        arg: 'key.path=value',
        repeat: true,
        help: 'override one config key; the value is JSON, else a string',
      },
      HF_OPTION(
        'the model from a Hugging Face config.json: a file, or a Hub id org/name[@revision] ' +
          'fetched from huggingface.co (HF_TOKEN, when set, is the access token for gated and private models)',
      ),
    ],
    examples: [
      'llmem estimate run.json',
      'llmem estimate run.json --set parallel.tp=2 --set training.recompute=full',
      'llmem estimate --hf Qwen/Qwen2.5-7B --json',
    ],
  },
  {
    name: 'compare',
    summary: 'the estimate next to a measurement (probe output or a series)',
    usage: ['llmem compare [config.json] <measured.json> [options]'],
    about:
      "Prints each reading as estimated and as measured, and the error. measured.json is the GPU probe's output, " +
      'an accuracy case or a memory series (probe/snapshot_to_json.py); the config may be left out when it ' +
      'carries one.',
    options: [JSON_FLAG('the rows')],
    examples: ['llmem compare run.json measured.json', 'llmem compare tests/measured/<case>.json'],
  },
  {
    name: 'sweep',
    summary: 'the three readings along one config key',
    usage: [`llmem sweep ${CONFIG_ARG} --axis <key.path> --from <A> --to <B>`, '            [options]'],
    about:
      'Estimates the run at each value of one key from --from to --to and prints peak allocated, reserved and ' +
      'nvidia-smi memory, and whether it fits: yes, tight (only under the --free headroom) or no.',
    options: [
      { name: 'axis', arg: 'key.path', help: 'the config key to vary', required: true },
      { name: 'from', arg: 'A', help: 'the first value', required: true },
      { name: 'to', arg: 'B', help: 'the last value', required: true },
      {
        name: 'points',
        arg: 'N',
        help: 'how many values, evenly spaced; geometric spacing when --to is 8 x --from or more',
        default: 16,
        range: { min: 2, max: 4096, whole: true },
      },
      { name: 'step', arg: 'S', help: 'the distance between values, instead of --points (at most 4096 values)' },
      free(0.1),
      JSON_FLAG('the points'),
    ],
    examples: [
      'llmem sweep run.json --axis training.seq_len --from 1024 --to 131072',
      'llmem sweep run.json --axis training.micro_batch --from 1 --to 16 --step 1',
    ],
  },
  {
    name: 'fit',
    summary: 'the largest micro-batch and sequence length that fit',
    usage: [`llmem fit ${CONFIG_ARG} [options]`],
    about:
      'Finds the largest value of a key that leaves --free of the GPU free, each try a full estimate: the ' +
      'micro-batch and the sequence length (an RL run: the response length), or the key --axis names.',
    options: [
      {
        name: 'axis',
        arg: 'key.path',
        help: 'only this key: training.micro_batch, training.seq_len or rl.response_len',
        defaultText: 'the micro-batch and the sequence length',
      },
      free(0.1),
      { name: 'max', arg: 'N', help: 'the largest value tried', defaultText: '4096, or 4194304 tokens' },
      JSON_FLAG('the largest values'),
    ],
    examples: ['llmem fit run.json', 'llmem fit run.json --axis training.seq_len --free 0.05'],
  },
  {
    name: 'search',
    summary: 'every parallel layout of N GPUs that fits, ranked by step time',
    usage: [`llmem search ${CONFIG_ARG} --gpus <N> [options]`],
    about:
      "Tries every DP x TP x PP x VPP x CP x EP, sharding, recompute and micro-batch on N GPUs at the run's " +
      'global batch and ranks the layouts that fit by the step-time model (a ranking aid, not a promise). ' +
      'When none fits, it counts the candidates left out by reason.',
    options: [
      {
        name: 'gpus',
        arg: 'N',
        help: 'the number of GPUs',
        required: true,
        range: { min: 1, max: 10_000_000, whole: true },
      },
      {
        name: 'global-batch',
        arg: 'B',
        help: 'the global batch in samples',
        default: SEARCH_DEFAULTS.global_batch,
        defaultText: 'training.global_batch, else micro_batch x grad_accum x dp',
        range: { min: 0, max: 1e12, whole: true },
      },
      {
        name: 'top',
        arg: 'N',
        help: 'how many layouts to print',
        default: 20,
        range: { min: 1, max: 256, whole: true },
      },
      free(SEARCH_DEFAULTS.free_fraction),
      {
        name: 'max-micro-batch',
        arg: 'N',
        help: 'the largest micro-batch tried',
        default: SEARCH_DEFAULTS.max_micro_batch,
        range: { min: 1, max: 1e6, whole: true },
      },
      JSON_FLAG('the layouts'),
      ...SWITCH_FLAGS.map((s) => ({ name: s.flag, help: SWITCH_HELP[s.key] })),
    ],
    examples: [
      'llmem search run.json --gpus 256 --global-batch 512 --top 20',
      'llmem search run.json --gpus 1024 --vary-engine --vary-offload',
    ],
  },
  {
    name: 'suggest',
    summary: 'changes that make a run fit, the fewest GPUs and the next GPU',
    usage: [`llmem suggest ${CONFIG_ARG} [options]`],
    about:
      'Tries recompute, micro-batch, sharding, TP/PP/CP/EP, offload, optimizer precision, loss, LoRA/QLoRA and ' +
      'a shorter sequence, each verified by a full estimate, and prints the changes that leave --free of the ' +
      'GPU free, then the fewest GPUs and the next GPU model that fit.',
    options: [
      free(OPTION_DEFAULTS.suggest_options.free_fraction),
      {
        name: 'top',
        arg: 'N',
        help: 'how many changes to print',
        default: 12,
        range: { min: 1, max: 48, whole: true },
      },
      JSON_FLAG('each suggestion with its patch'),
    ],
    examples: ['llmem suggest run.json', 'llmem suggest run.json --top 6 --free 0.05'],
  },
  {
    name: 'import',
    summary: "another tool's config (DeepSpeed, Megatron, TRL, ...) as config v1",
    usage: ['llmem import <kind | auto> <file | -> [second file] [bases] [options]'],
    about:
      "Prints another tool's config as config v1 JSON; what was assumed and what was not applied go to " +
      `standard error. kind: ${orList(['auto (told from the file)', ...IMPORT_KINDS])}. second file: the ` +
      'DeepSpeed file an accelerate, TrainingArguments, LLaMA-Factory, axolotl, TRL or ms-swift config names, read with it; ' +
      'or, for a TRL, TrainingArguments, LLaMA-Factory, axolotl or ms-swift file, the accelerate config (YAML or JSON) its run is launched with ' +
      '(accelerate launch --config_file), which sets the GPUs and the engine; or, for a NeMo-RL recipe, the base its ' +
      'defaults: names, and the bases of a longer chain after it, in order.',
    options: [
      JSON_FLAG('one object {kind, config, notes, unsupported}; a refusal: {ok: false, kind, error}'),
      { name: 'world-size', arg: 'N', help: 'the number of GPUs, for a format that does not carry it' },
      {
        name: 'trainer',
        arg: TRAINER_IDS.join('|'),
        help: 'the TRL trainer, for a TRL config whose keys do not tell it',
      },
      HF_OPTION(
        'the model from a Hugging Face config.json (a file, or a Hub id fetched from huggingface.co), ' +
          'for a file whose model the catalog does not hold',
      ),
    ],
    examples: [
      'llmem import auto ds_config.json',
      'llmem import trl grpo.yaml --trainer grpo --world-size 8',
      'llmem import auto sft.yaml accelerate_configs/zero3.yaml',
    ],
  },
  {
    name: 'export',
    summary: 'config v1 as DeepSpeed JSON, a Megatron or verl launch line, TOML',
    usage: [`llmem export <format> ${CONFIG_ARG} [options]`],
    about:
      "Prints the config in another tool's format; what the format cannot express goes to standard error. " +
      `format: ${orList(EXPORT_KINDS.map((k) => `${k} (${EXPORT_WORDS[k]})`))}.`,
    options: [JSON_FLAG('{text, unexpressed}')],
    examples: ['llmem export megatron run.json', 'llmem export deepspeed run.json > ds_config.json'],
  },
  {
    name: 'defaults',
    summary: 'print the config every omitted key stands for',
    usage: ['llmem defaults'],
    about: 'Prints config v1 with every key at its default; null means llmem chooses the value from the run.',
    options: [],
    examples: ['llmem defaults > run.json'],
  },
  {
    name: 'models',
    summary: 'list the model presets (model.preset)',
    usage: ['llmem models'],
    about:
      "Lists the catalog's models: the id model.preset takes, and the model's name; under it, the other checkpoints with exactly its tensors, which an import's model id matches too.",
    options: [],
    examples: ['llmem models', "echo '{}' | llmem estimate - --set model.preset=llama-3.1-70b"],
  },
  {
    name: 'gpus',
    summary: 'list the GPU catalog (hardware.gpu)',
    usage: ['llmem gpus'],
    about: "Lists the catalog's GPUs: the id hardware.gpu takes, the memory and the name.",
    options: [],
    examples: ['llmem gpus', "echo '{}' | llmem estimate - --set hardware.gpu=a100-sxm-40gb"],
  },
  {
    name: 'help',
    summary: "this overview, or a command's help",
    usage: ['llmem help [command]'],
    about: 'With no command, lists the commands; with one, prints its help (the same as llmem <command> --help).',
    options: [],
    examples: ['llmem help search'],
  },
];

export const COMMAND_NAMES = COMMANDS.map((c) => c.name);

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** A command's option by name (a typo in the code is an error at once, not a silent default). */
export function optionOf(command: CommandSpec, name: string): OptionSpec {
  const o = command.options.find((x) => x.name === name);
  if (!o) throw new Error(`llmem ${command.name} has no option --${name}`);
  return o;
}

/** `text` in lines of at most `width` columns, each after `indent` (the first after `first`, when given). */
export function wrap(text: string, width: number, indent: string, first = indent): string[] {
  const lines: string[] = [];
  let line = first;
  let fresh = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!fresh && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent;
      fresh = true;
    }
    line += (fresh ? '' : ' ') + word;
    fresh = false;
  }
  lines.push(line);
  return lines;
}

const optionName = (o: OptionSpec) => (o === HELP_OPTION ? '-h, --help' : `--${o.name}${o.arg ? ` <${o.arg}>` : ''}`);

function optionHelp(o: OptionSpec): string {
  const notes = [
    o.required ? 'required' : '',
    o.repeat ? 'may be repeated' : '',
    (o.defaultText ?? (o.default !== undefined ? String(o.default) : ''))
      ? `default: ${o.defaultText ?? String(o.default)}`
      : '',
  ].filter(Boolean);
  return notes.length ? `${o.help} (${notes.join('; ')})` : o.help;
}

/** The usage lines: "usage: llmem …", further ones aligned under the first. */
export function usageLines(c: CommandSpec): string[] {
  return c.usage.map((u, i) => `${i === 0 ? 'usage: ' : '       '}${u}`);
}

/** `llmem <command> --help`: usage, what it does, its options with their defaults, examples. */
export function commandHelp(c: CommandSpec): string {
  const options = [...c.options, HELP_OPTION];
  // the names' column: as wide as the longest name that leaves room for the help beside it
  const column = Math.max(...options.map((o) => optionName(o).length).filter((n) => n <= 26)) + 4;
  const lines = [...usageLines(c), '', ...wrap(c.about, WIDTH, ''), '', 'options:'];
  for (const o of options) {
    const name = `  ${optionName(o)}`;
    const pad = ' '.repeat(column);
    if (name.length + 2 > column) lines.push(name, ...wrap(optionHelp(o), WIDTH, pad));
    else lines.push(...wrap(optionHelp(o), WIDTH, pad, name.padEnd(column)));
  }
  lines.push('', c.examples.length > 1 ? 'examples:' : 'example:', ...c.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}

/** The message for a command that is none: the commands there are. */
export function unknownCommandMessage(name: string): string {
  return [
    `unknown command "${name}"`,
    ...wrap(COMMAND_NAMES.join(', '), WIDTH, '  ', 'commands: '),
    'Run "llmem --help" for what each does.',
  ].join('\n');
}

/** `llmem --help`: the commands, one line each. */
export function overview(): string {
  const column = Math.max(...COMMANDS.map((c) => c.name.length)) + 4;
  return [
    'llmem — per-GPU training memory, simulated step by step',
    '',
    'usage: llmem <command> [arguments] [options]',
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(column - 2)}${c.summary}`),
    '',
    ...wrap(
      'A config is config v1 JSON (README: "Config format"); - reads it from standard input. ' +
        'Exit status: 0 ok, 1 invalid config (the message names the key), 2 usage error or unreadable input.',
      WIDTH,
      '',
    ),
    '',
    'llmem <command> --help   the usage, options and examples of one command',
    'llmem --version          the version',
  ].join('\n');
}

/** After a usage error: the command's usage and where its help is. */
export function usageHint(c: CommandSpec): string {
  return [...usageLines(c), `Run "llmem ${c.name} --help" for details.`].join('\n');
}
