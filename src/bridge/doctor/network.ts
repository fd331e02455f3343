/** The network checks, in the order a request meets them: URL and scheme, proxy, DNS, TCP, TLS (toward the server, or its proxy). */

import { lookup } from "node:dns/promises";
import { once } from "node:events";
import { isIP, connect as netConnect } from "node:net";
import { checkServerIdentity, type PeerCertificate, connect as tlsConnect } from "node:tls";
import { isLoopbackHost } from "../../auth/checks.js";
import { withinDeadline } from "../../internal/deadline.js";
import { describeNetworkFailure } from "../../internal/network-errors.js";
import { resolveProxy } from "../../internal/proxy.js";
import { describeError } from "../log/log.js";
import { asDetailAndFix, type CheckResult, check, type DoctorContext } from "./check.js";

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
    return { status: "fail", detail: target.problem ?? "no URL", fix };
  }
  const plain = isLoopbackHost(url.hostname)
    ? " to this machine"
    : ", allowed by --allow-http: tokens travel unencrypted";
  return {
    status: "pass",
    detail: `${url.href} (${url.protocol === "https:" ? "https" : `plain http${plain}`})`,
  };
});

/** The same proxy choice every request of the bridge makes (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; loopback direct). */
export const proxyCheck = check("proxy", "Proxy", 1000, async (context) => {
  try {
    const { proxy, reason } = resolveProxy(context.url, { env: context.env });
    context.proxy = proxy;
    return {
      status: "pass",
      detail: proxy ? `via ${proxy.display} (from ${proxy.source})` : `none: direct (${reason})`,
    };
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
      return {
        status: "fail",
        detail: `${what} did not answer within ${SECONDS}`,
        fix: `a firewall may drop the connection to ${subject}; on a network that needs a proxy, set HTTPS_PROXY`,
      };
    if ((error as NodeJS.ErrnoException).code === "ECONNREFUSED")
      return {
        status: "fail",
        detail: `nothing is listening at ${what} (connection refused)`,
        fix: proxy
          ? `check the host and port in ${proxy.source}, and that the proxy is running`
          : "start the server, or check the host and port in the URL",
      };
    return {
      status: "fail",
      detail: `cannot connect to ${what} (${describeError(error)})`,
      fix: `check the network path to ${subject}`,
    };
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
      ? {
          status: "fail",
          detail: `no TLS handshake within ${SECONDS}`,
          fix: "check that the port serves https, not plain http",
        }
      : {
          status: "fail",
          detail: `TLS handshake failed (${describeError(error)})`,
          fix: "check that the port serves https; an old server may not speak TLS 1.2 or later",
        };
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
