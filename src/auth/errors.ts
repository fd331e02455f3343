/** Errors of the OAuth client side, each saying what failed and what to do next, and the failure text a session may show. */
import { redactForTerminal } from "../internal/redact.js";
import { classifyRequestFailure } from "../internal/request-failure.js";

/** Signing in is needed and could not be completed (refused, cancelled, timed out, or not allowed here). */
export class AuthRequiredError extends Error {
  override readonly name: string = "AuthRequiredError";
  constructor(
    message: string,
    readonly reason: "timeout" | "denied" | "refused" | "failed" = "failed",
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A URL was refused before anything was opened or requested (scheme, credentials, control characters, plain http). */
export class UnsafeUrlError extends Error {
  override readonly name = "UnsafeUrlError";
}

/** The token store could not be read or written (read-only or full disk, no keychain). */
export class TokenStoreError extends Error {
  override readonly name = "TokenStoreError";
}

/**
 * A sign-in that cannot finish by itself is waiting for the user: no browser could be opened, or the one that
 * opened it dropped the sign-in cookie. Raised at once (never after the whole `--auth-timeout`), with the URL to
 * open and what to do; the sign-in may go on waiting in the background for that URL.
 */
export class SignInWaitingError extends AuthRequiredError {
  override readonly name = "SignInWaitingError";
  constructor(
    message: string,
    /**
     * The one-time loopback URL that starts the sign-in (no `state`, no secret), or for "device-code" the
     * authorization server's verification URL (with the user code when the server gave that form).
     */
    readonly signInUrl: string,
    readonly why: "no-browser" | "cookie-refused" | "device-code",
  ) {
    super(message, "failed");
  }
}

// Error bodies of token and registration endpoints can echo what was sent to them (and carry terminal escapes):
// every message is redacted and made visible-safe.
export function messageOf(error: unknown): string {
  return redactForTerminal(error instanceof Error ? error.message : String(error));
}

/** The error code (ECONNREFUSED, ENOTFOUND…) of a request that got no HTTP answer, as the one request-failure judge sees it. */
export function networkErrorCode(error: unknown): string | undefined {
  // The failed request may be wrapped ("Could not load the authorization server metadata of ...": its cause).
  for (let failure = error, depth = 0; failure instanceof Error && depth < 5; depth++) {
    if (classifyRequestFailure(failure) !== "not-a-request-failure") {
      const code = (failure as { cause?: { code?: unknown } }).cause?.code;
      return typeof code === "string" ? code : "no answer";
    }
    failure = failure.cause;
  }
  return undefined;
}
