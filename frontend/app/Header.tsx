// Title and the share actions.
import { ShareBar } from './ShareBar.js';

export function Header() {
  return (
    <header class="header">
      <div class="brand">
        <svg class="logo" viewBox="0 0 32 32" aria-hidden="true">
          <rect x="3" y="18" width="6" height="11" rx="1" fill="#4e79a7" />
          <rect x="11" y="11" width="6" height="18" rx="1" fill="#59a14f" />
          <rect x="19" y="4" width="6" height="25" rx="1" fill="#e15759" />
        </svg>
        <h1>
          llmem <span class="tagline">LLM training memory per GPU</span>
        </h1>
      </div>
      <ShareBar />
    </header>
  );
}
