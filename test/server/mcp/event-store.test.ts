/** The /mcp event store: ids name their stream, so both POST streams and the standalone GET stream resume by Last-Event-ID; the SDK's transport called in-process (no port). */
import { randomUUID } from "node:crypto";
import {
  type JSONRPCMessage,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResumableEventStore } from "../../../src/server/mcp/event-store.js";
import { PROTOCOL_VERSION, SseReader } from "./raw-mcp.js";

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { n },
});

describe("ResumableEventStore", () => {
  it("replays only the later events of the stream the id belongs to", async () => {
    const store = new ResumableEventStore();
    const first = await store.storeEvent("stream-a", note(1));
    await store.storeEvent("stream-b", note(2));
    await store.storeEvent("stream-a", note(3));
    const replayed: JSONRPCMessage[] = [];
    const streamId = await store.replayEventsAfter(first, {
      send: async (_id, message) => {
        replayed.push(message);
      },
    });
    expect(streamId).toBe("stream-a");
    expect(replayed).toEqual([note(3)]);
  });

  it("recognises the standalone GET stream from an event id alone", async () => {
    const store = new ResumableEventStore();
    const id = await store.storeEvent("_GET_stream", note(1));
    expect(await store.getStreamIdForEventId(id)).toBe("_GET_stream");
  });

  it("does not know ids it never issued", async () => {
    const store = new ResumableEventStore();
    expect(await store.getStreamIdForEventId("garbage")).toBeUndefined();
    expect(
      await store.getStreamIdForEventId(`${Buffer.from("other").toString("base64url")}.1`),
    ).toBeUndefined();
  });
});

describe("resuming the standalone GET stream through the SDK's transport", () => {
  const url = "http://127.0.0.1:8787/mcp";
  let mcp: McpServer;
  /** The transport's handler, called as a fetch. */
  let send: (input: string, init?: RequestInit) => Promise<Response>;

  beforeAll(async () => {
    mcp = new McpServer({ name: "t", version: "1" }, { capabilities: { logging: {} } });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new ResumableEventStore(),
    });
    await mcp.connect(transport);
    send = (input, init) => transport.handleRequest(new Request(input, init));
  });
  afterAll(async () => {
    await mcp.close();
  });

  it("delivers a notification sent while the GET stream was down after reconnecting with Last-Event-ID", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = await send(url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    });
    const sessionId = init.headers.get("mcp-session-id") ?? "";
    await init.text();
    const session = { "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL_VERSION };

    const get = await send(url, { headers: { accept: "text/event-stream", ...session } });
    const stream = new SseReader(get);
    await mcp.server.sendLoggingMessage({ level: "info", data: "first" });
    const first = await stream.nextMessage();
    expect(first?.message).toMatchObject({ params: { data: "first" } });
    await stream.close();

    await mcp.server.sendLoggingMessage({ level: "info", data: "while disconnected" });

    // The reader's cancel reaches the transport at once here (no socket to notice closing first), so the first
    // reconnection is the one that resumes.
    const resumed = await send(url, {
      headers: { accept: "text/event-stream", ...session, "last-event-id": first?.id ?? "" },
    });
    expect(resumed.status).toBe(200);
    const replay = new SseReader(resumed);
    const missed = await replay.nextMessage();
    await replay.close();
    expect(missed?.message).toMatchObject({ params: { data: "while disconnected" } });
  });
});
