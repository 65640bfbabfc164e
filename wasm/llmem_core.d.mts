// Types of the Emscripten module factory (build/wasm/llmem_core.mjs).
declare const createLlmemCore: (options?: { wasmBinary?: ArrayBuffer | Uint8Array }) => Promise<unknown>;
export default createLlmemCore;
