/** The unit project (vitest.config.ts) runs in the test's own process: a unit test file that starts one is misfiled. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  INTEGRATION_FILES,
  INTEGRATION_FOLDERS,
  ISOLATED_UNIT_FILES,
  SLOW_FILES_FIRST,
} from "../projects.js";

const root = join(import.meta.dirname, "..", "..");

/** What starts a process in a test: node:child_process itself, or a fixture that calls it. */
const STARTS_A_PROCESS =
  /from "node:child_process"|\bBRIDGE_BIN\b|\b(runCli|runProcess|spawnRawBridge|connectThroughBridge|connectV2ThroughBridge|bridgeTransport|spawnBridgeDriver|signInAgainst|runHttpBrowser|startChildServer|startProxiedService)\(/;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith(".test.ts") ? [relative(root, path).split("\\").join("/")] : [];
  });
}

const isIntegration = (file: string) =>
  INTEGRATION_FILES.includes(file) || INTEGRATION_FOLDERS.some((folder) => file.startsWith(`${folder}/`));

describe("the unit project", () => {
  it("holds no test file that starts a process (those are listed in test/projects.ts)", () => {
    // This file names the patterns in its own examples.
    const self = relative(root, import.meta.filename)
      .split("\\")
      .join("/");
    const unit = testFiles(join(root, "test")).filter((file) => !isIntegration(file) && file !== self);
    expect(unit.length).toBeGreaterThan(50);
    const starting = unit.filter((file) => STARTS_A_PROCESS.test(readFileSync(join(root, file), "utf8")));
    expect(starting).toEqual([]);
  });

  it("shares a module graph only among files that mock no module (those are ISOLATED_UNIT_FILES)", () => {
    const self = relative(root, import.meta.filename)
      .split("\\")
      .join("/");
    const unit = testFiles(join(root, "test")).filter((file) => !isIntegration(file) && file !== self);
    const mocking = unit.filter((file) =>
      /\bvi\.(mock|doMock|resetModules)\(/.test(readFileSync(join(root, file), "utf8")),
    );
    expect(mocking.sort()).toEqual([...ISOLATED_UNIT_FILES].sort());
  });

  it("would catch a unit test file that spawns", () => {
    expect(STARTS_A_PROCESS.test('import { spawn } from "node:child_process";')).toBe(true);
    expect(STARTS_A_PROCESS.test("const raw = spawnRawBridge([url]);")).toBe(true);
    expect(STARTS_A_PROCESS.test('import { initializeLine } from "./fixtures/spawn-bridge.js";')).toBe(false);
  });
});

describe("the slow files started first", () => {
  it("are integration test files that exist", () => {
    const all = testFiles(join(root, "test"));
    for (const file of SLOW_FILES_FIRST) {
      expect(all, file).toContain(file);
      expect(isIntegration(file), file).toBe(true);
    }
  });
});
