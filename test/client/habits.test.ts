/** The habits of the best generated SDKs, through the public exports: APIPromise, _requestId, the logger, idempotency keys. */
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ClientTestOptions } from "../../src/client/client.js";
import {
  APIPromise,
  ChatClient,
  ChatConnectionError,
  ConflictError,
  type FetchLike,
  type Logger,
  Page,
} from "../../src/index.js";
import { createChatHandlers } from "../../src/testing/index.js";

const BASE = "http://habits.test";
const service = createChatHandlers({ baseUrl: BASE });
const server = setupServer(...service.handlers);
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => service.reset());
afterAll(() => server.close());

const TOKEN = service.apiKeys.acme!;
const client = (options: ClientTestOptions = {}) =>
  new ChatClient({
    baseUrl: BASE,
    token: TOKEN,
    logLevel: "off",
    sleep: async () => {},
    ...options,
  } as ClientTestOptions);

/** A logger that keeps every line it is given, at every level. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep =
    (level: string) =>
    (message: string, ...rest: unknown[]) => {
      lines.push(`${level} ${message} ${rest.map((value) => JSON.stringify(value)).join(" ")}`);
    };
  return { lines, debug: keep("debug"), info: keep("info"), warn: keep("warn"), error: keep("error") };
}

/** The platform fetch (msw answers it) whose first POST's answer is lost after the service handled it. */
function losingFirstPostAnswer(): { fetch: FetchLike; lost: () => number } {
  let lost = 0;
  return {
    lost: () => lost,
    fetch: async (input, init) => {
      const answer = await globalThis.fetch(input, init);
      const method = input instanceof Request ? input.method : (init?.method ?? "GET");
      if (method === "POST" && lost === 0) {
        lost += 1;
        await answer.arrayBuffer();
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }),
        });
      }
      return answer;
    },
  };
}

describe("APIPromise: every method", () => {
  it("awaited gives the parsed result, with _requestId (the answer's x-request-id) not enumerable", async () => {
    const call = client().createChat({ message: "hello" });
    expect(call).toBeInstanceOf(APIPromise);
    expect(call).toBeInstanceOf(Promise);
    const chat = await call;
    expect(chat.id).toMatch(/^chat_/);
    expect(chat._requestId).toMatch(/^req_/);
    expect(Object.keys(chat)).not.toContain("_requestId");
    expect(JSON.stringify(chat)).not.toContain("_requestId");
    expect({ ...chat }).not.toHaveProperty("_requestId");
  });

  it(".withResponse() gives { data, response, requestId }", async () => {
    const { data, response, requestId } = await client().createChat({ message: "hello" }).withResponse();
    expect(response.status).toBe(201);
    expect(requestId).toBe(response.headers.get("x-request-id"));
    expect(data._requestId).toBe(requestId);
    expect(data.object).toBe("chat");
  });

  it(".asResponse() gives the raw Response with its body unread", async () => {
    const created = await client().createChat({ message: "hello" });
    const response = await client().getChat(created.id).asResponse();
    expect(response.status).toBe(200);
    expect(response.bodyUsed).toBe(false);
    expect(((await response.json()) as { id: string }).id).toBe(created.id);
  });

  it("errors reject every form alike with the typed error", async () => {
    const call = client().getChat("chat_missing");
    await expect(call).rejects.toMatchObject({ status: 404 });
    await expect(call.withResponse()).rejects.toMatchObject({ status: 404 });
    await expect(call.asResponse()).rejects.toMatchObject({ status: 404 });
  });

  it("a flow helper's promise is the APIPromise of its last call (the resolve)", async () => {
    const chat = await client().createChat({ message: "I need a database" });
    const { data, response } = await client().confirmIntegrations(chat.id).withResponse();
    expect(response.status).toBe(200);
    expect(data._requestId).toBe(response.headers.get("x-request-id"));
  });
});

describe("Pages: an APIPromise that is also async-iterable", () => {
  it("await gives the first page; for await walks every item of every page; withResponse gives the first answer", async () => {
    const c = client();
    for (const n of [1, 2, 3]) await c.createChat({ message: `chat ${n}` });
    const first = await c.listChats({ limit: 1 });
    expect(first).toBeInstanceOf(Page);
    expect(first.data).toHaveLength(1);
    expect(first._requestId).toMatch(/^req_/);
    expect(JSON.stringify(first)).not.toContain("_requestId");
    const seen: string[] = [];
    for await (const chat of c.listChats({ limit: 1 })) seen.push(chat.title ?? "");
    expect(seen).toHaveLength(3);
    const { data, response } = await c.listChats({ limit: 2 }).withResponse();
    expect(response.status).toBe(200);
    expect(data.data).toHaveLength(2);
    expect((await c.listMessages(first.data[0]!.id).asResponse()).bodyUsed).toBe(false);
  });
});

describe("Idempotency keys through the msw handlers of chat-mcp-bridge/testing", () => {
  it("the same key twice: one chat, the first answer again", async () => {
    const c = client();
    const first = await c.createChat({ message: "once" }, { idempotencyKey: "key-once" });
    const again = await c.createChat({ message: "once" }, { idempotencyKey: "key-once" });
    expect(again.id).toBe(first.id);
    const all = await c.listChats();
    expect(all.data.filter((chat) => chat.id === first.id)).toHaveLength(1);
    expect(all.data).toHaveLength(1);
  });

  it("the same key with another body: 409 idempotency_key_reused (a ConflictError), nothing changed", async () => {
    const c = client();
    await c.createChat({ message: "first" }, { idempotencyKey: "key-reused" });
    const reused = c.createChat({ message: "second" }, { idempotencyKey: "key-reused" });
    await expect(reused).rejects.toBeInstanceOf(ConflictError);
    await expect(reused).rejects.toMatchObject({ status: 409, code: "idempotency_key_reused" });
    expect((await c.listChats()).data).toHaveLength(1);
  });

  it("keys are per account: another account's same key runs its own request", async () => {
    await client().createChat({ message: "acme" }, { idempotencyKey: "shared" });
    const other = new ChatClient({ baseUrl: BASE, token: service.apiKeys.personal!, logLevel: "off" });
    const theirs = await other.createChat({ message: "personal" }, { idempotencyKey: "shared" });
    expect(theirs.title).toBeDefined();
    expect((await other.listChats()).data).toHaveLength(1);
  });

  it("an answer lost after the service created the chat: the retry gets it, one chat exists", async () => {
    const faulty = losingFirstPostAnswer();
    const c = client({ fetch: faulty.fetch });
    const chat = await c.createChat({ message: "lost once" });
    expect(faulty.lost()).toBe(1);
    const all = await client().listChats();
    expect(all.data.map((listed) => listed.id)).toEqual([chat.id]);
  });

  it("with no retry left, the error says the request was sent and may have run, and names the key", async () => {
    const faulty = losingFirstPostAnswer();
    const c = client({ fetch: faulty.fetch, maxRetries: 0 });
    const error = await c.createChat({ message: "lost" }, { idempotencyKey: "key-lost" }).catch((e) => e);
    expect(error).toBeInstanceOf(ChatConnectionError);
    expect(error.requestSent).toBe(true);
    expect(error.message).toMatch(
      /the connection was lost after the request was sent; it may have been processed/,
    );
    expect(error.message).toContain('"key-lost"');
    expect(error.message).not.toMatch(/could not reach|Check that the service runs/);
    // Sent again with its key, the call gets the first answer: still one chat.
    const again = await client().createChat({ message: "lost" }, { idempotencyKey: "key-lost" });
    expect((await client().listChats()).data.map((chat) => chat.id)).toEqual([again.id]);
  });
});

describe("The logger", () => {
  it("at debug logs each request and answer: method, URL, status, request id, time, retry", async () => {
    const logger = recordingLogger();
    const chat = await client({ logger, logLevel: "debug" }).createChat({ message: "hello" });
    const text = logger.lines.join("\n");
    expect(text).toMatch(/debug -> POST http:\/\/habits\.test\/v2\/chats \(retry 0, idempotency key cmb-/);
    expect(text).toMatch(
      /debug <- POST http:\/\/habits\.test\/v2\/chats 201 in \d+ ms \(request id req_[\w-]+, retry 0\)/,
    );
    expect(text).toContain(chat._requestId);
  });

  it("logs each retry at info", async () => {
    const logger = recordingLogger();
    const faulty = losingFirstPostAnswer();
    await client({ logger, logLevel: "info", fetch: faulty.fetch }).createChat({ message: "hello" });
    expect(logger.lines.join("\n")).toMatch(
      /info POST \/v2\/chats: retry 1 of 2 in \d+ ms after a lost connection \(same idempotency key cmb-/,
    );
    expect(logger.lines.every((line) => line.startsWith("info"))).toBe(true);
  });

  it("defaults to $CHAT_LOG, else warn (nothing for a successful call)", async () => {
    const quiet = recordingLogger();
    await new ChatClient({ baseUrl: BASE, token: TOKEN, logger: quiet }).listChats();
    expect(quiet.lines).toEqual([]);
    const saved = process.env.CHAT_LOG;
    process.env.CHAT_LOG = "debug";
    try {
      const loud = recordingLogger();
      await new ChatClient({ baseUrl: BASE, token: TOKEN, logger: loud }).listChats();
      expect(loud.lines.length).toBeGreaterThan(0);
    } finally {
      if (saved === undefined) delete process.env.CHAT_LOG;
      else process.env.CHAT_LOG = saved;
    }
    expect(() => new ChatClient({ baseUrl: BASE, logLevel: "loud" as never })).toThrow(/logLevel "loud"/);
  });

  it("never logs a token, an API key or a body: not in URLs, queries or failures", async () => {
    const logger = recordingLogger();
    const secretBody = "the body is private 8f1c";
    const secretTopic = "topic-private-77a2";
    const bearer = "eyJhbGciOiJIUzI1NiJ9.oauth-access-token-secret";
    const c = new ChatClient({
      // User info in the base URL is a credential too.
      baseUrl: BASE.replace("http://", "http://user:base-url-password@"),
      token: TOKEN,
      headers: { "x-api-key": "header-secret-3d9e" },
      logger,
      logLevel: "debug",
      sleep: async () => {},
    } as ClientTestOptions);
    await c.createChat({ message: secretBody }).catch(() => undefined);
    const plain = client({ logger, logLevel: "debug", headers: { "x-api-key": "header-secret-3d9e" } });
    await plain.createChat({ message: secretBody });
    await plain.listChats({ topic: secretTopic });
    // A failing call (a lost answer on each attempt) and a refused credential.
    const failing = new ChatClient({
      baseUrl: BASE,
      token: bearer,
      logger,
      logLevel: "debug",
      sleep: async () => {},
      fetch: async (input, init) => {
        await globalThis.fetch(input, init);
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error(`reset while sending Bearer ${bearer} ${secretBody}`), {
            code: "ECONNRESET",
          }),
        });
      },
    } as ClientTestOptions);
    await failing.sendMessage("chat_x", { message: secretBody }).catch(() => undefined);
    await new ChatClient({ baseUrl: BASE, token: bearer, logger, logLevel: "debug" })
      .getChat("chat_x")
      .catch(() => undefined);
    const text = logger.lines.join("\n");
    expect(logger.lines.length).toBeGreaterThan(8);
    for (const secret of [TOKEN, bearer, secretBody, secretTopic, "base-url-password", "header-secret-3d9e"])
      expect(text).not.toContain(secret);
    expect(text).toContain("?topic=…");
    expect(text).toMatch(/ECONNRESET/);
  });
});
