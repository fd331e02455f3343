/** The HTTP exchange both upstreams speak through (one request, one answer: a subset of fetch's), the bounded ways to read and wait on it, and how it fails: an error status, no answer, or a call sent once whose outcome is unknown. */
import { BodyTooLargeError, readBoundedText } from "../../../internal/bounded-body.js";
import { classifyRequestFailure } from "../../../internal/request-failure.js";

/** One HTTP request of the transport; header names are lower case. */
export interface HttpRequest {
  method: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /**
   * Let the event loop turn twice before picking a connection. A server that closes a kept-alive connection
   * right after its last answer is read in two turns (the answer, then the close): a request picking the
   * connection in between would fail with no way to tell whether the server saw it. For requests that must
   * not run twice, so that such a failure always proves they were never sent.
   */
  mustNotRepeat?: boolean;
  /**
   * Share a bounded set of connections (POOLED_CONNECTIONS) with the other pooled requests, waiting for a free
   * one when all are busy: 1,000 calls in flight then cost a few dozen sockets, not 1,000. Only for requests
   * nothing in the pool waits on: never an event stream, nor an answer or notification the server may be
   * waiting for while it holds a pooled request's stream open.
   */
  pooled?: boolean;
  /** Connection and header time-outs for the request function to arm (`--connect-timeout`, `--headers-timeout`). */
  timeouts?: { connectMs?: number | undefined; headersMs?: number | undefined };
}

/** A body read once, as chunks; `cancel()` drops what was not read. */
export interface HttpAnswerBody extends AsyncIterable<Uint8Array> {
  cancel(): Promise<void>;
}

/** The part of fetch's Response the transport uses. */
export interface HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: {
    get(name: string): string | null;
    /** Every `Set-Cookie` line, one each (joined with commas they cannot be told apart). */
    getSetCookie?(): string[];
  };
  readonly body: HttpAnswerBody | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/** An answer from its status, headers and body: `ok`, `text()` and `json()` are read from them, as fetch's are. */
export function httpAnswer(
  status: number,
  headers: HttpAnswer["headers"],
  body: HttpAnswerBody | null,
): HttpAnswer {
  const text = async () => {
    const chunks: Uint8Array[] = [];
    if (body) for await (const chunk of body) chunks.push(chunk);
    return Buffer.concat(chunks).toString("utf8");
  };
  return {
    status,
    ok: status >= 200 && status < 300,
    headers,
    body,
    text,
    json: async () => JSON.parse(await text()) as unknown,
  };
}

/**
 * Sends one request and resolves with its answer: node:http in the bridge (node-http-exchange.ts), wrapped for
 * credentials, cookies and time-outs; not fetch, whose Request and Response it does not use.
 */
export type HttpExchange = (url: URL, request: HttpRequest) => Promise<HttpAnswer>;

/**
 * A body's text, at most `maxBytes`: past that, undefined (or, with `truncate`, the first `maxBytes`), and the
 * rest is never read. A body that breaks mid-way is what arrived (for bodies only shown, such as error pages), or,
 * with `whole`, the stream's error (for an answer that must be complete to mean anything).
 */
export async function readBounded(
  response: HttpAnswer,
  maxBytes: number,
  { truncate = false, whole = false }: { truncate?: boolean; whole?: boolean } = {},
): Promise<string | undefined> {
  try {
    return await readBoundedText(response, {
      maxBytes,
      what: "the answer",
      truncate,
      keepWhatArrived: !whole,
    });
  } catch (error) {
    if (error instanceof BodyTooLargeError) return undefined;
    throw error;
  }
}

/**
 * `exchange` with each exchange (the answer and its body) failing after `timeoutMs`, with an error naming `what`: for
 * probes, which must not wait forever on a server that accepts the connection and never answers. A sign-in between
 * two exchanges (see createAuthorizedExchange) is not counted.
 */
export function withRequestTimeout(exchange: HttpExchange, timeoutMs: number, what: string): HttpExchange {
  return async (url, request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    try {
      return await exchange(url, { ...request, signal });
    } catch (error) {
      if (timeout.aborted && !request.signal?.aborted)
        throw new Error(`${what}: no answer from ${url.origin} within ${timeoutMs / 1000} s`);
      throw error;
    }
  };
}

/** True when the response asks for (other) credentials: 401, or 403 with `insufficient_scope` (step-up). */
export function isAuthChallenge(response: HttpAnswer): boolean {
  if (response.status === 401) return true;
  return response.status === 403 && /insufficient_scope/.test(response.headers.get("www-authenticate") ?? "");
}

/** The server answered with an HTTP error status. */
export class RemoteHttpError extends Error {
  override readonly name = "RemoteHttpError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** No answer came: the server is down or unreachable, or its stream broke (the bridge's words in `message`). */
export class ServerUnreachable extends Error {
  override readonly name = "ServerUnreachable";
}

/** The request never got an HTTP answer: the server is down or unreachable. */
export function isNetworkError(error: unknown): boolean {
  return error instanceof ServerUnreachable || classifyRequestFailure(error) !== "not-a-request-failure";
}

/** The error text (without the `chat-mcp-bridge: ` prefix) for a call that was sent once and not sent again. */
export function outcomeUnknownMessage(origin: string, reason: string): string {
  return (
    `the connection to ${origin} broke after this call was sent (${reason}), so the server may or may not ` +
    "have run it. It was not sent again, so it cannot run twice: check whether it took effect before calling it again."
  );
}
