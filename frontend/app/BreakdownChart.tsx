// What the peak is made of: one stacked bar to the GPU's capacity, and a legend with GiB and shares.
import type { EstimateResult } from '../../wasm/llmem.js';
import { formatGiB, formatPercent } from '../format.js';
import { useApp } from './context.js';
import { segmentsOf, StackBar, type Mark } from './StackBar.js';

const MEASURED_READINGS = [
  ['peak_allocated_bytes', 'allocated'],
  ['peak_reserved_bytes', 'reserved'],
  ['device_used_bytes', 'nvidia-smi'],
] as const;

export function BreakdownChart({ r }: { r: EstimateResult }) {
  const s = useApp();
  const measured = s.planner.measurement.value;
  const marks: Mark[] = [];
  for (const [k, name] of MEASURED_READINGS) {
    const v = measured?.m[k];
    if (typeof v === 'number') marks.push({ value: v, label: `measured ${name}` });
  }
  const p = r.per_gpu;
  const segments = segmentsOf(p);
  const max = Math.max(r.capacity_bytes, p.device_used_bytes, ...marks.map((m) => m.value)) * 1.02;
  const share = r.capacity_bytes / max;
  return (
    <section class="card" aria-labelledby="breakdown-title" data-testid="breakdown">
      <h3 id="breakdown-title">
        Breakdown at the peak <span class="muted">share of nvidia-smi total</span>
      </h3>
      <StackBar segments={segments} max={max} capacity={r.capacity_bytes} label="Memory at the peak" marks={marks} />
      <div class="scale">
        <span data-testid="scale-zero">0</span>
        {/* left of its tick, or right of it when the tick sits near "0" (a run far over the GPU's memory) */}
        <span
          class="cap-label"
          data-testid="cap-label"
          style={
            share < 0.45
              ? { left: `max(${100 * share}%, 16px)`, paddingLeft: '4px' }
              : { right: `${100 - 100 * share}%` }
          }
        >
          <span class="cap-word">GPU memory </span>
          {formatGiB(r.capacity_bytes)}
        </span>
      </div>
      {marks.length > 0 && (
        <p class="measured-key" data-testid="measured-key">
          <span class="mark-swatch" aria-hidden="true" />
          Measured ({measured!.name}):{' '}
          {marks.map((m) => `${m.label.replace('measured ', '')} ${formatGiB(m.value)}`).join(' · ')}
        </p>
      )}
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
