/** The bridge keeps the client's session alive across server restarts, lost sessions and outages. */
import { ProtocolError } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../../../support/scratch-dir.js";
import { connectThroughBridge, initializeLine, spawnRawBridge } from "../../fixtures/spawn-bridge.js";
import { freshTestServerEachTest } from "../../fixtures/test-mcp-server.js";

const each = freshTestServerEachTest();
// The bridge's own folder (it remembers each server's era there), not the user's, shared with other test files.
const env = { CHAT_CONFIG_DIR: scratchDir("cmb-recovery-") };

const echo = (text: string) => each.bridge!.client.callTool({ name: "echo", arguments: { text } });
const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]?.text;

describe("the server forgets the session (404)", () => {
  it("opens a new session and resends the call, invisibly to the client", async () => {
    each.bridge = await connectThroughBridge([each.server.url], { env });
    expect(textOf(await echo("before"))).toBe("before");
    await each.server.dropSessions();
    expect(textOf(await echo("after"))).toBe("after");
    expect(each.server.echoed).toEqual(["before", "after"]);
    expect(each.server.initializedSessions()).toBe(2);
  });

  it("recovers after a server restart on the same port", async () => {
    each.bridge = await connectThroughBridge([each.server.url], { env });
    await echo("one");
    await each.server.restart();
    expect(textOf(await echo("two"))).toBe("two");
    expect(each.server.echoed).toEqual(["one", "two"]);
  });

  it("answers every request exactly once and never shows the bridge's own initialize", async () => {
    const raw = spawnRawBridge([each.server.url], env);
    try {
      raw.send(initializeLine(1));
      await raw.waitFor((m) => m.id === 1);
      raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      await each.server.dropSessions();
      const ids = [10, 11, 12, 13, 14];
      for (const id of ids) {
        raw.send(
          JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "echo", arguments: { text: `m${id}` } },
          }),
        );
      }
      for (const id of ids) await raw.waitFor((m) => m.id === id);
      raw.child.stdin.end();
      await raw.exited(5000);
      const answeredIds = raw.lines.map((line) => (JSON.parse(line) as { id?: unknown }).id);
      expect(answeredIds.sort((a, b) => Number(a) - Number(b))).toEqual([1, ...ids]);
      expect([...each.server.echoed].sort()).toEqual(ids.map((id) => `m${id}`));
    } finally {
      raw.child.kill();
    }
  });
});

describe("the server is down for a few seconds", () => {
  it("holds the call, retries, and delivers it once the server is back", async () => {
    each.bridge = await connectThroughBridge([each.server.url], { env });
    await echo("first");
    await each.server.stop();
    const held = echo("while-down");
    // The bridge has been refused at least once and holds the call: its log says so before it retries.
    await expect
      .poll(() => each.bridge!.stderr(), { timeout: 15_000, interval: 20 })
      .toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: .*; retrying/);
    await each.server.restart();
    expect(textOf(await held)).toBe("while-down");
    expect(each.server.echoed).toEqual(["first", "while-down"]);
  });
});

describe("the server stays down past the reconnect window", () => {
  it("answers with a clear error, keeps running, and works once the server returns", async () => {
    each.bridge = await connectThroughBridge([each.server.url], {
      env: { ...env, CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "600" },
    });
    await echo("first");
    await each.server.stop();
    const failure = await echo("lost").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProtocolError);
    expect((failure as ProtocolError).code).toBe(-32000);
    expect((failure as ProtocolError).message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+/);
    await each.server.restart();
    expect(textOf(await echo("back"))).toBe("back");
    expect(each.server.echoed).toEqual(["first", "back"]);
  });
});
