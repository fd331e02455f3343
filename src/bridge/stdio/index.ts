/** The bridge's stdio framing: newline-delimited JSON lines in from the client and out to it. */
export { type LineError, lineError, oversizedLineAnswer, parseClientLine } from "./client-line.js";
export { type LineHandlers, LineSplitter } from "./line-splitter.js";
export { createLineWriter, type LineSink, type LineWriter } from "./line-writer.js";
export type { OversizedLineFields } from "./oversized-line.js";
