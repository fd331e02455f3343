/**
 * Limits and tenancy under attack, on the reference server's handler in-process: oversized, compressed and endless
 * bodies (413), a flood past the rate limit (429, then recovery), and one team's credential on another team's chats
 * (404). The same refusals on a real connection (node:http answering before the body is read) are in
 * v2-limits-over-socket.test.ts.
 */
import { once } from "node:events";
import { createDeflate, createGzip } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ErrorBodySchema } from "../../src/wire/index.js";
import { Browser } from "../server/helpers.js";
import {
  WrittenChatSchema as ChatSchema,
  WrittenMessageSchema as MessageSchema,
} from "../server/written-shapes.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../support/reference-request.js";
import { problemWithReply, snapshotAccount } from "./fixtures/wire-checks.js";

const MIB = 1024 * 1024;

async function replyOf(response: Response) {
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function call(
  server: RequestableReferenceServer,
  slug: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const reply = await replyOf(
    await server.request(path, {
      method,
      headers: {
        authorization: `Bearer ${server.apiKeys[slug]}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  return { status: reply.status, headers: reply.headers, text: reply.body, body: JSON.parse(reply.body) };
}

/**
 * `{"message":"xxx..."}` with `bytes` x's, compressed as it is made: the same bytes as compressing
 * `JSON.stringify({ message: "x".repeat(bytes) })`, without building a 20 MiB string first.
 */
async function compressedJson(format: "gzip" | "deflate", bytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const stream = format === "gzip" ? createGzip() : createDeflate();
  const output: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => output.push(chunk));
  const ended = once(stream, "end");
  stream.write('{"message":"');
  const chunk = Buffer.alloc(64 * 1024, "x");
  for (let left = bytes; left > 0; left -= chunk.length)
    stream.write(left >= chunk.length ? chunk : chunk.subarray(0, left));
  stream.end('"}');
  await ended;
  return new Uint8Array(Buffer.concat(output));
}

describe("Oversized bodies: 413 payload_too_large, and the server keeps serving", () => {
  let server: RequestableReferenceServer;
  beforeAll(() => {
    server = createRequestableReferenceServer({ rateLimit: false });
  });
  afterAll(() => server.close());

  const acme = () => ({ authorization: `Bearer ${server.apiKeys.acme}`, "content-type": "application/json" });
  /** `JSON.stringify({ message: "x".repeat(bytes) })` as bytes, without escaping 5 MiB that needs none. */
  const bigJson = (bytes: number) => Buffer.from(`{"message":"${"x".repeat(bytes)}"}`);

  it("a 5 MiB JSON body on create, send and resolve, its length declared or not", async () => {
    const chat = ChatSchema.parse((await call(server, "acme", "POST", "/v2/chats", { message: "hi" })).body);
    const body = bigJson(5 * MIB);
    for (const path of [
      "/v2/chats",
      `/v2/chats/${chat.id}/messages`,
      `/v2/chats/${chat.id}/messages/resolve`,
    ]) {
      // Declared: refused before reading, as node:http hands the header on; undeclared: refused once 1 MiB is read.
      for (const declared of [true, false]) {
        const headers = { ...acme(), ...(declared ? { "content-length": String(body.length) } : {}) };
        const reply = await replyOf(await server.request(path, { method: "POST", headers, body }));
        expect(problemWithReply(reply, undefined, "POST")).toBeNull();
        expect(reply.status).toBe(413);
      }
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
    for (const encoding of ["gzip", "deflate"] as const) {
      const bomb = await compressedJson(encoding, 20 * MIB);
      expect(bomb.length).toBeLessThan(MIB);
      const reply = await replyOf(
        await server.request("/v2/chats", {
          method: "POST",
          headers: { ...acme(), "content-encoding": encoding, "content-length": String(bomb.length) },
          body: bomb,
        }),
      );
      expect(problemWithReply(reply, undefined, "POST")).toBeNull();
      expect(reply.status).toBe(413);
    }
  });

  it("a streamed body without Content-Length that grows past 1 MiB: refused, and not read to its end", async () => {
    const chunk = new TextEncoder().encode("a".repeat(64 * 1024));
    let sent = 0;
    // Bounded: 40 chunks of 64 KiB (2.5 MiB), each made only when the server reads on.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 40) controller.close();
        else {
          sent += 1;
          controller.enqueue(chunk);
        }
      },
    });
    const reply = await replyOf(
      await server.request("/v2/chats", {
        method: "POST",
        headers: acme(),
        body,
        duplex: "half",
      } as RequestInit),
    );
    expect(reply.status).toBe(413);
    expect(reply.body).toContain('"payload_too_large"');
    expect(sent).toBeLessThan(40);
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
  let server: RequestableReferenceServer;
  /** How far the clock the rate limiter reads (Date.now, taken when the server starts) has been moved on. */
  let movedOnMs = 0;
  beforeAll(() => {
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + movedOnMs);
    server = createRequestableReferenceServer({ rateLimit: { capacity: 5, refillPerSecond: 1 } });
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
  let server: RequestableReferenceServer;
  let acmeChatId: string;
  let acmeMessageId: string;
  beforeAll(async () => {
    server = createRequestableReferenceServer({ rateLimit: false });
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
    const outsider = new Browser(server);
    await outsider.signIn("guest", "guest");
    for (const url of [chat.url, `${chat.url}/preview`]) {
      const page = await outsider.get(url);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain("zebra");
    }
    const anonymous = await new Browser(server).get(chat.url);
    expect(anonymous.text).not.toContain("zebra");
  });
});
