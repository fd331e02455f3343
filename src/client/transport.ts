/** The client's request/response plumbing: the runtime it runs on, its ky instance and retry policy, body parsing, paths, queries, headers and failures. */
import ky, { HTTPError, type KyInstance, NetworkError, type RetryOptions, TimeoutError } from "ky";
import type * as z from "zod";
import { BodyTooLargeError, readBoundedBytes } from "../internal/bounded-body.js";
import { describeNetworkFailure, isLastingNetworkFailure } from "../internal/network-errors.js";
import { classifyRequestFailure, requestNeverSent } from "../internal/request-failure.js";
import { type ErrorBody, ErrorBodySchema } from "../wire/index.js";
import {
  apiErrorFor,
  ChatAbortError,
  ChatConnectionError,
  ChatError,
  ChatTimeoutError,
  issuePath,
  parseRetryAfterMs,
  ResponseTooLargeError,
  ResponseValidationError,
} from "./errors.js";
import { type ClientLog, loggedFailure, loggedUrl } from "./logger.js";

export { envVar } from "../internal/env.js";
export { HTTPError, NetworkError, TimeoutError };

/** The `fetch` the client calls (through ky, with a `Request`); pass your own (a test double, an app's) as `fetch`. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Header values to add; `null` removes a default header (e.g. `{ "user-agent": null }`), undefined is skipped. */
export type HeadersOption = Record<string, string | null | undefined>;

/** Node's part of the client: the proxy-aware fetch and the `chat-cli login` credentials, loaded on first use. */
export interface NodeExtras {
  /** fetch through the proxy the option or `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` choose (nothing loads without one). */
  fetch(proxy: string | false | undefined): FetchLike;
  /** The access token `chat-cli login` saved for this base URL (refreshed when due), if any. */
  storedToken(baseUrl: string): Promise<string | undefined>;
}

/** True on Node itself: Bun and Deno also define `process.versions.node`, and their own fetch reads the proxy variables. */
export function onNode(): boolean {
  const runtime = globalThis as { process?: { release?: { name?: string } }; Bun?: unknown; Deno?: unknown };
  return runtime.process?.release?.name === "node" && runtime.Bun === undefined && runtime.Deno === undefined;
}

/** The version the bundles are built with (scripts/bundle.mjs); run from source, "dev". */
declare const CHAT_MCP_BRIDGE_VERSION: string | undefined;
export const SDK_VERSION = typeof CHAT_MCP_BRIDGE_VERSION === "string" ? CHAT_MCP_BRIDGE_VERSION : "dev";

let extras: Promise<NodeExtras | undefined> | undefined;

/**
 * Node's extras, imported on first use and on Node only. The web build (scripts/bundle.mjs) replaces the module with
 * one that has none, so a browser bundler never meets a Node built-in.
 */
export function nodeExtras(): Promise<NodeExtras | undefined> {
  extras ??= onNode()
    ? import("./node-extras.js").then((module) => module.nodeExtras)
    : Promise.resolve(undefined);
  return extras;
}

/** The error fetch itself threw: ky 2 wraps a network failure in `NetworkError`, the original as its cause. */
export function fetchFailureOf(error: unknown): unknown {
  return error instanceof NetworkError ? error.cause : error;
}

/** Answers with no body by definition; a Response built with one throws. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The most bytes of one answer the client reads: a page of 100 long messages fits many times over. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** The runtime's fetch (Node: through the proxy the option or the environment chooses), found on first use. */
function defaultFetch(proxy: string | false | undefined): FetchLike {
  let chosen: Promise<FetchLike> | undefined;
  return async (input, init) => {
    chosen ??= nodeExtras().then(
      (extras) => extras?.fetch(proxy) ?? ((input, init) => globalThis.fetch(input, init)),
    );
    return (await chosen)(input, init);
  };
}

/**
 * The ky instance of a client. Its fetch reads each answer's whole body within the attempt, so ky's per-attempt
 * timeout covers the body too, and logs each attempt at debug.
 */
export function createKy(
  fetch: FetchLike | undefined,
  proxy: string | false | undefined,
  log: ClientLog,
): KyInstance {
  const send: FetchLike = fetch ?? defaultFetch(proxy);
  return ky.create({
    fetch: async (input, init) => {
      const request = input instanceof Request ? input : undefined;
      const method = request?.method ?? init?.method ?? "GET";
      const url = loggedUrl(request?.url ?? String(input));
      const retry = request?.headers.get("x-retry-count") ?? "0";
      const key = request?.headers.get("idempotency-key");
      const started = performance.now();
      if (log.enabled("debug"))
        log.debug(`-> ${method} ${url} (retry ${retry}${key ? `, idempotency key ${key}` : ""})`);
      try {
        const answer = await send(input, init);
        const body = NULL_BODY_STATUSES.has(answer.status)
          ? null
          : await readBoundedBytes(answer, {
              maxBytes: MAX_RESPONSE_BYTES,
              what: `The answer to ${method} ${new URL(request?.url ?? String(input)).pathname}`,
            });
        if (log.enabled("debug"))
          log.debug(
            `<- ${method} ${url} ${answer.status} in ${Math.round(performance.now() - started)} ms ` +
              `(request id ${answer.headers.get("x-request-id") ?? "none"}, retry ${retry})`,
          );
        return new Response(body, answer);
      } catch (error) {
        if (log.enabled("debug"))
          log.debug(
            `<- ${method} ${url} failed after ${Math.round(performance.now() - started)} ms: ` +
              `${loggedFailure(error)} (retry ${retry})`,
          );
        throw error;
      }
    },
    hooks: {
      beforeRetry: [
        ({ request, retryCount }) => {
          request.headers.set("x-retry-count", String(retryCount));
        },
      ],
    },
  });
}

/** Parses a 2xx body with its wire schema (none: JSON as is); a body that is not JSON or breaks the schema names what is wrong. */
export function parseBody<S extends z.ZodType>(
  schema: S | undefined,
  text: string,
  label: string,
): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ResponseValidationError(
      `${label} answered with a body that is not JSON${text ? "" : " (empty)"}. Is the base URL a chat service?`,
      [],
      text,
    );
  }
  if (!schema) return json as z.output<S>;
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const shown = issues
    .slice(0, 3)
    .map((issue) => `${issuePath(issue.path)}: ${issue.message}`)
    .join("; ");
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  throw new ResponseValidationError(
    `${label} answered with a body that breaks the wire format: ${shown}${more}. ` +
      "The service and this client disagree; update chat-mcp-bridge or report it.",
    issues,
    json,
  );
}

/** An id as one path segment: encoded, and never empty (an empty id would address another endpoint). */
export function pathId(name: string, value: string): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(value);
}

export function queryString(params: Record<string, string | number | undefined>): string {
  let out = "";
  for (const key in params) {
    const value = params[key];
    if (value === undefined || value === "") continue;
    out += `${out ? "&" : "?"}${key}=${encodeURIComponent(String(value))}`;
  }
  return out;
}

/** ky 2's `HTTPError.data` as the wire's error body, the raw text when it is not one (undefined when empty). */
function errorBodyOf(data: unknown): ErrorBody | string | undefined {
  let json = data;
  if (typeof data === "string" || data === undefined) {
    if (!data?.trim()) return undefined;
    try {
      json = JSON.parse(data);
    } catch {
      // Not JSON (an HTML error page from a proxy, say): keep the text.
      return data;
    }
  }
  const parsed = ErrorBodySchema.safeParse(json);
  return parsed.success ? parsed.data : typeof data === "string" ? data : JSON.stringify(data);
}

/** Lower-cased merge so `Authorization` and `authorization` are one header; null removes, undefined is skipped. */
export function mergeHeaders(
  base: Record<string, string>,
  extra: HeadersOption | undefined,
): Record<string, string> {
  if (!extra) return base;
  const merged = { ...base };
  for (const [name, value] of Object.entries(extra)) {
    const key = name.toLowerCase();
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/** What `failureOf` needs to know of the call that failed. */
export interface FailedCall {
  /** `METHOD /path`, without the query. */
  label: string;
  baseUrl: string;
  /** The per-attempt timeout the call had. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** The `Idempotency-Key` the call was sent with (a POST), named so the user can send it again safely. */
  idempotencyKey?: string | undefined;
}

/** The typed error for a failed call: the service's answer, the caller's abort, a timeout, or no connection. */
export async function failureOf(
  error: unknown,
  { label, baseUrl, timeoutMs, signal, idempotencyKey }: FailedCall,
): Promise<unknown> {
  if (error instanceof HTTPError) {
    const { response } = error;
    // ky 2 has read the body already (`data`: parsed JSON, or the text).
    return apiErrorFor(response.status, errorBodyOf(error.data), response.headers, label, baseUrl);
  }
  const isPost = label.startsWith("POST");
  const again = idempotencyKey
    ? `Send it again with the same key ({ idempotencyKey: ${JSON.stringify(idempotencyKey)} }) to get its ` +
      "answer without running it twice"
    : undefined;
  if (signal?.aborted) {
    const next = isPost ? ` It may have reached the service. ${again ?? "Check the chat's messages"}.` : "";
    const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "");
    return new ChatAbortError(`${label} was aborted by its signal${why ? ` (${why})` : ""}.${next}`, {
      cause: signal.reason,
      idempotencyKey,
    });
  }
  if (error instanceof TimeoutError) {
    const next = isPost
      ? `It may have reached the service and may still complete. ${again ?? "Check the chat's messages before sending it again"}, ` +
        "or pass a larger timeoutMs to wait longer."
      : "Raise timeoutMs, or check that the service is reachable.";
    return new ChatTimeoutError(
      `${label} timed out after ${timeoutMs} ms with no complete answer from ${baseUrl}. ${next}`,
      timeoutMs,
      { requestSent: true, idempotencyKey },
    );
  }
  error = fetchFailureOf(error);
  if (error instanceof BodyTooLargeError)
    return new ResponseTooLargeError(
      `${error.message}: the service or something in front of it sent more than this client reads. ` +
        "Ask for smaller pages (limit), or report it.",
      error.maxBytes,
    );
  if (error instanceof ChatError || !(error instanceof Error)) return error;
  const network = describeNetworkFailure(error, baseUrl);
  if (network)
    return new ChatConnectionError(`${label} failed: ${network}`, { cause: error, idempotencyKey });
  if (classifyRequestFailure(error) === "maybe-sent") {
    const next = again
      ? `${again}.`
      : isPost
        ? "Check the chat's messages before sending it again."
        : "Retry it.";
    return new ChatConnectionError(
      `${label} to ${baseUrl}: the connection was lost after the request was sent; it may have been processed. ${next}`,
      { cause: error, requestSent: true, idempotencyKey },
    );
  }
  const reason = connectFailureOf(error);
  return new ChatConnectionError(
    `${label} could not reach ${baseUrl}${reason ? ` (${reason})` : ""}; nothing was sent. ` +
      "Check that the service runs there (`chat-cli serve` starts a local one) or set CHAT_API_URL.",
    { cause: error, idempotencyKey },
  );
}

/** The code of a failure to connect (ECONNREFUSED, ENOTFOUND, ...), else the message of its cause or itself. */
function connectFailureOf(error: Error): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const code = cause?.code ?? (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  return typeof cause?.message === "string" ? cause.message : error.message;
}

/** One call as the transport sees it. */
export interface TransportCall {
  method: "GET" | "POST";
  path: string;
  /** `METHOD /path`, without the query. */
  label: string;
  payload: string | undefined;
  idempotencyKey: string | undefined;
}

/** A new key per call (a UUID, as openai-node's `stainless-node-retry-<uuid>`). */
export function newIdempotencyKey(): string {
  return `cmb-${globalThis.crypto.randomUUID()}`;
}

// ---- retries: GETs and keyed POSTs on failures, other POSTs only when surely not run ----

export const DEFAULT_MAX_RETRIES = 2;
export const BACKOFF_INITIAL_MS = 500;
export const BACKOFF_MAX_MS = 8_000;
/** The longest `Retry-After` honoured; longer asks wait this long, then the call tries again. */
export const RETRY_AFTER_MAX_MS = 60_000;

export type HttpMethod = "GET" | "POST";

/**
 * Whether an answer with this status is worth another attempt. A GET is safe to repeat, and so is a POST with an
 * `Idempotency-Key` (the service answers a repeat with the first answer): those retry on 408, 429 and 5xx, and a
 * keyed POST also on 409 `idempotency_key_in_progress` (its first attempt still runs). A POST without a key
 * retries only on 429: the service refused it before running it; a 5xx or 408 may have come after it ran.
 */
export function retriesStatus(method: HttpMethod, status: number, keyed = false, code?: string): boolean {
  if (status === 429) return true;
  if (method === "POST" && !keyed) return false;
  if (status === 409) return keyed && code === "idempotency_key_in_progress";
  return status === 408 || status >= 500;
}

/**
 * Whether a failed attempt with no answer is worth another: a GET or a keyed POST, a POST without a key only when it
 * certainly never reached the service; neither when the failure lasts until the user acts (a proxy's refusal).
 */
export function retriesFailure(method: HttpMethod, error: unknown, keyed = false): boolean {
  if (isLastingNetworkFailure(error)) return false;
  return method === "GET" || keyed || requestNeverSent(error);
}

/**
 * How long to wait before retry number `retry` (1-based): the service's `Retry-After` when it sent one
 * (capped), else exponential backoff with full jitter, so many clients do not retry in step.
 */
export function retryDelayMs(
  retry: number,
  retryAfter: string | null,
  random: () => number = Math.random,
): number {
  const asked = parseRetryAfterMs(retryAfter);
  if (asked !== undefined) return Math.min(asked, RETRY_AFTER_MAX_MS);
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** (retry - 1));
  return random() * ceiling;
}

/** What `retryPolicy` needs to know of one call. */
export interface RetriedCall {
  method: HttpMethod;
  /** `METHOD /path`, for the log. */
  label: string;
  /** A GET, or a POST that carries its `Idempotency-Key`: safe to send again. */
  keyed: boolean;
  idempotencyKey: string | undefined;
  limit: number;
  signal: AbortSignal | undefined;
  log: ClientLog;
  /** The test seam: waits here instead of ky's timer. */
  sleep: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

/** ky's retry options for one call: which failures are retried, how long to wait (retryDelayMs), each retry logged at info. */
export function retryPolicy(call: RetriedCall): RetryOptions {
  const { method, keyed, signal } = call;
  let nextDelayMs = 0;
  return {
    limit: call.limit,
    methods: ["get", "post"],
    delay: () => nextDelayMs,
    shouldRetry: async ({ error, retryCount }) => {
      if (signal?.aborted) return false;
      const answer = error instanceof HTTPError ? error.response : undefined;
      const code = error instanceof HTTPError ? errorCodeOf(error.data) : undefined;
      const timedOut = error instanceof TimeoutError;
      const retries = answer
        ? retriesStatus(method, answer.status, keyed, code)
        : retriesFailure(method, timedOut ? undefined : fetchFailureOf(error), keyed);
      if (!retries) return false;
      nextDelayMs = retryDelayMs(retryCount, answer?.headers.get("retry-after") ?? null);
      const why = answer
        ? `${answer.status}${code ? ` ${code}` : ""}`
        : timedOut
          ? "a timeout"
          : "a lost connection";
      call.log.info(
        `${call.label}: retry ${retryCount} of ${call.limit} in ${Math.round(nextDelayMs)} ms after ${why}` +
          (call.idempotencyKey ? ` (same idempotency key ${call.idempotencyKey})` : ""),
      );
      if (call.sleep) {
        await call.sleep(nextDelayMs, signal);
        nextDelayMs = 0;
      }
      return true;
    },
  };
}

/** The `error.code` of an error body as ky 2 parsed it (`HTTPError.data`), when it has one. */
function errorCodeOf(data: unknown): string | undefined {
  const code = (data as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === "string" ? code : undefined;
}
