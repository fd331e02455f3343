/**
 * The first sign-in as MCP hosts run it: SDK v2 clients with their default 60 s request time-out start the bridge
 * signed out; a person who approves within the host's patience gives it the tools on its first list; a person who
 * needs longer than the host waits, and a host that opens the sign-in link itself (URL-mode elicitation), both end
 * with the server's tools in the same host and bridge process, no request timed out. The slow person's case is
 * scaled by ten: a host that times out at 6 s, the bridge's 45 s sign-in wait given as 5 s, a person who
 * takes 7 s (as 70 against 60).
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { Client, type ClientCapabilities } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../../src/server/index.js";
import { scratchDir } from "../../support/scratch-dir.js";
import { BRIDGE_BIN } from "../fixtures/spawn-bridge.js";

const SLOW_BROWSER = resolve("test/bridge/fixtures/slow-browser.mjs");
const HTTP_BROWSER = resolve("test/auth/fixtures/http-browser.mjs");
type HostMode = "legacy" | "auto";
/** The SDKs' 60 s request time-out, scaled down by ten, for the slow person's host. */
const HOST_TIMEOUT_MS = 6_000;
/** The bridge's sign-in wait (45 s), scaled down below the host's time-out. */
const SCALED_LIST_WAIT_MS = "5000";
/** Longer than the host's time-out, as 70 s is longer than 60. */
const SLOW_PERSON_MS = 7_000;

let server: ReferenceServer;
beforeAll(async () => {
  // The loopback sign-in link is what these hosts are shown (the device code has its own tests).
  server = await startReferenceServer({
    port: 0,
    autoApprove: "acme",
    rateLimit: false,
    deviceAuthorization: false,
  });
});
afterAll(async () => {
  await server?.close();
});

/** A host as Claude Desktop or VS Code runs one: the SDK's defaults, a list-changed handler that lists again. */
async function startHost(
  mode: HostMode,
  env: Record<string, string>,
  capabilities: ClientCapabilities = {},
  onElicitUrl?: (url: string) => void,
) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE_BIN, "--token-store", "file", server.mcpUrl],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CHAT_CONFIG_DIR: scratchDir(`cmb-first-sign-in-${mode}-`),
      DISPLAY: "",
      WAYLAND_DISPLAY: "",
      ...env,
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const relisted: string[][] = [];
  let changed: () => void = () => {};
  const toolsChanged = new Promise<void>((done) => {
    changed = done;
  });
  const client = new Client(
    { name: `first-sign-in-${mode}`, version: "1.0.0" },
    {
      capabilities,
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (_error, tools) => {
            relisted.push((tools ?? []).map((tool) => tool.name));
            if ((tools ?? []).some((tool) => tool.name !== "sign_in")) changed();
          },
        },
      },
      ...(mode === "auto" ? { versionNegotiation: { mode: "auto" } } : {}),
    },
  );
  if (onElicitUrl) {
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode?: string; url?: string };
      if (params.mode === "url" && params.url) onElicitUrl(params.url);
      return { action: "accept" };
    });
  }
  const started = Date.now();
  await client.connect(transport);
  return { client, relisted, toolsChanged, started, stderr: () => stderr };
}

describe.concurrent.each(["legacy", "auto"] as const)(
  "a %s SDK v2 host, its default 60 s time-out",
  (mode) => {
    it("a person who signs in after the host's time-out: connected at once, then the seven tools, with no restart", async () => {
      const host = await startHost(mode, {
        BROWSER: `"${process.execPath}" "${SLOW_BROWSER}"`,
        SLOW_BROWSER_DELAY_MS: String(SLOW_PERSON_MS),
        CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS: SCALED_LIST_WAIT_MS,
      });
      // The requests the sign-in holds get the host's scaled time-out (its start-up keeps the SDK's default).
      const inTime = { timeout: HOST_TIMEOUT_MS };
      try {
        const connectedAfter = Date.now() - host.started;
        // Never an empty list (some hosts keep it): the sign_in tool, saying where to sign in, within the time-out.
        const { tools } = await host.client.listTools(undefined, inTime);
        expect(tools.map((tool) => tool.name)).toEqual(["sign_in"]);
        expect(tools[0]?.description).toMatch(/not signed in to/);
        await host.toolsChanged;
        const signedInAfter = Date.now() - host.started;
        expect(signedInAfter).toBeGreaterThan(HOST_TIMEOUT_MS);
        const { tools: listed } = await host.client.listTools(undefined, inTime);
        expect(listed).toHaveLength(7);
        const result = await host.client.callTool({ name: "list_chats", arguments: {} }, inTime);
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
        console.info(
          `${mode} host: connected after ${(connectedAfter / 1000).toFixed(1)} s, tools after ${(signedInAfter / 1000).toFixed(1)} s`,
        );
      } finally {
        await host.client.close();
      }
    }, 60_000);

    it("a person who approves after 5 s: the host's FIRST tools/list has the seven tools, and no list change follows", async () => {
      const host = await startHost(mode, {
        BROWSER: `"${process.execPath}" "${SLOW_BROWSER}"`,
        SLOW_BROWSER_DELAY_MS: "5000",
      });
      try {
        const { tools } = await host.client.listTools();
        const toolsAfter = Date.now() - host.started;
        expect(tools).toHaveLength(7);
        expect(toolsAfter).toBeGreaterThan(4_000);
        expect(host.relisted).toEqual([]);
        console.info(
          `${mode} host, person approves after 5 s: tools on the first list after ${(toolsAfter / 1000).toFixed(1)} s`,
        );
      } finally {
        await host.client.close();
      }
    }, 60_000);

    it("no browser, a host that declares URL elicitation: the host is asked to open the sign-in link, and the tools follow", async () => {
      const opened: string[] = [];
      const host = await startHost(mode, { BROWSER: "" }, { elicitation: { url: {} } }, (url) => {
        opened.push(url);
        execFile(process.execPath, [HTTP_BROWSER, url], { env: { PATH: process.env.PATH ?? "" } });
      });
      try {
        // A legacy host is asked once initialized; a modern one in its first call's input_required round.
        const result = await host.client.callTool({ name: "list_chats", arguments: {} });
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
        // The host had listed no tools while signed out: its first list, now, has them (no list change needed).
        expect(opened).toHaveLength(1);
        expect(opened[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/start\//);
        const { tools } = await host.client.listTools();
        expect(tools).toHaveLength(7);
      } finally {
        await host.client.close();
      }
    }, 60_000);
  },
);
