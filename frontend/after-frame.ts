// Work the next frame does not show (a Worker job's request, cards below the charts): run once the frame that shows
// the edit is drawn, so that the edit's chart does not wait for it (issue 17: a frame per edit).

/** Run `fn` after the next frame (a task after its animation frame callbacks); returns a cancel. Without frames
 * (Node, a hidden tab's throttled frames aside) it runs after a zero-delay timer. */
export function afterFrame(fn: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (typeof requestAnimationFrame !== 'function') {
    timer = setTimeout(fn, 0);
    return () => clearTimeout(timer);
  }
  const frame = requestAnimationFrame(() => {
    timer = setTimeout(fn, 0);
  });
  return () => {
    cancelAnimationFrame(frame);
    clearTimeout(timer);
  };
}
