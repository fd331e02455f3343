/**
 * The protocol era check: which MCP era the server speaks, learned as the bridge learns it (a `server/discover`
 * probe through the modern upstream, with the stored login), and compared with the verdict the bridge remembers.
 */

import { describeError } from "../../log.js";
import type { EraVerdict } from "../../upstream/probe.js";
import { type Check, type CheckResult, checkedUrl, signInAllowanceMs } from "../check.js";
import { DOCTOR_CLIENT } from "./doctor-client.js";
import { liveFetch, liveFix, quietLog } from "./live-auth.js";

/** How the report names each era. */
export function describeEra(verdict: EraVerdict): string {
  return verdict.era === "modern"
    ? `${verdict.protocolVersion} (stateless requests)`
    : "2025-11-25 or older (initialize and sessions)";
}

export const eraCheck: Check = {
  id: "era",
  title: "Protocol era",
  needs: [{ id: "endpoint", whenFailed: "the endpoint check failed" }],
  skipWhen: (context) =>
    context.found.needsAuth && context.statusOf("login") === "fail" ? "no usable login" : undefined,
  // A probe, and its corrective retry with another version.
  deadlineMs: ({ options }) => 25_000 + signInAllowanceMs(options),
  async run(context, signal): Promise<CheckResult> {
    const { parts, options, env } = context;
    const url = checkedUrl(context);
    const log = quietLog();
    const upstream = new parts.ModernUpstream({ url, fetch: await liveFetch(context, signal), log });
    let verdict: EraVerdict;
    try {
      verdict = await parts.probeServerEra(upstream, DOCTOR_CLIENT);
    } catch (error) {
      return {
        status: "fail",
        detail: `server/discover failed: ${describeError(error)}`,
        fix: liveFix(error, context),
      };
    }
    context.found.verdict = verdict;
    // The bridge's next start goes by what the server speaks now, not by an older verdict.
    const verdicts = parts.eraVerdictStore({ ...options, url }, env);
    const remembered = await verdicts.read();
    verdicts.write(verdict);
    const how =
      verdict.era === "modern"
        ? `server/discover answered; versions ${supportedVersions(verdict.discover).join(", ") || "not listed"}`
        : "server/discover not understood: the bridge opens a 2025 session";
    const before =
      remembered && remembered.era !== verdict.era
        ? `; the bridge had remembered ${describeEra(remembered)}: updated`
        : "";
    return { status: "pass", detail: `${describeEra(verdict)}: ${how}${before}` };
  },
};

function supportedVersions(discover: Record<string, unknown>): string[] {
  const versions = discover.supportedVersions;
  return Array.isArray(versions) ? versions.filter((version) => typeof version === "string") : [];
}
