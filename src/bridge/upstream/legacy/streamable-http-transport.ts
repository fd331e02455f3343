/** The client side of MCP's 2025 streamable HTTP transport, as small as the legacy upstream needs: on an HttpExchange, with no Headers or Response, so the bridge never loads Node's fetch and starts fast. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { withinDeadline } from "../../../internal/deadline.js";
import { isJsonRpcMessage, isRequest, isResponse } from "../../messages/jsonrpc.js";
import { DEFAULT_MAX_MESSAGE_BYTES, jsonShapeProblem, tooLargeText } from "../../messages/message-size.js";
import { type HttpAnswer, type HttpExchange, RemoteHttpError, readBounded } from "../http/http-exchange.js";
import { EventStreams, type StreamState } from "./event-stream.js";

/** The most of an error body read (300 characters of it are shown): a 1 GiB error page costs nothing. */
const MAX_ERROR_BODY_BYTES = 4096;
/** How long requests after `notifications/initialized` wait for the event stream's answer (a server may hold it). */
export const EVENT_STREAM_OPEN_WAIT_MS = 2_000;

export class StreamableHttpTransport {
  /** `raw`: the JSON text of a message that came alone; `relatedRequestId`: the request whose POST stream carried it. */
  onmessage?: (message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId) => void;
  onerror?: (error: Error) => void;
  /** A request's answer can no longer arrive (its stream broke with nothing to resume from). */
  onrequestlost?: (id: RequestId, reason: string) => void;

  readonly #url: URL;
  readonly #exchange: HttpExchange;
  /** One controller per running request, aborted on close: one shared signal would gather a listener per request. */
  readonly #inFlight = new Set<AbortController>();
  readonly #streams: EventStreams;
  #closed = false;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;

  /**
   * From `notifications/initialized` until the GET stream has its answer (at most `eventStreamOpenWaitMs`), requests
   * wait: what the server sends about them on that stream then has a stream to arrive on.
   */
  #eventStreamOpening: Promise<void> | undefined;
  readonly #eventStreamOpenWaitMs: number;

  readonly #maxMessageBytes: number;

  constructor(
    url: URL,
    exchange: HttpExchange,
    options: { eventStreamOpenWaitMs?: number; maxMessageBytes?: number } = {},
  ) {
    this.#url = url;
    this.#exchange = exchange;
    this.#eventStreamOpenWaitMs = options.eventStreamOpenWaitMs ?? EVENT_STREAM_OPEN_WAIT_MS;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#streams = new EventStreams({
      maxMessageBytes: this.#maxMessageBytes,
      isClosed: () => this.#closed,
      get: (lastEventId) => this.#getEventStream(lastEventId),
      deliver: (value, state, raw) => this.#deliver(value, state, raw),
      error: (error) => this.onerror?.(error),
      lost: (id, reason) => this.onrequestlost?.(id, reason),
    });
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /** POSTs one message; resolves once the server accepted it (answers arrive through `onmessage`). */
  async send(message: JSONRPCMessage, options?: { mustNotRepeat?: boolean }): Promise<void> {
    const initialized = "method" in message && message.method === "notifications/initialized";
    let eventStreamOpened: () => void = () => {};
    if (initialized) {
      const opening = new Promise<void>((resolve) => {
        eventStreamOpened = resolve;
      });
      this.#eventStreamOpening = opening;
      void opening.then(() => {
        if (this.#eventStreamOpening === opening) this.#eventStreamOpening = undefined;
      });
    } else if (this.#eventStreamOpening && isRequest(message)) await this.#eventStreamOpening;
    const controller = this.#track();
    let streaming = false;
    try {
      const response = await this.#exchange(this.#url, {
        method: "POST",
        headers: this.#headers({
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        }),
        body: JSON.stringify(message),
        signal: controller.signal,
        ...(options?.mustNotRepeat ? { mustNotRepeat: true } : {}),
        // The client's requests share the pool; its answers and notifications never wait behind them.
        ...(isRequest(message) ? { pooled: true } : {}),
      });
      const sessionId = response.headers.get("mcp-session-id");
      if (sessionId) this.#sessionId = sessionId;
      if (!response.ok) {
        const text = (await readBounded(response, MAX_ERROR_BODY_BYTES, { truncate: true })) ?? "";
        throw new RemoteHttpError(
          response.status,
          `the server answered HTTP ${response.status}${text ? `: ${text.slice(0, 300)}` : ""}`,
        );
      }
      if (response.status === 202 || !isRequest(message)) {
        await response.body?.cancel().catch(() => undefined);
        if (initialized) {
          void withinDeadline(this.#streams.open(), this.#eventStreamOpenWaitMs, "event stream", {
            unref: true,
          })
            .catch(() => undefined)
            .then(eventStreamOpened);
          eventStreamOpened = () => {};
        }
        return;
      }
      const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
      if (type === "text/event-stream") {
        streaming = true;
        void this.#streams
          .read(response, {
            awaiting: new Set([message.id]),
            standalone: false,
            relatedRequestId: message.id,
          })
          .finally(() => this.#untrack(controller));
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
      // Unless the event stream is opening, nothing is (an initialized notification refused): nobody waits.
      eventStreamOpened();
    }
  }

  /** Ends the session on the server (DELETE); a 405 means the server does not allow it, which is fine. */
  async terminateSession(): Promise<void> {
    if (!this.#sessionId) return;
    const controller = this.#track();
    try {
      const response = await this.#exchange(this.#url, {
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
    this.#streams.close();
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

  /** Plain header records, as the HTTP exchange takes them (it builds no `Headers`). */
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
   * A JSON answer's text up to `--max-message-size`; past that the body is dropped unread and the request answered
   * with an error naming the size. A body that breaks mid-way throws: a cut JSON answer is no answer.
   */
  async #readCapped(response: HttpAnswer, id: RequestId): Promise<string | undefined> {
    const text = await readBounded(response, this.#maxMessageBytes, { whole: true });
    const problem = text === undefined ? undefined : jsonShapeProblem(text, this.#maxMessageBytes);
    if (text !== undefined && !problem) return text;
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    const why =
      problem !== undefined
        ? problem
        : tooLargeText(this.#maxMessageBytes, declared > this.#maxMessageBytes ? declared : undefined);
    this.onrequestlost?.(id, `the server's answer was not relayed: ${why}`);
    return undefined;
  }

  /** One GET of the event stream, aborted by close until released. */
  #getEventStream(lastEventId: string | undefined): { answer: Promise<HttpAnswer>; release(): void } {
    const controller = this.#track();
    const headers = this.#headers({ accept: "text/event-stream" });
    if (lastEventId) headers["last-event-id"] = lastEventId;
    const answer = (async () =>
      this.#exchange(this.#url, { method: "GET", headers, signal: controller.signal }))();
    return { answer, release: () => this.#untrack(controller) };
  }
}

/** What the relay needs from a remote transport (tests give it fakes). */
export type RemoteTransport = Pick<StreamableHttpTransport, keyof StreamableHttpTransport>;
