// The three readings along the swept setting: lines with gaps at invalid
// points, the GPU's memory as a dashed line, where it stops fitting and the
// current value marked. Hover for a point's numbers (or why it is invalid);
// click a valid point to use that value.
import { useMemo, useState } from 'preact/hooks';
import { formatGiB, formatNumber, formatTick, GIB } from '../format.js';
import { READING_COLOR, READING_LABEL } from '../palette.js';
import { fitBoundary, type PlanPoint, type SweepAxis } from '../planner.js';
import { Chart, type ChartSpec } from './Chart.js';

export interface SweepChartProps {
  axis: SweepAxis;
  points: PlanPoint[];
  log: boolean;
  current: number | string | null;
  onPick: (p: PlanPoint) => void;
  /** the headroom kept free ("Keep free"): a second line and where the sweep stops leaving it */
  free: number;
}

export function SweepChart({ axis, points, log, current, onPick, free }: SweepChartProps) {
  const name = (p: PlanPoint) => (axis.categorical ? p.label : formatNumber(p.value));
  const [hover, setHover] = useState<number | null>(null);
  const boundary = fitBoundary(points);
  const roomy = free > 0 ? fitBoundary(points, free) : null;
  const tightFrom = roomy && (!boundary || roomy.index < boundary.index) ? roomy : null;
  const cap = points.find((p) => p.ok)?.capacity_bytes ?? 0;
  const spec = useMemo<ChartSpec>(() => {
    const g = (k: 'peak_allocated_bytes' | 'peak_reserved_bytes' | 'device_used_bytes') =>
      points.map((p) => (p.ok ? p[k] / GIB : null));
    const top = Math.max(0, ...points.filter((p) => p.ok).map((p) => p.device_used_bytes));
    const capGiB = cap / GIB;
    // keep the fitting region readable: values far above the GPU's memory leave the top of the chart
    const yMax = Math.max(Math.min(top / GIB, capGiB * 2) * 1.08, capGiB * 1.1, 1);
    const vlines: NonNullable<ChartSpec['vlines']> = [];
    if (boundary)
      vlines.push({
        x: points[boundary.index].value,
        label: `stops fitting at ${name(points[boundary.index])}`,
        color: '--bad',
      });
    const cur = axis.categorical
      ? points.findIndex((p) => p.label === current)
      : typeof current === 'number'
        ? current
        : -1;
    if (cur >= 0 && (!boundary || points[boundary.index].value !== cur))
      vlines.push({ x: cur, label: 'current', color: '--muted' });
    return {
      kind: 'lines',
      x: points.map((p) => p.value),
      xLog: log,
      xNames: axis.categorical ? points.map((p) => p.label) : undefined,
      xLabel: `${axis.label} (${axis.unit})`,
      xTick: formatTick,
      series: [
        {
          label: READING_LABEL.allocated,
          color: READING_COLOR.allocated,
          values: g('peak_allocated_bytes'),
          points: points.length <= 40 ? 5 : 0,
        },
        {
          label: READING_LABEL.reserved,
          color: READING_COLOR.reserved,
          values: g('peak_reserved_bytes'),
          dash: [5, 3],
          points: points.length <= 40 ? 4 : 0,
        },
        {
          label: READING_LABEL.device,
          color: READING_COLOR.device,
          values: g('device_used_bytes'),
          points: points.length <= 40 ? 5 : 0,
        },
      ],
      hline: cap ? { value: capGiB, label: `GPU memory ${formatGiB(cap)}` } : undefined,
      hlines:
        cap && free > 0
          ? [
              {
                value: capGiB * (1 - free),
                label: `keep ${Math.round(free * 100)} % free`,
                color: '--warn',
                dashed: true,
              },
            ]
          : [],
      vlines,
      yMax,
      yUnit: 'GiB',
      height: 240,
      ariaLabel: `Peak memory per GPU along ${axis.label}, ${points.length} points${boundary ? `; stops fitting at ${name(points[boundary.index])}` : '; every valid point fits'}`,
    };
  }, [points, log, current, free]);

  // the chart's numbers for a screen reader (the chart shows them to the eye): one row per point
  const table = useMemo(
    () => (
      <table class="sr-only" data-testid="sweep-table">
        <caption>{spec.ariaLabel}</caption>
        <thead>
          <tr>
            <th scope="col">
              {axis.label} ({axis.unit})
            </th>
            <th scope="col">{READING_LABEL.allocated}</th>
            <th scope="col">{READING_LABEL.reserved}</th>
            <th scope="col">{READING_LABEL.device}</th>
            <th scope="col">Fits</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p, i) => (
            <tr key={i}>
              <th scope="row">{name(p)}</th>
              {p.ok ? (
                <>
                  <td>{formatGiB(p.peak_allocated_bytes)}</td>
                  <td>{formatGiB(p.peak_reserved_bytes)}</td>
                  <td>{formatGiB(p.device_used_bytes)}</td>
                  <td>{p.fits ? 'yes' : 'no'}</td>
                </>
              ) : (
                <td colSpan={4}>invalid: {p.error}</td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    ),
    [points, spec.ariaLabel],
  );

  const h = hover !== null ? points[hover] : null;
  return (
    <div data-testid="sweep-chart">
      <Chart spec={spec} onHover={setHover} onPick={(i) => points[i]?.ok && onPick(points[i])} />
      {table}
      <p class="readout num" aria-live="off" data-testid="sweep-readout">
        {h
          ? h.ok
            ? `${axis.label} ${name(h)}: allocated ${formatGiB(h.peak_allocated_bytes)} · reserved ${formatGiB(h.peak_reserved_bytes)} · nvidia-smi ${formatGiB(h.device_used_bytes)} — ${h.fits ? 'fits' : 'does not fit'} (click to use)`
            : `${axis.label} ${name(h)}: invalid — ${h.error}`
          : boundary
            ? boundary.lastFit !== null
              ? `Fits up to ${axis.label.toLowerCase()} ${name(points[boundary.lastFit])}; stops fitting at ${name(points[boundary.index])}.${tightFrom ? ` Leaves ${Math.round(free * 100)} % free up to ${tightFrom.lastFit !== null ? name(points[tightFrom.lastFit]) : 'none of them'}.` : ''}`
              : `Nothing in this range fits.`
            : points.some((p) => p.ok)
              ? 'Every valid point in this range fits.'
              : 'No valid point in this range.'}
      </p>
      <ul class="keys" aria-label="Chart lines">
        {(['allocated', 'reserved', 'device'] as const).map((k) => (
          <li key={k}>
            <span class={`line-swatch ${k === 'reserved' ? 'dashed' : ''}`} style={{ borderColor: READING_COLOR[k] }} />
            {READING_LABEL[k]}
          </li>
        ))}
        <li>
          <span class="line-swatch dashed fg" />
          GPU memory
        </li>
      </ul>
    </div>
  );
}
