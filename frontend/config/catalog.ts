// The model and GPU catalogs (one file each, shared by the page, the CLI and the tests).
import modelsJson from './catalog/models.json' with { type: 'json' };
import gpusJson from './catalog/gpus.json' with { type: 'json' };
import releasesJson from './catalog/releases.json' with { type: 'json' };
import type { Config } from '../../wasm/llmem.js';

export interface ModelEntry {
  id: string;
  name: string;
  family: string;
  source: string;
  params_total: number | null;
  params_total_source?: string;
  params_active: number | null;
  notes: string[];
  model: Config;
  /** the revision of `model` (absent: the first, "1"); see PRESET REVISIONS below */
  revision?: string;
  /** earlier revisions of this preset, so that old links keep their numbers */
  previous?: { revision: string; model: Config; changed: string }[];
  /** other published checkpoints with exactly this model's tensors (a model id matches them too), each with why */
  same_tensors?: { id: string; why?: string }[];
}

export interface GpuEntry {
  id: string;
  name: string;
  vendor: string;
  arch: string;
  memory_gib: number;
  memory_bytes: number | null;
  bf16_tflops: number | null;
  fp16_tflops: number | null;
  fp8_tflops: number | null;
  hbm_tb_per_s: number | null;
  intra_node_gb_per_s: number | null;
  inter_node_gb_per_s: number | null;
  source: string;
}

/** A release of a training stack and the month it came out ("YYYY-MM"), for
 * runtime.framework_version given as a release; the core's profile rows are by month. */
export interface ReleaseEntry {
  release: string;
  month: string;
  source: string;
}

export const MODELS = modelsJson as unknown as ModelEntry[];
export const RELEASES = releasesJson as unknown as Record<string, ReleaseEntry[]>;

const versionParts = (v: string): number[] | null =>
  /^v?\d+(\.\d+)*$/.test(v) ? v.replace(/^v/, '').split('.').map(Number) : null;

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The month of a framework's release: that of the latest listed release at or before it. */
export function releaseMonth(framework: string, release: string): string | undefined {
  const want = versionParts(release);
  if (!want) return undefined;
  let best: { parts: number[]; month: string } | undefined;
  for (const r of RELEASES[framework] ?? []) {
    const parts = versionParts(r.release);
    if (parts && compareVersions(parts, want) <= 0 && (!best || compareVersions(parts, best.parts) > 0))
      best = { parts, month: r.month };
  }
  return best?.month;
}
export const GPUS = gpusJson as unknown as GpuEntry[];

// PRESET REVISIONS. A link names a preset as "id" or "id@revision". A bare id
// means the preset's first revision ("1"), so a link keeps its answer when a
// preset is corrected: the corrected entry gets a new `revision` (a date,
// "2027-01-15"), its old model moves to `previous` with what changed, and the
// page writes "id@revision" for every revision after the first. A changelog
// entry lists each revision (CHANGELOG.md, docs/CONTRIBUTING.md "A preset").
export const FIRST_REVISION = '1';

/** The model of `id` or `id@revision`, or why not. */
export function findModel(ref: string): ModelEntry | undefined {
  return findModelRevision(ref, MODELS);
}

export function findModelRevision(ref: string, models: readonly ModelEntry[]): ModelEntry | undefined {
  const at = ref.indexOf('@');
  const id = at < 0 ? ref : ref.slice(0, at);
  const revision = at < 0 ? FIRST_REVISION : ref.slice(at + 1);
  const entry = models.find((m) => m.id === id);
  if (!entry) return undefined;
  if ((entry.revision ?? FIRST_REVISION) === revision) return entry;
  const old = entry.previous?.find((p) => p.revision === revision);
  return old ? { ...entry, model: old.model, revision: old.revision } : undefined;
}

/** How the page names a preset's current revision in a link. */
export const presetRef = (entry: ModelEntry): string =>
  (entry.revision ?? FIRST_REVISION) === FIRST_REVISION ? entry.id : `${entry.id}@${entry.revision}`;
export const findGpu = (id: string) => GPUS.find((g) => g.id === id);
