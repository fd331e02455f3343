/**
 * A sign-in that cannot succeed ends at once with why: an opener that drops cookies or is no browser (a plain
 * `curl`), a denial, a URL that is not the MCP endpoint. `login` never waits out `--auth-timeout` for an answer
 * that will not come, and never tells the person running `login` to run `login`.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { startTinyOAuthServer, type TinyOAuthServer } from "../auth/fixtures/tiny-oauth-server.js";
import { BIN as CLI_BIN } from "../cli/helpers.js";
import { scratchDir } from "../support/scratch-dir.js";
import {
  BRIDGE_BIN,
  type BridgeDriver,
  HTTP_BROWSER,
  PROTOCOL_VERSION,
  spawnBridgeDriver,
} from "./fixtures/bridge-driver.js";

const root = scratchDir("cmb-ends-at-once-");
// Far longer than any wait below: an end before it proves nothing waited the timeout out.
const AUTH_TIMEOUT_S = "240";
const COOKIELESS_BROWSER = { BROWSER: `${process.execPath} ${HTTP_BROWSER}`, HTTP_BROWSER_NO_COOKIES: "1" };
const hasCurl = spawnSync("curl", ["--version"]).status === 0;

let server: ReferenceServer;
let denying: TinyOAuthServer;
const bridges: BridgeDriver[] = [];
beforeAll(async () => {
  server = await startReferenceServer({ port: 0, autoApprove: "acme", rateLimit: false });
  denying = await startTinyOAuthServer({ deny: true });
});
afterAll(async () => {
  for (const bridge of bridges) await bridge.stop(2_000).catch(() => undefined);
  await server?.close();
  await denying?.close();
});

interface Ended {
  code: number | null;
  stderr: string;
  stdout: string;
}

/** Runs a bin to its end, or fails the test when it is still running after `withinMs`. */
function runToEnd(
  bin: string,
  args: string[],
  env: Record<string, string>,
  withinMs = 30_000,
): Promise<Ended> {
  return new Promise((done, fail) => {
    const child = execFile(
      process.execPath,
      [bin, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env }, timeout: withinMs },
      (error, stdout, stderr) => {
        if (error?.killed) fail(new Error(`still running after ${withinMs} ms; stderr:\n${stderr}`));
        else done({ code: child.exitCode, stdout, stderr });
      },
    );
  });
}

const bridgeLogin = (name: string, url: string, env: Record<string, string>, extra: string[] = []) =>
  runToEnd(BRIDGE_BIN, ["login", "--token-store", "file", "--auth-timeout", AUTH_TIMEOUT_S, ...extra, url], {
    CHAT_CONFIG_DIR: join(root, name),
    ...env,
  });

/** What a `login` command says about its own failure: no advice to run a login command. */
function expectNoLoginAdvice(stderr: string): void {
  expect(stderr).not.toMatch(/\blogin\b.*(in a terminal|http:\/\/)/);
  expect(stderr).not.toContain("run `");
}

describe("an opener that drops cookies ends `login` at once", () => {
  it("chat-mcp-bridge login: exit 1 with the cookie named and what to use instead", async () => {
    const { code, stderr } = await bridgeLogin("cookieless", server.mcpUrl, COOKIELESS_BROWSER);
    expect(code).toBe(1);
    expect(stderr).toContain("did not keep its cookie");
    expect(stderr).toContain("browser that keeps cookies");
    expect(stderr).not.toContain("timed out");
    // The opener failed on the refused answer's page: the sign-in's own reason is what the person reads.
    expect(stderr).not.toContain("No browser opened");
    expectNoLoginAdvice(stderr);
  }, 60_000);

  it("chat-cli login: exit 4 with the same reason", async () => {
    const { code, stderr } = await runToEnd(
      CLI_BIN,
      ["--base-url", server.url, "login", "--auth-timeout", AUTH_TIMEOUT_S, "--token-store", "file"],
      { CHAT_CONFIG_DIR: join(root, "cli-cookieless"), ...COOKIELESS_BROWSER },
    );
    expect(code).toBe(4);
    expect(stderr).toContain("did not keep its cookie");
    expectNoLoginAdvice(stderr);
  }, 60_000);
});

describe("a denied consent ends `login` at once, whatever the opener did with the cookie", () => {
  it("chat-mcp-bridge login: exit 1, cancelled", async () => {
    const { code, stderr } = await bridgeLogin("denied", denying.resourceUrl, COOKIELESS_BROWSER);
    expect(code).toBe(1);
    expect(stderr).toMatch(/cancelled in the browser \(access denied\)/);
    expectNoLoginAdvice(stderr);
  }, 60_000);
});

describe.skipIf(!hasCurl)("a plain curl as $BROWSER", () => {
  it("ends `login` at once, naming curl, and curl's progress meter never reaches the bridge's stderr", async () => {
    const { code, stderr } = await bridgeLogin("curl", server.mcpUrl, { BROWSER: "curl" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/opened by curl\/[\d.]+/);
    expect(stderr).not.toMatch(/% Total|Dload/);
    expectNoLoginAdvice(stderr);
  }, 60_000);
});

describe("an opener's own output", () => {
  it("never lands on the bridge's stdout or stderr", async () => {
    const noisy = `${process.execPath} -e "process.stdout.write('OPENER-STDOUT'); process.stderr.write('OPENER-STDERR')"`;
    const { stderr, stdout } = await runToEnd(
      BRIDGE_BIN,
      ["login", "--token-store", "file", "--auth-timeout", "2", server.mcpUrl],
      { CHAT_CONFIG_DIR: join(root, "noisy"), BROWSER: noisy },
    );
    expect(stderr).toContain("timed out");
    expect(`${stdout}${stderr}`).not.toContain("OPENER-");
  }, 60_000);
});

describe("the relay, signed out", () => {
  function startBridge(name: string, url: string, env: Record<string, string>): BridgeDriver {
    const bridge = spawnBridgeDriver(["--token-store", "file", "--auth-timeout", AUTH_TIMEOUT_S, url], {
      CHAT_CONFIG_DIR: join(root, name),
      // Longer than the waits below: an answer before it is the sign-in's own end.
      CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS: "50000",
      ...env,
    });
    bridges.push(bridge);
    return bridge;
  }

  async function firstCallError(bridge: BridgeDriver): Promise<string> {
    const initialize = bridge.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "ends-at-once", version: "1" },
    });
    await bridge.waitAnswered([initialize], 15_000);
    bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = bridge.request("tools/call", { name: "list_chats", arguments: {} });
    await bridge.waitAnswered([call], 30_000);
    const result = bridge.answersTo(call)[0]?.result as {
      isError?: boolean;
      content?: Array<{ text?: string }>;
    };
    expect(result?.isError, JSON.stringify(bridge.answersTo(call))).toBe(true);
    return result.content?.map((part) => part.text ?? "").join("\n") ?? "";
  }

  it("an opener that drops cookies: the first call hears why at once, not after the call's wait", async () => {
    const bridge = startBridge("relay-cookieless", server.mcpUrl, COOKIELESS_BROWSER);
    const text = await firstCallError(bridge);
    expect(text).toContain("did not keep its cookie");
    expect(bridge.stderr()).toContain("did not keep its cookie");
  }, 60_000);

  it("<base>/v2 is refused before any browser, as what the host shows and on stderr, and nothing is stored", async () => {
    const browserLog = join(root, "v2-browser.log");
    const bridge = startBridge("relay-v2", `${server.url}/v2`, {
      BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
      HTTP_BROWSER_LOG: browserLog,
    });
    const refusal = `${server.url}/v2 is the chat service's REST API, not its MCP endpoint; use ${server.mcpUrl} instead.`;
    // A usage error: the host is shown it as the server's instructions and its one tool.
    const initialize = bridge.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "ends-at-once", version: "1" },
    });
    await bridge.waitAnswered([initialize], 15_000);
    const answer = bridge.answersTo(initialize)[0] as { result?: { instructions?: string } } | undefined;
    expect(answer?.result?.instructions).toContain(refusal);
    const tools = bridge.request("tools/list", {});
    await bridge.waitAnswered([tools], 15_000);
    expect(JSON.stringify(bridge.answersTo(tools)[0])).toContain(refusal.replace(/"/g, '\\"'));
    expect(bridge.stderr()).toContain(refusal);
    expect(existsSync(browserLog)).toBe(false);
    const auth = join(root, "relay-v2", "auth");
    expect(existsSync(auth) ? readdirSync(auth) : []).toEqual([]);
  }, 60_000);
});
