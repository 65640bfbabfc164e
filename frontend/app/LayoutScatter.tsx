// Every layout found: memory per GPU against step time, the Pareto front
// (nothing both faster and smaller) highlighted and joined, the layout in
// use ringed. Hover for a layout; click to load it.
import { useMemo, useState } from 'preact/hooks';
import { formatGiB, formatNumber, formatSeconds, GIB } from '../format.js';
import { LAYOUT_COLOR } from '../palette.js';
import type { LayoutRow } from '../planner.js';
import { Chart, type ChartSpec } from './Chart.js';

export const describeLayout = (l: LayoutRow) =>
  `dp ${l.dp} · tp ${l.tp} · pp ${l.pp}${l.vpp > 1 ? ` · vpp ${l.vpp}` : ''} · cp ${l.cp}${l.ep > 1 ? ` · ep ${l.ep}` : ''} · mb ${l.micro_batch} · ga ${l.grad_accum} · ${l.recompute} · ${l.sharding}`;

export function LayoutScatter({
  rows,
  current,
  onPick,
}: {
  rows: LayoutRow[];
  current: LayoutRow | undefined;
  onPick: (l: LayoutRow) => void;
}) {
  const [hover, setHover] = useState<number | null>(null);
  const sorted = useMemo(
    () => [...rows].sort((a, b) => a.device_used_bytes - b.device_used_bytes || a.step_seconds - b.step_seconds),
    [rows],
  );
  const spec = useMemo<ChartSpec>(() => {
    const top = Math.max(...sorted.map((l) => l.step_seconds), 0);
    const front = sorted.filter((l) => l.pareto).length;
    return {
      kind: 'points',
      x: sorted.map((l) => l.device_used_bytes / GIB),
      xLabel: 'nvidia-smi memory per GPU (GiB)',
      xTick: (v) => `${+v.toFixed(1)}`,
      series: [
        { label: 'Layouts', color: LAYOUT_COLOR.all, values: sorted.map((l) => l.step_seconds), points: 5 },
        {
          label: 'Pareto front',
          color: LAYOUT_COLOR.pareto,
          values: sorted.map((l) => (l.pareto ? l.step_seconds : null)),
          points: 8,
          line: true,
          width: 1.5,
        },
      ],
      ring: current ? sorted.indexOf(current) : null,
      yMax: top * 1.1 || 1,
      yUnit: 'step time (s)',
      yTick: (v) => (top < 0.1 ? `${+(v * 1000).toFixed(1)}m` : `${+v.toFixed(2)}`),
      height: 240,
      ariaLabel: `${sorted.length} layouts, memory per GPU against step time; ${front} on the Pareto front`,
    };
  }, [sorted, current]);
  const h = hover !== null ? sorted[hover] : null;
  return (
    <div data-testid="layout-scatter">
      <Chart spec={spec} onHover={setHover} onPick={(i) => sorted[i] && onPick(sorted[i])} />
      <p class="readout num" aria-live="off">
        {h
          ? `${describeLayout(h)}: ${formatGiB(h.device_used_bytes)}, ${formatSeconds(h.step_seconds)}, ${formatNumber(Math.round(h.tokens_per_second_per_gpu))} tokens/s per GPU${h.pareto ? ' (Pareto)' : ''} — click to load`
          : 'Hover a point for its layout; click to load it.'}
      </p>
      <ul class="keys" aria-label="Chart marks">
        <li>
          <span class="dot" style={{ background: 'var(--scatter)' }} />
          layout
        </li>
        <li>
          <span class="dot big" style={{ background: 'var(--accent)' }} />
          Pareto front (no layout is both faster and smaller)
        </li>
        <li>
          <span class="ring" />
          the layout in use
        </li>
      </ul>
    </div>
  );
}
