// The core's warnings about this setup (or a note that there are none).
import type { EstimateResult } from '../../wasm/llmem.js';

export function Warnings({ r }: { r: EstimateResult }) {
  return (
    <section class="card" aria-labelledby="warnings-title" data-testid="warnings">
      <h3 id="warnings-title">
        Warnings {r.warnings.length > 0 && <span class="pill warn">{r.warnings.length}</span>}
      </h3>
      {r.warnings.length ? (
        <ul class="warnings">
          {r.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : (
        <p class="muted">None for this setup.</p>
      )}
    </section>
  );
}
