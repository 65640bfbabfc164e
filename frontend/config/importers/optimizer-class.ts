// An optimizer named by its Python class ("torch.optim.AdamW", "bitsandbytes.optim.PagedAdamW8bit",
// "torchao.optim.AdamW8bit", or a bare class name) -> config v1 optimizer keys: what torchtune's
// optimizer._component_ and LitGPT's optimizer class_path name (one table for both importers).
import { bool, type Draft, num, type Obj } from './common.js';

/** The options of the optimizer's constructor that change what it holds (momentum, fused, foreach). */
export type OptimizerArgs = Obj;

/**
 * Applies the optimizer class `path` (key: the source key that names it, for notes and errors) with its
 * constructor `args`; `dtype` is the parameters' dtype (torch optimizers keep their states in it).
 * Returns false when the class is not one llmem knows (the caller reports it).
 */
export function applyOptimizerClass(d: Draft, key: string, path: string, args: OptimizerArgs, dtype: string): boolean {
  const name = path.split('.').pop() ?? path;
  const lib = path.startsWith('bitsandbytes.')
    ? 'bnb'
    : path.startsWith('torchao.')
      ? 'torchao'
      : path.startsWith('torch.') || !path.includes('.')
        ? 'torch'
        : 'other';
  const flag = (k: string) => args[k] !== undefined && args[k] !== null && bool(args[k], `${key}.${k}`);
  const off = (k: string) => args[k] !== undefined && args[k] !== null && !bool(args[k], `${key}.${k}`);
  if (lib === 'torch' && /^(AdamW|Adam|SGD|Adafactor)$/.test(name)) {
    const momentum = name === 'SGD' && args.momentum !== undefined && args.momentum !== null;
    const sgd = momentum && num(args.momentum, `${key}.momentum`) > 0 ? 'sgd_momentum' : 'sgd';
    d.set('training.optimizer', name === 'SGD' ? sgd : name.toLowerCase());
    d.set('training.optimizer_dtype', dtype); // torch.optim: states made like the parameter (zeros_like)
    // torch/optim/optimizer.py _default_to_fused_or_foreach: foreach on CUDA unless fused / foreach=False
    if (name !== 'Adafactor')
      d.set('training.optimizer_impl', flag('fused') ? 'fused' : off('foreach') ? 'for_loop' : 'foreach');
    return true;
  }
  if (lib === 'bnb') {
    // bitsandbytes/optim/{adamw,adam,lion}.py: the 32-bit ones keep fp32 states, the 8bit ones blockwise 8-bit
    // states; Paged* put them in managed memory
    const adam = /^(Paged)?(Adam|AdamW|Lion)(8bit|32bit)?$/.exec(name);
    if (!adam) return false;
    const [, paged, kind, bits] = adam;
    if (kind === 'Lion') {
      d.set('training.optimizer', 'lion');
      if (bits === '8bit') d.note(`${path}: 8-bit Lion states counted as 32-bit (an over-estimate)`);
    } else d.set('training.optimizer', bits === '8bit' ? 'adamw_8bit' : kind === 'AdamW' ? 'adamw' : 'adam');
    if (bits !== '8bit') d.set('training.optimizer_dtype', 'fp32');
    if (paged) d.set('training.paged_optimizer', true);
    return true;
  }
  if (lib === 'torchao') {
    // torchao/optim (prototype/low_bit_optim): AdamW8bit, AdamW4bit, AdamWFp8, CPUOffloadOptimizer
    if (/^Adam(W)?8bit$/.test(name)) d.set('training.optimizer', 'adamw_8bit');
    else if (/^Adam(W)?Fp8$/.test(name)) {
      d.set('training.optimizer', 'adamw');
      d.set('training.optimizer_dtype', 'fp8');
    } else if (/^Adam(W)?4bit$/.test(name)) {
      d.set('training.optimizer', 'adamw_8bit');
      d.skip(key, `${path}: 4-bit optimizer states are not modelled; counted as 8-bit (adamw_8bit), an over-estimate`);
    } else if (name === 'CPUOffloadOptimizer') {
      // torchao CPUOffloadOptimizer: the states and the step on the host, the gradients copied there
      d.set('parallel.offload_optimizer', 'cpu');
      d.set('training.optimizer', 'adamw');
      d.set('training.optimizer_dtype', dtype);
      d.note(
        `${key} CPUOffloadOptimizer: optimizer states on the host; optimizer_class ${String(args.optimizer_class ?? 'torch.optim.AdamW')} counted as AdamW`,
      );
    } else return false;
    return true;
  }
  return false;
}
