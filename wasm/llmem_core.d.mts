// Types of the Emscripten module factory (build/wasm/llmem_core.mjs).
declare const createLlmemCore: (options?: {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string) => string;
}) => Promise<unknown>;
export default createLlmemCore;
