/** Ctrl-C during `chat-mcp-bridge login`: exit 130, a word to the person, and no lock file left behind (a real process, a real SIGINT). */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import { BRIDGE_BIN } from "./fixtures/spawn-bridge.js";

let server: ReferenceServer;
// No auto-approve: the sign-in waits for a person at the consent page, as one does when Ctrl-C comes.
beforeAll(async () => {
  server = await startReferenceServer({ port: 0 });
});
afterAll(() => server?.close());

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

describe("Ctrl-C while login waits for the browser", () => {
  it("exits 130, says the sign-in was cancelled and nothing stored, and removes its lock", async () => {
    const configDir = scratchDir("cmb-login-sigint-");
    const child = spawn(
      process.execPath,
      [BRIDGE_BIN, "login", "--no-browser", "--token-store", "file", server.mcpUrl],
      { env: { ...process.env, CHAT_CONFIG_DIR: configDir }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    const waiting = new Promise<void>((resolve) =>
      child.stderr.setEncoding("utf8").on("data", (text: string) => {
        stderr += text;
        if (stderr.includes("Open this URL to sign in")) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    await waiting;
    // The lock is held while the sign-in waits: the test would prove nothing without it.
    expect(filesUnder(configDir).some((file) => file.endsWith(".lock"))).toBe(true);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toContain("Sign-in cancelled; nothing was stored");
    expect(filesUnder(configDir).filter((file) => file.endsWith(".lock"))).toEqual([]);
  });
});
