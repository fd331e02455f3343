/** Retries and timeouts: GETs and keyed POSTs retry on failures, unkeyed POSTs only when surely not run. */
import { delay, HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { BACKOFF_MAX_MS, RETRY_AFTER_MAX_MS } from "../../src/client/transport.js";
import {
  ChatAbortError,
  ChatConnectionError,
  ChatTimeoutError,
  type FetchLike,
  InternalServerError,
  RateLimitError,
} from "../../src/index.js";
import { BASE_URL, chat, errorBody, message, testClient, useMockService } from "./fixtures.js";

const server = useMockService();

/** Serves the given answers in order, one per request, and records the requests' retry-count headers. */
function answerInOrder(
  method: "get" | "post",
  path: string,
  answers: Array<() => Response | Promise<Response>>,
) {
  const retryCounts: Array<string | null> = [];
  const keys: Array<string | null> = [];
  let calls = 0;
  server.use(
    http[method](`${BASE_URL}${path}`, ({ request }) => {
      retryCounts.push(request.headers.get("x-retry-count"));
      keys.push(request.headers.get("idempotency-key"));
      const answer = answers[Math.min(calls, answers.length - 1)]!;
      calls++;
      return answer();
    }),
  );
  return { retryCounts, keys, calls: () => calls };
}

const ok = () => HttpResponse.json(chat());
const reply = () => HttpResponse.json(message());
const unavailable = () => HttpResponse.json(errorBody("unavailable", "try later"), { status: 503 });
const networkError = () => HttpResponse.error();
const rateLimited = (retryAfter: string) => () =>
  HttpResponse.json(errorBody("rate_limited", "slow down"), {
    status: 429,
    headers: { "retry-after": retryAfter },
  });

describe("GET retries on 5xx", () => {
  it("503 then 200 succeeds, with x-retry-count on the retry", async () => {
    const { client, waits } = testClient();
    const log = answerInOrder("get", "/v2/chats/chat_1", [unavailable, ok]);
    await expect(client.getChat("chat_1")).resolves.toMatchObject({ id: "chat_1" });
    expect(log.retryCounts).toEqual([null, "1"]);
    expect(waits).toHaveLength(1);
  });

  it("gives up after maxRetries with the last error", async () => {
    const { client, waits } = testClient({ maxRetries: 2 });
    const log = answerInOrder("get", "/v2/chats/chat_1", [unavailable]);
    await expect(client.getChat("chat_1")).rejects.toBeInstanceOf(InternalServerError);
    expect(log.calls()).toBe(3);
    expect(log.retryCounts).toEqual([null, "1", "2"]);
    expect(waits).toHaveLength(2);
  });

  it("maxRetries 0 never retries; a per-call maxRetries overrides the client's", async () => {
    const { client } = testClient({ maxRetries: 0 });
    const log = answerInOrder("get", "/v2/chats/chat_1", [unavailable, unavailable, ok]);
    await expect(client.getChat("chat_1")).rejects.toBeInstanceOf(InternalServerError);
    await expect(client.getChat("chat_1", { maxRetries: 1 })).resolves.toMatchObject({ id: "chat_1" });
    expect(log.calls()).toBe(3);
  });

  it("waits with exponential backoff and full jitter, within the cap", async () => {
    const { client, waits } = testClient({ maxRetries: 6 });
    answerInOrder("get", "/v2/chats/chat_1", [
      unavailable,
      unavailable,
      unavailable,
      unavailable,
      unavailable,
      ok,
    ]);
    await client.getChat("chat_1");
    expect(waits).toHaveLength(5);
    waits.forEach((wait, i) => {
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThanOrEqual(Math.min(BACKOFF_MAX_MS, 500 * 2 ** i));
    });
  });
});

describe("GET retries on 408 and on network errors", () => {
  it("408 then 200", async () => {
    const { client } = testClient();
    answerInOrder("get", "/v2/chats/chat_1", [() => new HttpResponse(null, { status: 408 }), ok]);
    await expect(client.getChat("chat_1")).resolves.toMatchObject({ id: "chat_1" });
  });

  it("network error then 200", async () => {
    const { client } = testClient();
    const log = answerInOrder("get", "/v2/chats/chat_1", [networkError, ok]);
    await expect(client.getChat("chat_1")).resolves.toMatchObject({ id: "chat_1" });
    expect(log.calls()).toBe(2);
  });

  it("network errors every time end in ChatConnectionError naming the base URL", async () => {
    const { client } = testClient({ maxRetries: 1 });
    answerInOrder("get", "/v2/chats/chat_1", [networkError]);
    const error = await client.getChat("chat_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatConnectionError);
    expect((error as Error).message).toContain(BASE_URL);
  });

  it("4xx other than 408 and 429 is not retried", async () => {
    const { client } = testClient();
    const log = answerInOrder("get", "/v2/chats/chat_1", [
      () => HttpResponse.json(errorBody("not_found", "no"), { status: 404 }),
      ok,
    ]);
    await expect(client.getChat("chat_1")).rejects.toThrow(/not_found/);
    expect(log.calls()).toBe(1);
  });
});

describe("429 honours Retry-After", () => {
  it("waits the seconds the service asks for", async () => {
    const { client, waits } = testClient();
    answerInOrder("get", "/v2/chats/chat_1", [rateLimited("2"), ok]);
    await client.getChat("chat_1");
    expect(waits).toEqual([2000]);
  });

  it("reads an HTTP date", async () => {
    const { client, waits } = testClient();
    const inAMinuteOrLess = new Date(Date.now() + 30_000).toUTCString();
    answerInOrder("get", "/v2/chats/chat_1", [rateLimited(inAMinuteOrLess), ok]);
    await client.getChat("chat_1");
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
  });

  it("caps a long Retry-After", async () => {
    const { client, waits } = testClient();
    answerInOrder("get", "/v2/chats/chat_1", [rateLimited("3600"), ok]);
    await client.getChat("chat_1");
    expect(waits).toEqual([RETRY_AFTER_MAX_MS]);
  });

  it("really sleeps when no sleep is injected (small Retry-After)", async () => {
    const { client } = testClient({ sleep: undefined });
    answerInOrder("get", "/v2/chats/chat_1", [rateLimited("0.01"), ok]);
    await expect(client.getChat("chat_1")).resolves.toMatchObject({ id: "chat_1" });
  });

  it("still rate limited after the retries: RateLimitError", async () => {
    const { client } = testClient({ maxRetries: 1 });
    answerInOrder("get", "/v2/chats/chat_1", [rateLimited("0")]);
    await expect(client.getChat("chat_1")).rejects.toBeInstanceOf(RateLimitError);
  });
});

/** A caller who removes the key (`headers: { "idempotency-key": null }`) gets the old, cautious policy. */
const UNKEYED = { headers: { "idempotency-key": null } };

describe("A POST without an idempotency key never runs twice", () => {
  it("503 on a POST is not retried", async () => {
    const { client } = testClient();
    const log = answerInOrder("post", "/v2/chats/chat_1/messages", [unavailable, reply]);
    await expect(client.sendMessage("chat_1", { message: "hi" }, UNKEYED)).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(log.calls()).toBe(1);
  });

  it("a network reset on a POST is not retried", async () => {
    const { client } = testClient();
    const log = answerInOrder("post", "/v2/chats", [
      networkError,
      () => HttpResponse.json(chat(), { status: 201 }),
    ]);
    const error = await client.createChat({ message: "hi" }, UNKEYED).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatConnectionError);
    // No key was sent, so none is offered to send it again with.
    expect((error as Error).message).toMatch(/Check the chat's messages before sending it again/);
    expect(log.calls()).toBe(1);
  });

  it("429 on a POST is retried (the service refused it without running it)", async () => {
    const { client, waits } = testClient();
    const log = answerInOrder("post", "/v2/chats/chat_1/messages/resolve", [rateLimited("1"), reply]);
    await expect(
      client.resolveTask("chat_1", { type: "confirmed-steps", connectedIntegrationNames: [] }),
    ).resolves.toMatchObject({ object: "message" });
    expect(log.retryCounts).toEqual([null, "1"]);
    expect(waits).toEqual([1000]);
  });

  it("a refused connection on a POST is retried (the request never left)", async () => {
    let calls = 0;
    const refusingOnce: FetchLike = async (url, init) => {
      calls++;
      if (calls === 1)
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }),
        });
      return globalThis.fetch(url, init);
    };
    server.use(http.post(`${BASE_URL}/v2/chats`, () => HttpResponse.json(chat(), { status: 201 })));
    const { client } = testClient({ fetch: refusingOnce });
    await expect(client.createChat({ message: "hi" })).resolves.toMatchObject({ id: "chat_1" });
    expect(calls).toBe(2);
  });

  it("a timed-out POST is not retried", async () => {
    const { client } = testClient();
    const log = answerInOrder("post", "/v2/chats/chat_1/messages", [
      async () => {
        await delay("infinite");
        return reply();
      },
    ]);
    // A send waits for the assistant (10 minutes by default): this one gets a short timeout of its own.
    await expect(
      client.sendMessage("chat_1", { message: "hi" }, { ...UNKEYED, timeoutMs: 20 }),
    ).rejects.toBeInstanceOf(ChatTimeoutError);
    expect(log.calls()).toBe(1);
  });
});

describe("A POST with its idempotency key retries like a GET, with the same key each time", () => {
  it("503 twice, then the answer: one call, three attempts, one key", async () => {
    const { client, waits } = testClient();
    const log = answerInOrder("post", "/v2/chats/chat_1/messages", [unavailable, unavailable, reply]);
    await expect(client.sendMessage("chat_1", { message: "hi" })).resolves.toMatchObject({
      object: "message",
    });
    expect(log.retryCounts).toEqual([null, "1", "2"]);
    expect(new Set(log.keys).size).toBe(1);
    expect(log.keys[0]).toMatch(/^cmb-[0-9a-f-]{36}$/);
    expect(waits).toHaveLength(2);
  });

  it("a connection lost after the request was sent is retried with the same key", async () => {
    const { client } = testClient();
    const log = answerInOrder("post", "/v2/chats", [
      networkError,
      () => HttpResponse.json(chat(), { status: 201 }),
    ]);
    await expect(client.createChat({ message: "hi" })).resolves.toMatchObject({ id: "chat_1" });
    expect(log.calls()).toBe(2);
    expect(log.keys[0]).toBe(log.keys[1]);
  });

  it("a timed-out attempt is retried with the same key", async () => {
    const { client } = testClient({ maxRetries: 1 });
    const log = answerInOrder("post", "/v2/chats/chat_1/messages", [
      async () => {
        await delay("infinite");
        return reply();
      },
      reply,
    ]);
    await expect(client.sendMessage("chat_1", { message: "hi" }, { timeoutMs: 50 })).resolves.toMatchObject({
      object: "message",
    });
    expect(log.calls()).toBe(2);
    expect(log.keys[0]).toBe(log.keys[1]);
  });

  it("each call gets a new key; { idempotencyKey } sets it", async () => {
    const { client } = testClient();
    const log = answerInOrder("post", "/v2/chats", [() => HttpResponse.json(chat(), { status: 201 })]);
    await client.createChat({ message: "a" });
    await client.createChat({ message: "b" });
    await client.createChat({ message: "c" }, { idempotencyKey: "my-key-1" });
    expect(log.keys[0]).not.toBe(log.keys[1]);
    expect(log.keys[2]).toBe("my-key-1");
  });

  it("GETs carry no key", async () => {
    const { client } = testClient();
    const log = answerInOrder("get", "/v2/chats/chat_1", [ok]);
    await client.getChat("chat_1");
    expect(log.keys).toEqual([null]);
  });

  it("409 idempotency_key_in_progress is retried after Retry-After; 409 idempotency_key_reused is not", async () => {
    const { client, waits } = testClient();
    const inProgress = () =>
      HttpResponse.json(errorBody("idempotency_key_in_progress", "still running"), {
        status: 409,
        headers: { "retry-after": "1" },
      });
    const log = answerInOrder("post", "/v2/chats/chat_1/messages", [inProgress, reply]);
    await expect(client.sendMessage("chat_1", { message: "hi" })).resolves.toMatchObject({
      object: "message",
    });
    expect(waits).toEqual([1000]);
    expect(log.calls()).toBe(2);
    const reused = () =>
      HttpResponse.json(errorBody("idempotency_key_reused", "other body"), { status: 409 });
    const second = answerInOrder("post", "/v2/chats/chat_2/messages", [reused, reply]);
    await expect(client.sendMessage("chat_2", { message: "hi" })).rejects.toMatchObject({
      status: 409,
      code: "idempotency_key_reused",
    });
    expect(second.calls()).toBe(1);
  });
});

describe("timeouts", () => {
  it("an attempt with no answer within timeoutMs is a ChatTimeoutError (a ChatConnectionError)", async () => {
    const { client } = testClient({ timeoutMs: 20, maxRetries: 0 });
    answerInOrder("get", "/v2/chats/chat_1", [
      async () => {
        await delay("infinite");
        return ok();
      },
    ]);
    const error = await client.getChat("chat_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatTimeoutError);
    expect(error).toBeInstanceOf(ChatConnectionError);
    expect((error as ChatTimeoutError).timeoutMs).toBe(20);
    expect((error as Error).message).toMatch(/timed out after 20 ms/);
  });

  it("a GET that timed out is retried and can then succeed", async () => {
    const { client } = testClient({ timeoutMs: 50 });
    const log = answerInOrder("get", "/v2/chats/chat_1", [
      async () => {
        await delay("infinite");
        return ok();
      },
      ok,
    ]);
    await expect(client.getChat("chat_1")).resolves.toMatchObject({ id: "chat_1" });
    expect(log.calls()).toBe(2);
  });

  it("a per-call timeoutMs overrides the client's", async () => {
    const { client } = testClient({ maxRetries: 0 });
    answerInOrder("get", "/v2/chats/chat_1", [
      async () => {
        await delay("infinite");
        return ok();
      },
    ]);
    await expect(client.getChat("chat_1", { timeoutMs: 20 })).rejects.toBeInstanceOf(ChatTimeoutError);
  });
});

describe("abort signal", () => {
  it("aborting the caller's signal rejects with its reason and is not retried", async () => {
    const { client } = testClient();
    const controller = new AbortController();
    const log = answerInOrder("get", "/v2/chats/chat_1", [
      async () => {
        // The person gives up while the service is still working on the request.
        controller.abort(new Error("user gave up"));
        await delay("infinite");
        return ok();
      },
    ]);
    const pending = client.getChat("chat_1", { signal: controller.signal });
    await expect(pending).rejects.toThrow(ChatAbortError);
    await expect(pending).rejects.toThrow("user gave up");
    expect(log.calls()).toBe(1);
  });

  it("an already aborted signal sends nothing", async () => {
    const { client } = testClient();
    const log = answerInOrder("get", "/v2/chats/chat_1", [ok]);
    await expect(client.getChat("chat_1", { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(log.calls()).toBe(0);
  });
});
