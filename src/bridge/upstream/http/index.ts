/** The HTTP plumbing both upstreams share: the fetch they speak through, its failures, SSE reading, size caps, custom headers. */
export { type CustomHeader, HeaderOptionError, parseHeaderOption } from "./custom-headers.js";
export type { ProofSigner } from "./dpop-credentials.js";
export { EventSizeCap } from "./event-size-cap.js";
export {
  type FetchLike,
  type HttpAnswer,
  type HttpAnswerBody,
  type HttpRequest,
  isAuthChallenge,
  readBounded,
  withRequestTimeout,
} from "./fetch-like.js";
export { isNetworkError, RemoteHttpError } from "./http-failure.js";
export { MAX_MESSAGE_BYTES, TOO_LARGE } from "./message-size.js";
export { nodeHttpFetch } from "./node-http-fetch.js";
export { type BridgeAuth, createRemoteFetch } from "./remote-fetch.js";
export { parseServerSentEvents, type ServerSentEvent, ServerSentEventParser } from "./sse.js";
