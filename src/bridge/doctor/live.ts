/** The live checks, with the stored login: the server's protocol era, `tools/list` in that era, and the tool rules on it. */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { AuthRequiredError } from "../../auth/errors.js";
import { withinDeadline } from "../../internal/deadline.js";
import { describeNetworkFailure } from "../../internal/network-errors.js";
import { describeError } from "../log/log.js";
import { withEnvelope } from "../messages/request-model.js";
import { ToolFilter } from "../steps/index.js";
import { listedTools, type UnmatchedRule, unmatchedToolRules } from "../steps/tool-rules-audit.js";
import { createAuthorizedExchange } from "../upstream/http/authorized-exchange.js";
import { initializeParams } from "../upstream/http/endpoint-check.js";
import { type HttpExchange, RemoteHttpError, ServerUnreachable } from "../upstream/http/http-exchange.js";
import { StreamableHttpTransport } from "../upstream/legacy/streamable-http-transport.js";
import { ModernUpstream } from "../upstream/modern.js";
import { type EraVerdict, eraVerdictStore } from "../upstream/probe.js";
import { upstreamExchangeFor } from "../upstream/upstream-exchange.js";
import {
  type CheckResult,
  check,
  type DoctorContext,
  fail,
  loginCommand,
  pass,
  withSignIn,
} from "./check.js";
import { DOCTOR_CLIENT, probeEra, quietLog } from "./network.js";

/** How the report names each era. */
const describeEra = (verdict: EraVerdict) =>
  verdict.era === "modern"
    ? `${verdict.protocolVersion} (stateless requests)`
    : "2025-11-25 or older (initialize and sessions)";

/** Which MCP era the server speaks, learned as the bridge learns it (a `server/discover` probe with the stored login), and remembered for the bridge. */
export const eraCheck = check("era", "Protocol era", withSignIn(25_000), async (context, signal) => {
  const { url } = context;
  const { verdict, failure, last } = await probeEra(url, await liveExchange(context, signal));
  // What came back last tells the user why the probe could not decide.
  // No answer: not evidence of an era, and not remembered.
  if (failure instanceof ServerUnreachable || (verdict && last && "error" in last)) {
    const cause = last && "error" in last ? last.error : failure;
    const words = describeNetworkFailure(cause, url) ?? describeError(cause);
    return fail(`server/discover got no answer: ${words}`, liveFix(cause, context));
  }
  if (!verdict) {
    // The probe refuses a server or gateway failure and a rate limit as evidence (nothing is remembered).
    if (last && "status" in last && (last.status >= 500 || last.status === 429))
      return fail(
        `server/discover failed with HTTP ${last.status}, which tells nothing about the era`,
        "the server has a problem: try again later or tell its operator",
      );
    const fix = liveFix(failure, context);
    return { status: "fail", detail: `server/discover failed: ${describeError(failure)}`, fix };
  }
  context.verdict = verdict;
  // The bridge's next start goes by what the server speaks now, not by an older verdict.
  const verdicts = eraVerdictStore({ ...context.options, url }, context.env);
  const remembered = await verdicts.read();
  verdicts.write(verdict);
  const versions = verdict.era === "modern" ? verdict.discover.supportedVersions : undefined;
  const listed = Array.isArray(versions) ? versions.filter((version) => typeof version === "string") : [];
  const how =
    verdict.era === "modern"
      ? `server/discover answered; versions ${listed.join(", ") || "not listed"}`
      : "server/discover not understood: the bridge opens a 2025 session";
  const before =
    remembered && remembered.era !== verdict.era
      ? `; the bridge had remembered ${describeEra(remembered)}: updated`
      : "";
  return { status: "pass", detail: `${describeEra(verdict)}: ${how}${before}` };
});

/** How long one answer may take. */
const ANSWER_TIMEOUT_MS = 20_000;
/** How long ending a legacy session may take. */
const END_SESSION_TIMEOUT_MS = 3_000;
/** Two answers and the end of a session. */
const LIVE_DEADLINE_MS = 2 * ANSWER_TIMEOUT_MS + END_SESSION_TIMEOUT_MS + 2_000;
/** Until the era is known, the title of the exchange every server has answered since 2025. */
const LEGACY_TITLE = "Live initialize + tools/list";

/**
 * The live exchange with the stored login, in the server's era: `tools/list` as one stateless POST (its
 * `server/discover` answered the era check), or `initialize` then `tools/list` in a 2025 session. A browser opens
 * only with `--sign-in`.
 */
export const liveCheck = check(
  "live",
  LEGACY_TITLE,
  withSignIn(LIVE_DEADLINE_MS),
  async (context, signal) => {
    const verdict = context.verdict;
    if (!verdict) throw new Error("doctor: the live check ran without the server's era");
    const title = verdict.era === "modern" ? "Live server/discover + tools/list" : LEGACY_TITLE;
    try {
      const detail =
        verdict.era === "modern"
          ? await listModern(context, verdict, signal)
          : await listLegacy(context, signal);
      return { title, status: "pass", detail };
    } catch (error) {
      return { title, status: "fail", detail: describeError(error), fix: liveFix(error, context) };
    }
  },
);

/** What answered, and how many tools it listed (the list kept for the tool rule checks). */
function listedBy(
  context: DoctorContext,
  info: unknown,
  how: string,
  listed: Record<string, unknown>,
): string {
  context.listed = listed;
  const named = info as { name?: unknown; version?: unknown } | undefined;
  const server =
    typeof named?.name === "string" ? `${named.name} ${String(named.version ?? "")}`.trim() : "the server";
  const tools = Array.isArray(listed.tools) ? listed.tools.length : 0;
  return `${server} answered ${how} and listed ${tools} tool${tools === 1 ? "" : "s"}`;
}

/** `tools/list` as one stateless POST with the standard headers and the `_meta` envelope. */
async function listModern(
  context: DoctorContext,
  verdict: Extract<EraVerdict, { era: "modern" }>,
  signal: AbortSignal,
): Promise<string> {
  const exchange = await liveExchange(context, signal);
  const upstream = new ModernUpstream({ url: context.url, exchange, log: quietLog() });
  const version = verdict.protocolVersion;
  upstream.protocolVersion = version;
  const answer = await withinDeadline(
    upstream.request("tools/list", withEnvelope(undefined, DOCTOR_CLIENT, version), signal),
    ANSWER_TIMEOUT_MS,
    `the answer to tools/list took longer than ${ANSWER_TIMEOUT_MS / 1000} s`,
  );
  if ("error" in answer) throw new Error(`tools/list was refused: ${answer.error.message}`);
  const how = `server/discover (protocol ${version}, stateless)`;
  return listedBy(context, verdict.discover.serverInfo, how, answer.result);
}

/** `initialize` then `tools/list` in a 2025 session, ended afterwards. */
async function listLegacy(context: DoctorContext, signal: AbortSignal): Promise<string> {
  const transport = new StreamableHttpTransport(context.url, await liveExchange(context));
  const stop = () => void transport.close();
  signal.addEventListener("abort", stop, { once: true });
  const answers = new Map<string, (message: JSONRPCMessage) => void>();
  transport.onmessage = (message) => {
    if ("id" in message && !("method" in message)) answers.get(String(message.id))?.(message);
  };
  const ask = async (id: string, method: string, params?: Record<string, unknown>) => {
    const answer = new Promise<JSONRPCMessage>((resolve) => answers.set(id, resolve));
    await transport.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    const took = `the answer to ${method} took longer than ${ANSWER_TIMEOUT_MS / 1000} s`;
    const message = await withinDeadline(answer, ANSWER_TIMEOUT_MS, took);
    if ("error" in message) throw new Error(`${method} was refused: ${message.error.message}`);
    return (message as { result: Record<string, unknown> }).result;
  };
  try {
    const init = await ask("doctor-1", "initialize", initializeParams(DOCTOR_CLIENT.clientInfo));
    const version = typeof init.protocolVersion === "string" ? init.protocolVersion : undefined;
    if (version) transport.setProtocolVersion(version);
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const listed = await ask("doctor-2", "tools/list");
    return listedBy(context, init.serverInfo, `initialize (protocol ${version ?? "?"})`, listed);
  } finally {
    signal.removeEventListener("abort", stop);
    const ending = `ending the session took longer than ${END_SESSION_TIMEOUT_MS / 1000} s`;
    await withinDeadline(transport.terminateSession(), END_SESSION_TIMEOUT_MS, ending).catch(() => undefined);
    await transport.close();
  }
}

/**
 * The bridge's HTTP exchange with the login and `--header`s (each exchange also stopped by `signal`): no login when
 * the server answers without one, and a sign-in only under `--sign-in`.
 */
async function liveExchange(context: DoctorContext, signal?: AbortSignal): Promise<HttpExchange> {
  const upstream = upstreamExchangeFor(context.options, context.fetch);
  const session = context.endpoint?.needsAuth ? await context.session() : undefined;
  const refused = async () => {
    throw new AuthRequiredError("the server refused the stored login", "failed");
  };
  const auth =
    session && !context.options.signIn
      ? {
          accessToken: () => session.accessToken(),
          proofSigner: () => session.proofSigner(),
          recover: refused,
        }
      : session;
  return createAuthorizedExchange({
    auth,
    headers: context.options.headers,
    log: quietLog(),
    exchange: signal
      ? (url, request) =>
          upstream(url, {
            ...request,
            signal: request.signal ? AbortSignal.any([signal, request.signal]) : signal,
          })
      : upstream,
  });
}

/** The fix for a failed live exchange: sign in again when the server refused the login. */
function liveFix(error: unknown, context: DoctorContext): string {
  const refused =
    (error instanceof RemoteHttpError && error.status === 401) ||
    error instanceof AuthRequiredError ||
    (error as { cause?: unknown } | undefined)?.cause instanceof AuthRequiredError;
  return refused
    ? `sign in again with: ${loginCommand(context.url, context.options)}`
    : "run the bridge with --debug and look at the log file for the exchange";
}

/** `--ignore-tool` and `--read-only`: the listed tools the client will not see. */
export const hiddenToolsCheck = check(
  "hidden-tools",
  "Tools hidden from the client",
  5_000,
  async ({ options, listed }) => {
    const tools = listedTools(listed);
    if (!tools) return NO_LIST;
    const rules = { ignoreTools: options.ignoreTools ?? [], readOnly: options.readOnly === true };
    const unmatched = unmatchedToolRules(rules, tools);
    if (unmatched.length > 0) return unmatchedRulesFailure(unmatched);
    const visible = new Set(
      listedTools(ToolFilter.from(rules)?.filterListResult(listed))?.map((tool) => tool.name),
    );
    const hidden = tools.filter((tool) => !visible.has(tool.name)).map((tool) => tool.name);
    return pass(`${hidden.join(", ") || "none"} (calls of them are refused by the bridge)`);
  },
);

/** `--confirm-tool`: the tools the client will see that need the person's approval (its step loaded only with the flag). */
export const confirmCheck = check(
  "confirm",
  "Tools that need confirming",
  5_000,
  async ({ options, listed }) => {
    const tools = listedTools(listed);
    if (!tools) return NO_LIST;
    // A pattern that matches no tool protects nothing: the tool it was meant for runs without asking.
    const unmatched = unmatchedToolRules({ confirmTools: options.confirmTools ?? [] }, tools);
    if (unmatched.length > 0) return unmatchedRulesFailure(unmatched);
    const { toolsToConfirm } = await import("../steps/confirm-tool.js");
    const visible = listedTools(ToolFilter.from(options)?.filterListResult(listed) ?? listed) ?? [];
    const confirmed = toolsToConfirm(
      options.confirmTools ?? [],
      visible.map((tool) => tool.name),
    );
    return pass(`${confirmed.join(", ") || "none"} (asked in the client's dialog before each call)`);
  },
);

const NO_LIST: CheckResult = { status: "skip", detail: "not checked (no tools/list answer)" };

/** A rule that matches no listed tool fails its check: the person trusts a protection that is not there. */
function unmatchedRulesFailure(unmatched: readonly UnmatchedRule[]): CheckResult {
  const patterns = unmatched.filter((rule) => rule.pattern !== undefined);
  const meant = patterns.flatMap((rule) => (rule.closest ? [`${rule.flag} ${rule.closest}`] : []));
  const fixes: string[] = [];
  if (meant.length > 0) fixes.push(`name the tool as the server lists it (${meant.join(", ")})`);
  if (patterns.some((rule) => rule.closest === undefined))
    fixes.push("name tools as the server lists them (the live check's tools/list)");
  if (patterns.length > 0) fixes.push("patterns match whole names, case-sensitively, with * as a wildcard");
  if (unmatched.some((rule) => rule.flag === "--read-only"))
    fixes.push("leave out --read-only: this server marks no tool read-only, so it would hide every tool");
  return fail(unmatched.map((rule) => rule.warning).join(" / "), fixes.join("; "));
}
