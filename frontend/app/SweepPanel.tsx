// Sweep: one setting over a range, in the Worker (the numbers of
// `llmem sweep`); re-runs when the config changes while the tab is open.
import { formatNumber } from '../format.js';
import { axisOf, invalidReasons, SWEEP_AXES, type Spacing } from '../planner.js';
import { useApp } from './context.js';
import { NumberBox } from './NumberBox.js';
import { SweepChart } from './SweepChart.js';

const SPACING: { id: Spacing; label: string }[] = [
  { id: 'linear', label: 'even steps' },
  { id: 'log', label: 'geometric' },
  { id: 'pow2', label: 'powers of 2' },
];

export function SweepPanel() {
  const s = useApp();
  const p = s.planner;
  const axis = axisOf(p.sweepAxis.value);
  const r = p.range.value;
  const plan = p.sweepPlan.value;
  const job = p.sweep.value;
  const data = job.data && job.data.path === axis.path ? job.data : null;
  const stale = job.key !== p.sweepKey.value;
  const moe = (s.get('model.moe.experts') as number) > 0;
  const lora = ['lora', 'qlora'].includes(s.get('training.finetune.method') as string);
  const reasons = data ? invalidReasons(data.points) : [];
  const valid = data ? data.points.filter((x) => x.ok).length : 0;
  return (
    <div class="sweep" data-testid="sweep-panel">
      <div class="plan-controls">
        <div class="field axis">
          <label for="sweep-axis">Setting</label>
          <select
            id="sweep-axis"
            data-testid="sweep-axis"
            onChange={(e) => (p.sweepAxis.value = (e.currentTarget as HTMLSelectElement).value)}
          >
            {SWEEP_AXES.filter((a) => s.core.field(a.path)).map((a) => (
              <option key={a.path} value={a.path} selected={a.path === axis.path}>
                {a.label}
                {a.path === 'parallel.ep' && !moe
                  ? ' (MoE only)'
                  : a.path === 'training.finetune.lora_rank' && !lora
                    ? ' (LoRA only)'
                    : ''}
              </option>
            ))}
          </select>
        </div>
        {!axis.categorical && (
          <>
            <NumberBox
              id="sweep-from"
              label="From"
              unit={axis.unit}
              value={r.from}
              integer
              min={1}
              testid="sweep-from"
              onValue={(v) => v !== null && p.setRange({ from: v })}
            />
            <NumberBox
              id="sweep-to"
              label="To"
              unit={axis.unit}
              value={r.to}
              integer
              min={1}
              testid="sweep-to"
              onValue={(v) => v !== null && p.setRange({ to: v })}
            />
            <div class="field">
              <label for="sweep-spacing">Spacing</label>
              <select
                id="sweep-spacing"
                onChange={(e) => p.setRange({ spacing: (e.currentTarget as HTMLSelectElement).value as Spacing })}
              >
                {SPACING.map((x) => (
                  <option key={x.id} value={x.id} selected={x.id === r.spacing}>
                    {x.label}
                  </option>
                ))}
              </select>
            </div>
            <NumberBox
              id="sweep-points"
              label="Points"
              unit="points"
              value={r.spacing === 'pow2' ? ('values' in plan ? plan.values.length : r.points) : r.points}
              integer
              min={2}
              max={4096}
              disabled={r.spacing === 'pow2'}
              testid="sweep-points"
              onValue={(v) => v !== null && p.setRange({ points: v })}
            />
          </>
        )}
      </div>
      {'error' in plan && (
        <p class="field-error" role="alert">
          {plan.error}
        </p>
      )}
      <p
        class="plan-status muted num"
        data-testid="sweep-status"
        data-status={job.status}
        data-where={job.where}
        data-ms={job.ms}
        data-round-ms={job.roundMs}
        data-count={data?.points.length ?? 0}
        aria-live="polite"
      >
        {job.status === 'running' ? (
          'Sweeping…'
        ) : job.status === 'error' ? (
          <span class="bad-text">{job.error}</span>
        ) : data ? (
          `${formatNumber(data.points.length)} points, ${formatNumber(valid)} valid · ${job.ms.toFixed(1)} ms in the core (${job.where}), ${job.roundMs.toFixed(1)} ms round trip`
        ) : (
          'Waiting for a valid config.'
        )}
      </p>
      {data && (
        <div class={stale ? 'stale' : ''}>
          <SweepChart
            axis={axis}
            points={data.points}
            log={!axis.categorical && r.spacing !== 'linear' && r.from > 0}
            current={s.get(axis.path) as number | string}
            free={p.freeFraction.value}
            onPick={(pt) => s.setField(axis.path, axis.categorical ? pt.label : pt.value)}
          />
          {reasons.length > 0 && (
            <details class="invalid" data-testid="sweep-invalid">
              <summary>
                {formatNumber(data.points.length - valid)} invalid{' '}
                {data.points.length - valid === 1 ? 'point' : 'points'} (gaps in the lines)
              </summary>
              <ul>
                {reasons.map((x) => (
                  <li key={x.reason}>
                    <strong class="num">
                      {x.labels.slice(0, 8).join(', ')}
                      {x.labels.length > 8 ? ` and ${x.labels.length - 8} more` : ''}
                    </strong>
                    : {x.reason}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      )}
    </div>
  );
}
