/**
 * A client's cancellation never reaches a 2025 server before the request it cancels. Each is its own POST, and a
 * request may wait (for a pooled connection, for the session's event stream) where a notification does not: sent at
 * once, the cancellation arrives first, the server drops it as naming no request it knows, then runs the call. The
 * remote is scripted in process: a request's POST reaches the server only when the test opens its gate.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import {
  LegacyUpstream,
  type RemoteTransport,
} from "../../../../src/bridge/upstream/legacy/legacy-upstream.js";

const refused = () =>
  new TypeError("fetch failed", { cause: Object.assign(new Error("ECONNRESET"), { code: "ECONNRESET" }) });

/** A remote whose requests wait at a gate before the server sees them; notifications pass at once. */
function gatedRemote() {
  /** What the server received, in order: a request's id, or `cancel <id>`. */
  const arrived: string[] = [];
  const gates: Array<(outcome: "arrive" | "reset") => void> = [];
  let sent = 0;
  let wake: () => void = () => {};
  const createTransport = (): RemoteTransport =>
    ({
      sessionId: "session-1",
      async start() {},
      async close() {},
      async terminateSession() {},
      setProtocolVersion() {},
      async send(message: JSONRPCMessage) {
        sent++;
        wake();
        if ("method" in message && message.method === "notifications/cancelled") {
          arrived.push(`cancel ${String((message.params as { requestId: unknown }).requestId)}`);
          return;
        }
        if (!("id" in message)) return;
        const outcome = await new Promise<"arrive" | "reset">((open) => gates.push(open));
        if (outcome === "reset") throw refused();
        arrived.push(String(message.id));
      },
    }) as unknown as RemoteTransport;
  const toClient: JSONRPCMessage[] = [];
  const relay = new LegacyUpstream({
    url: new URL("http://127.0.0.1:9/mcp"),
    exchange: async () => {
      throw new Error("unused");
    },
    log: { info() {}, debug() {}, debugEnabled: false },
    toClient: (message) => toClient.push(message),
    reconnectWindowMs: 5000,
    createTransport,
  });
  /** Resolves once the relay has handed `count` messages to the transport in all. */
  const sentCount = (count: number) =>
    new Promise<void>((done) => {
      wake = () => {
        if (sent >= count) done();
      };
      wake();
    });
  return { relay, arrived, gates, toClient, sentCount };
}

const call = (id: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "create_chat", arguments: { message: "hi" } },
});
const cancel = (requestId: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/cancelled",
  params: { requestId, reason: "the person stopped it" },
});
/** Lets the relay's pending promise continuations run. */
const settle = () => new Promise((done) => setImmediate(done));

describe("a cancellation of a request the server does not have yet", () => {
  it("waits, and reaches the server right after the request", async () => {
    const remote = gatedRemote();
    remote.relay.fromClient(call(1));
    await remote.sentCount(1);
    remote.relay.fromClient(cancel(1));
    await settle();
    expect(remote.arrived).toEqual([]);
    remote.gates.shift()?.("arrive");
    await remote.sentCount(2);
    expect(remote.arrived).toEqual(["1", "cancel 1"]);
  });

  it("goes out once the bridge answered the request itself (its POST broke: the server may have it all the same)", async () => {
    const remote = gatedRemote();
    remote.relay.fromClient(call(1));
    await remote.sentCount(1);
    remote.relay.fromClient(cancel(1));
    remote.gates.shift()?.("reset");
    await remote.sentCount(2);
    expect(remote.arrived).toEqual(["cancel 1"]);
    expect(remote.toClient).toMatchObject([{ id: 1, error: { message: /may or may not have run it/ } }]);
  });

  it("holds only its own request's cancellation: another request's, already accepted, goes at once", async () => {
    const remote = gatedRemote();
    remote.relay.fromClient(call(1));
    await remote.sentCount(1);
    remote.gates.shift()?.("arrive");
    remote.relay.fromClient(call(2));
    await remote.sentCount(2);
    await settle();
    remote.relay.fromClient(cancel(1));
    await remote.sentCount(3);
    expect(remote.arrived).toEqual(["1", "cancel 1"]);
    remote.gates.shift()?.("arrive");
    await settle();
    expect(remote.arrived).toEqual(["1", "cancel 1", "2"]);
  });

  it("a cancellation naming no request the bridge relays goes on as it came", async () => {
    const remote = gatedRemote();
    remote.relay.fromClient(cancel(7));
    await remote.sentCount(1);
    expect(remote.arrived).toEqual(["cancel 7"]);
  });
});
