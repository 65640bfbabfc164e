// Peak per GPU against the GPU's memory, fits or not, and the three readings people compare with.
import { useEffect, useState } from 'preact/hooks';
import type { EstimateResult } from '../../wasm/llmem.js';
import { formatGiB, formatPercent, gibParts } from '../format.js';
import type { Verdict } from '../planner.js';
import { useApp } from './context.js';
import { LargestFit } from './LargestFit.js';
import { StepTime } from './StepTime.js';

const VERDICT_TEXT: Record<Verdict, string> = { fits: 'Fits', tight: 'Fits, but tight', no: 'Does not fit' };
const VERDICT_CLASS: Record<Verdict, string> = { fits: 'ok', tight: 'warn', no: 'bad' };

/** Estimates in the Worker that answer sooner than this show no "Updating" mark (ms). */
const UPDATING_AFTER_MS = 150;

/** Its own component, shown only for an answer that takes a while: a mark that came and went on each heavy edit
 * moved everything below it twice (the line wraps), and re-rendered the headline. */
function Updating() {
  const computing = useApp().computing.value;
  const [late, setLate] = useState(false);
  useEffect(() => {
    setLate(false);
    if (!computing) return;
    const t = setTimeout(() => setLate(true), UPDATING_AFTER_MS);
    return () => clearTimeout(t);
  }, [computing]);
  if (!computing || !late) return null;
  return (
    <span class="muted" data-testid="computing">
      Updating (deep pipeline, computed in the background)…{' '}
    </span>
  );
}

export function Headline({ r }: { r: EstimateResult }) {
  const s = useApp();
  const p = r.per_gpu;
  // the same headroom as "Largest that fits", the suggestions and the layout search
  const free = s.planner.freeFraction.value;
  const verdict = s.planner.verdict.value ?? 'no';
  const big = gibParts(p.device_used_bytes);
  const readings = [
    {
      label: 'Allocated',
      value: r.peak_allocated.bytes,
      // the highest allocated peak may sit on another pipeline stage than the most device memory
      note:
        r.peak_allocated.stage === p.stage
          ? 'torch.cuda.max_memory_allocated()'
          : `max_memory_allocated(), on stage ${r.peak_allocated.stage} (the rest: stage ${p.stage})`,
      id: 'allocated',
    },
    { label: 'Reserved', value: p.peak_reserved_bytes, note: '+ caching-allocator reserve', id: 'reserved' },
    { label: 'nvidia-smi', value: p.device_used_bytes, note: '+ CUDA context, NCCL', id: 'device' },
  ];
  return (
    <section class="card headline" aria-label="Peak memory per GPU" data-testid="headline">
      <div class="headline-top">
        <div>
          <p class="eyebrow">Peak memory per GPU</p>
          <p class="big" data-testid="peak">
            <span class="num">{big.value}</span>
            <span class="unit">{big.unit}</span>
            <span class="of"> of {formatGiB(r.capacity_bytes)}</span>
          </p>
        </div>
        <p class={`verdict ${VERDICT_CLASS[verdict]}`} data-testid="verdict" data-verdict={verdict}>
          <span class="verdict-main">{VERDICT_TEXT[verdict]}</span>
          <span class="verdict-sub">
            {formatPercent(r.utilization)} of GPU memory
            {verdict === 'tight' && <>, less than the {formatPercent(free, 0)} kept free</>}
          </span>
        </p>
      </div>
      <dl class="readings">
        {readings.map((x) => (
          <div key={x.id} class="reading" data-testid={`reading-${x.id}`}>
            <dt>{x.label}</dt>
            <dd>{formatGiB(x.value)}</dd>
            <dd class="note">{x.note}</dd>
          </div>
        ))}
      </dl>
      <p class="peak-at">
        <span>
          <Updating />
          Peak during <strong>{p.peak_at || '—'}</strong>
          {r.host.cpu_bytes > 0 && <> · host RAM {formatGiB(r.host.cpu_bytes)} per GPU</>}
          {r.host.nvme_bytes > 0 && <> · NVMe {formatGiB(r.host.nvme_bytes)} per GPU</>}
        </span>
        <button
          type="button"
          class="pin"
          data-testid="pin-a"
          title="Keep this result as A; every change after it is B, side by side"
          onClick={() => {
            s.planner.pin();
            s.planner.tab.value = 'compare';
          }}
        >
          {s.planner.pinned.value ? 'Re-pin as A' : 'Pin as A'}
        </button>
      </p>
      <div class="plan-line">
        <LargestFit />
        <StepTime />
      </div>
    </section>
  );
}
