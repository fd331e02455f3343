/** `/mcp` serves MCP 2026-07-28 and 2025-11-25 at once: SDK v2 clients of each era through the server's handler (no port), elicitation, headers, caching, listen. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import {
  approvedPermissionsFor,
  confirmedStepsFor,
  type ListPage,
  type Message,
  pendingTaskOf,
  TOOL_NAMES,
} from "../../../src/wire/index.js";
import { signInRaw, startInProcessTestServer } from "../oauth/helpers.js";

const MODERN = "2026-07-28";

type Era = "modern" | "legacy";
type Answer =
  | { action: "accept"; content: { approve: boolean } }
  | { action: "decline" }
  | { action: "cancel" };

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
}

/** An SDK v2 client of one era; with `answers`, it declares form elicitation and answers each question in turn. */
async function connect(
  mcpUrl: string,
  token: string,
  era: Era,
  answers?: Answer[],
): Promise<{ client: Client; questions: string[] }> {
  const questions: string[] = [];
  const client = new Client(
    { name: `test-${era}`, version: "1.0.0" },
    {
      capabilities: answers ? { elicitation: { form: {} } } : {},
      ...(era === "modern" ? { versionNegotiation: { mode: { pin: MODERN } } } : {}),
    },
  );
  if (answers) {
    client.setRequestHandler("elicitation/create", async (request) => {
      questions.push(String((request.params as { message?: unknown }).message));
      const answer = answers.shift();
      if (!answer) throw new Error("unexpected question");
      return answer;
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, questions };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

function ok<T>(result: ToolResult): T {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
}

function errorText(result: ToolResult): string {
  expect(result.isError).toBe(true);
  return result.content.map((item) => item.text ?? "").join("\n");
}

async function latestAssistant(client: Client, chatId: string): Promise<Message> {
  const page = ok<ListPage<Message>>(await call(client, "list_messages", { chatId }));
  const message = page.data.find((candidate) => candidate.role === "assistant");
  if (!message) throw new Error("no assistant message");
  return message;
}

/** A raw 2026-07-28 request with the `_meta` envelope and the standard headers (overridable). */
function modernRequest(
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string | undefined> = {},
  version = MODERN,
): { headers: Record<string, string>; body: string } {
  const base: Record<string, string | undefined> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": version,
    "mcp-method": method,
    ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
    ...headers,
  };
  return {
    headers: Object.fromEntries(Object.entries(base).filter(([, value]) => value !== undefined)) as Record<
      string,
      string
    >,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  };
}

/** The JSON-RPC message of a response, whether it came as JSON or as the first SSE `data:` event. */
async function rpcOf(
  response: Response,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }> {
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const data = text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .find((line) => line.includes('"id"'));
    return JSON.parse(data ?? "{}");
  }
  return JSON.parse(text);
}

let server: ReferenceServer;
let token: string;

beforeAll(async () => {
  server = startInProcessTestServer({ autoApprove: "acme" });
  ({
    tokens: { access_token: token },
  } = await signInRaw(server.url, { resource: server.mcpUrl, scope: "chat:read chat:write" }));
});
afterAll(() => server?.close());

describe.each(["modern", "legacy"] as const)("an SDK v2 client in %s mode", (era) => {
  it("negotiates its era and lists the seven tools in a fixed order, chatId annotated x-mcp-header", async () => {
    const { client } = await connect(server.mcpUrl, token, era);
    expect(client.getProtocolEra()).toBe(era);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
    for (const tool of tools) {
      const chatId = (tool.inputSchema.properties as Record<string, Record<string, unknown>> | undefined)
        ?.chatId;
      if (chatId) expect(chatId["x-mcp-header"]).toBe("ChatId");
    }
    expect(tools.filter((tool) => tool.inputSchema.properties?.chatId)).toHaveLength(5);
    await client.close();
  });

  it("runs the whole integration flow with explicit tasks", async () => {
    const { client } = await connect(server.mcpUrl, token, era);
    const chat = ok<{ id: string; url: string }>(
      await call(client, "create_chat", { message: "Set up a database and track issues" }),
    );
    expect(chat.url).toContain("/acme/");
    const asking = pendingTaskOf(await latestAssistant(client, chat.id));
    if (asking?.kind !== "integration")
      throw new Error(`expected an integration request, got ${asking?.kind}`);
    expect(asking.integrations).toEqual(["Neon"]);
    expect(asking.mcpPresets).toEqual(["Linear"]);
    const afterSteps = ok<Message>(
      await call(client, "resolve_task", { chatId: chat.id, task: confirmedStepsFor(asking) }),
    );
    const permissions = pendingTaskOf(afterSteps);
    if (permissions?.kind !== "permissions") throw new Error("expected a permission request");
    const done = ok<Message>(
      await call(client, "resolve_task", { chatId: chat.id, task: approvedPermissionsFor(permissions) }),
    );
    expect(done.finishReason).toBe("stop");
    await client.close();
  });

  describe("resolve_task without task asks the person through elicitation", () => {
    it("confirms the integrations, then approves the script, each with the names shown", async () => {
      const { client, questions } = await connect(server.mcpUrl, token, era, [
        { action: "accept", content: { approve: true } },
        { action: "accept", content: { approve: true } },
      ]);
      const chat = ok<{ id: string }>(await call(client, "create_chat", { message: "I need a database" }));
      const afterSteps = ok<Message>(await call(client, "resolve_task", { chatId: chat.id }));
      expect(questions[0]).toContain("Neon");
      expect(pendingTaskOf(afterSteps)?.kind).toBe("permissions");
      const done = ok<Message>(await call(client, "resolve_task", { chatId: chat.id }));
      expect(questions[1]).toContain("/scripts/setup-db.sql");
      expect(done.finishReason).toBe("stop");
      await client.close();
    });

    it("a refusal of the integrations rejects them (the assistant goes on without)", async () => {
      const { client } = await connect(server.mcpUrl, token, era, [
        { action: "accept", content: { approve: false } },
      ]);
      const chat = ok<{ id: string }>(await call(client, "create_chat", { message: "I need a database" }));
      const reply = ok<Message>(await call(client, "resolve_task", { chatId: chat.id }));
      expect(pendingTaskOf(reply)).toBeNull();
      await client.close();
    });

    it("a dismissed dialog resolves nothing: a tool error, and the chat still waits", async () => {
      const { client } = await connect(server.mcpUrl, token, era, [{ action: "decline" }]);
      const chat = ok<{ id: string }>(await call(client, "create_chat", { message: "I need a database" }));
      expect(errorText(await call(client, "resolve_task", { chatId: chat.id }))).toMatch(
        /nothing was resolved/,
      );
      expect(pendingTaskOf(await latestAssistant(client, chat.id))?.kind).toBe("integration");
      await client.close();
    });

    it("a client without the elicitation capability gets a tool error saying to pass task", async () => {
      const { client } = await connect(server.mcpUrl, token, era);
      const chat = ok<{ id: string }>(await call(client, "create_chat", { message: "I need a database" }));
      const text = errorText(await call(client, "resolve_task", { chatId: chat.id }));
      expect(text).toMatch(/`task` is required/);
      expect(pendingTaskOf(await latestAssistant(client, chat.id))?.kind).toBe("integration");
      await client.close();
    });
  });
});

describe("modern requests: standard headers", () => {
  let chatId: string;
  beforeAll(async () => {
    const { client } = await connect(server.mcpUrl, token, "modern");
    chatId = ok<{ id: string }>(await call(client, "create_chat", { message: "hello" })).id;
    await client.close();
  });
  const post = (request: { headers: Record<string, string>; body: string }) =>
    fetch(server.mcpUrl, {
      method: "POST",
      headers: { ...request.headers, authorization: `Bearer ${token}` },
      body: request.body,
    });

  it("Mcp-Param-ChatId equal to the argument is served", async () => {
    const response = await post(
      modernRequest(
        "tools/call",
        { name: "get_chat", arguments: { chatId } },
        { "mcp-param-chatid": chatId },
      ),
    );
    expect(response.status).toBe(200);
    const rpc = await rpcOf(response);
    expect(rpc.result?.resultType).toBe("complete");
    expect((rpc.result?.structuredContent as { id?: string } | undefined)?.id).toBe(chatId);
  });

  it("Mcp-Param-ChatId different from the argument: HTTP 400, -32020", async () => {
    const response = await post(
      modernRequest(
        "tools/call",
        { name: "get_chat", arguments: { chatId } },
        { "mcp-param-chatid": "chat_other" },
      ),
    );
    expect(response.status).toBe(400);
    expect((await rpcOf(response)).error?.code).toBe(-32020);
  });

  it("Mcp-Param-ChatId missing: HTTP 400, -32020", async () => {
    const response = await post(modernRequest("tools/call", { name: "get_chat", arguments: { chatId } }));
    expect(response.status).toBe(400);
    expect((await rpcOf(response)).error?.code).toBe(-32020);
  });

  it("Mcp-Method disagreeing with the body: HTTP 400, -32020", async () => {
    const response = await post(modernRequest("tools/list", {}, { "mcp-method": "tools/call" }));
    expect(response.status).toBe(400);
    expect((await rpcOf(response)).error?.code).toBe(-32020);
  });

  it("an unknown protocol version: -32022 naming the supported ones", async () => {
    const response = await post(modernRequest("tools/list", {}, {}, "2099-01-01"));
    const rpc = await rpcOf(response);
    expect(rpc.error?.code).toBe(-32022);
    expect((rpc.error?.data as { supported?: string[] } | undefined)?.supported).toContain(MODERN);
  });

  it("GET and DELETE without a session are 405 (the modern era has no session operations)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(server.mcpUrl, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
      });
      expect(response.status, method).toBe(405);
      await response.body?.cancel();
    }
  });

  it("a forged requestState is refused", async () => {
    const response = await post(
      modernRequest(
        "tools/call",
        {
          name: "resolve_task",
          arguments: { chatId },
          requestState: "forged.state",
          inputResponses: { decision: { action: "accept", content: { approve: true } } },
        },
        { "mcp-param-chatid": chatId },
      ),
    );
    const rpc = await rpcOf(response);
    expect(rpc.error?.code).toBe(-32602);
  });
});

describe("modern requests: caching fields and subscriptions/listen", () => {
  const post = (request: { headers: Record<string, string>; body: string }) =>
    fetch(server.mcpUrl, {
      method: "POST",
      headers: { ...request.headers, authorization: `Bearer ${token}` },
      body: request.body,
    });

  it("server/discover answers the supported versions, capabilities and a real ttlMs/cacheScope", async () => {
    const rpc = await rpcOf(await post(modernRequest("server/discover", {})));
    expect(rpc.result?.resultType).toBe("complete");
    expect(rpc.result?.supportedVersions).toContain(MODERN);
    expect(
      (rpc.result?.capabilities as { tools?: { listChanged?: boolean } } | undefined)?.tools?.listChanged,
    ).toBe(true);
    expect(rpc.result?.ttlMs).toBe(300_000);
    expect(rpc.result?.cacheScope).toBe("public");
  });

  it("tools/list carries ttlMs/cacheScope and the same order every time", async () => {
    const first = await rpcOf(await post(modernRequest("tools/list", {})));
    const second = await rpcOf(await post(modernRequest("tools/list", {})));
    expect(first.result?.ttlMs).toBe(300_000);
    expect(first.result?.cacheScope).toBe("public");
    const names = (result: Record<string, unknown> | undefined) =>
      ((result?.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
    expect(names(first.result)).toEqual(TOOL_NAMES);
    expect(names(second.result)).toEqual(names(first.result));
  });

  it("subscriptions/listen acknowledges toolsListChanged", async () => {
    const { client } = await connect(server.mcpUrl, token, "modern");
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter.toolsListChanged).toBe(true);
    await subscription.close();
    expect(await subscription.closed).toBe("local");
    await client.close();
  });
});

describe("mcpEra restricts /mcp to one era", () => {
  it("modern: a legacy initialize is refused, a modern client is served", async () => {
    const modernOnly = startInProcessTestServer({
      autoApprove: "acme",
      mcpEra: "modern",
      url: "http://127.0.0.1:8788",
    });
    try {
      const { tokens } = await signInRaw(modernOnly.url, { resource: modernOnly.mcpUrl });
      await expect(connect(modernOnly.mcpUrl, tokens.access_token, "legacy")).rejects.toThrow();
      const { client } = await connect(modernOnly.mcpUrl, tokens.access_token, "modern");
      expect((await client.listTools()).tools).toHaveLength(7);
      await client.close();
    } finally {
      await modernOnly.close();
    }
  });

  it("legacy: a modern-pinned client cannot connect, a legacy client is served", async () => {
    const legacyOnly = startInProcessTestServer({
      autoApprove: "acme",
      mcpEra: "legacy",
      url: "http://127.0.0.1:8789",
    });
    try {
      const { tokens } = await signInRaw(legacyOnly.url, { resource: legacyOnly.mcpUrl });
      await expect(connect(legacyOnly.mcpUrl, tokens.access_token, "modern")).rejects.toThrow();
      const { client } = await connect(legacyOnly.mcpUrl, tokens.access_token, "legacy");
      expect(client.getProtocolEra()).toBe("legacy");
      expect((await client.listTools()).tools).toHaveLength(7);
      await client.close();
    } finally {
      await legacyOnly.close();
    }
  });
});
