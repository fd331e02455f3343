/** A real browser (Debian's chromium via playwright-core) signs in, chooses a team and approves or denies, for a bridge sign-in and for `chat-cli login`. */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { ChatSchema } from "../../src/wire/index.js";
import { connectThroughBridge } from "../bridge/fixtures/spawn-bridge.js";
import { chromiumMissing, launchChromium } from "../support/chromium.js";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";

const HAND_URL_BROWSER = resolve(import.meta.dirname, "fixtures/hand-url-browser.mjs");
const CHAT_CLI = resolve(import.meta.dirname, "../../bin/chat-cli.js");
const ARTIFACTS = resolve(import.meta.dirname, "../../test-artifacts");

let server: ReferenceServer;
let browser: Browser;

beforeAll(async () => {
  if (chromiumMissing) return;
  server = await startReferenceServer({ port: 0, rateLimit: false });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh config dir and a `$BROWSER` that hands each URL to the test through a file. */
function newHome() {
  const dir = scratchDir("cmb-browser-");
  const urlFile = join(dir, "opened-urls.txt");
  writeFileSync(urlFile, "");
  return {
    dir,
    configDir: join(dir, "config"),
    env: {
      CHAT_CONFIG_DIR: join(dir, "config"),
      BROWSER: `${process.execPath} ${HAND_URL_BROWSER}`,
      HAND_URL_FILE: urlFile,
    },
    /** Resolves with the first URL the program asked a browser to open (polls the file, bounded). */
    async openedUrl(timeoutMs = 20_000): Promise<string> {
      for (let waited = 0; waited < timeoutMs; waited += 50) {
        const first = readFileSync(urlFile, "utf8").split("\n")[0];
        if (first) return first;
        await new Promise((done) => setTimeout(done, 50));
      }
      throw new Error("the program never opened a browser");
    },
    /** Names of the files under the config dir (tokens and registrations are kept there with the file store). */
    storedFiles(): string[] {
      if (!existsSync(join(dir, "config"))) return [];
      return readdirSync(join(dir, "config"), { recursive: true }).map(String);
    },
  };
}

/** Signs in as dev/dev when asked, then stops on the consent page. */
async function reachConsentPage(page: Page, url: string): Promise<void> {
  await page.goto(url);
  if (await page.locator('input[name="password"]').count()) {
    await page.fill('input[name="username"]', "dev");
    await page.fill('input[name="password"]', "dev");
    await Promise.all([page.waitForURL(/\/oauth\/consent/), page.click('button[type="submit"]')]);
  }
  expect(await page.locator("h1").textContent()).toContain("Authorize");
}

/** Chooses a team and clicks Approve (or Deny); waits for the loopback callback's page. */
async function decide(page: Page, decision: "approve" | "deny", team = "acme"): Promise<void> {
  if (decision === "approve") await page.check(`input[name="account"][value="${team}"]`);
  await Promise.all([
    page.waitForURL((url) => url.hostname === "127.0.0.1" && !url.pathname.startsWith("/oauth")),
    page.click(`button[name="decision"][value="${decision}"]`),
  ]);
}

describe("Bridge sign-in in a real browser", needs("chromium", chromiumMissing), () => {
  it("sign in as dev, choose team acme, approve: the bridge relays and links are acme's", async () => {
    const home = newHome();
    const connecting = connectThroughBridge(
      ["--token-store", "file", "--auth-timeout", "60", server.mcpUrl],
      {
        env: home.env,
      },
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await reachConsentPage(page, await home.openedUrl());
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "consent.png"), fullPage: true });
      expect(await page.locator('input[name="account"]').count()).toBe(4);
      await decide(page, "approve", "acme");
      expect(await page.content()).not.toMatch(/chat_(at|rt)_/);

      const bridge = await connecting;
      try {
        const created = await bridge.client.callTool({
          name: "create_chat",
          arguments: { message: "Hello from a real browser sign-in" },
        });
        expect(created.isError).toBeFalsy();
        expect(ChatSchema.parse(created.structuredContent).url).toContain("/acme/");
        expect(bridge.stderr()).not.toMatch(/chat_(at|rt)_/);
      } finally {
        await bridge.close();
      }
    } finally {
      await context.close();
    }
  }, 90_000);

  it("deny: the bridge reports the refusal, stores no token and does not hang", async () => {
    const home = newHome();
    const connecting = connectThroughBridge(
      ["--token-store", "file", "--auth-timeout", "60", server.mcpUrl],
      {
        env: home.env,
      },
    ).then(
      async (bridge) => {
        // Connected anyway: the refusal must then surface on the first tool call.
        const result = await bridge.client.callTool({ name: "list_chats", arguments: {} }).catch((e) => e);
        await bridge.close();
        return { connected: true, result, stderr: bridge.stderr() };
      },
      (error: Error) => ({ connected: false, result: error, stderr: "" }),
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await reachConsentPage(page, await home.openedUrl());
      await decide(page, "deny");
      expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied");
    } finally {
      await context.close();
    }
    const outcome = await connecting;
    const failed = !outcome.connected || outcome.result instanceof Error || outcome.result?.isError === true;
    expect(failed).toBe(true);
    // Login files (auth/<key>.json) may keep the client's registration, never tokens.
    const logins = home.storedFiles().filter((name) => name.endsWith(".json"));
    for (const name of logins) {
      const stored = JSON.parse(readFileSync(join(home.configDir, name), "utf8")) as { tokens?: unknown };
      expect(stored.tokens, name).toBeUndefined();
    }
  }, 90_000);
});

/** Runs `chat-cli` with the home's env; resolves with its exit code and output. */
function runChatCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CHAT_CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    }),
  );
}

describe("chat-cli login in a real browser", needs("chromium", chromiumMissing), () => {
  it("approve for team studio: login succeeds and the CLI then acts as studio", async () => {
    const home = newHome();
    const login = runChatCli(["--base-url", server.url, "login"], home.env);
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await reachConsentPage(page, await home.openedUrl());
      await decide(page, "approve", "studio");
    } finally {
      await context.close();
    }
    const done = await login;
    expect(done.code, done.stderr).toBe(0);
    expect(`${done.stdout}${done.stderr}`).not.toMatch(/chat_(at|rt)_/);

    const created = await runChatCli(
      ["--base-url", server.url, "--json", "create", "hello", "studio"],
      home.env,
    );
    expect(created.code, created.stderr).toBe(0);
    const chat = ChatSchema.parse(JSON.parse(created.stdout));
    expect(chat.url).toContain("/studio/");
    expect(chat.hostProjectId).toBeUndefined();
  }, 90_000);

  it("deny: login exits non-zero with a clear message", async () => {
    const home = newHome();
    const login = runChatCli(["--base-url", server.url, "login"], home.env);
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await reachConsentPage(page, await home.openedUrl());
      await decide(page, "deny");
    } finally {
      await context.close();
    }
    const done = await login;
    expect(done.code).not.toBe(0);
    expect(done.stderr).toMatch(/denied|access_denied/i);
  }, 90_000);
});

describe(
  "A consent link opened in another browser (consent phishing)",
  needs("chromium", chromiumMissing),
  () => {
    it("is refused there with a clear page, while the browser that started it can still decide", async () => {
      const home = newHome();
      const login = runChatCli(["--base-url", server.url, "login"], home.env);
      const starter = await browser.newContext();
      const other = await browser.newContext();
      try {
        const starterPage = await starter.newPage();
        await reachConsentPage(starterPage, await home.openedUrl());
        const consentUrl = starterPage.url();

        const otherPage = await other.newPage();
        await otherPage.goto(consentUrl);
        expect(await otherPage.locator("h1").textContent()).toContain("started in another browser");
        expect(await otherPage.locator('button[name="decision"]').count()).toBe(0);

        await decide(starterPage, "deny");
      } finally {
        await starter.close();
        await other.close();
      }
      const done = await login;
      expect(done.code).not.toBe(0);
    }, 90_000);
  },
);
