// Parameter counts: total, active per token (MoE), trainable (LoRA), on the most-loaded GPU.
import type { EstimateResult } from '../../wasm/llmem.js';
import { formatCount } from '../format.js';

export function ParamsTable({ r }: { r: EstimateResult }) {
  const p = r.params;
  const rows: [string, number, string][] = [
    ['Total', p.total, 'every weight of the model'],
    ['Active', p.active, 'used per token (MoE routes to top-k experts)'],
    ['Trainable', p.trainable, 'receive gradients and optimizer states'],
    ['On one GPU', p.per_gpu, 'the most-loaded GPU, after TP / PP / EP / sharding'],
  ];
  return (
    <section class="card" aria-labelledby="params-title" data-testid="params">
      <h3 id="params-title">Parameters</h3>
      <dl class="params">
        {rows.map(([label, v, note]) => (
          <div key={label} title={note}>
            <dt>{label}</dt>
            <dd class="num">{formatCount(v)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
