// "Why this number": each category of the peak, its value, and what produced
// it. The core reports its terms (EstimateResult.terms: label, formula with
// the inputs filled in, value); they are shown as they are. Should a result
// carry none, each category lists the inputs it depends on instead.
import type { Category, EstimateResult, Term } from '../../wasm/llmem.js';
import { CATEGORIES } from '../../wasm/llmem.js';
import { labelOf, visible } from '../fields.js';
import { formatGiB, formatPercent, formatValue } from '../format.js';
import { CATEGORY_COLOR, CATEGORY_LABEL, OVERHEAD_COLOR } from '../palette.js';
import { sourceOf } from '../config/profile.js';
import { fillFormula } from '../config/numbers.js';
import '../../wasm/term-texts.js'; // the terms' texts: this chunk brings them, not the page's first load
import { termFormula, termLabel } from '../../wasm/term-registry.js';
import { useApp, useComputed } from './context.js';
import { useProfileSources } from './ProfileImplied.js';
import './why.css';

const MODEL_SIZE = ['model.layers', 'model.hidden', 'model.ffn_hidden', 'model.vocab', 'model.moe.experts'];
const SHARDING = [
  'parallel.tp',
  'parallel.pp',
  'parallel.ep',
  'parallel.engine',
  'parallel.zero_stage',
  'parallel.fsdp_strategy',
  'parallel.gpus',
];

/** Fallback: the inputs each category depends on most. */
const DEPENDS: Record<Category | 'runtime', string[]> = {
  weights: [
    ...MODEL_SIZE,
    'training.dtype',
    'training.finetune.method',
    'training.finetune.quant',
    ...SHARDING,
    'parallel.offload_params',
    'parallel.shard_root_modules',
  ],
  gradients: ['training.grad_dtype', 'training.finetune.method', 'training.optimizer_in_backward', ...SHARDING],
  master_weights: [
    'training.master_weights',
    'training.dtype',
    'training.finetune.method',
    ...SHARDING,
    'parallel.offload_optimizer',
  ],
  optimizer_states: [
    'training.optimizer',
    'training.optimizer_dtype',
    'training.finetune.method',
    ...SHARDING,
    'parallel.distributed_optimizer',
    'parallel.offload_optimizer',
  ],
  activations: [
    'training.micro_batch',
    'training.seq_len',
    'model.hidden',
    'model.layers',
    'training.recompute',
    'training.attention',
    'parallel.tp',
    'parallel.sequence_parallel',
    'parallel.cp',
    'parallel.pp',
    'parallel.pp_schedule',
    'training.grad_accum',
    'training.dropout',
    'training.activation_offload',
  ],
  kv_cache: [
    'rl.rollout.gpu_memory_utilization',
    'rl.rollout.sleep',
    'rl.rollout.tp',
    'rl.rollout.kv_cache_dtype',
    'rl.rollout.max_num_batched_tokens',
  ],
  logits: [
    'training.micro_batch',
    'training.seq_len',
    'model.vocab',
    'training.loss',
    'training.loss_chunks',
    'parallel.tp',
  ],
  comm_buffers: [
    'parallel.engine',
    'parallel.zero_stage',
    'parallel.fsdp_strategy',
    'parallel.reshard_after_forward',
    'parallel.shard_root_modules',
    'parallel.reduce_bucket_size',
    'parallel.allgather_bucket_size',
    'parallel.stage3_prefetch_bucket_size',
    'parallel.ep',
  ],
  temporaries: ['training.optimizer_impl', 'training.optimizer', 'training.attention', 'training.finetune.method'],
  runtime: [
    'runtime.cuda_context_mib',
    'runtime.cublas_workspace_mib',
    'runtime.nccl_buffer_mib',
    'runtime.allocator_reserve',
    'runtime.expandable_segments',
  ],
};

type Row = { key: Category | 'runtime'; label: string; color: string; value: number; terms: Term[] };

/** A term's label and formula from this chunk's texts (wasm/term-texts.ts): a result read before they loaded, or
 * in the Worker, carries none. */
const labelOfTerm = (t: Term): string => t.label || termLabel(t.id);
const formulaOfTerm = (t: Term): string => t.formula || fillFormula(termFormula(t.id), t.inputs);

export function WhyPanel({ r }: { r: EstimateResult }) {
  const s = useApp();
  const terms = r.terms ?? [];
  // mechanisms the training-stack profile chose, named on the term they shape
  const implied = s.implied.value;
  // a computed: read directly, every value of the config would redraw this panel on each edit, before its result
  const framework = useComputed(() => String(s.get('runtime.framework') ?? 'generic')).value;
  const fromProfile = (t: Term) => implied.filter((p) => p.term_id === t.id);
  const sources = useProfileSources(implied.length > 0);
  const b = r.per_gpu.breakdown_bytes;
  const total = r.per_gpu.device_used_bytes;
  const rows: Row[] = CATEGORIES.map((c) => ({
    key: c,
    label: CATEGORY_LABEL[c],
    color: CATEGORY_COLOR[c],
    value: b[c],
    terms: terms.filter((t) => t.category === c),
  }));
  rows.push({
    key: 'runtime',
    label: 'Beside the tensors',
    color: OVERHEAD_COLOR.runtime,
    value: total - r.per_gpu.peak_allocated_bytes,
    terms: terms.filter((t) => t.category === 'runtime'),
  });
  return (
    <section class="card" aria-labelledby="why-title" data-testid="why">
      <h3 id="why-title">
        Why this number <span class="muted">{formatGiB(total)} at the peak, term by term</span>
      </h3>
      <ul class="why">
        {rows
          .filter((row) => row.value > 0 || row.terms.length > 0)
          .map((row) => (
            <li key={row.key} class="why-row">
              <p class="why-head">
                <span class="swatch" style={{ background: row.color }} />
                <span class="why-name">{row.label}</span>
                <span class="num">{formatGiB(row.value)}</span>
                <span class="muted share num">{formatPercent(row.value / total)}</span>
              </p>
              {terms.length ? (
                <ul class="terms">
                  {row.terms.map((t, i) => (
                    <li key={i}>
                      {(row.terms.length > 1 || labelOfTerm(t).toLowerCase() !== row.label.toLowerCase()) && (
                        <span class="term-label">{labelOfTerm(t)}</span>
                      )}
                      {row.terms.length > 1 && <span class="num term-value">{formatGiB(t.value_bytes)}</span>}
                      <span class="term-formula">{formulaOfTerm(t)}</span>
                      {fromProfile(t).map((p) => (
                        <span key={p.path} class="term-profile muted" data-testid="term-profile">
                          {' '}
                          {labelOf(p.path)} = {String(p.value)} from the {framework} profile ({sourceOf(sources, p.row)}
                          )
                        </span>
                      ))}
                    </li>
                  ))}
                </ul>
              ) : (
                <ul class="depends">
                  {DEPENDS[row.key]
                    .filter((p) => s.core.field(p) && visible(p, s.get))
                    .map((p) => (
                      <li key={p} title={p}>
                        {labelOf(p)} <strong>{formatValue(s.get(p))}</strong>
                      </li>
                    ))}
                </ul>
              )}
            </li>
          ))}
      </ul>
    </section>
  );
}
