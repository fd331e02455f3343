/** The modern era's reconnect window: a request that never reached the server (connection refused) waits for it within the window, as the legacy era's requests do. */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModernMcpServer, startModernMcpServer } from "../fixtures/modern-mcp-server.js";
import { type RawBridge, spawnRawBridge } from "../fixtures/spawn-bridge.js";

/** A TCP forwarder in front of the server that can go away (connections refused) and come back on its port. */
async function startPausableProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  let listener: Server | undefined;
  let port = 0;
  const start = async () => {
    const server = createServer((client) => {
      const upstream = tcpConnect(targetPort, "127.0.0.1");
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        socket.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
    listener = server;
  };
  const stop = async () => {
    const server = listener;
    listener = undefined;
    for (const socket of sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await start();
  return { url: () => `http://127.0.0.1:${port}/mcp`, start, stop };
}

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw-window", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function callEcho(bridge: RawBridge, id: string, text: string): void {
  bridge.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo", arguments: { text }, _meta: ENVELOPE },
    }),
  );
}

let server: ModernMcpServer;
let configDir: string;
beforeAll(async () => {
  server = await startModernMcpServer();
  configDir = mkdtempSync(join(tmpdir(), "bridge-eras-window-"));
});
afterAll(async () => {
  await server.close();
  rmSync(configDir, { recursive: true, force: true });
});

const echoesOf = (text: string) =>
  server.requests.filter(
    (request) =>
      request.method === "tools/call" &&
      (request.body as { params?: { arguments?: { text?: string } } }).params?.arguments?.text === text,
  ).length;

describe("a modern server that goes away for a moment", () => {
  it("gets a request sent while it was unreachable once it is back, within the window", async () => {
    const proxy = await startPausableProxy(Number(new URL(server.url).port));
    const bridge = spawnRawBridge([proxy.url()], {
      CHAT_CONFIG_DIR: configDir,
      CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "10000",
    });
    try {
      callEcho(bridge, "before", "before the blip");
      expect((await bridge.waitFor((m) => m.id === "before")).result).toMatchObject({
        content: [{ text: "before the blip" }],
      });

      await proxy.stop();
      callEcho(bridge, "during", "during the blip");
      // The bridge has tried (and been refused) before the server comes back: its log says so before it retries.
      await expect
        .poll(() => bridge.stderr(), { timeout: 10_000, interval: 20 })
        .toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: .*; retrying/);
      expect(bridge.lines.some((line) => line.includes('"id":"during"'))).toBe(false);
      await proxy.start();

      const during = await bridge.waitFor((m) => m.id === "during");
      expect(during.result).toMatchObject({ content: [{ text: "during the blip" }] });
      expect(echoesOf("during the blip")).toBe(1);
    } finally {
      bridge.child.kill();
      await proxy.stop();
    }
  });

  it("answers it with an error naming the server once the window has passed", async () => {
    const proxy = await startPausableProxy(Number(new URL(server.url).port));
    const bridge = spawnRawBridge([proxy.url()], {
      CHAT_CONFIG_DIR: configDir,
      CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "800",
    });
    try {
      callEcho(bridge, "before", "reached first");
      await bridge.waitFor((m) => m.id === "before");
      await proxy.stop();
      callEcho(bridge, "gone", "never arrives");
      const gone = await bridge.waitFor((m) => m.id === "gone");
      expect((gone.error as { message: string }).message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+/);
      expect(echoesOf("never arrives")).toBe(0);
    } finally {
      bridge.child.kill();
      await proxy.stop();
    }
  });
});
