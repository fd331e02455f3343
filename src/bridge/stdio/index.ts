/** The bridge's stdio framing: newline-delimited JSON lines in from the client and out to it. */
export { type LineError, lineError, parseClientLine } from "./client-line.js";
export { type LineHandlers, LineSplitter, MAX_LINE_BYTES } from "./line-splitter.js";
export { createLineWriter, type LineSink, type LineWriter } from "./line-writer.js";
