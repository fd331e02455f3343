/** The checks of the way to the server, in the order a request meets them: URL and scheme, proxy, DNS, TCP, TLS (toward the server, or its proxy), then the MCP endpoint's answer to a request without a token. */

import { lookup } from "node:dns/promises";
import { once } from "node:events";
import { isIP, connect as netConnect } from "node:net";
import { checkServerIdentity, type PeerCertificate, connect as tlsConnect } from "node:tls";
import { isLoopbackHost, parseBearerChallenge } from "../../auth/checks.js";
import { withinDeadline } from "../../internal/deadline.js";
import { describeNetworkFailure } from "../../internal/network-errors.js";
import { resolveProxy } from "../../internal/proxy.js";
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
import { asDetailAndFix, type CheckResult, check, type DoctorContext, fail, pass } from "./check.js";

/** How long each network step (lookup, connection, handshake) may take before its check says so. */
const NETWORK_TIMEOUT_MS = 5_000;
/** A network check's deadline: past the step's own timeout, so the check's words win. */
const NETWORK_DEADLINE_MS = NETWORK_TIMEOUT_MS + 2_000;
const SECONDS = `${NETWORK_TIMEOUT_MS / 1000} s`;

/** What the DNS, TCP and TLS checks say when doctor's requests go through a fetch it was given (no socket of its own). */
const THROUGH_GIVEN_FETCH: CheckResult = {
  status: "skip",
  detail: "not checked: requests go through the fetch doctor was given, not a connection of its own",
};

/** Where the network checks connect: the server, or the proxy (named by host and port only: its URL may hold credentials). */
function networkTarget({ url, proxy }: DoctorContext): { host: string; port: number; what: string } {
  const target = proxy?.url ?? url;
  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
  return { host, port, what: proxy ? `the proxy ${host}:${port} (from ${proxy.source})` : `${host}:${port}` };
}

/** The URL as the command line found it, and whether its scheme is safe to use. */
export const urlCheck = check("url", "URL and scheme", 1000, async ({ target }) => {
  const url = target.url;
  if (!url) {
    const fix = "pass the MCP endpoint's full URL, e.g. https://example.com/mcp";
    return fail(target.problem ?? "no URL", fix);
  }
  const plain = isLoopbackHost(url.hostname)
    ? " to this machine"
    : ", allowed by --allow-http: tokens travel unencrypted";
  return pass(`${url.href} (${url.protocol === "https:" ? "https" : `plain http${plain}`})`);
});

/** The same proxy choice every request of the bridge makes (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; loopback direct). */
export const proxyCheck = check("proxy", "Proxy", 1000, async (context) => {
  try {
    const { proxy, reason } = resolveProxy(context.url, { env: context.env });
    context.proxy = proxy;
    return pass(proxy ? `via ${proxy.display} (from ${proxy.source})` : `none: direct (${reason})`);
  } catch (error) {
    return { status: "fail", ...asDetailAndFix(describeError(error), "fix the proxy variable, or unset it") };
  }
});

/** The server's host name (or the proxy's) resolves. */
export const dnsCheck = check("dns", "DNS", NETWORK_DEADLINE_MS, async (context) => {
  if (context.fetch) return THROUGH_GIVEN_FETCH;
  const { host } = networkTarget(context);
  if (isIP(host)) return { status: "pass", detail: `${host} is an IP address: no lookup needed` };
  try {
    const found = await withinDeadline(
      lookup(host, { all: true }),
      NETWORK_TIMEOUT_MS,
      `the lookup took longer than ${SECONDS}`,
    );
    return { status: "pass", detail: `${host} → ${found.map((entry) => entry.address).join(", ")}` };
  } catch (error) {
    const { proxy } = context;
    return {
      status: "fail",
      detail: `${host} does not resolve (${describeError(error)})`,
      fix: proxy
        ? `check the host name in ${proxy.source} for typos`
        : "check the host name in the URL for typos; on a network that needs a proxy, set HTTPS_PROXY",
    };
  }
});

/** A connection to the server's port (or the proxy's) opens. */
export const tcpCheck = check("tcp", "TCP connection", NETWORK_DEADLINE_MS, async (context, signal) => {
  if (context.fetch) return THROUGH_GIVEN_FETCH;
  const { host, port, what } = networkTarget(context);
  const timeout = AbortSignal.timeout(NETWORK_TIMEOUT_MS);
  const socket = netConnect({ host, port, signal: AbortSignal.any([signal, timeout]) });
  try {
    await once(socket, "connect");
    return { status: "pass", detail: `connected to ${what}` };
  } catch (error) {
    const { proxy } = context;
    const subject = proxy ? "the proxy" : "the server";
    if (timeout.aborted)
      return fail(
        `${what} did not answer within ${SECONDS}`,
        `a firewall may drop the connection to ${subject}; on a network that needs a proxy, set HTTPS_PROXY`,
      );
    if ((error as NodeJS.ErrnoException).code === "ECONNREFUSED")
      return fail(
        `nothing is listening at ${what} (connection refused)`,
        proxy
          ? `check the host and port in ${proxy.source}, and that the proxy is running`
          : "start the server, or check the host and port in the URL",
      );
    return fail(
      `cannot connect to ${what} (${describeError(error)})`,
      `check the network path to ${subject}`,
    );
  } finally {
    socket.destroy();
  }
});

/** The handshake with the default trust store (and NODE_EXTRA_CA_CERTS), then the host name against the certificate. */
export const tlsCheck = check("tls", "TLS certificate", NETWORK_DEADLINE_MS, async (context, signal) => {
  const { url } = context;
  if (url.protocol !== "https:") return { status: "skip", detail: "not used (plain http)" };
  if (context.fetch) return THROUGH_GIVEN_FETCH;
  if (context.proxy) return { status: "skip", detail: "checked through the proxy by the endpoint check" };
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const timeout = AbortSignal.timeout(NETWORK_TIMEOUT_MS);
  // Judged below, so the certificate can be described either way.
  const socket = tlsConnect({
    host,
    port: networkTarget(context).port,
    ...(isIP(host) ? {} : { servername: host }),
    rejectUnauthorized: false,
  });
  try {
    await once(socket, "secureConnect", { signal: AbortSignal.any([signal, timeout]) });
  } catch (error) {
    socket.destroy();
    return timeout.aborted
      ? fail(`no TLS handshake within ${SECONDS}`, "check that the port serves https, not plain http")
      : fail(
          `TLS handshake failed (${describeError(error)})`,
          "check that the port serves https; an old server may not speak TLS 1.2 or later",
        );
  }
  const cert = socket.getPeerCertificate(false);
  socket.destroy();
  const about = describeCertificate(cert);
  const refused = !socket.authorized
    ? String(socket.authorizationError)
    : checkServerIdentity(host, cert) && "ERR_TLS_CERT_ALTNAME_INVALID";
  if (!refused) return { status: "pass", detail: `trusted chain; ${about}` };
  const words =
    describeNetworkFailure(Object.assign(new Error(refused), { code: refused }), url) ??
    `The TLS certificate of ${url.host} was refused (${refused}).`;
  const { detail, fix } = asDetailAndFix(words, "tell the server's operator");
  return { status: "fail", detail: `${detail} Certificate: ${about}.`, fix };
});

function describeCertificate(cert: PeerCertificate): string {
  const subject = cert.subject?.CN ?? "no common name";
  const issuer = cert.issuer?.O ?? cert.issuer?.CN ?? "unknown issuer";
  return `${subject}, issued by ${issuer}, valid until ${cert.valid_to ?? "?"}`;
}

// The endpoint: a 401 asking for sign-in is what a protected MCP endpoint answers; a server that does not take
// `server/discover` (the spec's era probe, sent through the modern upstream) is judged by its answer to `initialize`.

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
