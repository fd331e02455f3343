/** chat-cli on a pseudo-terminal: resolve asks (default No), tables and colour appear, NO_COLOR turns colour off. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { startReferenceServer } from "../../src/server/index.js";
import { BIN, type CliResult, cleanEnv, runCli, runProcess, stripAnsi } from "./helpers.js";
import { needsPty, PTY_RUN, ptyPython } from "./pty.js";

let server: Awaited<ReturnType<typeof startReferenceServer>>;
let client: ChatClient;
let env: Record<string, string>;

/** Runs chat-cli on a PTY; once `prompt` shows, types `answer` and Enter. Output is stdout and stderr together. */
function onTerminal(args: string[], prompt = "", answer = "", extraEnv = {}): Promise<CliResult> {
  return runProcess(ptyPython!, [PTY_RUN, prompt, answer, "--", process.execPath, BIN, ...args], {
    env: { ...env, ...extraEnv },
  });
}

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, host: "127.0.0.1" });
  client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme! });
  env = cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.acme!, TERM: "xterm" });
});

afterAll(async () => {
  await server?.close();
});

describe("resolve with no flag on a terminal", needsPty, () => {
  it("shows what is pending and asks; Enter (default No) sends nothing", async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await onTerminal(["resolve", chat.id], "Resolve? [y/N]", "");
    const output = stripAnsi(result.stdout);
    expect(result.code).toBe(0);
    expect(output).toMatch(/integrations:\s+Neon/);
    expect(output).toContain("Nothing sent.");
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it('"y" resolves what is pending', async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await onTerminal(["resolve", chat.id], "Resolve? [y/N]", "y");
    expect(result.code).toBe(0);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("permissions");
    const again = await onTerminal(["resolve", chat.id], "Resolve? [y/N]", "y");
    expect(stripAnsi(again.stdout)).toContain("/scripts/setup-db.sql");
    expect(again.code).toBe(0);
    expect(await client.getPendingTask(chat.id)).toBeNull();
  });

  it("Ctrl-C at the prompt is an interruption (exit 130) and sends nothing", async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await onTerminal(["resolve", chat.id], "Resolve? [y/N]", "\u0003");
    expect(result.code, result.stdout).toBe(130);
    expect(stripAnsi(result.stdout)).toMatch(/nothing (was )?sent/i);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("off a terminal the same command is a usage error (exit 2) and sends nothing", async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await runCli(["resolve", chat.id], { env });
    expect(result.code).toBe(2);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });
});

describe("tables and colour on a terminal", needsPty, () => {
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
