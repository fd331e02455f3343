/** The live checks, with the stored login: the server's protocol era, then `tools/list` in that era. */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { AuthRequiredError } from "../../../auth/errors.js";
import { withinDeadline } from "../../../internal/deadline.js";
import { describeNetworkFailure } from "../../../internal/network-errors.js";
import { describeError } from "../../log/log.js";
import { withEnvelope } from "../../messages/request-model.js";
import { type BridgeAuth, createAuthorizedExchange } from "../../upstream/http/authorized-exchange.js";
import { initializeParams } from "../../upstream/http/endpoint-check.js";
import { type HttpExchange, RemoteHttpError } from "../../upstream/http/http-exchange.js";
import { StreamableHttpTransport } from "../../upstream/legacy/streamable-http-transport.js";
import { ModernUpstream } from "../../upstream/modern.js";
import { type EraVerdict, eraVerdictStore } from "../../upstream/probe.js";
import { upstreamExchangeFor } from "../../upstream/upstream-exchange.js";
import {
  boundedSignal,
  type Check,
  type CheckResult,
  checkedUrl,
  type DoctorContext,
  loginCommand,
  signInAllowanceMs,
} from "../check.js";
import { DOCTOR_CLIENT, probeEra, quietLog } from "./endpoint.js";

/** How the report names each era. */
function describeEra(verdict: EraVerdict): string {
  return verdict.era === "modern"
    ? `${verdict.protocolVersion} (stateless requests)`
    : "2025-11-25 or older (initialize and sessions)";
}

/** Which MCP era the server speaks, learned as the bridge learns it (a `server/discover` probe with the stored login), and remembered for the bridge. */
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
    const probe = await probeEra(url, await liveExchange(context, signal));
    // What came back last tells the user why the probe could not decide.
    const { last } = probe;
    if ("failure" in probe) {
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
        detail: `server/discover failed: ${describeError(probe.failure)}`,
        fix: liveFix(probe.failure, context),
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
    const { verdict } = probe;
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

/** How long one answer may take. */
const ANSWER_TIMEOUT_MS = 20_000;
/** How long ending a legacy session may take. */
const END_SESSION_TIMEOUT_MS = 3_000;

const LEGACY_TITLE = "Live initialize + tools/list";
const MODERN_TITLE = "Live server/discover + tools/list";

/**
 * The live exchange with the stored login, in the server's era: `tools/list` as one stateless POST (its
 * `server/discover` answered the era check), or `initialize` then `tools/list` in a 2025 session. A browser opens
 * only with `--sign-in`.
 */
export const liveCheck: Check = {
  id: "live",
  // Until the era is known, the title of the exchange every server has answered since 2025.
  title: LEGACY_TITLE,
  needs: [{ id: "era", whenFailed: "the protocol era is not known" }],
  deadlineMs: ({ options }) =>
    2 * ANSWER_TIMEOUT_MS + END_SESSION_TIMEOUT_MS + 2_000 + signInAllowanceMs(options),
  async run(context, signal) {
    const verdict = context.found.verdict;
    if (!verdict) throw new Error("doctor: the live check ran without the server's era");
    return verdict.era === "modern"
      ? { title: MODERN_TITLE, ...(await listModern(context, verdict, signal)) }
      : { title: LEGACY_TITLE, ...(await listLegacy(context, signal)) };
  },
};

function toolCount(listed: Record<string, unknown>): string {
  const tools = Array.isArray(listed.tools) ? listed.tools.length : 0;
  return `listed ${tools} tool${tools === 1 ? "" : "s"}`;
}

function serverName(info: unknown): string {
  const named = info as { name?: unknown; version?: unknown } | undefined;
  return typeof named?.name === "string"
    ? `${named.name} ${String(named.version ?? "")}`.trim()
    : "the server";
}

/** `tools/list` as one stateless POST with the standard headers and the `_meta` envelope. */
async function listModern(
  context: DoctorContext,
  verdict: Extract<EraVerdict, { era: "modern" }>,
  signal: AbortSignal,
): Promise<CheckResult> {
  const upstream = new ModernUpstream({
    url: checkedUrl(context),
    exchange: await liveExchange(context, signal),
    log: quietLog(),
  });
  upstream.protocolVersion = verdict.protocolVersion;
  try {
    const answer = await withinDeadline(
      upstream.request("tools/list", withEnvelope(undefined, DOCTOR_CLIENT, verdict.protocolVersion), signal),
      ANSWER_TIMEOUT_MS,
      `the answer to tools/list took longer than ${ANSWER_TIMEOUT_MS / 1000} s`,
    );
    if ("error" in answer) throw new Error(`tools/list was refused: ${answer.error.message}`);
    context.found.listed = answer.result;
    return {
      status: "pass",
      detail: `${serverName(verdict.discover.serverInfo)} answered server/discover (protocol ${verdict.protocolVersion}, stateless) and ${toolCount(answer.result)}`,
    };
  } catch (error) {
    return { status: "fail", detail: describeError(error), fix: liveFix(error, context) };
  }
}

/** `initialize` then `tools/list` in a 2025 session, ended afterwards. */
async function listLegacy(context: DoctorContext, signal: AbortSignal): Promise<CheckResult> {
  const transport = new StreamableHttpTransport(
    checkedUrl(context),
    createAuthorizedExchange({
      auth: await liveAuth(context),
      headers: context.options.headers,
      log: quietLog(),
      exchange: upstreamExchangeFor(context.options, context.fetch),
    }),
  );
  const stop = () => void transport.close();
  signal.addEventListener("abort", stop, { once: true });
  const answers = new Map<string, (message: JSONRPCMessage) => void>();
  transport.onmessage = (message) => {
    if ("id" in message && !("method" in message)) answers.get(String(message.id))?.(message);
  };
  const ask = async (id: string, method: string, params?: Record<string, unknown>) => {
    const answer = new Promise<JSONRPCMessage>((resolve) => answers.set(id, resolve));
    await transport.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    const message = await withinDeadline(
      answer,
      ANSWER_TIMEOUT_MS,
      `the answer to ${method} took longer than ${ANSWER_TIMEOUT_MS / 1000} s`,
    );
    if ("error" in message) throw new Error(`${method} was refused: ${message.error.message}`);
    return (message as { result: Record<string, unknown> }).result;
  };
  try {
    const init = await ask("doctor-1", "initialize", initializeParams(DOCTOR_CLIENT.clientInfo));
    const version = typeof init.protocolVersion === "string" ? init.protocolVersion : undefined;
    if (version) transport.setProtocolVersion(version);
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const listed = await ask("doctor-2", "tools/list");
    context.found.listed = listed;
    return {
      status: "pass",
      detail: `${serverName(init.serverInfo)} answered initialize (protocol ${version ?? "?"}) and ${toolCount(listed)}`,
    };
  } catch (error) {
    return { status: "fail", detail: describeError(error), fix: liveFix(error, context) };
  } finally {
    signal.removeEventListener("abort", stop);
    await withinDeadline(
      transport.terminateSession(),
      END_SESSION_TIMEOUT_MS,
      `ending the session took longer than ${END_SESSION_TIMEOUT_MS / 1000} s`,
    ).catch(() => undefined);
    await transport.close();
  }
}

/** The login the era and live checks send: none when the server answers without one; a sign-in only under `--sign-in`. */
async function liveAuth(context: DoctorContext): Promise<BridgeAuth | undefined> {
  if (!context.found.needsAuth) return undefined;
  const session = await context.session();
  if (context.options.signIn) return session;
  return {
    accessToken: () => session.accessToken(),
    proofSigner: () => session.proofSigner(),
    recover: async () => {
      throw new AuthRequiredError("the server refused the stored login", "failed");
    },
  };
}

/** The bridge's HTTP exchange with the login and `--header`s, every exchange stopped when the check's deadline passes. */
async function liveExchange(context: DoctorContext, signal: AbortSignal): Promise<HttpExchange> {
  const upstream = upstreamExchangeFor(context.options, context.fetch);
  return createAuthorizedExchange({
    auth: await liveAuth(context),
    headers: context.options.headers,
    log: quietLog(),
    exchange: (url, request) => upstream(url, { ...request, signal: boundedSignal(signal, request.signal) }),
  });
}

/** Whether an error means the server refused the login. */
function isAuthFailure(error: unknown): boolean {
  const status = error instanceof RemoteHttpError ? error.status : undefined;
  return (
    status === 401 ||
    error instanceof AuthRequiredError ||
    (error as { cause?: unknown } | undefined)?.cause instanceof AuthRequiredError
  );
}

/** The fix for a failed live exchange. */
function liveFix(error: unknown, context: DoctorContext): string {
  return isAuthFailure(error)
    ? `sign in again with: ${loginCommand(checkedUrl(context), context.options)}`
    : "run the bridge with --debug and look at the log file for the exchange";
}
