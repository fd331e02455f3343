/** `chat-mcp-bridge/testing`: msw handlers serve the same /v2 rules as the reference server, without a socket. */
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createChatHandlers } from "../../src/testing/index.js";
import { ChatSchema, pendingTaskOf } from "../../src/wire/index.js";

const BASE = "http://chat.test";
const chat = createChatHandlers({ baseUrl: BASE });
const limited = createChatHandlers({
  baseUrl: "http://limited.test",
  rateLimit: { capacity: 1, refillPerSecond: 0.01 },
});
const server = setupServer(...chat.handlers, ...limited.handlers);

beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => chat.reset());
afterAll(() => server.close());

async function call(method: string, path: string, token: string | undefined, body?: unknown, base = BASE) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

describe("Full integration flow through the msw handlers", () => {
  it("create -> integration pause -> confirmed-steps -> permission pause -> confirmed-permissions -> stop", async () => {
    const key = chat.apiKeys.acme;
    const created = await call("POST", "/v2/chats", key, { message: "I need a database" });
    expect(created.status).toBe(201);
    const parsed = ChatSchema.parse(created.body);
    expect(parsed.url).toBe(`${BASE}/acme/chats/${parsed.id}`);
    const latest = (await call("GET", `/v2/chats/${parsed.id}/messages?limit=1`, key)).body.data[0];
    expect(pendingTaskOf(latest)?.kind).toBe("integration");
    const steps = await call("POST", `/v2/chats/${parsed.id}/messages/resolve`, key, {
      task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] },
    });
    const pending = pendingTaskOf(steps.body);
    if (pending?.kind !== "permissions") throw new Error("expected a permission pause");
    const done = await call("POST", `/v2/chats/${parsed.id}/messages/resolve`, key, {
      task: { type: "confirmed-permissions", permissions: pending.permissions },
    });
    expect(done.status).toBe(200);
    expect(done.body.finishReason).toBe("stop");
  });
});

describe("Same errors as the reference server", () => {
  it("401 with WWW-Authenticate when the token is missing", async () => {
    const reply = await call("GET", "/v2/chats", undefined);
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe("unauthorized");
    expect(reply.headers.get("www-authenticate")).toContain("resource_metadata=");
    expect(reply.headers.get("x-request-id")).toBeTruthy();
  });

  it("404 for another team's chat", async () => {
    const created = await call("POST", "/v2/chats", chat.apiKeys.personal, { message: "mine" });
    const reply = await call("GET", `/v2/chats/${created.body.id}`, chat.apiKeys.acme);
    expect(reply.status).toBe(404);
  });

  it("409 for a resolve that does not match, 422 for empty permissions, 400 for bad JSON", async () => {
    const key = chat.apiKeys.acme;
    const created = await call("POST", "/v2/chats", key, { message: "hello" });
    const resolvePath = `/v2/chats/${created.body.id}/messages/resolve`;
    expect(
      (
        await call("POST", resolvePath, key, {
          task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] },
        })
      ).status,
    ).toBe(409);
    expect(
      (await call("POST", resolvePath, key, { task: { type: "confirmed-permissions", permissions: [] } }))
        .status,
    ).toBe(422);
    expect((await call("POST", resolvePath, key, "{not json")).status).toBe(400);
  });

  it("413 for a body over 1 MiB", async () => {
    const reply = await call("POST", "/v2/chats", chat.apiKeys.acme, {
      message: "x".repeat(1024 * 1024 + 1),
    });
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe("payload_too_large");
  });

  it("429 with Retry-After when a rate limit is configured", async () => {
    const key = limited.apiKeys.acme;
    expect((await call("GET", "/v2/chats", key, undefined, "http://limited.test")).status).toBe(200);
    const refused = await call("GET", "/v2/chats", key, undefined, "http://limited.test");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("SSO team and test controls", () => {
  it("secure-corp answers 403 sso_required until completeSso()", async () => {
    const key = chat.apiKeys["secure-corp"];
    const refused = await call("GET", "/v2/chats", key);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("sso_required");
    expect(refused.body.error.reauthUrl).toMatch(/^http:\/\/chat\.test\/sso\/reauth\?ticket=/);
    chat.completeSso("secure-corp");
    expect((await call("GET", "/v2/chats", key)).status).toBe(200);
  });

  it("reset() forgets chats but keeps the API keys", async () => {
    const keys = { ...chat.apiKeys };
    const created = await call("POST", "/v2/chats", chat.apiKeys.studio, { message: "temporary" });
    chat.reset();
    expect(chat.apiKeys).toEqual(keys);
    expect((await call("GET", `/v2/chats/${created.body.id}`, chat.apiKeys.studio)).status).toBe(404);
    expect((await call("GET", "/v2/chats", chat.apiKeys.studio)).body.data).toEqual([]);
  });

  it("the service is reachable for arranging state without HTTP", async () => {
    const principal = { account: "studio", subject: "test", via: "api-key" as const, scopes: [] };
    const made = await chat.service.createChat(principal, { message: "arranged" });
    const reply = await call("GET", `/v2/chats/${made.id}`, chat.apiKeys.studio);
    expect(reply.body.hostProjectId).toBeUndefined();
    expect(reply.body.title).toBe("arranged");
  });
});
