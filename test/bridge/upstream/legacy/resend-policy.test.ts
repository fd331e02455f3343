/**
 * When a request's connection fails, the relay sends it again only if that cannot make it run twice: the request
 * never reached the server, or it is safe to repeat (any method but tools/call, or a tool the server annotated
 * read-only or idempotent). A write whose connection broke after it was sent is answered with an error instead.
 * The remote is scripted in process; which socket failures prove "never sent" is node-http-failures.test.ts's.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import {
  BRIDGE_ERROR_CODE,
  LegacyUpstream,
  type RemoteTransport,
} from "../../../../src/bridge/upstream/legacy/legacy-upstream.js";

/** How the fake server treats the next POSTs. */
type Outcome = "answer" | "refused" | "reset-after-send";

const failure = (code: string) =>
  new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });

/** A scripted remote: records every message sent, fails the next ones as told, answers the others. */
function scriptedRemote(tools: Array<{ name: string; annotations?: Record<string, boolean> }>) {
  const sent: JSONRPCMessage[] = [];
  const outcomes: Outcome[] = [];
  const toClient: JSONRPCMessage[] = [];
  const delivered = new Set<() => void>();
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
  const relay = new LegacyUpstream({
    url: new URL("http://127.0.0.1:9/mcp"),
    exchange: async () => {
      throw new Error("unused");
    },
    log: { info() {}, debug() {}, debugEnabled: false },
    toClient: (message) => {
      toClient.push(message);
      for (const wake of [...delivered]) wake();
    },
    reconnectWindowMs: 5000,
    createTransport,
  });
  const answersTo = (id: number) => toClient.filter((message) => "id" in message && message.id === id);
  const timesSent = (id: number) => sent.filter((message) => "id" in message && message.id === id).length;
  /** The answers to `id` once the first of them reached the client (bounded by the test's own time-out). */
  const answered = (id: number) =>
    new Promise<JSONRPCMessage[]>((resolve) => {
      const wake = () => {
        if (answersTo(id).length === 0) return;
        delivered.delete(wake);
        // What else this turn of the event loop delivers (a second answer would be a defect) is counted too.
        setImmediate(() => resolve(answersTo(id)));
      };
      delivered.add(wake);
      wake();
    });
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
