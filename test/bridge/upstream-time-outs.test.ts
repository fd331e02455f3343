/** The time-outs through the relay: the client's error names the time-out and the host. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";
import { startStickyLegacyServer } from "./fixtures/sticky-legacy-server.js";

let server: Server | undefined;
let relay: InProcessRelay | undefined;
afterEach(async () => {
  await relay?.end();
  relay = undefined;
  const listening = server;
  server = undefined;
  if (!listening) return;
  listening.closeAllConnections();
  await new Promise((resolve) => listening.close(resolve));
});

describe("--headers-timeout through the relay", () => {
  it("a server that takes the request and never answers: the client's error names --headers-timeout and the host", async () => {
    server = createServer(() => {});
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The error of one try; the retries within the reconnect window are covered by
    // test/bridge/upstream/reconnect-window.test.ts and test/bridge/eras/modern-reconnect-window.test.ts.
    relay = await startRelayInProcess(["--headers-timeout", "0.1", `http://${host}/mcp`], {
      CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "1",
    });
    relay.send(initializeLine(1));
    const answer = await relay.waitFor((message) => message.id === 1);
    expect(JSON.stringify(answer.error)).toContain(
      `no answer from ${host} within 0.1 s of the request (--headers-timeout)`,
    );
  });
});

describe("--body-timeout through the relay", () => {
  it("a quiet GET event stream is cut at the time-out and opened again; the session goes on", async () => {
    const sticky = await startStickyLegacyServer();
    try {
      relay = await startRelayInProcess(["--body-timeout", "0.3", sticky.url]);
      relay.send(initializeLine(1));
      await relay.waitFor((message) => message.id === 1);
      relay.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      await vi.waitFor(
        () =>
          expect(sticky.seen.filter((request) => request.http === "GET").length).toBeGreaterThanOrEqual(2),
        { timeout: 10_000 },
      );
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
