// A value a frame late, for the cards below the charts: an edit's frame diffs and lays out only what it shows first.
import { useEffect, useState } from 'preact/hooks';
import { afterFrame } from '../after-frame.js';

/** `value` as it was before the last frame was drawn: the newest one follows once it is. */
export function useLater<T>(value: T): T {
  const [later, setLater] = useState(value);
  useEffect(() => (later === value ? undefined : afterFrame(() => setLater(() => value))), [value, later]);
  return later;
}
