/** The run's skip line says how to fix each skip it names. */
import { describe, expect, it } from "vitest";
import { FIXES, fixFor } from "./skip-summary.js";

describe("skip line fixes", () => {
  it.each(["chromium", "keychain", "python3", "node24", "openssl"])(
    "[%s] comes with how to install it",
    (name) => {
      expect(fixFor(`[${name}] missing here`)).toBe(` (fix: ${FIXES[name]})`);
      expect(FIXES[name]).toMatch(/install|fetch|run/);
    },
  );

  it("an unknown requirement gets no made-up fix", () => {
    expect(fixFor("[unexplained] test/x.test.ts")).toBe("");
  });
});
