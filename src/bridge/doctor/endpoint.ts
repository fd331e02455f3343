/** The MCP endpoint check: a request without a token, as the bridge's first: `server/discover`, else the 2025 `initialize`. */

// A 401 asking for sign-in is what a protected MCP endpoint answers; a server that does not take `server/discover`
// (the spec's era probe, sent through the modern upstream) is judged by its answer to `initialize`.
import { parseBearerChallenge } from "../../auth/checks.js";
import { describeNetworkFailure } from "../../internal/network-errors.js";
import { doesNotLookLikeChatService, notChatServiceMessage } from "../../internal/service-shape.js";
import { createBridgeLog, describeError } from "../log/log.js";
import type { ClientContext } from "../messages/request-model.js";
import { createAuthorizedExchange } from "../upstream/http/authorized-exchange.js";
import { sendInitialize, suggestedMcpUrl } from "../upstream/http/endpoint-check.js";
import { fetchExchange } from "../upstream/http/fetch-exchange.js";
import type { HttpAnswer, HttpExchange } from "../upstream/http/http-exchange.js";
import { nodeHttpExchange } from "../upstream/http/node-http-exchange.js";
import { ModernUpstream } from "../upstream/modern.js";
import { type EraVerdict, probeServerEra } from "../upstream/probe.js";
import { asDetailAndFix, type CheckResult, check, type DoctorContext } from "./check.js";

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
type Exchange = { status: number; headers: HttpAnswer["headers"] } | { error: unknown };

/** The bridge's era probe through `exchange`, with the last exchange it made (its HTTP answer tells why a probe could not decide). */
export async function probeEra(
  url: URL,
  exchange: HttpExchange,
): Promise<{ verdict?: EraVerdict; failure?: unknown; last?: Exchange }> {
  let last: Exchange | undefined;
  const recording: HttpExchange = (target, request) =>
    exchange(target, request).then(
      (answer) => {
        last = { status: answer.status, headers: answer.headers };
        return answer;
      },
      (error) => {
        last = { error };
        throw error;
      },
    );
  const upstream = new ModernUpstream({ url, exchange: recording, log: quietLog() });
  return probeServerEra(upstream, DOCTOR_CLIENT).then(
    (verdict) => ({ verdict, last }),
    (failure) => ({ failure, last }),
  );
}

/** How long one exchange of the endpoint check may take. */
const EXCHANGE_TIMEOUT_MS = 10_000;
/** server/discover, then perhaps initialize and the end of its session. */
const ENDPOINT_DEADLINE_MS = 3 * EXCHANGE_TIMEOUT_MS + 5_000;

/** A request without a token, as the bridge's first: `server/discover`, else the 2025 `initialize`. */
export const endpointCheck = check(
  "endpoint",
  "MCP endpoint",
  ENDPOINT_DEADLINE_MS,
  async (context, signal) => {
    const direct = context.fetch ? fetchExchange(context.fetch) : nodeHttpExchange;
    // server/discover as the bridge's probe sends it; the verdict waits for the era check, which asks with the login.
    const exchange = createAuthorizedExchange({
      auth: undefined,
      headers: context.options.headers,
      log: quietLog(),
      exchange: (url, request) =>
        direct(url, {
          ...request,
          signal: AbortSignal.any([signal, AbortSignal.timeout(EXCHANGE_TIMEOUT_MS)]),
        }),
    });
    const discovered = (await probeEra(context.url, exchange)).last ?? {
      error: new Error("server/discover was not sent"),
    };
    if (!("error" in discovered) && (discovered.status === 401 || isSuccess(discovered.status)))
      return endpointVerdict(context, discovered, "server/discover", direct);
    // The 2025 initialize, with only the --headers; a session it opens is ended at once.
    const headers = Object.fromEntries(
      context.options.headers.map((header) => [header.name.toLowerCase(), header.value]),
    );
    const clientInfo = DOCTOR_CLIENT.clientInfo;
    const initialized: Exchange = await sendInitialize(context.url, direct, {
      headers,
      clientInfo,
      signal,
      timeoutMs: EXCHANGE_TIMEOUT_MS,
    }).catch((error: unknown) => ({ error }));
    return endpointVerdict(context, initialized, "initialize", direct);
  },
);

const isSuccess = (status: number) => status >= 200 && status < 300;

/** What the answer says about the endpoint; records it (and whether sign-in is needed) for the checks after. */
async function endpointVerdict(
  context: DoctorContext,
  exchange: Exchange,
  asked: string,
  direct: HttpExchange,
): Promise<CheckResult> {
  const { url } = context;
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
  const authorized = context.options.headers.some((header) => header.name.toLowerCase() === "authorization");
  const ok = status === 401 || isSuccess(status);
  const challenge = headers.get("www-authenticate");
  context.endpoint = {
    failed: !ok,
    needsAuth: status === 401 && !authorized,
    ...(status === 401 ? { resourceMetadataUrl: parseBearerChallenge(challenge).resourceMetadataUrl } : {}),
  };
  if (status === 401) {
    const scheme = challenge ? `, ${challenge.split(/[ ,]/)[0]}` : "";
    return { status: "pass", detail: `answers and asks for sign-in (401${scheme})` };
  }
  if (ok) return { status: "pass", detail: `answers ${asked} (${status}) without sign-in` };
  const fail = (detail: string, fix: string): CheckResult => ({ status: "fail", detail, fix });
  if (status === 404) {
    const suggestion = await suggestedMcpUrl(url, direct).catch(() => undefined);
    return fail(
      `nothing at ${url.pathname} (404 Not Found)`,
      suggestion
        ? `use ${suggestion}: the MCP endpoint answers there`
        : `check the path in the URL: MCP endpoints usually end in /mcp (e.g. ${url.origin}/mcp)`,
    );
  }
  if (status === 405 || status === 406 || status === 415)
    return fail(
      `this is not a streamable-HTTP MCP endpoint (${status})`,
      "point the bridge at the server's streamable-HTTP endpoint; it does not speak the old HTTP+SSE transport",
    );
  if (status === 407)
    return fail(
      "the proxy asks for credentials (407)",
      "put the proxy's user and password in HTTPS_PROXY (http://user:pass@host:port)",
    );
  if (status === 403)
    return fail(
      "the server refuses this client before sign-in (403)",
      "check your --header values; the server may only accept some networks",
    );
  const contentType = headers.get("content-type");
  if (doesNotLookLikeChatService({ status, contentType }))
    return fail(
      notChatServiceMessage(url.href, { status, contentType }),
      "check the URL: the chat service's MCP endpoint is its address followed by /mcp",
    );
  return fail(
    `unexpected answer ${status}`,
    status >= 500 ? "the server has a problem: try again later or tell its operator" : "check the URL",
  );
}
