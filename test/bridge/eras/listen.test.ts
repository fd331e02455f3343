/** The legacy client's subscriptions/listen over a modern server: its filter, its notifications, its reopening and its end. */
import { describe, expect, it, vi } from "vitest";
import { createBridgeLog } from "../../../src/bridge/log/log.js";
import { LegacyListen, LISTEN_MAX_FAILURES, listenFilter } from "../../../src/bridge/translate/listen.js";
import type { UpstreamAnswer } from "../../../src/bridge/upstream/modern.js";

type Json = Record<string, unknown>;
const log = createBridgeLog({ debug: false, silent: true });

/** A fake upstream: each listen is recorded and ends when the test says. */
function fakeListens() {
  const opened: Array<{ filter: Json; signal: AbortSignal; end: (answer: UpstreamAnswer) => void }> = [];
  const listen = (filter: Json, signal: AbortSignal) =>
    new Promise<UpstreamAnswer>((resolve) => opened.push({ filter, signal, end: resolve }));
  return { opened, listen };
}

describe("listenFilter", () => {
  it("asks for each list change the server declares and the client's resource subscriptions", () => {
    expect(
      listenFilter({ tools: { listChanged: true }, prompts: {}, resources: { listChanged: true } }, [
        "file:///a",
      ]),
    ).toEqual({ toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ["file:///a"] });
    expect(listenFilter({ tools: {} }, [])).toEqual({});
  });
});

describe("LegacyListen", () => {
  it("drops the acknowledgment and lifts the subscription id off notifications", () => {
    const listen = new LegacyListen({ ...fakeListens(), serverCapabilities: {}, log });
    expect(
      listen.fromServer({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged" }),
    ).toBeUndefined();
    expect(
      listen.fromServer({
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: "file:///a", _meta: { "io.modelcontextprotocol/subscriptionId": "x" } },
      }),
    ).toEqual({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "file:///a" } });
  });

  it("opens nothing when the server offers nothing, and reopens with the new list on subscribe", () => {
    const fake = fakeListens();
    const listen = new LegacyListen({ ...fake, serverCapabilities: {}, log });
    listen.open();
    expect(fake.opened).toHaveLength(0);
    listen.subscribe("file:///a");
    expect(fake.opened.map((o) => o.filter)).toEqual([{ resourceSubscriptions: ["file:///a"] }]);
    listen.unsubscribe("file:///a");
    expect(fake.opened[0]?.signal.aborted).toBe(true);
    listen.close();
  });

  it("reopens a dropped stream after a back-off, gives up after repeated unacknowledged drops, and stops at close", async () => {
    vi.useFakeTimers();
    try {
      const fake = fakeListens();
      const listen = new LegacyListen({
        ...fake,
        serverCapabilities: { tools: { listChanged: true } },
        log,
        firstBackoffMs: 10,
      });
      listen.open();
      expect(fake.opened).toHaveLength(1);
      fake.opened[0]?.end({ error: { code: -32000, message: "dropped" } });
      await vi.advanceTimersByTimeAsync(5);
      expect(fake.opened).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(10);
      expect(fake.opened).toHaveLength(2);
      for (let failure = 2; failure <= LISTEN_MAX_FAILURES + 2; failure++) {
        fake.opened.at(-1)?.end({ error: { code: -32000, message: "dropped" } });
        await vi.advanceTimersByTimeAsync(60_000);
      }
      expect(fake.opened).toHaveLength(LISTEN_MAX_FAILURES);
      listen.close();
      expect(fake.opened.at(-1)?.signal.aborted).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not reopen after close", async () => {
    vi.useFakeTimers();
    try {
      const fake = fakeListens();
      const listen = new LegacyListen({
        ...fake,
        serverCapabilities: { tools: { listChanged: true } },
        log,
        firstBackoffMs: 10,
      });
      listen.open();
      listen.close();
      fake.opened[0]?.end({ result: {} });
      await vi.advanceTimersByTimeAsync(1000);
      expect(fake.opened).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
