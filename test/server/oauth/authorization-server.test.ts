/** The reference server's OAuth 2.1 authorization server, endpoint by endpoint, through its fetch handler (no port). */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import { scratchDir } from "../../support/scratch-dir.js";
import {
  approveConsentAt,
  authorizeUrl,
  CALLBACK_URL,
  followToCallback,
  hiddenField,
  pkcePair,
  postForm,
  registerClient,
  signInRaw,
  startInProcessTestServer,
  TestBrowser,
  TestClock,
} from "./helpers.js";

const bearer = (token: unknown) => ({ authorization: `Bearer ${String(token)}` });

/** A pre-registered client: the server vouches for its redirect URI, so errors may be redirected there. */
const VOUCHED_CLIENT = "vouched-app";

/** `/authorize` answered without following it: status, Location and body. */
async function authorizeOnce(baseUrl: string, params: Record<string, string | undefined>) {
  const response = await fetch(authorizeUrl(baseUrl, params), { redirect: "manual" });
  return { status: response.status, location: response.headers.get("location"), text: await response.text() };
}

/** Authorizes (auto-approve) and returns the callback URL. */
async function authorize(baseUrl: string, params: Record<string, string | undefined>): Promise<URL> {
  return followToCallback(authorizeUrl(baseUrl, params), CALLBACK_URL);
}

describe("the authorization server with auto-approve", () => {
  let server: ReferenceServer;
  const clock = new TestClock();

  beforeAll(async () => {
    server = startInProcessTestServer({
      autoApprove: "acme",
      oauthNow: clock.now,
      accessTokenTtlSeconds: 60,
      oauthClients: [{ client_id: VOUCHED_CLIENT, redirect_uris: [CALLBACK_URL] }],
    });
  });
  afterAll(() => server.close());

  describe("discovery metadata", () => {
    it("serves RFC 8414 metadata at the issuer root with PKCE S256, registration and revocation", async () => {
      const metadata = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
      expect(metadata).toMatchObject({
        issuer: server.url,
        authorization_endpoint: `${server.url}/authorize`,
        token_endpoint: `${server.url}/token`,
        registration_endpoint: `${server.url}/register`,
        revocation_endpoint: `${server.url}/revoke`,
        code_challenge_methods_supported: ["S256"],
        grant_types_supported: expect.arrayContaining(["authorization_code", "refresh_token"]),
        token_endpoint_auth_methods_supported: expect.arrayContaining([
          "none",
          "client_secret_basic",
          "client_secret_post",
        ]),
      });
    });

    it("names the issuer exactly as the well-known URL is built from it, and supports RFC 9207 iss and metadata documents", async () => {
      const metadata = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
      expect(`${metadata.issuer}/.well-known/oauth-authorization-server`).toBe(
        `${server.url}/.well-known/oauth-authorization-server`,
      );
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
      expect(metadata.client_id_metadata_document_supported).toBe(true);
    });

    it.each(["/mcp", "/v2"])("serves RFC 9728 metadata for %s with scopes_supported", async (path) => {
      const metadata = await (
        await fetch(`${server.url}/.well-known/oauth-protected-resource${path}`)
      ).json();
      expect(metadata).toMatchObject({
        resource: `${server.url}${path}`,
        authorization_servers: [server.url],
        scopes_supported: ["chat:read", "chat:write"],
      });
    });

    it("answers 401 on /mcp with WWW-Authenticate naming the resource metadata", async () => {
      for (const headers of [{}, bearer("chat_at_not-a-token")]) {
        const response = await fetch(server.mcpUrl, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...headers,
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        });
        expect(response.status).toBe(401);
        expect(response.headers.get("www-authenticate")).toMatch(
          new RegExp(`^Bearer .*resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`),
        );
      }
    });
  });

  describe("dynamic client registration (RFC 7591)", () => {
    it("registers a public client without a secret", async () => {
      const client = await registerClient(server.url);
      expect(client.client_id).toEqual(expect.any(String));
      expect(client.client_secret).toBeUndefined();
    });

    it("registers a confidential client that authenticates with client_secret_basic", async () => {
      const client = await registerClient(server.url, { token_endpoint_auth_method: "client_secret_basic" });
      expect(client.client_secret).toEqual(expect.any(String));
      const { verifier, challenge } = pkcePair();
      const callback = await authorize(server.url, {
        client_id: client.client_id,
        redirect_uri: CALLBACK_URL,
        code_challenge: challenge,
      });
      const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64");
      const exchange = (authorization: string) =>
        postForm(
          `${server.url}/token`,
          {
            grant_type: "authorization_code",
            code: callback.searchParams.get("code") ?? "",
            code_verifier: verifier,
            redirect_uri: CALLBACK_URL,
          },
          { authorization },
        );
      const wrong = await exchange(`Basic ${Buffer.from(`${client.client_id}:nope`).toString("base64")}`);
      expect(wrong.body.error).toBe("invalid_client");
      const right = await exchange(`Basic ${basic}`);
      expect(right.status).toBe(200);
      expect(right.body.access_token).toEqual(expect.any(String));
    });
  });

  describe("/authorize", () => {
    it("echoes state and returns a code to an exact redirect URI", async () => {
      const { client_id } = await registerClient(server.url);
      const callback = await authorize(server.url, {
        client_id,
        redirect_uri: CALLBACK_URL,
        code_challenge: pkcePair().challenge,
        state: "xyz-123",
      });
      expect(callback.searchParams.get("state")).toBe("xyz-123");
      expect(callback.searchParams.get("code")).toEqual(expect.any(String));
      expect(callback.searchParams.getAll("iss")).toEqual([server.url]);
    });

    it("accepts any port for a loopback redirect URI (RFC 8252)", async () => {
      const { client_id } = await registerClient(server.url);
      const otherPort = "http://127.0.0.1:50123/callback";
      const callback = await followToCallback(
        authorizeUrl(server.url, {
          client_id,
          redirect_uri: otherPort,
          code_challenge: pkcePair().challenge,
        }),
        otherPort,
      );
      expect(callback.searchParams.get("code")).toEqual(expect.any(String));
    });

    it("refuses a redirect URI that does not match, without redirecting", async () => {
      const { client_id } = await registerClient(server.url);
      for (const redirect of ["http://127.0.0.1:33418/other", "https://evil.example/callback"]) {
        const response = await fetch(
          authorizeUrl(server.url, {
            client_id,
            redirect_uri: redirect,
            code_challenge: pkcePair().challenge,
          }),
          { redirect: "manual" },
        );
        expect(response.status).toBe(400);
        expect(response.headers.get("location")).toBeNull();
      }
    });

    it("refuses an unknown client without redirecting", async () => {
      const reply = await authorizeOnce(server.url, {
        client_id: "no-such-client",
        redirect_uri: CALLBACK_URL,
        code_challenge: pkcePair().challenge,
      });
      expect(reply.status).toBe(400);
      expect(reply.location).toBeNull();
      expect(reply.text).toContain("invalid_client");
    });

    it("requires PKCE S256: an error redirect with the state and iss for a client it vouches for", async () => {
      for (const pkce of [{}, { code_challenge: "abc", code_challenge_method: "plain" }]) {
        const callback = await authorize(server.url, {
          client_id: VOUCHED_CLIENT,
          redirect_uri: CALLBACK_URL,
          state: "s1",
          ...pkce,
        });
        expect(callback.searchParams.get("error")).toBe("invalid_request");
        expect(callback.searchParams.get("state")).toBe("s1");
        expect(callback.searchParams.get("iss")).toBe(server.url);
        expect(callback.searchParams.get("code")).toBeNull();
      }
    });

    it("refuses a resource that is not served here (RFC 8707)", async () => {
      const callback = await authorize(server.url, {
        client_id: VOUCHED_CLIENT,
        redirect_uri: CALLBACK_URL,
        code_challenge: pkcePair().challenge,
        resource: "https://elsewhere.example/mcp",
      });
      expect(callback.searchParams.get("error")).toBe("invalid_target");
      expect(callback.searchParams.get("iss")).toBe(server.url);
    });

    it("refuses an unknown scope with a redirect to a client it vouches for", async () => {
      const callback = await authorize(server.url, {
        client_id: VOUCHED_CLIENT,
        redirect_uri: CALLBACK_URL,
        code_challenge: pkcePair().challenge,
        scope: "chat:read admin",
      });
      expect(callback.searchParams.get("error")).toBe("invalid_scope");
      expect(callback.searchParams.get("iss")).toBe(server.url);
    });
  });

  describe("/authorize errors for a client the server cannot vouch for (RFC 9700 §4.11.2): a page, never a redirect", () => {
    it.each([
      ["scope=bogus", { scope: "bogus" }, "invalid_scope"],
      ["no PKCE", { code_challenge: undefined }, "invalid_request"],
      ["the plain PKCE method", { code_challenge_method: "plain" }, "invalid_request"],
      ["a resource served elsewhere", { resource: "https://elsewhere.example/mcp" }, "invalid_target"],
      ["response_type=token", { response_type: "token" }, "unsupported_response_type"],
    ])("%s from a freshly registered client", async (_name, extra, error) => {
      const { client_id } = await registerClient(server.url);
      const reply = await authorizeOnce(server.url, {
        client_id,
        redirect_uri: CALLBACK_URL,
        code_challenge: pkcePair().challenge,
        state: "s1",
        ...extra,
      });
      expect(reply.status).toBe(400);
      expect(reply.location).toBeNull();
      expect(reply.text).toContain(error);
      expect(reply.text).not.toContain("127.0.0.1:33418");
    });
  });

  describe("/token with an authorization code", () => {
    async function freshCode(resource?: string) {
      const { client_id } = await registerClient(server.url);
      const pkce = pkcePair();
      const callback = await authorize(server.url, {
        client_id,
        redirect_uri: CALLBACK_URL,
        code_challenge: pkce.challenge,
        ...(resource ? { resource } : {}),
      });
      return { client_id, ...pkce, code: callback.searchParams.get("code") ?? "" };
    }
    const exchange = (fields: Record<string, string | undefined>) =>
      postForm(`${server.url}/token`, {
        grant_type: "authorization_code",
        redirect_uri: CALLBACK_URL,
        ...fields,
      });

    it("issues an access token, a refresh token and the granted scopes", async () => {
      const { client_id, verifier, code } = await freshCode();
      const { status, body } = await exchange({ client_id, code, code_verifier: verifier });
      expect(status).toBe(200);
      expect(body).toMatchObject({ token_type: "Bearer", expires_in: 60, scope: "chat:read chat:write" });
      expect(body.refresh_token).toEqual(expect.any(String));
    });

    it("refuses a wrong PKCE verifier", async () => {
      const { client_id, code } = await freshCode();
      const { status, body } = await exchange({ client_id, code, code_verifier: pkcePair().verifier });
      expect(status).toBe(400);
      expect(body.error).toBe("invalid_grant");
    });

    it("refuses a reused code and revokes the tokens it issued", async () => {
      const { client_id, verifier, code } = await freshCode(`${server.url}/v2`);
      const first = await exchange({ client_id, code, code_verifier: verifier });
      expect(first.status).toBe(200);
      expect(
        (await fetch(`${server.url}/v2/chats`, { headers: bearer(first.body.access_token) })).status,
      ).toBe(200);
      const second = await exchange({ client_id, code, code_verifier: verifier });
      expect(second.body.error).toBe("invalid_grant");
      expect(
        (await fetch(`${server.url}/v2/chats`, { headers: bearer(first.body.access_token) })).status,
      ).toBe(401);
    });

    it("refuses a code after 60 seconds", async () => {
      const { client_id, verifier, code } = await freshCode();
      clock.advance(61_000);
      const { body } = await exchange({ client_id, code, code_verifier: verifier });
      expect(body.error).toBe("invalid_grant");
    });

    it("refuses a code presented with another redirect URI", async () => {
      const { client_id, verifier, code } = await freshCode();
      const { body } = await exchange({
        client_id,
        code,
        code_verifier: verifier,
        redirect_uri: "http://127.0.0.1:33418/elsewhere",
      });
      expect(body.error).toBe("invalid_grant");
    });

    it("refuses a code presented by another client", async () => {
      const { verifier, code } = await freshCode();
      const other = await registerClient(server.url);
      const { body } = await exchange({ client_id: other.client_id, code, code_verifier: verifier });
      expect(body.error).toBe("invalid_grant");
    });

    it("refuses an unknown client", async () => {
      const { verifier, code } = await freshCode();
      const { status, body } = await exchange({ client_id: "no-such-client", code, code_verifier: verifier });
      expect(status).toBe(400);
      expect(body.error).toBe("invalid_client");
    });

    it("binds the RFC 8707 resource: a token for /v2 is refused on /mcp", async () => {
      const { tokens } = await signInRaw(server.url, { resource: `${server.url}/v2` });
      expect((await fetch(`${server.url}/v2/chats`, { headers: bearer(tokens.access_token) })).status).toBe(
        200,
      );
      const response = await fetch(server.mcpUrl, {
        method: "POST",
        headers: {
          ...bearer(tokens.access_token),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      expect(response.status).toBe(401);
    });

    it("refuses a token request whose resource differs from the authorization's", async () => {
      const { client_id, verifier, code } = await freshCode(`${server.url}/mcp`);
      const { body } = await exchange({
        client_id,
        code,
        code_verifier: verifier,
        resource: `${server.url}/v2`,
      });
      expect(body.error).toBe("invalid_target");
    });
  });

  describe("refresh-token rotation", () => {
    const refresh = (clientId: string, refreshToken: unknown) =>
      postForm(`${server.url}/token`, {
        grant_type: "refresh_token",
        client_id: clientId,
        refresh_token: String(refreshToken),
      });

    it("rotates the refresh token and keeps the account of the grant", async () => {
      const { clientId, tokens } = await signInRaw(server.url, { resource: `${server.url}/v2` });
      const rotated = await refresh(clientId, tokens.refresh_token);
      expect(rotated.status).toBe(200);
      expect(rotated.body.refresh_token).not.toBe(tokens.refresh_token);
      // Both token responses name the account of the grant (an RFC 6749 §5.1 extra parameter).
      expect(tokens).toMatchObject({ account: "acme" });
      expect(rotated.body.account).toBe("acme");
      const chat = await fetch(`${server.url}/v2/chats`, {
        method: "POST",
        headers: { ...bearer(rotated.body.access_token), "content-type": "application/json" },
        body: JSON.stringify({ message: "hello" }),
      });
      expect(((await chat.json()) as { url: string }).url).toContain("/acme/");
    });

    it("refuses a replayed rotated refresh token and revokes its whole family", async () => {
      const { clientId, tokens } = await signInRaw(server.url);
      const rotated = await refresh(clientId, tokens.refresh_token);
      const replay = await refresh(clientId, tokens.refresh_token);
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe("invalid_grant");
      expect((await refresh(clientId, rotated.body.refresh_token)).body.error).toBe("invalid_grant");
      const headers = bearer(rotated.body.access_token);
      expect((await fetch(`${server.url}/v2/chats`, { headers })).status).toBe(401);
    });

    it("refuses a refresh token of another client", async () => {
      const { tokens } = await signInRaw(server.url);
      const other = await registerClient(server.url);
      expect((await refresh(other.client_id, tokens.refresh_token)).body.error).toBe("invalid_grant");
    });

    it("lets an expired access token be replaced by refreshing", async () => {
      const { clientId, tokens } = await signInRaw(server.url, { resource: `${server.url}/v2` });
      clock.advance(61_000);
      expect((await fetch(`${server.url}/v2/chats`, { headers: bearer(tokens.access_token) })).status).toBe(
        401,
      );
      const rotated = await refresh(clientId, tokens.refresh_token);
      expect(
        (await fetch(`${server.url}/v2/chats`, { headers: bearer(rotated.body.access_token) })).status,
      ).toBe(200);
    });
  });

  describe("/revoke", () => {
    it("ends the sign-in: access and refresh tokens stop working", async () => {
      const { clientId, tokens } = await signInRaw(server.url);
      const revoked = await postForm(`${server.url}/revoke`, {
        client_id: clientId,
        token: String(tokens.refresh_token),
      });
      expect(revoked.status).toBe(200);
      expect((await fetch(`${server.url}/v2/chats`, { headers: bearer(tokens.access_token) })).status).toBe(
        401,
      );
      const refreshed = await postForm(`${server.url}/token`, {
        grant_type: "refresh_token",
        client_id: clientId,
        refresh_token: String(tokens.refresh_token),
      });
      expect(refreshed.body.error).toBe("invalid_grant");
    });
  });
});

describe("the consent page", () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = startInProcessTestServer();
  });
  afterAll(() => server.close());

  /** Opens /authorize in the browser (which keeps the request's binding cookie) and returns the consent path. */
  async function startAuthorization(browser: TestBrowser, state = "st-1") {
    const { client_id } = await registerClient(server.url, { client_name: "Consent Test App" });
    const pkce = pkcePair();
    const response = await browser.get(
      authorizeUrl(server.url, {
        client_id,
        redirect_uri: CALLBACK_URL,
        code_challenge: pkce.challenge,
        state,
        resource: `${server.url}/v2`,
      }),
    );
    const consentPath = new URL(response.headers.get("location") ?? "", server.url);
    return { client_id, ...pkce, consentPath: consentPath.pathname + consentPath.search };
  }

  it("sends a signed-out person to sign in first, then back to the consent page", async () => {
    const browser = new TestBrowser(server.url);
    const { consentPath } = await startAuthorization(browser);
    const first = await browser.get(consentPath);
    expect(first.status).toBe(303);
    const signInPath = first.headers.get("location") ?? "";
    expect(signInPath).toMatch(/^\/signin\?next=/);
    const signInPage = await (await browser.get(signInPath)).text();
    const signedIn = await browser.post("/signin", {
      username: "dev",
      password: "dev",
      csrf: hiddenField(signInPage, "csrf"),
      next: hiddenField(signInPage, "next"),
    });
    expect(signedIn.headers.get("location")).toBe(consentPath);
    const consent = await browser.get(consentPath);
    expect(consent.status).toBe(200);
    const page = await consent.text();
    expect(page).toContain("Consent Test App");
    for (const slug of ["personal", "acme", "studio", "secure-corp"])
      expect(page).toContain(`value="${slug}"`);
  });

  it("lists only the accounts and teams the person belongs to", async () => {
    const browser = new TestBrowser(server.url);
    const { consentPath } = await startAuthorization(browser);
    await browser.signIn("guest");
    const page = await (await browser.get(consentPath)).text();
    expect(page).toContain('value="studio"');
    expect(page).not.toContain('value="acme"');
  });

  it("approves for the chosen team: the code's tokens act for that team", async () => {
    const browser = new TestBrowser(server.url);
    const { client_id, verifier, consentPath } = await startAuthorization(browser, "st-approve");
    await browser.signIn("dev");
    const approved = await approveConsentAt(browser, consentPath, "studio");
    expect(approved.status).toBe(303);
    const callback = new URL(approved.headers.get("location") ?? "");
    expect(callback.href.startsWith(CALLBACK_URL)).toBe(true);
    expect(callback.searchParams.get("state")).toBe("st-approve");
    expect(callback.searchParams.getAll("iss")).toEqual([server.url]);
    const { body } = await postForm(`${server.url}/token`, {
      grant_type: "authorization_code",
      client_id,
      code: callback.searchParams.get("code") ?? "",
      code_verifier: verifier,
      redirect_uri: CALLBACK_URL,
    });
    expect(body.account).toBe("studio");
    const chat = await fetch(`${server.url}/v2/chats`, {
      method: "POST",
      headers: { ...bearer(body.access_token), "content-type": "application/json" },
      body: JSON.stringify({ message: "hi" }),
    });
    const created = (await chat.json()) as { url: string; hostProjectId?: string };
    expect(created.url).toContain("/studio/");
    expect(created.hostProjectId).toBeUndefined();
  });

  it("redirects a denial with error=access_denied, the state and iss (RFC 9207)", async () => {
    const browser = new TestBrowser(server.url);
    const { consentPath } = await startAuthorization(browser, "st-deny");
    await browser.signIn("dev");
    const page = await (await browser.get(consentPath)).text();
    const denied = await browser.post("/oauth/consent", {
      request: hiddenField(page, "request"),
      csrf: hiddenField(page, "csrf"),
      account: "acme",
      decision: "deny",
    });
    const callback = new URL(denied.headers.get("location") ?? "");
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expect(callback.searchParams.get("state")).toBe("st-deny");
    expect(callback.searchParams.getAll("iss")).toEqual([server.url]);
    expect(callback.searchParams.get("code")).toBeNull();
  });

  it("refuses a form without the session's CSRF token", async () => {
    const browser = new TestBrowser(server.url);
    const { consentPath } = await startAuthorization(browser);
    await browser.signIn("dev");
    const page = await (await browser.get(consentPath)).text();
    const forged = await browser.post("/oauth/consent", {
      request: hiddenField(page, "request"),
      csrf: "forged",
      account: "acme",
      decision: "approve",
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("location")).toBeNull();
  });

  it("refuses a team the person does not belong to", async () => {
    const browser = new TestBrowser(server.url);
    const { consentPath } = await startAuthorization(browser);
    await browser.signIn("guest");
    const page = await (await browser.get(consentPath)).text();
    const response = await browser.post("/oauth/consent", {
      request: hiddenField(page, "request"),
      csrf: hiddenField(page, "csrf"),
      account: "acme",
      decision: "approve",
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });

  it("works once: a consent form cannot be replayed", async () => {
    const browser = new TestBrowser(server.url);
    const { consentPath } = await startAuthorization(browser);
    await browser.signIn("dev");
    const page = await (await browser.get(consentPath)).text();
    const fields = {
      request: hiddenField(page, "request"),
      csrf: hiddenField(page, "csrf"),
      account: "acme",
      decision: "approve",
    };
    expect((await browser.post("/oauth/consent", fields)).status).toBe(303);
    expect((await browser.post("/oauth/consent", fields)).status).toBe(400);
  });
});

describe("a pre-registered confidential client", () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = startInProcessTestServer({
      autoApprove: "personal",
      oauthClients: [{ client_id: "ci-client", client_secret: "ci-secret", redirect_uris: [CALLBACK_URL] }],
    });
  });
  afterAll(() => server.close());

  it("signs in with client_secret_post", async () => {
    const { verifier, challenge } = pkcePair();
    const callback = await authorize(server.url, {
      client_id: "ci-client",
      redirect_uri: CALLBACK_URL,
      code_challenge: challenge,
    });
    const { status } = await postForm(`${server.url}/token`, {
      grant_type: "authorization_code",
      client_id: "ci-client",
      client_secret: "ci-secret",
      code: callback.searchParams.get("code") ?? "",
      code_verifier: verifier,
      redirect_uri: CALLBACK_URL,
    });
    expect(status).toBe(200);
  });
});

describe("sign-ins across a restart with a data file", () => {
  it("keeps clients and tokens", async () => {
    const dir = scratchDir("oauth-restart-");
    const dataFile = join(dir, "state.json");
    try {
      const first = startInProcessTestServer({ autoApprove: "acme", dataFile });
      const { clientId, tokens } = await signInRaw(first.url, { resource: `${first.url}/v2` });
      await first.close();
      // The same address, so the token's resource (`<base>/v2`) is this server's again.
      const second = startInProcessTestServer({ autoApprove: "acme", dataFile, url: first.url });
      try {
        const chats = await fetch(`${second.url}/v2/chats`, {
          headers: { authorization: `Bearer ${String(tokens.access_token)}` },
        });
        await chats.body?.cancel();
        expect(chats.status).toBe(200);
        const refreshed = await postForm(`${second.url}/token`, {
          grant_type: "refresh_token",
          client_id: clientId,
          refresh_token: String(tokens.refresh_token),
        });
        expect(refreshed.status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
