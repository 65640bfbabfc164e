// The GPU (catalog, sets the memory) or a custom memory size in GiB.
import { useComputed } from '@preact/signals';
import { GPUS } from '../config/catalog.js';
import { formatGiB } from '../format.js';
import { useApp } from './context.js';

const VENDORS = [...new Set(GPUS.map((g) => g.vendor))];
const VENDOR_NAME: Record<string, string> = { nvidia: 'NVIDIA', amd: 'AMD' };

export function GpuPicker() {
  const s = useApp();
  // through a computed: an edit of another key does not re-render the select
  const id = useComputed(() => s.get('hardware.gpu') as string | null).value;
  const gpu = GPUS.find((g) => g.id === id);
  return (
    <div class="field wide picker">
      <label for="f-hardware-gpu">GPU</label>
      <select
        id="f-hardware-gpu"
        onChange={(e) => {
          const v = (e.currentTarget as HTMLSelectElement).value;
          s.setGpu(v === '' ? null : v);
        }}
      >
        {VENDORS.map((v) => (
          <optgroup key={v} label={VENDOR_NAME[v] ?? v}>
            {GPUS.filter((g) => g.vendor === v).map((g) => (
              <option key={g.id} value={g.id} selected={g.id === id}>
                {/GB/.test(g.name) ? g.name : `${g.name} · ${g.memory_gib} GB`}
              </option>
            ))}
          </optgroup>
        ))}
        <option value="" selected={id === null}>
          Custom memory size
        </option>
      </select>
      {gpu && (
        <small class="hint">
          {formatGiB(gpu.memory_bytes ?? gpu.memory_gib * 2 ** 30)} usable
          {gpu.memory_bytes ? ' (as nvidia-smi reports it)' : ''}
        </small>
      )}
    </div>
  );
}
