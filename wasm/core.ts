// The calls into the wasm core (wasm/boundary.c): load, estimate, profile, planner.
import { decodeValue, defaultConfig, flatten, suggestionChanges } from '../frontend/config/encode.js';
import { type Config, type ConfigError, setPath } from '../frontend/config/json.js';
import type { EstimateOutcome, Layout, ProfileValue, SearchResult, StepTime } from '../frontend/config/results.js';
import type { Suggestion, SuggestResult, SweepPoint } from '../frontend/config/results.js';
import { layoutPatch, rejectedByReason, type SearchOptions } from '../frontend/config/search.js';
import type { SuggestOptions } from '../frontend/config/search.js';
import { type CoreCalls, type CoreHeap, type FieldInfo, type FieldPath, MAX_SWEEP } from './generated.js';
import { STEP_PARTS, type StepPart } from './generated.js';
import type { CoreFactory, Options, StructNumbers } from './generated.js';
import { each, openView, READ, readFieldTable, VIEWS, type View, WRITE } from './generated.js';
import { readReadings, readResult } from './views.js';

/** Where the factory finds the binary: its bytes (Node), or its URL (the page: compiled while it streams in). */
export type CoreBinary = { wasmBinary: Uint8Array } | { wasmUrl: string };

export class Core {
  readonly fields: FieldInfo[];
  private readonly byPath: Map<string, FieldInfo>;
  private readonly mem: View;

  private constructor(private readonly m: CoreHeap & CoreCalls) {
    this.mem = openView(m);
    this.fields = readFieldTable(m, this.mem.text);
    this.byPath = new Map(this.fields.map((f) => [f.path, f]));
  }

  static async load(factory: CoreFactory, binary: CoreBinary): Promise<Core> {
    const options = 'wasmBinary' in binary ? binary : { locateFile: () => binary.wasmUrl };
    return new Core(await factory(options));
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
   * it shapes (its label) and its row of core/profiles.def (the row's text: frontend/config/profile.ts). */
  profile(config: unknown): { ok: true; implied: ProfileValue[] } | { ok: false; error: ConfigError } {
    const err = this.load(config);
    if (err) return { ok: false, error: err };
    const { m, mem } = this;
    const implied = this.fields.flatMap((f): ProfileValue[] => {
      const v = m._llmem_profile_value_run(f.index),
        t = m._llmem_profile_term();
      if (Number.isNaN(v)) return [];
      const row = m._llmem_profile_row_run(f.index);
      const term = t >= 0 ? mem.texts.term_label(t) : null;
      return [{ path: f.path, value: decodeValue(f, v), term, term_id: t >= 0 ? t : null, row }];
    });
    return { ok: true, implied };
  }

  /** Run the core on a flat input without reading the result (benchmarks). */
  runOnly(flat: Float64Array): number {
    this.m.HEAPF64.set(flat, this.m._llmem_input_ptr() / 8);
    return this.m._llmem_run();
  }

  estimateFlat(flat: Float64Array, options: { timeline?: boolean } = {}): EstimateOutcome {
    if (this.runOnly(flat) !== 0) return { ok: false, error: this.problem() };
    return readResult(this.mem, this.m._llmem_result_ptr(), !!options.timeline);
  }

  /** The last call's failure: every call words it in the result block (wasm/boundary.c fail). */
  private problem(): ConfigError {
    const base = this.m._llmem_result_ptr(),
      { error_path, error_message } = this.mem.layout.result;
    return { path: this.mem.text(base + error_path), message: this.mem.text(base + error_message) };
  }

  /** Loads the config, and the numeric key a planner call varies (its field), else the first problem. */
  private loadAlong(config: unknown, path: string): FieldInfo | ConfigError {
    const f = this.field(path);
    if (!f || (f.kind !== 'int' && f.kind !== 'num'))
      return { path, message: `${path}: not a numeric key of the config` };
    return this.load(config) ?? f;
  }

  /** The three readings along one numeric key (at most 4096 points). */
  sweep(config: unknown, path: string, values: number[]): SweepPoint[] | ConfigError {
    if (values.length > MAX_SWEEP) return { path, message: `a sweep has at most ${MAX_SWEEP} points` };
    const f = this.loadAlong(config, path);
    if (!('index' in f)) return f;
    this.m.HEAPF64.set(values, this.m._llmem_sweep_values_ptr() / 8);
    this.m._llmem_sweep_run(f.index, values.length);
    const P = this.mem.layout.sweep_point;
    return each(this.m._llmem_sweep_points_ptr(), values.length, P.size, (a) => ({
      value: READ.sweep_point(this.mem, a).value,
      ...readReadings(this.mem, a + P.readings),
    }));
  }

  /** The largest value of a key in [lo, hi] (multiples of step) that leaves free_fraction of the GPU free; 0 if none. */
  largestFit(
    config: unknown,
    path: string,
    o: { lo: number; hi: number; step: number; free_fraction?: number },
  ): number | ConfigError {
    const f = this.loadAlong(config, path);
    if (!('index' in f)) return f;
    const best = this.m._llmem_largest_fit_run(f.index, o.lo, o.hi, o.step, o.free_fraction ?? 0.1);
    return best >= 0 ? best : this.problem();
  }

  /** Step time and tokens/s per GPU of a config (a ranking aid), and where the time goes (its parts add up to it). */
  stepTime(config: unknown): StepTime | ConfigError {
    const err = this.load(config);
    if (err) return err;
    const s = this.m._llmem_step_time_run();
    if (s < 0) return this.problem();
    const parts = Object.fromEntries(STEP_PARTS.map((p, i) => [p, this.m._llmem_step_part_seconds(i)])) as Record<
      StepPart,
      number
    >;
    return { step_seconds: s, tokens_per_second_per_gpu: this.m._llmem_step_tokens(), parts };
  }

  /** Every valid layout of opts.gpus that fits, the fastest first (at most 256 kept). */
  search(config: unknown, o: SearchOptions): SearchResult | ConfigError {
    const ran = this.plan(config, 'search', o);
    if ('message' in ran) return ran;
    const { base, r } = ran;
    const engine = this.input('parallel.engine'),
      byGlobalBatch = !Number.isNaN(this.input('training.global_batch'));
    const name = (path: FieldPath, i: number) => this.field(path)!.values[i];
    const { search: S, layout: L } = this.mem.layout;
    const layouts: Layout[] = each(base + S.layouts, r.count, L.size, (a) => {
      const l = READ.layout(this.mem, a);
      return { ...VIEWS.layout(this.mem, a, l), patch: layoutPatch(l, o, name, l.engine !== engine, byGlobalBatch) };
    });
    const rejected = rejectedByReason(r.rejected, this.mem.texts.status);
    const out: SearchResult = { ...VIEWS.search(this.mem, base, r), rejected, layouts };
    const why = this.mem.texts.status(r.empty_reason);
    if (!layouts.length) out.empty_reason = r.empty_field >= 0 ? `${this.fields[r.empty_field].path}: ${why}` : why;
    return out;
  }

  /** Changes that make the config fit (or, when it fits, run faster or on fewer GPUs): single changes and
   * small combinations, each verified by its own full estimate, ranked by step time per token (core/suggest.c). */
  suggest(config: unknown, o: SuggestOptions = {}): SuggestResult | ConfigError {
    const ran = this.plan(config, 'suggest', o);
    if ('message' in ran) return ran;
    const { base, r } = ran;
    const { suggest: G, suggestion: H } = this.mem.layout;
    const suggestions: Suggestion[] = each(base + G.suggestions, r.count, H.size, (a) => {
      const s = READ.suggestion(this.mem, a),
        { kind, ...readings } = VIEWS.suggestion(this.mem, a, s);
      return { kind, ...suggestionChanges(this.fields, s.fields, s.values, s.change_count), ...readings };
    });
    return {
      ...VIEWS.suggest(this.mem, base, r),
      suggestions,
      fewest_gpus: r.fewest_gpus || null,
      fewest: r.fewest_index >= 0 ? suggestions[r.fewest_index] : null,
    };
  }

  /** Loads the config, writes a planner call's options (the core's defaults stand for the rest) and runs it: its
   * result block, or the problem. */
  private plan<C extends 'search' | 'suggest'>(config: unknown, call: C, o: Partial<Options[`${C}_options`]>) {
    const err = this.load(config);
    if (err) return err;
    WRITE[`${call}_options`](this.mem, this.m[`_llmem_${call}_options_ptr`](), o);
    if (this.m[`_llmem_${call}_run`]() !== 0) return this.problem();
    const base = this.m[`_llmem_${call}_ptr`]();
    return { base, r: READ[call](this.mem, base) as StructNumbers[C] };
  }

  /** The value of a key in the input block (as the last load left it). */
  private input(path: FieldPath): number {
    return this.m.HEAPF64[this.m._llmem_input_ptr() / 8 + this.field(path)!.slot];
  }
}
