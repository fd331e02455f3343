/** nodeHttpExchange's connections: pooled requests share a bounded set, the others never wait behind them. */
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
/** Requests the server holds unanswered until `release()`. */
let held: ServerResponse[] = [];
let peakHeld = 0;

beforeEach(async () => {
  connections.clear();
  held = [];
  peakHeld = 0;
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
      held.push(response);
      peakHeld = Math.max(peakHeld, held.length);
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

const waitFor = async (condition: () => boolean) => {
  for (let turn = 0; turn < 500 && !condition(); turn++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
};

describe("pooled requests share at most POOLED_CONNECTIONS connections", () => {
  it("100 pooled requests in flight open no more connections than the pool has, and all are answered", async () => {
    const hold = new URL("/hold", url);
    const answers = Array.from({ length: 100 }, () =>
      nodeHttpExchange(hold, { method: "POST", headers: {}, body: "{}", pooled: true }).then((answer) =>
        answer.text(),
      ),
    );
    await waitFor(() => held.length === POOLED_CONNECTIONS);
    expect(connections.size).toBe(POOLED_CONNECTIONS);
    // The server answers what it holds as more arrive: the queued requests go out on the freed connections.
    const releaser = setInterval(() => {
      for (const response of held.splice(0)) response.end("held");
    }, 5);
    try {
      expect(await Promise.all(answers)).toEqual(Array(100).fill("held"));
    } finally {
      clearInterval(releaser);
    }
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
    await waitFor(() => held.length === POOLED_CONNECTIONS);
    const answer = await nodeHttpExchange(url, { method: "POST", headers: {}, body: "{}" });
    expect(await answer.text()).toBe("now");
    expect(held.length).toBe(POOLED_CONNECTIONS);
    for (const response of held.splice(0)) response.end();
    const releaser = setInterval(() => {
      for (const response of held.splice(0)) response.end();
    }, 5);
    try {
      await Promise.all(pooled.map(async (request) => (await request).text()));
    } finally {
      clearInterval(releaser);
    }
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
    await waitFor(() => held.length === POOLED_CONNECTIONS);
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
    await waitFor(() => held.length === POOLED_CONNECTIONS);
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
