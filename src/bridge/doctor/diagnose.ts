/** Runs doctor's checks for one URL and profile, and prints them (text as they finish, or `--json` at the end). */

import type { OAuthSession } from "../../auth/session/index.js";
import type { DoctorTarget } from "../cli.js";
import { createBridgeLog } from "../log.js";
import { createBridgeAuth } from "../oauth.js";
import type { Check, DoctorOptions } from "./check.js";
import { DOCTOR_CHECKS } from "./checks/index.js";
import {
  type DoctorReport,
  formatCheck,
  formatHeading,
  formatJson,
  formatSummary,
  reportOf,
} from "./report.js";
import { runChecks } from "./runner.js";

/** Runs the checks and prints them (text or `--json`) on stdout; resolves with the exit code: 0 all passed, 1 otherwise. */
export async function runDoctor(
  target: DoctorTarget,
  options: DoctorOptions,
  env: Record<string, string | undefined> = process.env,
  write: (text: string) => void = (text) => process.stdout.write(text),
): Promise<number> {
  const report = await diagnose(target, options, env, options.json ? undefined : write);
  write(options.json ? formatJson(report) : formatSummary(report));
  return report.ok ? 0 : 1;
}

/** Runs every check in order; each line is printed (when `write` is given) as soon as it is known. */
export async function diagnose(
  target: DoctorTarget,
  options: DoctorOptions,
  env: Record<string, string | undefined>,
  write?: (text: string) => void,
  checks: readonly Check[] = DOCTOR_CHECKS,
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
      session: () => {
        const url = found.url;
        if (!url)
          return Promise.reject(new Error("doctor: the session was asked for before the URL check passed"));
        // Its log stays quiet: each check reports what it found.
        session ??= createBridgeAuth(
          { ...options, url },
          createBridgeLog({ debug: false, silent: true }),
          env,
        );
        return session;
      },
    },
    write && ((result) => write(formatCheck(result))),
  );
  return reportOf(found.url?.href ?? target.raw, profile, results);
}
