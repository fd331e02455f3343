/**
 * Vitest reporter: ends every run with one line saying what was skipped and why. With CHAT_TEST_STRICT=1 any skip
 * fails the run, except skips whose requirement CHAT_TEST_ALLOW_SKIPS names (comma-separated, e.g. "keychain").
 */
import type { Reporter, TestModule } from "vitest/node";

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
      ([reason, count]) => `${count} ${count === 1 ? "test" : "tests"} ${reason}`,
    );
    process.stdout.write(`\nSkipped: ${parts.length === 0 ? "nothing" : parts.join("; ")}\n`);

    if (process.env.CHAT_TEST_STRICT !== "1") return;
    const allowed = new Set((process.env.CHAT_TEST_ALLOW_SKIPS ?? "").split(",").filter(Boolean));
    const refused = [...byReason.keys()].filter(
      (reason) => !allowed.has(/^\[([^\]]+)\]/.exec(reason)?.[1] ?? ""),
    );
    if (refused.length > 0) {
      process.stdout.write(
        `CHAT_TEST_STRICT=1: failing the run, these skips are not allowed: ${refused.join("; ")}\n`,
      );
      process.exitCode = 1;
    }
  }
}
