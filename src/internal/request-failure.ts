/** The one judge of a request that got no answer: did it certainly never reach the server, or may it have run? */
import { CERTIFICATE_CODES } from "./network-errors.js";

/**
 * Error codes that can only happen before a byte of the request is written (connect refused or timed out, name not
 * resolved, no local address or route, a certificate refused): the server cannot have seen the request.
 */
const NEVER_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EADDRNOTAVAIL",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "CERT_SIGNATURE_FAILURE",
  "CERT_REVOKED",
]);

/** Error codes of a connection that broke or timed out after it opened: the request may have reached the server. */
const MAYBE_SENT_CODES = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "UND_ERR_SOCKET"]);

/** Failures a request function proved happened before its connection opened (see `markNeverSent`). */
const markedNeverSent = new WeakSet<object>();

/** Records that `error` happened before the request's connection opened; for request functions that know it. */
export function markNeverSent(error: unknown): void {
  if (typeof error === "object" && error !== null) markedNeverSent.add(error);
}

/**
 * What a failed request (an error, not an HTTP answer) tells about the server:
 * - `never-sent`: it certainly never reached the server, so sending it again cannot run it twice;
 * - `maybe-sent`: no answer came, but the server may have run it (a reset, a broken body, a timeout);
 * - `not-a-request-failure`: some other error (a programming error, an abort by the caller).
 */
export type RequestFailure = "never-sent" | "maybe-sent" | "not-a-request-failure";

export function classifyRequestFailure(error: unknown): RequestFailure {
  if (typeof error !== "object" || error === null) return "not-a-request-failure";
  if (markedNeverSent.has(error)) return "never-sent";
  // Node's fetch puts the code on its cause, Bun's on the error itself; Deno names the phase in the cause's message.
  const causes = [error, (error as { cause?: unknown }).cause].filter(
    (c): c is { code?: unknown; errors?: unknown; message?: unknown } => typeof c === "object" && c !== null,
  );
  for (const cause of causes) {
    const code = cause.code;
    // Happy-eyeballs connects report every address tried; all of them must have failed before sending.
    const tried = Array.isArray(cause.errors) ? (cause.errors as Array<{ code?: unknown } | undefined>) : [];
    if (tried.length > 0 && tried.every((e) => typeof e?.code === "string" && neverSentCode(e.code)))
      return "never-sent";
    if (typeof code === "string" && neverSentCode(code)) return "never-sent";
    if (typeof code === "string" && MAYBE_SENT_CODES.has(code)) return "maybe-sent";
    if (typeof cause.message === "string" && /client error \(Connect\)/.test(cause.message))
      return "never-sent";
  }
  // fetch's own failures: "fetch failed" (no answer), "terminated" (the body broke), "Failed to fetch", ...
  if (error instanceof TypeError && /fetch|terminated|network/i.test(error.message)) return "maybe-sent";
  return "not-a-request-failure";
}

/**
 * A connect-phase code: refused, unresolved, unroutable, or a TLS handshake that failed (a certificate refused, a
 * protocol mismatch), all before a byte of the request was written.
 */
function neverSentCode(code: string): boolean {
  return NEVER_SENT_CODES.has(code) || CERTIFICATE_CODES.has(code) || /^ERR_(SSL|TLS)_/.test(code);
}

/** True when a failed request certainly never reached the server (it can be sent again without running twice). */
export function requestNeverSent(error: unknown): boolean {
  return classifyRequestFailure(error) === "never-sent";
}
