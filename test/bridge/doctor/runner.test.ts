/** doctor's runner: needs skip a check with a reason, a deadline fails a hung check, a throw fails only its own check. */
import { describe, expect, it, vi } from "vitest";
import type { Check, CheckResult, DoctorContext } from "../../../src/bridge/doctor/check.js";
import { runChecks } from "../../../src/bridge/doctor/runner.js";

const context: Omit<DoctorContext, "statusOf"> = {
  target: { raw: "http://127.0.0.1:1/mcp" },
  options: {} as DoctorContext["options"],
  env: {},
  found: {},
  session: () => Promise.reject(new Error("no session in these tests")),
};

/** A check that answers `result` (or runs `run`), needing the given checks. */
function fake(
  id: string,
  run: CheckResult | Check["run"],
  more: Partial<Omit<Check, "id" | "run">> = {},
): Check {
  return {
    id,
    title: `Check ${id}`,
    needs: [],
    deadlineMs: () => 5_000,
    run: typeof run === "function" ? run : async () => run,
    ...more,
  };
}
const pass: CheckResult = { status: "pass", detail: "fine" };
const failed: CheckResult = { status: "fail", detail: "broken", fix: "mend it" };

describe("the runner: order and needs", () => {
  it("runs checks in order and reports each as soon as it is known", async () => {
    const heard: string[] = [];
    const results = await runChecks([fake("a", pass), fake("b", failed)], context, (result) =>
      heard.push(`${result.id}:${result.status}`),
    );
    expect(heard).toEqual(["a:pass", "b:fail"]);
    expect(results).toEqual([
      { id: "a", title: "Check a", status: "pass", detail: "fine" },
      { id: "b", title: "Check b", status: "fail", detail: "broken", fix: "mend it" },
    ]);
  });

  it("a check whose need failed is skipped with the need's reason, and never runs", async () => {
    let ran = false;
    const results = await runChecks(
      [
        fake("a", failed),
        fake(
          "b",
          async () => {
            ran = true;
            return pass;
          },
          { needs: [{ id: "a", whenFailed: "a is broken" }] },
        ),
      ],
      context,
    );
    expect(ran).toBe(false);
    expect(results[1]).toEqual({
      id: "b",
      title: "Check b",
      status: "skip",
      detail: "not checked (a is broken)",
    });
  });

  it("a check that needs a skipped check is skipped for the same reason, down the chain", async () => {
    const results = await runChecks(
      [
        fake("a", failed),
        fake("b", pass, { needs: [{ id: "a", whenFailed: "a is broken" }] }),
        fake("c", pass, { needs: [{ id: "b", whenFailed: "b is broken" }] }),
      ],
      context,
    );
    expect(results.map((result) => result.detail)).toEqual([
      "broken",
      "not checked (a is broken)",
      "not checked (a is broken)",
    ]);
  });

  it("a need that skipped itself (nothing to check) does not block the checks after it", async () => {
    const results = await runChecks(
      [
        fake("tls", { status: "skip", detail: "not used (plain http)" }),
        fake("endpoint", pass, { needs: [{ id: "tls", whenFailed: "the server is not reachable" }] }),
      ],
      context,
    );
    expect(results[1]?.status).toBe("pass");
  });

  it("a need that never ran counts as unmet, not as met", async () => {
    const results = await runChecks(
      [fake("b", pass, { needs: [{ id: "missing", whenFailed: "missing did not run" }] })],
      context,
    );
    expect(results[0]).toMatchObject({ status: "skip", detail: "not checked (missing did not run)" });
  });

  it("skipWhen skips on what earlier checks found, and the checks needing it inherit the reason", async () => {
    const results = await runChecks(
      [
        fake("a", pass),
        fake("b", pass, { skipWhen: ({ statusOf }) => (statusOf("a") === "pass" ? "a said no" : undefined) }),
        fake("c", pass, { needs: [{ id: "b", whenFailed: "b is broken" }] }),
      ],
      context,
    );
    expect(results.map((result) => `${result.status} ${result.detail}`)).toEqual([
      "pass fine",
      "skip not checked (a said no)",
      "skip not checked (a said no)",
    ]);
  });

  it("a check that does not apply is left out of the report", async () => {
    const results = await runChecks([fake("a", pass), fake("b", pass, { appliesTo: () => false })], context);
    expect(results.map((result) => result.id)).toEqual(["a"]);
  });

  it("a result may name its own title", async () => {
    const results = await runChecks([fake("a", { ...pass, title: "Another title" })], context);
    expect(results[0]?.title).toBe("Another title");
  });
});

describe("the runner: deadlines and throws", () => {
  it("a check that hangs past its deadline fails with the deadline named, its signal aborted, and the next check runs", async () => {
    let aborted = false;
    const hangs = fake(
      "hangs",
      (_context, signal) =>
        new Promise<CheckResult>(() => {
          signal.addEventListener("abort", () => {
            aborted = true;
          });
        }),
      { deadlineMs: () => 50 },
    );
    const results = await runChecks([hangs, fake("next", pass)], context);
    expect(results[0]).toMatchObject({
      id: "hangs",
      status: "fail",
      detail: "the check did not finish within its deadline of 50 ms",
      fix: expect.stringMatching(/does not answer/),
    });
    expect(aborted).toBe(true);
    expect(results[1]).toMatchObject({ id: "next", status: "pass" });
  });

  it("names a deadline of seconds in seconds", async () => {
    vi.useFakeTimers();
    try {
      const running = runChecks(
        [fake("hangs", () => new Promise<CheckResult>(() => {}), { deadlineMs: () => 1_500 })],
        context,
      );
      await vi.advanceTimersByTimeAsync(1_500);
      const results = await running;
      expect(results[0]?.detail).toBe("the check did not finish within its deadline of 1.5 s");
    } finally {
      vi.useRealTimers();
    }
  });

  it("a check that throws (or rejects) is a failure with the error's words, not a crash", async () => {
    const results = await runChecks(
      [
        fake("rejects", async () => {
          throw new Error("the answer made no sense");
        }),
        fake("throws", () => {
          throw new TypeError("not a function");
        }),
        fake("after", pass, { needs: [{ id: "rejects", whenFailed: "rejects failed" }] }),
      ],
      context,
    );
    expect(results[0]).toMatchObject({ status: "fail", detail: "the answer made no sense" });
    expect(results[0]?.fix).toMatch(/--debug/);
    expect(results[1]).toMatchObject({ status: "fail", detail: expect.stringContaining("not a function") });
    expect(results[2]).toMatchObject({ status: "skip", detail: "not checked (rejects failed)" });
  });
});
