/** runRelay's `firstAnswer`: resolved by the first line written to the client, not before. */
import { afterEach, describe, expect, it } from "vitest";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";
import { createTestMcpServer, type TestMcpServer } from "./fixtures/test-mcp-server.js";

let server: TestMcpServer | undefined;
let relay: InProcessRelay | undefined;
afterEach(async () => {
  await relay?.end();
  relay = undefined;
  await server?.close();
  server = undefined;
});

describe("a relay's first answer", () => {
  it("is pending until a line is written to the client, then resolved", async () => {
    server = createTestMcpServer();
    relay = await startRelayInProcess([server.url], {}, { fetch: server.fetch });
    let started = false;
    void relay.firstAnswer.then(() => {
      started = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(false);
    expect(relay.lines).toEqual([]);
    relay.send(initializeLine(1));
    await relay.waitFor((message) => message.id === 1);
    await relay.firstAnswer;
    expect(started).toBe(true);
  });
});
