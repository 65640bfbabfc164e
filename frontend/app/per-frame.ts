// Edits that arrive faster than frames (a held arrow key, fast typing): the first in a frame is committed at once,
// the ones after it wait for the next frame, and only the newest of each field is committed then.

const waiting = new Map<string, () => void>();
let frameOpen = false;

function nextFrame() {
  if (!waiting.size) {
    frameOpen = false;
    return;
  }
  const due = [...waiting.values()];
  waiting.clear();
  for (const commit of due) commit();
  requestAnimationFrame(nextFrame);
}

/** Commit an edit of `key` now (true), or, when an edit was committed in this frame already, at the next frame
 * (false; a newer edit of the same key replaces it). Without frames (Node) it commits at once. */
export function perFrame(key: string, commit: () => void): boolean {
  if (typeof requestAnimationFrame === 'function' && frameOpen) {
    waiting.delete(key); // the newest goes last, in the order of the edits
    waiting.set(key, commit);
    return false;
  }
  if (typeof requestAnimationFrame === 'function') {
    frameOpen = true;
    requestAnimationFrame(nextFrame);
  }
  commit();
  return true;
}

/** Forget the edit of `key` waiting for the next frame (a newer one replaced it, and it cannot be committed). */
export function dropWaiting(key: string) {
  waiting.delete(key);
}
