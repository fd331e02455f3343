/** A token endpoint whose error page echoes the request: no code, verifier, token or secret reaches stdout, stderr or chat-cli. */
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { OAuthSession } from "../../src/auth/index.js";
import { loginKey, loginPaths } from "../../src/auth/login-key.js";
import { writeFileAtomic } from "../../src/auth/login-store.js";
import { startTinyOAuthServer, type TinyOAuthServer } from "../auth/fixtures/tiny-oauth-server.js";
import { cleanEnv, runCli } from "../cli/helpers.js";
import { scratchDir } from "../support/scratch-dir.js";
import { HTTP_BROWSER, PROTOCOL_VERSION, spawnBridgeDriver } from "./fixtures/bridge-driver.js";

const CLIENT_SECRET = "pre-registered-client-secret-0123456789";
let tiny: TinyOAuthServer | undefined;
afterEach(async () => {
  await tiny?.close();
  tiny = undefined;
  vi.restoreAllMocks();
});

/** Fails naming the secret when any seen by the token endpoint (or issued by it) appears in `text`. */
function expectNoSecret(text: string, secrets: string[], where: string) {
  expect(secrets.length, "the fake server saw secrets").toBeGreaterThan(0);
  for (const secret of secrets.filter((s) => s.length >= 6)) {
    expect(text.includes(secret), `${where} contains the secret ${secret}`).toBe(false);
  }
  expect(text, `${where} carries a terminal escape`).not.toMatch(/\u001b/);
}

describe("the bridge, when the token endpoint's error page echoes the code exchange", () => {
  it("answers the first call with an error and logs it, with no code, verifier or client secret and no escapes", async () => {
    tiny = await startTinyOAuthServer({ preRegistered: { clientId: "pre-1", clientSecret: CLIENT_SECRET } });
    tiny.echoTokenRequests = true;
    const bridge = spawnBridgeDriver(
      ["--token-store", "file", "--auth-timeout", "10", "--client-id", "pre-1", "--debug", tiny.resourceUrl],
      {
        CHAT_CONFIG_DIR: scratchDir("cmb-echo-"),
        CHAT_MCP_CLIENT_SECRET: CLIENT_SECRET,
        BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
      },
    );
    bridge.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "victim", version: "1" },
    });
    const id = bridge.request("tools/call", { name: "list_chats", arguments: {} });
    try {
      await bridge.waitAnswered([id], 20_000);
    } finally {
      await bridge.stop(3_000);
    }
    const answer = bridge.answersTo(id)[0];
    expect(answer?.result?.isError).toBe(true);
    expect(JSON.stringify(answer?.result?.content)).toMatch(/sign/i);
    expect(tiny.secretsSeen).toContain(CLIENT_SECRET);
    expectNoSecret(JSON.stringify([...bridge.answers.values()]), tiny.secretsSeen, "stdout");
    expectNoSecret(bridge.stderr(), tiny.secretsSeen, "stderr");
  }, 40_000);
});

describe("a refresh whose error page echoes the refresh token", () => {
  it("the warning and the sign-in error carry no refresh token", async () => {
    tiny = await startTinyOAuthServer();
    const dir = scratchDir("cmb-echo-refresh-");
    const env = { ...process.env, BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"` };
    const logged: string[] = [];
    const options = {
      serverUrl: tiny.resourceUrl,
      configDir: join(dir, "config"),
      tokenStore: "file" as const,
      authTimeoutMs: 10_000,
      env,
      log: (_level: string, message: string) => logged.push(message),
    };
    await new OAuthSession(options).signIn();
    // Make the stored token due, so the next call refreshes.
    const paths = loginPaths(options.configDir, loginKey(tiny.resourceUrl));
    const { readFileSync } = await import("node:fs");
    const login = JSON.parse(readFileSync(paths.file, "utf8"));
    login.tokens.expiresAt = Date.now() - 1_000;
    await writeFileAtomic(paths.file, JSON.stringify(login));
    tiny.echoTokenRequests = true;

    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return true;
    });
    const fresh = new OAuthSession(options);
    await fresh.accessToken();
    const error = await fresh
      .recover({ status: 401, wwwAuthenticate: null, rejectedToken: "other" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(logged.join("\n")).toMatch(/refresh/i);
    expectNoSecret(logged.join("\n"), tiny.secretsSeen, "the log");
    expectNoSecret(String((error as Error).message), tiny.secretsSeen, "the error");
  }, 40_000);
});

describe("chat-cli --debug login, when the token endpoint's error page echoes the code exchange", () => {
  it("prints the failure and the debug details with no code or verifier and no escapes", async () => {
    tiny = await startTinyOAuthServer();
    tiny.echoTokenRequests = true;
    const env = cleanEnv({ BROWSER: `${process.execPath} ${HTTP_BROWSER}` });
    const result = await runCli(["--base-url", tiny.url, "--debug", "login"], { env, timeoutMs: 30_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/error:/);
    expectNoSecret(result.stdout + result.stderr, tiny.secretsSeen, "chat-cli output");
  }, 40_000);
});
