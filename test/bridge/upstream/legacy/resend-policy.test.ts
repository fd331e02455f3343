/**
 * When a request's connection fails, the relay sends it again only if that cannot make it run twice: the request
 * never reached the server, or it is safe to repeat (any method but tools/call, or a tool the server annotated
 * read-only or idempotent). A write whose connection broke after it was sent is answered with an error instead.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { nodeHttpExchange } from "../../../../src/bridge/upstream/http/node-http-exchange.js";
import {
  BRIDGE_ERROR_CODE,
  LegacySessionRelay,
  type RemoteTransport,
} from "../../../../src/bridge/upstream/legacy/relay.js";
import { requestNeverSent } from "../../../../src/internal/request-failure.js";

/** How the fake server treats the next POSTs. */
type Outcome = "answer" | "refused" | "reset-after-send";

const failure = (code: string) =>
  new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });

/** A scripted remote: records every message sent, fails the next ones as told, answers the others. */
function scriptedRemote(tools: Array<{ name: string; annotations?: Record<string, boolean> }>) {
  const sent: JSONRPCMessage[] = [];
  const outcomes: Outcome[] = [];
  const toClient: JSONRPCMessage[] = [];
  const createTransport = (): RemoteTransport => {
    const transport: RemoteTransport = {
      sessionId: "session-1",
      async start() {},
      async close() {},
      async terminateSession() {},
      setProtocolVersion() {},
      async send(message) {
        const outcome = outcomes.shift() ?? "answer";
        if (outcome === "refused") throw failure("ECONNREFUSED");
        sent.push(message);
        if (outcome === "reset-after-send") throw failure("ECONNRESET");
        if (!("id" in message) || !("method" in message)) return;
        const result =
          message.method === "tools/list"
            ? { tools: tools.map((tool) => ({ ...tool, inputSchema: { type: "object" } })) }
            : { content: [{ type: "text", text: "ran" }] };
        queueMicrotask(() => transport.onmessage?.({ jsonrpc: "2.0", id: message.id, result }));
      },
    } as RemoteTransport;
    return transport;
  };
  const relay = new LegacySessionRelay({
    url: new URL("http://127.0.0.1:9/mcp"),
    exchange: async () => {
      throw new Error("unused");
    },
    log: { info() {}, debug() {}, debugEnabled: false },
    toClient: (message) => toClient.push(message),
    reconnectWindowMs: 5000,
    createTransport,
  });
  const answersTo = (id: number) => toClient.filter((message) => "id" in message && message.id === id);
  const timesSent = (id: number) => sent.filter((message) => "id" in message && message.id === id).length;
  const answered = async (id: number) => {
    for (let turn = 0; turn < 200 && answersTo(id).length === 0; turn++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    return answersTo(id);
  };
  return { relay, outcomes, answersTo, timesSent, answered };
}

const call = (id: number, name: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} },
});

const TOOLS: Array<{ name: string; annotations?: Record<string, boolean> }> = [
  { name: "create_chat", annotations: { readOnlyHint: false, idempotentHint: false } },
  { name: "list_chats", annotations: { readOnlyHint: true } },
  { name: "set_title", annotations: { readOnlyHint: false, idempotentHint: true } },
  { name: "unannotated" },
];

async function withToolsListed() {
  const remote = scriptedRemote(TOOLS);
  remote.relay.fromClient({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  await remote.answered(1);
  return remote;
}

describe("a write whose connection broke after it was sent", () => {
  it.each(["create_chat", "unannotated"])(
    "%s: answered once with an error saying it may have run; sent once",
    async (tool) => {
      const remote = await withToolsListed();
      remote.outcomes.push("reset-after-send");
      remote.relay.fromClient(call(2, tool));
      const [answer] = await remote.answered(2);
      expect(answer).toMatchObject({ id: 2, error: { code: BRIDGE_ERROR_CODE } });
      expect((answer as { error: { message: string } }).error.message).toMatch(
        /may or may not have run it\. It was not sent again/,
      );
      expect(remote.timesSent(2)).toBe(1);
      expect(remote.answersTo(2)).toHaveLength(1);
    },
  );

  it("a call made before tools/list was seen counts as a write", async () => {
    const remote = scriptedRemote(TOOLS);
    remote.outcomes.push("reset-after-send");
    remote.relay.fromClient(call(2, "list_chats"));
    const [answer] = await remote.answered(2);
    expect(answer).toMatchObject({ error: { code: BRIDGE_ERROR_CODE } });
    expect(remote.timesSent(2)).toBe(1);
  });
});

describe("a call safe to repeat whose connection broke after it was sent", () => {
  it.each(["list_chats", "set_title"])(
    "%s (read-only or idempotent): sent again and answered by the server",
    async (tool) => {
      const remote = await withToolsListed();
      remote.outcomes.push("reset-after-send");
      remote.relay.fromClient(call(2, tool));
      const answers = await remote.answered(2);
      expect(answers).toEqual([
        { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "ran" }] } },
      ]);
      expect(remote.timesSent(2)).toBe(2);
    },
  );

  it("a method other than tools/call (ping): sent again and answered by the server", async () => {
    const remote = await withToolsListed();
    remote.outcomes.push("reset-after-send");
    remote.relay.fromClient({ jsonrpc: "2.0", id: 2, method: "ping" });
    const answers = await remote.answered(2);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toHaveProperty("result");
    expect(remote.timesSent(2)).toBe(2);
  });
});

describe("a write that never reached the server (connection refused)", () => {
  it("is held, sent once the server is back, and answered by the server", async () => {
    const remote = await withToolsListed();
    remote.outcomes.push("refused", "refused");
    remote.relay.fromClient(call(2, "create_chat"));
    const answers = await remote.answered(2);
    expect(answers).toEqual([
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "ran" }] } },
    ]);
    expect(remote.timesSent(2)).toBe(1);
  });
});

describe("requestNeverSent: which failures prove the server never saw the request", () => {
  it("a refused connection (real socket, nothing listening) did not reach the server", async () => {
    const { createServer } = await import("node:net");
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await nodeHttpExchange(new URL(`http://127.0.0.1:${port}/mcp`), {
      method: "POST",
      headers: {},
      body: "{}",
    }).catch((caught: unknown) => caught);
    expect(requestNeverSent(error)).toBe(true);
  });

  it("a connection the server reset after reading the request may have reached it", async () => {
    const { createServer } = await import("node:net");
    const server = createServer((socket) => socket.once("data", () => socket.resetAndDestroy()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const error = await nodeHttpExchange(new URL(`http://127.0.0.1:${port}/mcp`), {
        method: "POST",
        headers: {},
        body: "{}",
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect(requestNeverSent(error)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("a kept-alive connection the server closed between requests: the next request is not lost or doubted", async () => {
    const { createServer } = await import("node:http");
    let handled = 0;
    const server = createServer((req, res) => {
      handled++;
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
    try {
      const outcomes: string[] = [];
      for (let round = 0; round < 20; round++) {
        await (await nodeHttpExchange(url, { method: "POST", headers: {}, body: "x" })).text();
        server.closeIdleConnections();
        outcomes.push(
          await nodeHttpExchange(url, { method: "POST", headers: {}, body: "x", mustNotRepeat: true })
            .then((answer) => answer.text())
            .catch((caught: unknown) => (requestNeverSent(caught) ? "never sent" : "doubt")),
        );
      }
      // Without the exchange's wait for the FIN, every round is a doubt ("socket hang up" on the reused socket).
      // With it, none is, unless a loaded kernel delivers the loopback FIN only after the request is written:
      // then the doubt is real (nothing tells that close from a server that read the request and died), and the
      // full suite on 2 cores met that once. So at most one round in twenty.
      expect(outcomes.filter((outcome) => outcome === "doubt").length).toBeLessThanOrEqual(1);
      expect(outcomes.filter((outcome) => outcome !== "doubt").length).toBeGreaterThanOrEqual(19);
      expect(handled).toBeGreaterThanOrEqual(20);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
