/** The typed SDK of the /v2 API: ChatClient, its pages and its errors. */
export { APIPromise, type APIResponse, type WithRequestId } from "./api-promise.js";
export {
  ChatClient,
  type ChatClientOptions,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
  type FetchLike,
  type HeadersOption,
  type RequestOptions,
} from "./client.js";
export {
  AuthenticationError,
  BadRequestError,
  ChatAbortError,
  ChatApiError,
  ChatConnectionError,
  ChatError,
  ChatTimeoutError,
  ConflictError,
  InternalServerError,
  MissingHostProjectError,
  NoPendingTaskError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ResponseTooLargeError,
  ResponseValidationError,
  UnprocessableEntityError,
} from "./errors.js";
export { DEFAULT_LOG_LEVEL, type Logger, type LogLevel } from "./logger.js";
export { Page, type PageFetcher, PagePromise } from "./pagination.js";
export { BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, DEFAULT_MAX_RETRIES, RETRY_AFTER_MAX_MS } from "./transport.js";
