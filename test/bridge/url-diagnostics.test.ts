/** Wrong URLs get help: the base URL instead of /mcp, a dead server, a CHAT_API_URL that ends in /v2 or /mcp. */

import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv, ROOT, runCli, runProcess } from "../cli/helpers.js";
import { useReferenceServer } from "../server/helpers.js";
import { scratchDir } from "../support/scratch-dir.js";
import { BRIDGE_BIN, initializeLine, spawnRawBridge } from "./fixtures/spawn-bridge.js";

const HTTP_BROWSER = join(ROOT, "test/auth/fixtures/http-browser.mjs");

const running = useReferenceServer({ autoApprove: "acme" });

/** A loopback port nothing listens on. */
async function deadUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}`;
}

function browserEnv() {
  const logFile = join(scratchDir("cmb-url-"), "browser.log");
  const env = cleanEnv({ BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"`, HTTP_BROWSER_LOG: logFile });
  return {
    env,
    opened: () => (existsSync(logFile) ? readFileSync(logFile, "utf8").trim().split("\n").length : 0),
  };
}

describe("the bridge given the base URL instead of the MCP endpoint", () => {
  it("answers initialize with an error naming <base>/mcp, without the raw 404 body", async () => {
    const { env } = browserEnv();
    const bridge = spawnRawBridge(["--token-store", "file", `${running.server.url}/`], env);
    try {
      bridge.send(initializeLine(1));
      const answer = (await bridge.waitFor((message) => message.id === 1)) as { error?: { message: string } };
      expect(answer.error?.message).toBe(
        `chat-mcp-bridge: ${running.server.url}/ is not the MCP endpoint (it answered initialize with HTTP 404); ` +
          `${running.server.mcpUrl} is: use that URL instead.`,
      );
      expect(bridge.stderr()).toContain(`${running.server.mcpUrl} is: use that URL instead.`);
      expect(bridge.stderr()).not.toMatch(/not_found|No route/);
    } finally {
      bridge.child.stdin.end();
      await bridge.exited(5000);
    }
  });

  it("login with the base URL fails at once, before any browser, naming <base>/mcp", async () => {
    const { env, opened } = browserEnv();
    const result = await runProcess(
      process.execPath,
      [BRIDGE_BIN, "login", "--token-store", "file", running.server.url],
      {
        env,
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `chat-mcp-bridge: ${running.server.url}/ is not the MCP endpoint (it answers HTTP 404); ${running.server.mcpUrl} is: use that URL instead.\n`,
    );
    expect(opened()).toBe(0);
  });
});

describe("a bridge login URL under the protected REST API", () => {
  // The authorization server refuses such a resource (invalid_target) on its own page, not by redirecting to the
  // bridge's callback (RFC 9700 4.11.2, for clients it cannot vouch for): the bridge refuses before the browser.
  it("names <base>/mcp, not another path under the protected REST API", async () => {
    const { env, opened } = browserEnv();
    const url = `${running.server.url}/v2/chats`;
    const result = await runProcess(process.execPath, [BRIDGE_BIN, "login", "--token-store", "file", url], {
      env,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `chat-mcp-bridge: ${url} is the chat service's REST API, not its MCP endpoint; use ${running.server.mcpUrl} instead.\n`,
    );
    expect(opened()).toBe(0);
  });
});

describe("a dead server", () => {
  it("the bridge answers initialize, then the first list with one message and one prefix", async () => {
    const url = `${await deadUrl()}/mcp`;
    const bridge = spawnRawBridge(["--token-store", "file", url], cleanEnv());
    try {
      // A refused connection is no evidence of an era: initialize is answered (hosts stop a server whose initialize
      // failed), and the list after it says what happened.
      bridge.send(initializeLine(1));
      // The answers themselves are the events (no stopwatch); the bound only keeps a hung bridge from hanging the suite.
      const opened = (await bridge.waitFor((message) => message.id === 1, 20_000)) as { result?: unknown };
      expect(opened.result).toBeDefined();
      bridge.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      bridge.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
      const answer = (await bridge.waitFor((message) => message.id === 2, 20_000)) as {
        error?: { message: string };
      };
      expect(answer.error?.message).toMatch(
        new RegExp(
          `^chat-mcp-bridge: cannot reach ${new URL(url).origin}: .*ECONNREFUSED.*Is the server running`,
        ),
      );
      const lines = bridge.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^chat-mcp-bridge: cannot reach /);
      expect(bridge.stderr()).not.toContain("chat-mcp-bridge: chat-mcp-bridge:");
    } finally {
      bridge.child.stdin.end();
      await bridge.exited(5000);
    }
  });

  it("chat-mcp-bridge login says it cannot reach the server, not 'fetch failed'", async () => {
    const url = `${await deadUrl()}/mcp`;
    const result = await runProcess(process.execPath, [BRIDGE_BIN, "login", "--token-store", "file", url], {
      env: cleanEnv(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^chat-mcp-bridge: cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*\n$/,
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("chat-cli login says it cannot reach the server, not 'fetch failed'", async () => {
    const base = await deadUrl();
    const result = await runCli(["--base-url", base, "login"], { env: cleanEnv() });
    // An unreachable server is exit 1 for every command, login included.
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot reach ${base}: nothing listens there (ECONNREFUSED)`);
    expect(result.stderr).not.toContain("fetch failed");
  });
});

describe("CHAT_API_URL or --base-url ending in /v2 or /mcp", () => {
  for (const endpoint of ["/v2", "/mcp", "/v2/"]) {
    it(`${endpoint}: exit 2 with the base URL to use instead`, async () => {
      const env = cleanEnv({ CHAT_API_URL: `${running.server.url}${endpoint}`, CHAT_API_KEY: "unused" });
      const result = await runCli(["list"], { env });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`ends in ${endpoint.replace(/\/$/, "")}`);
      expect(result.stderr).toContain(`Use ${running.server.url} instead (in CHAT_API_URL or --base-url).`);
      const login = await runCli(
        ["--base-url", `${running.server.url}${endpoint}`, "login", "--no-browser"],
        {
          env: cleanEnv(),
        },
      );
      expect(login.code).toBe(2);
      expect(login.stderr).toContain(`Use ${running.server.url} instead`);
    });
  }
});
