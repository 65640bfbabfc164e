// Layout only: header, inputs (left), results (right); stacked on a phone; the Import / Export dialogs.
import type { AppState } from '../state.js';
import { PLACED, SECTIONS, type Section } from '../fields.js';
import { StateContext } from './context.js';
import { Header } from './Header.js';
import { Notices } from './Notices.js';
import { InputPanel } from './InputPanel.js';
import { lazy } from './lazy.js';
import { Results } from './Results.js';
import { Summary } from './Summary.js';

// the dialogs load when first opened
const ImportDialog = lazy(() => import('./ImportDialog.js').then((m) => m.ImportDialog), 'import dialog');
const ExportDialog = lazy(() => import('./ExportDialog.js').then((m) => m.ExportDialog), 'export dialog');
// the page-wide drop target for config files: listening from just after the first result
const PageDrop = lazy(() => import('./PageDrop.js').then((m) => m.PageDrop), 'file drop', true);

export function App({ state }: { state: AppState }) {
  // keys the core gained after fields.ts was written still get an input
  const other = state.fields
    .map((f) => f.path)
    .filter((p) => !PLACED.includes(p) && p !== 'model.preset' && p !== 'hardware.gpu');
  const dialog = state.io.dialog.value;
  const sections: Section[] = other.length
    ? [...SECTIONS, { id: 'other', title: 'Other settings', groups: [{ paths: other }] }]
    : SECTIONS;
  return (
    <StateContext.Provider value={state}>
      <Header />
      <Summary />
      <Notices />
      <main class="layout">
        <form class="inputs" aria-label="Training setup" onSubmit={(e) => e.preventDefault()} novalidate>
          {sections.map((s) => (
            <InputPanel key={s.id} section={s} />
          ))}
        </form>
        <Results />
      </main>
      <footer class="footer">
        Computed in your browser by the llmem core (C, WebAssembly): the same numbers as <code>npx llmem estimate</code>
        . Works offline after the first visit; nothing is sent anywhere.
      </footer>
      {dialog === 'import' && <ImportDialog />}
      {dialog === 'export' && <ExportDialog />}
      <PageDrop />
    </StateContext.Provider>
  );
}
