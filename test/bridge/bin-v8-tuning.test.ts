/** The bridge bin's V8 tuning: once the relay has answered, its JavaScript stays on V8's baseline tier. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BRIDGE_BIN, initializeLine } from "./fixtures/spawn-bridge.js";
import { startTestMcpServer, type TestMcpServer } from "./fixtures/test-mcp-server.js";

const BUNDLE = join(import.meta.dirname, "../../dist/bin/chat-mcp-bridge.cjs");
const CALLS = 2_000;

let server: TestMcpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Runs `script` with V8's `--trace-opt` (its lines go to stdout, beside the relay's), relays `initialize` and then
 * CALLS `tools/list` calls, and returns the functions V8 compiled with an optimizing compiler after the first answer.
 */
async function optimizedAfterFirstAnswer(script: string): Promise<string[]> {
  server = await startTestMcpServer();
  const child = spawn(process.execPath, ["--trace-opt", script, server.url], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let partial = "";
  let wake = () => {};
  child.stdout.on("data", (chunk: Buffer) => {
    const parts = (partial + chunk.toString("utf8")).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    wake();
  });
  const answered = (id: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to #${id} within 30 s`)), 30_000);
      wake = () => {
        if (lines.some((line) => line.startsWith("{") && (JSON.parse(line) as { id?: unknown }).id === id)) {
          clearTimeout(timer);
          resolve();
        }
      };
      wake();
    });
  try {
    child.stdin.write(`${initializeLine(1)}\n`);
    await answered(1);
    const firstAnswer = lines.findIndex((line) => line.startsWith("{"));
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    for (let id = 2; id < CALLS + 2; id++)
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" })}\n`);
    await answered(CALLS + 1);
    return lines
      .slice(firstAnswer + 1)
      .filter((line) => /^\[completed compiling .*\(target (TURBOFAN|MAGLEV)\)/.test(line));
  } finally {
    child.kill();
  }
}

describe("the bridge bin's V8 tuning", () => {
  it("relays on the baseline tier: no function is optimized after the first answer", async () => {
    expect(await optimizedAfterFirstAnswer(BRIDGE_BIN)).toEqual([]);
  }, 60_000);

  it("control: the same relay without the bin's tuning optimizes its hot functions", async () => {
    expect((await optimizedAfterFirstAnswer(BUNDLE)).length).toBeGreaterThan(10);
  }, 60_000);
});
