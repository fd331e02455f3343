/** `/v2` and `/mcp` each take OAuth tokens issued for themselves only, with the scope the call needs; API keys keep `/v2`; through the server's handler (no port). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient, PermissionDeniedError } from "../../src/index.js";
import type { ReferenceServer } from "../../src/server/index.js";
import { mcpHeaders, openSession, postMcp, SseReader } from "./mcp/raw-mcp.js";
import { signInRaw, startInProcessTestServer } from "./oauth/helpers.js";

let server: ReferenceServer;
/** Access tokens by the resource they were issued for and their scope. */
const tokens: Record<"v2" | "v2ReadOnly" | "mcp" | "mcpReadOnly" | "noResource", string> = {
  v2: "",
  v2ReadOnly: "",
  mcp: "",
  mcpReadOnly: "",
  noResource: "",
};

beforeAll(async () => {
  server = startInProcessTestServer({ autoApprove: "acme" });
  const v2 = `${server.url}/v2`;
  const signIn = async (extra: { resource?: string; scope?: string }) =>
    String((await signInRaw(server.url, extra)).tokens.access_token);
  [tokens.v2, tokens.v2ReadOnly, tokens.mcp, tokens.mcpReadOnly, tokens.noResource] = await Promise.all([
    signIn({ resource: v2 }),
    signIn({ resource: v2, scope: "chat:read" }),
    signIn({ resource: server.mcpUrl }),
    signIn({ resource: server.mcpUrl, scope: "chat:read" }),
    signIn({}),
  ]);
});

afterAll(async () => {
  await server?.close();
});

async function v2(method: "GET" | "POST", token: string) {
  const response = await fetch(`${server.url}/v2/chats`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(method === "POST" ? { body: JSON.stringify({ message: "hello" }) } : {}),
  });
  const body = (await response.json()) as { error?: { code: string; message: string } };
  return { status: response.status, challenge: response.headers.get("www-authenticate") ?? "", body };
}

/** One `tools/call` on a fresh session: the HTTP status, the challenge, and the JSON-RPC message answered. */
async function mcpToolCall(token: string, name: string, args: Record<string, unknown>) {
  const sessionId = await openSession(server.mcpUrl, token);
  const response = await postMcp(
    server.mcpUrl,
    token,
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
    sessionId,
  );
  const challenge = response.headers.get("www-authenticate") ?? "";
  const message = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? (await new SseReader(response).nextMessage())?.message
    : ((await response.json()) as Record<string, unknown>);
  return { status: response.status, challenge, message };
}

function expectToolSucceeded(message: Record<string, unknown> | undefined): void {
  const result = message?.result as { isError?: boolean; content?: unknown } | undefined;
  expect(result?.content, JSON.stringify(message)).toEqual(expect.any(Array));
  expect(result?.isError).toBeFalsy();
}

describe("/v2 takes OAuth tokens issued for <base>/v2 only", () => {
  it("a /v2 token with both scopes reads and writes", async () => {
    expect((await v2("GET", tokens.v2)).status).toBe(200);
    expect((await v2("POST", tokens.v2)).status).toBe(201);
  });

  it("an /mcp token is refused with 401 invalid_token", async () => {
    for (const method of ["GET", "POST"] as const) {
      const reply = await v2(method, tokens.mcp);
      expect(reply.status).toBe(401);
      expect(reply.body.error?.code).toBe("unauthorized");
      expect(reply.challenge).toMatch(/^Bearer error="invalid_token"/);
      expect(reply.challenge).toContain(
        `resource_metadata="${server.url}/.well-known/oauth-protected-resource/v2"`,
      );
    }
  });

  it("a token issued for no particular resource is refused too", async () => {
    expect((await v2("GET", tokens.noResource)).status).toBe(401);
  });

  it("a chat:read token reads, and its write is refused with 403 insufficient_scope naming chat:write", async () => {
    expect((await v2("GET", tokens.v2ReadOnly)).status).toBe(200);
    const reply = await v2("POST", tokens.v2ReadOnly);
    expect(reply.status).toBe(403);
    expect(reply.body.error?.code).toBe("forbidden");
    expect(reply.body.error?.message).toContain("chat:write");
    expect(reply.challenge).toMatch(/^Bearer error="insufficient_scope", scope="chat:write"/);
    // Nothing was created by the refused write.
    const listed = await fetch(`${server.url}/v2/chats?topic=hello`, {
      headers: { authorization: `Bearer ${server.apiKeys.acme}` },
    });
    expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  it("ChatClient with a chat:read token gets PermissionDeniedError on a write", async () => {
    const client = new ChatClient({ baseUrl: server.url, token: tokens.v2ReadOnly });
    expect((await client.listChats()).data.length).toBeGreaterThan(0);
    await expect(client.createChat({ message: "hello" })).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it("an API key keeps full access to its account or team", async () => {
    expect((await v2("GET", String(server.apiKeys.studio))).status).toBe(200);
    expect((await v2("POST", String(server.apiKeys.studio))).status).toBe(201);
  });
});

describe("/mcp takes OAuth tokens issued for <mcp_url> only", () => {
  it("a /v2 token is refused with 401 invalid_token", async () => {
    const response = await postMcp(server.mcpUrl, tokens.v2, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
  });

  it("an API key is refused", async () => {
    const response = await fetch(server.mcpUrl, {
      method: "POST",
      headers: mcpHeaders(String(server.apiKeys.acme)),
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(401);
  });

  it("an /mcp token with both scopes calls a tool that writes", async () => {
    const reply = await mcpToolCall(tokens.mcp, "create_chat", { message: "hello from mcp" });
    expect(reply.status).toBe(200);
    expectToolSucceeded(reply.message);
  });

  it("a chat:read token lists, and a tool that writes is refused with 403 insufficient_scope naming chat:write", async () => {
    const listed = await mcpToolCall(tokens.mcpReadOnly, "list_chats", {});
    expect(listed.status).toBe(200);
    expectToolSucceeded(listed.message);
    for (const [name, args] of [
      ["create_chat", { message: "hello" }],
      ["send_message", { chatId: "chat_x", message: "hi" }],
      [
        "resolve_task",
        { chatId: "chat_x", task: { type: "confirmed-steps", connectedIntegrationNames: [] } },
      ],
    ] as const) {
      const refused = await mcpToolCall(tokens.mcpReadOnly, name, args);
      expect(refused.status, name).toBe(403);
      expect(refused.challenge).toMatch(/^Bearer error="insufficient_scope", scope="chat:write"/);
    }
  });
});
