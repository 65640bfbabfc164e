// The page's state: one signal holds the config (a Doc); everything shown is
// derived from it. The core runs synchronously on the main thread (an
// estimate with its timeline takes well under a millisecond).
import { batch, computed, effect, signal } from '@preact/signals';
import type {
  Config,
  Core,
  ConfigError,
  EstimateOutcome,
  EstimateResult,
  FieldInfo,
  Json,
  ProfileValue,
} from '../wasm/llmem.js';
import { findGpu } from './config/catalog.js';
import {
  baseValue,
  computeBase,
  docToConfig,
  leafFields,
  normalize,
  PAGE_DEFAULT,
  sameDoc,
  type Doc,
} from './config/doc.js';
import { resolveConfig } from './config/resolve.js';
import { cliCommand, exportJson, importJson } from './config/share.js';
import { decodeHash, encodeHash, type View } from './config/url.js';
import { decodeValue } from './config/encode.js';
import { PLACED, visible } from './fields.js';
import { impliedByStack } from './config/profile.js';
import { createIo } from './io-state.js';
import { createPlanner } from './planner-state.js';
import { Cancelled, localBackend, type PlannerBackend } from './worker-client.js';

export interface Draft {
  text: string;
  message: string | null;
}

export type AppState = ReturnType<typeof createAppState>;
export type BaseState = ReturnType<typeof createBaseState>;

/** A link the page cannot read opens the default view. */
const unreadable = (message: string) => `${message} Showing the default setup instead.`;

/**
 * The app state, the planner beside it (sweeps and searches run by `backend`:
 * the page passes its Worker) and the Import / Export dialogs.
 */
export function createAppState(core: Core, hash = '', backend: PlannerBackend = localBackend(core)) {
  const base = createBaseState(core, hash, backend);
  const planner = createPlanner(base, backend);
  const openView = (v: View) => {
    const message = planner.applyView(v);
    if (message) base.linkMessage.value = message;
  };
  openView(base.linkView);
  return {
    ...base,
    planner,
    io: createIo(base),
    /** The link to this view: the config and the planner state beside it. */
    hashText: computed(() => encodeHash(base.doc.value, core.fields, planner.view.value)),
    /** A hash typed into the address bar or a pasted link: its config and its planner state. */
    openHash(h: string): View {
      const v = base.openHash(h);
      openView(v);
      return v;
    },
  };
}

/** A main-thread estimate slower than this sends the next ones to the Worker (ms: a frame). */
const FRAME_MS = 16;
/** The page's first estimate, cold, sends the next ones to the Worker only past this (ms: a long task). */
const COLD_MS = 50;
/**
 * Whether estimates run in the Worker after one took `ms` (on either thread), with hysteresis: past a frame
 * they go there, under a quarter frame they come back, and in between they stay where they are, so a config
 * near the threshold does not alternate between the two with each edit.
 */
export const staysOff = (slow: boolean, ms: number): boolean =>
  ms > FRAME_MS ? true : ms < FRAME_MS / 4 ? false : slow;
/** What the page shows before the first result of a link estimated in the Worker. */
const PENDING: EstimateOutcome = { ok: false, error: { path: '', message: 'computing in the background' } };

/** Pipeline stages from which a config is predicted heavy. */
const HEAVY_PP = 8;
/** A link's config that certainly takes longer than a frame (deep pipelines): estimated in the Worker from the start. */
function predictedHeavy(r: { ok: boolean; config?: Config }): boolean {
  const pp = (r.ok && (r.config?.parallel as Record<string, unknown> | undefined)?.pp) || 1;
  return typeof pp === 'number' && pp >= HEAVY_PP;
}
/** The same prediction from a link's text, before the core has loaded (main.tsx starts the Worker at once). */
export function linkPredictedHeavy(hash: string): boolean {
  const pp = /[/&]parallel\.pp=(\d+)(?:&|$)/.exec(hash);
  return pp !== null && Number(pp[1]) >= HEAVY_PP;
}

function createBaseState(core: Core, hash: string, backend: PlannerBackend) {
  const fields: FieldInfo[] = leafFields(core.fields);
  const decoded = decodeHash(hash, core.fields);

  /** The config being edited. */
  const doc = signal<Doc>(normalize(core, decoded.ok ? decoded.doc : { ...PAGE_DEFAULT }));
  /** Text typed into number fields, kept while it does not parse (or while focused). */
  const drafts = signal<Record<string, Draft>>({});
  /** A message about the link the page was opened with (shown once, dismissable). */
  const linkMessage = signal<string | null>(decoded.ok ? null : unreadable(decoded.message));
  /** The setting a bad link names, for "Go to" beside its message. */
  const linkPath = signal<string | null>(decoded.ok ? null : (decoded.path ?? null));
  /** The planner state the link opened with (createAppState applies it). */
  const linkView: View = decoded.ok ? decoded.view : {};
  const importMessage = signal<string | null>(null);
  /** The config before the last Reset, until the next change (the Undo toast). */
  const undoable = signal<Doc | null>(null);

  const base = computed(() => computeBase(core, doc.value['model.preset'] ?? null, doc.value['hardware.gpu'] ?? null));

  /** Every key's current value (doc entry, else preset / core default). */
  const values = computed(() => {
    const d = doc.value,
      b = base.value;
    const out: Record<string, Json> = {};
    for (const f of fields) out[f.path] = f.path in d ? d[f.path] : baseValue(b, f);
    return out;
  });
  const get = (path: string): Json => values.value[path] ?? null;

  const config = computed(() => docToConfig(doc.value, core.fields));
  const resolvedOutcome = computed(() => resolveConfig(config.value));
  /** The config the core runs (presets and GPU ids filled in); the last one that resolved. */
  let lastResolved: Config = {};
  const resolved = computed<Config>(() => {
    const r = resolvedOutcome.value;
    if (r.ok) lastResolved = r.config;
    return lastResolved;
  });
  // Most estimates take well under a millisecond and run here, on the main thread. Deep pipelines
  // with the simulated allocator take 100 ms and more: after one took longer than a frame (or for a
  // config predicted heavy), estimates run in the planner Worker, so the page never blocks (issue 12);
  // the last result stays on screen, marked as updating, until the newest config's arrives, and
  // edits that arrive meanwhile are coalesced. A Worker answer under a quarter frame brings them back
  // here (staysOff: between the two thresholds they stay where they are), except for a config predicted
  // heavy: its main-thread estimates take several times the Worker's (DeepSeek-V3 on PP 16: 22 ms here,
  // 2-10 ms there), so coming back alternated the two on each edit.
  const offThread = signal<{ config: Config; outcome: EstimateOutcome } | null>(null);
  /** The last measured estimate (main thread or Worker) was slow (staysOff). */
  const slow = signal(false);
  /** Estimates of the current config run in the Worker. */
  const heavy = computed(() => backend.offThread && (slow.value || predictedHeavy(resolvedOutcome.value)));
  /** An estimate is running in the Worker; what is shown is the previous config's. Derived in the same pass as the
   * config (a flag the effect below set lagged it: the planner's effects saw the new config as settled, started their
   * jobs and redrew, then stopped them again when the flag followed, on every heavy edit). */
  const computing = computed(() => {
    const r = resolvedOutcome.value;
    return heavy.value && r.ok && offThread.value?.config !== r.config;
  });
  let shown: EstimateOutcome = PENDING;
  /** The time of the main-thread estimate just made, until the effect below reads it (once: a stale time
   * read again after a fast Worker answer sent the estimates straight back to the Worker, for good). */
  let measured: { config: Config; outcome: EstimateOutcome; ms: number } | null = null;
  /** The page's first main-thread estimate runs cold (the wasm and the wrapper not yet optimised: 20-30 ms for
   * the default config): a time under COLD_MS says nothing about the config, so it does not send the next edit to
   * a Worker that is itself still cold (a first edit of the default view waited 80-90 ms for it). */
  let cold = true;
  const outcome = computed<EstimateOutcome>(() => {
    const r = resolvedOutcome.value;
    if (!r.ok) return (shown = { ok: false, error: r.error });
    // the Worker's answer to this config stands, heavy or not (no second estimate of it here)
    const w = offThread.value;
    if (w && w.config === r.config) return (shown = w.outcome);
    if (heavy.value) return shown;
    const t0 = performance.now();
    shown = core.estimate(r.config, { timeline: true });
    const ms = performance.now() - t0;
    measured = cold && ms < COLD_MS ? null : { config: r.config, outcome: shown, ms };
    cold = false;
    return shown;
  });
  effect(() => {
    outcome.value; // after each main-thread estimate: a slow one sends the next ones to the Worker
    const m = measured;
    measured = null;
    if (!backend.offThread || !m || !staysOff(slow.peek(), m.ms)) return;
    batch(() => {
      // this config's result is on screen: the Worker does not estimate it again
      offThread.value = { config: m.config, outcome: m.outcome };
      slow.value = true;
    });
  });
  /** The config whose Worker estimate was last asked for (asked once: the edit asks, then the effect would again). */
  let asked: typeof resolvedOutcome.value | null = null;
  /** Ask the Worker for this config's estimate when it is heavy and not on screen yet. */
  const askWorker = (r: typeof resolvedOutcome.value, isHeavy: boolean) => {
    if (!isHeavy || !r.ok || offThread.peek()?.config === r.config || asked === r) return;
    asked = r;
    backend.run({ kind: 'estimate', config: r.config }).then(
      (d) => {
        if (d.kind !== 'estimate' || resolvedOutcome.peek() !== r) return; // a newer config is on its way
        batch(() => {
          offThread.value = { config: r.config, outcome: d.outcome };
          slow.value = staysOff(slow.peek(), d.ms); // light again (under a quarter frame): back on the main thread
        });
      },
      (e: unknown) => {
        if (e instanceof Cancelled || resolvedOutcome.peek() !== r) return;
        offThread.value = { config: r.config, outcome: { ok: false, error: { path: '', message: String(e) } } };
      },
    );
  };
  effect(() => askWorker(resolvedOutcome.value, heavy.value));
  /** An edit's first step once its config is set: the Worker starts on a heavy estimate before the page's other
   * effects run (the profile, the step time, the share texts: 3-5 ms the Worker's answer waited behind). */
  const askFirst = () => askWorker(resolvedOutcome.peek(), heavy.peek());

  /** What the training-stack profile sets among the keys left automatic (core/profiles.def). */
  // only what matters for this config (a QLoRA mechanism says nothing about full fine-tuning)
  // the same list again (most edits change nothing it names) keeps its identity: what shows it does not redraw
  let lastImplied: ProfileValue[] = [];
  const implied = computed<ProfileValue[]>(() => {
    const next = impliedByStack(core, resolved.value);
    return JSON.stringify(next) === JSON.stringify(lastImplied) ? lastImplied : (lastImplied = next);
  });

  let lastGood: EstimateResult | null = null;
  /** The latest result that worked: bad input leaves it on screen. */
  const result = computed<EstimateResult | null>(() => {
    const o = outcome.value;
    if (o.ok) lastGood = o;
    return lastGood;
  });

  /** The problem to show: a field's unparsable text first, else the core's error. */
  const error = computed<ConfigError | null>(() => {
    for (const [path, d] of Object.entries(drafts.value)) if (d.message) return { path, message: d.message };
    const o = outcome.value;
    return o.ok || o === PENDING ? null : o.error;
  });
  /** The result on screen is not the current input's. */
  const stale = computed(() => error.value !== null);

  /** The setting to fix when the link's setup cannot run (the notice shows while that error lasts). */
  const linkErrorPath = signal<string | null>(null);
  const markLink = () => {
    const o = outcome.peek();
    linkErrorPath.value = !o.ok && o.error.path ? o.error.path : null;
  };
  markLink();

  const exportText = computed(() => exportJson(doc.value, core.fields));
  const cli = computed(() => cliCommand(doc.value, core.fields));

  function commit(next: Doc) {
    batch(() => {
      doc.value = normalize(core, next);
      importMessage.value = null;
      undoable.value = null;
      askFirst();
    });
  }

  /** Drop overrides of fields that the new values hide (their controls are gone). */
  function prune(next: Doc, keep: string): Doc {
    const b = computeBase(core, next['model.preset'] ?? null, next['hardware.gpu'] ?? null);
    const getNext = (p: string): Json => {
      if (p in next) return next[p];
      const f = core.field(p);
      return f ? baseValue(b, f) : null;
    };
    const out: Doc = {};
    for (const [k, v] of Object.entries(next)) if (k === keep || !PLACED.includes(k) || visible(k, getNext)) out[k] = v;
    return out;
  }

  function setField(path: string, value: Json) {
    batch(() => {
      commit(prune({ ...doc.value, [path]: value }, path));
      clearDraft(path);
    });
  }

  function setDraft(path: string, text: string, message: string | null) {
    drafts.value = { ...drafts.value, [path]: { text, message } };
  }

  function clearDraft(path: string) {
    if (!(path in drafts.value)) return;
    const next = { ...drafts.value };
    delete next[path];
    drafts.value = next;
  }

  /** Choose a model preset (its values replace every model key), or null for a custom model seeded from the current one. */
  function setPreset(id: string | null) {
    const next: Doc = {};
    for (const [k, v] of Object.entries(doc.value)) if (!k.startsWith('model.')) next[k] = v;
    if (id === null) {
      const current = values.value;
      for (const f of fields) if (f.path.startsWith('model.') && f.kind !== 'text') next[f.path] = current[f.path];
      next['model.name'] = null;
    }
    next['model.preset'] = id;
    batch(() => {
      drafts.value = {};
      commit(next);
    });
  }

  /** Choose a catalog GPU, or null for a custom memory size (seeded from the current GPU). */
  function setGpu(id: string | null) {
    const next: Doc = {};
    for (const [k, v] of Object.entries(doc.value)) if (!k.startsWith('hardware.')) next[k] = v;
    next['hardware.gpu'] = id;
    if (id === null) {
      // a custom GPU starts from the current one: its speeds, and its nominal memory size
      const current = values.value;
      for (const f of fields) if (f.path.startsWith('hardware.') && f.kind !== 'text') next[f.path] = current[f.path];
      const gpu = findGpu(String(doc.value['hardware.gpu']));
      if (gpu) next['hardware.memory_gib'] = gpu.memory_gib;
    }
    batch(() => {
      clearDraft('hardware.memory_gib');
      commit(next);
    });
  }

  /** Reset the keys under a prefix to the core defaults (e.g. "model.moe": make the model dense). */
  function clearGroup(prefix: string) {
    const next: Doc = { ...doc.value };
    for (const f of fields) if (f.path.startsWith(`${prefix}.`)) next[f.path] = decodeValue(f, f.default);
    batch(() => {
      for (const f of fields) if (f.path.startsWith(`${prefix}.`)) clearDraft(f.path);
      commit(next);
    });
  }

  /** Replace the whole config (a link, an import, reset). */
  function load(next: Doc) {
    batch(() => {
      drafts.value = {};
      doc.value = normalize(core, next);
      undoable.value = null;
    });
  }

  /** A hash typed into the address bar or a pasted link; returns its planner state. */
  function openHash(h: string): View {
    const d = decodeHash(h, core.fields);
    batch(() => {
      linkMessage.value = d.ok ? null : unreadable(d.message);
      linkPath.value = d.ok ? null : (d.path ?? null);
      const next = normalize(core, d.ok ? d.doc : { ...PAGE_DEFAULT });
      if (!sameDoc(next, doc.value)) load(next);
    });
    markLink();
    return d.ok ? d.view : {};
  }

  /** An imported config replaces the one on screen. */
  function importDoc(next: Doc) {
    batch(() => {
      load(next);
      importMessage.value = null;
      linkMessage.value = null;
    });
  }

  /** Config-v1 JSON text replaces the config, or sets importMessage and changes nothing. */
  function importText(text: string): boolean {
    const r = importJson(core, text);
    if (!r.ok) {
      importMessage.value = `Import failed${r.path ? ` at ${r.path}` : ''}: ${r.message}`;
      return false;
    }
    importDoc(r.doc);
    return true;
  }

  function reset() {
    batch(() => {
      const before = doc.value;
      load({ ...PAGE_DEFAULT });
      undoable.value = sameDoc(before, doc.value) ? null : before;
      linkMessage.value = null;
      linkPath.value = null;
      linkErrorPath.value = null;
      importMessage.value = null;
    });
  }

  /** Back to the config before Reset. */
  function undoReset() {
    const before = undoable.value;
    if (before) load(before);
  }

  return {
    core,
    fields,
    doc,
    drafts,
    values,
    get,
    config,
    resolved,
    implied,
    outcome,
    result,
    error,
    stale,
    computing,
    /** Estimates run in the Worker (a deep pipeline): the planner's jobs wait for a pause in the edits. */
    heavy,
    exportText,
    cli,
    linkMessage,
    linkPath,
    linkView,
    linkErrorPath,
    importMessage,
    setField,
    setDraft,
    clearDraft,
    setPreset,
    setGpu,
    clearGroup,
    load,
    openHash,
    importDoc,
    importText,
    reset,
    undoable,
    undoReset,
  };
}
