/** login / whoami / logout through the shared OAuth client, and opening URLs (--web, --open) through $BROWSER. */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { startReferenceServer } from "../../src/server/index.js";
import { BIN, type CliResult, cleanEnv, jsonOf, ROOT, runCli } from "./helpers.js";

const HTTP_BROWSER = join(ROOT, "test/auth/fixtures/http-browser.mjs");
const RECORD_ARGS = join(ROOT, "test/auth/fixtures/record-args.mjs");

let server: Awaited<ReturnType<typeof startReferenceServer>>;

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, host: "127.0.0.1", autoApprove: "acme" });
});

afterAll(async () => {
  await server?.close();
});

/** `login --no-browser`: waits for the printed URL, then "visits" it with the headless browser fixture. */
function loginWithoutBrowser(env: Record<string, string>): Promise<CliResult & { printedUrl: string }> {
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
      const found = /(https?:\/\/\S+)/.exec(stderr);
      if (found && !printedUrl) {
        printedUrl = found[1]!;
        spawn(process.execPath, [HTTP_BROWSER, printedUrl], { stdio: "ignore" });
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, printedUrl });
    });
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
    const bad = await runCli(["--base-url", server.url, "login", "--auth-timeout", "soon"], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/positive number of seconds/);
  });

  it("whoami names the source of a --token or CHAT_API_KEY, masked", async () => {
    const key = server.apiKeys.acme!;
    const env = cleanEnv({ CHAT_API_KEY: key });
    const fromEnv = await runCli(["--base-url", server.url, "whoami"], { env });
    expect(fromEnv.stdout).toContain("source:\tCHAT_API_KEY environment variable\n");
    expect(fromEnv.stdout).toContain(`token:\t${key.slice(0, 4)}…${key.slice(-4)}\n`);
    expect(fromEnv.stdout).not.toContain(key);
    const fromFlag = await runCli(["--base-url", server.url, "--token", key, "whoami", "--json"], { env });
    expect(jsonOf(fromFlag)).toMatchObject({ tokenSource: "flag" });
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
    await waitFor(() => existsSync(recordFile));
    expect(JSON.parse(readFileSync(recordFile, "utf8"))).toEqual([chat.url]);

    const preview = await client.getPreview(chat.id);
    const open = await runCli(["--base-url", server.url, "preview", chat.id, "--open"], { env });
    expect(open.code).toBe(0);
    expect(open.stderr).toContain(`Opening ${preview.url}`);
    await waitFor(() => readFileSync(recordFile, "utf8").includes("preview"));
    expect(JSON.parse(readFileSync(recordFile, "utf8"))).toEqual([preview.url]);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 50));
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

  it("refuses a callback path that is not absolute, with exit 2", async () => {
    const login = await runCli(["--base-url", server.url, "login", "--callback-path", "oauth"], {
      env: cleanEnv(),
    });
    expect(login.code).toBe(2);
    expect(login.stderr).toMatch(/--callback-path.*start with/);
  });
});
