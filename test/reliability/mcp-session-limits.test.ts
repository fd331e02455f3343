/**
 * /mcp under one credential that opens sessions without end (15 000 in 20 s once took 1.1 GB), and a session whose
 * event store kept every stream: sessions are capped per credential, and finished streams are pruned. On the
 * reference server's handler in-process.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResumableEventStore } from "../../src/server/mcp/event-store.js";
import { mcpHeaders, openSession, postMcp } from "../server/mcp/raw-mcp.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../support/reference-request.js";
import {
  codeFor,
  exchangeCode,
  newPkce,
  type RegisteredClient,
  registerPublicClient,
  signIn,
} from "./fixtures/oauth-flow.js";

const CALLBACK = "http://127.0.0.1:49152/callback";

/** A full auto-approved sign-in of a newly registered client: its access token. */
async function newGrant(target: RequestableReferenceServer): Promise<string> {
  return (await signIn(target, await registerPublicClient(target, CALLBACK))).access_token;
}

/** A session on `target` by raw MCP requests to its handler. */
function openSessionOn(target: RequestableReferenceServer, token: string): Promise<string> {
  return openSession(target.mcpUrl, token, target.fetch);
}

const CAP = 4;
let server: RequestableReferenceServer;
let flooder: string;
let neighbour: string;
beforeAll(async () => {
  server = createRequestableReferenceServer({
    autoApprove: "acme",
    rateLimit: false,
    mcpMaxSessionsPerCredential: CAP,
  });
  flooder = await newGrant(server);
  neighbour = await newGrant(server);
});
afterAll(() => server.close());

async function ping(token: string, sessionId: string): Promise<number> {
  const body = { jsonrpc: "2.0", id: 1, method: "ping" };
  const response = await postMcp(server.mcpUrl, token, body, sessionId, server.fetch);
  await response.text();
  return response.status;
}

describe("sessions per credential", () => {
  it("past the cap, the least recently used idle sessions of that credential close; other credentials keep theirs", async () => {
    const neighbours = await openSessionOn(server, neighbour);
    const opened: string[] = [];
    for (let i = 0; i < CAP * 5; i++) opened.push(await openSessionOn(server, flooder));
    const statuses = [];
    for (const id of opened) statuses.push(await ping(flooder, id));
    expect(statuses.slice(-CAP)).toEqual(Array(CAP).fill(200));
    expect(statuses.slice(0, -CAP)).toEqual(Array(CAP * 4).fill(404));
    expect(await ping(neighbour, neighbours)).toBe(200);
  });

  it("a flood of concurrent initializes cannot pass the cap together", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () => openSessionOn(server, flooder)),
    );
    const ids = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const alive = [];
    for (const id of ids) if ((await ping(flooder, id)) === 200) alive.push(id);
    expect(alive.length).toBeLessThanOrEqual(CAP);
  });

  it("with every session busy (an open event stream each), a new initialize gets 429 naming the cap", async () => {
    const streams: Response[] = [];
    try {
      for (let i = 0; i < CAP; i++) {
        const id = await openSessionOn(server, flooder);
        const headers = { ...mcpHeaders(flooder, id), accept: "text/event-stream" };
        const get = await server.fetch(server.mcpUrl, { headers });
        streams.push(get);
        expect(get.status).toBe(200);
      }
      const initialize = {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      };
      const refused = await postMcp(server.mcpUrl, flooder, initialize, undefined, server.fetch);
      expect(refused.status).toBe(429);
      expect(JSON.stringify(await refused.json())).toContain(`(${CAP})`);
    } finally {
      // The client going away: node:http would cancel each stream's body when its connection closed.
      await Promise.all(streams.map((stream) => stream.body?.cancel()));
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
async function grantFor(target: RequestableReferenceServer, client: RegisteredClient): Promise<string> {
  const pkce = newPkce();
  const code = await codeFor(target, client, pkce);
  const { status, body } = await exchangeCode(target, client, code, pkce.verifier);
  if (status !== 200) throw new Error(`token exchange failed: ${status}`);
  return String(body.access_token);
}

async function aliveOf(
  target: RequestableReferenceServer,
  sessions: Array<{ token: string; id: string }>,
): Promise<number> {
  let alive = 0;
  for (const { token, id } of sessions) {
    const body = { jsonrpc: "2.0", id: 1, method: "ping" };
    const response = await postMcp(target.mcpUrl, token, body, id, target.fetch);
    await response.text();
    if (response.status === 200) alive += 1;
  }
  return alive;
}

describe("sessions per user and per client, across grants (one account approving one client 30 times held 960)", () => {
  let capped: RequestableReferenceServer;
  beforeAll(() => {
    capped = createRequestableReferenceServer({
      autoApprove: "acme",
      rateLimit: false,
      mcpMaxSessionsPerCredential: 2,
      mcpMaxSessionsPerClient: 3,
      mcpMaxSessionsPerUser: 5,
    });
  });
  afterAll(() => capped.close());

  it("many grants of one client by one person hold at most the per-client cap", async () => {
    const client = await registerPublicClient(capped, CALLBACK);
    const sessions: Array<{ token: string; id: string }> = [];
    for (let grant = 0; grant < 4; grant++) {
      const token = await grantFor(capped, client);
      for (let i = 0; i < 2; i++) sessions.push({ token, id: await openSessionOn(capped, token) });
    }
    expect(await aliveOf(capped, sessions)).toBe(3);
  });

  it("grants of many clients by one person hold at most the per-user cap", async () => {
    const sessions: Array<{ token: string; id: string }> = [];
    for (let client = 0; client < 4; client++) {
      const token = await newGrant(capped);
      for (let i = 0; i < 2; i++) sessions.push({ token, id: await openSessionOn(capped, token) });
    }
    expect(await aliveOf(capped, sessions)).toBe(5);
  });
});
