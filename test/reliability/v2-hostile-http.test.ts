/**
 * Bytes that are not well-formed HTTP, and connections that stall mid-request, on a real socket (integration:
 * node:http's parser and its connections are the subject): the server answers or closes, never hangs, and keeps
 * serving. The handler's answers to hostile requests are fuzzed in-process in v2-hostile-input.test.ts.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { type RawRequest, rawRequest } from "./fixtures/raw-http.js";
import { problemWithReply } from "./fixtures/wire-checks.js";

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0, rateLimit: false });
});
afterAll(async () => {
  await server?.close();
});

function bearer(slug: string): Record<string, string> {
  return { authorization: `Bearer ${server.apiKeys[slug]}` };
}

describe("Malformed HTTP: the server answers or closes, never hangs, and keeps serving", () => {
  const garbage: Array<{ name: string; request: RawRequest }> = [
    { name: "unknown method", request: { method: "FOO", target: "/v2/chats" } },
    { name: "space in the target", request: { method: "GET", target: "/v2/chats/a b" } },
    { name: "absolute-form target", request: { method: "GET", target: "http://evil.example/v2/chats" } },
    { name: "asterisk target", request: { method: "OPTIONS", target: "*" } },
    {
      name: "header without colon",
      request: { method: "GET", target: "/v2/chats", headers: [["Broken", ""]] },
    },
    {
      name: "header with a control character",
      request: { method: "GET", target: "/v2/chats", headers: [["X-Evil", "a\u0001b"]] },
    },
    {
      name: "20 KB header (over Node's 16 KB limit)",
      request: { method: "GET", target: "/v2/chats", headers: [["X-Big", "a".repeat(20_000)]] },
    },
    {
      name: "400 headers",
      request: {
        method: "GET",
        target: "/v2/chats",
        headers: Array.from({ length: 400 }, (_, i): [string, string] => [`X-H${i}`, "v"]),
      },
    },
  ];
  for (const { name, request } of garbage) {
    it(name, async () => {
      const reply = await rawRequest(server.url, request).catch((error: Error) => error);
      if (!(reply instanceof Error)) {
        expect(reply.status).toBeGreaterThanOrEqual(400);
        expect(reply.status).toBeLessThan(500);
        expect(problemWithReply(reply, undefined, request.method)).toBeNull();
      } else {
        // Closing the connection without an answer is acceptable for bytes that are not HTTP; hanging is not.
        expect(reply.message).toMatch(/closed without a response/);
      }
      const after = await fetch(`${server.url}/v2/chats`, { headers: bearer("acme") });
      await after.body?.cancel();
      expect(after.status).toBe(200);
    });
  }
});

describe("Slow clients (half-sent requests) do not block other callers", () => {
  it("50 connections stuck mid-headers, then a normal request is answered", async () => {
    const { hostname, port } = new URL(server.url);
    const stuck = Array.from({ length: 50 }, () => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.on("error", () => {});
      socket.write(`POST /v2/chats HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"mess`);
      return socket;
    });
    try {
      const reply = await rawRequest(server.url, {
        method: "GET",
        target: "/v2/chats?limit=1",
        headers: [["Authorization", `Bearer ${server.apiKeys.acme}`]],
      });
      expect(reply.status).toBe(200);
    } finally {
      for (const socket of stuck) socket.destroy();
    }
  });
});
