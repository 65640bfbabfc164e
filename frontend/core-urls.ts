// The core as the page and its Worker load it: the Emscripten glue module and
// the binary, each by URL (the build emits both as hashed assets).
import { Core, type CoreFactory } from '../wasm/llmem.js';

export interface CoreUrls {
  module: string;
  wasm: string;
}

export async function loadCoreFrom(urls: CoreUrls): Promise<Core> {
  const m = (await import(/* @vite-ignore */ urls.module)) as { default: CoreFactory };
  return Core.load(m.default, { wasmUrl: urls.wasm });
}
