// One bar per pipeline stage on a shared scale: where the first stage (embeddings,
// most in-flight micro-batches) and the last (LM head, logits) differ.
import type { EstimateResult } from '../../wasm/llmem.js';
import { formatCount, formatGiB } from '../format.js';
import { segmentsOf, StackBar } from './StackBar.js';

export function RankChart({ r }: { r: EstimateResult }) {
  const max = Math.max(r.capacity_bytes, ...r.ranks.map((x) => x.device_used_bytes)) * 1.02;
  const worst = r.ranks.reduce((a, b) => (b.device_used_bytes > a.device_used_bytes ? b : a), r.ranks[0]);
  return (
    <section class="card" aria-labelledby="ranks-title" data-testid="ranks">
      <h3 id="ranks-title">
        Per pipeline stage <span class="muted">({r.ranks.length} {r.ranks.length === 1 ? 'stage' : 'stages'})</span>
      </h3>
      <ol class="ranks">
        {r.ranks.map((x) => (
          <li key={x.stage} class={x === worst && r.ranks.length > 1 ? 'worst' : ''}>
            <span class="rank-label">
              Stage {x.stage}
              <small>
                {x.layers} layers · {formatCount(x.params)} params
              </small>
            </span>
            <StackBar segments={segmentsOf(x)} max={max} capacity={r.capacity_bytes} label={`Stage ${x.stage}`} thin />
            <span class="rank-value num">{formatGiB(x.device_used_bytes)}</span>
          </li>
        ))}
      </ol>
      {r.ranks.length === 1 && <p class="hint">One stage: set Pipeline parallel (PP) above 1 to compare stages.</p>}
    </section>
  );
}
