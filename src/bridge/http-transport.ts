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
import type { FetchLike, HttpAnswer } from "./remote-fetch.js";

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
}

/** The largest message relayed from the server: the same cap as a line from the client. */
export const MAX_MESSAGE_BYTES = MAX_LINE_BYTES;
const TOO_LARGE = `larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB (${MAX_MESSAGE_BYTES} bytes), the most the bridge relays`;

const DEFAULT_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
const MAX_GET_RECONNECTS = 8;

export class StreamableHttpTransport {
  /** `raw`: the message's JSON text as received, when it came alone (not in a batch). */
  onmessage?: (message: JSONRPCMessage, raw?: string) => void;
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
        const text = await response.text().catch(() => "");
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
        void this.#readEvents(response, { awaiting: new Set([message.id]), standalone: false }).finally(() =>
          this.#untrack(controller),
        );
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
    this.onmessage?.(value, raw);
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
    const parser = new ServerSentEventParser((event) => {
      if (event.id !== undefined) state.lastEventId = event.id;
      if (event.retry !== undefined) this.#retryMs = event.retry;
      if (!event.data || (event.event && event.event !== "message")) return;
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        this.onerror?.(new Error("the server sent an event that is not JSON; ignored"));
        return;
      }
      this.#deliver(value, state, event.data);
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
    if (state.standalone) {
      this.#later(() => this.#openEventStream(state, 0), this.#delay(0));
    } else if (state.awaiting.size > 0) {
      if (state.lastEventId) this.#later(() => this.#openEventStream(state, 0), this.#delay(0));
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

export interface ServerSentEvent {
  event?: string;
  data: string;
  id?: string;
  retry?: number;
}

/**
 * An incremental `text/event-stream` parser (WHATWG HTML §9.2.6): fields per line, an event per blank line.
 * Built for the common answer, one event in one chunk: the bytes are decoded once by a streaming decoder, lines
 * are found with `indexOf`, and only a line split across chunks is ever joined.
 */
export class ServerSentEventParser {
  readonly #onEvent: (event: ServerSentEvent) => void;
  /** Made only once a chunk ends inside a character; until then chunks are decoded whole. */
  #decoder: TextDecoder | undefined;
  #atStart = true;
  /** The start of a line whose end has not arrived yet. */
  #partial = "";
  /** The last chunk ended in \r: a \n opening the next one belongs to the same line break. */
  #afterCarriageReturn = false;
  #data: string | undefined;
  #event: string | undefined;
  #id: string | undefined;
  #retry: number | undefined;
  #sawField = false;

  constructor(onEvent: (event: ServerSentEvent) => void) {
    this.#onEvent = onEvent;
  }

  push(chunk: Uint8Array): void {
    let text: string;
    if (this.#decoder === undefined && !endsInsideCharacter(chunk)) {
      text = wholeChunkDecoder.decode(chunk);
    } else {
      this.#decoder ??= new TextDecoder("utf-8", { ignoreBOM: true });
      text = this.#decoder.decode(chunk, { stream: true });
    }
    let start = 0;
    if (this.#atStart && text.length > 0) {
      this.#atStart = false;
      if (text.charCodeAt(0) === BYTE_ORDER_MARK) start = 1;
    }
    if (this.#afterCarriageReturn && text.length > 0) {
      this.#afterCarriageReturn = false;
      if (text.charCodeAt(start) === LINE_FEED) start++;
    }
    let carriageReturn = text.indexOf("\r", start);
    while (start < text.length) {
      let end = text.indexOf("\n", start);
      if (carriageReturn !== -1 && carriageReturn < start) carriageReturn = text.indexOf("\r", start);
      if (carriageReturn !== -1 && (end === -1 || carriageReturn < end)) end = carriageReturn;
      if (end === -1) {
        this.#partial += text.slice(start);
        return;
      }
      if (this.#partial) {
        this.#line(this.#partial + text.slice(start, end));
        this.#partial = "";
      } else {
        this.#line(text.slice(start, end));
      }
      if (end === carriageReturn) {
        if (end + 1 === text.length) this.#afterCarriageReturn = true;
        else if (text.charCodeAt(end + 1) === LINE_FEED) end++;
      }
      start = end + 1;
    }
  }

  /** Forgets the event being read (its bytes were dropped); the next bytes start a new line of a new event. */
  discardEvent(): void {
    this.#decoder = undefined;
    this.#partial = "";
    this.#afterCarriageReturn = false;
    this.#data = undefined;
    this.#event = undefined;
    this.#retry = undefined;
    this.#sawField = false;
  }

  #line(line: string): void {
    if (line === "") {
      if (this.#sawField)
        this.#onEvent({ event: this.#event, data: this.#data ?? "", id: this.#id, retry: this.#retry });
      this.#data = undefined;
      this.#event = undefined;
      this.#retry = undefined;
      this.#sawField = false;
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let valueStart = colon === -1 ? line.length : colon + 1;
    if (line.charCodeAt(valueStart) === SPACE) valueStart++;
    const value = line.slice(valueStart);
    this.#sawField = true;
    if (field === "data") this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
    else if (field === "event") this.#event = value;
    else if (field === "id" && !value.includes("\0")) this.#id = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.#retry = Number(value);
  }
}

/** Decodes chunks that end on a character boundary (a BOM is the stream's to strip, at its start only). */
const wholeChunkDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** True when the chunk's last UTF-8 character continues in the next chunk. */
function endsInsideCharacter(chunk: Uint8Array): boolean {
  let index = chunk.length - 1;
  let continuationBytes = 0;
  while (index >= 0 && continuationBytes < 3 && (chunk[index]! & 0xc0) === 0x80) {
    index--;
    continuationBytes++;
  }
  if (index < 0) return false;
  const lead = chunk[index]!;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return continuationBytes + 1 < length;
}

const BYTE_ORDER_MARK = 0xfeff;
const LINE_FEED = 10;
const COLON = 58;
const SPACE = 32;

/** Parses a `text/event-stream` body into its events. */
export async function* parseServerSentEvents(
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
): AsyncGenerator<ServerSentEvent> {
  let events: ServerSentEvent[] = [];
  const parser = new ServerSentEventParser((event) => events.push(event));
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    parser.push(chunk);
    const ready = events;
    events = [];
    yield* ready;
  }
}
