/** The demo removes its temp config (with its tokens) on SIGTERM and SIGHUP as on Ctrl-C, exiting 128 + the signal. */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removeOnSignals } from "../../src/demo/setup.js";
import { scratchDir } from "../support/scratch-dir.js";

describe("removeOnSignals", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)("%s removes the config folder and exits %i", (signal, code) => {
    const dir = scratchDir("chat-mcp-bridge-demo-");
    writeFileSync(join(dir, "tokens.json"), "{}");
    const exits: number[] = [];
    let said = "";
    const dispose = removeOnSignals(dir, { write: (text) => (said += text), exit: (c) => exits.push(c) });
    try {
      process.emit(signal);
      expect(existsSync(dir)).toBe(false);
      expect(exits).toEqual([code]);
      expect(said).toMatch(/Demo (interrupted|stopped)/);
    } finally {
      dispose();
    }
  });
});
