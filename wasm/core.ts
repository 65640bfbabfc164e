// The calls into the wasm core (wasm/boundary.c): load, estimate, profile, planner.
import { decodeList, decodeValue, defaultConfig, flatten } from '../frontend/config/encode.js';
import { type Config, type ConfigError, type Json, setPath } from '../frontend/config/json.js';
import type { EstimateOutcome, Layout, ProfileValue, SearchResult } from '../frontend/config/results.js';
import type { Suggestion, SuggestionKind, SuggestResult, SweepPoint } from '../frontend/config/results.js';
import { layoutPatch, SEARCH_SWITCHES, type SearchOptions, type SearchSwitch } from '../frontend/config/search.js';
import type { SuggestOptions } from '../frontend/config/search.js';
import { ABI_VERSION, type CoreExport, FIELD_KINDS, type FieldInfo, type FieldPath } from './generated.js';
import { each, f64, type Memory, readReadings, readResult, readStruct } from './views.js';

type CoreModule = Memory['heap'] & Record<CoreExport, (...args: number[]) => number>;
export type CoreFactory = (options?: {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string) => string;
}) => Promise<unknown>;
/** Where the factory finds the binary: its bytes (Node), or its URL (the page: compiled while it streams in). */
export type CoreBinary = { wasmBinary: Uint8Array } | { wasmUrl: string };

const MAX_SWEEP = 4096;

export class Core {
  readonly fields: FieldInfo[] = [];
  private readonly byPath = new Map<string, FieldInfo>();
  private readonly texts = new Map<string, string>();
  private readonly mem: Memory;

  private constructor(private readonly m: CoreModule) {
    if (m._llmem_abi_version() !== ABI_VERSION)
      throw new Error(`llmem core ABI ${m._llmem_abi_version()} does not match the wrapper (${ABI_VERSION})`);
    const decoder = new TextDecoder();
    const text = (ptr: number) => {
      let end = ptr;
      while (ptr && m.HEAPU8[end] !== 0) end++;
      return decoder.decode(m.HEAPU8.subarray(ptr, end));
    };
    const cached = (kind: string, read: (id: number) => number) => (id: number) => {
      let s = this.texts.get(kind + id);
      if (s === undefined) this.texts.set(kind + id, (s = text(read(id))));
      return s;
    };
    this.mem = {
      layout: JSON.parse(text(m._llmem_result_layout())),
      heap: m,
      text,
      warning: cached('w', m._llmem_warning_text),
      termLabel: cached('l', m._llmem_term_label_text),
      termFormula: cached('f', m._llmem_term_formula_text),
      statusText: (s: number) => text(m._llmem_status_text(s)),
    };
    for (let i = 0; i < m._llmem_field_count(); i++) {
      const f: FieldInfo = {
        index: i,
        slot: m._llmem_field_slot(i),
        path: text(m._llmem_field_path(i)),
        kind: FIELD_KINDS[m._llmem_field_kind(i)],
        nullable: (m._llmem_field_flags(i) & 1) !== 0,
        months: (m._llmem_field_flags(i) & 2) !== 0,
        default: m._llmem_field_default(i),
        min: m._llmem_field_min(i),
        max: m._llmem_field_max(i),
        values: Array.from({ length: m._llmem_field_value_count(i) }, (_, j) => text(m._llmem_field_value(i, j))),
      };
      this.fields.push(f);
      this.byPath.set(f.path, f);
    }
  }

  static async load(factory: CoreFactory, binary: CoreBinary): Promise<Core> {
    const options = 'wasmBinary' in binary ? binary : { locateFile: () => binary.wasmUrl };
    return new Core((await factory(options)) as CoreModule);
  }

  field(path: string): FieldInfo | undefined {
    return this.byPath.get(path);
  }

  /** The config that every omitted key stands for (core defaults; null = automatic).
   * Given a config, keys its training-stack profile sets take the profile's value. */
  defaults(config?: unknown): Config {
    const root = defaultConfig(this.fields);
    const profile = config === undefined ? null : this.profile(config);
    for (const p of profile?.ok ? profile.implied : []) setPath(root, p.path, p.value);
    return root;
  }

  /** A key's value in a flat input block (Core.flatten's) as config JSON. */
  valueOf(f: FieldInfo, slots: ArrayLike<number>): Json {
    return f.kind === 'list' ? decodeList(f, slots) : decodeValue(f, slots[f.slot]);
  }

  /** A value of the input block as config JSON. */
  toJson(f: FieldInfo, v: number): Json {
    return decodeValue(f, v);
  }

  /** Config JSON to the flat input block; the first problem is returned as an error. */
  flatten(config: unknown): Float64Array | ConfigError {
    return flatten(this.fields, this.byPath, config);
  }

  /** Flattens a config into the core's input block. */
  private load(config: unknown): ConfigError | null {
    const flat = this.flatten(config);
    if (!(flat instanceof Float64Array)) return flat;
    this.m.HEAPF64.set(flat, this.m._llmem_input_ptr() / 8);
    return null;
  }

  /** Run the core on a config (presets and GPU ids must already be resolved). */
  estimate(config: unknown, options: { timeline?: boolean } = {}): EstimateOutcome {
    const flat = this.flatten(config);
    return flat instanceof Float64Array ? this.estimateFlat(flat, options) : { ok: false, error: flat };
  }

  /** What the training-stack profile (runtime.framework, framework_version) sets
   * among the keys this config leaves null: value, the "why this number" term
   * it shapes (its label) and the framework file it follows (core/profiles.def). */
  profile(config: unknown): { ok: true; implied: ProfileValue[] } | { ok: false; error: ConfigError } {
    const err = this.load(config);
    if (err) return { ok: false, error: err };
    const m = this.m;
    const implied: ProfileValue[] = [];
    for (const f of this.fields) {
      const v = m._llmem_profile_value_run(f.index);
      if (Number.isNaN(v)) continue;
      const term = m._llmem_profile_term() >= 0 ? this.mem.termLabel(m._llmem_profile_term()) : null;
      implied.push({
        path: f.path,
        value: decodeValue(f, v),
        term,
        source: this.mem.text(m._llmem_profile_source_text()),
      });
    }
    return { ok: true, implied };
  }

  /** Run the core on a flat input without reading the result (benchmarks). */
  runOnly(flat: Float64Array): number {
    this.m.HEAPF64.set(flat, this.m._llmem_input_ptr() / 8);
    return this.m._llmem_run();
  }

  estimateFlat(flat: Float64Array, options: { timeline?: boolean } = {}): EstimateOutcome {
    const status = this.runOnly(flat),
      base = this.m._llmem_result_ptr();
    if (status === 0) return readResult(this.mem, base, !!options.timeline);
    const text = (offset: number) => this.mem.text(base + offset);
    const R = this.mem.layout.result;
    return { ok: false, error: { path: text(R.error_path), message: text(R.error_message) } };
  }

  private numericField(path: string): FieldInfo | ConfigError {
    const f = this.field(path);
    if (f && (f.kind === 'int' || f.kind === 'num')) return f;
    return { path, message: `${path}: not a numeric key of the config` };
  }

  /** The three readings along one numeric key (at most 4096 points). */
  sweep(config: unknown, path: string, values: number[]): SweepPoint[] | ConfigError {
    const f = this.numericField(path);
    if (!('index' in f)) return f;
    if (values.length > MAX_SWEEP) return { path, message: `a sweep has at most ${MAX_SWEEP} points` };
    const err = this.load(config);
    if (err) return err;
    this.m.HEAPF64.set(values, this.m._llmem_sweep_values_ptr() / 8);
    this.m._llmem_sweep_run(f.index, values.length);
    const P = this.mem.layout.sweep_point;
    return values.map((_, i) => {
      const a = this.m._llmem_sweep_points_ptr() + i * P.size;
      return { value: f64(this.mem, a + P.value), ...readReadings(this.mem, a + P.readings) };
    });
  }

  /** The largest value of a key in [lo, hi] (multiples of step) that leaves free_fraction of the GPU free; 0 if none. */
  largestFit(
    config: unknown,
    path: string,
    o: { lo: number; hi: number; step: number; free_fraction?: number },
  ): number | ConfigError {
    const f = this.numericField(path);
    if (!('index' in f)) return f;
    const err = this.load(config);
    if (err) return err;
    const best = this.m._llmem_largest_fit_run(f.index, o.lo, o.hi, o.step, o.free_fraction ?? 0.1);
    if (best >= 0) return best;
    // a planner status as an error: option statuses name the option, not a config key
    const text = this.mem.statusText(-best);
    return /^options? /.test(text) ? { path: '', message: text } : { path, message: `${path}: ${text}` };
  }

  /** Step time and tokens/s per GPU of a config (a ranking aid). */
  stepTime(config: unknown): { step_seconds: number; tokens_per_second_per_gpu: number } | ConfigError {
    const err = this.load(config);
    if (err) return err;
    const s = this.m._llmem_step_time_run();
    if (s >= 0) return { step_seconds: s, tokens_per_second_per_gpu: this.m._llmem_step_tokens() };
    const r = this.estimate(config);
    return r.ok ? { path: '', message: 'step time failed' } : r.error;
  }

  /** Every valid layout of opts.gpus that fits, the fastest first (at most 256 kept). */
  search(config: unknown, o: SearchOptions): SearchResult | ConfigError {
    const err = this.load(config);
    if (err) return err;
    const m = this.m,
      { search: S, layout: L } = this.mem.layout;
    const vary = Object.entries(SEARCH_SWITCHES).reduce(
      (bits, [k, on], i) => bits | (Number(o[k as SearchSwitch] ?? on) << i),
      0,
    );
    const st = m._llmem_search_run(o.gpus, o.global_batch ?? 0, o.free_fraction ?? 0.1, o.max_micro_batch ?? 16, vary);
    const base = m._llmem_search_ptr();
    const { status, error_field, count, empty_reason, empty_field, ...counts } = readStruct(this.mem, base, 'search');
    if (st !== 0) return this.failure(st, error_field, 'search');
    const engine = this.input('parallel.engine'),
      byGlobalBatch = !Number.isNaN(this.input('training.global_batch'));
    const name = (path: FieldPath, i: number) => this.field(path)!.values[i];
    const layouts = each(base + S.layouts, count, L.size, (a) => {
      const l = readStruct(this.mem, a, 'layout');
      const patch = layoutPatch(l, o, name, l.engine !== engine, byGlobalBatch);
      const shown = readStruct(this.mem, a, 'layout', 'f64') as Omit<Layout, 'pareto' | 'patch'>;
      return { ...shown, pareto: l.pareto !== 0, patch };
    });
    const rejected = Array.from({ length: S.status_count }, (_, s) => ({
      reason: this.mem.statusText(s),
      count: f64(this.mem, base + S.rejected + 8 * s),
    }))
      .filter((r) => r.count > 0)
      .sort((a, b) => b.count - a.count);
    const out: SearchResult = { ...counts, rejected, layouts };
    const why = () => this.mem.statusText(empty_reason);
    if (!layouts.length) out.empty_reason = empty_field >= 0 ? `${this.fields[empty_field].path}: ${why()}` : why();
    return out;
  }

  /** Changes that make the config fit (or, when it fits, run faster or on fewer GPUs): single changes and
   * small combinations, each verified by its own full estimate, ranked by step time per token (core/suggest.c). */
  suggest(config: unknown, o: SuggestOptions = {}): SuggestResult | ConfigError {
    const err = this.load(config);
    if (err) return err;
    const m = this.m,
      { suggest: G, suggestion: H } = this.mem.layout;
    const st = m._llmem_suggest_run(o.free_fraction ?? 0.1, o.max_gpus ?? 4096);
    const base = m._llmem_suggest_ptr();
    const { status, error_field, base_fits, fewest_gpus, fewest_index, count, ...figures } = readStruct(
      this.mem,
      base,
      'suggest',
    );
    if (st !== 0) return this.failure(st, error_field, 'suggest');
    const gpusPerNode = this.input('parallel.gpus_per_node');
    const suggestions: Suggestion[] = each(base + G.suggestions, count, H.size, (a) => {
      const { values, fields, change_count, kind, ...r } = readStruct(this.mem, a, 'suggestion');
      const changes = fields.slice(0, change_count).map((field, j) => {
        const f = this.fields[field];
        return { path: f.path, value: decodeValue(f, values[j]) };
      });
      const patch: Config = {};
      for (const c of changes) setPath(patch, c.path, c.value);
      return {
        kind: this.mem.text(m._llmem_suggest_kind_text(kind)) as SuggestionKind,
        changes,
        patch,
        ...r,
        host_cpu_bytes_per_node: r.host_cpu_bytes * Math.min(r.gpus, gpusPerNode),
      };
    });
    return {
      base_fits: base_fits !== 0,
      ...figures,
      suggestions,
      fewest_gpus: fewest_gpus || null,
      fewest: fewest_index >= 0 ? suggestions[fewest_index] : null,
    };
  }

  /** A planner status as an error naming the key the core points at (field), else the call. */
  private failure(status: number, field: number, call: string): ConfigError {
    const path = field >= 0 ? this.fields[field].path : call;
    return { path, message: `${path}: ${this.mem.statusText(status)}` };
  }

  /** The value of a key in the input block (as the last load left it). */
  private input(path: FieldPath): number {
    return f64(this.mem, this.m._llmem_input_ptr() + 8 * this.field(path)!.slot);
  }
}
