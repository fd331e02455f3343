/** The stdio <-> streamable-HTTP relay: its pieces for the bin, the benchmarks and tests. */
export { type BridgeCommand, type BridgeOptions, parseBridgeArgs, parseMcpUrl, UsageError } from "./cli.js";
export { type CustomHeader, HeaderOptionError, parseHeaderOption } from "./headers.js";
export {
  parseServerSentEvents,
  RemoteHttpError,
  type ServerSentEvent,
  ServerSentEventParser,
  StreamableHttpTransport,
} from "./http-transport.js";
export { isJsonRpcMessage } from "./jsonrpc.js";
export { createLineWriter, LineSplitter, type LineWriter, MAX_LINE_BYTES } from "./line-reader.js";
export { BRIDGE_ERROR_CODE, Relay, type RelayOptions } from "./relay.js";
export { type BridgeAuth, createRemoteFetch, isAuthChallenge } from "./remote-fetch.js";
export { parseClientLine, runAccountCommand, runRelay } from "./run.js";
