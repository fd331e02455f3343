/**
 * A host that ends its MCP server ends it hard: Qwen Code SIGTERMs every descendant it finds by parent pid, others
 * signal the process group, close the pipes, or send SIGHUP. The sign-in the bridge started goes on through all of
 * them at once: the person's approval afterwards is stored, and the next start is signed in.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { HTTP_BROWSER, PROTOCOL_VERSION, spawnBridgeDriver } from "./fixtures/bridge-driver.js";

const root = mkdtempSync(join(tmpdir(), "cmb-survives-kill-"));
let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({
    port: 0,
    autoApprove: "acme",
    rateLimit: false,
    deviceAuthorization: false,
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Every descendant of `pid`, found as Qwen Code finds them: each process's parent pid, from /proc. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parentOf)
      if (ppid === parent && !found.includes(child)) {
        found.push(child);
        walk(child);
      }
  };
  walk(pid);
  return found;
}

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
};

async function loginStored(configDir: string, timeoutMs: number): Promise<boolean> {
  const auth = join(configDir, "auth");
  for (const started = Date.now(); Date.now() - started < timeoutMs; ) {
    const files = existsSync(auth) ? readdirSync(auth).filter((name) => name.endsWith(".json")) : [];
    if (files.some((name) => readFileSync(join(auth, name), "utf8").includes('"tokens"'))) return true;
    await new Promise((done) => setTimeout(done, 200));
  }
  return false;
}

describe.skipIf(process.platform !== "linux")("a host that ends the bridge every way at once", () => {
  it("the sign-in it started still finishes when the person approves afterwards", async () => {
    const configDir = join(root, "host-kill");
    const bridge = spawnBridgeDriver(["--token-store", "file", "--auth-timeout", "120", server.mcpUrl], {
      CHAT_CONFIG_DIR: configDir,
      BROWSER: "",
      DISPLAY: "",
      WAYLAND_DISPLAY: "",
    });
    const init = bridge.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "qwen-code-mcp-client", version: "1" },
    });
    await bridge.waitAnswered([init], 20_000);
    bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // No browser: the call is answered with the link once the sign-in has one.
    const call = bridge.request("tools/call", { name: "list_chats", arguments: {} });
    await bridge.waitAnswered([call], 30_000);
    const text = JSON.stringify(bridge.answersTo(call)[0]);
    const url = text.match(/http:\/\/127\.0\.0\.1:\d+\/start\/[A-Za-z0-9_-]+/)?.[0];
    expect(url, text).toBeDefined();

    const pid = bridge.child.pid!;
    const tree = descendants(pid);
    // The process tree by parent pid, the bridge's process group, SIGHUP, the pipes closed, then SIGKILL.
    for (const each of [pid, ...tree]) signal(each, "SIGTERM");
    signal(-pid, "SIGHUP");
    bridge.child.stdin.destroy();
    bridge.child.stdout.destroy();
    for (const each of [pid, ...tree]) signal(each, "SIGKILL");
    await new Promise((done) => setTimeout(done, 500));

    const approved = await new Promise<number>((done) => {
      const child = execFile(process.execPath, [HTTP_BROWSER, url!], {
        env: { PATH: process.env.PATH ?? "" },
      });
      child.once("exit", (code) => done(code ?? -1));
    });
    expect(approved).toBe(0);
    expect(await loginStored(configDir, 30_000)).toBe(true);
  }, 90_000);
});
