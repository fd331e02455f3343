/** fetchExchange: the relay's upstream over a caller's fetch, read as node:http's exchange is (chunks, cancel, cookies, time-outs). */
import { describe, expect, it, vi } from "vitest";
import { fetchExchange } from "../../../../src/bridge/upstream/http/fetch-exchange.js";
import { UpstreamTimeoutError } from "../../../../src/bridge/upstream/http/time-outs.js";
import { classifyRequestFailure } from "../../../../src/internal/request-failure.js";

const url = new URL("http://mcp.test/mcp");
const encoder = new TextEncoder();

describe("fetchExchange", () => {
  it("sends the method, headers and body, and hands each chunk on as it arrives", async () => {
    let push: (text: string) => void = () => {};
    let end: () => void = () => {};
    let seen: Request | undefined;
    const exchange = fetchExchange(async (input, init) => {
      seen = new Request(input, init);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(encoder.encode(text));
          end = () => controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    });
    const answer = await exchange(url, {
      method: "POST",
      headers: { "content-type": "application/json", "mcp-session-id": "s1" },
      body: '{"jsonrpc":"2.0"}',
    });
    expect(seen?.method).toBe("POST");
    expect(seen?.headers.get("mcp-session-id")).toBe("s1");
    expect(await seen?.text()).toBe('{"jsonrpc":"2.0"}');
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/event-stream");
    const chunks = answer.body?.[Symbol.asyncIterator]();
    push("data: one\n\n");
    // The first chunk is handed on before the stream has ended.
    expect(new TextDecoder().decode((await chunks?.next())?.value)).toBe("data: one\n\n");
    push("data: two\n\n");
    end();
    expect(new TextDecoder().decode((await chunks?.next())?.value)).toBe("data: two\n\n");
    expect((await chunks?.next())?.done).toBe(true);
  });

  it("cancel() stops the answer's stream at its source", async () => {
    const cancelled = vi.fn();
    const exchange = fetchExchange(
      async () => new Response(new ReadableStream({ cancel: cancelled }), { status: 200 }),
    );
    const answer = await exchange(url, { method: "GET", headers: {} });
    await answer.body?.cancel();
    expect(cancelled).toHaveBeenCalledOnce();
  });

  it("gives every Set-Cookie line apart", async () => {
    const headers = new Headers();
    headers.append("set-cookie", "a=1; Path=/");
    headers.append("set-cookie", "b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT");
    const exchange = fetchExchange(async () => new Response(null, { status: 204, headers }));
    const answer = await exchange(url, { method: "DELETE", headers: {} });
    expect(answer.headers.getSetCookie?.()).toEqual([
      "a=1; Path=/",
      "b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
    ]);
    expect(answer.ok).toBe(true);
    expect(await answer.text()).toBe("");
  });

  it("a body that breaks mid-way fails as fetch's does ('terminated'): the request may have run", async () => {
    const exchange = fetchExchange(
      async () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(encoder.encode("{"));
              controller.error(new Error("connection reset"));
            },
          }),
        ),
    );
    const answer = await exchange(url, { method: "POST", headers: {}, body: "{}" });
    const error = await answer.text().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe("terminated");
    expect(classifyRequestFailure(error)).toBe("maybe-sent");
  });

  it("--headers-timeout: no answer in time fails naming the flag and the host, and the request is aborted", async () => {
    vi.useFakeTimers();
    try {
      let aborted: unknown;
      const exchange = fetchExchange(
        (_input, init) =>
          new Promise<Response>((_resolve, reject) => {
            init?.signal?.addEventListener("abort", () => {
              aborted = init.signal?.reason;
              reject(init.signal?.reason);
            });
          }),
      );
      const failure = exchange(url, { method: "POST", headers: {}, timeouts: { headersMs: 2000 } }).catch(
        (e: unknown) => e,
      );
      await vi.advanceTimersByTimeAsync(2000);
      const error = (await failure) as TypeError;
      expect(aborted).toBeDefined();
      expect(error.message).toBe("fetch failed");
      expect(error.cause).toBeInstanceOf(UpstreamTimeoutError);
      expect((error.cause as Error).message).toBe(
        "no answer from mcp.test within 2 s of the request (--headers-timeout)",
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it("the caller's abort is passed on and not mistaken for a time-out", async () => {
    const controller = new AbortController();
    const exchange = fetchExchange(
      (_input, init) =>
        new Promise<Response>((_resolve, reject) => {
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
        }),
    );
    const failure = exchange(url, {
      method: "GET",
      headers: {},
      signal: controller.signal,
      timeouts: { headersMs: 60_000 },
    }).catch((e: unknown) => e);
    controller.abort(new Error("the client cancelled"));
    expect(((await failure) as Error).message).toBe("the client cancelled");
  });
});
