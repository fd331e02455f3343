/** chat-cli serve: starts the reference server, prints its URLs, keys and client configs, stops cleanly on SIGTERM. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { notOnRegistryNote } from "../../src/cli/commands/serve.js";
import { BIN, cleanEnv, ROOT, runCli } from "./helpers.js";

describe("serve --port 0", () => {
  it("prints base URL, MCP URL, dev API keys and client configs; the API answers; SIGTERM exits 0", async () => {
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], { env: cleanEnv() });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    for (let i = 0; i < 200 && !stdout.includes('{"url"'); i++) await new Promise((r) => setTimeout(r, 50));

    const baseUrl = /Base URL:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
    expect(baseUrl).toBeDefined();
    expect(stdout).toContain(`MCP URL:   ${baseUrl}/mcp`);
    // The config that works today, from any folder: this checkout's bin run with node.
    expect(stdout).toContain(
      `{"mcpServers":{"chat":{"command":"node","args":[${JSON.stringify(join(ROOT, "bin", "chat-mcp-bridge.js"))},"${baseUrl}/mcp"]}}}`,
    );
    expect(stdout).toContain(
      `Once it is published: {"mcpServers":{"chat":{"command":"npx","args":["-y","chat-mcp-bridge","${baseUrl}/mcp"]}}}`,
    );
    expect(stdout).toContain(`{"mcpServers":{"chat":{"url":"${baseUrl}/mcp"}}}`);
    // Beside the npx config: the package is not on the registry yet, and what to run instead.
    expect(stdout).toContain("chat-mcp-bridge is not on the npm registry yet");
    expect(stdout).toContain(JSON.stringify(join(ROOT, "bin", "chat-mcp-bridge.js")));
    expect(stdout).toContain("npm link");
    const acmeKey = /^\s+acme\s+(\S+)/m.exec(stdout)?.[1];
    expect(acmeKey).toBeDefined();
    const response = await fetch(`${baseUrl}/v2/chats`, { headers: { authorization: `Bearer ${acmeKey}` } });
    expect(response.status).toBe(200);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});

describe("serve --auto-approve with an unknown slug", () => {
  it("names the flag, not the API option, and lists the slugs; exit 2, nothing listening", async () => {
    const result = await runCli(["serve", "--port", "0", "--auto-approve", "nope"], { env: cleanEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--auto-approve no account or team "nope"; use one of');
    expect(result.stderr).toContain("acme");
    expect(result.stderr).not.toContain("autoApprove");
    expect(result.stdout).not.toContain("Reference server running");
  });
});

describe("notOnRegistryNote (serve and the demo print it beside the npx config)", () => {
  it("says npx cannot fetch the package yet and gives the bin path to run with node, or npm link", () => {
    const text = notOnRegistryNote("/opt/cmb/bin/chat-mcp-bridge.js").join("\n");
    expect(text).toContain("not on the npm registry yet");
    expect(text).toContain('{"command":"node","args":["/opt/cmb/bin/chat-mcp-bridge.js","<mcp-url>"]}');
    expect(text).toContain("`npm link`");
    expect(text).toContain('{"command":"chat-mcp-bridge","args":["<mcp-url>"]}');
  });

  it("from an installed package: no `npm link`, the installed bin to run with node", () => {
    const text = notOnRegistryNote("/app/node_modules/chat-mcp-bridge/bin/chat-mcp-bridge.js", {
      checkout: false,
    }).join("\n");
    expect(text).not.toContain("npm link");
    expect(text).not.toContain("checkout");
    expect(text).toContain(
      '{"command":"node","args":["/app/node_modules/chat-mcp-bridge/bin/chat-mcp-bridge.js","<mcp-url>"]}',
    );
  });
});
