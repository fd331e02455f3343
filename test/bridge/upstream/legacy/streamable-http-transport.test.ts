/** The legacy transport's requests: the client's requests share the connection pool, nothing the server waits on does. */
import { describe, expect, it } from "vitest";
import type {
  HttpAnswer,
  HttpExchange,
  HttpRequest,
} from "../../../../src/bridge/upstream/http/http-exchange.js";
import { StreamableHttpTransport } from "../../../../src/bridge/upstream/legacy/streamable-http-transport.js";

const accepted: HttpAnswer = {
  status: 202,
  ok: true,
  headers: { get: () => null },
  body: null,
  text: async () => "",
  json: async () => undefined,
};

function recordingExchange(): { exchange: HttpExchange; sent: HttpRequest[] } {
  const sent: HttpRequest[] = [];
  return {
    sent,
    exchange: async (_url, request) => {
      sent.push(request);
      return accepted;
    },
  };
}

describe("which POSTs share the pool", () => {
  it("a client request is pooled; its answer to a server request and a notification are not", async () => {
    const { exchange, sent } = recordingExchange();
    const transport = new StreamableHttpTransport(new URL("http://127.0.0.1:9/mcp"), exchange);
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    await transport.send({ jsonrpc: "2.0", id: "srv-1", result: { action: "accept" } });
    await transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    await transport.close();
    expect(sent.map((request) => request.pooled === true)).toEqual([true, false, false]);
  });

  it("the event stream (GET) is not pooled: it stays open for the session's life", async () => {
    const { exchange, sent } = recordingExchange();
    const transport = new StreamableHttpTransport(new URL("http://127.0.0.1:9/mcp"), exchange);
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    for (let turn = 0; turn < 50 && !sent.some((request) => request.method === "GET"); turn++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await transport.close();
    const get = sent.find((request) => request.method === "GET");
    expect(get).toBeDefined();
    expect(get?.pooled).not.toBe(true);
  });
});
