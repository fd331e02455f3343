/** A 2025-era (sessionful) SDK v2 server for the eras tests: a call that waits to be released, a call that elicits on its own stream, list changes of tools and prompts, resource subscriptions; in process (a fetch handler) or listening. */
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { alsoListening, handlerFetch, IN_PROCESS_ORIGIN } from "../fixtures/fetch-endpoint.js";
import { type LegacySession, serveLegacySessionRequest } from "../fixtures/legacy-sessions.js";

export interface LegacySessionServer {
  /** The MCP endpoint: a loopback port's (startLegacySessionServer), or never dialed (createLegacySessionServer). */
  readonly url: string;
  /** The network to reach it in process. */
  readonly fetch: typeof globalThis.fetch;
  /** Calls of `wait` running now. */
  readonly waiting: () => number;
  /** Ends every running `wait` call with its own label. */
  release(): void;
  /** Standalone GET event streams opened so far (a notification sent after one opened reaches it). */
  readonly eventStreams: () => number;
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

/** The server listening on a loopback port, for tests that spawn the bin. */
export async function startLegacySessionServer(): Promise<LegacySessionServer> {
  return alsoListening(createLegacySessionServer());
}

/** The server in process: its `fetch` is the way to reach it. */
export function createLegacySessionServer(): LegacySessionServer {
  const sessions = new Map<string, LegacySession>();
  const waiters = new Set<() => void>();
  const subscriptions: string[] = [];
  let eventStreams = 0;

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

  const handle = (request: Request) =>
    serveLegacySessionRequest(sessions, newMcpServer, request, {
      onEventStream: () => {
        eventStreams++;
      },
    });

  return {
    url: `${IN_PROCESS_ORIGIN}/mcp`,
    fetch: handlerFetch(handle),
    waiting: () => waiters.size,
    eventStreams: () => eventStreams,
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
    },
  };
}
