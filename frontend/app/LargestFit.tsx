// Headline: the largest micro-batch and the longest sequence that fit while
// leaving the safety margin free (bisections in the core, on each change;
// the same numbers as `llmem fit --free`). Each can be applied with a click.
import { useMemo, useRef } from 'preact/hooks';
import { formatNumber } from '../format.js';
import { useApp } from './context.js';
import { NumberBox } from './NumberBox.js';

export function LargestFit() {
  const s = useApp();
  const p = s.planner;
  const f = p.fits.value;
  const ok = f && 'seq_len' in f ? f : null;
  const free = p.freeFraction.value;
  // an RL step bisects the response length (training.seq_len does not apply there)
  const seqPath =
    ok?.seq_path ??
    (s.get('rl.algorithm') && s.get('rl.algorithm') !== 'none' ? 'rl.response_len' : 'training.seq_len');
  const rl = seqPath === 'rl.response_len';
  // the values the fits on screen were found at: while a heavy config computes in the Worker, those before the edit
  // (the note changing first moved the page's layout in the frame before the result)
  const at = useRef<{ mb: number; seq: number } | null>(null);
  if (!s.computing.value || !at.current)
    at.current = { mb: s.get('training.micro_batch') as number, seq: s.get(seqPath) as number };
  const { mb, seq } = at.current;
  // the element is kept while what it shows is the same: a heavy edit flips "computing" twice (at the edit and with
  // its result), and the section was diffed again each time with nothing changed (issue 17)
  return useMemo(() => {
    const item = (testid: string, label: string, path: string, v: number | undefined, unit: string, at: string) => (
      <div class="fit-item" data-testid={testid}>
        <dt>{label}</dt>
        <dd class="num">
          {v === undefined ? (
            '—'
          ) : v === 0 ? (
            <span class="bad-text">none</span>
          ) : (
            <button
              type="button"
              class="link fit-value"
              title={`Set ${label.toLowerCase()} to ${formatNumber(v)}`}
              aria-label={`Set ${label.toLowerCase()} to ${formatNumber(v)}`}
              onClick={() => s.setField(path, v)}
            >
              {formatNumber(v)}
            </button>
          )}{' '}
          <small class="muted">{unit}</small>
        </dd>
        <dd class="note">{at}</dd>
      </div>
    );
    return (
      <section class="fit" aria-label="Largest that fits" data-testid="largest-fit">
        <div class="fit-head">
          <p class="eyebrow">Largest that fits</p>
          <NumberBox
            id="plan-free"
            label="Keep free"
            unit="% HBM"
            value={Math.round(free * 1000) / 10}
            min={0}
            max={90}
            compact
            testid="free-margin"
            onValue={(v) => (p.freeFraction.value = (v ?? 10) / 100)}
          />
        </div>
        <dl class="fit-list">
          {item(
            'fit-mb',
            'Micro-batch',
            'training.micro_batch',
            ok?.micro_batch,
            'samples',
            rl ? `at ${formatNumber(seq)}-token responses` : `at ${formatNumber(seq)} tokens`,
          )}
          {item(
            'fit-seq',
            rl ? 'Response' : 'Sequence',
            seqPath,
            ok?.seq_len,
            'tokens',
            `at micro-batch ${formatNumber(mb)}; multiples of ${formatNumber(ok?.seq_step ?? 128)}`,
          )}
        </dl>
        {f && 'message' in f && <p class="field-error">{f.message}</p>}
      </section>
    );
  }, [s, p, f, ok, free, seqPath, rl, mb, seq]);
}
