/** The /mcp event store: ids name their stream, so both POST streams and the standalone GET stream resume by Last-Event-ID. */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type JSONRPCMessage,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResumableEventStore } from "../../../src/server/mcp/event-store.js";
import { toNodeListener } from "../../../src/server/node-http.js";
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
  let http: Server;
  let url: string;
  let mcp: McpServer;

  beforeAll(async () => {
    mcp = new McpServer({ name: "t", version: "1" }, { capabilities: { logging: {} } });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new ResumableEventStore(),
    });
    await mcp.connect(transport);
    http = createServer(
      toNodeListener(
        (request) => transport.handleRequest(request),
        () => origin,
      ),
    );
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    url = `${origin}/mcp`;
  });
  afterAll(async () => {
    await mcp.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it("delivers a notification sent while the GET stream was down after reconnecting with Last-Event-ID", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = await fetch(url, {
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

    const get = await fetch(url, { headers: { accept: "text/event-stream", ...session } });
    const stream = new SseReader(get);
    await mcp.server.sendLoggingMessage({ level: "info", data: "first" });
    const first = await stream.nextMessage();
    expect(first?.message).toMatchObject({ params: { data: "first" } });
    await stream.close();

    await mcp.server.sendLoggingMessage({ level: "info", data: "while disconnected" });

    // Until the server notices the dropped connection it answers 409; a client retries after the SSE `retry` delay.
    let resumed: Response;
    for (let attempt = 0; ; attempt++) {
      resumed = await fetch(url, {
        headers: { accept: "text/event-stream", ...session, "last-event-id": first?.id ?? "" },
      });
      if (resumed.status !== 409 || attempt === 50) break;
      await resumed.text();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(resumed.status).toBe(200);
    const replay = new SseReader(resumed);
    const missed = await replay.nextMessage();
    await replay.close();
    expect(missed?.message).toMatchObject({ params: { data: "while disconnected" } });
  });
});
