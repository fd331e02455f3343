/**
 * The client side of MCP's streamable HTTP transport, as small as the relay needs: POST with JSON or SSE
 * answers, the GET event stream, resumption with Last-Event-ID honouring `retry`, session and protocol-version
 * headers, DELETE on the way out. It loads nothing beyond Node's fetch, so the bridge starts fast.
 */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { isJsonRpcMessage, isRequest, isResponse } from "./jsonrpc.js";
import type { FetchLike } from "./remote-fetch.js";

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

const DEFAULT_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
const MAX_GET_RECONNECTS = 8;

export class StreamableHttpTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  /** A request's answer can no longer arrive (its stream broke with nothing to resume from). */
  onrequestlost?: (id: RequestId, reason: string) => void;

  readonly #url: URL;
  readonly #fetch: FetchLike;
  readonly #abort = new AbortController();
  readonly #timers = new Set<NodeJS.Timeout>();
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

  /** POSTs one message. Resolves once the server accepted it; answers arrive through `onmessage`. */
  async send(message: JSONRPCMessage): Promise<void> {
    const response = await this.#fetch(this.#url, {
      method: "POST",
      headers: this.#headers({
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      }),
      body: JSON.stringify(message),
      signal: this.#abort.signal,
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
      void this.#readEvents(response, { awaiting: new Set([message.id]), standalone: false });
    } else if (type === "application/json") {
      const body: unknown = await response.json();
      for (const item of Array.isArray(body) ? body : [body]) this.#deliver(item, undefined);
    } else {
      await response.body?.cancel().catch(() => undefined);
      throw new RemoteHttpError(
        response.status,
        `the server answered with an unexpected content type: ${type ?? "none"}`,
      );
    }
  }

  /** Ends the session on the server (DELETE); a 405 means the server does not allow it, which is fine. */
  async terminateSession(): Promise<void> {
    if (!this.#sessionId) return;
    const response = await this.#fetch(this.#url, {
      method: "DELETE",
      headers: this.#headers({}),
      signal: this.#abort.signal,
    });
    await response.body?.cancel().catch(() => undefined);
    if (!response.ok && response.status !== 405) {
      throw new RemoteHttpError(response.status, `ending the session failed with HTTP ${response.status}`);
    }
    this.#sessionId = undefined;
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#abort.abort();
  }

  #headers(extra: Record<string, string>): Headers {
    const headers = new Headers(extra);
    if (this.#sessionId) headers.set("mcp-session-id", this.#sessionId);
    if (this.#protocolVersion) headers.set("mcp-protocol-version", this.#protocolVersion);
    return headers;
  }

  #deliver(value: unknown, stream: StreamState | undefined): void {
    if (!isJsonRpcMessage(value)) {
      this.onerror?.(new Error("the server sent a message that is not JSON-RPC; ignored"));
      return;
    }
    if (stream && isResponse(value)) stream.awaiting.delete(value.id);
    this.onmessage?.(value);
  }

  /** The standalone GET stream for server-initiated messages (optional for servers: 405 means none). */
  #openEventStream(state: StreamState = { awaiting: new Set(), standalone: true }, attempt = 0): void {
    void (async () => {
      const headers = this.#headers({ accept: "text/event-stream" });
      if (state.lastEventId) headers.set("last-event-id", state.lastEventId);
      const response = await this.#fetch(this.#url, { method: "GET", headers, signal: this.#abort.signal });
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
    })().catch((error: unknown) => {
      if (this.#abort.signal.aborted) return;
      this.onerror?.(error as Error);
      const gone = error instanceof RemoteHttpError && error.status < 500;
      if (gone) {
        this.#loseAll(state, `the event stream could not be resumed: ${(error as Error).message}`);
      } else if (attempt < MAX_GET_RECONNECTS) {
        this.#later(() => this.#openEventStream(state, attempt + 1), this.#delay(attempt));
      } else {
        this.#loseAll(state, "the event stream could not be resumed");
      }
    });
  }

  /**
   * Reads one SSE response. When it ends or breaks before every awaited answer came, it resumes with a GET
   * and Last-Event-ID after the server's `retry` delay, if the server gave the events ids (else the answers
   * are lost, and said so). The standalone stream always reconnects.
   */
  async #readEvents(response: Response, state: StreamState): Promise<void> {
    let failure: unknown;
    try {
      for await (const event of parseServerSentEvents(response.body!)) {
        if (event.id !== undefined) state.lastEventId = event.id;
        if (event.retry !== undefined) this.#retryMs = event.retry;
        if (!event.data || (event.event && event.event !== "message")) continue;
        let value: unknown;
        try {
          value = JSON.parse(event.data);
        } catch {
          this.onerror?.(new Error("the server sent an event that is not JSON; ignored"));
          continue;
        }
        this.#deliver(value, state);
      }
    } catch (error) {
      failure = error;
    }
    if (this.#abort.signal.aborted) return;
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
      if (!this.#abort.signal.aborted) task();
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

/** Parses a `text/event-stream` body (WHATWG HTML §9.2.6): fields per line, an event per blank line. */
export async function* parseServerSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let event: string | undefined;
  let id: string | undefined;
  let retry: number | undefined;
  let sawField = false;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r\n|\r|\n/);
    while (newline !== -1) {
      // A lone \r at the end of the buffer may be half of \r\n: wait for more.
      if (buffer[newline] === "\r" && newline === buffer.length - 1) break;
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (sawField) yield { event, data: data.join("\n"), id, retry };
        data = [];
        event = undefined;
        retry = undefined;
        sawField = false;
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        sawField = true;
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
        else if (field === "id" && !value.includes("\0")) id = value;
        else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
      }
      newline = buffer.search(/\r\n|\r|\n/);
    }
  }
}
