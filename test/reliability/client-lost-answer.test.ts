/**
 * ChatClient and chat-cli against the real reference server behind a fault proxy: an answer lost after the server
 * acted, a gateway's 502s, a retry that arrives while the first attempt still runs, a key reused with another body.
 * Each write runs once; the caller gets its answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.js";
import { ChatClient, ConflictError, type Logger } from "../../src/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { recordingIo } from "../cli/helpers.js";
import { type FaultProxy, startFaultProxy } from "./fixtures/fault-proxy.js";

let server: ReferenceServer;
let proxy: FaultProxy;
let key: string;

beforeAll(async () => {
  server = await startReferenceServer({ port: 0 });
  proxy = await startFaultProxy();
  proxy.setTarget(server.url);
  key = server.apiKeys.acme!;
});
afterAll(async () => {
  await proxy?.close();
  await server?.close();
});

/** What the server holds, read past the proxy. */
const direct = () => new ChatClient({ baseUrl: server.url, token: key, logLevel: "off" });
const viaProxy = (options: { logger?: Logger } = {}) =>
  new ChatClient({ baseUrl: proxy.url, token: key, logLevel: options.logger ? "debug" : "off", ...options });

async function chatsTitled(message: string) {
  const found = [];
  for await (const chat of direct().listChats({ topic: message })) found.push(chat);
  return found;
}

describe("POST /v2/chats whose answer is lost after the server created the chat", () => {
  it("succeeds, and exactly one chat exists", async () => {
    proxy.swallowNextPostAnswers("/v2/chats", 1);
    const before = proxy.postsForwarded("/v2/chats");
    const chat = await viaProxy().createChat({ message: "lost-answer-create 1f2e" });
    expect(proxy.postsForwarded("/v2/chats") - before).toBe(2);
    const found = await chatsTitled("lost-answer-create 1f2e");
    expect(found.map((c) => c.id)).toEqual([chat.id]);
  });
});

describe("A gateway answering 502 twice, then passing", () => {
  it("sendMessage succeeds and the message was sent once", async () => {
    const chat = await direct().createChat({ message: "gateway chat" });
    const path = `/v2/chats/${chat.id}/messages`;
    proxy.answerNextPosts(path, 502, 2);
    const reply = await viaProxy().sendMessage(chat.id, { message: "through two 502s" });
    expect(reply.role).toBe("assistant");
    expect(proxy.postsForwarded(path)).toBe(1);
    const page = await direct().listMessages(chat.id, { limit: 100 });
    expect(page.data.filter((m) => m.role === "user" && m.content === "through two 502s")).toHaveLength(1);
  });
});

describe("The same key with another body", () => {
  it("is refused: 409 idempotency_key_reused, a ConflictError, and nothing is created", async () => {
    const client = viaProxy();
    await client.createChat({ message: "reuse-key first" }, { idempotencyKey: "reused-key-1" });
    const second = client.createChat({ message: "reuse-key second" }, { idempotencyKey: "reused-key-1" });
    await expect(second).rejects.toBeInstanceOf(ConflictError);
    await expect(second).rejects.toMatchObject({ status: 409, code: "idempotency_key_reused" });
    expect(await chatsTitled("reuse-key second")).toEqual([]);
  });

  it("the same key and body again gets the first answer, marked replayed", async () => {
    const client = viaProxy();
    const first = await client.createChat({ message: "replay me" }, { idempotencyKey: "replay-key-1" });
    const { data, response } = await client
      .createChat({ message: "replay me" }, { idempotencyKey: "replay-key-1" })
      .withResponse();
    expect(response.status).toBe(201);
    expect(response.headers.get("idempotent-replayed")).toBe("true");
    expect(data.id).toBe(first.id);
  });
});

describe("Every /v2 answer carries x-request-id", () => {
  it("on success, on errors, on a replay", async () => {
    const answers = await Promise.all([
      fetch(`${server.url}/v2/chats`, { headers: { authorization: `Bearer ${key}` } }),
      fetch(`${server.url}/v2/chats`),
      fetch(`${server.url}/v2/chats/nope`, { headers: { authorization: `Bearer ${key}` } }),
      fetch(`${server.url}/v2/nothing`, { method: "POST", headers: { authorization: `Bearer ${key}` } }),
    ]);
    for (const answer of answers) expect(answer.headers.get("x-request-id")).toMatch(/^req_/);
  });
});

describe("A retry that arrives while the first attempt still runs", () => {
  it("waits for the first and gets its answer: one chat", async () => {
    const slow = await startReferenceServer({ port: 0, assistantDelayMs: 1500 });
    try {
      const slowKey = slow.apiKeys.acme!;
      const client = new ChatClient({ baseUrl: slow.url, token: slowKey, logLevel: "off", maxRetries: 3 });
      // The first attempt times out while the assistant works; its retry (same key) waits for the first's answer.
      const chat = await client.createChat({ message: "slow one" }, { timeoutMs: 700 });
      const all = await new ChatClient({ baseUrl: slow.url, token: slowKey, logLevel: "off" }).listChats();
      expect(all.data.map((c) => c.id)).toEqual([chat.id]);
    } finally {
      await slow.close();
    }
  }, 30_000);
});

describe("chat-cli create, send and resolve survive a lost answer; --debug shows each request with its id", () => {
  it("each command succeeds once, and the log names requests without the token", async () => {
    const cli = async (...args: string[]) => {
      const io = recordingIo();
      const code = await run(["--base-url", proxy.url, "--token", key, "--json", "--debug", ...args], io);
      return { code, io };
    };
    proxy.swallowNextPostAnswers("/v2/chats", 1);
    const created = await cli("create", "cli lost answer: I need a database");
    expect(created.code).toBe(0);
    const chat = JSON.parse(created.io.out) as { id: string };
    expect((await chatsTitled("cli lost answer")).map((c) => c.id)).toEqual([chat.id]);
    expect(created.io.err).toMatch(
      /debug: -> POST http:\/\/127\.0\.0\.1:\d+\/v2\/chats \(retry 0, idempotency key/,
    );
    expect(created.io.err).toMatch(
      /debug: <- POST .*\/v2\/chats 201 in \d+ ms \(request id req_[\w-]+, retry 1\)/,
    );
    expect(created.io.err).not.toContain(key);

    proxy.swallowNextPostAnswers(`/v2/chats/${chat.id}/messages/resolve`, 1);
    const resolved = await cli("resolve", chat.id, "--connected");
    expect(resolved.code).toBe(0);
    proxy.swallowNextPostAnswers(`/v2/chats/${chat.id}/messages`, 1);
    const sent = await cli("send", chat.id, "cli lost send");
    expect(sent.code).toBe(0);
    // Every attempt's answer lost: the message says the request was sent and may have run, not "cannot reach".
    proxy.swallowNextPostAnswers(`/v2/chats/${chat.id}/messages`, 3);
    const lost = await cli("send", chat.id, "cli lost every time");
    expect(lost.code).toBe(1);
    expect(lost.io.err).toMatch(
      /the connection was lost after the request was sent; it may have been processed/,
    );
    expect(lost.io.err).not.toMatch(/Is the server running|cannot reach/);
    proxy.swallowNextPostAnswers(`/v2/chats/${chat.id}/messages`, 0);
    const messages = await direct().listMessages(chat.id, { limit: 100 });
    const users = messages.data.filter((m) => m.role === "user").map((m) => m.content);
    expect(users.filter((text) => text === "cli lost send")).toHaveLength(1);
    // create's answer, resolve's answer (the permission request), send's user message and answer: five messages.
    // The lost send ran once too (its key kept it to one run): two more.
    expect(messages.data).toHaveLength(7);
  }, 30_000);
});
