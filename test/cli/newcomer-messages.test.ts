/** Issue 40, chat-cli: what it says when a server cannot be reached, at Ctrl-C, after login, and in its help. */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import type { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everyInterfaceNote } from "../../src/cli/commands/serve.js";
import { reportError } from "../../src/cli/run.js";
import { ChatConnectionError } from "../../src/client/errors.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BIN, type CliResult, cleanEnv, ROOT, recordingIo, runCli } from "./helpers.js";

const HTTP_BROWSER = join(ROOT, "test/auth/fixtures/http-browser.mjs");

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0, host: "127.0.0.1", autoApprove: "acme" });
});
afterAll(async () => {
  await server?.close();
});

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

function expectCannotReach(result: CliResult, url: string): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines[0]).toMatch(new RegExp(`^error: cannot reach ${url.replace(/[.:/]/g, "\\$&")}`));
  // One hint, said once.
  expect(lines).toHaveLength(2);
  expect(result.stderr.match(/chat-cli serve/g) ?? []).toHaveLength(1);
}

describe("a server that cannot be reached: one judgement, exit 1, one hint", () => {
  it("with a key set", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await runCli(["--base-url", url, "--token", "chat_sk_x", "list"]);
    expectCannotReach(result, url);
  });

  it("with no key set: cannot reach, not 'not signed in'", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await runCli(["--base-url", url, "list"]);
    expectCannotReach(result, url);
  });

  it("login", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await runCli(["--base-url", url, "login", "--no-browser"]);
    expectCannotReach(result, url);
  });

  it("a host name that does not resolve says so, and does not suggest chat-cli serve", async () => {
    const lookup = Object.assign(new Error("getaddrinfo ENOTFOUND nosuchhost.invalid"), {
      code: "ENOTFOUND",
    });
    const error = new ChatConnectionError("GET /v2/chats could not reach http://nosuchhost.invalid", {
      cause: new TypeError("fetch failed", { cause: lookup }),
    });
    const io = recordingIo();
    const code = await reportError(error, io, { debug: false, baseUrl: "http://nosuchhost.invalid" });
    expect(code).toBe(1);
    expect(io.err).toMatch(
      /^error: cannot reach http:\/\/nosuchhost\.invalid: .*nosuchhost\.invalid.*ENOTFOUND/,
    );
    expect(io.err).toMatch(/host name/);
    expect(io.err).not.toMatch(/chat-cli serve/);
    expect(io.err.trimEnd().split("\n")).toHaveLength(2);
  });
});

/** `login --no-browser`, with `onUrl` called once the sign-in URL is printed. */
function login(
  env: Record<string, string>,
  onUrl: (url: string, child: ReturnType<typeof spawn>) => void,
): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, "--base-url", server.url, "login", "--no-browser"], { env });
    let stdout = "";
    let stderr = "";
    let seen = false;
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
      if (found?.[1] && !seen) {
        seen = true;
        onUrl(found[1], child);
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" });
}

describe("login", () => {
  it("Ctrl-C while it waits for the browser exits 130 and leaves no .lock file", async () => {
    const env = cleanEnv();
    const result = await login(env, (_url, child) => child.kill("SIGINT"));
    expect(result.code, result.stderr).toBe(130);
    expect(filesUnder(env.CHAT_CONFIG_DIR as string).filter((name) => name.endsWith(".lock"))).toEqual([]);
  });

  it("success names the account or team chosen at consent", async () => {
    const env = cleanEnv();
    const result = await login(env, (url) => {
      spawn(process.execPath, [HTTP_BROWSER, url], { stdio: "ignore" });
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Signed in to http:\/\/127\.0\.0\.1:\d+ as acme\./);
  });
});

describe("resolve --integrations with the wrong case", () => {
  it("suggests the requested name", async () => {
    const env = cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.acme as string });
    const created = await runCli(["create", "database please", "--json"], { env });
    const chatId = (JSON.parse(created.stdout) as { id: string }).id;
    const result = await runCli(["resolve", chatId, "--integrations", "neon"], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Did you mean Neon\?/);
  });
});

describe("sso_required", () => {
  it("says to open this link, and prints it", async () => {
    const result = await runCli([
      "--base-url",
      server.url,
      "--token",
      server.apiKeys["secure-corp"] as string,
      "list",
    ]);
    expect(result.code).toBe(4);
    expect(result.stderr).not.toMatch(/reauthUrl/);
    expect(result.stderr).toMatch(/[Oo]pen this link[^\n]*\n?[^\n]*https?:\/\/127\.0\.0\.1:\d+\/sso\//);
  });
});

describe("serve on a busy port", () => {
  let other: Server;
  beforeAll(async () => {
    other = createServer();
    await new Promise<void>((done) => other.listen(0, "127.0.0.1", done));
  });
  afterAll(() => new Promise<void>((done) => other.close(() => done())));

  it("does not assume the other program is a chat server", async () => {
    const { port } = other.address() as { port: number };
    const result = await runCli(["serve", "--host", "127.0.0.1", "--port", String(port)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/already in use/);
    expect(result.stderr).not.toMatch(/Use that one/);
    expect(result.stderr).toMatch(/--port 0/);
  });
});

describe("subcommand help", () => {
  it("list --help shows --json", async () => {
    const result = await runCli(["list", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/--json/);
  });

  it("send --help describes chatId", async () => {
    const result = await runCli(["send", "--help"]);
    expect(result.stdout).toMatch(/^ {2}chatId +\S/m);
  });
});

describe("serve --host 0.0.0.0", () => {
  const interfaces = {
    lo: [{ address: "127.0.0.1", family: "IPv4", internal: true }],
    eth0: [
      { address: "fe80::1", family: "IPv6", internal: false },
      { address: "192.168.1.5", family: "IPv4", internal: false },
    ],
  } as unknown as ReturnType<typeof networkInterfaces>;

  it("warns that every interface listens, and prints a URL other machines can reach", () => {
    const lines = everyInterfaceNote("0.0.0.0", 8787, interfaces).join("\n");
    expect(lines).toMatch(/every network interface/);
    expect(lines).toContain("http://192.168.1.5:8787");
  });

  it("says nothing for a loopback host", () => {
    expect(everyInterfaceNote("127.0.0.1", 8787, interfaces)).toEqual([]);
  });
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
