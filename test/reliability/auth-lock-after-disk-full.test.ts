/** A sign-in that fails writing its lock file (disk full, EFBIG) leaves no *.lock behind and names EFBIG in the error. */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import {
  type BridgeDriver,
  HTTP_BROWSER,
  PROTOCOL_VERSION,
  spawnBridgeDriver,
} from "./fixtures/bridge-driver.js";

const root = scratchDir("cmb-lock-");
let server: ReferenceServer;
let bridge: BridgeDriver | undefined;

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, autoApprove: "acme", rateLimit: false });
});
afterAll(async () => {
  await bridge?.stop(2_000);
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("A sign-in that fails because the disk is full leaves no lock file behind", () => {
  it("no *.lock remains in the config dir after the failed attempt", async () => {
    const configDir = join(root, "config");
    bridge = spawnBridgeDriver(
      ["--token-store", "file", "--auth-timeout", "20", server.mcpUrl],
      { CHAT_CONFIG_DIR: configDir, BROWSER: `${process.execPath} ${HTTP_BROWSER}` },
      "trap '' XFSZ; ulimit -f 0;",
    );
    bridge.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "disk-full", version: "1" },
    });
    const id = bridge.request("tools/call", { name: "list_chats", arguments: {} });
    await bridge.waitAnswered([id], 30_000);
    expect(JSON.stringify(bridge.answersTo(id)[0]?.result?.content)).toMatch(/EFBIG/);
    const authDir = join(configDir, "auth");
    const leftovers = existsSync(authDir)
      ? readdirSync(authDir).filter((name) => name.endsWith(".lock"))
      : [];
    expect(leftovers).toEqual([]);
  }, 45_000);
});
