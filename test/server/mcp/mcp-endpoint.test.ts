/** The reference server's /mcp endpoint: OAuth sign-in by an MCP SDK client, the seven tools, sessions and streams, through its handler (no port). */
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type Chat,
  type ListPage,
  type Message,
  type Preview,
  pendingTaskOf,
  TOOL_NAMES,
} from "../../../src/wire/index.js";
import type { RequestableReferenceServer as ReferenceServer } from "../../support/reference-request.js";
import {
  HeadlessOAuthProvider,
  postForm,
  signInRaw,
  startInProcessTestServer,
  TestBrowser,
  TestClock,
} from "../oauth/helpers.js";
import { connectMcpV2 as connectMcp } from "./connect-v2.js";
import { mcpHeaders, openSession, postMcp, requestWithHost, SseReader } from "./raw-mcp.js";

async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function structured<T>(result: CallToolResult): T {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
}

function errorText(result: CallToolResult): string {
  expect(result.isError).toBe(true);
  return result.content.map((item) => (item.type === "text" ? item.text : "")).join("\n");
}

/** The newest assistant message of a chat, read through list_messages. */
async function latestAssistant(client: Client, chatId: string): Promise<Message> {
  const page = structured<ListPage<Message>>(await callTool(client, "list_messages", { chatId }));
  const message = page.data.find((candidate) => candidate.role === "assistant");
  if (!message) throw new Error("no assistant message");
  return message;
}

describe("an MCP SDK client signing in through OAuth (auto-approve)", () => {
  let server: ReferenceServer;
  const clock = new TestClock();
  const provider = new HeadlessOAuthProvider();
  let client: Client;

  beforeAll(async () => {
    server = startInProcessTestServer({
      autoApprove: "acme",
      oauthNow: clock.now,
      accessTokenTtlSeconds: 60,
    });
    ({ client } = await connectMcp(server.mcpUrl, provider));
  });
  afterAll(async () => {
    await client?.close();
    await server.close();
  });

  it("completes discovery, registration and PKCE login, then lists the seven tools", async () => {
    expect(provider.authorizationCount).toBe(1);
    expect(provider.client?.client_id).toEqual(expect.any(String));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
    }
  });

  it("runs the integration flow through resolve_task", async () => {
    const chat = structured<Chat>(
      await callTool(client, "create_chat", { message: "Build me an app with a Database for orders" }),
    );
    expect(chat.url).toContain(`/acme/`);

    const integrationPause = pendingTaskOf(await latestAssistant(client, chat.id));
    expect(integrationPause?.kind).toBe("integration");
    const integrations = integrationPause?.kind === "integration" ? integrationPause.integrations : [];
    expect(integrations).toEqual(["Neon"]);

    const details = structured<Chat>(await callTool(client, "get_chat", { chatId: chat.id }));
    expect(details.hostProjectId).toEqual(expect.any(String));
    expect(details.url).toBe(chat.url);

    const permissionPause = structured<Message>(
      await callTool(client, "resolve_task", {
        chatId: chat.id,
        task: { type: "confirmed-steps", connectedIntegrationNames: integrations },
      }),
    );
    const pending = pendingTaskOf(permissionPause);
    expect(pending?.kind).toBe("permissions");
    const permissions = pending?.kind === "permissions" ? pending.permissions : [];
    expect(permissions[0]?.input.executeScript).toBe("/scripts/setup-db.sql");

    const done = structured<Message>(
      await callTool(client, "resolve_task", {
        chatId: chat.id,
        task: { type: "confirmed-permissions", permissions },
      }),
    );
    expect(done.finishReason).toBe("stop");

    const preview = structured<Preview>(await callTool(client, "get_preview", { chatId: chat.id }));
    expect(preview).toMatchObject({ object: "preview", chatId: chat.id });
  });

  it("returns the result as structuredContent and as JSON text", async () => {
    const result = await callTool(client, "list_chats", { topic: "database" });
    const page = structured<ListPage<Chat>>(result);
    const first = result.content[0];
    expect(first?.type === "text" && JSON.parse(first.text)).toEqual(page);
  });

  describe("failures come back as isError results that say what to do next", () => {
    it("409: the chat has moved on, re-read the latest assistant message", async () => {
      const chat = structured<Chat>(await callTool(client, "create_chat", { message: "a database please" }));
      const text = errorText(
        await callTool(client, "resolve_task", {
          chatId: chat.id,
          task: { type: "confirmed-steps", connectedIntegrationNames: ["Supabase"] },
        }),
      );
      expect(text).toMatch(/moved on/);
      expect(text).toContain("list_messages");
    });

    it("404: an unknown chat", async () => {
      expect(errorText(await callTool(client, "get_chat", { chatId: "chat_missing" }))).toMatch(/not found/i);
    });

    it("422: confirmed-permissions with an empty list", async () => {
      const chat = structured<Chat>(await callTool(client, "create_chat", { message: "database time" }));
      await callTool(client, "resolve_task", {
        chatId: chat.id,
        task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] },
      });
      const text = errorText(
        await callTool(client, "resolve_task", {
          chatId: chat.id,
          task: { type: "confirmed-permissions", permissions: [] },
        }),
      );
      expect(text).toContain("suggestedPermissions");
    });
  });

  it("after the access token expires, a second run refreshes without a new login; replaying the old refresh token revokes the family", async () => {
    const firstTokens = provider.savedTokens;
    await client.close();
    clock.advance(61_000);
    ({ client } = await connectMcp(server.mcpUrl, provider));
    expect(structured<ListPage<Chat>>(await callTool(client, "list_chats", {})).data.length).toBeGreaterThan(
      0,
    );
    expect(provider.authorizationCount).toBe(1);
    const refreshed = provider.savedTokens;
    expect(refreshed?.access_token).not.toBe(firstTokens?.access_token);

    const replay = await postForm(`${server.url}/token`, {
      grant_type: "refresh_token",
      client_id: provider.client?.client_id,
      refresh_token: firstTokens?.refresh_token,
    });
    expect(replay.body.error).toBe("invalid_grant");
    const response = await fetch(`${server.url}/v2/chats`, {
      headers: { authorization: `Bearer ${refreshed?.access_token}` },
    });
    expect(response.status).toBe(401);
  });
});

describe("tokens of one team cannot see another team's chats", () => {
  let server: ReferenceServer;
  let acme: Client;
  let studio: Client;
  let acmeProvider: HeadlessOAuthProvider;
  let studioProvider: HeadlessOAuthProvider;

  beforeAll(async () => {
    server = startInProcessTestServer();
    const browser = new TestBrowser(server.url);
    await browser.signIn("dev");
    acmeProvider = new HeadlessOAuthProvider(undefined, { browser, account: "acme" });
    studioProvider = new HeadlessOAuthProvider(undefined, { browser, account: "studio" });
    ({ client: acme } = await connectMcp(server.mcpUrl, acmeProvider));
    ({ client: studio } = await connectMcp(server.mcpUrl, studioProvider));
  });
  afterAll(async () => {
    await acme?.close();
    await studio?.close();
    await server.close();
  });

  it("through MCP and through REST", async () => {
    const chat = structured<Chat>(await callTool(acme, "create_chat", { message: "secret acme plans" }));
    expect(chat.url).toContain("/acme/");
    expect(errorText(await callTool(studio, "get_chat", { chatId: chat.id }))).toMatch(/not found/i);
    const studioChats = structured<ListPage<Chat>>(await callTool(studio, "list_chats", {}));
    expect(studioChats.data.map((candidate) => candidate.id)).not.toContain(chat.id);
    expect(errorText(await callTool(studio, "list_messages", { chatId: chat.id }))).toMatch(/not found/i);

    // Through REST with each team's API key (MCP tokens are bound to /mcp and refused on /v2).
    const rest = await fetch(`${server.url}/v2/chats/${chat.id}`, {
      headers: { authorization: `Bearer ${server.apiKeys.studio}` },
    });
    expect(rest.status).toBe(404);
    const own = await fetch(`${server.url}/v2/chats/${chat.id}`, {
      headers: { authorization: `Bearer ${server.apiKeys.acme}` },
    });
    expect(own.status).toBe(200);
  });

  it("a session opened by one team refuses requests with another team's token", async () => {
    const sessionId = await openSession(server.mcpUrl, String(acmeProvider.savedTokens?.access_token));
    const studioToken = String(studioProvider.savedTokens?.access_token);
    const response = await postMcp(
      server.mcpUrl,
      studioToken,
      { jsonrpc: "2.0", id: 1, method: "ping" },
      sessionId,
    );
    expect(response.status).toBe(403);
  });
});

describe("SSO through MCP", () => {
  let server: ReferenceServer;
  let client: Client;

  beforeAll(async () => {
    server = startInProcessTestServer({ autoApprove: "secure-corp" });
    ({ client } = await connectMcp(server.mcpUrl, new HeadlessOAuthProvider()));
  });
  afterAll(async () => {
    await client?.close();
    await server.close();
  });

  it("answers with a re-authentication link until the user completes it, then the retry succeeds", async () => {
    const text = errorText(await callTool(client, "list_chats", {}));
    const link = /(http:\/\/\S+\/sso\/reauth\?ticket=[\w-]+)/.exec(text)?.[1];
    expect(link).toBeDefined();
    expect(text).toMatch(/retry/i);
    expect(errorText(await callTool(client, "create_chat", { message: "hello" }))).toContain("/sso/reauth");

    const browser = new TestBrowser(server.url);
    await browser.signIn("dev");
    const page = await (await browser.get(link ?? "")).text();
    const ticket = new URL(link ?? "").searchParams.get("ticket") ?? "";
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const completed = await browser.post("/sso/reauth", { ticket, csrf });
    expect(completed.status).toBe(200);

    const chat = structured<Chat>(await callTool(client, "create_chat", { message: "hello" }));
    expect(chat.url).toContain("/secure-corp/");
  });
});

describe("the /mcp transport", () => {
  let server: ReferenceServer;
  let token: string;

  beforeAll(async () => {
    server = startInProcessTestServer({ autoApprove: "personal" });
    token = String((await signInRaw(server.url)).tokens.access_token);
  });
  afterAll(() => server.close());

  it("rejects a foreign Host header with 403 (DNS rebinding) and accepts its own", async () => {
    const evil = await requestWithHost(server.mcpUrl, "evil.example.com", token, server.fetch);
    expect(evil.status).toBe(403);
    const own = await requestWithHost(server.mcpUrl, new URL(server.url).host, token, server.fetch);
    expect(own.status).toBe(200);
  });

  it("rejects a foreign Origin with 403", async () => {
    const response = await fetch(server.mcpUrl, {
      method: "POST",
      headers: { ...mcpHeaders(token), origin: "http://evil.example.com" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(403);
  });

  it("answers the CORS preflight of a loopback browser client before auth", async () => {
    const response = await fetch(server.mcpUrl, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, mcp-session-id",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(response.headers.get("access-control-allow-headers")).toContain("mcp-session-id");
  });

  it("refuses API keys: only OAuth access tokens open /mcp", async () => {
    const apiKey = server.apiKeys.personal ?? "";
    const response = await postMcp(server.mcpUrl, apiKey, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  it("answers 404 to an unknown session id, so the client re-initializes", async () => {
    const response = await postMcp(
      server.mcpUrl,
      token,
      { jsonrpc: "2.0", id: 1, method: "ping" },
      "00000000-0000-4000-8000-000000000000",
    );
    expect(response.status).toBe(404);
  });

  it("ends a session on DELETE", async () => {
    const sessionId = await openSession(server.mcpUrl, token);
    const deleted = await fetch(server.mcpUrl, { method: "DELETE", headers: mcpHeaders(token, sessionId) });
    expect(deleted.status).toBe(200);
    const after = await postMcp(server.mcpUrl, token, { jsonrpc: "2.0", id: 1, method: "ping" }, sessionId);
    expect(after.status).toBe(404);
  });

  it("closes idle sessions", async () => {
    // The reaper's interval and the clock it reads are faked: the idle time passes without being waited for.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const idle = startInProcessTestServer({
      autoApprove: "personal",
      mcpSessionIdleMs: 150,
      url: "http://127.0.0.1:8788",
    });
    try {
      const idleToken = String((await signInRaw(idle.url)).tokens.access_token);
      const sessionId = await openSession(idle.mcpUrl, idleToken);
      const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
      await vi.advanceTimersByTimeAsync(100);
      const alive = await postMcp(idle.mcpUrl, idleToken, ping, sessionId);
      await alive.text();
      expect(alive.status).toBe(200);
      await vi.advanceTimersByTimeAsync(600);
      const after = await postMcp(idle.mcpUrl, idleToken, ping, sessionId);
      expect(after.status).toBe(404);
    } finally {
      vi.useRealTimers();
      await idle.close();
    }
  });

  it("resumes an interrupted POST stream by Last-Event-ID", async () => {
    const sessionId = await openSession(server.mcpUrl, token);
    const response = await postMcp(
      server.mcpUrl,
      token,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "list_chats", arguments: {} } },
      sessionId,
    );
    const stream = new SseReader(response);
    const priming = await stream.next();
    expect(priming?.id).toEqual(expect.any(String));
    await stream.close();

    const resumed = await fetch(server.mcpUrl, {
      headers: {
        ...mcpHeaders(token, sessionId),
        accept: "text/event-stream",
        "last-event-id": priming?.id ?? "",
      },
    });
    expect(resumed.status).toBe(200);
    const replay = new SseReader(resumed);
    const event = await replay.nextMessage();
    await replay.close();
    expect(event?.message).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      result: { structuredContent: { object: "list" } },
    });
  });

  it("refuses an unknown Last-Event-ID", async () => {
    const sessionId = await openSession(server.mcpUrl, token);
    const resumed = await fetch(server.mcpUrl, {
      headers: { ...mcpHeaders(token, sessionId), accept: "text/event-stream", "last-event-id": "bm9wZQ.5" },
    });
    expect(resumed.status).toBe(400);
    await resumed.text();
  });
});
