/**
 * Vitest reporter: ends every run with one line saying what was skipped and why. With CHAT_TEST_STRICT=1 any skip
 * fails the run, except skips whose requirement CHAT_TEST_ALLOW_SKIPS names (comma-separated, e.g. "keychain").
 */
import type { Reporter, TestModule } from "vitest/node";

/** How to fix a skip, by requirement (the `[name]` its reason starts with). */
export const FIXES: Record<string, string> = {
  chromium:
    "install Chromium (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium), or set CHAT_TEST_CHROMIUM to a Chromium binary",
  keychain:
    "run under `npm test` on a desktop session, or install gnome-keyring and dbus (apt-get install gnome-keyring dbus-x11)",
  python3: "install python3 (its pty module comes with it): apt-get install python3",
  openssl: "install openssl: apt-get install openssl",
  "conformance-expected-failure":
    "nothing to do: a known failure of the conformance suite, listed in its test",
};

/** ` (fix: ...)` for a reason whose requirement has a known fix, else "". */
export function fixFor(reason: string): string {
  const requirement = /^\[([^\]]+)\]/.exec(reason)?.[1] ?? "";
  // The keychain tests load an optional module: when that is what is missing, installing it is the fix.
  if (requirement === "keychain-module") {
    const module = /Cannot find module '([^']+)'/.exec(reason)?.[1] ?? "keytar";
    return ` (fix: npm install --no-save ${module})`;
  }
  const fix = FIXES[requirement];
  return fix ? ` (fix: ${fix})` : "";
}

export default class SkipSummary implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const byReason = new Map<string, number>();
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== "skipped") continue;
        const reason = test.meta().skipReason ?? result.note ?? `[unexplained] ${module.moduleId}`;
        byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
      }
    }
    const parts = [...byReason].map(
      ([reason, count]) => `${count} ${count === 1 ? "test" : "tests"} ${reason}${fixFor(reason)}`,
    );
    process.stdout.write(`\nSkipped: ${parts.length === 0 ? "nothing" : parts.join("; ")}\n`);

    if (process.env.CHAT_TEST_STRICT !== "1") return;
    const allowed = new Set((process.env.CHAT_TEST_ALLOW_SKIPS ?? "").split(",").filter(Boolean));
    // "keychain" allows both keychain skips: no Secret Service, and no keychain module installed.
    const isAllowed = (requirement: string) =>
      allowed.has(requirement) || allowed.has(requirement.replace(/-module$/, ""));
    const refused = [...byReason.keys()].filter(
      (reason) => !isAllowed(/^\[([^\]]+)\]/.exec(reason)?.[1] ?? ""),
    );
    if (refused.length > 0) {
      process.stdout.write(
        `CHAT_TEST_STRICT=1: failing the run, these skips are not allowed: ${refused.join("; ")}\n`,
      );
      process.exitCode = 1;
    }
  }
}
