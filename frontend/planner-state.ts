// The planner's state, in signals beside the app state: the safety margin and
// what the headline derives from it (largest fit, step time), the Planner
// panel's tab, the sweep and the layout search (run by a PlannerBackend,
// the Worker on the page), the pinned A of an A/B comparison, and a loaded
// measurement. Sweeps and searches re-run by themselves when the config
// changes while their tab is open; a running search is cancelled at once.
import { batch, computed, effect, signal, type Signal } from '@preact/signals';
import type {
  Config,
  ConfigError,
  EstimateResult,
  Json,
  SearchOptions,
  SearchResult,
  SearchSwitch,
  StepTime,
} from '../wasm/llmem.js';
import { SEARCH_SWITCHES } from '../wasm/llmem.js';
import { compare, readMeasurement, type Measurement } from './config/compare.js';
import { baseValue, computeBase, configToDoc, docToConfig, leafFields, normalize, type Doc } from './config/doc.js';
import { merge, resolveConfig } from './config/resolve.js';
import type { View, ViewTab } from './config/url.js';
import {
  axisOf,
  diffResults,
  layoutRows,
  SWEEP_AXES,
  searchKey,
  stableJson,
  sweepValues,
  type Fits,
  type LayoutRow,
  type PlanPoint,
  type SortKey,
  type Spacing,
  type Verdict,
  verdictOf,
} from './planner.js';
import type { BaseState } from './state.js';
import { gpuAlternatives } from './config/gpu-alternatives.js';
import type { SuggestReport } from './config/suggest.js';
import { Cancelled, type Done, type PlannerBackend } from './worker-client.js';
import { afterFrame } from './after-frame.js';

export type Tab = ViewTab;
export const TABS: { id: Tab; label: string }[] = [
  { id: 'sweep', label: 'Sweep' },
  { id: 'search', label: 'Layout search' },
  { id: 'compare', label: 'Compare A/B' },
  { id: 'measured', label: 'Measured' },
];

export interface Range {
  from: number;
  to: number;
  points: number;
  spacing: Spacing;
}

export interface Job<T> {
  status: 'idle' | 'running' | 'done' | 'error';
  data: T | null;
  /** the config the data is for (a changed config makes it stale until the re-run) */
  key: string | null;
  error: string | null;
  /** time inside the core, and from request to answer */
  ms: number;
  roundMs: number;
  where: string;
  /** a request is with the backend now (status 'running' also covers the wait before a re-run starts) */
  inflight: boolean;
}
const idle = <T>(): Job<T> => ({
  status: 'idle',
  data: null,
  key: null,
  error: null,
  ms: 0,
  roundMs: 0,
  where: '',
  inflight: false,
});

export interface SweepData {
  path: string;
  points: PlanPoint[];
}

export interface Pinned {
  doc: Doc;
  values: Record<string, Json>;
  result: EstimateResult;
  step: StepTime | null;
}

export interface LoadedMeasurement {
  name: string;
  m: Measurement;
}

export type PlannerState = ReturnType<typeof createPlanner>;

/** A config without one key (a sweep does not depend on the value it sweeps). */
function withoutKey(c: Config, path: string): Config {
  const [head, ...rest] = path.split('.');
  if (!(head in c)) return c;
  const out = { ...c };
  if (!rest.length) delete out[head];
  else if (out[head] && typeof out[head] === 'object' && !Array.isArray(out[head]))
    out[head] = withoutKey(out[head] as Config, rest.join('.'));
  return out;
}

const SWEEP_DELAY_MS = 40;
const SEARCH_DELAY_MS = 100;
/** While estimates run in the Worker, the largest fit and "Make it fit" (a second or more of estimates) start after
 * this long without an edit: started between keystrokes, they would take a processor from the next edit's estimate
 * for an answer thrown away (issue 12). */
const QUIET_MS = 300;

export function createPlanner(app: BaseState, backend: PlannerBackend) {
  const core = app.core;
  /** HBM a fitting setup must leave free (headline fit and layout search). */
  const freeFraction = signal(0.1);
  /** One notion of fitting: the headline, the phone bar and "Make it fit" keep the same headroom. */
  const verdict = computed<Verdict | null>(() => {
    const r = app.result.value;
    return r ? verdictOf(r.fits, r.per_gpu.device_used_bytes, r.capacity_bytes, freeFraction.value) : null;
  });
  const tab = signal<Tab | null>(null);

  const ready = computed(() => (app.outcome.value.ok ? app.resolved.value : null));
  /** The config once its own estimate is on screen: while a heavy one computes in the Worker, the planner's
   * jobs (each dozens of estimates) wait, so they never compete for the processor with the estimate the
   * edit waits for; what they showed stays until then. */
  const settled = computed(() => (app.computing.value ? null : ready.value));

  // Largest fits: ~30 estimates of bisection, each with the simulated caching allocator (~0.5 ms in wasm
  // for the default model, milliseconds for deep ones): always in the Worker, so an edit never waits for them.
  const fits = signal<Fits | ConfigError | null>(null);
  let fitGen = 0;
  let fitTimer: ReturnType<typeof setTimeout> | undefined;
  let fitFrame = () => {};
  const stopFits = effect(() => {
    const c = settled.value;
    const free = freeFraction.value;
    const g = ++fitGen;
    clearTimeout(fitTimer);
    fitFrame();
    if (app.computing.value) return void backend.cancel('fit');
    if (!c) return void (fits.value = null);
    backend.cancel('fit');
    const start = () =>
      backend.run({ kind: 'fit', config: c, free }).then(
        (d) => {
          if (g !== fitGen) return;
          fits.value = d.kind === 'fit' ? (d.ok ? d.fits : d.error) : null;
        },
        (e: unknown) => {
          if (!(e instanceof Cancelled) && g === fitGen)
            fits.value = { path: '', message: String((e as Error).message ?? e) };
        },
      );
    if (app.heavy.peek()) fitTimer = setTimeout(start, QUIET_MS);
    // to the Worker once the edit's frame is drawn: its request and its thirty estimates beside it cost that frame 1-2 ms
    else if (backend.offThread) fitFrame = afterFrame(start);
    else start();
  });
  // "Make it fit": the suggestion search (core/suggest.c, a few hundred estimates) in the Worker, only
  // while the config does not fit; a newer config preempts it.
  const suggest = signal<Job<SuggestReport>>(idle());
  let suggestGen = 0;
  let suggestTimer: ReturnType<typeof setTimeout> | undefined;
  const suggestKey = computed(() => {
    const c = settled.value,
      r = app.result.value;
    return c && r && verdict.value !== 'fits' ? stableJson([c, freeFraction.value]) : null;
  });
  const stopSuggest = effect(() => {
    const key = suggestKey.value;
    const c = ready.peek(),
      free = freeFraction.peek(),
      r = app.result.peek();
    const g = ++suggestGen;
    clearTimeout(suggestTimer);
    backend.cancel('suggest');
    if (app.computing.peek()) {
      // the newer config's turn comes when its estimate lands; meanwhile nothing is searching, and the status line
      // stays (one that came and went with each heavy edit moved the cards below it twice)
      if (suggest.peek().inflight) suggest.value = { ...suggest.peek(), inflight: false };
      return;
    }
    if (!key || !c) return void (suggest.value = idle());
    if (key === suggest.peek().key && suggest.peek().status === 'done') return;
    suggest.value = { ...suggest.peek(), status: 'running', error: null, inflight: true };
    // in the Worker it waits for a pause in the edits, heavy config or not: started 100 ms after each edit, a search
    // that the next edit threw away took a processor from that edit, and its worker's terminate cost it 1-3 ms
    const delay = backend.offThread ? QUIET_MS : SEARCH_DELAY_MS;
    suggestTimer = setTimeout(() => {
      const gpus = r ? gpuAlternatives(c, r.capacity_bytes) : [];
      backend.run({ kind: 'suggest', config: c, free, gpus }).then(
        (d) => {
          if (g !== suggestGen) return;
          const base = { key, ms: d.ms, roundMs: d.roundMs, where: d.where, inflight: false };
          suggest.value =
            d.kind === 'suggest' && d.ok
              ? { ...base, status: 'done', data: d.report, error: null }
              : { ...base, status: 'error', data: null, error: d.ok ? 'no answer' : d.error.message };
        },
        (e: unknown) => {
          if (g !== suggestGen || e instanceof Cancelled) return;
          suggest.value = { ...idle(), status: 'error', key, error: String((e as Error).message ?? e) };
        },
      );
    }, delay);
  });
  /** Apply a suggestion (merge() of its patch), or move to another GPU model of the catalog. */
  function applySuggestion(patch: Config) {
    const next = configToDoc(core, merge(app.config.value, patch));
    if (next.ok) app.load(next.doc);
  }

  /** The config of the result on screen: while a heavy one computes in the Worker, the one before it. */
  let lastShown: Config | null = null;
  const shownConfig = computed(() => (app.computing.value ? lastShown : (lastShown = ready.value)));
  // the step time of the result on screen, so that it changes with the headline, in the frame that draws the result
  // (computed from the edit on, it changed the headline's text, and so the page's layout, while the Worker computed)
  const step = computed(() => {
    const c = shownConfig.value;
    if (!c) return null;
    const s = core.stepTime(c);
    return 'step_seconds' in s ? s : null;
  });

  // ------------------------------------------------------------ sweep
  const sweepAxis = signal('training.seq_len');
  const ranges = signal<Record<string, Range>>({});
  const range = computed<Range>(() => {
    const a = axisOf(sweepAxis.value);
    return ranges.value[a.path] ?? { from: a.from, to: a.to, points: a.points, spacing: a.spacing };
  });
  const sweepPlan = computed<{ values: (number | string)[] } | { error: string }>(() => {
    const a = axisOf(sweepAxis.value);
    if (a.categorical) return { values: core.field(a.path)?.values ?? [] };
    const r = range.value;
    const v = sweepValues(r.from, r.to, r.points, r.spacing, core.field(a.path)?.kind !== 'num');
    return typeof v === 'string' ? { error: v } : { values: v };
  });
  const sweep = signal<Job<SweepData>>(idle());

  function setRange(patch: Partial<Range>) {
    ranges.value = { ...ranges.value, [sweepAxis.value]: { ...range.value, ...patch } };
  }

  // ------------------------------------------------------------ search
  const searchGpus = signal<number | null>(null); // null: the config's GPU count
  const searchBatch = signal<number | null>(null); // null: the config's global batch (or mb x ga x dp)
  const searchVary = signal<Record<SearchSwitch, boolean>>({ ...SEARCH_SWITCHES });
  const search = signal<Job<SearchResult>>(idle());
  const sort = signal<{ key: SortKey; dir: 'asc' | 'desc' }>({ key: 'step_seconds', dir: 'asc' });
  const searchOptions = computed<SearchOptions>(() => ({
    gpus: searchGpus.value ?? (app.get('parallel.gpus') as number),
    global_batch: searchBatch.value ?? 0,
    free_fraction: freeFraction.value,
    ...searchVary.value,
  }));
  const rows = computed<LayoutRow[]>(() => {
    const r = search.value.data;
    return r ? layoutRows(r, ((app.resolved.value.parallel as Config | undefined)?.engine as string) ?? 'fsdp2') : [];
  });

  // one runner for both: a generation per kind drops answers that were overtaken
  const gen = { sweep: 0, search: 0 };
  function start<T>(
    kind: 'sweep' | 'search',
    target: Signal<Job<T>>,
    key: string,
    job: Parameters<PlannerBackend['run']>[0],
    pick: (d: Done) => T,
  ) {
    const g = ++gen[kind];
    target.value = { ...target.peek(), status: 'running', error: null, inflight: true };
    backend.run(job).then(
      (d) => {
        if (g !== gen[kind]) return;
        target.value = d.ok
          ? {
              status: 'done',
              data: pick(d),
              key,
              error: null,
              ms: d.ms,
              roundMs: d.roundMs,
              where: d.where,
              inflight: false,
            }
          : {
              ...target.peek(),
              status: 'error',
              key,
              error: d.error.message,
              ms: d.ms,
              roundMs: d.roundMs,
              where: d.where,
              inflight: false,
            };
      },
      (e: unknown) => {
        if (g !== gen[kind] || e instanceof Cancelled) return;
        target.value = {
          ...target.peek(),
          status: 'error',
          key,
          error: String((e as Error).message ?? e),
          inflight: false,
        };
      },
    );
  }

  const sweepKey = computed(() => {
    const c = settled.value,
      p = sweepPlan.value;
    if (!c || 'error' in p) return null;
    return stableJson([withoutKey(c, sweepAxis.value), sweepAxis.value, p.values]);
  });
  let sweepRunningKey: string | null = null;
  function runSweepNow() {
    const c = ready.value,
      p = sweepPlan.value,
      key = sweepKey.value;
    if (!c || 'error' in p || !key) return;
    const path = sweepAxis.value;
    sweepRunningKey = key;
    start<SweepData>('sweep', sweep, key, { kind: 'sweep', config: c, path, values: p.values }, (d) => ({
      path,
      points: d.kind === 'sweep' && d.ok ? d.points : [],
    }));
  }

  const currentSearchKey = computed(() => {
    const c = settled.value;
    return c ? searchKey(c, searchOptions.value) : null;
  });
  let searchRunningKey: string | null = null;
  function runSearchNow() {
    const c = ready.value,
      key = currentSearchKey.value;
    if (!c || !key) return;
    searchRunningKey = key;
    start<SearchResult>('search', search, key, { kind: 'search', config: c, options: searchOptions.value }, (d) =>
      d.kind === 'search' && d.ok
        ? d.result
        : { candidates: 0, valid: 0, fitting: 0, global_batch: 0, rejected: [], layouts: [] },
    );
  }

  function cancelSearch() {
    gen.search++;
    clearTimeout(searchTimer);
    backend.cancel('search');
    searchRunningKey = null;
    if (search.peek().status === 'running') search.value = { ...search.peek(), status: 'idle', inflight: false };
  }

  let sweepTimer: ReturnType<typeof setTimeout> | undefined, searchTimer: ReturnType<typeof setTimeout> | undefined;
  const disposers = [
    stopFits,
    stopSuggest,
    effect(() => {
      const key = sweepKey.value;
      if (tab.value !== 'sweep' || !key || key === sweep.peek().key) return;
      if (sweep.peek().status === 'running' && key === sweepRunningKey) return;
      clearTimeout(sweepTimer);
      sweepTimer = setTimeout(runSweepNow, SWEEP_DELAY_MS);
    }),
    effect(() => {
      const key = currentSearchKey.value;
      if (tab.value !== 'search' || !key) return;
      const cur = search.peek();
      if (cur.status === 'running' && key === searchRunningKey) return; // already on it
      if (cur.status === 'running') {
        // a new input: stop the search under way (terminates its worker); the next starts when typing pauses
        gen.search++;
        backend.cancel('search');
        searchRunningKey = null;
        search.value = { ...search.peek(), inflight: false };
      }
      clearTimeout(searchTimer);
      if (key === cur.key && cur.status !== 'idle') {
        if (cur.status === 'running') search.value = { ...search.peek(), status: cur.error ? 'error' : 'done' };
        return;
      }
      if (cur.key !== null) search.value = { ...search.peek(), status: 'running', error: null };
      searchTimer = setTimeout(runSearchNow, cur.key === null ? 0 : SEARCH_DELAY_MS);
    }),
  ];

  /** Load a found layout into the config (merge() of its patch). */
  function loadLayout(l: LayoutRow) {
    const config = app.config.value;
    const next = configToDoc(core, merge(config, l.patch));
    if (next.ok) app.load(next.doc);
  }

  // ------------------------------------------------------------ A/B
  const pinned = signal<Pinned | null>(null);
  const diff = computed(() => {
    const a = pinned.value,
      b = app.result.value;
    return a && b ? diffResults(a.result, b) : null;
  });
  function pin() {
    const r = app.result.value;
    if (!r) return;
    pinned.value = { doc: app.doc.value, values: app.values.value, result: r, step: step.value };
  }
  /** An A from a link: its own estimate, or the error that keeps it out. */
  function pinDoc(d: Doc): Pinned | ConfigError {
    const doc = normalize(core, d);
    const resolved = resolveConfig(docToConfig(doc, core.fields));
    if (!resolved.ok) return resolved.error;
    const result = core.estimate(resolved.config, { timeline: true });
    if (!result.ok) return result.error;
    const b = computeBase(core, doc['model.preset'] ?? null, doc['hardware.gpu'] ?? null);
    const values: Record<string, Json> = {};
    for (const f of leafFields(core.fields)) values[f.path] = f.path in doc ? doc[f.path] : baseValue(b, f);
    const st = core.stepTime(resolved.config);
    return { doc, values, result, step: 'step_seconds' in st ? st : null };
  }

  // ------------------------------------------------------------ the link's share of the planner
  const DEFAULT_FREE = 0.1;
  /** The planner state a link keeps (config/url.ts View); defaults are left out. */
  const view = computed<View>(() => {
    const v: View = {};
    if (tab.value) v.tab = tab.value;
    if (freeFraction.value !== DEFAULT_FREE) v.free = freeFraction.value;
    const axis = axisOf(sweepAxis.value);
    if (axis.path !== SWEEP_AXES[0].path) v.sweep = axis.path;
    const r = ranges.value[axis.path];
    if (r && !axis.categorical) v.range = r;
    if (pinned.value) v.a = pinned.value.doc;
    return v;
  });
  /** Opens a link's planner state; a pinned A that cannot run is left out, with the reason. */
  function applyView(v: View): string | null {
    const a = v.a ? pinDoc(v.a) : null;
    batch(() => {
      tab.value = v.tab ?? null;
      freeFraction.value = v.free ?? DEFAULT_FREE;
      sweepAxis.value = v.sweep ?? SWEEP_AXES[0].path;
      ranges.value = v.range ? { [sweepAxis.value]: v.range } : {};
      pinned.value = a && 'result' in a ? a : null;
    });
    return a && !('result' in a) ? `The link's pinned A cannot run (${a.message}), so nothing is pinned.` : null;
  }

  // ------------------------------------------------------------ measured
  const measurement = signal<LoadedMeasurement | null>(null);
  const measureMessage = signal<string | null>(null);
  const measured = computed(() => {
    const m = measurement.value,
      r = app.result.value;
    return m && r ? compare(r, m.m) : null;
  });

  /** A probe result, an accuracy case or a bare measurement; a probe result's config is loaded too. */
  function loadMeasurement(name: string, text: string): boolean {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      measureMessage.value = `${name}: not valid JSON (${(e as Error).message})`;
      return false;
    }
    const m = readMeasurement(doc);
    if ('error' in m) {
      measureMessage.value = `${name}: ${m.error}`;
      return false;
    }
    const config = (doc as { config?: unknown }).config;
    let note: string | null = null;
    if (config !== undefined) {
      const d = configToDoc(core, config);
      if (d.ok) app.load(d.doc);
      else note = `${name}: its config was not loaded (${d.message}); comparing with the config on screen.`;
    }
    batch(() => {
      measurement.value = { name, m };
      measureMessage.value = note;
    });
    return true;
  }

  return {
    freeFraction,
    verdict,
    tab,
    fits,
    suggest,
    applySuggestion,
    step,
    sweepAxis,
    range,
    setRange,
    sweepPlan,
    sweep,
    runSweepNow,
    searchGpus,
    searchBatch,
    searchVary,
    searchOptions,
    search,
    rows,
    sort,
    runSearchNow,
    cancelSearch,
    loadLayout,
    pinned,
    pin,
    diff,
    view,
    applyView,
    measurement,
    measureMessage,
    measured,
    loadMeasurement,
    /** the key of the config now: a job whose key differs is stale */
    sweepKey,
    currentSearchKey,
    dispose() {
      for (const d of disposers) d();
      clearTimeout(sweepTimer);
      clearTimeout(searchTimer);
      clearTimeout(suggestTimer);
      clearTimeout(fitTimer);
      fitFrame();
      backend.cancel('fit');
      backend.cancel('suggest');
      backend.cancel('sweep');
      backend.cancel('search');
    },
  };
}
