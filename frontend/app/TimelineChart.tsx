// Memory over one training step on the most-loaded GPU: the core's event
// walk, stacked by category, phases shaded, the peak marked, the GPU's
// memory as a dashed line. Hover for the event under the pointer.
import { useMemo, useState } from 'preact/hooks';
import { CATEGORIES, type EstimateResult } from '../../wasm/llmem.js';
import { formatGiB, GIB } from '../format.js';
import { CATEGORY_COLOR, CATEGORY_LABEL, MEASURED, PHASE_TINT, RESERVED } from '../palette.js';
import { measuredOnTimeline, measuredPhaseLines } from '../planner.js';
import { Chart, type ChartSpec } from './Chart.js';
import { useApp } from './context.js';

function describe(r: EstimateResult, i: number): string {
  const t = r.timeline!;
  const parts = [t.phase[i]];
  if (t.micro_batch[i] >= 0) parts.push(`micro-batch ${t.micro_batch[i]}`);
  if (t.layer[i] >= 0) parts.push(`layer ${t.layer[i]}`);
  const reserved = t.reserved_bytes.length > i ? `, ${formatGiB(t.reserved_bytes[i])} reserved` : '';
  return `${parts.join(', ')}: ${formatGiB(t.total_bytes[i])} allocated${reserved}`;
}

export function TimelineChart({ r }: { r: EstimateResult }) {
  const [hover, setHover] = useState<number | null>(null);
  const measured = useApp().planner.measurement.value;
  const t = r.timeline;
  const curve = useMemo(
    () => (measured?.m.timeline ? measuredOnTimeline(r, measured.m.timeline) : null),
    [r, measured],
  );
  const spec = useMemo<ChartSpec | null>(() => {
    if (!t || t.total_bytes.length === 0) return null;
    const cats = CATEGORIES.filter((c) => t.category_bytes[c].some((v) => v > 0));
    const n = t.total_bytes.length;
    let peak = 0;
    for (let i = 1; i < n; i++) if (t.total_bytes[i] > t.total_bytes[peak]) peak = i;
    const bands: NonNullable<ChartSpec['bands']> = [];
    for (let i = 0; i < n; i++) {
      const last = bands[bands.length - 1];
      if (last && last.label === t.phase[i]) last.end = i;
      else bands.push({ start: i, end: i, label: t.phase[i], fill: PHASE_TINT[t.phase[i]] ?? 'transparent' });
    }
    // with a measured curve the phase peaks are drawn by the curve itself
    const lines = measured && !curve ? measuredPhaseLines(r, measured.m) : [];
    let top = t.total_bytes[peak];
    for (const l of lines) top = Math.max(top, l.value);
    for (const v of curve?.reserved ?? []) if (v !== null) top = Math.max(top, v);
    for (const v of t.reserved_bytes) top = Math.max(top, v);
    const reserved = t.reserved_bytes.length === n ? t.reserved_bytes : null;
    const topGiB = top / GIB;
    const peakGiB = topGiB,
      capGiB = r.capacity_bytes / GIB;
    const showCap = capGiB <= peakGiB * 1.6;
    return {
      series: cats.map((c) => ({
        label: CATEGORY_LABEL[c],
        color: CATEGORY_COLOR[c],
        values: t.category_bytes[c],
      })),
      overlays: [
        ...(reserved
          ? [
              {
                label: 'reserved (simulated)',
                color: RESERVED,
                width: 1.5,
                dash: [2, 3],
                values: reserved,
              },
            ]
          : []),
        ...(curve
          ? [
              {
                label: 'measured allocated',
                color: MEASURED,
                width: 2,
                values: curve.allocated,
              },
              {
                label: 'measured reserved',
                color: MEASURED,
                width: 1.5,
                dash: [5, 4],
                values: curve.reserved,
              },
            ]
          : []),
      ],
      bands,
      marker: { index: peak, label: `peak ${formatGiB(t.total_bytes[peak])}` },
      hline: showCap ? { value: capGiB, label: `GPU memory ${formatGiB(r.capacity_bytes)}` } : undefined,
      hlines: lines.map((l) => ({
        value: l.value / GIB,
        from: l.from,
        to: l.to,
        color: MEASURED,
        label: `measured ${l.phase === 'step' ? 'peak' : l.phase}`,
      })),
      yPer: GIB, // the columns go to the chart in bytes, as the core wrote them
      yMax: Math.max(peakGiB * 1.12, showCap ? capGiB * 1.06 : 0) || 1,
      yUnit: 'GiB',
      height: 230,
      ariaLabel: `Allocated memory over ${r.rl ? 'one RL step' : 'one training step'}, ${n} events; peak ${formatGiB(t.total_bytes[peak])} during ${r.per_gpu.peak_at}`,
    };
  }, [r, measured, curve]);

  if (!spec || !t) return null;
  // an RL step's phases around the actor update: few events each, so their bands are narrow; named here
  const rlPhases = r.rl ? [...new Set(t.phase)].filter((ph) => r.rl!.phases.some((x) => x.phase === ph)) : [];
  const stage = r.ranks.length > 1 ? ` (stage ${r.per_gpu.stage})` : null;
  const step = r.rl ? 'one RL step' : 'one training step';
  return (
    <section class="card" aria-labelledby="timeline-title" data-testid="timeline">
      <h3 id="timeline-title">
        Memory over {step} <span class="muted">most-loaded GPU{stage}</span>
      </h3>
      <Chart spec={spec} onHover={setHover} />
      <p class="readout num" aria-live="off">
        {hover !== null && hover < t.total_bytes.length
          ? describe(r, hover)
          : `Peak: ${r.per_gpu.peak_at}, ${formatGiB(r.per_gpu.peak_allocated_bytes)} allocated`}
      </p>
      <ul class="keys" aria-label="Chart colours">
        {spec.series.map((s) => (
          <li key={s.label}>
            <span class="swatch" style={{ background: s.color }} />
            {s.label}
          </li>
        ))}
        {t.reserved_bytes.length ? (
          <li data-testid="timeline-reserved">
            <span class="line-swatch" style={{ borderColor: RESERVED, borderTopStyle: 'dotted' }} />
            reserved (simulated caching allocator; at its peak {formatGiB(r.per_gpu.fragmentation_bytes)} of it is
            cached, not in tensors)
          </li>
        ) : null}
        {rlPhases.length ? (
          <li data-testid="timeline-rl-phases">
            RL phases, left to right:{' '}
            {rlPhases.map((ph, i) => (
              <span key={ph} class="phase-key">
                {i ? ' · ' : null}
                <span class="swatch phase-swatch" style={{ background: PHASE_TINT[ph] ?? 'transparent' }} />
                {ph}
              </span>
            ))}
            ; the updates show their passes (forward, backward, optimizer)
          </li>
        ) : null}
        {measured && curve ? (
          <li data-testid="timeline-measured-curve">
            <span class="mark-swatch" aria-hidden="true" />
            measured ({measured.name}): allocated (solid) and reserved (dashed) over the step,{' '}
            {curve.aligned ? 'aligned by phase' : 'stretched over the step (no phase marks to align by)'}
          </li>
        ) : null}
        {measured && spec.hlines?.length ? (
          <li data-testid="timeline-measured-key">
            <span class="mark-swatch" aria-hidden="true" />
            measured ({measured.name}):{' '}
            {measuredPhaseLines(r, measured.m)
              .map((l) => `${l.phase} ${formatGiB(l.value)}`)
              .join(' · ')}
          </li>
        ) : null}
      </ul>
    </section>
  );
}
