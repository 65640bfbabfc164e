// Import and Export dialogs' state, in signals beside the app state. The
// importers and exporters are a chunk of their own (config/formats.ts),
// loaded the first time a dialog opens; the service worker precaches it,
// so import and export work offline too. Import: text pasted, picked or
// dropped, its kind detected (or chosen), a preview of what Apply changes,
// with what the importer assumed and what it left out; nothing is applied
// until Apply, and malformed input applies nothing. Export: config v1 JSON or
// a framework's format, with the list of what that format cannot express.
import { batch, computed, signal } from '@preact/signals';
import type { ExportKind, Exported, Prepared, SourceKind } from './config/formats.js';
import type { Trainer } from './config/importers/index.js';
import type { BaseState } from './state.js';
import { isAccelerateConfig } from './config/accelerate-signature.js';

export type Formats = typeof import('./config/formats.js');
export type ExportChoice = 'config' | ExportKind;

/** The Import dialog's format choices, in menu order. */
export const SOURCES: { id: SourceKind; label: string }[] = [
  { id: 'hf', label: 'Hugging Face config.json' },
  { id: 'config', label: 'config v1 (llmem JSON)' },
  { id: 'deepspeed', label: 'DeepSpeed JSON' },
  { id: 'megatron', label: 'Megatron-LM arguments' },
  { id: 'torchtitan', label: 'torchtitan TOML' },
  { id: 'accelerate', label: 'accelerate YAML' },
  { id: 'training_args', label: 'HF TrainingArguments JSON' },
  { id: 'llamafactory', label: 'LLaMA-Factory YAML' },
  { id: 'axolotl', label: 'axolotl YAML' },
  { id: 'trl', label: 'TRL SFT / DPO / ORPO / GRPO / reward config (YAML, JSON)' },
  { id: 'verl', label: 'verl config YAML or main_ppo script' },
  { id: 'openrlhf', label: 'OpenRLHF launch script' },
  { id: 'litgpt', label: 'LitGPT config (YAML)' },
  { id: 'torchtune', label: 'torchtune recipe config (YAML)' },
  { id: 'swift', label: 'ms-swift command line (swift sft / pt / rlhf)' },
  { id: 'nemo_rl', label: 'NeMo-RL config YAML (GRPO / SFT / DPO)' },
];
export const sourceLabel = (k: SourceKind) => SOURCES.find((s) => s.id === k)?.label ?? k;
/** Kinds that may need the world size (the file does not always say). */
// formats that do not carry the number of training processes (importers/index.ts ImportOptions.worldSize)
export const NEEDS_WORLD: readonly SourceKind[] = [
  'megatron',
  'torchtitan',
  'deepspeed',
  'accelerate',
  'training_args',
  'llamafactory',
  'axolotl',
  'trl',
  'openrlhf',
  'litgpt',
  'torchtune',
  'swift',
];
/** A config is a few KB; a file this large is something else (weights, a dataset). */
export const MAX_IMPORT_BYTES = 4 * 2 ** 20;

export type IoState = ReturnType<typeof createIo>;

type Named = { text: string; name: string };
const isDeepSpeedJson = (f: Named) =>
  /^\s*\{/.test(f.text) && /"(zero_optimization|train_micro_batch_size_per_gpu|train_batch_size)"\s*:/.test(f.text);

/**
 * Two files dropped together: the config and the DeepSpeed JSON it names, or a TRL / TrainingArguments file and the
 * accelerate config it is launched with. The one whose name the other's text holds is the second file; else the one
 * that is DeepSpeed JSON, else the one that is an accelerate config.
 */
export function pairFiles(a: Named, b: Named): { config: Named; also: Named } | null {
  const names = (x: Named, y: Named) => x.name !== '' && x.text.includes(y.name);
  if (names(a, b) !== names(b, a)) return names(a, b) ? { config: a, also: b } : { config: b, also: a };
  if (isDeepSpeedJson(a) !== isDeepSpeedJson(b))
    return isDeepSpeedJson(b) ? { config: a, also: b } : { config: b, also: a };
  if (isAccelerateConfig(a.text) !== isAccelerateConfig(b.text))
    return isAccelerateConfig(b.text) ? { config: a, also: b } : { config: b, also: a };
  return null;
}

export function createIo(app: BaseState, loader: () => Promise<Formats> = () => import('./config/formats.js')) {
  const core = app.core;
  /** The importers and exporters, once their chunk has loaded. */
  const formats = signal<Formats | null>(null);
  const loadError = signal<string | null>(null);
  let pending: Promise<Formats | null> | null = null;

  /** Load the formats chunk (once); a failure is shown in the dialog and may be retried. */
  function load(): Promise<Formats | null> {
    if (formats.peek()) return Promise.resolve(formats.peek());
    pending ??= loader().then(
      (m) => {
        batch(() => {
          formats.value = m;
          loadError.value = null;
        });
        return m;
      },
      (e: unknown) => {
        pending = null;
        loadError.value = `The importers and exporters could not load (${(e as Error)?.message ?? e}). Reload the page once online.`;
        return null;
      },
    );
    return pending;
  }

  const dialog = signal<'import' | 'export' | null>(null);
  /** A line about the last import, for the header. */
  const notice = signal('');

  // ---- import ---------------------------------------------------------------
  /** The text to import and the name of the file it came from ('' when pasted or typed). */
  const source = signal({ text: '', name: '' });
  /** The DeepSpeed JSON the config names, when it was dropped or chosen with it; read together. */
  const also = signal<{ text: string; name: string } | null>(null);
  const kindChoice = signal<SourceKind | 'auto'>('auto');
  const worldText = signal('');
  const trainer = signal<Trainer | ''>('');
  /** Import a file whose model id the catalog lacks, keeping the page's model (set it from its config.json). */
  const keepModel = signal(false);
  /** A file that could not be read (too large, not text). */
  const fileMessage = signal<string | null>(null);

  const detected = computed<SourceKind | undefined>(() => {
    const f = formats.value,
      src = source.value;
    return f && src.text.trim() ? f.detectSource(core.fields, src.name, src.text) : undefined;
  });
  /** What the text is when it is a training tool llmem does not read (said instead of nothing). */
  const unread = computed<string | undefined>(() => {
    const f = formats.value,
      src = source.value;
    return f && src.text.trim() && detected.value === undefined ? f.unreadFormat(src.name, src.text) : undefined;
  });
  const kind = computed<SourceKind | undefined>(() =>
    kindChoice.value === 'auto' ? detected.value : kindChoice.value,
  );
  const needsWorld = computed(() => kind.value !== undefined && NEEDS_WORLD.includes(kind.value));
  const worldSize = computed<{ value?: number; message: string | null }>(() => {
    const t = worldText.value.trim().replace(/[,_\s]/g, '');
    if (t === '' || !needsWorld.value) return { message: null };
    const n = Number(t);
    return Number.isInteger(n) && n >= 1
      ? { value: n, message: null }
      : { message: 'World size: a whole number of GPUs, 1 or more (or leave it empty)' };
  });

  /** What Apply would do, or why it cannot; null while there is nothing to read yet. */
  const preview = computed<Prepared | null>(() => {
    const f = formats.value,
      src = source.value,
      k = kind.value,
      ws = worldSize.value;
    if (!f || !src.text.trim() || !k || ws.message) return null;
    return f.prepareImport(core, app.doc.value, k, src.text, {
      filename: src.name,
      worldSize: ws.value,
      also: also.value?.text,
      trainer: k === 'trl' && trainer.value ? trainer.value : undefined,
      keepModel: keepModel.value,
    });
  });

  function openImport() {
    batch(() => {
      dialog.value = 'import';
      fileMessage.value = null;
    });
    void load();
  }

  /** Text typed or pasted into the dialog (no file name: the kind is guessed from the text). */
  function setText(text: string) {
    batch(() => {
      source.value = { text, name: '' };
      keepModel.value = false;
      fileMessage.value = null;
    });
  }

  /** A file's text, or null after saying why it cannot be read (too large, not text). */
  async function fileText(file: File): Promise<string | null> {
    if (file.size > MAX_IMPORT_BYTES) {
      fileMessage.value = `${file.name} is ${(file.size / 2 ** 20).toFixed(1)} MiB: that is not a config file (they are a few KB). Nothing was read.`;
      return null;
    }
    let text: string;
    try {
      text = await file.text();
    } catch (e) {
      fileMessage.value = `${file.name} could not be read (${(e as Error).message}).`;
      return null;
    }
    if (text.includes('\0')) {
      fileMessage.value = `${file.name} is not a text file. Nothing was read.`;
      return null;
    }
    return text;
  }

  /** A picked or dropped file: opens the dialog with its text. */
  async function readFile(file: File): Promise<void> {
    await readFiles([file]);
  }

  /**
   * Files picked or dropped together: one config, or a config and the DeepSpeed JSON it
   * names (read together); opens the dialog with them.
   */
  async function readFiles(files: readonly File[]): Promise<void> {
    openImport();
    if (files.length > 2) {
      fileMessage.value = `${files.length} files: import one config, or a config and the DeepSpeed JSON it names. Nothing was read.`;
      return;
    }
    const read: { text: string; name: string }[] = [];
    for (const f of files) {
      const text = await fileText(f);
      if (text === null) return;
      read.push({ text, name: f.name });
    }
    if (!read.length) return;
    const pair = read.length === 2 ? pairFiles(read[0], read[1]) : { config: read[0], also: null };
    if (!pair) {
      fileMessage.value = `${read[0].name} and ${read[1].name}: neither names the other, nor is exactly one of them a DeepSpeed JSON or an accelerate config. Import one config, or a config and the DeepSpeed JSON it names (or the accelerate config it is launched with). Nothing was read.`;
      return;
    }
    batch(() => {
      source.value = pair.config;
      keepModel.value = false;
      also.value = pair.also;
      kindChoice.value = 'auto';
      fileMessage.value = null;
      // a world size or trainer typed for the file before (even an import cancelled) does not carry over
      worldText.value = '';
      trainer.value = '';
    });
  }

  /** Forget the DeepSpeed JSON read with the config. */
  function dropAlso() {
    also.value = null;
  }

  /** Load the previewed result into the page; false (and nothing changes) when there is none. */
  function apply(): boolean {
    const p = preview.value,
      k = kind.value;
    if (!p?.ok || !k) return false;
    const what = (source.value.name || 'pasted text') + (also.value ? ` with ${also.value.name}` : '');
    batch(() => {
      app.importDoc(p.doc);
      notice.value = `Imported ${what} (${sourceLabel(k)})`;
      source.value = { text: '', name: '' };
      keepModel.value = false;
      also.value = null;
      kindChoice.value = 'auto';
      worldText.value = '';
      dialog.value = null;
    });
    return true;
  }

  function close() {
    dialog.value = null;
  }

  // ---- export ---------------------------------------------------------------
  const exportKind = signal<ExportChoice>('config');
  /** The page's config in the chosen format; null while the exporters load. */
  const exported = computed<Exported | null>(() => {
    const k = exportKind.value;
    if (k === 'config') return { text: app.exportText.value, unexpressed: [] };
    const f = formats.value;
    if (!f) return null;
    const out = f.exportConfig(k, app.resolved.value, core.defaults(app.resolved.value));
    // the command line as launch scripts write it: one argument per line (the same command in a shell)
    return k === 'megatron' ? { ...out, text: `${out.text.trimEnd().replace(/ (?=--)/g, ' \\\n    ')}\n` } : out;
  });

  function openExport(kind?: ExportChoice) {
    batch(() => {
      if (kind) exportKind.value = kind;
      dialog.value = 'export';
    });
    void load();
  }

  return {
    formats,
    loadError,
    load,
    dialog,
    notice,
    source,
    also,
    kindChoice,
    worldText,
    trainer,
    keepModel,
    fileMessage,
    detected,
    unread,
    kind,
    needsWorld,
    worldSize,
    preview,
    openImport,
    setText,
    readFile,
    readFiles,
    dropAlso,
    apply,
    close,
    exportKind,
    exported,
    openExport,
  };
}
