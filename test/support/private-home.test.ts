/** The setup file test/support/private-home.ts: a test file's home and config folder are its own temp folders. */
import { tmpdir } from "node:os";
import { sep } from "node:path";
import { describe, expect, it } from "vitest";
import { configDir } from "../../src/config/index.js";

describe("a test file's home folder", () => {
  it("is a temp folder of its own, and the config folder is inside it", () => {
    const home = process.env.HOME ?? "";
    expect(home.startsWith(`${tmpdir()}${sep}cmb-home-`)).toBe(true);
    expect(configDir().startsWith(`${home}${sep}`)).toBe(true);
  });
});
