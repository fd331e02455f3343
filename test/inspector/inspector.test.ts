/** A client nobody here wrote: the MCP Inspector CLI launches chat-mcp-bridge from a client config and calls tools through it. */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { ChatClient } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { ChatSchema, TOOL_NAMES } from "../../src/wire/index.js";
import { scratchDir } from "../support/scratch-dir.js";

const run = promisify(execFile);
const inspectorBuild = resolve("node_modules/@modelcontextprotocol/inspector-cli/build");
const bridgeBin = resolve("bin/chat-mcp-bridge.js");
const httpBrowser = resolve("test/auth/fixtures/http-browser.mjs");

const ToolListSchema = z.object({ tools: z.array(z.looseObject({ name: z.string() })) });
const ToolResultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
});

let server: ReferenceServer;
const work = scratchDir("cmb-inspector-");
const configDir = join(work, "config");
const browserLog = join(work, "browser-opened.log");
const clientConfig = join(work, "mcp.json");

beforeAll(async () => {
  server = await startReferenceServer({ autoApprove: "acme" });
  // The README's client config, with `node <bin>` for `npx -y chat-mcp-bridge` (same bin, no registry) and the
  // file token store so the test never touches a real keychain. The first call signs in through the browser.
  writeFileSync(
    clientConfig,
    JSON.stringify({
      mcpServers: {
        chat: {
          command: "node",
          args: [bridgeBin, "--token-store", "file", server.mcpUrl],
          env: {
            CHAT_CONFIG_DIR: configDir,
            BROWSER: `"${process.execPath}" "${httpBrowser}"`,
            HTTP_BROWSER_LOG: browserLog,
          },
        },
      },
    }),
  );
});

afterAll(async () => {
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

/** `mcp-inspector-cli --cli --config mcp.json --server chat <method args>`; stdout is the result as JSON. */
async function inspect(methodArgs: string[]): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    [join(inspectorBuild, "cli.js"), "--cli", "--config", clientConfig, "--server", "chat", ...methodArgs],
    {
      // The inspector finds its own package.json relative to the working directory.
      cwd: inspectorBuild,
      // It starts `node` from PATH: make that the Node running this suite (20 or the current LTS).
      env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}` },
      timeout: 60_000,
    },
  );
  return JSON.parse(stdout);
}

function browserOpenings(): number {
  return existsSync(browserLog) ? readFileSync(browserLog, "utf8").trim().split("\n").length : 0;
}

describe("tools/list through the bridge, signing in headlessly on first use", () => {
  it("lists the seven chat tools", async () => {
    const result = ToolListSchema.parse(await inspect(["--method", "tools/list"]));
    expect(result.tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(browserOpenings()).toBe(1);
  }, 90_000);
});

describe("tools/call create_chat through the bridge", () => {
  it("creates a chat for the team approved at sign-in, reusing the stored login", async () => {
    const result = ToolResultSchema.parse(
      await inspect([
        "--method",
        "tools/call",
        "--tool-name",
        "create_chat",
        "--tool-arg",
        "message=Build a to-do app that keeps its tasks in a database",
      ]),
    );
    expect(result.isError).not.toBe(true);
    const chat = ChatSchema.parse(result.structuredContent);
    expect(chat.hostProjectId).toBeDefined();
    expect(new URL(String(chat.url)).pathname.split("/")).toContain("acme");
    // The chat is real: the service shows it paused on the integration request.
    const apiKey = server.apiKeys.acme!;
    const pending = await new ChatClient({ baseUrl: server.url, token: apiKey }).getPendingTask(chat.id);
    expect(pending?.kind).toBe("integration");
    expect(browserOpenings()).toBe(1);
  }, 90_000);
});
