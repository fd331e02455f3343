/** One tools/call flows one way through the bridge: the translator only when the eras differ, each message logged once. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ModernClientOverLegacy } from "../../src/bridge/translate/modern-client-over-legacy.js";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { MODERN_ENVELOPE } from "./fixtures/in-process-relays.js";
import { createModernMcpServer } from "./fixtures/modern-mcp-server.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";
import { createTestMcpServer } from "./fixtures/test-mcp-server.js";

let relay: InProcessRelay | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await relay?.end();
  relay = undefined;
  for (const close of closers.splice(0)) await close();
  vi.restoreAllMocks();
});

const line = (message: Record<string, unknown>) => JSON.stringify({ jsonrpc: "2.0", ...message });

describe("the translator sits only between different eras", () => {
  it("a 2025 client over a 2025 server never passes through it", async () => {
    const translated = vi.spyOn(ModernClientOverLegacy.prototype, "fromClient");
    const server = createTestMcpServer();
    closers.push(() => server.close());
    relay = await startRelayInProcess([server.url], {}, { fetch: server.fetch });
    relay.send(initializeLine(1));
    await relay.waitFor((m) => m.id === 1);
    relay.send(line({ method: "notifications/initialized" }));
    relay.send(line({ id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } }));
    const answer = await relay.waitFor((m) => m.id === 2);
    expect(answer.result).toBeDefined();
    expect(translated).not.toHaveBeenCalled();
  });

  it("a 2026-07-28 client over a 2025 server is carried by it", async () => {
    const translated = vi.spyOn(ModernClientOverLegacy.prototype, "fromClient");
    const server = createTestMcpServer();
    closers.push(() => server.close());
    relay = await startRelayInProcess([server.url], {}, { fetch: server.fetch });
    const params = { name: "echo", arguments: { text: "hi" }, _meta: MODERN_ENVELOPE };
    relay.send(line({ id: 1, method: "tools/call", params }));
    const answer = await relay.waitFor((m) => m.id === 1);
    expect((answer.result as { resultType?: unknown }).resultType).toBe("complete");
    expect(translated).toHaveBeenCalled();
  });
});

describe("--debug logs each client message once", () => {
  it.each([
    ["a 2026-07-28 client", line({ id: 7, method: "tools/list", params: { _meta: MODERN_ENVELOPE } })],
    ["a 2025 client", line({ id: 7, method: "ping" })],
  ])("%s over a 2026-07-28 server", async (_who, request) => {
    const server = createModernMcpServer();
    closers.push(() => server.close());
    relay = await startRelayInProcess(["--debug", server.url], {}, { fetch: server.fetch });
    if (request.includes('"ping"')) {
      relay.send(initializeLine(1));
      await relay.waitFor((m) => m.id === 1);
    }
    relay.send(request);
    await relay.waitFor((m) => m.id === 7);
    const logged = relay
      .stderr()
      .split("\n")
      .filter((text) => /client → server .*\b7\b/.test(text));
    expect(logged).toHaveLength(1);
  });
});
