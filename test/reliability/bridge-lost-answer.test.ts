/**
 * A tools/call whose connection breaks after the server ran it, before any byte of its answer arrived (a proxy
 * or a crash right after the commit): the bridge cannot know whether it ran, so it answers with an error that
 * says so and does not send it again. Resending it (what the bridge did before) created a second chat.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scratchDir } from "../support/scratch-dir.js";
import {
  answeredTwice,
  callTool,
  HTTP_BROWSER,
  initializeBridge,
  spawnBridgeDriver,
} from "./fixtures/bridge-driver.js";
import {
  bundleServerChild,
  type ChildServer,
  freePort,
  killChild,
  startChildServer,
} from "./fixtures/child-server.js";
import { type FaultProxy, startFaultProxy } from "./fixtures/fault-proxy.js";
import { snapshotAccount } from "./fixtures/wire-checks.js";

const root = scratchDir("cmb-lost-answer-");
let proxy: FaultProxy | undefined;
let server: ChildServer | undefined;
const stops: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
  if (server) await killChild(server);
  await proxy?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("A tools/call whose answer was lost after the server ran it", () => {
  it("runs once: the bridge answers it (with an error) and does not send it again", async () => {
    await bundleServerChild();
    proxy = await startFaultProxy();
    const port = await freePort();
    server = await startChildServer({
      env: { REFERENCE_AUTO_APPROVE: "acme", REFERENCE_PUBLIC_URL: proxy.url, REFERENCE_PORT: String(port) },
    });
    proxy.setTarget(`http://127.0.0.1:${port}`);
    const bridge = spawnBridgeDriver(["--token-store", "file", "--auth-timeout", "30", `${proxy.url}/mcp`], {
      CHAT_CONFIG_DIR: join(root, "config"),
      BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
      CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "10000",
    });
    stops.push(() => bridge.stop());
    await initializeBridge(bridge);

    proxy.swallowNextToolAnswers(1);
    const id = callTool(bridge, "create_chat", { message: "lost answer, must run once" });
    await bridge.waitAnswered([id], 30_000);
    expect(answeredTwice(bridge)).toEqual([]);
    expect(JSON.stringify(bridge.answersTo(id)[0])).toMatch(/"code":-32000.*may or may not have run it/);

    const next = callTool(bridge, "create_chat", { message: "the next call goes through" });
    await bridge.waitAnswered([next], 30_000);
    expect(bridge.answersTo(next)[0]).toHaveProperty("result");

    const chats = await snapshotAccount(server, "acme");
    const runs = [...chats.values()].filter(
      (chat) => chat.messages[0]?.content === "lost answer, must run once",
    );
    expect(runs).toHaveLength(1);
  }, 60_000);
});
