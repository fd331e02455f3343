/** `--keep-alive` / `--ping-interval`: a `ping` to an idle 2025-era session at the interval; a failed one is logged and the session recovered (in process). */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { createModernMcpServer, type ModernMcpServer } from "./fixtures/modern-mcp-server.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";
import {
  createStickyLegacyServer,
  type SeenRequest,
  type StickyLegacyServer,
} from "./fixtures/sticky-legacy-server.js";

let server: StickyLegacyServer;
let relay: InProcessRelay | undefined;
beforeEach(() => {
  server = createStickyLegacyServer();
});
afterEach(async () => {
  vi.useRealTimers();
  await relay?.end();
  relay = undefined;
  await server.close();
});

/** Every timer the relay arms is on the fake clock, a ping's included: the intervals pass as the test says. */
const FAKE_CLOCK: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"],
};

const pingsIn = (seen: SeenRequest[]) => seen.filter((request) => request.rpc.includes("ping"));
const initializesIn = (seen: SeenRequest[]) => seen.filter((request) => request.rpc.includes("initialize"));

async function initialized(args: string[]): Promise<InProcessRelay> {
  const started = await startRelayInProcess([...args, server.url], {}, { fetch: server.fetch });
  started.send(initializeLine(1));
  await started.waitFor((message) => message.id === 1);
  started.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return started;
}

describe("--ping-interval <s> on a 2025-era session", () => {
  it("pings the idle session at the interval, on its session id; the client sees none of it", async () => {
    vi.useFakeTimers(FAKE_CLOCK);
    relay = await initialized(["--ping-interval", "0.05"]);
    const twoPings = server.seenUntil((seen) => pingsIn(seen).length >= 2);
    // Twenty intervals: an idle session gets a ping in each.
    await vi.advanceTimersByTimeAsync(1_000);
    await twoPings;
    const session = server.seen.find((request) => request.sessionId)?.sessionId;
    expect(session).toBeDefined();
    for (const ping of pingsIn(server.seen)) expect(ping.sessionId).toBe(session);
    // Only the answer to initialize reached the client: pings and their answers are the bridge's own.
    expect(relay.lines.map((line) => JSON.parse(line).id)).toEqual([1]);
  });

  it("without --keep-alive or --ping-interval, no ping is sent", async () => {
    relay = await initialized([]);
    relay.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    await relay.waitFor((message) => message.id === 2);
    expect(pingsIn(server.seen)).toEqual([]);
  });

  it("a failed ping (the server forgot the session) is logged, and a new session is opened", async () => {
    vi.useFakeTimers(FAKE_CLOCK);
    relay = await initialized(["--ping-interval", "0.2"]);
    const pinged = server.seenUntil((seen) => pingsIn(seen).length >= 1);
    await vi.advanceTimersByTimeAsync(400);
    await pinged;
    const before = initializesIn(server.seen).length;
    await server.dropSessions();
    const reopened = server.seenUntil((seen) => initializesIn(seen).length === before + 1);
    // The next ping finds the session gone; the relay opens a new one (its waits included).
    await vi.advanceTimersByTimeAsync(5_000);
    await reopened;
    expect(relay.stderr()).toMatch(/keep-alive ping .* failed/);
    relay.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "still here" } },
      }),
    );
    const answer = await relay.waitFor((message) => message.id === 3);
    expect(JSON.stringify(answer.result)).toContain("still here");
  });
});

describe("--ping-interval with a 2026-07-28 server", () => {
  let modern: ModernMcpServer | undefined;
  afterEach(async () => {
    await relay?.end();
    relay = undefined;
    await modern?.close();
    modern = undefined;
  });

  it("sends no ping: the era has no session to keep", async () => {
    vi.useFakeTimers(FAKE_CLOCK);
    modern = createModernMcpServer();
    relay = await startRelayInProcess(["--ping-interval", "0.02", modern.url], {}, { fetch: modern.fetch });
    relay.send(initializeLine(1));
    await relay.waitFor((message) => message.id === 1);
    relay.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    await relay.waitFor((message) => message.id === 2);
    // Nothing announces a ping that is never sent: ten intervals of quiet, on the fake clock, are the evidence.
    await vi.advanceTimersByTimeAsync(200);
    expect(modern.requests.map((request) => request.method)).not.toContain("ping");
    expect(modern.requests.map((request) => request.method)).toContain("tools/list");
  });
});
