/** Limits and tenancy under attack: oversized and compressed bodies (413), a flood past the rate limit (429, then recovery), and one team's credential on another team's chats (404). */
import { deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { ErrorBodySchema } from "../../src/wire/index.js";
import { Browser } from "../server/helpers.js";
import {
  WrittenChatSchema as ChatSchema,
  WrittenMessageSchema as MessageSchema,
} from "../server/written-shapes.js";
import { rawRequest } from "./fixtures/raw-http.js";
import { problemWithReply, snapshotAccount } from "./fixtures/wire-checks.js";

const MIB = 1024 * 1024;

async function call(server: ReferenceServer, slug: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.apiKeys[slug]}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
}

describe("Oversized bodies: 413 payload_too_large, the connection is answered and the server keeps serving", () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startReferenceServer({ port: 0, rateLimit: false });
  });
  afterAll(() => server.close());

  const acme = () => [["Authorization", `Bearer ${server.apiKeys.acme}`] as [string, string]];
  const bigJson = (bytes: number) => JSON.stringify({ message: "x".repeat(bytes) });

  it("a 5 MiB JSON body on create, send and resolve", async () => {
    const chat = ChatSchema.parse((await call(server, "acme", "POST", "/v2/chats", { message: "hi" })).body);
    for (const path of [
      "/v2/chats",
      `/v2/chats/${chat.id}/messages`,
      `/v2/chats/${chat.id}/messages/resolve`,
    ]) {
      const reply = await rawRequest(server.url, {
        method: "POST",
        target: path,
        headers: [...acme(), ["Content-Type", "application/json"]],
        body: bigJson(5 * MIB),
      });
      expect(problemWithReply(reply, undefined, "POST")).toBeNull();
      expect(reply.status).toBe(413);
    }
  });

  it("a body just over 1 MiB is refused; one just under is read", async () => {
    const over = await call(server, "acme", "POST", "/v2/chats", { message: "x".repeat(MIB) });
    expect(over.status).toBe(413);
    expect(ErrorBodySchema.parse(over.body).error.code).toBe("payload_too_large");
    // Under the byte limit but over the message length limit: read, then refused by the schema (400), not 413.
    const under = await call(server, "acme", "POST", "/v2/chats", { message: "x".repeat(MIB - 100) });
    expect(under.status).toBe(400);
  });

  it("a compressed body that inflates past 1 MiB (gzip and deflate bombs)", async () => {
    for (const [encoding, compress] of [
      ["gzip", gzipSync],
      ["deflate", deflateSync],
    ] as const) {
      const bomb = compress(Buffer.from(bigJson(20 * MIB)));
      expect(bomb.length).toBeLessThan(MIB);
      const reply = await rawRequest(server.url, {
        method: "POST",
        target: "/v2/chats",
        headers: [...acme(), ["Content-Type", "application/json"], ["Content-Encoding", encoding]],
        body: bomb,
      });
      expect(problemWithReply(reply, undefined, "POST")).toBeNull();
      expect(reply.status).toBe(413);
    }
  });

  it("a chunked body without Content-Length that grows past 1 MiB", async () => {
    const { connect } = await import("node:net");
    const { hostname, port } = new URL(server.url);
    const reply = await new Promise<string>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port) });
      let received = "";
      socket.on("data", (chunk) => {
        received += chunk.toString("latin1");
      });
      socket.on("error", () => {});
      socket.on("close", () => resolve(received));
      socket.write(
        `POST /v2/chats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.apiKeys.acme}\r\n` +
          "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      );
      const chunk = "a".repeat(64 * 1024);
      // Bounded: 40 chunks of 64 KiB (2.5 MiB); the server answers 413 before the end.
      for (let i = 0; i < 40 && !socket.destroyed; i++) {
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      }
      socket.write("0\r\n\r\n");
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply).toContain('"payload_too_large"');
  });

  it("nothing of the refused bodies was stored, and the server still answers", async () => {
    const chats = await snapshotAccount(server, "acme");
    expect(
      [...chats.values()].every((chat) => chat.messages.every((m) => (m.content ?? "").length < MIB)),
    ).toBe(true);
    expect((await call(server, "acme", "GET", "/v2/chats")).status).toBe(200);
  });
});

describe("A flood past the rate limit: 429 rate_limited with Retry-After, nothing stored, then recovery", () => {
  let server: ReferenceServer;
  /** How far the clock the rate limiter reads (Date.now, taken when the server starts) has been moved on. */
  let movedOnMs = 0;
  beforeAll(async () => {
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + movedOnMs);
    server = await startReferenceServer({ port: 0, rateLimit: { capacity: 5, refillPerSecond: 1 } });
  });
  afterAll(async () => {
    await server.close();
    vi.restoreAllMocks();
  });

  it("60 concurrent creates: the excess is refused with Retry-After and only the accepted ones exist", async () => {
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        call(server, "acme", "POST", "/v2/chats", { message: `flood ${i}` }),
      ),
    );
    const accepted = replies.filter((reply) => reply.status === 201);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(accepted.length + refused.length).toBe(replies.length);
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const reply of refused) {
      expect(ErrorBodySchema.parse(reply.body).error.code).toBe("rate_limited");
      expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(Number.isInteger(Number(reply.headers.get("retry-after")))).toBe(true);
    }

    // Other credentials are not starved by acme's flood.
    expect((await call(server, "personal", "GET", "/v2/chats")).status).toBe(200);

    // After waiting what Retry-After says, acme is served again.
    const lastRefusal = await call(server, "acme", "GET", "/v2/chats");
    const waitSeconds = lastRefusal.status === 429 ? Number(lastRefusal.headers.get("retry-after")) : 0;
    movedOnMs += waitSeconds * 1000 + 50;
    const recovered = await call(server, "acme", "GET", "/v2/chats?limit=100");
    expect(recovered.status).toBe(200);
    const titles = recovered.body.data.map((chat: { title: string }) => chat.title).sort();
    expect(titles).toEqual(accepted.map((reply) => ChatSchema.parse(reply.body).title).sort());
  });
});

describe("A token for team A on team B's chats: 404 not_found on every route, and B's chats are untouched", () => {
  let server: ReferenceServer;
  let acmeChatId: string;
  let acmeMessageId: string;
  beforeAll(async () => {
    server = await startReferenceServer({ port: 0, rateLimit: false });
    const chat = ChatSchema.parse(
      (await call(server, "acme", "POST", "/v2/chats", { message: "Add a DATABASE, codename zebra" })).body,
    );
    acmeChatId = chat.id;
    const latest = (await call(server, "acme", "GET", `/v2/chats/${chat.id}/messages?limit=1`)).body;
    acmeMessageId = MessageSchema.parse(latest.data[0]).id;
  });
  afterAll(() => server.close());

  const requests = () =>
    [
      ["GET", `/v2/chats/${acmeChatId}`],
      ["GET", `/v2/chats/${acmeChatId}/messages`],
      ["GET", `/v2/chats/${acmeChatId}/messages/${acmeMessageId}`],
      ["GET", `/v2/chats/${acmeChatId}/preview`],
      ["POST", `/v2/chats/${acmeChatId}/messages`, { message: "hijack" }],
      [
        "POST",
        `/v2/chats/${acmeChatId}/messages/resolve`,
        { task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] } },
      ],
    ] as const;

  for (const intruder of ["personal", "studio", "secure-corp"]) {
    it(`${intruder}'s API key gets exactly what a chat that does not exist gets`, async () => {
      const before = await snapshotAccount(server, "acme");
      for (const [method, path, body] of requests()) {
        const reply = await call(server, intruder, method, path, body);
        // secure-corp must pass SSO first; its refusal comes before any lookup, so it leaks nothing either.
        const expectedStatus = intruder === "secure-corp" ? 403 : 404;
        expect(reply.status, `${method} ${path}`).toBe(expectedStatus);
        expect(reply.text).not.toContain("zebra");
        if (expectedStatus === 404) {
          const missing = await call(
            server,
            intruder,
            method,
            path.replace(acmeChatId, "chat_doesnotexist"),
            body,
          );
          expect(missing.status).toBe(404);
          expect(reply.body.error.code).toBe(missing.body.error.code);
        }
      }
      const list = await call(server, intruder, "GET", "/v2/chats?topic=zebra");
      if (list.status === 200) expect(list.body.data).toEqual([]);
      expect(await snapshotAccount(server, "acme")).toEqual(before);
    });
  }

  it("a message id of team A's chat under team B's own chat is 404", async () => {
    const own = ChatSchema.parse(
      (await call(server, "personal", "POST", "/v2/chats", { message: "mine" })).body,
    );
    const reply = await call(server, "personal", "GET", `/v2/chats/${own.id}/messages/${acmeMessageId}`);
    expect(reply.status).toBe(404);
    expect(reply.text).not.toContain("zebra");
  });

  it("the chat's page and preview are not shown to a signed-in person outside the team", async () => {
    const chat = ChatSchema.parse((await call(server, "acme", "GET", `/v2/chats/${acmeChatId}`)).body);
    const outsider = new Browser(server.url);
    await outsider.signIn("guest", "guest");
    for (const url of [chat.url, `${chat.url}/preview`]) {
      const page = await outsider.get(url);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain("zebra");
    }
    const anonymous = await new Browser(server.url).get(chat.url);
    expect(anonymous.text).not.toContain("zebra");
  });
});
