/**
 * The seed flow through the built package against the reference server, as users run it: a CommonJS script, an ES
 * module script, Bun, Deno (only --allow-net) and a browser bundle in headless Chromium.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureRuntime } from "../../scripts/js-runtimes.mjs";
import type { ReferenceServer } from "../../src/server/index.js";
import { chromiumMissing, launchChromium } from "../support/chromium.js";
import { needs } from "../support/requirements.js";

const run = promisify(execFile);
const fixtures = resolve("test/runtimes/fixtures");
/** What every runtime's flow must see: both pauses, a final stop, a preview, a typed 404. */
const EXPECTED = {
  integration: { kind: "integration", integrations: ["Neon"] },
  permission: { kind: "permissions", count: 1 },
  finishReason: "stop",
  previewUrl: true,
  notFound: { name: "NotFoundError", status: 404, isChatError: true },
};

let server: ReferenceServer;
let token: string;

beforeAll(async () => {
  // The built server, as a user's test imports it (`chat-mcp-bridge/server`).
  const { startReferenceServer } = (await import(
    resolve("dist/server/index.js")
  )) as typeof import("../../src/server/index.js");
  server = await startReferenceServer({ port: 0, host: "127.0.0.1", rateLimit: false });
  token = server.apiKeys.personal as string;
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** Runs a flow script and parses the one JSON line it prints; env without CHAT_* so nothing but the arguments counts. */
async function flowIn(command: string, args: string[]): Promise<unknown> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("CHAT_")));
  const { stdout } = await run(command, [...args, server.url, token], {
    cwd: resolve("."),
    env,
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) as string);
}

describe("Node", () => {
  it("a CommonJS script: require('chat-mcp-bridge')", async () => {
    expect(await flowIn(process.execPath, [`${fixtures}/flow.cjs`])).toEqual(EXPECTED);
  });
  it("an ES module script: import from 'chat-mcp-bridge'", async () => {
    expect(await flowIn(process.execPath, [`${fixtures}/flow.mjs`])).toEqual(EXPECTED);
  });
});

const bun = ensureRuntime("bun");
describe("Bun", needs("bun", bun.reason), () => {
  it("an ES module script", async () => {
    expect(await flowIn(bun.path as string, [`${fixtures}/flow.mjs`])).toEqual(EXPECTED);
  });
});

const deno = ensureRuntime("deno");
describe("Deno", needs("deno", deno.reason), () => {
  it("with only --allow-net, everything passed in code (no env, read or prompt)", async () => {
    const args = ["run", "--allow-net", "--no-prompt", "--no-config", "--node-modules-dir=manual"];
    expect(await flowIn(deno.path as string, [...args, `${fixtures}/flow.deno.mjs`])).toEqual(EXPECTED);
  });
});

describe("a browser bundle in headless Chromium", needs("chromium", chromiumMissing), () => {
  it("bundles for the browser with no Node built-in and runs the flow from a page", async () => {
    const bundled = await build({
      entryPoints: [`${fixtures}/flow.browser.mjs`],
      bundle: true,
      write: false,
      minify: true,
      platform: "browser",
      format: "iife",
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(bundled.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith("node:") || input.includes("node-extras"))).toEqual([]);
    expect(inputs.some((input) => input.includes("dist/web/index.js"))).toBe(true);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      // The page is served from the reference server's origin, so its /v2 calls are same-origin.
      const pageUrl = `${server.url}/__seed-flow.html`;
      await page.route(pageUrl, (route) =>
        route.fulfill({ contentType: "text/html", body: "<!doctype html><title>seed flow</title>" }),
      );
      await page.goto(pageUrl);
      await page.addScriptTag({ content: bundled.outputFiles[0]?.text ?? "" });
      const result = await page.evaluate(
        ([baseUrl, key]) =>
          (globalThis as unknown as { runSeedFlow(b: string, t: string): Promise<unknown> }).runSeedFlow(
            baseUrl as string,
            key as string,
          ),
        [server.url, token],
      );
      expect(result).toEqual(EXPECTED);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
