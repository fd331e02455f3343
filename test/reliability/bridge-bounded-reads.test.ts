/**
 * Hostile servers, round two: every read of a server's body is bounded (a huge error page, huge OAuth metadata),
 * OAuth discovery against a server that never answers fails within a bound, and a stream that closes at once
 * with `retry: 0` does not make the legacy transport resume forever: the call is answered, exactly once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { discoverServer } from "../../src/auth/discovery.js";
import type { HttpExchange } from "../../src/bridge/upstream/http/http-exchange.js";
import { RemoteHttpError } from "../../src/bridge/upstream/http/http-failure.js";
import { nodeHttpExchange } from "../../src/bridge/upstream/http/node-http-exchange.js";
import { StreamableHttpTransport } from "../../src/bridge/upstream/legacy/streamable-http-transport.js";

let server: Server | undefined;
afterEach(async () => {
  vi.useRealTimers();
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done) ?? done(undefined));
  server = undefined;
});

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<URL> {
  server = createServer(handler);
  await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
  return new URL(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/mcp`);
}

/** Streams `total` bytes of `fill` as the reader takes them (backpressure honoured); returns the bytes written so far. */
function streamHuge(response: ServerResponse, total: number, fill = "x"): () => number {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let written = 0;
  let closed = false;
  response.on("close", () => {
    closed = true;
  });
  const pump = () => {
    while (!closed && written < total) {
      written += chunk.length;
      if (!response.write(chunk)) {
        response.once("drain", pump);
        return;
      }
    }
    if (!closed) response.end();
  };
  pump();
  return () => written;
}

const MiB = 1024 * 1024;

/**
 * The transport's waits on a fake clock: each is run as soon as it is the next one due (in order, at its length
 * on the clock), with real I/O between them, until `until` settles.
 */
async function runWaitsUntil(until: Promise<unknown>): Promise<void> {
  let settled = false;
  void until.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) {
    await new Promise((resolve) => setImmediate(resolve));
    vi.advanceTimersToNextTimer();
  }
}

/** nodeHttpExchange, counting the GETs the transport asks for (when it asks, before a byte is sent). */
function countingGets(): { fetch: HttpExchange; asked: () => number } {
  let asked = 0;
  const fetch: HttpExchange = (url, request) => {
    if (request.method === "GET") asked++;
    return nodeHttpExchange(url, request);
  };
  return { fetch, asked: () => asked };
}

describe("a non-2xx answer on the legacy path is read only up to a bound", () => {
  it("a 1 GiB error page: the call fails with the status and 300 characters, the rest is never read", async () => {
    let written = () => 0;
    const url = await listen((_request, response) => {
      response.writeHead(500, { "content-type": "text/html" });
      written = streamHuge(response, 1024 * MiB);
    });
    const transport = new StreamableHttpTransport(url, nodeHttpExchange);
    const failure = await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(RemoteHttpError);
    expect((failure as RemoteHttpError).status).toBe(500);
    expect((failure as Error).message).toMatch(/^the server answered HTTP 500: x{300}$/);
    await new Promise((done) => setTimeout(done, 200));
    // What the sockets' buffers held at most: nowhere near the gigabyte.
    expect(written()).toBeLessThan(64 * MiB);
    await transport.close();
  });
});

describe("`retry: 0` on streams that close at once (legacy transport)", () => {
  it("backs off after each empty stream, gives up after a bound, and answers the call exactly once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let gets = 0;
    const url = await listen((request, response) => {
      if (request.method === "POST") {
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.end("id: 1\nretry: 0\ndata: \n\n");
        return;
      }
      gets++;
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end("retry: 0\n\n");
    });
    const counted = countingGets();
    const transport = new StreamableHttpTransport(url, counted.fetch);
    const lost: Array<{ id: unknown; reason: string }> = [];
    transport.onerror = () => undefined;
    const answered = new Promise<void>((done) => {
      transport.onrequestlost = (id, reason) => {
        lost.push({ id, reason });
        done();
      };
    });
    await transport.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x" } });
    await runWaitsUntil(answered);
    const getsWhenLost = gets;
    const askedWhenLost = counted.asked();
    // Past the longest wait a stream may choose (30 s): no resumption is left to run.
    vi.advanceTimersByTime(60_000);
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
    const url = await listen((request, response) => {
      request.resume();
      if (request.method === "POST") {
        response.writeHead(202).end();
        return;
      }
      getTimes.push(Date.now());
      if (getTimes.length === 3) thirdGet();
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end("retry: 0\n\n");
    });
    const transport = new StreamableHttpTransport(url, nodeHttpExchange);
    transport.onerror = () => undefined;
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await runWaitsUntil(threeGets);
    await transport.close();
    // Waits of 250, 500, 1000 ms... between GETs, where `retry: 0` alone would reconnect at once.
    const [first, second, third] = getTimes as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(250);
    expect(third - second).toBeGreaterThanOrEqual(500);
  }, 20_000);
});

describe("OAuth discovery is bounded in time and size", () => {
  const discover = (url: URL, timeoutMs?: number) =>
    discoverServer(url.href, {
      fetchFn: fetch,
      allowHttp: true,
      log: () => undefined,
      ...(timeoutMs ? { timeoutMs } : {}),
    });

  it("metadata that never answers fails within the bound, naming what did not answer", async () => {
    const url = await listen(() => {
      // Never answers.
    });
    const failure = await discover(url, 300).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(
      /Could not load the authorization server metadata .*no answer from .* within 0\.3 s/,
    );
  }, 10_000);

  it("metadata of hundreds of megabytes is refused as it arrives, the rest never read", async () => {
    let written = 0;
    const url = await listen((request, response) => {
      if (!request.url?.startsWith("/.well-known/")) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      const counter = streamHuge(response, 700 * MiB, " ");
      response.on("close", () => {
        written = Math.max(written, counter());
      });
    });
    const failure = await discover(url).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(/larger than \d+ bytes; not read/);
    await new Promise((done) => setTimeout(done, 200));
    expect(written).toBeLessThan(64 * MiB);
  }, 30_000);
});
