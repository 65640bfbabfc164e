// The result in one line, pinned to the top of a phone screen while the inputs scroll.
import { formatGiB, formatPercent } from '../format.js';
import { useApp } from './context.js';

/** Scrolls the results to just below this sticky bar (scrollIntoView would tuck their top under it). */
function jumpToResults(e: MouseEvent) {
  const bar = (e.currentTarget as HTMLElement).closest('.summary') as HTMLElement | null;
  const results = document.getElementById('results');
  if (!results) return;
  scrollTo({ top: results.getBoundingClientRect().top + scrollY - (bar?.offsetHeight ?? 0) - 8 });
}

export function Summary() {
  const s = useApp();
  const r = s.result.value;
  if (!r) return null;
  const v = s.planner.verdict.value;
  return (
    <div class={`summary ${s.stale.value ? 'is-stale' : ''}`} data-testid="summary">
      <span>
        <strong class="num">{formatGiB(r.per_gpu.device_used_bytes)}</strong>
        <span class="muted"> of {formatGiB(r.capacity_bytes)}</span>
      </span>
      <span class={`badge ${v === 'fits' ? 'ok' : v === 'tight' ? 'warn' : 'bad'}`}>
        {v === 'fits' ? 'fits' : v === 'tight' ? 'fits, tight' : 'does not fit'} · {formatPercent(r.utilization, 0)}
      </span>
      {s.stale.value && <span class="badge bad">input error</span>}
      <button type="button" class="link jump" data-testid="jump-charts" onClick={jumpToResults}>
        Charts ↓
      </button>
    </div>
  );
}
