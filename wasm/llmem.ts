// The typed wrapper around the wasm core, shared by the CLI, the page, the Worker and the
// tests: this file is its public entry. The parts, by concern:
//   generated.ts  the core's lists, the config-v1 type, the struct offsets (scripts/gen-boundary.mjs)
//   types.ts      what Core takes and returns
//   encode.ts     config JSON <-> the input block (one double per key of core/fields.def)
//   core.ts       the calls into wasm/boundary.c
//   views.ts      the result structs read out of wasm memory
export { Core, type CoreBinary, type CoreFactory } from './core.js';
export { decodeValue, encodeValue, monthIndex, monthText } from './encode.js';
export * from './generated.js';
export type * from './types.js';
export { SEARCH_SWITCHES } from './types.js';
export { fillFormula, groupDigits, plainArrays } from './views.js';
