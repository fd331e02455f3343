/** doctor's one check runner: a check after one that failed is skipped with a reason, a deadline fails a hung check, a throw fails only its own check. */
import { describe, expect, it, vi } from "vitest";
import {
  type Check,
  type CheckResult,
  check,
  type DoctorContext,
  runCheck,
  unmetBy,
} from "../../../src/bridge/doctor/check.js";

const pass: CheckResult = { status: "pass", detail: "fine" };
const failed: CheckResult = { status: "fail", detail: "broken", fix: "mend it" };
const context = { options: {} } as DoctorContext;
/** Check `id`, answering `result` (or running it) within `deadlineMs`; run unless `unmet` names a reason. */
const run = (id: string, result: CheckResult | Check["run"], unmet?: string, deadlineMs = 5_000) => {
  const answer = typeof result === "function" ? result : async () => result;
  return runCheck(check(id, `Check ${id}`, deadlineMs, answer), context, unmet);
};

describe("a check and the checks that need it", () => {
  it("reports what the check found, its fix only when it has one", async () => {
    expect(await run("a", pass)).toEqual({ id: "a", title: "Check a", status: "pass", detail: "fine" });
    expect(await run("b", failed)).toEqual({ id: "b", title: "Check b", ...failed });
  });

  it("a check whose need failed is skipped with the need's reason, and never runs", async () => {
    let ran = false;
    const b = await run(
      "b",
      async () => {
        ran = true;
        return pass;
      },
      unmetBy(await run("a", failed), "a is broken"),
    );
    expect(ran).toBe(false);
    expect(b).toMatchObject({
      id: "b",
      title: "Check b",
      status: "skip",
      detail: "not checked (a is broken)",
    });
  });

  it("a check that needs a skipped check is skipped for the same reason, down the chain", async () => {
    const b = await run("b", pass, unmetBy(await run("a", failed), "a is broken"));
    const c = await run("c", pass, unmetBy(b, "b is broken"));
    expect(c.detail).toBe("not checked (a is broken)");
  });

  it("a need that skipped itself (nothing to check) does not block the checks after it", async () => {
    const tls = await run("tls", { status: "skip", detail: "not used (plain http)" });
    expect(unmetBy(tls, "the server is not reachable")).toBeUndefined();
    expect(unmetBy(await run("a", pass), "a is broken")).toBeUndefined();
  });

  it("a result may name its own title", async () => {
    expect((await run("a", { ...pass, title: "Another title" })).title).toBe("Another title");
  });
});

describe("deadlines and throws", () => {
  it("a check that hangs past its deadline fails with the deadline named, and its signal is aborted", async () => {
    let aborted = false;
    const hangs = await run(
      "hangs",
      (_context, signal) =>
        new Promise<CheckResult>(() => {
          signal.addEventListener("abort", () => {
            aborted = true;
          });
        }),
      undefined,
      50,
    );
    expect(hangs).toMatchObject({
      status: "fail",
      detail: "the check did not finish within its deadline of 50 ms",
      fix: expect.stringMatching(/does not answer/),
    });
    expect(aborted).toBe(true);
  });

  it("names a deadline of seconds in seconds", async () => {
    vi.useFakeTimers();
    try {
      const running = run("hangs", () => new Promise<CheckResult>(() => {}), undefined, 1_500);
      await vi.advanceTimersByTimeAsync(1_500);
      expect((await running).detail).toBe("the check did not finish within its deadline of 1.5 s");
    } finally {
      vi.useRealTimers();
    }
  });

  it("a check that throws (or rejects) is a failure with the error's words, not a crash", async () => {
    const rejects = await run("rejects", async () => {
      throw new Error("the answer made no sense");
    });
    expect(rejects).toMatchObject({ status: "fail", detail: "the answer made no sense" });
    expect(rejects.fix).toMatch(/--debug/);
    const throws = await run("throws", () => {
      throw new TypeError("not a function");
    });
    expect(throws).toMatchObject({ status: "fail", detail: expect.stringContaining("not a function") });
    expect(unmetBy(rejects, "rejects failed")).toBe("rejects failed");
  });
});
