/** Client request ids are the client's: any string, including ones that look like the bridge's own, is answered (in process). */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";
import { createTestMcpServer, type TestMcpServer } from "./fixtures/test-mcp-server.js";

let server: TestMcpServer;
let raw: InProcessRelay | undefined;
beforeEach(() => {
  server = createTestMcpServer();
});
afterEach(async () => {
  await raw?.end();
  raw = undefined;
  await server.close();
});

describe("client ids that start with chat-mcp-bridge/ are relayed and answered", () => {
  it("initialize, ping and tools/call with ids shaped like the bridge's internal ones all get their answers", async () => {
    raw = await startRelayInProcess([server.url], {}, { fetch: server.fetch });
    raw.send(initializeLine("chat-mcp-bridge/initialize/1"));
    const init = await raw.waitFor((m) => m.id === "chat-mcp-bridge/initialize/1");
    expect(init.result).toBeDefined();
    raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    const ids = ["chat-mcp-bridge/ping/1", "chat-mcp-bridge/", "chat-mcp-bridge/x"];
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: ids[0], method: "ping" }));
    for (const id of ids.slice(1)) {
      raw.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "echo", arguments: { text: id } },
        }),
      );
    }
    for (const id of ids) {
      const answer = await raw.waitFor((m) => m.id === id);
      expect(answer.error, id).toBeUndefined();
    }
  });
});
