/** The check model every doctor check follows: what a check reads and returns, and the one function that runs one. */

import type { DiscoveredServer } from "../../auth/discovery.js";
import type { OAuthSession } from "../../auth/session/index.js";
import { withinDeadline } from "../../internal/deadline.js";
import type { ProxyChoice } from "../../internal/proxy.js";
import { describeError } from "../log/log.js";
import type { DoctorCommandOptions, DoctorTarget } from "../options/bridge-options.js";
import type { EraVerdict } from "../upstream/probe.js";

export type CheckStatus = "pass" | "fail" | "skip";

/** One line of the report (the `--json` shape). */
export interface DoctorCheck {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

/** What a check's run found; `title` names this run when it differs from the check's (the live check's era). */
export type CheckResult = Omit<DoctorCheck, "id" | "title"> & { title?: string };

export type DoctorOptions = DoctorCommandOptions;

/** The network every request of doctor's goes through: the bin's own unless a caller (a test) gives a fetch. */
export interface DoctorDependencies {
  fetch?: typeof globalThis.fetch;
}

export interface DoctorReport {
  url: string;
  profile: string;
  ok: boolean;
  checks: DoctorCheck[];
}

/** What a check reads: the command, the session (made on first use), and what the checks before it found. */
export interface DoctorContext {
  target: DoctorTarget;
  /** The URL the url check accepted. */
  url: URL;
  options: DoctorOptions;
  env: Record<string, string | undefined>;
  /** Through this fetch when given (a test's in-process server); DNS, TCP and TLS then say they opened nothing. */
  fetch?: typeof globalThis.fetch;
  session(): Promise<OAuthSession>;
  /** Set by the checks, each by its own (the proxy's undefined when direct). */
  proxy?: ProxyChoice;
  /** Whether it asks for a sign-in no `--header` stands in for. */
  endpoint?: { failed: boolean; needsAuth: boolean; resourceMetadataUrl?: string };
  authorizationServer?: DiscoveredServer;
  verdict?: EraVerdict;
  /** The live check's `tools/list` result. */
  listed?: unknown;
}

/** One check: its line's id and title, the most its run may take, and the run (a throw is its failure). */
export interface Check {
  id: string;
  title: string;
  deadlineMs(options: DoctorOptions): number;
  /** `signal` is aborted when the check ends: whatever it still has under way stops. */
  run(context: DoctorContext, signal: AbortSignal): Promise<CheckResult>;
}

export function check(
  id: string,
  title: string,
  deadline: number | Check["deadlineMs"],
  run: Check["run"],
): Check {
  return { id, title, deadlineMs: typeof deadline === "number" ? () => deadline : deadline, run };
}

/** The deadline of a check that may sign in under `--sign-in`: `ms`, and the sign-in's `--auth-timeout`. */
export const withSignIn =
  (ms: number) =>
  (options: DoctorOptions): number =>
    ms + (options.signIn ? (options.authTimeoutMs ?? 300_000) : 0);

/** A check as recorded, with the reason it was skipped for (`notRun`) when an earlier check stopped it. */
export type Outcome = DoctorCheck & { notRun?: string };

/** Why a check that needs `need` cannot run: the reason `need` was skipped for, or `whenFailed` when it failed. */
export const unmetBy = (need: Outcome, whenFailed: string): string | undefined =>
  need.notRun ?? (need.status === "fail" ? whenFailed : undefined);

/**
 * Runs `check` within its deadline, unless `unmet` says why not (then it is skipped, saying so); a throw, or the
 * deadline passing, is its failure.
 */
export async function runCheck(check: Check, context: DoctorContext, unmet?: string): Promise<Outcome> {
  const { id, title } = check;
  if (unmet !== undefined)
    return { id, title, status: "skip", detail: `not checked (${unmet})`, notRun: unmet };
  const stop = new AbortController();
  const deadlineMs = check.deadlineMs(context.options);
  const seconds = deadlineMs >= 1000 ? `${Math.round(deadlineMs / 100) / 10} s` : `${deadlineMs} ms`;
  const overdue = `the check did not finish within its deadline of ${seconds}`;
  try {
    const running = Promise.resolve().then(() => check.run(context, stop.signal));
    const { title: named, fix, ...result } = await withinDeadline(running, deadlineMs, overdue);
    return { id, title: named ?? title, ...result, ...(fix ? { fix } : {}) };
  } catch (error) {
    const why =
      error instanceof Error && error.message === overdue
        ? "something on the way does not answer"
        : "this is a doctor bug or an unexpected answer";
    const fix = `${why}: run the bridge with --debug and look at the log file`;
    return { id, title, status: "fail", detail: describeError(error), fix };
  } finally {
    stop.abort(new Error(`the ${title} check ended`));
  }
}

/** The command that signs in again for this URL and profile (in the store doctor read). */
export function loginCommand(url: URL, options: DoctorOptions): string {
  const profile = options.profile && options.profile !== "default" ? ` --profile ${options.profile}` : "";
  const store = options.tokenStore !== "auto" ? ` --token-store ${options.tokenStore}` : "";
  return `chat-mcp-bridge login${profile}${store} ${url.href}`;
}

export const pass = (detail: string): CheckResult => ({ status: "pass", detail });
export const fail = (detail: string, fix: string): CheckResult => ({ status: "fail", detail, fix });

/** A message whose last sentence says what to do, as the network failures' messages are: detail and fix. */
export function asDetailAndFix(message: string, fallbackFix: string): { detail: string; fix: string } {
  const sentences = message.trim().split(/(?<=\.)\s+(?=[A-Z])/);
  if (sentences.length < 2) return { detail: message.trim(), fix: fallbackFix };
  return { detail: sentences.slice(0, -1).join(" "), fix: sentences.at(-1)! };
}
