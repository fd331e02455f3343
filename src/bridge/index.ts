/** The stdio <-> streamable-HTTP relay: its pieces for the bin, the benchmarks and tests. */

export { runAccountCommand } from "./account-commands.js";
export { type BridgeCommand, type BridgeOptions, parseBridgeArgs, parseMcpUrl, UsageError } from "./cli.js";
export { isJsonRpcMessage } from "./jsonrpc.js";
export { runRelay } from "./run.js";
export {
  createLineWriter,
  LineSplitter,
  type LineWriter,
  parseClientLine,
} from "./stdio/index.js";
export {
  type BridgeAuth,
  type CustomHeader,
  createAuthorizedExchange,
  HeaderOptionError,
  isAuthChallenge,
  parseHeaderOption,
  parseServerSentEvents,
  RemoteHttpError,
  type ServerSentEvent,
  ServerSentEventParser,
} from "./upstream/http/index.js";
export {
  BRIDGE_ERROR_CODE,
  LegacySessionRelay,
  type LegacySessionRelayOptions,
  StreamableHttpTransport,
} from "./upstream/legacy/index.js";
