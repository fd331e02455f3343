/** A 2025-era (sessionful) SDK v2 server for the eras tests: a call that waits to be released, a call that elicits on its own stream, list changes of tools and prompts, resource subscriptions. */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { z } from "zod";
import { writeResponse } from "../../../src/server/node-http.js";

export interface LegacySessionServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:12345/mcp. */
  readonly url: string;
  /** Calls of `wait` running now. */
  readonly waiting: () => number;
  /** Ends every running `wait` call with its own label. */
  release(): void;
  /** Sends `notifications/tools/list_changed` on every session. */
  toolsChanged(): void;
  /** Sends `notifications/prompts/list_changed` on every session. */
  promptsChanged(): void;
  /** `resources/subscribe` and `resources/unsubscribe` requests received, in order ("subscribe file:///a"). */
  readonly subscriptions: string[];
  /** Sends `notifications/resources/updated` for `uri` on every session. */
  resourceUpdated(uri: string): void;
  close(): Promise<void>;
}

/** How long a `wait` call waits for `release()` at most, so a failed test leaves nothing running. */
const WAIT_BOUND_MS = 15_000;

export async function startLegacySessionServer(): Promise<LegacySessionServer> {
  const sessions = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; mcp: McpServer }>();
  const waiters = new Set<() => void>();
  const subscriptions: string[] = [];

  const newMcpServer = () => {
    const mcp = new McpServer(
      { name: "eras-legacy-session-server", version: "1.0.0" },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true },
        },
      },
    );
    for (const method of ["resources/subscribe", "resources/unsubscribe"] as const) {
      mcp.server.setRequestHandler(method, (request) => {
        subscriptions.push(`${method.split("/")[1]} ${String(request.params.uri)}`);
        return {};
      });
    }
    mcp.registerTool(
      "wait",
      { description: "Answers its label once released", inputSchema: z.object({ label: z.string() }) },
      async ({ label }) => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, WAIT_BOUND_MS);
          function done() {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          }
          waiters.add(done);
        });
        return { content: [{ type: "text", text: `released ${label}` }] };
      },
    );
    mcp.registerTool(
      "ask",
      { description: "Asks the client through elicitation", inputSchema: z.object({ question: z.string() }) },
      async ({ question }, ctx) => {
        // Related to this call: the SDK sends it on the call's own POST response stream.
        const answer = await ctx.mcpReq.send({
          method: "elicitation/create",
          params: {
            message: question,
            requestedSchema: {
              type: "object",
              properties: { answer: { type: "string" } },
              required: ["answer"],
            },
          },
        });
        return { content: [{ type: "text", text: JSON.stringify(answer) }] };
      },
    );
    mcp.registerPrompt("greeting", { description: "A greeting" }, () => ({
      messages: [{ role: "user", content: { type: "text", text: "hello" } }],
    }));
    return mcp;
  };

  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return text ? JSON.parse(text) : undefined;
  };

  const serveThrough = async (
    transport: WebStandardStreamableHTTPServerTransport,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value);
    }
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort();
    });
    const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, {
      method: req.method ?? "GET",
      headers,
      signal: aborted.signal,
    });
    await writeResponse(await transport.handleRequest(request, { parsedBody: body }), res);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = req.method === "POST" ? await readBody(req) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
        );
        return;
      }
      await serveThrough(session.transport, req, res, body);
      return;
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, mcp });
      },
    });
    const mcp = newMcpServer();
    await mcp.connect(transport);
    await serveThrough(transport, req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    waiting: () => waiters.size,
    subscriptions,
    resourceUpdated: (uri) => {
      for (const { mcp } of sessions.values()) void mcp.server.sendResourceUpdated({ uri });
    },
    release: () => {
      for (const done of [...waiters]) done();
    },
    toolsChanged: () => {
      for (const { mcp } of sessions.values()) void mcp.sendToolListChanged();
    },
    promptsChanged: () => {
      for (const { mcp } of sessions.values()) void mcp.sendPromptListChanged();
    },
    close: async () => {
      for (const done of [...waiters]) done();
      await Promise.all([...sessions.values()].map(({ mcp }) => mcp.close().catch(() => undefined)));
      sessions.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
