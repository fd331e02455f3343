/** Shared by the chat-cli tests: run the built bin as a process, and start the reference server on a free port. */
import { spawn } from "node:child_process";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join, resolve } from "node:path";
import type { CliIo } from "../../src/cli/io.js";
import type { RunSeams } from "../../src/cli/run.js";
import { scratchDir } from "../support/scratch-dir.js";

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
}

/** A clean environment: no token, no browser, no colour forcing, config in a fresh temp dir (removed after the file). */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ["CHAT_API_KEY", "CHAT_API_URL", "CHAT_MCP_URL", "BROWSER", "NO_COLOR", "FORCE_COLOR"]) {
    delete env[name];
  }
  env.CHAT_CONFIG_DIR = scratchDir("chat-cli-test-");
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
 * A TCP pass-through in front of `target` (a server's URL) that notices requests of a method: a test waits for "the
 * CLI's POST reached the server" (`requested`) and "the server answered it" (`answered`) as events instead of
 * guessing a delay. A connection whose client has gone (an interrupted CLI) stays open to the server until the
 * server answers, as the server sees no difference: its answer is read here and dropped.
 */
export async function requestWatch(
  target: string,
  method: string,
): Promise<{ url: string; requested: Promise<void>; answered: Promise<void>; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  let noticed: () => void = () => {};
  const requested = new Promise<void>((resolve) => {
    noticed = resolve;
  });
  let heard: () => void = () => {};
  const answered = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const connections = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const upstream = createConnection({ host: hostname, port: Number(port) });
    connections.add(upstream);
    let asked = false;
    socket.on("data", (chunk: Buffer) => {
      if (chunk.toString("latin1").startsWith(`${method} `)) {
        asked = true;
        noticed();
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (asked) heard();
      if (!socket.destroyed) socket.write(chunk);
    });
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket
      .on("error", () => {})
      .on("close", () => {
        // The server still owes an answer to the method watched: keep listening for it.
        if (!asked) upstream.destroy();
      });
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  const url = `${new URL(target).protocol}//127.0.0.1:${address.port}${new URL(target).pathname.replace(/\/$/, "")}`;
  return {
    url,
    requested,
    answered,
    close: () => {
      for (const connection of connections) connection.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
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

/** What an in-process run is given besides argv and the streams (src/cli/run.ts `RunSeams`). */
export type InProcessSeams = Omit<RunSeams, "env">;

/**
 * chat-cli in this process: `run(argv, io, seams)` with fake streams, the given environment and seams (the reference
 * server's fetch, an emitter for Ctrl-C); no port, no spawned bin (gh's in-process command tests).
 */
export function runInProcess(
  env: Record<string, string | undefined> = cleanEnv(),
  seams: InProcessSeams = {},
) {
  return async (args: string[], io = recordingIo()): Promise<CliResult & { io: typeof io }> => {
    const { run } = await import("../../src/cli/run.js");
    const code = await run(args, io, { env, ...seams });
    return { code, stdout: io.out, stderr: io.err, io };
  };
}

/** The reference server's handler and chat-cli in one process, addressed with `--base-url`. */
export function inProcessCli(
  server: { url: string; fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response> },
  env: Record<string, string | undefined> = cleanEnv(),
  seams: InProcessSeams = {},
) {
  const cli = runInProcess(env, { fetch: server.fetch, ...seams });
  return (args: string[], io = recordingIo()) => cli(["--base-url", server.url, ...args], io);
}

/**
 * A fetch that fails as undici's does when nothing listens at the address (ECONNREFUSED): the in-process stand-in
 * for a server that cannot be reached (test/cli/process.test.ts dials a closed port for real).
 */
export async function refusingFetch(input: string | URL | Request): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const cause = Object.assign(new Error(`connect ECONNREFUSED ${url.hostname}:${port}`), {
    code: "ECONNREFUSED",
    errno: -111,
    syscall: "connect",
    address: url.hostname,
    port: Number(port),
  });
  throw new TypeError("fetch failed", { cause });
}
