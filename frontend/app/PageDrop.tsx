// Drop a config file anywhere on the page (or a config with the DeepSpeed JSON it
// names): the Import dialog opens with it.
// Drop zones of their own (the Measured panel) take their files first.
import { useEffect, useState } from 'preact/hooks';
import { useApp } from './context.js';
import './dialogs.css';

const hasFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');

export function PageDrop() {
  const s = useApp();
  const [over, setOver] = useState(false);
  useEffect(() => {
    const onOver = (e: DragEvent) => {
      if (!hasFiles(e) || e.defaultPrevented) {
        setOver(false);
        return;
      }
      e.preventDefault();
      e.dataTransfer!.dropEffect = 'copy';
      setOver(s.io.dialog.peek() === null); // an open dialog shows its own drop zone
    };
    const onLeave = (e: DragEvent) => {
      if (!e.relatedTarget) setOver(false); // left the window
    };
    const onDrop = (e: DragEvent) => {
      setOver(false);
      if (e.defaultPrevented || !hasFiles(e)) return;
      e.preventDefault();
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length) void s.io.readFiles(files);
    };
    const off = () => setOver(false);
    document.addEventListener('dragover', onOver);
    document.addEventListener('dragleave', onLeave);
    document.addEventListener('drop', onDrop);
    document.addEventListener('dragend', off);
    return () => {
      document.removeEventListener('dragover', onOver);
      document.removeEventListener('dragleave', onLeave);
      document.removeEventListener('drop', onDrop);
      document.removeEventListener('dragend', off);
    };
  }, [s]);
  return over ? (
    <div class="page-drop" aria-hidden="true" data-testid="page-drop">
      <p>Drop a config file to import it</p>
      <small>
        Hugging Face config.json, DeepSpeed, Megatron-LM, torchtitan, accelerate, TrainingArguments, LLaMA-Factory,
        axolotl or llmem config v1; with the DeepSpeed JSON it names, drop both
      </small>
    </div>
  ) : null;
}
