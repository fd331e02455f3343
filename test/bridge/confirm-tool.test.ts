/**
 * `--confirm-tool` end to end: a spawned bridge between a legacy and a modern SDK v2 client and the reference server.
 * Approve (the call reaches the server, the chat moves on), deny (nothing reaches it, the chat stays paused), a client
 * without elicitation (refused), a pattern matching several tools, and a hostile argument shown sanitised and short.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import { BRIDGE_BIN } from "./fixtures/spawn-bridge.js";

type Era = "legacy" | "modern";
type ElicitAnswer = { action: "accept"; content: { approve: boolean } } | { action: "decline" | "cancel" };

let server: ReferenceServer;
let rest: ChatClient;
const configDir = join(scratchDir("cmb-confirm-"), "config");

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, testOnlyUnauthenticatedMcpAccount: "personal" });
  const apiKey = server.apiKeys.personal;
  if (!apiKey) throw new Error("no API key for personal");
  rest = new ChatClient({ baseUrl: server.url, token: apiKey });
});
afterAll(async () => {
  await server?.close();
});

interface ConfirmingClient {
  client: Client;
  /** Every elicitation the bridge sent (the message the person read). */
  asked: string[];
  stderr(): string;
  close(): Promise<void>;
}

/** An SDK v2 client of `era` behind a spawned bridge with `flags`; `answer` is what the person says to each question. */
async function connect(
  era: Era,
  flags: string[],
  answer: ElicitAnswer | "no-elicitation",
): Promise<ConfirmingClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE_BIN, "--token-store", "file", ...flags, server.mcpUrl],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CHAT_CONFIG_DIR: configDir },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client(
    { name: `confirm-test-${era}`, version: "1.0.0" },
    {
      capabilities: answer === "no-elicitation" ? {} : { elicitation: { form: {} } },
      ...(era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" as const } } } : {}),
    },
  );
  const asked: string[] = [];
  if (answer !== "no-elicitation") {
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String((request.params as { message?: unknown }).message));
      return answer;
    });
  }
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe(era);
  return { client, asked, stderr: () => stderr, close: () => client.close() };
}

/** A chat of `personal` paused on an integration request for Neon. */
async function pausedChat(): Promise<string> {
  const chat = await rest.createChat({ message: "Build me an app with a database" });
  const pending = await rest.getPendingTask(chat.id);
  expect(pending).toMatchObject({ kind: "integration", integrations: ["Neon"] });
  return chat.id;
}

const confirmNeon = (chatId: string) => ({
  name: "resolve_task",
  arguments: {
    chatId,
    task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"], connectedMcpPresetNames: [] },
  },
});

const toolText = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ type: string; text?: string }>)
    .map((part) => part.text ?? "")
    .join("\n");

const CONFIRM = ["--confirm-tool", "resolve_task", "--confirm-tool", "send_message"];

describe.each<Era>(["legacy", "modern"])("--confirm-tool with a %s client", (era) => {
  it("approve: the person sees the integration, the call reaches the server and the chat moves on", async () => {
    const chatId = await pausedChat();
    const bridge = await connect(era, CONFIRM, { action: "accept", content: { approve: true } });
    try {
      const result = await bridge.client.callTool(confirmNeon(chatId));
      expect(result.isError).toBeFalsy();
      expect(bridge.asked).toHaveLength(1);
      expect(bridge.asked[0]).toContain('call the tool "resolve_task"');
      expect(bridge.asked[0]).toContain("- integration: Neon");
      // The server ran it: the assistant now asks to run its setup script.
      expect(await rest.getPendingTask(chatId)).toMatchObject({ kind: "permissions" });
      // A tool no pattern matches is not asked about.
      await bridge.client.callTool({ name: "get_chat", arguments: { chatId } });
      expect(bridge.asked).toHaveLength(1);
    } finally {
      await bridge.close();
    }
  });

  it.each<ElicitAnswer>([
    { action: "decline" },
    { action: "cancel" },
    { action: "accept", content: { approve: false } },
  ])(
    "deny ($action): a tool error 'denied by the user', no call reached the server, the chat is still paused",
    async (answer) => {
      const chatId = await pausedChat();
      const before = (await rest.listMessages(chatId, { limit: 100 })).data.length;
      const bridge = await connect(era, CONFIRM, answer);
      try {
        const result = await bridge.client.callTool(confirmNeon(chatId));
        expect(result.isError).toBe(true);
        expect(toolText(result)).toContain("denied by the user");
        const sent = await bridge.client.callTool({
          name: "send_message",
          arguments: { chatId, message: "never mind" },
        });
        expect(toolText(sent)).toContain("denied by the user");
        expect(bridge.asked).toHaveLength(2);
      } finally {
        await bridge.close();
      }
      expect(await rest.getPendingTask(chatId)).toMatchObject({
        kind: "integration",
        integrations: ["Neon"],
      });
      expect((await rest.listMessages(chatId, { limit: 100 })).data.length).toBe(before);
    },
  );

  it("a client without elicitation: refused with the flag named, nothing sent", async () => {
    const chatId = await pausedChat();
    const bridge = await connect(era, CONFIRM, "no-elicitation");
    try {
      const result = await bridge.client.callTool(confirmNeon(chatId));
      expect(result.isError).toBe(true);
      expect(toolText(result)).toContain('--confirm-tool "resolve_task"');
      expect(toolText(result)).toContain("did not declare the elicitation capability");
    } finally {
      await bridge.close();
    }
    expect(await rest.getPendingTask(chatId)).toMatchObject({ kind: "integration" });
  });

  it("a pattern matching several tools asks before each of them, and not before the others", async () => {
    const chatId = await pausedChat();
    const bridge = await connect(era, ["--confirm-tool", "get_*"], {
      action: "accept",
      content: { approve: true },
    });
    try {
      const chat = await bridge.client.callTool({ name: "get_chat", arguments: { chatId } });
      const preview = await bridge.client.callTool({ name: "get_preview", arguments: { chatId } });
      await bridge.client.callTool({ name: "list_chats", arguments: {} });
      expect(chat.isError).toBeFalsy();
      expect(preview.isError).toBeFalsy();
      expect(bridge.asked).toHaveLength(2);
      expect(bridge.asked[0]).toContain(`It will read the chat ${chatId}.`);
      expect(bridge.asked[1]).toContain(`It will get the preview link of the chat ${chatId}.`);
    } finally {
      await bridge.close();
    }
  });

  it("works beside --ignore-tool and --read-only: a hidden tool is refused without a question", async () => {
    const bridge = await connect(era, ["--confirm-tool", "*", "--ignore-tool", "create_chat"], {
      action: "accept",
      content: { approve: true },
    });
    try {
      const { tools } = await bridge.client.listTools();
      expect(tools.map((tool) => tool.name)).not.toContain("create_chat");
      await expect(
        bridge.client.callTool({ name: "create_chat", arguments: { message: "x" } }),
      ).rejects.toThrow(/--ignore-tool/);
      expect(bridge.asked).toHaveLength(0);
    } finally {
      await bridge.close();
    }
  });

  it("a rule matching no listed tool is said once, on stderr and to the host as a warning, with the tool meant", async () => {
    const bridge = await connect(era, ["--confirm-tool", "send-message", "--ignore-tool", "get_chat"], {
      action: "accept",
      content: { approve: true },
    });
    const warnings: unknown[] = [];
    bridge.client.setNotificationHandler("notifications/message", (notification) => {
      warnings.push(notification.params);
    });
    try {
      // Only a host that asked for log messages is sent one (the Vercel AI SDK fails on one it did not ask for):
      // a 2025 host with logging/setLevel, a 2026 host with the level in each request's _meta.
      const level = { _meta: { "io.modelcontextprotocol/logLevel": "warning" } };
      if (era === "legacy") await bridge.client.setLoggingLevel("warning");
      await bridge.client.listTools(era === "legacy" ? undefined : level);
      await bridge.client.listTools(era === "legacy" ? undefined : level);
      expect(warnings).toEqual([
        {
          level: "warning",
          logger: "chat-mcp-bridge",
          data: '--confirm-tool "send-message" matches no tool the server lists, so it asks about nothing: the tool meant runs without asking; did you mean send_message?',
        },
      ]);
      await vi.waitFor(() => expect(bridge.stderr()).toContain("did you mean send_message?"));
      expect(bridge.stderr().match(/matches no tool the server lists/g)).toHaveLength(1);
    } finally {
      await bridge.close();
    }
  });

  it("a hostile argument is shown sanitised and shortened, and the log file holds no argument value", async () => {
    const chatId = await pausedChat();
    const logFile = join(configDir, `confirm-${era}.log`);
    const hostile = `PWNED\u001b]0;title\u0007\u001b[2J\u202e${"x".repeat(1024 * 1024)}`;
    const bridge = await connect(era, [...CONFIRM, "--log-file", logFile], { action: "decline" });
    try {
      const result = await bridge.client.callTool({
        name: "send_message",
        arguments: { chatId, message: hostile },
      });
      expect(toolText(result)).toContain("denied by the user");
      const shown = bridge.asked[0] ?? "";
      expect(shown).toContain('- message: "PWNED^[]0;title^G^[[2J<U+202E>xxx');
      expect(shown).toContain("…");
      expect(shown.length).toBeLessThan(2_000);
      expect(shown).not.toMatch(/[\u001b\u0007\u202e]/);
    } finally {
      await bridge.close();
    }
    const log = readFileSync(logFile, "utf8");
    expect(log).toContain("--confirm-tool: send_message: asked the person");
    expect(log).toContain("--confirm-tool: send_message: denied (decline)");
    expect(log).not.toContain("PWNED");
  });
});
