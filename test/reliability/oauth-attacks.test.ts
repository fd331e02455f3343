/** Attacks on the reference server's OAuth, on its handler in-process: malicious registrations, redirect-URI and state tampering, consent forgery, code and refresh-token reuse, cross-team and cross-resource tokens. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatSchema } from "../../src/wire/index.js";
import { Browser, hiddenField } from "../server/helpers.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../support/reference-request.js";
import {
  authorize,
  authorizeParams,
  codeFor,
  exchangeCode,
  newPkce,
  type RegisteredClient,
  refresh,
  registerClient,
  registerPublicClient,
  signIn,
  v2Status,
} from "./fixtures/oauth-flow.js";

const CALLBACK = "http://127.0.0.1:49152/callback";

let server: RequestableReferenceServer;
beforeAll(() => {
  server = createRequestableReferenceServer({ autoApprove: "acme", rateLimit: false });
});
afterAll(() => server?.close());

describe("Malicious client registrations are refused", () => {
  for (const uri of [
    "javascript:alert(document.cookie)",
    "JaVaScRiPt:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "not a url",
    "",
  ]) {
    it(`redirect URI ${JSON.stringify(uri)}`, async () => {
      const reply = await registerClient(server, { redirect_uris: [uri] });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe("invalid_redirect_uri");
      expect(reply.body.client_id).toBeUndefined();
    });
  }

  it("a javascript: URI hidden among good ones", async () => {
    const reply = await registerClient(server, { redirect_uris: [CALLBACK, "javascript:alert(1)"] });
    expect(reply.status).toBe(400);
  });

  it("an oversized registration (5 000 redirect URIs) is refused without a server error", async () => {
    const uris = Array.from({ length: 5_000 }, (_, i) => `http://127.0.0.1:${1000 + i}/cb/${"x".repeat(20)}`);
    const reply = await registerClient(server, { redirect_uris: uris });
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
  });

  it("a body that is not JSON", async () => {
    const response = await server.request("/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{redirect_uris:",
    });
    await response.body?.cancel();
    expect(response.status).toBe(400);
  });
});

describe("Redirect-URI tampering at /authorize: no redirect to anything not registered", () => {
  let client: RegisteredClient;
  beforeAll(async () => {
    client = await registerPublicClient(server, CALLBACK);
  });

  for (const tampered of [
    "http://evil.example/callback",
    "http://127.0.0.1:49152@evil.example/callback",
    "http://evil.example@127.0.0.1:49152/callback.evil.example",
    "http://127.0.0.1:49152/callback/../evil",
    "http://127.0.0.1:49152/callback/extra",
    "http://127.0.0.1:49152/callback?next=http://evil.example",
    "https://127.0.0.1:49152/callback",
    "http://localhost:49152/callback",
    "http://127.0.0.2:49152/callback",
    "javascript:alert(1)//http://127.0.0.1:49152/callback",
    "file:///etc/passwd",
  ]) {
    it(tampered, async () => {
      const reply = await authorize(server, authorizeParams(client, newPkce(), { redirect_uri: tampered }));
      expect(reply.status).toBe(400);
      expect(reply.location).toBeNull();
      expect(reply.text).not.toContain("code=");
    });
  }

  it("an unknown client_id gets a direct error, never a redirect", async () => {
    const reply = await authorize(
      server,
      authorizeParams({ ...client, client_id: "no-such-client" }, newPkce()),
    );
    expect(reply.status).toBe(400);
    expect(reply.location).toBeNull();
  });

  it("the loopback port may differ (RFC 8252 §7.3), everything else must match", async () => {
    const reply = await authorize(
      server,
      authorizeParams(client, newPkce(), { redirect_uri: "http://127.0.0.1:50000/callback" }),
    );
    expect(reply.status).toBe(302);
    expect(reply.location).toMatch(/^http:\/\/127\.0\.0\.1:50000\/callback\?code=/);
  });

  it("without PKCE, or with the plain method: an error page, no redirect (the server cannot vouch for this client)", async () => {
    for (const extra of [{ code_challenge: undefined }, { code_challenge_method: "plain" }]) {
      const reply = await authorize(server, authorizeParams(client, newPkce(), extra));
      expect(reply.status).toBe(400);
      expect(reply.location).toBeNull();
      expect(reply.text).toContain("invalid_request");
      expect(reply.text).not.toContain("code=");
    }
  });

  it("a resource on another origin is refused (invalid_target) on a page, no redirect, no code", async () => {
    const reply = await authorize(
      server,
      authorizeParams(client, newPkce(), { resource: "http://evil.example/mcp" }),
    );
    expect(reply.status).toBe(400);
    expect(reply.location).toBeNull();
    expect(reply.text).toContain("invalid_target");
  });
});

describe("State is echoed byte for byte, whatever it holds", () => {
  for (const state of ["a&b=c#d", "é ü 漢字 🙂", "x".repeat(2_000), "%41%2F", "state with spaces+plus"]) {
    it(JSON.stringify(state.length > 30 ? `${state.slice(0, 10)}... (${state.length})` : state), async () => {
      const client = await registerPublicClient(server, CALLBACK);
      const reply = await authorize(server, authorizeParams(client, newPkce(), { state }));
      const location = new URL(reply.location ?? "http://missing/");
      expect(location.searchParams.get("code")).toBeTruthy();
      expect(location.searchParams.get("state")).toBe(state);
    });
  }
});

describe("Authorization codes: single use, bound to client, verifier and redirect URI", () => {
  let client: RegisteredClient;
  let other: RegisteredClient;
  beforeAll(async () => {
    client = await registerPublicClient(server, CALLBACK);
    other = await registerPublicClient(server, CALLBACK);
  });

  it("a code used twice: the second exchange fails and the tokens of the first are revoked", async () => {
    const pkce = newPkce();
    const code = await codeFor(server, client, pkce, { resource: `${server.url}/v2` });
    const first = await exchangeCode(server, client, code, pkce.verifier);
    expect(first.status).toBe(200);
    expect(await v2Status(server, first.body.access_token ?? "")).toBe(200);
    const second = await exchangeCode(server, client, code, pkce.verifier);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    expect(second.body.access_token).toBeUndefined();
    expect(await v2Status(server, first.body.access_token ?? "")).toBe(401);
    expect((await refresh(server, client, first.body.refresh_token ?? "")).status).toBe(400);
  });

  it("a wrong code_verifier", async () => {
    const pkce = newPkce();
    const code = await codeFor(server, client, pkce);
    const reply = await exchangeCode(server, client, code, newPkce().verifier);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("invalid_grant");
  });

  it("a code redeemed by another client", async () => {
    const pkce = newPkce();
    const code = await codeFor(server, client, pkce);
    const reply = await exchangeCode(server, other, code, pkce.verifier);
    expect(reply.status).toBe(400);
    expect(reply.body.access_token).toBeUndefined();
  });

  it("a different redirect_uri at the token endpoint", async () => {
    const pkce = newPkce();
    const code = await codeFor(server, client, pkce);
    const reply = await exchangeCode(server, client, code, pkce.verifier, {
      redirect_uri: "http://127.0.0.1:49152/other",
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("invalid_grant");
  });

  it("a made-up code", async () => {
    const reply = await exchangeCode(server, client, "chat_code_made_up", newPkce().verifier);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("invalid_grant");
  });
});

describe("Refresh tokens: rotation, and reuse revokes the whole sign-in", () => {
  let client: RegisteredClient;
  beforeAll(async () => {
    client = await registerPublicClient(server, CALLBACK);
  });

  it("a replayed refresh token fails and kills the tokens that descend from it", async () => {
    const tokens = await signIn(server, client, { resource: `${server.url}/v2` });
    const rotated = await refresh(server, client, tokens.refresh_token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(await v2Status(server, rotated.body.access_token ?? "")).toBe(200);

    const replay = await refresh(server, client, tokens.refresh_token);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    expect(await v2Status(server, rotated.body.access_token ?? "")).toBe(401);
    expect((await refresh(server, client, rotated.body.refresh_token ?? "")).status).toBe(400);
  });

  it("another client cannot use the refresh token, and the owner still can afterwards", async () => {
    const tokens = await signIn(server, client);
    const thief = await registerPublicClient(server, CALLBACK);
    const stolen = await refresh(server, thief, tokens.refresh_token);
    expect(stolen.status).toBe(400);
    expect(stolen.body.access_token).toBeUndefined();
    expect((await refresh(server, client, tokens.refresh_token)).status).toBe(200);
  });

  it("a refresh cannot widen the scopes", async () => {
    const tokens = await signIn(server, client, { scope: "chat:read" });
    const wider = await refresh(server, client, tokens.refresh_token, { scope: "chat:read chat:write" });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe("invalid_scope");
  });

  it("a revoked refresh token is dead, and so is its access token", async () => {
    const tokens = await signIn(server, client);
    const revoke = await server.request("/revoke", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tokens.refresh_token, client_id: client.client_id }),
    });
    await revoke.body?.cancel();
    expect(revoke.status).toBe(200);
    expect((await refresh(server, client, tokens.refresh_token)).status).toBe(400);
    expect(await v2Status(server, tokens.access_token)).toBe(401);
  });
});

/** An MCP client on `/mcp` with a fixed bearer token. */
async function mcpClientWith(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: server.fetch,
  });
  const client = new Client({ name: "reliability-attacker", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("A token for team A on team B's chats, through /v2 and through /mcp", () => {
  let acmeToken: string;
  let personalChatId: string;
  beforeAll(async () => {
    const client = await registerPublicClient(server, CALLBACK);
    acmeToken = (await signIn(server, client, { resource: server.mcpUrl })).access_token;
    const created = await server.request("/v2/chats", {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKeys.personal}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "Personal secret: codename walrus" }),
    });
    personalChatId = ChatSchema.parse(await created.json()).id;
  });

  it("every chat tool answers not found and leaks nothing", async () => {
    const mcp = await mcpClientWith(acmeToken);
    try {
      for (const [name, args] of [
        ["get_chat", { chatId: personalChatId }],
        ["list_messages", { chatId: personalChatId }],
        ["send_message", { chatId: personalChatId, message: "hijack" }],
        [
          "resolve_task",
          { chatId: personalChatId, task: { type: "confirmed-steps", connectedIntegrationNames: [] } },
        ],
        ["get_preview", { chatId: personalChatId }],
      ] as const) {
        const result = await mcp.callTool({ name, arguments: args });
        expect(result.isError, name).toBe(true);
        expect(JSON.stringify(result)).not.toContain("walrus");
        expect(JSON.stringify(result).toLowerCase()).toContain("not");
      }
      const list = await mcp.callTool({ name: "list_chats", arguments: { topic: "walrus" } });
      expect(JSON.stringify(list)).not.toContain(personalChatId);
    } finally {
      await mcp.close();
    }
    const messages = await server.request(`/v2/chats/${personalChatId}/messages`, {
      headers: { authorization: `Bearer ${server.apiKeys.personal}` },
    });
    expect((await messages.json()).data).toHaveLength(2);
  });

  it("an API key is not accepted on /mcp, and a token issued for /v2 is not accepted on /mcp", async () => {
    const client = await registerPublicClient(server, CALLBACK);
    const v2Token = (await signIn(server, client, { resource: `${server.url}/v2` })).access_token;
    for (const token of [server.apiKeys.acme ?? "", v2Token]) {
      const response = await server.fetch(server.mcpUrl, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "x", version: "1" },
          },
        }),
      });
      await response.body?.cancel();
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("resource_metadata=");
    }
  });
});

describe("Consent page forgery (a person must approve; no autoApprove)", () => {
  let manual: RequestableReferenceServer;
  let client: RegisteredClient;
  beforeAll(async () => {
    manual = createRequestableReferenceServer({ rateLimit: false });
    const registered = await registerClient(manual, {
      redirect_uris: [CALLBACK],
      client_name: `<script>alert("x")</script><img src=x onerror=alert(1)>`,
    });
    client = registered.body as unknown as RegisteredClient;
  });
  afterAll(() => manual?.close());

  /** Signs `user` in, starts an authorization and returns the consent page's form fields. */
  async function consentFor(user: string) {
    const browser = new Browser(manual);
    await browser.signIn(user, user);
    const params = authorizeParams(client, newPkce());
    // The person's own browser opens /authorize, as the bridge and chat-cli make it do.
    const start = await browser.get(`/authorize?${new URLSearchParams(params as Record<string, string>)}`);
    const page = await browser.get(start.location ?? "");
    return {
      browser,
      state: params.state,
      page,
      request: hiddenField(page.text, "request"),
      csrf: hiddenField(page.text, "csrf"),
    };
  }

  it("the client's name is shown escaped, never as markup", async () => {
    const { page } = await consentFor("dev");
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("<script>alert");
    expect(page.text).not.toContain("<img src=x");
    expect(page.text).toContain("&lt;script&gt;");
  });

  it("approving without the CSRF token, or with another session's, issues no code", async () => {
    const victim = await consentFor("dev");
    const attacker = await consentFor("dev");
    for (const csrf of ["", attacker.csrf]) {
      const reply = await victim.browser.post("/oauth/consent", {
        request: victim.request,
        csrf,
        account: "acme",
        decision: "approve",
      });
      expect(reply.status).toBe(403);
      expect(reply.location ?? "").not.toContain("code=");
    }
  });

  it("a person cannot approve for a team they are not in", async () => {
    const guest = await consentFor("guest");
    const reply = await guest.browser.post("/oauth/consent", {
      request: guest.request,
      csrf: guest.csrf,
      account: "acme",
      decision: "approve",
    });
    expect(reply.location ?? "").not.toContain("code=");
    expect(reply.status).toBe(400);
  });

  it("a consent form works once: a replayed approval issues no second code", async () => {
    const consent = await consentFor("dev");
    const form = { request: consent.request, csrf: consent.csrf, account: "acme", decision: "approve" };
    const first = await consent.browser.post("/oauth/consent", form);
    expect(first.status).toBe(303);
    expect(new URL(first.location ?? "").searchParams.get("state")).toBe(consent.state);
    const replay = await consent.browser.post("/oauth/consent", form);
    expect(replay.location ?? "").not.toContain("code=");
  });

  it("deny redirects with access_denied and the state, and no code", async () => {
    const consent = await consentFor("dev");
    const reply = await consent.browser.post("/oauth/consent", {
      request: consent.request,
      csrf: consent.csrf,
      decision: "deny",
    });
    const location = new URL(reply.location ?? "");
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("state")).toBe(consent.state);
    expect(location.searchParams.get("code")).toBeNull();
  });

  it("consent phishing: a consent link started in the attacker's browser is refused in the victim's, no code", async () => {
    const attacker = await consentFor("guest");
    const victim = await consentFor("dev");
    const consentPath = `/oauth/consent?request=${encodeURIComponent(attacker.request)}`;
    const shown = await victim.browser.get(consentPath);
    expect(shown.status).toBe(403);
    expect(shown.text).toContain("started in another browser");
    expect(shown.text).not.toContain('name="csrf"');
    const approved = await victim.browser.post("/oauth/consent", {
      request: attacker.request,
      csrf: victim.csrf,
      account: "acme",
      decision: "approve",
    });
    expect(approved.status).toBe(403);
    expect(approved.location ?? "").not.toContain("code=");
    // The attacker's own browser still sees the request pending: the victim's visit decided nothing.
    expect((await attacker.browser.get(consentPath)).status).toBe(200);
  });

  it("a made-up pending request id is refused", async () => {
    const dev = await consentFor("dev");
    const reply = await dev.browser.post("/oauth/consent", {
      request: "00000000-0000-0000-0000-000000000000",
      csrf: dev.csrf,
      account: "acme",
      decision: "approve",
    });
    expect(reply.status).toBe(400);
    expect(reply.location ?? "").not.toContain("code=");
  });
});
