/** Hostile bytes on the bridge's stdin (fast-check): random and truncated JSON-RPC lines and 10 MB lines over the cap get -32700/-32600 and the bridge keeps relaying. */
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import {
  answeredTwice,
  type BridgeDriver,
  callTool,
  HTTP_BROWSER,
  initializeBridge,
  spawnBridgeDriver,
} from "./fixtures/bridge-driver.js";

const RUNS = Number(process.env.RELIABILITY_RUNS ?? 150);
let nextFuzzId = 500_000;

let server: ReferenceServer;
let bridge: BridgeDriver;

beforeAll(async () => {
  server = await startReferenceServer({ port: 0, autoApprove: "acme", rateLimit: false });
  const home = scratchDir("cmb-fuzz-");
  // A cap below the 10 MB lines below (the default, 64 MiB, would relay them).
  const args = ["--token-store", "file", "--auth-timeout", "30", "--max-message-size", "8", server.mcpUrl];
  bridge = spawnBridgeDriver(args, {
    CHAT_CONFIG_DIR: join(home, "config"),
    BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
  });
  await initializeBridge(bridge);
}, 60_000);

afterAll(async () => {
  await bridge?.stop();
  await server?.close();
});

/** Sends a ping through the bridge to the server and waits for its answer: the bridge still relays. */
async function stillRelays(): Promise<void> {
  const id = bridge.request("ping");
  await bridge.waitAnswered([id], 10_000);
  expect(bridge.answersTo(id)).toEqual([{ jsonrpc: "2.0", id, result: {} }]);
}

/** Lines that are not JSON at all: random text, truncated requests, broken escapes and bytes. */
const notJsonArbitrary = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 200 }),
    fc.string({ unit: "binary", minLength: 1, maxLength: 100 }),
    fc.record({ id: fc.nat(), name: fc.string({ maxLength: 20 }) }).chain(({ id, name }) => {
      const full = JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name, arguments: { message: "x" } },
      });
      return fc.integer({ min: 1, max: full.length - 1 }).map((cut) => full.slice(0, cut));
    }),
    fc.constantFrom(
      "{",
      "[",
      '{"jsonrpc":"2.0",',
      '"unterminated',
      "{'single':'quotes'}",
      "NaN",
      "\\u0000",
      "}{",
    ),
  )
  .map((line) => line.replace(/[\r\n]/g, " "))
  .filter((line) => {
    if (line.trim() === "") return false;
    try {
      JSON.parse(line);
      return false;
    } catch {
      return true;
    }
  });

describe("A line that is not JSON: one -32700 answer with id null, then business as usual", () => {
  it("random, binary and truncated lines", async () => {
    await fc.assert(
      fc.asyncProperty(notJsonArbitrary, async (line) => {
        const before = bridge.nullIdAnswers.length;
        bridge.send(line);
        await stillRelays();
        const answers = bridge.nullIdAnswers.slice(before);
        expect(answers).toHaveLength(1);
        expect(answers[0]?.error?.code).toBe(-32700);
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 40_000 },
    );
  }, 60_000);
});

describe("JSON that is not a JSON-RPC message: -32600, never relayed", () => {
  const invalidMessage = fc.oneof(
    fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.boolean()),
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
    fc.record({ jsonrpc: fc.constantFrom("1.0", "2", 2), id: fc.nat(), method: fc.constant("ping") }),
    fc.record({ jsonrpc: fc.constant("2.0"), id: fc.constant({}), method: fc.constant("ping") }),
    fc.record({ jsonrpc: fc.constant("2.0"), id: fc.nat(), method: fc.integer() }),
    fc.record({ jsonrpc: fc.constant("2.0"), result: fc.constant({}) }),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }),
  );

  it("random values, arrays, wrong versions and ids", async () => {
    await fc.assert(
      fc.asyncProperty(invalidMessage, async (generated) => {
        // A detectable id may be echoed in the error (JSON-RPC allows it): keep ids unique per line to count answers.
        const value =
          typeof generated === "object" &&
          generated !== null &&
          !Array.isArray(generated) &&
          "id" in generated
            ? { ...generated, id: typeof generated.id === "number" ? nextFuzzId++ : generated.id }
            : generated;
        const id = (value as { id?: unknown } | null)?.id;
        const before = bridge.nullIdAnswers.length;
        bridge.send(JSON.stringify(value));
        await stillRelays();
        const errors = [
          ...bridge.nullIdAnswers.slice(before),
          ...(typeof id === "number" ? bridge.answersTo(id) : []),
        ];
        // Exactly one answer per line: an Invalid Request (the bridge does not pass it on, or stay silent).
        expect(errors.length).toBe(1);
        for (const error of errors) expect(error.error?.code).toBe(-32600);
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 40_000 },
    );
  }, 60_000);
});

describe("10 MB lines over --max-message-size 8: -32600 without buffering them, and the next line still works", () => {
  it("a 10 MB line of garbage, then a 10 MB valid-looking request, then a normal call", async () => {
    const before = bridge.nullIdAnswers.length;
    bridge.send("x".repeat(10 * 1024 * 1024));
    bridge.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 77_777,
        method: "tools/call",
        params: { name: "create_chat", arguments: { message: "y".repeat(10 * 1024 * 1024) } },
      }),
    );
    // The garbage has no id to answer; the request is answered by its id (read as the line streamed past).
    await bridge.waitNullIdAnswers(before + 1, 30_000);
    for (const answer of bridge.nullIdAnswers.slice(before)) expect(answer.error?.code).toBe(-32600);
    await bridge.waitAnswered([77_777], 30_000);
    expect(bridge.answersTo(77_777)[0]?.error?.code).toBe(-32600);
    expect(bridge.answersTo(77_777)[0]?.error?.message).toMatch(/--max-message-size \(8 MiB\)/);
    const id = callTool(bridge, "list_chats", { limit: 1 });
    await bridge.waitAnswered([id], 15_000);
    expect(bridge.answersTo(id)[0]?.result?.isError).toBeFalsy();
  }, 60_000);
});

describe("After all of it", () => {
  it("no id was answered twice and stdout carried nothing but JSON-RPC", async () => {
    await stillRelays();
    expect(answeredTwice(bridge)).toEqual([]);
    expect(bridge.nonJsonLines).toEqual([]);
    expect(bridge.child.exitCode).toBeNull();
  });
});
