/** doctor's report: the lines a terminal shows (each ✓, ✗ or · with its fix) and the `--json` document. */

import { sanitizeForTerminal } from "../../internal/redact.js";
import type { DoctorCheck } from "./check.js";

export interface DoctorReport {
  url: string;
  profile: string;
  ok: boolean;
  checks: DoctorCheck[];
}

const PASS = "✓";
const FAIL = "✗";
const SKIP = "·";

/** The report of a run: ok when no check failed. */
export function reportOf(url: string, profile: string, checks: DoctorCheck[]): DoctorReport {
  return { url, profile, ok: checks.every((check) => check.status !== "fail"), checks };
}

/** The first line: what is checked, for which profile. */
export function formatHeading(rawUrl: string, profile: string): string {
  return `chat-mcp-bridge doctor: ${sanitizeForTerminal(rawUrl, { oneLine: true })} (profile ${sanitizeForTerminal(profile, { oneLine: true })})\n`;
}

/** One check's line, and its fix under it; text from outside is made safe for a terminal. */
export function formatCheck(check: DoctorCheck): string {
  const mark = check.status === "pass" ? PASS : check.status === "fail" ? FAIL : SKIP;
  const fix = check.fix ? `\n    fix: ${sanitizeForTerminal(check.fix, { oneLine: true })}` : "";
  return `${mark} ${check.title}: ${sanitizeForTerminal(check.detail, { oneLine: true })}${fix}\n`;
}

/** The last line: all passed, or how many failed. */
export function formatSummary(report: DoctorReport): string {
  const failed = report.checks.filter((check) => check.status === "fail").length;
  return failed === 0
    ? "All checks passed.\n"
    : `${failed} check${failed === 1 ? "" : "s"} failed; the fix is under each ${FAIL}.\n`;
}

/** The `--json` document. */
export function formatJson(report: DoctorReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
