/** The HTTP plumbing both upstreams share: the HTTP exchange they speak through, its failures, SSE reading, size caps, custom headers. */

export { type CustomHeader, HeaderOptionError, parseHeaderOption } from "../../options/custom-headers.js";
export { type BridgeAuth, createAuthorizedExchange } from "./authorized-exchange.js";
export type { ProofSigner } from "./dpop-credentials.js";
export { EventSizeCap } from "./event-size-cap.js";
export { fetchExchange } from "./fetch-exchange.js";
export {
  type HttpAnswer,
  type HttpAnswerBody,
  type HttpExchange,
  type HttpRequest,
  isAuthChallenge,
  readBounded,
  withRequestTimeout,
} from "./http-exchange.js";
export { isNetworkError, RemoteHttpError, ServerUnreachable } from "./http-failure.js";
export { nodeHttpExchange } from "./node-http-exchange.js";
export { parseServerSentEvents, type ServerSentEvent, ServerSentEventParser } from "./sse.js";
