// "Make it fit": when the run does not fit, single changes and small
// combinations that do (core/suggest.c, run in the planner Worker), each with
// its new peak, the host RAM it needs, its step time per token against now,
// and Apply; then the fewest GPUs and the next GPU model that fit. When the
// run fits: how much larger it could go (the headline's largest fit).
import { formatGiB, formatNumber } from '../format.js';
import type { WordedSuggestion } from '../config/suggest.js';
import { useMemo } from 'preact/hooks';
import { useApp } from './context.js';
import './layout-table.css';
import './suggest.css';

const SHOWN = 8;

function Row({ s, apply, label }: { s: WordedSuggestion; apply: () => void; label?: string }) {
  return (
    <tr data-testid="suggestion" data-kind={s.kind}>
      <td class="wrap">
        {label && <strong>{label}: </strong>}
        {s.words}
        {s.note && s.kind !== 'gpus' ? <span class="pill warn">{s.note}</span> : null}
      </td>
      <td class="r">{formatGiB(s.device_used_bytes)}</td>
      <td class="r" title="per GPU process; per node in brackets">
        {s.host_cpu_bytes > 0 ? `${formatGiB(s.host_cpu_bytes)} (${formatGiB(s.host_cpu_bytes_per_node)})` : '—'}
        {s.host_nvme_bytes > 0 && ` + NVMe ${formatGiB(s.host_nvme_bytes)}`}
      </td>
      <td class="r">×{s.time_ratio.toFixed(2)}</td>
      <td>
        <button type="button" class="link" data-testid="apply-suggestion" onClick={apply}>
          Apply
        </button>
      </td>
    </tr>
  );
}

export function SuggestPanel({ fits }: { fits: boolean }) {
  const s = useApp();
  const p = s.planner;
  if (fits) {
    const f = p.fits.value;
    const ok = f && 'seq_len' in f ? f : null;
    if (!ok) return null;
    return (
      <p class="card suggest-fits hint" data-testid="suggest-panel">
        Fits. It could go larger: micro-batch up to <strong>{formatNumber(ok.micro_batch)}</strong>, or{' '}
        {ok.seq_path === 'rl.response_len' ? 'responses' : 'sequences'} up to{' '}
        <strong>{formatNumber(ok.seq_len)}</strong> tokens, leaving {Math.round(p.freeFraction.value * 100)} % free.
      </p>
    );
  }
  const job = p.suggest.value;
  const res = job.data;
  // the rows follow the report only: each edit and each result change the job's status (running, in flight), and
  // re-rendering the rows with it diffed the whole table twice per heavy edit (issue 17)
  const rows = useMemo(
    () =>
      res && (
        <>
          {res.suggestions
            .filter((x) => x.kind !== 'gpus')
            .slice(0, SHOWN)
            .map((x) => (
              <Row key={JSON.stringify(x.patch)} s={x} apply={() => p.applySuggestion(x.patch)} />
            ))}
          {res.fewest && <Row s={res.fewest} label="Fewest GPUs" apply={() => p.applySuggestion(res.fewest!.patch)} />}
        </>
      ),
    [res, p],
  );
  return (
    <section class="card suggest" aria-labelledby="suggest-title" data-testid="suggest-panel">
      <h3 id="suggest-title">Make it fit</h3>
      {job.status === 'running' && <p class="hint">Searching changes that fit…</p>}
      {job.error && <p class="field-error">{job.error}</p>}
      {res && (
        <>
          <p class="hint" data-testid="suggest-summary">
            {res.suggestions.length} changes that leave {Math.round(p.freeFraction.value * 100)} % free, each verified
            by its own estimate; those that keep the training first, each group by step time per token against now (the
            step-time model). {res.candidates} setups estimated in {job.where} ({Math.round(job.ms)} ms).
          </p>
          <div class="table-scroll">
            <table class="layout-table suggest-table num">
              <thead>
                <tr>
                  <th>Change</th>
                  <th class="r">nvidia-smi</th>
                  <th class="r">Host RAM/GPU (node)</th>
                  <th class="r">Step time</th>
                  <th />
                </tr>
              </thead>
              <tbody>{rows}</tbody>
            </table>
          </div>
          {res.next_gpu && (
            <p class="hint" data-testid="next-gpu">
              Next GPU model that fits: <strong>{res.next_gpu.name}</strong> (
              {formatGiB(res.next_gpu.device_used_bytes)} of {formatGiB(res.next_gpu.capacity_bytes)}, step time ×
              {res.next_gpu.time_ratio.toFixed(2)}){' '}
              <button type="button" class="link" onClick={() => s.setGpu(res.next_gpu!.id)}>
                Apply
              </button>
            </p>
          )}
        </>
      )}
    </section>
  );
}
