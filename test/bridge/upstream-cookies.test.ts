/** The upstream cookie jar through the relay: a load balancer's cookie set on `initialize` comes back on the session's POSTs, its GET stream and its DELETE, and never reaches a log. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";
import {
  createStickyLegacyServer,
  STICKY_COOKIE,
  type StickyLegacyServer,
} from "./fixtures/sticky-legacy-server.js";

let server: StickyLegacyServer;
let relay: InProcessRelay | undefined;
beforeEach(() => {
  server = createStickyLegacyServer();
});
afterEach(async () => {
  await relay?.end();
  relay = undefined;
  await server.close();
});

/** initialize, initialized, one tools/call, the GET stream open, then the end of stdin (the session's DELETE). */
async function oneSession(args: string[]): Promise<void> {
  relay = await startRelayInProcess([...args, server.url], {}, { fetch: server.fetch });
  relay.send(initializeLine(1));
  await relay.waitFor((message) => message.id === 1);
  relay.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  relay.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    }),
  );
  await relay.waitFor((message) => message.id === 2);
  await server.seenUntil((seen) => seen.some((request) => request.http === "GET"));
  await relay.end();
}

describe("a cookie set on initialize", () => {
  it("comes back on every later request of the session (POST, GET listen, DELETE), and the Path=/admin one does not", async () => {
    await oneSession(["--debug"]);
    const initialize = server.seen.findIndex((request) => request.rpc.includes("initialize"));
    const later = server.seen.slice(initialize + 1);
    expect(new Set(later.map((request) => request.http))).toEqual(new Set(["POST", "GET", "DELETE"]));
    for (const request of later) expect(request.cookie, request.http).toBe(STICKY_COOKIE);
    expect(server.seen.slice(0, initialize + 1).every((request) => request.cookie === undefined)).toBe(true);
  });

  it("is in no log line, --debug included", async () => {
    await oneSession(["--debug"]);
    const log = relay?.stderr() ?? "";
    expect(log).toContain("tools/call");
    expect(log).not.toContain("i-0abc7-sticky");
    expect(log).not.toContain("do-not-send");
  });

  it("--disable-cookies: no cookie is ever sent", async () => {
    await oneSession(["--disable-cookies"]);
    expect(server.seen.length).toBeGreaterThan(3);
    expect(server.seen.every((request) => request.cookie === undefined)).toBe(true);
  });
});
