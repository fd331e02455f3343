/**
 * /mcp under one credential that opens sessions without end (15 000 in 20 s once took 1.1 GB), and a session whose
 * event store kept every stream: sessions are capped per credential, and finished streams are pruned.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../src/server/index.js";
import { ResumableEventStore } from "../../src/server/mcp/event-store.js";
import { mcpHeaders, openSession, postMcp } from "../mcp/raw-mcp.js";
import { signInRaw, startTestServer } from "../oauth/helpers.js";

const CAP = 4;
let server: ReferenceServer;
let flooder: string;
let neighbour: string;
beforeAll(async () => {
  server = await startTestServer({ autoApprove: "acme", mcpMaxSessionsPerCredential: CAP });
  flooder = String((await signInRaw(server.url)).tokens.access_token);
  neighbour = String((await signInRaw(server.url)).tokens.access_token);
});
afterAll(() => server.close());

async function ping(token: string, sessionId: string): Promise<number> {
  const response = await postMcp(server.mcpUrl, token, { jsonrpc: "2.0", id: 1, method: "ping" }, sessionId);
  await response.text();
  return response.status;
}

describe("sessions per credential", () => {
  it("past the cap, the least recently used idle sessions of that credential close; other credentials keep theirs", async () => {
    const neighbours = await openSession(server.mcpUrl, neighbour);
    const opened: string[] = [];
    for (let i = 0; i < CAP * 5; i++) opened.push(await openSession(server.mcpUrl, flooder));
    const statuses = [];
    for (const id of opened) statuses.push(await ping(flooder, id));
    expect(statuses.slice(-CAP)).toEqual(Array(CAP).fill(200));
    expect(statuses.slice(0, -CAP)).toEqual(Array(CAP * 4).fill(404));
    expect(await ping(neighbour, neighbours)).toBe(200);
  });

  it("a flood of concurrent initializes cannot pass the cap together", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () => openSession(server.mcpUrl, flooder)),
    );
    const ids = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const alive = [];
    for (const id of ids) if ((await ping(flooder, id)) === 200) alive.push(id);
    expect(alive.length).toBeLessThanOrEqual(CAP);
  });

  it("with every session busy (an open event stream each), a new initialize gets 429 naming the cap", async () => {
    const streams: AbortController[] = [];
    try {
      for (let i = 0; i < CAP; i++) {
        const id = await openSession(server.mcpUrl, flooder);
        const abort = new AbortController();
        streams.push(abort);
        const headers = { ...mcpHeaders(flooder, id), accept: "text/event-stream" };
        const get = await fetch(server.mcpUrl, { headers, signal: abort.signal });
        expect(get.status).toBe(200);
      }
      const refused = await postMcp(server.mcpUrl, flooder, {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      });
      expect(refused.status).toBe(429);
      expect(JSON.stringify(await refused.json())).toContain(`(${CAP})`);
    } finally {
      for (const abort of streams) abort.abort();
    }
  });
});

describe("the event store of one session", () => {
  const answer = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: {} });
  const note: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } };

  it("keeps only the newest finished request streams, every unfinished one, and the GET stream", async () => {
    const store = new ResumableEventStore(500, 8);
    await store.storeEvent("_GET_stream", note);
    const unfinished = await store.storeEvent("request-open", note);
    let lastFirstEvent = "";
    for (let i = 0; i < 1_000; i++) {
      lastFirstEvent = await store.storeEvent(`request-${i}`, note);
      await store.storeEvent(`request-${i}`, answer(i));
    }
    expect(store.streamCount).toBe(8 + 2);
    expect(await store.getStreamIdForEventId(unfinished)).toBe("request-open");
    // The newest finished stream still replays its answer for a client that lost it.
    const replayed: JSONRPCMessage[] = [];
    await store.replayEventsAfter(lastFirstEvent, {
      send: async (_id, message) => void replayed.push(message),
    });
    expect(replayed).toEqual([answer(999)]);
  });
});
