/** Runs doctor's checks for one URL and profile, in order, and prints them (text as they finish, or `--json` at the end). */

import type { OAuthSession } from "../../auth/session/index.js";
import { sanitizeForTerminal } from "../../internal/redact.js";
import { createBridgeLog } from "../log/log.js";
import type { DoctorTarget } from "../options/bridge-options.js";
import { createBridgeAuth } from "../sign-in/oauth.js";
import type { Check, DoctorCheck, DoctorOptions } from "./check.js";
import {
  authorizationServerCheck,
  loginCheck,
  registrationCheck,
  resourceMetadataCheck,
  tokenStoreCheck,
} from "./checks/authorization.js";
import { endpointCheck } from "./checks/endpoint.js";
import { eraCheck, liveCheck } from "./checks/live.js";
import { dnsCheck, proxyCheck, tcpCheck, tlsCheck, urlCheck } from "./checks/network.js";
import { confirmCheck, hiddenToolsCheck } from "./checks/tool-rules.js";
import { runChecks } from "./runner.js";

/** The checks in the order they run: each one after the checks it needs (see `Check.needs`). */
export const DOCTOR_CHECKS: readonly Check[] = [
  urlCheck,
  proxyCheck,
  dnsCheck,
  tcpCheck,
  tlsCheck,
  endpointCheck,
  resourceMetadataCheck,
  authorizationServerCheck,
  registrationCheck,
  tokenStoreCheck,
  loginCheck,
  eraCheck,
  liveCheck,
  hiddenToolsCheck,
  confirmCheck,
];

/** What doctor runs and through what: both the bin's own unless a caller (a test) gives them. */
export interface DoctorDependencies {
  /** The checks, in order (default: DOCTOR_CHECKS). */
  checks?: readonly Check[];
  /** The network: every request of doctor's (to the MCP server and its authorization server) goes through it. */
  fetch?: typeof globalThis.fetch;
}

/** Runs the checks and prints them (text or `--json`) on stdout; resolves with the exit code: 0 all passed, 1 otherwise. */
export async function runDoctor(
  target: DoctorTarget,
  options: DoctorOptions,
  env: Record<string, string | undefined> = process.env,
  write: (text: string) => void = (text) => process.stdout.write(text),
  dependencies: DoctorDependencies = {},
): Promise<number> {
  const report = await diagnose(target, options, env, options.json ? undefined : write, dependencies);
  write(options.json ? formatJson(report) : formatSummary(report));
  return report.ok ? 0 : 1;
}

/** Runs every check in order; each line is printed (when `write` is given) as soon as it is known. */
export async function diagnose(
  target: DoctorTarget,
  options: DoctorOptions,
  env: Record<string, string | undefined>,
  write?: (text: string) => void,
  { checks = DOCTOR_CHECKS, fetch }: DoctorDependencies = {},
): Promise<DoctorReport> {
  const profile = options.profile ?? "default";
  write?.(formatHeading(target.raw, profile));
  let session: Promise<OAuthSession> | undefined;
  const found: { url?: URL } = {};
  const results = await runChecks(
    checks,
    {
      target,
      options,
      env,
      found,
      ...(fetch ? { fetch } : {}),
      session: () => {
        const url = found.url;
        if (!url)
          return Promise.reject(new Error("doctor: the session was asked for before the URL check passed"));
        // Its log stays quiet: each check reports what it found.
        session ??= createBridgeAuth(
          { ...options, url },
          createBridgeLog({ debug: false, silent: true }),
          env,
          "terminal",
          undefined,
          undefined,
          fetch,
        );
        return session;
      },
    },
    write && ((result) => write(formatCheck(result))),
  );
  return reportOf(found.url?.href ?? target.raw, profile, results);
}

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
