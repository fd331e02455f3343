/** Runs the bridge's relay in the test's own process on paired streams: raw JSON-RPC lines, or behind an SDK Client. */
import { PassThrough } from "node:stream";
import {
  Client,
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { parseBridgeArgs } from "../../src/bridge/command/arguments.js";
import { runRelay } from "../../src/bridge/relay/run.js";
import { scratchDir } from "./scratch-dir.js";

export interface InProcessRelay {
  /** Every line the relay wrote for the client so far. */
  readonly lines: string[];
  /** Everything the relay logged so far (its stderr). */
  stderr(): string;
  /** Writes one line (a newline is added) to the relay's stdin. */
  send(line: string): void;
  /** Calls `listener` with each output line from now on; returns the unsubscribe. */
  onLine(listener: (line: string) => void): () => void;
  /** Writes raw bytes to the relay's stdin, for tests of framing. */
  write(chunk: string | Buffer): void;
  /** Resolves with the first output line (parsed) that matches, or rejects after `timeoutMs`. */
  waitFor(
    predicate: (message: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Shuts the relay down as a signal to the bin would. */
  close(reason: string): void;
  /** Ends stdin (the client went away); resolves with the exit code once the relay has shut down. */
  end(): Promise<number>;
  /** Resolves once the relay has written its first line for the client. */
  firstAnswer: Promise<void>;
  /** Resolves with the exit code once the relay has shut down. */
  readonly closed: Promise<number>;
}

/**
 * Starts the relay as `chat-mcp-bridge <args>` would (URL last), with `env` as its whole environment; the config
 * folder is a scratch folder unless `env` names one. Rejects as the bin would exit 1 (a fatal start error). With
 * `fetch` (an in-process server's), the relay opens no socket: its every request goes through it.
 */
export async function startRelayInProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
  { fetch }: { fetch?: typeof globalThis.fetch } = {},
): Promise<InProcessRelay> {
  const relayEnv = { CHAT_CONFIG_DIR: scratchDir("relay-config-"), ...env };
  const command = parseBridgeArgs(["node", "chat-mcp-bridge", ...args], relayEnv, () => {});
  if (command.kind !== "relay") throw new Error(`not a relay command line: ${args.join(" ")}`);
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const listeners = new Set<(line: string) => void>();
  let partial = "";
  let logged = "";
  stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    for (const line of parts) for (const listener of listeners) listener(line);
    for (const wake of waiters) wake();
  });
  stderr.setEncoding("utf8").on("data", (chunk: string) => {
    logged += chunk;
  });
  const relay = await runRelay(command.options, {
    stdin,
    stdout,
    stderr,
    env: relayEnv,
    ...(fetch ? { fetch } : {}),
  });
  return {
    lines,
    stderr: () => logged,
    send: (line) => stdin.write(`${line}\n`),
    onLine: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    write: (chunk) => stdin.write(chunk),
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < lines.length; seen++) {
            const message = JSON.parse(lines[seen] as string) as Record<string, unknown>;
            if (predicate(message)) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(message);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching output line within ${timeoutMs} ms; log:\n${logged}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    end: () => {
      stdin.end();
      return relay.closed;
    },
    close: relay.close,
    closed: relay.closed,
    firstAnswer: relay.firstAnswer,
  };
}

/** An MCP client transport over an in-process relay's streams (the SDK's stdio transport spawns a process). */
export class InProcessRelayTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #relay: InProcessRelay;
  readonly #buffer = new ReadBuffer();
  #unsubscribe = () => {};
  #closed = false;

  constructor(relay: InProcessRelay) {
    this.#relay = relay;
  }

  async start(): Promise<void> {
    this.#unsubscribe = this.#relay.onLine((line) => {
      // The SDK's own reader, so each message is validated as the stdio transport validates it.
      this.#buffer.append(Buffer.from(`${line}\n`));
      try {
        const message = this.#buffer.readMessage();
        if (message) this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.#relay.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    await this.#relay.end();
    this.onclose?.();
  }
}

export interface InProcessBridgeClient {
  client: Client;
  relay: InProcessRelay;
  /** Everything the relay logged so far. */
  stderr(): string;
  /** Closes the client, which ends the relay's stdin; resolves once the relay has shut down. */
  close(): Promise<void>;
}

/** Connects an SDK Client to `args` (URL last) through an in-process relay. */
export async function connectThroughRelayInProcess(
  args: string[],
  options: {
    env?: Record<string, string>;
    capabilities?: ConstructorParameters<typeof Client>[1];
    /** The network the relay uses instead of sockets (an in-process server's fetch). */
    fetch?: typeof globalThis.fetch;
  } = {},
): Promise<InProcessBridgeClient> {
  const relay = await startRelayInProcess(args, options.env, options.fetch ? { fetch: options.fetch } : {});
  const client = new Client({ name: "bridge-test-client", version: "1.0.0" }, options.capabilities);
  await client.connect(new InProcessRelayTransport(relay));
  return { client, relay, stderr: relay.stderr, close: () => client.close() };
}
