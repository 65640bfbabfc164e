// A DeepSpeed JSON named by path in another framework's config (TrainingArguments,
// LLaMA-Factory and axolotl `deepspeed:`, accelerate `deepspeed_config_file`): read when
// the user gives its text too (ImportOptions.also), else reported as not read.
import type { Json } from '../../../wasm/llmem.js';
import { type Draft, ImportError, isObject, parseJsonText, str, type Obj } from './common.js';
import { applyDeepSpeed } from './deepspeed.js';

/** The DeepSpeed JSON a config names by path, when the user gave its text too (ImportOptions.also). */
export interface DeepSpeedFile {
  text?: string;
  /** set once a `deepspeed` path took it */
  read: boolean;
}

/** Read the referenced DeepSpeed JSON as `llmem import deepspeed` does; its lines are prefixed with the path. */
function readDeepSpeedFile(d: Draft, key: string, path: string, file: DeepSpeedFile): void {
  file.read = true;
  let ds: Obj;
  try {
    ds = parseJsonText(file.text ?? '', `${key} "${path}"`);
  } catch (e) {
    if (e instanceof ImportError) throw new ImportError(key, e.message);
    throw e;
  }
  applyDeepSpeed(d, ds, `${path}#`);
  d.note(
    `${key} "${path}": read from the file given with this one (its "auto" values are filled by the trainer from this config's own settings, which stand)`,
  );
}

/**
 * A `deepspeed` value: an inline config object, or a file path. The file is read when
 * its text was given (`file`); else its name may tell the ZeRO stage and offload.
 */
export function applyDeepSpeedRef(d: Draft, key: string, v: Json, file?: DeepSpeedFile): void {
  if (v === null || v === '' || v === false) return;
  if (isObject(v)) {
    applyDeepSpeed(d, v, `${key}.`);
    return;
  }
  const path = str(v, key);
  d.set('parallel.engine', 'deepspeed');
  if (file?.text !== undefined && !file.read) {
    readDeepSpeedFile(d, key, path, file);
    return;
  }
  const name = path.split('/').pop()!.toLowerCase();
  const stage = /(?:zero|z|stage)[_-]?([0-3])/.exec(name)?.[1];
  if (stage !== undefined) {
    d.set('parallel.zero_stage', Number(stage));
    d.note(`${key} "${path}": ZeRO stage ${stage} read from the file name`);
  }
  d.skip(
    key,
    `"${path}" was not read (give it too: \`llmem import <kind> <file> ${name}\`, or drop both files on the page); its buckets, offload, batch sizes and precision are not applied`,
  );
  if (stage !== undefined && /offload/.test(name)) {
    // ds_z3_offload_config (LLaMA-Factory), zero3_bf16_cpuoffload_all / _params (axolotl), zero2_offload
    const params = stage === '3' && !/optim/.test(name);
    const optim = !/param/.test(name) || /all/.test(name);
    if (optim) d.set('parallel.offload_optimizer', 'cpu');
    if (params) d.set('parallel.offload_params', 'cpu');
    d.note(
      `${key}: ${[optim && 'optimizer', params && 'parameter'].filter(Boolean).join(' and ')} offload to the CPU read from the file name`,
    );
  }
}

/** A second file was given but the config names no DeepSpeed file: say it was not used. */
export function reportUnreadFile(d: Draft, file: DeepSpeedFile | undefined): void {
  if (file?.text !== undefined && !file.read)
    d.skip('second file', 'the config names no DeepSpeed JSON file, so the file given with it was not read');
}
