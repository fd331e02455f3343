/** The network checks, in the order a request meets them: URL and scheme, proxy, DNS, TCP, TLS (toward the server, or its proxy). */

import { lookup } from "node:dns/promises";
import { isIP, connect as netConnect, type Socket } from "node:net";
import { checkServerIdentity, type PeerCertificate, connect as tlsConnect } from "node:tls";
import { isLoopbackHost } from "../../../auth/checks.js";
import { withinDeadline } from "../../../internal/deadline.js";
import { describeNetworkFailure } from "../../../internal/network-errors.js";
import { type ProxyChoice, resolveProxy } from "../../../internal/proxy.js";
import { describeError } from "../../log/log.js";
import { asDetailAndFix, type Check, type CheckResult, checkedUrl, type DoctorContext } from "../check.js";

/** How long each network step (lookup, connection, handshake) may take before its check says so. */
const NETWORK_TIMEOUT_MS = 5_000;
/** The runner's deadline for a network check: past the step's own timeout, so the check's words win. */
const NETWORK_DEADLINE_MS = NETWORK_TIMEOUT_MS + 2_000;

/** What the DNS, TCP and TLS checks say when doctor's requests go through a fetch it was given (no socket of its own). */
const THROUGH_GIVEN_FETCH: CheckResult = {
  status: "skip",
  detail: "not checked: requests go through the fetch doctor was given, not a connection of its own",
};

/** Where the network checks connect: the server itself, or the proxy when there is one (only its host and port shown). */
interface NetworkTarget {
  host: string;
  port: number;
  /** How the target is named in the report: never the proxy URL, which may hold its credentials. */
  what: string;
}

function networkTarget(context: DoctorContext): NetworkTarget {
  const url = checkedUrl(context);
  const proxy = context.found.proxy;
  const target = proxy?.url ?? url;
  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
  const what = proxy ? `the proxy ${host}:${port} (from ${proxy.source})` : `${host}:${port}`;
  return { host, port, what };
}

/** The URL as the command line found it, and whether its scheme is safe to use. */
export const urlCheck: Check = {
  id: "url",
  title: "URL and scheme",
  needs: [],
  deadlineMs: () => 1000,
  async run({ target, found }) {
    const url = target.url;
    if (!url) {
      return {
        status: "fail",
        detail: target.problem ?? "no URL",
        fix: "pass the MCP endpoint's full URL, e.g. https://example.com/mcp",
      };
    }
    found.url = url;
    const loopback = isLoopbackHost(url.hostname);
    return {
      status: "pass",
      detail:
        url.protocol === "https:"
          ? `${url.href} (https)`
          : `${url.href} (plain http${loopback ? " to this machine" : ", allowed by --allow-http: tokens travel unencrypted"})`,
    };
  },
};

/** The same proxy choice every request of the bridge makes (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; loopback direct). */
export const proxyCheck: Check = {
  id: "proxy",
  title: "Proxy",
  needs: [{ id: "url", whenFailed: "the URL is not usable" }],
  deadlineMs: () => 1000,
  async run(context) {
    try {
      const decision = resolveProxy(checkedUrl(context), { env: context.env });
      context.found.proxy = decision.proxy;
      const proxy = decision.proxy;
      return {
        status: "pass",
        detail: proxy ? `via ${proxy.display} (from ${proxy.source})` : `none: direct (${decision.reason})`,
      };
    } catch (error) {
      return {
        status: "fail",
        ...asDetailAndFix(describeError(error), "fix the proxy variable, or unset it"),
      };
    }
  },
};

/** The server's host name (or the proxy's) resolves. */
export const dnsCheck: Check = {
  id: "dns",
  title: "DNS",
  needs: [{ id: "proxy", whenFailed: "the proxy setting is not usable" }],
  deadlineMs: () => NETWORK_DEADLINE_MS,
  async run(context) {
    if (context.fetch) return THROUGH_GIVEN_FETCH;
    const { host } = networkTarget(context);
    if (isIP(host)) return { status: "pass", detail: `${host} is an IP address: no lookup needed` };
    const proxy = context.found.proxy;
    try {
      const addresses = await withinDeadline(
        lookup(host, { all: true }),
        NETWORK_TIMEOUT_MS,
        `the lookup took longer than ${NETWORK_TIMEOUT_MS / 1000} s`,
      );
      return {
        status: "pass",
        detail: `${host} → ${addresses.map((address) => address.address).join(", ")}`,
      };
    } catch (error) {
      return {
        status: "fail",
        detail: `${host} does not resolve (${describeError(error)})`,
        fix: proxy
          ? `check the host name in ${proxy.source} for typos`
          : "check the host name in the URL for typos; on a network that needs a proxy, set HTTPS_PROXY",
      };
    }
  },
};

/** A connection to the server's port (or the proxy's) opens. */
export const tcpCheck: Check = {
  id: "tcp",
  title: "TCP connection",
  needs: [{ id: "dns", whenFailed: "DNS failed" }],
  deadlineMs: () => NETWORK_DEADLINE_MS,
  async run(context, signal) {
    if (context.fetch) return THROUGH_GIVEN_FETCH;
    const { host, port, what } = networkTarget(context);
    try {
      const socket = await connectTcp(host, port, signal);
      socket.destroy();
      return { status: "pass", detail: `connected to ${what}` };
    } catch (error) {
      return { status: "fail", ...tcpFailure(error, what, context.found.proxy) };
    }
  },
};

function connectTcp(host: string, port: number, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port, signal });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        Object.assign(new Error(`no answer within ${NETWORK_TIMEOUT_MS / 1000} s`), { code: "ETIMEDOUT" }),
      );
    }, NETWORK_TIMEOUT_MS);
    socket.once("connect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
  });
}

function tcpFailure(
  error: unknown,
  what: string,
  proxy: ProxyChoice | undefined,
): { detail: string; fix: string } {
  const code = (error as NodeJS.ErrnoException).code;
  const subject = proxy ? "the proxy" : "the server";
  switch (code) {
    case "ECONNREFUSED":
      return {
        detail: `nothing is listening at ${what} (connection refused)`,
        fix: proxy
          ? `check the host and port in ${proxy.source}, and that the proxy is running`
          : "start the server, or check the host and port in the URL",
      };
    case "ETIMEDOUT":
      return {
        detail: `${what} did not answer within ${NETWORK_TIMEOUT_MS / 1000} s`,
        fix: `a firewall may drop the connection to ${subject}; on a network that needs a proxy, set HTTPS_PROXY`,
      };
    default:
      return {
        detail: `cannot connect to ${what} (${describeError(error)})`,
        fix: `check the network path to ${subject}`,
      };
  }
}

/** The handshake with the default trust store (and NODE_EXTRA_CA_CERTS), then the host name against the certificate. */
export const tlsCheck: Check = {
  id: "tls",
  title: "TLS certificate",
  needs: [{ id: "tcp", whenFailed: "no TCP connection" }],
  deadlineMs: () => NETWORK_DEADLINE_MS,
  async run(context, signal) {
    const url = checkedUrl(context);
    if (url.protocol !== "https:") return { status: "skip", detail: "not used (plain http)" };
    if (context.fetch) return THROUGH_GIVEN_FETCH;
    if (context.found.proxy)
      return { status: "skip", detail: "checked through the proxy by the endpoint check" };
    return handshake(url, networkTarget(context).port, signal);
  },
};

function handshake(url: URL, port: number, signal: AbortSignal): Promise<CheckResult> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const failure = (code: string, about: string): CheckResult => {
    const words =
      describeNetworkFailure(Object.assign(new Error(code), { code }), url) ??
      `The TLS certificate of ${url.host} was refused (${code}).`;
    const { detail, fix } = asDetailAndFix(words, "tell the server's operator");
    return { status: "fail", detail: `${detail} Certificate: ${about}.`, fix };
  };
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port,
      ...(isIP(host) ? {} : { servername: host }),
      // Judged below, so the certificate can be described either way.
      rejectUnauthorized: false,
    });
    const stop = () => socket.destroy();
    signal.addEventListener("abort", stop, { once: true });
    const settle = (result: CheckResult) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () =>
        settle({
          status: "fail",
          detail: `no TLS handshake within ${NETWORK_TIMEOUT_MS / 1000} s`,
          fix: "check that the port serves https, not plain http",
        }),
      NETWORK_TIMEOUT_MS,
    );
    socket.once("secureConnect", () => {
      const cert = socket.getPeerCertificate(false);
      const about = describeCertificate(cert);
      if (!socket.authorized) settle(failure(String(socket.authorizationError), about));
      else if (checkServerIdentity(host, cert)) settle(failure("ERR_TLS_CERT_ALTNAME_INVALID", about));
      else settle({ status: "pass", detail: `trusted chain; ${about}` });
    });
    socket.once("error", (error) =>
      settle({
        status: "fail",
        detail: `TLS handshake failed (${describeError(error)})`,
        fix: "check that the port serves https; an old server may not speak TLS 1.2 or later",
      }),
    );
  });
}

function describeCertificate(cert: PeerCertificate): string {
  const subject = cert.subject?.CN ?? "no common name";
  const issuer = cert.issuer?.O ?? cert.issuer?.CN ?? "unknown issuer";
  return `${subject}, issued by ${issuer}, valid until ${cert.valid_to ?? "?"}`;
}
