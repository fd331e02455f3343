/** When a sign-in can open a browser (src/auth/sign-in-prompt.ts), per platform, with the platform injected. */
import { describe, expect, it } from "vitest";
import { headlessReason } from "../../src/auth/sign-in-prompt.js";

const ssh = { SSH_CONNECTION: "203.0.113.7 52100 192.0.2.10 22", SSH_TTY: "/dev/ttys003" };
const noWsl = () => false;

describe("macOS", () => {
  it("a desktop session opens the browser with `open`", () => {
    expect(headlessReason({}, { platform: "darwin" })).toBeUndefined();
  });
  it("over SSH, `open` would show the page on the Mac's own screen: the URL is shown instead", () => {
    expect(headlessReason(ssh, { platform: "darwin" })).toMatch(/over SSH/);
    expect(headlessReason({ SSH_CLIENT: "203.0.113.7 52100 22" }, { platform: "darwin" })).toMatch(
      /over SSH/,
    );
  });
  it("over SSH with $BROWSER set, the user's command is used", () => {
    expect(headlessReason({ ...ssh, BROWSER: "echo" }, { platform: "darwin" })).toBeUndefined();
  });
});

describe("Windows over OpenSSH", () => {
  it("shows the URL: the opener would start a browser in a session nobody sees", () => {
    expect(headlessReason(ssh, { platform: "win32" })).toMatch(/over SSH/);
    expect(headlessReason({}, { platform: "win32" })).toBeUndefined();
  });
});

describe("Linux", () => {
  it("no DISPLAY and no WAYLAND_DISPLAY: no browser", () => {
    expect(headlessReason({}, { platform: "linux", wslInterop: noWsl })).toMatch(/no desktop session/);
  });
  it("SSH with X forwarding (DISPLAY set) opens the browser", () => {
    expect(
      headlessReason({ ...ssh, DISPLAY: "localhost:10.0" }, { platform: "linux", wslInterop: noWsl }),
    ).toBeUndefined();
  });
  it("WSL with Windows interop: the Windows browser opens, DISPLAY or not", () => {
    expect(headlessReason({}, { platform: "linux", wslInterop: () => true })).toBeUndefined();
  });
});
