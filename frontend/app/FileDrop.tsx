// A drop zone with a "choose a file" button: the one file picker of the page
// (config import, measurement loading). With onFiles, several files at once.
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import './dropzone.css';

export function FileDrop(props: {
  label: string;
  hint: string;
  accept: string;
  inputLabel: string;
  testid: { zone: string; button: string; input: string };
  autofocus?: boolean;
  onFile: (f: File) => void;
  /** several files dropped or chosen together (the config and the DeepSpeed JSON it names) */
  onFiles?: (files: File[]) => void;
  children?: ComponentChildren;
}) {
  const take = (list: FileList | null | undefined) => {
    const files = [...(list ?? [])];
    if (props.onFiles && files.length) props.onFiles(files);
    else if (files[0]) props.onFile(files[0]);
  };
  const file = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a drop target for the mouse; the button inside is the keyboard's way in
    <div
      class={`dropzone${over ? ' over' : ''}`}
      data-testid={props.testid.zone}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        take(e.dataTransfer?.files);
      }}
    >
      <button
        type="button"
        autofocus={props.autofocus}
        onClick={() => file.current?.click()}
        data-testid={props.testid.button}
      >
        {props.label}
      </button>
      <span class="muted">{props.hint}</span>
      <input
        ref={file}
        type="file"
        hidden
        accept={props.accept}
        multiple={!!props.onFiles}
        aria-label={props.inputLabel}
        data-testid={props.testid.input}
        onChange={(e) => {
          const input = e.currentTarget as HTMLInputElement;
          const files = [...(input.files ?? [])];
          input.value = '';
          if (props.onFiles && files.length) props.onFiles(files);
          else if (files[0]) props.onFile(files[0]);
        }}
      />
    </div>
  );
}
