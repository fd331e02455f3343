/** The bridge in front of a 2025-era (sessionful) server, with SDK v2 clients of both eras on its stdio side. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2ThroughBridge } from "../fixtures/sdk2-client.js";
import { spawnRawBridge } from "../fixtures/spawn-bridge.js";
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
