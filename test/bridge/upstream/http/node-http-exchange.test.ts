/** nodeHttpExchange's connections: pooled requests share a bounded set, the others never wait behind them (node:http's sockets are the subject: integration). */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  nodeHttpExchange,
  POOLED_CONNECTIONS,
} from "../../../../src/bridge/upstream/http/node-http-exchange.js";

let server: Server;
let url: URL;
const connections = new Set<unknown>();
/** Requests the server holds unanswered until the test ends them. */
let held: ServerResponse[] = [];
let peakHeld = 0;
/** Once set, `/hold` requests are answered with this as they arrive (the held ones are ended by the test). */
let answerHeldWith: string | undefined;
/** Called as each request is held. */
const onHeld = new Set<() => void>();

beforeEach(async () => {
  connections.clear();
  held = [];
  peakHeld = 0;
  answerHeldWith = undefined;
  onHeld.clear();
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    if (request.url === "/stream") {
      // An answer stream that stays open (a call waiting on the person, say): headers now, the answer later.
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(": open\n\n");
      held.push(response);
      return;
    }
    if (request.url === "/hold") {
      if (answerHeldWith !== undefined) {
        response.end(answerHeldWith);
        return;
      }
      held.push(response);
      peakHeld = Math.max(peakHeld, held.length);
      for (const wake of [...onHeld]) wake();
      return;
    }
    response.writeHead(200, { "content-type": "text/plain" }).end("now");
  });
  server.on("connection", (socket) => connections.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});

afterEach(async () => {
  for (const response of held) response.end();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Resolves once the server holds `count` requests (checked as each is held); the test's time-out bounds it. */
const heldReaches = (count: number) =>
  new Promise<void>((resolve) => {
    const wake = () => {
      if (held.length < count) return;
      onHeld.delete(wake);
      resolve();
    };
    onHeld.add(wake);
    wake();
  });

/** Ends what the server holds and answers the `/hold` requests still to come at once. */
const answerHeld = (text: string) => {
  answerHeldWith = text;
  for (const response of held.splice(0)) response.end(text);
};

describe("pooled requests share at most POOLED_CONNECTIONS connections", () => {
  it("100 pooled requests in flight open no more connections than the pool has, and all are answered", async () => {
    const hold = new URL("/hold", url);
    const answers = Array.from({ length: 100 }, () =>
      nodeHttpExchange(hold, { method: "POST", headers: {}, body: "{}", pooled: true }).then((answer) =>
        answer.text(),
      ),
    );
    await heldReaches(POOLED_CONNECTIONS);
    expect(connections.size).toBe(POOLED_CONNECTIONS);
    // The server answers what it holds and what arrives: the queued requests go out on the freed connections.
    answerHeld("held");
    expect(await Promise.all(answers)).toEqual(Array(100).fill("held"));
    expect(peakHeld).toBe(POOLED_CONNECTIONS);
    expect(connections.size).toBe(POOLED_CONNECTIONS);
  });
});

describe("a request outside the pool never waits for it", () => {
  it("is answered while every pooled connection is held open", async () => {
    const hold = new URL("/hold", url);
    const pooled = Array.from({ length: POOLED_CONNECTIONS + 5 }, () =>
      nodeHttpExchange(hold, { method: "POST", headers: {}, body: "{}", pooled: true }),
    );
    await heldReaches(POOLED_CONNECTIONS);
    const answer = await nodeHttpExchange(url, { method: "POST", headers: {}, body: "{}" });
    expect(await answer.text()).toBe("now");
    expect(held.length).toBe(POOLED_CONNECTIONS);
    answerHeld("");
    await Promise.all(pooled.map(async (request) => (await request).text()));
  });
});

describe("a pooled request that waits for a free connection", () => {
  it("rejects with its signal's reason when cancelled while waiting, and the pool goes on serving the others", async () => {
    const hold = new URL("/hold", url);
    const first = Array.from({ length: POOLED_CONNECTIONS }, () =>
      nodeHttpExchange(hold, { method: "POST", headers: {}, body: "{}", pooled: true }).then((answer) =>
        answer.text(),
      ),
    );
    await heldReaches(POOLED_CONNECTIONS);
    const controller = new AbortController();
    const cancelled = nodeHttpExchange(hold, {
      method: "POST",
      headers: {},
      body: "{}",
      pooled: true,
      signal: controller.signal,
    });
    const waiting = nodeHttpExchange(hold, { method: "POST", headers: {}, body: "{}", pooled: true });
    controller.abort(new Error("cancelled by the client"));
    await expect(cancelled).rejects.toThrow("cancelled by the client");
    // Freeing one connection lets the next waiter in (the cancelled one took no connection and holds no place).
    held.shift()?.end("first");
    await heldReaches(POOLED_CONNECTIONS);
    for (const response of held.splice(0)) response.end("done");
    expect(await (await waiting).text()).toBe("done");
    expect(await Promise.all(first)).toContain("first");
    expect(connections.size).toBe(POOLED_CONNECTIONS);
  });
});

describe("pooled requests whose answer streams stay open", () => {
  it("do not keep the next pooled request waiting for them to end", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const streaming = Array.from({ length: POOLED_CONNECTIONS }, () =>
        nodeHttpExchange(new URL("/stream", url), { method: "POST", headers: {}, body: "{}", pooled: true }),
      );
      const open = await Promise.all(streaming);
      expect(open.map((answer) => answer.status)).toEqual(Array(POOLED_CONNECTIONS).fill(200));
      const next = nodeHttpExchange(url, { method: "POST", headers: {}, body: "{}", pooled: true });
      // An answer stream open for a second gives its place in the pool up (on the fake clock).
      vi.advanceTimersByTime(1_000);
      expect(await (await next).text()).toBe("now");
      expect(held).toHaveLength(POOLED_CONNECTIONS);
      for (const answer of open) await answer.body?.cancel();
    } finally {
      vi.useRealTimers();
    }
  });
});
