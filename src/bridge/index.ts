/** The stdio <-> streamable-HTTP relay: its pieces for the bin, the benchmarks and tests. */

export { runAccountCommand } from "./command/account-commands.js";
export {
  type BridgeCommand,
  type BridgeOptions,
  parseBridgeArgs,
  parseMcpUrl,
  UsageError,
} from "./command/arguments.js";
export { isJsonRpcMessage } from "./messages/jsonrpc.js";
export { runRelay } from "./relay/run.js";
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
