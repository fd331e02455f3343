/** Stateful streamable-HTTP MCP sessions: one McpServer and transport per session, bound to its account, reaped when idle. */
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Request, Response } from "express";
import { ResumableEventStore } from "./event-store.js";
import { type ChatToolsContext, principalOf, registerChatTools, SERVER_INSTRUCTIONS } from "./tools.js";

export const SERVER_INFO = { name: "chat-reference-server", version: "0.1.0" };
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS_PER_CREDENTIAL = 32;

interface McpSession {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  /** The account or team that opened the session; requests with another account's token are refused. */
  account: string;
  /** The credential (OAuth grant) that opened it: sessions are capped per credential. */
  credential: string;
  lastActive: number;
  /** Requests and streams still open: a session with any is never idle. */
  openResponses: number;
}

export interface McpSessionsOptions {
  tools: ChatToolsContext;
  idleMs: number;
  maxPerCredential?: number;
  now?: () => number;
}

export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  readonly #opening = new Map<string, number>();
  readonly #options: McpSessionsOptions;
  readonly #now: () => number;
  readonly #reaper: NodeJS.Timeout;

  constructor(options: McpSessionsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    const every = Math.max(20, Math.min(options.idleMs / 2, 60_000));
    this.#reaper = setInterval(() => void this.reapIdle(), every);
    this.#reaper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Routes an authenticated request to its session, or opens a session for an `initialize` request. */
  async handle(req: Request, res: Response): Promise<void> {
    const principal = principalOf(req.auth);
    if (!principal) {
      // Unreachable behind the auth middleware; a server bug, not the client's.
      sendJsonRpcError(res, 500, -32603, "Internal error: the request has no principal");
      return;
    }
    const sessionId = req.get("mcp-session-id");
    if (sessionId !== undefined) {
      const session = this.#sessions.get(sessionId);
      if (!session) {
        sendJsonRpcError(
          res,
          404,
          -32001,
          "Session not found: send a new initialize request without a session id",
        );
        return;
      }
      if (session.account !== principal.account) {
        sendJsonRpcError(res, 403, -32001, "This session belongs to another account or team");
        return;
      }
      this.#track(session, res);
      await session.transport.handleRequest(req, res, req.body);
      return;
    }
    if (req.method !== "POST" || !isInitializeRequest(req.body)) {
      sendJsonRpcError(
        res,
        400,
        -32000,
        "Bad Request: no valid session id; start with an initialize request",
      );
      return;
    }
    const credential = `${principal.account}\u0000${principal.subject}`;
    if (!(await this.#makeRoomFor(credential))) {
      sendJsonRpcError(
        res,
        429,
        -32000,
        `Too many open MCP sessions for this credential (${this.#maxPerCredential}); close one (DELETE /mcp) first`,
      );
      return;
    }
    // Initializes still being answered count too, so a flood of concurrent ones cannot pass the cap together.
    this.#opening.set(credential, (this.#opening.get(credential) ?? 0) + 1);
    try {
      await this.#open(req, res, principal.account, credential);
    } finally {
      const left = (this.#opening.get(credential) ?? 1) - 1;
      if (left > 0) this.#opening.set(credential, left);
      else this.#opening.delete(credential);
    }
  }

  get #maxPerCredential(): number {
    return this.#options.maxPerCredential ?? DEFAULT_MAX_SESSIONS_PER_CREDENTIAL;
  }

  /** Below the cap, or made so by closing the credential's least recently used idle session; false when all are busy. */
  async #makeRoomFor(credential: string): Promise<boolean> {
    const own = [...this.#sessions].filter(([, session]) => session.credential === credential);
    const count = own.length + (this.#opening.get(credential) ?? 0);
    if (count < this.#maxPerCredential) return true;
    const idle = own
      .filter(([, session]) => session.openResponses === 0)
      .sort(([, a], [, b]) => a.lastActive - b.lastActive);
    const excess = count - this.#maxPerCredential + 1;
    if (idle.length < excess) return false;
    for (const [id, session] of idle.slice(0, excess)) {
      this.#sessions.delete(id);
      await session.server.close().catch(() => undefined);
    }
    return true;
  }

  /** Closes sessions that had no request or open stream for longer than the idle time. */
  async reapIdle(): Promise<void> {
    const cutoff = this.#now() - this.#options.idleMs;
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

  async #open(req: Request, res: Response, account: string, credential: string): Promise<void> {
    const server = new McpServer(SERVER_INFO, { instructions: SERVER_INSTRUCTIONS });
    registerChatTools(server, this.#options.tools);
    const session: McpSession = {
      server,
      account,
      credential,
      lastActive: this.#now(),
      openResponses: 0,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new ResumableEventStore(),
        retryInterval: 1000,
        onsessioninitialized: (id) => {
          this.#sessions.set(id, session);
        },
        onsessionclosed: (id) => {
          this.#sessions.delete(id);
        },
      }),
    };
    const { transport } = session;
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    this.#track(session, res);
    await transport.handleRequest(req, res, req.body);
    if (!transport.sessionId) await server.close();
  }

  #track(session: McpSession, res: Response): void {
    session.openResponses += 1;
    session.lastActive = this.#now();
    res.once("close", () => {
      session.openResponses -= 1;
      session.lastActive = this.#now();
    });
  }
}

export function sendJsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}
