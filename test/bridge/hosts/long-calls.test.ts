/**
 * Long calls as hosts run them: a host that times a request out unless progress resets its timer, through the
 * spawned bridge, against a reference server whose assistant takes longer than that time-out, in each era pair.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../../src/server/index.js";
import { scratchDir } from "../../support/scratch-dir.js";
import { BRIDGE_BIN } from "../fixtures/spawn-bridge.js";

/** The host's patience (scaled down from the SDKs' 60 s) and the assistant's time, longer than that. */
const HOST_TIMEOUT_MS = 3000;
const ASSISTANT_MS = 5000;

async function connect(url: string, mode: "legacy" | "modern") {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE_BIN, "--token-store", "file", url],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CHAT_CONFIG_DIR: scratchDir(`cmb-long-calls-${mode}-`),
    },
    stderr: "pipe",
  });
  const client = new Client(
    { name: `long-calls-${mode}`, version: "1.0.0" },
    mode === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(transport);
  return client;
}

describe.concurrent.each(["legacy", "modern"] as const)("a reference server serving the %s era", (mcpEra) => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startReferenceServer({
      port: 0,
      mcpEra,
      testOnlyUnauthenticatedMcpAccount: "acme",
      assistantDelayMs: ASSISTANT_MS,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(["legacy", "modern"] as const)(
    "a %s host: create_chat and send_message outlast the host's time-out on progress, and each ran once",
    async (hostEra) => {
      const client = await connect(server.mcpUrl, hostEra);
      try {
        const progress: Array<{ progress: number; message?: string }> = [];
        const options = {
          timeout: HOST_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          onprogress: (step: { progress: number; message?: string }) => progress.push(step),
        };
        const started = Date.now();
        const title = `long ${mcpEra} ${hostEra} ${started}`;
        const created = await client.callTool(
          { name: "create_chat", arguments: { message: "Hello there", title } },
          options,
        );
        expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
        expect(Date.now() - started).toBeGreaterThan(HOST_TIMEOUT_MS);
        expect(progress.length).toBeGreaterThanOrEqual(3);
        expect(progress.map((step) => step.progress)).toEqual(
          [...progress.map((step) => step.progress)].sort((a, b) => a - b),
        );
        expect(progress[0]?.message).toMatch(/thinking/);
        const chatId = String((created.structuredContent as { id: string }).id);

        progress.length = 0;
        const sent = await client.callTool(
          { name: "send_message", arguments: { chatId, message: "And now?" } },
          options,
        );
        expect(sent.isError, JSON.stringify(sent.content)).toBeFalsy();
        expect(progress.length).toBeGreaterThanOrEqual(3);

        const listed = await client.callTool({ name: "list_chats", arguments: { topic: title } });
        expect((listed.structuredContent as { data: unknown[] }).data).toHaveLength(1);
      } finally {
        await client.close();
      }
    },
    60_000,
  );
});
