/** The browser round trip of a sign-in (src/auth/session/browser-sign-in.ts): discovery, PKCE, resource, scopes, and the ways it cannot complete. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AuthRequiredError, OAuthSession } from "../../../src/auth/index.js";
import { scratchDir } from "../../support/scratch-dir.js";
import { cleanUpSessions, runHttpBrowser, setup } from "./helpers.js";

afterEach(cleanUpSessions);

describe("sign-in after a 401: discovery, PKCE, resource", () => {
  it("signs in once through the browser, stores the login in a 0600 file, and the token works", async () => {
    const t = await setup();
    const session = t.session();
    expect(await session.accessToken()).toBeUndefined();
    const token = await session.recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.browserOpens()).toBe(1);
    expect(t.tiny.registrations).toBe(1);
    const [authorization] = t.tiny.authorizations;
    expect(authorization?.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(authorization?.codeChallengeMethod).toBe("S256");
    expect(authorization?.resource).toBe(t.tiny.resourceUrl);
    expect(await session.describeStorage()).toEqual({ kind: "file", location: t.paths.file });
  });

  it("a 2025-03-26 server without metadata: /register, /authorize and /token at its root", async () => {
    const t = await setup({ legacy: true });
    const token = await t.session().recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrations).toBe(1);
  });

  it("a second session (a later run) reuses the stored tokens without a browser", async () => {
    const t = await setup();
    const first = await t.session().recover(await t.challenge());
    expect(await t.session().accessToken()).toBe(first);
    expect(t.browserOpens()).toBe(1);
  });

  it("signIn() resolves with a summary and no secrets", async () => {
    const t = await setup({ scopesSupported: ["mcp:read"] });
    const summary = await t.session().signIn();
    expect(summary).toEqual({ scope: "mcp:read", expiresAt: expect.any(Number), storedIn: "file" });
  });
});

describe("scopes as the MCP authorization spec says", () => {
  it("asks for the WWW-Authenticate scope when there is one", async () => {
    const t = await setup({ scopesSupported: ["mcp:read", "mcp:write"] });
    await t
      .session()
      .recover({ status: 401, wwwAuthenticate: `Bearer scope="mcp:read", error="invalid_token"` });
    expect(t.tiny.authorizations[0]?.scope).toBe("mcp:read");
  });

  it("else every scope the resource lists in scopes_supported", async () => {
    const t = await setup({ scopesSupported: ["mcp:read", "mcp:write"] });
    await t.session().recover(await t.challenge());
    expect(t.tiny.authorizations[0]?.scope).toBe("mcp:read mcp:write");
  });

  it("else no scope at all", async () => {
    const t = await setup();
    await t.session().recover(await t.challenge());
    expect(t.tiny.authorizations[0]?.scope).toBeUndefined();
  });

  it("adds offline_access when the authorization server offers it", async () => {
    const t = await setup({ scopesSupported: ["mcp:read"], offerOfflineAccess: true });
    await t.session().recover(await t.challenge());
    expect(t.tiny.authorizations[0]?.scope).toBe("mcp:read offline_access");
  });

  it("steps up on 403 insufficient_scope with the union of the scopes", async () => {
    const t = await setup({ scopesSupported: ["mcp:read"] });
    const session = t.session();
    const first = await session.recover(await t.challenge());
    expect(t.tiny.scopeOf(first)).toBe("mcp:read");
    const second = await session.recover({
      status: 403,
      wwwAuthenticate: `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="${t.tiny.url}/.well-known/oauth-protected-resource/mcp"`,
    });
    expect(second).not.toBe(first);
    expect(t.tiny.authorizations[1]?.scope?.split(" ").sort()).toEqual(["mcp:read", "mcp:write"]);
  });
});

describe("sign-in that cannot complete", () => {
  it("access_denied in the browser: AuthRequiredError (denied)", async () => {
    const t = await setup({ deny: true });
    const error = await t
      .session()
      .recover(await t.challenge())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect(error).toMatchObject({ reason: "denied" });
  });

  it("no answer within --auth-timeout: AuthRequiredError (timeout)", async () => {
    const t = await setup();
    const silentBrowser = { ...t.env, BROWSER: `"${process.execPath}" -e ""` };
    const error = await t
      .session({ env: silentBrowser, authTimeoutMs: 300 })
      .recover(await t.challenge())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AuthRequiredError", reason: "timeout" });
  });

  for (const endpoint of ["file:///etc/passwd", "javascript:alert(1)", "http://evil.example/authorize"]) {
    it(`an authorization endpoint of ${endpoint} is refused and no browser runs`, async () => {
      const t = await setup({ authorizationEndpoint: endpoint });
      const error = await t
        .session()
        .recover(await t.challenge())
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "AuthRequiredError", reason: "refused" });
      expect(t.browserOpens()).toBe(0);
      expect(t.tiny.registrations).toBe(0);
    });
  }

  it("protected resource metadata naming another resource is refused (resource mismatch)", async () => {
    const t = await setup({ advertisedResource: "http://127.0.0.1:1/other" });
    const error = await t
      .session()
      .recover(await t.challenge())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AuthRequiredError", reason: "refused" });
    expect(t.browserOpens()).toBe(0);
  });
});

describe("--auth-timeout bounds the whole sign-in, discovery included", () => {
  let silent: Server | undefined;
  afterEach(async () => {
    silent?.closeAllConnections();
    await new Promise((done) => silent?.close(done));
    silent = undefined;
  });

  it("metadata that never comes ends the sign-in at the deadline, not after 10 s per document", async () => {
    // A server whose metadata requests are accepted and never answered.
    silent = createServer(() => {});
    await new Promise<void>((done) => silent!.listen(0, "127.0.0.1", done));
    const origin = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const session = new OAuthSession({
      serverUrl: `${origin}/mcp`,
      configDir: scratchDir("cmb-deadline-"),
      tokenStore: "file",
      authTimeoutMs: 1_500,
      openBrowser: false,
    });
    const error = await session.signIn().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AuthRequiredError", reason: "timeout" });
    expect((error as Error).message).toMatch(/timed out after 2 s while asking the server where to sign in/);
    expect((error as Error).message).toContain("--auth-timeout");
    // The test's own time-out is below the first document's 10 s: only the deadline can have ended it in time.
  }, 9_000);
});

describe("--no-browser", () => {
  it("prints the URL on stderr only, and the sign-in completes when someone opens it", async () => {
    const t = await setup();
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const pending = t.session({ openBrowser: false }).signIn();
    let url: string | undefined;
    while (!url) {
      await new Promise((r) => setTimeout(r, 20));
      url = lines.join("").match(/Open this URL to sign in at \S+: (\S+)/)?.[1];
    }
    await runHttpBrowser(url);
    await expect(pending).resolves.toMatchObject({ storedIn: "file" });
    expect(t.browserOpens()).toBe(0);
  });
});
