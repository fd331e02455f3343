/** What a failed connection means for the user: proxy refusals and TLS certificate errors, named with the host and what to do; and the proxy's errors (here, not in proxy.ts, which only Node loads). */

/** A proxy variable whose value cannot be used (not a URL, or a scheme other than http/https). */
export class ProxyConfigError extends Error {
  override readonly name = "ProxyConfigError";
}

/** A proxy that refused or could not carry a request; its message names the proxy (without credentials) and what to check. */
export class ProxyError extends Error {
  override readonly name = "ProxyError";
  constructor(
    message: string,
    /** The proxy as shown: scheme, host and port. */
    readonly proxy: string,
    /** The status the proxy answered with (407, 403, 502...), when it answered. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Chain errors: the certificate is fine but its issuer is not trusted here (a company root, a TLS-inspecting proxy). */
const UNTRUSTED_CHAIN_CODES = new Set([
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/** Certificate verdicts this machine gives a TLS handshake (Node and Bun use OpenSSL's names). */
export const CERTIFICATE_CODES = new Set([
  ...UNTRUSTED_CHAIN_CODES,
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * A message for a network failure the user can act on, or undefined when the error is none of those (the caller
 * keeps its own message). Looks through the `cause` chain, as fetch wraps the real error in "fetch failed".
 */
export function describeNetworkFailure(error: unknown, target: URL | string): string | undefined {
  const host = typeof target === "string" ? safeHost(target) : target.host;
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ProxyError || cause instanceof ProxyConfigError) return cause.message;
    const code = (cause as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    if (UNTRUSTED_CHAIN_CODES.has(code))
      return (
        `The TLS certificate of ${host} is not trusted (${code}): its issuer is not a root this machine knows. ` +
        "Behind a company proxy or network that inspects TLS, point NODE_EXTRA_CA_CERTS at the company root " +
        "certificate (a PEM file) and start again."
      );
    if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID")
      return (
        `The TLS certificate of ${host} is ${code === "CERT_HAS_EXPIRED" ? "expired" : "not valid yet"} (${code}). ` +
        "Check this machine's clock; if it is right, the server's certificate must be renewed."
      );
    if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
      return (
        `The TLS certificate presented for ${host} does not name that host (${code}). ` +
        "Check the URL; a proxy or network device may be answering in the server's place."
      );
  }
  return undefined;
}

/**
 * True when trying again will fail the same way until the user acts: a proxy that answered with a refusal, a
 * proxy variable that is not usable, a certificate this machine does not accept. (A proxy that cannot be reached
 * is not lasting: it may be restarting, like a server.)
 */
export function isLastingNetworkFailure(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ProxyError) return cause.status !== undefined;
    if (cause instanceof ProxyConfigError) return true;
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && CERTIFICATE_CODES.has(code)) return true;
  }
  return false;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the server";
  }
}
