// Measured truth: load the GPU probe's output (or an accuracy case) by file
// picker or drop; its config is loaded with it. Measured next to estimated
// per reading and per phase (as `llmem compare`); the measured peaks are
// also drawn on the breakdown bar and the timeline.
import { FileDrop } from './FileDrop.js';
import { formatSignedPercent, GIB } from '../format.js';
import { useApp } from './context.js';
import './compare.css';

const NAME: Record<string, string> = {
  peak_allocated_bytes: 'Allocated',
  peak_reserved_bytes: 'Reserved',
  device_used_bytes: 'nvidia-smi',
  'forward peak_allocated_bytes': 'Forward peak, allocated',
  'backward peak_allocated_bytes': 'Backward peak, allocated',
  'optimizer peak_allocated_bytes': 'Optimizer peak, allocated',
};

export function MeasuredPanel() {
  const s = useApp();
  const p = s.planner;
  const m = p.measurement.value;
  const rows = p.measured.value;
  // the config's estimate is running in the Worker: the estimated column is still the previous config's
  const busy = s.computing.value;
  const read = async (f: File) => {
    p.loadMeasurement(f.name, await f.text());
  };
  return (
    <div class="measured" data-testid="measured-panel" aria-busy={busy || undefined}>
      <FileDrop
        label="Load measurement…"
        hint="or drop a JSON file here: the probe's output (probe/llmem_probe.py) or an accuracy case"
        accept=".json,application/json"
        inputLabel="Load a measurement file"
        testid={{ zone: 'measure-drop', button: 'load-measurement', input: 'measure-file' }}
        onFile={(f) => void read(f)}
      />
      {p.measureMessage.value && (
        <p class="field-error" role="alert" data-testid="measure-message">
          {p.measureMessage.value}
        </p>
      )}
      {m && rows && (
        <>
          <div class="measured-head">
            <p>
              <strong>{m.name}</strong>{' '}
              <span class="muted">measured, against the estimate of the config on screen</span>
              {m.m.origin && (
                <span class="muted" data-testid="measured-origin">
                  {' '}
                  · {m.m.origin}
                  {m.m.fake_process_group && ' (collectives moved no data; no NCCL buffers)'}
                </span>
              )}
            </p>
            <button type="button" class="link" onClick={() => (p.measurement.value = null)}>
              Clear
            </button>
          </div>
          <table class={`ab-table num${busy ? ' stale' : ''}`} data-testid="measured-table">
            <caption class="sr-only">Measured against estimated, GiB per GPU</caption>
            <thead>
              <tr>
                <th scope="col">Per GPU, GiB</th>
                <th scope="col" class="r">
                  Estimated
                </th>
                <th scope="col" class="r">
                  Measured
                </th>
                <th scope="col" class="r">
                  Error
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.name} class={r.name.includes(' ') ? 'ab-category' : 'ab-reading'}>
                  <th scope="row" title={r.name}>
                    {NAME[r.name] ?? r.name}
                  </th>
                  <td class="r">{(r.estimated / GIB).toFixed(2)}</td>
                  <td class="r">{r.measured === null ? 'n/a' : (r.measured / GIB).toFixed(2)}</td>
                  <td
                    class={`r diff ${r.error === null ? 'same' : Math.abs(r.error) <= 0.05 ? 'same' : r.error > 0 ? 'up' : 'down'}`}
                  >
                    {r.error === null ? '' : formatSignedPercent(r.error)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="note">
            Error = (estimated − measured) / measured, as <code>llmem compare</code> prints it. The measured peaks are
            marked on the breakdown bar and, per phase, on the timeline.
          </p>
        </>
      )}
    </div>
  );
}
