/**
 * chat-cli and a browser: signing in through the loopback callback listener (a port) with the fixture browser or
 * $BROWSER, Ctrl-C while a sign-in waits, what stored logins then do (whoami, logout; the bridge's logout too), and
 * --web/--open starting $BROWSER as a process. Every other command test runs in-process (the other test/cli files).
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, watch } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BRIDGE_BIN } from "../bridge/fixtures/spawn-bridge.js";
import { BIN, type CliResult, cleanEnv, jsonOf, ROOT, runCli, runProcess } from "./helpers.js";

const HTTP_BROWSER = join(ROOT, "test/auth/fixtures/http-browser.mjs");
const RECORD_ARGS = join(ROOT, "test/auth/fixtures/record-args.mjs");

let server: ReferenceServer;

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, host: "127.0.0.1", autoApprove: "acme" });
});

afterAll(async () => {
  await server?.close();
});

/** `login --no-browser`, with `onUrl` called once the sign-in URL is printed. */
function loginPrintingUrl(
  env: Record<string, string>,
  onUrl: (url: string, child: ReturnType<typeof spawn>) => void,
): Promise<CliResult & { printedUrl: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, "--base-url", server.url, "login", "--no-browser"], { env });
    let stdout = "";
    let stderr = "";
    let printedUrl = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`login did not finish\n${stderr}`));
    }, 20_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const found = /sign in at \S+: (https?:\/\/\S+)/.exec(stderr);
      if (found?.[1] && !printedUrl) {
        printedUrl = found[1];
        onUrl(printedUrl, child);
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, printedUrl });
    });
  });
}

/** `login --no-browser`: waits for the printed URL, then "visits" it with the headless browser fixture. */
function loginWithoutBrowser(env: Record<string, string>): Promise<CliResult & { printedUrl: string }> {
  return loginPrintingUrl(env, (url) => {
    spawn(process.execPath, [HTTP_BROWSER, url], { stdio: "ignore" });
  });
}

describe("login --no-browser, whoami, logout", () => {
  it("prints the sign-in URL; once approved, whoami shows the account and where the token is kept", async () => {
    const env = cleanEnv();
    const login = await loginWithoutBrowser(env);
    expect(login.printedUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(login.code).toBe(0);
    expect(login.stderr).toMatch(/Signed in to/);

    // The stored login is used when there is no --token and no CHAT_API_KEY.
    const created = await runCli(["--base-url", server.url, "create", "hello", "--json"], { env });
    expect(created.code).toBe(0);

    const who = await runCli(["--base-url", server.url, "whoami", "--json"], { env });
    expect(who.code).toBe(0);
    const identity = jsonOf(who) as { account: string; tokenSource: string; token: string };
    expect(identity.account).toBe("acme");
    expect(["keychain", "file"]).toContain(identity.tokenSource);
    expect(identity.token).toMatch(/^.{4}….{4}$/);

    const plain = await runCli(["--base-url", server.url, "whoami"], { env });
    expect(plain.stdout).toContain("account:\tacme\n");
    expect(plain.stdout).toMatch(/^source:\tchat-cli login, in (the keychain|a file)/m);

    const logout = await runCli(["--base-url", server.url, "logout"], { env });
    expect(logout.code).toBe(0);
    const after = await runCli(["--base-url", server.url, "whoami"], { env });
    expect(after.code).toBe(4);
    expect(after.stderr).toMatch(/chat-cli login/);
  });

  it("login opens $BROWSER (run without a shell, URL last) and completes the sign-in", async () => {
    const env = cleanEnv({ BROWSER: `${process.execPath} ${HTTP_BROWSER}` });
    const login = await runCli(["--base-url", server.url, "login"], { env });
    expect(login.code).toBe(0);
    const who = await runCli(["--base-url", server.url, "whoami"], { env });
    expect(who.code).toBe(0);
  });

  it("whoami right after login names the account chosen at consent, before any chat exists", async () => {
    // A server of its own: the other tests create chats, and this one needs the account to have none.
    const fresh = await startReferenceServer({ port: 0, host: "127.0.0.1", autoApprove: "acme" });
    try {
      const env = cleanEnv({ BROWSER: `${process.execPath} ${HTTP_BROWSER}` });
      const login = await runCli(["--base-url", fresh.url, "login", "--token-store", "file"], { env });
      expect(login.code, login.stderr).toBe(0);
      const list = await runCli(["--base-url", fresh.url, "list", "--json"], { env });
      expect(list.code, list.stderr).toBe(0);
      expect(jsonOf(list)).toMatchObject({ data: [] });
      const who = await runCli(["--base-url", fresh.url, "whoami", "--json"], { env });
      expect(who.code, who.stderr).toBe(0);
      expect(jsonOf(who)).toMatchObject({ account: "acme", tokenSource: "file" });
      const plain = await runCli(["--base-url", fresh.url, "whoami"], { env });
      expect(plain.stdout).toContain("account:\tacme\n");
    } finally {
      await fresh.close();
    }
  });

  it("login --token-store file keeps the credentials in the 0600 file, and says it signed in once", async () => {
    const env = cleanEnv({ BROWSER: `${process.execPath} ${HTTP_BROWSER}` });
    const login = await runCli(["--base-url", server.url, "login", "--token-store", "file", "--json"], {
      env,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(jsonOf(login)).toMatchObject({ storedIn: "file" });
    expect(login.stderr).not.toMatch(/keychain/i);
    const plain = await runCli(["--base-url", server.url, "login", "--token-store", "file"], { env });
    expect(plain.stderr.match(/signed in/gi), plain.stderr).toHaveLength(1);
  });

  it("login --auth-timeout bounds the wait for the browser, and its message names the flag it has", async () => {
    const env = cleanEnv();
    const login = await runCli(
      ["--base-url", server.url, "login", "--no-browser", "--auth-timeout", "1", "--token-store", "file"],
      { env },
    );
    expect(login.code).not.toBe(0);
    expect(login.stderr).toMatch(/timed out after 1 s/);
    expect(login.stderr).toContain("--auth-timeout");
  });
});

describe("--web and --open: http(s) URLs through $BROWSER, 'Opening <url>' on stderr", () => {
  it("get --web opens the chat URL and preview --open the preview URL", async () => {
    const key = server.apiKeys.acme!;
    const client = new ChatClient({ baseUrl: server.url, token: key });
    const chat = await client.createChat({ message: "hello" });
    const recordFile = join(cleanEnv().CHAT_CONFIG_DIR!, "args.json");
    const env = cleanEnv({
      CHAT_API_KEY: key,
      BROWSER: `${process.execPath} ${RECORD_ARGS}`,
      RECORD_ARGS_FILE: recordFile,
    });

    const web = await runCli(["--base-url", server.url, "get", chat.id, "--web"], { env });
    expect(web.code).toBe(0);
    expect(web.stderr).toContain(`Opening ${chat.url}`);
    await untilFile(recordFile, (text) => text !== "");
    expect(JSON.parse(readFileSync(recordFile, "utf8"))).toEqual([chat.url]);

    const preview = await client.getPreview(chat.id);
    const open = await runCli(["--base-url", server.url, "preview", chat.id, "--open"], { env });
    expect(open.code).toBe(0);
    expect(open.stderr).toContain(`Opening ${preview.url}`);
    await untilFile(recordFile, (text) => text.includes("preview"));
    expect(JSON.parse(readFileSync(recordFile, "utf8"))).toEqual([preview.url]);
  });
});

/**
 * Resolves once the file holds what `ready` accepts: $BROWSER may still be writing it when chat-cli has exited (its
 * opener counts as started once it has not failed for a moment), so the test waits for the write, bounded.
 */
function untilFile(path: string, ready: (text: string) => boolean, timeoutMs = 10_000): Promise<void> {
  const read = () => (existsSync(path) ? readFileSync(path, "utf8") : "");
  if (ready(read())) return Promise.resolve();
  return new Promise((done, fail) => {
    const watcher = watch(dirname(path), () => {
      if (!ready(read())) return;
      clearTimeout(timer);
      watcher.close();
      done();
    });
    const timer = setTimeout(() => {
      watcher.close();
      fail(new Error(`${path} was not written in ${timeoutMs} ms: ${JSON.stringify(read())}`));
    }, timeoutMs);
    // Written between the first read and the watch.
    if (ready(read())) {
      clearTimeout(timer);
      watcher.close();
      done();
    }
  });
}

describe("login --callback-path, --auth-success-url", () => {
  it("signs in through the callback at that path, and the browser lands on the success page", async () => {
    const landings: string[] = [];
    const successPage = createServer((request, response) => {
      landings.push(request.url ?? "");
      response.end("welcome");
    });
    await new Promise<void>((resolve) => successPage.listen(0, "127.0.0.1", resolve));
    const successUrl = `http://127.0.0.1:${(successPage.address() as AddressInfo).port}/signed-in`;
    const env = cleanEnv({ BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"` });
    try {
      const login = await runCli(
        [
          ...["--base-url", server.url, "login", "--token-store", "file"],
          ...["--callback-path", "/oauth/callback", "--auth-success-url", successUrl],
        ],
        { env },
      );
      expect(login.stderr).toMatch(/Signed in to/);
      expect(login.code).toBe(0);
    } finally {
      successPage.close();
    }
    expect(landings).toEqual(["/signed-in"]);
    const auth = join(env.CHAT_CONFIG_DIR!, "auth");
    const file = readdirSync(auth).find((name) => name.endsWith(".json") && !name.includes(".keychain"));
    const stored = readFileSync(join(auth, file!), "utf8");
    expect(JSON.parse(stored).client.redirect_uris[0]).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/oauth\/callback$/,
    );
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" });
}

describe("login --no-browser, as a process", () => {
  it("Ctrl-C while it waits for the browser exits 130 and leaves no .lock file", async () => {
    const env = cleanEnv();
    const result = await loginPrintingUrl(env, (_url, child) => child.kill("SIGINT"));
    expect(result.code, result.stderr).toBe(130);
    expect(filesUnder(env.CHAT_CONFIG_DIR as string).filter((name) => name.endsWith(".lock"))).toEqual([]);
  });

  it("success names the account or team chosen at consent", async () => {
    const env = cleanEnv();
    const result = await loginPrintingUrl(env, (url) => {
      spawn(process.execPath, [HTTP_BROWSER, url], { stdio: "ignore" });
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Signed in to http:\/\/127\.0\.0\.1:\d+ as acme\./);
  });
});

describe("logout of a URL that matches no stored login (chat-cli's: no-false-success.test.ts, in-process)", () => {
  it("chat-mcp-bridge: exit 1 for a trailing-slash typo, listing the stored login; the right URL removes it", async () => {
    const env = cleanEnv({ BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"` });
    const bridge = (...args: string[]) =>
      runProcess(process.execPath, [BRIDGE_BIN, ...args, "--token-store", "file"], { env });
    expect((await bridge("login", server.mcpUrl)).code).toBe(0);

    const typo = await bridge("logout", `${server.mcpUrl}/`);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe(
      `chat-mcp-bridge: no stored login for ${server.mcpUrl}/, so nothing was removed (the MCP URL, --header ` +
        `names and --profile must match the sign-in); stored logins: ${server.mcpUrl}\n`,
    );

    const real = await bridge("logout", server.mcpUrl);
    expect(real.code).toBe(0);
    expect(real.stderr).toContain(`signed out of ${server.mcpUrl}; its stored login`);
  });
});

describe('"Opening <url>" when no browser can open it', () => {
  const cases = {
    "a $BROWSER command that does not exist": join(ROOT, "no-such-browser"),
    "a $BROWSER that finds no browser (exits 1 at once)": "false",
  };
  for (const [name, browser] of Object.entries(cases)) {
    it(`${name}: preview --open and get --web say so, print the URL and exit 1`, async () => {
      const key = server.apiKeys.acme!;
      const chat = await new ChatClient({ baseUrl: server.url, token: key }).createChat({
        message: "hello",
      });
      const env = cleanEnv({ CHAT_API_KEY: key, BROWSER: browser });
      for (const args of [
        ["preview", chat.id, "--open"],
        ["get", chat.id, "--web"],
      ]) {
        const result = await runCli(["--base-url", server.url, ...args], { env });
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/error: could not open a browser: /);
        expect(result.stderr).toMatch(/Open the URL yourself: http:\/\/127\.0\.0\.1:\d+\/\S+\n/);
      }
    });
  }
});

describe("a sign-in through a headless $BROWSER (shared by chat-cli and the bridge)", () => {
  it('does not say "Opening your browser"; it names $BROWSER and still prints the URL', async () => {
    const env = cleanEnv({ BROWSER: `${process.execPath} ${HTTP_BROWSER}` });
    const result = await runCli(["--base-url", server.url, "login"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/Opening your browser/);
    expect(result.stderr).toMatch(/\$BROWSER[^\n]*\n {2}http:\/\/127\.0\.0\.1:\d+\//);
  });
});
