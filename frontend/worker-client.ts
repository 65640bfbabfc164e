// The page's side of the planner Worker: one worker per kind of job (sweeps,
// searches), each with one job at a time. A new search or suggestion preempts
// the running one by terminating its worker (a search is a single call into
// the core, so there is nothing to interrupt politely) and the next job starts
// a fresh one. Other jobs are not terminated (Chromium runs a terminated
// worker on for up to 2 s, and a fresh one loads the core again): a cancelled
// one finishes unheard, and a new job waits for the running one, replacing
// any job still waiting.
// Where there is no Worker (tests, old browsers) the same jobs run in-thread.
import type { CoreUrls } from './core-urls.js';
import type { Core } from '../wasm/llmem.js';
import { handleRequest, type PlannerReply, type PlannerRequest } from './planner.js';

export type Job = PlannerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
export type Done = PlannerReply & { roundMs: number; where: 'worker' | 'main thread' };

export interface PlannerBackend {
  /** Jobs run off the page's main thread (a Web Worker): slow estimates go there too (state.ts). */
  readonly offThread: boolean;
  run(job: Job): Promise<Done>;
  /** Stop the running and waiting jobs of a kind (their promises reject with Cancelled). */
  cancel(kind: Job['kind']): void;
  /** Start the worker of a kind now, loading the core, before its first job (a heavy link's first estimate). */
  prepare?(kind: Job['kind']): void;
}

export class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

type Pending = { job: Job; resolve: (d: Done) => void; reject: (e: Error) => void };

let nextId = 0;

class Lane {
  private w: Worker | null = null;
  /** The job on the worker; `p` is null once cancelled (its answer is dropped). */
  private busy: { id: number; t0: number; p: Pending | null } | null = null;
  private waiting: Pending | null = null;

  constructor(
    private readonly spawn: () => Worker,
    private readonly core: CoreUrls,
    private readonly preempt: boolean,
  ) {}

  run(job: Job): Promise<Done> {
    return new Promise<Done>((resolve, reject) => {
      const p = { job, resolve, reject };
      if (this.busy && !this.preempt) {
        this.waiting?.reject(new Cancelled());
        this.waiting = p;
        return;
      }
      if (this.busy) this.kill();
      this.start(p);
    });
  }

  cancel() {
    this.waiting?.reject(new Cancelled());
    this.waiting = null;
    if (!this.busy) return;
    if (this.preempt) return this.kill();
    this.busy.p?.reject(new Cancelled());
    this.busy.p = null;
  }

  prepare() {
    this.worker();
  }

  private worker(): Worker {
    if (this.w) return this.w;
    const w = this.spawn();
    w.onmessage = (e: MessageEvent) => this.onReply(e.data as PlannerReply | { type: 'failed'; message: string });
    w.onerror = (e) => this.fail(new Error(e.message || 'the planner worker failed'));
    w.postMessage({ type: 'init', core: this.core });
    return (this.w = w);
  }

  private start(p: Pending) {
    const id = ++nextId;
    this.busy = { id, t0: performance.now(), p };
    this.worker().postMessage({ ...p.job, id });
  }

  private onReply(r: PlannerReply | { type: 'failed'; message: string }) {
    if ('type' in r) return this.fail(new Error(`the planner worker could not load the core: ${r.message}`));
    const b = this.busy;
    if (!b || r.id !== b.id) return;
    this.busy = null;
    b.p?.resolve({ ...r, roundMs: performance.now() - b.t0, where: 'worker' });
    this.next();
  }

  private fail(e: Error) {
    const b = this.busy;
    this.busy = null;
    this.w?.terminate();
    this.w = null;
    b?.p?.reject(e);
    this.next();
  }

  private next() {
    const w = this.waiting;
    this.waiting = null;
    if (w) this.start(w);
  }

  private kill() {
    this.w?.terminate();
    this.w = null;
    const b = this.busy;
    this.busy = null;
    b?.p?.reject(new Cancelled());
    // the next worker starts with the next job (starting one now would compete with the typing that cancelled this one)
  }
}

/** Sweeps and searches in Web Workers; `core` is what the page loaded the core from. */
export function workerBackend(core: CoreUrls): PlannerBackend {
  const spawn = () => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'llmem-planner' });
  // a largest-fit bisection of a heavy config is ~30 estimates (about a second): off the main thread, finished
  // (planner-state.ts starts it after a pause in the edits); the suggestions, hundreds of estimates, are preempted
  const lanes = {
    sweep: new Lane(spawn, core, false),
    search: new Lane(spawn, core, true),
    fit: new Lane(spawn, core, false),
    suggest: new Lane(spawn, core, true),
    // slow estimates (state.ts): the running one finishes, the newest edit waits and replaces any older one
    estimate: new Lane(spawn, core, false),
  };
  return {
    offThread: true,
    run: (job) => lanes[job.kind].run(job),
    cancel: (kind) => lanes[kind].cancel(),
    prepare: (kind) => lanes[kind].prepare(),
  };
}

/** The same jobs on the calling thread (Vitest, or no Worker). */
export function localBackend(core: Core): PlannerBackend {
  return {
    offThread: false,
    run: async (job) => {
      const t0 = performance.now();
      const r = handleRequest(core, { ...job, id: ++nextId } as PlannerRequest);
      return { ...r, roundMs: performance.now() - t0, where: 'main thread' };
    },
    cancel: () => {},
  };
}
