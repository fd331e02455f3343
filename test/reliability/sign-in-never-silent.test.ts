/**
 * A sign-in never leaves the user waiting in silence: no browser could open, the opener dropped the cookie, the
 * explicit callback port is busy. Each is said at once, on stderr and to the MCP client's pending request.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import {
  BRIDGE_BIN,
  type BridgeDriver,
  HTTP_BROWSER,
  PROTOCOL_VERSION,
  spawnBridgeDriver,
} from "./fixtures/bridge-driver.js";

const root = mkdtempSync(join(tmpdir(), "cmb-never-silent-"));
const bridges: BridgeDriver[] = [];
let server: ReferenceServer;
// Long enough that an answer before it proves the bridge did not wait the timeout out.
const AUTH_TIMEOUT_S = "240";
const NO_DESKTOP = { BROWSER: "", DISPLAY: "", WAYLAND_DISPLAY: "" };

beforeAll(async () => {
  // Without the device grant: the loopback URL is what a headless bridge can offer (see the device code below).
  server = await startReferenceServer({
    port: 0,
    autoApprove: "acme",
    rateLimit: false,
    deviceAuthorization: false,
  });
});
afterAll(async () => {
  for (const bridge of bridges) await bridge.stop(2_000).catch(() => undefined);
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

function startBridge(name: string, args: string[], env: Record<string, string>): BridgeDriver {
  const bridge = spawnBridgeDriver(
    ["--token-store", "file", "--auth-timeout", AUTH_TIMEOUT_S, ...args, server.mcpUrl],
    {
      CHAT_CONFIG_DIR: join(root, name),
      ...env,
    },
  );
  bridges.push(bridge);
  return bridge;
}

/** The login command as the bridge names it when run as `node <path>/bin/chat-mcp-bridge.js`. */
/** The login command as the bridge was started, with the sign-in flags it keeps (`--token-store file`) before the URL. */
const loginCommandOf = (url: string) =>
  new RegExp(`node \\S*bin/chat-mcp-bridge\\.js login (?:--\\S+ \\S+ )*${url}`);

/** `initialize` is answered at once (no sign-in holds it), declaring tool list changes; then `initialized`. */
async function initializeAtOnce(bridge: BridgeDriver): Promise<void> {
  const id = bridge.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "never-silent", version: "1" },
  });
  await bridge.waitAnswered([id], 15_000);
  const result = bridge.answersTo(id)[0]?.result as { capabilities?: { tools?: { listChanged?: boolean } } };
  expect(result, bridge.stderr()).toBeDefined();
  expect(result.capabilities?.tools?.listChanged).toBe(true);
  bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

/** The text of a tools/call's error result, answered well before the sign-in's own timeout. */
async function callErrorText(bridge: BridgeDriver): Promise<string> {
  const id = bridge.request("tools/call", { name: "list_chats", arguments: {} });
  await bridge.waitAnswered([id], 30_000);
  const result = bridge.answersTo(id)[0]?.result as { isError?: boolean; content?: Array<{ text?: string }> };
  expect(result?.isError, JSON.stringify(bridge.answersTo(id))).toBe(true);
  return result.content?.map((part) => part.text ?? "").join("\n") ?? "";
}

function runBrowser(url: string, env: Record<string, string> = {}): Promise<number> {
  return new Promise((done) => {
    const child = execFile(process.execPath, [HTTP_BROWSER, url], {
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    child.once("exit", (code) => done(code ?? -1));
  });
}

// A call waits for a sign-in that may still end by itself (its failure answers it at once).
const QUICK_CALL_WAIT = { CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS: "20000" };
// With no browser a call is answered at once; the host's lists wait until the start's deadline, soon here.
const QUICK_LIST_WAIT = { CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS: "3000" };

/** The host asks for log messages: only then does the bridge send it `notifications/message`. */
async function askForLogs(bridge: BridgeDriver): Promise<void> {
  const id = bridge.request("logging/setLevel", { level: "info" });
  await bridge.waitAnswered([id], 15_000);
}

describe("No browser can open (no $BROWSER, no desktop)", () => {
  it("initialize is answered at once; the URL reaches the client in its log and in the call's error; following it later signs in and the tools appear", async () => {
    const logFile = join(root, "no-browser.log");
    const bridge = startBridge("no-browser", ["--log-file", logFile], { ...NO_DESKTOP, ...QUICK_LIST_WAIT });
    await initializeAtOnce(bridge);
    await askForLogs(bridge);
    const tools = bridge.request("tools/list", {});
    await bridge.waitAnswered([tools], 15_000);
    // Never an empty list while a sign-in is possible (a host may keep it): the sign_in tool.
    expect(bridge.answersTo(tools)[0]?.result?.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "sign_in",
    ]);
    const logged = await bridge.waitForMethod("notifications/message", 15_000);
    const message = await callErrorText(bridge);
    const url = message.match(/http:\/\/127\.0\.0\.1:\d+\/start\/[A-Za-z0-9_-]+/)?.[0];
    expect(url, message).toBeDefined();
    expect(String(logged.params?.data)).toContain(url);
    expect(message).toMatch(loginCommandOf(server.mcpUrl));
    expect(bridge.stderr()).toContain("No browser can be opened here");
    expect(bridge.stderr()).toContain(url);
    expect(bridge.stderr()).not.toContain("Opening your browser");
    // The wait left of --auth-timeout: a loaded machine may spend a second or two discovering and registering first.
    const waiting = readFileSync(logFile, "utf8").match(
      /Sign-in waiting up to (\d+) s for a browser at (\S+)/,
    );
    expect(waiting?.[2]).toBe(url);
    expect(Number(waiting?.[1])).toBeLessThanOrEqual(Number(AUTH_TIMEOUT_S));
    expect(Number(waiting?.[1])).toBeGreaterThan(Number(AUTH_TIMEOUT_S) - 30);
    // A second call while the sign-in waits gets the same answer.
    expect(await callErrorText(bridge)).toContain(url);
    // The user opens the URL (a browser that keeps cookies): the sign-in finishes and the client hears the list changed.
    expect(await runBrowser(url!)).toBe(0);
    await bridge.waitForMethod("notifications/tools/list_changed", 30_000);
    const relisted = bridge.request("tools/list", {});
    await bridge.waitAnswered([relisted], 30_000);
    const names = (bridge.answersTo(relisted)[0]?.result?.tools ?? []).map(
      (tool: { name: string }) => tool.name,
    );
    expect(names).toContain("create_chat");
  }, 90_000);
});

describe("No browser can open, and the server offers the device code", () => {
  it("answers the client at once with the verification URL and the code; the approval then signs in by itself", async () => {
    const deviceServer = await startReferenceServer({
      port: 0,
      autoApprove: "acme",
      rateLimit: false,
      deviceAuthorization: { intervalSeconds: 1 },
    });
    try {
      const bridge = spawnBridgeDriver(
        ["--token-store", "file", "--auth-timeout", AUTH_TIMEOUT_S, deviceServer.mcpUrl],
        { CHAT_CONFIG_DIR: join(root, "device-code"), ...NO_DESKTOP },
      );
      bridges.push(bridge);
      await initializeAtOnce(bridge);
      await askForLogs(bridge);
      const logged = await bridge.waitForMethod("notifications/message", 15_000);
      const message = String(logged.params?.data);
      const code = message.match(/the code ([A-Z]{4}-[A-Z]{4})/)?.[1];
      expect(code, message).toBeDefined();
      expect(message).toContain(`${deviceServer.url}/device?user_code=${code}`);
      expect(bridge.stderr()).toContain("signing in with a device code instead");
      expect(bridge.stderr()).not.toContain("/start/");
      // autoApprove approved the request when it was made: the next poll gets the tokens, and the first list,
      // held for the sign-in, has the tools.
      const listed = bridge.request("tools/list", {});
      await bridge.waitAnswered([listed], 30_000);
      expect(bridge.answersTo(listed)[0]?.result?.tools?.length).toBe(7);
    } finally {
      await deviceServer.close();
    }
  }, 90_000);
});

describe("An opener that drops cookies", () => {
  it("is named at once, in the terminal and to the MCP client, with how to sign in instead", async () => {
    const bridge = startBridge("no-cookies", [], {
      BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
      HTTP_BROWSER_NO_COOKIES: "1",
      ...QUICK_CALL_WAIT,
    });
    await initializeAtOnce(bridge);
    const message = await callErrorText(bridge);
    expect(message).toContain("did not keep its cookie");
    expect(message).toMatch(loginCommandOf(server.mcpUrl));
    expect(bridge.stderr()).toContain("did not keep its cookie");
  }, 60_000);
});

describe("--callback-port on a busy port", () => {
  let holder: Server;
  let busy: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((done) => holder.listen(0, "127.0.0.1", done));
    busy = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((done) => holder.close(() => done())));

  it("is an error naming the port and its holder, never a silent switch to another port", async () => {
    const bridge = startBridge("busy-port", ["--callback-port", String(busy)], {
      BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
    });
    await initializeAtOnce(bridge);
    const message = await callErrorText(bridge);
    expect(message).toContain(`127.0.0.1:${busy} is in use (another program of yours holds it)`);
    expect(message).toContain("--callback-port");
  }, 60_000);

  it("chat-mcp-bridge login says the same and exits non-zero", async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = execFile(
        process.execPath,
        [BRIDGE_BIN, "login", "--token-store", "file", "--callback-port", String(busy), server.mcpUrl],
        { env: { PATH: process.env.PATH ?? "", CHAT_CONFIG_DIR: join(root, "busy-login") } },
        (_error, _stdout, stderrText) => done({ code: child.exitCode, stderr: stderrText }),
      );
    });
    expect(code).not.toBe(0);
    expect(stderr).toContain(`127.0.0.1:${busy} is in use`);
  }, 60_000);
});

describe("chat-mcp-bridge login with a browser", () => {
  it("says it signed in once", async () => {
    const stderr = await new Promise<string>((done) => {
      execFile(
        process.execPath,
        [BRIDGE_BIN, "login", "--token-store", "file", server.mcpUrl],
        {
          env: {
            PATH: process.env.PATH ?? "",
            CHAT_CONFIG_DIR: join(root, "login-once"),
            BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
          },
        },
        (_error, _stdout, stderrText) => done(stderrText),
      );
    });
    expect(stderr.match(/signed in/gi), stderr).toHaveLength(1);
  }, 60_000);
});
