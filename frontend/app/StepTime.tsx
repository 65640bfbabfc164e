// Headline: step time and tokens/s per GPU from the core's step-time model:
// an estimate for ranking layouts, labelled as such.
import { stepBreakdown } from '../config/labels.js';
import { formatNumber, formatSeconds } from '../format.js';
import { useApp, useComputed } from './context.js';

export function StepTime() {
  const s = useApp();
  const t = s.planner.step.value;
  // one setting, not every value: the step time renders with the result, not again on each edit of another field
  const algorithm = useComputed(() => s.get('rl.algorithm')).value;
  if (algorithm && algorithm !== 'none')
    return (
      <section class="steptime" aria-label="Step time estimate" data-testid="step-time">
        <p class="eyebrow">Step time</p>
        <p class="note">
          Not estimated for an RL step: the ranking model times a training step, not the rollout's generation or the
          log-prob passes.
        </p>
      </section>
    );
  return (
    <section class="steptime" aria-label="Step time estimate" data-testid="step-time">
      <p class="eyebrow">
        Step time <span class="pill warn">estimate</span>
      </p>
      <p class="steptime-main num">
        <strong data-testid="step-seconds">{t ? formatSeconds(t.step_seconds) : '—'}</strong>
        <span class="muted"> per step · </span>
        <strong data-testid="step-tokens">{t ? formatNumber(Math.round(t.tokens_per_second_per_gpu)) : '—'}</strong>
        <span class="muted"> tokens/s per GPU</span>
      </p>
      {t && (
        <p class="steptime-parts" data-testid="step-parts">
          {stepBreakdown(t.parts, 0.01)
            .map((p) => `${p.label} ${Math.round(p.share * 100)} %`)
            .join(' · ')}
        </p>
      )}
      <p class="note">
        From a ranking model (each operation class at its measured rate, the communication the compute does not hide,
        the pipeline bubble): for comparing layouts, not a benchmark.
      </p>
    </section>
  );
}
