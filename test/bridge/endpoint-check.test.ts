/** sendInitialize (src/bridge/upstream/http/endpoint-check.ts): the one unauthenticated `initialize` the relay's URL check and doctor send. */
import { describe, expect, it } from "vitest";
import { probeEndpoint, sendInitialize } from "../../src/bridge/upstream/http/endpoint-check.js";
import type { HttpAnswer, HttpExchange, HttpRequest } from "../../src/bridge/upstream/http/http-exchange.js";

/** An exchange answering each request with the next status and headers, and the requests it saw. */
function scriptedExchange(answers: { status: number; headers?: Record<string, string> }[]) {
  const seen: HttpRequest[] = [];
  let cancelled = 0;
  const exchange: HttpExchange = async (_url, request) => {
    seen.push(request);
    const { status, headers = {} } = answers.shift() ?? { status: 500 };
    const answer: HttpAnswer = {
      status,
      ok: status >= 200 && status < 300,
      headers: new Headers(headers),
      body: {
        async *[Symbol.asyncIterator]() {
          yield new TextEncoder().encode("{}");
        },
        async cancel() {
          cancelled += 1;
        },
      },
      text: async () => "{}",
    };
    return answer;
  };
  return { exchange, seen, cancelledBodies: () => cancelled };
}

const URL_ = new URL("http://127.0.0.1:9/mcp");

describe("sendInitialize", () => {
  it("POSTs initialize with the caller's headers and clientInfo, and does not read the body", async () => {
    const { exchange, seen, cancelledBodies } = scriptedExchange([{ status: 401 }]);
    const answer = await sendInitialize(URL_, exchange, {
      headers: { "x-tenant": "acme" },
      clientInfo: { name: "chat-mcp-bridge-doctor", version: "1" },
    });
    expect(answer.status).toBe(401);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers["x-tenant"]).toBe("acme");
    expect(JSON.parse(seen[0]?.body ?? "")).toMatchObject({
      method: "initialize",
      params: { clientInfo: { name: "chat-mcp-bridge-doctor", version: "1" } },
    });
    expect(cancelledBodies()).toBe(1);
  });

  it("ends the session it opened with the same headers, whatever the answer looked like", async () => {
    const { exchange, seen } = scriptedExchange([
      { status: 200, headers: { "content-type": "text/html", "mcp-session-id": "s-1" } },
      { status: 204 },
    ]);
    await sendInitialize(URL_, exchange, { headers: { "x-tenant": "acme" } });
    expect(seen.map((request) => request.method)).toEqual(["POST", "DELETE"]);
    expect(seen[1]?.headers).toMatchObject({ "mcp-session-id": "s-1", "x-tenant": "acme" });
  });

  it("probeEndpoint takes a JSON answer for an MCP endpoint and an HTML one for none", async () => {
    const json = scriptedExchange([{ status: 200, headers: { "content-type": "application/json" } }]);
    expect(await probeEndpoint(URL_, json.exchange)).toEqual({ isMcp: true, status: 200 });
    const html = scriptedExchange([{ status: 200, headers: { "content-type": "text/html" } }]);
    expect(await probeEndpoint(URL_, html.exchange)).toEqual({ isMcp: false, status: 200 });
  });
});
