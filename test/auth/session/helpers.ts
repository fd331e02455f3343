/** Shared by the session flow tests: a tiny OAuth server, a scratch config dir, an HTTP "browser", and sessions on them. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { vi } from "vitest";
import { OAuthSession, type OAuthSessionOptions } from "../../../src/auth/index.js";
import { canonicalServerUrl, loginKey, loginPaths } from "../../../src/auth/login-key.js";
import { writeFileAtomic } from "../../../src/auth/login-store.js";
import { type StoredLogin, StoredLoginSchema } from "../../../src/auth/stored-login.js";
import { scratchDir } from "../../support/scratch-dir.js";
import {
  startTinyOAuthServer,
  type TinyOAuthOptions,
  type TinyOAuthServer,
} from "../fixtures/tiny-oauth-server.js";

export const browserScript = resolve("test/auth/fixtures/http-browser.mjs");
let servers: TinyOAuthServer[] = [];
let scratchDirs: string[] = [];

/** For `afterEach`: closes the servers and removes the folders `setup` made, and restores spies. */
export async function cleanUpSessions(): Promise<void> {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  vi.restoreAllMocks();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  scratchDirs = [];
}

/** A tiny OAuth server with `options`, and sessions (file store) that sign in to it through the HTTP browser. */
export async function setup(options: TinyOAuthOptions = {}) {
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
  // A login as a sign-in would have saved it, without one: the saved-token path alone.
  const writeStoredLogin = async (tokens: { accessToken: string; expiresAt: number }) => {
    const login: StoredLogin = {
      version: 1,
      serverUrl: canonicalServerUrl(tiny.resourceUrl),
      authorizationServerUrl: tiny.url,
      resource: tiny.resourceUrl,
      client: { client_id: "saved-client", redirect_uris: [], source: "dynamic" },
      tokens: { ...tokens, tokenType: "Bearer", refreshToken: "saved-refresh", issuedAt: Date.now() },
      savedAt: Date.now(),
    };
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
    writeStoredLogin,
  };
}

export type SessionSetup = Awaited<ReturnType<typeof setup>>;

/** Opens `url` the way the test browser does, outside any session. */
export function runHttpBrowser(url: string): Promise<void> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, [browserScript, url], { stdio: "ignore" });
    proc.once("error", fail);
    proc.once("exit", (code) => (code === 0 ? done() : fail(new Error(`browser exited ${code}`))));
  });
}
