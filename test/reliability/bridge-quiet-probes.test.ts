/**
 * Probing hosts (issue 23, item 8): a stdio `server/discover` never starts a sign-in, also when the server is
 * remembered as legacy; a probe of a server that never answers is bounded; `logout` forgets the remembered era.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loginKey } from "../../src/auth/login-key.js";
import { EraVerdictStore } from "../../src/bridge/upstream/probe.js";
import { BRIDGE_BIN, type RawBridge, spawnRawBridge } from "../bridge/fixtures/spawn-bridge.js";

let server: Server | undefined;
let bridge: RawBridge | undefined;
let configDir: string;
beforeEach(() => {
  configDir = mkdtempSync(join(tmpdir(), "bridge-quiet-probes-"));
});
afterEach(async () => {
  bridge?.child.kill();
  bridge = undefined;
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done) ?? done(undefined));
  server = undefined;
  rmSync(configDir, { recursive: true, force: true });
});

async function listen(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/mcp`;
}

const verdictsOf = (url: string) => new EraVerdictStore(configDir, loginKey(url));
type Answer = { result?: { supportedVersions?: string[] }; error?: { code: number; message: string } };
const env = (extra: Record<string, string> = {}) => ({ CHAT_CONFIG_DIR: configDir, ...extra });

describe("a stdio server/discover never starts a sign-in", () => {
  it("with the server remembered as legacy and asking for a token: answered, no OAuth discovery made", async () => {
    const paths: string[] = [];
    const url = await listen((request, response) => {
      paths.push(`${request.method} ${request.url}`);
      request.resume();
      if (request.url?.startsWith("/.well-known/")) {
        response.writeHead(404).end();
        return;
      }
      response
        .writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="http://${request.headers.host}/.well-known/oauth-protected-resource/mcp"`,
        })
        .end();
    });
    verdictsOf(url).write({ era: "legacy" });
    bridge = spawnRawBridge(["--token-store", "file", url], env());
    bridge.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }));
    const answer = (await bridge.waitFor((message) => message.id === 1, 15_000)) as Answer;
    // Signed out, the bridge answers from its own dual-era face rather than with an error.
    expect(answer.error).toBeUndefined();
    expect(answer.result?.supportedVersions).toEqual(expect.arrayContaining(["2026-07-28", "2025-11-25"]));
    // A sign-in starts with the server's OAuth metadata: none was asked for, and no lock was taken.
    expect(paths.filter((path) => path.includes("/.well-known/"))).toEqual([]);
    expect(paths.length).toBeGreaterThan(0);
    expect(bridge.stderr()).not.toMatch(/https?:\/\/\S*authorize/);
  }, 30_000);
});

describe("every probe is bounded", () => {
  it("a server that takes the request and never answers: the held request fails with the probe's bound", async () => {
    const url = await listen(() => {
      // Never answers.
    });
    bridge = spawnRawBridge(["--token-store", "file", url], env({ CHAT_MCP_BRIDGE_PROBE_TIMEOUT_MS: "500" }));
    bridge.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }));
    const answer = (await bridge.waitFor((message) => message.id === 2, 15_000)) as Answer;
    expect(answer.error?.message).toMatch(/protocol probe .*no answer from .* within 0\.5 s/);
  }, 30_000);
});

describe("logout forgets the remembered era", () => {
  it("the verdict file is deleted, with or without a stored login", async () => {
    const url = "http://127.0.0.1:9/mcp";
    const store = verdictsOf(url);
    store.write({ era: "legacy" });
    expect(existsSync(store.path)).toBe(true);
    spawnSync(process.execPath, [BRIDGE_BIN, "logout", "--token-store", "file", url], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env() },
      timeout: 20_000,
    });
    expect(existsSync(store.path)).toBe(false);
    expect(await store.read()).toBeUndefined();
  }, 30_000);
});
