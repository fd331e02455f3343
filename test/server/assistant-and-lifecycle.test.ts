/** The scripted assistant's rules table, and the server's lifecycle (prompt close with open connections). */
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import {
  ASSISTANT_RULES,
  type AssistantRule,
  ScriptedAssistant,
  startReferenceServer,
} from "../../src/server/index.js";
import { pendingTaskOf } from "../../src/wire/index.js";

describe("Scripted assistant: a rules table that is easy to extend", () => {
  it("a new row adds a flow with its own integrations and script", () => {
    const storage: AssistantRule = {
      name: "storage",
      matches: (text) => /bucket/i.test(text),
      integrations: ["S3", "CloudFront"],
      script: "/scripts/setup-bucket.sh",
      say: { done: () => "Bucket ready." },
    };
    const assistant = new ScriptedAssistant([storage, ...ASSISTANT_RULES]);
    const ask = assistant.reply("Create a bucket");
    expect(ask.finishReason).toBe("tool-calls");
    expect(ask.parts).toContainEqual(
      expect.objectContaining({
        data: { requestedIntegrations: ["S3", "CloudFront"], requestedMcpPresets: [] },
      }),
    );
    const permission = assistant.integrationsConnected(ask.pause!);
    expect(permission.parts).toContainEqual(
      expect.objectContaining({
        type: "tool-call",
        suggestedPermissions: [
          expect.objectContaining({
            input: expect.objectContaining({ executeScript: "/scripts/setup-bucket.sh" }),
          }),
        ],
      }),
    );
    expect(assistant.permissionsApproved(permission.pause!).content).toBe("Bucket ready.");
  });

  it("is deterministic: the same message gets the same answer", () => {
    const assistant = new ScriptedAssistant();
    expect(assistant.reply("hello world")).toEqual(assistant.reply("hello world"));
    expect(pendingTaskOf({ role: "assistant", ...assistant.reply("DataBase please") } as never)?.kind).toBe(
      "integration",
    );
  });
});

describe("startReferenceServer(): url, mcpUrl, apiKeys, close()", () => {
  it("resolves to loopback URLs and a key per seeded slug", async () => {
    const server = await startReferenceServer();
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.mcpUrl).toBe(`${server.url}/mcp`);
      expect(Object.keys(server.apiKeys).sort()).toEqual(["acme", "personal", "secure-corp", "studio"]);
    } finally {
      await server.close();
    }
  });

  it("close() ends promptly even with a half-sent request holding a socket open", async () => {
    const server = await startReferenceServer();
    const { port } = new URL(server.url);
    const socket = connect(Number(port), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("POST /v2/chats HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
    const closedSocket = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => {});
    await server.close();
    await closedSocket;
    await expect(fetch(`${server.url}/v2/chats`)).rejects.toThrow();
  });
});
