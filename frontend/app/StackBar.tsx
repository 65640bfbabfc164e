// A horizontal stacked bar in plain HTML (no canvas): memory categories, then
// the allocator cache and the CUDA runtime above them, against a fixed scale,
// with the GPU's capacity marked.
import { CATEGORIES, type RankResult } from '../../wasm/llmem.js';
import { formatGiB } from '../format.js';
import { CATEGORY_COLOR, CATEGORY_LABEL, OVERHEAD_COLOR, OVERHEAD_LABEL } from '../palette.js';

export interface Segment {
  key: string;
  label: string;
  value: number;
  color: string;
  pattern?: boolean;
}

/** The parts of a rank's device memory, bottom to top. */
export function segmentsOf(
  r: Pick<RankResult, 'breakdown_bytes' | 'peak_allocated_bytes' | 'peak_reserved_bytes' | 'device_used_bytes'>,
): Segment[] {
  const out: Segment[] = CATEGORIES.map((c) => ({
    key: c,
    label: CATEGORY_LABEL[c],
    value: r.breakdown_bytes[c],
    color: CATEGORY_COLOR[c],
  }));
  out.push({
    key: 'reserved',
    label: OVERHEAD_LABEL.reserved,
    value: Math.max(0, r.peak_reserved_bytes - r.peak_allocated_bytes),
    color: OVERHEAD_COLOR.reserved,
    pattern: true,
  });
  out.push({
    key: 'runtime',
    label: OVERHEAD_LABEL.runtime,
    value: Math.max(0, r.device_used_bytes - r.peak_reserved_bytes),
    color: OVERHEAD_COLOR.runtime,
    pattern: true,
  });
  return out;
}

export interface Mark {
  value: number;
  label: string;
}

export function StackBar({
  segments,
  max,
  capacity,
  label,
  thin,
  marks,
}: {
  segments: Segment[];
  max: number;
  capacity?: number;
  label: string;
  thin?: boolean;
  marks?: Mark[];
}) {
  const pct = (v: number) => `${(100 * v) / max}%`;
  const shown = segments.filter((s) => s.value > 0);
  const description = `${label}: ${shown.map((s) => `${s.label} ${formatGiB(s.value)}`).join(', ')}${capacity ? `; GPU memory ${formatGiB(capacity)}` : ''}${marks?.length ? `; ${marks.map((m) => `${m.label} ${formatGiB(m.value)}`).join(', ')}` : ''}`;
  return (
    // the widths are the bar's grid columns: a new estimate sets one style per bar, not one per segment
    // (16 stages of 7 segments each were a hundred style changes to recalculate on every edit)
    <div
      class={`stackbar ${thin ? 'thin' : ''}`}
      role="img"
      aria-label={description}
      style={{ gridTemplateColumns: shown.map((s) => pct(s.value)).join(' ') }}
    >
      {shown.map((s) => (
        <span
          key={s.key}
          class={`seg ${s.pattern ? 'pattern' : ''}`}
          style={{ background: s.color }}
          title={`${s.label}: ${formatGiB(s.value)}`}
        />
      ))}
      {capacity !== undefined && capacity <= max && (
        <span class="capacity" style={{ left: pct(capacity) }} title={`GPU memory ${formatGiB(capacity)}`} />
      )}
      {marks
        ?.filter((m) => m.value <= max)
        .map((m) => (
          <span
            key={m.label}
            class="mark"
            style={{ left: pct(m.value) }}
            title={`${m.label}: ${formatGiB(m.value)}`}
            data-testid="measured-mark"
          />
        ))}
    </div>
  );
}
