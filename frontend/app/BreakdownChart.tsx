// What the peak is made of: one stacked bar to the GPU's capacity, and a legend with GiB and shares.
import type { EstimateResult } from '../../wasm/llmem.js';
import { formatGiB, formatPercent } from '../format.js';
import { segmentsOf, StackBar } from './StackBar.js';

export function BreakdownChart({ r }: { r: EstimateResult }) {
  const p = r.per_gpu;
  const segments = segmentsOf(p);
  const max = Math.max(r.capacity_bytes, p.device_used_bytes) * 1.02;
  return (
    <section class="card" aria-labelledby="breakdown-title" data-testid="breakdown">
      <h3 id="breakdown-title">
        Breakdown at the peak <span class="muted">share of nvidia-smi total</span>
      </h3>
      <StackBar segments={segments} max={max} capacity={r.capacity_bytes} label="Memory at the peak" />
      <div class="scale">
        <span>0</span>
        <span class="cap-label" style={{ right: `${100 - (100 * r.capacity_bytes) / max}%` }}>
          GPU memory {formatGiB(r.capacity_bytes)}
        </span>
      </div>
      <ul class="legend">
        {segments.map((s) => (
          <li key={s.key} class={s.value > 0 ? '' : 'zero'}>
            <span class={`swatch ${s.pattern ? 'pattern' : ''}`} style={{ background: s.color }} />
            <span class="legend-name">{s.label}</span>
            <span class="num legend-value">{formatGiB(s.value)}</span>
            <span class="muted legend-share num">{formatPercent(s.value / p.device_used_bytes)}</span>
          </li>
        ))}
      </ul>
      <p class="legend-total">
        <span>nvidia-smi total</span>
        <span class="num">{formatGiB(p.device_used_bytes)}</span>
        <span class="muted num">{formatPercent(r.utilization)} of GPU</span>
      </p>
    </section>
  );
}
