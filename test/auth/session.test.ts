import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  AuthRequiredError,
  OAuthSession,
  type OAuthSessionOptions,
  UnsafeUrlError,
} from "../../src/auth/index.js";
import { loginKey, loginPaths } from "../../src/auth/login-key.js";
import { StoredLoginSchema } from "../../src/auth/stored-login.js";
import { writeFileAtomic } from "../../src/auth/token-store.js";
import { scratchDir } from "../support/scratch-dir.js";
import { buildChildScript } from "./fixtures/build-child.js";
import {
  startTinyOAuthServer,
  type TinyOAuthOptions,
  type TinyOAuthServer,
} from "./fixtures/tiny-oauth-server.js";

const browserScript = resolve("test/auth/fixtures/http-browser.mjs");
let servers: TinyOAuthServer[] = [];
let scratchDirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  vi.restoreAllMocks();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  scratchDirs = [];
});

async function setup(options: TinyOAuthOptions = {}) {
  const tiny = await startTinyOAuthServer(options);
  servers.push(tiny);
  const dir = scratchDir("cmb-session-");
  scratchDirs.push(dir);
  const browserLog = join(dir, "browser.log");
  const env = {
    ...process.env,
    BROWSER: `"${process.execPath}" "${browserScript}"`,
    HTTP_BROWSER_LOG: browserLog,
  };
  const configDir = join(dir, "config");
  const session = (extra: Partial<OAuthSessionOptions> = {}) =>
    new OAuthSession({
      serverUrl: tiny.resourceUrl,
      configDir,
      tokenStore: "file",
      authTimeoutMs: 10_000,
      env,
      ...extra,
    });
  const browserOpens = () =>
    existsSync(browserLog) ? readFileSync(browserLog, "utf8").trim().split("\n").length : 0;
  const challenge = async (token?: string) => {
    const response = await fetch(
      tiny.resourceUrl,
      token ? { headers: { Authorization: `Bearer ${token}` } } : {},
    );
    await response.body?.cancel();
    return { status: response.status, wwwAuthenticate: response.headers.get("www-authenticate") };
  };
  const resourceStatus = async (token: string) => (await challenge(token)).status;
  const paths = loginPaths(configDir, loginKey(tiny.resourceUrl));
  const storedLogin = () => StoredLoginSchema.parse(JSON.parse(readFileSync(paths.file, "utf8")));
  // Makes the client see its access token as expired (the server still accepts it), to drive a refresh.
  const expireStoredToken = async () => {
    const login = storedLogin();
    login.tokens!.expiresAt = Date.now() - 1_000;
    await writeFileAtomic(paths.file, JSON.stringify(login));
  };
  return {
    tiny,
    configDir,
    env,
    session,
    browserOpens,
    challenge,
    resourceStatus,
    paths,
    storedLogin,
    expireStoredToken,
  };
}

describe("sign-in after a 401: discovery, registration, PKCE, resource", () => {
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

  it("a later sign-in on the same callback port reuses the client registration", async () => {
    const t = await setup();
    await t.session().signIn();
    await t.session().signIn();
    expect(t.browserOpens()).toBe(2);
    // The reused registration is first checked at /authorize (redirect not followed), then used by the browser.
    expect(t.tiny.authorizations).toHaveLength(3);
    expect(new Set(t.tiny.authorizations.map((a) => a.clientId)).size).toBe(1);
    expect(t.tiny.registrations).toBe(1);
  });

  it("a pre-registered client (--client-id, secret from the environment) skips registration and authenticates", async () => {
    const t = await setup({ preRegistered: { clientId: "pre-1", clientSecret: "s3cret" } });
    const token = await t.session({ clientId: "pre-1", clientSecret: "s3cret" }).recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrations).toBe(0);
    expect(t.tiny.authorizations[0]?.clientId).toBe("pre-1");
    expect(t.tiny.tokenClientAuth).toEqual(["basic:pre-1:s3cret"]);
  });

  it("a client ID metadata document URL is the client_id where the server supports it", async () => {
    const t = await setup({ clientIdMetadataDocuments: true });
    const clientMetadataUrl = "https://client.example/chat-mcp-bridge.json";
    const token = await t.session({ clientMetadataUrl }).recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrations).toBe(0);
    expect(t.tiny.authorizations[0]?.clientId).toBe(clientMetadataUrl);
  });

  it("a client metadata URL is ignored (registration instead) where the server does not support it", async () => {
    const t = await setup();
    await t.session({ clientMetadataUrl: "https://client.example/m.json" }).recover(await t.challenge());
    expect(t.tiny.registrations).toBe(1);
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

describe("staying signed in: refresh", () => {
  it("refreshes ahead of expiry, with rotation, and never reuses a spent refresh token", async () => {
    const t = await setup();
    const first = await t.session().recover(await t.challenge());
    const firstRefresh = t.storedLogin().tokens?.refreshToken;
    await t.expireStoredToken();
    const session = t.session();
    const second = await session.accessToken();
    expect(second).not.toBe(first);
    expect(await t.resourceStatus(second!)).toBe(200);
    expect(t.storedLogin().tokens?.refreshToken).not.toBe(firstRefresh);
    expect(await session.accessToken()).toBe(second);
    expect(t.tiny.refreshes).toBe(1);
    expect(t.tiny.refreshReuse).toBe(0);
    expect(t.browserOpens()).toBe(1);
  });

  it("a refused refresh token: accessToken() says undefined, recover() signs in again", async () => {
    const t = await setup();
    await t.session().recover(await t.challenge());
    t.tiny.revokeRefreshTokens();
    await t.expireStoredToken();
    const session = t.session();
    expect(await session.accessToken()).toBeUndefined();
    const token = await session.recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.browserOpens()).toBe(2);
    expect(t.tiny.registrations).toBe(1);
  });

  it("a 401 for a token that another session already refreshed just reloads", async () => {
    const t = await setup();
    const a = t.session();
    const b = t.session();
    const old = await a.recover(await t.challenge());
    expect(await b.accessToken()).toBe(old);
    const fresh = await a.recover({ status: 401, wwwAuthenticate: null, rejectedToken: old });
    expect(fresh).not.toBe(old);
    expect(await b.recover({ status: 401, wwwAuthenticate: null })).toBe(fresh);
    expect(t.tiny.refreshes).toBe(1);
    expect(t.browserOpens()).toBe(1);
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

  it("plain http to a non-loopback server is refused unless allowHttp", () => {
    const options = { serverUrl: "http://chat.example/mcp", configDir: tmpdir() };
    expect(() => new OAuthSession(options)).toThrow(UnsafeUrlError);
    expect(() => new OAuthSession({ ...options, allowHttp: true })).not.toThrow();
  });
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
      url = lines.join("").match(/Open this URL to sign in: (\S+)/)?.[1];
    }
    await runHttpBrowser(url);
    await expect(pending).resolves.toMatchObject({ storedIn: "file" });
    expect(t.browserOpens()).toBe(0);
  });
});

describe("signOut", () => {
  it("revokes both tokens and forgets the login and the client registration", async () => {
    const t = await setup();
    const session = t.session();
    const token = await session.recover(await t.challenge());
    await session.signOut();
    expect(t.tiny.revoked.sort()).toEqual(["access_token", "refresh_token"]);
    expect(await t.resourceStatus(token)).toBe(401);
    expect(await session.describeStorage()).toEqual({ kind: "none", location: "" });
    expect(await t.session().accessToken()).toBeUndefined();
    await t.session().signIn();
    expect(t.tiny.registrations).toBe(2);
  });
});

describe("logs never carry secrets", () => {
  it("no token, code, verifier or secret reaches the log or stderr through sign-in, refresh and sign-out", async () => {
    const t = await setup({ scopesSupported: ["mcp:read"] });
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return true;
    });
    const log = (_level: string, message: string) => {
      logged.push(message);
    };
    const token = await t.session({ log }).recover(await t.challenge());
    const { refreshToken } = t.storedLogin().tokens!;
    await t.expireStoredToken();
    const refreshed = await t.session({ log }).accessToken();
    const secondRefresh = t.storedLogin().tokens!.refreshToken!;
    await t.session({ log }).signOut();
    const text = logged.join("\n");
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [token, refreshToken!, refreshed!, secondRefresh])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/[?&]code=/);
  });
});

describe("several processes at once", () => {
  let child: string;
  beforeAll(async () => {
    child = await buildChildScript(resolve("test/auth/fixtures/session-child.ts"));
  });

  function runChild(t: Awaited<ReturnType<typeof setup>>): Promise<string> {
    return new Promise((done, fail) => {
      const proc = spawn(process.execPath, [child, t.tiny.resourceUrl, t.configDir], {
        env: t.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      proc.stdout.on("data", (chunk) => {
        out += chunk;
      });
      // Its sign-in notice is kept from the run's output; shown only when the child fails.
      proc.stderr.on("data", (chunk) => {
        err += chunk;
      });
      proc.once("error", fail);
      proc.once("close", (code) =>
        code === 0 ? done(out.trim()) : fail(new Error(`child exited ${code}: ${err}`)),
      );
    });
  }

  it("three processes with no tokens open the browser once and all end up signed in", async () => {
    const t = await setup();
    const results = await Promise.all([runChild(t), runChild(t), runChild(t)]);
    expect(t.browserOpens()).toBe(1);
    expect(t.tiny.authorizations).toHaveLength(1);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^200 [0-9a-f]{64}$/);
  });

  it("three processes due for a refresh spend the rotating refresh token once", async () => {
    const t = await setup();
    await t.session().signIn();
    await t.expireStoredToken();
    const results = await Promise.all([runChild(t), runChild(t), runChild(t)]);
    expect(t.tiny.refreshes).toBe(1);
    expect(t.tiny.refreshReuse).toBe(0);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^200 /);
  });
});

function runHttpBrowser(url: string): Promise<void> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, [browserScript, url], { stdio: "ignore" });
    proc.once("error", fail);
    proc.once("exit", (code) => (code === 0 ? done() : fail(new Error(`browser exited ${code}`))));
  });
}
