// Import a config: paste it, pick the file, or drop it (here or anywhere on the
// page). The kind is detected (or chosen); formats that do not carry it take a
// world size, and a TRL file whose keys do not tell its trainer takes one. The preview shows what Apply changes, what
// was assumed and what was left out; malformed input is an inline message and
// Apply stays off.
import { isAccelerateConfig } from '../config/accelerate-signature.js';
import { SOURCES, sourceLabel } from '../io-state.js';
import { TRAINERS } from '../io-menus.js';
import type { SourceKind } from '../config/formats.js';
import { useApp } from './context.js';
import { Dialog } from './Dialog.js';
import { ImportPreview } from './ImportPreview.js';
import { FileDrop } from './FileDrop.js';

/** What the world size also sets, by format (the rest: the GPU count only). */
const WORLD_USE: Record<string, string> = {
  megatron: ' and grad_accum from --global-batch-size',
  torchtitan: ' for data_parallel_shard_degree = -1',
  deepspeed: ' (the data-parallel size) and grad_accum from train_batch_size',
  trl: ' and, for GRPO and DPO, the RL batches',
  openrlhf: ' and the RL batches',
  swift: ' where the script sets no NPROC_PER_NODE, and the RL batches',
};

export function ImportDialog() {
  const s = useApp();
  const io = s.io;
  const src = io.source.value;
  const detected = io.detected.value;
  const p = io.preview.value;
  const ws = io.worldSize.value;
  const footer = (
    <>
      <span class="muted dialog-foot-note">{p?.ok ? 'Nothing changes until Apply.' : ''}</span>
      <button type="button" onClick={io.close}>
        Cancel
      </button>
      <button type="button" class="primary" disabled={!p?.ok} onClick={() => io.apply()} data-testid="import-apply">
        Apply
      </button>
    </>
  );
  return (
    <Dialog id="import-dialog" title="Import a config" onClose={io.close} footer={footer}>
      <p class="hint">
        A Hugging Face <code>config.json</code> (replaces the model), a DeepSpeed, Megatron-LM, torchtitan, accelerate,
        TrainingArguments, LLaMA-Factory, axolotl, torchtune or LitGPT config, a TRL SFT/DPO/ORPO/GRPO/reward config, a
        verl config or launch line, an OpenRLHF launch script, an ms-swift command line, a NeMo-RL config (these replace
        the settings they give), or llmem's config v1 JSON (replaces everything). A config is read with the DeepSpeed
        JSON it names, the accelerate config it is launched with, or the NeMo-RL base it inherits, when both files are
        chosen or dropped together. Read in this browser: nothing is uploaded.
      </p>
      <FileDrop
        label="Choose a file…"
        hint="or drop it here (with the second file it reads), or paste it below"
        accept=".json,.yaml,.yml,.toml,.sh,.txt,application/json,text/*"
        inputLabel="Config file to import"
        testid={{ zone: 'import-drop', button: 'import-pick', input: 'import-file' }}
        autofocus
        onFile={(f) => void io.readFile(f)}
        onFiles={(files) => void io.readFiles(files)}
      />
      {io.fileMessage.value && (
        <p class="field-error" role="alert" data-testid="import-file-message">
          {io.fileMessage.value}
        </p>
      )}
      {io.also.value && (
        <p class="hint" data-testid="import-also">
          Read with <code>{io.also.value.name}</code> (
          {isAccelerateConfig(io.also.value.text)
            ? 'the accelerate config it is launched with'
            : 'the DeepSpeed JSON it names'}
          ).{' '}
          <button type="button" class="link" onClick={io.dropAlso} data-testid="import-also-remove">
            Leave it out
          </button>
        </p>
      )}
      <div class="field">
        <label for="import-text">Config text {src.name ? <span class="muted">from {src.name}</span> : null}</label>
        <textarea
          id="import-text"
          class="code"
          rows={8}
          spellcheck={false}
          autocomplete="off"
          placeholder={
            '{"model_type": "qwen2", "hidden_size": 3584, …}\nor --tensor-model-parallel-size 8 …, [training] …, zero_optimization: …'
          }
          value={src.text}
          onInput={(e) => io.setText((e.currentTarget as HTMLTextAreaElement).value)}
          data-testid="import-text"
        />
      </div>
      <div class="import-options">
        <div class="field">
          <label for="import-kind">Format</label>
          <select
            id="import-kind"
            data-testid="import-kind"
            onChange={(e) =>
              (io.kindChoice.value = (e.currentTarget as HTMLSelectElement).value as SourceKind | 'auto')
            }
          >
            <option value="auto" selected={io.kindChoice.value === 'auto'}>
              {detected ? `Detected: ${sourceLabel(detected)}` : 'Detect from the file'}
            </option>
            {SOURCES.map((k) => (
              <option key={k.id} value={k.id} selected={io.kindChoice.value === k.id}>
                {k.label}
              </option>
            ))}
          </select>
        </div>
        {io.needsWorld.value && (
          <div class={`field${ws.message ? ' has-error' : ''}`}>
            <label for="import-world">World size (GPUs)</label>
            <input
              id="import-world"
              type="text"
              inputMode="numeric"
              placeholder="from the file"
              value={io.worldText.value}
              aria-invalid={ws.message ? 'true' : undefined}
              aria-describedby="import-world-hint"
              onInput={(e) => (io.worldText.value = (e.currentTarget as HTMLInputElement).value)}
              data-testid="import-world"
            />
            {ws.message ? (
              <p class="field-error" id="import-world-hint" role="alert">
                {ws.message}
              </p>
            ) : (
              <small class="hint" id="import-world-hint">
                When the file does not give it: sets the GPU count{WORLD_USE[io.kind.value ?? ''] ?? ''}.
              </small>
            )}
          </div>
        )}
      </div>
      {io.kind.value === 'trl' && (
        <div class="import-options">
          <div class="field">
            <label for="import-trainer">Trainer</label>
            <select
              id="import-trainer"
              data-testid="import-trainer"
              aria-describedby="import-trainer-hint"
              onChange={(e) =>
                (io.trainer.value = (e.currentTarget as HTMLSelectElement).value as typeof io.trainer.value)
              }
            >
              {TRAINERS.map((t) => (
                <option key={t.id} value={t.id} selected={io.trainer.value === t.id}>
                  {t.label}
                </option>
              ))}
            </select>
            <small class="hint" id="import-trainer-hint">
              The TRL trainer the file configures (<code>trl sft|dpo|orpo|grpo|reward --config</code>), when no key only
              its config class has tells it.
            </small>
          </div>
        </div>
      )}
      <ImportPreview />
    </Dialog>
  );
}
