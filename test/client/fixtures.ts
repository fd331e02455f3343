/** Wire-format builders and an msw server for ChatClient's unit tests (no network: every request is intercepted). */
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { ClientTestOptions } from "../../src/client/client.js";
import { ChatClient } from "../../src/index.js";
import type { Chat, Message, Permission } from "../../src/wire/index.js";

export const BASE_URL = "http://chat.test";
export const TOKEN = "test-token-not-secret";

/** An msw server started for the calling test file, failing on any request no handler serves. */
export function useMockService() {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return server;
}

/** A client on the mock service whose retry waits are recorded instead of slept. */
export function testClient(options: ClientTestOptions = {}) {
  const waits: number[] = [];
  const client = new ChatClient({
    baseUrl: BASE_URL,
    token: TOKEN,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  } as ClientTestOptions);
  return { client, waits };
}

export function chat(overrides: Partial<Chat> = {}): Chat {
  const id = overrides.id ?? "chat_1";
  return {
    id,
    object: "chat",
    title: "A chat",
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    hostProjectId: "hp_1",
    projectId: "prj_1",
    url: `${BASE_URL}/acme/chats/${id}`,
    ...overrides,
  };
}

let messageCounter = 0;
export function message(overrides: Partial<Message> = {}): Message {
  messageCounter++;
  return {
    id: `msg_${messageCounter}`,
    object: "message",
    chatId: "chat_1",
    role: "assistant",
    content: "Done.",
    parts: [{ type: "text", text: "Done." }],
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, messageCounter)).toISOString(),
    finishReason: "stop",
    ...overrides,
  };
}

export const SETUP_DB_PERMISSION: Permission = {
  type: "ALLOW_DYNAMIC_TOOL_STRICT",
  toolName: "SystemAction",
  input: { systemAction: "executeScript", executeScript: "/scripts/setup-db.sql" },
  note: "extra fields travel unchanged",
};

export function integrationPause(integrations: string[], overrides: Partial<Message> = {}): Message {
  return message({
    content: `Connect ${integrations.join(", ")} to go on.`,
    finishReason: "tool-calls",
    parts: [
      { type: "text", text: "I need an integration." },
      {
        type: "agent-action",
        name: "get_or_request_integration",
        data: { requestedIntegrations: integrations, requestedMcpPresets: [] },
      },
    ],
    ...overrides,
  });
}

export function permissionPause(permissions: Permission[], overrides: Partial<Message> = {}): Message {
  return message({
    content: "May I run the setup script?",
    finishReason: "tool-calls",
    parts: [{ type: "tool-call", name: "SystemAction", input: {}, suggestedPermissions: permissions }],
    ...overrides,
  });
}

export function errorBody(code: string, text: string, extra: Record<string, unknown> = {}) {
  return { error: { code, message: text, ...extra } };
}
