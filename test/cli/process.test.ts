/**
 * chat-cli as a process, where the process is the subject: the bin's own `-V`, a real pseudo-terminal (prompt, Ctrl-C,
 * tables and colour, NO_COLOR, the spinner), `serve` listening on a port and stopping on SIGTERM, a port already in
 * use, and a connection refused by a closed port. Every other command test runs in-process (the other test/cli files).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { useReferenceServer } from "../server/helpers.js";
import {
  BIN,
  type CliResult,
  cleanEnv,
  ROOT,
  requestWatch,
  runCli,
  runProcess,
  stripAnsi,
} from "./helpers.js";
import { needsPty, PTY_RUN, ptyPython } from "./pty.js";

const running = useReferenceServer();

describe("-V from the bin", () => {
  it("prints the package version, exit 0, before the program loads", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const result = await runCli(["-V"]);
    expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });
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

describe("a server that cannot be reached: a connection refused for real", () => {
  it("with a key set: one judgement, exit 1, one hint", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await runCli(["--base-url", url, "--token", "chat_sk_x", "list"]);
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^error: cannot reach ${url.replace(/[.:/]/g, "\\$&")}`));
    // One hint, said once.
    expect(lines).toHaveLength(2);
    expect(result.stderr.match(/chat-cli serve/g) ?? []).toHaveLength(1);
  });
});

describe("on a pseudo-terminal", needsPty, () => {
  let client: ChatClient;
  let env: Record<string, string>;
  beforeAll(() => {
    client = new ChatClient({ baseUrl: running.server.url, token: running.server.apiKeys.acme! });
    env = cleanEnv({
      CHAT_API_URL: running.server.url,
      CHAT_API_KEY: running.server.apiKeys.acme!,
      TERM: "xterm",
    });
  });

  /** Runs chat-cli on a PTY; once `prompt` shows, types `answer` and Enter. Output is stdout and stderr together. */
  function onTerminal(args: string[], prompt = "", answer = "", extraEnv = {}): Promise<CliResult> {
    return runProcess(ptyPython!, [PTY_RUN, prompt, answer, "--", process.execPath, BIN, ...args], {
      env: { ...env, ...extraEnv },
    });
  }

  it("Ctrl-C at resolve's prompt is an interruption (exit 130) and sends nothing", async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await onTerminal(["resolve", chat.id], "Resolve? [y/N]", "\u0003");
    expect(result.code, result.stdout).toBe(130);
    expect(stripAnsi(result.stdout)).toMatch(/nothing (was )?sent/i);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("list prints a table with headers, coloured", async () => {
    const chat = await client.createChat({ message: "hello", title: "Table row" });
    const result = await onTerminal(["list", "--limit", "1"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("\u001b[");
    const lines = stripAnsi(result.stdout).split(/\r?\n/);
    expect(lines[0]).toMatch(/^ID\s+UPDATED\s+TITLE$/);
    expect(lines[1]).toMatch(new RegExp(`^${chat.id}\\s+\\S+\\s+Table row$`));
  });

  it("NO_COLOR and --no-color turn colour off", async () => {
    expect(
      (await onTerminal(["list", "--limit", "1"], undefined, undefined, { NO_COLOR: "1" })).stdout,
    ).not.toContain("\u001b[");
    expect((await onTerminal(["list", "--limit", "1", "--no-color"])).stdout).not.toContain("\u001b[");
  });
});

describe("the spinner on a terminal while the assistant is slow", needsPty, () => {
  /** Long enough that the elapsed time shows (after 3 s) and the test interrupts the wait well before it ends. */
  const ASSISTANT_DELAY_MS = 6000;
  let slow: ReferenceServer;
  beforeAll(async () => {
    slow = await startReferenceServer({ assistantDelayMs: ASSISTANT_DELAY_MS });
  });
  afterAll(() => slow?.close());

  it("shows the elapsed time after a few seconds; Ctrl-C there exits 130, and the chat is still created", async () => {
    const client = new ChatClient({ baseUrl: slow.url, token: slow.apiKeys.personal as string });
    const watch = await requestWatch(slow.url, "POST");
    const env = cleanEnv({ CHAT_API_URL: watch.url, CHAT_API_KEY: slow.apiKeys.personal, TERM: "xterm" });
    // Ctrl-C is typed once the elapsed time shows (an event the pty watches for, not a guessed delay).
    const result = await runProcess(
      ptyPython as string,
      [PTY_RUN, "Waiting for the assistant… 3s", "\u0003", "--", process.execPath, BIN, "create", "slow one"],
      { env, timeoutMs: 25_000 },
    );
    const output = stripAnsi(result.stdout);
    expect(output).toContain("Waiting for the assistant… 3s");
    expect(output).toContain(
      "interrupted while waiting for the assistant; the request was sent and may still complete",
    );
    // The chat only shows in `list` once the assistant has answered: the advice says so, lest a user create it twice.
    expect(output).toMatch(/may still complete for a while/);
    expect(output).toContain(
      "`chat-cli list --limit 1` shows it only once the assistant has answered, which can take minutes: look there before you run this again.",
    );
    expect(result.code).toBe(130);
    // The server goes on: it answers the create although nobody waits for it, and the chat is there.
    await watch.answered.finally(() => watch.close());
    expect((await client.listChats({ limit: 1 })).data[0]?.title).toBe("slow one");
  }, 30_000);
});

describe("serve --port 0", () => {
  it("prints base URL, MCP URL, dev API keys and client configs; the API answers; SIGTERM exits 0", async () => {
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], { env: cleanEnv() });
    let stdout = "";
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    // Printed once it listens: the last line is the remote client config.
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`serve printed no config:\n${stdout}`)), 20_000);
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('{"url"')) {
          clearTimeout(timer);
          done();
        }
      });
      child.on("close", () => {
        clearTimeout(timer);
        fail(new Error(`serve exited:\n${stdout}`));
      });
    });

    const baseUrl = /Base URL:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
    expect(baseUrl).toBeDefined();
    expect(stdout).toContain(`MCP URL:   ${baseUrl}/mcp`);
    // The config that works today, from any folder: this checkout's bin run with node.
    expect(stdout).toContain(
      `{"mcpServers":{"chat":{"command":"node","args":[${JSON.stringify(join(ROOT, "bin", "chat-mcp-bridge.js"))},"${baseUrl}/mcp"]}}}`,
    );
    expect(stdout).toContain(
      `The release on npm: {"mcpServers":{"chat":{"command":"npx","args":["-y","chat-mcp-bridge","${baseUrl}/mcp"]}}}`,
    );
    expect(stdout).toContain(`{"mcpServers":{"chat":{"url":"${baseUrl}/mcp"}}}`);
    // Beside the stdio config: this checkout's bridge run with node or npm link, and the npx config of the release.
    expect(stdout).toContain("This checkout's bridge, from any folder");
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

  it("says the port is in use and suggests --port 0", async () => {
    const port = new URL(running.server.url).port;
    const result = await runCli(["serve", "--port", port], { env: cleanEnv(), timeoutMs: 15_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    expect(result.stderr).toContain("--port 0");
    expect(result.stderr).not.toMatch(/EADDRINUSE|--debug/);
  });
});
