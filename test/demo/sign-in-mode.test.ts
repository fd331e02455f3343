/** How the demo signs in: a browser only for a person at a terminal with a browser, otherwise headless and saying why. */
import { describe, expect, it } from "vitest";
import { chooseSignInMode, type SignInSituation } from "../../src/demo/setup.js";

const terminal: SignInSituation = {
  forcedHeadless: false,
  stdinIsTTY: true,
  stdoutIsTTY: true,
  platform: "linux",
  env: { DISPLAY: ":0" },
};

describe("sign-in mode", () => {
  it.each<[string, Partial<SignInSituation>, "browser" | "headless"]>([
    ["a terminal on a Linux desktop (X11)", {}, "browser"],
    ["a terminal on a Linux desktop (Wayland)", { env: { WAYLAND_DISPLAY: "wayland-0" } }, "browser"],
    ["a terminal with $BROWSER set, no desktop", { env: { BROWSER: "firefox" } }, "browser"],
    ["a terminal on macOS", { platform: "darwin", env: {} }, "browser"],
    ["a terminal on Windows", { platform: "win32", env: {} }, "browser"],
    ["--headless on a desktop terminal", { forcedHeadless: true }, "headless"],
    ["stdin not a terminal (CI, < /dev/null)", { stdinIsTTY: false }, "headless"],
    ["stdout not a terminal (piped)", { stdoutIsTTY: false }, "headless"],
    ["a Linux terminal with no desktop and no $BROWSER (ssh)", { env: {} }, "headless"],
    ["$CI set", { env: { DISPLAY: ":0", CI: "true" } }, "headless"],
  ])("%s -> %s", (_name, change, expected) => {
    const mode = chooseSignInMode({ ...terminal, ...change });
    expect(mode.kind).toBe(expected);
    expect(mode.reason.length).toBeGreaterThan(0);
  });
});
