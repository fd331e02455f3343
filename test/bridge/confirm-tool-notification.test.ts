/** `--confirm-tool` and a tools/call sent with no id, through the 2025-era relay: dropped, nothing asked, nothing pending, nothing sent. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { scratchDir } from "../support/scratch-dir.js";
import { spawnRawBridge } from "./fixtures/spawn-bridge.js";
import { startTestMcpServer, type TestMcpServer } from "./fixtures/test-mcp-server.js";

let server: TestMcpServer;
beforeAll(async () => {
  server = await startTestMcpServer();
});
afterAll(async () => {
  await server?.close();
});

it("an id-less call of a confirmed tool is dropped without asking the person; the next call is asked as usual", async () => {
  const home = scratchDir("cmb-confirm-notification-");
  const raw = spawnRawBridge(["--confirm-tool", "echo", server.url], { HOME: home, CHAT_CONFIG_DIR: home });
  try {
    raw.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: { form: {} } },
          clientInfo: { name: "raw-notification-test", version: "1.0.0" },
        },
      }),
    );
    await raw.waitFor((m) => m.id === 1);
    raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    raw.send(
      JSON.stringify({
        jsonrpc: "2.0",
        method: "tools/call",
        params: { name: "echo", arguments: { text: "x" } },
      }),
    );
    // A request after it: once it is answered, the notification has been handled (stdin is read in order).
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    await raw.waitFor((m) => m.id === 2);
    expect(raw.stderr()).toContain(
      "--confirm-tool: echo: dropped (sent as a notification, which cannot be confirmed)",
    );
    expect(raw.stderr()).not.toContain("asked the person");
    expect(raw.lines.some((line) => line.includes("elicitation/create"))).toBe(false);
    expect(server.echoed).toEqual([]);

    // The same tool called with an id is asked about (the step still works after the dropped one).
    raw.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "y" } },
      }),
    );
    const asked = await raw.waitFor((m) => m.method === "elicitation/create");
    expect(asked.params).toMatchObject({ mode: "form" });
    // Written before the question, but stderr and stdout are two pipes: the test may read them in either order.
    await expect.poll(() => raw.stderr()).toContain("--confirm-tool: echo: asked the person");
  } finally {
    raw.child.kill();
    await raw.exited(5000).catch(() => undefined);
  }
});
