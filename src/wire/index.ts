/** The /v2 wire format: schemas, types and pure readers of pending tasks. Imports nothing else of ours. */
export * from "./pending.js";
export * from "./schemas.js";
export * from "./tools.js";
