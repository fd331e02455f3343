/** The era probe's verdicts: which answers to `server/discover` are evidence of an era, and which are not. */
import { describe, expect, it } from "vitest";
import type { HttpAnswer, HttpExchange } from "../../../src/bridge/upstream/http/http-exchange.js";
import { ModernUpstream } from "../../../src/bridge/upstream/modern.js";
import { probeServerEra } from "../../../src/bridge/upstream/probe.js";

const log = { info() {}, debug() {}, debugEnabled: false };

function answer(status: number, type: string, text: string): HttpAnswer {
  const bytes = new TextEncoder().encode(text);
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: { get: (name) => (name === "content-type" ? type : null) },
    body: {
      async *[Symbol.asyncIterator]() {
        yield bytes;
      },
      cancel: async () => {},
    },
    text: async () => text,
  };
}

function probeAgainst(status: number, type: string, body: (id: string) => string) {
  const exchange: HttpExchange = async (_url, request) => {
    const { id } = JSON.parse(request.body ?? "{}") as { id: string };
    return answer(status, type, body(id));
  };
  return probeServerEra(new ModernUpstream({ url: new URL("http://127.0.0.1:9/mcp"), exchange, log }));
}

describe("evidence of an era", () => {
  it("a DiscoverResult means modern", async () => {
    const verdict = await probeAgainst(200, "application/json", (id) =>
      JSON.stringify({ jsonrpc: "2.0", id, result: { supportedVersions: ["2026-07-28"], capabilities: {} } }),
    );
    expect(verdict.era).toBe("modern");
  });

  it("method not found, or a plain 400/404/405, means legacy", async () => {
    const methodNotFound = await probeAgainst(200, "application/json", (id) =>
      JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } }),
    );
    expect(methodNotFound).toEqual({ era: "legacy" });
    for (const status of [400, 404, 405]) {
      expect(await probeAgainst(status, "text/plain", () => "no")).toEqual({ era: "legacy" });
    }
  });
});

describe("not evidence: the probe cannot tell, so nothing is remembered", () => {
  it.each([500, 502, 503, 504, 429])("HTTP %i without a JSON-RPC error rejects", async (status) => {
    await expect(probeAgainst(status, "text/html", () => "<h1>Bad gateway</h1>")).rejects.toThrow(
      new RegExp(`HTTP ${status}`),
    );
  });

  it("HTTP 500 carrying a JSON-RPC internal error rejects", async () => {
    await expect(
      probeAgainst(500, "application/json", (id) =>
        JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: "Internal error" } }),
      ),
    ).rejects.toThrow(/no usable answer \(Internal error\)/);
  });

  it("HTTP 401 rejects (a sign-in is not an era)", async () => {
    await expect(probeAgainst(401, "text/plain", () => "")).rejects.toThrow(/401/);
  });
});

describe("not evidence: no answer at all", () => {
  it("a refused connection rejects (a server that is down is no legacy server)", async () => {
    const exchange: HttpExchange = async () => {
      throw new TypeError("fetch failed", {
        cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }),
      });
    };
    const upstream = new ModernUpstream({ url: new URL("http://127.0.0.1:9/mcp"), exchange, log });
    await expect(probeServerEra(upstream)).rejects.toThrow(/cannot reach/);
  });

  it("a response stream that broke before the answer rejects", async () => {
    const exchange: HttpExchange = async () => {
      throw new TypeError("terminated");
    };
    const upstream = new ModernUpstream({ url: new URL("http://127.0.0.1:9/mcp"), exchange, log });
    await expect(probeServerEra(upstream)).rejects.toThrow(/before answering|may or may not/);
  });
});
