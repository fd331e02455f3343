/** Legacy (2025-era) `/mcp` sessions: one McpServer and web-standard transport per session, bound to its account, capped per grant, user and client, reaped when idle. */
import { randomUUID } from "node:crypto";
import {
  type AuthInfo,
  isInitializeRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Principal } from "../context.js";
import { ResumableEventStore } from "./event-store.js";

export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS_PER_CREDENTIAL = 32;
/** One person across all their grants and clients (one account approving one client 30 times held 960 before). */
export const DEFAULT_MAX_SESSIONS_PER_USER = 64;
/** One person through one client, across that client's grants. */
export const DEFAULT_MAX_SESSIONS_PER_USER_CLIENT = 32;

interface McpSession {
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  /** The account or team that opened the session; requests with another account's token are refused. */
  account: string;
  /** The caps this session counts against: grant, user, and user + client. */
  scopes: SessionScope[];
  lastActive: number;
  /** Requests and streams still open: a session with any is never idle. */
  openResponses: number;
}

interface SessionScope {
  key: string;
  limit: number;
  what: string;
}

export interface McpSessionsOptions {
  /** A fresh McpServer with the chat tools for a new session. */
  createServer: () => McpServer;
  idleMs: number;
  maxPerCredential?: number;
  maxPerUser?: number;
  maxPerUserClient?: number;
}

export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  /** Initializes still being answered, per scope key: a flood of concurrent ones cannot pass a cap together. */
  readonly #opening = new Map<string, number>();
  readonly #options: McpSessionsOptions;
  readonly #reaper: NodeJS.Timeout;

  constructor(options: McpSessionsOptions) {
    this.#options = options;
    const every = Math.max(20, Math.min(options.idleMs / 2, 60_000));
    this.#reaper = setInterval(() => void this.reapIdle(), every);
    this.#reaper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The McpServer of each open session. */
  servers(): McpServer[] {
    return [...this.#sessions.values()].map((session) => session.server);
  }

  /** Routes an authenticated legacy request to its session, or opens a session for an `initialize` request. */
  async handle(request: Request, principal: Principal, authInfo: AuthInfo, body: unknown): Promise<Response> {
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId !== null) {
      const session = this.#sessions.get(sessionId);
      if (!session) {
        return jsonRpcErrorResponse(
          404,
          -32001,
          "Session not found: send a new initialize request without a session id",
        );
      }
      if (session.account !== principal.account) {
        return jsonRpcErrorResponse(403, -32001, "This session belongs to another account or team");
      }
      return this.#track(session, await session.transport.handleRequest(request, withBody(authInfo, body)));
    }
    if (request.method !== "POST" || !isInitializeRequest(body)) {
      return jsonRpcErrorResponse(
        400,
        -32000,
        "Bad Request: no valid session id; start with an initialize request",
      );
    }
    const scopes = this.#scopesOf(principal);
    // Checked and reserved in one turn of the event loop: an await between them let a flood of concurrent
    // initializes all see room before any of them counted.
    const { evicted, full } = this.#makeRoomFor(scopes);
    if (!full) {
      for (const scope of scopes) this.#opening.set(scope.key, (this.#opening.get(scope.key) ?? 0) + 1);
    }
    try {
      await Promise.all(evicted.map((session) => session.server.close().catch(() => undefined)));
      if (full) {
        return jsonRpcErrorResponse(
          429,
          -32000,
          `Too many open MCP sessions for this ${full.what} (${full.limit}); close one (DELETE /mcp) first`,
        );
      }
      return await this.#open(request, principal.account, scopes, authInfo, body);
    } finally {
      if (!full) this.#release(scopes);
    }
  }

  /** Gives back the places an initialize reserved once it has been answered (its session, if any, counts now). */
  #release(scopes: SessionScope[]): void {
    for (const scope of scopes) {
      const left = (this.#opening.get(scope.key) ?? 1) - 1;
      if (left > 0) this.#opening.set(scope.key, left);
      else this.#opening.delete(scope.key);
    }
  }

  #scopesOf(principal: Principal): SessionScope[] {
    const person = principal.userId ?? principal.subject;
    return [
      {
        key: `grant\u0000${principal.account}\u0000${principal.subject}`,
        limit: this.#options.maxPerCredential ?? DEFAULT_MAX_SESSIONS_PER_CREDENTIAL,
        what: "credential",
      },
      {
        key: `user\u0000${person}`,
        limit: this.#options.maxPerUser ?? DEFAULT_MAX_SESSIONS_PER_USER,
        what: "user",
      },
      {
        key: `client\u0000${person}\u0000${principal.clientId ?? ""}`,
        limit: this.#options.maxPerUserClient ?? DEFAULT_MAX_SESSIONS_PER_USER_CLIENT,
        what: "client",
      },
    ];
  }

  /**
   * Below every cap, or made so by taking out the least recently used idle sessions of a full scope (the caller
   * closes them); `full` is the first scope that stays full (all its sessions busy). Synchronous, so that the
   * caller reserves its place before another request counts.
   */
  #makeRoomFor(scopes: SessionScope[]): { evicted: McpSession[]; full?: SessionScope } {
    const evicted: McpSession[] = [];
    for (const scope of scopes) {
      const own = [...this.#sessions].filter(([, session]) =>
        session.scopes.some((s) => s.key === scope.key),
      );
      const count = own.length + (this.#opening.get(scope.key) ?? 0);
      if (count < scope.limit) continue;
      const idle = own
        .filter(([, session]) => session.openResponses === 0)
        .sort(([, a], [, b]) => a.lastActive - b.lastActive);
      const excess = count - scope.limit + 1;
      if (idle.length < excess) return { evicted, full: scope };
      for (const [id, session] of idle.slice(0, excess)) {
        this.#sessions.delete(id);
        evicted.push(session);
      }
    }
    return { evicted };
  }

  /** Closes sessions that had no request or open stream for longer than the idle time. */
  async reapIdle(): Promise<void> {
    const cutoff = Date.now() - this.#options.idleMs;
    for (const [id, session] of this.#sessions) {
      if (session.openResponses === 0 && session.lastActive < cutoff) {
        this.#sessions.delete(id);
        await session.server.close().catch(() => undefined);
      }
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#reaper);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map((session) => session.server.close().catch(() => undefined)));
  }

  async #open(
    request: Request,
    account: string,
    scopes: SessionScope[],
    authInfo: AuthInfo,
    body: unknown,
  ): Promise<Response> {
    const server = this.#options.createServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new ResumableEventStore(),
      retryInterval: 1000,
      onsessioninitialized: (id) => {
        this.#sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id);
      },
    });
    const session: McpSession = {
      server,
      transport,
      account,
      scopes,
      lastActive: Date.now(),
      openResponses: 0,
    };
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = this.#track(session, await transport.handleRequest(request, withBody(authInfo, body)));
    if (!transport.sessionId) await server.close();
    return response;
  }

  /** Counts the response as open until its body has been sent or the client has gone. */
  #track(session: McpSession, response: Response): Response {
    session.lastActive = Date.now();
    if (!response.body) return response;
    session.openResponses += 1;
    const finish = () => {
      session.openResponses -= 1;
      session.lastActive = Date.now();
    };
    // Ended (flush), or cancelled by the client going away or errored at the source (cancel): never both. `cancel` is
    // in the streams spec and Node since 20.14 and 21.5, not yet in these types.
    const transformer = { flush: finish, cancel: finish } as Transformer<Uint8Array, Uint8Array>;
    const body = response.body.pipeThrough(new TransformStream(transformer));
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
}

function withBody(authInfo: AuthInfo, body: unknown): { authInfo: AuthInfo; parsedBody?: unknown } {
  return body === undefined ? { authInfo } : { authInfo, parsedBody: body };
}

/** A JSON-RPC error that `/mcp` answers before a request reaches an MCP server instance. */
export function jsonRpcErrorResponse(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}
