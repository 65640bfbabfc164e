// The right-hand column: headline, planner, charts, counts, warnings, explanations.
// When the input has a problem the last good result stays, marked as such.
import { useMemo } from 'preact/hooks';
import { BreakdownChart } from './BreakdownChart.js';
import { useApp } from './context.js';
import { Headline } from './Headline.js';
import { useLater } from './later.js';
import { ParamsTable } from './ParamsTable.js';
import { Planner } from './Planner.js';
import { StaleBanner } from './StaleBanner.js';
import { TimelineChart } from './TimelineChart.js';
import { Warnings } from './Warnings.js';
import { lazy } from './lazy.js';

// below the headline and its charts, loaded after them (issue 17: the first load)
const SuggestPanel = lazy(() => import('./SuggestPanel.js').then((m) => m.SuggestPanel), '"Make it fit" panel', true);
const WhyPanel = lazy(() => import('./WhyPanel.js').then((m) => m.WhyPanel), 'explanation');
// below the timeline: out of the first load too (it paid for the page's containment rules, issue "Instant on every config")
const RankChart = lazy(() => import('./RankChart.js').then((m) => m.RankChart), 'per-stage chart');

export function Results() {
  const s = useApp();
  const r = s.result.value;
  const fits = s.planner.verdict.value === 'fits';
  // the cards below the timeline follow a frame later: the edit's frame diffs, lays out and paints the headline and
  // the charts only (the per-stage bars, the counts and the explanations were half of a deep pipeline's edit)
  const later = useLater(r);
  // each card's element is kept while its inputs are the same, so that Preact skips it when this list renders again
  // (the cards read their other signals themselves)
  const headline = useMemo(() => r && <Headline r={r} />, [r]);
  const suggest = useMemo(() => <SuggestPanel fits={fits} />, [fits]);
  const planner = useMemo(() => <Planner />, []);
  const charts = useMemo(
    () =>
      r && (
        <>
          <BreakdownChart r={r} />
          <TimelineChart r={r} />
        </>
      ),
    [r],
  );
  const below = useMemo(
    () =>
      later && (
        <>
          <RankChart r={later} />
          <div class="two">
            <ParamsTable r={later} />
            <Warnings r={later} />
          </div>
          <WhyPanel r={later} />
        </>
      ),
    [later],
  );
  return (
    <section class="results" id="results" aria-labelledby="results-title" data-testid="results">
      <h2 id="results-title" class="sr-only">
        Results
      </h2>
      <StaleBanner />
      {r ? (
        <div class={s.stale.value ? 'stale' : ''}>
          {headline}
          {suggest}
          {planner}
          {charts}
          {below}
        </div>
      ) : (
        <p class="empty">
          {s.computing.value ? 'Computing in the background…' : 'No result yet: fix the highlighted input.'}
        </p>
      )}
    </section>
  );
}
