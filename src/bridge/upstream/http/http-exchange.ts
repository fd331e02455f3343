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
   * Let the event loop turn twice before picking a connection: a server's close right after its last answer is
   * read a turn later, and a request written in between fails with no way to tell whether the server saw it.
   */
  mustNotRepeat?: boolean;
  /**
   * Share POOLED_CONNECTIONS with the other pooled requests (1,000 calls cost a few dozen sockets). Only for what
   * nothing in the pool waits on: never an event stream, nor an answer the server awaits while holding a stream.
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
}

/** An answer from its status, headers and body: `ok` and `text()` are read from them, as fetch's are. */
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
  };
}

/** One request, one answer: node:http in the bridge (node-http-exchange.ts), wrapped for credentials, cookies, time-outs. */
export type HttpExchange = (url: URL, request: HttpRequest) => Promise<HttpAnswer>;

/**
 * A body's text, at most `maxBytes` (past that undefined, or with `truncate` the first `maxBytes`). A body that
 * breaks mid-way is what arrived, or with `whole` (an answer that must be complete) the stream's error.
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

/** Each exchange (answer and body) failing after `timeoutMs`, for probes; a sign-in between two is not counted. */
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
