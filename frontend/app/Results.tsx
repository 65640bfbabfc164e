// The right-hand column: headline, planner, charts, counts, warnings, explanations.
// When the input has a problem the last good result stays, marked as such.
import { BreakdownChart } from './BreakdownChart.js';
import { useApp } from './context.js';
import { Headline } from './Headline.js';
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
  return (
    <section class="results" id="results" aria-label="Results" data-testid="results">
      <StaleBanner />
      {r ? (
        <div class={s.stale.value ? 'stale' : ''}>
          <Headline r={r} />
          <SuggestPanel fits={s.planner.verdict.value === 'fits'} />
          <Planner />
          <BreakdownChart r={r} />
          <TimelineChart r={r} />
          <RankChart r={r} />
          <div class="two">
            <ParamsTable r={r} />
            <Warnings r={r} />
          </div>
          <WhyPanel r={r} />
        </div>
      ) : (
        <p class="empty">
          {s.computing.value ? 'Computing in the background…' : 'No result yet: fix the highlighted input.'}
        </p>
      )}
    </section>
  );
}
