/** Sign-in under faults: the bridge killed while waiting for the browser and restarted; a config dir that cannot be written. */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import {
  answeredTwice,
  type BridgeDriver,
  callTool,
  HTTP_BROWSER,
  initializeBridge,
  PROTOCOL_VERSION,
  spawnBridgeDriver,
} from "./fixtures/bridge-driver.js";

const HAND_URL_BROWSER = resolve(import.meta.dirname, "../browser/fixtures/hand-url-browser.mjs");
const root = scratchDir("cmb-sign-in-faults-");
const bridges: BridgeDriver[] = [];
let server: ReferenceServer;

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, autoApprove: "acme", rateLimit: false });
});
afterAll(async () => {
  for (const bridge of bridges) await bridge.stop(2_000).catch(() => undefined);
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

function startBridge(env: Record<string, string>, shellPrefix?: string): BridgeDriver {
  const bridge = spawnBridgeDriver(
    ["--token-store", "file", "--auth-timeout", "20", server.mcpUrl],
    env,
    shellPrefix,
  );
  bridges.push(bridge);
  return bridge;
}

/** Files under `dir`, recursively (none when it does not exist). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir, { recursive: true })
    .map((name) => join(dir, String(name)))
    .filter((path) => statSync(path).isFile());
}

describe("A bridge killed during sign-in, then restarted", () => {
  it("the killed bridge's sign-in goes on: its link still signs in, and the restarted bridge (waiting for it, opening no second browser) then relays", async () => {
    const configDir = join(root, "killed", "config");
    const urlFile = join(root, "killed-urls.txt");
    writeFileSync(urlFile, "");
    const first = startBridge({
      CHAT_CONFIG_DIR: configDir,
      BROWSER: `${process.execPath} ${HAND_URL_BROWSER}`,
      HAND_URL_FILE: urlFile,
    });
    first.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "killed", version: "1" },
    });
    let firstUrl = "";
    for (let waited = 0; waited < 20_000 && !firstUrl; waited += 50) {
      firstUrl = readFileSync(urlFile, "utf8").split("\n")[0] ?? "";
      if (!firstUrl) await new Promise((done) => setTimeout(done, 50));
    }
    expect(firstUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/start\//);
    first.child.kill("SIGKILL");
    await first.exited;

    const second = startBridge({
      CHAT_CONFIG_DIR: configDir,
      BROWSER: `${process.execPath} ${HAND_URL_BROWSER}`,
      HAND_URL_FILE: urlFile,
    });
    await initializeBridge(second, 30_000);
    const id = callTool(second, "list_chats", {});
    // The person finishes the sign-in the killed bridge started, in the browser that has its link.
    const browserExit = await new Promise<number | null>((done) => {
      const child = execFile(process.execPath, [HTTP_BROWSER, firstUrl], {
        env: { PATH: process.env.PATH ?? "" },
      });
      child.once("exit", (code) => done(code));
    });
    expect(browserExit).toBe(0);
    await second.waitAnswered([id], 45_000);
    expect(second.answersTo(id)[0]?.result?.isError, JSON.stringify(second.answersTo(id))).toBeFalsy();
    expect(readFileSync(urlFile, "utf8").trim().split("\n")).toHaveLength(1);
    expect(answeredTwice(second)).toEqual([]);
    for (const file of filesUnder(configDir).filter((path) => path.endsWith(".json"))) {
      expect(() => JSON.parse(readFileSync(file, "utf8")), file).not.toThrow();
    }
  }, 60_000);
});

describe("A config dir that cannot be written: a clear error, no crash, no half-written token file", () => {
  const cases: Array<{
    name: string;
    configDir: () => string;
    shellPrefix?: string;
    mention: RegExp;
  }> = [
    {
      name: "its parent is a regular file (ENOTDIR)",
      configDir: () => {
        const file = join(root, "not-a-dir");
        writeFileSync(file, "plain file\n");
        return join(file, "config");
      },
      mention: /ENOTDIR|not a directory|not-a-dir/i,
    },
    {
      name: "it is under /proc (mkdir fails with ENOENT under an existing parent)",
      configDir: () => "/proc/chat-mcp-bridge-reliability/config",
      mention: /ENOENT|\/proc\/chat-mcp-bridge-reliability/,
    },
    {
      name: "the disk is full (every write fails: RLIMIT_FSIZE 0, EFBIG)",
      configDir: () => join(root, "full", "config"),
      shellPrefix: "trap '' XFSZ; ulimit -f 0;",
      mention: /EFBIG|too large|cannot (save|store|write)/i,
    },
  ];

  for (const { name, configDir, shellPrefix, mention } of cases) {
    it(name, async () => {
      const dir = configDir();
      const bridge = startBridge(
        { CHAT_CONFIG_DIR: dir, BROWSER: `${process.execPath} ${HTTP_BROWSER}` },
        shellPrefix,
      );
      const id = bridge.request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "unwritable", version: "1" },
      });
      // Answered (either way) or a clean exit, within a bound: never a hang.
      const outcome = await Promise.race([
        bridge.waitAnswered([id], 30_000).then(() => "answered" as const),
        bridge.exited.then(() => "exited" as const),
      ]);
      if (outcome === "exited") expect(bridge.child.exitCode).not.toBe(0);
      let answers = JSON.stringify(bridge.answersTo(id));
      if (outcome === "answered" && !("error" in (bridge.answersTo(id)[0] ?? {}))) {
        // The bridge answered the opening itself (the sign-in had not ended): the host's next request hears why.
        bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
        const call = bridge.request("tools/call", { name: "list_chats", arguments: {} });
        await bridge.waitAnswered([call], 50_000);
        answers = JSON.stringify(bridge.answersTo(call));
      }
      // The reason reaches the user: in the answer the client shows, or on stderr.
      expect(`${answers}\n${bridge.stderr()}`).toMatch(mention);
      expect(bridge.stderr()).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
      expect(bridge.stderr()).not.toMatch(/chat_(at|rt)_/);
      expect(answeredTwice(bridge)).toEqual([]);
      expect(bridge.nonJsonLines).toEqual([]);
      for (const file of filesUnder(dir)) {
        if (file.endsWith(".json")) expect(() => JSON.parse(readFileSync(file, "utf8")), file).not.toThrow();
        expect(file).not.toMatch(/\.tmp$/);
      }
    }, 90_000);
  }
});
