/** The bridge's hand-written JSON-RPC checks and SSE parser agree with the MCP SDK and the SSE format. */
import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isJsonRpcMessage } from "../../src/bridge/messages/jsonrpc.js";
import { type ServerSentEvent, ServerSentEventParser } from "../../src/bridge/upstream/http/sse.js";

const sdkAccepts = (value: unknown) => JSONRPCMessageSchema.safeParse(value).success;

const cases: [string, unknown][] = [
  ["request", { jsonrpc: "2.0", id: 1, method: "tools/list" }],
  [
    "request with params and meta",
    { jsonrpc: "2.0", id: "a", method: "x", params: { _meta: { progressToken: 3 }, q: 1 } },
  ],
  ["request with a fractional id", { jsonrpc: "2.0", id: 1.5, method: "x" }],
  ["request with array params", { jsonrpc: "2.0", id: 1, method: "x", params: [1] }],
  ["request with an extra top-level key", { jsonrpc: "2.0", id: 1, method: "x", extra: true }],
  [
    "request with a bad progress token",
    { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: {} } } },
  ],
  [
    "request with a related task",
    {
      jsonrpc: "2.0",
      id: 1,
      method: "x",
      params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } },
    },
  ],
  [
    "request with a bad related task",
    { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": {} } } },
  ],
  ["notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
  ["notification with null params", { jsonrpc: "2.0", method: "n", params: null }],
  ["result", { jsonrpc: "2.0", id: 2, result: {} }],
  ["result with meta", { jsonrpc: "2.0", id: 2, result: { _meta: { any: 1 }, content: [] } }],
  ["result that is not an object", { jsonrpc: "2.0", id: 2, result: 5 }],
  ["result without id", { jsonrpc: "2.0", result: {} }],
  ["error", { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "nope", data: { x: 1 } } }],
  ["error without id", { jsonrpc: "2.0", error: { code: -32700, message: "parse" } }],
  ["error with a null id", { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse" } }],
  ["error with a fractional code", { jsonrpc: "2.0", id: 3, error: { code: 1.5, message: "x" } }],
  ["error with an extra inner key", { jsonrpc: "2.0", id: 3, error: { code: 1, message: "x", extra: 1 } }],
  ["request with an unsafe integer id", { jsonrpc: "2.0", id: 2 ** 60, method: "x" }],
  ["wrong version", { jsonrpc: "1.0", id: 1, method: "x" }],
  ["batch", [{ jsonrpc: "2.0", id: 1, method: "x" }]],
  ["null", null],
  ["string", "hello"],
];

describe("JSON-RPC messages are accepted exactly as the SDK's JSONRPCMessageSchema accepts them", () => {
  for (const [name, value] of cases) {
    it(name, () => {
      expect(isJsonRpcMessage(value)).toBe(sdkAccepts(value));
    });
  }

  it("agrees on generated messages", () => {
    const id = fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null));
    const message = fc.record(
      {
        jsonrpc: fc.constantFrom("2.0", "2"),
        id,
        method: fc.oneof(fc.string(), fc.integer()),
        params: fc.oneof(fc.object(), fc.constant(null), fc.array(fc.integer())),
        result: fc.oneof(fc.object(), fc.integer()),
        error: fc.record(
          { code: fc.oneof(fc.integer(), fc.double()), message: fc.oneof(fc.string(), fc.integer()) },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(message, (value) => isJsonRpcMessage(value) === sdkAccepts(value)),
      { numRuns: 2000 },
    );
  });
});

describe("server-sent events are parsed as the SSE format defines", () => {
  const parse = async (...chunks: string[]) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
    const events: ServerSentEvent[] = [];
    const parser = new ServerSentEventParser({ onEvent: (event) => events.push(event) });
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) parser.push(chunk);
    return events;
  };

  it("reads event, id, retry and multi-line data, across chunk boundaries and line endings", async () => {
    expect(
      await parse(
        'event: message\nid: 7\nretry: 500\ndata: {"a"',
        ":1}\r\n\r\n",
        ": comment\r",
        "\rdata: x\ndata: y\n\n",
      ),
    ).toEqual([
      { event: "message", id: "7", retry: 500, data: '{"a":1}' },
      { event: undefined, id: "7", retry: undefined, data: "x\ny" },
    ]);
  });

  it("yields a priming event with an id and no data", async () => {
    expect(await parse("id: e1\nretry: 100\ndata: \n\n")).toEqual([
      { event: undefined, id: "e1", retry: 100, data: "" },
    ]);
  });
});
