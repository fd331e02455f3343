/** chat-cli serve: starts the reference server, prints its URLs, keys and client configs, stops cleanly on SIGTERM. */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, cleanEnv } from "./helpers.js";

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
    expect(stdout).toContain(
      `{"mcpServers":{"chat":{"command":"npx","args":["-y","chat-mcp-bridge","${baseUrl}/mcp"]}}}`,
    );
    expect(stdout).toContain(`{"mcpServers":{"chat":{"url":"${baseUrl}/mcp"}}}`);
    const acmeKey = /^\s+acme\s+(\S+)/m.exec(stdout)?.[1];
    expect(acmeKey).toBeDefined();
    const response = await fetch(`${baseUrl}/v2/chats`, { headers: { authorization: `Bearer ${acmeKey}` } });
    expect(response.status).toBe(200);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
