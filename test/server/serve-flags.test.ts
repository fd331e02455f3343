/** `chat-cli serve --token-ttl <s> --mcp-era <era>`: the flags reach startReferenceServer (spawns the built bin). */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, cleanEnv } from "../cli/helpers.js";

import { signInRaw } from "./oauth/helpers.js";

async function startServe(
  args: string[],
): Promise<{ url: string; mcpUrl: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, "--json", "serve", "--port", "0", ...args], {
    env: cleanEnv(),
  });
  const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
  // `serve --json` prints one line once it listens; the wait ends at that line or at the process's end.
  const stdout = await new Promise<string>((done) => {
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      if (text.includes("}\n")) done(text);
    });
    child.on("close", () => done(text));
  });
  const printed = JSON.parse(stdout) as { url: string; mcpUrl: string };
  return {
    ...printed,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

describe("chat-cli serve flags", () => {
  it("--token-ttl shortens access tokens; --mcp-era modern refuses a 2025 initialize", async () => {
    const server = await startServe(["--auto-approve", "acme", "--token-ttl", "7", "--mcp-era", "modern"]);
    try {
      const { tokens } = await signInRaw(server.url, { resource: server.mcpUrl });
      expect(tokens.expires_in).toBe(7);
      const response = await fetch(server.mcpUrl, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        }),
      });
      const body = (await response.json()) as { error?: { code: number } };
      expect(body.error?.code).toBe(-32022);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it("--dpop required reaches the server: its metadata says bound tokens are required", async () => {
    const server = await startServe(["--auto-approve", "acme", "--dpop", "required"]);
    try {
      const resource = (await (
        await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)
      ).json()) as Record<string, unknown>;
      expect(resource.dpop_bound_access_tokens_required).toBe(true);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it("refuses an unknown --mcp-era with a usage error", async () => {
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--mcp-era", "future"], {
      env: cleanEnv(),
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((done) => child.on("close", (exit) => done(exit)));
    expect(code).toBe(2);
    expect(stderr).toMatch(/both, modern or legacy/);
  });
});
