/** The TLS check: the handshake with the default trust store (and NODE_EXTRA_CA_CERTS), then the host name against the certificate. */

import { isIP } from "node:net";
import { checkServerIdentity, type PeerCertificate, connect as tlsConnect } from "node:tls";
import { describeNetworkFailure } from "../../../internal/network-errors.js";
import { describeError } from "../../log.js";
import { asDetailAndFix, type Check, type CheckResult, checkedUrl } from "../check.js";
import { NETWORK_DEADLINE_MS, NETWORK_TIMEOUT_MS, networkTarget } from "./network-target.js";

export const tlsCheck: Check = {
  id: "tls",
  title: "TLS certificate",
  needs: [{ id: "tcp", whenFailed: "no TCP connection" }],
  deadlineMs: () => NETWORK_DEADLINE_MS,
  async run(context, signal) {
    const url = checkedUrl(context);
    if (url.protocol !== "https:") return { status: "skip", detail: "not used (plain http)" };
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
