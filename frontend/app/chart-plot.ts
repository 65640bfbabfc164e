// The uPlot side of Chart.tsx: options, data and the plot itself. Loaded on first use (a dynamic import), so
// the first load carries no chart library and the headline draws before the charts (issue 17).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ChartSeries, ChartSpec, HLine } from './Chart.js';

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}
const colour = (c: string | undefined, fallback: string) =>
  !c ? fallback : c.startsWith('--') ? cssVar(c, fallback) : c;

/** Cumulative sums, bottom to top: row k = series 0..k added (each value / per). */
function stack(series: ChartSeries[], n: number, per: number): Float64Array[] {
  const out: Float64Array[] = [];
  let acc = new Float64Array(n);
  for (const s of series) {
    const row = new Float64Array(n);
    for (let i = 0; i < n; i++) row[i] = acc[i] + (s.values[i] ?? 0) / per;
    out.push(row);
    acc = row;
  }
  return out;
}

export function toData(spec: ChartSpec): uPlot.AlignedData {
  const n = spec.x?.length ?? spec.series[0]?.values.length ?? 0;
  // the core's columns go in as they are (Float64Array); a copy only where values must change
  const x = spec.x instanceof Float64Array ? spec.x : Float64Array.from(spec.x ?? { length: n }, (v, i) => v ?? i);
  const per = spec.yPer ?? 1;
  const line = (s: ChartSeries) =>
    per === 1 && s.values instanceof Float64Array && s.values.every(Number.isFinite)
      ? s.values
      : Array.from(s.values, (v) => (v === null || !Number.isFinite(v) ? null : v / per));
  if ((spec.kind ?? 'stack') !== 'stack') return [x, ...spec.series.map(line)] as unknown as uPlot.AlignedData;
  // uPlot paints series in order: the full stack first, the bottom layer last, each filled to zero; overlays on top
  return [
    x,
    ...stack(spec.series, n, per).reverse(),
    ...(spec.overlays ?? []).map(line),
  ] as unknown as uPlot.AlignedData;
}

/** The index of the point nearest to the pointer (CSS px), over every series; null when none is within reach. */
function nearest(u: uPlot, reach: number): number | null {
  const { left, top } = u.cursor;
  if (left === undefined || top === undefined || left < 0) return null;
  let best: number | null = null,
    bestD = reach * reach;
  const xs = u.data[0];
  for (let s = 1; s < u.data.length; s++) {
    const ys = u.data[s];
    for (let i = 0; i < xs.length; i++) {
      const y = ys[i];
      if (y === null || y === undefined) continue;
      const dx = u.valToPos(xs[i], 'x') - left,
        dy = u.valToPos(y, 'y') - top;
      const d = dx * dx + dy * dy;
      if (d < bestD) {
        bestD = d;
        best = i;
      }
    }
  }
  return best;
}

function options(
  spec: () => ChartSpec,
  width: number,
  hover: { i: number | null },
  onHover: (i: number | null) => void,
): uPlot.Options {
  const s0 = spec();
  const kind = s0.kind ?? 'stack';
  const fg = cssVar('--muted', '#666');
  const grid = cssVar('--grid', 'rgba(128,128,128,0.2)');
  const text = cssVar('--fg', '#222');
  const card = cssVar('--card', '#fff');
  const font = '11px system-ui, sans-serif';
  const stepped = uPlot.paths.stepped!({ align: 1 });
  // the phase names' widths, measured once each: a deep pipeline's step has hundreds of bands, measured on every draw
  const labelWidths = new Map<string, number>();
  const labelWidth = (ctx: CanvasRenderingContext2D, label: string, pr: number) => {
    const key = `${pr} ${label}`; // the font scales with the pixel ratio (a zoom changes it)
    let w = labelWidths.get(key);
    if (w === undefined) labelWidths.set(key, (w = ctx.measureText(label).width));
    return w;
  };
  const yAxis: uPlot.Axis = {
    stroke: fg,
    font,
    size: 48,
    gap: 4,
    grid: { stroke: grid, width: 1 },
    ticks: { show: false },
    values: (_u, splits) => splits.map((v) => spec().yTick?.(v) ?? `${+v.toFixed(1)}`),
    label: s0.yUnit,
    labelFont: font,
    labelSize: 14,
    labelGap: 0,
  };
  const xAxis: uPlot.Axis =
    kind === 'stack'
      ? // no x ticks (event index); the space below the plot holds the phase names
        {
          stroke: fg,
          size: 16,
          gap: 0,
          grid: { show: false },
          ticks: { show: false },
          values: (_u, splits) => splits.map(() => ''),
        }
      : {
          stroke: fg,
          font,
          size: s0.xLabel ? 34 : 22,
          gap: 3,
          grid: { stroke: grid, width: 1 },
          ticks: { show: false },
          ...(s0.xNames ? { splits: () => s0.xNames!.map((_, i) => i) } : {}),
          values: (_u, splits) =>
            splits.map((v) => (s0.xNames ? (s0.xNames[v] ?? '') : (spec().xTick?.(v) ?? String(+v.toFixed(2))))),
          label: s0.xLabel,
          labelFont: font,
          labelSize: 14,
          labelGap: 0,
        };
  const series: uPlot.Series[] =
    kind === 'stack'
      ? [
          ...[...s0.series].reverse().map((s) => ({
            label: s.label,
            stroke: colour(s.color, fg),
            fill: colour(s.color, fg),
            width: 1,
            paths: stepped,
            points: { show: false },
          })),
          ...(s0.overlays ?? []).map((s) => ({
            label: s.label,
            stroke: colour(s.color, text),
            width: s.width ?? 2,
            dash: s.dash,
            paths: stepped,
            points: { show: false },
          })),
        ]
      : s0.series.map((s) => {
          const c = colour(s.color, text);
          const line = s.line ?? kind === 'lines';
          return {
            label: s.label,
            stroke: c,
            width: s.width ?? 2,
            dash: s.dash,
            spanGaps: kind === 'points', // lines: a null is a gap (an invalid point)
            ...(line ? {} : { paths: () => null }),
            points: s.points ? { show: true, size: s.points, fill: c, stroke: c, width: 1 } : { show: false },
          };
        });
  const xRange =
    kind === 'stack' || s0.xNames
      ? undefined
      : (_u: uPlot, min: number, max: number): uPlot.Range.MinMax =>
          min === max ? [min * 0.5 || -1, max * 1.5 || 1] : [min, max];
  return {
    width,
    height: s0.height,
    legend: { show: false },
    cursor:
      kind === 'points'
        ? { drag: { x: false, y: false, setScale: false }, points: { show: false }, x: false, y: false }
        : kind === 'lines'
          ? { drag: { x: false, y: false, setScale: false }, points: { show: true, size: 7 }, y: false }
          : { drag: { x: false, y: false, setScale: false }, points: { show: false }, y: false },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: {
      x: s0.xNames
        ? { time: false, range: () => [-0.4, s0.xNames!.length - 0.6] }
        : s0.xLog
          ? { time: false, distr: 3, log: 2 }
          : { time: false, ...(xRange ? { range: xRange } : {}) },
      y: { range: () => [spec().yMin ?? 0, spec().yMax] },
    },
    axes: [xAxis, yAxis],
    series: [{}, ...series],
    hooks: {
      drawClear: [
        (u) => {
          const ctx = u.ctx;
          const { left, top, width, height } = u.bbox;
          const pr = devicePixelRatio || 1;
          ctx.save();
          ctx.font = `${11 * pr}px system-ui, sans-serif`;
          ctx.textBaseline = 'top';
          // one path per tint, one for the ticks, then the names: a deep pipeline's step has hundreds of bands, and
          // a fill style set per band (a colour parsed each time) cost a millisecond a draw
          const spans: { b: NonNullable<ChartSpec['bands']>[number]; x0: number; x1: number }[] = [];
          for (const b of spec().bands ?? []) {
            const x0 = Math.max(left, u.valToPos(b.start - 0.5, 'x', true)),
              x1 = Math.min(left + width, u.valToPos(b.end + 0.5, 'x', true));
            if (x1 > x0) spans.push({ b, x0, x1 });
          }
          const tints = new Map<string, Path2D>();
          const ticks = new Path2D();
          for (const { b, x0, x1 } of spans) {
            let path = tints.get(b.fill);
            if (!path) tints.set(b.fill, (path = new Path2D()));
            path.rect(x0, top, x1 - x0, height);
            ticks.rect(x0, top + height, pr, 5 * pr);
          }
          for (const [fill, path] of tints) {
            ctx.fillStyle = fill;
            ctx.fill(path);
          }
          ctx.fillStyle = fg;
          ctx.fill(ticks);
          for (const { b, x0, x1 } of spans)
            if (x1 - x0 > 12 * pr && x1 - x0 > labelWidth(ctx, b.label, pr) + 8 * pr)
              ctx.fillText(b.label, x0 + 4 * pr, top + height + 3 * pr);
          ctx.restore();
        },
      ],
      draw: [
        (u) => {
          const sp = spec();
          const ctx = u.ctx;
          const pr = devicePixelRatio || 1;
          const { left, top, width, height } = u.bbox;
          ctx.save();
          ctx.font = `${11 * pr}px system-ui, sans-serif`;
          const lines: HLine[] = [...(sp.hline ? [{ ...sp.hline }] : []), ...(sp.hlines ?? [])];
          for (const h of lines) {
            if (!(h.value <= sp.yMax)) continue;
            const y = Math.round(u.valToPos(h.value, 'y', true));
            const x0 =
              h.from === undefined
                ? left
                : Math.max(left, u.valToPos(h.from - (kind === 'stack' ? 0.5 : 0), 'x', true));
            const x1 =
              h.to === undefined
                ? left + width
                : Math.min(left + width, u.valToPos(h.to + (kind === 'stack' ? 0.5 : 0), 'x', true));
            const c = colour(h.color, text);
            ctx.strokeStyle = c;
            const solid = h.color && !h.dashed;
            ctx.setLineDash(solid ? [] : [6 * pr, 4 * pr]);
            ctx.lineWidth = (solid ? 2 : 1) * pr;
            ctx.beginPath();
            ctx.moveTo(x0, y);
            ctx.lineTo(x1, y);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.fillStyle = c;
            ctx.textAlign = 'right';
            ctx.textBaseline = h.dashed ? 'top' : 'bottom';
            // the label sits above its line, at its right end; a line too short for it goes without (the key says it)
            const w = ctx.measureText(h.label).width;
            if (h.from === undefined || x1 - x0 >= w + 8 * pr)
              ctx.fillText(h.label, x1 - 4 * pr, h.dashed ? y + 2 * pr : y - 2 * pr);
          }
          (sp.vlines ?? []).forEach((v, k) => {
            const x = Math.round(u.valToPos(v.x, 'x', true));
            if (x < left || x > left + width) return;
            const c = colour(v.color, text);
            ctx.strokeStyle = c;
            ctx.lineWidth = pr;
            ctx.setLineDash([3 * pr, 3 * pr]);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            ctx.setLineDash([]);
            const w = ctx.measureText(v.label).width;
            const right = x + 6 * pr + w < left + width;
            ctx.fillStyle = c;
            ctx.textAlign = right ? 'left' : 'right';
            ctx.textBaseline = 'top';
            // one label per row, so that neighbouring marks do not write over each other
            ctx.fillText(v.label, right ? x + 4 * pr : x - 4 * pr, top + (3 + 14 * k) * pr);
          });
          if (sp.marker) {
            const data = u.data[1];
            const x = u.valToPos(sp.marker.index, 'x', true);
            const y = u.valToPos((data[sp.marker.index] as number) ?? 0, 'y', true);
            ctx.strokeStyle = text;
            ctx.lineWidth = pr;
            ctx.beginPath();
            ctx.moveTo(x, top + height);
            ctx.lineTo(x, y);
            ctx.stroke();
            ctx.fillStyle = text;
            ctx.beginPath();
            ctx.arc(x, y, 3.5 * pr, 0, 2 * Math.PI);
            ctx.fill();
            const w = ctx.measureText(sp.marker.label).width;
            const right = x + 6 * pr + w < left + width;
            ctx.textAlign = right ? 'left' : 'right';
            ctx.textBaseline = 'bottom';
            const ty = Math.max(top + 14 * pr, y - 4 * pr);
            ctx.fillText(sp.marker.label, right ? x + 6 * pr : x - 6 * pr, ty);
          }
          // points: a ring around the chosen point, a filled ring around the hovered one
          const ringAt = (i: number, filled: boolean) => {
            let y: number | null = null;
            for (let s = 1; s < u.data.length && y === null; s++) y = (u.data[s][i] as number | null) ?? null;
            if (y === null) return;
            const px = u.valToPos(u.data[0][i], 'x', true),
              py = u.valToPos(y, 'y', true);
            ctx.strokeStyle = text;
            ctx.lineWidth = 2 * pr;
            ctx.beginPath();
            ctx.arc(px, py, 7 * pr, 0, 2 * Math.PI);
            if (filled) {
              ctx.fillStyle = card;
              ctx.globalAlpha = 0.35;
              ctx.fill();
              ctx.globalAlpha = 1;
            }
            ctx.stroke();
          };
          if (kind === 'points') {
            if (sp.ring !== null && sp.ring !== undefined) ringAt(sp.ring, false);
            if (hover.i !== null) ringAt(hover.i, true);
          }
          ctx.restore();
          u.root.dispatchEvent(new CustomEvent('llmem:drawn', { bubbles: true }));
        },
      ],
      setCursor: [
        (u) => {
          if (kind !== 'points') return onHover(u.cursor.idx ?? null);
          const i = nearest(u, 24);
          if (i === hover.i) return;
          hover.i = i;
          u.over.style.cursor = i === null ? 'default' : 'pointer';
          u.redraw(false, false);
          onHover(i);
        },
      ],
    },
  };
}

/** A plot of spec() in el: the spec is read again at each draw (hover marks, markers). */
export function createPlot(
  el: HTMLElement,
  spec: () => ChartSpec,
  hover: { i: number | null },
  onHover: (i: number | null) => void,
): uPlot {
  return new uPlot(options(spec, el.clientWidth || 600, hover, onHover), toData(spec()), el);
}
