// Where the page's estimates run and how many there are ("Instant on every config"): a slow main-thread
// estimate sends the next ones to the Worker, a fast Worker answer brings them back (with hysteresis),
// and a config is estimated once, wherever that is. Time is a fake clock that the counted Core advances
// by what each estimate "costs", so no assertion depends on this machine's speed.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Config, Core } from '../../wasm/llmem.js';
import { loadCore } from '../../wasm/node.js';
import { stableJson } from '../../frontend/planner.js';
import { createAppState, linkPredictedHeavy, staysOff } from '../../frontend/state.js';
import { localBackend } from '../../frontend/worker-client.js';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
afterEach(() => vi.restoreAllMocks());

const modelOf = (c: Config) => ((c.model as Config | undefined)?.layers as number) ?? 0;
const seqOf = (c: Config) => ((c.training as Config | undefined)?.seq_len as number) ?? 0;

/**
 * The page's Core with a fake clock: each main-thread estimate advances it by `mainMs(config, n)` (n: how many
 * main-thread estimates came before), and the Worker stand-in reports `workerMs(config)`. Every estimate is
 * recorded by its config: here when it runs, for the Worker when it is sent there.
 */
function harness(mainMs: (c: Config, n: number) => number, workerMs: (c: Config) => number) {
  let clock = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => clock);
  const main: string[] = [];
  const worker: string[] = [];
  const counted = new Proxy(core, {
    get(target, key) {
      const v = Reflect.get(target, key, target);
      if (key === 'estimate')
        return (c: Config, o?: object) => {
          clock += mainMs(c, main.length);
          main.push(stableJson(c));
          return target.estimate(c, o);
        };
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Core;
  const local = localBackend(core);
  const backend = {
    offThread: true,
    run: async (job: Parameters<typeof local.run>[0]) => {
      if (job.kind === 'estimate') worker.push(stableJson(job.config)); // counted when sent
      await new Promise((r) => setTimeout(r, 1));
      const d = await local.run(job);
      return job.kind === 'estimate' ? { ...d, ms: workerMs(job.config) } : d;
    },
    cancel: () => {},
  };
  return { counted, backend, main, worker };
}

/** Wait for a condition (the stand-in Worker answers after a macrotask), at most 30 s. */
const until = async (cond: () => boolean) => {
  for (let t = 0; t < 30000 && !cond(); t += 10) await new Promise((r) => setTimeout(r, 10));
};

describe('hysteresis: where estimates run', () => {
  it('past a frame to the Worker, under a quarter frame back, in between where they are', () => {
    expect(staysOff(false, 17)).toBe(true);
    expect(staysOff(true, 17)).toBe(true);
    expect(staysOff(false, 10)).toBe(false);
    expect(staysOff(true, 10)).toBe(true);
    expect(staysOff(true, 3)).toBe(false);
    expect(staysOff(false, 3)).toBe(false);
  });

  it("the page's first estimate runs cold: its time does not send the first edit to a Worker that is cold too", () => {
    const h = harness(
      (_c, n) => (n === 0 ? 30 : 1),
      () => 1,
    );
    const s = createAppState(h.counted, '', h.backend);
    expect(s.result.value, 'the first estimate is shown').not.toBeNull();
    expect(s.heavy.value, 'a cold estimate says nothing about the config').toBe(false);
    s.setField('training.seq_len', 8192);
    expect(s.computing.value, 'the first edit runs here').toBe(false);
    expect(h.main.length).toBe(2);
    expect(h.worker.length).toBe(0);
    s.planner.dispose();
  });

  it('a first estimate past a long task still sends the next ones to the Worker (the config is slow, not cold)', () => {
    const h = harness(
      () => 60,
      () => 10,
    );
    const s = createAppState(h.counted, '', h.backend);
    expect(s.heavy.value).toBe(true);
    s.setField('training.seq_len', 8192);
    expect(s.computing.value, 'the first edit runs in the Worker').toBe(true);
    s.planner.dispose();
  });

  it('a fast Worker answer brings estimates back to the main thread after a slow main-thread one (the stale time kept them off)', async () => {
    // the first edit's main-thread estimate is slow, the rest take a millisecond; the Worker answers in one
    const h = harness(
      (_c, n) => (n === 1 ? 30 : 1),
      () => 1,
    );
    const s = createAppState(h.counted, '', h.backend);
    expect(s.result.value, 'the first estimate is shown').not.toBeNull();
    s.setField('training.seq_len', 4096);
    expect(s.heavy.value, 'a slow estimate sends the next ones to the Worker').toBe(true);
    s.setField('training.seq_len', 8192);
    expect(s.computing.value, 'the next one runs in the Worker').toBe(true);
    await until(() => !s.computing.value);
    expect(s.heavy.value, 'a 1 ms Worker answer: back on the main thread').toBe(false);
    const before = h.main.length;
    s.setField('training.seq_len', 2048);
    expect(s.computing.value, 'estimated at once, here').toBe(false);
    expect(h.main.length).toBe(before + 1);
    expect(seqOf(s.resolved.value)).toBe(2048);
    expect(s.result.value?.per_gpu.device_used_bytes).toBe(
      (core.estimate(s.resolved.value) as { per_gpu: { device_used_bytes: number } }).per_gpu.device_used_bytes,
    );
    s.planner.dispose();
  });

  it('a Worker answer between the thresholds keeps estimates there (no alternating at the threshold)', async () => {
    const h = harness(
      (_c, n) => (n <= 1 ? 30 : 10),
      () => 10,
    );
    const s = createAppState(h.counted, '', h.backend);
    s.setField('training.seq_len', 4096); // slow here (the page's first, cold, does not count)
    for (const seq of [8192, 2048, 8192]) {
      s.setField('training.seq_len', seq);
      expect(s.computing.value, `seq_len ${seq}: in the Worker`).toBe(true);
      await until(() => !s.computing.value);
    }
    expect(h.main.length, 'only the first two estimates ran here').toBe(2);
    expect(h.worker.length).toBe(3);
    s.planner.dispose();
  });

  it('main-thread estimates between the thresholds stay on the main thread', () => {
    const h = harness(
      () => 10,
      () => 10,
    );
    const s = createAppState(h.counted, '', h.backend);
    for (const seq of [8192, 2048, 8192]) {
      s.setField('training.seq_len', seq);
      expect(s.computing.value, `seq_len ${seq}: here`).toBe(false);
      expect(s.result.value).not.toBeNull();
    }
    expect(h.main.length).toBe(4);
    expect(h.worker.length).toBe(0);
    s.planner.dispose();
  });
});

describe('a link predicted heavy before the core loads (main.tsx starts the Worker at once)', () => {
  it('reads parallel.pp from the link text as the state predicts it from the config', () => {
    expect(linkPredictedHeavy('#v1/model.preset=deepseek-v3&parallel.pp=16&parallel.ep=64')).toBe(true);
    expect(linkPredictedHeavy('#v1/parallel.pp=8')).toBe(true);
    expect(linkPredictedHeavy('#v1/parallel.pp=4&training.grad_accum=16')).toBe(false);
    expect(linkPredictedHeavy('#v1/parallel.pp_first_stage_layers=16')).toBe(false);
    expect(linkPredictedHeavy('#v1/view.a=parallel.pp%3D16')).toBe(false);
    expect(linkPredictedHeavy('')).toBe(false);
  });
  it('agrees with the page state: a link it predicts heavy is estimated in the Worker from the start', () => {
    const h = harness(
      () => 1,
      () => 1,
    );
    const hash = '#v1/model.preset=llama-3.1-8b&parallel.engine=megatron&parallel.gpus=64&parallel.pp=8';
    expect(linkPredictedHeavy(hash)).toBe(true);
    const s = createAppState(h.counted, hash, h.backend);
    expect(s.heavy.value).toBe(true);
    expect(h.main).toEqual([]);
    s.planner.dispose();
  });
});

describe('one estimate per config', () => {
  const LLAMA_70B_LAYERS = 80;
  it('switching to a preset whose estimate is slow estimates it once (not again in the Worker)', async () => {
    const h = harness(
      (c) => (modelOf(c) === LLAMA_70B_LAYERS ? 30 : 1),
      () => 10,
    );
    const s = createAppState(h.counted, '', h.backend);
    expect(h.main.length).toBe(1);
    s.setPreset('llama-3.1-70b');
    expect(s.result.value?.params.total, 'the 70B result at once').toBeGreaterThan(70e9);
    expect(s.computing.value, 'nothing left to compute').toBe(false);
    const seventy = stableJson(s.resolved.value);
    expect([...h.main, ...h.worker].filter((k) => k === seventy).length, 'the 70B config, estimated once').toBe(1);
    // the next edit runs in the Worker, once
    s.setField('training.seq_len', 8192);
    expect(s.computing.value).toBe(true);
    await until(() => !s.computing.value);
    const next = stableJson(s.resolved.value);
    expect([...h.main, ...h.worker].filter((k) => k === next).length, 'the edited config, estimated once').toBe(1);
    s.planner.dispose();
  });

  it('opening a link whose estimate is slow estimates it once', () => {
    const h = harness(
      () => 30,
      () => 10,
    );
    const s = createAppState(h.counted, '#v1/model.preset=llama-3.1-70b&parallel.tp=2', h.backend);
    expect(s.result.value?.params.total).toBeGreaterThan(70e9);
    expect(s.computing.value).toBe(false);
    expect(h.main).toEqual([stableJson(s.resolved.value)]);
    expect(h.worker).toEqual([]);
    s.planner.dispose();
  });

  it('a preset, a catalog GPU and a link each estimate the new config once', () => {
    const h = harness(
      () => 1,
      () => 1,
    );
    const s = createAppState(h.counted, '', h.backend);
    const once = (what: string, change: () => void) => {
      const n = h.main.length;
      change();
      expect(s.result.value, what).not.toBeNull();
      expect(s.hashText.value, what).not.toBeNull();
      expect(h.main.length - n, `${what}: one estimate`).toBe(1);
      expect(h.main.at(-1), what).toBe(stableJson(s.resolved.value));
    };
    once('preset', () => s.setPreset('qwen2.5-7b'));
    once('catalog GPU', () => s.setGpu('a100-sxm-80gb'));
    once('link', () => s.openHash('#v1/model.preset=llama-3.1-8b&parallel.tp=2'));
    expect(h.worker.length).toBe(0);
    s.planner.dispose();
  });
});
