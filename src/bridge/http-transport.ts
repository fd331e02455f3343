/**
 * The client side of MCP's streamable HTTP transport, as small as the relay needs: POST with JSON or SSE
 * answers, the GET event stream, resumption with Last-Event-ID honouring `retry`, session and protocol-version
 * headers, DELETE on the way out. It speaks through a FetchLike (node:http in the bridge, not fetch), and
 * uses no Headers or Response, so the bridge never loads Node's fetch implementation and starts fast.
 */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { EventSizeCap } from "./event-size-cap.js";
import { isJsonRpcMessage, isRequest, isResponse } from "./jsonrpc.js";
import { MAX_LINE_BYTES } from "./line-reader.js";
import { type FetchLike, type HttpAnswer, readBounded } from "./remote-fetch.js";
import { ServerSentEventParser } from "./sse.js";

export { parseServerSentEvents, type ServerSentEvent, ServerSentEventParser } from "./sse.js";

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

interface StreamState {
  /** Id of the last event seen, to resume from. */
  lastEventId?: string;
  /** Requests whose answer is still expected on this stream. */
  awaiting: Set<RequestId>;
  /** The GET stream for server-initiated messages (always reconnects), not a request's answer stream. */
  standalone: boolean;
  /** Streams in a row that ended without an event: each waits longer before resuming, and there is a bound. */
  emptyStreams?: number;
  /** The request whose POST opened this stream: what the server sends on it relates to that request (2025-11-25). */
  relatedRequestId?: RequestId;
}

/** The largest message relayed from the server: the same cap as a line from the client. */
export const MAX_MESSAGE_BYTES = MAX_LINE_BYTES;
const TOO_LARGE = `larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB (${MAX_MESSAGE_BYTES} bytes), the most the bridge relays`;

const DEFAULT_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
const MAX_GET_RECONNECTS = 8;
/** The most of an error body read (300 characters of it are shown): a 1 GiB error page costs nothing. */
const MAX_ERROR_BODY_BYTES = 4096;
/** Streams in a row that closed without a single event before the bridge gives up on resuming (whatever `retry` says). */
const MAX_EMPTY_STREAMS = 4;
/** The first wait after a stream closed without an event; it doubles with each such stream in a row. */
const EMPTY_STREAM_BACKOFF_MS = 250;
/** A stream open this long is a healthy one that idled out (a server's idle timeout), not one that closed at once. */
const HEALTHY_STREAM_MS = MAX_RETRY_MS;

export class StreamableHttpTransport {
  /**
   * `raw`: the message's JSON text as received, when it came alone (not in a batch). `relatedRequestId`: the
   * request whose POST stream carried the message (absent on the GET stream and for JSON answers).
   */
  onmessage?: (message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId) => void;
  onerror?: (error: Error) => void;
  /** A request's answer can no longer arrive (its stream broke with nothing to resume from). */
  onrequestlost?: (id: RequestId, reason: string) => void;

  readonly #url: URL;
  readonly #fetch: FetchLike;
  /**
   * One controller per request still running (its body included), aborted on close. A single long-lived signal
   * would collect one undici listener per request until GC: a warning past 1,500 in flight, and memory growth.
   */
  readonly #inFlight = new Set<AbortController>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  /** Server-chosen reconnection delay (SSE `retry` field). */
  #retryMs: number | undefined;

  constructor(url: URL, fetch: FetchLike) {
    this.#url = url;
    this.#fetch = fetch;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /**
   * POSTs one message. Resolves once the server accepted it; answers arrive through `onmessage`. `mustNotRepeat`
   * marks a message that must not run twice (see `HttpRequest.settleFirst`).
   */
  async send(message: JSONRPCMessage, options?: { mustNotRepeat?: boolean }): Promise<void> {
    const controller = this.#track();
    let streaming = false;
    try {
      const response = await this.#fetch(this.#url, {
        method: "POST",
        headers: this.#headers({
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        }),
        body: JSON.stringify(message),
        signal: controller.signal,
        ...(options?.mustNotRepeat ? { settleFirst: true } : {}),
      });
      const sessionId = response.headers.get("mcp-session-id");
      if (sessionId) this.#sessionId = sessionId;
      if (!response.ok) {
        const text = (await readBounded(response, MAX_ERROR_BODY_BYTES, true)) ?? "";
        throw new RemoteHttpError(
          response.status,
          `the server answered HTTP ${response.status}${text ? `: ${text.slice(0, 300)}` : ""}`,
        );
      }
      if (response.status === 202 || !isRequest(message)) {
        await response.body?.cancel().catch(() => undefined);
        if (message && "method" in message && message.method === "notifications/initialized")
          this.#openEventStream();
        return;
      }
      const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
      if (type === "text/event-stream") {
        streaming = true;
        void this.#readEvents(response, {
          awaiting: new Set([message.id]),
          standalone: false,
          relatedRequestId: message.id,
        }).finally(() => this.#untrack(controller));
      } else if (type === "application/json") {
        const text = await this.#readCapped(response, message.id);
        if (text === undefined) return;
        const body: unknown = JSON.parse(text);
        if (Array.isArray(body)) for (const item of body) this.#deliver(item, undefined);
        else this.#deliver(body, undefined, text);
      } else {
        await response.body?.cancel().catch(() => undefined);
        throw new RemoteHttpError(
          response.status,
          `the server answered with an unexpected content type: ${type ?? "none"}`,
        );
      }
    } finally {
      if (!streaming) this.#untrack(controller);
    }
  }

  /** Ends the session on the server (DELETE); a 405 means the server does not allow it, which is fine. */
  async terminateSession(): Promise<void> {
    if (!this.#sessionId) return;
    const controller = this.#track();
    try {
      const response = await this.#fetch(this.#url, {
        method: "DELETE",
        headers: this.#headers({}),
        signal: controller.signal,
      });
      await response.body?.cancel().catch(() => undefined);
      if (!response.ok && response.status !== 405) {
        throw new RemoteHttpError(response.status, `ending the session failed with HTTP ${response.status}`);
      }
      this.#sessionId = undefined;
    } finally {
      this.#untrack(controller);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const controller of this.#inFlight) controller.abort();
    this.#inFlight.clear();
  }

  /** A controller for one request; after close, one that is already aborted so the request fails at once. */
  #track(): AbortController {
    const controller = new AbortController();
    if (this.#closed) controller.abort();
    else this.#inFlight.add(controller);
    return controller;
  }

  #untrack(controller: AbortController): void {
    this.#inFlight.delete(controller);
  }

  /** Plain header records: the remote fetch copies them into its own `Headers` anyway. */
  #headers(extra: Record<string, string>): Record<string, string> {
    if (this.#sessionId) extra["mcp-session-id"] = this.#sessionId;
    if (this.#protocolVersion) extra["mcp-protocol-version"] = this.#protocolVersion;
    return extra;
  }

  #deliver(value: unknown, stream: StreamState | undefined, raw?: string): void {
    if (!isJsonRpcMessage(value)) {
      this.onerror?.(new Error("the server sent a message that is not JSON-RPC; ignored"));
      return;
    }
    if (stream && isResponse(value)) stream.awaiting.delete(value.id);
    this.onmessage?.(value, raw, stream?.relatedRequestId);
  }

  /**
   * A JSON answer's text, read up to MAX_MESSAGE_BYTES; past that (or when Content-Length says so) the body is
   * dropped unread and the request answered with an error naming the size, so a huge answer costs no memory.
   */
  async #readCapped(response: HttpAnswer, id: RequestId): Promise<string | undefined> {
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (!(declared > MAX_MESSAGE_BYTES)) {
      for await (const chunk of response.body ?? []) {
        total += chunk.length;
        if (total > MAX_MESSAGE_BYTES) break;
        chunks.push(chunk);
      }
      if (total <= MAX_MESSAGE_BYTES) return Buffer.concat(chunks, total).toString("utf8");
    }
    await response.body?.cancel().catch(() => undefined);
    const size = declared > MAX_MESSAGE_BYTES ? `${declared} bytes, ` : "";
    this.onrequestlost?.(id, `the server's answer (${size}${TOO_LARGE}) was not relayed`);
    return undefined;
  }

  /** The standalone GET stream for server-initiated messages (optional for servers: 405 means none). */
  #openEventStream(state: StreamState = { awaiting: new Set(), standalone: true }, attempt = 0): void {
    const controller = this.#track();
    void (async () => {
      const headers = this.#headers({ accept: "text/event-stream" });
      if (state.lastEventId) headers["last-event-id"] = state.lastEventId;
      const response = await this.#fetch(this.#url, { method: "GET", headers, signal: controller.signal });
      if (response.status === 405) {
        await response.body?.cancel().catch(() => undefined);
        return;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new RemoteHttpError(
          response.status,
          `opening the event stream failed with HTTP ${response.status}`,
        );
      }
      await this.#readEvents(response, state);
    })()
      .catch((error: unknown) => {
        if (this.#closed) return;
        this.onerror?.(error as Error);
        const gone = error instanceof RemoteHttpError && error.status < 500;
        if (gone) {
          this.#loseAll(state, `the event stream could not be resumed: ${(error as Error).message}`);
        } else if (attempt < MAX_GET_RECONNECTS) {
          this.#later(() => this.#openEventStream(state, attempt + 1), this.#delay(attempt));
        } else {
          this.#loseAll(state, "the event stream could not be resumed");
        }
      })
      .finally(() => this.#untrack(controller));
  }

  /**
   * Reads one SSE response. When it ends or breaks before every awaited answer came, it resumes with a GET
   * and Last-Event-ID after the server's `retry` delay, if the server gave the events ids (else the answers
   * are lost, and said so). The standalone stream always reconnects.
   */
  async #readEvents(response: HttpAnswer, state: StreamState): Promise<void> {
    const openedAt = performance.now();
    let events = 0;
    const parser = new ServerSentEventParser({
      onRetry: (milliseconds) => {
        this.#retryMs = milliseconds;
      },
      onEvent: (event) => {
        events++;
        if (event.id !== undefined) state.lastEventId = event.id;
        if (!event.data || (event.event && event.event !== "message")) return;
        let value: unknown;
        try {
          value = JSON.parse(event.data);
        } catch {
          this.onerror?.(new Error("the server sent an event that is not JSON; ignored"));
          return;
        }
        this.#deliver(value, state, event.data);
      },
    });
    // An event over the cap is dropped as it arrives. On a request's stream its answer is lost (said at once,
    // and the stream closed); the standalone stream skips the event and goes on (a reconnect would replay it).
    let abandoned = false;
    const cap = new EventSizeCap(MAX_MESSAGE_BYTES, {
      feed: (bytes) => parser.push(bytes),
      discard: () => {
        parser.discardEvent();
        if (state.standalone) return;
        abandoned = true;
        this.#loseAll(state, `the server's answer (${TOO_LARGE}) was not relayed`);
      },
      dropped: (bytes) =>
        this.onerror?.(new Error(`the server sent an event of ${bytes} bytes (${TOO_LARGE}); dropped`)),
    });
    let failure: unknown;
    try {
      for await (const chunk of response.body!) {
        cap.push(chunk);
        if (abandoned) break;
      }
    } catch (error) {
      failure = error;
    }
    if (abandoned) await response.body?.cancel().catch(() => undefined);
    if (this.#closed) return;
    if (failure)
      this.onerror?.(new Error(`the event stream broke: ${(failure as Error).message ?? failure}`));
    // A stream that closes at once, again and again (`retry: 0` with nothing to send): back off, then give up.
    const healthy = events > 0 || performance.now() - openedAt >= HEALTHY_STREAM_MS;
    const empty = healthy ? 0 : (state.emptyStreams ?? 0) + 1;
    state.emptyStreams = empty;
    // A request's answer stream gives up (its answer is not coming); the standalone stream only backs off.
    if (empty > MAX_EMPTY_STREAMS && !state.standalone) {
      this.onerror?.(
        new Error(`the event stream closed without an event ${empty} times in a row; not resumed`),
      );
      this.#loseAll(state, `the server closed the event stream without an event ${empty} times in a row`);
      return;
    }
    const resume = () =>
      this.#later(() => this.#openEventStream(state, 0), Math.max(this.#delay(0), emptyStreamDelay(empty)));
    if (state.standalone) {
      resume();
    } else if (state.awaiting.size > 0) {
      if (state.lastEventId) resume();
      else this.#loseAll(state, "the server closed the response stream before answering");
    }
  }

  #loseAll(state: StreamState, reason: string): void {
    for (const id of state.awaiting) this.onrequestlost?.(id, reason);
    state.awaiting.clear();
  }

  #delay(attempt: number): number {
    return this.#retryMs ?? Math.min(DEFAULT_RETRY_MS * 2 ** attempt, MAX_RETRY_MS);
  }

  #later(task: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#closed) task();
    }, ms);
    this.#timers.add(timer);
  }
}

/** The least wait before resuming after `empty` streams in a row without an event: none after a stream with one. */
function emptyStreamDelay(empty: number): number {
  return empty === 0 ? 0 : Math.min(EMPTY_STREAM_BACKOFF_MS * 2 ** (empty - 1), MAX_RETRY_MS);
}
