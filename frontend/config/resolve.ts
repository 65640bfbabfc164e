// From what a person writes to what the core takes: the preset fills the
// model before explicit keys override it, and a GPU id sets memory_gib
// unless memory_gib is given (docs/config.md "Rules").
import { type Config, type ConfigError, isObject } from './json.js';
import { findGpu, findModel, GPUS, MODELS, RELEASES, releaseMonth } from './catalog.js';

/** Deep merge: keys of `over` win; a null in `over` wins too (it means "none"). */
export function merge(base: Config, over: Config): Config {
  const out: Config = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isObject(v) && isObject(base[k]) ? merge(base[k] as Config, v) : v;
  }
  return out;
}

export type Resolved = { ok: true; config: Config } | { ok: false; error: ConfigError };

export function resolveConfig(input: unknown): Resolved {
  if (!isObject(input)) return { ok: false, error: { path: '', message: 'the config must be a JSON object' } };
  let config: Config;
  try {
    config = structuredClone(input);
  } catch (e) {
    // structuredClone recurses: a config nested thousands of levels deep is not a config
    if (e instanceof RangeError)
      return { ok: false, error: { path: '', message: 'the config is nested too deeply (config v1 nests 3 levels)' } };
    throw e;
  }
  const model = config.model;
  if (isObject(model) && model.preset !== undefined && model.preset !== null) {
    const id = model.preset;
    const entry = typeof id === 'string' ? findModel(id) : undefined;
    if (!entry)
      return {
        ok: false,
        error: {
          path: 'model.preset',
          message: `model.preset: unknown model or revision ${JSON.stringify(id)} (allowed: ${MODELS.map((m) => m.id).join(', ')}, each optionally @revision)`,
        },
      };
    config.model = merge({ ...entry.model, name: entry.name } as Config, model);
  }
  const hw = config.hardware;
  if (isObject(hw) && hw.gpu !== undefined && hw.gpu !== null) {
    const gpu = typeof hw.gpu === 'string' ? findGpu(hw.gpu) : undefined;
    if (!gpu)
      return {
        ok: false,
        error: {
          path: 'hardware.gpu',
          message: `hardware.gpu: unknown GPU ${JSON.stringify(hw.gpu)} (allowed: ${GPUS.map((g) => g.id).join(', ')})`,
        },
      };
    // the capacity the driver reports when known (H100 80GB: 81559 MiB), else the nominal size
    const gib = gpu.memory_bytes ? gpu.memory_bytes / 2 ** 30 : gpu.memory_gib;
    // the step-time model's inputs from the catalog, unless given
    const fill: Config = {};
    if (hw.memory_gib === undefined) fill.memory_gib = gib;
    if (hw.bf16_tflops === undefined && gpu.bf16_tflops) fill.bf16_tflops = gpu.bf16_tflops;
    if (hw.fp8_tflops === undefined && gpu.fp8_tflops) fill.fp8_tflops = gpu.fp8_tflops;
    if (hw.hbm_tb_per_s === undefined && gpu.hbm_tb_per_s) fill.hbm_tb_per_s = gpu.hbm_tb_per_s;
    if (hw.intra_node_gb_per_s === undefined && gpu.intra_node_gb_per_s)
      fill.intra_node_gb_per_s = gpu.intra_node_gb_per_s;
    if (hw.inter_node_gb_per_s === undefined && gpu.inter_node_gb_per_s)
      fill.inter_node_gb_per_s = gpu.inter_node_gb_per_s;
    config = merge(config, { hardware: fill });
    // two cuBLAS workspaces, the forward's and the backward's thread's (core/runtime.c), each of
    // CublasHandlePool.cpp parseChosenWorkspaceSize: 32 MiB (:4096:8) on sm90+, else 8.125 MiB (:4096:2:16:8)
    const rt = (config.runtime ?? {}) as Config;
    // (an architecture it does not name keeps the core's default, core/runtime.c)
    const sm = /^sm(\d+)/.exec(gpu.arch)?.[1];
    if (sm && (rt.cublas_workspace_mib === undefined || rt.cublas_workspace_mib === null))
      config = merge(config, { runtime: { cublas_workspace_mib: 2 * (Number(sm) >= 90 ? 32 : 8.125) } });
  }
  const version = resolveVersion(config);
  if (version && 'message' in version) return { ok: false, error: version };
  if (version) config = merge(config, { runtime: { framework_version: version.month } });
  return { ok: true, config };
}

/** runtime.framework_version given as a release ("4.44.2", "v0.3.1"): the month it came out. */
function resolveVersion(config: Config): { month: string } | ConfigError | null {
  const rt = isObject(config.runtime) ? config.runtime : {};
  const v = rt.framework_version;
  if (typeof v !== 'string' || /^\d{4}-\d{2}$/.test(v)) return null;
  const framework = typeof rt.framework === 'string' ? rt.framework : 'generic';
  const month = releaseMonth(framework, v);
  if (month) return { month };
  const known = (RELEASES[framework] ?? []).map((r) => r.release);
  return {
    path: 'runtime.framework_version',
    message: `runtime.framework_version: ${JSON.stringify(v)} is not a YYYY-MM date${known.length ? ` or a ${framework} release from ${known[0]} on (listed: ${known.join(', ')})` : ` (${framework} has no release list: give the month of its code)`}`,
  };
}
