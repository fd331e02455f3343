/**
 * The account commands as a new user meets them: `login <base>/v2` and `doctor <base>/v2` name `<base>/mcp`
 * before any sign-in, `logout` lists a profile login with its profile, and the keychain fallback is one short
 * line (none with `--token-store file`).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKeychainBackend } from "../../src/auth/keychain.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BRIDGE_BIN, HTTP_BROWSER } from "./fixtures/bridge-driver.js";

const RECORDING_BROWSER = resolve(import.meta.dirname, "fixtures/recording-browser.mjs");
const root = mkdtempSync(join(tmpdir(), "cmb-account-commands-"));
let server: ReferenceServer;

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, autoApprove: "acme", rateLimit: false });
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

function bridge(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [BRIDGE_BIN, ...args],
      { env: { PATH: process.env.PATH ?? "", HOME: root, ...env }, timeout: 60_000 },
      (_error, stdout, stderr) => done({ code: child.exitCode, output: `${stdout}${stderr}` }),
    );
  });
}

describe("<base>/v2, the REST API, given as the MCP URL", () => {
  it("login refuses it before any sign-in, naming <base>/mcp", async () => {
    const record = join(root, "v2-browser.json");
    const { code, output } = await bridge(["login", "--token-store", "file", `${server.url}/v2`], {
      CHAT_CONFIG_DIR: join(root, "v2-login"),
      BROWSER: `${process.execPath} ${RECORDING_BROWSER}`,
      RECORDING_BROWSER_FILE: record,
    });
    expect(code).not.toBe(0);
    expect(output).toContain(`use ${server.mcpUrl} instead`);
    expect(existsSync(record)).toBe(false);
  }, 60_000);

  it("doctor fails the URL check, naming <base>/mcp", async () => {
    const { code, output } = await bridge(["doctor", "--token-store", "file", `${server.url}/v2`], {
      CHAT_CONFIG_DIR: join(root, "v2-doctor"),
    });
    expect(code).not.toBe(0);
    expect(output).toContain(`use ${server.mcpUrl} instead`);
  }, 60_000);
});

describe("logout of a URL whose only login has a profile", () => {
  it("lists that login with its profile", async () => {
    const env = { CHAT_CONFIG_DIR: join(root, "profile"), BROWSER: `${process.execPath} ${HTTP_BROWSER}` };
    const login = await bridge(["login", "--token-store", "file", "--profile", "acme", server.mcpUrl], env);
    expect(login.code, login.output).toBe(0);
    const { code, output } = await bridge(["logout", "--token-store", "file", server.mcpUrl], env);
    expect(code).toBe(1);
    expect(output).toContain(`stored logins: ${server.mcpUrl} (--profile acme)`);
  }, 60_000);
});

describe("No keychain answers (no D-Bus session)", () => {
  const env = (name: string) => ({
    CHAT_CONFIG_DIR: join(root, name),
    BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
  });

  it("auto: one short line (none without a keychain module), with no bundle path and no module the user never installed", async () => {
    const { installed } = await loadKeychainBackend(["keytar", "napi-keyring"]);
    const { code, output } = await bridge(["login", server.mcpUrl], env("keychain-auto"));
    expect(code, output).toBe(0);
    const lines = output.split("\n").filter((line) => /keychain/i.test(line));
    // Under npm ci --omit=optional the file store is the plan, so the user hears nothing about a keychain.
    expect(lines, output).toHaveLength(installed.length > 0 ? 1 : 0);
    for (const line of lines) expect(line).toMatch(/0600 file/);
    expect(output).not.toMatch(/dist\/|chunk-|keytar|node_modules/);
  }, 60_000);

  it("--token-store file: not a word about the keychain", async () => {
    const { code, output } = await bridge(
      ["login", "--token-store", "file", server.mcpUrl],
      env("keychain-file"),
    );
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/keychain/i);
  }, 60_000);
});

describe("--auth-timeout's default and --device-code are in --help", () => {
  it("chat-mcp-bridge --help and chat-cli login --help say 300 and offer --device-code", async () => {
    const { output } = await bridge(["--help"], {});
    expect(output).toMatch(
      /--auth-timeout <seconds>\s+how long to wait for\s+the sign-in,[^(]*\(default\s+300\)/,
    );
    expect(output).toMatch(/--device-code\s+sign in with a code entered in a browser on\s+any\s+device/);
    const cli = await new Promise<string>((done) => {
      execFile(
        process.execPath,
        [resolve(BRIDGE_BIN, "../chat-cli.js"), "login", "--help"],
        { env: { PATH: process.env.PATH ?? "", HOME: root } },
        (_error, stdout, stderr) => done(`${stdout}${stderr}`),
      );
    });
    expect(cli).toMatch(
      /--auth-timeout <seconds>\s+how long to wait for\s+the sign-in,[^(]*\(default\s+300\)/,
    );
    expect(cli).toContain("--token-store <store>");
    expect(cli).toMatch(/--device-code\s+sign in with a code entered in a browser on\s+any\s+device/);
  }, 30_000);
});
