/** Errors of the OAuth client side: each says what failed and what the user can do next. */

/** Signing in is needed and could not be completed (refused, cancelled, timed out, or not allowed here). */
export class AuthRequiredError extends Error {
  override readonly name = "AuthRequiredError";
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
