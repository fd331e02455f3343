/**
 * The flags people bring from mcp-remote, on the spawned bridge against the reference server: tool filtering,
 * the log file, --silent, profiles (two accounts for one URL), doctor and --header-file.
 */
import { execFile } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { ProtocolError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVALID_PARAMS_ERROR_CODE } from "../../src/bridge/steps/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import { BRIDGE_BIN, type BridgeClient, connectThroughBridge } from "./fixtures/spawn-bridge.js";

const consentBrowser = resolve(import.meta.dirname, "fixtures/consent-browser.mjs");
const run = promisify(execFile);

let server: ReferenceServer;
beforeAll(async () => {
  // No auto-approval: each sign-in goes through the sign-in form and the consent page, choosing its account.
  // Bearer tokens: the --header-file tests hand one login's token to another bridge, which DPoP would refuse.
  server = await startReferenceServer({ port: 0, dpop: "off" });
});
afterAll(async () => {
  await server?.close();
});

/** A config dir of its own, a browser that approves for `account`, and what that browser carried. */
function newHome(account = "personal") {
  const dir = scratchDir("cmb-flags-");
  const codes = join(dir, "codes.txt");
  writeFileSync(codes, "");
  const configDir = join(dir, "config");
  return {
    configDir,
    env: {
      CHAT_CONFIG_DIR: configDir,
      BROWSER: `${process.execPath} ${consentBrowser}`,
      CONSENT_ACCOUNT: account,
      CONSENT_CODES: codes,
    } as Record<string, string>,
    /** Authorization codes the browser carried to the callback, one per sign-in. */
    codes: () => readFileSync(codes, "utf8").split("\n").filter(Boolean),
    /** Every string value of the stored logins that looks like a token or secret. */
    storedSecrets: () => {
      const secrets: string[] = [];
      const authDir = join(configDir, "auth");
      for (const name of readdirSync(authDir).filter((file) => /^[0-9a-f]+\.json$/.test(file))) {
        JSON.stringify(JSON.parse(readFileSync(join(authDir, name), "utf8")), (key, value) => {
          if (typeof value === "string" && /token|secret/i.test(key) && value.length >= 8)
            secrets.push(value);
          return value;
        });
      }
      return secrets;
    },
    logins: () => readdirSync(join(configDir, "auth")).filter((file) => /^[0-9a-f]+\.json$/.test(file)),
  };
}

const base = ["--token-store", "file", "--auth-timeout", "20"];

async function chatsOf(account: string): Promise<number> {
  const response = await fetch(`${server.url}/v2/chats?limit=100`, {
    headers: { authorization: `Bearer ${server.apiKeys[account]}` },
  });
  const body = (await response.json()) as { data: unknown[] };
  return body.data.length;
}

async function withBridge<T>(
  args: string[],
  env: Record<string, string>,
  use: (bridge: BridgeClient) => Promise<T>,
): Promise<T> {
  const bridge = await connectThroughBridge(args, { env });
  try {
    return await use(bridge);
  } finally {
    await bridge.close();
  }
}

async function refusal(bridge: BridgeClient, name: string): Promise<ProtocolError> {
  try {
    await bridge.client.callTool({ name, arguments: { message: "hello", chatId: "x", task: {} } });
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error(`${name} was not refused`);
}

describe("--ignore-tool and --read-only", () => {
  const home = newHome();

  it("--ignore-tool: the tools are absent from tools/list and their calls are answered by the bridge, never run", async () => {
    const before = await chatsOf("personal");
    await withBridge(
      [...base, "--ignore-tool", "create_*", "--ignore-tool", "resolve_task", server.mcpUrl],
      home.env,
      async (bridge) => {
        const { tools } = await bridge.client.listTools();
        expect(tools.map((tool) => tool.name).sort()).toEqual([
          "get_chat",
          "get_preview",
          "list_chats",
          "list_messages",
          "send_message",
        ]);
        const refused = await refusal(bridge, "create_chat");
        expect(refused.code).toBe(INVALID_PARAMS_ERROR_CODE);
        expect(refused.message).toContain(
          'hidden by --ignore-tool "create_*"; it was not sent to the server',
        );
        expect((await refusal(bridge, "resolve_task")).message).toContain('--ignore-tool "resolve_task"');
        // A visible tool still runs.
        const listed = await bridge.client.callTool({ name: "list_chats", arguments: {} });
        expect(listed.isError).toBeFalsy();
      },
    );
    expect(await chatsOf("personal")).toBe(before);
  });

  it("--read-only: only the tools annotated readOnlyHint: true", async () => {
    const before = await chatsOf("personal");
    await withBridge([...base, "--read-only", server.mcpUrl], home.env, async (bridge) => {
      const { tools } = await bridge.client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        "get_chat",
        "get_preview",
        "list_chats",
        "list_messages",
      ]);
      expect((await refusal(bridge, "create_chat")).message).toContain("hidden by --read-only");
    });
    expect(await chatsOf("personal")).toBe(before);
  });
});

describe("the log file", () => {
  it("--debug writes <config>/logs/<server-key>.log: its path said once, ISO time and pid per line, no secret", async () => {
    const home = newHome();
    const secretHeader = "header-value-never-logged-1234";
    const { stderr, pid } = await withBridge(
      ["--debug", ...base, "--header", `X-Test-Secret: ${secretHeader}`, server.mcpUrl],
      home.env,
      async (bridge) => {
        await bridge.client.listTools();
        await bridge.client.callTool({ name: "list_chats", arguments: {} });
        return { stderr: bridge.stderr(), pid: bridge.transport.pid };
      },
    );
    const logs = readdirSync(join(home.configDir, "logs"));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^[0-9a-f]{32}\.log$/);
    const path = join(home.configDir, "logs", logs[0]!);
    expect(stderr.split(`logging to ${path}`)).toHaveLength(2);
    const text = readFileSync(path, "utf8");
    const lines = text.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines)
      expect(line).toMatch(
        new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z pid=${pid} \\w+ `),
      );
    // A tool call's line names the tool (the profile is named on each line of a --profile run).
    expect(text).toContain('client → server tools/call "list_chats" #');
    // The bridge signed in during this run: the code and the tokens passed through it.
    const secrets = [...home.storedSecrets(), ...home.codes(), secretHeader];
    expect(home.codes()).toHaveLength(1);
    expect(secrets.length).toBeGreaterThan(3);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
  });

  it("rotates at the size cap: one older file kept, neither over the cap", async () => {
    const home = newHome();
    const logFile = join(home.configDir, "chosen", "bridge.log");
    await withBridge(
      ["--debug", "--log-file", logFile, ...base, server.mcpUrl],
      { ...home.env, CHAT_MCP_BRIDGE_LOG_MAX_BYTES: "2000" },
      async (bridge) => {
        for (let index = 0; index < 40; index++) await bridge.client.listTools();
      },
    );
    expect(statSync(logFile).size).toBeLessThanOrEqual(2000);
    expect(statSync(`${logFile}.1`).size).toBeLessThanOrEqual(2000);
    expect(statSync(`${logFile}.1`).size).toBeGreaterThan(1500);
    expect(existsSync(`${logFile}.2`)).toBe(false);
    expect(existsSync(join(home.configDir, "logs"))).toBe(false);
  });

  it("no file without --debug; --silent leaves stderr empty, even with --debug (the details then go to the file only)", async () => {
    const home = newHome();
    await run(process.execPath, [BRIDGE_BIN, "login", ...base, server.mcpUrl], { env: home.env });
    const quiet = await withBridge([...base, server.mcpUrl], home.env, async (bridge) => {
      await bridge.client.listTools();
      return bridge.stderr();
    });
    expect(existsSync(join(home.configDir, "logs"))).toBe(false);
    expect(quiet).toBe("");
    const silent = await withBridge(["--silent", ...base, server.mcpUrl], home.env, async (bridge) => {
      await bridge.client.listTools();
      return bridge.stderr();
    });
    expect(silent).toBe("");
    expect(existsSync(join(home.configDir, "logs"))).toBe(false);
    const silentDebug = await withBridge(
      ["--silent", "--debug", ...base, server.mcpUrl],
      home.env,
      async (bridge) => {
        await bridge.client.listTools();
        return bridge.stderr();
      },
    );
    expect(silentDebug).toBe("");
    const [log] = readdirSync(join(home.configDir, "logs"));
    expect(readFileSync(join(home.configDir, "logs", log!), "utf8")).toContain("client → server tools/list");
  });

  it("--profile: each line of the log file names the profile, and a tool call's line names the tool", async () => {
    const home = newHome("acme");
    const pid = await withBridge(
      ["--debug", "--profile", "acme", ...base, server.mcpUrl],
      home.env,
      async (bridge) => {
        await bridge.client.callTool({ name: "list_chats", arguments: {} });
        return bridge.transport.pid;
      },
    );
    const [log] = readdirSync(join(home.configDir, "logs"));
    const lines = readFileSync(join(home.configDir, "logs", log!), "utf8")
      .trimEnd()
      .split("\n");
    for (const line of lines) expect(line).toMatch(new RegExp(`^\\S+Z pid=${pid} profile=acme \\w+ `));
    expect(lines.some((line) => /client → server tools\/call "list_chats" #\d+$/.test(line))).toBe(true);
  });
});

describe("doctor --sign-in", () => {
  it("signs in when there is no login, then passes every check; without it no browser opens", async () => {
    const home = newHome("acme");
    const without = await run(process.execPath, [BRIDGE_BIN, "doctor", ...base, server.mcpUrl], {
      env: home.env,
    }).catch((error: { code: number; stdout: string }) => error);
    expect(without).toMatchObject({ code: 1 });
    expect((without as { stdout: string }).stdout).toMatch(/^✗ Stored login: not signed in$/m);
    expect(home.codes()).toHaveLength(0);

    const signedIn = await run(
      process.execPath,
      [BRIDGE_BIN, "doctor", "--sign-in", ...base, server.mcpUrl],
      { env: home.env },
    );
    expect(signedIn.stdout).toMatch(/^✓ Live server\/discover \+ tools\/list: .* listed 7 tools$/m);
    expect(signedIn.stdout).toMatch(/All checks passed\.\n$/);
    expect(home.codes()).toHaveLength(1);
  });
});

describe("--host", () => {
  it("localhost: the sign-in registers and answers on http://localhost:<port>/callback", async () => {
    const home = newHome();
    await run(process.execPath, [BRIDGE_BIN, "login", "--host", "localhost", ...base, server.mcpUrl], {
      env: home.env,
    });
    const [file] = home.logins();
    const login = JSON.parse(readFileSync(join(home.configDir, "auth", file!), "utf8"));
    expect(login.client.redirect_uris).toEqual([expect.stringMatching(/^http:\/\/localhost:\d+\/callback$/)]);
    expect(home.codes()).toHaveLength(1);
  });

  it("refuses a host that is not loopback", async () => {
    const failed = await run(process.execPath, [BRIDGE_BIN, "--host", "example.com", server.mcpUrl]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toMatch(/--host/);
  });
});

describe("--profile: two logins for one URL", () => {
  it("the default profile as personal and --profile acme as acme each relay as their own account; logout of one leaves the other", async () => {
    const home = newHome();
    await run(process.execPath, [BRIDGE_BIN, "login", ...base, server.mcpUrl], {
      env: { ...home.env, CONSENT_ACCOUNT: "personal" },
    });
    const { stderr } = await run(
      process.execPath,
      [BRIDGE_BIN, "login", "--profile", "acme", ...base, server.mcpUrl],
      { env: { ...home.env, CONSENT_ACCOUNT: "acme" } },
    );
    expect(stderr).toContain("(profile acme)");
    expect(home.logins()).toHaveLength(2);
    expect(home.codes()).toHaveLength(2);

    const chatUrl = (args: string[]) =>
      withBridge([...args, ...base, server.mcpUrl], home.env, async (bridge) => {
        const result = await bridge.client.callTool({ name: "create_chat", arguments: { message: "hello" } });
        return (result.structuredContent as { url: string }).url;
      });
    expect(new URL(await chatUrl([])).pathname).toMatch(/\/personal\//);
    expect(new URL(await chatUrl(["--profile", "acme"])).pathname).toMatch(/\/acme\//);
    // Both relayed with their stored logins: no new sign-in.
    expect(home.codes()).toHaveLength(2);

    await run(process.execPath, [BRIDGE_BIN, "logout", "--profile", "acme", ...base, server.mcpUrl], {
      env: home.env,
    });
    expect(home.logins()).toHaveLength(1);
    expect(new URL(await chatUrl([])).pathname).toMatch(/\/personal\//);
    expect(home.codes()).toHaveLength(2);

    // doctor sees the same: the default profile signed in, acme not.
    const healthy = await run(process.execPath, [BRIDGE_BIN, "doctor", "--json", ...base, server.mcpUrl], {
      env: home.env,
    });
    expect(JSON.parse(healthy.stdout)).toMatchObject({ ok: true, profile: "default" });
    const signedOut = await run(
      process.execPath,
      [BRIDGE_BIN, "doctor", "--json", "--profile", "acme", ...base, server.mcpUrl],
      { env: home.env },
    ).then(
      () => undefined,
      (error: { code: number; stdout: string }) => error,
    );
    expect(signedOut?.code).toBe(1);
    const report = JSON.parse(signedOut!.stdout) as {
      checks: { id: string; status: string; fix?: string }[];
    };
    const login = report.checks.find((check) => check.id === "login");
    expect(login).toMatchObject({ status: "fail" });
    expect(login?.fix).toContain(`chat-mcp-bridge login --profile acme --token-store file ${server.mcpUrl}`);
    expect(home.codes()).toHaveLength(2);
  });
});

describe("--header-file", () => {
  /** A header file carrying an access token of another login as the bearer: the server answers only if it arrives. */
  async function tokenFile(home: ReturnType<typeof newHome>, mode: number) {
    const other = newHome();
    await run(process.execPath, [BRIDGE_BIN, "login", ...base, server.mcpUrl], { env: other.env });
    const token = JSON.parse(readFileSync(join(other.configDir, "auth", other.logins()[0]!), "utf8")).tokens
      .accessToken as string;
    const path = join(home.configDir, "..", "headers.txt");
    writeFileSync(path, `# the gateway's token\nAuthorization: Bearer ${token}\n`);
    chmodSync(path, mode);
    return { path, token };
  }

  it("its header reaches the server, and its value is in neither argv, stderr nor the log file", async () => {
    const home = newHome();
    const { path, token } = await tokenFile(home, 0o600);
    const args = ["--debug", ...base, "--no-browser", "--header-file", path, server.mcpUrl];
    const stderr = await withBridge(args, home.env, async (bridge) => {
      const listed = await bridge.client.callTool({ name: "list_chats", arguments: {} });
      expect(listed.isError).toBeFalsy();
      return bridge.stderr();
    });
    // No sign-in in this home: the token in the file was the credential.
    expect(home.codes()).toEqual([]);
    expect(args.join(" ")).not.toContain(token);
    expect(stderr).not.toContain(token);
    const logs = readdirSync(join(home.configDir, "logs"));
    expect(logs).toHaveLength(1);
    expect(readFileSync(join(home.configDir, "logs", logs[0]!), "utf8")).not.toContain(token);
  });

  it.runIf(process.platform !== "win32")(
    "a file that others can read: the bridge, login and doctor refuse to start (exit 2) and say how to fix it",
    async () => {
      const home = newHome();
      const { path, token } = await tokenFile(home, 0o644);
      for (const words of [[], ["login"], ["doctor"]]) {
        const failure = await run(
          process.execPath,
          [BRIDGE_BIN, ...words, ...base, "--header-file", path, server.mcpUrl],
          { env: home.env },
        ).then(
          () => undefined,
          (error: { code: number; stderr: string }) => error,
        );
        expect(failure?.code).toBe(2);
        expect(failure?.stderr).toContain(`run chmod 600 ${path}`);
        expect(failure?.stderr).not.toContain(token);
      }
      expect(home.codes()).toEqual([]);
    },
  );
});
