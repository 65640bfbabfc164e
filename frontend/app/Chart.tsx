// The charts (uPlot, through chart-plot.ts). Three kinds of chart:
//  - stack: a stacked step chart over an index axis, with shaded bands behind
//    it (phases), a marked point (the peak), horizontal lines (the GPU's
//    memory; measured peaks over a range of the axis);
//  - lines: lines over an x axis (linear, log or named categories) with gaps
//    where a value is null, vertical marks (where it stops fitting) and
//    horizontal lines;
//  - points: a scatter (x sorted), hover and click find the nearest point
//    in 2-D, a ring marks one point.
// Created once per series layout and theme; data changes go through setData;
// ResizeObserver keeps the width; destroyed on unmount.
// uPlot itself is in chart-plot.ts, loaded when the first chart mounts.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  /** a colour, or a CSS custom property name ("--measured") */
  color: string;
  values: ArrayLike<number | null>;
  /** lines and points: a dashed line, line width, point diameter (0: none), no line at all */
  dash?: number[];
  width?: number;
  points?: number;
  line?: boolean;
}

export interface HLine {
  value: number;
  label: string;
  color?: string;
  /** dashed and thin even with a colour (a guide, not a limit), its label under the line */
  dashed?: boolean;
  /** the part of the x axis it spans (data units; default all) */
  from?: number;
  to?: number;
}

export interface ChartSpec {
  kind?: 'stack' | 'lines' | 'points';
  /** x values (sorted); default 0..n-1 */
  x?: ArrayLike<number>;
  xLog?: boolean;
  xLabel?: string;
  /** tick text of an x value */
  xTick?: (v: number) => string;
  /** names of the x positions 0..n-1 (categorical axis) */
  xNames?: string[];
  /** Stack: bottom to top, drawn stacked. Lines, points: drawn as they are. */
  series: ChartSeries[];
  /** stack: lines drawn over the stack, not stacked (a measured curve); null is a gap */
  overlays?: ChartSeries[];
  bands?: { start: number; end: number; label: string; fill: string }[];
  marker?: { index: number; label: string };
  hline?: { value: number; label: string };
  hlines?: HLine[];
  vlines?: { x: number; label: string; color?: string }[];
  /** points: a ring around this index */
  ring?: number | null;
  yMin?: number;
  /** the series' values per y unit (the timeline's bytes per GiB): the chart scales them as it lays them out */
  yPer?: number;
  yMax: number;
  yUnit: string;
  yTick?: (v: number) => string;
  height: number;
  ariaLabel: string;
}

const DARK = '(prefers-color-scheme: dark)';

type PlotModule = typeof import('./chart-plot.js');
let plotModule: PlotModule | null = null;
let loading: Promise<PlotModule> | null = null;
/** The chart library, once: a chart mounted before it arrives is created when it does. */
const loadPlot = () =>
  (loading ??= import('./chart-plot.js').then(
    (m) => (plotModule = m),
    (e: unknown) => {
      loading = null; // the next chart tries again
      throw e;
    },
  ));

export function Chart({
  spec,
  onHover,
  onPick,
}: {
  spec: ChartSpec;
  onHover?: (i: number | null) => void;
  onPick?: (i: number) => void;
}) {
  const wrap = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const specRef = useRef(spec);
  const hoverRef = useRef(onHover);
  const pickRef = useRef(onPick);
  specRef.current = spec;
  hoverRef.current = onHover;
  pickRef.current = onPick;
  const [dark, setDark] = useState(() => matchMedia(DARK).matches);
  const kind = spec.kind ?? 'stack';
  const layout = `${kind}|${[...spec.series, ...(spec.overlays ?? [])].map((s) => s.label).join('|')}|${spec.height}|${dark}|${spec.xLog}|${spec.xNames?.join(',')}|${spec.xLabel}`;

  useEffect(() => {
    const mq = matchMedia(DARK);
    const on = () => setDark(mq.matches);
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);

  // create per series layout and theme (once the library is here); destroy on change and unmount
  useLayoutEffect(() => {
    let stop = () => {},
      gone = false;
    const make = (m: PlotModule) => {
      if (gone) return;
      const el = wrap.current!;
      const hover = { i: null as number | null };
      const u = m.createPlot(
        el,
        () => specRef.current,
        hover,
        (i) => hoverRef.current?.(i),
      );
      plot.current = u;
      const ro = new ResizeObserver(() => {
        const w = el.clientWidth;
        if (w > 0 && w !== u.width) u.setSize({ width: w, height: specRef.current.height });
      });
      ro.observe(el);
      const click = () => {
        const i = kind === 'points' ? hover.i : (u.cursor.idx ?? null);
        if (i !== null && i !== undefined) pickRef.current?.(i);
      };
      const leave = () => {
        if (hover.i === null) return;
        hover.i = null;
        u.redraw(false, false);
        hoverRef.current?.(null);
      };
      u.over.addEventListener('click', click);
      u.over.addEventListener('mouseleave', leave);
      stop = () => {
        ro.disconnect();
        u.over.removeEventListener('click', click);
        u.over.removeEventListener('mouseleave', leave);
        u.destroy();
        plot.current = null;
      };
    };
    if (plotModule) make(plotModule);
    else
      loadPlot().then(make, (e: unknown) => {
        if (!gone)
          wrap.current?.replaceChildren(`Could not load the chart: ${e instanceof Error ? e.message : String(e)}`);
      });
    return () => {
      gone = true;
      stop();
    };
  }, [layout]);

  // new numbers, same layout
  useLayoutEffect(() => {
    if (plot.current && plotModule) plot.current.setData(plotModule.toData(spec));
  }, [spec]);

  return (
    <div class={`chart chart-${kind}${onPick ? ' pickable' : ''}`} ref={wrap} role="img" aria-label={spec.ariaLabel} />
  );
}
