/**
 * Hostile servers, round two: every read of a server's body is bounded (a huge error page, huge OAuth metadata),
 * OAuth discovery against a server that never answers fails within a bound, and a stream that closes at once
 * with `retry: 0` does not make the legacy transport resume forever: the call is answered, exactly once. The
 * hostile servers are fetch handlers in process: a body is made only as the reader pulls it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { discoverServer } from "../../src/auth/discovery.js";
import { fetchExchange } from "../../src/bridge/upstream/http/fetch-exchange.js";
import type { HttpExchange } from "../../src/bridge/upstream/http/http-exchange.js";
import { RemoteHttpError } from "../../src/bridge/upstream/http/http-exchange.js";
import { StreamableHttpTransport } from "../../src/bridge/upstream/legacy/streamable-http-transport.js";
import { handlerFetch, IN_PROCESS_ORIGIN, neverAnswers } from "../bridge/fixtures/fetch-endpoint.js";

afterEach(() => {
  vi.useRealTimers();
});

const url = new URL(`${IN_PROCESS_ORIGIN}/mcp`);

/** The exchange (and fetch) of a server whose every request `handle` answers. */
const serverOf = (handle: (request: Request) => Response | Promise<Response>) => {
  const fetch = handlerFetch(async (request) => handle(request));
  return { fetch, exchange: fetchExchange(fetch) };
};

/** A body of `total` bytes of `fill`, made only as the reader pulls it: how much was made, and when the reader gave up. */
function hugeBody(
  total: number,
  fill = "x",
): { body: ReadableStream<Uint8Array>; made: () => number; cancelled: Promise<void> } {
  const chunk = new Uint8Array(64 * 1024).fill(fill.charCodeAt(0));
  let made = 0;
  let onCancel = () => {};
  const cancelled = new Promise<void>((resolve) => {
    onCancel = resolve;
  });
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (made >= total) {
          controller.close();
          return;
        }
        made += chunk.length;
        controller.enqueue(chunk.slice());
      },
      cancel: () => onCancel(),
    },
    { highWaterMark: 0 },
  );
  return { body, made: () => made, cancelled };
}

const MiB = 1024 * 1024;

/** `exchange`, counting the GETs the transport asks for (when it asks, before a byte is sent). */
function countingGets(exchange: HttpExchange): { fetch: HttpExchange; asked: () => number } {
  let asked = 0;
  const fetch: HttpExchange = (target, request) => {
    if (request.method === "GET") asked++;
    return exchange(target, request);
  };
  return { fetch, asked: () => asked };
}

describe("a non-2xx answer on the legacy path is read only up to a bound", () => {
  it("a 1 GiB error page: the call fails with the status and 300 characters, the rest is never read", async () => {
    const page = hugeBody(1024 * MiB);
    const { exchange } = serverOf(
      () => new Response(page.body, { status: 500, headers: { "content-type": "text/html" } }),
    );
    const transport = new StreamableHttpTransport(url, exchange);
    const failure = await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(RemoteHttpError);
    expect((failure as RemoteHttpError).status).toBe(500);
    expect((failure as Error).message).toMatch(/^the server answered HTTP 500: x{300}$/);
    // The reader gave the rest up, having taken nowhere near the gigabyte.
    await page.cancelled;
    expect(page.made()).toBeLessThan(64 * MiB);
    await transport.close();
  });
});

describe("`retry: 0` on streams that close at once (legacy transport)", () => {
  it("backs off after each empty stream, gives up after a bound, and answers the call exactly once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let gets = 0;
    const events = { "content-type": "text/event-stream" };
    const { exchange } = serverOf((request) => {
      if (request.method === "POST") return new Response("id: 1\nretry: 0\ndata: \n\n", { headers: events });
      gets++;
      return new Response("retry: 0\n\n", { headers: events });
    });
    const counted = countingGets(exchange);
    const transport = new StreamableHttpTransport(url, counted.fetch);
    const lost: Array<{ id: unknown; reason: string }> = [];
    transport.onerror = () => undefined;
    let getsWhenLost = Number.NaN;
    let askedWhenLost = Number.NaN;
    transport.onrequestlost = (id, reason) => {
      lost.push({ id, reason });
      getsWhenLost = gets;
      askedWhenLost = counted.asked();
    };
    await transport.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x" } });
    // The waits after each empty stream, on the fake clock: the bound is reached well within a minute.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(lost).toHaveLength(1);
    // Past the longest wait a stream may choose (30 s) once more: no resumption is left to run.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(counted.asked()).toBe(askedWhenLost);
    expect(lost).toEqual([
      { id: 7, reason: expect.stringMatching(/closed the event stream without an event/) },
    ]);
    expect(getsWhenLost).toBeLessThanOrEqual(6);
    expect(gets).toBe(getsWhenLost);
    await transport.close();
  }, 20_000);
});

describe("`retry: 0` on the standalone GET stream that closes at once (legacy transport)", () => {
  it("reconnects with a growing wait instead of at once, and keeps listening", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const getTimes: number[] = [];
    let thirdGet: () => void = () => {};
    const threeGets = new Promise<void>((done) => {
      thirdGet = done;
    });
    const { exchange } = serverOf((request) => {
      if (request.method === "POST") return new Response(null, { status: 202 });
      getTimes.push(Date.now());
      if (getTimes.length === 3) thirdGet();
      return new Response("retry: 0\n\n", { headers: { "content-type": "text/event-stream" } });
    });
    const transport = new StreamableHttpTransport(url, exchange);
    transport.onerror = () => undefined;
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // Waits of 250 and 500 ms on the fake clock bring the third GET well within two seconds.
    await vi.advanceTimersByTimeAsync(2_000);
    await threeGets;
    await transport.close();
    // Waits of 250, 500, 1000 ms... between GETs, where `retry: 0` alone would reconnect at once.
    const [first, second, third] = getTimes as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(250);
    expect(third - second).toBeGreaterThanOrEqual(500);
  }, 20_000);
});

describe("OAuth discovery is bounded in time and size", () => {
  const discover = (fetchFn: typeof globalThis.fetch, timeoutMs?: number) =>
    discoverServer(url.href, {
      fetchFn,
      allowHttp: true,
      log: () => undefined,
      ...(timeoutMs ? { timeoutMs } : {}),
    });

  it("metadata that never answers fails within the bound, naming what did not answer", async () => {
    const failure = await discover(neverAnswers, 300).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(
      /Could not load the authorization server metadata .*no answer from .* within 0\.3 s/,
    );
  }, 10_000);

  it("metadata of hundreds of megabytes is refused as it arrives, the rest never read", async () => {
    const documents: Array<ReturnType<typeof hugeBody>> = [];
    const { fetch } = serverOf((request) => {
      if (!new URL(request.url).pathname.startsWith("/.well-known/"))
        return new Response(null, { status: 404 });
      const document = hugeBody(700 * MiB, " ");
      documents.push(document);
      return new Response(document.body, { headers: { "content-type": "application/json" } });
    });
    const failure = await discover(fetch).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(/larger than \d+ bytes; not read/);
    expect(documents.length).toBeGreaterThan(0);
    // Each document read was given up, having taken nowhere near its 700 MiB.
    await Promise.all(documents.map((document) => document.cancelled));
    for (const document of documents) expect(document.made()).toBeLessThan(64 * MiB);
  }, 30_000);
});
