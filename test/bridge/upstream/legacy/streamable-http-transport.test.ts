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
};

function recordingExchange(): {
  exchange: HttpExchange;
  sent: HttpRequest[];
  /** Resolves with the first request made with `method`. */
  first(method: HttpRequest["method"]): Promise<HttpRequest>;
} {
  const sent: HttpRequest[] = [];
  const waiting: Array<{ method: HttpRequest["method"]; resolve: (request: HttpRequest) => void }> = [];
  return {
    sent,
    exchange: async (_url, request) => {
      sent.push(request);
      for (const waiter of waiting.filter((w) => w.method === request.method)) waiter.resolve(request);
      return accepted;
    },
    first: (method) => {
      const made = sent.find((request) => request.method === method);
      return made
        ? Promise.resolve(made)
        : new Promise((resolve) => {
            waiting.push({ method, resolve });
          });
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
    const { exchange, first } = recordingExchange();
    const transport = new StreamableHttpTransport(new URL("http://127.0.0.1:9/mcp"), exchange);
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const get = await first("GET");
    await transport.close();
    expect(get.pooled).not.toBe(true);
  });
});

describe("the session's event stream opens before the requests that follow initialization", () => {
  /** An exchange whose GET answers only when the test says so; every request is recorded when it is made. */
  function slowGetExchange() {
    const sent: HttpRequest[] = [];
    let answerGet: () => void = () => {};
    const getAnswered = new Promise<void>((resolve) => {
      answerGet = resolve;
    });
    const exchange: HttpExchange = async (_url, request) => {
      sent.push(request);
      if (request.method !== "GET") return accepted;
      await getAnswered;
      return { ...accepted, status: 405, ok: false };
    };
    return { exchange, sent, answerGet };
  }
  const methods = (sent: HttpRequest[]) =>
    sent.map((request) => (request.method === "GET" ? "GET" : JSON.parse(request.body ?? "{}").method));

  it("a request sent right after notifications/initialized is POSTed once the GET has its answer", async () => {
    const { exchange, sent, answerGet } = slowGetExchange();
    const transport = new StreamableHttpTransport(new URL("http://127.0.0.1:9/mcp"), exchange, {
      eventStreamOpenWaitMs: 10_000,
    });
    const initialized = transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } });
    await initialized;
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(methods(sent)).toEqual(["notifications/initialized", "GET"]);
    answerGet();
    await call;
    expect(methods(sent)).toEqual(["notifications/initialized", "GET", "tools/call"]);
    await transport.close();
  });

  it("a GET that never answers holds the requests no longer than the bound", async () => {
    const { exchange, sent } = slowGetExchange();
    const transport = new StreamableHttpTransport(new URL("http://127.0.0.1:9/mcp"), exchange, {
      eventStreamOpenWaitMs: 50,
    });
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(methods(sent)).toEqual(["notifications/initialized", "GET", "tools/list"]);
    await transport.close();
  });
});
