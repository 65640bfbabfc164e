// A/B: a pinned result (A) against the live one (B): the headline readings,
// both breakdown bars on one scale, the difference per category, and which
// settings differ.
import { labelOf } from '../fields.js';
import { formatGiB, formatPercent, formatSeconds, formatValue, GIB } from '../format.js';
import { CATEGORY_COLOR, OVERHEAD_COLOR } from '../palette.js';
import { changedKeys } from '../planner.js';
import { useApp } from './context.js';
import { segmentsOf, StackBar } from './StackBar.js';
import './compare.css';

const COLOR: Record<string, string> = { ...CATEGORY_COLOR, ...OVERHEAD_COLOR };

/** GiB with a sign: "+1.47", "−0.98", "±0.00". */
const signed = (bytes: number) => {
  const v = (Math.abs(bytes) / GIB).toFixed(2);
  return v === '0.00' ? '±0.00' : `${bytes > 0 ? '+' : '−'}${v}`;
};

export function ComparePanel() {
  const s = useApp();
  const p = s.planner;
  const a = p.pinned.value;
  const b = s.result.value;
  if (!a || !b) {
    return (
      <div class="compare" data-testid="compare-panel">
        <p>
          Pin the current result as <strong>A</strong>, then change anything: the live result is <strong>B</strong>,
          shown beside A with the difference per category.
        </p>
        <p>
          <button type="button" onClick={p.pin} data-testid="pin-a-panel">
            Pin as A
          </button>
        </p>
      </div>
    );
  }
  const rows = p.diff.value ?? [];
  // the settings change at once; B's result is the previous config's until the Worker answers (a deep pipeline):
  // B is marked as updating meanwhile, so the list of changes is never shown as B's numbers
  const busy = s.computing.value;
  const changes = changedKeys(a.values, s.values.value);
  const max =
    Math.max(
      a.result.capacity_bytes,
      b.capacity_bytes,
      a.result.per_gpu.device_used_bytes,
      b.per_gpu.device_used_bytes,
    ) * 1.02;
  const side = (name: 'A' | 'B', r: typeof b, step: typeof a.step) => (
    <div class={`ab-side${name === 'B' && busy ? ' stale' : ''}`} data-testid={`ab-${name}`}>
      <p class="ab-title">
        <span class={`ab-tag ab-${name.toLowerCase()}`}>{name}</span>
        <strong class="num">{formatGiB(r.per_gpu.device_used_bytes)}</strong>
        <span class="muted"> of {formatGiB(r.capacity_bytes)}</span>
        <span class={`badge ${r.fits ? 'ok' : 'bad'}`}>
          {r.fits ? 'fits' : 'does not fit'} · {formatPercent(r.utilization, 0)}
        </span>
      </p>
      <StackBar
        segments={segmentsOf(r.per_gpu)}
        max={max}
        capacity={r.capacity_bytes}
        label={`${name}: memory at the peak`}
        thin
      />
      <p class="muted ab-sub num">
        peak during {r.per_gpu.peak_at}
        {step ? ` · step ${formatSeconds(step.step_seconds)} (estimate)` : ''}
      </p>
    </div>
  );
  return (
    <div class="compare" data-testid="compare-panel" aria-busy={busy || undefined}>
      <div class="ab-actions">
        <button type="button" onClick={p.pin} title="Make the current result A">
          Re-pin as A
        </button>
        <button type="button" onClick={() => s.load(a.doc)} title="Go back to A's settings">
          Load A's config
        </button>
        <button type="button" class="link" onClick={() => (p.pinned.value = null)}>
          Clear A
        </button>
      </div>
      <div class="ab-bars">
        {side('A', a.result, a.step)}
        {side('B', b, p.step.value)}
      </div>
      <table class={`ab-table num${busy ? ' stale' : ''}`} data-testid="ab-table">
        <caption class="sr-only">A against B, per reading and per category, GiB</caption>
        <thead>
          <tr>
            <th scope="col">Per GPU, GiB</th>
            <th scope="col" class="r">
              A
            </th>
            <th scope="col" class="r">
              B
            </th>
            <th scope="col" class="r">
              B − A
            </th>
          </tr>
        </thead>
        <tbody>
          {rows
            .filter((r) => r.kind === 'reading' || r.a > 0 || r.b > 0)
            .map((r) => (
              <tr key={r.key} class={`ab-${r.kind}`} data-testid={`ab-row-${r.key}`}>
                <th scope="row">
                  {r.kind === 'category' && <span class="swatch" style={{ background: COLOR[r.key] }} />}
                  {r.label}
                </th>
                <td class="r">{(r.a / GIB).toFixed(2)}</td>
                <td class="r">{(r.b / GIB).toFixed(2)}</td>
                <td class={`r diff ${Math.abs(r.diff) < 0.005 * GIB ? 'same' : r.diff > 0 ? 'up' : 'down'}`}>
                  {signed(r.diff)}
                </td>
              </tr>
            ))}
        </tbody>
      </table>
      <div class="ab-changes" data-testid="ab-changes">
        <p class="eyebrow">What differs</p>
        {changes.length === 0 ? (
          <p class="muted">Nothing yet: change a setting and B follows.</p>
        ) : (
          <ul class="depends">
            {changes.slice(0, 12).map((c) => (
              <li key={c.path} title={c.path}>
                {labelOf(c.path)} <strong>{formatValue(c.a)}</strong> → <strong>{formatValue(c.b)}</strong>
              </li>
            ))}
            {changes.length > 12 && <li>and {changes.length - 12} more</li>}
          </ul>
        )}
      </div>
    </div>
  );
}
