/** Shared by the session flow tests: a tiny OAuth server (listening, or its handler in-process), a scratch config dir, an HTTP "browser", and sessions on them. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { vi } from "vitest";
import { OAuthSession, type OAuthSessionOptions } from "../../../src/auth/index.js";
import { canonicalServerUrl, loginKey, loginPaths } from "../../../src/auth/login-key.js";
import { writeFileAtomic } from "../../../src/auth/login-store.js";
import { storedLoginOf } from "../../../src/auth/session/context.js";
import { readStoredLogin, type StoredLogin } from "../../../src/auth/stored-login.js";
import { scratchDir } from "../../support/scratch-dir.js";
import {
  createTinyOAuthServer,
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
  const browserOpens = () =>
    existsSync(browserLog) ? readFileSync(browserLog, "utf8").trim().split("\n").length : 0;
  return { ...sessionsOn(tiny, join(dir, "config"), env, fetch), env, browserOpens };
}

/**
 * The tiny server's handler in-process (no port, no browser) and sessions on it, for tests whose subject comes after
 * a sign-in: `signedIn()` stores the login a sign-in would have. A session that tried to sign in would open the
 * loopback callback, which the unit project refuses; `signInPrompts()` counts what it would have shown the person.
 */
export function setupInProcess(options: TinyOAuthOptions = {}) {
  const tiny = createTinyOAuthServer(options);
  const dir = scratchDir("cmb-session-");
  scratchDirs.push(dir);
  const prompts: unknown[] = [];
  const sessions = sessionsOn(tiny, join(dir, "config"), { PATH: process.env.PATH ?? "" }, tiny.fetch, {
    onSignInPrompt: (prompt) => prompts.push(prompt),
  });
  /** Registers a client and stores the tokens issued to it, as a finished sign-in would have. */
  const signedIn = async () => {
    const registered = await tiny.fetch(`${tiny.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:20000/callback"], client_name: "test" }),
    });
    const client = (await registered.json()) as { client_id: string; redirect_uris: string[] };
    const tokens = tiny.grant(client.client_id);
    await sessions.writeLogin({
      client: { client_id: client.client_id, redirect_uris: client.redirect_uris, source: "dynamic" },
      tokens: {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        expiresAt: Date.now() + tokens.expires_in * 1000,
      },
    });
    return tokens.access_token;
  };
  return { ...sessions, signedIn, signInPrompts: () => prompts.length };
}

/** Sessions on `tiny` through `fetchFn`, and what the tests read and write of their stored login. */
function sessionsOn(
  tiny: TinyOAuthServer,
  configDir: string,
  env: NodeJS.ProcessEnv,
  fetchFn: typeof fetch,
  defaults: Partial<OAuthSessionOptions> = {},
) {
  const session = (extra: Partial<OAuthSessionOptions> = {}) =>
    new OAuthSession({
      serverUrl: tiny.resourceUrl,
      configDir,
      tokenStore: "file",
      authTimeoutMs: 10_000,
      env,
      ...(fetchFn === fetch ? {} : { fetch: fetchFn }),
      ...defaults,
      ...extra,
    });
  const challenge = async (token?: string) => {
    const response = await fetchFn(
      tiny.resourceUrl,
      token ? { headers: { Authorization: `Bearer ${token}` } } : {},
    );
    await response.body?.cancel();
    return { status: response.status, wwwAuthenticate: response.headers.get("www-authenticate") };
  };
  const resourceStatus = async (token: string) => (await challenge(token)).status;
  const paths = loginPaths(configDir, loginKey(tiny.resourceUrl));
  const storedLogin = () => readStoredLogin(JSON.parse(readFileSync(paths.file, "utf8")));
  // Makes the client see its access token as expired (the server still accepts it), to drive a refresh.
  const expireStoredToken = async () => {
    const login = storedLogin();
    login.tokens!.expiresAt = Date.now() - 1_000;
    await writeFileAtomic(paths.file, JSON.stringify(login));
  };
  /** A login as a sign-in would have saved it, without one. */
  const writeLogin = async (login: {
    client: StoredLogin["client"];
    tokens: { accessToken: string; refreshToken?: string | undefined; expiresAt: number };
  }) => {
    const stored = storedLoginOf(
      { serverUrl: canonicalServerUrl(tiny.resourceUrl), options: {} },
      { authorizationServerUrl: tiny.url, resource: tiny.resourceUrl },
      { client: login.client, tokens: { ...login.tokens, tokenType: "Bearer", issuedAt: Date.now() } },
    );
    await writeFileAtomic(paths.file, JSON.stringify(stored));
  };
  // The saved-token path alone: a client and a refresh token the server never issued.
  const writeStoredLogin = (tokens: { accessToken: string; expiresAt: number }) =>
    writeLogin({
      client: { client_id: "saved-client", redirect_uris: [], source: "dynamic" },
      tokens: { ...tokens, refreshToken: "saved-refresh" },
    });
  return {
    tiny,
    configDir,
    session,
    challenge,
    resourceStatus,
    paths,
    storedLogin,
    expireStoredToken,
    writeLogin,
    writeStoredLogin,
  };
}

/**
 * A file-store session on the reference server's handler (`server.fetch`, no port) that signs in with a device code
 * unless `extra` says otherwise, and its stored login.
 */
export function referenceSession(
  server: { mcpUrl: string; fetch: typeof fetch },
  extra: Partial<OAuthSessionOptions> = {},
) {
  const configDir = scratchDir("cmb-device-");
  const serverUrl = server.mcpUrl;
  const session = new OAuthSession({
    serverUrl,
    configDir,
    tokenStore: "file",
    authTimeoutMs: 300_000,
    deviceCode: true,
    loginCommand: "chat-mcp-bridge login --device-code <url>",
    env: { PATH: process.env.PATH ?? "" },
    fetch: (input, init) => server.fetch(input, init),
    ...extra,
  });
  const stored = () =>
    readStoredLogin(JSON.parse(readFileSync(loginPaths(configDir, loginKey(serverUrl)).file, "utf8")));
  return { session, stored };
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
