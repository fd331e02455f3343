/** Several `subscriptions/listen` from one 2026-07-28 client at once, over a modern and a legacy server: each gets what it asked for under its own id, and ends on its own. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startModernMcpServer } from "../fixtures/modern-mcp-server.js";
import { type RawBridge, spawnRawBridge } from "../fixtures/spawn-bridge.js";
import { startLegacySessionServer } from "./legacy-session-server.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw-listens", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const TOOLS_CHANGED = "notifications/tools/list_changed";
const PROMPTS_CHANGED = "notifications/prompts/list_changed";
const RESOURCE_UPDATED = "notifications/resources/updated";

let configDir: string;
beforeAll(() => {
  configDir = mkdtempSync(join(tmpdir(), "bridge-eras-listens-"));
});
afterAll(() => {
  rmSync(configDir, { recursive: true, force: true });
});

function listen(bridge: RawBridge, id: string, notifications: Record<string, boolean | string[]>): void {
  bridge.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { _meta: ENVELOPE, notifications },
    }),
  );
}

/** Cancels a listen; resolves once the bridge has read the cancellation (it answers the request sent after it). */
async function cancel(bridge: RawBridge, id: string): Promise<void> {
  bridge.send(
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } }),
  );
  const marker = `after-cancel-${id}`;
  bridge.send(
    JSON.stringify({ jsonrpc: "2.0", id: marker, method: "tools/list", params: { _meta: ENVELOPE } }),
  );
  await bridge.waitFor((m) => m.id === marker);
}

/** The notifications of `method` the bridge wrote so far, by the subscription id each carries. */
function received(bridge: RawBridge, method: string): unknown[] {
  return bridge.lines
    .map((line) => JSON.parse(line) as { method?: string; params?: { _meta?: Record<string, unknown> } })
    .filter((message) => message.method === method)
    .map((message) => message.params?._meta?.[SUBSCRIPTION_ID]);
}

const count = (ids: unknown[], id: string) => ids.filter((each) => each === id).length;

/** Publishes once the streams that must get it are open (a notification published before is lost), and waits for `done`. */
async function publishThenWait(publish: () => void, done: () => boolean, what: string): Promise<void> {
  publish();
  await until(done, what);
}

async function acknowledged(bridge: RawBridge, id: string): Promise<Record<string, unknown>> {
  const ack = await bridge.waitFor(
    (m) =>
      m.method === "notifications/subscriptions/acknowledged" &&
      (m.params as { _meta?: Record<string, unknown> })._meta?.[SUBSCRIPTION_ID] === id,
  );
  return ack.params as Record<string, unknown>;
}

describe("two listens of one modern client over a modern server", () => {
  it("each gets the list changes under its own subscription id, and a cancelled one gets no more", async () => {
    const server = await startModernMcpServer();
    const bridge = spawnRawBridge([server.url], { CHAT_CONFIG_DIR: configDir });
    try {
      listen(bridge, "listen-a", { toolsListChanged: true });
      listen(bridge, "listen-b", { toolsListChanged: true });
      await acknowledged(bridge, "listen-a");
      await acknowledged(bridge, "listen-b");
      // A modern server acknowledges a listen once it is subscribed to its events: one change reaches both.
      await publishThenWait(
        () => server.toolsChanged(),
        () => {
          const ids = received(bridge, TOOLS_CHANGED);
          return count(ids, "listen-a") > 0 && count(ids, "listen-b") > 0;
        },
        "a list change on both listens",
      );
      expect(received(bridge, TOOLS_CHANGED).every((id) => id === "listen-a" || id === "listen-b")).toBe(
        true,
      );

      await cancel(bridge, "listen-a");
      const before = count(received(bridge, TOOLS_CHANGED), "listen-a");
      const bBefore = count(received(bridge, TOOLS_CHANGED), "listen-b");
      // Three changes reach the listen left open, each after the cancel took effect: none reaches the other.
      for (const more of [1, 2, 3]) {
        await publishThenWait(
          () => server.toolsChanged(),
          () => count(received(bridge, TOOLS_CHANGED), "listen-b") >= bBefore + more,
          "list changes on the listen left open",
        );
      }
      expect(count(received(bridge, TOOLS_CHANGED), "listen-a")).toBe(before);
      expect(bridge.lines.some((line) => line.includes('"id":"listen-a"'))).toBe(false);
    } finally {
      bridge.child.kill();
      await server.close();
    }
  });
});

describe("two listens of one modern client over a legacy session", () => {
  it("each gets only what it asked for, under its own id, and a cancelled one gets no more", async () => {
    const server = await startLegacySessionServer();
    const bridge = spawnRawBridge([server.url], { CHAT_CONFIG_DIR: configDir });
    try {
      listen(bridge, "tools-only", { toolsListChanged: true });
      listen(bridge, "tools-and-prompts", { toolsListChanged: true, promptsListChanged: true });
      expect((await acknowledged(bridge, "tools-only")).notifications).toEqual({ toolsListChanged: true });
      expect((await acknowledged(bridge, "tools-and-prompts")).notifications).toEqual({
        toolsListChanged: true,
        promptsListChanged: true,
      });

      // The bridge acknowledges at once; the session's event stream opens on its own time.
      await until(() => server.eventStreams() > 0, "the session's event stream");
      await publishThenWait(
        () => server.promptsChanged(),
        () => received(bridge, PROMPTS_CHANGED).length > 0,
        "a prompts change",
      );
      expect(new Set(received(bridge, PROMPTS_CHANGED))).toEqual(new Set(["tools-and-prompts"]));
      server.toolsChanged();
      await until(
        () => count(received(bridge, TOOLS_CHANGED), "tools-only") > 0,
        "a tools change on the first listen",
      );
      expect(count(received(bridge, TOOLS_CHANGED), "tools-and-prompts")).toBe(1);

      await cancel(bridge, "tools-and-prompts");
      server.toolsChanged();
      server.promptsChanged();
      await until(
        () => count(received(bridge, TOOLS_CHANGED), "tools-only") === 2,
        "a second tools change on the listen left open",
      );
      expect(count(received(bridge, TOOLS_CHANGED), "tools-and-prompts")).toBe(1);
      expect(received(bridge, PROMPTS_CHANGED).length).toBe(
        count(received(bridge, PROMPTS_CHANGED), "tools-and-prompts"),
      );
      expect(bridge.lines.some((line) => line.includes('"id":"tools-and-prompts"'))).toBe(false);
    } finally {
      bridge.child.kill();
      await server.close();
    }
  });
});

describe("two listens of one modern client with resource subscriptions over a legacy session", () => {
  it("subscribes each resource once, delivers its updates to the listens that asked, and unsubscribes what no listen wants", async () => {
    const server = await startLegacySessionServer();
    const bridge = spawnRawBridge([server.url], { CHAT_CONFIG_DIR: configDir });
    const updatesFor = (uri: string) =>
      bridge.lines
        .map((line) => JSON.parse(line) as { method?: string; params?: Record<string, unknown> })
        .filter((m) => m.method === RESOURCE_UPDATED && m.params?.uri === uri)
        .map((m) => (m.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID]);
    try {
      listen(bridge, "config", { resourceSubscriptions: ["file:///config"] });
      listen(bridge, "both", { resourceSubscriptions: ["file:///config", "file:///data"] });
      expect((await acknowledged(bridge, "config")).notifications).toEqual({
        resourceSubscriptions: ["file:///config"],
      });
      await acknowledged(bridge, "both");
      await until(() => server.subscriptions.length === 2, "the subscriptions");
      expect(server.subscriptions).toEqual(["subscribe file:///config", "subscribe file:///data"]);

      // The session's event stream opens on its own time: an update sent before it opened would be lost.
      await until(() => server.eventStreams() > 0, "the session's event stream");
      await publishThenWait(
        () => server.resourceUpdated("file:///data"),
        () => updatesFor("file:///data").length > 0,
        "a data update",
      );
      server.resourceUpdated("file:///config");
      // Updates travel in order on the session's stream: every data update sent before this one has arrived.
      await until(() => updatesFor("file:///config").length === 2, "the config updates");
      const dataUpdates = updatesFor("file:///data").length;
      expect(new Set(updatesFor("file:///config"))).toEqual(new Set(["config", "both"]));
      expect(new Set(updatesFor("file:///data"))).toEqual(new Set(["both"]));

      await cancel(bridge, "both");
      await until(() => server.subscriptions.length === 3, "the unsubscription");
      expect(server.subscriptions[2]).toBe("unsubscribe file:///data");
      server.resourceUpdated("file:///config");
      await until(() => updatesFor("file:///config").length === 3, "a config update after the cancel");
      expect(updatesFor("file:///config")[2]).toBe("config");
      server.resourceUpdated("file:///data");
      server.resourceUpdated("file:///config");
      await until(() => updatesFor("file:///config").length === 4, "another config update");
      expect(updatesFor("file:///data")).toHaveLength(dataUpdates);
    } finally {
      bridge.child.kill();
      await server.close();
    }
  });
});

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
