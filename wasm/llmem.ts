// Typed wrapper around the wasm core, shared by the CLI, the page and the tests.
// It flattens a config-v1 object into the core's input block by walking the
// core's own field table (core/fields.def), so keys, kinds, enum values and
// defaults have one source of truth, and reads the result block through the
// offsets the core reports (no hard-coded struct layout).

export const ABI_VERSION = 1;

export type FieldKind = 'int' | 'num' | 'bool' | 'enum' | 'set' | 'text' | 'group';
const KINDS: FieldKind[] = ['int', 'num', 'bool', 'enum', 'set', 'text', 'group'];

export interface FieldInfo {
  index: number;
  path: string;
  kind: FieldKind;
  nullable: boolean;
  /** a text key the core reads as a month: "YYYY-MM" stored as year * 12 + month - 1 */
  months: boolean;
  default: number;
  min: number;
  max: number;
  values: string[];
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Config = { [key: string]: Json };

/** "YYYY-MM" as year * 12 + month - 1 (the core's months), or null. */
export function monthIndex(text: string): number | null {
  const m = /^(\d{4})-(\d{2})$/.exec(text);
  if (!m) return null;
  const month = Number(m[2]);
  return month >= 1 && month <= 12 ? Number(m[1]) * 12 + month - 1 : null;
}

export function monthText(index: number): string {
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
}

export interface ProfileValue {
  path: string;
  value: Json;
  term: string | null;
  source: string;
}

export interface ConfigError {
  path: string;
  message: string;
}

export const CATEGORIES = [
  'weights',
  'gradients',
  'master_weights',
  'optimizer_states',
  'activations',
  'logits',
  'comm_buffers',
  'temporaries',
] as const;
export type Category = (typeof CATEGORIES)[number];
export type Breakdown = Record<Category, number>;

export interface RankResult {
  stage: number;
  peak_allocated_bytes: number;
  peak_reserved_bytes: number;
  device_used_bytes: number;
  breakdown_bytes: Breakdown;
  persistent_bytes: number;
  /** reserved - allocated when reserved peaks (simulated caching allocator) */
  fragmentation_bytes: number;
  largest_free_block_bytes: number;
  /** true: reserved comes from the simulated allocator; false: from its bound */
  reserved_simulated: boolean;
  params: number;
  layers: number;
  peak_phase: string;
  peak_micro_batch: number | null;
  peak_layer: number | null;
}

export interface Timeline {
  stride: number;
  total_bytes: number[];
  /** segments the simulated allocator holds at each event (empty when not simulated) */
  reserved_bytes: number[];
  category_bytes: Record<Category, number[]>;
  phase: string[];
  micro_batch: number[];
  layer: number[];
}

/** One term of "why this number": its formula with the inputs filled in. */
export interface Term {
  category: Category | 'runtime';
  label: string;
  formula: string;
  value_bytes: number;
}

const GIB = 2 ** 30;
/** 1234567 -> "1,234,567" (toLocaleString is slow in hot paths). */
export function groupDigits(n: number): string {
  const s = String(Math.abs(n));
  let out = '';
  for (let i = 0; i < s.length; i++) out += (i > 0 && (s.length - i) % 3 === 0 ? ',' : '') + s[i];
  return n < 0 ? `-${out}` : out;
}

/** Fill a core formula: {cN} a count, {bN} bytes, {xN} a plain number. */
export function fillFormula(template: string, inputs: number[]): string {
  return template.replace(/\{([cbx])(\d)\}/g, (_, kind: string, i: string) => {
    const v = inputs[Number(i)] ?? 0;
    if (kind === 'b') return `${(v / GIB).toFixed(2)} GiB`;
    if (kind === 'c') return groupDigits(Math.round(v));
    return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, '');
  });
}

export interface EstimateResult {
  ok: true;
  per_gpu: RankResult & { peak_at: string };
  /** the highest allocated peak over the ranks (the headline "allocated") and its rank: may differ from per_gpu.stage */
  peak_allocated: { bytes: number; stage: number };
  ranks: RankResult[];
  params: { total: number; active: number; trainable: number; per_gpu: number };
  host: { cpu_bytes: number; nvme_bytes: number };
  fits: boolean;
  utilization: number;
  capacity_bytes: number;
  warnings: string[];
  terms: Term[];
  timeline?: Timeline;
}

export interface EstimateFailure {
  ok: false;
  error: ConfigError;
}

export type EstimateOutcome = EstimateResult | EstimateFailure;

export interface Readings {
  ok: boolean;
  error?: string;
  peak_allocated_bytes: number;
  peak_reserved_bytes: number;
  device_used_bytes: number;
  capacity_bytes: number;
  fits: boolean;
}

export interface SweepPoint extends Readings {
  value: number;
}

export interface SearchOptions {
  gpus: number;
  global_batch?: number; // samples per step; 0 or absent: the config's micro_batch x grad_accum x dp
  free_fraction?: number; // HBM a fitting layout leaves free (0.10)
  max_micro_batch?: number;
  vary_sharding?: boolean;
  vary_recompute?: boolean;
}

export interface Layout {
  dp: number;
  tp: number;
  pp: number;
  vpp: number;
  cp: number;
  ep: number;
  micro_batch: number;
  grad_accum: number;
  device_used_bytes: number;
  step_seconds: number;
  tokens_per_second_per_gpu: number;
  pareto: boolean;
  /** merge into the config to load this layout */
  patch: Config;
}

export interface SearchResult {
  candidates: number;
  valid: number;
  fitting: number;
  layouts: Layout[];
  /** with no layout kept: why (the core's reason, with the key it names) */
  empty_reason?: string;
}

interface CoreModule {
  HEAPU8: Uint8Array;
  HEAPF64: Float64Array;
  HEAP32: Int32Array;
  _llmem_abi_version(): number;
  _llmem_input_ptr(): number;
  _llmem_result_ptr(): number;
  _llmem_field_count(): number;
  _llmem_reset_input(): void;
  _llmem_run(): number;
  _llmem_field_path(i: number): number;
  _llmem_field_kind(i: number): number;
  _llmem_field_flags(i: number): number;
  _llmem_profile_value_run(i: number): number;
  _llmem_profile_term(): number;
  _llmem_profile_source_text(): number;
  _llmem_field_default(i: number): number;
  _llmem_field_min(i: number): number;
  _llmem_field_max(i: number): number;
  _llmem_field_value_count(i: number): number;
  _llmem_field_value(i: number, j: number): number;
  _llmem_status_text(s: number): number;
  _llmem_warning_text(w: number): number;
  _llmem_phase_text(p: number): number;
  _llmem_result_layout(): number;
  _llmem_term_label_text(t: number): number;
  _llmem_term_formula_text(t: number): number;
  _llmem_sweep_values_ptr(): number;
  _llmem_sweep_points_ptr(): number;
  _llmem_sweep_run(field: number, count: number): number;
  _llmem_largest_fit_run(field: number, lo: number, hi: number, step: number, free: number): number;
  _llmem_search_ptr(): number;
  _llmem_search_run(
    gpus: number,
    batch: number,
    free: number,
    maxMb: number,
    sharding: number,
    recompute: number,
  ): number;
  _llmem_step_time_run(): number;
  _llmem_step_tokens(): number;
}

const MAX_SWEEP = 4096;

export type CoreFactory = (options?: { wasmBinary?: ArrayBuffer | Uint8Array }) => Promise<unknown>;

interface StructLayout {
  result: Record<string, number>;
  rank: Record<string, number>;
  event: Record<string, number>;
  term: Record<string, number>;
  readings: Record<string, number>;
  sweep_point: Record<string, number>;
  search: Record<string, number>;
  layout: Record<string, number>;
}

const isObject = (v: unknown): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `"${v}"`;
  return typeof v === 'object' ? 'an object' : String(v);
}

export class Core {
  readonly fields: FieldInfo[];
  private readonly byPath = new Map<string, FieldInfo>();
  private readonly layout: StructLayout;
  private readonly phases: string[] = [];
  private readonly decoder = new TextDecoder();
  private readonly texts = new Map<string, string>(); // warning / term strings by kind and id

  private cachedText(kind: string, id: number, read: (id: number) => number): string {
    const key = kind + id;
    let s = this.texts.get(key);
    if (s === undefined) this.texts.set(key, (s = this.text(read(id))));
    return s;
  }

  private constructor(private readonly m: CoreModule) {
    if (m._llmem_abi_version() !== ABI_VERSION)
      throw new Error(`llmem core ABI ${m._llmem_abi_version()} does not match the wrapper (${ABI_VERSION})`);
    const n = m._llmem_field_count();
    this.fields = [];
    for (let i = 0; i < n; i++) {
      const values: string[] = [];
      for (let j = 0; j < m._llmem_field_value_count(i); j++) values.push(this.text(m._llmem_field_value(i, j)));
      const f: FieldInfo = {
        index: i,
        path: this.text(m._llmem_field_path(i)),
        kind: KINDS[m._llmem_field_kind(i)],
        nullable: (m._llmem_field_flags(i) & 1) !== 0,
        months: (m._llmem_field_flags(i) & 2) !== 0,
        default: m._llmem_field_default(i),
        min: m._llmem_field_min(i),
        max: m._llmem_field_max(i),
        values,
      };
      this.fields.push(f);
      this.byPath.set(f.path, f);
    }
    this.layout = JSON.parse(this.text(m._llmem_result_layout())) as StructLayout;
    for (let p = 0; p < 5; p++) this.phases.push(this.text(m._llmem_phase_text(p)));
  }

  static async load(factory: CoreFactory, wasmBinary?: Uint8Array): Promise<Core> {
    const m = (await factory(wasmBinary ? { wasmBinary } : {})) as CoreModule;
    return new Core(m);
  }

  field(path: string): FieldInfo | undefined {
    return this.byPath.get(path);
  }

  private text(ptr: number): string {
    if (!ptr) return '';
    const heap = this.m.HEAPU8;
    let end = ptr;
    while (heap[end] !== 0) end++;
    return this.decoder.decode(heap.subarray(ptr, end));
  }

  /** The config that every omitted key stands for (core defaults; null = automatic).
   * Given a config, keys its training-stack profile sets take the profile's value. */
  defaults(config?: unknown): Config {
    const root: Config = {};
    for (const f of this.fields) {
      const parts = f.path.split('.');
      let node: Config = root;
      for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Config;
      const key = parts[parts.length - 1];
      if (f.kind === 'group') {
        if (!(key in node)) node[key] = f.nullable && f.path !== 'model' ? null : {};
        continue;
      }
      if (f.kind === 'text') continue;
      node[key] = this.toJson(f, f.default);
    }
    const profile = config === undefined ? null : this.profile(config);
    for (const p of profile?.ok ? profile.implied : []) {
      const parts = p.path.split('.');
      let node: Config = root;
      for (const q of parts.slice(0, -1)) node = (node[q] ??= {}) as Config;
      node[parts[parts.length - 1]] = p.value;
    }
    return root;
  }

  /** A value of the input block as config JSON. */
  toJson(f: FieldInfo, v: number): Json {
    if (Number.isNaN(v)) return null;
    switch (f.kind) {
      case 'bool':
        return v !== 0;
      case 'enum':
        return f.values[v] ?? null;
      case 'set':
        return f.values.filter((_, i) => (v & (1 << i)) !== 0);
      default:
        return v;
    }
  }

  /** Config JSON to the flat input block; the first problem is returned as an error. */
  flatten(config: unknown): Float64Array | ConfigError {
    const slots = new Float64Array(this.fields.length);
    for (const f of this.fields) slots[f.index] = f.default;
    if (!isObject(config)) return { path: '', message: `the config must be a JSON object, not ${describe(config)}` };
    const err = this.walk(config, '', slots);
    return err ?? slots;
  }

  private children(prefix: string): string[] {
    const depth = prefix ? prefix.split('.').length : 0;
    return this.fields
      .filter((f) => (prefix ? f.path.startsWith(`${prefix}.`) : true) && f.path.split('.').length === depth + 1)
      .map((f) => f.path.split('.')[depth]);
  }

  private walk(obj: { [key: string]: Json }, prefix: string, slots: Float64Array): ConfigError | null {
    for (const [key, value] of Object.entries(obj)) {
      const path = prefix ? `${prefix}.${key}` : key;
      const f = this.byPath.get(path);
      if (!f) return { path, message: `${path}: unknown key (allowed here: ${this.children(prefix).join(', ')})` };
      const err = this.assign(f, value, slots);
      if (err) return err;
    }
    return null;
  }

  private assign(f: FieldInfo, value: Json, slots: Float64Array): ConfigError | null {
    const fail = (expected: string): ConfigError => ({
      path: f.path,
      message: `${f.path}: must be ${expected}${f.nullable ? ' or null' : ''}, not ${describe(value)}`,
    });
    if (value === null) {
      if (!f.nullable) return fail(this.expected(f));
      if (f.kind === 'group') {
        for (const g of this.fields) if (g.path.startsWith(`${f.path}.`)) slots[g.index] = g.default;
        return null;
      }
      slots[f.index] = NaN;
      return null;
    }
    switch (f.kind) {
      case 'group':
        return isObject(value) ? this.walk(value, f.path, slots) : fail('an object');
      case 'text':
        if (typeof value !== 'string') return fail('a string');
        if (f.months) {
          const month = monthIndex(value);
          if (month === null || month < f.min || month > f.max)
            return {
              path: f.path,
              message: `${f.path}: ${describe(value)} is not a date from ${monthText(f.min)} to ${monthText(f.max)} (YYYY-MM) or a known release`,
            };
          slots[f.index] = month;
        }
        return null;
      case 'int':
      case 'num':
        if (typeof value !== 'number' || !Number.isFinite(value)) return fail(this.expected(f));
        slots[f.index] = value;
        return null;
      case 'bool':
        if (typeof value !== 'boolean') return fail('true or false');
        slots[f.index] = value ? 1 : 0;
        return null;
      case 'enum': {
        const i = typeof value === 'string' ? f.values.indexOf(value) : -1;
        if (i < 0)
          return {
            path: f.path,
            message: `${f.path}: ${describe(value)} is not allowed (allowed: ${f.values.join(' | ')})`,
          };
        slots[f.index] = i;
        return null;
      }
      case 'set': {
        if (!Array.isArray(value)) return fail(`a list of ${f.values.join(' | ')}`);
        let mask = 0;
        for (const item of value) {
          const i = typeof item === 'string' ? f.values.indexOf(item) : -1;
          if (i < 0)
            return {
              path: f.path,
              message: `${f.path}: ${describe(item)} is not allowed (allowed: ${f.values.join(' | ')})`,
            };
          mask |= 1 << i;
        }
        slots[f.index] = mask;
        return null;
      }
    }
  }

  private expected(f: FieldInfo): string {
    if (f.kind === 'int') return `a whole number from ${f.min} to ${f.max}`;
    if (f.kind === 'num') return `a number from ${f.min} to ${f.max}`;
    if (f.kind === 'enum') return `one of ${f.values.join(' | ')}`;
    if (f.kind === 'bool') return 'true or false';
    if (f.kind === 'group') return 'an object';
    return 'a string';
  }

  /** Run the core on a config (presets and GPU ids must already be resolved). */
  estimate(config: unknown, options: { timeline?: boolean } = {}): EstimateOutcome {
    const flat = this.flatten(config);
    if (!(flat instanceof Float64Array)) return { ok: false, error: flat };
    return this.estimateFlat(flat, options);
  }

  /** What the training-stack profile (runtime.framework, framework_version) sets
   * among the keys this config leaves null: value, the "why this number" term
   * it shapes (its label) and the framework file it follows (core/profiles.def). */
  profile(config: unknown): { ok: true; implied: ProfileValue[] } | { ok: false; error: ConfigError } {
    const flat = this.flatten(config);
    if (!(flat instanceof Float64Array)) return { ok: false, error: flat };
    const m = this.m;
    m.HEAPF64.set(flat, m._llmem_input_ptr() / 8);
    const implied: ProfileValue[] = [];
    for (const f of this.fields) {
      const v = m._llmem_profile_value_run(f.index);
      if (Number.isNaN(v)) continue;
      const term = m._llmem_profile_term();
      implied.push({
        path: f.path,
        value: this.toJson(f, v),
        term: term >= 0 ? this.cachedText('l', term, (t) => m._llmem_term_label_text(t)) : null,
        source: this.text(m._llmem_profile_source_text()),
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
    const m = this.m;
    m.HEAPF64.set(flat, m._llmem_input_ptr() / 8);
    const status = m._llmem_run();
    const base = m._llmem_result_ptr();
    const R = this.layout.result;
    if (status !== 0) {
      return {
        ok: false,
        error: { path: this.text(base + R.error_path), message: this.text(base + R.error_message) },
      };
    }
    const f64 = (addr: number) => m.HEAPF64[addr / 8];
    const i32 = (addr: number) => m.HEAP32[addr / 4];
    const per = this.readRank(base + R.per_gpu);
    const ranks: RankResult[] = [];
    const rankCount = i32(base + R.rank_count);
    for (let i = 0; i < rankCount; i++) ranks.push(this.readRank(base + R.ranks + i * this.layout.rank.size));
    const warnings: string[] = [];
    const wc = i32(base + R.warning_count);
    for (let i = 0; i < wc; i++)
      warnings.push(this.cachedText('w', i32(base + R.warnings + 4 * i), (id) => m._llmem_warning_text(id)));
    const result: EstimateResult = {
      ok: true,
      per_gpu: { ...per, peak_at: this.text(base + R.peak_at) },
      peak_allocated: { bytes: f64(base + R.peak_allocated_bytes), stage: i32(base + R.peak_allocated_stage) },
      ranks,
      params: {
        total: f64(base + R.params_total),
        active: f64(base + R.params_active),
        trainable: f64(base + R.params_trainable),
        per_gpu: f64(base + R.params_per_gpu),
      },
      host: { cpu_bytes: f64(base + R.host_cpu_bytes), nvme_bytes: f64(base + R.host_nvme_bytes) },
      fits: i32(base + R.fits) !== 0,
      utilization: f64(base + R.utilization),
      capacity_bytes: f64(base + R.capacity_bytes),
      warnings,
      terms: this.readTerms(base),
    };
    if (options.timeline) result.timeline = this.readTimeline(base, result.per_gpu.reserved_simulated);
    return result;
  }

  private readRank(addr: number): RankResult {
    const K = this.layout.rank;
    const f64 = (a: number) => this.m.HEAPF64[a / 8];
    const i32 = (a: number) => this.m.HEAP32[a / 4];
    const breakdown = {} as Breakdown;
    for (const [i, c] of CATEGORIES.entries()) breakdown[c] = f64(addr + K.breakdown_bytes + 8 * i);
    const mb = i32(addr + K.peak_micro_batch),
      layer = i32(addr + K.peak_layer);
    return {
      stage: i32(addr + K.stage),
      peak_allocated_bytes: f64(addr + K.peak_allocated_bytes),
      peak_reserved_bytes: f64(addr + K.peak_reserved_bytes),
      device_used_bytes: f64(addr + K.device_used_bytes),
      breakdown_bytes: breakdown,
      persistent_bytes: f64(addr + K.persistent_bytes),
      fragmentation_bytes: f64(addr + K.fragmentation_bytes),
      largest_free_block_bytes: f64(addr + K.largest_free_block_bytes),
      reserved_simulated: i32(addr + K.reserved_simulated) !== 0,
      params: f64(addr + K.params_count),
      layers: f64(addr + K.layers_count),
      peak_phase: this.phases[i32(addr + K.peak_phase)] ?? '',
      peak_micro_batch: mb < 0 ? null : mb,
      peak_layer: layer < 0 ? null : layer,
    };
  }

  private load(config: unknown): ConfigError | null {
    const flat = this.flatten(config);
    if (!(flat instanceof Float64Array)) return flat;
    this.m.HEAPF64.set(flat, this.m._llmem_input_ptr() / 8);
    return null;
  }

  private numericField(path: string): FieldInfo | ConfigError {
    const f = this.field(path);
    if (!f || (f.kind !== 'int' && f.kind !== 'num'))
      return { path, message: `${path}: not a numeric key of the config` };
    return f;
  }

  private readReadings(addr: number): Readings {
    const D = this.layout.readings;
    const status = this.m.HEAP32[(addr + D.status) / 4];
    const f = (k: string) => this.m.HEAPF64[(addr + D[k]) / 8];
    return {
      ok: status === 0,
      ...(status !== 0 ? { error: this.text(this.m._llmem_status_text(status)) } : {}),
      peak_allocated_bytes: f('peak_allocated_bytes'),
      peak_reserved_bytes: f('peak_reserved_bytes'),
      device_used_bytes: f('device_used_bytes'),
      capacity_bytes: f('capacity_bytes'),
      fits: this.m.HEAP32[(addr + D.fits) / 4] !== 0,
    };
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
    const base = this.m._llmem_sweep_points_ptr(),
      P = this.layout.sweep_point;
    return values.map((_, i) => {
      const a = base + i * P.size;
      return { value: this.m.HEAPF64[(a + P.value) / 8], ...this.readReadings(a + P.readings) };
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
    if (best < 0) return this.statusError(path, -best);
    return best;
  }

  /** Step time and tokens/s per GPU of a config (a ranking aid). */
  stepTime(config: unknown): { step_seconds: number; tokens_per_second_per_gpu: number } | ConfigError {
    const err = this.load(config);
    if (err) return err;
    const s = this.m._llmem_step_time_run();
    if (s < 0) {
      const r = this.estimate(config);
      return r.ok ? { path: '', message: 'step time failed' } : r.error;
    }
    return { step_seconds: s, tokens_per_second_per_gpu: this.m._llmem_step_tokens() };
  }

  /** Every valid layout of opts.gpus that fits, the fastest first (at most 256 kept). */
  search(config: unknown, o: SearchOptions): SearchResult | ConfigError {
    const err = this.load(config);
    if (err) return err;
    const st = this.m._llmem_search_run(
      o.gpus,
      o.global_batch ?? 0,
      o.free_fraction ?? 0.1,
      o.max_micro_batch ?? 16,
      o.vary_sharding === false ? 0 : 1,
      o.vary_recompute === false ? 0 : 1,
    );
    const base = this.m._llmem_search_ptr(),
      S = this.layout.search,
      L = this.layout.layout;
    if (st !== 0) {
      const field = this.m.HEAP32[(base + S.error_field) / 4];
      const path = field >= 0 ? this.fields[field].path : 'search';
      return { path, message: `${path}: ${this.text(this.m._llmem_status_text(st))}` };
    }
    const f64 = (a: number) => this.m.HEAPF64[a / 8],
      i32 = (a: number) => this.m.HEAP32[a / 4];
    const name = (path: string, i: number) => this.field(path)!.values[i];
    const engineField = this.field('parallel.engine')!;
    const configEngine = this.m.HEAPF64[this.m._llmem_input_ptr() / 8 + engineField.index];
    const layouts: Layout[] = [];
    for (let i = 0; i < i32(base + S.count); i++) {
      const a = base + S.layouts + i * L.size;
      const g = (k: string) => f64(a + L[k]);
      const l = {
        dp: g('dp'),
        tp: g('tp'),
        pp: g('pp'),
        vpp: g('vpp'),
        cp: g('cp'),
        ep: g('ep'),
        micro_batch: g('micro_batch'),
        grad_accum: g('grad_accum'),
        device_used_bytes: g('device_used_bytes'),
        step_seconds: g('step_seconds'),
        tokens_per_second_per_gpu: g('tokens_per_second_per_gpu'),
        pareto: i32(a + L.pareto) !== 0,
      };
      // everything the search set, so that loading the patch reproduces the layout's memory:
      // even stages, every layer recomputed, expert TP 1, no hybrid group unless chosen
      const fsdpStrategy = name('parallel.fsdp_strategy', i32(a + L.fsdp_strategy));
      const parallel: Config = {
        gpus: o.gpus,
        // the engine only when the search changed it (a single-GPU config laid out over many GPUs)
        ...(i32(a + L.engine) !== configEngine ? { engine: name('parallel.engine', i32(a + L.engine)) } : {}),
        tp: l.tp,
        pp: l.pp,
        vpp: l.vpp,
        cp: l.cp,
        ep: l.ep,
        etp: 1,
        sequence_parallel: i32(a + L.sequence_parallel) !== 0,
        pp_schedule: name('parallel.pp_schedule', i32(a + L.pp_schedule)),
        pp_first_stage_layers: null,
        pp_last_stage_layers: null,
        zero_stage: i32(a + L.zero_stage),
        fsdp_strategy: fsdpStrategy,
        distributed_optimizer: i32(a + L.distributed_optimizer) !== 0,
      };
      if (fsdpStrategy !== 'hybrid_shard') parallel.fsdp_shard_size = null;
      layouts.push({
        ...l,
        patch: {
          parallel,
          training: {
            micro_batch: l.micro_batch,
            grad_accum: l.grad_accum,
            recompute: name('training.recompute', i32(a + L.recompute)),
            recompute_layers: null,
          },
        },
      });
    }
    const out: SearchResult = {
      candidates: f64(base + S.candidates),
      valid: f64(base + S.valid),
      fitting: f64(base + S.fitting),
      layouts,
    };
    if (layouts.length === 0) {
      const why = this.text(this.m._llmem_status_text(i32(base + S.empty_reason)));
      const field = i32(base + S.empty_field);
      out.empty_reason = field >= 0 ? `${this.fields[field].path}: ${why}` : why;
    }
    return out;
  }

  /** A planner status as an error: option statuses name the option, not a config key. */
  private statusError(path: string, status: number): ConfigError {
    const text = this.text(this.m._llmem_status_text(status));
    return /^options? /.test(text) ? { path: '', message: text } : { path, message: `${path}: ${text}` };
  }

  private readTerms(base: number): Term[] {
    const R = this.layout.result,
      T = this.layout.term;
    const n = this.m.HEAP32[(base + R.term_count) / 4];
    const terms: Term[] = [];
    for (let i = 0; i < n; i++) {
      const a = base + R.terms + i * T.size;
      const id = this.m.HEAP32[(a + T.id) / 4],
        cat = this.m.HEAP32[(a + T.category) / 4];
      const inputs = [0, 1, 2, 3].map((k) => this.m.HEAPF64[(a + T.inputs + 8 * k) / 8]);
      terms.push({
        category: cat < 0 ? 'runtime' : CATEGORIES[cat],
        label: this.cachedText('l', id, (t) => this.m._llmem_term_label_text(t)),
        formula: fillFormula(
          this.cachedText('f', id, (t) => this.m._llmem_term_formula_text(t)),
          inputs,
        ),
        value_bytes: this.m.HEAPF64[(a + T.value_bytes) / 8],
      });
    }
    return terms;
  }

  private readTimeline(base: number, simulated: boolean): Timeline {
    const R = this.layout.result,
      E = this.layout.event;
    const n = this.m.HEAP32[(base + R.event_count) / 4];
    const t: Timeline = {
      stride: this.m.HEAP32[(base + R.event_stride) / 4],
      total_bytes: [],
      reserved_bytes: [],
      category_bytes: Object.fromEntries(CATEGORIES.map((c) => [c, [] as number[]])) as Record<Category, number[]>,
      phase: [],
      micro_batch: [],
      layer: [],
    };
    for (let i = 0; i < n; i++) {
      const a = base + R.events + i * E.size;
      t.total_bytes.push(this.m.HEAPF64[(a + E.total_bytes) / 8]);
      if (simulated) t.reserved_bytes.push(this.m.HEAPF64[(a + E.reserved_bytes) / 8]);
      for (const [j, c] of CATEGORIES.entries())
        t.category_bytes[c].push(this.m.HEAPF64[(a + E.category_bytes + 8 * j) / 8]);
      t.phase.push(this.phases[this.m.HEAP32[(a + E.phase) / 4]] ?? '');
      t.micro_batch.push(this.m.HEAP32[(a + E.micro_batch) / 4]);
      t.layer.push(this.m.HEAP32[(a + E.layer) / 4]);
    }
    return t;
  }
}
