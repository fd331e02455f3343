/** The relay carries MCP both ways between a stdio client and a streamable-HTTP server, in-process on paired streams and the server's fetch. */
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { withinDeadline } from "../../../../src/internal/deadline.js";
import {
  connectThroughRelayInProcess,
  type InProcessBridgeClient,
  startRelayInProcess,
} from "../../../support/relay-in-process.js";
import { initializeLine } from "../../fixtures/spawn-bridge.js";
import { freshTestServerEachTest } from "../../fixtures/test-mcp-server.js";

const each = freshTestServerEachTest({ inProcess: true });
/** The test's in-process client, closed after it (before the server stops: the hooks run in reverse). */
let bridge: InProcessBridgeClient | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function connect(
  args: string[],
  options: Parameters<typeof connectThroughRelayInProcess>[1] = {},
): Promise<InProcessBridgeClient> {
  bridge = await connectThroughRelayInProcess(args, { fetch: each.server.fetch, ...options });
  return bridge;
}

const textOf = (result: unknown): string => {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.map((part) => part.text ?? "").join("");
};

describe("a tools/call is relayed to the server and its answer back", () => {
  it("lists and calls tools through the bridge", async () => {
    await connect([each.server.url]);
    const tools = await bridge!.client.listTools();
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(["ask", "blob", "echo", "notify", "objects"]);
    const result = await bridge!.client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(textOf(result)).toBe("hello");
    expect(each.server.echoed).toEqual(["hello"]);
  });

  it("answers concurrent calls each with its own result", async () => {
    await connect([each.server.url]);
    const texts = Array.from({ length: 25 }, (_, i) => `call-${i}`);
    const results = await Promise.all(
      texts.map((text) => bridge!.client.callTool({ name: "echo", arguments: { text } })),
    );
    expect(results.map(textOf)).toEqual(texts);
    expect([...each.server.echoed].sort()).toEqual([...texts].sort());
  });
});

describe("notifications flow both ways", () => {
  it("relays a server notification sent while answering a request", async () => {
    await connect([each.server.url]);
    const notes: unknown[] = [];
    bridge!.client.setNotificationHandler("notifications/message", (notification) => {
      notes.push(notification.params.data);
    });
    await bridge!.client.callTool({ name: "notify", arguments: { note: "progress note" } });
    expect(notes).toEqual(["progress note"]);
  });

  it("relays a server notification from the standalone event stream", async () => {
    await connect([each.server.url]);
    const changed = new Promise<void>((resolve) =>
      bridge!.client.setNotificationHandler("notifications/tools/list_changed", () => resolve()),
    );
    // The GET stream opens after `notifications/initialized`: what the server sends once it is open reaches it.
    await each.server.until(() => each.server.eventStreams() >= 1);
    each.server.broadcastToolListChanged();
    await changed;
  });

  it("relays a client notification to the server", async () => {
    await connect([each.server.url], {
      capabilities: { capabilities: { roots: { listChanged: true } } },
    });
    await bridge!.client.sendRootsListChanged();
    await each.server.until(() =>
      each.server.clientNotifications.includes("notifications/roots/list_changed"),
    );
  });
});

describe("server-to-client requests round-trip through the bridge", () => {
  it("delivers an elicitation to the client and its answer to the server", async () => {
    await connect([each.server.url], {
      capabilities: { capabilities: { elicitation: {} } },
    });
    const asked: string[] = [];
    bridge!.client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { answer: "blue" } };
    });
    const result = await bridge!.client.callTool({
      name: "ask",
      arguments: { question: "Favourite colour?" },
    });
    expect(asked).toEqual(["Favourite colour?"]);
    expect(JSON.parse(textOf(result))).toEqual({ action: "accept", content: { answer: "blue" } });
  });
});

describe("a malformed stdin line gets -32700 and the bridge goes on", () => {
  it("answers garbage with a parse error (id null) and still serves the next request", async () => {
    const raw = await startRelayInProcess([each.server.url], {}, { fetch: each.server.fetch });
    try {
      raw.send(initializeLine(1));
      await raw.waitFor((m) => m.id === 1);
      raw.send("{this is not json");
      const parseError = await raw.waitFor((m) => m.id === null);
      expect((parseError.error as { code: number }).code).toBe(-32700);
      raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      raw.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "after" } },
        }),
      );
      const answer = await raw.waitFor((m) => m.id === 2);
      expect(answer.result).toMatchObject({ content: [{ type: "text", text: "after" }] });
    } finally {
      await raw.end();
    }
  });

  it("answers JSON that is not JSON-RPC with -32600 and its id", async () => {
    const raw = await startRelayInProcess([each.server.url], {}, { fetch: each.server.fetch });
    try {
      raw.send(JSON.stringify({ id: 7, hello: "world" }));
      const invalid = await raw.waitFor((m) => m.id === 7);
      expect((invalid.error as { code: number }).code).toBe(-32600);
    } finally {
      await raw.end();
    }
  });

  it("joins a message split across writes", async () => {
    const raw = await startRelayInProcess([each.server.url], {}, { fetch: each.server.fetch });
    try {
      const line = initializeLine(3);
      raw.write(line.slice(0, 20));
      await nextTurn();
      raw.write(`${line.slice(20)}\n`);
      const answer = await raw.waitFor((m) => m.id === 3);
      expect(answer.result).toMatchObject({ serverInfo: { name: "bridge-test-server" } });
    } finally {
      await raw.end();
    }
  });
});

describe("close() and stdin EOF end the remote session and shut the relay down within 2 s", () => {
  it("close() ends the remote session, writes out what was queued and resolves with exit code 0", async () => {
    const raw = await startRelayInProcess([each.server.url], {}, { fetch: each.server.fetch });
    raw.send(initializeLine(1));
    await raw.waitFor((m) => m.id === 1);
    raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }));
    await raw.waitFor((m) => m.id === 2);
    raw.close("a test");
    expect(await raw.closed).toBe(0);
    expect(each.server.deletedSessions).toHaveLength(1);
  });

  it("shuts down promptly on EOF even when the server is down", async () => {
    const raw = await startRelayInProcess([each.server.url], {}, { fetch: each.server.fetch });
    raw.send(initializeLine(1));
    await raw.waitFor((m) => m.id === 1);
    await each.server.stop();
    expect(await withinDeadline(raw.end(), 2000, "the relay did not shut down within 2 s")).toBe(0);
  });
});

describe("custom headers reach the server and never the logs", () => {
  it("sends the expanded --header value and keeps it out of --debug output", async () => {
    const secret = "s3cr3t-header-value-1234";
    await connect(["--debug", "--header", `X-Secret: \${SECRET_ENV}`, each.server.url], {
      env: { SECRET_ENV: secret },
    });
    await bridge!.client.callTool({ name: "echo", arguments: { text: "x" } });
    await bridge!.close();
    expect(each.server.secretHeaders.length).toBeGreaterThan(0);
    expect(new Set(each.server.secretHeaders)).toEqual(new Set([secret]));
    expect(bridge!.stderr()).toContain("[debug]");
    expect(bridge!.stderr()).not.toContain(secret);
  });
});
