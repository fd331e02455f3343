/** The bridge on a laptop behind a company proxy and TLS root: sign-in and relay through a real proxy, and the errors. */
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectThroughBridge, initializeLine, spawnRawBridge } from "../bridge/fixtures/spawn-bridge.js";
import { scratchDir } from "../support/scratch-dir.js";
import {
  needsOpenssl,
  PROXY_PASSWORD,
  PROXY_USER,
  type ProxiedService,
  startProxiedService,
} from "./fixtures/proxied-service.js";

const browserScript = resolve(import.meta.dirname, "../auth/fixtures/http-browser.mjs");

let service: ProxiedService;
beforeAll(async () => {
  if (needsOpenssl.skip) return;
  service = await startProxiedService();
});
afterAll(() => service?.close());

function userEnv(extra: Record<string, string>): Record<string, string> {
  return {
    CHAT_CONFIG_DIR: join(scratchDir("cmb-proxy-"), "config"),
    BROWSER: `${process.execPath} ${browserScript}`,
    CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "1000",
    ...extra,
  };
}

const mcpUrl = () => `${service.httpsUrl}/mcp`;
const bridgeArgs = () => ["--token-store", "file", "--auth-timeout", "20", mcpUrl()];

/** The error of the first request that needs the server (signed out, `initialize` is the bridge's own), or "". */
async function initializeError(env: Record<string, string>): Promise<{ message: string; stderr: string }> {
  const bridge = spawnRawBridge(bridgeArgs(), env);
  try {
    bridge.send(initializeLine(1));
    bridge.send(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })}\n`);
    const answer = await bridge.waitFor((message) => message.id === 2, 15_000);
    return {
      message: (answer.error as { message?: string } | undefined)?.message ?? "",
      stderr: bridge.stderr(),
    };
  } finally {
    bridge.child.kill();
  }
}

describe("through the proxy, trusting the company root with NODE_EXTRA_CA_CERTS", needsOpenssl, () => {
  it("signs in (discovery, registration, token) and relays tools; the proxy saw the credentials, no log shows them", async () => {
    const before = service.proxyLog().length;
    const bridge = await connectThroughBridge(["--debug", ...bridgeArgs()], {
      env: userEnv({ HTTPS_PROXY: service.proxyUrl, NODE_EXTRA_CA_CERTS: service.caFile }),
    });
    try {
      const { tools } = await bridge.client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("create_chat");
      const listed = await bridge.client.callTool({ name: "list_chats", arguments: {} });
      expect(listed.isError).toBeFalsy();
    } finally {
      await bridge.close();
    }
    const seen = service.proxyLog().slice(before);
    const host = new URL(service.httpsUrl).host;
    expect(seen.filter((line) => line.target === host).length).toBeGreaterThanOrEqual(3);
    expect(seen.every((line) => line.credentials === "right")).toBe(true);
    expect(bridge.stderr()).toContain(`via proxy ${service.proxyDisplay} (from HTTPS_PROXY)`);
    expect(bridge.stderr()).not.toContain(PROXY_PASSWORD);
    expect(bridge.stderr()).not.toContain(PROXY_USER);
  }, 60_000);
});

describe("the errors a user can act on", needsOpenssl, () => {
  it("without the company root: the request is answered with the NODE_EXTRA_CA_CERTS hint, logged once", async () => {
    const { message, stderr } = await initializeError(userEnv({ HTTPS_PROXY: service.proxyUrl }));
    expect(message).toContain(`The TLS certificate of ${new URL(service.httpsUrl).host} is not trusted`);
    expect(message).toContain("NODE_EXTRA_CA_CERTS");
    expect(stderr.split("NODE_EXTRA_CA_CERTS").length - 1).toBe(1);
  }, 30_000);

  it("a wrong proxy password: a 407 error naming the proxy, not the password, logged once", async () => {
    const wrong = service.proxyUrl.replace(PROXY_PASSWORD, "wrong-password");
    const { message, stderr } = await initializeError(
      userEnv({ HTTPS_PROXY: wrong, NODE_EXTRA_CA_CERTS: service.caFile }),
    );
    expect(message).toContain(`The proxy ${service.proxyDisplay} (from HTTPS_PROXY) refused`);
    expect(message).toContain("407");
    expect(`${message}${stderr}`).not.toContain("wrong-password");
    // Counted by its words: a port number may contain "407".
    expect(stderr.split("refused the connection").length - 1).toBe(1);
  }, 30_000);

  it("NO_PROXY sends the bridge direct, where chat.test does not resolve; the proxy sees nothing", async () => {
    const before = service.proxyLog().length;
    const { message } = await initializeError(
      userEnv({ HTTPS_PROXY: service.proxyUrl, NO_PROXY: "chat.test", NODE_EXTRA_CA_CERTS: service.caFile }),
    );
    expect(message).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(service.proxyLog().length).toBe(before);
  }, 30_000);
});
