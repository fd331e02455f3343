/** The suite's leftover check: a private temp folder per run, listed and removed at the end, fatal when strict. */
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkLeftovers, leftoversIn, usePrivateTempDir } from "./leftovers.js";

describe("the run's private temp folder", () => {
  it("is where this test file's tmpdir() points (the suite set TMPDIR before the workers started)", () => {
    expect(tmpdir()).toMatch(/cmb-suite-[^/]+$/);
  });

  it("is created under the current temp folder, sticky and world-writable as /tmp, and exported as TMPDIR", () => {
    const env: NodeJS.ProcessEnv = {};
    const dir = usePrivateTempDir(env);
    try {
      expect(env.TMPDIR).toBe(dir);
      expect(statSync(dir).mode & 0o7777).toBe(0o1777);
    } finally {
      checkLeftovers(dir, { strict: false, write: () => {} });
    }
  });
});

describe("checkLeftovers after the run", () => {
  it("lists what tests left, removes it, and says none when clean", () => {
    const dir = mkdtempSync(join(tmpdir(), "leftover-check-"));
    mkdirSync(join(dir, "chat-cli-test-abc"));
    writeFileSync(join(dir, "cmb-x"), "");
    expect(leftoversIn(dir)).toEqual(["chat-cli-test-abc", "cmb-x"]);
    let said = "";
    checkLeftovers(dir, { strict: false, write: (text) => (said += text) });
    expect(said).toContain("Leftovers in the temp folder: 2");
    expect(said).toContain("chat-cli-test-abc, cmb-x");
    expect(existsSync(dir)).toBe(false);

    const clean = mkdtempSync(join(tmpdir(), "leftover-check-"));
    said = "";
    expect(checkLeftovers(clean, { strict: true, write: (text) => (said += text) })).toBe(true);
    expect(said).toBe("Leftovers in the temp folder: none\n");
  });

  it("does not count Node's own compile cache (node-compile-cache, made by chat-cli on Node >= 22.1)", () => {
    const dir = mkdtempSync(join(tmpdir(), "leftover-check-"));
    mkdirSync(join(dir, "node-compile-cache"));
    writeFileSync(join(dir, "cmb-left"), "");
    expect(leftoversIn(dir)).toEqual(["cmb-left"]);
    checkLeftovers(dir, { strict: false, write: () => {} });
    expect(existsSync(dir)).toBe(false);
  });

  it("fails a strict run (CHAT_TEST_STRICT=1) when anything was left", () => {
    const dir = mkdtempSync(join(tmpdir(), "leftover-check-"));
    writeFileSync(join(dir, "cmb-left"), "");
    let said = "";
    expect(checkLeftovers(dir, { strict: true, write: (text) => (said += text) })).toBe(false);
    expect(said).toMatch(/failing the run, 1 temp folder entries were left/);
    expect(existsSync(dir)).toBe(false);
  });
});
