// A modal dialog (the native <dialog>: focus kept inside, Escape closes, the
// page behind is inert). Closes on Escape, the close button and a click on
// the backdrop; the owner unmounts it, and focus goes back to the opener.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import './dialogs.css';

export function Dialog({
  id,
  title,
  onClose,
  children,
  footer,
}: {
  id: string;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  footer?: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current!;
    // focus goes back where it was (the button that opened the dialog) when it closes
    const opener = document.activeElement as HTMLElement | null;
    if (!d.open) d.showModal?.();
    return () => {
      if (d.open) d.close();
      if (opener?.isConnected && opener !== document.body) opener.focus();
    };
  }, []);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the click is on the backdrop; the keyboard closes the dialog with Escape (onCancel)
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={`${id}-title`}
      data-testid={id}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onClick={(e) => {
        if (e.target === e.currentTarget) onClose(); // the backdrop
      }}
    >
      <div class="dialog-box">
        <div class="dialog-head">
          <h2 id={`${id}-title`}>{title}</h2>
          <button
            type="button"
            class="link dialog-close"
            onClick={onClose}
            aria-label="Close"
            data-testid={`${id}-close`}
          >
            Close
          </button>
        </div>
        <div class="dialog-body">{children}</div>
        {footer && <div class="dialog-foot">{footer}</div>}
      </div>
    </dialog>
  );
}
