/** Runs doctor's checks in order: skips a check whose needs did not hold, bounds each by its deadline, and turns a throw into a failure. */

import { withinDeadline } from "../../internal/deadline.js";
import { describeError } from "../log/log.js";
import type { Check, CheckResult, DoctorCheck, DoctorContext } from "./check.js";

/** Runs `checks` in their order; `onResult` hears each result as soon as it is known. */
export async function runChecks(
  checks: readonly Check[],
  context: Omit<DoctorContext, "statusOf">,
  onResult?: (result: DoctorCheck) => void,
): Promise<DoctorCheck[]> {
  const results = new Map<string, DoctorCheck>();
  /** Checks the runner skipped, with the reason a check that needs them passes on. */
  const skippedFor = new Map<string, string>();
  const full: DoctorContext = { ...context, statusOf: (id) => results.get(id)?.status };
  const done: DoctorCheck[] = [];
  for (const check of checks) {
    if (check.appliesTo && !check.appliesTo(full)) continue;
    const reason = unmetNeed(check, results, skippedFor) ?? check.skipWhen?.(full);
    let result: DoctorCheck;
    if (reason !== undefined) {
      skippedFor.set(check.id, reason);
      result = { id: check.id, title: check.title, status: "skip", detail: `not checked (${reason})` };
    } else {
      result = toDoctorCheck(check, await runOne(check, full));
    }
    results.set(check.id, result);
    done.push(result);
    onResult?.(result);
  }
  return done;
}

/** Why a need of `check` did not hold: the first need that failed (its `whenFailed`) or was skipped (its reason). */
function unmetNeed(
  check: Check,
  results: Map<string, DoctorCheck>,
  skippedFor: Map<string, string>,
): string | undefined {
  for (const need of check.needs) {
    const skipped = skippedFor.get(need.id);
    if (skipped !== undefined) return skipped;
    const status = results.get(need.id)?.status;
    if (status === "fail") return need.whenFailed;
    // A need that did not run at all (an ordering mistake) counts as failed rather than as met.
    if (status === undefined) return need.whenFailed;
  }
  return undefined;
}

/** One check within its deadline; a throw, or the deadline passing, is its failure. */
async function runOne(check: Check, context: DoctorContext): Promise<CheckResult> {
  const deadlineMs = check.deadlineMs(context);
  const stop = new AbortController();
  const seconds = deadlineMs >= 1000 ? `${Math.round(deadlineMs / 100) / 10} s` : `${deadlineMs} ms`;
  const overdue = `the check did not finish within its deadline of ${seconds}`;
  try {
    return await withinDeadline(check.run(context, stop.signal), deadlineMs, overdue);
  } catch (error) {
    const timedOut = error instanceof Error && error.message === overdue;
    return {
      status: "fail",
      detail: describeError(error),
      fix: timedOut
        ? "something on the way does not answer: run the bridge with --debug and look at the log file"
        : "this is a doctor bug or an unexpected answer: run the bridge with --debug and look at the log file",
    };
  } finally {
    // Whatever the check still has under way (a request, a handshake) is told to stop.
    stop.abort(new Error(`the ${check.title} check ended`));
  }
}

function toDoctorCheck(check: Check, result: CheckResult): DoctorCheck {
  return {
    id: check.id,
    title: result.title ?? check.title,
    status: result.status,
    detail: result.detail,
    ...(result.fix ? { fix: result.fix } : {}),
  };
}
