/** chat-cli while the assistant is slow, in-process on fake timers: Ctrl-C exits 130 at once and says how to check, and the server still answers (the spinner on a real terminal: process.test.ts). */
import { EventEmitter } from "node:events";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { cleanEnv, runInProcess } from "./helpers.js";

/** The assistant's thinking time; on fake timers it passes only when the test moves the clock. */
const ASSISTANT_DELAY_MS = 6000;

const server = createRequestableReferenceServer({ assistantDelayMs: ASSISTANT_DELAY_MS });
afterAll(() => server.close());
const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.personal!, fetch: server.fetch });
const env = cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.personal });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lets the assistant's thinking time pass, then the answer. */
async function answered<T>(request: Promise<T>): Promise<T> {
  await vi.advanceTimersByTimeAsync(ASSISTANT_DELAY_MS);
  return request;
}

describe("Ctrl-C while waiting for the assistant (no terminal)", () => {
  it("send: exits 130 at once, says the message may still be answered and how to check; it is answered", async () => {
    const chatId = (await answered(client.createChat({ message: "hello" }))).id;
    // Ctrl-C once the POST has reached the server (an event, not a guessed delay).
    const signals = new EventEmitter();
    const fetch = (input: string | URL | Request, init?: RequestInit) => {
      const answer = server.fetch(input, init);
      if ((init?.method ?? (input instanceof Request ? input.method : "GET")) === "POST")
        signals.emit("SIGINT");
      return answer;
    };
    const result = await runInProcess(env, { fetch, signals })(["send", chatId, "are you there?"]);
    expect(result.code).toBe(130);
    // "At once" as an event: when the CLI has exited, the assistant's reply has not arrived yet.
    expect((await client.listMessages(chatId, { limit: 10 })).data.length).toBeLessThan(4);
    expect(result.stderr).toContain("the request was sent and may still complete for a while");
    expect(result.stderr).toContain(
      `\`chat-cli messages ${chatId} --limit 2\` shows it only once the assistant has answered`,
    );
    expect(result.stdout).toBe("");
    // The server goes on: the reply arrives although nobody waits for it.
    await vi.advanceTimersByTimeAsync(ASSISTANT_DELAY_MS);
    expect((await client.listMessages(chatId, { limit: 10 })).data.length).toBe(4);
    const [reply, sent] = (await client.listMessages(chatId, { limit: 2 })).data;
    expect([sent?.content, reply?.role]).toEqual(["are you there?", "assistant"]);
  });
});
