/** The time-outs through the relay, in process: the client's error names the time-out and the host. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { IN_PROCESS_ORIGIN, neverAnswers } from "./fixtures/fetch-endpoint.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";
import { createStickyLegacyServer } from "./fixtures/sticky-legacy-server.js";

/** Every timer the relay arms is on the fake clock: the time-outs pass as the test says, not in real time. */
const FAKE_CLOCK: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"],
};

let relay: InProcessRelay | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await relay?.end();
  relay = undefined;
});

describe("--headers-timeout through the relay", () => {
  it("a server that takes the request and never answers: the client's error names --headers-timeout and the host", async () => {
    // In real time, about half a second: five requests of 0.1 s (the era probe three times, initialize twice).
    const host = new URL(IN_PROCESS_ORIGIN).host;
    // The error of one try; the retries within the reconnect window are covered by
    // test/bridge/upstream/reconnect-window.test.ts and test/bridge/eras/modern-reconnect-window.test.ts.
    relay = await startRelayInProcess(
      ["--headers-timeout", "0.1", `${IN_PROCESS_ORIGIN}/mcp`],
      { CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "1" },
      { fetch: neverAnswers },
    );
    // A server that never answered is no evidence of its era: the host's initialize is answered, its list says why.
    relay.send(initializeLine(1));
    await relay.waitFor((message) => message.id === 1);
    relay.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    const answer = await relay.waitFor((message) => message.id === 2);
    expect(JSON.stringify(answer.error)).toContain(
      `no answer from ${host} within 0.1 s of the request (--headers-timeout)`,
    );
  });
});

describe("--body-timeout through the relay", () => {
  it("a quiet GET event stream is cut at the time-out and opened again; the session goes on", async () => {
    // On the fake clock: the time-out and the wait before the stream is opened again pass at once.
    vi.useFakeTimers(FAKE_CLOCK);
    const sticky = createStickyLegacyServer();
    const gets = (count: number) =>
      sticky.seenUntil((seen) => seen.filter((request) => request.http === "GET").length >= count);
    try {
      relay = await startRelayInProcess(["--body-timeout", "0.3", sticky.url], {}, { fetch: sticky.fetch });
      relay.send(initializeLine(1));
      await relay.waitFor((message) => message.id === 1);
      relay.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      await gets(1);
      const reopened = gets(2);
      // The stream's 0.3 s of quiet, then the server's default wait of 1 s before a GET is sent again.
      await vi.advanceTimersByTimeAsync(1_300);
      await reopened;
      relay.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
      const listed = await relay.waitFor((message) => message.id === 2);
      expect(listed.error).toBeUndefined();
    } finally {
      await relay?.end();
      relay = undefined;
      await sticky.close();
    }
  });
});
