// Parts of the page that load when first opened, not with the page (issue 17:
// the planner's tabs and the import/export dialogs stay out of the first load;
// the service worker precaches their chunks, so they open offline too).
// preact/compat's lazy + Suspense would do the same but brings compat into the
// first load; this is the few lines the page needs.
import { type ComponentType, h, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** quiet: nothing while it loads (a part that may show nothing anyway, or a button) rather than a "Loading" line. */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>, what: string, quiet = false) {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  return function Lazy(props: P): JSX.Element | null {
    const [failed, setFailed] = useState<string | null>(null);
    const [, setReady] = useState(false);
    useEffect(() => {
      if (loaded) return;
      pending ??= load();
      pending.then(
        (c) => {
          loaded = c;
          setReady(true);
        },
        (e: unknown) => {
          pending = null; // a later open tries again
          setFailed(e instanceof Error ? e.message : String(e));
        },
      );
    }, []);
    if (loaded) return h(loaded, props);
    if (failed)
      return (
        <p class="error" role="alert">
          Could not load the {what}: {failed}
        </p>
      );
    if (quiet) return null;
    return (
      <p class="hint" aria-busy="true">
        Loading the {what}…
      </p>
    );
  };
}
