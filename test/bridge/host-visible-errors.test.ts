import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { REQUIRED_NODE } from "../../src/internal/start-refusal.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BRIDGE_BIN, bridgeTransport } from "./fixtures/spawn-bridge.js";

/**
 * What the host shows of a refused bridge, through an SDK client as hosts use it: the server's instructions, its one
 * tool's description and that tool's answer, which all say the same (hosts show tools; few show an initialize error).
 */
async function initializeError(args: string[], options: { node?: string } = {}): Promise<string> {
  const { transport, stderr } = bridgeTransport(args, {}, undefined, options.node);
  const client = new Client({ name: "host", version: "1.0.0" });
  await client.connect(transport);
  const instructions = client.getInstructions() ?? "";
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(["chat_mcp_bridge_error"]);
  const result = await client.callTool({ name: "chat_mcp_bridge_error", arguments: {} });
  await client.close().catch(() => undefined);
  const text = (result.content as Array<{ text: string }>).map((part) => part.text).join("");
  expect(result.isError).toBe(true);
  expect(tools[0]?.description).toBe(instructions);
  expect(text).toBe(instructions);
  expect(stderr()).not.toBe("");
  return instructions;
}

describe("a usage error is what the host shows: its instructions and one tool (hosts hide stderr and show 'Connection closed')", () => {
  it("an unknown flag, with commander's 'did you mean'", async () => {
    const message = await initializeError(["--hedaer", "X: y", "http://127.0.0.1:9/mcp"]);
    expect(message).toMatch(/unknown option '--hedaer'.*Did you mean --header\?/);
  }, 30_000);

  it("a bad value", async () => {
    expect(await initializeError(["--max-message-size", "lots", "http://127.0.0.1:9/mcp"])).toMatch(
      /--max-message-size.*expected a size in MiB/,
    );
  }, 30_000);

  it("a URL that is not one", async () => {
    expect(await initializeError(["not a url"])).toMatch(/"not a url" is not a URL/);
  }, 30_000);

  it("the REST API's /v2 URL instead of the MCP endpoint", async () => {
    let server: ReferenceServer | undefined;
    try {
      server = await startReferenceServer({ port: 0 });
      expect(await initializeError([`${server.url}/v2`])).toMatch(
        new RegExp(`REST API, not its MCP endpoint; use ${server.mcpUrl.replace(/[/.]/g, "\\$&")}`),
      );
    } finally {
      await server?.close();
    }
  }, 30_000);

  // A refused connection is no evidence of the server's era: the host's initialize is answered (hosts stop a server
  // whose initialize failed), and its list's error says what happened.
  it("a server down at start: the host is told it will not retry, and what to do", async () => {
    const { transport } = bridgeTransport(["http://127.0.0.1:9/mcp"], {});
    const client = new Client({ name: "host", version: "1.0.0" });
    await client.connect(transport);
    const message = await client.listTools().then(
      (result) => JSON.stringify(result),
      (error: Error) => error.message,
    );
    await client.close().catch(() => undefined);
    expect(message).toMatch(
      /cannot reach http:\/\/127\.0\.0\.1:9.*will not retry.*restart or reconnect this server/,
    );
    expect(message).not.toMatch(/retries on the next request/);
  }, 30_000);

  it("a terminal still gets the error at once, and the exit code 2", () => {
    const result = spawnSync(process.execPath, [BRIDGE_BIN, "--hedaer", "x"], {
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
      timeout: 15_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/Did you mean --header\?/);
  });
});

/** The machine's own Node 20 (the one on PATH without /work/bin22), when it has one. */
const oldNode = ["/usr/bin/node", "/bin/node", "/usr/local/bin/node"].find((path) => {
  if (!existsSync(path)) return false;
  const version = spawnSync(path, ["--version"], { encoding: "utf8" }).stdout.trim();
  const [major, minor] = version.slice(1).split(".").map(Number);
  return major! < REQUIRED_NODE.major || (major === REQUIRED_NODE.major && minor! < REQUIRED_NODE.minor);
});

describe.skipIf(!oldNode)("on a Node older than the package needs, each bin says which Node it needs", () => {
  it("package.json's engines say the same Node as the check", () => {
    const { engines } = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../package.json"), "utf8"));
    expect(engines.node).toBe(`>=${REQUIRED_NODE.major}.${REQUIRED_NODE.minor}`);
  });

  for (const bin of ["chat-cli", "chat-mcp-bridge"]) {
    it(`${bin}: the message on stderr, exit 1, no stack trace`, () => {
      const result = spawnSync(oldNode!, [resolve(import.meta.dirname, `../../bin/${bin}.js`), "--version"], {
        stdio: ["ignore", "pipe", "pipe"],
        encoding: "utf8",
        timeout: 15_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`^${bin} needs Node.js 22.12 or newer; it was started by Node.js v`),
      );
      expect(result.stderr).toMatch(/nodejs\.org/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stdout).toBe("");
    });
  }

  it("chat-mcp-bridge: the host is shown it as its one tool", async () => {
    expect(await initializeError(["http://127.0.0.1:9/mcp"], { node: oldNode! })).toMatch(
      /chat-mcp-bridge needs Node\.js 22\.12 or newer; it was started by Node\.js v\d+/,
    );
  }, 30_000);
});
