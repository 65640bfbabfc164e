// Service worker registration (vite-plugin-pwa, precaches every asset) and
// the two notices it raises: ready to work offline, and a new version.
import { signal } from '@preact/signals';

export const offlineReady = signal(false);
export const updateReady = signal(false);
let update: ((reload?: boolean) => Promise<void>) | null = null;

export async function registerServiceWorker(): Promise<void> {
  if (!('serviceWorker' in navigator)) return;
  const { registerSW } = await import('virtual:pwa-register');
  update = registerSW({
    immediate: true,
    onOfflineReady() {
      offlineReady.value = true;
      setTimeout(() => (offlineReady.value = false), 6000);
    },
    onNeedRefresh() {
      updateReady.value = true;
    },
  });
}

export function applyUpdate(): void {
  void update?.(true);
}
