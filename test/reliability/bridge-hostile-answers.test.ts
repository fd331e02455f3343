/**
 * A server whose answers a relay cannot re-serialise (nested 5000 levels deep) or should not hold (hundreds of
 * megabytes in one message): every request is still answered exactly once, the GET stream does not fall into
 * a reconnect loop, and the bridge never buffers the oversized message.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { scratchDir } from "../support/scratch-dir.js";
import {
  answeredTwice,
  type BridgeDriver,
  PROTOCOL_VERSION,
  spawnBridgeDriver,
} from "./fixtures/bridge-driver.js";
import {
  AFTER_NESTED,
  type HostileMcpServer,
  type HostileOptions,
  startHostileMcpServer,
} from "./fixtures/hostile-mcp-server.js";

// The bridge's own folder (it remembers each server's era there), not the user's, shared with other test files.
const configDir = scratchDir("cmb-hostile-answers-");
let server: HostileMcpServer | undefined;
let bridge: BridgeDriver | undefined;
afterEach(async () => {
  await bridge?.stop(3_000);
  bridge = undefined;
  await server?.close();
  server = undefined;
});

async function connect(options: HostileOptions = {}, flags: string[] = []): Promise<BridgeDriver> {
  server = await startHostileMcpServer(options);
  bridge = spawnBridgeDriver(["--token-store", "file", ...flags, server.url], { CHAT_CONFIG_DIR: configDir });
  const id = bridge.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "hostile-test", version: "1" },
  });
  await bridge.waitAnswered([id], 15_000);
  bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return bridge;
}

function callTool(driver: BridgeDriver, name: string): number {
  return driver.request("tools/call", { name, arguments: {} });
}

/** Peak resident memory of a process, in MiB (Linux). */
function peakRssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmHWM:\s+(\d+) kB/m);
  return Number(line?.[1] ?? 0) / 1024;
}

describe("answers nested 5000 levels deep", () => {
  for (const tool of ["nested", "nested-sse"]) {
    it(`${tool}: the request is answered (relayed as received, or with an error), and the relay goes on`, async () => {
      const driver = await connect();
      const deep = callTool(driver, tool);
      await driver.waitAnswered([deep], 15_000);
      const answer = driver.answersTo(deep)[0]!;
      expect(answer.result !== undefined || answer.error !== undefined).toBe(true);
      const after = callTool(driver, "ok");
      await driver.waitAnswered([after], 15_000);
      expect(driver.answersTo(after)[0]?.result).toBeDefined();
      expect(answeredTwice(driver)).toEqual([]);
      expect(driver.nonJsonLines).toEqual([]);
    });
  }

  it("a nested notification on the GET stream does not make the bridge reconnect again and again", async () => {
    const driver = await connect({ nestedNotificationDepth: 5000 });
    // The server sends a plain notification after the deep one on the same stream (and asks for 100 ms between
    // reconnects): when it arrives on the first GET, the stream outlived the deep one, so nothing reconnects.
    await driver.waitForMethod(
      "notifications/message",
      15_000,
      (message) => message.params?.data === AFTER_NESTED,
    );
    expect(server!.gets).toBe(1);
    const after = callTool(driver, "ok");
    await driver.waitAnswered([after], 15_000);
    expect(driver.answersTo(after)[0]?.result).toBeDefined();
  });
});

describe("a server-to-client message over the cap (--max-message-size, 16 MiB here)", () => {
  for (const tool of ["huge-sse", "huge-json"]) {
    it(`${tool}: a JSON-RPC error naming the size, without buffering the 256 MiB`, async () => {
      // A cap well below the body, so that what the bridge may hold up to it (bytes, then text) stays far from
      // what buffering the whole 256 MiB would take.
      const driver = await connect({}, ["--max-message-size", "16"]);
      const huge = callTool(driver, tool);
      await driver.waitAnswered([huge], 30_000);
      const answer = driver.answersTo(huge)[0]!;
      expect(answer.result).toBeUndefined();
      expect(answer.error?.message).toMatch(/larger than --max-message-size \(16 MiB\)/);
      expect(peakRssMiB(driver.child.pid!)).toBeLessThan(200);
      const after = callTool(driver, "ok");
      await driver.waitAnswered([after], 15_000);
      expect(driver.answersTo(after)[0]?.result).toBeDefined();
      expect(answeredTwice(driver)).toEqual([]);
    }, 60_000);
  }
});
