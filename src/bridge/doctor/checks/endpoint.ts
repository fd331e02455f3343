/** The MCP endpoint check: a request without a token, as the bridge's first: `server/discover`, else the 2025 `initialize`. */

// A 401 asking for sign-in is what a protected MCP endpoint answers; a server that does not take `server/discover`
// (the spec's era probe, sent through the modern upstream) is judged by its answer to `initialize`.
import { parseBearerChallenge } from "../../../auth/checks.js";
import { describeNetworkFailure } from "../../../internal/network-errors.js";
import { doesNotLookLikeChatService, notChatServiceMessage } from "../../../internal/service-shape.js";
import { createBridgeLog, describeError } from "../../log/log.js";
import type { ClientContext } from "../../messages/request-model.js";
import { createAuthorizedExchange } from "../../upstream/http/authorized-exchange.js";
import { sendInitialize, suggestedMcpUrl } from "../../upstream/http/endpoint-check.js";
import type { HttpAnswer, HttpExchange } from "../../upstream/http/http-exchange.js";
import { ModernUpstream } from "../../upstream/modern.js";
import { type EraVerdict, probeServerEra } from "../../upstream/probe.js";
import {
  asDetailAndFix,
  type Check,
  type CheckResult,
  checkedUrl,
  type DoctorContext,
  doctorExchange,
  type EndpointAnswer,
} from "../check.js";

/** doctor's identity on the wire: its 2026-07-28 `_meta` envelope, and the `clientInfo` of its 2025 `initialize`. */
export const DOCTOR_CLIENT: ClientContext = {
  era: "modern",
  protocolVersion: "2026-07-28",
  capabilities: {},
  clientInfo: { name: "chat-mcp-bridge-doctor", version: "1" },
};

/** Its log stays quiet: each check reports what it found. */
export const quietLog = () => createBridgeLog({ debug: false, silent: true });

/** What came back to the last request: the answer's status and headers, or why there was none. */
export type Exchange = { status: number; headers: HttpAnswer["headers"] } | { error: unknown };

/**
 * The bridge's era probe (upstream/probe.ts) through `exchange`, with the last exchange it made: what the HTTP
 * answer was tells why a probe could not decide.
 */
export async function probeEra(
  url: URL,
  exchange: HttpExchange,
): Promise<{ verdict: EraVerdict; last?: Exchange } | { failure: unknown; last?: Exchange }> {
  let last: Exchange | undefined;
  const recording: HttpExchange = async (target, request) => {
    try {
      const answer = await exchange(target, request);
      last = { status: answer.status, headers: answer.headers };
      return answer;
    } catch (error) {
      last = { error };
      throw error;
    }
  };
  try {
    const verdict = await probeServerEra(
      new ModernUpstream({ url, exchange: recording, log: quietLog() }),
      DOCTOR_CLIENT,
    );
    return { verdict, last };
  } catch (failure) {
    return { failure, last };
  }
}

/** How long one exchange of the endpoint check may take. */
const EXCHANGE_TIMEOUT_MS = 10_000;

/** A request without a token, as the bridge's first: `server/discover`, else the 2025 `initialize`. */
export const endpointCheck: Check = {
  id: "endpoint",
  title: "MCP endpoint",
  needs: [
    { id: "dns", whenFailed: "the server is not reachable" },
    { id: "tcp", whenFailed: "the server is not reachable" },
    { id: "tls", whenFailed: "the server is not reachable" },
  ],
  // server/discover, then perhaps initialize and the end of its session.
  deadlineMs: () => 3 * EXCHANGE_TIMEOUT_MS + 5_000,
  async run(context, signal) {
    const discovered = await askDiscover(context, signal);
    if (!("error" in discovered) && (discovered.status === 401 || isSuccess(discovered.status))) {
      return endpointVerdict(context, discovered, "server/discover");
    }
    return endpointVerdict(context, await askInitialize(context, signal), "initialize");
  },
};

/** `server/discover` as the bridge's probe sends it: a stateless 2026-07-28 POST with the standard headers. */
async function askDiscover(context: DoctorContext, signal: AbortSignal): Promise<Exchange> {
  const exchange = createAuthorizedExchange({
    auth: undefined,
    headers: context.options.headers,
    log: quietLog(),
    exchange: (url, request) => doctorExchange(context)(url, { ...request, signal: exchangeSignal(signal) }),
  });
  // The verdict waits for the era check, which asks with the login; here only the HTTP answer counts.
  const { last } = await probeEra(checkedUrl(context), exchange);
  return last ?? { error: new Error("server/discover was not sent") };
}

/** The 2025 `initialize` POSTed without a token (only the `--header`s); a session it opens is ended at once. */
async function askInitialize(context: DoctorContext, signal: AbortSignal): Promise<Exchange> {
  const headers: Record<string, string> = {};
  for (const header of context.options.headers) headers[header.name.toLowerCase()] = header.value;
  try {
    const answer = await sendInitialize(checkedUrl(context), doctorExchange(context), {
      headers,
      clientInfo: DOCTOR_CLIENT.clientInfo,
      signal,
      timeoutMs: EXCHANGE_TIMEOUT_MS,
    });
    return { status: answer.status, headers: answer.headers };
  } catch (error) {
    return { error };
  }
}

function exchangeSignal(signal: AbortSignal): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(EXCHANGE_TIMEOUT_MS)]);
}

const isSuccess = (status: number) => status >= 200 && status < 300;

const hasAuthorizationHeader = (context: DoctorContext) =>
  context.options.headers.some((header) => header.name.toLowerCase() === "authorization");

/** What the answer says about the endpoint; records it (and whether sign-in is needed) for the checks after. */
async function endpointVerdict(
  context: DoctorContext,
  exchange: Exchange,
  asked: string,
): Promise<CheckResult> {
  const url = checkedUrl(context);
  if ("error" in exchange) {
    // A proxy that refused or cannot be reached, or a certificate this machine does not accept, in the relay's words.
    const named = describeNetworkFailure(exchange.error, url);
    return {
      status: "fail",
      ...(named
        ? asDetailAndFix(named, "check the proxy and certificate settings")
        : {
            detail: `no HTTP answer from ${url.href} (${describeError(exchange.error)})`,
            fix: "check that the URL's port serves the MCP server over http(s)",
          }),
    };
  }
  const { status, headers } = exchange;
  const answered = (answer: EndpointAnswer, result: CheckResult): CheckResult => {
    context.found.endpoint = answer;
    context.found.needsAuth = answer.status === 401 && !hasAuthorizationHeader(context);
    return result;
  };
  const fail = (detail: string, fix: string) =>
    answered({ status, failed: true }, { status: "fail", detail, fix });
  if (status === 401) {
    const challenge = headers.get("www-authenticate");
    const bearer = parseBearerChallenge(challenge);
    return answered(
      { status, failed: false, resourceMetadataUrl: bearer.resourceMetadataUrl },
      {
        status: "pass",
        detail: `answers and asks for sign-in (401${challenge ? `, ${challenge.split(/[ ,]/)[0]}` : ""})`,
      },
    );
  }
  if (isSuccess(status))
    return answered(
      { status, failed: false },
      { status: "pass", detail: `answers ${asked} (${status}) without sign-in` },
    );
  if (status === 404) {
    const suggestion = await suggestedMcpUrl(url, doctorExchange(context)).catch(() => undefined);
    return fail(
      `nothing at ${url.pathname} (404 Not Found)`,
      suggestion
        ? `use ${suggestion}: the MCP endpoint answers there`
        : `check the path in the URL: MCP endpoints usually end in /mcp (e.g. ${url.origin}/mcp)`,
    );
  }
  if (status === 405 || status === 406 || status === 415) {
    return fail(
      `this is not a streamable-HTTP MCP endpoint (${status})`,
      "point the bridge at the server's streamable-HTTP endpoint; it does not speak the old HTTP+SSE transport",
    );
  }
  if (status === 407) {
    return fail(
      "the proxy asks for credentials (407)",
      "put the proxy's user and password in HTTPS_PROXY (http://user:pass@host:port)",
    );
  }
  if (status === 403) {
    return fail(
      "the server refuses this client before sign-in (403)",
      "check your --header values; the server may only accept some networks",
    );
  }
  const contentType = headers.get("content-type");
  if (doesNotLookLikeChatService({ status, contentType })) {
    return fail(
      notChatServiceMessage(url.href, { status, contentType }),
      "check the URL: the chat service's MCP endpoint is its address followed by /mcp",
    );
  }
  return fail(
    `unexpected answer ${status}`,
    status >= 500 ? "the server has a problem: try again later or tell its operator" : "check the URL",
  );
}
