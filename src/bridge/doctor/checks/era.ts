/** The protocol era check: which MCP era the server speaks, learned as the bridge learns it, and remembered for the bridge. */

// A `server/discover` probe through the modern upstream with the stored login, compared with the bridge's verdict.
import { describeNetworkFailure } from "../../../internal/network-errors.js";
import { describeError } from "../../log.js";
import type { FetchLike } from "../../upstream/http/index.js";
import { ModernUpstream } from "../../upstream/modern.js";
import { type EraVerdict, eraVerdictStore, probeServerEra } from "../../upstream/probe.js";
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
    const { options, env } = context;
    const url = checkedUrl(context);
    const log = quietLog();
    const fetch = await liveFetch(context, signal);
    // What came back last, to tell the user why the probe could not decide.
    let last: { status: number } | { error: unknown } | undefined;
    const recording: FetchLike = async (target, request) => {
      try {
        const answer = await fetch(target, request);
        last = { status: answer.status };
        return answer;
      } catch (error) {
        last = { error };
        throw error;
      }
    };
    const upstream = new ModernUpstream({ url, fetch: recording, log });
    let verdict: EraVerdict;
    try {
      verdict = await probeServerEra(upstream, DOCTOR_CLIENT);
    } catch (error) {
      // The probe refuses a server or gateway failure and a rate limit as evidence (nothing is remembered).
      if (last && "status" in last && (last.status >= 500 || last.status === 429)) {
        return {
          status: "fail",
          detail: `server/discover failed with HTTP ${last.status}, which tells nothing about the era`,
          fix: "the server has a problem: try again later or tell its operator",
        };
      }
      return {
        status: "fail",
        detail: `server/discover failed: ${describeError(error)}`,
        fix: liveFix(error, context),
      };
    }
    // No answer, or a server error: not evidence of an era, and not remembered.
    if (last && "error" in last) {
      const words = describeNetworkFailure(last.error, url) ?? describeError(last.error);
      return {
        status: "fail",
        detail: `server/discover got no answer: ${words}`,
        fix: liveFix(last.error, context),
      };
    }
    context.found.verdict = verdict;
    // The bridge's next start goes by what the server speaks now, not by an older verdict.
    const verdicts = eraVerdictStore({ ...options, url }, env);
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
