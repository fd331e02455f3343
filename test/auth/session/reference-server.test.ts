/** Full sign-in through OAuthSession (src/auth/session/) against the real reference server (autoApprove) with the headless http-browser, then refresh and sign-out on that login: integration, since the browser sign-in runs the loopback callback and a browser process. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OAuthSession, restServerUrl, storedAccessToken } from "../../../src/auth/index.js";
import { loginKey, loginPaths } from "../../../src/auth/login-key.js";
import { readStoredLogin } from "../../../src/auth/stored-login.js";
import { type ReferenceServer, startReferenceServer } from "../../../src/server/index.js";
import { scratchDir } from "../../support/scratch-dir.js";

const browserScript = resolve("test/auth/fixtures/http-browser.mjs");

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ autoApprove: "acme" });
});
afterAll(async () => {
  await server?.close();
});

function newSession(serverUrl: string, configDir: string) {
  return new OAuthSession({
    serverUrl,
    configDir,
    tokenStore: "file",
    authTimeoutMs: 15_000,
    clientName: "chat-cli",
    env: { ...process.env, BROWSER: `"${process.execPath}" "${browserScript}"` },
  });
}

async function listChats(token: string): Promise<number> {
  const response = await fetch(`${server.url}/v2/chats`, { headers: { Authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  return response.status;
}

function storedLogin(serverUrl: string, configDir: string) {
  const { file } = loginPaths(configDir, loginKey(serverUrl));
  return readStoredLogin(JSON.parse(readFileSync(file, "utf8")));
}

describe("full sign-in against the reference server (REST resource, chat-cli convention)", () => {
  const configDir = scratchDir("cmb-ref-");
  let first: string;

  it("signs in through the browser and stores the login", async () => {
    const serverUrl = restServerUrl(server.url);
    const unauthenticated = await fetch(`${server.url}/v2/chats`);
    await unauthenticated.body?.cancel();
    expect(unauthenticated.status).toBe(401);
    first = await newSession(serverUrl, configDir).recover({
      status: 401,
      wwwAuthenticate: unauthenticated.headers.get("www-authenticate"),
    });
    expect(await listChats(first)).toBe(200);
    expect(storedLogin(serverUrl, configDir).resource).toBe(serverUrl);
    expect(await storedAccessToken(server.url, { env: { CHAT_CONFIG_DIR: configDir } })).toBe(first);
  });

  it("refreshes after expiry, and the rotated refresh token cannot be spent again", async () => {
    const serverUrl = restServerUrl(server.url);
    const before = storedLogin(serverUrl, configDir);
    const session = newSession(serverUrl, configDir);
    // The clock moves to the token's expiry for this one call: only Date is faked, timers run on.
    vi.useFakeTimers({ toFake: ["Date"], now: before.tokens!.expiresAt! });
    let second: string | undefined;
    try {
      second = await session.accessToken();
    } finally {
      vi.useRealTimers();
    }
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(await listChats(second!)).toBe(200);
    const after = storedLogin(serverUrl, configDir);
    expect(after.tokens?.refreshToken).not.toBe(before.tokens?.refreshToken);

    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as {
      token_endpoint: string;
    };
    const replay = await fetch(metadata.token_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: before.tokens!.refreshToken!,
        client_id: before.client!.client_id,
        resource: serverUrl,
      }),
    });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("signOut revokes the tokens and forgets the login", async () => {
    const serverUrl = restServerUrl(server.url);
    const session = newSession(serverUrl, configDir);
    const token = (await session.accessToken())!;
    await session.signOut();
    expect(await session.describeStorage()).toEqual({ kind: "none", location: "" });
    expect(await storedAccessToken(server.url, { env: { CHAT_CONFIG_DIR: configDir } })).toBeUndefined();
    expect(await listChats(token)).toBe(401);
  });
});

describe("full sign-in against the reference server (MCP resource, bridge convention)", () => {
  it("recovers from the 401 of /mcp with a token the MCP endpoint accepts", async () => {
    const configDir = scratchDir("cmb-ref-");
    const initialize = (token?: string) =>
      fetch(server.mcpUrl, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "test", version: "0" },
          },
        }),
      });
    const refused = await initialize();
    await refused.body?.cancel();
    expect(refused.status).toBe(401);
    const token = await newSession(server.mcpUrl, configDir).recover({
      status: 401,
      wwwAuthenticate: refused.headers.get("www-authenticate"),
    });
    const accepted = await initialize(token);
    await accepted.body?.cancel();
    expect(accepted.status).toBe(200);
    expect(storedLogin(server.mcpUrl, configDir).resource).toBe(server.mcpUrl);
  });
});
