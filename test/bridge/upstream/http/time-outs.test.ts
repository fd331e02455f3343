/** `--body-timeout` on the upstream's exchanges (over a fetch handler, on a fake clock): it fires as named, saying which host; the socket time-outs are node-http-time-outs.test.ts's. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { describeError } from "../../../../src/bridge/log/log.js";
import { fetchExchange } from "../../../../src/bridge/upstream/http/fetch-exchange.js";
import { withUpstreamTimeouts } from "../../../../src/bridge/upstream/http/time-outs.js";
import { classifyRequestFailure } from "../../../../src/internal/request-failure.js";
import { handlerFetch, IN_PROCESS_ORIGIN } from "../../fixtures/fetch-endpoint.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

const url = new URL(`${IN_PROCESS_ORIGIN}/mcp`);
const host = url.host;
const post = { method: "POST" as const, headers: { "content-type": "application/json" }, body: "{}" };
const encoder = new TextEncoder();

/** An exchange with the server whose answer's body is `body`, bounded as `bodyMs` says. */
const exchangeWith = (body: () => ReadableStream<Uint8Array>, bodyMs: number) =>
  withUpstreamTimeouts(
    fetchExchange(
      handlerFetch(async () => new Response(body(), { headers: { "content-type": "text/event-stream" } })),
    ),
    { bodyMs },
  );

describe("--body-timeout", () => {
  it("breaks a body that goes quiet mid-way, naming the flag and the host", async () => {
    const exchange = exchangeWith(
      () =>
        new ReadableStream({
          start(controller) {
            controller.enqueue(encoder.encode("data: first\n\n"));
          },
        }),
      200,
    );
    const answer = await exchange(url, post);
    const chunks: string[] = [];
    const failed = (async () => {
      for await (const chunk of answer.body ?? []) chunks.push(Buffer.from(chunk).toString());
    })().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(199);
    expect(chunks.join("")).toBe("data: first\n\n");
    await vi.advanceTimersByTimeAsync(1);
    const failure = await failed;
    expect(describeError(failure)).toMatch(
      new RegExp(`the answer from ${host} went 0.2 s without a byte \\(--body-timeout\\)`),
    );
    expect(classifyRequestFailure(failure)).toBe("maybe-sent");
  });

  it("does not cut a body that keeps coming, however long it lasts in all", async () => {
    // Ten parts 30 ms apart: longer than the time-out in all, while no pause between its parts comes near it.
    const exchange = exchangeWith(() => {
      let sent = 0;
      return new ReadableStream({
        pull: (controller) =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              controller.enqueue(encoder.encode(`${sent}\n`));
              if (++sent === 10) controller.close();
              resolve();
            }, 30),
          ),
      });
    }, 250);
    const answer = await exchange(url, post);
    const text = answer.text();
    await vi.advanceTimersByTimeAsync(300);
    expect(await text).toBe("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n");
  });
});
