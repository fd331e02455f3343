/** `chat-mcp-bridge doctor`: its checks for one URL and profile, in order, printed as they finish (or `--json` at the end). */

import type { OAuthSession } from "../../auth/session/index.js";
import { sanitizeForTerminal } from "../../internal/redact.js";
import type { DoctorTarget } from "../options/bridge-options.js";
import { createBridgeAuth } from "../sign-in/oauth.js";
import {
  type Check,
  type DoctorCheck,
  type DoctorContext,
  type DoctorDependencies,
  type DoctorOptions,
  type DoctorReport,
  type Outcome,
  runCheck,
  unmetBy,
} from "./check.js";
import { confirmCheck, eraCheck, hiddenToolsCheck, liveCheck } from "./live.js";
import {
  authorizationServerCheck,
  loginCheck,
  registrationCheck,
  resourceMetadataCheck,
  tokenStoreCheck,
} from "./login.js";
import { dnsCheck, endpointCheck, proxyCheck, quietLog, tcpCheck, tlsCheck, urlCheck } from "./network.js";

export type { CheckStatus, DoctorCheck, DoctorDependencies, DoctorOptions, DoctorReport } from "./check.js";

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

/** Runs every check in order, each after the checks it needs; each line is printed (when `write` is given) once known. */
export async function diagnose(
  target: DoctorTarget,
  options: DoctorOptions,
  env: Record<string, string | undefined>,
  write?: (text: string) => void,
  { fetch }: DoctorDependencies = {},
): Promise<DoctorReport> {
  const profile = options.profile ?? "default";
  write?.(formatHeading(target.raw, profile));
  let session: Promise<OAuthSession> | undefined;
  const url = target.url ?? new URL("http://invalid.invalid/");
  const context: DoctorContext = {
    target,
    url,
    options,
    env,
    ...(fetch ? { fetch } : {}),
    session: () =>
      (session ??= createBridgeAuth(
        { ...options, url },
        quietLog(),
        env,
        "terminal",
        undefined,
        undefined,
        fetch,
      )),
  };
  const checks: Outcome[] = [];
  const run = async (check: Check, unmet?: string) => {
    const outcome = await runCheck(check, context, unmet);
    checks.push(outcome);
    write?.(formatCheck(outcome));
    return outcome;
  };
  const proxy = await run(proxyCheck, unmetBy(await run(urlCheck), "the URL is not usable"));
  const noProxy = unmetBy(proxy, "the proxy setting is not usable");
  const dns = await run(dnsCheck, noProxy);
  const tcp = await run(tcpCheck, unmetBy(dns, "DNS failed"));
  const tls = await run(tlsCheck, unmetBy(tcp, "no TCP connection"));
  const away = "the server is not reachable";
  const endpoint = await run(endpointCheck, unmetBy(dns, away) ?? unmetBy(tcp, away) ?? unmetBy(tls, away));
  const noEndpoint = unmetBy(endpoint, "the endpoint check failed");
  const needsAuth = context.endpoint?.needsAuth === true;
  const noSignIn = noEndpoint ?? (needsAuth ? undefined : "the server answers without sign-in");
  await run(resourceMetadataCheck, noSignIn);
  await run(
    registrationCheck,
    unmetBy(await run(authorizationServerCheck, noSignIn), "no authorization server"),
  );
  await run(tokenStoreCheck, noProxy);
  const login = await run(loginCheck, noProxy);
  const era = await run(
    eraCheck,
    noEndpoint ?? (needsAuth && login.status === "fail" ? "no usable login" : undefined),
  );
  const live = await run(liveCheck, unmetBy(era, "the protocol era is not known"));
  // The tool rules are judged on the live check's tools/list: only when it ran, and only with their flags.
  if (live.status !== "skip") {
    if ((options.ignoreTools?.length ?? 0) > 0 || options.readOnly === true) await run(hiddenToolsCheck);
    if ((options.confirmTools?.length ?? 0) > 0) await run(confirmCheck);
  }
  const report = checks.map(({ notRun: _, ...outcome }) => outcome);
  return reportOf(target.url?.href ?? target.raw, profile, report);
}

/** The report of a run: ok when no check failed. */
export function reportOf(url: string, profile: string, checks: DoctorCheck[]): DoctorReport {
  return { url, profile, ok: checks.every((check) => check.status !== "fail"), checks };
}

/** The first line: what is checked, for which profile. */
export function formatHeading(rawUrl: string, profile: string): string {
  const safe = (text: string) => sanitizeForTerminal(text, { oneLine: true });
  return `chat-mcp-bridge doctor: ${safe(rawUrl)} (profile ${safe(profile)})\n`;
}

/** One check's line, and its fix under it; text from outside is made safe for a terminal. */
export function formatCheck(check: DoctorCheck): string {
  const mark = check.status === "pass" ? "✓" : check.status === "fail" ? "✗" : "·";
  const fix = check.fix ? `\n    fix: ${sanitizeForTerminal(check.fix, { oneLine: true })}` : "";
  return `${mark} ${check.title}: ${sanitizeForTerminal(check.detail, { oneLine: true })}${fix}\n`;
}

/** The last line: all passed, or how many failed. */
export function formatSummary(report: DoctorReport): string {
  const failed = report.checks.filter((check) => check.status === "fail").length;
  return failed === 0
    ? "All checks passed.\n"
    : `${failed} check${failed === 1 ? "" : "s"} failed; the fix is under each ✗.\n`;
}

/** The `--json` document. */
export function formatJson(report: DoctorReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
