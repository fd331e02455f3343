/** The whole reference server without a port: the same fetch handler `startReferenceServer()` serves, called in-process (as hono's `app.request`). */
import { createReferenceApp } from "./app.js";
import type { ReferenceServerOptions } from "./options.js";

export interface InProcessReferenceServer {
  /** The base URL requests are addressed to (never dialed); default `http://127.0.0.1:8787`. */
  url: string;
  mcpUrl: string;
  /** Seeded account or team slug -> dev API key for `/v2`. */
  apiKeys: Record<string, string>;
  /**
   * A `fetch` answered by the server's handler: pass it to `new ChatClient({ fetch })`, to an MCP client transport's
   * `fetch` option, or call it directly.
   */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /**
   * The same `fetch` for a client at `clientAddress` instead of 127.0.0.1: the address the server's per-client limits
   * count by, as another machine would be (`fetch` is `fetchFrom("127.0.0.1")`).
   */
  fetchFrom(clientAddress: string): (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /**
   * `fetch` of `url` + `target`, the server told the target as a client sent it on the wire (still percent-encoded,
   * `.` and `..` segments not folded), as node:http tells it: a URL folds those segments, so `fetch` cannot send
   * them. For tests of hostile paths (`/v2/chats/%2e%2e`).
   */
  fetchTarget(target: string, init?: RequestInit): Promise<Response>;
  /** Publishes `notifications/tools/list_changed` to open `subscriptions/listen` streams and 2025-era sessions. */
  toolsChanged(): void;
  /** Withdraws the tools that write from `/mcp` (read-only) or restores them, as `ReferenceServer.setReadOnly`. */
  setReadOnly(readOnly: boolean): void;
  /** Runs the close hooks (MCP sessions, the data file's fold). */
  close(): Promise<void>;
}

export function createInProcessReferenceServer(
  options: Omit<ReferenceServerOptions, "port" | "host" | "publicUrl"> & { url?: string } = {},
): InProcessReferenceServer {
  const baseUrl = (options.url ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
  const app = createReferenceApp(options, baseUrl);
  const send = (request: Request, clientAddress: string, rawTarget?: string): Promise<Response> => {
    // A request built here has no Host header of its own: give it the one a client would send.
    if (!request.headers.has("host")) {
      const headers = new Headers(request.headers);
      headers.set("host", new URL(request.url).host);
      return app.fetch(new Request(request, { headers }), clientAddress, rawTarget);
    }
    return app.fetch(request, clientAddress, rawTarget);
  };
  const fetchFrom =
    (clientAddress: string) =>
    (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
      send(new Request(input, init), clientAddress);
  return {
    url: baseUrl,
    mcpUrl: `${baseUrl}/mcp`,
    apiKeys: { ...app.apiKeys },
    fetch: fetchFrom("127.0.0.1"),
    fetchFrom,
    fetchTarget: (target, init) => send(new Request(`${baseUrl}${target}`, init), "127.0.0.1", target),
    toolsChanged: () => app.toolsChanged(),
    setReadOnly: (readOnly) => app.setReadOnly(readOnly),
    close: () => app.close(),
  };
}
