/** Raw streamable-HTTP requests to /mcp for tests of the transport itself: sessions, SSE events, Host headers. */
import { request as httpRequest } from "node:http";

export const PROTOCOL_VERSION = "2025-11-25";

export interface SseEvent {
  id?: string;
  data: string;
}

/** Headers of an MCP request with a bearer token (and a session, when given). */
export function mcpHeaders(token: string, sessionId?: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    ...(sessionId ? { "mcp-session-id": sessionId } : {}),
  };
}

/** Where the requests go: the network's `fetch` by default, or an in-process server's. */
export type McpFetch = (input: string, init?: RequestInit) => Promise<Response>;

export function postMcp(
  mcpUrl: string,
  token: string,
  body: unknown,
  sessionId?: string,
  fetchFn: McpFetch = fetch,
): Promise<Response> {
  return fetchFn(mcpUrl, {
    method: "POST",
    headers: mcpHeaders(token, sessionId),
    body: JSON.stringify(body),
  });
}

/** Initializes a session by raw HTTP; returns its id. */
export async function openSession(mcpUrl: string, token: string, fetchFn: McpFetch = fetch): Promise<string> {
  const initialize = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  };
  const response = await postMcp(mcpUrl, token, initialize, undefined, fetchFn);
  const sessionId = response.headers.get("mcp-session-id");
  await response.text();
  if (response.status !== 200 || !sessionId) throw new Error(`initialize failed: ${response.status}`);
  const initialized = await postMcp(
    mcpUrl,
    token,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    sessionId,
    fetchFn,
  );
  await initialized.text();
  return sessionId;
}

/** Reads SSE events from a response body one by one; `close()` drops the connection (an interruption). */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = "";

  constructor(response: Response) {
    if (!response.body) throw new Error("The response has no body");
    this.#reader = response.body.getReader();
  }

  async next(): Promise<SseEvent | null> {
    for (;;) {
      const end = this.#buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const event: SseEvent = { data: "" };
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("id:")) event.id = line.slice(3).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        event.data = data.join("\n");
        if (event.id !== undefined || event.data !== "") return event;
        continue;
      }
      const { value, done } = await this.#reader.read();
      if (done) return null;
      this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }

  /** The next event that carries a JSON-RPC message (priming events have none). */
  async nextMessage(): Promise<{ id?: string; message: Record<string, unknown> } | null> {
    for (;;) {
      const event = await this.next();
      if (!event) return null;
      if (event.data.trim() !== "") {
        return {
          ...(event.id ? { id: event.id } : {}),
          message: JSON.parse(event.data) as Record<string, unknown>,
        };
      }
    }
  }

  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => undefined);
  }
}

/**
 * A request with a Host header of our choosing: the network's fetch cannot set Host, so node:http sends it, unless
 * `fetchFn` is the server's handler in-process, which reads the header as it would from a socket.
 */
export async function requestWithHost(
  url: string,
  host: string,
  token: string,
  fetchFn?: (input: string, init: RequestInit) => Promise<Response>,
): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  const payload = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  });
  if (fetchFn) {
    const response = await fetchFn(url, {
      method: "POST",
      headers: { ...mcpHeaders(token), host },
      body: payload,
    });
    return { status: response.status, body: await response.text() };
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { ...mcpHeaders(token), host, "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
