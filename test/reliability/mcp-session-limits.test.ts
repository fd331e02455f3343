/**
 * /mcp under one credential that opens sessions without end (15 000 in 20 s once took 1.1 GB), and a session whose
 * event store kept every stream: sessions are capped per credential, and finished streams are pruned.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../src/server/index.js";
import { ResumableEventStore } from "../../src/server/mcp/event-store.js";
import { mcpHeaders, openSession, postMcp } from "../server/mcp/raw-mcp.js";
import {
  authorizeUrl,
  CALLBACK_URL,
  followToCallback,
  pkcePair,
  postForm,
  registerClient,
  signInRaw,
  startTestServer,
} from "../server/oauth/helpers.js";

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

/** One more grant of an already registered client (the same person approving it again). */
async function grantFor(baseUrl: string, clientId: string): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const callback = await followToCallback(
    authorizeUrl(baseUrl, { client_id: clientId, redirect_uri: CALLBACK_URL, code_challenge: challenge }),
    CALLBACK_URL,
  );
  const { status, body } = await postForm(`${baseUrl}/token`, {
    grant_type: "authorization_code",
    code: callback.searchParams.get("code") ?? "",
    code_verifier: verifier,
    redirect_uri: CALLBACK_URL,
    client_id: clientId,
  });
  if (status !== 200) throw new Error(`token exchange failed: ${status}`);
  return String(body.access_token);
}

async function aliveOf(
  target: ReferenceServer,
  sessions: Array<{ token: string; id: string }>,
): Promise<number> {
  let alive = 0;
  for (const { token, id } of sessions) {
    const response = await postMcp(target.mcpUrl, token, { jsonrpc: "2.0", id: 1, method: "ping" }, id);
    await response.text();
    if (response.status === 200) alive += 1;
  }
  return alive;
}

describe("sessions per user and per client, across grants (one account approving one client 30 times held 960)", () => {
  let capped: ReferenceServer;
  beforeAll(async () => {
    capped = await startTestServer({
      autoApprove: "acme",
      mcpMaxSessionsPerCredential: 2,
      mcpMaxSessionsPerClient: 3,
      mcpMaxSessionsPerUser: 5,
    });
  });
  afterAll(() => capped.close());

  it("many grants of one client by one person hold at most the per-client cap", async () => {
    const { client_id } = await registerClient(capped.url);
    const sessions: Array<{ token: string; id: string }> = [];
    for (let grant = 0; grant < 4; grant++) {
      const token = await grantFor(capped.url, client_id);
      for (let i = 0; i < 2; i++) sessions.push({ token, id: await openSession(capped.mcpUrl, token) });
    }
    expect(await aliveOf(capped, sessions)).toBe(3);
  });

  it("grants of many clients by one person hold at most the per-user cap", async () => {
    const sessions: Array<{ token: string; id: string }> = [];
    for (let client = 0; client < 4; client++) {
      const token = String((await signInRaw(capped.url)).tokens.access_token);
      for (let i = 0; i < 2; i++) sessions.push({ token, id: await openSession(capped.mcpUrl, token) });
    }
    expect(await aliveOf(capped, sessions)).toBe(5);
  });
});
