/** A reference server restarted without its data file forgets every client registration: sign-ins recover on their own. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAuthSession } from "../../src/auth/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { connectThroughBridge } from "../bridge/fixtures/spawn-bridge.js";
import { cleanEnv, ROOT, runCli } from "../cli/helpers.js";
import { scratchDir } from "../support/scratch-dir.js";

const HTTP_BROWSER = join(ROOT, "test/auth/fixtures/http-browser.mjs");

let server: ReferenceServer;
let port: number;

beforeAll(async () => {
  server = await startReferenceServer({ autoApprove: "acme" });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
});

/** The same URL, a server that knows nothing of the one before (no data file). */
async function restartServer(): Promise<void> {
  await server.close();
  server = await startReferenceServer({ autoApprove: "acme", port });
}

/** One line per browser opened (see the fixture). */
function browserOpenings(logFile: string): number {
  return existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").filter(Boolean).length : 0;
}

describe("a server restarted without --data: stored logins sign in again by themselves", () => {
  const logFile = join(scratchDir("cmb-restart-"), "browser.log");
  const env = cleanEnv({
    BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"`,
    HTTP_BROWSER_LOG: logFile,
  });

  const useBridge = async () => {
    const bridge = await connectThroughBridge(
      ["--token-store", "file", "--auth-timeout", "20", server.mcpUrl],
      {
        env,
      },
    );
    try {
      const tools = await bridge.client.listTools();
      expect(tools.tools.length).toBeGreaterThan(0);
      return bridge.stderr();
    } finally {
      await bridge.close();
    }
  };

  it("the bridge (a spawned process) registers again once and signs in, with one new browser opening", async () => {
    await useBridge();
    expect(browserOpenings(logFile)).toBe(1);
    await useBridge();
    expect(browserOpenings(logFile)).toBe(1);

    await restartServer();
    // An event, not a stopwatch: the one new browser opening and the refusal it reacted to (no sign-in timeout).
    const stderr = await useBridge();
    expect(browserOpenings(logFile)).toBe(2);
    expect(stderr).toMatch(/refused \(invalid_client\)/);

    // The new registration and tokens were stored: the next start needs no browser.
    await useBridge();
    expect(browserOpenings(logFile)).toBe(2);
  }, 60_000);

  it("chat-cli login registers again once and signs in, with one new browser opening", async () => {
    const base = ["--base-url", server.url];
    const first = await runCli([...base, "login"], { env });
    expect(first.code, first.stderr).toBe(0);
    const before = browserOpenings(logFile);

    await restartServer();
    const again = await runCli([...base, "login"], { env, timeoutMs: 40_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/no longer knows this client's registration; registering again/);
    expect(browserOpenings(logFile)).toBe(before + 1);

    const created = await runCli([...base, "create", "after the restart", "--json"], { env });
    expect(created.code, created.stderr).toBe(0);
  }, 60_000);
});

describe("a pre-registered client id the server does not know", () => {
  it("says so at once, opens no browser and registers nothing", async () => {
    const logFile = join(scratchDir("cmb-restart-"), "browser.log");
    const session = new OAuthSession({
      serverUrl: server.mcpUrl,
      configDir: scratchDir("cmb-restart-"),
      tokenStore: "file",
      authTimeoutMs: 20_000,
      clientId: "not-registered-here",
      env: { ...process.env, BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"`, HTTP_BROWSER_LOG: logFile },
    });
    // "At once" as an event: the refusal comes before any browser opens, not at the end of the 20 s sign-in wait.
    await expect(session.signIn()).rejects.toThrow(
      /does not know the client id "not-registered-here" \(invalid_client\); check --client-id/,
    );
    expect(browserOpenings(logFile)).toBe(0);
  });
});
