/** `requestState` of resolve_task's question: bound to the tool call, its arguments and the caller, and spent on first use. */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SpentRequestStates } from "../../../src/server/mcp/request-state.js";
import { createInProcessReferenceServer } from "../../../src/testing/index.js";
import { type Message, pendingTaskOf } from "../../../src/wire/index.js";
import { signInRaw } from "../oauth/helpers.js";

const MODERN = "2026-07-28";

const server = createInProcessReferenceServer({
  testOnlyUnauthenticatedMcpAccount: "acme",
  autoApprove: "acme",
  rateLimit: false,
  oauthRateLimit: false,
});
afterAll(() => server.close());

interface Rpc {
  result?: Record<string, unknown> & {
    isError?: boolean;
    content?: Array<{ text?: string }>;
    structuredContent?: unknown;
    requestState?: string;
  };
  error?: { code: number; message: string };
}

/**
 * One 2026-07-28 `tools/call` through the server's fetch handler, with the standard headers, a client that declares
 * form elicitation, and (when given) the `requestState` and `inputResponses` of a retry.
 */
async function callTool(
  name: string,
  args: Record<string, unknown>,
  retry: { requestState?: string; inputResponses?: Record<string, unknown> } = {},
  authorization?: string,
): Promise<Rpc> {
  const chatId = typeof args.chatId === "string" ? args.chatId : undefined;
  const response = await server.fetch(server.mcpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": name,
      ...(chatId ? { "mcp-param-chatid": chatId } : {}),
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        ...retry,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
        },
      },
    }),
  });
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const data = text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .find((line) => line.includes('"id"'));
    return JSON.parse(data ?? "{}") as Rpc;
  }
  return JSON.parse(text) as Rpc;
}

const approve = { decision: { action: "accept", content: { approve: true } } };
const decline = { decision: { action: "decline" } };

function toolText(rpc: Rpc): string {
  return (rpc.result?.content ?? []).map((item) => item.text ?? "").join("\n");
}

/** A chat that waits for the person to confirm an integration. */
async function waitingChat(): Promise<string> {
  const created = await callTool("create_chat", { message: "I need a database" });
  const chat = created.result?.structuredContent as { id: string } | undefined;
  if (!chat) throw new Error(`create_chat failed: ${JSON.stringify(created)}`);
  return chat.id;
}

/** Asks the person (resolve_task without task) and returns the question's requestState. */
async function question(chatId: string, authorization?: string): Promise<string> {
  const asked = await callTool("resolve_task", { chatId }, {}, authorization);
  expect(asked.result?.resultType).toBe("input_required");
  const state = asked.result?.requestState;
  if (typeof state !== "string") throw new Error(`no requestState: ${JSON.stringify(asked)}`);
  return state;
}

async function pendingKind(chatId: string): Promise<string | undefined> {
  const listed = await callTool("list_messages", { chatId });
  const page = listed.result?.structuredContent as { data: Message[] } | undefined;
  return pendingTaskOf(page?.data.find((message) => message.role === "assistant"))?.kind;
}

/** A refusal: a JSON-RPC error, or a tool error that names the requestState. */
function expectRefused(rpc: Rpc): void {
  if (rpc.error) return;
  expect(rpc.result?.isError, JSON.stringify(rpc.result)).toBe(true);
  expect(toolText(rpc)).toMatch(/requestState/);
}

describe("the honest round", () => {
  it("the question's requestState with the person's approval resolves the task", async () => {
    const chatId = await waitingChat();
    const state = await question(chatId);
    const answered = await callTool(
      "resolve_task",
      { chatId },
      { requestState: state, inputResponses: approve },
    );
    expect(answered.result?.isError, toolText(answered)).toBeFalsy();
    expect(pendingTaskOf(answered.result?.structuredContent as Message)?.kind).toBe("permissions");
  });
});

describe("a requestState is bound to the tool call it was issued for", () => {
  it("is refused on send_message, which does not run", async () => {
    const chatId = await waitingChat();
    const state = await question(chatId);
    const sent = await callTool(
      "send_message",
      { chatId, message: "Go on without it" },
      { requestState: state, inputResponses: approve },
    );
    expectRefused(sent);
    expect(await pendingKind(chatId)).toBe("integration");
  });

  it("is refused on list_chats", async () => {
    const chatId = await waitingChat();
    const state = await question(chatId);
    expectRefused(await callTool("list_chats", {}, { requestState: state, inputResponses: approve }));
  });

  it("is refused on resolve_task with other arguments (another chat)", async () => {
    const chatId = await waitingChat();
    const otherChatId = await waitingChat();
    const state = await question(chatId);
    const answered = await callTool(
      "resolve_task",
      { chatId: otherChatId },
      { requestState: state, inputResponses: approve },
    );
    expectRefused(answered);
    expect(await pendingKind(otherChatId)).toBe("integration");
  });
});

describe("a requestState is used once", () => {
  it("after the person declined, the same state with approve: true resolves nothing", async () => {
    const chatId = await waitingChat();
    const state = await question(chatId);
    const declined = await callTool(
      "resolve_task",
      { chatId },
      { requestState: state, inputResponses: decline },
    );
    expect(declined.result?.isError).toBe(true);
    const replayed = await callTool(
      "resolve_task",
      { chatId },
      { requestState: state, inputResponses: approve },
    );
    expectRefused(replayed);
    expect(toolText(replayed)).toMatch(/already (been )?used/);
    expect(await pendingKind(chatId)).toBe("integration");
  });

  it("an approved state sent again is refused (the second resolve does not run)", async () => {
    const chatId = await waitingChat();
    const state = await question(chatId);
    await callTool("resolve_task", { chatId }, { requestState: state, inputResponses: approve });
    const replayed = await callTool(
      "resolve_task",
      { chatId },
      { requestState: state, inputResponses: approve },
    );
    expectRefused(replayed);
    expect(await pendingKind(chatId)).toBe("permissions");
  });
});

describe("rounds", () => {
  it("a retry without the answer asks again with a new state (the old one spent), at most three rounds", async () => {
    const chatId = await waitingChat();
    let state = await question(chatId);
    const first = state;
    for (let round = 2; round <= 3; round++) {
      const again = await callTool("resolve_task", { chatId }, { requestState: state });
      expect(again.result?.resultType, `round ${round}`).toBe("input_required");
      state = String(again.result?.requestState);
    }
    const fourth = await callTool("resolve_task", { chatId }, { requestState: state });
    expect(fourth.result?.isError).toBe(true);
    expect(toolText(fourth)).toMatch(/asked 3 times/);
    expectRefused(
      await callTool("resolve_task", { chatId }, { requestState: first, inputResponses: approve }),
    );
    expect(await pendingKind(chatId)).toBe("integration");
  });
});

describe("forged and foreign states stay refused", () => {
  let bearer: string;
  beforeAll(async () => {
    // signInRaw speaks plain fetch: send it to the in-process handler instead of a port.
    vi.stubGlobal("fetch", server.fetch);
    try {
      const { tokens } = await signInRaw(server.url, {
        resource: server.mcpUrl,
        scope: "chat:read chat:write",
      });
      bearer = `Bearer ${tokens.access_token}`;
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("a forged state: -32602", async () => {
    const chatId = await waitingChat();
    const answered = await callTool(
      "resolve_task",
      { chatId },
      { requestState: "v1.forged.state", inputResponses: approve },
    );
    expect(answered.error?.code).toBe(-32602);
  });

  it("a state issued to another caller: -32602, and the chat still waits", async () => {
    const chatId = await waitingChat();
    const state = await question(chatId);
    const answered = await callTool(
      "resolve_task",
      { chatId },
      { requestState: state, inputResponses: approve },
      bearer,
    );
    expect(answered.error?.code).toBe(-32602);
    expect(await pendingKind(chatId)).toBe("integration");
  });
});

describe("SpentRequestStates: the bounded memory of spent states", () => {
  it("a nonce is spent once; once its lifetime is over it is forgotten", () => {
    let now = 0;
    const spent = new SpentRequestStates({ ttlMs: 1_000, maxEntries: 10, now: () => now });
    expect(spent.spend("a")).toBe("spent");
    expect(spent.spend("a")).toBe("already-spent");
    now = 999;
    expect(spent.spend("a")).toBe("already-spent");
    now = 1_000;
    expect(spent.size).toBe(0);
    expect(spent.spend("b")).toBe("spent");
    expect(spent.size).toBe(1);
  });

  it("when full of unexpired states it refuses to spend more (never forgets one early)", () => {
    let now = 0;
    const spent = new SpentRequestStates({ ttlMs: 1_000, maxEntries: 2, now: () => now });
    expect(spent.spend("a")).toBe("spent");
    now = 500;
    expect(spent.spend("b")).toBe("spent");
    expect(spent.spend("c")).toBe("full");
    expect(spent.retryAfterMs()).toBe(500);
    expect(spent.spend("a")).toBe("already-spent");
    now = 1_000;
    expect(spent.spend("c")).toBe("spent");
    expect(spent.spend("b")).toBe("already-spent");
  });
});
