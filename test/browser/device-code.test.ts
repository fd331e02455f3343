/** Sign-in with a device code end to end: the bins print a URL and a code, a real browser (Debian's chromium via playwright-core) enters it and decides on the consent page. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BRIDGE_BIN, connectThroughBridge } from "../bridge/fixtures/spawn-bridge.js";
import { chromiumMissing, launchChromium } from "../support/chromium.js";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";

const CHAT_CLI = resolve(import.meta.dirname, "../../bin/chat-cli.js");

let server: ReferenceServer;
let browser: Browser;

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
  await browser?.close();
  await server?.close();
});

/** A bin run with a fresh config dir and no browser of its own; its stderr read as it comes. */
function run(bin: string, args: string[], extraEnv: Record<string, string> = {}) {
  const configDir = join(scratchDir("cmb-device-e2e-"), "config");
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    NO_COLOR: "1",
    CHAT_CONFIG_DIR: configDir,
    ...extraEnv,
  };
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [bin, ...args], { env });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const exited = new Promise<number | null>((done) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      done(code);
    }),
  );
  /** The verification URL and code, once printed. */
  const shown = new Promise<{ url: string; code: string }>((done, fail) => {
    const look = () => {
      const match = /open this URL in a browser on any device:\n {2}(\S+)\n.* ([A-Z]{4}-[A-Z]{4})\n/.exec(
        stderr,
      );
      if (match) done({ url: match[1] as string, code: match[2] as string });
    };
    child.stderr.on("data", look);
    child.on("close", () => fail(new Error(`exited without a device code: ${stderr}`)));
  });
  shown.catch(() => {}); // Not every run shows a code (whoami).
  return { env, exited, shown, stderr: () => stderr, stdout: () => stdout };
}

/** Chromium opens the URL, signs in as dev, checks the code and continues, then decides on the consent page. */
async function decideInChromium(url: string, code: string, decision: "approve" | "deny", team = "acme") {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url);
    if (await page.locator('input[name="password"]').count()) {
      await page.fill('input[name="username"]', "dev");
      await page.fill('input[name="password"]', "dev");
      await Promise.all([page.waitForURL(/\/device/), page.click('button[type="submit"]')]);
    }
    expect(await page.inputValue('input[name="user_code"]')).toBe(code);
    await Promise.all([page.waitForURL(/\/oauth\/consent/), page.click('button[type="submit"]')]);
    expect(await page.locator("h1").textContent()).toContain("Authorize");
    expect(await page.content()).toContain(code);
    if (decision === "approve") await page.check(`input[name="account"][value="${team}"]`);
    await page.click(`button[name="decision"][value="${decision}"]`);
    await page.waitForLoadState();
    const heading = await page.locator("h1").textContent();
    expect(heading).toBe(decision === "approve" ? "Device approved" : "Sign-in denied");
    expect(await page.content()).not.toMatch(/chat_(at|rt|dc)_/);
  } finally {
    await context.close();
  }
}

describe("chat-mcp-bridge login --device-code in a real browser", needs("chromium", chromiumMissing), () => {
  it("approve for team acme: login completes and tools/list works through the bridge", async () => {
    const login = run(BRIDGE_BIN, ["login", "--device-code", "--token-store", "file", server.mcpUrl]);
    const { url, code } = await login.shown;
    expect(url).toBe(`${server.url}/device?user_code=${code}`);
    await decideInChromium(url, code, "approve", "acme");
    expect(await login.exited, login.stderr()).toBe(0);
    expect(login.stderr()).not.toMatch(/chat_(at|rt|dc)_/);

    const bridge = await connectThroughBridge(["--token-store", "file", server.mcpUrl], { env: login.env });
    try {
      const tools = await bridge.client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain("create_chat");
    } finally {
      await bridge.close();
    }
  }, 90_000);

  it("deny: login ends at once with the reason", async () => {
    const login = run(BRIDGE_BIN, ["login", "--device-code", "--token-store", "file", server.mcpUrl]);
    const { url, code } = await login.shown;
    await decideInChromium(url, code, "deny");
    expect(await login.exited).not.toBe(0);
    // The denial, not --auth-timeout, ended it: the reason it names is the browser's.
    expect(login.stderr()).toMatch(/denied in the browser \(access_denied\)/);
  }, 90_000);

  it("falls back to the device code by itself when $BROWSER fails and the server offers it", async () => {
    const login = run(BRIDGE_BIN, ["login", "--token-store", "file", server.mcpUrl], {
      BROWSER: `"${process.execPath}" -e "process.exit(3)"`,
    });
    const { url, code } = await login.shown;
    expect(login.stderr()).toContain("Signing in with a device code instead.");
    await decideInChromium(url, code, "approve", "studio");
    expect(await login.exited, login.stderr()).toBe(0);
  }, 90_000);
});

describe("chat-cli login --device-code in a real browser", needs("chromium", chromiumMissing), () => {
  it("approve for team studio: whoami then names the login", async () => {
    const login = run(CHAT_CLI, [
      "--base-url",
      server.url,
      "login",
      "--device-code",
      "--token-store",
      "file",
    ]);
    const { url, code } = await login.shown;
    await decideInChromium(url, code, "approve", "studio");
    expect(await login.exited, login.stderr()).toBe(0);
    const whoami = run(CHAT_CLI, ["--base-url", server.url, "--json", "whoami"], {
      CHAT_CONFIG_DIR: login.env.CHAT_CONFIG_DIR,
    });
    expect(await whoami.exited, whoami.stderr()).toBe(0);
    expect(JSON.parse(whoami.stdout())).toMatchObject({ account: "studio" });
    expect(whoami.stdout() + whoami.stderr()).not.toMatch(/chat_(at|rt|dc)_/);
  }, 90_000);
});
