/** ChatClient's errors: one `ChatApiError` per HTTP status class, picked by `apiErrorFor`, plus transport and validation errors. */
import type * as z from "zod";
import {
  doesNotLookLikeChatService,
  markNotChatService,
  notChatServiceMessage,
} from "../internal/service-shape.js";
import { ERROR_STATUS, type ErrorBody, type PendingTask } from "../wire/index.js";

/**
 * Base of every error ChatClient throws, so `catch (e) { if (e instanceof ChatError) ... }` covers them all.
 * The tree: `ChatApiError` (the service answered non-2xx) and its status subclasses; `ChatConnectionError`
 * (no answer) with `ChatTimeoutError` under it; `ChatAbortError` (the caller's signal aborted the call);
 * `ResponseValidationError` (an answer that breaks the wire schema); `NoPendingTaskError` (a flow helper found
 * nothing of the kind to resolve); `MissingHostProjectError` (`confirmIntegrations` on a chat without a hosting
 * project).
 */
export class ChatError extends Error {
  override readonly name: string = "ChatError";
}

/** The code a body-less or non-JSON answer is given, so `code` is always set: the wire's first code of its status. */
function codeOfStatus(status: number): string {
  return Object.entries(ERROR_STATUS).find(([, sent]) => sent === status)?.[0] ?? `http_${status}`;
}

/** The service answered with a non-2xx status. `body` is the parsed error body, or the raw text when it was not one. */
export class ChatApiError extends ChatError {
  override readonly name: string = "ChatApiError";
  /** HTTP status of the answer. */
  readonly status: number;
  /** `error.code` of the body (e.g. `conflict`, `sso_required`), or one derived from the status when there is none. */
  readonly code: string;
  /** The parsed error body (`{ error: { code, message, ... } }`), the raw text of an odd body, or undefined when empty. */
  readonly body: ErrorBody | string | undefined;
  /** `x-request-id` of the answer, to quote when reporting a problem. */
  readonly requestId: string | undefined;
  readonly headers: Headers;

  constructor(status: number, body: ErrorBody | string | undefined, headers: Headers, message: string) {
    super(message);
    this.status = status;
    this.body = body;
    this.headers = headers;
    this.requestId = headers.get("x-request-id") ?? undefined;
    this.code = typeof body === "object" ? body.error.code : codeOfStatus(status);
  }
}

/** HTTP 400: the request broke the API's rules (a bad argument, an unknown field); fix the call, do not retry it. */
export class BadRequestError extends ChatApiError {
  override readonly name = "BadRequestError";
}
/** HTTP 401: no credential, or one the service no longer accepts; sign in again or pass another API key. */
export class AuthenticationError extends ChatApiError {
  override readonly name = "AuthenticationError";
}
/** HTTP 404: no such chat or message for this account (another account's chats are not found either). */
export class NotFoundError extends ChatApiError {
  override readonly name = "NotFoundError";
}
/** HTTP 409: the chat is not in the state the request assumed (e.g. the task was already resolved). */
export class ConflictError extends ChatApiError {
  override readonly name = "ConflictError";
}
/** HTTP 422: a well-formed request the service cannot carry out (e.g. a task that does not match the pause). */
export class UnprocessableEntityError extends ChatApiError {
  override readonly name = "UnprocessableEntityError";
}
/** HTTP 5xx: the service failed; a GET was already retried, a POST never is (it may have run). */
export class InternalServerError extends ChatApiError {
  override readonly name = "InternalServerError";
}

export class PermissionDeniedError extends ChatApiError {
  override readonly name = "PermissionDeniedError";
  /** Where to complete single sign-on, when `code` is `sso_required`. */
  get reauthUrl(): string | undefined {
    return typeof this.body === "object" && this.code === "sso_required"
      ? this.body.error.reauthUrl
      : undefined;
  }
}

export class RateLimitError extends ChatApiError {
  override readonly name = "RateLimitError";
  /** How long the service asked to wait (`Retry-After`), in milliseconds, when it said. */
  get retryAfterMs(): number | undefined {
    return parseRetryAfterMs(this.headers.get("retry-after"));
  }
}

/** `Retry-After` as milliseconds from now: delay-seconds (decimals accepted) or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** What the user can do next, by status (and code where it matters). */
function hintFor(status: number, code: string, body: ErrorBody | string | undefined): string | undefined {
  if (status === 401) return "Run `chat-cli login` or set CHAT_API_KEY.";
  if (status === 403 && code === "sso_required") {
    const url = typeof body === "object" ? body.error.reauthUrl : undefined;
    return url ? `Complete single sign-on at ${url}, then retry.` : "Complete single sign-on, then retry.";
  }
  if (status === 403) return "The credential's account or team may not do this.";
  if (status === 404)
    return "Check the id; chats of other accounts or teams are not visible with this credential.";
  if (code === "idempotency_key_reused")
    return "That Idempotency-Key was used for another request: send this one with a new key (the default).";
  if (code === "idempotency_key_in_progress")
    return "The first request with that Idempotency-Key still runs: retry after a moment for its answer.";
  if (code === "conflict")
    return "The chat has moved on: check what it waits for now (getPendingTask, `chat-cli pending`).";
  if (status === 429) return "Slow down and retry later.";
  if (status >= 500) return "The service failed; retry later.";
  return undefined;
}

/** The error for a non-2xx answer: the subclass for its status, with a message saying what failed and what to do. */
export function apiErrorFor(
  status: number,
  body: ErrorBody | string | undefined,
  headers: Headers,
  request: string,
  /** The base URL asked: named when the answer shows it is some other server, not the chat service. */
  serviceUrl?: string,
): ChatApiError {
  const ErrorClass = errorClassFor(status);
  // Only a body that is not the wire's error tells another server apart (an empty answer may come from anywhere).
  const answer = { status, contentType: headers.get("content-type"), structured: typeof body !== "string" };
  // The page itself is not kept in the message: a web site's HTML says nothing the user can act on.
  if (serviceUrl !== undefined && doesNotLookLikeChatService(answer))
    return markNotChatService(
      new ErrorClass(
        status,
        body,
        headers,
        `${request} failed: ${notChatServiceMessage(serviceUrl, answer)}`,
      ),
    );
  const code = typeof body === "object" ? body.error.code : codeOfStatus(status);
  const said =
    typeof body === "object"
      ? body.error.message.replace(/[.\s]+$/, "")
      : body === undefined
        ? "empty body"
        : `unexpected ${headers.get("content-type")?.split(";")[0] || "non-JSON"} body`;
  const requestId = headers.get("x-request-id");
  const hint = hintFor(status, code, body);
  const message =
    `${request} failed: ${status} ${code}: ${said}` +
    (hint ? `. ${hint}` : "") +
    (requestId ? ` (request id ${requestId})` : "");
  return new ErrorClass(status, body, headers, message);
}

function errorClassFor(status: number): typeof ChatApiError {
  const byStatus: Record<number, typeof ChatApiError> = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
  };
  return byStatus[status] ?? (status >= 500 ? InternalServerError : ChatApiError);
}

/** What a connection error knows about the call beside its message. */
export interface ConnectionErrorOptions extends ErrorOptions {
  /** True when the request may have reached the service (see `ChatConnectionError.requestSent`). */
  requestSent?: boolean;
  /** The `Idempotency-Key` the call was sent with (a create, send or resolve). */
  idempotencyKey?: string | undefined;
}

/** No answer from the service: refused, reset, DNS or TLS failure, a timeout. `cause` holds the underlying error. */
export class ChatConnectionError extends ChatError {
  override readonly name: string = "ChatConnectionError";
  /**
   * False when the request certainly never reached the service (refused, DNS failure, TLS failure, a proxy's
   * refusal): send it again freely. True when it may have been processed (a reset after sending, a timeout).
   */
  readonly requestSent: boolean;
  /**
   * The `Idempotency-Key` of a create, send or resolve: pass it back (`{ idempotencyKey }`) to get the first
   * attempt's answer without running the call twice. Undefined for reads.
   */
  readonly idempotencyKey: string | undefined;
  constructor(message: string, options?: ConnectionErrorOptions) {
    super(message, options);
    this.requestSent = options?.requestSent ?? false;
    this.idempotencyKey = options?.idempotencyKey;
  }
}

/** No complete answer within `timeoutMs` (per attempt). A kind of connection error. */
export class ChatTimeoutError extends ChatConnectionError {
  override readonly name = "ChatTimeoutError";
  constructor(
    message: string,
    readonly timeoutMs: number,
    options?: ConnectionErrorOptions,
  ) {
    super(message, options);
  }
}

/** The call's `signal` aborted it (as openai-node's `APIUserAbortError`); `cause` is the signal's reason. */
export class ChatAbortError extends ChatError {
  override readonly name = "ChatAbortError";
  /** The `Idempotency-Key` of an aborted create, send or resolve, which may have reached the service. */
  readonly idempotencyKey: string | undefined;
  constructor(message: string, options?: ErrorOptions & { idempotencyKey?: string | undefined }) {
    super(message, options);
    this.idempotencyKey = options?.idempotencyKey;
  }
}

/** An answer body larger than the client reads (32 MiB); nothing past the cap was read, the connection was dropped. */
export class ResponseTooLargeError extends ChatError {
  override readonly name = "ResponseTooLargeError";
  constructor(
    message: string,
    readonly maxBytes: number,
  ) {
    super(message);
  }
}

/** A 2xx answer that is not JSON or breaks the wire schema; the message names the first failing field paths. */
export class ResponseValidationError extends ChatError {
  override readonly name = "ResponseValidationError";
  constructor(
    message: string,
    /** The zod issues (empty when the body was not JSON at all). */
    readonly issues: z.core.$ZodIssue[],
    /** The parsed JSON body, or the raw text when it was not JSON. */
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** `data[0].createdAt` style path of a zod issue; `(root)` for the body itself. */
export function issuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out || "(root)";
}

/** A flow helper (confirmIntegrations, approvePermissions, ...) found the chat not waiting for that kind of task. */
export class NoPendingTaskError extends ChatError {
  override readonly name = "NoPendingTaskError";
  constructor(
    readonly chatId: string,
    readonly expected: PendingTask["kind"],
    /** What the chat does wait for instead, or null when it waits for nothing. */
    readonly pending: PendingTask | null,
  ) {
    const found = pending
      ? `it waits for ${pending.kind === "integration" ? "integrations" : "permissions"} instead`
      : "its latest assistant message is not blocked";
    super(
      `Chat ${chatId} has no pending ${expected === "integration" ? "integration request" : "permission request"}: ` +
        `${found}. Check with getPendingTask (\`chat-cli pending ${chatId}\`).`,
    );
  }
}

/**
 * `confirmIntegrations` on a chat without `hostProjectId`: the integration cannot be connected to
 * a hosting project, so the flow stops before anything is sent. Reject the request, or link a hosting project.
 */
export class MissingHostProjectError extends ChatError {
  override readonly name = "MissingHostProjectError";
  constructor(readonly chatId: string) {
    super(
      `Chat ${chatId} has no hostProjectId: its account or team has no hosting project linked, so the integration ` +
        `flow cannot proceed. Link a hosting project, or reject the request with rejectIntegrations ` +
        `(\`chat-cli resolve ${chatId} --reject\`).`,
    );
  }
}
