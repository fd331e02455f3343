/** `chat-mcp-bridge doctor` against the real reference server: all ✓ when healthy, the right ✗ and fix otherwise. */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DoctorReport } from "../../../src/bridge/doctor/index.js";
import { type ReferenceServer, startReferenceServer } from "../../../src/server/index.js";
import { scratchDir } from "../../support/scratch-dir.js";
import { BRIDGE_BIN } from "../fixtures/spawn-bridge.js";
import { ALL_PASS, checkOf as check, runDoctorArgs, statusOf } from "./fixtures/doctor-command.js";

const browserScript = resolve(import.meta.dirname, "../../auth/fixtures/http-browser.mjs");
const run = promisify(execFile);

let server: ReferenceServer;
let configDir: string;
let env: Record<string, string>;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0, autoApprove: "acme" });
  configDir = join(scratchDir("cmb-doctor-"), "config");
  env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    CHAT_CONFIG_DIR: configDir,
    BROWSER: `${process.execPath} ${browserScript}`,
  };
  await run(process.execPath, [BRIDGE_BIN, "login", "--token-store", "file", server.mcpUrl], { env });
});
afterAll(async () => {
  await server?.close();
});

/** `chat-mcp-bridge doctor --token-store file <url>`, run in this process. */
function doctor(url: string, doctorEnv = env, write?: (text: string) => void): Promise<DoctorReport> {
  return runDoctorArgs(["--token-store", "file", url], doctorEnv, write);
}

describe("doctor", () => {
  it("passes every check against a healthy server with a stored login, and prints one line per check", async () => {
    const lines: string[] = [];
    const report = await doctor(server.mcpUrl, env, (text) => lines.push(text));
    expect(report.ok).toBe(true);
    expect(statusOf(report)).toEqual(ALL_PASS);
    expect(check(report, "live").detail).toMatch(/listed 7 tools/);
    expect(check(report, "login").detail).toMatch(/scopes .*chat:read.*; expires .*; refresh possible/);
    // The reference server offers DPoP, so the bridge's login holds bound tokens (and the live check proves them).
    expect(check(report, "login").detail).toMatch(/tokens DPoP-bound to the login's key/);
    expect(check(report, "registration").detail).toMatch(/dynamic registration/);
    // The reference server speaks both eras: doctor speaks the newer one, as the bridge does.
    expect(check(report, "era").detail).toMatch(
      /^2026-07-28 \(stateless requests\): server\/discover answered/,
    );
    expect(lines.join("")).toMatch(/^✓ Live server\/discover \+ tools\/list: /m);
  });

  it("a down server: ✗ TCP with the fix, and nothing after it tried", async () => {
    const down = await startReferenceServer({ port: 0 });
    const url = down.mcpUrl;
    await down.close();
    const report = await doctor(url);
    expect(report.ok).toBe(false);
    const tcp = check(report, "tcp");
    expect(tcp.status).toBe("fail");
    expect(tcp.detail).toMatch(/nothing is listening at 127\.0\.0\.1:\d+/);
    expect(tcp.fix).toMatch(/start the server, or check the host and port/);
    expect(check(report, "endpoint").status).toBe("skip");
    expect(check(report, "era").status).toBe("skip");
    expect(check(report, "live").status).toBe("skip");
  });

  it("a wrong path: ✗ endpoint 404 with the usual path as the fix", async () => {
    const report = await doctor(`${server.url}/wrong-path`);
    expect(report.ok).toBe(false);
    const endpoint = check(report, "endpoint");
    expect(endpoint).toMatchObject({ status: "fail", detail: "nothing at /wrong-path (404 Not Found)" });
    expect(endpoint.fix).toContain(`${server.url}/mcp`);
    // No login is stored for that path, and whether one is needed cannot be told: not a second failure.
    expect(check(report, "login")).toMatchObject({
      status: "skip",
      detail: expect.stringMatching(/^none stored/),
    });
    expect(report.checks.filter((entry) => entry.status === "fail").map((entry) => entry.id)).toEqual([
      "endpoint",
    ]);
  });

  it("an expired login without a refresh token: ✗ stored login with the login command, live not tried", async () => {
    const expiredDir = join(scratchDir("cmb-doctor-expired-"), "config");
    const expiredEnv = { ...env, CHAT_CONFIG_DIR: expiredDir };
    await run(process.execPath, [BRIDGE_BIN, "login", "--token-store", "file", server.mcpUrl], {
      env: expiredEnv,
    });
    const authDir = join(expiredDir, "auth");
    const file = join(authDir, readdirSync(authDir).find((name) => /^[0-9a-f]+\.json$/.test(name))!);
    const login = JSON.parse(readFileSync(file, "utf8"));
    login.tokens.expiresAt = Date.now() - 60_000;
    delete login.tokens.refreshToken;
    writeFileSync(file, JSON.stringify(login), { mode: 0o600 });

    const report = await doctor(server.mcpUrl, expiredEnv);
    const stored = check(report, "login");
    expect(stored.status).toBe("fail");
    expect(stored.detail).toMatch(/expired at .* and cannot be refreshed \(no refresh token\)/);
    expect(stored.fix).toContain(`chat-mcp-bridge login --token-store file ${server.mcpUrl}`);
    expect(check(report, "live").status).toBe("skip");
    expect(report.checks.filter((entry) => entry.status === "fail")).toHaveLength(1);
  });

  it("a URL that is not usable fails first, with the fix", async () => {
    const report = await doctor("ftp://example.com/mcp");
    expect(check(report, "url")).toMatchObject({ status: "fail" });
    expect(check(report, "url").fix).toMatch(/full URL/);
    expect(report.checks.slice(1).every((entry) => entry.status === "skip")).toBe(true);
  });
});
