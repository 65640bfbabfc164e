// One bar per pipeline stage on a shared scale: where the first stage (embeddings,
// most in-flight micro-batches) and the last (LM head, logits) differ.
import { useState } from './context.js';
import type { EstimateResult, RankResult } from '../../wasm/llmem.js';
import { layerKinds } from '../config/layer-kinds.js';
import { formatCount, formatGiB } from '../format.js';
import { segmentsOf, StackBar } from './StackBar.js';
import './ranks.css';

/** Stages drawn before "Show all": hundreds of bars would block the page for a deep pipeline (issue 12). */
export const STAGES_SHOWN = 16;

/** The stages worth a bar: first, last, the most loaded, the highest allocated, the one that bounds
 * stages not walked, and evenly spaced others. */
export function stagesToShow(r: EstimateResult, all: boolean): number[] {
  const n = r.ranks.length;
  if (all || n <= STAGES_SHOWN) return r.ranks.map((_, i) => i);
  const keep = new Set([0, n - 1, r.per_gpu.stage, r.peak_allocated.stage]);
  const bounded = r.ranks.find((x) => x.peak_bound);
  if (bounded) keep.add(bounded.bound_stage);
  for (let k = 0; keep.size < STAGES_SHOWN && k < STAGES_SHOWN; k++)
    keep.add(Math.round((k * (n - 1)) / (STAGES_SHOWN - 1)));
  return [...keep].filter((i) => i >= 0 && i < n).sort((a, b) => a - b);
}

export function RankChart({ r }: { r: EstimateResult }) {
  const [all, setAll] = useState(false);
  let maxUsed = 0;
  for (const x of r.ranks) maxUsed = Math.max(maxUsed, x.device_used_bytes);
  const max = Math.max(r.capacity_bytes, maxUsed) * 1.02;
  const worst = r.ranks.reduce((a, b) => (b.device_used_bytes > a.device_used_bytes ? b : a), r.ranks[0]);
  const shown = stagesToShow(r, all);
  // middle stages repeating an earlier one's layers are walked without the simulated allocator (core/estimate.c)
  const bounded = (x: RankResult) =>
    r.per_gpu.reserved_simulated && !x.reserved_simulated && x.stage > 0 && x.stage < r.ranks.length - 1;
  return (
    <section class="card" aria-labelledby="ranks-title" data-testid="ranks">
      <h3 id="ranks-title">
        Per pipeline stage{' '}
        <span class="muted">
          ({r.ranks.length} {r.ranks.length === 1 ? 'stage' : 'stages'})
        </span>
      </h3>
      <ol class="ranks">
        {shown
          .map((i) => r.ranks[i])
          .map((x) => (
            <li key={x.stage} class={x === worst && r.ranks.length > 1 ? 'worst' : ''} data-stage={x.stage}>
              <span class="rank-label">
                Stage {x.stage}
                <small>
                  {x.layers} layers{layerKinds(x) || null} · {formatCount(x.params)} params
                </small>
              </span>
              <StackBar
                segments={segmentsOf(x)}
                max={max}
                capacity={r.capacity_bytes}
                label={`Stage ${x.stage}`}
                thin
              />
              <span class="rank-value num">
                {x.peak_bound ? '≤' : bounded(x) ? '~' : null}
                {formatGiB(x.device_used_bytes)}
              </span>
            </li>
          ))}
      </ol>
      {shown.length < r.ranks.length && (
        <p class="hint">
          {shown.length} of {r.ranks.length} stages: the first, the last, the most loaded and evenly spaced others.{' '}
          <button type="button" class="link" data-testid="ranks-show-all" onClick={() => setAll(true)}>
            Show all {r.ranks.length}
          </button>
        </p>
      )}
      {shown.some((i) => bounded(r.ranks[i])) && (
        <p class="hint">
          ~ reserved memory from the caching allocator's bound: these stages hold the same layers as an earlier stage,
          which holds at least as much; the most loaded stage is always simulated.
        </p>
      )}
      {shown.some((i) => r.ranks[i].peak_bound) && (
        <p class="hint" data-testid="ranks-bound">
          ≤ not walked: in a pipeline this deep, these stages hold the same layers as stage{' '}
          {r.ranks.find((x) => x.peak_bound)?.bound_stage} with fewer micro-batches in flight, so at most its memory;
          the most loaded stage is always walked.
        </p>
      )}
      {r.ranks.length === 1 && <p class="hint">One stage: set Pipeline parallel (PP) above 1 to compare stages.</p>}
    </section>
  );
}
