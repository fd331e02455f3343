/**
 * Long calls as hosts run them, shared by the scaled and the real-time host tests: a reference server whose
 * assistant is slow (its chats prepared beforehand, so a host's create, send and resolve run at once), and an SDK v2
 * host through the spawned bridge that times requests out unless progress resets the timer, and cancels one call.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { ChatClient } from "../../../src/client/index.js";
import { type McpEra, type ReferenceServer, startReferenceServer } from "../../../src/server/index.js";
import { confirmedStepsFor, type Task } from "../../../src/wire/index.js";
import { scratchDir } from "../../support/scratch-dir.js";
import { bridgeTransport } from "../fixtures/spawn-bridge.js";

/** `legacy`: the SDKs' default 2025 handshake; `modern`: pinned to 2026-07-28; `auto`: probes, then picks. */
export type HostMode = "legacy" | "modern" | "auto";

export interface LongCallTimings {
  /** The host's patience per request; progress resets it (`resetTimeoutOnProgress`). */
  hostTimeoutMs: number;
  /** The assistant's time on every create, send and resolve: longer than the host's patience. */
  assistantMs: number;
  /** When the host cancels its extra `create_chat`, counted from the call. */
  cancelAtMs: number;
}

/** The chats a host works on: one to send a message to, one waiting on integrations with the task that resolves it. */
interface PreparedChats {
  sendTo: string;
  resolve: { chatId: string; task: Task };
}

export interface SlowServer {
  server: ReferenceServer;
  /** A distinct set of prepared chats per host (in the order the hosts ask). */
  chatsFor(host: HostMode): PreparedChats;
  close(): Promise<void>;
}

/**
 * The reference server serving `mcpEra` with an assistant of `assistantMs`; the chats the hosts need are made first
 * by a quick server on the same data file, so no host waits for one slow call before the next.
 */
export async function startSlowServer(
  mcpEra: McpEra,
  hosts: readonly HostMode[],
  assistantMs: number,
): Promise<SlowServer> {
  const dataFile = join(scratchDir(`cmb-long-calls-${mcpEra}-`), "state.json");
  const quick = await startReferenceServer({ dataFile });
  const prepared = new Map<HostMode, PreparedChats>();
  try {
    const client = new ChatClient({ baseUrl: quick.url, token: quick.apiKeys.acme as string });
    for (const host of hosts) {
      const sendTo = (await client.createChat({ message: "Hello there", title: `send ${mcpEra} ${host}` }))
        .id;
      const paused = await client.createChat({
        message: "Please set up a Database",
        title: `resolve ${mcpEra} ${host}`,
      });
      const pending = await client.getPendingTask(paused.id);
      if (pending?.kind !== "integration")
        throw new Error("the prepared chat does not wait for integrations");
      prepared.set(host, { sendTo, resolve: { chatId: paused.id, task: confirmedStepsFor(pending) } });
    }
  } finally {
    await quick.close();
  }
  const server = await startReferenceServer({
    port: 0,
    dataFile,
    mcpEra,
    testOnlyUnauthenticatedMcpAccount: "acme",
    assistantDelayMs: assistantMs,
  });
  return {
    server,
    chatsFor: (host) => prepared.get(host) as PreparedChats,
    close: () => server.close(),
  };
}

/** What the host saw of one call. */
export interface CallFigures {
  tool: string;
  seconds: number;
  progress: number;
}

interface Step {
  progress: number;
  total?: number;
  message?: string;
}

async function connectHost(url: string, mode: HostMode, label: string) {
  const { transport, stderr } = bridgeTransport(["--token-store", "file", url], {
    CHAT_CONFIG_DIR: scratchDir(`cmb-long-calls-${label}-`),
  });
  const client = new Client(
    { name: `long-calls-${label}`, version: "1.0.0" },
    mode === "modern"
      ? { versionNegotiation: { mode: { pin: "2026-07-28" } } }
      : mode === "auto"
        ? { versionNegotiation: { mode: "auto" } }
        : {},
  );
  await client.connect(transport);
  return { client, stderr };
}

/**
 * One host against one slow server, as a person's host runs it: `create_chat`, `send_message` and `resolve_task`
 * at once, each outlasting the host's time-out on progress alone, and a fourth call (a `create_chat`) that the host
 * cancels part-way. Checks each call ran once and the cancelled one not at all; returns what the host saw.
 */
export async function runLongCalls(
  slow: SlowServer,
  mcpEra: McpEra,
  host: HostMode,
  timings: LongCallTimings,
): Promise<CallFigures[]> {
  const label = `${mcpEra}-${host}`;
  const { client, stderr } = await connectHost(slow.server.mcpUrl, host, label);
  try {
    const chats = slow.chatsFor(host);
    const stamp = `${label} ${Date.now()}`;
    const cancelledTitle = `cancelled ${stamp}`;
    const createdTitle = `created ${stamp}`;

    const cancel = new AbortController();
    const cancelTimer = setTimeout(
      () => cancel.abort(new Error("the person stopped it")),
      timings.cancelAtMs,
    );
    let serverStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      serverStarted = resolve;
    });
    const cancelled = client
      .callTool(
        { name: "create_chat", arguments: { message: "Hello there", title: cancelledTitle } },
        {
          signal: cancel.signal,
          timeout: timings.hostTimeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: () => serverStarted(),
        },
      )
      .then(
        () => "answered",
        () => "cancelled",
      )
      .finally(() => clearTimeout(cancelTimer));
    // The other calls start once the server works on the one to cancel: they end after it would have written.
    await Promise.race([started, cancelled]);

    const timed = async (tool: string, args: Record<string, unknown>): Promise<CallFigures> => {
      const steps: Step[] = [];
      const callStarted = Date.now();
      const result = await client.callTool(
        { name: tool, arguments: args },
        {
          timeout: timings.hostTimeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: (step) => steps.push(step),
        },
      );
      const elapsed = Date.now() - callStarted;
      expect(result.isError, `${label} ${tool}: ${JSON.stringify(result.content)}`).toBeFalsy();
      expect(elapsed, `${label} ${tool} outlasted the host's time-out`).toBeGreaterThan(
        timings.hostTimeoutMs,
      );
      expect(steps.length, `${label} ${tool} progress`).toBeGreaterThanOrEqual(3);
      const values = steps.map((step) => step.progress);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(steps[0]?.message).toMatch(/thinking/);
      return { tool, seconds: Math.round(elapsed / 100) / 10, progress: steps.length };
    };
    const figures = await Promise.all([
      timed("create_chat", { message: "Hello there", title: createdTitle }),
      timed("send_message", { chatId: chats.sendTo, message: "And now?" }),
      timed("resolve_task", chats.resolve),
    ]);
    expect(await cancelled).toBe("cancelled");

    const titled = async (topic: string) =>
      (
        (await client.callTool({ name: "list_chats", arguments: { topic } })).structuredContent as {
          data: unknown[];
        }
      ).data.length;
    // Each call ran once; the cancellation reached the server, whose assistant stopped before it wrote the chat.
    expect(await titled(createdTitle)).toBe(1);
    expect(await titled(cancelledTitle)).toBe(0);
    expect(stderr()).toMatch(/create_chat #\d+ was cancelled by the client before the server answered/);
    return figures;
  } finally {
    await client.close();
  }
}

/** One line per pair for the test output: the seconds and progress count the host saw per call. */
export function describeFigures(pair: string, figures: readonly CallFigures[]): string {
  return `${pair}: ${figures.map((figure) => `${figure.tool} ${figure.seconds}s/${figure.progress} progress`).join(", ")}`;
}
