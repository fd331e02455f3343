/**
 * `--allow-http` end to end: a development server on the network (`chat.test`, reached through a real proxy) that
 * speaks plain http only. With the flag the whole sign-in runs over http, the token request and a refresh
 * included, with one warning line; without it the URL is refused before any browser opens, naming the flag.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalServerUrl, loginKey, loginPaths } from "../../src/auth/login-key.js";
import { writeFileAtomic } from "../../src/auth/login-store.js";
import { BRIDGE_BIN, connectThroughBridge } from "../bridge/fixtures/spawn-bridge.js";
import { scratchDir } from "../support/scratch-dir.js";
import { type ProxiedService, startProxiedService } from "./fixtures/proxied-service.js";

const browserScript = resolve(import.meta.dirname, "../auth/fixtures/http-browser.mjs");

let service: ProxiedService;
beforeAll(async () => {
  service = await startProxiedService({}, { publicUrl: "http" });
});
afterAll(() => service?.close());

const mcpUrl = () => `${service.httpUrl}/mcp`;
const configDir = join(scratchDir("cmb-allow-http-"), "config");
const browserLog = join(configDir, "..", "browser.log");

function userEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    CHAT_CONFIG_DIR: configDir,
    BROWSER: `${process.execPath} ${browserScript}`,
    HTTP_BROWSER_LOG: browserLog,
    HTTP_PROXY: service.proxyUrl,
  };
}

function login(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [BRIDGE_BIN, "login", "--token-store", "file", "--auth-timeout", "20", ...args],
      { env: userEnv(), timeout: 40_000 },
      (_error, _stdout, stderr) => done({ code: child.exitCode, stderr }),
    );
  });
}

/** The login saved for the server: tokens only when a token request succeeded (the server is only on http). */
const storedTokens = (): { accessToken: string; refreshToken?: string; expiresAt?: number } | undefined => {
  const paths = loginPaths(configDir, loginKey(canonicalServerUrl(mcpUrl())));
  return existsSync(paths.file) ? JSON.parse(readFileSync(paths.file, "utf8")).tokens : undefined;
};

describe("without --allow-http", () => {
  it("a plain-http server on the network is refused before any browser opens, naming the flag", async () => {
    const { code, stderr } = await login([mcpUrl()]);
    expect(code).toBe(2);
    expect(stderr).toContain("--allow-http");
    expect(existsSync(browserLog)).toBe(false);
    expect(storedTokens()).toBeUndefined();
  }, 60_000);
});

describe("with --allow-http", () => {
  it("signs in over http (the token request included) with one warning line", async () => {
    const { code, stderr } = await login(["--allow-http", mcpUrl()]);
    expect(stderr).not.toContain("Refusing");
    expect(code, stderr).toBe(0);
    expect(stderr.match(/plain http/g), stderr).toHaveLength(1);
    expect(storedTokens()?.refreshToken).toBeDefined();
    // The only way to the server is through the proxy, by its name.
    expect(service.proxyLog().some((line) => line.target === new URL(service.httpUrl).host)).toBe(true);
  }, 60_000);

  it("refreshes over http and relays tools with the new token", async () => {
    // The saved token made due: the relay's first request refreshes it (the refresh token rotates).
    const paths = loginPaths(configDir, loginKey(canonicalServerUrl(mcpUrl())));
    const login = JSON.parse(readFileSync(paths.file, "utf8"));
    login.tokens.expiresAt = Date.now() - 1_000;
    await writeFileAtomic(paths.file, JSON.stringify(login));
    const before = storedTokens()!;
    const bridge = await connectThroughBridge(["--allow-http", "--token-store", "file", mcpUrl()], {
      env: userEnv(),
    });
    try {
      const listed = await bridge.client.callTool({ name: "list_chats", arguments: {} });
      expect(listed.isError, JSON.stringify(listed)).toBeFalsy();
    } finally {
      await bridge.close();
    }
    const after = storedTokens()!;
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now());
    expect(bridge.stderr()).not.toContain("Refusing");
    expect(bridge.stderr().match(/plain http/g), bridge.stderr()).toHaveLength(1);
  }, 60_000);
});
