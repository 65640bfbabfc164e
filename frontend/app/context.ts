// The app state, handed down through context (one state per page; tests make their own).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AppState } from '../state.js';

// for the lazy panels: through this module they take it from the first load's chunk (imported directly from a
// panel loaded by Results, the build split preact off into a chunk of its own, half a KB more to load first)
export { useComputed } from '@preact/signals';
export { useState } from 'preact/hooks';

export const StateContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const s = useContext(StateContext);
  if (!s) throw new Error('useApp outside <StateContext.Provider>');
  return s;
}

/** The DOM id of a field's input (errors link to it). */
export const fieldId = (path: string) => `f-${path.replace(/\./g, '-')}`;

/** Move focus to a field's input, opening its section if it is collapsed. */
export function focusField(path: string): boolean {
  const el = document.getElementById(fieldId(path));
  if (!el) return false;
  const details = el.closest('details');
  if (details && !details.open) details.open = true;
  el.focus();
  el.scrollIntoView({ block: 'center' });
  return true;
}
