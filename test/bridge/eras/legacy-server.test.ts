/** The bridge in front of a 2025-era (sessionful) server, with SDK v2 clients of both eras on its stdio side. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2ThroughBridge } from "../fixtures/sdk2-client.js";
import { BRIDGE_BIN, spawnRawBridge } from "../fixtures/spawn-bridge.js";
import { startTestMcpServer, type TestMcpServer } from "../fixtures/test-mcp-server.js";

let server: TestMcpServer;
let configDir: string;

beforeAll(async () => {
  server = await startTestMcpServer();
  configDir = mkdtempSync(join(tmpdir(), "bridge-eras-legacy-"));
});
afterAll(async () => {
  await server.close();
  rmSync(configDir, { recursive: true, force: true });
});

const env = () => ({ CHAT_CONFIG_DIR: configDir });
const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text;

describe.each(["legacy", "modern"] as const)(
  "a %s client through the bridge to a legacy-only server",
  (era) => {
    it("runs the integration flow: lists tools and calls one", async () => {
      const { client, close } = await connectV2ThroughBridge([server.url], { era, env: env() });
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toContain("echo");
        const result = await client.callTool({
          name: "echo",
          arguments: { text: `legacy server, ${era} client` },
        });
        expect(textOf(result)).toBe(`legacy server, ${era} client`);
        expect(server.echoed).toContain(`legacy server, ${era} client`);
      } finally {
        await close();
      }
    });
  },
);

describe.each(["legacy", "modern"] as const)("a %s client and a legacy server", (era) => {
  it("completes the server's mid-call elicitation (input_required and a retry for a modern client)", async () => {
    const { client, close } = await connectV2ThroughBridge([server.url], {
      era,
      env: env(),
      capabilities: { elicitation: { form: {} } },
      answerElicitation: (message) => ({ answer: `re: ${message}` }),
    });
    try {
      const result = await client.callTool({ name: "ask", arguments: { question: "size?" } });
      expect(textOf(result)).toContain("re: size?");
    } finally {
      await close();
    }
  });
});

describe.each(["legacy", "modern"] as const)("a %s client listening for list changes", (era) => {
  it("gets the server's tools/list_changed through the bridge", async () => {
    const changes: number[] = [];
    const streamsBefore = server.eventStreams();
    const client = new Client(
      { name: `listen-${era}`, version: "1.0.0" },
      {
        ...(era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
        listChanged: {
          tools: { debounceMs: 0, onChanged: (_error, tools) => changes.push(tools?.length ?? -1) },
        },
      },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BRIDGE_BIN, server.url],
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env() },
        stderr: "pipe",
      }),
    );
    try {
      await client.listTools();
      // The session's event stream opens on its own time; a change sent before it opened would be lost.
      await expect
        .poll(server.eventStreams, { timeout: 10_000, interval: 20 })
        .toBeGreaterThan(streamsBefore);
      server.broadcastToolListChanged();
      await expect.poll(() => changes.length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
      expect(changes[0]).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

describe("a modern client's subscriptions/listen over a legacy session", () => {
  it("is acknowledged with what the session delivers, and its notifications carry the subscription id", async () => {
    const streamsBefore = server.eventStreams();
    const bridge = spawnRawBridge([server.url], env());
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "raw-listen", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    try {
      bridge.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: "sub-1",
          method: "subscriptions/listen",
          params: { _meta: meta, notifications: { toolsListChanged: true, promptsListChanged: true } },
        }),
      );
      const ack = await bridge.waitFor((m) => m.method === "notifications/subscriptions/acknowledged");
      expect(ack.params).toEqual({
        _meta: { "io.modelcontextprotocol/subscriptionId": "sub-1" },
        notifications: { toolsListChanged: true },
      });
      // The bridge acknowledges at once; the session's event stream opens on its own time.
      await expect
        .poll(server.eventStreams, { timeout: 10_000, interval: 20 })
        .toBeGreaterThan(streamsBefore);
      server.broadcastToolListChanged();
      const changed = await bridge.waitFor((m) => m.method === "notifications/tools/list_changed");
      expect(changed.params).toEqual({ _meta: { "io.modelcontextprotocol/subscriptionId": "sub-1" } });
      expect(bridge.lines.some((line) => line.includes('"id":"sub-1"'))).toBe(false);
    } finally {
      bridge.child.kill();
    }
  });
});

describe("a server/discover from stdio, for a legacy server", () => {
  it("is answered from the session the bridge opens: the server's own capabilities and name", async () => {
    const bridge = spawnRawBridge([server.url], env());
    try {
      bridge.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }));
      const discover = await bridge.waitFor((m) => m.id === 1);
      expect(discover.result).toMatchObject({
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {} },
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "bridge-test-server" } },
      });
    } finally {
      bridge.child.kill();
    }
  });
});
