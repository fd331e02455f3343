/** The modern upstream against hostile answers: bounded error bodies, streams that break, answers to other ids. */
import { describe, expect, it } from "vitest";
import type { HttpAnswer, HttpExchange } from "../../../src/bridge/upstream/http/http-exchange.js";
import { ModernUpstream } from "../../../src/bridge/upstream/modern.js";

const log = { info() {}, debug() {}, debugEnabled: false };

function answer(status: number, type: string, chunks: () => AsyncIterable<Uint8Array>): HttpAnswer {
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: { get: (name) => (name === "content-type" ? type : null) },
    body: { [Symbol.asyncIterator]: () => chunks()[Symbol.asyncIterator](), cancel: async () => {} },
    text: async () => "",
  };
}

describe("a non-2xx answer with an endless body", () => {
  it("is read only up to its bound, and the request answered with the status", async () => {
    let pulled = 0;
    const exchange: HttpExchange = async () =>
      answer(500, "text/html", async function* () {
        for (;;) {
          pulled++;
          yield new Uint8Array(64 * 1024).fill(65);
        }
      });
    const upstream = new ModernUpstream({ url: new URL("http://127.0.0.1:9/mcp"), exchange, log });
    const result = await upstream.request("tools/list", {});
    expect(result).toMatchObject({ error: { code: -32000 } });
    expect((result as { error: { message: string } }).error.message).toMatch(/HTTP 500/);
    expect(pulled).toBeLessThanOrEqual(2);
  });
});

describe("a response stream that closes before the answer", () => {
  it("is sent again with a new id, and the answer to that id is taken", async () => {
    const ids: string[] = [];
    const exchange: HttpExchange = async (_url, request) => {
      const id = JSON.parse(request.body ?? "{}").id as string;
      ids.push(id);
      const encoder = new TextEncoder();
      return answer(200, "text/event-stream", async function* () {
        if (ids.length === 1) {
          yield encoder.encode(
            `data: ${JSON.stringify({ jsonrpc: "2.0", id: "someone-else", result: {} })}\n\n`,
          );
          return;
        }
        yield encoder.encode(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result: { tools: [] } })}\n\n`);
      });
    };
    const upstream = new ModernUpstream({ url: new URL("http://127.0.0.1:9/mcp"), exchange, log });
    expect(await upstream.request("tools/list", {})).toEqual({ result: { tools: [] } });
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("is not sent again for a call of a tool that may write: the outcome is said to be unknown", async () => {
    let calls = 0;
    const exchange: HttpExchange = async (_url, request) => {
      const body = JSON.parse(request.body ?? "{}");
      if (body.method === "tools/list") {
        const text = JSON.stringify({
          jsonrpc: "2.0",
          id: body.id,
          result: { tools: [{ name: "write", inputSchema: { type: "object" } }] },
        });
        return answer(200, "application/json", async function* () {
          yield new TextEncoder().encode(text);
        });
      }
      calls++;
      return answer(200, "text/event-stream", async function* () {});
    };
    const upstream = new ModernUpstream({ url: new URL("http://127.0.0.1:9/mcp"), exchange, log });
    const result = await upstream.request("tools/call", { name: "write", arguments: {} });
    expect((result as { error: { message: string } }).error.message).toMatch(/not sent again/);
    expect(calls).toBe(1);
  });
});

describe("a JSON answer whose body breaks off (the server killed mid-answer)", () => {
  /** tools/list answers whole; every `tools/call` gets half a JSON body, then the connection breaks. */
  function breakingServer(tool: { name: string; readOnly: boolean }) {
    let calls = 0;
    const exchange: HttpExchange = async (_url, request) => {
      const body = JSON.parse(request.body ?? "{}");
      const encoder = new TextEncoder();
      if (body.method === "tools/list") {
        const text = JSON.stringify({
          jsonrpc: "2.0",
          id: body.id,
          result: {
            tools: [
              {
                name: tool.name,
                inputSchema: { type: "object" },
                annotations: { readOnlyHint: tool.readOnly },
              },
            ],
          },
        });
        return answer(200, "application/json", async function* () {
          yield encoder.encode(text);
        });
      }
      calls++;
      const whole = JSON.stringify({ jsonrpc: "2.0", id: body.id, result: { content: [] } });
      return answer(200, "application/json", async function* () {
        yield encoder.encode(whole.slice(0, 20));
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      });
    };
    /** Lists the tools (so the upstream knows the tool's hints), then calls it: the error message it answers. */
    const callTool = async () => {
      const upstream = new ModernUpstream({ url: new URL("http://127.0.0.1:9/mcp"), exchange, log });
      await upstream.request("tools/list", {});
      const result = await upstream.request("tools/call", { name: tool.name, arguments: {} });
      return (result as { error: { message: string } }).error.message;
    };
    return { callTool, calls: () => calls };
  }

  it("is an unknown outcome for a call of a tool that may write, not a malformed answer", async () => {
    const server = breakingServer({ name: "write", readOnly: false });
    const message = await server.callTool();
    expect(message).toMatch(/not sent again/);
    expect(message).not.toMatch(/not a JSON-RPC response/);
    expect(server.calls()).toBe(1);
  });

  it("is sent again for a read-only tool, as a stream that broke is", async () => {
    const server = breakingServer({ name: "read", readOnly: true });
    const message = await server.callTool();
    expect(message).toMatch(/before answering/);
    expect(server.calls()).toBeGreaterThan(1);
  });
});
