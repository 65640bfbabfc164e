// The only file that imports uPlot. A stacked step chart over an index axis,
// with shaded bands behind it (phases), a marked point (the peak) and a
// horizontal line (the GPU's memory). Created once per series layout and
// theme; data changes go through setData; ResizeObserver keeps the width;
// destroyed on unmount.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  values: ArrayLike<number>;
}

export interface ChartSpec {
  /** Series bottom to top; drawn stacked. */
  series: ChartSeries[];
  bands?: { start: number; end: number; label: string; fill: string }[];
  marker?: { index: number; label: string };
  hline?: { value: number; label: string };
  yMax: number;
  yUnit: string;
  height: number;
  ariaLabel: string;
}

const DARK = '(prefers-color-scheme: dark)';

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

/** Cumulative sums, bottom to top: row k = series 0..k added. */
function stack(series: ChartSeries[], n: number): Float64Array[] {
  const out: Float64Array[] = [];
  let acc = new Float64Array(n);
  for (const s of series) {
    const row = new Float64Array(n);
    for (let i = 0; i < n; i++) row[i] = acc[i] + (s.values[i] ?? 0);
    out.push(row);
    acc = row;
  }
  return out;
}

function toData(spec: ChartSpec): uPlot.AlignedData {
  const n = spec.series[0]?.values.length ?? 0;
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = i;
  // uPlot paints series in order: the full stack first, the bottom layer last, each filled to zero
  return [x, ...stack(spec.series, n).reverse()] as unknown as uPlot.AlignedData;
}

function options(spec: () => ChartSpec, width: number, onHover: (i: number | null) => void): uPlot.Options {
  const s0 = spec();
  const fg = cssVar('--muted', '#666');
  const grid = cssVar('--grid', 'rgba(128,128,128,0.2)');
  const text = cssVar('--fg', '#222');
  const font = '11px system-ui, sans-serif';
  const stepped = uPlot.paths.stepped!({ align: 1 });
  return {
    width,
    height: s0.height,
    legend: { show: false },
    cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false }, y: false },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: { x: { time: false }, y: { range: () => [0, spec().yMax] } },
    axes: [
      // no x ticks (event index); the space below the plot holds the phase names
      { stroke: fg, size: 16, gap: 0, grid: { show: false }, ticks: { show: false }, values: (_u, splits) => splits.map(() => '') },
      {
        stroke: fg,
        font,
        size: 44,
        gap: 4,
        grid: { stroke: grid, width: 1 },
        ticks: { show: false },
        values: (_u, splits) => splits.map((v) => `${+v.toFixed(1)}`),
        label: spec().yUnit,
        labelFont: font,
        labelSize: 14,
        labelGap: 0,
      },
    ],
    series: [
      {},
      ...[...s0.series].reverse().map((s) => ({ label: s.label, stroke: s.color, fill: s.color, width: 1, paths: stepped, points: { show: false } })),
    ],
    hooks: {
      drawClear: [
        (u) => {
          const ctx = u.ctx;
          const { left, top, width, height } = u.bbox;
          const pr = devicePixelRatio || 1;
          ctx.save();
          ctx.font = `${11 * pr}px system-ui, sans-serif`;
          ctx.textBaseline = 'top';
          for (const b of spec().bands ?? []) {
            const x0 = Math.max(left, u.valToPos(b.start - 0.5, 'x', true)), x1 = Math.min(left + width, u.valToPos(b.end + 0.5, 'x', true));
            if (x1 <= x0) continue;
            ctx.fillStyle = b.fill;
            ctx.fillRect(x0, top, x1 - x0, height);
            ctx.fillStyle = fg;
            ctx.fillRect(x0, top + height, pr, 5 * pr);
            if (x1 - x0 > ctx.measureText(b.label).width + 8 * pr) ctx.fillText(b.label, x0 + 4 * pr, top + height + 3 * pr);
          }
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
          if (sp.hline && sp.hline.value <= sp.yMax) {
            const y = Math.round(u.valToPos(sp.hline.value, 'y', true));
            ctx.strokeStyle = text;
            ctx.setLineDash([6 * pr, 4 * pr]);
            ctx.lineWidth = pr;
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.fillStyle = text;
            ctx.textAlign = 'right';
            ctx.textBaseline = 'bottom';
            ctx.fillText(sp.hline.label, left + width - 4 * pr, y - 2 * pr);
          }
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
          ctx.restore();
          u.root.dispatchEvent(new CustomEvent('llmem:drawn', { bubbles: true }));
        },
      ],
      setCursor: [(u) => onHover(u.cursor.idx ?? null)],
    },
  };
}

export function Chart({ spec, onHover }: { spec: ChartSpec; onHover?: (i: number | null) => void }) {
  const wrap = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const specRef = useRef(spec);
  const hoverRef = useRef(onHover);
  specRef.current = spec;
  hoverRef.current = onHover;
  const [dark, setDark] = useState(() => matchMedia(DARK).matches);
  const layout = `${spec.series.map((s) => s.label).join('|')}|${spec.height}|${dark}`;

  useEffect(() => {
    const mq = matchMedia(DARK);
    const on = () => setDark(mq.matches);
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);

  // create per series layout and theme; destroy on change and unmount
  useLayoutEffect(() => {
    const el = wrap.current!;
    const u = new uPlot(options(() => specRef.current, el.clientWidth || 600, (i) => hoverRef.current?.(i)), toData(specRef.current), el);
    plot.current = u;
    const ro = new ResizeObserver(() => {
      const w = el.clientWidth;
      if (w > 0 && w !== u.width) u.setSize({ width: w, height: specRef.current.height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [layout]);

  // new numbers, same layout
  useLayoutEffect(() => {
    plot.current?.setData(toData(spec));
  }, [spec]);

  return <div class="chart" ref={wrap} role="img" aria-label={spec.ariaLabel} />;
}
