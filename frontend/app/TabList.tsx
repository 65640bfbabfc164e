// A row of tabs (WAI-ARIA tabs pattern): one Tab stop, the arrow keys move along the tabs (wrapping), Home and End
// go to the first and the last; selection follows focus. The tabs are the buttons with role="tab" inside.
import type { ComponentChildren } from 'preact';

export function TabList({
  label,
  class: cls,
  onSelect,
  children,
}: {
  label: string;
  class?: string;
  /** the tab at this index (in document order) was reached by the keyboard */
  onSelect: (index: number) => void;
  children: ComponentChildren;
}) {
  const onKey = (e: KeyboardEvent) => {
    const tabs = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>('[role=tab]')];
    const i = tabs.indexOf(document.activeElement as HTMLElement);
    const n = tabs.length;
    const next =
      e.key === 'ArrowRight'
        ? (i + 1) % n
        : e.key === 'ArrowLeft'
          ? (i + n - 1) % n
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? n - 1
              : null;
    if (next === null || i < 0) return;
    e.preventDefault();
    onSelect(next);
    tabs[next].focus();
  };
  return (
    <div class={cls ? `tabs ${cls}` : 'tabs'} role="tablist" aria-label={label} onKeyDown={onKey}>
      {children}
    </div>
  );
}
