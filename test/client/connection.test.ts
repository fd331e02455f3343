/** Answers that never complete: a fetch handler starts a JSON body and never ends it, and ends it with an error on the request's abort, as the platform fetch does. */
import { describe, expect, it } from "vitest";
import { ChatClient, type FetchLike } from "../../src/index.js";

/** Never dialed: every request goes to the handler. */
const BASE_URL = "http://127.0.0.1:8089";

/** A service that starts a JSON answer and never finishes it; `answering` settles once it has begun one. */
function halfAnswering() {
  let begun = () => {};
  const answering = new Promise<void>((resolve) => {
    begun = resolve;
  });
  const fetch: FetchLike = async (input, init) => {
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{"));
        signal?.addEventListener("abort", () => controller.error(signal.reason), { once: true });
        begun();
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  };
  return { fetch, answering };
}

describe("answers that never complete", () => {
  it("the timeout covers the body: a call whose answer never completes is a ChatTimeoutError", async () => {
    const client = new ChatClient({
      baseUrl: BASE_URL,
      token: "t",
      timeoutMs: 200,
      maxRetries: 0,
      fetch: halfAnswering().fetch,
    });
    await expect(client.getChat("chat_1")).rejects.toMatchObject({ name: "ChatTimeoutError" });
  });

  it("an abort while the answer is still coming rejects with the signal's reason", async () => {
    const service = halfAnswering();
    const client = new ChatClient({ baseUrl: BASE_URL, token: "t", maxRetries: 0, fetch: service.fetch });
    const controller = new AbortController();
    const pending = client.getChat("chat_1", { signal: controller.signal });
    await service.answering;
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
  });
});
