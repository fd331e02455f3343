/** The run's skip line says how to fix each skip it names. */
import { describe, expect, it } from "vitest";
import { FIXES, fixFor } from "./skip-summary.js";

describe("skip line fixes", () => {
  it.each(["chromium", "keychain", "python3", "openssl"])("[%s] comes with how to install it", (name) => {
    expect(fixFor(`[${name}] missing here`)).toBe(` (fix: ${FIXES[name]})`);
    expect(FIXES[name]).toMatch(/install|fetch|run/);
  });

  it("a keychain module that is not installed: the fix installs it, not gnome-keyring", () => {
    const fix = fixFor("[keychain-module] keytar: Cannot find module 'keytar'");
    expect(fix).toContain("npm install --no-save keytar");
    expect(fix).not.toMatch(/gnome-keyring|dbus/);
    expect(fixFor("[keychain-module] @napi-rs/keyring: Cannot find module '@napi-rs/keyring'")).toContain(
      "npm install --no-save @napi-rs/keyring",
    );
  });

  it("an unknown requirement gets no made-up fix", () => {
    expect(fixFor("[unexplained] test/x.test.ts")).toBe("");
  });
});
