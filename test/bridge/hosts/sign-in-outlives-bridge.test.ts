/**
 * One-shot hosts (the Inspector CLI: one bridge process per request) stop the bridge while the person signs in:
 * the sign-in still finishes in headless Chromium (the loopback link, a device code approved after the bridge
 * exited), the login is stored, and the next start lists the tools on its first `tools/list`. With no browser, a
 * call is answered at once with the device code.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../../src/server/index.js";
import { type BridgeDriver, spawnBridgeDriver } from "../../reliability/fixtures/bridge-driver.js";
import { chromiumMissing, launchChromium } from "../../support/chromium.js";
import { needs } from "../../support/requirements.js";
import { scratchDir } from "../../support/scratch-dir.js";

const HAND_URL_BROWSER = resolve(import.meta.dirname, "../../browser/fixtures/hand-url-browser.mjs");
const NO_DESKTOP = { BROWSER: "", DISPLAY: "", WAYLAND_DISPLAY: "" };

let server: ReferenceServer;
let browser: Browser;
const bridges: BridgeDriver[] = [];

beforeAll(async () => {
  if (chromiumMissing) return;
  server = await startReferenceServer({
    port: 0,
    rateLimit: false,
    deviceAuthorization: { intervalSeconds: 1 },
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  for (const bridge of bridges) await bridge.stop(2_000).catch(() => undefined);
  await browser?.close();
  await server?.close();
});

function startBridge(configDir: string, env: Record<string, string>, args: string[] = []): BridgeDriver {
  const bridge = spawnBridgeDriver(
    ["--token-store", "file", "--auth-timeout", "120", ...args, server.mcpUrl],
    { CHAT_CONFIG_DIR: configDir, ...env },
  );
  bridges.push(bridge);
  return bridge;
}

async function initialize(bridge: BridgeDriver, name = "one-shot-host"): Promise<void> {
  const id = bridge.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name, version: "1" },
  });
  await bridge.waitAnswered([id], 20_000);
  bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

/** Resolves once a login with tokens is stored in `configDir` (the file store), polling with a bound. */
async function loginStored(configDir: string, timeoutMs = 60_000): Promise<void> {
  const auth = join(configDir, "auth");
  for (const started = Date.now(); Date.now() - started < timeoutMs; ) {
    const files = existsSync(auth) ? readdirSync(auth).filter((name) => name.endsWith(".json")) : [];
    if (files.some((name) => "tokens" in JSON.parse(readFileSync(join(auth, name), "utf8")))) return;
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`no login stored in ${auth} within ${timeoutMs} ms`);
}

/** The next start, signed in: its first tools/list has the server's tools. Resolves with the time it took. */
async function firstListOfNextStart(configDir: string): Promise<{ names: string[]; ms: number }> {
  const started = Date.now();
  const bridge = startBridge(configDir, NO_DESKTOP);
  await initialize(bridge);
  const id = bridge.request("tools/list", {});
  await bridge.waitAnswered([id], 20_000);
  const ms = Date.now() - started;
  const names = (bridge.answersTo(id)[0]?.result?.tools ?? []).map((tool: { name: string }) => tool.name);
  await bridge.stop();
  return { names, ms };
}

describe("a sign-in outlives the bridge that started it", needs("chromium", chromiumMissing), () => {
  it("the loopback link: the bridge is stopped (SIGTERM) on the consent page, Chromium approves, the next start has the tools", async () => {
    const home = scratchDir("cmb-outlives-loopback-");
    const configDir = join(home, "config");
    const urlFile = join(home, "opened-urls.txt");
    writeFileSync(urlFile, "");
    const bridge = startBridge(configDir, {
      BROWSER: `${process.execPath} ${HAND_URL_BROWSER}`,
      HAND_URL_FILE: urlFile,
    });
    await initialize(bridge);
    const list = bridge.request("tools/list", {});
    let url = "";
    for (let waited = 0; !url && waited < 20_000; waited += 100) {
      url = readFileSync(urlFile, "utf8").split("\n")[0] ?? "";
      if (!url) await new Promise((done) => setTimeout(done, 100));
    }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/start\//);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url);
      await page.fill('input[name="username"]', "dev");
      await page.fill('input[name="password"]', "dev");
      await Promise.all([page.waitForURL(/\/oauth\/consent/), page.click('button[type="submit"]')]);
      // The one-shot host is done: it stops the bridge while the person is still on the consent page.
      bridge.child.kill("SIGTERM");
      await bridge.exited;
      expect(bridge.answersTo(list)).toHaveLength(0);
      await page.check('input[name="account"][value="acme"]');
      await Promise.all([
        page.waitForURL((next) => next.hostname === "127.0.0.1" && !next.pathname.startsWith("/oauth")),
        page.click('button[name="decision"][value="approve"]'),
      ]);
      expect(await page.content()).not.toContain("not recognised");
    } finally {
      await context.close();
    }
    await loginStored(configDir);
    const next = await firstListOfNextStart(configDir);
    expect(next.names).toContain("create_chat");
    console.info(
      `next start after the bridge was stopped mid-sign-in: tools on its first list after ${next.ms} ms`,
    );
  }, 120_000);

  it("no browser: the call is answered at once with the device code (no loopback link); the bridge exits; the code approved later signs in", async () => {
    const configDir = join(scratchDir("cmb-outlives-device-"), "config");
    // A signed-out call would wait 10 minutes for the sign-in: answered within the wait below, it did not wait.
    const bridge = startBridge(configDir, { ...NO_DESKTOP, CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS: "600000" });
    await initialize(bridge);
    const call = bridge.request("tools/call", { name: "list_chats", arguments: {} });
    await bridge.waitAnswered([call], 60_000);
    const result = bridge.answersTo(call)[0]?.result as {
      isError?: boolean;
      content?: Array<{ text: string }>;
    };
    const text = result?.content?.[0]?.text ?? "";
    expect(result?.isError, text).toBe(true);
    const code = /the code ([A-Z]{4}-[A-Z]{4})/.exec(text)?.[1];
    expect(code, text).toBeDefined();
    expect(text).toContain(`${server.url}/device?user_code=${code}`);
    expect(text).not.toContain("/start/");
    expect(text).toMatch(/chat-mcp-bridge\.js login /);
    expect(bridge.stderr()).not.toContain("/start/");
    await bridge.stop();

    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/device?user_code=${code}`);
      await page.fill('input[name="username"]', "dev");
      await page.fill('input[name="password"]', "dev");
      await Promise.all([page.waitForURL(/\/device/), page.click('button[type="submit"]')]);
      await Promise.all([page.waitForURL(/\/oauth\/consent/), page.click('button[type="submit"]')]);
      await page.check('input[name="account"][value="acme"]');
      await page.click('button[name="decision"][value="approve"]');
      await page.waitForLoadState();
      expect(await page.locator("h1").textContent()).toBe("Device approved");
    } finally {
      await context.close();
    }
    await loginStored(configDir);
    const next = await firstListOfNextStart(configDir);
    expect(next.names).toContain("create_chat");
    console.info(`device code approved after the bridge exited: next start's first list after ${next.ms} ms`);
  }, 120_000);
});
