// The typed wrapper around the wasm core (the boundary), shared by the CLI, the page, the Worker and the
// tests: this file is its public entry. core.ts makes the calls into wasm/boundary.c, views.ts reads the
// result structs out of wasm memory, generated.ts is written from the core (scripts/gen-boundary.mjs).
// What they take and return lives in the shared layer (frontend/config/): json.ts (config JSON),
// encode.ts (config JSON <-> the input block), results.ts, search.ts (options, a found layout's patch).
export type { Config, ConfigError, Json } from '../frontend/config/json.js';
export type * from '../frontend/config/results.js';
export type { SearchOptions, SuggestOptions } from '../frontend/config/search.js';
export { Core, type CoreBinary } from './core.js';
export * from './generated.js';
