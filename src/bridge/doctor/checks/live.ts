/** The live check, with the stored login and in the server's era: `tools/list` stateless (2026-07-28), or `initialize` first (2025). */

// A modern server is asked `tools/list` as one stateless POST through the modern upstream (its `server/discover`
// answered the era check); a legacy one `initialize` then `tools/list` in a session, as the bridge sends them.
// A browser opens only with `--sign-in`.
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { withinDeadline } from "../../../internal/deadline.js";
import { describeError } from "../../log.js";
import { withEnvelope } from "../../request-model.js";
import { createRemoteFetch } from "../../upstream/http/index.js";
import { StreamableHttpTransport } from "../../upstream/legacy/index.js";
import { ModernUpstream } from "../../upstream/modern.js";
import type { EraVerdict } from "../../upstream/probe.js";
import { upstreamFetchFor } from "../../upstream-fetch.js";
import { type Check, type CheckResult, checkedUrl, type DoctorContext, signInAllowanceMs } from "../check.js";
import { DOCTOR_CLIENT, legacyInitializeRequest } from "./doctor-client.js";
import { liveAuth, liveFetch, liveFix, quietLog } from "./live-auth.js";

/** How long one answer may take. */
const ANSWER_TIMEOUT_MS = 20_000;
/** How long ending a legacy session may take. */
const END_SESSION_TIMEOUT_MS = 3_000;

const LEGACY_TITLE = "Live initialize + tools/list";
const MODERN_TITLE = "Live server/discover + tools/list";

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
    fetch: await liveFetch(context, signal),
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
    createRemoteFetch({
      auth: await liveAuth(context),
      headers: context.options.headers,
      log: quietLog(),
      fetch: upstreamFetchFor(context.options),
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
    const init = await ask("doctor-1", "initialize", legacyInitializeRequest("doctor-1").params);
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
