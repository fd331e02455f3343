/** Commands that used to claim success for nothing: logout of an unknown URL, "Opening" without a browser, a busy port (a task of another type: resolve-wrong-kind.test.ts, in-process). */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { BRIDGE_BIN } from "../bridge/fixtures/spawn-bridge.js";
import { useReferenceServer } from "../server/helpers.js";
import { cleanEnv, ROOT, runCli, runProcess } from "./helpers.js";

const HTTP_BROWSER = join(ROOT, "test/auth/fixtures/http-browser.mjs");

const running = useReferenceServer({ autoApprove: "acme" });

describe("logout of a URL that matches no stored login", () => {
  it("chat-cli: exit 1, nothing removed, the stored logins listed; the real one still works", async () => {
    const env = cleanEnv({ BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"` });
    expect((await runCli(["--base-url", running.server.url, "login"], { env })).code).toBe(0);

    const typo = await runCli(["--base-url", `${running.server.url}/api`, "logout"], { env });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain(`no stored login for ${running.server.url}/api, so nothing was removed`);
    expect(typo.stderr).toContain(
      `Stored logins (chat-cli signs in to <base URL>/v2): ${running.server.url}/v2`,
    );
    expect(typo.stderr).not.toMatch(/Signed out/);
    expect((await runCli(["--base-url", running.server.url, "whoami"], { env })).code).toBe(0);

    const real = await runCli(["--base-url", running.server.url, "logout"], { env });
    expect(real.code).toBe(0);
    expect(real.stderr).toContain(`Signed out of ${running.server.url}; its stored login was removed.`);
    const again = await runCli(["--base-url", running.server.url, "logout"], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("There are no stored logins.");
  });

  it("chat-mcp-bridge: exit 1 for a trailing-slash typo, listing the stored login; the right URL removes it", async () => {
    const env = cleanEnv({ BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"` });
    const bridge = (...args: string[]) =>
      runProcess(process.execPath, [BRIDGE_BIN, ...args, "--token-store", "file"], { env });
    expect((await bridge("login", running.server.mcpUrl)).code).toBe(0);

    const typo = await bridge("logout", `${running.server.mcpUrl}/`);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe(
      `chat-mcp-bridge: no stored login for ${running.server.mcpUrl}/, so nothing was removed (the MCP URL, --header ` +
        `names and --profile must match the sign-in); stored logins: ${running.server.mcpUrl}\n`,
    );

    const real = await bridge("logout", running.server.mcpUrl);
    expect(real.code).toBe(0);
    expect(real.stderr).toContain(`signed out of ${running.server.mcpUrl}; its stored login`);
  });
});

describe('"Opening <url>" when no browser can open it', () => {
  const cases = {
    "a $BROWSER command that does not exist": join(ROOT, "no-such-browser"),
    "a $BROWSER that finds no browser (exits 1 at once)": "false",
  };
  for (const [name, browser] of Object.entries(cases)) {
    it(`${name}: preview --open and get --web say so, print the URL and exit 1`, async () => {
      const key = running.server.apiKeys.acme!;
      const chat = await new ChatClient({ baseUrl: running.server.url, token: key }).createChat({
        message: "hello",
      });
      const env = cleanEnv({ CHAT_API_KEY: key, BROWSER: browser });
      for (const args of [
        ["preview", chat.id, "--open"],
        ["get", chat.id, "--web"],
      ]) {
        const result = await runCli(["--base-url", running.server.url, ...args], { env });
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/error: could not open a browser: /);
        expect(result.stderr).toMatch(/Open the URL yourself: http:\/\/127\.0\.0\.1:\d+\/\S+\n/);
      }
    });
  }
});

describe("serve on a busy port", () => {
  it("says the port is in use and suggests --port 0", async () => {
    const port = new URL(running.server.url).port;
    const result = await runCli(["serve", "--port", port], { env: cleanEnv(), timeoutMs: 15_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    expect(result.stderr).toContain("--port 0");
    expect(result.stderr).not.toMatch(/EADDRINUSE|--debug/);
  });
});
