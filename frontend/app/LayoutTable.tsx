// The layouts found, sortable by any column (the core's ranking, fastest
// first, breaks ties); a row loads its layout into the config.
import { useEffect, useState } from 'preact/hooks';
import { formatNumber, GIB } from '../format.js';
import { sortLayouts, type LayoutRow, type SortKey } from '../planner.js';
import { useApp } from './context.js';
import './layout-table.css';

const COLUMNS: { key: SortKey; label: string; title: string; num: boolean }[] = [
  { key: 'dp', label: 'DP', title: 'data parallel', num: true },
  { key: 'tp', label: 'TP', title: 'tensor parallel', num: true },
  { key: 'pp', label: 'PP', title: 'pipeline parallel', num: true },
  { key: 'vpp', label: 'VPP', title: 'virtual pipeline stages', num: true },
  { key: 'cp', label: 'CP', title: 'context parallel', num: true },
  { key: 'ep', label: 'EP', title: 'expert parallel', num: true },
  { key: 'micro_batch', label: 'MB', title: 'micro-batch (samples)', num: true },
  { key: 'grad_accum', label: 'GA', title: 'gradient accumulation (micro-batches)', num: true },
  { key: 'rollout_tp', label: 'Rollout TP', title: "the RL rollout engine's tensor parallel", num: true },
  { key: 'recompute', label: 'Recompute', title: 'activation recomputation', num: false },
  { key: 'sharding', label: 'Sharding', title: 'how states are sharded', num: false },
  { key: 'device_used_bytes', label: 'GiB', title: 'nvidia-smi memory per GPU (GiB)', num: true },
  { key: 'step_seconds', label: 'Step s', title: 'step time, estimate (seconds)', num: true },
  { key: 'tokens_per_second_per_gpu', label: 'Tok/s/GPU', title: 'tokens per second per GPU, estimate', num: true },
];

const SHOWN = 25;
const METRICS: SortKey[] = ['device_used_bytes', 'step_seconds', 'tokens_per_second_per_gpu'];
const NARROW = '(max-width: 600px)';

/** On a phone the results (memory, step time, tokens/s) come first; the layout scrolls beside them. */
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const mq = matchMedia(NARROW);
    const on = () => setNarrow(mq.matches);
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);
  return narrow;
}

function cell(l: LayoutRow, key: SortKey): string {
  if (key === 'device_used_bytes') return (l.device_used_bytes / GIB).toFixed(2);
  if (key === 'step_seconds') return l.step_seconds.toFixed(3);
  if (key === 'tokens_per_second_per_gpu') return formatNumber(Math.round(l.tokens_per_second_per_gpu));
  return String(l[key]);
}

export function LayoutTable({
  rows,
  current,
  onPick,
}: {
  rows: LayoutRow[];
  current: LayoutRow | undefined;
  onPick: (l: LayoutRow) => void;
}) {
  const p = useApp().planner;
  const sort = p.sort.value;
  const [all, setAll] = useState(false);
  const [paretoOnly, setParetoOnly] = useState(false);
  const list = sortLayouts(paretoOnly ? rows.filter((l) => l.pareto) : rows, sort.key, sort.dir);
  const shown = all ? list : list.slice(0, SHOWN);
  // columns that say nothing here (no virtual stages, no experts) are left out
  const hidden = new Set<SortKey>((['vpp', 'ep'] as const).filter((k) => rows.every((l) => l[k] === 1)));
  if (rows.every((l) => l.rollout_tp === 0)) hidden.add('rollout_tp'); // not an RL run
  const narrow = useNarrow();
  const shownCols = COLUMNS.filter((c) => !hidden.has(c.key));
  const columns = narrow
    ? [...shownCols.filter((c) => METRICS.includes(c.key)), ...shownCols.filter((c) => !METRICS.includes(c.key))]
    : shownCols;
  const by = (key: SortKey) => (p.sort.value = { key, dir: sort.key === key && sort.dir === 'asc' ? 'desc' : 'asc' });
  return (
    <div class="layouts" data-testid="layout-table">
      <div class="table-tools">
        <label class="check">
          <input
            type="checkbox"
            checked={paretoOnly}
            onChange={(e) => setParetoOnly((e.currentTarget as HTMLInputElement).checked)}
          />
          <span>Pareto front only</span>
        </label>
        <span class="muted">
          {formatNumber(list.length)} {list.length === 1 ? 'layout' : 'layouts'}; click a row to load it
        </span>
      </div>
      <div class="table-scroll">
        <table class="layout-table num">
          <caption class="sr-only">Layouts that fit, sortable; each row loads its layout</caption>
          <thead>
            <tr>
              <th scope="col">
                <span class="sr-only">Load</span>
              </th>
              {columns.map((c) => (
                <th
                  key={c.key}
                  scope="col"
                  class={c.num ? 'r' : ''}
                  aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined}
                >
                  <button
                    type="button"
                    class="sort"
                    title={`${c.title}: sort`}
                    onClick={() => by(c.key)}
                    data-testid={`sort-${c.key}`}
                  >
                    {c.label}
                    <span class="arrow" aria-hidden="true">
                      {sort.key === c.key ? (sort.dir === 'asc' ? '▲' : '▼') : ''}
                    </span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((l) => (
              <tr
                key={l.rank}
                class={`${l.pareto ? 'pareto' : ''}${l === current ? ' current' : ''}`}
                aria-current={l === current ? 'true' : undefined}
                onClick={() => onPick(l)}
                data-testid="layout-row"
              >
                <td class="load-cell">
                  <button
                    type="button"
                    class="link load"
                    title={`Load this layout${l.pareto ? ' (on the Pareto front)' : ''}`}
                    onClick={(e) => {
                      e.stopPropagation();
                      onPick(l);
                    }}
                  >
                    {l === current ? 'in use' : 'Load'}
                  </button>
                  {l.pareto && <span class="pareto-dot" title="on the Pareto front" />}
                </td>
                {columns.map((c) => (
                  <td key={c.key} class={`${c.num ? 'r' : ''}${METRICS.includes(c.key) ? ' metric' : ''}`}>
                    {cell(l, c.key)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.length > SHOWN && (
        <button type="button" class="link" onClick={() => setAll(!all)}>
          {all ? `Show the first ${SHOWN}` : `Show all ${formatNumber(list.length)}`}
        </button>
      )}
    </div>
  );
}
