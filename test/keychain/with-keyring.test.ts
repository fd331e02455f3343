/** scripts/with-keyring.sh (the test run's private keyring): its D-Bus session adds nothing to the run's output. */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { needs } from "../support/requirements.js";

const ROOT = join(import.meta.dirname, "../..");
const missing = ["dbus-run-session", "gnome-keyring-daemon"].find((program) => {
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
});

/** Runs scripts/with-keyring.sh with `command`, as `npm test` does (from outside a keyring session). */
function withKeyring(command: string[]) {
  const env = { ...process.env };
  delete env.CHAT_TEST_IN_KEYRING;
  return spawnSync("bash", [join(ROOT, "scripts/with-keyring.sh"), ...command], { env, encoding: "utf8" });
}

describe("with-keyring.sh", needs("keychain", missing && `${missing} is not on PATH`), () => {
  it("does not pass on dbus-daemon's 'Failed to set fd limit' line", () => {
    const result = withKeyring(["true"]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/Failed to set fd limit/);
  });

  it("stops its keyring daemon before it removes the keyring folder, and leaves neither behind", () => {
    const script = 'printf "%s\\n%s\\n" "$XDG_DATA_HOME" "$GNOME_KEYRING_CONTROL"';
    const result = withKeyring(["sh", "-c", script]);
    expect(result.status, result.stderr).toBe(0);
    const [dataHome, control] = result.stdout.trim().split("\n");
    expect(dataHome).toMatch(/\S/);
    expect(control).toMatch(/\S/);
    // The daemon removes its control folder when it stops; one left to outlive the session keeps it.
    expect(existsSync(control!)).toBe(false);
    expect(existsSync(dataHome!)).toBe(false);
  });

  it("passes on the command's exit status", () => {
    const result = withKeyring(["sh", "-c", "exit 3"]);
    expect(result.status).toBe(3);
  });
});
