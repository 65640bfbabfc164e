// The planner: tabs for a sweep along one setting, the layout search, an
// A/B comparison and a loaded measurement. Closed until a tab is chosen;
// sweeps and searches run in a Web Worker.
import type { ComponentType } from 'preact';
import { TABS, type Tab } from '../planner-state.js';
import { useApp } from './context.js';
import { lazy } from './lazy.js';
import { TabList } from './TabList.js';

// each tab's code (and its chart) loads when the tab is first opened
const PANELS: Record<Tab, ComponentType> = {
  sweep: lazy(() => import('./SweepPanel.js').then((m) => m.SweepPanel), 'sweep'),
  search: lazy(() => import('./SearchPanel.js').then((m) => m.SearchPanel), 'layout search'),
  compare: lazy(() => import('./ComparePanel.js').then((m) => m.ComparePanel), 'comparison'),
  measured: lazy(() => import('./MeasuredPanel.js').then((m) => m.MeasuredPanel), 'measurement panel'),
};

export function Planner() {
  const s = useApp();
  const tab = s.planner.tab.value;
  const badge: Partial<Record<Tab, string | null>> = {
    compare: s.planner.pinned.value ? 'A pinned' : null,
    measured: s.planner.measurement.value ? 'loaded' : null,
  };
  const choose = (t: Tab | null) => (s.planner.tab.value = t);
  const Panel = tab ? PANELS[tab] : null;
  return (
    <section class={`card planner${tab ? ' open' : ''}`} aria-labelledby="planner-title" data-testid="planner">
      <div class="planner-head">
        <h3 id="planner-title">Planner</h3>
        <TabList label="Planner tools" onSelect={(i) => choose(TABS[i].id)}>
          {TABS.map((t) => (
            <button
              key={t.id}
              id={`tab-${t.id}`}
              type="button"
              role="tab"
              class="tab"
              aria-selected={tab === t.id}
              aria-controls={tab === t.id ? `panel-${t.id}` : undefined}
              tabIndex={tab === t.id || (tab === null && t.id === 'sweep') ? 0 : -1}
              data-testid={`tab-${t.id}`}
              onClick={() => choose(tab === t.id ? null : t.id)}
            >
              {t.label}
              {badge[t.id] && <span class="pill">{badge[t.id]}</span>}
            </button>
          ))}
        </TabList>
        {tab && (
          <button type="button" class="link close" aria-label="Close the planner" onClick={() => choose(null)}>
            Close
          </button>
        )}
      </div>
      {Panel ? (
        <div id={`panel-${tab}`} role="tabpanel" aria-labelledby={`tab-${tab}`} class="planner-body">
          <Panel />
        </div>
      ) : (
        <p class="hint planner-hint">
          Sweep one setting, search every layout of a GPU count, pin a result to compare, or load a measurement from the
          GPU probe.
        </p>
      )}
    </section>
  );
}
