// Layout search: every (dp, tp, pp, vpp, cp, ep, sharding, recompute,
// micro-batch) of a GPU count that fits with the margin, ranked by the
// step-time model (the numbers of `llmem search`). Runs in the Worker; a new
// input cancels a running search and starts the next.
import type { Config } from '../../wasm/llmem.js';
import { formatNumber, formatPercent } from '../format.js';
import type { SearchSwitch } from '../../wasm/llmem.js';
import { currentLayout, globalBatchOf, SEARCH_SWITCH_LABELS } from '../planner.js';
import { useApp } from './context.js';
import { LayoutScatter } from './LayoutScatter.js';
import { LayoutTable } from './LayoutTable.js';
import { NumberBox } from './NumberBox.js';

export function SearchPanel() {
  const s = useApp();
  const p = s.planner;
  const job = p.search.value;
  const res = job.data;
  const rows = p.rows.value;
  const stale = job.key !== p.currentSearchKey.value;
  const current = currentLayout(rows, s.resolved.value as Config);
  const gpus = s.get('parallel.gpus') as number;
  const batch = globalBatchOf(s.resolved.value as Config);
  return (
    <div class="search" data-testid="search-panel">
      <div class="plan-controls">
        <NumberBox
          id="search-gpus"
          label="GPUs"
          unit="GPUs"
          value={p.searchGpus.value}
          nullable
          placeholder={`${formatNumber(gpus)} (config)`}
          integer
          min={1}
          max={1048576}
          testid="search-gpus"
          onValue={(v) => (p.searchGpus.value = v)}
        />
        <NumberBox
          id="search-batch"
          label="Global batch"
          unit="samples"
          value={p.searchBatch.value}
          nullable
          placeholder={Number.isInteger(batch) ? `${formatNumber(batch)} (config)` : 'from config'}
          integer
          min={1}
          max={1e9}
          hint="empty: the config's global batch (or mb × ga × dp)"
          testid="search-batch"
          onValue={(v) => (p.searchBatch.value = v)}
        />
        <div class="field checks">
          {(Object.keys(SEARCH_SWITCH_LABELS) as SearchSwitch[]).map((k) => (
            <label class="check" key={k} title={SEARCH_SWITCH_LABELS[k].hint}>
              <input
                type="checkbox"
                checked={p.searchVary.value[k]}
                data-testid={`search-${SEARCH_SWITCH_LABELS[k].flag}`}
                onChange={(e) =>
                  (p.searchVary.value = { ...p.searchVary.value, [k]: (e.currentTarget as HTMLInputElement).checked })
                }
              />
              <span>{SEARCH_SWITCH_LABELS[k].label}</span>
            </label>
          ))}
        </div>
      </div>
      <p
        class="plan-status muted num"
        data-testid="search-status"
        data-status={job.status}
        data-inflight={String(job.inflight)}
        data-where={job.where}
        data-ms={job.ms}
        data-round-ms={job.roundMs}
        data-count={res?.layouts.length ?? 0}
        aria-live="polite"
      >
        {job.status === 'running' ? (
          <>
            Searching {formatNumber(p.searchOptions.value.gpus)} GPUs in a Web Worker…{' '}
            <button type="button" class="link" onClick={p.cancelSearch} data-testid="search-cancel">
              Cancel
            </button>
          </>
        ) : job.status === 'error' ? (
          <span class="bad-text">{job.error}</span>
        ) : job.status === 'idle' && res ? (
          'Search cancelled.'
        ) : res ? (
          <>
            {formatNumber(res.candidates)} layouts enumerated, {formatNumber(res.valid)} valid,{' '}
            {formatNumber(res.fitting)} fit leaving {formatPercent(p.freeFraction.value, 0)} free
            {res.layouts.length < res.fitting ? ` (the fastest ${res.layouts.length} kept)` : ''} ·{' '}
            <span data-testid="search-ms">{job.ms.toFixed(1)}</span> ms in the core ({job.where}),{' '}
            {job.roundMs.toFixed(1)} ms round trip
          </>
        ) : (
          'Waiting for a valid config.'
        )}
        {job.status === 'idle' && (
          <>
            {' '}
            <button type="button" onClick={p.runSearchNow} data-testid="search-run">
              Search
            </button>
          </>
        )}
      </p>
      {res && res.global_batch > 0 && res.global_batch < p.searchOptions.value.gpus && job.status !== 'running' && (
        <p class="note warn-text" data-testid="search-batch-cap">
          A global batch of {formatNumber(res.global_batch)} samples allows data parallelism over at most{' '}
          {formatNumber(res.global_batch)} of {formatNumber(p.searchOptions.value.gpus)} GPUs: every layout needs TP ×
          PP × CP ≥ {formatNumber(Math.ceil(p.searchOptions.value.gpus / res.global_batch))}. Set the global batch of
          the run you plan.
        </p>
      )}
      {res && res.layouts.length === 0 && job.status !== 'running' && (
        <div class="empty-note" data-testid="search-empty">
          <p>No layout of {formatNumber(p.searchOptions.value.gpus)} GPUs fits. Why each candidate was left out:</p>
          <ul>
            {res.rejected.map((r) => (
              <li key={r.reason}>
                <span class="num">{formatNumber(r.count)}</span> {r.reason}
              </li>
            ))}
          </ul>
        </div>
      )}
      {res && res.layouts.length > 0 && (
        <div class={stale ? 'stale' : ''}>
          <LayoutScatter rows={rows} current={current} onPick={p.loadLayout} />
          <LayoutTable rows={rows} current={current} onPick={p.loadLayout} />
          <p class="note">
            Step time and tokens/s are estimates from a ranking model: good for ordering layouts, not a measured
            throughput.
          </p>
        </div>
      )}
    </div>
  );
}
