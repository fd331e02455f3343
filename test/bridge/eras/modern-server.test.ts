/** The bridge in front of a modern-only (2026-07-28) server, with SDK v2 clients of both eras on its stdio side. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModernMcpServer, startModernMcpServer } from "../fixtures/modern-mcp-server.js";
import { connectV2ThroughBridge } from "../fixtures/sdk2-client.js";
import { initializeLine, spawnRawBridge } from "../fixtures/spawn-bridge.js";

let server: ModernMcpServer;
let configDir: string;

beforeAll(async () => {
  server = await startModernMcpServer();
  configDir = mkdtempSync(join(tmpdir(), "bridge-eras-"));
});
afterAll(async () => {
  await server.close();
  rmSync(configDir, { recursive: true, force: true });
});

const env = () => ({ CHAT_CONFIG_DIR: configDir });
const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text;

describe.each(["legacy", "modern"] as const)(
  "a %s client through the bridge to a modern-only server",
  (era) => {
    it("runs the integration flow: lists tools (invalid x-mcp-header tool dropped) and calls one", async () => {
      const { client, close } = await connectV2ThroughBridge([server.url], { era, env: env() });
      try {
        const { tools } = await client.listTools();
        const names = tools.map((tool) => tool.name).sort();
        expect(names).toEqual(["ask", "echo", "get_chat", "slow"]);
        const result = await client.callTool({ name: "echo", arguments: { text: `hello ${era}` } });
        expect(textOf(result)).toBe(`hello ${era}`);
      } finally {
        await close();
      }
    });

    it("mirrors x-mcp-header arguments into Mcp-Param-* and sends the standard headers", async () => {
      const { client, close } = await connectV2ThroughBridge([server.url], { era, env: env() });
      try {
        const chatId = `chat-${era}-é`;
        const result = await client.callTool({ name: "get_chat", arguments: { chatId } });
        expect(textOf(result)).toBe(`chat ${chatId}`);
        const seen = server.requests.filter(
          (request) =>
            request.method === "tools/call" &&
            (request.body as { params: { arguments?: { chatId?: string } } }).params.arguments?.chatId ===
              chatId,
        );
        expect(seen).toHaveLength(1);
        expect(seen[0]?.headers).toMatchObject({
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "get_chat",
          "mcp-param-chatid": `=?base64?${Buffer.from(chatId).toString("base64")}?=`,
          "mcp-session-id": undefined,
        });
      } finally {
        await close();
      }
    });

    it("completes an elicitation round trip (input_required), the requestState echoed byte for byte", async () => {
      const { client, close } = await connectV2ThroughBridge([server.url], {
        era,
        env: env(),
        capabilities: { elicitation: { form: {} } },
        answerElicitation: (message) => ({ answer: `answer to ${message}` }),
      });
      try {
        const result = await client.callTool({ name: "ask", arguments: { question: "colour?" } });
        expect(textOf(result)).toBe("answer to colour? (state state-for:colour?)");
      } finally {
        await close();
      }
    });

    it("lets the server observe a cancellation", async () => {
      const { client, close } = await connectV2ThroughBridge([server.url], { era, env: env() });
      try {
        const controller = new AbortController();
        const call = client.callTool(
          { name: "slow", arguments: { tag: `cancel-${era}` } },
          { signal: controller.signal },
        );
        await waitUntil(() => server.requests.some((r) => JSON.stringify(r.body).includes(`cancel-${era}`)));
        controller.abort();
        await expect(call).rejects.toThrow();
        await waitUntil(() => server.cancelled.includes(`cancel-${era}`));
      } finally {
        await close();
      }
    });
  },
);

describe("a legacy client's session semantics over a stateless server", () => {
  it("answers initialize from server/discover, ping locally, and stamps every request with the client's envelope", async () => {
    const before = server.requests.length;
    const bridge = spawnRawBridge([server.url], env());
    try {
      bridge.send(initializeLine(1));
      const init = await bridge.waitFor((m) => m.id === 1);
      expect(init.result).toMatchObject({
        protocolVersion: "2025-06-18",
        serverInfo: { name: "modern-test-server", version: "2.0.0" },
      });
      bridge.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      bridge.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }));
      expect((await bridge.waitFor((m) => m.id === 2)).result).toEqual({});
      bridge.send(
        JSON.stringify({ jsonrpc: "2.0", id: 3, method: "logging/setLevel", params: { level: "debug" } }),
      );
      expect((await bridge.waitFor((m) => m.id === 3)).result).toEqual({});
      bridge.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 4,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "stamped" } },
        }),
      );
      const echoed = await bridge.waitFor((m) => m.id === 4);
      expect(echoed.result).not.toHaveProperty("resultType");
      bridge.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }));
      const listed = await bridge.waitFor((m) => m.id === 5);
      expect(listed.result).not.toHaveProperty("ttlMs");
      expect(listed.result).not.toHaveProperty("cacheScope");
      const mine = server.requests.slice(before);
      expect(mine.map((r) => r.method)).not.toContain("initialize");
      expect(mine.map((r) => r.method)).not.toContain("ping");
      const call = mine.find((r) => r.method === "tools/call");
      expect(call).toBeDefined();
      expect((call!.body as { params: { _meta: Record<string, unknown> } }).params._meta).toMatchObject({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "raw-test", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/logLevel": "debug",
      });
    } finally {
      bridge.child.kill();
    }
  });

  it("delivers list changes through subscriptions/listen, reopened when the stream drops", async () => {
    const listens = () => server.requests.filter((r) => r.method === "subscriptions/listen");
    const before = listens().length;
    const subscribedBefore = server.subscribedListens();
    const bridge = spawnRawBridge([server.url], env());
    const changes = () => bridge.lines.filter((line) => line.includes("notifications/tools/list_changed"));
    try {
      bridge.send(initializeLine(1));
      await bridge.waitFor((m) => m.id === 1);
      bridge.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      await waitUntil(() => listens().length === before + 1);
      expect(listens().at(-1)?.body).toMatchObject({
        params: {
          notifications: { toolsListChanged: true },
          _meta: { "io.modelcontextprotocol/clientInfo": { name: "raw-test" } },
        },
      });
      await waitUntil(() => server.subscribedListens() === subscribedBefore + 1);
      server.toolsChanged();
      const first = await bridge.waitFor((m) => m.method === "notifications/tools/list_changed");
      expect(first.params ?? {}).not.toHaveProperty("_meta");
      expect(bridge.lines.some((line) => line.includes("subscriptions/acknowledged"))).toBe(false);
      server.dropListens();
      await waitUntil(() => listens().length >= before + 2);
      await waitUntil(() => server.subscribedListens() >= subscribedBefore + 2);
      server.toolsChanged();
      await waitUntil(() => changes().length >= 2);
    } finally {
      bridge.child.kill();
    }
  });

  it("gives a modern client's own listen its notifications under its own subscription id", async () => {
    const bridge = spawnRawBridge([server.url], env());
    try {
      bridge.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: "sub-m",
          method: "subscriptions/listen",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "raw-modern", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
            notifications: { toolsListChanged: true },
          },
        }),
      );
      const ack = await bridge.waitFor((m) => m.method === "notifications/subscriptions/acknowledged");
      expect(ack.params).toMatchObject({ _meta: { "io.modelcontextprotocol/subscriptionId": "sub-m" } });
      server.toolsChanged();
      const changed = await bridge.waitFor((m) => m.method === "notifications/tools/list_changed");
      expect(changed.params).toMatchObject({ _meta: { "io.modelcontextprotocol/subscriptionId": "sub-m" } });
    } finally {
      bridge.child.kill();
    }
  });

  it("answers an elicitation the client did not declare with a clear error, nothing asked", async () => {
    const bridge = spawnRawBridge([server.url], env());
    try {
      bridge.send(initializeLine(1));
      await bridge.waitFor((m) => m.id === 1);
      bridge.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "ask", arguments: { question: "q" } },
        }),
      );
      const refused = await bridge.waitFor((m) => m.id === 2);
      expect((refused.error as { message: string }).message).toMatch(/did not declare.*elicitation/is);
      expect(bridge.lines.some((line) => line.includes('"method":"elicitation/create"'))).toBe(false);
    } finally {
      bridge.child.kill();
    }
  });

  it("remembers the verdict beside the logins, so the next start does not probe", async () => {
    const files = readdirSync(join(configDir, "eras"));
    expect(files).toHaveLength(1);
    const stored = JSON.parse(readFileSync(join(configDir, "eras", files[0] as string), "utf8"));
    expect(stored).toMatchObject({ era: "modern", protocolVersion: "2026-07-28" });
    expect(stored.expiresAt).toBeGreaterThan(Date.now());
    const discovers = () => server.requests.filter((r) => r.method === "server/discover").length;
    const before = discovers();
    const { client, close } = await connectV2ThroughBridge([server.url], { era: "legacy", env: env() });
    try {
      await client.listTools();
      expect(discovers()).toBe(before);
    } finally {
      await close();
    }
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
