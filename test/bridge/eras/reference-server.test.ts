/** The matrix against the reference server in each of its eras: SDK v2 clients (legacy, modern, auto) through the spawned bridge. */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../../src/server/index.js";
import { findIntegrationRequest, type Message, MessageSchema } from "../../../src/wire/index.js";
import { scratchDir } from "../../support/scratch-dir.js";
import { startEventStreamWatch } from "../fixtures/event-stream-watch.js";
import { BRIDGE_BIN } from "../fixtures/spawn-bridge.js";

type ClientMode = "legacy" | "modern" | "auto";

/**
 * An SDK v2 client through a spawned bridge; it approves every elicitation the server puts to the person, and
 * records the tool names it lists again after each `notifications/tools/list_changed`.
 */
async function connect(url: string, mode: ClientMode, configDir: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE_BIN, "--token-store", "file", url],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CHAT_CONFIG_DIR: configDir },
    stderr: "pipe",
  });
  const relisted: string[][] = [];
  const client = new Client(
    { name: `matrix-${mode}`, version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {} } },
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (_error, tools) => relisted.push((tools ?? []).map((tool) => tool.name)),
        },
      },
      ...(mode === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
      ...(mode === "auto" ? { versionNegotiation: { mode: "auto" } } : {}),
    },
  );
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(String((request.params as { message?: unknown }).message));
    return { action: "accept", content: { approve: true } };
  });
  await client.connect(transport);
  return { client, asked, relisted };
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

describe.each(["modern", "legacy"] as const)("the reference server serving the %s era", (mcpEra) => {
  let server: ReferenceServer;
  let configDir: string;
  beforeAll(async () => {
    server = await startReferenceServer({ port: 0, mcpEra, testOnlyUnauthenticatedMcpAccount: "acme" });
    configDir = scratchDir(`cmb-eras-ref-${mcpEra}-`);
  });
  afterAll(async () => {
    await server?.close();
  });

  describe.each(["legacy", "modern", "auto"] as const)("a %s SDK v2 client through the bridge", (mode) => {
    it("runs the integration flow, both pauses resolved through elicitation, and reads the chat by its x-mcp-header id", async () => {
      const { client, asked } = await connect(server.mcpUrl, mode, configDir);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(
          expect.arrayContaining(["create_chat", "get_chat", "resolve_task", "send_message"]),
        );
        const chat = await call(client, "create_chat", { message: "Please set up a Database" });
        const chatId = String(chat.id);
        const page = await call(client, "list_messages", { chatId, limit: 10 });
        const paused = (page.data as unknown[])
          .map((item) => MessageSchema.parse(item))
          .find((message) => message.role === "assistant") as Message;
        expect(findIntegrationRequest(paused)?.integrations).toEqual(["Neon"]);

        // No `task`: the server asks the person (input_required or elicitation/create, by era), the bridge translates.
        const afterSteps = MessageSchema.parse(await call(client, "resolve_task", { chatId }));
        expect(afterSteps.finishReason).toBe("tool-calls");
        const done = MessageSchema.parse(await call(client, "resolve_task", { chatId }));
        expect(done.finishReason).toBe("stop");
        expect(asked).toHaveLength(2);

        expect(await call(client, "get_chat", { chatId })).toMatchObject({ id: chatId, url: chat.url });
      } finally {
        await client.close();
      }
    });

    it("lists the tools again on tools/list_changed when the server goes read-only, and back", async () => {
      // Through a proxy that tells when the server has opened an event stream for the bridge or the client.
      const watch = await startEventStreamWatch(new URL(server.mcpUrl).origin);
      const { client, relisted } = await connect(watch.mcpUrl, mode, configDir);
      const withWrites = (names: string[] | undefined) => names?.includes("create_chat") === true;
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("create_chat");
        // The client's listen (or the session's event stream) opens on its own time, and a change published
        // before it opened is lost: the server goes read-only as each stream opens, until a change lands.
        let streamsSeen = 0;
        await expect
          .poll(
            () => {
              if (watch.openedStreams() > streamsSeen) {
                streamsSeen = watch.openedStreams();
                server.setReadOnly(false);
                server.setReadOnly(true);
              }
              return relisted.some((names) => !withWrites(names));
            },
            { timeout: 15_000, interval: 20 },
          )
          .toBe(true);
        const readOnly = relisted.find((names) => !withWrites(names));
        expect(readOnly).toEqual(expect.arrayContaining(["list_chats", "get_chat", "list_messages"]));
        expect(readOnly).not.toContain("send_message");
        await expect(client.callTool({ name: "create_chat", arguments: { message: "hi" } })).rejects.toThrow(
          /create_chat disabled/,
        );

        const seen = relisted.length;
        server.setReadOnly(false);
        await expect.poll(() => withWrites(relisted.at(-1)) && relisted.length > seen).toBe(true);
        expect(typeof (await call(client, "create_chat", { message: "hello again" })).id).toBe("string");
      } finally {
        server.setReadOnly(false);
        await client.close();
        await watch.close();
      }
    });

    it("a cancelled call is rejected at the client and the bridge goes on answering", async () => {
      const { client } = await connect(server.mcpUrl, mode, configDir);
      try {
        const controller = new AbortController();
        const cancelled = client.callTool(
          { name: "create_chat", arguments: { message: "Please set up a Database" } },
          { signal: controller.signal },
        );
        controller.abort();
        await expect(cancelled).rejects.toThrow();
        expect((await call(client, "list_chats", {})).object).toBe("list");
      } finally {
        await client.close();
      }
    });
  });
});
