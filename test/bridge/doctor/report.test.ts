/** doctor's report: one line per check with its mark and fix, text from outside made safe, the summary and `--json`. */
import { describe, expect, it } from "vitest";
import type { DoctorCheck } from "../../../src/bridge/doctor/check.js";
import {
  formatCheck,
  formatHeading,
  formatJson,
  formatSummary,
  reportOf,
} from "../../../src/bridge/doctor/index.js";

const pass: DoctorCheck = { id: "a", title: "Check a", status: "pass", detail: "fine" };
const failed: DoctorCheck = { id: "b", title: "Check b", status: "fail", detail: "broken", fix: "mend it" };
const skipped: DoctorCheck = { id: "c", title: "Check c", status: "skip", detail: "not checked (b failed)" };

describe("the report's lines", () => {
  it("marks ✓, ✗ and ·, with the fix on its own line under a failure", () => {
    expect(formatCheck(pass)).toBe("✓ Check a: fine\n");
    expect(formatCheck(failed)).toBe("✗ Check b: broken\n    fix: mend it\n");
    expect(formatCheck(skipped)).toBe("· Check c: not checked (b failed)\n");
  });

  it("a server's words cannot move the cursor, recolour the terminal or add lines", () => {
    const hostile: DoctorCheck = {
      id: "endpoint",
      title: "MCP endpoint",
      status: "fail",
      detail: "unexpected answer \u001b[2J\u001b[31mred\nsecond line",
      fix: "check\u001b]0;title\u0007 the URL\r\nnow",
    };
    const line = formatCheck(hostile);
    expect(line).not.toMatch(/[\u001b\u0007\r]/);
    // One line for the check, one for its fix.
    expect(line.trimEnd().split("\n")).toHaveLength(2);
  });

  it("the heading names the URL and profile, made safe the same way", () => {
    expect(formatHeading("http://127.0.0.1:1/mcp", "default")).toBe(
      "chat-mcp-bridge doctor: http://127.0.0.1:1/mcp (profile default)\n",
    );
    expect(formatHeading("http://x/\u001b[31m\nmcp", "p")).not.toMatch(/[\u001b]|\n(?!$)/);
  });
});

describe("the summary and --json", () => {
  it("ok only when no check failed; a skip is not a failure", () => {
    expect(reportOf("u", "default", [pass, skipped]).ok).toBe(true);
    expect(reportOf("u", "default", [pass, failed, skipped]).ok).toBe(false);
  });

  it("says all passed, or how many failed", () => {
    expect(formatSummary(reportOf("u", "p", [pass, skipped]))).toBe("All checks passed.\n");
    expect(formatSummary(reportOf("u", "p", [failed]))).toBe("1 check failed; the fix is under each ✗.\n");
    expect(formatSummary(reportOf("u", "p", [failed, { ...failed, id: "d" }]))).toBe(
      "2 checks failed; the fix is under each ✗.\n",
    );
  });

  it("--json is { url, profile, ok, checks: [{ id, title, status, detail, fix? }] }", () => {
    const parsed = JSON.parse(formatJson(reportOf("http://x/mcp", "acme", [pass, failed])));
    expect(parsed).toEqual({
      url: "http://x/mcp",
      profile: "acme",
      ok: false,
      checks: [
        { id: "a", title: "Check a", status: "pass", detail: "fine" },
        { id: "b", title: "Check b", status: "fail", detail: "broken", fix: "mend it" },
      ],
    });
  });
});
