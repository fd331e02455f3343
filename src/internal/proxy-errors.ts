/** The errors of a proxy that is misconfigured or refused a request; apart from proxy.ts, which only Node loads. */

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
