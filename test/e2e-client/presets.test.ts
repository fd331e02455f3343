/**
 * MCP presets end to end on the real reference server: a request for an integration only, a preset only, or both,
 * confirmed and rejected through ChatClient, chat-cli (the built bin) and the MCP `resolve_task` tool.
 */
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChatClient,
  ConflictError,
  type FetchLike,
  type Message,
  MissingHostProjectError,
} from "../../src/index.js";
import type { ReferenceServer } from "../../src/server/index.js";
import { type Chat, type ListPage, pendingTaskOf } from "../../src/wire/index.js";
import { cleanEnv, jsonOf, runCli } from "../cli/helpers.js";
import { connectMcp, HeadlessOAuthProvider, startTestServer } from "../server/oauth/helpers.js";

/** The three kinds of request, the prompt that makes the reference assistant ask for each, and what follows. */
const REQUESTS = {
  "integration only": {
    prompt: "Store my todo items in a database",
    integrations: ["Neon"],
    mcpPresets: [] as string[],
    afterConfirm: "permissions",
  },
  "preset only": {
    prompt: "Track the issues of my app",
    integrations: [] as string[],
    mcpPresets: ["Linear"],
    afterConfirm: "stop",
  },
  both: {
    prompt: "Add a database and track issues",
    integrations: ["Neon"],
    mcpPresets: ["Linear"],
    afterConfirm: "permissions",
  },
} as const;
type RequestKind = keyof typeof REQUESTS;
const KINDS = Object.keys(REQUESTS) as RequestKind[];

let server: ReferenceServer;
let acme: ChatClient;
let mcp: Client;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ autoApprove: "acme" });
  acme = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme, maxRetries: 0 });
  ({ client: mcp } = await connectMcp(server.mcpUrl, new HeadlessOAuthProvider()));
  env = cleanEnv();
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

/** A new acme chat paused on the request of `kind`, checked to ask for exactly its names. */
async function pausedChat(kind: RequestKind): Promise<Chat> {
  const chat = await acme.createChat({ message: REQUESTS[kind].prompt });
  const pending = await acme.getPendingTask(chat.id);
  expect(pending).toMatchObject({
    kind: "integration",
    integrations: REQUESTS[kind].integrations,
    mcpPresets: REQUESTS[kind].mcpPresets,
  });
  return chat;
}

/** The reply after confirming: a permission pause, or a final answer that is not a rejection. */
function expectConfirmed(kind: RequestKind, reply: Message): void {
  const pending = pendingTaskOf(reply);
  if (REQUESTS[kind].afterConfirm === "permissions") {
    expect(pending?.kind).toBe("permissions");
  } else {
    expect(reply.finishReason).toBe("stop");
    expect(pending).toBeNull();
    expect(reply.content).toMatch(/Linear MCP preset is connected/);
  }
  expect(reply.content).not.toMatch(/without/);
}

function expectRejected(kind: RequestKind, reply: Message): void {
  expect(reply.finishReason).toBe("stop");
  expect(pendingTaskOf(reply)).toBeNull();
  const names = [...REQUESTS[kind].integrations, ...REQUESTS[kind].mcpPresets];
  expect(reply.content).toContain(`without ${names.join(", ")}`);
}

describe.each(KINDS)("a request for %s", (kind) => {
  it("ChatClient.confirmIntegrations confirms both lists exactly as requested", async () => {
    const chat = await pausedChat(kind);
    expectConfirmed(kind, await acme.confirmIntegrations(chat.id));
  });

  it("ChatClient.rejectIntegrations rejects it", async () => {
    const chat = await pausedChat(kind);
    expectRejected(kind, await acme.rejectIntegrations(chat.id));
  });

  it("chat-cli pending shows it, and resolve --connected confirms it", async () => {
    const chat = await pausedChat(kind);
    const args = ["--base-url", server.url, "--token", String(server.apiKeys.acme)];
    const shown = await runCli([...args, "pending", chat.id], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`integrations:\t${REQUESTS[kind].integrations.join(", ") || "none"}\n`);
    expect(shown.stdout).toContain(`mcp presets:\t${REQUESTS[kind].mcpPresets.join(", ") || "none"}\n`);
    const resolved = await runCli([...args, "--json", "resolve", chat.id, "--connected"], { env });
    expect(resolved.code, resolved.stderr).toBe(0);
    expectConfirmed(kind, jsonOf(resolved) as Message);
  });

  it("chat-cli resolve --reject rejects it", async () => {
    const chat = await pausedChat(kind);
    const args = ["--base-url", server.url, "--token", String(server.apiKeys.acme)];
    const resolved = await runCli([...args, "--json", "resolve", chat.id, "--reject"], { env });
    expect(resolved.code, resolved.stderr).toBe(0);
    expectRejected(kind, jsonOf(resolved) as Message);
  });

  it.each(["confirm", "reject"] as const)(
    "the MCP resolve_task tool takes the task to %s it",
    async (action) => {
      const created = (await mcp.callTool({
        name: "create_chat",
        arguments: { message: REQUESTS[kind].prompt },
      })) as CallToolResult;
      const chatId = (created.structuredContent as Chat).id;
      const listed = (await mcp.callTool({ name: "list_messages", arguments: { chatId } })) as CallToolResult;
      const latest = (listed.structuredContent as unknown as ListPage<Message>).data.find(
        (m) => m.role === "assistant",
      );
      const part = latest?.parts.find((p) => p.type === "agent-action") as
        | { data: { requestedIntegrations: string[]; requestedMcpPresets: string[] } }
        | undefined;
      expect(part?.data).toEqual({
        requestedIntegrations: REQUESTS[kind].integrations,
        requestedMcpPresets: REQUESTS[kind].mcpPresets,
      });
      const hint = listed.content.map((item) => (item.type === "text" ? item.text : "")).join("\n");
      if (REQUESTS[kind].mcpPresets.length > 0)
        expect(hint).toContain('"connectedMcpPresetNames":["Linear"]');
      const task =
        action === "confirm"
          ? {
              type: "confirmed-steps",
              connectedIntegrationNames: part?.data.requestedIntegrations,
              connectedMcpPresetNames: part?.data.requestedMcpPresets,
            }
          : { type: "confirmed-steps", connectedIntegrationNames: [], connectedMcpPresetNames: [] };
      const result = (await mcp.callTool({
        name: "resolve_task",
        arguments: { chatId, task },
      })) as CallToolResult;
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const reply = result.structuredContent as Message;
      if (action === "confirm") expectConfirmed(kind, reply);
      else expectRejected(kind, reply);
    },
  );
});

describe("the service judges the preset names like the integration names", () => {
  it("confirming a request for both without its presets is a 409, and the chat still waits", async () => {
    const chat = await pausedChat("both");
    const error = await acme
      .resolveTask(chat.id, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toContain("connectedMcpPresetNames");
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("other preset names are a 409", async () => {
    const chat = await pausedChat("preset only");
    const error = await acme
      .resolveTask(chat.id, {
        type: "confirmed-steps",
        connectedIntegrationNames: [],
        connectedMcpPresetNames: ["Jira"],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
  });
});

describe("no hostProjectId, no confirmation", () => {
  it("confirmIntegrations on a studio chat throws MissingHostProjectError and sends nothing", async () => {
    const studio = new ChatClient({ baseUrl: server.url, token: server.apiKeys.studio, maxRetries: 0 });
    const chat = await studio.createChat({ message: REQUESTS.both.prompt });
    expect(chat.hostProjectId).toBeUndefined();
    const before = (await studio.listMessages(chat.id, { limit: 100 })).data;

    const sent: string[] = [];
    const recording: FetchLike = (input, init) => {
      const method = init?.method ?? (input instanceof Request ? input.method : "GET");
      const url = input instanceof Request ? input.url : String(input);
      sent.push(`${method} ${new URL(url).pathname}`);
      return fetch(input, init);
    };
    const watched = new ChatClient({ baseUrl: server.url, token: server.apiKeys.studio, fetch: recording });
    const error = await watched.confirmIntegrations(chat.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingHostProjectError);
    expect((error as MissingHostProjectError).chatId).toBe(chat.id);
    expect((error as Error).message).toContain("hostProjectId");
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((line) => line.startsWith("POST"))).toEqual([]);

    // The server saw no resolve: the chat is unchanged and still waits on the same request.
    expect((await studio.listMessages(chat.id, { limit: 100 })).data).toEqual(before);
    expect((await studio.getPendingTask(chat.id))?.message.id).toBe(before[0]?.id);
    // resolveTask stays the raw escape hatch: the service itself accepts the task.
    const reply = await studio.resolveTask(chat.id, {
      type: "confirmed-steps",
      connectedIntegrationNames: ["Neon"],
      connectedMcpPresetNames: ["Linear"],
    });
    expect(pendingTaskOf(reply)?.kind).toBe("permissions");
  });
});
