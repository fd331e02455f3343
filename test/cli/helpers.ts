/** Shared by the chat-cli tests: run the built bin as a process, and start the reference server on a free port. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll } from "vitest";
import type { CliIo } from "../../src/cli/io.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const BIN = join(ROOT, "bin/chat-cli.js");
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
  /** Sends SIGINT (what Ctrl-C sends) this long after the start. */
  sigintAfterMs?: number;
  /** Sends SIGINT when this settles (an event, such as the request reaching the server: see `requestWatch`). */
  sigintOn?: Promise<unknown>;
}

/** Config folders cleanEnv made in this test file: removed after its last test (the suite lists any leftover). */
const configDirs: string[] = [];
afterAll(() => {
  for (const dir of configDirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A clean environment: no token, no browser, no colour forcing, config in a fresh temp dir (removed after the file). */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ["CHAT_API_KEY", "CHAT_API_URL", "CHAT_MCP_URL", "BROWSER", "NO_COLOR", "FORCE_COLOR"]) {
    delete env[name];
  }
  env.CHAT_CONFIG_DIR = mkdtempSync(join(tmpdir(), "chat-cli-test-"));
  configDirs.push(env.CHAT_CONFIG_DIR);
  Object.assign(env, extra);
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** Runs `node bin/chat-cli.js ...args` asynchronously (the server under test lives in this process). */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runProcess(process.execPath, [BIN, ...args], options);
}

export function runProcess(command: string, args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: ROOT, env: options.env ?? cleanEnv(), stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    if (options.sigintAfterMs !== undefined) setTimeout(() => child.kill("SIGINT"), options.sigintAfterMs);
    options.sigintOn?.then(
      () => child.kill("SIGINT"),
      () => child.kill("SIGINT"),
    );
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`timed out: ${args.join(" ")}\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Parses stdout as JSON, failing with the whole output when it is not. */
export function jsonOf(result: CliResult): unknown {
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

export function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "");
}

/** Lines of stderr that are not empty. */
export function stderrLines(result: CliResult): string[] {
  return result.stderr.split("\n").filter((line) => line.trim() !== "");
}

/**
 * A TCP pass-through in front of `target` (a server's URL) that notices the first request of a method: a test
 * waits for "the CLI's POST reached the server" as an event instead of guessing a delay.
 */
export async function requestWatch(
  target: string,
  method: string,
): Promise<{ url: string; requested: Promise<void>; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  let noticed: () => void = () => {};
  const requested = new Promise<void>((resolve) => {
    noticed = resolve;
  });
  const server: Server = createServer((socket) => {
    const upstream = createConnection({ host: hostname, port: Number(port) });
    socket.once("data", (head: Buffer) => {
      if (head.toString("latin1").startsWith(`${method} `)) noticed();
    });
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  const url = `${new URL(target).protocol}//127.0.0.1:${address.port}${new URL(target).pathname.replace(/\/$/, "")}`;
  return {
    url,
    requested,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A `CliIo` that records stdout and stderr, not a TTY, for commands called as plain functions. */
export function recordingIo(overrides: Partial<CliIo> = {}): CliIo & { out: string; err: string } {
  const io = {
    out: "",
    err: "",
    stdout: (text: string) => {
      io.out += text;
    },
    stderr: (text: string) => {
      io.err += text;
    },
    isTTY: false,
    interactive: false,
    color: false,
    errColor: false,
    prompt: async () => "",
    spinner: () => ({ stop() {} }),
    ...overrides,
  };
  return io;
}

/** The reference server's handler and chat-cli in one process: no port, no spawned bin (gh's in-process command tests). */
export function inProcessCli(
  server: { url: string; fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response> },
  env: Record<string, string | undefined> = cleanEnv(),
) {
  return async (args: string[], io = recordingIo()): Promise<CliResult & { io: typeof io }> => {
    const { run } = await import("../../src/cli/run.js");
    const code = await run(["--base-url", server.url, ...args], io, { env, fetch: server.fetch });
    return { code, stdout: io.out, stderr: io.err, io };
  };
}
