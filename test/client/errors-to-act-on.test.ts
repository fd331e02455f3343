/** Errors a user can act on: 409s worded per code, aborts as ChatAbortError with the key, a capped answer, the User-Agent. */
import { delay, HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { MAX_RESPONSE_BYTES } from "../../src/client/transport.js";
import { ChatAbortError, ChatError, ConflictError, ResponseTooLargeError } from "../../src/index.js";
import { BASE_URL, chat, errorBody, testClient, useMockService } from "./fixtures.js";

const server = useMockService();

describe("409 messages per code", () => {
  it.each([
    ["conflict", /The chat has moved on/, /Idempotency-Key/],
    ["idempotency_key_reused", /used for another request: send this one with a new key/, /moved on/],
  ])("%s", async (code, says, doesNotSay) => {
    server.use(
      http.post(`${BASE_URL}/v2/chats`, () => HttpResponse.json(errorBody(code, "no"), { status: 409 })),
    );
    const { client } = testClient({ maxRetries: 0 });
    const error = await client.createChat({ message: "hi" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe(code);
    expect((error as Error).message).toMatch(says);
    expect((error as Error).message).not.toMatch(doesNotSay);
  });
});

describe("an abort", () => {
  it("of a keyed POST rejects with ChatAbortError carrying the key; nothing retried", async () => {
    const controller = new AbortController();
    let calls = 0;
    server.use(
      http.post(`${BASE_URL}/v2/chats`, async () => {
        calls++;
        controller.abort();
        await delay("infinite");
        return HttpResponse.json(chat());
      }),
    );
    const { client } = testClient();
    const error = await client
      .createChat({ message: "hi" }, { signal: controller.signal, idempotencyKey: "cmb-mine" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatAbortError);
    expect(error).toBeInstanceOf(ChatError);
    expect((error as ChatAbortError).idempotencyKey).toBe("cmb-mine");
    expect((error as Error).message).toMatch(/may have reached the service.*cmb-mine/);
    expect(calls).toBe(1);
  });

  it("before the call is made rejects with ChatAbortError, nothing sent", async () => {
    let calls = 0;
    server.use(
      http.get(`${BASE_URL}/v2/chats/chat_1`, () => {
        calls++;
        return HttpResponse.json(chat());
      }),
    );
    const { client } = testClient();
    await expect(client.getChat("chat_1", { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      ChatAbortError,
    );
    expect(calls).toBe(0);
  });
});

describe("the answer body is read with a byte cap", () => {
  it("an endless answer past the cap is refused with ResponseTooLargeError, its rest never read", async () => {
    let pulled = 0;
    const chunk = new Uint8Array(1024 * 1024).fill(32);
    server.use(
      http.get(
        `${BASE_URL}/v2/chats/chat_1`,
        () =>
          new HttpResponse(
            new ReadableStream({
              pull(controller) {
                pulled += chunk.byteLength;
                controller.enqueue(chunk);
              },
            }),
            { headers: { "content-type": "application/json" } },
          ),
      ),
    );
    const { client } = testClient({ maxRetries: 0 });
    const error = await client.getChat("chat_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toMatch(/larger than \d+ bytes/);
    // The stream stops soon after the cap: a few chunks of look-ahead, never the whole endless body.
    expect(pulled).toBeLessThan(MAX_RESPONSE_BYTES + 8 * chunk.byteLength);
  });
});

describe("the User-Agent", () => {
  it("names the package with a version and the runtime", async () => {
    let agent: string | null = null;
    server.use(
      http.get(`${BASE_URL}/v2/chats/chat_1`, ({ request }) => {
        agent = request.headers.get("user-agent");
        return HttpResponse.json(chat());
      }),
    );
    await testClient().client.getChat("chat_1");
    expect(agent).toMatch(/^chat-mcp-bridge\/\S+ node\/\d+\.\d+\.\d+$/);
  });
});
