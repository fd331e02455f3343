/** The bridge bin as a process: its stdout carries only JSON-RPC lines, and EOF or a signal ends it with exit code 0. */
import { describe, expect, it } from "vitest";
import { initializeLine, spawnRawBridge } from "./fixtures/spawn-bridge.js";
import { freshTestServerEachTest } from "./fixtures/test-mcp-server.js";

const each = freshTestServerEachTest();

describe("stdout carries only JSON-RPC lines", () => {
  it("writes nothing but JSON-RPC messages on stdout during a session", async () => {
    const raw = spawnRawBridge([each.server.url, "--debug"]);
    raw.send(initializeLine(1));
    await raw.waitFor((m) => m.id === 1);
    raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    raw.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "notify", arguments: { note: "n" } },
      }),
    );
    await raw.waitFor((m) => m.id === 3);
    raw.child.stdin.end();
    await raw.exited(5000);
    expect(raw.lines.length).toBeGreaterThanOrEqual(4);
    for (const line of raw.lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    expect(raw.stderr()).toContain('client → server tools/call "notify" #3');
  });
});

describe("stdin EOF, SIGINT and SIGTERM end the session and exit within 2 s", () => {
  for (const ending of ["EOF", "SIGINT", "SIGTERM"] as const) {
    it(`exits after ${ending} and ends the remote session`, async () => {
      const raw = spawnRawBridge([each.server.url]);
      raw.send(initializeLine(1));
      await raw.waitFor((m) => m.id === 1);
      raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      raw.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }));
      await raw.waitFor((m) => m.id === 2);
      if (ending === "EOF") raw.child.stdin.end();
      else raw.child.kill(ending);
      expect(await raw.exited(2000)).toBe(0);
      expect(each.server.deletedSessions).toHaveLength(1);
    });
  }
});
